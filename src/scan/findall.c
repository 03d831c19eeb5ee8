/* akx_findall: validate -> memory order of src -> the selection tile of nonzero elements
 * (kernels/akx/findall.cuh: counts, look-back, compaction) -> the total back to the host.
 * akx_findall_where: the same, the total to the host or to device memory (the tile layer's
 * count-back, src/tile/tile.c). akx_findall_piece: the same, its positions moved to a whole
 * array's by the scatter. akx_findall_workspace_size: the same plan, its look-back status's size. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "launch/route.h"
#include "scan_plan.h"

/* src's positions in memory order (akx__memory_order_fold): position -> element offset. */
static void memory_order(const akx_array *a, akx__index_map *m) { m->ndim = akx__memory_order_fold(a, m->shape, m->strides); }

/* Validation and the plan, shared by the call and its workspace query (so that the size the
 * query gives is the one the call takes). `memory`: the call's checks of where the data lies;
 * the query reads no pointer. The extents of src and indices come back for the count's checks. */
static akx_status findall_plan(const akx_context *ctx, const akx_array *src, const akx_array *indices,
                               const akx_findall_piece_t *piece, int memory, akx__findall_plan *pp,
                               size_t *ws_bytes, akx__extent *sextp, akx__extent *iextp) {
  akx__extent sext, iext;
  AKX_TRY(akx__check_context(ctx));
  AKX_TRY(akx__check_array(ctx, src, "src", AKX__ARRAY_SOURCE | (memory ? AKX__ARRAY_MEMORY : 0), &sext));
  if (!indices) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "indices is NULL");
  if (indices->dtype != AKX_INT64)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "indices->dtype is %s; positions are int64",
                     (unsigned)indices->dtype < AKX_DTYPE_COUNT ? akx_dtype_name(indices->dtype) : "not a dtype");
  if (indices->ndim != 1)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "indices->ndim is %d; indices is 1-d",
                     (int)indices->ndim);
  AKX_TRY(akx__check_array(ctx, indices, "indices", memory ? AKX__ARRAY_MEMORY : 0, &iext));
  if (indices->shape[0] > 1 && indices->strides[0] != 1)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "indices->strides[0] is %" PRId64 "; positions are written contiguously (stride 1)",
                     indices->strides[0]);
  if (piece) AKX_TRY(akx__check_piece_positions(piece->position_base, piece->position_block, piece->position_skip));
  if (memory && iext.count > 0 && sext.count > 0)
    AKX_TRY(akx__check_disjoint(indices, &iext, "indices", src, &sext, "src"));

  akx__findall_plan p;
  memset(&p, 0, sizeof p);
  p.src = src->data;
  p.src_dtype = src->dtype;
  p.n = sext.count;
  memory_order(src, &p.src_map);
  p.indices = (int64_t *)indices->data;
  p.capacity = indices->shape[0];
  if (piece) p.positions = (akx__positions){piece->position_base, piece->position_block, piece->position_skip};
  /* 16-byte loads where the source is contiguous and its address a multiple of its element
   * (a 16-byte element: of 16): `shift` elements of the first vector lie before src. */
  const size_t elem = akx_dtype_size(src->dtype);
  const uintptr_t addr = (uintptr_t)src->data;
  const int contiguous = p.src_map.ndim == 0 || (p.src_map.ndim == 1 && p.src_map.strides[0] == 1);
  p.vectorised = contiguous && addr % elem == 0 && (elem < 16 || addr % 16 == 0);
  p.shift = p.vectorised ? (int64_t)(addr % 16 / elem) : 0;
  const akx__tuning t = akx__tuning_lookup(AKX__TUNE_FINDALL, ctx->info.cc_major, ctx->info.cc_minor, elem, NULL);
  p.block_size = t.block_size;
  p.items_per_thread = AKX__FINDALL_VECTORS * (int32_t)(16 / elem);
  /* The selection tile's staging window of uint16 offsets, in dynamic shared memory (the tile
   * layer sizes it; findall_info, kernels/akx/findall.cuh, declares no opt-in). */
  AKX_TRY(akx__select_tile_shared(ctx, t.block_size, AKX__FINDALL_VECTORS, (int32_t)(16 / elem), 1, sizeof(uint16_t), 0,
                                  "findall's tuned block_size", &p.window, &p.smem_bytes, NULL));
  /* Tiles over 16-byte vector slots, the first one starting `shift` elements before src. */
  const int64_t per_vector = (int64_t)(16 / elem), per_tile = (int64_t)t.block_size * AKX__FINDALL_VECTORS;
  p.tiles = akx__select_tiles(p.n, p.shift, per_vector, per_tile);
  /* The workspace is sized for any shift (the query reads no address), a tile more at most. */
  const int64_t most = akx__select_tiles(p.n, per_vector - 1, per_vector, per_tile);
  if (most > INT32_MAX)
    return akx__fail(AKX_ERROR_UNSUPPORTED, "src has %" PRId64 " elements: more tiles than one grid holds",
                     p.n);
  /* The look-back status the tiles share (akx__lookback_bytes), which also carries the count. */
  *ws_bytes = p.n > 0 ? akx__lookback_bytes(most, 8) : 0;
  *pp = p;
  *sextp = sext;
  *iextp = iext;
  return AKX_SUCCESS;
}

