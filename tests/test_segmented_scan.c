/* akx_segmented_scan against the host reference (tests/support/segmented_check.h: every element
 * of every segment, the elements outside [offsets[0], offsets[nseg]) and the guards around dst
 * unwritten, the inputs unwritten):
 * - the segment patterns of tests/test_segmented_reduce.c (all empty, one over src, uniform 1, 31,
 *   32, 33, 1000 and 65537, power law, one 2^20 segment among tiny ones, none, offsets[0] > 0 and
 *   offsets[nseg] < n), int32 and int64 offsets, inclusive and exclusive, with and without init;
 * - every dtype with every op its accumulator allows; dst of another dtype, explicit
 *   accumulators; strided and reversed offsets, src and dst; in place (dst the view of src);
 * - user ops: the affine maps (non-commutative, no identity) restarting at every segment, and a
 *   map that sees the position within the segment (from 0 at every segment);
 * - garbage offsets: success, no sim check, guards intact, deterministic;
 * - bitwise determinism over calls and schedules; the workspace query serves the call (exactly
 *   its bytes, no allocation after) and one launch per call on the sim. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "affine_op.h"
#include "akx_sim.h"
#include "segmented_check.h"

static akx_context *ctx;
static void setup(void) { ctx = tfx_open(); }
static void teardown(void) {
  unsetenv("AKX_SIM_SCHEDULE");
  tfx_close(ctx);
}
TestSuite(segmented_scan, .init = setup, .fini = teardown, .timeout = 280);

#define COUNT(a) (int)(sizeof(a) / sizeof((a)[0]))


static void run(const tsg_case *c, const tsg_offsets *o, uint64_t seed) {
  char msg[1536];
  cr_assert(tsg_scan_run(ctx, c, o, seed, NULL, msg, sizeof msg), "%s", msg);
}

Test(segmented_scan, patterns_inclusive_exclusive_init) {
  for (int k = 0; k < TSG_PATTERNS; ++k) {
    tsg_offsets o = tsg_pattern(k);
    for (int variant = 0; variant < 3; ++variant) {
      tsg_case c = tsg_case_make(AKX_FLOAT32, AKX_OP_ADD);
      c.off_t = (k + variant) % 2 ? AKX_INT32 : AKX_INT64;
      c.exclusive = variant >= 1;
      c.with_init = variant == 2;
      run(&c, &o, (uint64_t)(10 * k + variant));
    }
    tsg_case c = tsg_case_make(AKX_INT32, AKX_OP_ADD);
    c.dst_t = AKX_INT32;
    c.off_t = k % 2 ? AKX_INT64 : AKX_INT32;
    run(&c, &o, 200 + (uint64_t)k);
    c = tsg_case_make(AKX_INT32, AKX_OP_MAX);
    c.exclusive = 1;
    c.with_init = 1; /* MAX has no neutral element: an exclusive MAX needs init */
    run(&c, &o, 300 + (uint64_t)k);
    c.in_place = 1;
    c.exclusive = 0;
    c.with_init = 0;
    run(&c, &o, 400 + (uint64_t)k); /* outside the segments, src's own values stay */
    tsg_free(&o);
  }
}

Test(segmented_scan, one_huge_segment_among_tiny_ones) {
  tsg_offsets o = tsg_one_big(1 << 20, 300, 6);
  tsg_case c = tsg_case_make(AKX_FLOAT32, AKX_OP_ADD);
  run(&c, &o, 1);
  c = tsg_case_make(AKX_INT32, AKX_OP_ADD);
  c.off_t = AKX_INT32;
  c.exclusive = 1;
  c.with_init = 1;
  c.dst_t = AKX_INT32;
  run(&c, &o, 2);
  tsg_free(&o);
}

/* Every dtype with every op its AUTO accumulator allows: inclusive, exclusive (with init where
 * the op has no neutral element), init, over power-law segments (about half empty). */
