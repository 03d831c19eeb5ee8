/* Signed zeros of float and complex ADD. IEEE 754's additive identity is -0.0 (-0.0 + x == x
 * for every x, while +0.0 + -0.0 == +0.0), so running values start from -0.0: a scan equals
 * numpy's cumsum bit for bit, signed zeros included, and a non-empty sum is the fold of its
 * elements and init (Julia: sum([-0.0]) === -0.0). A sum of nothing, without init or a
 * previous value, is +0.0 (numpy and Julia), as is the empty prefix an exclusive scan starts
 * with.
 * The data are small integers and signed zeros, each aligned run of 8 summing to zero: every
 * partial sum is a small integer, exact in every float type (bfloat16 included), so the result
 * is the same in any association order and the host reference is a plain sequential fold.
 * A complex element holds the value in both parts. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "fixture.h"

static akx_context *ctx;
static void setup(void) { ctx = tfx_open(); }
static void teardown(void) { tfx_close(ctx); }
TestSuite(signed_zeros, .init = setup, .fini = teardown);

/* values: 0 = -0.0, 1 = +0.0, else a small integer */
static double value_of(uint64_t k) {
  switch (k % 8) {
    case 0: case 1: case 2: return -0.0;
    case 3: return 0.0;
    case 4: return 1.0;
    case 5: return -1.0;
    case 6: return 2.0;
    default: return -2.0;
  }
}

static const akx_dtype float_types[] = {AKX_FLOAT16, AKX_BFLOAT16, AKX_FLOAT32, AKX_FLOAT64,
                                        AKX_COMPLEX64, AKX_COMPLEX128};
#define NFT (sizeof float_types / sizeof float_types[0])

/* one element of dtype t holding x (both parts of a complex) */
static void put(void *base, akx_dtype t, int64_t i, double x) {
  const size_t sz = akx_dtype_size(t);
  unsigned char *p = (unsigned char *)base + (size_t)i * sz;
  switch (t) {
    case AKX_FLOAT16: { uint16_t h = ref_f16_from_ld((long double)x); memcpy(p, &h, 2); break; }
    case AKX_BFLOAT16: { float f = (float)x; uint32_t w; memcpy(&w, &f, 4); uint16_t b = (uint16_t)(w >> 16); memcpy(p, &b, 2); break; }
    case AKX_FLOAT32: { float f = (float)x; memcpy(p, &f, 4); break; }
    case AKX_FLOAT64: memcpy(p, &x, 8); break;
    case AKX_COMPLEX64: { float f[2] = {(float)x, (float)x}; memcpy(p, f, 8); break; }
    case AKX_COMPLEX128: { double d[2] = {x, x}; memcpy(p, d, 16); break; }
    default: cr_assert_fail("not a float dtype");
  }
}

/* A sequential cumsum in double of the values, stored in t (exact for these values). */
static void host_cumsum(void *out, akx_dtype t, const double *x, int64_t n, int has_init, double init,
                        int exclusive) {
  /* +0.0 + -0.0 == +0.0 in double as in every float type: the host folds the same way */
  double re = has_init ? init : -0.0, im = re;
  for (int64_t i = 0; i < n; ++i) {
    if (exclusive) {
      if (i == 0 && !has_init) put(out, t, 0, 0.0); /* the empty prefix: +0.0 (both parts) */
      else if (t == AKX_COMPLEX64 || t == AKX_COMPLEX128) {
        double d[2] = {re, im};
        if (t == AKX_COMPLEX128) memcpy((char *)out + i * 16, d, 16);
        else { float f[2] = {(float)re, (float)im}; memcpy((char *)out + i * 8, f, 8); }
      } else put(out, t, i, re);
    }
    re += x[i];
    im += x[i];
    if (!exclusive) {
      if (t == AKX_COMPLEX64 || t == AKX_COMPLEX128) {
        double d[2] = {re, im};
        if (t == AKX_COMPLEX128) memcpy((char *)out + i * 16, d, 16);
        else { float f[2] = {(float)re, (float)im}; memcpy((char *)out + i * 8, f, 8); }
      } else put(out, t, i, re);
    }
  }
}

