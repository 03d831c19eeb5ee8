/* akx_scan_piece: a scan of one piece of longer sequences, on the column kernels
 * (kernels/akx/scan_columns.cuh), one pass at a time around the caller's exchange.
 *
 * The workspace, in rows of one accumulator per line (the kernels' layout):
 *   B_0 .. B_{b-1}  the totals of the b pieces before this one (copied from the exchange)
 *   R_0             the carry: the fold of B, in order
 *   R_1 .. R_c      the c chunks' folds; then, in place, each chunk's start (carry o earlier chunks)
 *   S_1 .. S_c      a copy of R_1 .. R_c, folded into T (the copy keeps R's folds for the carry)
 *   T               the piece's total per line, what the exchange sends
 * The passes: reduce (R_1..R_c), copy to S, carry over S_1..S_c,T (T <- total), exchange, copy
 * the totals to B, carry over B,R_0 (R_0 <- carry), carry over R_0..R_c (R_k <- carry o chunks
 * before k), scan from R_1.. with the carry first. The scan_columns_carry kernel folds any run of
 * rows in order, and writes into the row after them the fold of them all: every fold here is
 * it, in the order of the sequence, so that an op need not commute. */
#include <string.h>
#include "internal.h"
#include "scan_plan.h"
#include "launch/route.h"

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
  const void *totals = NULL;
  AKX_TRY(piece->exchange(piece->arg, T, row, &totals));
  if (before > 0) {
    if (!totals)
      return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "piece->exchange gave no totals for the %lld "
                       "pieces before this one", (long long)before);
    AKX_TRY(ctx->be->memcpy(ctx, B, totals, (size_t)before * row, AKX_COPY_DEVICE_TO_DEVICE));
  }
  AKX_TRY(pass(ctx, &p, AKX__SCAN_STEP_CARRY, B, before + 1)); /* R_0 <- the carry */
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
  *bytes = p.slices == 0 ? 0 : ws;
  return AKX_SUCCESS;
}
