/* akx_segmented_reduce against the host reference (tests/support/segmented_check.h: every
 * segment's value, the guards around dst, the gaps of strided views, the inputs unwritten):
 * - segment patterns: all empty, one segment over src, uniform lengths 1, 31, 32, 33, 1000 and
 *   65537, power-law lengths with many empty segments, one 2^20-element segment among tiny ones,
 *   no segment at all, offsets[0] > 0 and offsets[nseg] < n; int32 and int64 offsets;
 * - every dtype with every op its accumulator allows, the maps, init, fold, dst of another dtype,
 *   explicit accumulators; strided offsets, src and dst (steps 2 and -1);
 * - empty segments: init, else the neutral element (+0.0 for a float ADD), MIN/MAX without init
 *   the accumulator's greatest / least value (+inf / -inf), ARGMIN/ARGMAX -1 into int64 and the
 *   element left as it was in a dst of src's dtype, a user op without identity leaving dst;
 * - ARGMIN/ARGMAX with ties and NaNs (the position within the segment, the first NaN);
 * - user ops: Welford's variance, a map that sees the position within the segment (from 0);
 * - garbage offsets (decreasing, negative, past n, huge): success, no sim check (out-of-bounds
 *   or race), guards intact, values of the clamped segments where the offsets do not decrease;
 * - bitwise determinism over calls and schedules; the workspace query serves the call (a
 *   caller's buffer of exactly that size, no allocation after) and one launch per call on the
 *   sim.
 * ARGMIN/ARGMAX and the user ops compile at run time: a few dtypes each. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "akx_sim.h"
#include "reduce_user_ops.h"
#include "segmented_check.h"

static akx_context *ctx;
static void setup(void) { ctx = tfx_open(); }
static void teardown(void) {
  unsetenv("AKX_SIM_SCHEDULE");
  tfx_close(ctx);
}
TestSuite(segmented_reduce, .init = setup, .fini = teardown, .timeout = 280);

#define COUNT(a) (int)(sizeof(a) / sizeof((a)[0]))


static void run(const tsg_case *c, const tsg_offsets *o, uint64_t seed) {
  char msg[1536];
  cr_assert(tsg_reduce_run(ctx, c, o, seed, NULL, msg, sizeof msg), "%s", msg);
}

Test(segmented_reduce, patterns_float32_and_int32) {
  for (int k = 0; k < TSG_PATTERNS; ++k) {
    tsg_offsets o = tsg_pattern(k);
    tsg_case c = tsg_case_make(AKX_FLOAT32, AKX_OP_ADD);
    c.off_t = k % 2 ? AKX_INT32 : AKX_INT64;
    run(&c, &o, 10 + (uint64_t)k);
    c = tsg_case_make(AKX_INT32, AKX_OP_ADD);
    c.off_t = k % 2 ? AKX_INT64 : AKX_INT32;
    c.dst_t = AKX_INT32; /* the int64 accumulator narrowed at the store */
    run(&c, &o, 20 + (uint64_t)k);
    c = tsg_case_make(AKX_INT32, AKX_OP_MAX);
    c.with_init = k % 3 == 0;
    run(&c, &o, 30 + (uint64_t)k);
    tsg_free(&o);
  }
}

/* One segment of 2^20 among 300 of 0..3 elements: the shape that splits a segment over blocks. */
Test(segmented_reduce, one_huge_segment_among_tiny_ones) {
  tsg_offsets o = tsg_one_big(1 << 20, 300, 5);
  tsg_case c = tsg_case_make(AKX_FLOAT32, AKX_OP_ADD);
  run(&c, &o, 1);
  c = tsg_case_make(AKX_INT32, AKX_OP_MIN);
  c.off_t = AKX_INT32;
  c.with_init = 1;
  run(&c, &o, 2);
  tsg_free(&o);
}

/* Every dtype with every op its AUTO accumulator allows, with and without init, int32 and int64
 * offsets, over power-law segments (about half empty); then the maps under ADD and MAX. */
