/* Unit tests of the host reference itself (tests/support/reference.c): the other tests are
 * only as good as it is. No libakx call here. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "reference.h"

/* ---- float16 / bfloat16 ---------------------------------------------------------------- */

static void expect_f16(long double x, uint16_t bits) {
  uint16_t got = ref_f16_from_ld(x);
  cr_expect(got == bits, "float16 of %.25Lg: got 0x%04X, expected 0x%04X", x, got, bits);
}

static void expect_bf16(long double x, uint16_t bits) {
  uint16_t got = ref_bf16_from_ld(x);
  cr_expect(got == bits, "bfloat16 of %.25Lg: got 0x%04X, expected 0x%04X", x, got, bits);
}

Test(reference, f16_known_patterns) {
  expect_f16(1.0L, 0x3C00);
  expect_f16(-2.0L, 0xC000);
  expect_f16(0.5L, 0x3800);
  expect_f16(65504.0L, 0x7BFF);
  expect_f16(65519.0L, 0x7BFF);           /* below the midpoint to 65536 */
  expect_f16(65520.0L, 0x7C00);           /* the midpoint: ties to even = 65536 = inf */
  expect_f16(1e6L, 0x7C00);
  expect_f16(-1e6L, 0xFC00);
  expect_f16(INFINITY, 0x7C00);
  expect_f16(-INFINITY, 0xFC00);
  expect_f16(0.0L, 0x0000);
  expect_f16(-0.0L, 0x8000);
  expect_f16(ldexpl(1, -24), 0x0001);     /* smallest subnormal */
  expect_f16(ldexpl(1, -25), 0x0000);     /* half of it: tie to even = 0 */
  expect_f16(ldexpl(1, -25) * 1.0001L, 0x0001);
  expect_f16(ldexpl(3, -25), 0x0002);     /* 1.5 ulp: tie between 1 and 2 -> 2 */
  expect_f16(ldexpl(5, -25), 0x0002);     /* 2.5 ulp: tie between 2 and 3 -> 2 */
  expect_f16(ldexpl(1023, -24), 0x03FF);  /* largest subnormal */
  expect_f16(ldexpl(1, -14), 0x0400);     /* smallest normal */
  expect_f16(ldexpl(2047, -25), 0x0400);  /* between 0x03FF and 0x0400: tie -> even 0x0400 */
  expect_f16(0.1L, 0x2E66);
  expect_f16(1.0L / 3, 0x3555);
  expect_f16(2049.0L, 0x6800);            /* tie between 2048 and 2050 -> 2048 */
  expect_f16(2051.0L, 0x6802);            /* tie between 2050 and 2052 -> 2052 */
  expect_f16(1.0L + ldexpl(1, -11), 0x3C00);
  expect_f16(1.0L + ldexpl(3, -11), 0x3C02);
  uint16_t n = ref_f16_from_ld(NAN);
  cr_expect((n & 0x7C00) == 0x7C00 && (n & 0x03FF) != 0, "float16 NaN: 0x%04X", n);
  cr_expect(isnan(ref_f16_to_ld(n)), "float16 NaN decodes to NaN");
  cr_expect(isnan(ref_f16_to_ld(0x7C01)) && isnan(ref_f16_to_ld(0xFE00)), "NaN payloads");
  cr_expect(ref_f16_to_ld(0x0001) == ldexpl(1, -24));
  cr_expect(ref_f16_to_ld(0x7BFF) == 65504.0L);
  cr_expect(ref_f16_to_ld(0xFC00) == -INFINITY);
  cr_expect(signbit(ref_f16_to_ld(0x8000)) && ref_f16_to_ld(0x8000) == 0);
}

