/* Argument checks shared by every entry point. Each failure names the argument and value. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "internal.h"
#include "akx/block_limits.h"

akx_status akx__check_context(const akx_context *ctx) {
  if (!ctx) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "ctx is NULL; create one with akx_context_create");
  return AKX_SUCCESS;
}

size_t akx__dtype_alignment(akx_dtype t) {
  const size_t s = akx_dtype_size(t);
  /* complex numbers are pairs of their real type */
  return (t == AKX_COMPLEX64 || t == AKX_COMPLEX128) ? s / 2 : s;
}

akx_status akx__check_array(const akx_context *ctx, const akx_array *a, const char *name,
                            int flags, akx__extent *ext) {
  if (!a) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "%s is NULL", name);
  if (a->dtype == AKX_DTYPE_AUTO)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "%s->dtype is -1, AKX_DTYPE_AUTO, which is for opts->acc only: give %s the dtype "
                     "of its elements", name, name);
  if ((int)a->dtype < AKX_BOOL || (int)a->dtype > AKX_COMPLEX128)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "%s->dtype is %d, which is not an akx_dtype",
                     name, (int)a->dtype);
  if (a->ndim < 0 || a->ndim > AKX_MAX_DIMS)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "%s->ndim is %d; it must be in 0..%d", name,
                     (int)a->ndim, AKX_MAX_DIMS);
  /* The product of the nonzero extents must fit int64 even when a 0 makes the array empty
   * (numpy refuses such shapes too): every family multiplies subsets of the extents when it
   * merges dims, and none has to special-case an empty array for that. */
  int64_t count = 1, nonzero = 1, lo = 0, hi = 0;
  int empty = 0;
  for (int32_t d = 0; d < a->ndim; ++d) empty |= a->shape[d] == 0;
  for (int32_t d = 0; d < a->ndim; ++d) {
    const int64_t n = a->shape[d], s = a->strides[d];
    if (n < 0)
      return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "%s->shape[%d] is %" PRId64 "; shapes must be >= 0",
                       name, (int)d, n);
    if (n > 0 && __builtin_mul_overflow(nonzero, n, &nonzero))
      return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                       "%s has more elements than int64 can count (shape[%d] = %" PRId64 "%s)", name,
                       (int)d, n, empty ? "; an empty array's other extents count too, as numpy's" : "");
    count *= n;
    /* Strides are checked against the extents only when the array has elements; INT64_MIN is
     * refused in every array: it has no magnitude in int64, and canonical forms negate and
     * compare |stride| (the fuzzer: an empty source's reduced dim flipped). */
    if (s == INT64_MIN)
      return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                       "%s->strides[%d] = %" PRId64 " is INT64_MIN (-2^63), which no array can step by",
                       name, (int)d, s);
    /* An empty array has no elements to share memory: Julia and numpy give it zero strides
     * on dims of nonzero size (strides(zeros(2, 0, 3)) == (1, 2, 0)). */
    if (!(flags & AKX__ARRAY_SOURCE) && !empty && s == 0 && n > 1)
      return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                       "%s->strides[%d] is 0 with shape %" PRId64 "; only sources may repeat elements",
                       name, (int)d, n);
  }
  int64_t lo_bytes = 0, hi_bytes = 0;
  if (count > 0) {
    /* Element offsets of the first and last element in memory (lo <= 0 <= hi), and the same
     * in bytes, every step checked: a stride near INT64_MAX must be refused, not overflow. */
    const int64_t size = (int64_t)akx_dtype_size(a->dtype);
    int32_t lo_dim = -1, hi_dim = -1; /* the dims whose strides reach furthest, for the sentence */
    for (int32_t d = 0; d < a->ndim; ++d) {
      int64_t span, span_bytes;
      if (a->shape[d] > 1 && a->strides[d] != 0) {
        int32_t *reach = a->strides[d] < 0 ? &lo_dim : &hi_dim;
        if (*reach < 0 || llabs(a->strides[d]) >= llabs(a->strides[*reach])) *reach = d;
      }
      int64_t *end = a->strides[d] < 0 ? &lo : &hi, *end_bytes = a->strides[d] < 0 ? &lo_bytes : &hi_bytes;
      if (__builtin_mul_overflow(a->shape[d] - 1, a->strides[d], &span) ||
          __builtin_add_overflow(*end, span, end) ||
          __builtin_mul_overflow(span, size, &span_bytes) ||
          __builtin_add_overflow(*end_bytes, span_bytes, end_bytes))
        return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                         "%s->shape[%d] = %" PRId64 " times %s->strides[%d] = %" PRId64
                         " overflows int64 offsets (elements or bytes)",
                         name, (int)d, a->shape[d], name, (int)d, a->strides[d]);
    }
    /* One past the last byte, and the whole span, must be int64 byte offsets too. */
    int64_t extent;
    if (__builtin_add_overflow(hi_bytes, size, &hi_bytes) ||
        __builtin_sub_overflow(hi_bytes, lo_bytes, &extent))
    {
      const int32_t d1 = hi_dim >= 0 ? hi_dim : lo_dim, d2 = hi_dim >= 0 ? lo_dim : -1;
      char also[96] = "";
      if (d2 >= 0)
        snprintf(also, sizeof also, " and %s->strides[%d] = %" PRId64, name, (int)d2, a->strides[d2]);
      return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                       "%s spans more bytes than int64 offsets can address (element offsets %" PRId64
                       " to %" PRId64 "): %s->strides[%d] = %" PRId64 "%s reach too far for %zu-byte "
                       "elements",
                       name, lo, hi, name, (int)(d1 >= 0 ? d1 : 0), d1 >= 0 ? a->strides[d1] : 0, also,
                       (size_t)size);
    }
    /* An output must not write one address twice (two blocks would race): with its dims in
     * increasing |stride|, each stride must step past everything the smaller dims span. This
     * refuses every self-overlapping layout (and a few exotic interleaved ones that do not
     * overlap). */
    if (!(flags & AKX__ARRAY_SOURCE)) {
      int32_t order[AKX_MAX_DIMS], nd = 0;
      for (int32_t d = 0; d < a->ndim; ++d)
        if (a->shape[d] > 1) order[nd++] = d;
      for (int32_t i = 1; i < nd; ++i)
        for (int32_t j = i; j > 0 && llabs(a->strides[order[j - 1]]) > llabs(a->strides[order[j]]); --j) {
          const int32_t t = order[j]; order[j] = order[j - 1]; order[j - 1] = t;
        }
      int64_t reach = 0;
      for (int32_t i = 0; i < nd; ++i) {
        const int32_t d = order[i];
        if (llabs(a->strides[d]) <= reach)
          return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                           "%s->strides[%d] = %" PRId64 " makes two elements of %s share memory: "
                           "it does not step past the %" PRId64 " element%s its smaller dims span",
                           name, (int)d, a->strides[d], name, reach + 1, akx__plural(reach + 1));
        reach += (a->shape[d] - 1) * llabs(a->strides[d]);
      }
    }
    if (!(flags & AKX__ARRAY_MEMORY)) goto done;
    if (!a->data)
      return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "%s->data is NULL but %s has %" PRId64 " element%s",
                       name, name, count, akx__plural(count));
    if ((uintptr_t)a->data % akx__dtype_alignment(a->dtype) != 0)
      return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                       "%s->data = %p is not aligned to its %s elements (%zu bytes)", name, a->data,
                       akx_dtype_name(a->dtype), akx__dtype_alignment(a->dtype));
    const char *first = (const char *)((uintptr_t)a->data + (uintptr_t)lo_bytes);
    if ((uintptr_t)first > (uintptr_t)a->data && lo_bytes < 0)
      return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                       "%s->data = %p with offsets down to %" PRId64 " bytes wraps around the "
                       "address space", name, a->data, lo_bytes);
    if (ctx->be->is_device_range(ctx, first, (size_t)extent) == 0) {
      const void *base;
      size_t block;
      if (ctx->be->allocation_of(ctx, first, &base, &block))
        return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                         "%s (bytes %p..+%" PRId64 ") ends %" PRIu64 " bytes past the end of its "
                         "akx_malloc allocation (a %zu-byte block at %p)",
                         name, (const void *)first, extent,
                         (uint64_t)((uintptr_t)first + (uintptr_t)extent - ((uintptr_t)base + block)),
                         block, base);
      return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                       "%s (bytes %p..+%" PRId64 ") is not device memory of this %s context%s", name,
                       (const void *)first, extent,
                       ctx->be->kind == AKX_BACKEND_SIM ? "sim" : "CUDA",
                       ctx->be->kind == AKX_BACKEND_SIM ? ": allocate it with akx_malloc" : "");
    }
  }
