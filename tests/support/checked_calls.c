/* tests/support/checked_calls.h */
#include "checked_calls.h"
#include <criterion/criterion.h>
#include <stdlib.h>
#include "fixture.h"

float *cc_small_floats(int64_t n, uint64_t seed) {
  float *h = tfx_xmalloc((size_t)(n > 0 ? n : 1) * sizeof(float));
  for (int64_t i = 0; i < n; ++i) h[i] = (float)((int)(ref_rand(seed, (uint64_t)i) % 7) - 3);
  return h;
}

akx_status cc_scan(akx_context *ctx, int64_t rows, int64_t cols, int32_t dim, uint64_t seed) {
  const int64_t n = rows * cols;
  float *h = cc_small_floats(n, seed);
  float *src = tfx_upload(ctx, h, (size_t)n * sizeof(float));
  float *dst = tfx_alloc(ctx, (size_t)n * sizeof(float));
  const int64_t shape[2] = {rows, cols};
  akx_array s = akx_array_c(src, AKX_FLOAT32, 2, shape), d = akx_array_c(dst, AKX_FLOAT32, 2, shape);
  const akx_status st = akx_scan(ctx, &d, &s, AKX_OP_ADD, dim, NULL);
  if (st == AKX_SUCCESS) {
    float *got = tfx_xmalloc((size_t)n * sizeof(float));
    tfx_to_host(ctx, got, dst, (size_t)n * sizeof(float));
    const int64_t lines = dim == 1 ? rows : cols, len = dim == 1 ? cols : rows;
    for (int64_t a = 0; a < lines; ++a) {
      double ref = 0;
      for (int64_t b = 0; b < len; ++b) {
        const int64_t at = dim == 1 ? a * cols + b : b * cols + a;
        ref += h[at];
        if ((double)got[at] != ref)
          cr_assert_fail("scan %lldx%lld dim %d: element %lld is %g, expected %g", (long long)rows, (long long)cols,
                         (int)dim, (long long)at, (double)got[at], ref);
      }
    }
    free(got);
  }
  free(h);
  tfx_free(ctx, src);
  tfx_free(ctx, dst);
  return st;
}

akx_status cc_scan_vector(akx_context *ctx, int64_t n, uint64_t seed) { return cc_scan(ctx, 1, n, 1, seed); }

akx_status cc_findall(akx_context *ctx, int64_t n, int percent, uint64_t seed) {
  float *h = cc_small_floats(n, seed);
  for (int64_t i = 0; i < n; ++i)
    if ((int)(ref_rand(seed ^ 0x5eed, (uint64_t)i) % 100) >= percent) h[i] = 0.0f;
    else if (h[i] == 0.0f) h[i] = 1.0f;
  float *src = tfx_upload(ctx, h, (size_t)n * sizeof(float));
  int64_t *idx = tfx_alloc(ctx, (size_t)(n > 0 ? n : 1) * sizeof(int64_t));
  akx_array s = akx_vector(src, AKX_FLOAT32, n), ix = akx_vector(idx, AKX_INT64, n);
  int64_t count = -1;
  const akx_status st = akx_findall(ctx, &s, &ix, &count);
  if (st == AKX_SUCCESS) {
    int64_t *got = tfx_xmalloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
    tfx_to_host(ctx, got, idx, (size_t)n * sizeof(int64_t));
    int64_t k = 0;
    for (int64_t i = 0; i < n; ++i)
      if (h[i] != 0.0f) {
        if (k >= count || got[k] != i)
          cr_assert_fail("findall of %lld: position %lld is %lld, expected %lld", (long long)n, (long long)k,
                         k < count ? (long long)got[k] : -1ll, (long long)i);
        ++k;
      }
    cr_assert_eq(count, k, "findall of %lld: count %lld, expected %lld", (long long)n, (long long)count, (long long)k);
    free(got);
  }
  free(h);
  tfx_free(ctx, src);
  tfx_free(ctx, idx);
  return st;
}

akx_status cc_sum(akx_context *ctx, int64_t n, int64_t stride, akx_where where, uint64_t seed) {
  float *h = cc_small_floats(n * stride, seed);
  float *src = tfx_upload(ctx, h, (size_t)(n * stride) * sizeof(float));
  akx_array s = akx_vector(src, AKX_FLOAT32, n);
  s.strides[0] = stride;
  float r = -1.0f, *dr = where == AKX_DEVICE ? tfx_alloc(ctx, sizeof(float)) : NULL;
  const akx_status st = akx_mapreduce(ctx, &s, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, dr ? (void *)dr : &r, where);
  if (st == AKX_SUCCESS) {
    if (dr) tfx_to_host(ctx, &r, dr, sizeof r);
    double ref = 0;
    for (int64_t i = 0; i < n; ++i) ref += h[i * stride];
    cr_assert_eq((double)r, ref, "sum of %lld (stride %lld): %g, expected %g", (long long)n, (long long)stride,
                 (double)r, ref);
  }
  if (dr) tfx_free(ctx, dr);
  free(h);
  tfx_free(ctx, src);
  return st;
}

akx_status cc_sums_along(akx_context *ctx, int64_t rows, int64_t cols, int32_t dim, uint64_t seed) {
  float *h = cc_small_floats(rows * cols, seed);
  float *src = tfx_upload(ctx, h, (size_t)(rows * cols) * sizeof(float));
  const int64_t outs = dim == 0 ? cols : rows;
  float *dst = tfx_alloc(ctx, (size_t)(outs > 0 ? outs : 1) * sizeof(float));
  const int64_t sshape[2] = {rows, cols}, dshape[2] = {dim == 0 ? 1 : rows, dim == 0 ? cols : 1};
  akx_array s = akx_array_c(src, AKX_FLOAT32, 2, sshape), d = akx_array_c(dst, AKX_FLOAT32, 2, dshape);
  const akx_status st = akx_reduce_dims(ctx, &d, &s, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL);
  if (st == AKX_SUCCESS) {
    float *got = tfx_xmalloc((size_t)(outs > 0 ? outs : 1) * sizeof(float));
    tfx_to_host(ctx, got, dst, (size_t)outs * sizeof(float));
    const int64_t len = dim == 0 ? rows : cols;
    for (int64_t o = 0; o < outs; ++o) {
      double ref = 0;
      for (int64_t k = 0; k < len; ++k) ref += h[dim == 0 ? k * cols + o : o * cols + k];
      cr_assert_eq((double)got[o], ref, "sums of %lldx%lld along dim %d: output %lld is %g, expected %g",
                   (long long)rows, (long long)cols, (int)dim, (long long)o, (double)got[o], ref);
    }
    free(got);
  }
  free(h);
  tfx_free(ctx, src);
  tfx_free(ctx, dst);
  return st;
}
