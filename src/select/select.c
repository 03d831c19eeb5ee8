/* The flagged selections: akx_select_flagged and akx_partition_flagged (and their workspace
 * queries). validate -> the values' width and the flags' test -> the selection tile of flagged
 * items (kernels/akx/select_flagged.cuh: flags, the values they call for, counts, look-back,
 * compaction) -> the count back, to the host or to device memory (the tile layer's count-back,
 * src/tile/tile.c). docs/select.md is the note. */
#include <inttypes.h>
#include <string.h>
#include "launch/route.h"
#include "tile/tile.h"

/* The dtype the kernels move a width's items as (kernels/akx/select_flagged.cuh,
 * is_width_dtype): every dtype of a width keeps its bits. */
static akx_dtype width_dtype(size_t size) {
  switch (size) {
    case 1: return AKX_UINT8;
    case 2: return AKX_UINT16;
    case 4: return AKX_UINT32;
    case 8: return AKX_UINT64;
    default: return AKX_COMPLEX128;
  }
}

/* numpy's nonzero of a flag as a mask of its bits: a float's (each part's) sign bit left out, so
 * that -0.0 is zero and a NaN is not; an integer's and a bool byte's every bit. */
static void flag_mask(akx_dtype t, uint64_t mask[2]) {
  mask[0] = ~0ull;
  mask[1] = 0;
  switch (t) {
    case AKX_FLOAT16: case AKX_BFLOAT16: mask[0] = 0x7fffull; break;
    case AKX_FLOAT32: mask[0] = 0x7fffffffull; break;
    case AKX_FLOAT64: mask[0] = 0x7fffffffffffffffull; break;
    case AKX_COMPLEX64: mask[0] = 0x7fffffff7fffffffull; break;
    case AKX_COMPLEX128: mask[0] = mask[1] = 0x7fffffffffffffffull; break;
    default: mask[0] = akx_dtype_size(t) == 8 ? ~0ull : (1ull << (8 * akx_dtype_size(t))) - 1; break;
  }
}

/* Validation and the plan, shared by the calls and their workspace queries (the size a query
 * gives is the one the call takes). memory: the calls' checks of where the data lies. */
static akx_status select_plan(const akx_context *ctx, const akx_array *dst, const akx_array *src,
                              const akx_array *flags, akx__select_mode mode, int memory, const char *call,
                              akx__select_plan *pp, size_t *ws_bytes, akx__extent *dext, akx__extent *sext,
                              akx__extent *fext) {
  const int mem = memory ? AKX__ARRAY_MEMORY : 0;
  const int partition = mode == AKX__SELECT_PARTITION;
  AKX_TRY(akx__check_context(ctx));
  AKX_TRY(akx__check_line(ctx, src, "src", AKX__ARRAY_SOURCE | mem, sext));
  AKX_TRY(akx__check_line(ctx, flags, "flags", AKX__ARRAY_SOURCE | mem, fext));
  if (flags->shape[0] != src->shape[0])
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "flags->shape[0] is %" PRId64 " but src->shape[0] is %" PRId64
                     "; they must match", flags->shape[0], src->shape[0]);
  AKX_TRY(akx__check_line(ctx, dst, "dst", mem, dext));
  if (dst->dtype != src->dtype)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "dst->dtype is %s but src->dtype is %s; %s moves src's items, so "
                     "they must match", akx_dtype_name(dst->dtype), akx_dtype_name(src->dtype), call);
  if (partition && dst->shape[0] != src->shape[0])
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "dst->shape[0] is %" PRId64 " but src->shape[0] is %" PRId64
                     "; a partition's dst holds every item (the selected from dst[0], the others from dst[n - 1])",
                     dst->shape[0], src->shape[0]);
  if (memory) {
    AKX_TRY(akx__check_disjoint(dst, dext, "dst", flags, fext, "flags"));
    /* A select may run in place (dst the same view as src: every item is read before a later
     * tile's stores reach it, kernels/akx/select_tile.cuh); any other overlap is refused. */
    const int same = dst->data == src->data && (dst->shape[0] <= 1 || dst->strides[0] == src->strides[0]);
    if (partition || !same) AKX_TRY(akx__check_disjoint(dst, dext, "dst", src, sext, "src"));
  }

  akx__select_plan p;
  memset(&p, 0, sizeof p);
  const size_t vw = akx_dtype_size(src->dtype), fw = akx_dtype_size(flags->dtype);
  p.src = src->data;
  p.src_stride = src->strides[0];
  p.n = sext->count;
  p.src_dtype = width_dtype(vw);
  p.mode = mode;
  p.flags = flags->data;
  p.flags_stride = flags->strides[0];
  p.flags_size = (int32_t)fw;
  flag_mask(flags->dtype, p.flags_mask);
  p.dst = dst->data;
  p.dst_stride = dst->strides[0];
  p.capacity = partition ? p.n : dst->shape[0];
  /* Whole slots as vectors where both inputs are contiguous, each aligned to its item, and a
   * slot's boundary falls on the same item of both: `shift` items of slot 0 lie before src. */
  const int64_t per_vector = (int64_t)(16 / vw);
  const uintptr_t va = (uintptr_t)src->data, fa = (uintptr_t)flags->data;
  const int64_t shift = (int64_t)(va % 16 / vw);
  const uintptr_t falign = per_vector * fw < 16 ? per_vector * fw : 16;
  p.vectorised = (p.n <= 1 || (src->strides[0] == 1 && flags->strides[0] == 1)) && va % vw == 0 &&
                 (vw < 16 || va % 16 == 0) && fa % fw == 0 && (fa - (uintptr_t)shift * fw) % falign == 0;
  p.shift = p.vectorised ? shift : 0;
  const akx__tuning t = akx__tuning_lookup(AKX__TUNE_FINDALL, ctx->info.cc_major, ctx->info.cc_minor, vw, NULL);
  p.block_size = t.block_size;
  const int32_t vectors = AKX__SELECT_VECTORS_OF((int32_t)vw);
  p.items_per_thread = vectors * (int32_t)per_vector;
  /* The staging window holds the items themselves (the tile keeps them: an in-place select). */
  AKX_TRY(akx__select_tile_shared(ctx, t.block_size, vectors, (int32_t)per_vector, 1, vw, 0,
                                  "the selection's tuned block_size", &p.window, &p.smem_bytes, NULL));
  const int64_t per_tile = (int64_t)t.block_size * vectors;
  p.tiles = akx__select_tiles(p.n, p.shift, per_vector, per_tile);
  /* The workspace is sized for any shift (the query reads no address), a tile more at most. */
  const int64_t most = akx__select_tiles(p.n, per_vector - 1, per_vector, per_tile);
  if (most > INT32_MAX)
    return akx__fail(AKX_ERROR_UNSUPPORTED, "src has %" PRId64 " items: more tiles than one grid holds", p.n);
  *ws_bytes = p.n > 0 ? akx__lookback_bytes(most, 8) : 0;
  *pp = p;
  return AKX_SUCCESS;
}