Test(reference, bf16_known_patterns) {
  expect_bf16(1.0L, 0x3F80);
  expect_bf16(-1.0L, 0xBF80);
  expect_bf16(1.00390625L, 0x3F80);        /* 1 + 2^-8: tie between 0x3F80, 0x3F81 -> even */
  expect_bf16(1.01171875L, 0x3F82);        /* 1 + 3 * 2^-8: tie -> 0x3F82 */
  expect_bf16(1.00390625L * (1 + 1e-9L), 0x3F81);
  expect_bf16(3.0L, 0x4040);
  expect_bf16(ldexpl(255, 120), 0x7F7F);   /* largest finite: 0x7F7F = 255 * 2^120 */
  expect_bf16(ldexpl(511, 119), 0x7F80);   /* midpoint to 2^128: ties to even -> inf */
  expect_bf16(3.4028234663852886e38L, 0x7F80); /* FLT_MAX rounds up to inf */
  expect_bf16(ldexpl(1, -133), 0x0001);    /* smallest subnormal */
  expect_bf16(ldexpl(1, -134), 0x0000);
  expect_bf16(-0.0L, 0x8000);
  expect_bf16(INFINITY, 0x7F80);
  uint16_t n = ref_bf16_from_ld(-NAN);
  cr_expect((n & 0x7F80) == 0x7F80 && (n & 0x007F) != 0, "bfloat16 NaN: 0x%04X", n);
  cr_expect(ref_bf16_to_ld(0x3F80) == 1.0L);
  cr_expect(ref_bf16_to_ld(0x7F7F) == ldexpl(255, 120));
}

/* Every bit pattern decodes and re-encodes to itself; every midpoint between neighbours
 * rounds to the even one, and a hair either side rounds to the nearer one. */
static void exhaustive(uint16_t (*enc)(long double), long double (*dec)(uint16_t), int mbits,
                       int ebits, const char *name) {
  const uint16_t inf = (uint16_t)(((1u << ebits) - 1u) << mbits);
  int bad = 0;
  for (uint32_t b = 0; b < 0x10000u && bad < 10; b++) {
    long double x = dec((uint16_t)b);
    uint16_t back = enc(x);
    if (isnan(x)) {
      if ((back & inf) != inf || (back & ((1u << mbits) - 1u)) == 0) bad++;
      continue;
    }
    if (back != b) {
      cr_expect_fail("%s 0x%04X -> %.25Lg -> 0x%04X", name, b, x, back);
      bad++;
    }
  }
  for (uint32_t b = 0; b < inf && bad < 10; b++) { /* positive finite a = b, next = b + 1 */
    for (int s = 0; s < 2; s++) {
      uint16_t sb = s ? 0x8000u : 0;
      long double a = dec((uint16_t)(b | sb));
      long double c = (b + 1 == inf) ? (s ? -1 : 1) * ldexpl(1, (1 << (ebits - 1)))
                                     : dec((uint16_t)((b + 1) | sb));
      long double mid = (a + c) / 2;
      uint16_t even = (b & 1u) ? (uint16_t)((b + 1) | sb) : (uint16_t)(b | sb);
      uint16_t up = (uint16_t)((b + 1) | sb);
      if (enc(mid) != even) {
        cr_expect_fail("%s midpoint %.25Lg: 0x%04X, expected 0x%04X", name, mid, enc(mid), even);
        bad++;
      }
      long double eps = fabsl(c - a) / 1024;
      if (enc(mid + (s ? -eps : eps)) != up || enc(mid - (s ? -eps : eps)) != (uint16_t)(b | sb)) {
        cr_expect_fail("%s near midpoint %.25Lg", name, mid);
        bad++;
      }
    }
  }
  cr_assert(bad == 0, "%s: %d failures", name, bad);
}

Test(reference, f16_exhaustive) { exhaustive(ref_f16_from_ld, ref_f16_to_ld, 10, 5, "float16"); }
Test(reference, bf16_exhaustive) {
  exhaustive(ref_bf16_from_ld, ref_bf16_to_ld, 7, 8, "bfloat16");
}
Test(reference, f16_exhaustive_long_double_path) {
  exhaustive(ref_f16_from_ld_slow, ref_f16_to_ld, 10, 5, "float16 (long double path)");
}
Test(reference, bf16_exhaustive_long_double_path) {
  exhaustive(ref_bf16_from_ld_slow, ref_bf16_to_ld, 7, 8, "bfloat16 (long double path)");
}

