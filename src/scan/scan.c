/* akx_scan: validate -> canonicalise along the scanned dim -> choose the shape -> tuning ->
 * workspace -> launch (kernels/akx/scan.cuh). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "akx/block_limits.h"
#include "scan_plan.h"
#include "launch/route.h"
#include "jit/user_op.h"
#include "tuning.h"

/* Kept dim d (size, src stride, dst stride) into the outer maps, then the fold of them all
 * (src/core/canonical.c): largest |src stride| first, merged where both arrays step over a dim
 * without a gap. */
static void keep_dim(akx__scan_plan *p, int32_t *nk, int64_t size, int64_t s_src, int64_t s_dst) {
  p->src_outer.shape[*nk] = size;
  p->src_outer.strides[*nk] = s_src;
  p->dst_outer.strides[*nk] = s_dst;
  ++*nk;
}
static int32_t fold_kept(akx__scan_plan *p, int32_t nk) {
  int64_t *const strides[2] = {p->src_outer.strides, p->dst_outer.strides};
  nk = akx__fold_dims(nk, p->src_outer.shape, strides, 2);
  memcpy(p->dst_outer.shape, p->src_outer.shape, sizeof p->src_outer.shape);
  return nk;
}

/* A piece's kept dims in C order (dim 0 slowest), unfolded: the line order every piece of a
 * sequence shares, whatever its layout (akx_scan_piece). */
static int32_t unfolded_kept(akx__scan_plan *p, int32_t nk) {
  memcpy(p->dst_outer.shape, p->src_outer.shape, sizeof p->src_outer.shape);
  return nk;
}

/* ---- akx__scan_prepare's phases --------------------------------------------------------------- */

/* What validation learns of a call. */
typedef struct {
  akx__extent src_ext, dst_ext;
  akx_dtype acc;      /* AKX_DTYPE_AUTO for an op with its own accumulator */
  akx__user_op *user; /* the op's user op, else NULL */
} scan_checked;

/* Every check of akx_scan before a plan is made: the context, the arrays (data pointers too
 * with `memory`), the op and its accumulator, opts, the shapes, dim, and the overlap. */
static akx_status check_call(const akx_context *ctx, const akx_array *dst, const akx_array *src, akx_op op,
                             int32_t dim, const akx_scan_opts *opts, int memory, scan_checked *c) {
  AKX_TRY(akx__check_context(ctx));
  AKX_TRY(akx__check_array(ctx, src, "src", AKX__ARRAY_SOURCE | (memory ? AKX__ARRAY_MEMORY : 0), &c->src_ext));
  AKX_TRY(akx__check_array(ctx, dst, "dst", memory ? AKX__ARRAY_MEMORY : 0, &c->dst_ext));
  if (op == AKX_OP_ARGMIN || op == AKX_OP_ARGMAX)
    return akx__fail(AKX_ERROR_UNSUPPORTED, "op is %s, a reduction only: it has no scan", akx__op_name(op));
  AKX_TRY(akx__check_op(op));
  AKX_TRY(akx__check_scan_opts(ctx, opts));
  if (dst->ndim != src->ndim)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "dst->ndim is %d but src->ndim is %d; a scan keeps the shape",
                     (int)dst->ndim, (int)src->ndim);
  for (int32_t d = 0; d < src->ndim; ++d)
    if (dst->shape[d] != src->shape[d])
      return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                       "dst->shape[%d] is %" PRId64 " but src->shape[%d] is %" PRId64 "; a scan keeps the shape",
                       (int)d, dst->shape[d], (int)d, src->shape[d]);
  if (dim != AKX_DIM_ALL && (dim < 0 || dim >= src->ndim))
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "dim is %d; it must be AKX_DIM_ALL (-1) or in 0..%d for a %d-d src", (int)dim,
                     (int)src->ndim - 1, (int)src->ndim);
  AKX_TRY(akx__scan_resolve_op((akx_context *)ctx, src->dtype, op, opts, "akx_scan", &c->acc, &c->user));
  /* In place only as the same view: any other overlap would read what another tile wrote. */
  const int same_view = memory && dst->data == src->data && dst->dtype == src->dtype &&
                        memcmp(dst->strides, src->strides, sizeof(int64_t) * (size_t)src->ndim) == 0;
  if (memory && !same_view && c->dst_ext.count > 0 && c->src_ext.count > 0)
    AKX_TRY(akx__check_disjoint(dst, &c->dst_ext, "dst", src, &c->src_ext, "src"));
  return AKX_SUCCESS;
}

