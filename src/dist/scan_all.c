/* akx_scan_all along split_dim: each rank reduces its lines to totals (one accumulator per
 * line; the op's neutral element where its shard is empty), the totals are allgathered, and
 * rank r's carry per line is init combined with the totals of ranks 0..r-1 in rank order. The
 * carry then goes in front of r's lines as one more element, in an accumulator copy (E) that
 * libakx scans in place, so that the carry is every value's left operand as the elements before
 * it are in the single-process scan; E's lines (shifted by one for an inclusive scan) are
 * stored to dst. A rank with no carry (rank 0 without init, or only empty shards before it)
 * scans its own shard as the single-process call would. */
#include "internal.h"

/* The view of `a` over indices [from, from + n) of dim. */
static akx_array slice(akx_array a, int32_t dim, int64_t from, int64_t n) {
  a.data = (unsigned char *)a.data + from * a.strides[dim] * (int64_t)akx_dtype_size(a.dtype);
  a.shape[dim] = n;
  return a;
}

/* A user op along split_dim: each rank's shard is a piece of the global lines (akx_scan_piece),
 * every rank a piece (an empty shard too: its totals are identities), in rank order; its map
 * sees global indices along dim (along the global memory order for AKX_DIM_ALL). The lines pair
 * up whatever each rank's layout: akx_scan_piece orders them by the kept dims' C order. */
static akx_status scan_pieces(akx_comm *comm, const akx_array *dst, const akx_array *src,
                              akx_op op, int32_t dim, const akx_scan_opts *opts,
                              const akx__dist_record *all) {
  akx_scan_piece_t piece = {0, comm->rank, akx__dist_exchange, comm};
  for (int q = 0; q < comm->rank; ++q)
    piece.index_base += dim == AKX_DIM_ALL ? all[q].src_count : all[q].src_shape[dim];
  /* A 1-d array's AKX_DIM_ALL is its dim 0, and a 0-d array one element: as akx_scan takes them. */
  return akx_scan_piece(comm->ctx, dst, src, op, dim, opts, &piece);
}

