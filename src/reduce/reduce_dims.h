/* Reductions along dims: what tests and tools may ask of the host side without launching. */
#ifndef AKX_REDUCE_DIMS_H
#define AKX_REDUCE_DIMS_H
#include "internal.h"
#ifdef __cplusplus
extern "C" {
#endif

/* Validates as akx_reduce_dims does (src->data and dst->data need not be device memory),
 * then canonicalises and runs the selector: *plan gets the shape (akx__dims_shape), block
 * size, width, splits and grid the call would launch on this context's device; nothing is
 * launched or allocated. Honours AKX_REDUCE_DIMS_SHAPE as the call does. */
akx_status akx__reduce_dims_plan_shape(const akx_context *ctx, const akx_array *dst,
                                       const akx_array *src, akx_map map, akx_op op,
                                       const akx_reduce_opts *opts, akx__reduce_dims_plan *plan);

#ifdef __cplusplus
}
#endif
#endif