Test(segmented_reduce, every_dtype_op_and_map) {
  const akx_op ops[] = {AKX_OP_ADD, AKX_OP_MUL, AKX_OP_MIN, AKX_OP_MAX, AKX_OP_AND, AKX_OP_OR, AKX_OP_XOR};
  tsg_offsets o = tsg_power_law(150, 40, 3);
  int runs = 0;
  for (int d = 0; d < TSG_N_DTYPES; ++d) {
    for (int k = 0; k < COUNT(ops); ++k) {
      if (ref_resolve_acc(tsg_all_dtypes[d], AKX_MAP_IDENTITY, ops[k], AKX_DTYPE_AUTO) == REF_UNSUPPORTED) continue;
      for (int variant = 0; variant < 2; ++variant) {
        tsg_case c = tsg_case_make(tsg_all_dtypes[d], ops[k]);
        c.with_init = variant;
        c.off_t = (d + k + variant) % 2 ? AKX_INT32 : AKX_INT64;
        run(&c, &o, (uint64_t)(d * 100 + k * 10 + variant));
        ++runs;
      }
    }
    const akx_map maps[] = {AKX_MAP_ABS, AKX_MAP_SQUARE, AKX_MAP_NONZERO};
    const akx_op map_ops[] = {AKX_OP_ADD, AKX_OP_MAX};
    for (int m = 0; m < COUNT(maps); ++m)
      for (int k = 0; k < COUNT(map_ops); ++k) {
        if (ref_resolve_acc(tsg_all_dtypes[d], maps[m], map_ops[k], AKX_DTYPE_AUTO) == REF_UNSUPPORTED) continue;
        tsg_case c = tsg_case_make(tsg_all_dtypes[d], map_ops[k]);
        c.map = maps[m];
        run(&c, &o, (uint64_t)(d * 100 + 50 + m * 10 + k));
        ++runs;
      }
  }
  cr_assert_gt(runs, 150, "only %d combinations ran", runs);
  tsg_free(&o);
}

/* Offsets, src and dst each strided (every other element) and reversed (step -1). */
Test(segmented_reduce, strided_and_reversed_views) {
  tsg_offsets o = tsg_power_law(300, 50, 9);
  const int64_t steps[] = {1, 2, -1};
  int v = 0;
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b)
      for (int d = 0; d < 3; ++d) {
        if ((a != 0) + (b != 0) + (d != 0) > 2) continue;
        tsg_case c = tsg_case_make(v % 2 ? AKX_INT64 : AKX_FLOAT32, v % 3 ? AKX_OP_ADD : AKX_OP_MIN);
        c.off_step = steps[a];
        c.src_step = steps[b];
        c.dst_step = steps[d];
        c.off_t = v % 2 ? AKX_INT32 : AKX_INT64;
        c.with_init = v % 3 == 0;
        run(&c, &o, (uint64_t)v++);
      }
  tsg_free(&o);
}

