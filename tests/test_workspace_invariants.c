/* The workspace's invariants (docs/workspace.md, "The invariants"), which the sim checks after
 * every call (src/core/workspace_check.c):
 *  - calls of one family leave nothing another family's next call takes for its own: a
 *    segmented reduction whose segments split across tiles, then a look-back call (a scan, a
 *    segmented scan, reduce_by_key) on the same context, each checked against the host;
 *  - the split tickets survive garbage offsets: a segmented reduction whose offsets decrease
 *    (unspecified values) leaves the next one right;
 *  - the check itself fails where it should: a flag planted past the epoch, a user's kernel
 *    writing the look-back's flags or past its scratch, each reported as AKX_ERROR_SIM_CHECK
 *    naming what broke. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "akx.h"
#include "fixture.h"
#include "internal.h" /* ctx->ws: the tags' layout and what the context knows of them */

static akx_array vec(void *p, akx_dtype t, int64_t n) { return akx_vector(p, t, n); }

/* A segmented reduction of n float32 ones in segments of `len` (the last one shorter), tiles
 * of 128 x 8 = 1024 elements: segments of 1536 elements split across two tiles. */
static void segmented_sum_of_ones(akx_context *c, float *dsrc, int64_t n, int64_t len) {
  const int64_t nseg = (n + len - 1) / len;
  int32_t *off = tfx_xmalloc((size_t)(nseg + 1) * sizeof *off);
  for (int64_t s = 0; s <= nseg; ++s) off[s] = (int32_t)(s * len < n ? s * len : n);
  int32_t *doff = tfx_upload(c, off, (size_t)(nseg + 1) * sizeof *off);
  float *ddst = tfx_alloc(c, (size_t)nseg * sizeof(float));
  akx_array d = vec(ddst, AKX_FLOAT32, nseg), s = vec(dsrc, AKX_FLOAT32, n), o = vec(doff, AKX_INT32, nseg + 1);
  akx_reduce_opts opts = {0};
  opts.acc = AKX_DTYPE_AUTO;
  opts.block_size = 128;
  opts.items_per_thread = 8;
  cr_assert_eq(akx_segmented_reduce(c, &d, &s, &o, AKX_MAP_IDENTITY, AKX_OP_ADD, &opts), AKX_SUCCESS, "%s",
               akx_last_error());
  float *got = tfx_xmalloc((size_t)nseg * sizeof(float));
  tfx_to_host(c, got, ddst, (size_t)nseg * sizeof(float));
  for (int64_t k = 0; k < nseg; ++k)
    cr_assert_eq(got[k], (float)(off[k + 1] - off[k]), "segment %lld: %g, expected %d", (long long)k, got[k],
                 (int)(off[k + 1] - off[k]));
  free(got);
  free(off);
  tfx_free(c, ddst);
  tfx_free(c, doff);
}

static float *ones_on_device(akx_context *c, int64_t n) {
  float *h = tfx_xmalloc((size_t)n * sizeof(float));
  for (int64_t i = 0; i < n; ++i) h[i] = 1.0f;
  float *d = tfx_upload(c, h, (size_t)n * sizeof(float));
  free(h);
  return d;
}

Test(workspace_invariants, a_split_segmented_reduction_then_a_scan_of_the_same_source) {
  akx_context *c = tfx_open();
  const int64_t n = 1 << 16;
  float *dsrc = ones_on_device(c, n);
  segmented_sum_of_ones(c, dsrc, n, 1536);
  float *ddst = tfx_alloc(c, (size_t)n * sizeof(float));
  akx_array d = vec(ddst, AKX_FLOAT32, n), s = vec(dsrc, AKX_FLOAT32, n);
  cr_assert_eq(akx_scan(c, &d, &s, AKX_OP_ADD, 0, NULL), AKX_SUCCESS, "%s", akx_last_error());
  float *got = tfx_xmalloc((size_t)n * sizeof(float));
  tfx_to_host(c, got, ddst, (size_t)n * sizeof(float));
  int64_t wrong = 0;
  for (int64_t i = 0; i < n; ++i) wrong += got[i] != (float)(i + 1);
  cr_assert_eq(wrong, 0, "%lld of %lld scan outputs wrong", (long long)wrong, (long long)n);
  free(got);
  tfx_close(c);
}

