/* Shared by the scan family's host files (src/scan/). */
#ifndef AKX_SCAN_PLAN_H
#define AKX_SCAN_PLAN_H
#include "internal.h"
#include "tuning.h"
#include "tile/tile.h" /* the look-back, the tile tuning, the scan op rule */

/* A tile's dynamic shared memory (its runs of partial_size-byte partials in this layout), or
 * AKX_ERROR_INVALID_ARGUMENT when the runs and the static scratch of node_size-byte nodes do
 * not fit the device's per-block maximum (src/scan/tile_shared.cpp). */
akx_status akx__scan_tile_shared(const akx_context *ctx, int32_t layout, int32_t block_size,
                                 int32_t items_per_thread, size_t partial_size, size_t node_size,
                                 int64_t *dynamic_bytes);
/* The tile scans' block, items and shared memory (refused when over the device's per-block
 * limit), their tiles, and the look-back's workspace, for p's shape (WHOLE or SLICES: a slice
 * scan's nodes carry the slice) and an accumulator of acc_size bytes aligned to acc_align. */
akx_status akx__scan_size_tiles(const akx_context *ctx, const akx_scan_opts *opts, size_t acc_size,
                                size_t acc_align, akx__scan_plan *p, size_t *ws_bytes);
/* akx_scan's and akx_scan_piece's ladder but the launch: validation, canonical form, shape,
 * tuning, workspace size. `memory`: check data pointers too (a call, not a size query).
 * piece non-NULL: the column kernels, the kept dims unfolded in C order (the lines' order
 * every piece shares), and the piece's workspace (akx__scan_piece_rows rows of lines). */
akx_status akx__scan_prepare(const akx_context *ctx, const akx_array *dst, const akx_array *src,
                             akx_op op, int32_t dim, const akx_scan_opts *opts, int memory,
                             const akx_scan_piece_t *piece, akx__scan_plan *p, size_t *ws_bytes);
/* Rows of p->slices accumulators a piece's workspace holds (src/scan/scan_piece.c). */
size_t akx__scan_piece_rows(const akx__scan_plan *p, const akx_scan_piece_t *piece);
/* Test and bench settings (ctx->settings, src/core/settings.c, read once per context):
 *   AKX_SCAN_LAYOUT = conflict_free (default) | dense | odd_stride (AK's unpadded and padded
 *                     tiles): how tiles keep their runs (kernels/akx/scan_layout.cuh,
 *                     docs/scan_tiles.md);
 *   AKX_SCAN_SHAPE  = whole | slices | columns: force a shape on an input it can handle
 *                     (slices and columns take any scan along a dim). */
#endif
