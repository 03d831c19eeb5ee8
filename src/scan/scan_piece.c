/* akx_scan_piece: a scan of one piece of longer sequences, one pass at a time around the
 * caller's exchange, on one of two paths:
 *  - the column kernels (kernels/akx/scan_columns.cuh), for lines they cut into few chunks
 *    (many lines, or short ones), and for every built-in op;
 *  - the tile scan (kernels/akx/scan_carry.cuh), for a user op's long lines: there the column
 *    path's carry passes fold the chunks of a line one after another in one thread (5,461 of
 *    them for a line of 349,525 elements), while the tiles' look-back is a chain of as many
 *    steps as the tile count has base-32 digits (kernels/akx/lookback.cuh), and their loads
 *    and stores are coalesced along the line.
 *
 * The column path's workspace, in rows of one accumulator per line (the kernels' layout):
 *   B_0 .. B_{b-1}  the totals of the b pieces before this one (copied from the exchange)
 *   R_0             the carry: the fold of B, in order
 *   R_1 .. R_c      the c chunks' folds; then, in place, each chunk's start (carry o earlier chunks)
 *   S_1 .. S_c      a copy of R_1 .. R_c, folded into T (the copy keeps R's folds for the carry)
 *   T               the piece's total per line, what the exchange sends
 * The passes: reduce (R_1..R_c), copy to S, carry over S_1..S_c,T (T <- total), exchange, copy
 * the totals to B, carry over B,R_0 (R_0 <- carry), carry over R_0..R_c (R_k <- carry o chunks
 * before k), scan from R_1.. with the carry first. The scan_columns_carry kernel folds any run of
 * rows in order, and writes into the row after them the fold of them all: every fold here is
 * it, in the order of the sequence, so that an op need not commute.
 *
 * The tile path's workspace: the look-back's tags, and in the scratch its nodes, then the rows
 * B_0 .. B_{b-1}, R_0, T (tile_plan). Its passes: the tiles' totals (T <- each line's fold), exchange, copy
 * the totals to B, carry over B,R_0 (R_0 <- carry: b steps, b the pieces before), and one tile
 * scan that reads each line's carry from R_0. The tiles fold in the sequence's order too. */
#include <string.h>
#include "internal.h"
#include "scan_plan.h"
#include "launch/route.h"
#include "jit/user_op.h"

size_t akx__scan_piece_rows(const akx__scan_plan *p, const akx_scan_piece_t *piece) {
  const int64_t c = p->n > 0 ? p->chunks : 0;
  return (size_t)(piece->pieces_before + 2 * c + 2);
}

/* One pass of the column kernels over `rows` rows from `status` (the chunks' rows: reduce,
 * scan; any run of rows: carry). */
static akx_status pass(akx_context *ctx, const akx__scan_plan *p, int32_t step, void *status,
                       int64_t rows) {
  akx__scan_plan q = *p;
  q.step = step;
  q.status = status;
  if (step == AKX__SCAN_STEP_CARRY) q.chunks = rows;
  return akx__launch(ctx, akx__scan_combination(&q), &q);
}

/* Both paths' middle: T (the piece's totals per line) to the exchange, the totals of the pieces
 * before this one into B_0 .. B_{b-1}, then the carry over B and R_0 (R_0 <- their fold, in
 * order: R_0 follows B_{b-1}). */
static akx_status exchange_and_carry(akx_context *ctx, const akx__scan_plan *p, const akx_scan_piece_t *piece,
                                     const void *T, char *B, size_t row) {
  const int64_t before = piece->pieces_before;
  const void *totals = NULL;
  AKX_TRY(piece->exchange(piece->arg, T, row, &totals));
  if (before > 0) {
    if (!totals)
      return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "piece->exchange gave no totals for the %lld "
                       "pieces before this one", (long long)before);
    AKX_TRY(ctx->be->memcpy(ctx, B, totals, (size_t)before * row, AKX_COPY_DEVICE_TO_DEVICE));
  }
  return pass(ctx, p, AKX__SCAN_STEP_CARRY, B, before + 1);
}

/* Lines the column kernels would cut into more chunks than this take the tile path: its
 * look-back is a few dependent steps (the tile count's base-32 digits) and it adds one launch, where the column path
 * folds the chunks twice, one after another. */
#define AKX__PIECE_TILE_CHUNKS 8

/* Whether a piece takes the tile path: a user op (whose units hold the kernel: a run-time
 * unit per op, src/core/families.h) with lines of more than AKX__PIECE_TILE_CHUNKS chunks. */
