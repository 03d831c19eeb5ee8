/* akx_reduce_by_key and akx_scan_by_key against the host reference (tests/support/
 * segmented_check.h: the runs found in the keys themselves, every key and value written, nothing
 * past the runs written nor around the outputs, the inputs unwritten):
 * - key patterns: runs of 1 (all distinct), all equal, power-law run lengths (the same key back
 *   in later runs), n = 0; keys int32, bool, int8, int64 (runs that differ in bit 40 only),
 *   uint16, uint64;
 * - reduce_by_key's capacity: exact, larger, smaller (AKX_ERROR_OUTPUT_TOO_SMALL, *runs the true
 *   count, the first capacity runs written, nothing after), the smaller of the two outputs;
 * - every dtype of values with every op; maps, init, values_out of another dtype; strided and
 *   reversed keys, values and outputs; scan_by_key inclusive, exclusive, init, in place;
 * - ARGMIN/ARGMAX by key (the position within the run); user ops whose map sees the position
 *   within the run; the affine maps (no identity) scanned by key;
 * - bitwise determinism; one launch per call on the sim once the workspace serves the size. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "affine_op.h"
#include "akx_sim.h"
#include "reduce_user_ops.h"
#include "segmented_check.h"

static akx_context *ctx;
static void setup(void) { ctx = tfx_open(); }
static void teardown(void) {
  unsetenv("AKX_SIM_SCHEDULE");
  tfx_close(ctx);
}
TestSuite(by_key, .init = setup, .fini = teardown, .timeout = 280);

#define COUNT(a) (int)(sizeof(a) / sizeof((a)[0]))

static const akx_dtype key_dtypes[] = {AKX_INT32, AKX_BOOL, AKX_INT8, AKX_INT64, AKX_UINT16, AKX_UINT64};

/* nruns runs of 1 + a power law of lengths (1..max_len + 1). */
static tsg_offsets runs_pattern(int64_t nruns, int64_t max_len, uint64_t seed) {
  tsg_offsets o = tsg_power_law(nruns, max_len, seed);
  for (int64_t s = 0; s <= nruns; ++s) o.off[s] += s;
  o.n = o.off[nruns];
  o.name = "power-law runs";
  return o;
}

/* A run of `big` keys among ntiny runs of 1..4 (tsg_one_big's segments, each one longer). */
static tsg_offsets big_run(int64_t big, int64_t ntiny, uint64_t seed) {
  tsg_offsets o = tsg_one_big(big - 1, ntiny, seed);
  for (int64_t s = 0; s <= o.nseg; ++s) o.off[s] += s;
  o.n = o.off[o.nseg];
  o.name = "one long run among short ones";
  return o;
}

enum { N_KEY_PATTERNS = 5 };
static tsg_offsets key_pattern(int k) {
  switch (k) {
    case 0: { tsg_offsets o = tsg_uniform(3000, 1); o.name = "runs of 1"; return o; }
    case 1: { tsg_offsets o = tsg_uniform(1, 4000); o.name = "all equal"; return o; }
    case 2: { tsg_offsets o = tsg_uniform(0, 1); o.name = "n = 0"; return o; }
    case 3: { tsg_offsets o = tsg_uniform(130, 33); o.name = "runs of 33"; return o; }
    default: return runs_pattern(800, 60, 7);
  }
}

static void run_reduce(const tsg_case *c, const tsg_offsets *o, uint64_t seed) {
  char msg[1536];
  cr_assert(tsg_reduce_by_key_run(ctx, c, o, seed, NULL, msg, sizeof msg), "%s", msg);
}
static void run_scan(const tsg_case *c, const tsg_offsets *o, uint64_t seed) {
  char msg[1536];
  cr_assert(tsg_scan_by_key_run(ctx, c, o, seed, NULL, msg, sizeof msg), "%s", msg);
}

/* ---- reduce_by_key ------------------------------------------------------------------------------ */

