// Conversions between element types, the same bits on the GPU and on the sim.
// float16/bfloat16 are rounded to nearest even straight from the wider value (never through
// float first: float64 -> float32 -> float16 can round twice).
#pragma once
#include "akx/dtypes.cuh"

namespace akx {

template <class T>
AKX_HD_INLINE T bitcast_(const void *p) {
  if constexpr (is_same<T, bool>::value) {  // a caller's bool is any byte: nonzero true
    unsigned char b;
    memcpy(&b, p, 1);
    return b != 0;
  } else {
    T r;
    memcpy(&r, p, sizeof(T));
    return r;
  }
}

// Rounds a double to a binary format with MANT explicit mantissa bits and exponent bias
// BIAS (float16: 10, 15; bfloat16: 7, 127), nearest even, with subnormals, inf and NaN.
template <int MANT, int BIAS>
AKX_HD_INLINE uint16_t round_to_small_float(double d) {
  const uint64_t b = bitcast_<uint64_t>(&d);
  const uint16_t sign = (uint16_t)((b >> 63) << 15);
  const int exp = (int)((b >> 52) & 0x7ff);
  const uint64_t frac = b & ((1ull << 52) - 1);
  const uint16_t inf = (uint16_t)(((1u << (15 - MANT)) - 1) << MANT);
  if (exp == 0x7ff) return (uint16_t)(sign | inf | (frac ? (1u << (MANT - 1)) : 0));
  if (exp == 0) return sign;  // a double subnormal is far below the smallest target subnormal
  const int e = exp - 1023;
  const uint64_t m = (1ull << 52) | frac;  // 53 significant bits
  // Shift that leaves the target's significant bits; subnormal targets keep fewer bits.
  int shift = 52 - MANT;
  const int emin = 1 - BIAS;
  if (e < emin) shift += emin - e;
  if (shift >= 64) return sign;
  uint64_t q = m >> shift;
  const uint64_t rem = m & ((1ull << shift) - 1), half = 1ull << (shift - 1);
  if (rem > half || (rem == half && (q & 1))) ++q;
  if (e < emin) return (uint16_t)(sign | q);  // q == 1 << MANT is the smallest normal: same bits
  int ebits = e + BIAS;
  if (q == (2ull << MANT)) { q >>= 1; ++ebits; }
  if (ebits >= (1 << (15 - MANT)) - 1) return (uint16_t)(sign | inf);
  return (uint16_t)(sign | ((uint16_t)ebits << MANT) | (uint16_t)(q & ((1u << MANT) - 1)));
}

// Rounds an integer straight to the same formats, nearest even. A 64-bit integer has more
// significant bits than a double: going through double rounds twice (2^60 + 2^52 + 1 becomes
// the tie 2^60 + 2^52, which then rounds to even, down; the value itself rounds up).
template <int MANT, int BIAS, class I>
AKX_HD_INLINE uint16_t round_int_to_small_float(I x) {
  bool negative = false;
  if constexpr (is_signed<I>::value) negative = x < 0;
  uint64_t m = negative ? 0 - (uint64_t)x : (uint64_t)x;
  const uint16_t sign = negative ? 0x8000 : 0;
  if (m == 0) return 0;
#if defined(__CUDA_ARCH__)
  int e = 63 - __clzll((long long)m);  // the leading bit: the value is in [2^e, 2^(e+1))
#else
  int e = 63 - __builtin_clzll(m);
#endif
  if (e > MANT) {  // keep MANT + 1 significant bits
    const int shift = e - MANT;
    const uint64_t rem = m & ((1ull << shift) - 1), half = 1ull << (shift - 1);
    m >>= shift;
    if (rem > half || (rem == half && (m & 1))) ++m;
    if (m == (2ull << MANT)) {
      m >>= 1;
      ++e;
    }
  } else {
    m <<= MANT - e;  // exact (integers are never subnormal)
  }
  const int ebits = e + BIAS;
  if (ebits >= (1 << (15 - MANT)) - 1) return (uint16_t)(sign | (((1u << (15 - MANT)) - 1) << MANT));
  return (uint16_t)(sign | ((uint16_t)ebits << MANT) | (uint16_t)(m & ((1u << MANT) - 1)));
}

AKX_HD_INLINE float f16_to_float(f16 h) {
  const uint32_t s = (uint32_t)(h.bits >> 15) << 31, e = (h.bits >> 10) & 0x1f, m = h.bits & 0x3ff;
  uint32_t bits;
  if (e == 0x1f) {
    bits = s | 0x7f800000u | (m << 13);
  } else if (e == 0) {
    float f = (float)m * 5.9604644775390625e-8f;  // m * 2^-24, exact
    return s ? -f : f;
  } else {
    bits = s | ((e + 112) << 23) | (m << 13);
  }
  return bitcast_<float>(&bits);
}
AKX_HD_INLINE float bf16_to_float(bf16 h) {
  const uint32_t bits = (uint32_t)h.bits << 16;
  return bitcast_<float>(&bits);
}
AKX_HD_INLINE f16 double_to_f16(double d) { return f16{round_to_small_float<10, 15>(d)}; }
AKX_HD_INLINE bf16 double_to_bf16(double d) { return bf16{round_to_small_float<7, 127>(d)}; }

// ---- what a value is, for conversion ----------------------------------------------------------
template <class T> struct real_of { using type = T; };
template <> struct real_of<f16> { using type = float; };
template <> struct real_of<bf16> { using type = float; };
template <class R> struct real_of<cplx<R>> { using type = R; };

template <class T> AKX_HD_INLINE auto widen(T x) { return x; }
AKX_HD_INLINE float widen(f16 x) { return f16_to_float(x); }
AKX_HD_INLINE float widen(bf16 x) { return bf16_to_float(x); }

template <class T> constexpr bool is_cplx_v = false;
template <class R> constexpr bool is_cplx_v<cplx<R>> = true;
template <class T> constexpr bool is_small_float_v = is_same<T, f16>::value || is_same<T, bf16>::value;
template <class T> constexpr bool is_real_float_v = is_floating_point<T>::value || is_small_float_v<T>;

template <class T>
AKX_HD_INLINE bool is_nonzero(T x) {
  if constexpr (is_cplx_v<T>) return x.re != 0 || x.im != 0;
  else if constexpr (is_small_float_v<T>) return (x.bits & 0x7fff) != 0;  // -0 is zero
  else return x != 0;
}

// A real value (already widened: bool, an integer, float or double) to a real type.
template <class To, class From>
AKX_HD_INLINE To real_to(From x) {
  if constexpr (is_same<To, bool>::value) {
    return x != 0;
  } else if constexpr (is_same<To, f16>::value && is_integral<From>::value) {
    return f16{round_int_to_small_float<10, 15>(x)};
  } else if constexpr (is_same<To, bf16>::value && is_integral<From>::value) {
    return bf16{round_int_to_small_float<7, 127>(x)};
  } else if constexpr (is_same<To, f16>::value) {
    return double_to_f16((double)x);
  } else if constexpr (is_same<To, bf16>::value) {
    return double_to_bf16((double)x);
  } else if constexpr (is_integral<To>::value && is_floating_point<From>::value) {
    // Truncate toward zero, saturating, NaN -> 0 (as CUDA's cvt.rzi.sat).
    if (x != x) return 0;
    if (x <= (From)numeric_limits<To>::lowest()) return numeric_limits<To>::lowest();
    if (x >= (From)numeric_limits<To>::max()) return numeric_limits<To>::max();
    return (To)x;
  } else if constexpr (is_integral<To>::value && is_integral<From>::value) {
    // Two's complement truncation: go through the unsigned type of the target.
    return (To)(typename make_unsigned<To>::type)(x);
  } else {
    return (To)x;
  }
}

// Any element type to any element type: complex -> real keeps the real part,
// real -> complex has a zero imaginary part, anything -> bool is x != 0.
template <class To, class From>
AKX_HD_INLINE To cvt(From x) {
  if constexpr (is_same<To, From>::value) {
    return x;
  } else if constexpr (is_same<To, bool>::value) {
    return is_nonzero(x);
  } else if constexpr (is_cplx_v<To>) {
    using R = typename real_of<To>::type;
    if constexpr (is_cplx_v<From>) return To{(R)x.re, (R)x.im};
    else return To{real_to<R>(widen(x)), (R)0};
  } else if constexpr (is_cplx_v<From>) {
    return real_to<To>(x.re);
  } else {
    return real_to<To>(widen(x));
  }
}

}  // namespace akx