/* values only a long double holds: a hair above or below a midpoint */
Test(reference, small_floats_from_long_double) {
  long double mid = 1.0L + 0x1p-11L; /* float16 midpoint between 1 and 1 + 2^-10 */
  cr_expect_eq(ref_f16_from_ld(mid + 0x1p-62L), 0x3C01);
  cr_expect_eq(ref_f16_from_ld(mid - 0x1p-62L), 0x3C00);
  cr_expect_eq(ref_f16_from_ld(mid), 0x3C00);
  long double bmid = 1.0L + 0x1p-8L;
  cr_expect_eq(ref_bf16_from_ld(bmid + 0x1p-62L), 0x3F81);
  cr_expect_eq(ref_bf16_from_ld(bmid - 0x1p-62L), 0x3F80);
  for (uint64_t i = 0; i < 100000; i++) { /* both paths agree on doubles */
    uint64_t r = ref_rand(11, i);
    double x = ldexp((double)(r >> 11) / 9007199254740992.0, (int)(r % 60) - 40);
    if (r & 1) x = -x;
    cr_assert_eq(ref_f16_from_ld(x), ref_f16_from_ld_slow(x), "%.17g", x);
    cr_assert_eq(ref_bf16_from_ld(x), ref_bf16_from_ld_slow(x), "%.17g", x);
  }
}

#if defined(__FLT16_MANT_DIG__)
/* Cross-check against the compiler's own (libgcc) double -> _Float16 conversion. */
Test(reference, f16_matches_compiler) {
  int bad = 0;
  for (uint64_t i = 0; i < 400000 && bad < 10; i++) {
    uint64_t r = ref_rand(7, i);
    double x;
    if (i % 2) {
      x = ldexp((double)(r >> 11) / 9007199254740992.0 + 0.5, (int)(r % 44) - 30);
      if (r & 1) x = -x;
    } else {
      uint64_t bits = r;
      memcpy(&x, &bits, 8);
      if (!isfinite(x) || fabs(x) > 1e6 || fabs(x) < 1e-9) continue;
    }
    _Float16 h = (_Float16)x;
    uint16_t hb;
    memcpy(&hb, &h, 2);
    if (hb != ref_f16_from_ld(x)) {
      cr_expect_fail("%.17g: compiler 0x%04X, reference 0x%04X", x, hb, ref_f16_from_ld(x));
      bad++;
    }
  }
  cr_assert(bad == 0);
}
#endif

/* ---- conversions, maps, accumulators --------------------------------------------------- */

static void expect_conv(ref_val v, akx_dtype to, long double want) {
  char a[128];
  ref_val r = ref_convert(v, to);
  long double got = ref_as_ld(r);
  cr_expect(got == want || (isnan(got) && isnan(want)), "%s -> %s: got %.21Lg, expected %.21Lg",
            ref_format(v, a, sizeof a), ref_name(to), got, want);
}

Test(reference, conversions) {
  ref_val d = ref_real(AKX_FLOAT64, 1e10L);
  expect_conv(d, AKX_INT32, 2147483647.0L);
  expect_conv(ref_real(AKX_FLOAT64, -1e10L), AKX_INT32, -2147483648.0L);
  expect_conv(ref_real(AKX_FLOAT64, -1e30L), AKX_INT64, -9223372036854775808.0L);
  expect_conv(ref_real(AKX_FLOAT64, 1e30L), AKX_UINT64, 18446744073709551615.0L);
  expect_conv(ref_real(AKX_FLOAT64, -3.7L), AKX_UINT8, 0);
  expect_conv(ref_real(AKX_FLOAT64, 300.9L), AKX_UINT8, 255);
  expect_conv(ref_real(AKX_FLOAT64, -3.7L), AKX_INT8, -3);
  expect_conv(ref_real(AKX_FLOAT64, -200.0L), AKX_INT8, -128);
  expect_conv(ref_nan(AKX_FLOAT32), AKX_INT16, 0);
  expect_conv(ref_real(AKX_FLOAT32, INFINITY), AKX_INT16, 32767);
  expect_conv(ref_int(AKX_INT64, 300), AKX_INT8, 44);
  expect_conv(ref_int(AKX_INT64, -1), AKX_UINT16, 65535);
  expect_conv(ref_uint(AKX_UINT64, UINT64_MAX), AKX_INT32, -1);
  expect_conv(ref_cplx(AKX_COMPLEX64, 3.5L, 2), AKX_FLOAT32, 3.5L);
  expect_conv(ref_cplx(AKX_COMPLEX64, 3.5L, 2), AKX_INT8, 3);
  expect_conv(ref_cplx(AKX_COMPLEX64, 0, 2), AKX_BOOL, 1);
  expect_conv(ref_cplx(AKX_COMPLEX64, 0, -0.0L), AKX_BOOL, 0);
  expect_conv(ref_real(AKX_FLOAT32, -0.0L), AKX_BOOL, 0);
  expect_conv(ref_nan(AKX_FLOAT32), AKX_BOOL, 1);
  expect_conv(ref_int(AKX_INT64, 256), AKX_BOOL, 1);
  expect_conv(ref_int(AKX_INT64, 65519), AKX_FLOAT16, 65504);
  expect_conv(ref_int(AKX_INT64, 65520), AKX_FLOAT16, INFINITY);
  expect_conv(ref_int(AKX_INT64, 2049), AKX_FLOAT16, 2048);
  expect_conv(ref_int(AKX_INT64, (INT64_C(1) << 53) + 1), AKX_FLOAT64, ldexpl(1, 53));
  expect_conv(ref_int(AKX_INT64, (INT64_C(1) << 24) + 3), AKX_FLOAT32, (1 << 24) + 4);
  expect_conv(ref_int(AKX_INT64, (INT64_C(1) << 60) + (INT64_C(1) << 36) + 1), AKX_FLOAT32,
              ldexpl(1, 60) + ldexpl(1, 37)); /* once, not via double */
  expect_conv(ref_uint(AKX_BOOL, 1), AKX_FLOAT16, 1);
  ref_val c = ref_convert(ref_real(AKX_FLOAT32, 2.5L), AKX_COMPLEX128);
  cr_expect(c.re == 2.5L && c.im == 0);
  ref_val f = ref_convert(ref_real(AKX_FLOAT64, 1.0L + ldexpl(1, -11)), AKX_FLOAT16);
  cr_expect(f.re == 1.0L, "1 + 2^-11 -> float16 ties to even: %.21Lg", f.re);
}

