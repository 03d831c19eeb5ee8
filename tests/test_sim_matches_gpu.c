/* The sim's results are the GPU's, bit for bit (README): the same calls on a CUDA context and on
 * a sim context whose profile is that GPU (same compute capability, SM count and threads per
 * SM, so that both choose the same plan) give identical bytes. Float sums and squares (no
 * fused multiply-add on either side: CMakeLists.txt), complex products and moduli
 * (kernels/akx/hypot.cuh), scans, reductions along dims. Needs a CUDA device; skipped without one,
 * and where no sim profile stands for the device (AKX_SIM_DEVICE names the profiles). */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akx.h"

typedef struct {
  akx_context *ctx[2]; /* CUDA, sim */
} pair;

static int open_pair(pair *p) {
  memset(p, 0, sizeof *p);
  if (akx_context_create(&p->ctx[0], AKX_BACKEND_CUDA, 0) != AKX_SUCCESS) return 0;
  cr_assert_eq(akx_context_create(&p->ctx[1], AKX_BACKEND_SIM, 0), AKX_SUCCESS, "%s", akx_last_error());
  akx_context_info_t g, s;
  cr_assert_eq(akx_context_info(p->ctx[0], &g), AKX_SUCCESS);
  cr_assert_eq(akx_context_info(p->ctx[1], &s), AKX_SUCCESS);
  if (g.cc_major != s.cc_major || g.cc_minor != s.cc_minor || g.sm_count != s.sm_count ||
      g.max_threads_per_sm != s.max_threads_per_sm) {
    cr_log_warn("%s (cc %d.%d, %d SMs) is not the sim profile %s (cc %d.%d, %d SMs): the plans "
                "may differ; set AKX_SIM_DEVICE", g.device_name, g.cc_major, g.cc_minor,
                g.sm_count, s.sim_profile, s.cc_major, s.cc_minor, s.sm_count);
    akx_context_destroy(p->ctx[0]);
    akx_context_destroy(p->ctx[1]);
    return 0;
  }
  return 1;
}

static uint64_t state = 0x2545f4914f6cdd1dull;
static double uniform(void) {
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return (double)(state >> 11) * 0x1p-53;
}

/* n random elements of t: floats of mixed signs and magnitudes (sums that round); near_one:
 * within 2^-10 of 1, for products that neither overflow nor underflow (a NaN's bits are not
 * the same on both: the GPU's is 0x7fffffff, x86's 0xffc00000). */
static void *random_elements(akx_dtype t, size_t n, int near_one) {
  const size_t w = akx_dtype_size(t);
  unsigned char *h = malloc(n * w);
  cr_assert(h);
  for (size_t i = 0; i < n; i++) {
    const double v = near_one ? 1 + (uniform() - 0.5) * 0x1p-10 : (uniform() - 0.3) * (1 << (i % 20));
    if (t == AKX_FLOAT32) { const float f = (float)v; memcpy(h + i * w, &f, 4); }
    else if (t == AKX_FLOAT64) memcpy(h + i * w, &v, 8);
    else if (t == AKX_COMPLEX64) { const float z[2] = {(float)v, (float)((uniform() - 0.5) * (near_one ? 0x1p-10 : 1))}; memcpy(h + i * w, z, 8); }
    else if (t == AKX_COMPLEX128) { const double z[2] = {v, uniform() * 3 - 1}; memcpy(h + i * w, z, 16); }
    else cr_assert_fail("dtype %d", (int)t);
  }
  return h;
}

static void *upload(akx_context *ctx, const void *h, size_t bytes) {
  void *d = NULL;
  cr_assert_eq(akx_malloc(ctx, &d, bytes), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(akx_memcpy(ctx, d, h, bytes, AKX_COPY_HOST_TO_DEVICE), AKX_SUCCESS, "%s", akx_last_error());
  return d;
}

/* rt: the dtype the call writes (the AUTO accumulator, include/akx.h). */
static void mapreduce_same(pair *p, akx_dtype t, size_t n, akx_map map, akx_op op, akx_dtype rt) {
  void *h = random_elements(t, n, op == AKX_OP_MUL);
  unsigned char out[2][16];
  memset(out, 0, sizeof out);
  for (int b = 0; b < 2; b++) {
    void *d = upload(p->ctx[b], h, n * akx_dtype_size(t));
    const akx_array v = akx_vector(d, t, (int64_t)n);
    cr_assert_eq(akx_mapreduce(p->ctx[b], &v, map, op, NULL, out[b], AKX_HOST), AKX_SUCCESS, "%s",
                 akx_last_error());
    akx_free(p->ctx[b], d);
  }
  cr_expect(memcmp(out[0], out[1], akx_dtype_size(rt)) == 0,
            "mapreduce of %zu %s (map %d, op %d): the GPU's and the sim's results differ", n,
            akx_dtype_name(t), (int)map, (int)op);
  free(h);
}

static void bytes_same(const void *a, const void *b, size_t n, size_t w, const char *what) {
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < n; i++)
    if (memcmp((const char *)a + i * w, (const char *)b + i * w, w) != 0 && bad++ == 0) first = i;
  cr_expect_eq(bad, 0, "%s: %zu of %zu elements differ (the first: %zu)", what, bad, n, first);
}

