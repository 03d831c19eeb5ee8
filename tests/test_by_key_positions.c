/* The by-key calls with a user op, whose map sees each element's position within its run
 * (include/akx.h, akx_user_op_desc): where a tile learns the start of the run holding its first
 * element (kernels/akx/segment_tile.cuh, step 2), and what that costs.
 * - counters: one run of 2^20 int32 keys, a user-op sum, reduce_by_key and scan_by_key: a
 *   constant times n/32 global load requests (a tile does not walk back through the keys of
 *   the tiles before it), the model's time within 1.3x of the built-in ADD's on the same data,
 *   values exact;
 * - values against a host reference with a map that depends on the position (x * (i + 1) in
 *   int64): runs spanning many tiles (up to a look-back node of level 2: more than 1024 tiles),
 *   runs of 1, mixed lengths, under small tiles (block 32 and 64, 1 to 4 items a thread) and
 *   under shuffled schedules of the sim. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "akx_sim.h"
#include "segmented_check.h"

static akx_context *ctx;
static void setup(void) { ctx = tfx_open(); }
static void teardown(void) {
  unsetenv("AKX_SIM_SCHEDULE");
  tfx_close(ctx);
}
TestSuite(by_key_positions, .init = setup, .fini = teardown, .timeout = 280);

#define COUNT(a) (int)(sizeof(a) / sizeof((a)[0]))

/* A sum in int64, each element as it is (the counters' op: the built-in ADD's values). */
static const char SUM_SRC[] =
    "AKX_HD int64_t s_add(int64_t a, int64_t b) { return a + b; }\n"
    "AKX_HD int64_t s_zero() { return 0; }\n"
    "template <class S> AKX_HD int64_t s_map(S x, int64_t) { return (int64_t)x; }\n";
/* A sum of x * (i + 1), i the position within the run: a position off by one anywhere shows. */
static const char WEIGHT_SRC[] =
    "AKX_HD int64_t w_add(int64_t a, int64_t b) { return a + b; }\n"
    "AKX_HD int64_t w_zero() { return 0; }\n"
    "template <class S> AKX_HD int64_t w_map(S x, int64_t i) { return (int64_t)x * (i + 1); }\n";

/* Values in [-1000, 1000]. */
static int32_t *values(int64_t n, uint64_t seed) {
  int32_t *v = tfx_xmalloc((size_t)(n > 0 ? n : 1) * 4);
  for (int64_t i = 0; i < n; ++i) v[i] = (int32_t)(ref_rand(seed, (uint64_t)i) % 2001) - 1000;
  return v;
}

/* One call's counters: the totals since the last reset. */
static akx_sim_kernel_counters totals(void) {
  akx_sim_kernel_counters t;
  cr_assert_eq(akx_sim_counters_get(ctx, &t, NULL, 0, NULL), AKX_SUCCESS, "%s", akx_last_error());
  return t;
}

/* reduce_by_key (scan 0) or scan_by_key (scan 1) of int32 keys and values with op into int64
 * outputs; `weighted`: the values want x * (i + 1) (the host's reference), else x. Checks every
 * output against the host; returns the call's counters (on the sim). */