Test(reference, maps) {
  int inx = 0;
  cr_expect(ref_as_ld(ref_map(ref_int(AKX_INT8, -128), AKX_MAP_ABS, AKX_INT64, &inx)) == 128);
  cr_expect(ref_as_ld(ref_map(ref_int(AKX_INT8, -128), AKX_MAP_ABS, AKX_INT8, &inx)) == -128);
  cr_expect(ref_as_ld(ref_map(ref_int(AKX_INT8, 16), AKX_MAP_SQUARE, AKX_INT8, &inx)) == 0);
  cr_expect(ref_as_ld(ref_map(ref_int(AKX_INT8, -16), AKX_MAP_SQUARE, AKX_INT64, &inx)) == 256);
  cr_expect(ref_as_ld(ref_map(ref_uint(AKX_UINT8, 200), AKX_MAP_SQUARE, AKX_UINT64, &inx)) ==
            40000);
  cr_expect(ref_as_ld(ref_map(ref_int(AKX_INT32, -7), AKX_MAP_ABS, AKX_FLOAT64, &inx)) == 7);
  cr_expect(inx == 0);
  ref_val z = ref_map(ref_cplx(AKX_COMPLEX64, 3, 4), AKX_MAP_ABS, AKX_FLOAT32, &inx);
  cr_expect(z.t == AKX_FLOAT32 && z.re == 5 && inx == 1);
  z = ref_map(ref_cplx(AKX_COMPLEX64, 3, 4), AKX_MAP_SQUARE, AKX_FLOAT64, &inx);
  cr_expect(z.re == 25);
  inx = 0;
  z = ref_map(ref_cplx(AKX_COMPLEX128, 0, -3), AKX_MAP_ABS, AKX_FLOAT64, &inx);
  cr_expect(z.re == 3 && inx == 0);
  cr_expect(ref_map(ref_real(AKX_FLOAT32, -0.0L), AKX_MAP_NONZERO, AKX_INT64, &inx).i == 0);
  cr_expect(ref_map(ref_nan(AKX_FLOAT32), AKX_MAP_NONZERO, AKX_INT64, &inx).i == 1);
  cr_expect(ref_map(ref_cplx(AKX_COMPLEX64, 0, 1), AKX_MAP_NONZERO, AKX_BOOL, &inx).i == 1);
  cr_expect(ref_map(ref_cplx(AKX_COMPLEX64, -0.0L, 0), AKX_MAP_NONZERO, AKX_BOOL, &inx).i == 0);
  cr_expect(ref_map(ref_real(AKX_FLOAT16, 2), AKX_MAP_NONZERO, AKX_FLOAT64, &inx).re == 1);
  cr_expect(isnan(ref_map(ref_nan(AKX_FLOAT16), AKX_MAP_ABS, AKX_FLOAT32, &inx).re));
  z = ref_map(ref_real(AKX_FLOAT32, 1.0L + ldexpl(1, -20)), AKX_MAP_SQUARE, AKX_FLOAT32, &inx);
  cr_expect(z.re == 1.0L + ldexpl(1, -19), "square rounds once in float32");
}