Test(by_key, reduce_key_patterns_and_key_dtypes) {
  for (int k = 0; k < N_KEY_PATTERNS; ++k)
    for (int t = 0; t < COUNT(key_dtypes); ++t) {
      tsg_offsets o = key_pattern(k);
      tsg_case c = tsg_case_make(t % 2 ? AKX_INT32 : AKX_FLOAT32, t % 3 == 2 ? AKX_OP_MAX : AKX_OP_ADD);
      c.key_t = key_dtypes[t];
      c.with_init = (k + t) % 3 == 0;
      run_reduce(&c, &o, (uint64_t)(k * 10 + t));
      tsg_free(&o);
    }
}

/* Capacity: the smaller of keys_out's and values_out's lengths. Exact and larger: success; smaller
 * (either output): AKX_ERROR_OUTPUT_TOO_SMALL, *runs the true count, the first capacity runs. */
Test(by_key, reduce_capacity_exact_larger_smaller) {
  tsg_offsets o = runs_pattern(500, 30, 11);
  const int64_t r = o.nseg;
  const int64_t caps[][2] = {{-1, -1}, {r + 7, r + 100}, {r - 1, r}, {r, r - 1}, {r + 5, 10}, {1, r}, {0, 0}, {0, r}};
  for (int k = 0; k < COUNT(caps); ++k) {
    tsg_case c = tsg_case_make(AKX_FLOAT32, AKX_OP_ADD);
    c.cap_keys = caps[k][0];
    c.cap_vals = caps[k][1];
    run_reduce(&c, &o, (uint64_t)k);
  }
  tsg_free(&o);
  /* n = 0: no run, any capacity (0 too) */
  tsg_offsets none = tsg_uniform(0, 1);
  tsg_case c = tsg_case_make(AKX_INT32, AKX_OP_ADD);
  c.cap_keys = c.cap_vals = 0;
  run_reduce(&c, &none, 1);
  c.cap_keys = c.cap_vals = 5;
  run_reduce(&c, &none, 2);
  tsg_free(&none);
}

/* akx_reduce_by_key_where with *runs in device memory: the same runs and values as
 * akx_reduce_by_key for every key pattern and key dtype; capacities exact, larger and smaller
 * (status SUCCESS, at most the capacity written, the total on the device); n = 0 writes 0. */
Test(by_key, reduce_runs_on_the_device) {
  for (int k = 0; k < N_KEY_PATTERNS; ++k)
    for (int t = 0; t < COUNT(key_dtypes); ++t) {
      tsg_offsets o = key_pattern(k);
      tsg_case c = tsg_case_make(t % 2 ? AKX_INT64 : AKX_FLOAT64, AKX_OP_ADD);
      c.key_t = key_dtypes[t];
      c.runs_on_device = 1;
      run_reduce(&c, &o, (uint64_t)(300 + k * 10 + t));
      c.cap_keys = o.nseg > 2 ? o.nseg / 2 : 0;
      run_reduce(&c, &o, (uint64_t)(400 + k * 10 + t));
      c.cap_keys = -1;
      c.cap_vals = 0;
      run_reduce(&c, &o, (uint64_t)(500 + k * 10 + t));
      tsg_free(&o);
    }
  tsg_offsets none = tsg_uniform(0, 1);
  tsg_case c = tsg_case_make(AKX_INT32, AKX_OP_ADD);
  c.runs_on_device = 1;
  c.cap_keys = c.cap_vals = 3;
  run_reduce(&c, &none, 9);
  tsg_free(&none);
}

Test(by_key, reduce_every_dtype_and_op) {
  const akx_op ops[] = {AKX_OP_ADD, AKX_OP_MUL, AKX_OP_MIN, AKX_OP_MAX, AKX_OP_AND, AKX_OP_OR, AKX_OP_XOR};
  tsg_offsets o = runs_pattern(150, 20, 3);
  int runs = 0;
  for (int d = 0; d < TSG_N_DTYPES; ++d)
    for (int k = 0; k < COUNT(ops); ++k) {
      if (ref_resolve_acc(tsg_all_dtypes[d], AKX_MAP_IDENTITY, ops[k], AKX_DTYPE_AUTO) == REF_UNSUPPORTED) continue;
      tsg_case c = tsg_case_make(tsg_all_dtypes[d], ops[k]);
      c.with_init = (d + k) % 2;
      c.key_t = key_dtypes[(d + k) % COUNT(key_dtypes)];
      run_reduce(&c, &o, (uint64_t)(d * 100 + k));
      ++runs;
    }
  cr_assert_gt(runs, 75, "only %d combinations ran", runs);
  tsg_free(&o);
}

