/* Complex ABS (|z|, the map of akx_mapreduce / akx_reduce_dims) gives the same bits on every
 * backend: kernels/akx/hypot.cuh's formula, built from correctly rounded +, -, *, / and sqrt, no
 * fused multiply-add. Checked element by element (a reduce_dims that keeps every dim: one
 * output per source element) against
 *  - an independent transcription of the same formula here, bit for bit;
 *  - long double hypotl, within 1 ulp of the result's precision;
 * for complex64 into float32 and float64 accumulators and complex128 into float64, over zeros,
 * signed zeros, subnormals, the largest finite values, infinities, NaNs, huge ratios, and
 * inputs where CUDA's hypot or glibc's gives other last bits (found by a search of random
 * inputs: glibc's hypot and hypotf round differently there). */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akx.h"
#include "fixture.h"

/* ---- the formula, transcribed from kernels/akx/hypot.cuh's steps (no code shared) ------------ */
static float sq_err_f(float a, float sq) {
  const float c = 4097.0f * a, hi = c - (c - a), lo = a - hi;
  return ((hi * hi - sq) + 2 * hi * lo) + lo * lo;
}
static float formula_f(float x, float y) {
  x = fabsf(x);
  y = fabsf(y);
  if (isinf(x) || isinf(y)) return INFINITY;
  if (isnan(x) || isnan(y)) return x + y;
  if (x < y) { const float t = x; x = y; y = t; }
  if (y == 0 || y < x * 0x1p-13f) return x;
  float back = 1;
  if (x > 0x1p40f) { x *= 0x1p-80f; y *= 0x1p-80f; back = 0x1p80f; }
  else if (x < 0x1p-40f) { x *= 0x1p100f; y *= 0x1p100f; back = 0x1p-100f; }
  const float xx = x * x, yy = y * y, t = xx + yy, te = yy - (t - xx);
  float h = sqrtf(t);
  const float hh = h * h;
  h = h + ((t - hh) + (te + ((sq_err_f(x, xx) + sq_err_f(y, yy)) - sq_err_f(h, hh)))) / (2 * h);
  return h * back;
}
static double sq_err_d(double a, double sq) {
  const double c = 134217729.0 * a, hi = c - (c - a), lo = a - hi;
  return ((hi * hi - sq) + 2 * hi * lo) + lo * lo;
}
static double formula_d(double x, double y) {
  x = fabs(x);
  y = fabs(y);
  if (isinf(x) || isinf(y)) return INFINITY;
  if (isnan(x) || isnan(y)) return x + y;
  if (x < y) { const double t = x; x = y; y = t; }
  if (y == 0 || y < x * 0x1p-27) return x;
  double back = 1;
  if (x > 0x1p300) { x *= 0x1p-600; y *= 0x1p-600; back = 0x1p600; }
  else if (x < 0x1p-300) { x *= 0x1p600; y *= 0x1p600; back = 0x1p-600; }
  const double xx = x * x, yy = y * y, t = xx + yy, te = yy - (t - xx);
  double h = sqrt(t);
  const double hh = h * h;
  h = h + ((t - hh) + (te + ((sq_err_d(x, xx) + sq_err_d(y, yy)) - sq_err_d(h, hh)))) / (2 * h);
  return h * back;
}

/* |got - hypotl(x, y)| in ulps of the result's format (mant: its significand bits). */
static long double ulps(long double got, long double x, long double y, int mant, long double tiny) {
  const long double e = hypotl(x, y);
  if (isnan(e) || isnan(got)) return isnan(e) && isnan(got) ? 0 : INFINITY;
  if (isinf(got)) return isinf(e) || e > (mant == 24 ? FLT_MAX : DBL_MAX) ? 0 : INFINITY;
  int ex;
  frexpl(e, &ex);
  long double ulp = ldexpl(1.0L, ex - mant);
  if (ulp < tiny) ulp = tiny;
  return fabsl(got - e) / ulp;
}