Test(reference, accumulator_rules) {
  cr_expect(ref_resolve_acc(AKX_INT8, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_DTYPE_AUTO) == AKX_INT64);
  cr_expect(ref_resolve_acc(AKX_UINT16, AKX_MAP_IDENTITY, AKX_OP_MUL, AKX_DTYPE_AUTO) ==
            AKX_UINT64);
  cr_expect(ref_resolve_acc(AKX_INT8, AKX_MAP_IDENTITY, AKX_OP_MAX, AKX_DTYPE_AUTO) == AKX_INT8);
  cr_expect(ref_resolve_acc(AKX_FLOAT16, AKX_MAP_IDENTITY, AKX_OP_MAX, AKX_DTYPE_AUTO) ==
            AKX_FLOAT32);
  cr_expect(ref_resolve_acc(AKX_BFLOAT16, AKX_MAP_SQUARE, AKX_OP_ADD, AKX_DTYPE_AUTO) ==
            AKX_FLOAT32);
  cr_expect(ref_resolve_acc(AKX_BOOL, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_DTYPE_AUTO) == AKX_INT64);
  cr_expect(ref_resolve_acc(AKX_BOOL, AKX_MAP_IDENTITY, AKX_OP_AND, AKX_DTYPE_AUTO) == AKX_BOOL);
  cr_expect(ref_resolve_acc(AKX_FLOAT32, AKX_MAP_NONZERO, AKX_OP_ADD, AKX_DTYPE_AUTO) ==
            AKX_INT64);
  cr_expect(ref_resolve_acc(AKX_FLOAT32, AKX_MAP_NONZERO, AKX_OP_OR, AKX_DTYPE_AUTO) == AKX_BOOL);
  cr_expect(ref_resolve_acc(AKX_FLOAT32, AKX_MAP_IDENTITY, AKX_OP_AND, AKX_DTYPE_AUTO) ==
            REF_UNSUPPORTED);
  cr_expect(ref_resolve_acc(AKX_COMPLEX64, AKX_MAP_IDENTITY, AKX_OP_MIN, AKX_DTYPE_AUTO) ==
            REF_UNSUPPORTED);
  cr_expect(ref_resolve_acc(AKX_COMPLEX64, AKX_MAP_ABS, AKX_OP_MIN, AKX_DTYPE_AUTO) ==
            AKX_FLOAT32);
  cr_expect(ref_resolve_acc(AKX_COMPLEX64, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_COMPLEX128) ==
            AKX_COMPLEX128);
  cr_expect(ref_resolve_acc(AKX_COMPLEX64, AKX_MAP_SQUARE, AKX_OP_ADD, AKX_COMPLEX128) ==
            REF_UNSUPPORTED);
  cr_expect(ref_resolve_acc(AKX_FLOAT32, AKX_MAP_NONZERO, AKX_OP_ADD, AKX_BOOL) ==
            REF_UNSUPPORTED);
  cr_expect(ref_resolve_acc(AKX_INT8, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_UINT64) ==
            REF_UNSUPPORTED);
  cr_expect(ref_resolve_acc(AKX_INT32, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_FLOAT32) ==
            REF_UNSUPPORTED);
  cr_expect(ref_resolve_acc(AKX_INT8, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_INT8) == AKX_INT8);
  cr_expect(ref_resolve_acc(AKX_INT8, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_FLOAT64) == AKX_FLOAT64);
  cr_expect(ref_resolve_acc(AKX_FLOAT16, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_FLOAT16) ==
            AKX_FLOAT16);
  cr_expect(ref_resolve_acc(AKX_FLOAT32, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_FLOAT64) ==
            AKX_FLOAT64);
  cr_expect(ref_resolve_acc(AKX_FLOAT64, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_FLOAT32) ==
            AKX_FLOAT32);
  cr_expect(ref_resolve_acc(AKX_UINT8, AKX_MAP_NONZERO, AKX_OP_AND, AKX_INT64) == AKX_INT64);
  cr_expect(ref_resolve_acc(AKX_FLOAT32, AKX_MAP_IDENTITY, AKX_OP_MIN, AKX_INT64) ==
            REF_UNSUPPORTED);
}