Test(by_key, reduce_maps_dst_dtypes_and_strides) {
  tsg_offsets o = runs_pattern(300, 25, 4);
  const struct {
    akx_dtype src, dst;
    akx_map map;
    akx_op op;
  } rows[] = {{AKX_FLOAT32, AKX_FLOAT64, AKX_MAP_ABS, AKX_OP_ADD},  {AKX_INT16, AKX_INT16, AKX_MAP_SQUARE, AKX_OP_ADD},
              {AKX_FLOAT64, AKX_INT64, AKX_MAP_NONZERO, AKX_OP_ADD}, {AKX_COMPLEX64, AKX_FLOAT32, AKX_MAP_ABS, AKX_OP_MAX},
              {AKX_UINT8, AKX_FLOAT16, AKX_MAP_IDENTITY, AKX_OP_ADD}, {AKX_INT32, AKX_BOOL, AKX_MAP_NONZERO, AKX_OP_OR}};
  const int64_t steps[][3] = {{1, 1, 1}, {2, 1, 1}, {1, -1, 1}, {1, 1, 2}, {-1, 2, -1}, {2, -1, 2}};
  for (int r = 0; r < COUNT(rows); ++r)
    for (int s = 0; s < COUNT(steps); ++s) {
      if ((r + s) % 2) continue;
      tsg_case c = tsg_case_make(rows[r].src, rows[r].op);
      c.dst_t = rows[r].dst;
      c.map = rows[r].map;
      c.key_step = steps[s][0];
      c.src_step = steps[s][1];
      c.dst_step = steps[s][2];
      c.key_t = key_dtypes[(r + s) % COUNT(key_dtypes)];
      run_reduce(&c, &o, (uint64_t)(r * 10 + s));
    }
  tsg_free(&o);
}

Test(by_key, reduce_large_runs) {
  tsg_offsets o = runs_pattern(400, 10000, 5); /* runs up to 10^4 elements */
  tsg_case c = tsg_case_make(AKX_FLOAT32, AKX_OP_ADD);
  run_reduce(&c, &o, 1);
  tsg_free(&o);
  tsg_offsets one = big_run(1 << 20, 200, 6);
  c = tsg_case_make(AKX_FLOAT32, AKX_OP_MAX);
  c.key_t = AKX_UINT16;
  run_reduce(&c, &one, 3);
  tsg_free(&one);
  tsg_offsets ones = tsg_uniform(1 << 18, 1);
  c = tsg_case_make(AKX_INT32, AKX_OP_MAX);
  c.key_t = AKX_INT64;
  run_reduce(&c, &ones, 2);
  tsg_free(&ones);
}

/* ARGMIN/ARGMAX by key into int64: the position within the run (ties to the earlier, the first
 * NaN wins). */
