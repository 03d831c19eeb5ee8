/* User operators (akx_user_op_create), each against a host reference computed here:
 * - argmax over a {value, index} struct (ties to the lower index, the first NaN wins) by
 *   akx_mapreduce on float32 and int32 vectors, and by akx_reduce_dims along each dim of C- and
 *   Fortran-order arrays with a store that writes the index;
 * - Welford's mean and variance (Chan et al.'s merge), empty sources giving the identity, and a
 *   store that writes the variance;
 * - logsumexp ({max, scaled sum}, a store that gives m + log(s));
 * - an affine-map composition scan: non-commutative, without identity, along every dim of a
 *   strided 3-d view, with an init before the first operand;
 * - a custom map (x*x + 1) under a sum;
 * - the map's position `i` in memory order (akx_mapreduce), over the reduced dims
 *   (akx_reduce_dims) and along the scanned dim (akx_scan);
 * - a user op that is float32 ADD gives AKX_OP_ADD's bits (and, on the sim, its launches and
 *   traffic);
 * - bad input: refused with the documented status, a sentence naming the argument, and
 *   nothing written;
 * - akx_user_op_info's layout of an accumulator.
 * The sources are compiled at run time (docs/runtime_kernels.md): the suite's timeout allows
 * for a cold cache. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "akx.h"
#include "akx_sim.h"
#include "fixture.h"
#include "mem_order.h"
#include "views.h"
#include "affine_op.h"

static akx_context *ctx;
static void setup(void) { ctx = tfx_open(); }
static void teardown(void) { tfx_close(ctx); }
TestSuite(user_ops, .init = setup, .fini = teardown, .timeout = 600);

/* ---- helpers --------------------------------------------------------------------------------- */

static akx_user_op_desc desc_of(const char *source, const char *acc, const char *combine,
                                const char *identity, const char *map, const char *store) {
  akx_user_op_desc d = {source, acc, combine, identity, map, store};
  return d;
}

static akx_op create(const akx_user_op_desc *d) { return tfx_user_op(ctx, d); }

/* akx_mapreduce of a user op into host memory and into device memory: both succeed, write
 * acc_size bytes (no byte past them) and agree bit for bit (one call, one order). */
static void mapreduce_both(const akx_array *src, akx_op op, const void *init, void *result,
                           size_t acc_size) {
  enum { GUARD = 16 };
  unsigned char host[64 + GUARD], dev_back[64];
  cr_assert_leq(acc_size, 64);
  memset(host, 0xA5, sizeof host);
  akx_reduce_opts o = akx_reduce_opts_default();
  o.init = init;
  akx_status st = akx_mapreduce(ctx, src, AKX_MAP_IDENTITY, op, &o, host, AKX_HOST);
  cr_assert_eq(st, AKX_SUCCESS, "akx_mapreduce(AKX_HOST) = %s: %s", akx_status_string(st),
               akx_last_error());
  for (size_t k = acc_size; k < acc_size + GUARD; ++k)
    cr_assert_eq(host[k], 0xA5, "byte %zu past the %zu-byte accumulator was written", k, acc_size);
  void *dev = tfx_alloc(ctx, 64);
  st = akx_mapreduce(ctx, src, AKX_MAP_IDENTITY, op, &o, dev, AKX_DEVICE);
  cr_assert_eq(st, AKX_SUCCESS, "akx_mapreduce(AKX_DEVICE) = %s: %s", akx_status_string(st),
               akx_last_error());
  tfx_to_host(ctx, dev_back, dev, acc_size);
  tfx_free(ctx, dev);
  cr_assert(memcmp(host, dev_back, acc_size) == 0, "the host and device results differ");
  memcpy(result, host, acc_size);
}

/* akx_reduce_dims of a user op into a fresh C-order dst of dst_t and dst_shape; returns the
 * dst's elements (host, C order; free them). */
static void *reduce_dims_to_host(const akx_array *src, akx_op op, akx_dtype dst_t,
                                 const int64_t *dst_shape) {
  akx_array dst = tvw_dst(ctx, dst_t, src->ndim, dst_shape, 0xA5);
  const akx_status st = akx_reduce_dims(ctx, &dst, src, AKX_MAP_IDENTITY, op, NULL);
  cr_assert_eq(st, AKX_SUCCESS, "akx_reduce_dims = %s: %s", akx_status_string(st),
               akx_last_error());
  const size_t bytes = (size_t)tvw_count(&dst) * ref_size(dst_t);
  void *out = tfx_xmalloc(bytes);
  tfx_to_host(ctx, out, dst.data, bytes);
  tfx_free(ctx, dst.data);
  return out;
}

/* akx_scan of a user op along dim into a fresh C-order dst of src's shape; returns it (host). */
static void *scan_to_host(const akx_array *src, akx_op op, akx_dtype dst_t, int32_t dim,
                          const akx_scan_opts *opts) {
  akx_array dst = tvw_dst(ctx, dst_t, src->ndim, src->shape, 0xA5);
  const akx_status st = akx_scan(ctx, &dst, src, op, dim, opts);
  cr_assert_eq(st, AKX_SUCCESS, "akx_scan(dim %d) = %s: %s", dim, akx_status_string(st),
               akx_last_error());
  const size_t bytes = (size_t)tvw_count(&dst) * ref_size(dst_t);
  void *out = tfx_xmalloc(bytes);
  tfx_to_host(ctx, out, dst.data, bytes);
  tfx_free(ctx, dst.data);
  return out;
}

/* The index in dst (C order, src's shape with the reduced dims 1) of src's element idx. */
static int64_t out_linear(int32_t nd, const int64_t *dst_shape, const int64_t *idx) {
  int64_t k = 0;
  for (int32_t d = 0; d < nd; ++d) k = k * dst_shape[d] + (dst_shape[d] == 1 ? 0 : idx[d]);
  return k;
}

/* The reduced dims of a reduction into dst_shape (src's shape with 1 where reduced; a dim of
 * size 1 may count either way: its only index adds nothing to a position), and their number. */
static int32_t reduced_dims(int32_t nd, const int64_t *dst_shape, int32_t *dims) {
  int32_t n = 0;
  for (int32_t d = 0; d < nd; ++d)
    if (dst_shape[d] == 1) dims[n++] = d;
  return n;
}

static double rel_err(double got, double want) {
  if (got == want) return 0;
  return fabs(got - want) / fmax(fabs(want), 1e-300);
}


static uint64_t h(uint64_t seed, int64_t i) { return ref_rand(seed, (uint64_t)i); }

/* ---- argmax as a user op ------------------------------------------------------------------- */

