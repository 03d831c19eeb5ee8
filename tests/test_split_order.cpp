// The finish of a split segment (kernels/akx/segment_tile.cuh, split_arrive and split_finish) on
// the sim, as tests/test_lookback.cpp does for the look-back: each tile parks its piece, fences,
// and takes the split's ticket; the tile that takes the last one fences again and folds the
// pieces. With the kernel's fences (split_fences): the right sum under every schedule, one
// finisher, and calls back to back on one pair of ticket halves with no reset right too (each
// counts on the half the call before zeroed, split_clear_next).
// With a planted missing fence (the release before the ticket, or the finisher's acquire): the
// sim reports a global-memory race or the sum comes out wrong under some schedule. A kernel that
// dropped either would fail on a GPU only now and then; here it fails the test.
#include <stdlib.h>

#include <vector>

#include "akx/segment_tile.cuh"
#include "sim_probe.hpp"

namespace {
const char *const schedules[] = {"inorder",  "random:1",  "random:2",  "random:3",  "random:4",  "random:5",
                                 "random:6", "random:7",  "random:8",  "random:9",  "random:10", "random:11",
                                 "random:12", "random:13", "random:14", "random:15"};

struct no_release {  // planted: the piece's store not fenced before the ticket
  AKX_DEVICE static void release() {}
  AKX_DEVICE static void acquire() { __threadfence(); }
};

struct probe_args {
  akx__segmented_plan p;
  const uint32_t *pieces;   // per tile
  uint32_t *out;            // the segment's sum
  unsigned long long *finishers;
};

// One block a tile, all of them pieces of segment 0 (offsets {0, n}, tiles of E elements): tile
// 0 parks the first piece (trail), the others theirs (lead); the finisher folds them.
template <class Order, bool Acquire>
AKX_GLOBAL void split_probe(probe_args a) {
  AKX_SHARED(long long, jobs, 6);
  const uint64_t t = blockIdx.x;
  const int64_t E = a.p.n / a.p.tiles;
  akx::split_clear_next(a.p, t, (int32_t)threadIdx.x, (int32_t)blockDim.x);
  if (threadIdx.x == 0) {
    jobs.st(0, -1);
    jobs.st(3, -1);
    akx::split_arrive<akx::op_add, uint32_t, Order>(a.p, 0, t, E, akx::gld(a.pieces + t), t == 0, jobs, 0);
  }
  __syncthreads();
  const bool finishing = jobs.ld(0) >= 0;
  if (finishing && threadIdx.x == 0) {
    if (Acquire) Order::acquire();
    atomicAdd(a.finishers, 1ull);
  }
  __syncthreads();
  if (finishing && threadIdx.x < 32) akx::split_finish<akx::op_add, uint32_t>(a.p, 0, jobs.ld(1), jobs.ld(2), a.out);
}

struct run_result {
  akx_status status;
  bool correct;
  unsigned long long finishers;
};

struct rig {
  sim_context sim;
  int64_t tiles;
  int64_t *off;
  unsigned char *status;
  unsigned long long *tickets;  // two halves of a ticket a tile
  uint32_t *pieces, *out;
  unsigned long long *finishers;
  explicit rig(int64_t tiles_) : tiles(tiles_) {
    off = sim.alloc<int64_t>(2);
    off[0] = 0;
    off[1] = tiles * 64;
    // the header, then lead and trail: a piece a tile each
    status = sim.alloc<unsigned char>(64 + (size_t)tiles * 8);
    tickets = sim.alloc<unsigned long long>(2 * (size_t)tiles);
    for (int64_t t = 0; t < 2 * tiles; ++t) tickets[t] = 0;
    pieces = sim.alloc<uint32_t>((size_t)tiles);
    out = sim.alloc<uint32_t>(1);
    finishers = sim.alloc<unsigned long long>(1);
    for (int64_t t = 0; t < tiles; ++t) pieces[t] = uint32_t(t * 2654435761u + 12345u);
  }
  template <class Order, bool Acquire>
  run_result run(uint32_t call) {
    *out = 0;
    *finishers = 0;
    probe_args a{};
    a.p.n = tiles * 64;
    a.p.tiles = tiles;
    a.p.offsets = off;
    a.p.offsets_stride = 1;
    a.p.offsets_size = 8;
    a.p.nseg = 1;
    a.p.status = status;
    a.p.nodes_at = 64;
    a.p.split_count = tickets + (call % 2) * tiles;
    a.p.split_clear = tickets + (call % 2 ? 0 : tiles);
    a.p.split_words = tiles;
    a.p.finish.bare = 1;
    a.pieces = pieces;
    a.out = out;
    a.finishers = finishers;
    run_result r;
    r.status = AKX_LAUNCH("split_probe", (split_probe<Order, Acquire>), (unsigned)tiles, 64, 0, NULL, a);
    uint32_t want = 0;
    for (int64_t t = 0; t < tiles; ++t) want += pieces[t];
    r.correct = *out == want;
    r.finishers = *finishers;
    return r;
  }
};

template <class Order, bool Acquire>
int caught(const char *what) {
  int n = 0;
  for (const char *schedule : schedules) {
    setenv("AKX_SIM_SCHEDULE", schedule, 1);
    rig g(40);
    const run_result r = g.run<Order, Acquire>(1);
    if (r.status == AKX_ERROR_SIM_CHECK) {
      cr_expect(strstr(akx_last_error(), "global-memory race") != NULL, "%s, %s: %s", what, schedule, akx_last_error());
      cr_log_info("%s, %s: %s", what, schedule, akx_last_error());
      ++n;
    } else if (r.status == AKX_SUCCESS && !r.correct) {
      cr_log_info("%s, %s: a wrong sum", what, schedule);
      ++n;
    } else {
      cr_expect_eq(r.status, AKX_SUCCESS, "%s, %s: %s", what, schedule, akx_last_error());
    }
    unsetenv("AKX_SIM_SCHEDULE");
  }
  return n;
}
}  // namespace