static akx_status select_locked(akx_context *ctx, const akx_array *dst, const akx_array *src, const akx_array *flags,
                                int64_t *count, akx_where where, akx__select_mode mode, const char *call) {
  akx__select_plan p;
  size_t ws_bytes = 0;
  akx__extent de, se, fe;
  AKX_TRY(select_plan(ctx, dst, src, flags, mode, 1, call, &p, &ws_bytes, &de, &se, &fe));
  AKX_TRY(akx__tile_check_counts(ctx, count, 1, where, "count", call));
  AKX_TRY(akx__tile_counts_apart(count, 1, where, "count", dst, &de, "dst"));
  AKX_TRY(akx__tile_counts_apart(count, 1, where, "count", src, &se, "src"));
  AKX_TRY(akx__tile_counts_apart(count, 1, where, "count", flags, &fe, "flags"));
  if (p.n == 0) return akx__tile_counts_zero(ctx, count, 1, where);
  /* Kernels compiled at run time (CUDA under AKX_KERNELS=runtime) before the workspace changes. */
  AKX_TRY(akx__kernels_prepare(ctx, AKX__FAMILY_SELECT_FLAGGED, (akx_dtype)p.src_dtype, AKX_DTYPE_AUTO,
                               AKX_DTYPE_AUTO, 0, AKX_MAP_IDENTITY));
  AKX__LOOKBACK_LAUNCH(ctx, p, 8, akx__select_flagged_combination(&p));
  /* The total: the look-back header's count, stored by the last tile; to device memory it stays
   * on the stream (the capacity's check is the caller's: at most capacity items written). */
  if (where == AKX_DEVICE) return akx__tile_count_back(ctx, p.status, count, 1, AKX_DEVICE);
  int64_t total = 0;
  AKX_TRY(akx__tile_count_back(ctx, p.status, &total, 1, AKX_HOST));
  *count = total;
  if (total > p.capacity)
    return akx__fail(AKX_ERROR_OUTPUT_TOO_SMALL,
                     "flags select %" PRId64 " item%s but dst holds %" PRId64 "; the first %" PRId64
                     " were written (*count is the total)", total, akx__plural(total), p.capacity, p.capacity);
  return AKX_SUCCESS;
}

akx_status akx_select_flagged(akx_context *ctx, const akx_array *dst, const akx_array *src, const akx_array *flags,
                              int64_t *count, akx_where where) {
  return AKX_LOCKED(ctx, select_locked(ctx, dst, src, flags, count, where, AKX__SELECT_KEEP, "akx_select_flagged"));
}

akx_status akx_partition_flagged(akx_context *ctx, const akx_array *dst, const akx_array *src,
                                 const akx_array *flags, int64_t *count, akx_where where) {
  return AKX_LOCKED(ctx, select_locked(ctx, dst, src, flags, count, where, AKX__SELECT_PARTITION,
                                       "akx_partition_flagged"));
}

static akx_status select_query(const akx_context *ctx, const akx_array *dst, const akx_array *src,
                               const akx_array *flags, akx__select_mode mode, const char *call, size_t *bytes) {
  akx__select_plan p;
  size_t ws = 0;
  akx__extent de, se, fe;
  AKX_TRY(select_plan(ctx, dst, src, flags, mode, 0, call, &p, &ws, &de, &se, &fe));
  if (!bytes) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "bytes is NULL");
  *bytes = ws;
  return AKX_SUCCESS;
}

akx_status akx_select_flagged_workspace_size(const akx_context *ctx, const akx_array *dst, const akx_array *src,
                                             const akx_array *flags, size_t *bytes) {
  return select_query(ctx, dst, src, flags, AKX__SELECT_KEEP, "akx_select_flagged", bytes);
}

akx_status akx_partition_flagged_workspace_size(const akx_context *ctx, const akx_array *dst, const akx_array *src,
                                                const akx_array *flags, size_t *bytes) {
  return select_query(ctx, dst, src, flags, AKX__SELECT_PARTITION, "akx_partition_flagged", bytes);
}
