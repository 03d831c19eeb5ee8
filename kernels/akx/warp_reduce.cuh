// Warp-level reduction: a shuffle tree over the 32 lanes of a full warp. Every lane of the
// warp must call it (the mask names all 32: Volta+ does not run a warp in lockstep, so a
// lane-subset reduction would need its own mask). The result is valid in lane 0.
#pragma once
#include "akx/ops.cuh"

namespace akx {
template <class Op, class Acc>
AKX_DEVICE Acc warp_reduce(Acc v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    v = Op::apply(v, shfl_down(FULL_MASK, v, offset));
  return v;
}
}  // namespace akx
