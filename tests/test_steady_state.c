/* Steady state: a program's mix of calls on one context takes one launch per call once the
 * workspace serves the sizes (docs/workspace.md), whatever family ran before:
 *  - a fixed mixed sequence (a whole-array sum, a split dims reduction, a columns dims
 *    reduction, a scan, a findall, a sum, a scan) at 10^4..10^6, repeated, one launch per
 *    call after the first round, every value checked;
 *  - contexts interleaved call by call share nothing (each keeps its own one launch);
 *  - the cases that still reset, each forcing exactly one reset (ws.resets: a zeroing memset,
 *    a look-back reset kernel, a reduction's second pass taken for its tickets);
 *  - bytes planted in the tags equal to the next call's epoch (or a ticket past 0), as a GPU
 *    may find them after a foreign buffer, a caller's buffer too small for two families, a
 *    user's kernel on the workspace or an epoch moved back: every family that reads its
 *    tags resets them or takes its second pass, and its values stay right. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "akx_layer.h"
#include "akx_sim.h"
#include "checked_calls.h"
#include "fixture.h"
#include "internal.h" /* ctx->ws: the workspace's resets and epoch; the sim's test hooks */

static uint64_t launches(akx_context *c) {
  akx_sim_kernel_counters total;
  int32_t count = 0;
  cr_assert_eq(akx_sim_counters_get(c, &total, NULL, 0, &count), AKX_SUCCESS, "%s", akx_last_error());
  return total.launches;
}

/* The sequence's calls on n float32 elements: the seven (a program's mix), then the
 * other scan shapes and a strided sum, so that every family and shape meets every other's
 * workspace. */
enum {
  MIX_SUM, MIX_SPLIT_DIMS, MIX_COLUMNS_DIMS, MIX_SCAN, MIX_FINDALL, MIX_SUM2, MIX_SCAN2,
  MIX_SLICES_SCAN, MIX_ROWS_DIMS, MIX_STRIDED_SUM, MIX_COLUMNS_SCAN, MIX_CALLS
};
static const char *const mix_names[MIX_CALLS] = {"sum", "split dims", "columns dims", "scan", "findall", "sum",
                                                 "scan", "slices scan", "rows dims", "strided sum",
                                                 "columns scan"};

static akx_status mix_call(akx_context *c, int k, int64_t n, uint64_t seed) {
  switch (k) {
    case MIX_SUM: case MIX_SUM2: return cc_sum(c, n, 1, AKX_HOST, seed);
    case MIX_SPLIT_DIMS: return cc_sums_along(c, n / 1000, 1000, 1, seed); /* n/1000 outputs of 1000 */
    case MIX_COLUMNS_DIMS: return cc_sums_along(c, n / 100, 100, 0, seed); /* 100 outputs of n/100 */
    case MIX_SCAN: case MIX_SCAN2: return cc_scan_vector(c, n, seed);
    case MIX_SLICES_SCAN: return cc_scan(c, n / 1000, 1000, 1, seed);   /* segmented tile scan */
    case MIX_ROWS_DIMS: return cc_sums_along(c, n / 10, 10, 1, seed);   /* many short rows: no split */
    case MIX_STRIDED_SUM: return cc_sum(c, n / 3, 3, AKX_DEVICE, seed); /* the strided first pass */
    case MIX_COLUMNS_SCAN: return cc_scan(c, n / 100, 100, 0, seed);    /* the columns kernels */
    default: return cc_findall(c, n, 50, seed);
  }
}

/* The launches of call k alone, on a context of its own, once its workspace is known: one,
 * but for the columns scan whose columns are long (its chunks: a reduce, a carry and a scan
 * pass by design, docs/scan_tiles.md). The mix may add none. */
static uint64_t alone(int k, int64_t n) {
  akx_context *c = tfx_open();
  for (int r = 0; r < 2; ++r) {
    cr_assert_eq(akx_sim_counters_reset(c), AKX_SUCCESS);
    cr_assert_eq(mix_call(c, k, n, 99), AKX_SUCCESS, "%s of %lld alone: %s", mix_names[k], (long long)n,
                 akx_last_error());
  }
  const uint64_t l = launches(c);
  tfx_close(c);
  return l;
}