Test(workspace_invariants, a_split_segmented_reduction_then_a_segmented_scan) {
  akx_context *c = tfx_open();
  const int64_t n = 1 << 15, len = 1536, nseg = (n + len - 1) / len;
  float *dsrc = ones_on_device(c, n);
  segmented_sum_of_ones(c, dsrc, n, len);
  int32_t *off = tfx_xmalloc((size_t)(nseg + 1) * sizeof *off);
  for (int64_t k = 0; k <= nseg; ++k) off[k] = (int32_t)(k * len < n ? k * len : n);
  int32_t *doff = tfx_upload(c, off, (size_t)(nseg + 1) * sizeof *off);
  float *ddst = tfx_alloc(c, (size_t)n * sizeof(float));
  akx_array d = vec(ddst, AKX_FLOAT32, n), s = vec(dsrc, AKX_FLOAT32, n), o = vec(doff, AKX_INT32, nseg + 1);
  cr_assert_eq(akx_segmented_scan(c, &d, &s, &o, AKX_OP_ADD, NULL), AKX_SUCCESS, "%s", akx_last_error());
  float *got = tfx_xmalloc((size_t)n * sizeof(float));
  tfx_to_host(c, got, ddst, (size_t)n * sizeof(float));
  for (int64_t i = 0; i < n; ++i) cr_assert_eq(got[i], (float)(i % len + 1), "element %lld: %g", (long long)i, got[i]);
  free(got);
  free(off);
  tfx_close(c);
}

Test(workspace_invariants, segmented_reductions_scans_and_reduce_by_key_on_one_context) {
  akx_context *c = tfx_open();
  const int64_t n = 200003;
  float *dsrc = ones_on_device(c, n);
  int32_t *keys = tfx_xmalloc((size_t)n * sizeof *keys), *vals = tfx_xmalloc((size_t)n * sizeof *vals);
  for (int64_t i = 0; i < n; ++i) {
    keys[i] = (int32_t)(i / 7);
    vals[i] = (int32_t)(i % 5);
  }
  int32_t *dkeys = tfx_upload(c, keys, (size_t)n * sizeof *keys), *dvals = tfx_upload(c, vals, (size_t)n * sizeof *vals);
  const int64_t runs = (n + 6) / 7;
  int32_t *dko = tfx_alloc(c, (size_t)runs * sizeof(int32_t)), *dvo = tfx_alloc(c, (size_t)runs * sizeof(int32_t));
  float *dscan = tfx_alloc(c, (size_t)n * sizeof(float));
  for (int round = 0; round < 3; ++round) {
    segmented_sum_of_ones(c, dsrc, n, 1536 + 512 * round);
    akx_array d = vec(dscan, AKX_FLOAT32, n), s = vec(dsrc, AKX_FLOAT32, n);
    cr_assert_eq(akx_scan(c, &d, &s, AKX_OP_ADD, 0, NULL), AKX_SUCCESS, "%s", akx_last_error());
    segmented_sum_of_ones(c, dsrc, n, 3000);
    akx_array ko = vec(dko, AKX_INT32, runs), vo = vec(dvo, AKX_INT32, runs), k = vec(dkeys, AKX_INT32, n),
              v = vec(dvals, AKX_INT32, n);
    int64_t total = -1;
    cr_assert_eq(akx_reduce_by_key(c, &ko, &vo, &k, &v, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &total), AKX_SUCCESS,
                 "round %d: %s", round, akx_last_error());
    cr_assert_eq(total, runs);
    int32_t *gk = tfx_xmalloc((size_t)runs * sizeof *gk), *gv = tfx_xmalloc((size_t)runs * sizeof *gv);
    tfx_to_host(c, gk, dko, (size_t)runs * sizeof *gk);
    tfx_to_host(c, gv, dvo, (size_t)runs * sizeof *gv);
    for (int64_t r = 0; r < runs; ++r) {
      int32_t want = 0;
      for (int64_t i = 7 * r; i < 7 * r + 7 && i < n; ++i) want += vals[i];
      cr_assert(gk[r] == (int32_t)r && gv[r] == want, "round %d, run %lld: (%d, %d), expected (%lld, %d)", round,
                (long long)r, gk[r], gv[r], (long long)r, want);
    }
    free(gk);
    free(gv);
  }
  free(keys);
  free(vals);
  tfx_close(c);
}