Test(segmented_scan, every_dtype_and_op) {
  const akx_op ops[] = {AKX_OP_ADD, AKX_OP_MUL, AKX_OP_MIN, AKX_OP_MAX, AKX_OP_AND, AKX_OP_OR, AKX_OP_XOR};
  tsg_offsets o = tsg_power_law(150, 40, 4);
  int runs = 0;
  for (int d = 0; d < TSG_N_DTYPES; ++d)
    for (int k = 0; k < COUNT(ops); ++k) {
      if (ref_resolve_acc(tsg_all_dtypes[d], AKX_MAP_IDENTITY, ops[k], AKX_DTYPE_AUTO) == REF_UNSUPPORTED) continue;
      for (int variant = 0; variant < 3; ++variant) {
        tsg_case c = tsg_case_make(tsg_all_dtypes[d], ops[k]);
        c.exclusive = variant >= 1;
        c.with_init = variant == 2 || (c.exclusive && (ops[k] == AKX_OP_MIN || ops[k] == AKX_OP_MAX));
        c.off_t = (d + k + variant) % 2 ? AKX_INT32 : AKX_INT64;
        run(&c, &o, (uint64_t)(d * 100 + k * 10 + variant));
        ++runs;
      }
    }
  cr_assert_gt(runs, 150, "only %d combinations ran", runs);
  tsg_free(&o);
}

/* Offsets, src and dst strided (every other element) and reversed (step -1); in place over a
 * strided and a reversed src. */
Test(segmented_scan, strided_reversed_and_in_place) {
  tsg_offsets o = tsg_power_law(300, 50, 9);
  const int64_t steps[] = {1, 2, -1};
  int v = 0;
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b)
      for (int d = 0; d < 4; ++d) {
        if ((a != 0) + (b != 0) + (d != 0) > 2) continue;
        tsg_case c = tsg_case_make(v % 2 ? AKX_INT64 : AKX_FLOAT32, v % 3 ? AKX_OP_ADD : AKX_OP_MIN);
        c.off_step = steps[a];
        c.src_step = steps[b];
        c.in_place = d == 3;
        c.dst_step = d == 3 ? 1 : steps[d];
        c.off_t = v % 2 ? AKX_INT32 : AKX_INT64;
        c.exclusive = v % 4 == 1;
        c.with_init = v % 3 == 0 || c.exclusive;
        run(&c, &o, (uint64_t)v++);
      }
  tsg_free(&o);
}

Test(segmented_scan, dst_dtypes_and_accumulators) {
  tsg_offsets o = tsg_power_law(400, 30, 5);
  const struct {
    akx_dtype src, dst, acc;
    akx_op op;
  } rows[] = {
      {AKX_INT8, AKX_INT8, AKX_DTYPE_AUTO, AKX_OP_ADD},       {AKX_FLOAT16, AKX_FLOAT16, AKX_FLOAT16, AKX_OP_ADD},
      {AKX_BOOL, AKX_INT32, AKX_DTYPE_AUTO, AKX_OP_ADD},      {AKX_FLOAT32, AKX_FLOAT64, AKX_DTYPE_AUTO, AKX_OP_ADD},
      {AKX_FLOAT32, AKX_FLOAT32, AKX_FLOAT64, AKX_OP_ADD},    {AKX_INT32, AKX_INT32, AKX_INT32, AKX_OP_ADD},
      {AKX_UINT16, AKX_FLOAT32, AKX_DTYPE_AUTO, AKX_OP_MAX},  {AKX_BFLOAT16, AKX_FLOAT32, AKX_DTYPE_AUTO, AKX_OP_ADD},
  };
  for (int r = 0; r < COUNT(rows); ++r)
    for (int exclusive = 0; exclusive < 2; ++exclusive) {
      tsg_case c = tsg_case_make(rows[r].src, rows[r].op);
      c.dst_t = rows[r].dst;
      c.acc = rows[r].acc;
      c.exclusive = exclusive;
      c.with_init = exclusive && rows[r].op == AKX_OP_MAX;
      run(&c, &o, (uint64_t)(r * 10 + exclusive));
    }
  tsg_free(&o);
}

/* ---- user ops ------------------------------------------------------------------------------------- */

typedef struct {
  double a, b;
} affine_acc;

/* The affine maps of tests/support/affine_op.h composed left to right from each segment's
 * start (with init before the first), stored as the map applied to 0 (b). */