static ref_expect reduce_list(akx_dtype t, const long double *x, int n, akx_map m, akx_op op,
                              akx_dtype acc) {
  unsigned char buf[64 * 16];
  for (int i = 0; i < n; i++) ref_store_at(buf, i, ref_real(t, x[i]));
  akx_array v = ref_vector(buf, t, n);
  return ref_mapreduce(&v, m, op, acc, NULL, NULL);
}

Test(reference, reductions) {
  long double a[] = {100, 100, 100};
  ref_expect e = reduce_list(AKX_INT8, a, 3, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_INT64);
  cr_expect(e.lo[0] == 300 && e.hi[0] == 300);
  e = reduce_list(AKX_INT8, a, 3, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_INT8);
  cr_expect(e.lo[0] == 44, "int8 ADD wraps: %.0Lf", e.lo[0]);
  long double b[] = {1, NAN, 3};
  e = reduce_list(AKX_FLOAT32, b, 3, AKX_MAP_IDENTITY, AKX_OP_MAX, AKX_FLOAT32);
  cr_expect(e.nan[0]);
  long double c[] = {1, ldexpl(1, -30), -1};
  e = reduce_list(AKX_FLOAT32, c, 3, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_FLOAT32);
  cr_expect(e.lo[0] < 0 && e.hi[0] > ldexpl(1, -30), "a sum that rounds gets a tolerance");
  long double d[] = {1.5, -0.25, 2};
  e = reduce_list(AKX_FLOAT32, d, 3, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_FLOAT32);
  cr_expect(e.lo[0] == 3.25L && e.hi[0] == 3.25L, "an exact sum is exact");
  e = reduce_list(AKX_FLOAT32, d, 3, AKX_MAP_IDENTITY, AKX_OP_MUL, AKX_FLOAT32);
  cr_expect(e.lo[0] == -0.75L && e.hi[0] == -0.75L, "an exact product is exact");
  long double f[] = {-5, 3, 0};
  e = reduce_list(AKX_INT16, f, 3, AKX_MAP_IDENTITY, AKX_OP_MIN, AKX_INT16);
  cr_expect(e.lo[0] == -5);
  e = reduce_list(AKX_INT16, f, 3, AKX_MAP_ABS, AKX_OP_MAX, AKX_INT16);
  cr_expect(e.lo[0] == 5);
  e = reduce_list(AKX_INT16, f, 3, AKX_MAP_NONZERO, AKX_OP_ADD, AKX_INT64);
  cr_expect(e.lo[0] == 2);
  e = reduce_list(AKX_INT16, f, 3, AKX_MAP_NONZERO, AKX_OP_AND, AKX_BOOL);
  cr_expect(e.lo[0] == 0);
  long double g[] = {1, 2, 3};
  e = reduce_list(AKX_UINT8, g, 3, AKX_MAP_IDENTITY, AKX_OP_XOR, AKX_UINT8);
  cr_expect(e.lo[0] == 0);
  e = reduce_list(AKX_UINT8, g, 0, AKX_MAP_IDENTITY, AKX_OP_AND, AKX_UINT8);
  cr_expect(e.lo[0] == 255, "AND neutral is all ones");
  e = reduce_list(AKX_INT8, g, 0, AKX_MAP_IDENTITY, AKX_OP_MIN, AKX_INT8);
  cr_expect(e.lo[0] == 127);
  /* check: interval and NaN, -0 == +0, bool bytes */
  float got = -0.0f;
  ref_expect z = ref_expect_exact(ref_real(AKX_FLOAT32, 0));
  char msg[256];
  cr_expect(ref_check(&got, &z, msg, sizeof msg), "-0 equals +0");
  got = NAN;
  cr_expect(!ref_check(&got, &z, msg, sizeof msg), "NaN is not 0");
  ref_expect nn = ref_expect_exact(ref_nan(AKX_FLOAT32));
  cr_expect(ref_check(&got, &nn, msg, sizeof msg), "NaN equals NaN");
  unsigned char bb = 2;
  ref_expect bt = ref_expect_exact(ref_uint(AKX_BOOL, 1));
  cr_expect(!ref_check(&bb, &bt, msg, sizeof msg), "a bool must be stored as 0 or 1");
  /* conversion of an interval to a destination */
  ref_expect w = ref_expect_exact(ref_real(AKX_FLOAT32, 70000));
  ref_expect h = ref_expect_convert(&w, AKX_FLOAT16);
  cr_expect(h.lo[0] == INFINITY && h.hi[0] == INFINITY);
  ref_expect i8 = ref_expect_convert(&w, AKX_INT8);
  cr_expect(i8.lo[0] == 127);
  ref_expect wi = ref_expect_exact(ref_int(AKX_INT64, 300));
  ref_expect wu = ref_expect_convert(&wi, AKX_UINT8);
  cr_expect(wu.lo[0] == 44 && wu.hi[0] == 44);
}