Test(workspace_invariants, a_segmented_reduction_after_decreasing_offsets_is_right) {
  akx_context *c = tfx_open();
  const int64_t n = 1 << 14;
  float *dsrc = ones_on_device(c, n);
  /* Garbage: two segments begin in tile 0 and go on past it, then a decreasing bound. Their
   * values are unspecified; the tickets they leave must not reach the next calls. */
  const int32_t bad[] = {0, 5000, 100, 9000, 3, 16000};
  int32_t *dbad = tfx_upload(c, bad, sizeof bad);
  float *dout = tfx_alloc(c, 5 * sizeof(float));
  akx_array d = vec(dout, AKX_FLOAT32, 5), s = vec(dsrc, AKX_FLOAT32, n), o = vec(dbad, AKX_INT32, 6);
  akx_reduce_opts opts = {0};
  opts.acc = AKX_DTYPE_AUTO;
  opts.block_size = 128;
  opts.items_per_thread = 8;
  for (int k = 0; k < 3; ++k) {
    cr_assert_eq(akx_segmented_reduce(c, &d, &s, &o, AKX_MAP_IDENTITY, AKX_OP_ADD, &opts), AKX_SUCCESS, "%s",
                 akx_last_error());
    segmented_sum_of_ones(c, dsrc, n, 1536);
    segmented_sum_of_ones(c, dsrc, n, 1300);
  }
  tfx_close(c);
}

Test(workspace_invariants, steady_segmented_reductions_take_no_reset) {
  akx_context *c = tfx_open();
  const int64_t n = 1 << 15;
  float *dsrc = ones_on_device(c, n);
  segmented_sum_of_ones(c, dsrc, n, 1536);
  const int64_t before = c->ws.resets;
  for (int k = 0; k < 4; ++k) segmented_sum_of_ones(c, dsrc, n - 4000 * k, 1536 + 100 * k);
  cr_assert_eq(c->ws.resets, before, "%lld resets over four calls that fit the first's layout",
               (long long)(c->ws.resets - before));
  tfx_close(c);
}

/* ---- the check fails where it should ------------------------------------------------------ */

static void expect_sim_check(akx_status s, const char *words) {
  cr_assert_eq(s, AKX_ERROR_SIM_CHECK, "status %s (%s)", akx_status_string(s), akx_last_error());
  cr_assert(strstr(akx_last_error(), words) != NULL, "the sentence \"%s\" does not say \"%s\"", akx_last_error(),
            words);
}

static akx_status scan_ones(akx_context *c, float *dsrc, float *ddst, int64_t n) {
  akx_array d = vec(ddst, AKX_FLOAT32, n), s = vec(dsrc, AKX_FLOAT32, n);
  return akx_scan(c, &d, &s, AKX_OP_ADD, 0, NULL);
}