static const char ARGMAX_SRC[] =
    "struct ArgMax { double value; int64_t index; };\n"
    "// index < 0: no element yet (the identity). Ties go to the lower index; a NaN wins, the\n"
    "// first NaN among NaNs (numpy's argmax).\n"
    "AKX_HD ArgMax am_combine(ArgMax a, ArgMax b) {\n"
    "  if (a.index < 0) return b;\n"
    "  if (b.index < 0) return a;\n"
    "  const bool an = a.value != a.value, bn = b.value != b.value;\n"
    "  if (an || bn) return an && bn ? (a.index < b.index ? a : b) : (an ? a : b);\n"
    "  if (a.value != b.value) return a.value > b.value ? a : b;\n"
    "  return a.index < b.index ? a : b;\n"
    "}\n"
    "AKX_HD ArgMax am_identity() { ArgMax r; r.value = 0; r.index = -1; return r; }\n"
    "template <class S> AKX_HD ArgMax am_map(S x, int64_t i) {\n"
    "  ArgMax r; r.value = (double)x; r.index = i; return r;\n"
    "}\n"
    "template <class D> AKX_HD D am_store(ArgMax a) { return (D)a.index; }\n";

typedef struct {
  double value;
  int64_t index;
} argmax_acc;

static akx_op argmax_op(void) {
  const akx_user_op_desc d =
      desc_of(ARGMAX_SRC, "ArgMax", "am_combine", "am_identity", "am_map", "am_store");
  return create(&d);
}

/* Does (v, i) beat the best so far (bv, bi; bi < 0: none)? numpy's argmax, order-free. */
static int argmax_beats(double v, int64_t i, double bv, int64_t bi) {
  if (bi < 0) return 1;
  const int n = isnan(v), bn = isnan(bv);
  if (n || bn) return n && bn ? i < bi : n;
  if (v != bv) return v > bv;
  return i < bi;
}

/* A vector with many ties below the maximum, the maximum twice (3/5 of the way and last), and
 * with `nans` two NaNs (4/5 and 9/10 of the way): the answer is never near the start. */
static void argmax_fill(void *buf, akx_dtype t, int64_t n, int nans) {
  for (int64_t k = 0; k < n; ++k) {
    const int64_t v = (int64_t)(h(7, k) % 60) - 40;
    if (t == AKX_FLOAT32) ((float *)buf)[k] = (float)v * 0.5f;
    else ((int32_t *)buf)[k] = (int32_t)v * 100;
  }
  const int64_t top[2] = {n * 3 / 5, n - 1}, nan_at[2] = {n * 4 / 5, n * 9 / 10};
  for (int j = 0; j < 2 && n > 0; ++j) {
    if (t == AKX_FLOAT32) ((float *)buf)[top[j]] = 50.0f;
    else ((int32_t *)buf)[top[j]] = 5000;
  }
  for (int j = 0; j < 2 && n > 0 && nans; ++j) ((float *)buf)[nan_at[j]] = NAN;
}

Test(user_ops, argmax_mapreduce_vectors) {
  const akx_op op = argmax_op();
  const int64_t sizes[] = {1, 31, 1000, 100003};
  const struct { akx_dtype t; int nans; } kinds[] = {
      {AKX_FLOAT32, 0}, {AKX_FLOAT32, 1}, {AKX_INT32, 0}};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k) {
      const int64_t n = sizes[s];
      const akx_dtype t = kinds[k].t;
      void *host = tfx_xmalloc((size_t)n * 4);
      argmax_fill(host, t, n, kinds[k].nans);
      double bv = 0;
      int64_t bi = -1;
      for (int64_t i = 0; i < n; ++i) {
        const double v = t == AKX_FLOAT32 ? ((float *)host)[i] : ((int32_t *)host)[i];
        if (argmax_beats(v, i, bv, bi)) bv = v, bi = i;
      }
      const tfx_layout L = tfx_layout_vector(n);
      tvw_pair p = tvw_upload(ctx, t, host, &L);
      argmax_acc got;
      mapreduce_both(&p.dev, op, NULL, &got, sizeof got);
      cr_assert_eq(got.index, bi, "%s n %lld%s: index %lld, numpy's argmax %lld", ref_name(t),
                   (long long)n, kinds[k].nans ? " with NaNs" : "", (long long)got.index,
                   (long long)bi);
      cr_assert(isnan(bv) ? isnan(got.value) : got.value == bv, "%s n %lld: value %g, want %g",
                ref_name(t), (long long)n, got.value, bv);
      tvw_free(ctx, &p);
      free(host);
    }
}

Test(user_ops, argmax_reduce_dims_each_dim_c_and_fortran) {
  const akx_op op = argmax_op();
  const int64_t shape[2] = {37, 53};
  const int64_t n = shape[0] * shape[1];
  float *host = tfx_xmalloc((size_t)n * sizeof(float));
  for (int64_t k = 0; k < n; ++k) /* 7 values: ties in every line; a NaN in some lines */
    host[k] = h(11, k) % 97 == 0 ? NAN : (float)(h(12, k) % 7);
  for (int fortran = 0; fortran < 2; ++fortran) {
    const tfx_layout L = tvw_dense(2, shape, fortran);
    tvw_pair p = tvw_upload(ctx, AKX_FLOAT32, host, &L);
    for (int32_t dim = 0; dim < 2; ++dim) {
      int64_t dst_shape[2] = {shape[0], shape[1]};
      dst_shape[dim] = 1;
      int64_t *got = reduce_dims_to_host(&p.dev, op, AKX_INT64, dst_shape);
      const int64_t outs = n / shape[dim];
      double *bv = tfx_xmalloc((size_t)outs * sizeof(double));
      int64_t *bi = tfx_xmalloc((size_t)outs * sizeof(int64_t));
      for (int64_t o = 0; o < outs; ++o) bi[o] = -1;
      int64_t idx[2] = {0, 0};
      do { /* one reduced dim: the position is the index along it */
        const int64_t o = out_linear(2, dst_shape, idx), i = idx[dim];
        const double v = *(const float *)tvw_at(&p.host, idx);
        if (argmax_beats(v, i, bv[o], bi[o])) bv[o] = v, bi[o] = i;
      } while (tmo_next(2, shape, idx));
      for (int64_t o = 0; o < outs; ++o)
        cr_assert_eq(got[o], bi[o], "%s order, dim %d, output %lld: %lld, numpy %lld",
                     fortran ? "Fortran" : "C", dim, (long long)o, (long long)got[o],
                     (long long)bi[o]);
      free(got), free(bv), free(bi);
    }
    tvw_free(ctx, &p);
  }
  free(host);
}

/* ---- Welford's mean and variance --------------------------------------------------------------- */

