// kernels/akx/divide.cuh: the kernels' index division (no call of the 64-bit division routine, so
// no spills) against the host's `/`, on both of its paths: operands below 2^32 (the 32-bit
// division) and above (shift and subtract), at the boundaries of each, and the mixed-radix
// offsets every kernel computes with it against a digit-by-digit reference.
#include <criterion/criterion.h>
#include <cstdint>
#include <vector>
#include "akx/divide.cuh"

namespace {
uint64_t state = 0x9e3779b97f4a7c15ull;
uint64_t next() {  // splitmix64
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
// A value of about `bits` bits, biased towards powers of two and their neighbours.
uint64_t draw(int bits) {
  const uint64_t top = bits >= 64 ? ~0ull : (1ull << bits) - 1;
  switch (next() % 4) {
    case 0: return (1ull << (next() % bits)) + (next() % 3) - 1;
    case 1: return next() & top;
    case 2: return (next() & top) >> (next() % bits);
    default: return top - (next() % 4);
  }
}
void check(uint64_t n, uint64_t d) {
  if (d == 0) return;
  const uint64_t got = akx::udiv64(n, d);
  cr_assert_eq(got, n / d, "udiv64(%llu, %llu) = %llu, want %llu", (unsigned long long)n,
               (unsigned long long)d, (unsigned long long)got, (unsigned long long)(n / d));
}
}  // namespace

Test(divide, boundaries) {
  const uint64_t edges[] = {0, 1, 2, 3, 7, 8, 255, 256, 65535, 65536, 0x7fffffffull, 0x80000000ull,
                            0xfffffffeull, 0xffffffffull, 0x100000000ull, 0x100000001ull,
                            0x1ffffffffull, 0x200000000ull, 0x7fffffffffffffffull,
                            0x8000000000000000ull, 0xfffffffffffffffeull, 0xffffffffffffffffull};
  for (uint64_t n : edges)
    for (uint64_t d : edges) check(n, d);
}

Test(divide, random_widths) {
  for (int i = 0; i < 400000; ++i) {
    const int nb = 1 + (int)(next() % 64), db = 1 + (int)(next() % 64);
    check(draw(nb), draw(db));
  }
}

Test(divide, signed_index_helpers) {
  for (int i = 0; i < 100000; ++i) {
    const int64_t n = (int64_t)(draw(63) >> 1), d = (int64_t)(draw(40) | 1);
    cr_assert_eq(akx::idiv(n, d), n / d);
    cr_assert_eq(akx::idiv_up(n, d), n / d + (n % d != 0), "idiv_up(%lld, %lld)", (long long)n,
                 (long long)d);
  }
  cr_assert_eq(akx::idiv_up(0, 5), 0);
  cr_assert_eq(akx::idiv_up(INT64_MAX, 1), INT64_MAX);
}

// offset(i) = sum of i's mixed-radix digits times the strides, innermost dim last; extents
// large enough to take indices past 2^32 (the division's wide path).
Test(divide, mixed_radix_offset) {
  for (int trial = 0; trial < 20000; ++trial) {
    const int32_t n = 1 + (int32_t)(next() % 8);
    int64_t shape[8], stride[8];
    int64_t total = 1;
    for (int32_t d = 0; d < n; ++d) {
      const int wide = next() % 3 == 0;
      shape[d] = 1 + (int64_t)(next() % (wide ? 1000000 : 7));
      if (total > INT64_MAX / 4 / shape[d]) shape[d] = 1;
      total *= shape[d];
      stride[d] = (int64_t)(next() % 2001) - 1000;
    }
    const int64_t i = (int64_t)(next() % (uint64_t)total);
    int64_t want = 0, rest = i;
    for (int32_t d = n - 1; d >= 0; --d) {
      want += (rest % shape[d]) * stride[d];
      rest /= shape[d];
    }
    cr_assert_eq(akx::mixed_radix_offset(i, n, shape, stride), want, "index %lld over %d dims",
                 (long long)i, n);
  }
  cr_assert_eq(akx::mixed_radix_offset(123, 0, nullptr, nullptr), 0);
}