/* ---- inputs ---------------------------------------------------------------------------------- */
enum { N_RANDOM = 6000 };
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next_u64(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static const double specials[] = {0.0, -0.0, 1.0, -1.0, 3.0, 4.0, INFINITY, -INFINITY, NAN,
                                  DBL_MIN, DBL_MAX, 4.9406564584124654e-324, FLT_MIN, FLT_MAX,
                                  1.401298464324817e-45, 0x1p300, 0x1p-300, 0x1p40, 0x1p-40,
                                  1e-310, 1e300, 1e-30, 1e30, 0.5, 0x1.fffffffffffffp-1};
/* (x, y) pairs where this formula's last bit differs from glibc's hypot / hypotf. */
static const double known_d[][2] = {{0x1.4efbbcebcab6dp+2, 0x1.4dd3484f06241p+2},
                                    {0x1.92600801925dep+12, 0x1.fa410eebf88eap+11},
                                    {0x1.0f120c11176d8p+8, 0x1.fbb4620fc8861p+7},
                                    {0x1.3c21957ee9d11p-1, 0x1.70685ee738cc8p-2}};
static const float known_f[][2] = {{-0x1.df9828p-128f, 0x1.0c1bacp-127f}};

/* n pairs into re/im: every special against every special, the known pairs, then random
 * bit patterns (any exponent) and random magnitudes a few binades apart. */
static size_t fill(double *re, double *im, int single) {
  size_t n = 0;
  const size_t ns = sizeof specials / sizeof specials[0];
  for (size_t i = 0; i < ns; i++)
    for (size_t j = 0; j < ns; j++) {
      re[n] = specials[i];
      im[n++] = specials[j];
    }
  if (single) {
    for (size_t i = 0; i < sizeof known_f / sizeof known_f[0]; i++) {
      re[n] = known_f[i][0];
      im[n++] = known_f[i][1];
    }
  } else {
    for (size_t i = 0; i < sizeof known_d / sizeof known_d[0]; i++) {
      re[n] = known_d[i][0];
      im[n++] = known_d[i][1];
    }
  }
  for (int k = 0; k < N_RANDOM; k++) {
    if (k % 2) {
      const uint64_t a = next_u64(), b = next_u64();
      if (single) {
        uint32_t u = (uint32_t)a, v = (uint32_t)b;
        float f, g;
        memcpy(&f, &u, 4);
        memcpy(&g, &v, 4);
        re[n] = f;
        im[n++] = g;
      } else {
        memcpy(&re[n], &a, 8);
        memcpy(&im[n++], &b, 8);
      }
    } else {
      const int range = single ? 120 : 1000;
      const int e = (int)(next_u64() % (uint64_t)(2 * range)) - range;
      const int gap = (int)(next_u64() % 30);
      re[n] = ldexp(0.5 + (double)(next_u64() >> 11) * 0x1p-54, e);
      im[n++] = ldexp(0.5 + (double)(next_u64() >> 11) * 0x1p-54, e - gap);
    }
  }
  return n;
}

/* |z| of every element of src (n complex values of `src_dtype`) into dst of `acc`, on ctx. */
static void abs_each(akx_context *ctx, akx_dtype src_dtype, const void *host_src, size_t n,
                     akx_dtype acc, void *host_dst) {
  const size_t sb = n * akx_dtype_size(src_dtype), db = n * akx_dtype_size(acc);
  void *dsrc = NULL, *ddst = NULL;
  cr_assert_eq(akx_malloc(ctx, &dsrc, sb), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(akx_malloc(ctx, &ddst, db), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(akx_memcpy(ctx, dsrc, host_src, sb, AKX_COPY_HOST_TO_DEVICE), AKX_SUCCESS, "%s",
               akx_last_error());
  const akx_array s = akx_vector(dsrc, src_dtype, (int64_t)n), d = akx_vector(ddst, acc, (int64_t)n);
  akx_reduce_opts o = akx_reduce_opts_default();
  o.acc = acc;
  cr_assert_eq(akx_reduce_dims(ctx, &d, &s, AKX_MAP_ABS, AKX_OP_MAX, &o), AKX_SUCCESS, "%s",
               akx_last_error());
  cr_assert_eq(akx_memcpy(ctx, host_dst, ddst, db, AKX_COPY_DEVICE_TO_HOST), AKX_SUCCESS, "%s",
               akx_last_error());
  akx_free(ctx, dsrc);
  akx_free(ctx, ddst);
}

enum { CAP = 25 * 25 + 16 + N_RANDOM };

static void check(akx_dtype src_dtype, akx_dtype acc) {
  static double re[CAP], im[CAP];
  const int single_src = src_dtype == AKX_COMPLEX64, single_acc = acc == AKX_FLOAT32;
  const size_t n = fill(re, im, single_src);
  cr_assert(n <= CAP);
  void *src = malloc(n * akx_dtype_size(src_dtype)), *dst = malloc(n * akx_dtype_size(acc));
  cr_assert(src && dst);
  for (size_t i = 0; i < n; i++) {
    if (single_src) {
      const float z[2] = {(float)re[i], (float)im[i]};
      memcpy((char *)src + 8 * i, z, 8);
      re[i] = z[0]; /* the values the library sees */
      im[i] = z[1];
    } else {
      const double z[2] = {re[i], im[i]};
      memcpy((char *)src + 16 * i, z, 16);
    }
  }
  akx_context *ctx = tfx_open();
  abs_each(ctx, src_dtype, src, n, acc, dst);
  tfx_close(ctx);
  size_t bits_differ = 0, over_ulp = 0;
  for (size_t i = 0; i < n; i++) {
    long double got, want;
    int same;
    if (single_acc) {
      float g;
      memcpy(&g, (char *)dst + 4 * i, 4);
      const float w = formula_f((float)re[i], (float)im[i]);
      same = memcmp(&g, &w, 4) == 0 || (isnan(g) && isnan(w));
      got = g;
      want = w;
    } else {
      double g;
      memcpy(&g, (char *)dst + 8 * i, 8);
      const double w = formula_d(re[i], im[i]);
      same = memcmp(&g, &w, 8) == 0 || (isnan(g) && isnan(w));
      got = g;
      want = w;
    }
    if (!same && bits_differ++ < 8)
      cr_log_error("|(%a, %a)| = %La, the formula gives %La", re[i], im[i], got, want);
    const long double u = single_acc ? ulps(got, re[i], im[i], 24, 1.401298464324817e-45L)
                                     : ulps(got, re[i], im[i], 53, 4.9406564584124654e-324L);
    if (!(u <= 1.0L) && over_ulp++ < 8)
      cr_log_error("|(%a, %a)| = %La is %.3Lg ulp from hypotl", re[i], im[i], got, u);
  }
  cr_expect_eq(bits_differ, 0, "%zu of %zu results differ from the formula's bits", bits_differ, n);
  cr_expect_eq(over_ulp, 0, "%zu of %zu results are more than 1 ulp from hypotl", over_ulp, n);
  free(src);
  free(dst);
}

Test(complex_abs, complex64_into_float32) { check(AKX_COMPLEX64, AKX_FLOAT32); }
Test(complex_abs, complex64_into_float64) { check(AKX_COMPLEX64, AKX_FLOAT64); }
Test(complex_abs, complex128_into_float64) { check(AKX_COMPLEX128, AKX_FLOAT64); }
