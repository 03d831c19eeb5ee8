// kernels/akx/lookback.cuh itself (the scan's deterministic radix-32 Fenwick look-back), on the sim:
//  - with its release/acquire order: right prefixes under every schedule, in tile order (a
//    non-commutative operator), and tiles really waited on nodes not yet published;
//  - its chain of dependent publications: the base-32 digits of the last tile, not log2(tiles);
//  - with a planted broken order (the flag published by a plain store, or by a relaxed store
//    with no fence before it): the sim reports it (a global-memory race, a livelock) or the
//    prefixes come out wrong under some schedule. A kernel that dropped the fence would fail
//    on a GPU only now and then; here it fails the test.
//  - calls back to back on one status with no reset between them (each with its own epoch):
//    right with the exact epoch check, and wrong with a planted check that takes an earlier
//    call's node.
// tests/test_sim_order.cpp does the same for a textbook decoupled look-back.
#include <stdlib.h>

#include <vector>

#include "akx/lookback.cuh"
#include "sim_probe.hpp"

namespace {
const char *const schedules[] = {
    "inorder",   "random:1",  "random:2",  "random:3",  "random:4",  "random:5",  "random:6",
    "random:7",  "random:8",  "random:9",  "random:10", "random:11", "random:12", "random:13",
    "random:14", "random:15", "random:16", "random:17", "random:18", "random:19", "random:20"};

// x -> m x + c over uint32 (mod 2^32): composing maps is associative and not commutative, so
// a prefix folded out of tile order comes out wrong.
struct affine {
  uint32_t m, c;
};
struct affine_scan {
  using T = affine;
  AKX_HD static T identity() { return T{1u, 0u}; }
  // a, then b
  AKX_HD static T apply(const T &a, const T &b) { return T{b.m * a.m, b.m * a.c + b.c}; }
};
bool same(const affine &a, const affine &b) { return a.m == b.m && a.c == b.c; }

// Planted orders.
struct order_plain_flag {  // the flag by a plain store: not visible to other blocks
  AKX_DEVICE static void publish(uint32_t *flag, uint32_t epoch AKX_SITE_PARAM) {
    akx::gst(flag, epoch AKX_SITE_ARG);
  }
  AKX_DEVICE static uint32_t poll(const uint32_t *flag AKX_SITE_PARAM) {
    return akx::ld_volatile(flag AKX_SITE_ARG);
  }
};
struct order_no_fence {  // a relaxed flag with no fence after the node's store
  AKX_DEVICE static void publish(uint32_t *flag, uint32_t epoch AKX_SITE_PARAM) {
    akx::st_volatile(flag, epoch AKX_SITE_ARG);
  }
  AKX_DEVICE static uint32_t poll(const uint32_t *flag AKX_SITE_PARAM) {
    return akx::ld_volatile(flag AKX_SITE_ARG);
  }
};

// A planted epoch check: any published flag, of this call or an earlier one.
struct epoch_any_published {
  AKX_HD static bool current(uint32_t flag, uint32_t) { return flag != 0u; }
};

struct probe_args {
  const affine *agg;  // per tile
  void *status;
  int64_t tiles;
  affine *out;  // per tile: its exclusive prefix
  uint32_t epoch;
};

// One warp per tile, tiles taken from the ticket as scan_tile_body takes them (and the ticket
// put back by the last one).
template <class Order, class Epoch = akx::lookback_epoch_exact>
AKX_GLOBAL void lookback_probe(probe_args a) {
  const akx::lookback_status<affine> st = akx::lookback_status<affine>::at(a.status, (int64_t)akx::lookback_status<affine>::nodes_offset(a.tiles));
  unsigned long long t = 0;
  if (threadIdx.x == 0) {
    t = atomicAdd(&st.head->ticket, 1ull);
    if (t + 1 == (unsigned long long)a.tiles) atomicExch(&st.head->ticket, 0ull);
  }
  t = akx::shfl_idx(akx::FULL_MASK, t, 0);
  const affine prefix = akx::lookback<affine_scan, Order, Epoch>(st, a.tiles, t, akx::gld(a.agg + t), a.epoch);
  if (threadIdx.x == 0) akx::gst(a.out + t, prefix);
}

struct run_result {
  akx_status status;
  bool correct;
  unsigned long long waits;
  uint64_t dependent_steps;  // the sim's longest release->acquire chain of the launch
};

template <class Order>
run_result run(const char *schedule, int64_t tiles) {
  setenv("AKX_SIM_SCHEDULE", schedule, 1);
  sim_context sim;
  affine *agg = sim.alloc<affine>((size_t)tiles);
  affine *out = sim.alloc<affine>((size_t)tiles);
  void *status = sim.alloc<char>(akx::lookback_status<affine>::bytes(tiles));  // zeroed
  for (int64_t t = 0; t < tiles; ++t)
    agg[t] = affine{uint32_t(2 * t + 3), uint32_t(t * 2654435761u + 1)};  // odd m: no zero
  run_result r;
  r.status = AKX_LAUNCH("lookback_probe", lookback_probe<Order>, (unsigned)tiles, 32, 0, NULL,
                        probe_args{agg, status, tiles, out, 1u});
  r.correct = true;
  affine expect = affine_scan::identity();
  for (int64_t t = 0; t < tiles; ++t) {
    r.correct = r.correct && same(out[t], expect);
    expect = affine_scan::apply(expect, agg[t]);
  }
  r.waits = akx::lookback_status<affine>::at(status, 0).head->waits;
  r.dependent_steps = sim.kernel("lookback_probe").dependent_steps;
  unsetenv("AKX_SIM_SCHEDULE");
  return r;
}
}  // namespace

