// Warp-level scans and an ordered reduction over the 32 lanes of a full warp (every lane calls,
// the mask names all 32). Operand order is kept (lane j's value is combined after lane i's for
// i < j), so non-commutative operators (matrix products, affine maps) and floating-point
// rounding come out the same on every run: the association is fixed by lane numbers alone.
#pragma once
#include "akx/scan_op.cuh"

namespace akx {
// Inclusive scan (Hillis-Steele with shfl_up: log2(32) steps).
template <class S>
AKX_DEVICE typename S::T warp_scan_inclusive(typename S::T v) {
  const int lane = (int)(threadIdx.x & 31);
#pragma unroll
  for (int off = 1; off < 32; off <<= 1) {
    const typename S::T up = shfl_up(FULL_MASK, v, off);
    if (lane >= off) v = S::apply(up, v);
  }
  return v;
}
}  // namespace akx