/* Runs `rounds` rounds of the sequence at n on c; from round 1 on, every call takes the
 * launches it takes alone: one, but the long columns scan's passes. */
static void mixed_rounds(akx_context *c, int64_t n, int rounds) {
  uint64_t want[MIX_CALLS];
  for (int k = 0; k < MIX_CALLS; ++k) want[k] = k == MIX_COLUMNS_SCAN ? alone(k, n) : 1;
  for (int r = 0; r < rounds; ++r)
    for (int k = 0; k < MIX_CALLS; ++k) {
      cr_assert_eq(akx_sim_counters_reset(c), AKX_SUCCESS);
      cr_assert_eq(mix_call(c, k, n, (uint64_t)(r * MIX_CALLS + k)), AKX_SUCCESS, "%s of %lld: %s", mix_names[k],
                   (long long)n, akx_last_error());
      const uint64_t l = launches(c);
      if (r > 0)
        cr_assert_eq(l, want[k], "round %d, call %d (%s) of %lld elements: %llu launches, %llu alone", r, k,
                     mix_names[k], (long long)n, (unsigned long long)l, (unsigned long long)want[k]);
    }
}

TestSuite(steady_state, .timeout = 600);

/* 100 rounds at 10^4; fewer at the larger sizes, whose calls take the sim longer (the
 * workspace's states repeat from the second round on: the rounds after it add no case). One
 * test per size, so that Criterion's jobs run them side by side. */
Test(steady_state, mixed_sequence_is_one_launch_per_call_at_10e4) {
  akx_context *c = tfx_open();
  mixed_rounds(c, 10000, 100);
  tfx_close(c);
}

Test(steady_state, mixed_sequence_is_one_launch_per_call_at_10e5) {
  akx_context *c = tfx_open();
  mixed_rounds(c, 100000, 10);
  tfx_close(c);
}

/* Up from 10^4 through 10^6 on one context, then back down: the workspace grown by the larger
 * calls serves the smaller ones as it is. */
Test(steady_state, mixed_sequence_is_one_launch_per_call_up_to_10e6_and_back) {
  akx_context *c = tfx_open();
  mixed_rounds(c, 10000, 2);
  mixed_rounds(c, 1000000, 2);
  mixed_rounds(c, 10000, 2);
  tfx_close(c);
}

Test(steady_state, contexts_interleaved_share_nothing) {
  akx_context *a = tfx_open(), *b = tfx_open();
  for (int r = 0; r < 2; ++r)
    for (int k = 0; k < MIX_CALLS; ++k)
      for (int which = 0; which < 2; ++which) {
        akx_context *c = which ? b : a;
        /* Each context its own size: neither's workspace serves the other's. */
        const int64_t n = which ? 100000 : 30000;
        if (k == MIX_COLUMNS_SCAN) continue; /* its passes: mixed_rounds compares them */
        cr_assert_eq(akx_sim_counters_reset(c), AKX_SUCCESS);
        cr_assert_eq(mix_call(c, k, n, (uint64_t)(1000 * which + r * MIX_CALLS + k)), AKX_SUCCESS, "%s", akx_last_error());
        if (r > 0)
          cr_assert_eq(launches(c), 1u, "context %d, round %d, %s: %llu launches", which, r, mix_names[k],
                       (unsigned long long)launches(c));
      }
  tfx_close(a);
  tfx_close(b);
}

/* ---- the cases that still reset --------------------------------------------------------- */