/* The plan's operands and what every shape carries: pointers, dtypes, op, init, layout. */
static void start_plan(const akx_context *ctx, const akx_array *dst, const akx_array *src, akx_op op,
                       const akx_scan_opts *opts, const scan_checked *c, akx__scan_plan *p) {
  memset(p, 0, sizeof *p);
  p->src = src->data;
  p->dst = dst->data;
  p->src_dtype = src->dtype;
  p->dst_dtype = dst->dtype;
  p->acc = c->acc;
  p->op = c->user ? c->user->id : op;
  p->exclusive = opts && opts->exclusive;
  if (opts && opts->init) {
    p->has_init = 1;
    akx__acc_init(p->init, opts->init, c->acc, c->user);
  }
  p->layout = ctx->settings.scan_layout;
}

/* AKX_DIM_ALL over 2 dims or more scans src in memory order: src contiguous (C or Fortran),
 * dst with the same strides; one line of sext->count elements, of any step when one dim is
 * left (the others of size 1). */
static akx_status canonicalise_memory_order(const akx_array *dst, const akx_array *src, const akx__extent *sext,
                                            akx__scan_plan *p) {
  int32_t nk = 0;
  for (int32_t d = 0; d < src->ndim; ++d) {
    if (src->shape[d] == 1) continue;
    if (dst->strides[d] != src->strides[d])
      return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                       "dim is AKX_DIM_ALL, which scans src in memory order, but dst->strides[%d] "
                       "= %" PRId64 " differs from src->strides[%d] = %" PRId64 ": give dst src's layout",
                       (int)d, dst->strides[d], (int)d, src->strides[d]);
    keep_dim(p, &nk, src->shape[d], src->strides[d], dst->strides[d]);
  }
  nk = fold_kept(p, nk);
  if (sext->count > 1 && nk != 1)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "dim is AKX_DIM_ALL but src is not contiguous (C or Fortran order, positive "
                     "strides): scan along a dim, or copy src first");
  p->n = sext->count;
  p->slices = 1;
  p->src_step = nk == 1 ? p->src_outer.strides[0] : 1;
  p->dst_step = nk == 1 ? p->dst_outer.strides[0] : 1;
  p->src_outer.ndim = p->dst_outer.ndim = 0;
  return AKX_SUCCESS;
}

/* A scan along dim (a 1-d src's only dim for AKX_DIM_ALL): the scanned dim's length and steps,
 * the kept dims as slices, folded, or unfolded in C order for a piece. */
static void canonicalise_along_dim(const akx_array *dst, const akx_array *src, int32_t dim, int piece,
                                   akx__scan_plan *p) {
  const int32_t sd = src->ndim == 0 ? -1 : dim == AKX_DIM_ALL ? 0 : dim;
  p->n = sd < 0 ? 1 : src->shape[sd];
  p->src_step = sd < 0 ? 1 : src->strides[sd];
  p->dst_step = sd < 0 ? 1 : dst->strides[sd];
  int32_t nk = 0;
  int64_t slices = 1;
  for (int32_t d = 0; d < src->ndim; ++d) {
    if (d == sd) continue;
    if (src->shape[d] == 0) slices = 0;
    if (src->shape[d] <= 1) continue;
    keep_dim(p, &nk, src->shape[d], src->strides[d], dst->strides[d]);
    slices *= src->shape[d]; /* no overflow: check_array bounded the element count */
  }
  nk = piece ? unfolded_kept(p, nk) : fold_kept(p, nk);
  p->slices = slices;
  p->src_outer.ndim = p->dst_outer.ndim = nk;
}

