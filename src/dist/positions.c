/* Where a rank's shard sits among the global array's positions: the offsets every family that
 * reads positions hands libakx's pieces (akx_mapreduce_piece, akx_reduce_dims_piece,
 * akx_findall_piece), which move them on the device. */
#include "internal.h"

void akx__dist_positions(const akx_comm *comm, const akx__dist_record *all, int32_t split_dim, int reduced_only,
                         int64_t *base, int64_t *block, int64_t *skip) {
  *base = *block = *skip = 0;
  if (split_dim == AKX_DIM_ALL) {
    for (int q = 0; q < comm->rank; ++q) *base += all[q].src_count;
    return;
  }
  const int ref = akx__dist_findall_ref(all, comm->size);
  if (ref < 0) return; /* every shard empty: no position to move */
  const akx__dist_record *me = &all[comm->rank];
  int64_t inner = 1, before = 0, global = 0;
  int inside = 0;
  for (int32_t k = 0; k < all[ref].ndim; ++k) {
    const int32_t d = all[ref].order[k];
    if (d == split_dim) inside = 1;
    else if (inside && (!reduced_only || me->dst_shape[d] == 1)) inner *= me->src_shape[d];
  }
  for (int q = 0; q < comm->size; ++q) {
    if (q < comm->rank) before += all[q].src_shape[split_dim];
    global += all[q].src_shape[split_dim];
  }
  const int64_t mine = me->src_shape[split_dim];
  *base = before * inner;
  *block = mine * inner;
  *skip = (global - mine) * inner;
}
