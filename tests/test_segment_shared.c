/* The segment tile's static shared memory as the planner counts it
 * (src/segmented/segment_shared.cpp, akx__segment_static_shared) against what the sim lays out
 * for the kernel (every AKX_SHARED array of kernels/akx/segment_tile.cuh, 16-byte aligned:
 * akx_sim_kernel_counters.last_static_smem). A static array the count misses lets the planner
 * accept a tile whose static and dynamic parts together are over the device's per-block limit:
 * the launch then fails on the GPU instead of the call being refused with a sentence. The four
 * kernels (segmented reduce and scan, reduce and scan by key), node sizes from 16 to 32 bytes,
 * built-in ops and a user op (its segment starts and max-scan scratch). */
#include <criterion/criterion.h>
#include <string.h>

#include "akx_sim.h"
#include "internal.h"
#include "reduce_user_ops.h"
#include "jit/user_op.h"
#include "segmented/segment_shared.h"
#include "segmented_check.h"

static akx_context *ctx;
static void setup(void) { ctx = tfx_open(); }
static void teardown(void) { tfx_close(ctx); }
TestSuite(segment_shared, .init = setup, .fini = teardown, .timeout = 300);

/* The sim's layout of `kernel`'s static arrays in the last call, rounded up to 16 as the planner
 * pads its last array. */
static int64_t measured_static(const char *kernel) {
  akx_sim_kernel_counters k[16];
  int32_t n = 0;
  cr_assert_eq(akx_sim_counters_get(ctx, NULL, k, 16, &n), AKX_SUCCESS, "%s", akx_last_error());
  for (int32_t i = 0; i < n && i < 16; ++i)
    if (strcmp(k[i].kernel, kernel) == 0) return (int64_t)AKX__ROUND_UP(k[i].last_static_smem, 16);
  cr_assert_fail("no launch of %s in the call", kernel);
  return -1;
}

static void expect_planned(const char *kernel, akx_dtype acc, const struct akx__user_op *u, const char *what) {
  const size_t node = akx__segment_node_size(akx__acc_size(acc, u), akx__acc_align(acc, u));
  const int64_t planned = akx__segment_static_shared(node, u != NULL, strcmp(kernel, "segmented_reduce") == 0);
  const int64_t seen = measured_static(kernel);
  cr_expect_eq(planned, seen, "%s (%s, %zu-byte nodes): the planner counts %lld static shared bytes, the kernel's "
               "AKX_SHARED arrays take %lld",
               kernel, what, node, (long long)planned, (long long)seen);
}

Test(segment_shared, built_in_ops_every_kernel) {
  if (!tfx_is_sim(ctx)) cr_skip_test("the layout is measured on the sim");
  static const akx_dtype dtypes[] = {AKX_INT32, AKX_FLOAT64, AKX_COMPLEX128};
  for (int d = 0; d < 3; ++d) {
    tsg_offsets o = tsg_power_law(300, 120, 5);
    tsg_case c = tsg_case_make(dtypes[d], AKX_OP_ADD);
    const akx_dtype acc = dtypes[d] == AKX_INT32 ? AKX_INT64 : dtypes[d];
    char msg[1536];
    const char *name = akx_dtype_name(dtypes[d]);
    cr_assert_eq(akx_sim_counters_reset(ctx), AKX_SUCCESS);
    cr_assert(tsg_reduce_run(ctx, &c, &o, 1, NULL, msg, sizeof msg), "%s", msg);
    expect_planned("segmented_reduce", acc, NULL, name);
    cr_assert_eq(akx_sim_counters_reset(ctx), AKX_SUCCESS);
    cr_assert(tsg_scan_run(ctx, &c, &o, 2, NULL, msg, sizeof msg), "%s", msg);
    expect_planned("segmented_scan", acc, NULL, name);
    tsg_free(&o);
    tsg_offsets runs = tsg_uniform(40, 7);
    cr_assert_eq(akx_sim_counters_reset(ctx), AKX_SUCCESS);
    cr_assert(tsg_reduce_by_key_run(ctx, &c, &runs, 3, NULL, msg, sizeof msg), "%s", msg);
    expect_planned("reduce_by_key", acc, NULL, name);
    cr_assert_eq(akx_sim_counters_reset(ctx), AKX_SUCCESS);
    cr_assert(tsg_scan_by_key_run(ctx, &c, &runs, 4, NULL, msg, sizeof msg), "%s", msg);
    expect_planned("scan_by_key", acc, NULL, name);
    tsg_free(&runs);
  }
}

/* A user op: the tile adds its segment starts and the max-scan's scratch. */
Test(segment_shared, user_op) {
  if (!tfx_is_sim(ctx)) cr_skip_test("the layout is measured on the sim");
  const akx_user_op_desc d = {WEIGHTED_SRC, "double", "w_add", "w_zero", "w_map", NULL};
  const akx_op op = tfx_user_op(ctx, &d);
  tsg_offsets o = tsg_power_law(300, 120, 5);
  float *vals = tfx_xmalloc((size_t)o.n * sizeof(float) + 4);
  for (int64_t i = 0; i < o.n; ++i) vals[i] = (float)(i % 9);
  tsg_rig g = tsg_rig_make(ctx, AKX_FLOAT32, vals, &o, AKX_INT32, AKX_FLOAT64, o.nseg);
  cr_assert_eq(akx_sim_counters_reset(ctx), AKX_SUCCESS);
  const akx_status st = akx_segmented_reduce(ctx, &g.dst.dev, &g.src.dev, &g.offs.dev, AKX_MAP_IDENTITY, op, NULL);
  cr_assert_eq(st, AKX_SUCCESS, "%s (%s)", akx_status_string(st), akx_last_error());
  cr_assert_eq(akx_synchronize(ctx), AKX_SUCCESS);
  const struct akx__user_op *u = akx__user_op_find(ctx, op);
  cr_assert(u != NULL, "no user op behind %d", (int)op);
  expect_planned("segmented_reduce", AKX_DTYPE_AUTO, u, "the user op \"double\"");
  free(vals);
  tsg_rig_free(ctx, &g);
  tsg_free(&o);
}