/* The shape: a tile scan when the scanned dim is contiguous in src or is the only one; a
 * thread per column when a kept dim is (coalesced across columns); otherwise the tile scan
 * (any step, never wrong). AKX_SCAN_SHAPE forces slices or columns; a piece takes columns. */
static void choose_shape(const akx_context *ctx, int piece, akx__scan_plan *p) {
  const int32_t nk = p->src_outer.ndim;
  const int inner_kept_unit = nk > 0 && llabs(p->src_outer.strides[nk - 1]) == 1;
  if (p->slices <= 1) p->shape = AKX__SCAN_WHOLE;
  else if (llabs(p->src_step) != 1 && inner_kept_unit) p->shape = AKX__SCAN_COLUMNS;
  else p->shape = AKX__SCAN_SLICES;
  const int32_t forced = ctx->settings.scan_shape;
  if (p->slices > 1 && (forced == AKX__SCAN_SLICES || forced == AKX__SCAN_COLUMNS)) p->shape = forced;
  if (piece) p->shape = AKX__SCAN_COLUMNS; /* the only shape that takes a carry per line */
}

/* The column kernels' block and chunks, and their workspace: the chunks' carries, or a
 * piece's rows. */
static akx_status size_columns(const akx_context *ctx, const akx_scan_opts *opts, const akx_scan_piece_t *piece,
                               size_t acc_size, akx__scan_plan *p, size_t *ws_bytes) {
  const akx__tuning over = {opts ? opts->block_size : 0, 0, 0};
  const akx__tuning t = akx__tuning_lookup(AKX__TUNE_SCAN_COLUMNS, ctx->info.cc_major,
                                           ctx->info.cc_minor, acc_size, &over);
  p->block_size = t.block_size;
  /* Chunks so that columns x chunks threads fill the device (target_blocks blocks per SM),
   * each chunk at least 64 long (the carry pass costs a read and write per chunk). */
  const int64_t sms = ctx->info.sm_count; /* the device's (a sim profile's on the sim) */
  const int64_t want = sms * t.target_blocks * t.block_size;
  int64_t chunks = p->slices >= want || p->slices == 0 ? 1 : (want + p->slices - 1) / p->slices;
  const int64_t max_chunks = p->n / 64 > 0 ? p->n / 64 : 1;
  if (chunks > max_chunks) chunks = max_chunks;
  p->chunk_len = (p->n + chunks - 1) / (chunks > 0 ? chunks : 1);
  p->chunks = p->chunk_len > 0 ? (p->n + p->chunk_len - 1) / p->chunk_len : 1;
  if (p->chunks < 1) p->chunks = 1;
  if (p->chunks > 1) *ws_bytes = (size_t)(p->chunks * p->slices) * acc_size;
  if (piece) *ws_bytes = akx__scan_piece_rows(p, piece) * (size_t)p->slices * acc_size;
  if ((p->slices * p->chunks + p->block_size - 1) / p->block_size > INT32_MAX)
    return akx__fail(AKX_ERROR_UNSUPPORTED, "src has %" PRId64 " columns: more than one grid holds",
                     p->slices);
  return AKX_SUCCESS;
}

akx_status akx__scan_size_tiles(const akx_context *ctx, const akx_scan_opts *opts, size_t acc_size,
                                size_t acc_align, akx__scan_plan *p, size_t *ws_bytes) {
  const int64_t total = p->n * p->slices;
  const int seg = p->shape == AKX__SCAN_SLICES;
  const size_t align = acc_align > 4 ? acc_align : 4;
  const size_t node = seg ? AKX__ROUND_UP(acc_size + 4, align) : acc_size;
  const akx__tuning t = akx__scan_tile_tuning(ctx, seg ? node : acc_size, opts ? opts->block_size : 0,
                                              opts ? opts->items_per_thread : 0);
  p->block_size = t.block_size;
  p->items_per_thread = t.items_per_thread;
  AKX_TRY(akx__scan_tile_shared(ctx, p->layout, t.block_size, t.items_per_thread, acc_size,
                                seg ? node : acc_size, &p->smem_bytes));
  const int64_t tile = (int64_t)t.block_size * t.items_per_thread;
  p->tiles = total / tile + (total % tile != 0);
  if (p->tiles > INT32_MAX)
    return akx__fail(AKX_ERROR_UNSUPPORTED,
                     "src has %" PRId64 " elements: %" PRId64 " tiles of %" PRId64
                     " are more than one grid holds; raise opts->items_per_thread",
                     total, p->tiles, tile);
  if (total > 0) *ws_bytes = akx__lookback_bytes(p->tiles, node);
  return AKX_SUCCESS;
}