Test(segmented_scan, affine_user_op_restarts_at_every_segment) {
  const akx_user_op_desc d = {AFFINE_SRC, "Affine", "af_then", NULL, "af_map", "af_at_zero"};
  const akx_op op = tfx_user_op(ctx, &d);
  tsg_offsets o = tsg_power_law(300, 80, 21);
  float *vals = tfx_xmalloc((size_t)(o.n ? o.n : 1) * sizeof(float));
  for (int64_t i = 0; i < o.n; ++i) vals[i] = (float)((int64_t)(ref_rand(41, (uint64_t)i) % 21) - 10) / 8.0f;
  const affine_acc unit = {1, 0}, shift = {2, 1};
  const struct {
    int exclusive;
    const affine_acc *init;
  } modes[] = {{0, NULL}, {1, &unit}, {0, &shift}, {1, &shift}};
  for (int m = 0; m < COUNT(modes); ++m) {
    tsg_rig g = tsg_rig_make(ctx, AKX_FLOAT32, vals, &o, m % 2 ? AKX_INT32 : AKX_INT64, AKX_FLOAT64, o.n);
    akx_scan_opts opts = akx_scan_opts_default();
    opts.exclusive = modes[m].exclusive;
    opts.init = modes[m].init;
    const akx_status st = akx_segmented_scan(ctx, &g.dst.dev, &g.src.dev, &g.offs.dev, op, &opts);
    cr_assert_eq(st, AKX_SUCCESS, "mode %d: %s (%s)", m, akx_status_string(st), akx_last_error());
    unsigned char *after = tsg_rig_read(ctx, &g);
    for (int64_t s = 0; s < o.nseg; ++s) {
      affine_acc acc = modes[m].init ? *modes[m].init : unit;
      int have = modes[m].init != NULL;
      for (int64_t i = o.off[s]; i < o.off[s + 1]; ++i) {
        const double x = vals[i];
        const affine_acc f = {1.0 + x * 0.01, x};
        double want = acc.b;
        if (have) acc = (affine_acc){acc.a * f.a, acc.b * f.a + f.b};
        else acc = f;
        have = 1;
        if (!modes[m].exclusive) want = acc.b;
        const double got = *(const double *)tsg_rig_at(&g, after, i);
        cr_assert_leq(fabs(got - want), 1e-9 * (1 + fabs(want)),
                      "mode %d (%s%s), segment %lld [%lld, %lld), element %lld: %.17g, sequential %.17g", m,
                      modes[m].exclusive ? "exclusive" : "inclusive", modes[m].init ? ", init" : "", (long long)s,
                      (long long)o.off[s], (long long)o.off[s + 1], (long long)i, got, want);
      }
    }
    cr_assert(tsg_rig_guards_kept(&g, after), "mode %d: a guard around dst was written", m);
    free(after);
    tsg_rig_free(ctx, &g);
  }
  /* exclusive without init: the op has no identity, nothing comes first */
  tsg_rig g = tsg_rig_make(ctx, AKX_FLOAT32, vals, &o, AKX_INT64, AKX_FLOAT64, o.n);
  akx_scan_opts opts = akx_scan_opts_default();
  opts.exclusive = 1;
  const akx_status st = akx_segmented_scan(ctx, &g.dst.dev, &g.src.dev, &g.offs.dev, op, &opts);
  cr_assert_eq(st, AKX_ERROR_INVALID_ARGUMENT, "exclusive without init or identity: %s (%s)", akx_status_string(st),
               akx_last_error());
  cr_assert(strstr(akx_last_error(), "init"), "the sentence names opts->init: %s", akx_last_error());
  unsigned char *after = tsg_rig_read(ctx, &g);
  for (int64_t i = 0; i < o.n; ++i) cr_assert(tsg_rig_untouched(&g, after, i), "a refused call wrote dst[%lld]", (long long)i);
  free(after);
  tsg_rig_free(ctx, &g);
  free(vals);
  tsg_free(&o);
}

/* x * (i + 1) summed: i is the position within the segment, 0 at every segment's first element. */
static const char POSITION_SRC[] =
    "AKX_HD double p_add(double a, double b) { return a + b; }\n"
    "AKX_HD double p_zero() { return 0.0; }\n"
    "template <class S> AKX_HD double p_map(S x, int64_t i) { return (double)x * (double)(i + 1); }\n";

