// include/akx.cuh: scans and the reduction over user functors, on the sim (this file is
// compiled by the host compiler; the CUDA instantiation is the same source under nvcc).
// float32 and float64 add without identity (Optional partials of 8 and 16 bytes), and a
// non-commutative associative op (2x2 matrix product mod 2^32, with and without identity:
// operand order must be kept; odd determinants, so that products never collapse to zero and
// an order error in any tile's prefix shows).
#include <criterion/criterion.h>
#include <cstdio>
#include <cstring>
#include <vector>
#include "akx.cuh"
#include "akx_sim.h"
#include "backend.h"  // akx__sim_set_capturing
extern "C" {
#include "fixture.h"
}

namespace {
akx_context *ctx;
void setup() { ctx = tfx_open(); }
void teardown() { tfx_close(ctx); }

struct add_f32 {  // no identity: Optional<float> partials, 8 bytes
  AKX_HD float operator()(float a, float b) const { return a + b; }
};
struct add_f64 {  // no identity: Optional<double> partials, 16 bytes
  AKX_HD double operator()(double a, double b) const { return a + b; }
};
struct mat2 {
  uint32_t a, b, c, d;
};
AKX_HD mat2 mul(const mat2 &x, const mat2 &y) {
  return mat2{x.a * y.a + x.b * y.c, x.a * y.b + x.b * y.d, x.c * y.a + x.d * y.c,
              x.c * y.b + x.d * y.d};
}
struct matmul {  // with identity
  AKX_HD mat2 operator()(const mat2 &x, const mat2 &y) const { return mul(x, y); }
  AKX_HD static mat2 identity() { return mat2{1, 0, 0, 1}; }
};
struct matmul_noid {  // without: Optional<mat2>, 20 bytes
  AKX_HD mat2 operator()(const mat2 &x, const mat2 &y) const { return mul(x, y); }
};

template <class T>
T *upload(const std::vector<T> &v) {
  return static_cast<T *>(tfx_upload(ctx, v.data(), v.size() * sizeof(T)));
}
template <class T>
std::vector<T> download(const T *dev, size_t n) {
  std::vector<T> v(n);
  tfx_to_host(ctx, v.data(), dev, n * sizeof(T));
  return v;
}
bool same(const mat2 &x, const mat2 &y) { return !memcmp(&x, &y, sizeof x); }
// Small matrices with an odd determinant: invertible mod 2^32, so a running product never
// collapses. (With even determinants every product picks up factors of 2 until it is all
// zeros mod 2^32, after about a hundred factors, inside the first tile: every later prefix
// is zero whatever order the tiles were combined in, and an order error cannot show.)
// Element i is the first of its draws whose determinant a*d - b*c is odd.
std::vector<mat2> matrices(size_t n, uint64_t seed) {
  std::vector<mat2> m(n);
  for (size_t i = 0; i < n; ++i) {
    for (uint64_t k = 0;; ++k) {
      const uint64_t r = ref_rand(seed, i * 64 + k);
      const mat2 x{(uint32_t)(r & 7), (uint32_t)((r >> 3) & 7) + 1, (uint32_t)((r >> 6) & 3),
                   (uint32_t)((r >> 8) & 7) + 2};
      if (((x.a * x.d - x.b * x.c) & 1u) == 1u) {
        m[i] = x;
        break;
      }
    }
  }
  return m;
}
}  // namespace

TestSuite(akx_cuh, .init = setup, .fini = teardown, .timeout = 280);

Test(akx_cuh, float_add_without_identity) {
  if (!tfx_is_sim(ctx)) cr_skip_test("this file's kernels are compiled for the sim");
  const size_t sizes[] = {0, 1, 4095, 4096, 100001};
  for (size_t n : sizes) {
    std::vector<float> x(n > 0 ? n : 1);
    for (size_t i = 0; i < n; ++i) x[i] = (float)((int)(ref_rand(1, i) % 7) - 3);
    float *src = upload(x), *dst = static_cast<float *>(tfx_alloc(ctx, x.size() * 4));
    cr_assert_eq(akx::scan_inclusive(ctx, dst, src, (int64_t)n, add_f32{}), AKX_SUCCESS, "%s",
                 akx_last_error());
    std::vector<float> y = download(dst, n);
    double s = 0;
    for (size_t i = 0; i < n; ++i) {
      s += x[i];
      cr_assert_eq(y[i], (float)s, "n %zu: element %zu is %g, expected %g", n, i, y[i], s);
    }
    const float init = 10.0f;
    cr_assert_eq(akx::scan_exclusive(ctx, dst, src, (int64_t)n, init, add_f32{}), AKX_SUCCESS);
    y = download(dst, n);
    s = 10.0;
    for (size_t i = 0; i < n; ++i) {
      cr_assert_eq(y[i], (float)s, "exclusive n %zu: element %zu is %g, expected %g", n, i, y[i], s);
      s += x[i];
    }
    float total = -1;
    const akx_status st = akx::reduce(ctx, src, (int64_t)n, &total, add_f32{});
    if (n == 0) {
      cr_assert_eq(st, AKX_ERROR_INVALID_ARGUMENT, "an empty reduction without identity");
    } else {
      cr_assert_eq(st, AKX_SUCCESS, "%s", akx_last_error());
      cr_assert_eq(total, (float)(s - 10.0), "reduce: %g, expected %g", total, s - 10.0);
    }
    tfx_free(ctx, src);
    tfx_free(ctx, dst);
  }
}