akx_status akx__scan_prepare(const akx_context *ctx, const akx_array *dst, const akx_array *src,
                             akx_op op, int32_t dim, const akx_scan_opts *opts, int memory,
                             const akx_scan_piece_t *piece, akx__scan_plan *p, size_t *ws_bytes) {
  scan_checked c;
  AKX_TRY(check_call(ctx, dst, src, op, dim, opts, memory, &c));
  start_plan(ctx, dst, src, op, opts, &c, p);
  if (dim == AKX_DIM_ALL && src->ndim >= 2) AKX_TRY(canonicalise_memory_order(dst, src, &c.src_ext, p));
  else canonicalise_along_dim(dst, src, dim, piece != NULL, p);
  choose_shape(ctx, piece != NULL, p);
  const size_t acc_size = akx__acc_size(c.acc, c.user);
  *ws_bytes = 0;
  if (p->shape == AKX__SCAN_COLUMNS) AKX_TRY(size_columns(ctx, opts, piece, acc_size, p, ws_bytes));
  else AKX_TRY(akx__scan_size_tiles(ctx, opts, acc_size, akx__acc_align(c.acc, c.user), p, ws_bytes));
  if (p->n * p->slices == 0 && !piece) *ws_bytes = 0; /* nothing to scan: no workspace */
  return AKX_SUCCESS;
}

static akx_status scan_locked(akx_context *ctx, const akx_array *dst, const akx_array *src,
                              akx_op op, int32_t dim, const akx_scan_opts *opts) {
  akx__scan_plan p;
  size_t ws_bytes;
  AKX_TRY(akx__scan_prepare(ctx, dst, src, op, dim, opts, 1, NULL, &p, &ws_bytes));
  if (p.n == 0 || p.slices == 0) return AKX_SUCCESS;
  /* Kernels compiled at run time are compiled (or found) before the workspace changes. */
  AKX_TRY(akx__kernels_prepare(ctx, AKX__FAMILY_SCAN, src->dtype, dst->dtype, (akx_dtype)p.acc, p.op, AKX_MAP_IDENTITY));
  const int tiled = p.shape != AKX__SCAN_COLUMNS;
  akx__ws_grant call;
  if (tiled) {
    akx__lookback_plan lp;
    const akx__ws_need need = akx__lookback_need(p.tiles, (ws_bytes - akx__lookback_bytes(p.tiles, 0)) / (size_t)p.tiles);
    AKX_TRY(akx__lookback_take(ctx, &need, &lp, &call));
    AKX__LOOKBACK_INTO(p, lp);
  } else if (ws_bytes) {
    AKX_TRY(akx__workspace(ctx, ws_bytes, &p.status));
  }
  AKX_TRY(akx__launch(ctx, akx__scan_combination(&p), &p));
  if (tiled) akx__workspace_lookback_done(ctx, &call);
  return AKX_SUCCESS;
}

akx_status akx_scan(akx_context *ctx, const akx_array *dst, const akx_array *src, akx_op op,
                    int32_t dim, const akx_scan_opts *opts) {
  return AKX_LOCKED(ctx, scan_locked(ctx, dst, src, op, dim, opts));
}

akx_status akx_scan_workspace_size(const akx_context *ctx, const akx_array *dst,
                                   const akx_array *src, akx_op op, int32_t dim,
                                   const akx_scan_opts *opts, size_t *bytes) {
  akx__scan_plan p;
  size_t ws;
  AKX_TRY(akx__scan_prepare(ctx, dst, src, op, dim, opts, 0, NULL, &p, &ws));
  if (!bytes) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "bytes is NULL");
  *bytes = ws;
  return AKX_SUCCESS;
}