static void scan_same(pair *p, akx_dtype t, size_t n, akx_op op) {
  void *h = random_elements(t, n, op == AKX_OP_MUL);
  const size_t w = akx_dtype_size(t);
  void *out[2];
  for (int b = 0; b < 2; b++) {
    void *d = upload(p->ctx[b], h, n * w);
    const akx_array v = akx_vector(d, t, (int64_t)n);
    cr_assert_eq(akx_scan(p->ctx[b], &v, &v, op, 0, NULL), AKX_SUCCESS, "%s", akx_last_error());
    out[b] = malloc(n * w);
    cr_assert_eq(akx_memcpy(p->ctx[b], out[b], d, n * w, AKX_COPY_DEVICE_TO_HOST), AKX_SUCCESS);
    akx_free(p->ctx[b], d);
  }
  bytes_same(out[0], out[1], n, w, akx_dtype_name(t));
  free(out[0]);
  free(out[1]);
  free(h);
}

/* {rows, cols} row-major reduced along dim `dim` with map and ADD into rt (the AUTO
 * accumulator). */
static void dims_same(pair *p, akx_dtype t, int64_t rows, int64_t cols, int dim, akx_map map,
                      akx_dtype rt) {
  const size_t n = (size_t)(rows * cols), w = akx_dtype_size(t);
  void *h = random_elements(t, n, 0);
  const int64_t shape[2] = {rows, cols};
  int64_t dshape[2] = {rows, cols};
  dshape[dim] = 1;
  const size_t nout = (size_t)(dshape[0] * dshape[1]), rw = akx_dtype_size(rt);
  void *out[2];
  for (int b = 0; b < 2; b++) {
    void *d = upload(p->ctx[b], h, n * w), *o = NULL;
    cr_assert_eq(akx_malloc(p->ctx[b], &o, nout * rw), AKX_SUCCESS);
    const akx_array s = akx_array_c(d, t, 2, shape), dd = akx_array_c(o, rt, 2, dshape);
    cr_assert_eq(akx_reduce_dims(p->ctx[b], &dd, &s, map, AKX_OP_ADD, NULL), AKX_SUCCESS, "%s",
                 akx_last_error());
    out[b] = malloc(nout * rw);
    cr_assert_eq(akx_memcpy(p->ctx[b], out[b], o, nout * rw, AKX_COPY_DEVICE_TO_HOST), AKX_SUCCESS);
    akx_free(p->ctx[b], d);
    akx_free(p->ctx[b], o);
  }
  char what[96];
  snprintf(what, sizeof what, "reduce_dims %s {%lld, %lld} along %d", akx_dtype_name(t),
           (long long)rows, (long long)cols, dim);
  bytes_same(out[0], out[1], nout, rw, what);
  free(out[0]);
  free(out[1]);
  free(h);
}

Test(sim_matches_gpu, results_are_the_same_bits, .timeout = 300) {
  pair p;
  if (!open_pair(&p)) cr_skip_test("needs a CUDA device that a sim profile stands for");
  const size_t sizes[] = {1000, 100003, 3000017};
  for (size_t i = 0; i < 3; i++) {
    mapreduce_same(&p, AKX_FLOAT32, sizes[i], AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_FLOAT32);
    mapreduce_same(&p, AKX_FLOAT32, sizes[i], AKX_MAP_SQUARE, AKX_OP_ADD, AKX_FLOAT32);
    mapreduce_same(&p, AKX_FLOAT64, sizes[i], AKX_MAP_SQUARE, AKX_OP_ADD, AKX_FLOAT64);
    mapreduce_same(&p, AKX_COMPLEX64, sizes[i], AKX_MAP_ABS, AKX_OP_ADD, AKX_FLOAT32);
    mapreduce_same(&p, AKX_COMPLEX128, sizes[i], AKX_MAP_ABS, AKX_OP_ADD, AKX_FLOAT64);
    mapreduce_same(&p, AKX_COMPLEX128, sizes[i], AKX_MAP_SQUARE, AKX_OP_ADD, AKX_FLOAT64);
    mapreduce_same(&p, AKX_COMPLEX64, sizes[i] / 100 + 1, AKX_MAP_IDENTITY, AKX_OP_MUL, AKX_COMPLEX64);
  }
  scan_same(&p, AKX_FLOAT32, 1000003, AKX_OP_ADD);
  scan_same(&p, AKX_COMPLEX64, 100003, AKX_OP_MUL);
  scan_same(&p, AKX_FLOAT64, 1000003, AKX_OP_ADD);
  dims_same(&p, AKX_FLOAT32, 3000, 1001, 1, AKX_MAP_SQUARE, AKX_FLOAT32);
  dims_same(&p, AKX_FLOAT32, 3000, 1001, 0, AKX_MAP_IDENTITY, AKX_FLOAT32);
  dims_same(&p, AKX_COMPLEX64, 501, 2003, 1, AKX_MAP_ABS, AKX_FLOAT32);
  akx_context_destroy(p.ctx[0]);
  akx_context_destroy(p.ctx[1]);
}