/* dst of another dtype (converted at the store), explicit accumulators, init and fold. */
Test(segmented_reduce, dst_dtypes_accumulators_init_and_fold) {
  tsg_offsets o = tsg_power_law(400, 30, 4);
  const struct {
    akx_dtype src, dst, acc;
    akx_op op;
  } rows[] = {
      {AKX_FLOAT32, AKX_FLOAT64, AKX_DTYPE_AUTO, AKX_OP_ADD}, {AKX_FLOAT32, AKX_FLOAT16, AKX_DTYPE_AUTO, AKX_OP_ADD},
      {AKX_FLOAT32, AKX_INT32, AKX_DTYPE_AUTO, AKX_OP_ADD},   {AKX_INT8, AKX_INT8, AKX_DTYPE_AUTO, AKX_OP_ADD},
      {AKX_UINT8, AKX_FLOAT32, AKX_DTYPE_AUTO, AKX_OP_MAX},   {AKX_FLOAT32, AKX_FLOAT32, AKX_FLOAT64, AKX_OP_ADD},
      {AKX_INT32, AKX_INT32, AKX_INT32, AKX_OP_ADD},          {AKX_FLOAT16, AKX_FLOAT16, AKX_DTYPE_AUTO, AKX_OP_MIN},
      {AKX_BOOL, AKX_INT32, AKX_DTYPE_AUTO, AKX_OP_ADD},      {AKX_INT16, AKX_BOOL, AKX_DTYPE_AUTO, AKX_OP_OR},
  };
  for (int r = 0; r < COUNT(rows); ++r)
    for (int variant = 0; variant < 3; ++variant) {
      tsg_case c = tsg_case_make(rows[r].src, rows[r].op);
      c.dst_t = rows[r].dst;
      c.acc = rows[r].acc;
      c.with_init = variant == 1;
      c.fold = variant == 2;
      run(&c, &o, (uint64_t)(r * 10 + variant));
    }
  tsg_free(&o);
}

/* Empty segments, read directly: +0.0 for a float ADD (not -0.0), +inf / -inf for MIN / MAX
 * without init, the integers' extremes, init where given, converted to dst. */
Test(segmented_reduce, empty_segments_read_directly) {
  const int64_t e[] = {0, 0, 3, 3, 3, 10, 10};
  tsg_offsets o = tsg_given(10, 6, e, "empty segments around two");
  float src[10];
  for (int i = 0; i < 10; ++i) src[i] = -0.0f; /* sums of -0.0 are -0.0: only empty ones are +0.0 */
  const struct {
    akx_op op;
    akx_dtype dst;
    double want;
  } rows[] = {{AKX_OP_ADD, AKX_FLOAT32, 0.0}, {AKX_OP_MIN, AKX_FLOAT32, INFINITY}, {AKX_OP_MAX, AKX_FLOAT32, -INFINITY},
              {AKX_OP_MIN, AKX_FLOAT64, INFINITY}, {AKX_OP_MAX, AKX_INT32, -2147483648.0}};
  for (int r = 0; r < COUNT(rows); ++r) {
    tsg_rig g = tsg_rig_make(ctx, AKX_FLOAT32, src, &o, AKX_INT64, rows[r].dst, o.nseg);
    const akx_status st = akx_segmented_reduce(ctx, &g.dst.dev, &g.src.dev, &g.offs.dev, AKX_MAP_IDENTITY, rows[r].op, NULL);
    cr_assert_eq(st, AKX_SUCCESS, "%s into %s: %s (%s)", ref_op_name(rows[r].op), ref_name(rows[r].dst),
                 akx_status_string(st), akx_last_error());
    unsigned char *after = tsg_rig_read(ctx, &g);
    for (int64_t s = 0; s < o.nseg; ++s) {
      const int empty = e[s + 1] == e[s];
      const ref_val v = ref_load(tsg_rig_at(&g, after, s), rows[r].dst);
      const long double got = ref_as_ld(v);
      if (empty) {
        cr_assert(got == (long double)rows[r].want, "%s into %s: empty segment %lld is %Lg, expected %g",
                  ref_op_name(rows[r].op), ref_name(rows[r].dst), (long long)s, got, rows[r].want);
        if (rows[r].op == AKX_OP_ADD)
          cr_assert(!signbit(got), "an empty float32 ADD is +0.0, segment %lld is -0.0", (long long)s);
      } else if (rows[r].op == AKX_OP_ADD) {
        cr_assert(got == 0 && signbit(got), "the sum of -0.0s of segment %lld is -0.0, got %Lg", (long long)s, got);
      }
    }
    cr_assert(tsg_rig_guards_kept(&g, after), "a guard around dst was written");
    free(after);
    tsg_rig_free(ctx, &g);
  }
  /* Integer extremes of the accumulator, and init, through the checker. */
  const struct {
    akx_dtype src;
    akx_op op;
    int init;
  } ints[] = {{AKX_INT32, AKX_OP_MIN, 0}, {AKX_UINT8, AKX_OP_MIN, 0}, {AKX_UINT8, AKX_OP_MAX, 0}, {AKX_INT16, AKX_OP_MAX, 0},
              {AKX_BOOL, AKX_OP_AND, 0},  {AKX_INT64, AKX_OP_MUL, 0}, {AKX_FLOAT32, AKX_OP_MIN, 1}, {AKX_INT32, AKX_OP_XOR, 1}};
  for (int r = 0; r < COUNT(ints); ++r) {
    tsg_case c = tsg_case_make(ints[r].src, ints[r].op);
    c.with_init = ints[r].init;
    run(&c, &o, (uint64_t)r);
  }
  tsg_free(&o);
}