TestSuite(lookback);

Test(lookback, release_acquire_right_in_tile_order_under_every_schedule, .timeout = 300) {
  // 1..3 tiles: the first nodes; 32, 33, 64: the first level-1 node and readers of it; 300: up
  // to 9 level-1 nodes and 31 level-0 ones a tile; 1100: level-2 nodes (tile 1023's waits on
  // 62 earlier ones) and tiles reading all three levels.
  for (int64_t tiles : {1, 2, 3, 32, 33, 64, 300, 1100}) {
    unsigned long long waits = 0;
    for (const char *schedule : schedules) {
      const run_result r = run<akx::lookback_release_acquire>(schedule, tiles);
      cr_assert_eq(r.status, AKX_SUCCESS, "%lld tiles, %s: %s", (long long)tiles, schedule,
                   akx_last_error());
      cr_assert(r.correct, "%lld tiles, %s: wrong prefixes", (long long)tiles, schedule);
      waits += r.waits;
    }
    // Tiles ran at once: some found a node not yet published and waited for it.
    if (tiles >= 64) cr_expect_gt(waits, 0ull, "%lld tiles: no tile ever waited", (long long)tiles);
  }
}

// A level-3 node (tile 32767's, over 32768 tiles) and the tile after it, which reads one node of
// each of four levels: right prefixes, and a chain of 4 (a 10^8 float32 scan has 24415 tiles).
Test(lookback, four_levels, .timeout = 300) {
  const run_result r = run<akx::lookback_release_acquire>("random:3", 32769);
  cr_assert_eq(r.status, AKX_SUCCESS, "32769 tiles: %s", akx_last_error());
  cr_assert(r.correct, "32769 tiles: wrong prefixes");
  cr_expect_eq(r.dependent_steps, 4ull, "32769 tiles: a chain of %llu steps", (unsigned long long)r.dependent_steps);
}