Test(by_key, argmin_argmax_positions_within_runs) {
  tsg_offsets o = runs_pattern(400, 40, 6);
  int32_t *keys = tfx_xmalloc((size_t)o.n * 4);
  tsg_fill_keys(keys, AKX_INT32, &o, 3);
  float *vals = tfx_xmalloc((size_t)o.n * 4);
  for (int64_t i = 0; i < o.n; ++i) {
    const uint64_t r = ref_rand(8, (uint64_t)i);
    vals[i] = r % 29 == 0 ? NAN : (float)((int64_t)(r % 5) - 2);
  }
  const tfx_layout L = tfx_layout_vector(o.n);
  tvw_pair k = tvw_upload(ctx, AKX_INT32, keys, &L), v = tvw_upload(ctx, AKX_FLOAT32, vals, &L);
  const akx_op ops[2] = {AKX_OP_ARGMIN, AKX_OP_ARGMAX};
  for (int p = 0; p < 2; ++p) {
    int32_t *ko = tfx_alloc(ctx, (size_t)o.nseg * 4);
    int64_t *vo = tfx_alloc(ctx, (size_t)o.nseg * 8);
    const akx_array kov = akx_vector(ko, AKX_INT32, o.nseg), vov = akx_vector(vo, AKX_INT64, o.nseg);
    int64_t runs = -1;
    const akx_status st = akx_reduce_by_key(ctx, &kov, &vov, &k.dev, &v.dev, AKX_MAP_IDENTITY, ops[p], NULL, &runs);
    cr_assert_eq(st, AKX_SUCCESS, "%s: %s (%s)", ref_op_name(ops[p]), akx_status_string(st), akx_last_error());
    cr_assert_eq(runs, o.nseg, "%s: %lld runs, expected %lld", ref_op_name(ops[p]), (long long)runs, (long long)o.nseg);
    int64_t *got = tfx_xmalloc((size_t)o.nseg * 8);
    tfx_to_host(ctx, got, vo, (size_t)o.nseg * 8);
    for (int64_t r = 0; r < o.nseg; ++r) {
      int64_t best = -1;
      float bx = 0;
      for (int64_t i = o.off[r]; i < o.off[r + 1]; ++i) {
        const float x = vals[i];
        int wins = best < 0;
        if (!wins) {
          if (isnan(x) || isnan(bx)) wins = isnan(x) && !isnan(bx);
          else wins = ops[p] == AKX_OP_ARGMAX ? x > bx : x < bx;
        }
        if (wins) best = i - o.off[r], bx = x;
      }
      cr_assert_eq(got[r], best, "%s, run %lld [%lld, %lld): position %lld, expected %lld", ref_op_name(ops[p]),
                   (long long)r, (long long)o.off[r], (long long)o.off[r + 1], (long long)got[r], (long long)best);
    }
    free(got);
    tfx_free(ctx, ko);
    tfx_free(ctx, vo);
  }
  tvw_free(ctx, &k);
  tvw_free(ctx, &v);
  free(keys);
  free(vals);
  tsg_free(&o);
}

/* The user op's map numbers each run's elements from 0 (reduce_user_ops.h's weighted sum). */
Test(by_key, reduce_user_op_map_sees_the_position_within_the_run) {
  const akx_user_op_desc d = {WEIGHTED_SRC, "double", "w_add", "w_zero", "w_map", NULL};
  const akx_op op = tfx_user_op(ctx, &d);
  tsg_offsets o = runs_pattern(300, 100, 14);
  int64_t *keys = tfx_xmalloc((size_t)o.n * 8);
  tsg_fill_keys(keys, AKX_INT64, &o, 4);
  float *vals = tfx_xmalloc((size_t)o.n * 4);
  for (int64_t i = 0; i < o.n; ++i) vals[i] = (float)((int64_t)(ref_rand(7, (uint64_t)i) % 41) - 20);
  const tfx_layout L = tfx_layout_vector(o.n);
  tvw_pair k = tvw_upload(ctx, AKX_INT64, keys, &L), v = tvw_upload(ctx, AKX_FLOAT32, vals, &L);
  int64_t *ko = tfx_alloc(ctx, (size_t)o.nseg * 8);
  double *vo = tfx_alloc(ctx, (size_t)o.nseg * 8);
  const akx_array kov = akx_vector(ko, AKX_INT64, o.nseg), vov = akx_vector(vo, AKX_FLOAT64, o.nseg);
  int64_t runs = -1;
  const akx_status st = akx_reduce_by_key(ctx, &kov, &vov, &k.dev, &v.dev, AKX_MAP_IDENTITY, op, NULL, &runs);
  cr_assert_eq(st, AKX_SUCCESS, "%s (%s)", akx_status_string(st), akx_last_error());
  cr_assert_eq(runs, o.nseg);
  double *got = tfx_xmalloc((size_t)o.nseg * 8);
  tfx_to_host(ctx, got, vo, (size_t)o.nseg * 8);
  for (int64_t r = 0; r < o.nseg; ++r) {
    double want = 0;
    for (int64_t i = o.off[r]; i < o.off[r + 1]; ++i) want += weighted_term(vals[i], i - o.off[r]);
    cr_assert_eq(got[r], want, "run %lld [%lld, %lld): %.17g, expected %.17g", (long long)r, (long long)o.off[r],
                 (long long)o.off[r + 1], got[r], want);
  }
  free(got);
  tfx_free(ctx, ko);
  tfx_free(ctx, vo);
  tvw_free(ctx, &k);
  tvw_free(ctx, &v);
  free(keys);
  free(vals);
  tsg_free(&o);
}