/* ---- generators -------------------------------------------------------------------------- */

Test(reference, generators_deterministic_nonuniform_exact) {
  static const akx_op ops[] = {AKX_OP_ADD, AKX_OP_MUL, AKX_OP_MIN, AKX_OP_MAX,
                               AKX_OP_AND, AKX_OP_OR,  AKX_OP_XOR};
  static unsigned char a[4096 * 16], b[4096 * 16];
  for (int t = 0; t < 15; t++)
    for (int o = 0; o < 7; o++)
      for (int m = 0; m < 4; m++) {
        akx_dtype acc = ref_resolve_acc((akx_dtype)t, (akx_map)m, ops[o], AKX_DTYPE_AUTO);
        if ((int)acc == (int)REF_UNSUPPORTED) continue;
        const int64_t n = 4096;
        ref_fill(a, (akx_dtype)t, n, (akx_map)m, ops[o], acc, n, 42, 0);
        ref_fill(b, (akx_dtype)t, n, (akx_map)m, ops[o], acc, n, 42, 0);
        size_t bytes = (size_t)n * ref_size((akx_dtype)t);
        cr_expect(memcmp(a, b, bytes) == 0, "deterministic");
        size_t es = ref_size((akx_dtype)t);
        int distinct = 0;
        for (int64_t i = 1; i < n && !distinct; i++)
          distinct = memcmp(a, a + i * (int64_t)es, es) != 0;
        /* bool data for AND / OR may be all true / all false: that is the point of it */
        if (t == AKX_BOOL || (m == AKX_MAP_NONZERO && ref_is_int((akx_dtype)t))) distinct = 1;
        cr_expect(distinct, "%s %s %s: all elements equal", ref_name((akx_dtype)t),
                  ref_op_name(ops[o]), ref_map_name((akx_map)m));
        /* sums and products of the default data are exact for real float accumulators */
        if ((ops[o] == AKX_OP_ADD || ops[o] == AKX_OP_MUL) && ref_is_float(acc) &&
            !ref_is_complex((akx_dtype)t) && m != AKX_MAP_NONZERO) {
          akx_array v = ref_vector(a, (akx_dtype)t, n);
          ref_expect e = ref_mapreduce(&v, (akx_map)m, ops[o], acc, NULL, NULL);
          cr_expect(e.lo[0] == e.hi[0], "%s %s %s: reference not exact [%.21Lg, %.21Lg]",
                    ref_name((akx_dtype)t), ref_op_name(ops[o]), ref_map_name((akx_map)m),
                    e.lo[0], e.hi[0]);
        }
      }
  /* a big float32 sum stays exact */
  static float big[1000000];
  ref_fill(big, AKX_FLOAT32, 1000000, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_FLOAT32, 1000000, 3, 0);
  akx_array v = ref_vector(big, AKX_FLOAT32, 1000000);
  ref_expect e = ref_mapreduce(&v, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_FLOAT32, NULL, NULL);
  cr_expect(e.lo[0] == e.hi[0], "10^6 float32: [%.21Lg, %.21Lg]", e.lo[0], e.hi[0]);
  /* rough data gets a tolerance */
  ref_fill(big, AKX_FLOAT32, 1000, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_FLOAT32, 1000, 3,
           REF_FILL_ROUGH);
  v = ref_vector(big, AKX_FLOAT32, 1000);
  e = ref_mapreduce(&v, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_FLOAT32, NULL, NULL);
  cr_expect(e.lo[0] < e.hi[0]);
}