static akx_sim_kernel_counters by_key_call(int scan, const tsg_offsets *o, const int32_t *keys, const int32_t *vals,
                                           akx_op op, int weighted, int32_t block, int32_t ipt, const char *what) {
  const int64_t n = o->n, nr = o->nseg;
  int32_t *kd = tfx_upload(ctx, keys, (size_t)n * 4), *vd = tfx_upload(ctx, vals, (size_t)n * 4);
  const akx_array kv = akx_vector(kd, AKX_INT32, n), vv = akx_vector(vd, AKX_INT32, n);
  const int64_t outs = scan ? n : nr;
  int64_t *got = tfx_xmalloc((size_t)outs * 8);
  int32_t *ko = tfx_xmalloc((size_t)(nr > 0 ? nr : 1) * 4);
  int64_t *od = tfx_alloc(ctx, (size_t)outs * 8);
  int32_t *kod = scan ? NULL : tfx_alloc(ctx, (size_t)nr * 4);
  const akx_array ov = akx_vector(od, AKX_INT64, outs);
  if (tfx_is_sim(ctx)) cr_assert_eq(akx_sim_counters_reset(ctx), AKX_SUCCESS);
  akx_status st;
  if (scan) {
    akx_scan_opts so = akx_scan_opts_default();
    so.block_size = block;
    so.items_per_thread = ipt;
    st = akx_scan_by_key(ctx, &ov, &kv, &vv, op, &so);
  } else {
    akx_reduce_opts ro = akx_reduce_opts_default();
    ro.block_size = block;
    ro.items_per_thread = ipt;
    ro.acc = op < 1024 ? AKX_INT64 : AKX_DTYPE_AUTO;
    const akx_array kov = akx_vector(kod, AKX_INT32, nr);
    int64_t runs = -1;
    st = akx_reduce_by_key(ctx, &kov, &ov, &kv, &vv, AKX_MAP_IDENTITY, op, &ro, &runs);
    cr_assert_eq(runs, nr, "%s: %lld runs, the host's %lld", what, (long long)runs, (long long)nr);
  }
  cr_assert_eq(st, AKX_SUCCESS, "%s: %s (%s)", what, akx_status_string(st), akx_last_error());
  akx_sim_kernel_counters c;
  memset(&c, 0, sizeof c);
  if (tfx_is_sim(ctx)) c = totals();
  tfx_to_host(ctx, got, od, (size_t)outs * 8);
  if (!scan) tfx_to_host(ctx, ko, kod, (size_t)nr * 4);
  for (int64_t r = 0; r < nr; ++r) {
    int64_t sum = 0;
    for (int64_t i = o->off[r]; i < o->off[r + 1]; ++i) {
      sum += (int64_t)vals[i] * (weighted ? i - o->off[r] + 1 : 1);
      if (scan)
        cr_assert_eq(got[i], sum, "%s: run %lld [%lld, %lld), element %lld: %lld, expected %lld", what, (long long)r,
                     (long long)o->off[r], (long long)o->off[r + 1], (long long)i, (long long)got[i], (long long)sum);
    }
    if (!scan) {
      cr_assert_eq(got[r], sum, "%s: run %lld [%lld, %lld): %lld, expected %lld", what, (long long)r,
                   (long long)o->off[r], (long long)o->off[r + 1], (long long)got[r], (long long)sum);
      cr_assert_eq(ko[r], keys[o->off[r]], "%s: run %lld's key %d, expected %d", what, (long long)r, ko[r],
                   keys[o->off[r]]);
    }
  }
  free(got);
  free(ko);
  tfx_free(ctx, kd);
  tfx_free(ctx, vd);
  tfx_free(ctx, od);
  if (kod) tfx_free(ctx, kod);
  return c;
}

static int32_t *keys_of(const tsg_offsets *o, uint64_t seed) {
  int32_t *k = tfx_xmalloc((size_t)(o->n > 0 ? o->n : 1) * 4);
  tsg_fill_keys(k, AKX_INT32, o, seed);
  return k;
}

/* ---- counters --------------------------------------------------------------------------------- */

/* One run of 2^18 keys (2^20 took four times as long and asserts the same: the walk would cost
 * n / (2 x tile) times the loads measured here). Each tile's first element lies inside the run,
 * so a tile that found the run's start by walking back through the keys read every key before
 * it: n^2 / (2 x tile) keys in all. Here the loads are the keys and the values once (n/32 requests each for 4-byte
 * keys and values) and the look-backs' few, and the user op's time on the model is the
 * built-in ADD's but for the positions' look-back. */