/* Runs `call` once and checks its launches and the resets it took. */
#define EXPECT_CALL(c, call, want_launches, want_resets, what)                                              \
  do {                                                                                                      \
    cr_assert_eq(akx_sim_counters_reset(c), AKX_SUCCESS);                                                   \
    const int64_t before_ = (c)->ws.resets;                                                                 \
    cr_assert_eq((call), AKX_SUCCESS, "%s: %s", what, akx_last_error());                                    \
    cr_expect_eq(launches(c), (uint64_t)(want_launches), "%s: %llu launches, expected %d", what,            \
                 (unsigned long long)launches(c), (int)(want_launches));                                    \
    cr_expect_eq((c)->ws.resets - before_, (int64_t)(want_resets), "%s: %lld resets, expected %d", what,    \
                 (long long)((c)->ws.resets - before_), (int)(want_resets));                                \
  } while (0)

Test(steady_state, a_new_grown_or_widened_workspace_is_zeroed_once) {
  akx_context *c = tfx_open();
  EXPECT_CALL(c, cc_scan_vector(c, 100000, 1), 1, 1, "the first call: a new buffer, zeroed");
  EXPECT_CALL(c, cc_scan_vector(c, 100000, 2), 1, 0, "the same call again");
  /* More tiles than the flags laid out (findall's 123 at 10^6 against the scan's 25): the
   * layout widens, or the buffer grows: zeroed once either way. */
  EXPECT_CALL(c, cc_findall(c, 1000000, 50, 3), 1, 1, "findall of more tiles than the scan's flags");
  EXPECT_CALL(c, cc_scan_vector(c, 1000000, 4), 1, 1, "a scan of more tiles than findall's");
  EXPECT_CALL(c, cc_findall(c, 1000000, 50, 41), 1, 0, "findall on the scan's flags");
  EXPECT_CALL(c, cc_scan_vector(c, 1000000, 42), 1, 0, "the scan again");
  /* A split dims reduction's tickets widen the layout: its tags zeroed once, in place. */
  EXPECT_CALL(c, cc_sums_along(c, 100, 1000, 1, 5), 1, 1, "the first split dims reduction");
  EXPECT_CALL(c, cc_scan_vector(c, 1000000, 6), 1, 0, "a scan after it keeps its flags");
  EXPECT_CALL(c, cc_sums_along(c, 100, 1000, 1, 7), 1, 0, "the split dims reduction keeps its tickets");
  tfx_close(c);
}