/* ---- ARGMIN / ARGMAX ----------------------------------------------------------------------------- */

/* Does x (position i) beat the best so far (position bi, value bx; bi < 0: none)? numpy's rule:
 * a NaN wins (the first), ties go to the earlier position. */
static int beats(akx_op op, long double x, int64_t i, long double bx, int64_t bi) {
  if (bi < 0) return 1;
  if (isnan(x) || isnan(bx)) return isnan(x) && isnan(bx) ? i < bi : isnan(x);
  if (x != bx) return op == AKX_OP_ARGMAX ? x > bx : x < bx;
  return i < bi;
}

/* Values from a small set (ties in every segment), with NaNs in some segments (floats). */
static void *arg_values(akx_dtype t, int64_t n, uint64_t seed) {
  void *p = tfx_xmalloc((size_t)(n ? n : 1) * ref_size(t));
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t r = ref_rand(seed, (uint64_t)i);
    if (ref_is_float(t) && r % 23 == 0) ref_store_at(p, i, ref_nan(t));
    else ref_store_at(p, i, ref_int(t, (int64_t)(r % 5) - 2));
  }
  return p;
}

static void check_arg(akx_dtype t, akx_op op, akx_dtype dst_t, akx_dtype off_t, uint64_t seed) {
  tsg_offsets o = tsg_power_law(500, 40, seed);
  void *vals = arg_values(t, o.n, seed);
  tsg_rig g = tsg_rig_make(ctx, t, vals, &o, off_t, dst_t, o.nseg);
  const akx_status st = akx_segmented_reduce(ctx, &g.dst.dev, &g.src.dev, &g.offs.dev, AKX_MAP_IDENTITY, op, NULL);
  cr_assert_eq(st, AKX_SUCCESS, "%s of %s into %s: %s (%s)", ref_op_name(op), ref_name(t), ref_name(dst_t),
               akx_status_string(st), akx_last_error());
  unsigned char *after = tsg_rig_read(ctx, &g);
  int nans = 0, ties = 0, empties = 0;
  for (int64_t s = 0; s < o.nseg; ++s) {
    const int64_t b = o.off[s], e = o.off[s + 1];
    int64_t best = -1;
    long double bx = 0;
    for (int64_t i = b; i < e; ++i) {
      const long double x = ref_as_ld(ref_load_at(vals, t, i));
      if (beats(op, x, i - b, bx, best)) best = i - b, bx = x;
      else if (x == bx) ++ties;
      nans += isnan(x) != 0;
    }
    empties += b == e;
    if (dst_t == AKX_INT64) {
      const int64_t got = (int64_t)ref_load(tsg_rig_at(&g, after, s), AKX_INT64).i;
      cr_assert_eq(got, best, "%s of %s, segment %lld [%lld, %lld): position %lld, expected %lld%s", ref_op_name(op),
                   ref_name(t), (long long)s, (long long)b, (long long)e, (long long)got, (long long)best,
                   b == e ? " (empty: -1)" : "");
    } else if (b == e) {
      cr_assert(tsg_rig_untouched(&g, after, s), "%s of %s into %s: empty segment %lld was written", ref_op_name(op),
                ref_name(t), ref_name(dst_t), (long long)s);
    } else {
      const long double got = ref_as_ld(ref_load(tsg_rig_at(&g, after, s), dst_t));
      cr_assert(isnan(bx) ? isnan(got) : got == bx, "%s of %s into %s, segment %lld: value %Lg, expected %Lg",
                ref_op_name(op), ref_name(t), ref_name(dst_t), (long long)s, got, bx);
    }
  }
  cr_assert(ties > 0 && empties > 0 && (nans > 0 || !ref_is_float(t)), "the data lacks ties, empties or NaNs");
  cr_assert(tsg_rig_guards_kept(&g, after), "%s: a guard around dst was written", ref_op_name(op));
  free(after);
  free(vals);
  tsg_rig_free(ctx, &g);
  tsg_free(&o);
}