Test(workspace_invariants, a_flag_past_the_epoch_is_reported) {
  akx_context *c = tfx_open();
  if (!tfx_is_sim(c)) cr_skip_test("the check is the sim's");
  const int64_t n = 1 << 16;
  float *dsrc = ones_on_device(c, n), *ddst = tfx_alloc(c, (size_t)n * sizeof(float));
  cr_assert_eq(scan_ones(c, dsrc, ddst, n), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_gt(c->ws.flags_known, 3);
  /* The sim's device memory is the host's: plant in place, as a foreign writer would. */
  uint32_t *flags = (uint32_t *)((char *)c->ws.ptr + akx__ws_flags_at(c->ws.layout));
  flags[3] = c->ws.epoch + 5;
  float sum;
  akx_array s = vec(dsrc, AKX_FLOAT32, n);
  expect_sim_check(akx_mapreduce(c, &s, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &sum, AKX_HOST), "look-back flag 3");
  tfx_close(c);
}

struct reach {
  ptrdiff_t at;        /* bytes from the workspace the user's kernel was given */
  unsigned char value; /* what it stores there */
};
static akx_status reach_run(void *stream, void *workspace, void *arg) {
  (void)stream;
  const struct reach *r = arg;
  ((unsigned char *)workspace)[r->at] = r->value;
  return AKX_SUCCESS;
}

Test(workspace_invariants, a_write_to_the_flags_by_a_call_that_does_not_own_them_is_reported) {
  akx_context *c = tfx_open();
  if (!tfx_is_sim(c)) cr_skip_test("the check is the sim's");
  const int64_t n = 1 << 16;
  float *dsrc = ones_on_device(c, n), *ddst = tfx_alloc(c, (size_t)n * sizeof(float));
  cr_assert_eq(scan_ones(c, dsrc, ddst, n), AKX_SUCCESS, "%s", akx_last_error());
  /* A user's kernel handed the scratch reaches back into the flags before it, and puts a flag
   * back to 0: a value the flags' invariant allows, so only the owners' rule sees it. */
  const size_t scratch_at = akx__ws_tags_end(c->ws.layout), flag_at = akx__ws_flags_at(c->ws.layout) + 4 * 2;
  cr_assert_neq(((uint32_t *)((char *)c->ws.ptr + flag_at))[0], 0u, "the scan published flag 2");
  struct reach r = {(ptrdiff_t)flag_at - (ptrdiff_t)scratch_at, 0};
  expect_sim_check(akx_context_run(c, 256, reach_run, &r), "the look-back's flags, which it does not own");
  tfx_close(c);
}

Test(workspace_invariants, a_write_past_the_scratch_is_reported) {
  akx_context *c = tfx_open();
  if (!tfx_is_sim(c)) cr_skip_test("the check is the sim's");
  const int64_t n = 1 << 16;
  float *dsrc = ones_on_device(c, n), *ddst = tfx_alloc(c, (size_t)n * sizeof(float));
  cr_assert_eq(scan_ones(c, dsrc, ddst, n), AKX_SUCCESS, "%s", akx_last_error());
  struct reach none = {0, 0};
  cr_assert_eq(akx_context_run(c, 1 << 16, reach_run, &none), AKX_SUCCESS, "%s", akx_last_error()); /* grows it */
  cr_assert_gt(c->ws.bytes, akx__ws_tags_end(c->ws.layout) + 256 + 8192, "a buffer with room past 256 bytes");
  struct reach r = {256 + 4096 + 17, 0x5a}; /* a page after the 256 bytes the call asked for */
  expect_sim_check(akx_context_run(c, 256, reach_run, &r), "past its scratch");
  tfx_close(c);
}

Test(workspace_invariants, a_split_ticket_left_nonzero_is_reported) {
  akx_context *c = tfx_open();
  if (!tfx_is_sim(c)) cr_skip_test("the check is the sim's");
  const int64_t n = 1 << 14;
  float *dsrc = ones_on_device(c, n), *ddst = tfx_alloc(c, (size_t)n * sizeof(float));
  cr_assert_eq(scan_ones(c, dsrc, ddst, n), AKX_SUCCESS, "%s", akx_last_error()); /* the flags laid out */
  segmented_sum_of_ones(c, dsrc, n, 1536);
  const akx__ws_layout L = c->ws.layout;
  const int h = c->ws.split_half;
  cr_assert_gt(c->ws.splits_zero[h], 1, "the next call's half is known zero");
  uint64_t *next = (uint64_t *)((char *)c->ws.ptr + akx__ws_splits_at(L)) + (size_t)h * (size_t)L.splits;
  next[1] = 7;
  expect_sim_check(scan_ones(c, dsrc, ddst, n), "split ticket 1");
  tfx_close(c);
}
