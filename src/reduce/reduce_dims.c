/* akx_reduce_dims: Julia's mapreducedim!. This version takes the one-element dst (the
 * whole-array path, seed reduce-whole-array-on-device); general dims come later. */
#include <inttypes.h>
#include "reduce_whole.h"

static akx_status reduce_dims_locked(akx_context *ctx, const akx_array *dst, const akx_array *src,
                           akx_map map, akx_op op, const akx_reduce_opts *opts) {
  akx__extent ext, dst_ext;
  akx_dtype acc;
  AKX_TRY(akx__reduce_whole_check(ctx, src, map, op, opts, AKX__ARRAY_SOURCE | AKX__ARRAY_MEMORY, &ext, &acc));
  AKX_TRY(akx__check_array(ctx, dst, "dst", AKX__ARRAY_MEMORY, &dst_ext));
  if (dst->ndim != src->ndim)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "dst->ndim is %d but src->ndim is %d; they must match",
                     (int)dst->ndim, (int)src->ndim);
  for (int32_t d = 0; d < dst->ndim; ++d) {
    if (dst->shape[d] != 1 && dst->shape[d] != src->shape[d])
      return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                       "dst->shape[%d] is %" PRId64 "; it must be 1 (reduced) or src->shape[%d] = %" PRId64 " (kept)",
                       (int)d, dst->shape[d], (int)d, src->shape[d]);
  }
  AKX_TRY(akx__check_disjoint(dst, &dst_ext, "dst", src, &ext, "src"));
  if (dst_ext.count == 0) return AKX_SUCCESS; /* nothing kept, nothing to write */
  if (dst_ext.count != 1)
    return akx__fail(AKX_ERROR_UNSUPPORTED,
                     "dst has %" PRId64 " elements: reductions along some dims are not implemented "
                     "yet; this version reduces into a one-element dst only",
                     dst_ext.count);
  return akx__reduce_whole_into(ctx, dst, src, &ext, map, op, opts, acc);
}

akx_status akx_reduce_dims(akx_context *ctx, const akx_array *dst, const akx_array *src,
                           akx_map map, akx_op op, const akx_reduce_opts *opts) {
  return AKX_LOCKED(ctx, reduce_dims_locked(ctx, dst, src, map, op, opts));
}
