// Index arithmetic without the 64-bit division routine.
//
// nvcc compiles a 64-bit `/` or `%` to a call of a division subroutine. A kernel that makes
// such a call is register-allocated around the call's convention: in CUDA 13.0 for sm_90 every
// reduce_dims_rows instance stopped at 64 registers and spilled 8 to 40 bytes, with any
// -maxrregcount and any launch bound, while the same kernel with these divisions took 48
// registers and no stack (the kernel_resources test fails on any stack frame: bench/kernel_resources.py).
// Indices here are non-negative and almost always below 2^32, where the 32-bit division
// (inline on every GPU) is exact; above it, a shift-and-subtract loop of at most 64 steps,
// still inline. One helper for every kernel's offsets and chunking, the sim's included.
#pragma once
#include "akx/device.cuh"

namespace akx {

AKX_HD_INLINE int clz64(uint64_t x) {
#if defined(__CUDA_ARCH__)
  return __clzll((long long)x);
#else
  return x == 0 ? 64 : __builtin_clzll(x);
#endif
}

// n / d for d > 0.
AKX_HD_INLINE uint64_t udiv64(uint64_t n, uint64_t d) {
  if (((n | d) >> 32) == 0) return (uint32_t)n / (uint32_t)d;
  if (n < d) return 0;
  // d's top bit under n's, then one quotient bit per step (d << s <= n cannot overflow).
  const int s = clz64(d) - clz64(n);
  uint64_t dd = d << s, q = 0;
  for (int k = 0; k <= s; ++k) {
    q <<= 1;
    if (n >= dd) {
      n -= dd;
      q |= 1;
    }
    dd >>= 1;
  }
  return q;
}

// Quotient of a non-negative index by a positive extent.
AKX_HD_INLINE int64_t idiv(int64_t n, int64_t d) { return (int64_t)udiv64((uint64_t)n, (uint64_t)d); }
// ceil(n / d), n >= 0, d > 0.
AKX_HD_INLINE int64_t idiv_up(int64_t n, int64_t d) { return n == 0 ? 0 : idiv(n - 1, d) + 1; }

// Offset of index i of an n-dim index space (innermost dim last, varying fastest): the digits
// of i in the mixed radix `shape`, times `stride`.
AKX_HD_INLINE int64_t mixed_radix_offset(int64_t i, int32_t n, const int64_t *shape, const int64_t *stride) {
  if (n <= 0) return 0;
  if (n == 1) return i * stride[0];
  int64_t off = 0;
  for (int32_t d = n - 1; d > 0; --d) {
    const int64_t q = idiv(i, shape[d]);
    off += (i - q * shape[d]) * stride[d];
    i = q;
  }
  // The outermost digit is what is left (an index inside the space is below shape[0]).
  return off + i * stride[0];
}

}  // namespace akx