/* ---- scan_by_key --------------------------------------------------------------------------------- */

Test(by_key, scan_key_patterns_and_key_dtypes) {
  for (int k = 0; k < N_KEY_PATTERNS; ++k)
    for (int t = 0; t < COUNT(key_dtypes); ++t) {
      tsg_offsets o = key_pattern(k);
      for (int variant = 0; variant < 3; ++variant) {
        tsg_case c = tsg_case_make(t % 2 ? AKX_INT32 : AKX_FLOAT32, AKX_OP_ADD);
        c.key_t = key_dtypes[t];
        c.exclusive = variant >= 1;
        c.with_init = variant == 2;
        c.in_place = variant == 0 && k % 2;
        run_scan(&c, &o, (uint64_t)(k * 100 + t * 10 + variant));
      }
      tsg_free(&o);
    }
}

Test(by_key, scan_every_dtype_and_op) {
  const akx_op ops[] = {AKX_OP_ADD, AKX_OP_MUL, AKX_OP_MIN, AKX_OP_MAX, AKX_OP_AND, AKX_OP_OR, AKX_OP_XOR};
  tsg_offsets o = runs_pattern(150, 20, 13);
  for (int d = 0; d < TSG_N_DTYPES; ++d)
    for (int k = 0; k < COUNT(ops); ++k) {
      if (ref_resolve_acc(tsg_all_dtypes[d], AKX_MAP_IDENTITY, ops[k], AKX_DTYPE_AUTO) == REF_UNSUPPORTED) continue;
      for (int variant = 0; variant < 2; ++variant) {
        tsg_case c = tsg_case_make(tsg_all_dtypes[d], ops[k]);
        c.exclusive = variant;
        c.with_init = variant && (ops[k] == AKX_OP_MIN || ops[k] == AKX_OP_MAX || (d + k) % 2);
        c.key_t = key_dtypes[(d + k + variant) % COUNT(key_dtypes)];
        run_scan(&c, &o, (uint64_t)(d * 100 + k * 10 + variant));
      }
    }
  tsg_free(&o);
}

Test(by_key, scan_strides_dst_dtypes_and_large) {
  tsg_offsets o = runs_pattern(300, 25, 15);
  const int64_t steps[][3] = {{2, 1, 1}, {1, -1, 1}, {1, 1, 2}, {-1, 2, -1}, {2, -1, 2}};
  for (int s = 0; s < COUNT(steps); ++s) {
    tsg_case c = tsg_case_make(s % 2 ? AKX_INT8 : AKX_FLOAT32, AKX_OP_ADD);
    c.dst_t = s % 2 ? AKX_INT8 : AKX_FLOAT64;
    c.key_step = steps[s][0];
    c.src_step = steps[s][1];
    c.dst_step = steps[s][2];
    c.key_t = key_dtypes[s % COUNT(key_dtypes)];
    c.exclusive = s % 2;
    run_scan(&c, &o, (uint64_t)s);
  }
  tsg_case c = tsg_case_make(AKX_FLOAT32, AKX_OP_ADD);
  c.in_place = 1;
  c.src_step = -1;
  run_scan(&c, &o, 9);
  tsg_free(&o);
  tsg_offsets big = runs_pattern(300, 10000, 16);
  c = tsg_case_make(AKX_FLOAT32, AKX_OP_ADD);
  run_scan(&c, &big, 10);
  tsg_free(&big);
  tsg_offsets one = big_run(1 << 20, 200, 18);
  c = tsg_case_make(AKX_INT32, AKX_OP_ADD);
  c.dst_t = AKX_INT32;
  c.key_t = AKX_INT64;
  c.exclusive = 1;
  run_scan(&c, &one, 11);
  tsg_free(&one);
}

