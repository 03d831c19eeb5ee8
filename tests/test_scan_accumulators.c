/* Scans take every accumulator the reductions take and store to any dst dtype (include/akx.h,
 * akx_scan and akx_reduce_opts), with int64 for unsigned sources narrower than 64 bits
 * (PyTorch's promotion of cumsum(uint8)) in reductions too. Combinations outside the prebuilt
 * set compile at run time on first use (src/jit/builtin_instance.h): here they must give the
 * host reference's values in the three scan shapes, and leave the counters of the kernel
 * cache showing that they did compile. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include "akx.h"
#include "akx_layer.h"
#include "fixture.h"
#include "scan_check.h"

static akx_context *ctx;
static void setup(void) { ctx = tfx_open(); }
static void teardown(void) { tfx_close(ctx); }
TestSuite(scan_accumulators, .init = setup, .fini = teardown, .timeout = 600);

/* The explicit accumulators include/akx.h allows for a source of dtype t (besides AUTO and t). */
static int wide_accs(akx_dtype t, akx_dtype out[4]) {
  int n = 0;
  if (ref_is_bool(t) || ref_is_sint(t)) { out[n++] = AKX_INT64; out[n++] = AKX_FLOAT64; }
  else if (ref_is_uint(t)) {
    out[n++] = AKX_UINT64;
    out[n++] = AKX_FLOAT64;
    if (t != AKX_UINT64) out[n++] = AKX_INT64;
  } else if (ref_is_float(t)) { out[n++] = AKX_FLOAT32; out[n++] = AKX_FLOAT64; }
  else if (ref_is_complex(t)) out[n++] = AKX_COMPLEX128;
  return n;
}

static void run(const tfx_layout *L, const tsc_case *c, uint64_t seed) {
  char msg[1024];
  cr_assert(tsc_run(ctx, L, c, seed, msg, sizeof msg), "%s", msg);
}

/* Every (source, explicit wide accumulator) with ADD into a third dtype (each is a unit
 * compiled at run time: one per combination keeps the suite's compile time near a minute),
 * on a vector (the tile scan), rows (the slice scan) and columns (the column scan); MAX and
 * XOR once each, into the source's dtype. */
static void run_shapes(akx_dtype t, akx_dtype acc, akx_op op, akx_dtype dst, uint64_t seed) {
  const int64_t pshape[2] = {40, 33};
  const int64_t start[2] = {0, 0}, shape[2] = {40, 33}, step[2] = {1, 1};
  const tfx_layout vec = tfx_layout_vector(3001);
  const tfx_layout mat = tfx_layout_sub(2, pshape, start, shape, step);
  tsc_case c = tsc_case_make(t, op);
  c.acc = acc;
  c.dst_t = dst;
  c.fill_flags = REF_FILL_ROUGH;
  c.dim = AKX_DIM_ALL;
  run(&vec, &c, seed);
  c.dim = 1; /* rows: the slice scan */
  c.exclusive = 1;
  c.with_init = 1;
  run(&mat, &c, seed + 1);
  c.dim = 0; /* columns of a C-order matrix: the column scan */
  c.exclusive = 0;
  run(&mat, &c, seed + 2);
}

Test(scan_accumulators, every_wide_accumulator_into_any_dst) {
  int checked = 0;
  for (int t = AKX_BOOL; t <= AKX_COMPLEX128; ++t) {
    akx_dtype accs[4];
    const int na = wide_accs((akx_dtype)t, accs);
    for (int a = 0; a < na; ++a) {
      const akx_dtype third = ref_is_complex(accs[a]) ? AKX_COMPLEX64 : accs[a] == AKX_FLOAT64 ? AKX_INT32 : AKX_FLOAT64;
      run_shapes((akx_dtype)t, accs[a], AKX_OP_ADD, third, (uint64_t)(t * 10 + a));
      ++checked;
    }
  }
  cr_assert_eq(checked, 31, "%d (source, accumulator) pairs", checked);
  run_shapes(AKX_INT8, AKX_INT64, AKX_OP_MAX, AKX_INT8, 500);
  run_shapes(AKX_UINT16, AKX_INT64, AKX_OP_XOR, AKX_UINT16, 501);
  run_shapes(AKX_FLOAT16, AKX_FLOAT64, AKX_OP_MAX, AKX_BFLOAT16, 502);
}