static akx_status findall_locked(akx_context *ctx, const akx_array *src, const akx_array *indices,
                                 int64_t *count, const akx_findall_piece_t *piece, akx_where where,
                                 const char *call) {
  akx__findall_plan p;
  size_t ws_bytes = 0;
  akx__extent sext, iext;
  AKX_TRY(findall_plan(ctx, src, indices, piece, 1, &p, &ws_bytes, &sext, &iext));
  AKX_TRY(akx__tile_check_counts(ctx, count, 1, where, "count", call));
  AKX_TRY(akx__tile_counts_apart(count, 1, where, "count", indices, &iext, "indices"));
  AKX_TRY(akx__tile_counts_apart(count, 1, where, "count", src, &sext, "src"));
  if (p.n == 0) return akx__tile_counts_zero(ctx, count, 1, where);
  int64_t total = 0;
  {
    /* Kernels compiled at run time (CUDA under AKX_KERNELS=runtime) before the workspace changes. */
    AKX_TRY(akx__kernels_prepare(ctx, AKX__FAMILY_FINDALL, src->dtype, AKX_DTYPE_AUTO, AKX_DTYPE_AUTO, 0,
                                 AKX_MAP_IDENTITY));
    AKX__LOOKBACK_LAUNCH(ctx, p, 8, akx__findall_combination(&p));
    /* The total: the look-back header's count, stored by the last tile; to device memory it
     * stays on the stream, and the capacity's check is the caller's (at most capacity written). */
    if (where == AKX_DEVICE) return akx__tile_count_back(ctx, p.status, count, 1, AKX_DEVICE);
    AKX_TRY(akx__tile_count_back(ctx, p.status, &total, 1, AKX_HOST));
  }
  *count = total;
  if (total > p.capacity)
    return akx__fail(AKX_ERROR_OUTPUT_TOO_SMALL,
                     "src has %" PRId64 " nonzero element%s but indices holds %" PRId64
                     "; the first %" PRId64 " position%s written (*count is the total)",
                     total, akx__plural(total), p.capacity, p.capacity,
                     p.capacity == 1 ? " was" : "s were");
  return AKX_SUCCESS;
}

akx_status akx_findall(akx_context *ctx, const akx_array *src, const akx_array *indices,
                       int64_t *count) {
  return AKX_LOCKED(ctx, findall_locked(ctx, src, indices, count, NULL, AKX_HOST, "akx_findall"));
}

akx_status akx_findall_where(akx_context *ctx, const akx_array *src, const akx_array *indices,
                             int64_t *count, akx_where where) {
  return AKX_LOCKED(ctx, findall_locked(ctx, src, indices, count, NULL, where, "akx_findall_where"));
}

akx_status akx_findall_piece(akx_context *ctx, const akx_array *src, const akx_array *indices,
                             int64_t *count, const akx_findall_piece_t *piece) {
  if (!piece) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "piece is NULL");
  return AKX_LOCKED(ctx, findall_locked(ctx, src, indices, count, piece, AKX_HOST, "akx_findall_piece"));
}

akx_status akx_findall_workspace_size(const akx_context *ctx, const akx_array *src, const akx_array *indices,
                                      size_t *bytes) {
  akx__findall_plan p;
  size_t ws = 0;
  akx__extent sext, iext;
  AKX_TRY(findall_plan(ctx, src, indices, NULL, 0, &p, &ws, &sext, &iext));
  if (!bytes) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "bytes is NULL");
  *bytes = ws;
  return AKX_SUCCESS;
}