Test(by_key_positions, one_long_run_user_sum_is_linear_and_near_the_builtin_add) {
  if (!tfx_is_sim(ctx)) cr_skip_test("the sim's counters");
  const int64_t n = (int64_t)1 << 18;
  tsg_offsets o = tsg_uniform(1, n);
  int32_t *keys = keys_of(&o, 3), *vals = values(n, 5);
  const akx_user_op_desc d = {SUM_SRC, "int64_t", "s_add", "s_zero", "s_map", NULL};
  const akx_op user = tfx_user_op(ctx, &d);
  for (int scan = 0; scan < 2; ++scan) {
    const char *call = scan ? "scan_by_key" : "reduce_by_key";
    char what[96];
    snprintf(what, sizeof what, "%s, ADD", call);
    (void)by_key_call(scan, &o, keys, vals, AKX_OP_ADD, 0, 0, 0, what); /* the workspace sized */
    const akx_sim_kernel_counters add = by_key_call(scan, &o, keys, vals, AKX_OP_ADD, 0, 0, 0, what);
    snprintf(what, sizeof what, "%s, the user op's sum", call);
    (void)by_key_call(scan, &o, keys, vals, user, 0, 0, 0, what);
    const akx_sim_kernel_counters mine = by_key_call(scan, &o, keys, vals, user, 0, 0, 0, what);
    const uint64_t per32 = (uint64_t)(n / 32);
    cr_log_info("%s: load requests %llu (ADD %llu, n/32 = %llu); model %.2f us (ADD %.2f us, %.3fx)", call,
                (unsigned long long)mine.global_load.requests, (unsigned long long)add.global_load.requests,
                (unsigned long long)per32, mine.model_us, add.model_us, mine.model_us / add.model_us);
    cr_assert_gt(add.global_load.requests, per32, "%s: the counters saw no load", what);
    cr_assert_gt(add.model_us, 0.0, "%s: no model time", what);
    cr_assert_leq(mine.global_load.requests, 3 * per32,
                  "%s: %llu global load requests for one run of %lld keys, more than 3 x n/32 = %llu (the "
                  "built-in ADD: %llu)", what, (unsigned long long)mine.global_load.requests, (long long)n,
                  (unsigned long long)(3 * per32), (unsigned long long)add.global_load.requests);
    cr_assert_leq(mine.model_us, 1.3 * add.model_us, "%s: %.2f us on the model, more than 1.3x the built-in ADD's %.2f us",
                  what, mine.model_us, add.model_us);
  }
  free(keys);
  free(vals);
  tsg_free(&o);
}

/* One run of 2^k keys with the user op's sum, values checked, on any backend: k from
 * AKX_TEST_ONE_RUN_LOG2 (bench/gpu_check.sh's shared-state stage runs 22 on the GPU, where the
 * walk this replaced took seconds), 16 by default. */
Test(by_key_positions, one_long_run_user_sum_values_on_any_backend, .timeout = 280) {
  const char *e = getenv("AKX_TEST_ONE_RUN_LOG2");
  const int k = e ? atoi(e) : 16;
  cr_assert(k >= 1 && k <= 28, "AKX_TEST_ONE_RUN_LOG2=%s: 1..28", e);
  const int64_t n = (int64_t)1 << k;
  tsg_offsets o = tsg_uniform(1, n);
  int32_t *keys = keys_of(&o, 7), *vals = values(n, 9);
  const akx_user_op_desc d = {SUM_SRC, "int64_t", "s_add", "s_zero", "s_map", NULL};
  const akx_op user = tfx_user_op(ctx, &d);
  (void)by_key_call(0, &o, keys, vals, user, 0, 0, 0, "reduce_by_key, one run, the user op's sum");
  (void)by_key_call(1, &o, keys, vals, user, 0, 0, 0, "scan_by_key, one run, the user op's sum");
  free(keys);
  free(vals);
  tsg_free(&o);
}

/* ---- values ------------------------------------------------------------------------------------- */

/* Runs that span many tiles: one of 40000 keys (1250 tiles of 32: a level-2 node of the
 * look-back's tree), a few long ones with short ones between, runs of 1, mixed lengths. */
enum { N_PATTERNS = 5 };
static tsg_offsets pattern(int k) {
  switch (k) {
    case 0: { tsg_offsets o = tsg_uniform(1, 40000); o.name = "one run of 40000"; return o; }
    case 1: { tsg_offsets o = tsg_uniform(2000, 1); o.name = "runs of 1"; return o; }
    case 2: {
      tsg_offsets o = tsg_one_big(9000, 300, 21);
      for (int64_t s = 0; s <= o.nseg; ++s) o.off[s] += s; /* no empty run */
      o.n = o.off[o.nseg];
      o.name = "one run of 9001 among short ones";
      return o;
    }
    case 3: {
      const int64_t e[] = {0, 1, 700, 701, 702, 2500, 2501, 6000};
      return tsg_given(6000, 7, e, "long runs with runs of 1 between");
    }
    default: {
      tsg_offsets o = tsg_power_law(700, 400, 23);
      for (int64_t s = 0; s <= o.nseg; ++s) o.off[s] += s;
      o.n = o.off[o.nseg];
      o.name = "power-law run lengths";
      return o;
    }
  }
}