Test(segmented_scan, user_op_map_sees_the_position_within_the_segment) {
  const akx_user_op_desc d = {POSITION_SRC, "double", "p_add", "p_zero", "p_map", NULL};
  const akx_op op = tfx_user_op(ctx, &d);
  tsg_offsets o = tsg_power_law(500, 200, 22);
  float *vals = tfx_xmalloc((size_t)(o.n ? o.n : 1) * sizeof(float));
  for (int64_t i = 0; i < o.n; ++i) vals[i] = (float)((int64_t)(ref_rand(43, (uint64_t)i) % 21) - 10);
  for (int exclusive = 0; exclusive < 2; ++exclusive) {
    tsg_rig g = tsg_rig_make(ctx, AKX_FLOAT32, vals, &o, AKX_INT64, AKX_FLOAT64, o.n);
    akx_scan_opts opts = akx_scan_opts_default();
    opts.exclusive = exclusive;
    const akx_status st = akx_segmented_scan(ctx, &g.dst.dev, &g.src.dev, &g.offs.dev, op, &opts);
    cr_assert_eq(st, AKX_SUCCESS, "%s (%s)", akx_status_string(st), akx_last_error());
    unsigned char *after = tsg_rig_read(ctx, &g);
    for (int64_t s = 0; s < o.nseg; ++s) {
      double run = 0;
      for (int64_t i = o.off[s]; i < o.off[s + 1]; ++i) {
        const double before = run;
        run += (double)vals[i] * (double)(i - o.off[s] + 1);
        const double want = exclusive ? before : run, got = *(const double *)tsg_rig_at(&g, after, i);
        cr_assert_eq(got, want, "%s, segment %lld [%lld, %lld), element %lld: %.17g, expected %.17g",
                     exclusive ? "exclusive" : "inclusive", (long long)s, (long long)o.off[s], (long long)o.off[s + 1],
                     (long long)i, got, want);
      }
    }
    free(after);
    tsg_rig_free(ctx, &g);
  }
  free(vals);
  tsg_free(&o);
}

/* ---- garbage offsets -------------------------------------------------------------------------------- */

/* As tests/test_segmented_reduce.c's: success, no sim check, guards intact, the same bits twice;
 * where the clamped entries do not decrease, every value and nothing outside the segments. */
Test(segmented_scan, garbage_offsets_stay_in_bounds) {
  const int64_t n = 1000;
  const int64_t negative[] = {-50, -3, 0, 10, 500, 1000};
  const int64_t past_end[] = {990, 995, 1000, 1001, 5000, INT64_C(1) << 40};
  const int64_t huge[] = {INT64_MIN + 1, 0, INT64_MAX, INT64_MIN + 1, INT64_MAX, 7};
  const int64_t decreasing[] = {1000, 900, 100, 500, 0, 1000, 3};
  const int64_t int32_edges[] = {INT32_MIN, INT32_MAX, -1, 0, 2000, INT32_MIN + 1};
  const int64_t int32_rising[] = {INT32_MIN, -5, 3, 3, INT32_MAX, INT32_MAX};
  const struct {
    const int64_t *e;
    int64_t nseg;
    const char *name;
  } rows[] = {{negative, 5, "negative"}, {past_end, 5, "past n"}, {huge, 5, "huge"}, {decreasing, 6, "decreasing"},
              {int32_edges, 5, "int32 extremes"}, {int32_rising, 5, "int32 extremes, not decreasing"}};
  for (int r = 0; r < COUNT(rows); ++r)
    for (int t = 0; t < 2; ++t) {
      tsg_offsets o = tsg_given(n, rows[r].nseg, rows[r].e, rows[r].name);
      tsg_case c = tsg_case_make(AKX_FLOAT32, AKX_OP_ADD);
      c.off_t = t ? AKX_INT32 : AKX_INT64;
      c.exclusive = r % 2;
      c.in_place = r == 2;
      tsg_offsets seen = tsg_given(n, o.nseg, o.off, o.name);
      for (int64_t s = 0; s <= o.nseg; ++s) seen.off[s] = (int64_t)ref_int(c.off_t, o.off[s]).i;
      c.check = tsg_monotone(&seen) ? TSG_CHECK_VALUES : TSG_CHECK_GUARDS_ONLY;
      tsg_result a, b;
      char msg[1536];
      cr_assert(tsg_scan_run(ctx, &c, &o, 5, &a, msg, sizeof msg), "%s", msg);
      cr_assert(tsg_scan_run(ctx, &c, &o, 5, &b, msg, sizeof msg), "%s", msg);
      cr_assert(a.out_bytes == b.out_bytes && memcmp(a.out, b.out, a.out_bytes) == 0,
                "%s offsets (%s): two calls gave different bits", rows[r].name, ref_name(c.off_t));
      free(a.out);
      free(b.out);
      tsg_free(&seen);
      tsg_free(&o);
    }
}