typedef struct {
  double a, b;
} affine_acc;

/* x * (i + 1) with i the position within the run. */
static const char POSITION_SRC[] =
    "AKX_HD double p_add(double a, double b) { return a + b; }\n"
    "AKX_HD double p_zero() { return 0.0; }\n"
    "template <class S> AKX_HD double p_map(S x, int64_t i) { return (double)x * (double)(i + 1); }\n";

/* The affine maps (non-commutative, no identity) restart at every run; a position map numbers
 * each run from 0. */
Test(by_key, scan_user_ops_affine_and_position) {
  const akx_user_op_desc da = {AFFINE_SRC, "Affine", "af_then", NULL, "af_map", "af_at_zero"};
  const akx_user_op_desc dp = {POSITION_SRC, "double", "p_add", "p_zero", "p_map", NULL};
  const akx_op ops[2] = {tfx_user_op(ctx, &da), tfx_user_op(ctx, &dp)};
  tsg_offsets o = runs_pattern(300, 60, 17);
  int32_t *keys = tfx_xmalloc((size_t)o.n * 4);
  tsg_fill_keys(keys, AKX_INT32, &o, 5);
  float *vals = tfx_xmalloc((size_t)o.n * 4);
  for (int64_t i = 0; i < o.n; ++i) vals[i] = (float)((int64_t)(ref_rand(44, (uint64_t)i) % 21) - 10) / 8.0f;
  const tfx_layout L = tfx_layout_vector(o.n);
  tvw_pair k = tvw_upload(ctx, AKX_INT32, keys, &L), v = tvw_upload(ctx, AKX_FLOAT32, vals, &L);
  const affine_acc shift = {2, 1};
  for (int p = 0; p < 2; ++p)
    for (int mode = 0; mode < 2; ++mode) { /* inclusive; exclusive with init (affine: needed) */
      double *dev = tfx_alloc(ctx, (size_t)o.n * 8);
      const akx_array dst = akx_vector(dev, AKX_FLOAT64, o.n);
      const double zero = 0;
      akx_scan_opts opts = akx_scan_opts_default();
      opts.exclusive = mode;
      opts.init = mode ? (p == 0 ? (const void *)&shift : (const void *)&zero) : NULL;
      const akx_status st = akx_scan_by_key(ctx, &dst, &k.dev, &v.dev, ops[p], &opts);
      cr_assert_eq(st, AKX_SUCCESS, "%s, mode %d: %s (%s)", p ? "position" : "affine", mode, akx_status_string(st),
                   akx_last_error());
      double *got = tfx_xmalloc((size_t)o.n * 8);
      tfx_to_host(ctx, got, dev, (size_t)o.n * 8);
      for (int64_t r = 0; r < o.nseg; ++r) {
        affine_acc acc = shift;
        int have = mode;
        double sum = 0;
        for (int64_t i = o.off[r]; i < o.off[r + 1]; ++i) {
          const double x = vals[i];
          double want;
          if (p == 0) {
            const affine_acc f = {1.0 + x * 0.01, x};
            want = acc.b;
            acc = have ? (affine_acc){acc.a * f.a, acc.b * f.a + f.b} : f;
            have = 1;
            if (!mode) want = acc.b;
          } else {
            want = sum;
            sum += x * (double)(i - o.off[r] + 1);
            if (!mode) want = sum;
          }
          cr_assert_leq(fabs(got[i] - want), 1e-9 * (1 + fabs(want)), "%s, %s, run %lld [%lld, %lld), element %lld: %.17g, expected %.17g",
                        p ? "position" : "affine", mode ? "exclusive with init" : "inclusive", (long long)r,
                        (long long)o.off[r], (long long)o.off[r + 1], (long long)i, got[i], want);
        }
      }
      free(got);
      tfx_free(ctx, dev);
    }
  tvw_free(ctx, &k);
  tvw_free(ctx, &v);
  free(keys);
  free(vals);
  tsg_free(&o);
}