static const char WELFORD_SRC[] =
    "struct Welford { double n, mean, m2; };\n"
    "// Chan, Golub and LeVeque's merge of two partial (count, mean, sum of squared deviations).\n"
    "AKX_HD Welford wf_combine(Welford a, Welford b) {\n"
    "  if (a.n == 0) return b;\n"
    "  if (b.n == 0) return a;\n"
    "  Welford r;\n"
    "  r.n = a.n + b.n;\n"
    "  const double d = b.mean - a.mean;\n"
    "  r.mean = a.mean + d * (b.n / r.n);\n"
    "  r.m2 = a.m2 + b.m2 + d * d * (a.n * b.n / r.n);\n"
    "  return r;\n"
    "}\n"
    "AKX_HD Welford wf_identity() { Welford r; r.n = 0; r.mean = 0; r.m2 = 0; return r; }\n"
    "template <class S> AKX_HD Welford wf_map(S x, int64_t) {\n"
    "  Welford r; r.n = 1; r.mean = (double)x; r.m2 = 0; return r;\n"
    "}\n"
    "template <class D> AKX_HD D wf_variance(Welford a) { return (D)(a.m2 / a.n); }\n";

typedef struct {
  double n, mean, m2;
} welford_acc;

static akx_op welford_op(void) {
  const akx_user_op_desc d =
      desc_of(WELFORD_SRC, "Welford", "wf_combine", "wf_identity", "wf_map", "wf_variance");
  return create(&d);
}

/* Around 1000 with a spread of about 16: a one-pass sum of squares would lose digits. Every
 * value is exact in float32. */
static double welford_value(int64_t k) { return 1000.0 + (double)((int64_t)(h(21, k) % 2001) - 1000) / 64.0; }

Test(user_ops, welford_mapreduce) {
  const akx_op op = welford_op();
  const int64_t sizes[] = {0, 1, 1000, 300000};
  const akx_dtype types[] = {AKX_FLOAT64, AKX_FLOAT32};
  for (size_t s = 0; s < 4; ++s)
    for (size_t ti = 0; ti < 2; ++ti) {
      const int64_t n = sizes[s];
      const akx_dtype t = types[ti];
      void *host = tfx_xmalloc((size_t)(n ? n : 1) * ref_size(t));
      long double sum = 0, m2 = 0;
      for (int64_t k = 0; k < n; ++k) {
        const double x = welford_value(k);
        if (t == AKX_FLOAT64) ((double *)host)[k] = x;
        else ((float *)host)[k] = (float)x;
        sum += x;
      }
      const long double mean = n ? sum / n : 0;
      for (int64_t k = 0; k < n; ++k) m2 += (welford_value(k) - mean) * (welford_value(k) - mean);
      const tfx_layout L = tfx_layout_vector(n);
      tvw_pair p = tvw_upload(ctx, t, host, &L);
      welford_acc got;
      mapreduce_both(&p.dev, op, NULL, &got, sizeof got);
      cr_assert_eq(got.n, (double)n, "%s n %lld: count %g", ref_name(t), (long long)n, got.n);
      if (n == 0) {
        cr_assert(got.mean == 0 && got.m2 == 0, "empty: the identity {0, 0, 0}, got {%g, %g, %g}",
                  got.n, got.mean, got.m2);
      } else {
        cr_assert_leq(rel_err(got.mean, (double)mean), 1e-9, "%s n %lld: mean %.17g, two-pass %.17Lg",
                      ref_name(t), (long long)n, got.mean, mean);
        const double var = (double)(m2 / n);
        cr_assert_leq(fabs(got.m2 / got.n - var), 1e-9 * fmax(var, 1e-300) + (n == 1 ? 1e-300 : 0),
                      "%s n %lld: variance %.17g, two-pass %.17g", ref_name(t), (long long)n,
                      got.m2 / got.n, var);
      }
      tvw_free(ctx, &p);
      free(host);
    }
}

Test(user_ops, welford_variance_reduce_dims) {
  const akx_op op = welford_op();
  const int64_t shape[2] = {120, 77}, n = 120 * 77;
  double *host = tfx_xmalloc((size_t)n * sizeof(double));
  for (int64_t k = 0; k < n; ++k) host[k] = welford_value(k) + (double)(k % 77); /* columns differ */
  const tfx_layout L = tvw_dense(2, shape, 0);
  tvw_pair p = tvw_upload(ctx, AKX_FLOAT64, host, &L);
  for (int32_t dim = 0; dim < 2; ++dim) {
    int64_t dst_shape[2] = {shape[0], shape[1]};
    dst_shape[dim] = 1;
    double *got = reduce_dims_to_host(&p.dev, op, AKX_FLOAT64, dst_shape);
    const int64_t outs = n / shape[dim], len = shape[dim];
    long double *sum = calloc((size_t)outs, sizeof *sum), *m2 = calloc((size_t)outs, sizeof *m2);
    int64_t idx[2] = {0, 0};
    do sum[out_linear(2, dst_shape, idx)] += *(const double *)tvw_at(&p.host, idx);
    while (tmo_next(2, shape, idx));
    do {
      const int64_t o = out_linear(2, dst_shape, idx);
      const long double d = *(const double *)tvw_at(&p.host, idx) - sum[o] / len;
      m2[o] += d * d;
    } while (tmo_next(2, shape, idx));
    for (int64_t o = 0; o < outs; ++o) {
      const double var = (double)(m2[o] / len);
      cr_assert_leq(rel_err(got[o], var), 1e-9, "dim %d, output %lld: variance %.17g, two-pass %.17g",
                    dim, (long long)o, got[o], var);
    }
    free(got), free(sum), free(m2);
  }
  tvw_free(ctx, &p);
  free(host);
}

/* ---- logsumexp -------------------------------------------------------------------------------- */

static const char LSE_SRC[] =
    "struct Lse { double m, s; };  // log(sum(exp(x))) = m + log(s)\n"
    "AKX_HD Lse lse_combine(Lse a, Lse b) {\n"
    "  if (a.s == 0) return b;\n"
    "  if (b.s == 0) return a;\n"
    "  Lse r;\n"
    "  if (a.m >= b.m) { r.m = a.m; r.s = a.s + b.s * exp(b.m - a.m); }\n"
    "  else { r.m = b.m; r.s = b.s + a.s * exp(a.m - b.m); }\n"
    "  return r;\n"
    "}\n"
    "AKX_HD Lse lse_identity() { double zero = 0; Lse r; r.m = -1.0 / zero; r.s = 0; return r; }\n"
    "template <class S> AKX_HD Lse lse_map(S x, int64_t) { Lse r; r.m = (double)x; r.s = 1; return r; }\n"
    "template <class D> AKX_HD D lse_store(Lse a) { return (D)(a.m + log(a.s)); }\n";

typedef struct {
  double m, s;
} lse_acc;

static akx_op lse_op(void) {
  const akx_user_op_desc d = desc_of(LSE_SRC, "Lse", "lse_combine", "lse_identity", "lse_map", "lse_store");
  return create(&d);
}

static float lse_value(int64_t k) { return (float)((int64_t)(h(31, k) % 4001) - 2000) / 100.0f; }

/* Two-pass logsumexp of n values got(k) in long double. */
static long double host_lse(const float *x, int64_t n, int64_t step, float *max_out) {
  float m = -INFINITY;
  for (int64_t k = 0; k < n; ++k) m = fmaxf(m, x[k * step]);
  long double s = 0;
  for (int64_t k = 0; k < n; ++k) s += expl((long double)x[k * step] - m);
  if (max_out) *max_out = m;
  return m + logl(s);
}