/* Four run-time compiles (op, src, dst): positions into int64 and values into src's dtype. */
Test(segmented_reduce, argmin_argmax_float32_positions_and_values) {
  check_arg(AKX_FLOAT32, AKX_OP_ARGMIN, AKX_INT64, AKX_INT64, 41);
  check_arg(AKX_FLOAT32, AKX_OP_ARGMAX, AKX_FLOAT32, AKX_INT32, 43);
}

Test(segmented_reduce, argmin_argmax_int32_and_float16) {
  check_arg(AKX_INT32, AKX_OP_ARGMAX, AKX_INT64, AKX_INT32, 44);
  check_arg(AKX_FLOAT16, AKX_OP_ARGMIN, AKX_INT64, AKX_INT64, 45);
}

/* ---- user ops ------------------------------------------------------------------------------------- */

static const char WELFORD_SRC[] =
    "struct Welford { double n, mean, m2; };\n"
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

/* Welford's variance per segment (around 1000, spread 16: a one-pass sum of squares would lose
 * digits) against a two-pass one; an empty segment stores the identity's variance, 0 / 0. */
Test(segmented_reduce, welford_variance_user_op) {
  const akx_user_op_desc d = {WELFORD_SRC, "Welford", "wf_combine", "wf_identity", "wf_map", "wf_variance"};
  const akx_op op = tfx_user_op(ctx, &d);
  const akx_dtype types[] = {AKX_FLOAT32, AKX_FLOAT64};
  for (int ti = 0; ti < COUNT(types); ++ti) {
    tsg_offsets o = tsg_power_law(300, 3000, 8 + (uint64_t)ti);
    void *vals = tfx_xmalloc((size_t)(o.n ? o.n : 1) * ref_size(types[ti]));
    for (int64_t i = 0; i < o.n; ++i)
      ref_store_at(vals, i, ref_real(types[ti], 1000.0L + (long double)((int64_t)(ref_rand(21, (uint64_t)i) % 2001) - 1000) / 64));
    tsg_rig g = tsg_rig_make(ctx, types[ti], vals, &o, AKX_INT64, AKX_FLOAT64, o.nseg);
    const akx_status st = akx_segmented_reduce(ctx, &g.dst.dev, &g.src.dev, &g.offs.dev, AKX_MAP_IDENTITY, op, NULL);
    cr_assert_eq(st, AKX_SUCCESS, "%s: %s (%s)", ref_name(types[ti]), akx_status_string(st), akx_last_error());
    unsigned char *after = tsg_rig_read(ctx, &g);
    for (int64_t s = 0; s < o.nseg; ++s) {
      const int64_t b = o.off[s], e = o.off[s + 1];
      const double got = *(const double *)tsg_rig_at(&g, after, s);
      if (b == e) {
        cr_assert(isnan(got), "empty segment %lld: the identity's variance 0/0 is NaN, got %g", (long long)s, got);
        continue;
      }
      long double sum = 0, m2 = 0;
      for (int64_t i = b; i < e; ++i) sum += ref_as_ld(ref_load_at(vals, types[ti], i));
      const long double mean = sum / (e - b);
      for (int64_t i = b; i < e; ++i) {
        const long double dv = ref_as_ld(ref_load_at(vals, types[ti], i)) - mean;
        m2 += dv * dv;
      }
      const double want = (double)(m2 / (e - b));
      cr_assert_leq(fabs(got - want), 1e-9 * fmax(want, 1e-300) + (e - b == 1 ? 0 : 1e-12),
                    "%s segment %lld of %lld elements: variance %.17g, two-pass %.17g", ref_name(types[ti]),
                    (long long)s, (long long)(e - b), got, want);
    }
    cr_assert(tsg_rig_guards_kept(&g, after), "a guard around dst was written");
    free(after);
    free(vals);
    tsg_rig_free(ctx, &g);
    tsg_free(&o);
  }
}