Test(split_order, fences_right_under_every_schedule_one_finisher, .timeout = 120) {
  for (int64_t tiles : {2, 3, 33, 40}) {
    for (const char *schedule : schedules) {
      setenv("AKX_SIM_SCHEDULE", schedule, 1);
      rig g(tiles);
      // Three calls on one pair of halves, no reset between them: each counts on the half
      // the call before zeroed, whatever the one before that left in it.
      for (uint32_t call = 1; call <= 3; ++call) {
        const run_result r = g.run<akx::split_fences, true>(call);
        cr_assert_eq(r.status, AKX_SUCCESS, "%lld tiles, %s, call %u: %s", (long long)tiles, schedule, call,
                     akx_last_error());
        cr_assert(r.correct, "%lld tiles, %s, call %u: a wrong sum", (long long)tiles, schedule, call);
        cr_assert_eq(r.finishers, 1ull, "%lld tiles, %s, call %u: %llu finishers", (long long)tiles, schedule, call,
                     r.finishers);
        for (int64_t u = 0; u < tiles; ++u)
          cr_assert_eq(g.tickets[(call % 2 ? 0 : tiles) + u], 0ull, "call %u left the next half's ticket %lld", call,
                       (long long)u);
      }
      unsetenv("AKX_SIM_SCHEDULE");
    }
  }
}

Test(split_order, a_missing_release_fence_is_caught, .timeout = 120) {
  cr_expect_gt((caught<no_release, true>("no release fence")), 0, "a piece stored without a fence before its ticket was never caught");
}

Test(split_order, a_missing_acquire_fence_is_caught, .timeout = 120) {
  cr_expect_gt((caught<akx::split_fences, false>("no acquire fence")), 0,
               "a finisher reading the pieces without a fence after the last ticket was never caught");
}