Test(user_ops, logsumexp_rows_and_whole) {
  const akx_op op = lse_op();
  const int64_t shape[2] = {50, 777}, n = 50 * 777;
  float *host = tfx_xmalloc((size_t)n * sizeof(float));
  for (int64_t k = 0; k < n; ++k) host[k] = lse_value(k);
  const tfx_layout L = tvw_dense(2, shape, 0);
  tvw_pair p = tvw_upload(ctx, AKX_FLOAT32, host, &L);
  const int64_t dst_shape[2] = {shape[0], 1};
  double *got = reduce_dims_to_host(&p.dev, op, AKX_FLOAT64, dst_shape);
  for (int64_t r = 0; r < shape[0]; ++r) {
    const double want = (double)host_lse(host + r * shape[1], shape[1], 1, NULL);
    cr_assert_leq(rel_err(got[r], want), 1e-10, "row %lld: %.17g, host %.17g", (long long)r, got[r], want);
  }
  free(got);
  lse_acc whole;
  mapreduce_both(&p.dev, op, NULL, &whole, sizeof whole);
  float m;
  const double want = (double)host_lse(host, n, 1, &m);
  cr_assert_eq(whole.m, (double)m, "the running maximum is exact: %.17g, max %.9g", whole.m, m);
  cr_assert_leq(rel_err(whole.m + log(whole.s), want), 1e-10, "m + log(s) = %.17g, host %.17g",
                whole.m + log(whole.s), want);
  tvw_free(ctx, &p);
  free(host);
}

/* ---- an affine-map composition scan (non-commutative, no identity) ------------------------------- */

typedef struct {
  double a, b;
} affine_acc;

static affine_acc affine_then(affine_acc f, affine_acc g) {
  const affine_acc r = {f.a * g.a, f.b * g.a + g.b};
  return r;
}

/* A sequential host scan of one line (len elements of src from idx, along dim); with init
 * (NULL: none; exclusive needs one) before the first element. Writes len values at out (step
 * out_step). */
static void affine_host_line(const akx_array *src, int64_t *idx, int32_t dim, const affine_acc *init,
                             int exclusive, double *out, int64_t out_step) {
  affine_acc acc = init ? *init : (affine_acc){1, 0};
  int have = init != NULL;
  for (int64_t k = 0; k < src->shape[dim]; ++k) {
    idx[dim] = k;
    const double x = *(const float *)tvw_at(src, idx);
    const affine_acc f = {1.0 + x * 0.01, x};
    if (exclusive) out[k * out_step] = acc.b;
    acc = have ? affine_then(acc, f) : f;
    have = 1;
    if (!exclusive) out[k * out_step] = acc.b;
  }
  idx[dim] = 0;
}

Test(user_ops, affine_scan_every_dim_of_a_strided_view) {
  const akx_user_op_desc d = desc_of(AFFINE_SRC, "Affine", "af_then", NULL, "af_map", "af_at_zero");
  const akx_op op = create(&d);
  /* A 5 x 7 x 300 view of a 10 x 7 x 300 parent: every other row of dim 0, dim 1 backwards. */
  const int64_t pshape[3] = {10, 7, 300}, start[3] = {1, 6, 0}, shape[3] = {5, 7, 300},
                step[3] = {2, -1, 1};
  const tfx_layout L = tfx_layout_sub(3, pshape, start, shape, step);
  float *host = tfx_xmalloc((size_t)L.parent_n * sizeof(float));
  for (int64_t k = 0; k < L.parent_n; ++k) host[k] = (float)((int64_t)(h(41, k) % 21) - 10) / 8.0f;
  tvw_pair p = tvw_upload(ctx, AKX_FLOAT32, host, &L);
  const affine_acc unit = {1, 0}, shift = {2, 1};
  const struct { int exclusive; const affine_acc *init; } modes[] = {
      {0, NULL}, {1, &unit}, {0, &shift}};
  const int64_t n = 5 * 7 * 300;
  int64_t cstr[3];
  tvw_c_strides(3, shape, cstr);
  double *want = tfx_xmalloc((size_t)n * sizeof(double));
  for (int32_t dim = 0; dim < 3; ++dim)
    for (int m = 0; m < 3; ++m) {
      akx_scan_opts o = akx_scan_opts_default();
      o.exclusive = modes[m].exclusive;
      o.init = modes[m].init;
      double *got = scan_to_host(&p.dev, op, AKX_FLOAT64, dim, &o);
      int64_t line_shape[3] = {shape[0], shape[1], shape[2]}, idx[3] = {0, 0, 0};
      line_shape[dim] = 1;
      do affine_host_line(&p.host, idx, dim, modes[m].init, modes[m].exclusive,
                          want + tmo_offset(3, cstr, idx), cstr[dim]);
      while (tmo_next(3, line_shape, idx));
      for (int64_t k = 0; k < n; ++k)
        cr_assert_leq(fabs(got[k] - want[k]), 1e-9 * (1 + fabs(want[k])),
                      "dim %d, %s%s, element %lld: %.17g, sequential %.17g", dim,
                      modes[m].exclusive ? "exclusive" : "inclusive",
                      modes[m].init ? " with init" : "", (long long)k, got[k], want[k]);
      free(got);
    }
  /* Exclusive without init: nothing comes first, and the op has no identity. */
  akx_array dst = tvw_dst(ctx, AKX_FLOAT64, 3, shape, 0x5A);
  akx_scan_opts o = akx_scan_opts_default();
  o.exclusive = 1;
  const akx_status st = akx_scan(ctx, &dst, &p.dev, op, 1, &o);
  cr_assert_eq(st, AKX_ERROR_INVALID_ARGUMENT, "exclusive without init or identity: %s (%s)",
               akx_status_string(st), akx_last_error());
  cr_assert(strstr(akx_last_error(), "init"), "the sentence names opts->init: %s", akx_last_error());
  unsigned char *back = tfx_xmalloc((size_t)n * 8);
  tfx_to_host(ctx, back, dst.data, (size_t)n * 8);
  for (int64_t k = 0; k < n * 8; ++k) cr_assert_eq(back[k], 0x5A, "dst byte %lld written", (long long)k);
  free(back);
  tfx_free(ctx, dst.data);
  free(want);
  tvw_free(ctx, &p);
  free(host);
}

/* ---- a custom map under a sum ---------------------------------------------------------------- */

static const char SQUARE_PLUS_ONE_SRC[] =
    "AKX_HD double sq_add(double a, double b) { return a + b; }\n"
    "AKX_HD double sq_zero() { return 0.0; }\n"
    "template <class S> AKX_HD double sq_map(S x, int64_t) { return (double)x * (double)x + 1.0; }\n";