done:
  if (ext) {
    ext->count = count;
    ext->min_offset = lo;
    ext->max_offset = hi;
  }
  return AKX_SUCCESS;
}

akx_status akx__check_disjoint(const akx_array *dst, const akx__extent *dext, const char *dname,
                               const akx_array *src, const akx__extent *sext, const char *sname) {
  if (dext->count == 0 || sext->count == 0) return AKX_SUCCESS;
  const uintptr_t dl = (uintptr_t)dst->data + (uintptr_t)(dext->min_offset * (int64_t)akx_dtype_size(dst->dtype));
  const uintptr_t dh = (uintptr_t)dst->data + (uintptr_t)((dext->max_offset + 1) * (int64_t)akx_dtype_size(dst->dtype));
  const uintptr_t sl = (uintptr_t)src->data + (uintptr_t)(sext->min_offset * (int64_t)akx_dtype_size(src->dtype));
  const uintptr_t sh = (uintptr_t)src->data + (uintptr_t)((sext->max_offset + 1) * (int64_t)akx_dtype_size(src->dtype));
  if (dl < sh && sl < dh)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "%s (bytes %p..%p) overlaps %s (bytes %p..%p): the call would read what it "
                     "writes; give %s its own memory",
                     dname, (void *)dl, (void *)dh, sname, (void *)sl, (void *)sh, dname);
  return AKX_SUCCESS;
}