/* ---- determinism ---------------------------------------------------------------------------------- */

/* As segmented_reduce's: the same bits from every call, under shuffled schedules too. */
Test(segmented_scan, bitwise_deterministic_floats) {
  tsg_assert_same_bits(ctx, tsg_scan_run, tsg_case_make(AKX_FLOAT32, AKX_OP_ADD), 600);
}

/* ---- workspace and launches ------------------------------------------------------------------------ */

static uint64_t launches(void) {
  akx_sim_kernel_counters total;
  cr_assert_eq(akx_sim_counters_get(ctx, &total, NULL, 0, NULL), AKX_SUCCESS, "%s", akx_last_error());
  return total.launches;
}

Test(segmented_scan, workspace_query_serves_the_call_in_one_launch) {
  tsg_offsets pats[2] = {tsg_power_law(500, 20, 31), tsg_one_big(1 << 20, 50, 32)};
  for (int p = 0; p < 2; ++p) {
    tsg_case c = tsg_case_make(AKX_FLOAT32, AKX_OP_ADD);
    const tfx_layout Ls = tsg_layout(pats[p].n, 1, 4), Ld = tsg_layout(pats[p].n, 1, 4);
    void *sbuf = tfx_alloc(ctx, (size_t)Ls.parent_n * 4), *dbuf = tfx_alloc(ctx, (size_t)Ld.parent_n * 4);
    akx_array src = tvw_view(sbuf, AKX_FLOAT32, &Ls), dst = tvw_view(dbuf, AKX_FLOAT32, &Ld);
    tsg_dev_offsets offs = tsg_upload_offsets(ctx, &pats[p], AKX_INT64, 1, NULL);
    size_t need = 0;
    cr_assert_eq(akx_segmented_scan_workspace_size(ctx, &dst, &src, &offs.dev, AKX_OP_ADD, NULL, &need), AKX_SUCCESS,
                 "%s: %s", pats[p].name, akx_last_error());
    tsg_free_offsets(ctx, &offs);
    tfx_free(ctx, sbuf);
    tfx_free(ctx, dbuf);
    const size_t give = need ? need : 256;
    void *ws = tfx_alloc(ctx, give);
    if (need > 1) {
      cr_assert_eq(akx_context_set_workspace(ctx, ws, need - 1), AKX_SUCCESS, "%s", akx_last_error());
      char msg[1536];
      tsg_result r;
      cr_assert(!tsg_scan_run(ctx, &c, &pats[p], 1, &r, msg, sizeof msg), "%zu bytes of %zu served the call", need - 1, need);
      cr_assert_eq(r.status, AKX_ERROR_WORKSPACE_TOO_SMALL, "%s: %zu of %zu bytes: %s", pats[p].name, need - 1, need,
                   akx_status_string(r.status));
      cr_assert(r.untouched, "%s: the call refused for its workspace wrote dst", pats[p].name);
      free(r.out);
    }
    cr_assert_eq(akx_context_set_workspace(ctx, ws, give), AKX_SUCCESS, "%s", akx_last_error());
    akx_context_info_t before, after;
    cr_assert_eq(akx_context_info(ctx, &before), AKX_SUCCESS);
    for (int k = 0; k < 3; ++k) {
      if (tfx_is_sim(ctx)) cr_assert_eq(akx_sim_counters_reset(ctx), AKX_SUCCESS);
      c.exclusive = k == 2;
      run(&c, &pats[p], 40 + (uint64_t)k);
      if (tfx_is_sim(ctx))
        cr_expect_eq(launches(), 1u, "%s (n %lld, nseg %lld), call %d on the caller's workspace: %llu launches",
                     pats[p].name, (long long)pats[p].n, (long long)pats[p].nseg, k, (unsigned long long)launches());
    }
    cr_assert_eq(akx_context_info(ctx, &after), AKX_SUCCESS);
    cr_assert_eq(after.workspace_allocations, before.workspace_allocations, "%s: the calls allocated a workspace",
                 pats[p].name);
    cr_assert_eq(akx_context_set_workspace(ctx, NULL, 0), AKX_SUCCESS, "%s", akx_last_error());
    tfx_free(ctx, ws);
    tsg_free(&pats[p]);
  }
}
