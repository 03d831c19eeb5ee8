// Block-level exclusive scan of one value per thread: warps scan with shuffles, the warp
// totals go through shared memory, warp 0 scans them, every thread adds its warp's prefix.
// blockDim.x a multiple of 32, at most 1024 (the host checks).
#pragma once
#include "akx/warp_scan.cuh"

namespace akx {
// scratch: 64 values of shared memory (block_scan_scratch). Returns the thread's exclusive
// prefix (S::identity() for thread 0) and the block's total in *total (every thread).
// Ends after a barrier and leaves scratch in use: the next use needs a __syncthreads() first.
constexpr int block_scan_scratch = 64;
template <class S>
AKX_DEVICE typename S::T block_scan_exclusive(typename S::T v, const smem<typename S::T> &scratch,
                                              typename S::T *total) {
  using T = typename S::T;
  const int lane = (int)(threadIdx.x & 31), warp = (int)(threadIdx.x >> 5);
  const int warps = (int)(blockDim.x >> 5);
  const T incl = warp_scan_inclusive<S>(v);
  T excl = shfl_up(FULL_MASK, incl, 1);
  if (lane == 0) excl = S::identity();
  if (lane == 31) scratch.st(warp, incl);
  __syncthreads();
  if (warp == 0) {
    // Warp 0 reads slots 0..31 and writes 32..63: no lane reads what another writes.
    const T w = lane < warps ? scratch.ld(lane) : S::identity();
    const T wi = warp_scan_inclusive<S>(w);
    scratch.st(32 + lane, wi);
  }
  __syncthreads();
  *total = scratch.ld(32 + warps - 1);
  if (warp > 0) excl = S::apply(scratch.ld(32 + warp - 1), excl);
  return excl;
}
}  // namespace akx