/* The map's position is the element's position within its segment, from 0 at every segment
 * (reduce_user_ops.h's weighted sum: x * (i % 5 + 1) + i, exact in double). */
Test(segmented_reduce, user_op_map_sees_the_position_within_the_segment) {
  const akx_user_op_desc d = {WEIGHTED_SRC, "double", "w_add", "w_zero", "w_map", NULL};
  const akx_op op = tfx_user_op(ctx, &d);
  tsg_offsets o = tsg_power_law(400, 200, 12);
  float *vals = tfx_xmalloc((size_t)(o.n ? o.n : 1) * sizeof(float));
  for (int64_t i = 0; i < o.n; ++i) vals[i] = (float)((int64_t)(ref_rand(7, (uint64_t)i) % 41) - 20);
  tsg_rig g = tsg_rig_make(ctx, AKX_FLOAT32, vals, &o, AKX_INT32, AKX_FLOAT64, o.nseg);
  const akx_status st = akx_segmented_reduce(ctx, &g.dst.dev, &g.src.dev, &g.offs.dev, AKX_MAP_IDENTITY, op, NULL);
  cr_assert_eq(st, AKX_SUCCESS, "%s (%s)", akx_status_string(st), akx_last_error());
  unsigned char *after = tsg_rig_read(ctx, &g);
  for (int64_t s = 0; s < o.nseg; ++s) {
    double want = 0, global = 0;
    for (int64_t i = o.off[s]; i < o.off[s + 1]; ++i) {
      want += weighted_term(vals[i], i - o.off[s]);
      global += weighted_term(vals[i], i);
    }
    const double got = *(const double *)tsg_rig_at(&g, after, s);
    cr_assert_eq(got, want, "segment %lld [%lld, %lld): %.17g, expected %.17g (%.17g would number src's elements)",
                 (long long)s, (long long)o.off[s], (long long)o.off[s + 1], got, want, global);
  }
  free(after);
  free(vals);
  tsg_rig_free(ctx, &g);
  tsg_free(&o);
}

/* A user op without identity (the range {lo, hi}, stored as hi - lo): an empty segment leaves
 * dst as it was, unless an init is given. */