akx_status akx__check_block_size(const akx_context *ctx, int32_t block_size, int32_t kernel_max,
                                 const char *family) {
  /* No context: the result-dtype query, which knows no device (CUDA's limit, 1024). */
  const int device_max = ctx && ctx->profile ? ctx->profile->max_threads_per_block : 1024;
  if (block_size != 0 && block_size > kernel_max && block_size <= device_max &&
      block_size % 32 == 0)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "opts->block_size is %d; the %s kernels are compiled for blocks of at most "
                     "%d threads (__launch_bounds__(%d), kernels/akx/block_limits.h): it must be 0 "
                     "(tuning table) or a multiple of 32 in 32..%d",
                     (int)block_size, family, (int)kernel_max, (int)kernel_max, (int)kernel_max);
  const int max_block = kernel_max < device_max ? kernel_max : device_max;
  if (block_size != 0 && (block_size < 32 || block_size > max_block || block_size % 32))
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "opts->block_size is %d; it must be 0 (tuning table) or a multiple of 32 in 32..%d",
                     (int)block_size, max_block);
  return AKX_SUCCESS;
}

akx_status akx__check_items_per_thread(int32_t items_per_thread, int32_t most) {
  if (items_per_thread < 0 || items_per_thread > most)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "opts->items_per_thread is %d; it must be 0 (tuning table) or in 1..%d", (int)items_per_thread,
                     (int)most);
  return AKX_SUCCESS;
}

akx_status akx__check_reduce_opts(const akx_context *ctx, const akx_reduce_opts *o) {
  if (!o) return AKX_SUCCESS;
  AKX_TRY(akx__check_block_size(ctx, o->block_size, AKX_MAX_BLOCK_REDUCE, "reduction"));
  AKX_TRY(akx__check_items_per_thread(o->items_per_thread, 256));
  if (o->target_blocks < 0 || o->target_blocks > 65535)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "opts->target_blocks is %d; it must be 0 (tuning table) or in 1..65535",
                     (int)o->target_blocks);
  if ((int)o->fold != 0 && (int)o->fold != 1)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "opts->fold is %d; it must be 0 or 1", (int)o->fold);
  return AKX_SUCCESS;
}