/* Scans src (rows x cols, C order) along dim (0 or 1; -1: the whole array) and compares bits. */
static void check_scan(akx_dtype t, int64_t rows, int64_t cols, int32_t dim, int pattern,
                       int has_init, double init, int exclusive) {
  const int64_t n = rows * cols;
  const size_t sz = akx_dtype_size(t);
  double *x = tfx_xmalloc((size_t)n * sizeof(double));
  for (int64_t i = 0; i < n; ++i) x[i] = pattern == 0 ? -0.0 : value_of((uint64_t)(i * 3 + (i / 8) * 5));
  unsigned char *h = tfx_xmalloc((size_t)n * sz), *want = tfx_xmalloc((size_t)n * sz), *got = tfx_xmalloc((size_t)n * sz);
  for (int64_t i = 0; i < n; ++i) put(h, t, i, x[i]);
  /* reference per scanned sequence */
  if (dim == 1 || dim < 0) {
    const int64_t len = dim < 0 ? n : cols, seqs = dim < 0 ? 1 : rows;
    for (int64_t r = 0; r < seqs; ++r)
      host_cumsum(want + (size_t)(r * len) * sz, t, x + r * len, len, has_init, init, exclusive);
  } else {
    double *col = tfx_xmalloc((size_t)rows * sizeof(double));
    unsigned char *cw = tfx_xmalloc((size_t)rows * sz);
    for (int64_t c = 0; c < cols; ++c) {
      for (int64_t r = 0; r < rows; ++r) col[r] = x[r * cols + c];
      host_cumsum(cw, t, col, rows, has_init, init, exclusive);
      for (int64_t r = 0; r < rows; ++r) memcpy(want + (size_t)(r * cols + c) * sz, cw + (size_t)r * sz, sz);
    }
    free(col);
    free(cw);
  }
  void *src = tfx_upload(ctx, h, (size_t)n * sz), *dst = tfx_alloc(ctx, (size_t)n * sz);
  const int64_t shape[2] = {rows, cols};
  const akx_array s = akx_array_c(src, t, 2, shape), d = akx_array_c(dst, t, 2, shape);
  akx_scan_opts o = akx_scan_opts_default();
  o.acc = t;
  o.exclusive = exclusive;
  unsigned char init_bytes[16];
  if (has_init) {
    put(init_bytes, t, 0, init);
    o.init = init_bytes;
  }
  cr_assert_eq(akx_scan(ctx, &d, &s, AKX_OP_ADD, dim, &o), AKX_SUCCESS, "%s", akx_last_error());
  tfx_to_host(ctx, got, dst, (size_t)n * sz);
  for (int64_t i = 0; i < n; ++i)
    cr_assert(memcmp(got + (size_t)i * sz, want + (size_t)i * sz, sz) == 0,
              "%s %lldx%lld dim %d pattern %d init %d excl %d: element %lld differs (bits)",
              akx_dtype_name(t), (long long)rows, (long long)cols, (int)dim, pattern, has_init,
              exclusive, (long long)i);
  tfx_free(ctx, dst);
  tfx_free(ctx, src);
  free(x);
  free(h);
  free(want);
  free(got);
}

Test(signed_zeros, one_element_scan_keeps_minus_zero) {
  for (size_t k = 0; k < NFT; ++k) {
    check_scan(float_types[k], 1, 1, -1, 0, 0, 0, 0);
    check_scan(float_types[k], 1, 1, -1, 0, 1, -0.0, 0); /* init -0.0 is not ignored */
    check_scan(float_types[k], 1, 1, -1, 0, 1, -0.0, 1);
  }
}

/* Tile starts: every tile's first output combines the look-back's prefix (the identity for
 * tile 0) with its first element. */
Test(signed_zeros, tile_starts_along_dims) {
  for (size_t k = 0; k < NFT; ++k)
    for (int pattern = 0; pattern < 2; ++pattern) {
      check_scan(float_types[k], 5, 300, 1, pattern, 0, 0, 0);
      check_scan(float_types[k], 300, 5, 0, pattern, 0, 0, 0);
      check_scan(float_types[k], 1, 5000, -1, pattern, 0, 0, 0);
      check_scan(float_types[k], 5, 300, 1, pattern, 0, 0, 1);
      check_scan(float_types[k], 1, 3000, -1, pattern, 1, -0.0, 1);
    }
}

