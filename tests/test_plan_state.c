/* The planner owns validation: a *_workspace_size query runs exactly the checks of its call
 * (the same status and sentence), and a call that fails leaves the context as it was (its
 * workspace, its allocation count, the sim's counters). The scan tile's shared memory is one
 * such check: runs and static scratch together against the device's per-block limit. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "akx_sim.h"
#include "fixture.h"

static akx_context *ctx;
static void setup(void) { ctx = tfx_open(); }
static void teardown(void) { tfx_close(ctx); }
TestSuite(plan_state, .init = setup, .fini = teardown);

typedef struct {
  int64_t ws_bytes, ws_allocs;
  uint64_t launches;
} state;

static state state_of(void) {
  akx_context_info_t info;
  cr_assert_eq(akx_context_info(ctx, &info), AKX_SUCCESS);
  state s = {info.workspace_bytes, info.workspace_allocations, 0};
  if (tfx_is_sim(ctx)) {
    akx_sim_kernel_counters total;
    cr_assert_eq(akx_sim_counters_get(ctx, &total, NULL, 0, NULL), AKX_SUCCESS);
    s.launches = total.launches;
  }
  return s;
}
static void assert_same_state(state a, state b, const char *what) {
  cr_assert_eq(a.ws_bytes, b.ws_bytes, "%s: the workspace changed size", what);
  cr_assert_eq(a.ws_allocs, b.ws_allocs, "%s: the workspace was reallocated", what);
  cr_assert_eq(a.launches, b.launches, "%s: a kernel was launched", what);
}

/* A scan tile too large for the device: refused by the query and by the call, alike, and the
 * call changes nothing. */