Test(segmented_reduce, user_op_without_identity_leaves_empty_segments) {
  const akx_user_op_desc d = {RANGE_SRC, "Range", "r_join", NULL, "r_map", "r_width"};
  const akx_op op = tfx_user_op(ctx, &d);
  tsg_offsets o = tsg_power_law(300, 100, 13);
  float *vals = tfx_xmalloc((size_t)(o.n ? o.n : 1) * sizeof(float));
  for (int64_t i = 0; i < o.n; ++i) vals[i] = (float)((int64_t)(ref_rand(9, (uint64_t)i) % 1001) - 500) / 4.0f;
  for (int with_init = 0; with_init < 2; ++with_init) {
    const double init[2] = {-1000.0, -999.0}; /* {lo, hi}: below every value */
    akx_reduce_opts opts = akx_reduce_opts_default();
    opts.init = with_init ? init : NULL;
    tsg_rig g = tsg_rig_make(ctx, AKX_FLOAT32, vals, &o, AKX_INT64, AKX_FLOAT64, o.nseg);
    const akx_status st = akx_segmented_reduce(ctx, &g.dst.dev, &g.src.dev, &g.offs.dev, AKX_MAP_IDENTITY, op, &opts);
    cr_assert_eq(st, AKX_SUCCESS, "init %d: %s (%s)", with_init, akx_status_string(st), akx_last_error());
    unsigned char *after = tsg_rig_read(ctx, &g);
    int empties = 0;
    for (int64_t s = 0; s < o.nseg; ++s) {
      const int64_t b = o.off[s], e = o.off[s + 1];
      if (b == e && !with_init) {
        cr_assert(tsg_rig_untouched(&g, after, s), "empty segment %lld without init was written", (long long)s);
        ++empties;
        continue;
      }
      double lo = with_init ? init[0] : INFINITY, hi = with_init ? init[1] : -INFINITY;
      for (int64_t i = b; i < e; ++i) lo = fmin(lo, vals[i]), hi = fmax(hi, vals[i]);
      const double got = *(const double *)tsg_rig_at(&g, after, s);
      cr_assert_eq(got, hi - lo, "init %d, segment %lld [%lld, %lld): %g, expected %g", with_init, (long long)s,
                   (long long)b, (long long)e, got, hi - lo);
    }
    cr_assert(with_init || empties > 0, "no empty segment among %lld", (long long)o.nseg);
    free(after);
    tsg_rig_free(ctx, &g);
  }
  free(vals);
  tsg_free(&o);
}

/* ---- garbage offsets -------------------------------------------------------------------------------- */

/* Entries no caller should pass: the call succeeds (the offsets are device data, not checked),
 * no kernel reads or writes out of bounds (the sim checks every access: a failure would be
 * AKX_ERROR_SIM_CHECK), dst's guards keep their bytes, and two calls give the same bits. Where
 * the clamped entries do not decrease, the values are the clamped segments' (akx.h: each entry
 * clamped to [0, n]). */
Test(segmented_reduce, garbage_offsets_stay_in_bounds) {
  const int64_t n = 1000;
  const int64_t big = INT64_MAX, small = INT64_MIN + 1;
  const int64_t negative[] = {-50, -3, 0, 10, 500, 1000};
  const int64_t past_end[] = {990, 995, 1000, 1001, 5000, INT64_C(1) << 40};
  const int64_t huge[] = {small, 0, big, small, big, 7};
  const int64_t decreasing[] = {1000, 900, 100, 500, 0, 1000, 3};
  const int64_t int32_edges[] = {INT32_MIN, INT32_MAX, -1, 0, 2000, INT32_MIN + 1};
  const int64_t int32_rising[] = {INT32_MIN, -5, 3, 3, INT32_MAX, INT32_MAX};
  const struct {
    const int64_t *e;
    int64_t nseg;
    const char *name;
  } rows[] = {{negative, 5, "negative"}, {past_end, 5, "past n"}, {huge, 5, "huge"},
              {decreasing, 6, "decreasing"}, {int32_edges, 5, "int32 extremes"},
              {int32_rising, 5, "int32 extremes, not decreasing"}};
  int checked_values = 0;
  for (int r = 0; r < COUNT(rows); ++r)
    for (int t = 0; t < 2; ++t) {
      tsg_offsets o = tsg_given(n, rows[r].nseg, rows[r].e, rows[r].name);
      tsg_case c = tsg_case_make(AKX_FLOAT32, r % 2 ? AKX_OP_MAX : AKX_OP_ADD);
      c.off_t = t ? AKX_INT32 : AKX_INT64;
      /* what the kernels read: the entries cast to off_t */
      tsg_offsets seen = tsg_given(n, o.nseg, o.off, o.name);
      for (int64_t s = 0; s <= o.nseg; ++s) seen.off[s] = (int64_t)ref_int(c.off_t, o.off[s]).i;
      c.check = tsg_monotone(&seen) ? TSG_CHECK_VALUES : TSG_CHECK_GUARDS_ONLY;
      checked_values += c.check == TSG_CHECK_VALUES;
      tsg_result a, b;
      char msg[1536];
      cr_assert(tsg_reduce_run(ctx, &c, &o, 5, &a, msg, sizeof msg), "%s", msg);
      cr_assert(tsg_reduce_run(ctx, &c, &o, 5, &b, msg, sizeof msg), "%s", msg);
      cr_assert(a.out_bytes == b.out_bytes && memcmp(a.out, b.out, a.out_bytes) == 0,
                "%s offsets (%s): two calls gave different bits", rows[r].name, ref_name(c.off_t));
      free(a.out);
      free(b.out);
      tsg_free(&seen);
      tsg_free(&o);
    }
  cr_assert_geq(checked_values, 5, "the clamped values were checked in %d cases only", checked_values);
}

