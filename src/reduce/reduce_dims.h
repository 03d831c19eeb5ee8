/* Reductions along dims (src/reduce/): what the ladder (reduce_dims.c) and the pieces
 * (reduce_dims_piece.c) share, and what tests and tools may ask of the host side without
 * launching. */
#ifndef AKX_REDUCE_DIMS_H
#define AKX_REDUCE_DIMS_H
#include "internal.h"
#include "tuning.h"
#include "jit/user_op.h"
#ifdef __cplusplus
extern "C" {
#endif

/* Validates as akx_reduce_dims does (src->data and dst->data need not be device memory),
 * then canonicalises and runs the selector: *plan gets the shape (akx__dims_shape), block
 * size, width, splits and grid the call would launch on this context's device (one output:
 * AKX__DIMS_WHOLE, n_out and len alone); nothing is launched or allocated. Honours
 * AKX_REDUCE_DIMS_SHAPE as the call does. */
akx_status akx__reduce_dims_plan_shape(const akx_context *ctx, const akx_array *dst,
                                       const akx_array *src, akx_map map, akx_op op,
                                       const akx_reduce_opts *opts, akx__reduce_dims_plan *plan);

/* ---- the family's steps, shared by the ladder and the pieces (src/reduce/reduce_dims.c) ---- */

/* What validation learns of a call. */
typedef struct {
  akx__extent src_ext, dst_ext;
  akx_dtype acc;
  akx__user_op *user; /* the op's user op (ARGMIN/ARGMAX or a caller's), else NULL */
} akx__reduce_dims_checked;

/* Every check of akx_reduce_dims (`memory`: AKX__ARRAY_MEMORY for a call, 0 for a size
 * query). piece: src is one piece of a longer reduction (akx_reduce_dims_piece): it may be
 * empty whatever the op. */
akx_status akx__reduce_dims_check(const akx_context *ctx, const akx_array *dst, const akx_array *src,
                                  akx_map map, akx_op op, const akx_reduce_opts *opts, int memory, int piece,
                                  akx__reduce_dims_checked *c);
/* The dims kernels' tuning row for accumulators of acc_size bytes, with opts' overrides. */
akx__tuning akx__reduce_dims_tuning(const akx_context *ctx, size_t acc_size, const akx_reduce_opts *opts);
/* A checked call's plan (c: what akx__reduce_dims_check learnt): canonical form, shape,
 * splits, finish; for no output or one, the shape alone (AKX__DIMS_NONE, AKX__DIMS_WHOLE:
 * the whole-array path plans its own launch), with no canonical form and no tuning. bare: the
 * outputs are a piece's partials (akx_reduce_dims_piece), stored as accumulators in dst's C
 * order (so that pieces of any layout pair them alike) at offsets from address 0:
 * akx__reduce_dims_launch moves them to the workspace's slot. */
akx_status akx__reduce_dims_make_plan(const akx_context *ctx, const akx_array *dst, const akx_array *src,
                                      akx_map map, akx_op op, const akx_reduce_opts *opts,
                                      const akx__reduce_dims_checked *c, int bare, akx__reduce_dims_plan *p);
/* The workspace a plan launches with (the whole-array path's for one output). */
size_t akx__reduce_dims_workspace(const akx_context *ctx, const akx__reduce_dims_plan *p,
                                  const akx__user_op *user, const akx_reduce_opts *opts);
/* Kernels compiled at run time are compiled (or found) before the workspace changes. */
akx_status akx__reduce_dims_prepare_kernels(akx_context *ctx, const akx_array *dst, const akx_array *src,
                                            akx_map map, akx_op op, const akx__reduce_dims_checked *c);
/* Launches a plan of the dims kernels (not WHOLE, not NONE) with its workspace: a split one's
 * tickets and partials, then slot_bytes for a piece's bare partials (*slot: where the plan's
 * offsets from 0 now start), at least `reserve` bytes in all (what the call needs after). */
akx_status akx__reduce_dims_launch(akx_context *ctx, akx__reduce_dims_plan *p, const akx__user_op *user,
                                   const akx_reduce_opts *opts, size_t slot_bytes, size_t reserve, void **slot);
/* akx_reduce_dims with the context locked. */
akx_status akx__reduce_dims_locked(akx_context *ctx, const akx_array *dst, const akx_array *src,
                                   akx_map map, akx_op op, const akx_reduce_opts *opts);

#ifdef __cplusplus
}
#endif
#endif