Test(plan_state, scan_tile_over_the_shared_limit) {
  akx_context_info_t info;
  cr_assert_eq(akx_context_info(ctx, &info), AKX_SUCCESS);
  const int64_t n = 1 << 16;
  double *src = tfx_alloc(ctx, (size_t)n * 16), *dst = tfx_alloc(ctx, (size_t)n * 16);
  const akx_array s = akx_vector(src, AKX_COMPLEX128, n), d = akx_vector(dst, AKX_COMPLEX128, n);
  akx_scan_opts o = akx_scan_opts_default();
  o.acc = AKX_COMPLEX128;
  o.block_size = 256;
  o.items_per_thread = 64; /* 256 KiB of runs: more than the h200's 227 KiB per block */
  /* a small call first, so that the context holds a cached workspace to keep */
  akx_scan_opts small = akx_scan_opts_default();
  small.acc = AKX_COMPLEX128;
  cr_assert_eq(akx_scan(ctx, &d, &s, AKX_OP_ADD, 0, &small), AKX_SUCCESS, "%s", akx_last_error());
  const state before = state_of();
  size_t ws = 12345;
  const akx_status q = akx_scan_workspace_size(ctx, &d, &s, AKX_OP_ADD, 0, &o, &ws);
  char qs[1024];
  snprintf(qs, sizeof qs, "%s", akx_last_error());
  const akx_status c = akx_scan(ctx, &d, &s, AKX_OP_ADD, 0, &o);
  cr_assert_eq(q, AKX_ERROR_INVALID_ARGUMENT, "the query: %s (%s)", akx_status_string(q), qs);
  cr_assert_eq(c, q, "the call: %s", akx_status_string(c));
  cr_assert_str_eq(akx_last_error(), qs, "the same sentence");
  cr_assert(strstr(qs, "opts->block_size") && strstr(qs, "opts->items_per_thread") && strstr(qs, "shared memory"),
            "\"%s\"", qs);
  cr_assert_eq(ws, 12345, "the query wrote *bytes on failure");
  assert_same_state(before, state_of(), "a refused scan");
  /* the same for findall's planner is not reachable (its tuning is fixed); slices too: */
  const int64_t shape[2] = {4, n / 4};
  const akx_array s2 = akx_array_c(src, AKX_COMPLEX128, 2, shape), d2 = akx_array_c(dst, AKX_COMPLEX128, 2, shape);
  cr_assert_eq(akx_scan_workspace_size(ctx, &d2, &s2, AKX_OP_ADD, 1, &o, &ws), AKX_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(akx_scan(ctx, &d2, &s2, AKX_OP_ADD, 1, &o), AKX_ERROR_INVALID_ARGUMENT);
  assert_same_state(before, state_of(), "a refused scan along a dim");
  tfx_free(ctx, dst);
  tfx_free(ctx, src);
}

/* Tiles past 48 KiB of runs plus scratch, within the device's opt-in maximum, run and are right:
 * float32 256 x 48 and float64 256 x 24 (48 KiB of runs each), float64 256 x 64 (128 KiB). */
static void check_big_tile(akx_dtype t, int32_t bd, int32_t ipt) {
  const int64_t n = (int64_t)bd * ipt * 3 + 17;
  const size_t sz = akx_dtype_size(t);
  unsigned char *h = tfx_xmalloc((size_t)n * sz), *got = tfx_xmalloc((size_t)n * sz);
  for (int64_t i = 0; i < n; ++i) {
    const double v = (double)(i % 5) - 2.0;
    if (t == AKX_FLOAT32) { float f = (float)v; memcpy(h + i * 4, &f, 4); }
    else memcpy(h + i * 8, &v, 8);
  }
  void *src = tfx_upload(ctx, h, (size_t)n * sz), *dst = tfx_alloc(ctx, (size_t)n * sz);
  const akx_array s = akx_vector(src, t, n), d = akx_vector(dst, t, n);
  akx_scan_opts o = akx_scan_opts_default();
  o.acc = t;
  o.block_size = bd;
  o.items_per_thread = ipt;
  size_t ws;
  cr_assert_eq(akx_scan_workspace_size(ctx, &d, &s, AKX_OP_ADD, 0, &o, &ws), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(akx_scan(ctx, &d, &s, AKX_OP_ADD, 0, &o), AKX_SUCCESS, "%s x %d x %d: %s", akx_dtype_name(t),
               (int)bd, (int)ipt, akx_last_error());
  tfx_to_host(ctx, got, dst, (size_t)n * sz);
  double run = 0;
  for (int64_t i = 0; i < n; ++i) {
    run += (double)(i % 5) - 2.0; /* small integers: exact in both types */
    const double g = t == AKX_FLOAT32 ? (double)((float *)got)[i] : ((double *)got)[i];
    cr_assert_eq(g, run, "%s element %lld", akx_dtype_name(t), (long long)i);
  }
  tfx_free(ctx, dst);
  tfx_free(ctx, src);
  free(h);
  free(got);
}

Test(plan_state, tiles_past_48_kib_run) {
  check_big_tile(AKX_FLOAT32, 256, 48);
  check_big_tile(AKX_FLOAT64, 256, 24);
  check_big_tile(AKX_FLOAT64, 256, 64);
}

/* Each size query refuses what its call refuses, with the same status and sentence. */
Test(plan_state, queries_agree_with_calls) {
  float *buf = tfx_alloc(ctx, 4096);
  const akx_array v = akx_vector(buf, AKX_FLOAT32, 100);
  akx_reduce_opts bad_bs = akx_reduce_opts_default();
  bad_bs.block_size = 48;
  akx_reduce_opts bad_acc = akx_reduce_opts_default();
  bad_acc.acc = AKX_INT8;
  const akx_reduce_opts *opts[] = {&bad_bs, &bad_acc};
  const state before = state_of();
  for (int k = 0; k < 2; ++k) {
    size_t ws = 7;
    const akx_status q = akx_mapreduce_workspace_size(ctx, &v, AKX_MAP_IDENTITY, AKX_OP_ADD, opts[k], &ws);
    char qs[1024];
    snprintf(qs, sizeof qs, "%s", akx_last_error());
    double r;
    const akx_status c = akx_mapreduce(ctx, &v, AKX_MAP_IDENTITY, AKX_OP_ADD, opts[k], &r, AKX_HOST);
    cr_assert_neq(q, AKX_SUCCESS);
    cr_assert_eq(q, c);
    cr_assert_str_eq(qs, akx_last_error());
    cr_assert_eq(ws, 7);
    const int64_t shape[2] = {10, 10}, dshape[2] = {10, 1};
    const akx_array s2 = akx_array_c(buf, AKX_FLOAT32, 2, shape), d2 = akx_array_c(buf + 200, AKX_FLOAT32, 2, dshape);
    const akx_status q2 = akx_reduce_dims_workspace_size(ctx, &d2, &s2, AKX_MAP_IDENTITY, AKX_OP_ADD, opts[k], &ws);
    snprintf(qs, sizeof qs, "%s", akx_last_error());
    const akx_status c2 = akx_reduce_dims(ctx, &d2, &s2, AKX_MAP_IDENTITY, AKX_OP_ADD, opts[k]);
    cr_assert_neq(q2, AKX_SUCCESS);
    cr_assert_eq(q2, c2);
    cr_assert_str_eq(qs, akx_last_error());
  }
  assert_same_state(before, state_of(), "refused reductions");
  tfx_free(ctx, buf);
}