Test(akx_cuh, double_add_without_identity_in_place) {
  if (!tfx_is_sim(ctx)) cr_skip_test("this file's kernels are compiled for the sim");
  const size_t n = 30000;
  std::vector<double> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = (double)((int)(ref_rand(2, i) % 1001) - 500) * 0.25;
  double *buf = upload(x);
  cr_assert_eq(akx::scan_inclusive(ctx, buf, buf, (int64_t)n, add_f64{}), AKX_SUCCESS, "%s",
               akx_last_error());
  std::vector<double> y = download(buf, n);
  double s = 0;
  for (size_t i = 0; i < n; ++i) {
    s += x[i];
    cr_assert_eq(y[i], s, "element %zu is %g, expected %g", i, y[i], s);
  }
  tfx_free(ctx, buf);
}

template <class F>
static void check_matrices(size_t n, uint64_t seed) {
  std::vector<mat2> m = matrices(n > 0 ? n : 1, seed);
  mat2 *src = upload(m), *dst = static_cast<mat2 *>(tfx_alloc(ctx, m.size() * sizeof(mat2)));
  cr_assert_eq(akx::scan_inclusive(ctx, dst, src, (int64_t)n, F{}), AKX_SUCCESS, "%s", akx_last_error());
  std::vector<mat2> y = download(dst, n);
  mat2 p = m.empty() ? mat2{1, 0, 0, 1} : m[0];
  for (size_t i = 0; i < n; ++i) {
    if (i) p = mul(p, m[i]);
    cr_assert(same(y[i], p), "n %zu: product %zu differs ({%u %u %u %u}, expected {%u %u %u %u})", n, i,
              y[i].a, y[i].b, y[i].c, y[i].d, p.a, p.b, p.c, p.d);
  }
  const mat2 init{2, 1, 1, 1};
  cr_assert_eq(akx::scan_exclusive(ctx, dst, src, (int64_t)n, init, F{}), AKX_SUCCESS);
  y = download(dst, n);
  p = init;
  for (size_t i = 0; i < n; ++i) {
    cr_assert(same(y[i], p), "exclusive n %zu: product %zu differs", n, i);
    p = mul(p, m[i]);
  }
  mat2 r{};
  if (n > 0) {
    cr_assert_eq(akx::reduce(ctx, src, (int64_t)n, &r, F{}), AKX_SUCCESS, "%s", akx_last_error());
    mat2 q = m[0];
    for (size_t i = 1; i < n; ++i) q = mul(q, m[i]);
    cr_assert(same(r, q), "reduce of %zu matrices differs", n);
  }
  tfx_free(ctx, src);
  tfx_free(ctx, dst);
}

Test(akx_cuh, matrix_product_keeps_order) {
  if (!tfx_is_sim(ctx)) cr_skip_test("this file's kernels are compiled for the sim");
  const size_t sizes[] = {1, 1023, 1024, 1025, 20000};
  for (size_t n : sizes) {
    check_matrices<matmul>(n, n);
    check_matrices<matmul_noid>(n, n + 1);
  }
}

// A host result while the stream captures a graph (akx__sim_set_capturing, src/core/backend.h):
// refused before anything is enqueued, the result untouched; the scans, asynchronous, run on
// the workspace a warm-up call sized.
Test(akx_cuh, reduce_is_refused_during_a_capture) {
  if (!tfx_is_sim(ctx)) cr_skip_test("the capture hook is the sim's");
  const size_t n = 5000;
  std::vector<float> x(n, 1.0f);
  float *src = upload(x), *dst = static_cast<float *>(tfx_alloc(ctx, n * 4));
  float total = -1;
  cr_assert_eq(akx::reduce(ctx, src, (int64_t)n, &total, add_f32{}), AKX_SUCCESS, "%s",
               akx_last_error());
  cr_assert_eq(akx::scan_inclusive(ctx, dst, src, (int64_t)n, add_f32{}), AKX_SUCCESS, "%s",
               akx_last_error());
  total = -1;
  cr_assert_eq(akx__sim_set_capturing(ctx, 1), AKX_SUCCESS);
  cr_assert_eq(akx_sim_counters_reset(ctx), AKX_SUCCESS);
  const akx_status st = akx::reduce(ctx, src, (int64_t)n, &total, add_f32{});
  akx_sim_kernel_counters k{};
  cr_assert_eq(akx_sim_counters_get(ctx, &k, nullptr, 0, nullptr), AKX_SUCCESS);
  cr_expect_eq(st, AKX_ERROR_UNSUPPORTED, "%s: %s", akx_status_string(st), akx_last_error());
  cr_expect(strstr(akx_last_error(), "akx::reduce") && strstr(akx_last_error(), "capturing"),
            "the sentence: %s", akx_last_error());
  cr_expect_eq(k.launches, 0u, "the refused reduce launched %llu kernels",
               (unsigned long long)k.launches);
  cr_expect_eq(akx::scan_inclusive(ctx, dst, src, (int64_t)n, add_f32{}), AKX_SUCCESS,
               "a scan during the capture: %s", akx_last_error());
  cr_assert_eq(akx__sim_set_capturing(ctx, 0), AKX_SUCCESS);
  cr_expect_eq(total, -1.0f, "the refused reduce wrote its result");
  std::vector<float> y = download(dst, n);
  for (size_t i = 0; i < n; ++i)
    cr_assert_eq(y[i], (float)(i + 1), "element %zu is %g", i, y[i]);
  tfx_free(ctx, src);
  tfx_free(ctx, dst);
}
