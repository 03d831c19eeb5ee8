/* akx_reduce_dims_all. A kept split_dim is local: each rank reduces its slice. A reduced one:
 * each rank reduces its shard into partials of dst's shape in the accumulator dtype (no init;
 * the op's neutral element where the shard is empty), the P partial arrays are allgathered, and
 * every rank reduces them along a rank dim, in rank order, with init and fold into dst. */
#include "internal.h"

/* A C-contiguous array of `like`'s shape and dtype t at data. */
static akx_array contiguous_like(void *data, akx_dtype t, const akx_array *like) {
  return akx_array_c(data, t, like->ndim, like->shape);
}

akx_status akx_reduce_dims_all(akx_comm *comm, const akx_array *dst, const akx_array *src,
                               int32_t split_dim, akx_map map, akx_op op,
                               const akx_reduce_opts *opts) {
  if (!comm) return akx__dist_fail(AKX_ERROR_INVALID_ARGUMENT, "akx_reduce_dims_all: comm is NULL");
  akx_context *ctx = comm->ctx;
  akx__dist_record me;
  akx__dist_begin(&me, AKX__DIST_REDUCE_DIMS, dst, src, split_dim, map, op, AKX_DIM_ALL, 0, 1);
  const akx_reduce_opts given = opts ? *opts : akx_reduce_opts_default();
  akx_reduce_opts local = given;
  akx_dtype acc = AKX_DTYPE_AUTO;
  unsigned char identity[16];
  const size_t acc_size = akx__dist_resolve_acc(&me, src, map, op, given.acc, given.init, &acc, identity);
  if (me.status == AKX_SUCCESS) {
    local = akx__dist_local_opts(&given, acc, identity);
    size_t ws = 0;
    const akx_status s = akx_reduce_dims_workspace_size(ctx, dst, src, map, op, &local, &ws);
    if (s != AKX_SUCCESS) akx__dist_record_fail(&me, s, NULL);
    me.fold = given.fold != 0;
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
  const int64_t outputs = akx__dist_count(dst);
  if (outputs == 0) return AKX_SUCCESS;

  void *slot, *gathered;
  const size_t bytes = (size_t)outputs * acc_size;
  AKX_DIST_TRY(akx__dist_partials_local(comm, bytes, &slot));
  const akx_array mine = contiguous_like(slot, acc, dst);
  AKX_DIST_TRY(akx_reduce_dims(ctx, &mine, src, map, op, &local));
  AKX_DIST_TRY(akx__dist_partials_exchange(comm, bytes, &gathered));
  /* The gathered partials as dst's shape with the ranks along split_dim. */
  akx_array ranks = contiguous_like(gathered, acc, dst);
  ranks.shape[split_dim] = comm->size;
  ranks.strides[split_dim] = outputs;
  const akx_reduce_opts combine = akx__dist_combine_opts(&given, acc);
  return akx_reduce_dims(ctx, dst, &ranks, AKX_MAP_IDENTITY, op, &combine);
}