Test(user_ops, custom_map_square_plus_one) {
  const akx_user_op_desc d = desc_of(SQUARE_PLUS_ONE_SRC, "double", "sq_add", "sq_zero", "sq_map", NULL);
  const akx_op op = create(&d);
  const int64_t n = 10007;
  const akx_dtype types[2] = {AKX_INT32, AKX_FLOAT32};
  for (int ti = 0; ti < 2; ++ti) {
    const akx_dtype t = types[ti];
    void *host = tfx_xmalloc((size_t)n * 4);
    double *x = tfx_xmalloc((size_t)n * sizeof(double));
    for (int64_t k = 0; k < n; ++k) { /* squares and sums exact in double, in any order */
      const int64_t v = (int64_t)(h(51, k) % 2001) - 1000;
      if (t == AKX_INT32) ((int32_t *)host)[k] = (int32_t)v, x[k] = (double)v;
      else ((float *)host)[k] = (float)v / 4.0f, x[k] = (double)v / 4.0;
    }
    const tfx_layout L = tfx_layout_vector(n);
    tvw_pair p = tvw_upload(ctx, t, host, &L);
    double want = 0, got = 0;
    for (int64_t k = 0; k < n; ++k) want += x[k] * x[k] + 1;
    mapreduce_both(&p.dev, op, NULL, &got, sizeof got);
    cr_assert_eq(got, want, "%s: sum(x*x + 1) = %.17g, host %.17g", ref_name(t), got, want);
    const double init = 5.0;
    mapreduce_both(&p.dev, op, &init, &got, sizeof got);
    cr_assert_eq(got, want + 5, "%s with init 5: %.17g, host %.17g", ref_name(t), got, want + 5);
    double *scan = scan_to_host(&p.dev, op, AKX_FLOAT64, 0, NULL);
    double run = 0;
    for (int64_t k = 0; k < n; ++k) {
      run += x[k] * x[k] + 1;
      cr_assert_eq(scan[k], run, "%s: scan[%lld] = %.17g, host %.17g", ref_name(t), (long long)k,
                   scan[k], run);
    }
    free(scan);
    tvw_free(ctx, &p);
    free(host), free(x);
  }
}

/* ---- the map's position i ------------------------------------------------------------------- */

static const char POSITION_SRC[] =
    "AKX_HD int64_t pos_add(int64_t a, int64_t b) { return a + b; }\n"
    "AKX_HD int64_t pos_zero() { return 0; }\n"
    "// i weighted by the element: a wrong position for any element changes the sum\n"
    "template <class S> AKX_HD int64_t pos_weighted(S x, int64_t i) { return i * (int64_t)x; }\n"
    "// the later operand (associative, not commutative: scans only)\n"
    "AKX_HD int64_t pos_last(int64_t a, int64_t b) { (void)a; return b; }\n"
    "template <class S> AKX_HD int64_t pos_index(S x, int64_t i) { (void)x; return i; }\n";

static akx_op weighted_position_op(void) {
  const akx_user_op_desc d = desc_of(POSITION_SRC, "int64_t", "pos_add", "pos_zero", "pos_weighted", NULL);
  return create(&d);
}

static int32_t *position_data(int64_t n) {
  int32_t *x = tfx_xmalloc((size_t)n * sizeof(int32_t));
  for (int64_t k = 0; k < n; ++k) x[k] = (int32_t)(h(61, k) % 1000) + 1;
  return x;
}

/* sum over the view of position(element) * element, positions over the dims in `dims` (NULL:
 * all) by akx_findall's rule, per output of dst_shape (NULL: one output). */
static void weighted_positions(const akx_array *v, const int64_t *dst_shape, int64_t *out) {
  int32_t dims[AKX_MAX_DIMS], nred = v->ndim;
  if (dst_shape) nred = reduced_dims(v->ndim, dst_shape, dims);
  int64_t idx[AKX_MAX_DIMS] = {0};
  do {
    const int64_t pos = tmo_position(nred, dst_shape ? dims : NULL, v->shape, v->strides, idx);
    out[dst_shape ? out_linear(v->ndim, dst_shape, idx) : 0] += pos * *(const int32_t *)tvw_at(v, idx);
  } while (tmo_next(v->ndim, v->shape, idx));
}

Test(user_ops, map_position_in_mapreduce_is_memory_order) {
  const akx_op op = weighted_position_op();
  /* A 40 x 30 Fortran array seen with dim 1 backwards (strides {1, -40}): memory order walks
   * dim 1 outer, in its own (backwards) index order; and a C-order 3-d view with a step. */
  tfx_layout F = tvw_dense(2, (const int64_t[]){40, 30}, 1);
  F.offset = 29 * 40;
  F.strides[1] = -40;
  const int64_t pshape[3] = {6, 8, 9}, start[3] = {5, 0, 1}, shape[3] = {3, 8, 4}, step[3] = {-2, 1, 2};
  const tfx_layout S = tfx_layout_sub(3, pshape, start, shape, step);
  const tfx_layout *layouts[2] = {&F, &S};
  for (int l = 0; l < 2; ++l) {
    int32_t *x = position_data(layouts[l]->parent_n);
    tvw_pair p = tvw_upload(ctx, AKX_INT32, x, layouts[l]);
    int64_t want = 0, got = -1;
    weighted_positions(&p.host, NULL, &want);
    mapreduce_both(&p.dev, op, NULL, &got, sizeof got);
    char buf[256];
    cr_assert_eq(got, want, "%s: sum(i * x) = %lld, memory order gives %lld",
                 tfx_describe(&p.host, buf, sizeof buf), (long long)got, (long long)want);
    tvw_free(ctx, &p);
    free(x);
  }
}

Test(user_ops, map_position_in_reduce_dims_is_over_the_reduced_dims) {
  const akx_op op = weighted_position_op();
  /* A 6 x 5 x 7 Fortran array reduced over dims 0 and 2: the position runs over dim 2 (the
   * larger stride) outer, dim 0 inner. A C-order view with a negative step reduced over dim 1,
   * and over dims 0 and 1. */
  const tfx_layout F = tvw_dense(3, (const int64_t[]){6, 5, 7}, 1);
  const int64_t pshape[3] = {4, 9, 10}, start[3] = {0, 8, 2}, shape[3] = {4, 5, 8}, step[3] = {1, -2, 1};
  const tfx_layout S = tfx_layout_sub(3, pshape, start, shape, step);
  const struct { const tfx_layout *L; int64_t dst[3]; } cases[] = {
      {&F, {1, 5, 1}}, {&S, {4, 1, 8}}, {&S, {1, 1, 8}}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    int32_t *x = position_data(cases[c].L->parent_n);
    tvw_pair p = tvw_upload(ctx, AKX_INT32, x, cases[c].L);
    int64_t outs = 1;
    for (int d = 0; d < 3; ++d) outs *= cases[c].dst[d];
    int64_t *want = calloc((size_t)outs, sizeof *want);
    weighted_positions(&p.host, cases[c].dst, want);
    int64_t *got = reduce_dims_to_host(&p.dev, op, AKX_INT64, cases[c].dst);
    for (int64_t o = 0; o < outs; ++o)
      cr_assert_eq(got[o], want[o], "case %zu, output %lld: %lld, want %lld", c, (long long)o,
                   (long long)got[o], (long long)want[o]);
    free(got), free(want);
    tvw_free(ctx, &p);
    free(x);
  }
}

