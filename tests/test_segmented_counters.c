/* akx_segmented_reduce's split tickets, counted by the sim (include/akx_sim.h's atomics): one
 * atomicAdd per arrival of a tile at a split segment (kernels/akx/segment_tile.cuh,
 * split_arrive), whatever the schedule, one dependent step, where the compare-and-swap loop before it retried a
 * contended ticket; and one segment over every element (each tile's arrival on one ticket, the
 * longest same-address chain there is) within 1.25x of the model's device copy of its bytes. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "akx.h"
#include "akx_sim.h"
#include "device_profile.h"
#include "fixture.h"
#include "sim/model.h"

#define TILE 1024 /* opts: 128 threads x 8 items */

static akx_sim_kernel_counters segmented_reduce_counters(akx_context *c) {
  akx_sim_kernel_counters k[16];
  int32_t n = 0;
  cr_assert_eq(akx_sim_counters_get(c, NULL, k, 16, &n), AKX_SUCCESS, "%s", akx_last_error());
  for (int32_t i = 0; i < n && i < 16; ++i)
    if (strcmp(k[i].kernel, "segmented_reduce") == 0) return k[i];
  cr_assert_fail("no segmented_reduce launch");
  return k[0];
}

/* Sums n ones in the segments `off` (nseg + 1 entries) with 1024-element tiles; checks every
 * segment and returns the kernel's counters of the one call. */
static akx_sim_kernel_counters sum_segments(akx_context *c, const int32_t *off, int64_t nseg, int64_t n) {
  float *h = tfx_xmalloc((size_t)n * sizeof(float));
  for (int64_t i = 0; i < n; ++i) h[i] = 1.0f;
  float *dsrc = tfx_upload(c, h, (size_t)n * sizeof(float));
  int32_t *doff = tfx_upload(c, off, (size_t)(nseg + 1) * sizeof *off);
  float *ddst = tfx_alloc(c, (size_t)nseg * sizeof(float));
  akx_array d = akx_vector(ddst, AKX_FLOAT32, nseg), s = akx_vector(dsrc, AKX_FLOAT32, n),
            o = akx_vector(doff, AKX_INT32, nseg + 1);
  akx_reduce_opts opts = {0};
  opts.acc = AKX_DTYPE_AUTO;
  opts.block_size = 128;
  opts.items_per_thread = 8;
  cr_assert_eq(akx_sim_counters_reset(c), AKX_SUCCESS);
  cr_assert_eq(akx_segmented_reduce(c, &d, &s, &o, AKX_MAP_IDENTITY, AKX_OP_ADD, &opts), AKX_SUCCESS, "%s",
               akx_last_error());
  const akx_sim_kernel_counters k = segmented_reduce_counters(c);
  tfx_to_host(c, h, ddst, (size_t)nseg * sizeof(float));
  for (int64_t j = 0; j < nseg; ++j)
    cr_assert_eq(h[j], (float)(off[j + 1] - off[j]), "segment %lld: %g", (long long)j, h[j]);
  free(h);
  tfx_free(c, dsrc);
  tfx_free(c, doff);
  tfx_free(c, ddst);
  return k;
}

/* Arrivals: a segment over tiles t1..t2 (t2 > t1) takes t2 - t1 + 1 of them. */
static int64_t arrivals(const int32_t *off, int64_t nseg, int64_t *longest) {
  int64_t a = 0;
  *longest = 0;
  for (int64_t j = 0; j < nseg; ++j) {
    if (off[j + 1] <= off[j]) continue;
    const int64_t t1 = off[j] / TILE, t2 = (off[j + 1] - 1) / TILE;
    if (t2 > t1) {
      a += t2 - t1 + 1;
      if (t2 - t1 + 1 > *longest) *longest = t2 - t1 + 1;
    }
  }
  return a;
}

Test(segmented_counters, one_atomic_per_arrival_under_every_schedule, .timeout = 300) {
  const char *schedules[] = {"inorder", "random:1", "random:2", "random:3"};
  const int64_t n = 1 << 17;
  int32_t *off = tfx_xmalloc((size_t)(n + 1) * sizeof *off);
  /* lengths 1..6000 (a few tiles each), and empty ones */
  uint64_t state = 77;
  int64_t nseg = 0;
  off[0] = 0;
  for (int64_t at = 0; at < n;) {
    state = state * 6364136223846793005u + 1442695040888963407u;
    const int64_t len = (int64_t)((state >> 33) % 6001);
    at = at + len < n ? at + len : n;
    off[++nseg] = (int32_t)at;
  }
  int64_t longest;
  const int64_t a = arrivals(off, nseg, &longest);
  cr_assert_gt(a, 100, "the segments split");
  for (int k = 0; k < 4; ++k) {
    setenv("AKX_SIM_SCHEDULE", schedules[k], 1);
    akx_context *c = tfx_open();
    if (!tfx_is_sim(c)) cr_skip_test("the sim's counters");
    const akx_sim_kernel_counters got = sum_segments(c, off, nseg, n);
    cr_log_info("%s: %lld arrivals, %llu atomics, the longest chain %llu (%lld tiles)", schedules[k], (long long)a,
                (unsigned long long)got.atomics, (unsigned long long)got.atomic_chain, (long long)longest);
    cr_expect_eq(got.atomics, (uint64_t)a, "%s: %llu atomics for %lld arrivals: one each", schedules[k],
                 (unsigned long long)got.atomics, (long long)a);
    cr_expect_leq(got.atomics, 2 * (uint64_t)a, "%s: more than 2 atomics an arrival", schedules[k]);
    /* A tile arrives at all its splits before it acquires any, each arrival from its own
     * thread: no release carries another split's wait (one thread's two arrivals made a
     * chain of 14 steps for 2^20 power-law segments). */
    cr_expect_eq(got.dependent_steps, 1u, "%s: %llu dependent steps", schedules[k],
                 (unsigned long long)got.dependent_steps);
    cr_expect_eq(got.atomic_chain, (uint64_t)longest, "%s: the chain on one ticket is its segment's tiles",
                 schedules[k]);
    tfx_close(c);
    unsetenv("AKX_SIM_SCHEDULE");
  }
  free(off);
}

/* The model's copy of `bytes` (half read, half written) on the context's profile. */
static double model_copy_us(double bytes) {
  const char *name = getenv("AKX_SIM_DEVICE");
  const akx__device_profile *p = akx__profile_by_name(name ? name : "h200");
  cr_assert_not_null(p);
  return akx__sim_model_copy_us(p, bytes);
}

Test(segmented_counters, one_segment_of_every_element_near_the_copy, .timeout = 300) {
  akx_context *c = tfx_open();
  if (!tfx_is_sim(c)) cr_skip_test("the sim's model");
  const int64_t n = 1 << 20, tiles = n / TILE;
  const int32_t off[2] = {0, (int32_t)n};
  const akx_sim_kernel_counters got = sum_segments(c, off, 1, n);
  cr_expect_eq(got.atomics, (uint64_t)tiles, "one arrival a tile");
  cr_expect_eq(got.atomic_chain, (uint64_t)tiles, "every arrival on the one ticket");
  /* the least bytes: src read, two offsets read, one float written */
  const double copy = model_copy_us(4.0 * (double)n + 8 + 4);
  cr_log_info("one segment of 2^20 float32: %.2f us, the copy %.2f us (%.2fx)", got.model_us, copy, got.model_us / copy);
  cr_expect_leq(got.model_us, 1.25 * copy, "%.2f us on the model, more than 1.25x the copy's %.2f us", got.model_us,
                copy);
  tfx_close(c);
}