/* ---- determinism ---------------------------------------------------------------------------------- */

/* Arbitrary float32 values (sums not exact: the order shows in the bits) over power-law
 * segments and one 2^18 segment split over blocks: the same bits from every call, on this
 * context and on contexts under shuffled schedules. */
Test(segmented_reduce, bitwise_deterministic_floats) {
  tsg_case c = tsg_case_make(AKX_FLOAT32, AKX_OP_ADD);
  c.check = TSG_CHECK_VALUES;
  tsg_assert_same_bits(ctx, tsg_reduce_run, c, 500);
}

/* ---- workspace and launches ------------------------------------------------------------------------ */

static uint64_t launches(void) {
  akx_sim_kernel_counters total;
  cr_assert_eq(akx_sim_counters_get(ctx, &total, NULL, 0, NULL), AKX_SUCCESS, "%s", akx_last_error());
  return total.launches;
}

/* The query runs the call's plan: a caller's buffer of exactly the bytes it gives serves the
 * call (one byte less does not), nothing allocates after, and on the sim each call is one
 * launch. Small segments, and a 2^20-element one among tiny ones. */
Test(segmented_reduce, workspace_query_serves_the_call_in_one_launch) {
  tsg_offsets pats[2] = {tsg_power_law(500, 20, 31), tsg_one_big(1 << 20, 50, 32)};
  for (int p = 0; p < 2; ++p) {
    tsg_case c = tsg_case_make(AKX_FLOAT32, AKX_OP_ADD);
    /* the query on the shapes the runs use */
    const tfx_layout Ls = tsg_layout(pats[p].n, 1, 3), Ld = tsg_layout(pats[p].nseg, 1, 4);
    void *sbuf = tfx_alloc(ctx, (size_t)Ls.parent_n * 4), *dbuf = tfx_alloc(ctx, (size_t)Ld.parent_n * 4);
    akx_array src = tvw_view(sbuf, AKX_FLOAT32, &Ls), dst = tvw_view(dbuf, AKX_FLOAT32, &Ld);
    tsg_dev_offsets offs = tsg_upload_offsets(ctx, &pats[p], AKX_INT64, 1, NULL);
    size_t need = 0;
    cr_assert_eq(akx_segmented_reduce_workspace_size(ctx, &dst, &src, &offs.dev, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &need),
                 AKX_SUCCESS, "%s: %s", pats[p].name, akx_last_error());
    tsg_free_offsets(ctx, &offs);
    tfx_free(ctx, sbuf);
    tfx_free(ctx, dbuf);
    const size_t give = need ? need : 256;
    void *ws = tfx_alloc(ctx, give);
    if (need > 1) { /* one byte short: refused, nothing written (the runner would see the status) */
      cr_assert_eq(akx_context_set_workspace(ctx, ws, need - 1), AKX_SUCCESS, "%s", akx_last_error());
      char msg[1536];
      tsg_result r;
      cr_assert(!tsg_reduce_run(ctx, &c, &pats[p], 1, &r, msg, sizeof msg), "%zu bytes of %zu served the call", need - 1, need);
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
