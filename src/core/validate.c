/* Argument checks shared by every entry point. Each failure names the argument and value. */
#include <inttypes.h>
#include <stdint.h>
#include "internal.h"

akx_status akx__check_context(const akx_context *ctx) {
  if (!ctx) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "ctx is NULL; create one with akx_context_create");
  return AKX_SUCCESS;
}

static size_t natural_alignment(akx_dtype t) {
  const size_t s = akx_dtype_size(t);
  /* complex numbers are pairs of their real type */
  return (t == AKX_COMPLEX64 || t == AKX_COMPLEX128) ? s / 2 : s;
}

akx_status akx__check_array(const akx_context *ctx, const akx_array *a, const char *name,
                            int flags, akx__extent *ext) {
  if (!a) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "%s is NULL", name);
  if ((int)a->dtype < AKX_BOOL || (int)a->dtype > AKX_COMPLEX128)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "%s->dtype is %d, which is not an akx_dtype",
                     name, (int)a->dtype);
  if (a->ndim < 0 || a->ndim > AKX_MAX_DIMS)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "%s->ndim is %d; it must be in 0..%d", name,
                     (int)a->ndim, AKX_MAX_DIMS);
  int64_t count = 1, lo = 0, hi = 0;
  for (int32_t d = 0; d < a->ndim; ++d) {
    const int64_t n = a->shape[d], s = a->strides[d];
    if (n < 0)
      return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "%s->shape[%d] is %" PRId64 "; shapes must be >= 0",
                       name, (int)d, n);
    if (__builtin_mul_overflow(count, n, &count))
      return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                       "%s has more elements than int64 can count (shape[%d] = %" PRId64 ")", name,
                       (int)d, n);
    if (!(flags & AKX__ARRAY_SOURCE) && s == 0 && n > 1)
      return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                       "%s->strides[%d] is 0 with shape %" PRId64 "; only sources may repeat elements",
                       name, (int)d, n);
  }
  if (count > 0) {
    for (int32_t d = 0; d < a->ndim; ++d) {
      int64_t span;
      if (__builtin_mul_overflow(a->shape[d] - 1, a->strides[d], &span) ||
          __builtin_add_overflow(span < 0 ? lo : hi, span, span < 0 ? &lo : &hi))
        return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                         "%s->shape[%d] = %" PRId64 " times %s->strides[%d] = %" PRId64
                         " overflows int64 element offsets",
                         name, (int)d, a->shape[d], name, (int)d, a->strides[d]);
    }
    const int64_t size = (int64_t)akx_dtype_size(a->dtype);
    int64_t lo_bytes, hi_bytes;
    if (__builtin_mul_overflow(lo, size, &lo_bytes) || __builtin_mul_overflow(hi + 1, size, &hi_bytes) ||
        (uint64_t)(hi_bytes - lo_bytes) > (uint64_t)INT64_MAX)
      return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                       "%s spans more bytes than int64 offsets can address", name);
    if (!(flags & AKX__ARRAY_MEMORY)) goto done;
    if (!a->data)
      return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "%s->data is NULL but %s has %" PRId64 " elements",
                       name, name, count);
    if ((uintptr_t)a->data % natural_alignment(a->dtype) != 0)
      return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                       "%s->data = %p is not aligned to its %s elements (%zu bytes)", name, a->data,
                       akx_dtype_name(a->dtype), natural_alignment(a->dtype));
    const char *first = (const char *)a->data + lo_bytes;
    if (ctx->be->is_device_range(ctx, first, (size_t)(hi_bytes - lo_bytes)) == 0)
      return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                       "%s (bytes %p..+%" PRId64 ") is not device memory of this %s context%s", name,
                       (const void *)first, hi_bytes - lo_bytes,
                       ctx->be->kind == AKX_BACKEND_SIM ? "sim" : "CUDA",
                       ctx->be->kind == AKX_BACKEND_SIM ? ": allocate it with akx_malloc" : "");
  }
done:
  if (ext) {
    ext->count = count;
    ext->min_offset = lo;
    ext->max_offset = hi;
  }
  return AKX_SUCCESS;
}

akx_status akx__check_reduce_opts(const akx_context *ctx, const akx_reduce_opts *o) {
  if (!o) return AKX_SUCCESS;
  const int max_block = ctx->profile ? ctx->profile->max_threads_per_block : 1024;
  if (o->block_size != 0 && (o->block_size < 32 || o->block_size > max_block || o->block_size % 32))
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "opts->block_size is %d; it must be 0 (tuning table) or a multiple of 32 in 32..%d",
                     (int)o->block_size, max_block);
  if (o->items_per_thread < 0 || o->items_per_thread > 256)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "opts->items_per_thread is %d; it must be 0 (tuning table) or in 1..256",
                     (int)o->items_per_thread);
  if (o->target_blocks < 0 || o->target_blocks > 65535)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "opts->target_blocks is %d; it must be 0 (tuning table) or in 1..65535",
                     (int)o->target_blocks);
  if ((int)o->fold != 0 && (int)o->fold != 1)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "opts->fold is %d; it must be 0 or 1", (int)o->fold);
  return AKX_SUCCESS;
}