// The chain of dependent publications is what the look-back costs at every size (each step a
// round trip no work hides): a level-j node waits only for lower levels, so the longest
// release->acquire chain is the number of base-32 digits of the last tile (a tile of level 0
// publishes before it reads). The binary tree's was log2(tiles): 10 at 1100 tiles, here 3.
Test(lookback, the_chain_is_the_base_32_digits_of_the_last_tile, .timeout = 300) {
  const struct {
    int64_t tiles;
    uint64_t steps;
  } cases[] = {{2, 1}, {32, 1}, {33, 2}, {1024, 2}, {1025, 3}, {1100, 3}};
  for (const auto &c : cases) {
    for (const char *schedule : {"inorder", "random:1", "random:2"}) {
      const run_result r = run<akx::lookback_release_acquire>(schedule, c.tiles);
      cr_assert_eq(r.status, AKX_SUCCESS, "%lld tiles, %s: %s", (long long)c.tiles, schedule, akx_last_error());
      cr_assert(r.correct, "%lld tiles, %s: wrong prefixes", (long long)c.tiles, schedule);
      cr_expect_eq(r.dependent_steps, c.steps, "%lld tiles, %s: a chain of %llu steps, expected %llu",
                   (long long)c.tiles, schedule, (unsigned long long)r.dependent_steps,
                   (unsigned long long)c.steps);
    }
  }
}

template <class Order>
int caught(const char *what) {
  int n = 0;
  for (const char *schedule : schedules) {
    const run_result r = run<Order>(schedule, 64);
    if (r.status == AKX_ERROR_SIM_CHECK) {
      cr_expect(strstr(akx_last_error(), "global-memory race") != NULL ||
                    strstr(akx_last_error(), "livelock") != NULL,
                "%s, %s: %s", what, schedule, akx_last_error());
      cr_log_info("%s, %s: %s", what, schedule, akx_last_error());
      ++n;
    } else if (r.status == AKX_SUCCESS && !r.correct) {
      cr_log_info("%s, %s: wrong prefixes", what, schedule);
      ++n;
    } else {
      cr_expect_eq(r.status, AKX_SUCCESS, "%s, %s: %s", what, schedule, akx_last_error());
    }
  }
  return n;
}

Test(lookback, plain_flag_store_is_caught, .timeout = 300) {
  cr_expect_gt(caught<order_plain_flag>("plain flag"), 0, "a plain flag store was never caught");
}

Test(lookback, relaxed_flag_without_fence_is_caught, .timeout = 300) {
  cr_expect_gt(caught<order_no_fence>("no fence"), 0, "a relaxed flag without a fence was never caught");
}

// Another call's reset of the status in the middle of this launch (two contexts handed one
// caller workspace, which akx_context_set_workspace now refuses): the ticket counter restarts
// past tile 0, so no block ever takes tile 0 and every later tile polls for a flag nobody
// sets. On a GPU that hangs (a debug build traps: kernels/akx/device.cuh, poll_bound); the sim
// must report it as a livelock at the look-back's poll, in every build, under every schedule.
AKX_GLOBAL void lookback_after_reset_probe(probe_args a) {
  const akx::lookback_status<affine> st = akx::lookback_status<affine>::at(a.status, (int64_t)akx::lookback_status<affine>::nodes_offset(a.tiles));
  unsigned long long t = 0;
  if (threadIdx.x == 0) t = atomicAdd(&st.head->ticket, 1ull);
  t = akx::shfl_idx(akx::FULL_MASK, t, 0);
  if (t >= (unsigned long long)a.tiles) return;  // tickets past the tile count
  const affine prefix =
      akx::lookback<affine_scan, akx::lookback_release_acquire>(st, a.tiles, t, akx::gld(a.agg + t), a.epoch);
  if (threadIdx.x == 0) akx::gst(a.out + t, prefix);
}

Test(lookback, a_status_reset_mid_launch_is_a_livelock_not_a_hang, .timeout = 300) {
  for (const char *schedule : {"inorder", "random:1", "random:2", "random:3"}) {
    setenv("AKX_SIM_SCHEDULE", schedule, 1);
    sim_context sim;
    const int64_t tiles = 64;
    affine *agg = sim.alloc<affine>((size_t)tiles);
    affine *out = sim.alloc<affine>((size_t)tiles);
    void *status = sim.alloc<char>(akx::lookback_status<affine>::bytes(tiles));
    for (int64_t t = 0; t < tiles; ++t) agg[t] = affine{3u, uint32_t(t)};
    akx::lookback_status<affine>::at(status, 0).head->ticket = 1;  // tile 0 never taken
    const akx_status s = AKX_LAUNCH("lookback_after_reset_probe", lookback_after_reset_probe,
                                    (unsigned)tiles, 32, 0, NULL,
                                    probe_args{agg, status, tiles, out, 1u});
    cr_expect_eq(s, AKX_ERROR_SIM_CHECK, "%s: %s (\"%s\")", schedule, akx_status_string(s),
                 akx_last_error());
    cr_expect(strstr(akx_last_error(), "livelock") != NULL &&
                  strstr(akx_last_error(), "lookback.cuh") != NULL,
              "%s: not a livelock at the look-back's poll: %s", schedule, akx_last_error());
    cr_log_info("%s: %s", schedule, akx_last_error());
    unsetenv("AKX_SIM_SCHEDULE");
  }
}

