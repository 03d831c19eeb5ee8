/* akx_reduce_dims_all. A kept split_dim is local: each rank reduces its slice. A reduced one:
 * each rank's shard is a piece of the global reduction (akx_reduce_dims_piece): its partial per
 * output (the kernels' accumulator, dst's outputs in C order) is allgathered, and every rank
 * combines each output's P partials in rank order, with init and fold, into dst. A user op's
 * map (and ARGMIN/ARGMAX) sees each element's global position among its output's reduced
 * elements, in the reference rank's memory order of the reduced dims. */
#include "internal.h"

akx_status akx_reduce_dims_all(akx_comm *comm, const akx_array *dst, const akx_array *src,
                               int32_t split_dim, akx_map map, akx_op op,
                               const akx_reduce_opts *opts) {
  if (!comm) return akx__dist_fail(AKX_ERROR_INVALID_ARGUMENT, "akx_reduce_dims_all: comm is NULL");
  akx_context *ctx = comm->ctx;
  akx__dist_record me;
  akx__dist_begin(&me, AKX__DIST_REDUCE_DIMS, dst, src, split_dim, map, op, AKX_DIM_ALL, 0, 1);
  const akx_reduce_opts given = opts ? *opts : akx_reduce_opts_default();
  const int own = akx_op_has_own_accumulator(op);
  akx_dtype acc = AKX_DTYPE_AUTO;
  unsigned char identity[16];
  if (own) akx__dist_user_acc(&me, ctx, op, given.init);
  else akx__dist_resolve_acc(&me, src, map, op, given.acc, given.init, &acc, identity);
  if (me.status == AKX_SUCCESS) {
    /* What this rank's call will check: a piece where split_dim may be reduced (dst's extent 1
     * there; the global array decides an empty reduction, below), else its own reduction. */
    size_t ws = 0;
    const akx_status s = dst->shape[split_dim] == 1
                             ? akx_reduce_dims_piece_workspace_size(ctx, dst, src, map, op, opts, comm->size, &ws)
                             : akx_reduce_dims_workspace_size(ctx, dst, src, map, op, opts, &ws);
    if (s != AKX_SUCCESS) akx__dist_record_fail(&me, s, NULL);
    me.fold = given.fold != 0;
    me.positional = own;
    if (own) akx_array_memory_order(src, me.order);
  }
  const akx__dist_record *all;
  AKX_DIST_TRY(akx__dist_agree(comm, &me, &all));

  /* Reduced when dst has extent 1 along split_dim on every rank; kept when it has each rank's
   * own extent; the same verdict everywhere, from the same records. */
  int reduced = 1, kept = 1;
  int64_t global = 0;
  for (int q = 0; q < comm->size; ++q) {
    reduced &= all[q].dst_shape[split_dim] == 1;
    kept &= all[q].dst_shape[split_dim] == all[q].src_shape[split_dim];
    global += all[q].src_count;
  }
  if (!reduced && !kept) {
    for (int q = 0; q < comm->size; ++q)
      if (all[q].dst_shape[split_dim] != 1 && all[q].dst_shape[split_dim] != all[q].src_shape[split_dim])
        return akx__dist_fail(AKX_ERROR_INVALID_ARGUMENT,
                              "akx_reduce_dims_all: rank %d: dst->shape[%d] is %lld, neither 1 "
                              "(split_dim reduced) nor its src's extent %lld (kept)", q, (int)split_dim,
                              (long long)all[q].dst_shape[split_dim], (long long)all[q].src_shape[split_dim]);
    return akx__dist_fail(AKX_ERROR_INVALID_ARGUMENT,
                          "akx_reduce_dims_all: dst->shape[%d] is 1 on some ranks and src's extent "
                          "on others: split_dim must be reduced on every rank or kept on every rank",
                          (int)split_dim);
  }
  if (!reduced || global == 0) /* a kept split_dim, or an empty global array: local */
    return akx_reduce_dims(ctx, dst, src, map, op, opts);
  akx_reduce_piece_t piece = {0, 0, 0, comm->size, akx__dist_exchange, comm};
  akx__dist_positions(comm, all, split_dim, 1, &piece.position_base, &piece.position_block, &piece.position_skip);
  return akx_reduce_dims_piece(ctx, dst, src, map, op, opts, &piece);
}