/* ---- determinism and launches ------------------------------------------------------------------- */

Test(by_key, bitwise_deterministic_floats) {
  tsg_offsets o = runs_pattern(3000, 300, 77);
  tsg_case c = tsg_case_make(AKX_FLOAT32, AKX_OP_ADD);
  c.fill_flags = REF_FILL_ROUGH;
  for (int f = 0; f < 2; ++f) {
    tsg_result first, again;
    char msg[1536];
    int (*call)(akx_context *, const tsg_case *, const tsg_offsets *, uint64_t, tsg_result *, char *, size_t) =
        f ? tsg_scan_by_key_run : tsg_reduce_by_key_run;
    cr_assert(call(ctx, &c, &o, 9, &first, msg, sizeof msg), "%s", msg);
    for (int k = 0; k < 3; ++k) {
      akx_context *use = ctx;
      if (k > 0) {
        char sched[32];
        snprintf(sched, sizeof sched, "random:%d", 700 + k);
        setenv("AKX_SIM_SCHEDULE", sched, 1);
        use = tfx_open();
      }
      cr_assert(call(use, &c, &o, 9, &again, msg, sizeof msg), "%s", msg);
      cr_assert(memcmp(first.out, again.out, first.out_bytes) == 0, "%s: call %d gave other bits than the first",
                f ? "scan_by_key" : "reduce_by_key", k);
      free(again.out);
      if (k > 0) {
        tfx_close(use);
        unsetenv("AKX_SIM_SCHEDULE");
      }
    }
    free(first.out);
  }
  tsg_free(&o);
}

static uint64_t launches(void) {
  akx_sim_kernel_counters total;
  cr_assert_eq(akx_sim_counters_get(ctx, &total, NULL, 0, NULL), AKX_SUCCESS, "%s", akx_last_error());
  return total.launches;
}

/* No size query exists for the by-key calls: once a first call has sized the context's own
 * workspace, the next calls of the same shapes allocate nothing and are one launch each (the
 * count that reduce_by_key brings back to the host is a copy, not a launch). Short runs, runs up
 * to 10^4, and a run of 2^20 keys among short ones. */
Test(by_key, one_launch_per_call_once_the_workspace_serves) {
  tsg_offsets pats[3] = {runs_pattern(500, 10, 31), runs_pattern(200, 10000, 32), big_run(1 << 20, 50, 33)};
  for (int p = 0; p < 3; ++p)
    for (int f = 0; f < 2; ++f) {
      tsg_case c = tsg_case_make(AKX_FLOAT32, AKX_OP_ADD);
      char msg[1536];
      tsg_result r;
      int (*call)(akx_context *, const tsg_case *, const tsg_offsets *, uint64_t, tsg_result *, char *, size_t) =
          f ? tsg_scan_by_key_run : tsg_reduce_by_key_run;
      cr_assert(call(ctx, &c, &pats[p], 1, &r, msg, sizeof msg), "%s", msg);
      free(r.out);
      akx_context_info_t before, after;
      cr_assert_eq(akx_context_info(ctx, &before), AKX_SUCCESS);
      for (int k = 0; k < 2; ++k) {
        if (tfx_is_sim(ctx)) cr_assert_eq(akx_sim_counters_reset(ctx), AKX_SUCCESS);
        cr_assert(call(ctx, &c, &pats[p], 2 + (uint64_t)k, &r, msg, sizeof msg), "%s", msg);
        free(r.out);
        if (tfx_is_sim(ctx))
          cr_expect_eq(launches(), 1u, "%s of %lld keys in %lld runs, call %d: %llu launches", f ? "scan_by_key" : "reduce_by_key",
                       (long long)pats[p].n, (long long)pats[p].nseg, k + 2, (unsigned long long)launches());
      }
      cr_assert_eq(akx_context_info(ctx, &after), AKX_SUCCESS);
      cr_assert_eq(after.workspace_allocations, before.workspace_allocations, "%s: a later call allocated",
                   f ? "scan_by_key" : "reduce_by_key");
    }
  for (int p = 0; p < 3; ++p) tsg_free(&pats[p]);
}