/* Items per thread from ipt0 to 4 in steps of ipt_step. */
static void weighted_sweep(int32_t blocks0, int32_t blocks1, int32_t ipt0, int32_t ipt_step) {
  const akx_user_op_desc d = {WEIGHT_SRC, "int64_t", "w_add", "w_zero", "w_map", NULL};
  const akx_op op = tfx_user_op(ctx, &d);
  const int32_t blocks[] = {blocks0, blocks1};
  for (int k = 0; k < N_PATTERNS; ++k) {
    tsg_offsets o = pattern(k);
    int32_t *keys = keys_of(&o, (uint64_t)k + 40), *vals = values(o.n, (uint64_t)k + 50);
    for (int b = 0; b < 2; ++b)
      for (int32_t ipt = ipt0; ipt <= 4; ipt += ipt_step)
        for (int scan = 0; scan < 2; ++scan) {
          if (o.n / ((int64_t)blocks[b] * ipt) > 2000 && (ipt + scan) % 2) continue; /* long: half the sweep */
          char what[160];
          snprintf(what, sizeof what, "%s, %s, block %d x %d", scan ? "scan_by_key" : "reduce_by_key", o.name,
                   (int)blocks[b], (int)ipt);
          (void)by_key_call(scan, &o, keys, vals, op, 1, blocks[b], ipt, what);
        }
    free(keys);
    free(vals);
    tsg_free(&o);
  }
}

Test(by_key_positions, position_map_small_tiles) { weighted_sweep(32, 64, 1, 1); }

/* The same under shuffled schedules of the sim's fibers and blocks (tiles publish and poll in
 * other orders): the positions must not depend on which tiles happened to be done. The two
 * seeds share the items per thread out (1 and 3, 2 and 4): every tile size of the sweep above
 * runs shuffled once. */
Test(by_key_positions, position_map_shuffled_schedules) {
  if (!tfx_is_sim(ctx)) cr_skip_test("the sim's schedules");
  for (int seed = 1; seed <= 2; ++seed) {
    char sched[32];
    snprintf(sched, sizeof sched, "random:%d", 900 + seed);
    setenv("AKX_SIM_SCHEDULE", sched, 1);
    tfx_close(ctx);
    ctx = tfx_open();
    weighted_sweep(32, 32 * seed, seed, 2);
  }
}

/* The tuning's own tiles (no overrides), both calls, a few sizes around a tile's multiples. */
Test(by_key_positions, position_map_default_tiles) {
  const akx_user_op_desc d = {WEIGHT_SRC, "int64_t", "w_add", "w_zero", "w_map", NULL};
  const akx_op op = tfx_user_op(ctx, &d);
  const int64_t sizes[] = {1, 4095, 4097, 70001};
  for (int s = 0; s < COUNT(sizes); ++s) {
    const int64_t e[] = {0, sizes[s] / 3, sizes[s] / 3 + 1, sizes[s]};
    tsg_offsets o = tsg_given(sizes[s], sizes[s] >= 3 ? 3 : 1, sizes[s] >= 3 ? e : (const int64_t[]){0, sizes[s]},
                              "three runs");
    int32_t *keys = keys_of(&o, (uint64_t)s), *vals = values(o.n, (uint64_t)s + 9);
    for (int scan = 0; scan < 2; ++scan) {
      char what[96];
      snprintf(what, sizeof what, "%s, n %lld", scan ? "scan_by_key" : "reduce_by_key", (long long)sizes[s]);
      (void)by_key_call(scan, &o, keys, vals, op, 1, 0, 0, what);
    }
    free(keys);
    free(vals);
    tsg_free(&o);
  }
}