Test(user_ops, map_position_in_scan_is_the_index_along_the_dim) {
  const akx_user_op_desc d = desc_of(POSITION_SRC, "int64_t", "pos_last", NULL, "pos_index", NULL);
  const akx_op op = create(&d);
  const int64_t pshape[3] = {9, 8, 70}, start[3] = {8, 0, 3}, shape[3] = {5, 8, 33}, step[3] = {-2, 1, 2};
  const tfx_layout L = tfx_layout_sub(3, pshape, start, shape, step);
  int32_t *x = position_data(L.parent_n);
  tvw_pair p = tvw_upload(ctx, AKX_INT32, x, &L);
  for (int32_t dim = 0; dim < 3; ++dim) {
    int64_t *got = scan_to_host(&p.dev, op, AKX_INT64, dim, NULL);
    int64_t idx[3] = {0, 0, 0}, k = 0;
    do cr_assert_eq(got[k], idx[dim], "dim %d, element (%lld, %lld, %lld): i = %lld", dim,
                    (long long)idx[0], (long long)idx[1], (long long)idx[2], (long long)got[k]);
    while (++k, tmo_next(3, shape, idx));
    free(got);
  }
  tvw_free(ctx, &p);
  free(x);
}

/* ---- a built-in op and its run-time twin ------------------------------------------------------ */

static const char FLOAT_ADD_SRC[] =
    "AKX_HD float f_add(float a, float b) { return a + b; }\n"
    "AKX_HD float f_zero() { return -0.0f; }  // IEEE 754's additive identity, as ADD's\n";

static void sim_totals(akx_sim_kernel_counters *c) {
  cr_assert_eq(akx_sim_counters_get(ctx, c, NULL, 0, NULL), AKX_SUCCESS, "%s", akx_last_error());
}

/* polls: the call's loads include a look-back's polls of flags (a scan), and its stores the
 * count of tiles that waited for a node (an atomic), whose counts depend on the order blocks
 * run in: under a shuffled schedule (AKX_SIM_SCHEDULE=random) two calls see two orders, so
 * their loads and stores are compared only under the fixed one. */
static void same_counters(const akx_sim_kernel_counters *a, const akx_sim_kernel_counters *b,
                          const char *call, int polls) {
  const char *schedule = getenv("AKX_SIM_SCHEDULE");
  const int shuffled = schedule && strncmp(schedule, "random", 6) == 0;
  cr_assert_eq(a->launches, b->launches, "%s: launches %llu built-in, %llu user op", call,
               (unsigned long long)a->launches, (unsigned long long)b->launches);
  cr_assert_eq(a->blocks, b->blocks, "%s: blocks", call);
  cr_assert_eq(a->threads, b->threads, "%s: threads", call);
  if (!(polls && shuffled))
    cr_assert_eq(a->global_load.units, b->global_load.units, "%s: global load sectors", call);
  if (!(polls && shuffled))
    cr_assert_eq(a->global_store.units, b->global_store.units, "%s: global store sectors", call);
  cr_assert_eq(a->shared_load.units, b->shared_load.units, "%s: shared load wavefronts", call);
  cr_assert_eq(a->shared_store.units, b->shared_store.units, "%s: shared store wavefronts", call);
}

Test(user_ops, float_add_twin_is_bitwise_the_built_in) {
  const akx_user_op_desc d = desc_of(FLOAT_ADD_SRC, "float", "f_add", "f_zero", NULL, NULL);
  const akx_op twin = create(&d);
  const int64_t n = 1000003;
  float *host = tfx_xmalloc((size_t)n * sizeof(float));
  for (int64_t k = 0; k < n; ++k) /* rough values: the sum's bits depend on the order */
    host[k] = (float)((double)(h(71, k) >> 11) / 9007199254740992.0 * 2.0 - 1.0) * 3.3f;
  const tfx_layout L = tfx_layout_vector(n);
  tvw_pair p = tvw_upload(ctx, AKX_FLOAT32, host, &L);
  const int sim = tfx_is_sim(ctx);
  akx_sim_kernel_counters c_builtin, c_twin;

  /* Each pair of calls counted after one more of the same family: the workspace then holds
   * what both calls of the pair find there (a known ticket and status: one launch each). */
  float a = 0, b = 0;
  cr_assert_eq(akx_mapreduce(ctx, &p.dev, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &a, AKX_HOST), AKX_SUCCESS,
               "%s", akx_last_error());
  if (sim) akx_sim_counters_reset(ctx);
  cr_assert_eq(akx_mapreduce(ctx, &p.dev, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &a, AKX_HOST), AKX_SUCCESS,
               "%s", akx_last_error());
  if (sim) sim_totals(&c_builtin), akx_sim_counters_reset(ctx);
  cr_assert_eq(akx_mapreduce(ctx, &p.dev, AKX_MAP_IDENTITY, twin, NULL, &b, AKX_HOST), AKX_SUCCESS, "%s",
               akx_last_error());
  if (sim) sim_totals(&c_twin), same_counters(&c_builtin, &c_twin, "akx_mapreduce", 0);
  cr_assert(memcmp(&a, &b, sizeof a) == 0, "mapreduce: ADD %.9g, the twin %.9g", a, b);

  akx_array da = tvw_dst(ctx, AKX_FLOAT32, 1, &n, 0x11), db = tvw_dst(ctx, AKX_FLOAT32, 1, &n, 0x22);
  cr_assert_eq(akx_scan(ctx, &da, &p.dev, AKX_OP_ADD, 0, NULL), AKX_SUCCESS, "%s", akx_last_error());
  if (sim) akx_sim_counters_reset(ctx);
  cr_assert_eq(akx_scan(ctx, &da, &p.dev, AKX_OP_ADD, 0, NULL), AKX_SUCCESS, "%s", akx_last_error());
  if (sim) sim_totals(&c_builtin), akx_sim_counters_reset(ctx);
  cr_assert_eq(akx_scan(ctx, &db, &p.dev, twin, 0, NULL), AKX_SUCCESS, "%s", akx_last_error());
  if (sim) sim_totals(&c_twin), same_counters(&c_builtin, &c_twin, "akx_scan", 1);
  float *sa = tfx_xmalloc((size_t)n * 4), *sb = tfx_xmalloc((size_t)n * 4);
  tfx_to_host(ctx, sa, da.data, (size_t)n * 4);
  tfx_to_host(ctx, sb, db.data, (size_t)n * 4);
  for (int64_t k = 0; k < n; ++k)
    cr_assert(memcmp(&sa[k], &sb[k], 4) == 0, "scan[%lld]: ADD %.9g, the twin %.9g", (long long)k,
              sa[k], sb[k]);
  free(sa), free(sb);
  tfx_free(ctx, da.data), tfx_free(ctx, db.data);
  tvw_free(ctx, &p);
  free(host);
}