static int tile_path(const akx__scan_plan *p) {
  return p->op >= AKX_USER_OP_FIRST && p->n > 0 && p->slices > 0 && p->chunks > AKX__PIECE_TILE_CHUNKS;
}

/* The tile path's plan (the lines as one segmented sequence, in the column plan's line order)
 * and its workspace (src/core/workspace.c, "The regions"): the look-back's header and flags
 * among the tags; in the scratch its nodes, then, 64-aligned, the rows B_0 .. B_{b-1}, R_0, T.
 * need->scratch covers both; *nodes_bytes: the nodes' alone (the second tile launch takes
 * only them, so that the rows between the launches stay as they are). */
static akx_status tile_plan(const akx_context *ctx, const akx__scan_plan *p, const akx_scan_opts *opts,
                            const akx_scan_piece_t *piece, akx__scan_plan *q, akx__ws_need *need,
                            size_t *nodes_bytes, size_t *rows_bytes) {
  const akx__user_op *u = akx__user_op_find(ctx, (akx_op)p->op);
  if (!u) return akx__fail(AKX_ERROR_INTERNAL, "a piece's plan names op %d, which is no user op of its context",
                           (int)p->op);
  *q = *p;
  q->shape = AKX__SCAN_SLICES;
  size_t status_bytes = 0;
  AKX_TRY(akx__scan_size_tiles(ctx, opts, u->value_size, u->value_align, q, &status_bytes));
  *need = akx__lookback_need(q->tiles, 0);
  *nodes_bytes = status_bytes - akx__ws_need_bytes(need); /* the tiles' nodes */
  *rows_bytes = (size_t)(piece->pieces_before + 2) * (size_t)p->slices * u->value_size;
  need->scratch = AKX__ROUND_UP(*nodes_bytes, 64) + *rows_bytes;
  return AKX_SUCCESS;
}

/* One tile launch of the tile path with a fresh look-back status (`scratch` of it: the nodes,
 * and the rows the first time): the step, the row it stores (TOTALS) or reads (CARRIED).
 * *scratch_at: where the scratch lies. */
static akx_status tile_launch(akx_context *ctx, const akx__scan_plan *q, akx__ws_need need, size_t scratch,
                              int32_t step, size_t row_at, char **scratch_at) {
  need.scratch = scratch;
  akx__ws_grant g;
  akx__lookback_plan lp;
  AKX_TRY(akx__lookback_take(ctx, &need, &lp, &g));
  akx__scan_plan r = *q;
  r.step = step;
  r.line_row = (char *)g.scratch + row_at;
  AKX__LOOKBACK_INTO(r, lp);
  *scratch_at = g.scratch;
  AKX_TRY(akx__launch(ctx, akx__scan_combination(&r), &r));
  akx__workspace_lookback_done(ctx, &g);
  return AKX_SUCCESS;
}

/* The tile path after the checks: T <- the tiles' totals, the exchange, R_0 <- the carry over
 * the totals before, the scan from R_0. The status is taken twice, a fresh epoch for each
 * tile launch; the second takes the same tags (the layout holds them: nothing moves) and only
 * the nodes of the scratch, so that the rows after them stay. */
static akx_status piece_tiles(akx_context *ctx, const akx__scan_plan *p, const akx_scan_opts *opts,
                              const akx_scan_piece_t *piece) {
  akx__scan_plan q;
  akx__ws_need need;
  size_t nodes = 0, rows_bytes = 0;
  AKX_TRY(tile_plan(ctx, p, opts, piece, &q, &need, &nodes, &rows_bytes));
  const int64_t before = piece->pieces_before;
  const size_t row = rows_bytes / (size_t)(before + 2), rows_at = AKX__ROUND_UP(nodes, 64);
  char *scratch = NULL, *again = NULL;
  const size_t T_at = rows_at + (size_t)(before + 1) * row;
  AKX_TRY(tile_launch(ctx, &q, need, need.scratch, AKX__SCAN_STEP_TOTALS, T_at, &scratch));
  char *const B = scratch + rows_at, *const R0 = B + (size_t)before * row, *const T = R0 + row;
  AKX_TRY(exchange_and_carry(ctx, p, piece, T, B, row)); /* R_0 <- the carry */
  AKX_TRY(tile_launch(ctx, &q, need, nodes, AKX__SCAN_STEP_CARRIED, (size_t)(R0 - scratch), &again));
  if (again != scratch)
    return akx__fail(AKX_ERROR_INTERNAL, "a piece's second look-back status moved its scratch (%p, was %p)",
                     (void *)again, (void *)scratch);
  return AKX_SUCCESS;
}