akx_status akx_scan_all(akx_comm *comm, const akx_array *dst, const akx_array *src,
                        int32_t split_dim, akx_op op, int32_t dim, const akx_scan_opts *opts) {
  if (!comm) return akx__dist_fail(AKX_ERROR_INVALID_ARGUMENT, "akx_scan_all: comm is NULL");
  akx_context *ctx = comm->ctx;
  akx__dist_record me;
  akx__dist_begin(&me, AKX__DIST_SCAN, dst, src, split_dim, AKX_MAP_IDENTITY, op, dim, 1, 1);
  const akx_scan_opts given = opts ? *opts : akx_scan_opts_default();
  akx_dtype acc = AKX_DTYPE_AUTO;
  unsigned char identity[16];
  if (me.status == AKX_SUCCESS) {
    if (split_dim == AKX_DIM_ALL && dim != AKX_DIM_ALL)
      akx__dist_record_fail(&me, AKX_ERROR_INVALID_ARGUMENT, "dim is %d with split_dim AKX_DIM_ALL: "
                            "the global array is then the local arrays in memory order, which has "
                            "no dims; scan it with dim AKX_DIM_ALL", (int)dim);
    if (dim == AKX_DIM_ALL && split_dim != AKX_DIM_ALL && src->ndim != 1)
      akx__dist_record_fail(&me, AKX_ERROR_INVALID_ARGUMENT, "dim is AKX_DIM_ALL with split_dim %d "
                            "of a %d-d array: pass split_dim AKX_DIM_ALL (the local arrays one after "
                            "the other in memory order)", (int)split_dim, (int)src->ndim);
  }
  const int user = (int32_t)op >= AKX_USER_OP_FIRST;
  const size_t acc_size = user ? akx__dist_user_acc(&me, ctx, op, given.init)
                               : akx__dist_resolve_acc(&me, src, AKX_MAP_IDENTITY, op, given.acc,
                                                       given.init, &acc, identity);
  if (me.status == AKX_SUCCESS) {
    size_t ws = 0;
    const akx_status s = akx_scan_workspace_size(ctx, dst, src, op, dim, opts, &ws);
    if (s != AKX_SUCCESS) akx__dist_record_fail(&me, s, NULL);
    me.exclusive = given.exclusive != 0;
  }
  const akx__dist_record *all;
  AKX_DIST_TRY(akx__dist_agree(comm, &me, &all));

  const int along_split = dim == AKX_DIM_ALL || dim == split_dim;
  int carry = given.init != NULL;
  for (int q = 0; q < comm->rank; ++q) carry |= all[q].src_count > 0;
  if (!along_split) return akx_scan(ctx, dst, src, op, dim, opts);
  if (user) return scan_pieces(comm, dst, src, op, dim, &given, all);

  /* The lines: the whole array in memory order is one line (akx_scan checked that src and dst
   * are contiguous with the same strides, so memory order is address order); a 1-d array's
   * AKX_DIM_ALL is its dim 0. */
  akx_array a = *src, d = *dst;
  int32_t s = dim;
  if (dim == AKX_DIM_ALL) {
    if (src->ndim == 1) {
      s = 0;
    } else {
      const int64_t n = me.src_count;
      a = akx_vector(src->data, src->dtype, n);
      d = akx_vector(dst->data, dst->dtype, n);
      s = 0;
    }
  }
  const int64_t n = a.shape[s];
  int64_t lines = 1;
  for (int32_t k = 0; k < a.ndim; ++k)
    if (k != s) lines *= a.shape[k];
  if (lines == 0) return AKX_SUCCESS; /* every rank: the non-split extents agree */

  /* Totals: a's shape with 1 along s, C order, in the partials' slot. */
  void *slot, *gathered;
  const size_t bytes = (size_t)lines * acc_size;
  AKX_DIST_TRY(akx__dist_partials_local(comm, bytes, &slot));
  int64_t shape[AKX_MAX_DIMS];
  for (int32_t k = 0; k < a.ndim; ++k) shape[k] = k == s ? 1 : a.shape[k];
  const akx_array totals = akx_array_c(slot, acc, a.ndim, shape);
  akx_reduce_opts ro = akx_reduce_opts_default();
  ro.acc = acc;
  ro.init = identity;
  AKX_DIST_TRY(akx_reduce_dims(ctx, &totals, &a, AKX_MAP_IDENTITY, op, &ro));
  AKX_DIST_TRY(akx__dist_partials_exchange(comm, slot, bytes, &gathered));
  if (!carry) return akx_scan(ctx, dst, src, op, dim, opts);
  if (n == 0) return AKX_SUCCESS;

  /* E: the carry, then the shard converted to the accumulator, n + 1 along s, C order. */
  AKX_DIST_TRY(akx__dist_grow(comm, &comm->temp, (size_t)(n + 1) * bytes));
  shape[s] = n + 1;
  const akx_array e = akx_array_c(comm->temp.ptr, acc, a.ndim, shape);
  shape[s] = 1;
  akx_array before = akx_array_c(gathered, acc, a.ndim, shape);
  before.shape[s] = comm->rank; /* the ranks before this one, in rank order */
  before.strides[s] = lines;
  ro.init = given.init;
  const akx_array e0 = slice(e, s, 0, 1), rest = slice(e, s, 1, n);
  AKX_DIST_TRY(akx_reduce_dims(ctx, &e0, &before, AKX_MAP_IDENTITY, op, &ro));
  ro.init = NULL; /* a copy: no reduced dim, each element converted to the accumulator */
  AKX_DIST_TRY(akx_reduce_dims(ctx, &rest, &a, AKX_MAP_IDENTITY, op, &ro));
  akx_scan_opts so = akx_scan_opts_default();
  so.acc = acc;
  so.block_size = given.block_size;
  so.items_per_thread = given.items_per_thread;
  AKX_DIST_TRY(akx_scan(ctx, &e, &e, op, s, &so));
  const akx_array out = slice(e, s, given.exclusive ? 0 : 1, n);
  return akx_reduce_dims(ctx, &d, &out, AKX_MAP_IDENTITY, op, &ro);
}