static void check_sum(akx_dtype t, int64_t n, int has_init, double init, double want_re) {
  const size_t sz = akx_dtype_size(t);
  unsigned char h[64 * 16];
  for (int64_t i = 0; i < n; ++i) put(h, t, i, -0.0);
  void *src = tfx_upload(ctx, h, (size_t)(n > 0 ? n : 1) * sz);
  const akx_array s = akx_vector(src, t, n);
  akx_reduce_opts o = akx_reduce_opts_default();
  o.acc = t;
  unsigned char init_bytes[16], want[16], got[16];
  if (has_init) {
    put(init_bytes, t, 0, init);
    o.init = init_bytes;
  }
  put(want, t, 0, want_re);
  if (t == AKX_COMPLEX64 || t == AKX_COMPLEX128) { /* both parts are -0.0 or +0.0 together here */
    if (t == AKX_COMPLEX64) { float f[2] = {(float)want_re, (float)want_re}; memcpy(want, f, 8); }
    else { double d[2] = {want_re, want_re}; memcpy(want, d, 16); }
  }
  cr_assert_eq(akx_mapreduce(ctx, &s, AKX_MAP_IDENTITY, AKX_OP_ADD, &o, got, AKX_HOST), AKX_SUCCESS, "%s",
               akx_last_error());
  cr_assert(memcmp(got, want, sz) == 0, "%s n %lld init %d: host result's bits", akx_dtype_name(t),
            (long long)n, has_init);
  void *dres = tfx_alloc(ctx, 32); /* one result, or two outputs along dims */
  cr_assert_eq(akx_mapreduce(ctx, &s, AKX_MAP_IDENTITY, AKX_OP_ADD, &o, dres, AKX_DEVICE), AKX_SUCCESS, "%s",
               akx_last_error());
  tfx_to_host(ctx, got, dres, sz);
  cr_assert(memcmp(got, want, sz) == 0, "%s n %lld init %d: device result's bits", akx_dtype_name(t),
            (long long)n, has_init);
  /* along dims: a 1 x n source into one output per row, and n x 1 reduced along dim 0 */
  if (n > 0) {
    const int64_t shape[2] = {2, n}, dshape[2] = {2, 1};
    unsigned char h2[2 * 64 * 16];
    for (int64_t i = 0; i < 2 * n; ++i) put(h2, t, i, -0.0);
    void *src2 = tfx_upload(ctx, h2, (size_t)(2 * n) * sz);
    const akx_array s2 = akx_array_c(src2, t, 2, shape), d2 = akx_array_c(dres, t, 2, dshape);
    cr_assert_eq(akx_reduce_dims(ctx, &d2, &s2, AKX_MAP_IDENTITY, AKX_OP_ADD, &o), AKX_SUCCESS, "%s",
                 akx_last_error());
    unsigned char got2[32];
    tfx_to_host(ctx, got2, dres, 2 * sz);
    cr_assert(memcmp(got2, want, sz) == 0 && memcmp(got2 + sz, want, sz) == 0, "%s n %lld: dims' bits",
              akx_dtype_name(t), (long long)n);
    tfx_free(ctx, src2);
  }
  tfx_free(ctx, dres);
  tfx_free(ctx, src);
}

Test(signed_zeros, sums) {
  for (size_t k = 0; k < NFT; ++k) {
    check_sum(float_types[k], 1, 0, 0, -0.0);    /* sum([-0.0]) === -0.0 */
    check_sum(float_types[k], 64, 0, 0, -0.0);
    check_sum(float_types[k], 0, 0, 0, 0.0);     /* an empty sum is +0.0 */
    check_sum(float_types[k], 0, 1, -0.0, -0.0); /* ... but init -0.0 is kept */
    check_sum(float_types[k], 3, 1, 0.0, 0.0);   /* +0.0 + -0.0 == +0.0 */
  }
}

/* An empty reduction folded into a previous -0.0 keeps it. */
Test(signed_zeros, fold_into_minus_zero) {
  for (size_t k = 0; k < NFT; ++k) {
    const akx_dtype t = float_types[k];
    const size_t sz = akx_dtype_size(t);
    unsigned char prev[16], got[16];
    put(prev, t, 0, -0.0);
    if (t == AKX_COMPLEX64) { float f[2] = {-0.0f, -0.0f}; memcpy(prev, f, 8); }
    if (t == AKX_COMPLEX128) { double d[2] = {-0.0, -0.0}; memcpy(prev, d, 16); }
    void *dres = tfx_upload(ctx, prev, sz);
    const akx_array s = akx_vector(dres, t, 0);
    akx_reduce_opts o = akx_reduce_opts_default();
    o.acc = t;
    o.fold = 1;
    cr_assert_eq(akx_mapreduce(ctx, &s, AKX_MAP_IDENTITY, AKX_OP_ADD, &o, dres, AKX_DEVICE), AKX_SUCCESS, "%s",
                 akx_last_error());
    tfx_to_host(ctx, got, dres, sz);
    cr_assert(memcmp(got, prev, sz) == 0, "%s: fold of an empty sum into -0.0", akx_dtype_name(t));
    tfx_free(ctx, dres);
  }
}
