// Conversions between element types (kernels/akx/convert.cuh), the code the kernels run, against
// the host reference (long double, 64 significant bits: exact for every 64-bit integer).
// Integers round to float16/bfloat16/float32 once, to nearest even: ties above 2^53 are
// where a detour through double rounds twice.
#include <criterion/criterion.h>
#include <stdint.h>

#include <random>

#include "akx/convert.cuh"
extern "C" {
#include "reference.h"
}

namespace {
template <class I>
void check_int_to_small(I x) {
  const long double exact = (long double)x;
  const uint16_t bf = akx::cvt<akx::bf16>(x).bits, h = akx::cvt<akx::f16>(x).bits;
  cr_assert_eq(bf, ref_bf16_from_ld(exact), "bfloat16(%Lf): 0x%04x, expected 0x%04x", exact,
               bf, ref_bf16_from_ld(exact));
  cr_assert_eq(h, ref_f16_from_ld(exact), "float16(%Lf): 0x%04x, expected 0x%04x", exact, h,
               ref_f16_from_ld(exact));
  const float f = akx::cvt<float>(x);
  cr_assert_eq(f, (float)exact, "float32(%Lf): %a, expected %a", exact, (double)f,
               (double)(float)exact);
}

template <class I>
void check_ties(I sign) {
  // 2^60 + k * 2^52 (+/- 1): bfloat16 keeps 8 significant bits, so 2^52 is half an ulp of
  // 2^60; float32 keeps 24, so 2^36 is half an ulp.
  const I base = (I)1 << 60;
  for (I half : {(I)1 << 52, (I)1 << 36})
    for (int k = 1; k <= 7; k += 2)
      for (int d = -1; d <= 1; ++d) check_int_to_small<I>(sign * (I)(base + (I)k * half + (I)d));
}
}  // namespace

Test(convert, int64_to_bfloat16_rounds_once) {
  // The review's case: double rounds 2^60 + 2^52 + 1 to the tie 2^60 + 2^52, then to even.
  cr_expect_eq(akx::cvt<akx::bf16>((int64_t)((1ll << 60) + (1ll << 52) + 1)).bits, 0x5D81);
  cr_expect_eq(akx::cvt<akx::bf16>((uint64_t)((1ull << 60) + (1ull << 52) + 1)).bits, 0x5D81);
  cr_expect_eq(akx::cvt<akx::bf16>((int64_t)((1ll << 60) + (1ll << 52))).bits, 0x5D80);
}

Test(convert, integer_ties_round_to_nearest_even) {
  check_ties<int64_t>(1);
  check_ties<int64_t>(-1);
  check_ties<uint64_t>(1);
}

Test(convert, integer_extremes) {
  for (int64_t x : {INT64_MIN, INT64_MIN + 1, INT64_MAX, INT64_MAX - 1, (int64_t)0, (int64_t)1,
                    (int64_t)-1, (int64_t)65504, (int64_t)65519, (int64_t)65520, (int64_t)-65520})
    check_int_to_small<int64_t>(x);
  for (uint64_t x : {UINT64_MAX, UINT64_MAX - 1, (uint64_t)1 << 63, (uint64_t)0})
    check_int_to_small<uint64_t>(x);
  for (int32_t x : {INT32_MIN, INT32_MAX, 2049, 2051, -2049, 16777217, -16777217})
    check_int_to_small<int32_t>(x);
  for (uint32_t x : {UINT32_MAX, (uint32_t)16777217, (uint32_t)16777219}) check_int_to_small<uint32_t>(x);
  for (int16_t x : {(int16_t)INT16_MIN, (int16_t)INT16_MAX, (int16_t)2049}) check_int_to_small<int16_t>(x);
  for (uint16_t x : {(uint16_t)UINT16_MAX, (uint16_t)2049}) check_int_to_small<uint16_t>(x);
  for (int8_t x : {(int8_t)INT8_MIN, (int8_t)INT8_MAX}) check_int_to_small<int8_t>(x);
}

Test(convert, random_64_bit_integers) {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 200000; ++i) {
    const uint64_t r = rng();
    const int shift = int(rng() % 64);
    check_int_to_small<uint64_t>(r >> shift);
    check_int_to_small<int64_t>((int64_t)(r >> shift) * ((rng() & 1) ? 1 : -1));
  }
}
