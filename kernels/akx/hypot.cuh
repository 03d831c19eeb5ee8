// hypot(x, y) = sqrt(x^2 + y^2) without undue overflow or underflow, for float and double: the
// modulus of complex ABS (kernels/akx/ops.cuh, map_abs). One implementation for both compilers,
// built from +, -, *, / and sqrt alone, each of them correctly rounded by IEEE 754 on the GPU
// (nvcc's defaults -prec-div=true -prec-sqrt=true -ftz=false, and --fmad=false from
// CMakeLists.txt) and on the host (SSE2 / AArch64, -ffp-contract=off): the same bits on both.
// CUDA's hypot and glibc's are different algorithms and differ in the last bit.
//
// The algorithm (Borges, "An Improved Algorithm for hypot(a, b)", arXiv:1904.09481, the
// correction step written without a fused multiply-add):
//   1. |x| >= |y| after ordering; inf wins over NaN (C99 F.9.4.3); y = 0, or y below x times
//      2^-(p/2 + 1) (x(1 + (y/x)^2 / 2) then rounds to x), return x;
//   2. scale both by a power of two (exact) so that the squares and the error terms below are
//      normal numbers;
//   3. h = sqrt(t), t = x*x + y*y rounded;
//   4. the residual x^2 + y^2 - h^2, computed exactly enough: each square's rounding error
//      by Dekker's product (Veltkamp's split), t's by Fast2Sum, t - h*h is exact (Sterbenz);
//      h += residual / (2h), one Newton step from a value within 1 ulp: the result is within
//      0.5 ulp + a small fraction of an ulp of the exact value (tests/test_complex_abs.c
//      checks 1 ulp against long double, and the same bits as an independent transcription);
//   5. scale back (exact unless the result is subnormal or overflows: then rounded once more).
#pragma once
#include "akx/device.cuh"

namespace akx {

template <class R>
struct hypot_constants;
// p = 24 bits.
template <>
struct hypot_constants<float> {
  static constexpr float split = 4097.0f;         // 2^12 + 1 (Veltkamp: 2^ceil(p/2) + 1)
  static constexpr float negligible = 0x1p-13f;   // y < x * 2^-13: the result is x
  static constexpr float big = 0x1p40f, big_scale = 0x1p-80f, big_unscale = 0x1p80f;
  static constexpr float small = 0x1p-40f, small_scale = 0x1p100f, small_unscale = 0x1p-100f;
};
// p = 53 bits.
template <>
struct hypot_constants<double> {
  static constexpr double split = 134217729.0;    // 2^27 + 1
  static constexpr double negligible = 0x1p-27;
  static constexpr double big = 0x1p300, big_scale = 0x1p-600, big_unscale = 0x1p600;
  static constexpr double small = 0x1p-300, small_scale = 0x1p600, small_unscale = 0x1p-600;
};

// a*a - sq exactly, where sq is a*a rounded (Dekker's product of a with itself; a's halves
// from Veltkamp's split carry p/2 bits each, so every product below is exact).
template <class R>
AKX_HD_INLINE R square_error(R a, R sq) {
  const R c = hypot_constants<R>::split * a;
  const R hi = c - (c - a), lo = a - hi;
  return ((hi * hi - sq) + 2 * hi * lo) + lo * lo;
}

template <class R>
AKX_HD_INLINE R hypot_of(R x, R y) {
  static_assert(is_same<R, float>::value || is_same<R, double>::value,
                "hypot_of<float> or hypot_of<double>");
  using K = hypot_constants<R>;
  constexpr R inf = numeric_limits<R>::infinity();
  // 1. order, special values
  if constexpr (is_same<R, float>::value) {
    x = fabsf(x);
    y = fabsf(y);
  } else {
    x = fabs(x);
    y = fabs(y);
  }
  if (x == inf || y == inf) return inf;
  if (x != x || y != y) return x + y;  // a NaN
  if (x < y) {
    const R t = x;
    x = y;
    y = t;
  }
  if (y == 0 || y < x * K::negligible) return x;
  // 2. scale
  R unscale = 1;
  if (x > K::big) {
    x *= K::big_scale;
    y *= K::big_scale;
    unscale = K::big_unscale;
  } else if (x < K::small) {
    x *= K::small_scale;
    y *= K::small_scale;
    unscale = K::small_unscale;
  }
  // 3. the rounded square root
  const R xx = x * x, yy = y * y;
  const R t = xx + yy;
  const R t_error = yy - (t - xx);  // xx + yy - t (Fast2Sum: xx >= yy)
  R h;
  if constexpr (is_same<R, float>::value) h = sqrtf(t);
  else h = sqrt(t);
  // 4. one correction step
  const R hh = h * h;
  const R residual =
      (t - hh) + (t_error + ((square_error(x, xx) + square_error(y, yy)) - square_error(h, hh)));
  h = h + residual / (2 * h);
  // 5. scale back
  return h * unscale;
}

}  // namespace akx
