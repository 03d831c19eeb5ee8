/* The whole-array reduction path, shared by akx_mapreduce and akx_reduce_dims. */
#ifndef AKX_REDUCE_WHOLE_H
#define AKX_REDUCE_WHOLE_H
#include "internal.h"
#include "jit/user_op.h"
#include "tile/tile.h" /* akx__reduce_finish_from_opts */

/* Validates ctx, src, map, op, opts; resolves the accumulator; refuses an empty MIN/MAX
 * without init. *user: the op's user op (ARGMIN/ARGMAX or akx_user_op_create's), else NULL;
 * *acc is then AKX_DTYPE_AUTO. */
akx_status akx__reduce_whole_check(const akx_context *ctx, const akx_array *src, akx_map map,
                                   akx_op op, const akx_reduce_opts *opts, int src_flags,
                                   akx__extent *ext, akx_dtype *acc, akx__user_op **user);
size_t akx__reduce_whole_workspace(const akx_context *ctx, akx_dtype acc, const akx__user_op *user,
                                   const akx_reduce_opts *opts);
/* Plans and launches; finish says where the result goes. host_result non-NULL: the last
 * pass stores a bare partial, copied back and finished on the host into host_result. */
akx_status akx__reduce_whole_run(akx_context *ctx, const akx_array *src, const akx__extent *ext,
                                 akx_map map, akx_op op, const akx_reduce_opts *opts,
                                 akx_dtype acc, const akx__user_op *user, const akx__finish *finish,
                                 void *host_result);
/* Into the one element of a device array dst (converted to dst's dtype). */
akx_status akx__reduce_whole_into(akx_context *ctx, const akx_array *dst, const akx_array *src,
                                  const akx__extent *ext, akx_map map, akx_op op,
                                  const akx_reduce_opts *opts, akx_dtype acc, const akx__user_op *user);
/* A piece's validation (akx_mapreduce_piece's and akx_reduce_dims_piece's): piece, its
 * exchange, its count, its positions. */
akx_status akx__check_reduce_piece(const akx_reduce_piece_t *piece);
/* The piece of a whole-array reduction (src checked, empty allowed): pass 1 to a bare partial
 * at piece's positions, the exchange, pass 2 over the pieces' partials through f (init, fold,
 * dst); host_result non-NULL: f's dst is the workspace's slot, copied back there. */
akx_status akx__reduce_whole_piece(akx_context *ctx, const akx_array *src, const akx__extent *ext,
                                   akx_map map, akx_op op, const akx_reduce_opts *opts, akx_dtype acc,
                                   const akx__user_op *user, const akx_reduce_piece_t *piece,
                                   const akx__finish *f, void *host_result);
#endif