akx_status akx__check_scan_opts(const akx_context *ctx, const akx_scan_opts *o) {
  if (!o) return AKX_SUCCESS;
  AKX_TRY(akx__check_block_size(ctx, o->block_size, AKX_MAX_BLOCK_SCAN, "scan"));
  AKX_TRY(akx__check_items_per_thread(o->items_per_thread, 64));
  if (o->exclusive != 0 && o->exclusive != 1)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "opts->exclusive is %d; it must be 0 or 1",
                     (int)o->exclusive);
  return AKX_SUCCESS;
}

akx_status akx__check_line(const akx_context *ctx, const akx_array *a, const char *name, int flags,
                           akx__extent *e) {
  AKX_TRY(akx__check_array(ctx, a, name, flags, e));
  if (a->ndim != 1)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "%s->ndim is %d; %s is 1-d", name, (int)a->ndim, name);
  return AKX_SUCCESS;
}

static int is_key_dtype(akx_dtype t) {
  switch (t) {
    case AKX_BOOL: case AKX_INT8: case AKX_INT16: case AKX_INT32: case AKX_INT64:
    case AKX_UINT8: case AKX_UINT16: case AKX_UINT32: case AKX_UINT64: return 1;
    default: return 0;
  }
}

akx_status akx__check_keys(const akx_context *ctx, const akx_array *keys, int64_t n, const char *n_of,
                           int memory, akx__extent *e) {
  AKX_TRY(akx__check_line(ctx, keys, "keys", AKX__ARRAY_SOURCE | memory, e));
  if (!is_key_dtype(keys->dtype))
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "keys->dtype is %s; keys are bool or an integer dtype (runs of "
                     "equal keys: a float's equality is not a key's)", akx_dtype_name(keys->dtype));
  if (keys->shape[0] != n)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "keys->shape[0] is %" PRId64 " but %s is %" PRId64 "; they must match",
                     keys->shape[0], n_of, n);
  return AKX_SUCCESS;
}

akx_status akx__check_piece_positions(int64_t base, int64_t block, int64_t skip) {
  if (base < 0 || block < 0 || skip < 0)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "piece->position_base, _block and _skip are %" PRId64
                     ", %" PRId64 " and %" PRId64 "; none may be negative", base, block, skip);
  return AKX_SUCCESS;
}

/* ---- the ops' rules, each written once ---------------------------------------------------------- */
int akx_op_has_own_accumulator(akx_op op) {
  return op == AKX_OP_ARGMIN || op == AKX_OP_ARGMAX || (int32_t)op >= AKX_USER_OP_FIRST;
}

akx_status akx__check_op(akx_op op) {
  if ((unsigned)op >= AKX_OP_COUNT && !akx_op_has_own_accumulator(op))
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "op is %d, which is not an akx_op", (int)op);
  return AKX_SUCCESS;
}

int akx__op_has_neutral(akx_op op, int user_has_identity) {
  if (op == AKX_OP_MIN || op == AKX_OP_MAX || op == AKX_OP_ARGMIN || op == AKX_OP_ARGMAX) return 0;
  return (int32_t)op < AKX_USER_OP_FIRST || user_has_identity;
}

akx_status akx__check_empty_result(akx_op op, int user_has_identity, const akx_reduce_opts *opts, const char *what) {
  /* With fold the previous value is the answer (Julia's maximum!(r, A; init=false) keeps r). */
  if (akx__op_has_neutral(op, user_has_identity) || (opts && (opts->init || opts->fold))) return AKX_SUCCESS;
  return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                   "%s is empty and op %s has no neutral value to return: pass opts->init or opts->fold "
                   "(numpy refuses the same)", what, akx__op_name(op));
}