/* numpy's and PyTorch's cumsum of uint8 into int64: values past 255 and a dst of int64; the
 * AUTO accumulator of a uint8 ADD stays uint64. */
Test(scan_accumulators, uint8_cumsum_into_int64) {
  enum { N = 1000 };
  uint8_t h[N];
  for (int i = 0; i < N; ++i) h[i] = (uint8_t)(250 + i % 6);
  void *src = tfx_upload(ctx, h, sizeof h);
  int64_t *dst = tfx_alloc(ctx, N * sizeof(int64_t));
  const akx_array s = akx_vector(src, AKX_UINT8, N), d = akx_vector(dst, AKX_INT64, N);
  akx_scan_opts o = akx_scan_opts_default();
  o.acc = AKX_INT64;
  cr_assert_eq(akx_scan(ctx, &d, &s, AKX_OP_ADD, 0, &o), AKX_SUCCESS, "%s", akx_last_error());
  int64_t got[N];
  tfx_to_host(ctx, got, dst, sizeof got);
  int64_t want = 0;
  for (int i = 0; i < N; ++i) {
    want += h[i];
    cr_assert_eq(got[i], want, "element %d: %lld, want %lld", i, (long long)got[i], (long long)want);
  }
  /* The same promotion in a reduction. */
  akx_reduce_opts r = akx_reduce_opts_default();
  r.acc = AKX_INT64;
  int64_t sum = -1;
  cr_assert_eq(akx_mapreduce(ctx, &s, AKX_MAP_IDENTITY, AKX_OP_ADD, &r, &sum, AKX_HOST), AKX_SUCCESS, "%s",
               akx_last_error());
  cr_assert_eq(sum, want);
  akx_dtype rt = AKX_DTYPE_AUTO;
  cr_assert_eq(akx_mapreduce_result_dtype(&s, AKX_MAP_IDENTITY, AKX_OP_ADD, &r, &rt), AKX_SUCCESS);
  cr_assert_eq(rt, AKX_INT64);
  /* uint64 has no int64 promotion: it would not hold every value. */
  void *src64 = tfx_alloc(ctx, N * sizeof(uint64_t));
  const akx_array s64 = akx_vector(src64, AKX_UINT64, N);
  cr_assert_eq(akx_scan(ctx, &d, &s64, AKX_OP_ADD, 0, &o), AKX_ERROR_UNSUPPORTED);
  cr_assert(strstr(akx_last_error(), "opts->acc"), "%s", akx_last_error());
  tfx_free(ctx, src64);
  tfx_free(ctx, src);
  tfx_free(ctx, dst);
}

/* A combination outside the prebuilt set is compiled once, then served from memory. */
Test(scan_accumulators, run_time_combinations_compile_once) {
  const tfx_layout vec = tfx_layout_vector(777);
  tsc_case c = tsc_case_make(AKX_INT16, AKX_OP_ADD);
  c.acc = AKX_FLOAT64; /* not prebuilt: neither AUTO (int64) nor int16 */
  c.dst_t = AKX_FLOAT32;
  akx_kernel_cache_counters_t before, mid, after;
  akx_kernel_cache_counters(&before);
  run(&vec, &c, 1);
  akx_kernel_cache_counters(&mid);
  run(&vec, &c, 2);
  akx_kernel_cache_counters(&after);
  if (tfx_is_sim(ctx)) {
    cr_assert_eq(mid.compiles + mid.disk_hits, before.compiles + before.disk_hits + 1,
                 "the first call builds (or loads) one unit");
    cr_assert_eq(after.compiles, mid.compiles, "the second call compiles nothing");
    cr_assert_eq(after.disk_hits, mid.disk_hits);
    cr_assert_gt(after.memory_hits, mid.memory_hits);
  }
}
