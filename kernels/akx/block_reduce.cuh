// Block-level reduction: each warp reduces with shuffles, lane 0 of each warp parks its
// total in shared memory, warp 0 reduces the totals. blockDim.x must be a multiple of 32
// (the host checks) and at most 1024, so the totals fit in one warp.
#pragma once
#include "akx/warp_reduce.cuh"

namespace akx {
// Scratch: 32 accumulators of shared memory, declared by the kernel (AKX_SHARED(Acc, scratch,
// 32), as in kernels/akx/reduce_whole.cuh).
// Result valid in thread 0. Ends without a barrier: a second call on the same scratch needs
// a __syncthreads() first.
template <class Op, class Acc>
AKX_DEVICE Acc block_reduce(Acc v, const smem<Acc> &scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int warps = (int)(blockDim.x >> 5);
  v = warp_reduce<Op>(v);
  if (warps == 1) return v;
  if (lane == 0) scratch.st(warp, v);
  __syncthreads();
  if (warp == 0) {
    v = lane < warps ? scratch.ld(lane) : Op::template identity<Acc>();
    v = warp_reduce<Op>(v);
  }
  return v;
}
}  // namespace akx