static akx_status piece_locked(akx_context *ctx, const akx_array *dst, const akx_array *src,
                               akx_op op, int32_t dim, const akx_scan_opts *opts,
                               const akx_scan_piece_t *piece) {
  if (!piece) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "piece is NULL");
  if (!piece->exchange) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "piece->exchange is NULL");
  if (piece->pieces_before < 0 || piece->index_base < 0)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "piece->pieces_before is %lld and piece->index_base "
                     "%lld: neither may be negative", (long long)piece->pieces_before,
                     (long long)piece->index_base);
  akx__scan_plan p;
  size_t ws_bytes;
  AKX_TRY(akx__scan_prepare(ctx, dst, src, op, dim, opts, 1, piece, &p, &ws_bytes));
  if (p.slices == 0) return AKX_SUCCESS; /* no line: nothing to carry or exchange */
  const int64_t before = piece->pieces_before;
  /* The rows' bytes, before they are trusted (an accumulator is at most 64 bytes). */
  if ((double)akx__scan_piece_rows(&p, piece) * (double)p.slices * 64.0 > 4e18)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "piece->pieces_before is %lld with %lld lines: "
                     "more totals than any workspace holds", (long long)before, (long long)p.slices);
  /* Kernels compiled at run time are compiled (or found) before the workspace changes. */
  AKX_TRY(akx__kernels_prepare(ctx, AKX__FAMILY_SCAN, src->dtype, dst->dtype, (akx_dtype)p.acc, p.op,
                               AKX_MAP_IDENTITY));
  p.index_base = piece->index_base;
  if (tile_path(&p)) return piece_tiles(ctx, &p, opts, piece);
  const int64_t c = p.n > 0 ? p.chunks : 0;
  const size_t row = ws_bytes / akx__scan_piece_rows(&p, piece); /* one accumulator per line */
  void *ws;
  AKX_TRY(akx__workspace(ctx, ws_bytes, &ws));
  char *const B = ws, *const R0 = B + (size_t)before * row, *const R1 = R0 + row;
  char *const S1 = R1 + (size_t)c * row, *const T = S1 + (size_t)c * row;

  if (c > 0) {
    AKX_TRY(pass(ctx, &p, AKX__SCAN_STEP_REDUCE, R1, c));
    AKX_TRY(ctx->be->memcpy(ctx, S1, R1, (size_t)c * row, AKX_COPY_DEVICE_TO_DEVICE));
  }
  AKX_TRY(pass(ctx, &p, AKX__SCAN_STEP_CARRY, c > 0 ? (void *)S1 : (void *)T, c + 1));
  AKX_TRY(exchange_and_carry(ctx, &p, piece, T, B, row)); /* R_0 <- the carry */
  if (c == 0) return AKX_SUCCESS;
  AKX_TRY(pass(ctx, &p, AKX__SCAN_STEP_CARRY, R0, c + 1)); /* R_k <- carry o chunks < k */
  return pass(ctx, &p, AKX__SCAN_STEP_SCAN, R1, c);
}

akx_status akx_scan_piece(akx_context *ctx, const akx_array *dst, const akx_array *src, akx_op op,
                          int32_t dim, const akx_scan_opts *opts, const akx_scan_piece_t *piece) {
  return AKX_LOCKED(ctx, piece_locked(ctx, dst, src, op, dim, opts, piece));
}

akx_status akx_scan_piece_workspace_size(const akx_context *ctx, const akx_array *dst, const akx_array *src,
                                         akx_op op, int32_t dim, const akx_scan_opts *opts,
                                         int64_t pieces_before, size_t *bytes) {
  if (pieces_before < 0)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "pieces_before is %lld; it may not be negative",
                     (long long)pieces_before);
  const akx_scan_piece_t piece = {0, pieces_before, NULL, NULL};
  akx__scan_plan p;
  size_t ws;
  AKX_TRY(akx__scan_prepare(ctx, dst, src, op, dim, opts, 0, &piece, &p, &ws));
  if (!bytes) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "bytes is NULL");
  if (tile_path(&p)) {
    akx__scan_plan q;
    akx__ws_need need;
    size_t nodes = 0, rows_bytes = 0;
    AKX_TRY(tile_plan(ctx, &p, opts, &piece, &q, &need, &nodes, &rows_bytes));
    ws = akx__ws_need_bytes(&need);
  }
  *bytes = p.slices == 0 ? 0 : ws;
  return AKX_SUCCESS;
}