/* ---- bad input ------------------------------------------------------------------------------- */

/* The call failed with want (or, where include/akx.h names no status, with also_ok), a sentence
 * that contains `names` (the argument at fault). */
static void refused(akx_status st, akx_status want, akx_status also_ok, const char *names,
                    const char *what) {
  cr_assert(st == want || st == also_ok, "%s: %s, want %s (%s)", what, akx_status_string(st),
            akx_status_string(want), akx_last_error());
  cr_assert(akx_last_error()[0] != '\0', "%s: no sentence", what);
  cr_assert(strstr(akx_last_error(), names), "%s: the sentence should name %s: %s", what, names,
            akx_last_error());
}

/* akx_user_op_create refused: *op untouched. */
static void create_refused(akx_context *c, const akx_user_op_desc *d, akx_status want,
                           const char *names, const char *what) {
  akx_op op = (akx_op)777;
  refused(akx_user_op_create(c, d, &op), want, want, names, what);
  cr_assert_eq((int)op, 777, "%s: *op written", what);
}

static const char OK_SRC[] =
    "struct Pair { double a, b; };\n"
    "AKX_HD Pair p_add(Pair x, Pair y) { Pair r; r.a = x.a + y.a; r.b = x.b + y.b; return r; }\n"
    "AKX_HD Pair p_zero() { Pair r; r.a = 0; r.b = 0; return r; }\n"
    "template <class S> AKX_HD Pair p_map(S x, int64_t i) { Pair r; r.a = (double)x; r.b = (double)i; return r; }\n"
    "template <class D> AKX_HD D p_store(Pair p) { return (D)(p.a + p.b); }\n"
    "AKX_HD double one_arg(double a) { return a; }\n"
    "struct Five { double v[5]; };\n"
    "AKX_HD Five f_add(Five x, Five y) { for (int k = 0; k < 5; ++k) x.v[k] += y.v[k]; return x; }\n";

Test(user_ops, bad_desc_is_refused) {
  const akx_user_op_desc good = desc_of(OK_SRC, "Pair", "p_add", "p_zero", "p_map", "p_store");
  akx_op op = (akx_op)777;
  refused(akx_user_op_create(ctx, NULL, &op), AKX_ERROR_INVALID_ARGUMENT, AKX_ERROR_INVALID_ARGUMENT,
          "desc", "NULL desc");
  cr_assert_eq((int)op, 777);
  refused(akx_user_op_create(ctx, &good, NULL), AKX_ERROR_INVALID_ARGUMENT, AKX_ERROR_INVALID_ARGUMENT,
          "op", "NULL op");
  refused(akx_user_op_create(NULL, &good, &op), AKX_ERROR_INVALID_ARGUMENT, AKX_ERROR_INVALID_ARGUMENT,
          "ctx", "NULL ctx");
  akx_user_op_desc d = good;
  d.source = NULL;
  create_refused(ctx, &d, AKX_ERROR_INVALID_ARGUMENT, "source", "NULL source");
  d = good, d.acc_type = NULL;
  create_refused(ctx, &d, AKX_ERROR_INVALID_ARGUMENT, "acc_type", "NULL acc_type");
  d = good, d.combine = NULL;
  create_refused(ctx, &d, AKX_ERROR_INVALID_ARGUMENT, "combine", "NULL combine");
  /* Rules the compiler checks: a sentence naming the rule (and the status of a bad argument). */
  d = desc_of(OK_SRC, "Five", "f_add", NULL, NULL, NULL);
  create_refused(ctx, &d, AKX_ERROR_INVALID_ARGUMENT, "32", "a 40-byte accumulator");
  d = good, d.combine = "no_such_combine";
  create_refused(ctx, &d, AKX_ERROR_INVALID_ARGUMENT, "no_such_combine", "a missing combine");
  d = good, d.combine = "one_arg";
  create_refused(ctx, &d, AKX_ERROR_INVALID_ARGUMENT, "combine", "combine(double) for a Pair");
  /* Still usable after all that. */
  const akx_op ok = create(&good);
  cr_assert_eq(akx_user_op_destroy(ctx, ok), AKX_SUCCESS, "%s", akx_last_error());
}

Test(user_ops, a_compile_error_names_its_line) {
  static const char broken[] =
      "AKX_HD double b_add(double a, double b) { return a + b; }\n"
      "AKX_HD double b_zero() { return 0; }\n"
      "AKX_HD double b_oops(double a) { return a +* ; }\n";
  const akx_user_op_desc d = desc_of(broken, "double", "b_add", "b_zero", NULL, NULL);
  create_refused(ctx, &d, AKX_ERROR_INVALID_ARGUMENT, "", "a syntax error");
  const char *e = akx_last_error();
  /* gcc and clang write "file:3:col:", NVRTC "file(3):" */
  cr_assert(strstr(e, ":3:") || strstr(e, "(3)") || strstr(e, "line 3"),
            "the first error line with its line number (3): %s", e);
  cr_assert(akx_last_compile_log()[0] != '\0', "the compiler's log is kept");
  cr_assert(strstr(akx_last_compile_log(), "b_oops") || strstr(akx_last_compile_log(), "3"),
            "the log is the compiler's: %s", akx_last_compile_log());
}

/* The poison bytes of a host result / device dst survive a refused call. */
static void mapreduce_refused(const akx_array *src, akx_map map, akx_op op, const akx_reduce_opts *o,
                              akx_status want, akx_status also_ok, const char *names, const char *what) {
  unsigned char result[64];
  memset(result, 0xA5, sizeof result);
  refused(akx_mapreduce(ctx, src, map, op, o, result, AKX_HOST), want, also_ok, names, what);
  for (size_t k = 0; k < sizeof result; ++k) cr_assert_eq(result[k], 0xA5, "%s: result written", what);
}

static void reduce_dims_refused(const akx_array *src, akx_op op, const akx_reduce_opts *o,
                                akx_status want, akx_status also_ok, const char *names, const char *what) {
  const int64_t one = 1;
  akx_array dst = tvw_dst(ctx, AKX_FLOAT64, 1, &one, 0xA5);
  refused(akx_reduce_dims(ctx, &dst, src, AKX_MAP_IDENTITY, op, o), want, also_ok, names, what);
  unsigned char back[8];
  tfx_to_host(ctx, back, dst.data, 8);
  for (int k = 0; k < 8; ++k) cr_assert_eq(back[k], 0xA5, "%s: dst written", what);
  tfx_free(ctx, dst.data);
}

