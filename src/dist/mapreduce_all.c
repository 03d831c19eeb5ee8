/* akx_mapreduce_all: each rank reduces its shard to one accumulator (no init; a rank with no
 * element gives the op's neutral element), the P partials are allgathered, and every rank
 * reduces the same P values in rank order with init and fold into its result. */
#include <string.h>
#include "internal.h"

akx_status akx_mapreduce_all(akx_comm *comm, const akx_array *src, int32_t split_dim,
                             akx_map map, akx_op op, const akx_reduce_opts *opts,
                             void *result, akx_where where) {
  if (!comm) return akx__dist_fail(AKX_ERROR_INVALID_ARGUMENT, "akx_mapreduce_all: comm is NULL");
  akx_context *ctx = comm->ctx;
  akx__dist_record me;
  akx__dist_begin(&me, AKX__DIST_MAPREDUCE, NULL, src, split_dim, map, op, AKX_DIM_ALL, 1, 0);
  const akx_reduce_opts given = opts ? *opts : akx_reduce_opts_default();
  akx_reduce_opts local = given;
  akx_dtype acc = AKX_DTYPE_AUTO;
  unsigned char identity[16];
  if (me.status == AKX_SUCCESS) {
    if (!result) akx__dist_record_fail(&me, AKX_ERROR_INVALID_ARGUMENT, "result is NULL");
    if (where != AKX_HOST && where != AKX_DEVICE)
      akx__dist_record_fail(&me, AKX_ERROR_INVALID_ARGUMENT, "where is %d, expected AKX_HOST or "
                            "AKX_DEVICE", (int)where);
  }
  const int own = akx_op_has_own_accumulator(op);
  const size_t acc_size = own ? akx__dist_user_acc(&me, ctx, op, given.init)
                              : akx__dist_resolve_acc(&me, src, map, op, given.acc, given.init, &acc, identity);
  if (own && me.status == AKX_SUCCESS) {
    /* What the rank's piece will check, but for an empty shard's missing init (a piece may be
     * empty: the global array decides, below). */
    static const unsigned char placeholder[64];
    akx_reduce_opts o = given;
    if (!o.init) o.init = placeholder;
    size_t ws = 0;
    const akx_status s = akx_mapreduce_workspace_size(ctx, src, map, op, &o, &ws);
    if (s != AKX_SUCCESS) akx__dist_record_fail(&me, s, NULL);
    me.fold = given.fold != 0;
    me.positional = 1;
    akx_array_memory_order(src, me.order);
  } else if (me.status == AKX_SUCCESS) {
    /* The rank's own call: what runs is what is checked. */
    local = akx__dist_local_opts(&given, acc, identity);
    size_t ws = 0;
    akx_status s = akx_mapreduce_workspace_size(ctx, src, map, op, &local, &ws);
    if (s != AKX_SUCCESS) akx__dist_record_fail(&me, s, NULL);
    me.fold = given.fold != 0;
  }
  const akx__dist_record *all;
  AKX_DIST_TRY(akx__dist_agree(comm, &me, &all));

  int64_t global = 0;
  for (int q = 0; q < comm->size; ++q) global += all[q].src_count;
  if (global == 0) /* every shard empty: the single-process rules for an empty array */
    return akx_mapreduce(ctx, src, map, op, opts, result, where);
  if (own) {
    /* A user op or ARGMIN/ARGMAX: each rank's shard is a piece whose positions are moved to the
     * global array's, in the reference rank's memory order. */
    akx_reduce_piece_t piece = {0, 0, 0, comm->size, akx__dist_exchange, comm};
    akx__dist_positions(comm, all, split_dim, 0, &piece.position_base, &piece.position_block, &piece.position_skip);
    return akx_mapreduce_piece(ctx, src, map, op, &given, &piece, result, where);
  }

  void *slot, *gathered;
  AKX_DIST_TRY(akx__dist_partials_local(comm, acc_size, &slot));
  AKX_DIST_TRY(akx_mapreduce(ctx, src, map, op, &local, slot, AKX_DEVICE));
  AKX_DIST_TRY(akx__dist_partials_exchange(comm, slot, acc_size, &gathered));
  const akx_array partials = akx_vector(gathered, acc, comm->size);
  const akx_reduce_opts combine = akx__dist_combine_opts(&given, acc);
  return akx_mapreduce(ctx, &partials, AKX_MAP_IDENTITY, op, &combine, result, where);
}