// Calls back to back on one status, never reset between them but at the epoch's wrap (as
// src/core/workspace.c does): each call's epoch one past the last, the calls' aggregates all
// different, so a node of an earlier call taken for this call's gives a wrong prefix. Returns
// the calls whose prefixes came out wrong (or that failed a check).
template <class Epoch>
int wrong_calls(const char *schedule, uint32_t first_epoch) {
  setenv("AKX_SIM_SCHEDULE", schedule, 1);
  sim_context sim;
  const int64_t most = 64;
  affine *agg = sim.alloc<affine>((size_t)most);
  affine *out = sim.alloc<affine>((size_t)most);
  void *status = sim.alloc<char>(akx::lookback_status<affine>::bytes(most));  // zeroed: reset
  int wrong = 0;
  uint32_t epoch = first_epoch;
  for (int call = 0; call < 6; ++call) {
    const int64_t tiles = most;
    for (int64_t t = 0; t < tiles; ++t)
      agg[t] = affine{uint32_t(2 * (t + call) + 3), uint32_t(t * 2654435761u + 7u * (uint32_t)call + 1u)};
    if (++epoch == 0) {  // the wrap: the host resets the flags to 0 (scan_init) and goes on at 1
      memset(status, 0, akx::lookback_status<affine>::bytes(most));
      epoch = 1;
    }
    const akx_status s = AKX_LAUNCH("lookback_probe", (lookback_probe<akx::lookback_release_acquire, Epoch>),
                                    (unsigned)tiles, 32, 0, NULL, probe_args{agg, status, tiles, out, epoch});
    bool ok = s == AKX_SUCCESS;
    affine expect = affine_scan::identity();
    for (int64_t t = 0; ok && t < tiles; ++t) {
      ok = same(out[t], expect);
      expect = affine_scan::apply(expect, agg[t]);
    }
    // The last tile put the ticket back: the next call needs no reset.
    ok = ok && akx::lookback_status<affine>::at(status, 0).head->ticket == 0;
    if (!ok) {
      cr_log_info("%s, call %d (epoch %u): %s", schedule, call, (unsigned)epoch,
                  s == AKX_SUCCESS ? "wrong prefixes" : akx_last_error());
      ++wrong;
    }
  }
  unsetenv("AKX_SIM_SCHEDULE");
  return wrong;
}

Test(lookback, calls_back_to_back_without_a_reset_take_only_their_own_nodes, .timeout = 300) {
  for (const char *schedule : {"inorder", "random:1", "random:2", "random:3", "random:4"}) {
    cr_expect_eq(wrong_calls<akx::lookback_epoch_exact>(schedule, 0u), 0, "%s", schedule);
    // Across the wrap of the epoch's 32 bits: ..., 2^32 - 2, 2^32 - 1, (reset) 1, 2.
    cr_expect_eq(wrong_calls<akx::lookback_epoch_exact>(schedule, 0xfffffffcu), 0, "%s, wrap", schedule);
  }
}

Test(lookback, an_epoch_check_that_takes_an_earlier_calls_node_is_caught, .timeout = 300) {
  int wrong = 0;
  for (const char *schedule : {"inorder", "random:1", "random:2", "random:3", "random:4"})
    wrong += wrong_calls<epoch_any_published>(schedule, 0u);
  cr_expect_gt(wrong, 0, "a check taking an earlier call's node was never caught");
}