Test(user_ops, bad_calls_with_a_user_op_are_refused) {
  const akx_user_op_desc with_store = desc_of(OK_SRC, "Pair", "p_add", "p_zero", "p_map", "p_store");
  const akx_user_op_desc no_identity = desc_of(OK_SRC, "Pair", "p_add", NULL, "p_map", NULL);
  const akx_op op = create(&with_store), bare = create(&no_identity);
  double host[4] = {1, 2, 3, 4};
  const tfx_layout L4 = tfx_layout_vector(4), L0 = tfx_layout_vector(0);
  tvw_pair p = tvw_upload(ctx, AKX_FLOAT64, host, &L4), e = tvw_upload(ctx, AKX_FLOAT64, host, &L0);
  const akx_status INV = AKX_ERROR_INVALID_ARGUMENT, UNS = AKX_ERROR_UNSUPPORTED;
  akx_reduce_opts o = akx_reduce_opts_default();

  /* The op's own map applies: another map has no meaning. */
  mapreduce_refused(&p.dev, AKX_MAP_SQUARE, op, NULL, INV, UNS, "map", "map SQUARE with a user op");
  /* The accumulator is the op's. */
  o.acc = AKX_FLOAT64;
  mapreduce_refused(&p.dev, AKX_MAP_IDENTITY, op, &o, INV, UNS, "acc", "opts->acc float64 with a user op");
  o = akx_reduce_opts_default();
  /* fold would combine an Acc with dst's previous value, which store has turned into a D. */
  o.fold = 1;
  reduce_dims_refused(&p.dev, op, &o, INV, UNS, "fold", "fold with an op that has a store");
  mapreduce_refused(&p.dev, AKX_MAP_IDENTITY, op, &o, INV, UNS, "fold", "mapreduce fold, op with a store");
  o = akx_reduce_opts_default();
  /* Nothing to give for an empty source: no identity, no init. */
  mapreduce_refused(&e.dev, AKX_MAP_IDENTITY, bare, NULL, INV, INV, "init", "empty, no identity, no init");
  /* An exclusive scan's first output. */
  akx_array dst = tvw_dst(ctx, AKX_FLOAT64, 1, (const int64_t[]){4}, 0xA5);
  akx_scan_opts so = akx_scan_opts_default();
  so.exclusive = 1;
  refused(akx_scan(ctx, &dst, &p.dev, bare, 0, &so), INV, INV, "init", "exclusive scan, no identity, no init");
  unsigned char back[32];
  tfx_to_host(ctx, back, dst.data, sizeof back);
  for (size_t k = 0; k < sizeof back; ++k) cr_assert_eq(back[k], 0xA5, "exclusive scan: dst written");
  tfx_free(ctx, dst.data);

  /* Another context's op, a destroyed op, a value never created. */
  akx_context *other = tfx_open();
  double *other_src = tfx_upload(other, host, sizeof host);
  const akx_array ov = akx_vector(other_src, AKX_FLOAT64, 4);
  unsigned char r2[64];
  memset(r2, 0xA5, sizeof r2);
  refused(akx_mapreduce(other, &ov, AKX_MAP_IDENTITY, op, NULL, r2, AKX_HOST), INV, INV, "op",
          "a user op of another context");
  for (size_t k = 0; k < sizeof r2; ++k) cr_assert_eq(r2[k], 0xA5, "another context: result written");
  refused(akx_user_op_destroy(other, op), INV, INV, "op", "destroy on another context");
  tfx_free(other, other_src);
  tfx_close(other);
  cr_assert_eq(akx_user_op_destroy(ctx, op), AKX_SUCCESS, "%s", akx_last_error());
  mapreduce_refused(&p.dev, AKX_MAP_IDENTITY, op, NULL, INV, INV, "op", "a destroyed op");
  refused(akx_user_op_destroy(ctx, op), INV, INV, "op", "destroyed twice");
  mapreduce_refused(&p.dev, AKX_MAP_IDENTITY, (akx_op)(AKX_USER_OP_FIRST + 4000), NULL, INV, INV, "op",
                    "a user op value never created");
  /* The value is not reused. */
  const akx_op again = create(&with_store);
  cr_assert_neq((int)again, (int)op, "a destroyed op's value came back");
  cr_assert_neq((int)again, (int)bare);
  tvw_free(ctx, &p);
  tvw_free(ctx, &e);
}

/* ---- akx_user_op_info ------------------------------------------------------------------------- */

static void expect_info(akx_op op, size_t size, size_t align, int32_t has_identity, const char *what) {
  akx_user_op_info_t info;
  memset(&info, 0xA5, sizeof info);
  cr_assert_eq(akx_user_op_info(ctx, op, &info), AKX_SUCCESS, "%s: %s", what, akx_last_error());
  cr_assert(info.acc_size == size && info.acc_align == align && info.has_identity == has_identity,
            "%s: size %zu align %zu identity %d, want %zu %zu %d", what, info.acc_size, info.acc_align,
            (int)info.has_identity, size, align, (int)has_identity);
}

Test(user_ops, info_gives_the_accumulator_layout) {
  const akx_user_op_desc dbl = desc_of(SQUARE_PLUS_ONE_SRC, "double", "sq_add", "sq_zero", "sq_map", NULL);
  const akx_user_op_desc flt = desc_of(FLOAT_ADD_SRC, "float", "f_add", "f_zero", NULL, NULL);
  const akx_user_op_desc aff = desc_of(AFFINE_SRC, "Affine", "af_then", NULL, "af_map", "af_at_zero");
  const akx_op a = create(&dbl), b = welford_op(), c = create(&aff), f = create(&flt);
  expect_info(a, 8, 8, 1, "double");
  expect_info(b, sizeof(welford_acc), 8, 1, "Welford {double n, mean, m2}");
  expect_info(c, sizeof(affine_acc), 8, 0, "Affine without identity");
  expect_info(f, 4, 4, 1, "float");
  /* akx_mapreduce_result_dtype has no context: a user op's result is its Acc, no dtype. */
  double x = 0;
  const akx_array v = akx_vector(&x, AKX_FLOAT64, 1);
  akx_dtype t = AKX_INT8;
  cr_assert_eq(akx_mapreduce_result_dtype(&v, AKX_MAP_IDENTITY, a, NULL, &t), AKX_SUCCESS, "%s",
               akx_last_error());
  cr_assert_eq(t, AKX_DTYPE_AUTO, "a user op's result dtype: %s", akx_dtype_name(t));
  akx_user_op_info_t info;
  memset(&info, 0xA5, sizeof info);
  refused(akx_user_op_info(ctx, a, NULL), AKX_ERROR_INVALID_ARGUMENT, AKX_ERROR_INVALID_ARGUMENT, "info",
          "NULL info");
  cr_assert_eq(akx_user_op_destroy(ctx, a), AKX_SUCCESS);
  refused(akx_user_op_info(ctx, a, &info), AKX_ERROR_INVALID_ARGUMENT, AKX_ERROR_INVALID_ARGUMENT, "op",
          "info of a destroyed op");
  cr_assert_eq(info.has_identity, (int32_t)0xA5A5A5A5, "info written by a refused call");
}