Test(steady_state, a_caller_buffer_too_small_for_two_families_resets_at_each_change) {
  akx_context *c = tfx_open();
  float *f = tfx_alloc(c, 4);
  const int64_t vshape[1] = {200000}, mshape[2] = {200, 1000}, oshape[2] = {200, 1};
  akx_array v = akx_array_c(f, AKX_FLOAT32, 1, vshape);
  akx_array m = akx_array_c(f, AKX_FLOAT32, 2, mshape), o = akx_array_c(f, AKX_FLOAT32, 2, oshape);
  size_t scan_bytes = 0, dims_bytes = 0;
  cr_assert_eq(akx_scan_workspace_size(c, &v, &v, AKX_OP_ADD, 0, NULL, &scan_bytes), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(akx_reduce_dims_workspace_size(c, &o, &m, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &dims_bytes), AKX_SUCCESS,
               "%s", akx_last_error());
  cr_assert_gt(dims_bytes, 0, "a split reduction: tickets and partials");
  const size_t bytes = scan_bytes > dims_bytes ? scan_bytes : dims_bytes;
  void *buf = tfx_alloc(c, bytes);
  cr_assert_eq(akx_context_set_workspace(c, buf, bytes), AKX_SUCCESS, "%s", akx_last_error());
  EXPECT_CALL(c, cc_scan_vector(c, 200000, 1), 1, 0, "a scan on the caller's new buffer (zeroed when set)");
  EXPECT_CALL(c, cc_scan_vector(c, 200000, 2), 1, 0, "the scan again");
  EXPECT_CALL(c, cc_sums_along(c, 200, 1000, 1, 3), 2, 1, "a split dims reduction over the scan's tags");
  EXPECT_CALL(c, cc_sums_along(c, 200, 1000, 1, 4), 1, 0, "the reduction again");
  /* The scan's flags and nodes fit beside the reduction's tickets (its scratch is the smaller):
   * the layout widens to both, its tags zeroed (a memset), one launch. */
  EXPECT_CALL(c, cc_scan_vector(c, 200000, 5), 1, 1, "the scan over the reduction's tickets");
  EXPECT_CALL(c, cc_scan_vector(c, 200000, 6), 1, 0, "the scan again");
  /* A buffer that holds both: one launch each, whatever the order. */
  cr_assert_eq(akx_context_set_workspace(c, NULL, 0), AKX_SUCCESS);
  tfx_free(c, buf);
  buf = tfx_alloc(c, 2 * bytes);
  cr_assert_eq(akx_context_set_workspace(c, buf, 2 * bytes), AKX_SUCCESS, "%s", akx_last_error());
  for (int r = 0; r < 3; ++r) {
    EXPECT_CALL(c, cc_scan_vector(c, 200000, 7), 1, 0, "a scan on a buffer that holds both");
    /* The first widens the layout to the tickets: its tags zeroed once (a memset). */
    EXPECT_CALL(c, cc_sums_along(c, 200, 1000, 1, 8), 1, r == 0, "a split dims reduction on a buffer that holds both");
  }
  cr_assert_eq(akx_context_set_workspace(c, NULL, 0), AKX_SUCCESS);
  tfx_free(c, buf);
  tfx_free(c, f);
  tfx_close(c);
}

Test(steady_state, the_epoch_wrap_resets_once) {
  setenv("AKX_LOOKBACK_EPOCH", "4294967293", 1);
  akx_context *c = tfx_open();
  unsetenv("AKX_LOOKBACK_EPOCH");
  EXPECT_CALL(c, cc_scan_vector(c, 300000, 1), 1, 1, "epoch 2^32 - 2 on a new buffer (zeroed)");
  EXPECT_CALL(c, cc_findall(c, 100000, 50, 2), 1, 0, "epoch 2^32 - 1");
  EXPECT_CALL(c, cc_scan_vector(c, 100000, 3), 2, 1, "the wrap: every flag of the layout reset");
  cr_expect_eq(c->ws.epoch, 1u, "the epoch after the wrap");
  /* The flags past this call's tiles held epochs of before the wrap: reset too. */
  EXPECT_CALL(c, cc_scan_vector(c, 300000, 4), 1, 0, "a larger call after the wrap");
  tfx_close(c);
}

Test(steady_state, an_interrupted_call_resets_once) {
  akx_context *c = tfx_open();
  for (int family = 0; family < 3; ++family) {
    for (int r = 0; r < 2; ++r)
      cr_assert_eq(family == 0 ? cc_scan_vector(c, 100000, 1) : family == 1 ? cc_findall(c, 100000, 50, 1)
                                                                             : cc_sums_along(c, 100, 1000, 1, 1),
                   AKX_SUCCESS, "%s", akx_last_error());
    cr_assert_eq(akx__sim_interrupt_after(c, 3), AKX_SUCCESS);
    const akx_status s = family == 0 ? cc_scan_vector(c, 100000, 2) : family == 1 ? cc_findall(c, 100000, 50, 2)
                                                                                   : cc_sums_along(c, 100, 1000, 1, 2);
    cr_assert_eq(s, AKX_ERROR_SIM_CHECK, "family %d: %s", family, akx_last_error());
    EXPECT_CALL(c, family == 0 ? cc_scan_vector(c, 100000, 3) : family == 1 ? cc_findall(c, 100000, 50, 3)
                                                                           : cc_sums_along(c, 100, 1000, 1, 3),
                2, 1, "the call after the interrupted one");
    EXPECT_CALL(c, family == 0 ? cc_scan_vector(c, 100000, 4) : family == 1 ? cc_findall(c, 100000, 50, 4)
                                                                           : cc_sums_along(c, 100, 1000, 1, 4),
                1, 0, "the next");
  }
  tfx_close(c);
}

Test(steady_state, a_captured_call_resets_once_and_the_buffer_is_never_trusted_again) {
  akx_context *c = tfx_open();
  const int64_t n = 100000;
  float *h = cc_small_floats(n, 3);
  float *src = tfx_upload(c, h, (size_t)n * sizeof(float)), *dst = tfx_alloc(c, (size_t)n * sizeof(float));
  akx_array s = akx_vector(src, AKX_FLOAT32, n), d = akx_vector(dst, AKX_FLOAT32, n);
  cr_assert_eq(akx_scan(c, &d, &s, AKX_OP_ADD, 0, NULL), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(akx__sim_set_capturing(c, 1), AKX_SUCCESS);
  EXPECT_CALL(c, akx_scan(c, &d, &s, AKX_OP_ADD, 0, NULL), 2, 1, "a captured scan");
  EXPECT_CALL(c, akx_scan(c, &d, &s, AKX_OP_ADD, 0, NULL), 2, 1, "a second captured scan");
  cr_assert_eq(akx__sim_set_capturing(c, 0), AKX_SUCCESS);
  EXPECT_CALL(c, akx_scan(c, &d, &s, AKX_OP_ADD, 0, NULL), 2, 1, "after the capture, on the captured buffer");
  free(h);
  tfx_free(c, src);
  tfx_free(c, dst);
  tfx_close(c);
}

Test(steady_state, one_launch_off_resets_every_call) {
  setenv("AKX_ONE_LAUNCH", "0", 1);
  akx_context *c = tfx_open();
  unsetenv("AKX_ONE_LAUNCH");
  /* The layout laid out first (a widening is a reset of its own). */
  cr_assert_eq(cc_scan_vector(c, 100000, 1), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(cc_sums_along(c, 100, 1000, 1, 1), AKX_SUCCESS, "%s", akx_last_error());
  for (int r = 0; r < 2; ++r) {
    EXPECT_CALL(c, cc_scan_vector(c, 100000, 2), 2, 1, "a scan with AKX_ONE_LAUNCH=0");
    EXPECT_CALL(c, cc_sums_along(c, 100, 1000, 1, 3), 2, 1, "a split dims reduction with AKX_ONE_LAUNCH=0");
    EXPECT_CALL(c, cc_sum(c, 100000, 1, AKX_DEVICE, 4), 2, 1, "a sum with AKX_ONE_LAUNCH=0");
  }
  tfx_close(c);
}

/* ---- planted tags ------------------------------------------------------------------------- */

/* Every 4-byte word of [p, p + bytes) set to v: a flag equal to an epoch, a ticket past 0. */
static void fill_words(void *p, size_t bytes, uint32_t v) {
  uint32_t *w = p;
  for (size_t i = 0; i < bytes / 4; ++i) w[i] = v;
}

/* The calls that read tags, each after the plant. */
static akx_status tagged_call(akx_context *c, int family, uint64_t seed) {
  switch (family) {
    case 0: return cc_scan_vector(c, 100000, seed);
    case 1: return cc_findall(c, 100000, 50, seed);
    case 2: return cc_sums_along(c, 100, 1000, 1, seed); /* split: tickets */
    default: return cc_sum(c, 100000, 1, AKX_DEVICE, seed); /* several blocks: the ticket */
  }
}
static const char *const tagged_names[4] = {"scan", "findall", "split dims reduction", "whole-array sum"};

Test(steady_state, a_foreign_buffer_full_of_the_next_epoch_is_zeroed_when_set) {
  akx_context *c = tfx_open();
  for (int family = 0; family < 4; ++family) {
    const size_t bytes = 4 << 20;
    void *buf = tfx_alloc(c, bytes);
    /* The sim's device memory is the host's: plant in place. */
    fill_words(buf, bytes, c->ws.epoch + 1);
    cr_assert_eq(akx_context_set_workspace(c, buf, bytes), AKX_SUCCESS, "%s", akx_last_error());
    EXPECT_CALL(c, tagged_call(c, family, 10 + family), 1, 0, tagged_names[family]);
    cr_assert_eq(akx_context_set_workspace(c, NULL, 0), AKX_SUCCESS);
    tfx_free(c, buf);
  }
  tfx_close(c);
}

struct plant {
  uint32_t value;
  size_t bytes;
};
/* A user's kernel on the context's workspace (akx_context_run): every byte it is given set to
 * the next epoch. */
static akx_status plant_run(void *stream, void *workspace, void *arg) {
  (void)stream;
  const struct plant *p = arg;
  fill_words(workspace, p->bytes, p->value);
  return AKX_SUCCESS;
}

Test(steady_state, a_users_kernel_on_the_workspace_never_reaches_the_tags) {
  akx_context *c = tfx_open();
  for (int family = 0; family < 4; ++family) {
    cr_assert_eq(tagged_call(c, family, 1), AKX_SUCCESS, "%s", akx_last_error());
    struct plant p = {c->ws.epoch + 1, 1 << 20};
    cr_assert_eq(akx_context_run(c, p.bytes, plant_run, &p), AKX_SUCCESS, "%s", akx_last_error());
    EXPECT_CALL(c, tagged_call(c, family, 2), 1, 0, tagged_names[family]);
  }
  tfx_close(c);
}

Test(steady_state, a_users_kernel_over_the_tags_of_a_small_caller_buffer_is_reset) {
  akx_context *c = tfx_open();
  for (int family = 0; family < 4; ++family) {
    const size_t bytes = 2 << 20;
    void *buf = tfx_alloc(c, bytes);
    cr_assert_eq(akx_context_set_workspace(c, buf, bytes), AKX_SUCCESS, "%s", akx_last_error());
    cr_assert_eq(tagged_call(c, family, 1), AKX_SUCCESS, "%s", akx_last_error());
    /* The whole buffer: no room beside the tags, so the user's bytes lie over them. */
    struct plant p = {c->ws.epoch + 1, bytes};
    cr_assert_eq(akx_context_run(c, p.bytes, plant_run, &p), AKX_SUCCESS, "%s", akx_last_error());
    /* The user's call took the buffer from its start: the layout is gone, and the next call
     * lays its tags out again, zeroed (a memset: one reset, no second launch). */
    EXPECT_CALL(c, tagged_call(c, family, 2), 1, 1, tagged_names[family]);
    EXPECT_CALL(c, tagged_call(c, family, 3), 1, 0, tagged_names[family]);
    cr_assert_eq(akx_context_set_workspace(c, NULL, 0), AKX_SUCCESS);
    tfx_free(c, buf);
  }
  tfx_close(c);
}

Test(steady_state, an_epoch_moved_back_onto_the_flags_resets) {
  /* The flags hold epoch 101 (the scan's) and 102 (findall's, over its fewer tiles); the
   * context's epoch set back to 100: the next scan draws 101, which its flags already hold. */
  setenv("AKX_LOOKBACK_EPOCH", "100", 1);
  akx_context *c = tfx_open();
  cr_assert_eq(cc_scan_vector(c, 100000, 1), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(cc_findall(c, 100000, 50, 2), AKX_SUCCESS, "%s", akx_last_error());
  setenv("AKX_LOOKBACK_EPOCH", "99", 1);
  cr_assert_eq(akx__context_reread_settings(c), AKX_SUCCESS, "%s", akx_last_error());
  setenv("AKX_LOOKBACK_EPOCH", "100", 1);
  cr_assert_eq(akx__context_reread_settings(c), AKX_SUCCESS, "%s", akx_last_error());
  unsetenv("AKX_LOOKBACK_EPOCH");
  cr_assert_eq(c->ws.epoch, 100u);
  EXPECT_CALL(c, cc_scan_vector(c, 100000, 3), 2, 1, "a scan drawing the epoch its flags hold");
  EXPECT_CALL(c, cc_scan_vector(c, 100000, 4), 1, 0, "the scan after the reset");
  tfx_close(c);
}
