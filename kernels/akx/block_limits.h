/* The largest block each kernel is compiled for: its __launch_bounds__ (the kernels' headers in
 * kernels/, through kernel_info.max_threads) and the planners' bound on opts->block_size
 * (akx__check_block_size, src/core/validate.c). A C header, read by the kernels and the host
 * code alike, so that the two cannot disagree.
 *
 * A bound is a promise to ptxas: with __launch_bounds__(B) it may give a thread up to
 * 65536 / B registers (64 for B = 1024, which made the findall and complex128 tiles spill;
 * 255 for B = 256). Each bound is the largest block size its family's tuning rows use
 * (src/core/tuning.c: 256 in every row; tests/test_tuning.c checks that no row exceeds its
 * bound). One bound per options struct: a block_size override applies to every kernel the
 * call may take (akx_reduce_dims takes the whole-array kernels for a one-element dst; akx_scan
 * the tile or the column kernels).
 *
 * Each kernel declares its register class beside its bound (kernel_info.registers, checked
 * against ptxas's sm_90 figures by the kernel_resources test); bench/RESULTS.md, "Declared
 * registers", has the figures and the occupancy that follows. */
#ifndef AKX_BLOCK_LIMITS_H
#define AKX_BLOCK_LIMITS_H

/* Reductions: kernels/akx/reduce_whole.cuh and kernels/akx/reduce_dims.cuh (akx_reduce_opts). */
#define AKX_MAX_BLOCK_REDUCE 256
/* Scans and findall: kernels/akx/scan_tile.cuh, scan.cuh, findall.cuh, scan_columns.cuh and the
 * look-back reset in kernels/akx/lookback.cuh (akx_scan_opts). */
#define AKX_MAX_BLOCK_SCAN 256
/* Blocks of AKX_MAX_BLOCK_SCAN threads the tile kernels (scan_tile_kernel: scans, segmented
 * scans, findall) keep resident per SM: a bound of 80 registers. Without it ptxas (CUDA 13.0,
 * sm_90) settled the complex128 segmented scan at 64 registers with a 4-byte spill; with it,
 * 64 and none. Three tiles of 256 per SM is what the tile kernels had before the bound. */
#define AKX_MIN_BLOCKS_SCAN_TILE 3

#endif
