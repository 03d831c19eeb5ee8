// Blocks at once and global-memory ordering on the sim: protocols between blocks (decoupled
// look-back, last-block reduction, polls) in a correct form that passes under many
// schedules, and in the broken forms a GPU breaks (no fence, plain flag, blockIdx for a
// ticket, a flag never set) that the sim must catch.
#include <stdlib.h>

#include "sim_probe.hpp"
#include "akx/reduce_dims.cuh"  // akx::last_to_arrive, the split dims finish's ticket

using akx::FULL_MASK;

namespace {
// The schedules every protocol runs under: in order, then seeded random orders (fibers and
// block admission shuffled).
const char *const schedules[] = {
    "inorder",   "random:1",  "random:2",  "random:3",  "random:4",  "random:5",  "random:6",
    "random:7",  "random:8",  "random:9",  "random:10", "random:11", "random:12", "random:13",
    "random:14", "random:15", "random:16", "random:17", "random:18", "random:19", "random:20"};

void use_schedule(const char *schedule) { setenv("AKX_SIM_SCHEDULE", schedule, 1); }
void in_order(void) { unsetenv("AKX_SIM_SCHEDULE"); }
}  // namespace

TestSuite(sim_order, .init = in_order);

// ---- decoupled look-back --------------------------------------------------------------------
// One warp per tile of 32 ints. Each tile publishes its aggregate (flag A), looks back over
// its predecessors (adding aggregates until it meets an inclusive prefix, flag P), then
// publishes its inclusive prefix; out[tile] is the exclusive prefix. Flags: 0 = not ready.
enum : unsigned { FLAG_X = 0, FLAG_A = 1, FLAG_P = 2 };
enum publish_kind {
  PUBLISH_RELEASE,       // value, then st_release(flag); reader ld_acquire(flag)
  PUBLISH_FENCE,         // value, __threadfence, st_volatile(flag); reader volatile + fence
  PUBLISH_NO_FENCE,      // value, st_volatile(flag): the value may not be visible yet
  PUBLISH_PLAIN_FLAG,    // value, plain flag store: neither ordered nor visible
};
enum tile_source { TILE_FROM_TICKET, TILE_FROM_BLOCKIDX };

struct lookback_args {
  const int *x;
  int *value;          // per tile: the aggregate; then per tile the inclusive prefix
  unsigned *flag;      // per tile
  unsigned tiles;
  unsigned *ticket;
  int *out;
  unsigned *aggregate_hops;  // times a tile added a predecessor's aggregate (flag A)
  int publish, source;
};

AKX_DEVICE void publish(const lookback_args &a, unsigned tile, int v, unsigned f) {
  akx::gst(a.value + (f == FLAG_P ? a.tiles : 0) + tile, v);
  switch (a.publish) {
    case PUBLISH_RELEASE: akx::st_release(a.flag + tile, f); break;
    case PUBLISH_FENCE:
      __threadfence();
      akx::st_volatile(a.flag + tile, f);
      break;
    case PUBLISH_NO_FENCE: akx::st_volatile(a.flag + tile, f); break;
    default: akx::gst(a.flag + tile, f); break;
  }
}

AKX_DEVICE unsigned wait_flag(const lookback_args &a, unsigned tile) {
  unsigned f;
  do {
    f = a.publish == PUBLISH_RELEASE ? akx::ld_acquire(a.flag + tile)
                                     : akx::ld_volatile(a.flag + tile);
  } while (f == FLAG_X);
  if (a.publish != PUBLISH_RELEASE) __threadfence();
  return f;
}

AKX_GLOBAL void lookback_probe(lookback_args a) {
  const unsigned lane = threadIdx.x;
  unsigned tile = blockIdx.x;
  if (a.source == TILE_FROM_TICKET) {
    unsigned t = lane == 0 ? atomicAdd(a.ticket, 1u) : 0u;
    tile = __shfl_sync(FULL_MASK, t, 0);
  }
  int v = akx::gld(a.x + tile * 32 + lane);
  for (int d = 16; d > 0; d /= 2) v += __shfl_down_sync(FULL_MASK, v, d);
  if (lane != 0) return;
  if (tile == 0) {
    publish(a, 0, v, FLAG_P);
    akx::gst(a.out, 0);
    return;
  }
  publish(a, tile, v, FLAG_A);
  int prefix = 0;
  for (unsigned j = tile - 1;; --j) {
    unsigned f = wait_flag(a, j);
    prefix += akx::gld(a.value + (f == FLAG_P ? a.tiles : 0) + j);
    if (f == FLAG_P) break;
    atomicAdd(a.aggregate_hops, 1u);
  }
  publish(a, tile, prefix + v, FLAG_P);
  akx::gst(a.out + tile, prefix);
}

struct lookback_run {
  akx_status status;
  bool correct;
  unsigned aggregate_hops;
};

lookback_run run_lookback(const char *schedule, int publish, int source, unsigned tiles = 64) {
  use_schedule(schedule);
  sim_context sim;
  int *x = sim.alloc<int>(tiles * 32);
  int *value = sim.alloc<int>(2 * tiles);
  unsigned *flag = sim.alloc<unsigned>(tiles);  // zero: every tile not ready
  unsigned *counters = sim.alloc<unsigned>(2);
  int *out = sim.alloc<int>(tiles);
  for (unsigned i = 0; i < tiles * 32; ++i) x[i] = int(i % 7) + 1;
  lookback_args a{x, value, flag, tiles, counters, out, counters + 1, publish, source};
  lookback_run r;
  r.status = AKX_LAUNCH("lookback_probe", lookback_probe, tiles, 32, 0, NULL, a);
  r.correct = true;
  int expect = 0;
  for (unsigned t = 0; t < tiles; ++t) {
    r.correct = r.correct && out[t] == expect;
    for (unsigned i = 0; i < 32; ++i) expect += x[t * 32 + i];
  }
  r.aggregate_hops = counters[1];
  return r;
}

Test(sim_order, lookback_passes_every_schedule_and_takes_the_aggregate_path) {
  for (int publish : {PUBLISH_RELEASE, PUBLISH_FENCE}) {
    unsigned hops = 0;
    for (const char *schedule : schedules) {
      lookback_run r = run_lookback(schedule, publish, TILE_FROM_TICKET);
      cr_assert_eq(r.status, AKX_SUCCESS, "publish %d, %s: %s", publish, schedule,
                   akx_last_error());
      cr_assert(r.correct, "publish %d, %s: wrong prefixes", publish, schedule);
      hops += r.aggregate_hops;
    }
    // Blocks really ran at once: tiles found predecessors that had published their
    // aggregate but not yet their prefix.
    cr_log_info("publish %d: %u aggregate hops over %zu schedules", publish, hops,
                sizeof schedules / sizeof *schedules);
    cr_expect_gt(hops, 0u, "publish %d: no tile ever took the partial-aggregate path", publish);
  }
}

// The value store not fenced before the flag: another block sees the flag and then reads
// the value without a chain from its store (a race), or reads it stale.
Test(sim_order, lookback_without_fence_is_caught) {
  for (int publish : {PUBLISH_NO_FENCE, PUBLISH_PLAIN_FLAG}) {
    int caught = 0;
    for (const char *schedule : schedules) {
      lookback_run r = run_lookback(schedule, publish, TILE_FROM_TICKET);
      if (r.status == AKX_ERROR_SIM_CHECK) {
        cr_expect(strstr(akx_last_error(), "global-memory race") != NULL ||
                      strstr(akx_last_error(), "livelock") != NULL,
                  "%s", akx_last_error());
        ++caught;
        cr_log_info("publish %d, %s: %s", publish, schedule, akx_last_error());
      } else if (r.status == AKX_SUCCESS && !r.correct) {
        ++caught;
        cr_log_info("publish %d, %s: wrong prefixes", publish, schedule);
      }
    }
    cr_expect_gt(caught, 0, "publish %d was never caught", publish);
  }
}

// Tiles taken from blockIdx: a block admitted before its predecessors waits for blocks that
// cannot start while it holds its slot.
Test(sim_order, lookback_on_blockidx_livelocks_under_shuffled_admission) {
  use_schedule("inorder");
  int failed = 0;
  for (const char *schedule : schedules) {
    lookback_run r = run_lookback(schedule, PUBLISH_RELEASE, TILE_FROM_BLOCKIDX, 256);
    if (r.status == AKX_ERROR_SIM_CHECK) {
      cr_expect(strstr(akx_last_error(), "livelock") != NULL, "%s: %s", schedule,
                akx_last_error());
      cr_expect(strstr(akx_last_error(), "lookback_probe") != NULL, "%s", akx_last_error());
      cr_log_info("blockIdx tiles, %s: %s", schedule, akx_last_error());
      ++failed;
    } else {
      cr_expect_eq(r.status, AKX_SUCCESS, "%s", akx_last_error());
    }
  }
  cr_expect_gt(failed, 0, "blockIdx tiles never livelocked");
}

// ---- last-block reduction ---------------------------------------------------------------------
// Each block parks its partial, fences, takes a ticket; the block that draws the last ticket
// sums the partials. With `by_index` the block with the last blockIdx sums instead, which a
// GPU may run before the others have parked theirs.
AKX_GLOBAL void last_block_probe(const int *x, int *partials, unsigned *ticket, int *out,
                                 int by_index) {
  const unsigned lane = threadIdx.x;
  int v = akx::gld(x + blockIdx.x * 32 + lane);
  for (int d = 16; d > 0; d /= 2) v += __shfl_down_sync(FULL_MASK, v, d);
  unsigned t = 0;
  if (lane == 0) {
    akx::gst(partials + blockIdx.x, v);
    __threadfence();
    t = atomicAdd(ticket, 1u);
    __threadfence();
  }
  t = __shfl_sync(FULL_MASK, t, 0);
  bool last = by_index ? blockIdx.x == gridDim.x - 1 : t == gridDim.x - 1;
  if (!last) return;
  int sum = 0;
  for (unsigned i = lane; i < gridDim.x; i += 32) sum += akx::gld(partials + i);
  for (int d = 16; d > 0; d /= 2) sum += __shfl_down_sync(FULL_MASK, sum, d);
  if (lane == 0) akx::gst(out, sum);
}

akx_status run_last_block(const char *schedule, int by_index, bool *correct) {
  use_schedule(schedule);
  sim_context sim;
  const unsigned blocks = 48;
  int *x = sim.alloc<int>(blocks * 32);
  int *partials = sim.alloc<int>(blocks);
  unsigned *ticket = sim.alloc<unsigned>(1);
  int *out = sim.alloc<int>(1);
  long expect = 0;
  for (unsigned i = 0; i < blocks * 32; ++i) expect += x[i] = int(i % 5) + 1;
  akx_status s = AKX_LAUNCH("last_block_probe", last_block_probe, blocks, 32, 0, NULL,
                            (const int *)x, partials, ticket, out, by_index);
  *correct = *out == expect;
  return s;
}

Test(sim_order, last_block_by_ticket_passes_every_schedule) {
  for (const char *schedule : schedules) {
    bool correct = false;
    akx_status s = run_last_block(schedule, 0, &correct);
    cr_assert_eq(s, AKX_SUCCESS, "%s: %s", schedule, akx_last_error());
    cr_assert(correct, "%s: wrong sum", schedule);
  }
}

Test(sim_order, last_block_by_blockidx_is_caught) {
  int caught = 0;
  for (const char *schedule : schedules) {
    bool correct = false;
    akx_status s = run_last_block(schedule, 1, &correct);
    if (s == AKX_ERROR_SIM_CHECK) {
      cr_expect(strstr(akx_last_error(), "global-memory race") != NULL, "%s",
                akx_last_error());
      cr_log_info("last by blockIdx, %s: %s", schedule, akx_last_error());
      ++caught;
    } else if (s == AKX_SUCCESS && !correct) {
      cr_log_info("last by blockIdx, %s: wrong sum", schedule);
      ++caught;
    }
  }
  cr_expect_gt(caught, 0, "summing in the block of the last index was never caught");
}

// ---- last_to_arrive (kernels/akx/reduce_dims.cuh) --------------------------------------------
// The split dims finish's ticket, as the kernels call it: every thread of a block of 64 parks
// a value, the block takes the ticket, and the last block's threads sum every block's values.
// Planted copies drop one of its two fences: without the release (before the atomic) the
// others' values may not be visible when the count says they arrived; without the acquire
// (after it) the last block has not synchronised with them. A GPU breaks both; the sim must
// report both as a global-memory race, under some schedule.
enum ticket_kind { TICKET_REAL, TICKET_NO_RELEASE, TICKET_NO_ACQUIRE };

AKX_DEVICE bool planted_last_to_arrive(unsigned *ticket, unsigned arrivals, int kind) {
  __syncthreads();
  int is_last = 0;
  if (threadIdx.x == 0) {
    if (kind != TICKET_NO_RELEASE) __threadfence();
    is_last = atomicAdd(ticket, 1u) + 1 == arrivals;
    if (is_last) {
      atomicExch(ticket, 0u);
      if (kind != TICKET_NO_ACQUIRE) __threadfence();
    }
  }
  return __syncthreads_or(is_last) != 0;
}

AKX_GLOBAL void ticket_probe(const int *x, int *parked, unsigned *ticket, long long *out, int kind) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  akx::gst(parked + i, akx::gld(x + i) * 3);
  const bool last = kind == TICKET_REAL ? akx::last_to_arrive(ticket, gridDim.x)
                                        : planted_last_to_arrive(ticket, gridDim.x, kind);
  if (!last) return;
  long long sum = 0;
  for (unsigned j = threadIdx.x; j < gridDim.x * blockDim.x; j += blockDim.x) sum += akx::gld(parked + j);
  atomicAdd(reinterpret_cast<unsigned long long *>(out), (unsigned long long)sum);
}

struct ticket_run {
  akx_status status;
  bool correct, reset;
};

ticket_run run_ticket(const char *schedule, int kind) {
  use_schedule(schedule);
  sim_context sim;
  const unsigned blocks = 40, threads = 64;
  int *x = sim.alloc<int>(blocks * threads);
  int *parked = sim.alloc<int>(blocks * threads);
  unsigned *ticket = sim.alloc<unsigned>(1);
  long long *out = sim.alloc<long long>(1);
  long long expect = 0;
  for (unsigned i = 0; i < blocks * threads; ++i) expect += 3 * (x[i] = int(i % 9) - 4);
  ticket_run r;
  r.status = AKX_LAUNCH("ticket_probe", ticket_probe, blocks, threads, 0, NULL, (const int *)x,
                        parked, ticket, out, kind);
  r.correct = *out == expect;
  r.reset = *ticket == 0u;  // put back for the next call
  return r;
}

Test(sim_order, last_to_arrive_passes_every_schedule_and_resets_its_ticket) {
  for (const char *schedule : schedules) {
    const ticket_run r = run_ticket(schedule, TICKET_REAL);
    cr_assert_eq(r.status, AKX_SUCCESS, "%s: %s", schedule, akx_last_error());
    cr_assert(r.correct, "%s: wrong sum", schedule);
    cr_assert(r.reset, "%s: the ticket was not put back to 0", schedule);
  }
}

Test(sim_order, last_to_arrive_without_either_fence_is_caught) {
  for (int kind : {TICKET_NO_RELEASE, TICKET_NO_ACQUIRE}) {
    int caught = 0;
    for (const char *schedule : schedules) {
      const ticket_run r = run_ticket(schedule, kind);
      if (r.status == AKX_ERROR_SIM_CHECK) {
        cr_expect(strstr(akx_last_error(), "global-memory race") != NULL, "%s", akx_last_error());
        ++caught;
      } else {
        cr_expect_eq(r.status, AKX_SUCCESS, "%s: %s", schedule, akx_last_error());
      }
    }
    cr_expect_eq(caught, (int)(sizeof schedules / sizeof schedules[0]),
                 "%s fence dropped: caught under %d of %d schedules",
                 kind == TICKET_NO_RELEASE ? "release" : "acquire", caught,
                 (int)(sizeof schedules / sizeof schedules[0]));
  }
}

// ---- polls and livelock -------------------------------------------------------------------------
static const int never_set_line = __LINE__ + 4;
AKX_GLOBAL void never_set_probe(const unsigned *flag, int plain) {
  if (threadIdx.x != 0) return;
  if (plain) {
    while (akx::gld(flag) == 0) {
    }
  } else {
    while (akx::ld_acquire(flag) == 0) {
    }
  }
}

Test(sim_order, poll_on_a_flag_never_set_is_a_livelock, .timeout = 20) {
  for (int plain : {0, 1}) {
    sim_context sim;
    unsigned *flag = sim.alloc<unsigned>(1);
    char at[64];
    snprintf(at, sizeof at, "test_sim_order.cpp:%d", never_set_line + (plain ? 0 : 3));
    char addr[32];
    snprintf(addr, sizeof addr, "%p", (void *)flag);
    expect_sim_check(AKX_LAUNCH("never_set_probe", never_set_probe, 3, 64, 0, NULL,
                                (const unsigned *)flag, plain),
                     "livelock", "never_set_probe", "thread (0,0,0)", at, addr);
  }
}

// A block that polls for a flag another block of the same launch sets: no livelock, however
// long it waits.
AKX_GLOBAL void late_setter_probe(unsigned *flag, unsigned *seen) {
  if (threadIdx.x != 0) return;
  if (blockIdx.x == 0) {
    while (akx::ld_acquire(flag) == 0) {
    }
    akx::gst(seen, 1u);
  } else {
    for (int i = 0; i < 5000; ++i) __nanosleep(100);  // long enough for many polls
    akx::st_release(flag, 1u);
  }
}

Test(sim_order, a_long_wait_for_another_block_is_not_a_livelock) {
  sim_context sim;
  unsigned *flag = sim.alloc<unsigned>(1);
  unsigned *seen = sim.alloc<unsigned>(1);
  expect_success(AKX_LAUNCH("late_setter_probe", late_setter_probe, 2, 32, 0, NULL, flag, seen));
  cr_expect_eq(*seen, 1u);
}

// ---- blocks at once -------------------------------------------------------------------------------
// Block 0 waits for a flag that the last block sets: it completes only if both are resident
// at once, which the default resident set (16) allows for 16 blocks and AKX_SIM_RESIDENT=1
// does not.
AKX_GLOBAL void wait_for_last_probe(unsigned *flag) {
  if (threadIdx.x != 0) return;
  if (blockIdx.x == 0) {
    while (akx::ld_acquire(flag) == 0) {
    }
  } else if (blockIdx.x == gridDim.x - 1) {
    akx::st_release(flag, 1u);
  }
}

Test(sim_order, blocks_are_resident_at_once) {
  {
    sim_context sim;
    unsigned *flag = sim.alloc<unsigned>(1);
    expect_success(AKX_LAUNCH("wait_for_last_probe", wait_for_last_probe, 16, 32, 0, NULL, flag));
  }
  setenv("AKX_SIM_RESIDENT", "1", 1);
  {
    sim_context sim;
    unsigned *flag = sim.alloc<unsigned>(1);
    expect_sim_check(AKX_LAUNCH("wait_for_last_probe", wait_for_last_probe, 16, 32, 0, NULL, flag),
                     "livelock", "15 were never admitted");
  }
  unsetenv("AKX_SIM_RESIDENT");
}

Test(sim_order, resident_setting_is_checked) {
  setenv("AKX_SIM_RESIDENT", "zero", 1);
  akx_context *ctx = NULL;
  cr_expect_eq(akx_context_create(&ctx, AKX_BACKEND_SIM, 0), AKX_ERROR_INVALID_ARGUMENT);
  cr_expect(strstr(akx_last_error(), "AKX_SIM_RESIDENT") != NULL, "%s", akx_last_error());
  unsetenv("AKX_SIM_RESIDENT");
}

// ---- plain stores are visible to other blocks only when released ----------------------------------
// Block 1 stores 7 plainly and, without a fence, tells block 0 through a volatile flag;
// block 0's volatile read of the value word (exempt from the racecheck) sees the value from
// before the store until block 1 releases it.
AKX_GLOBAL void visibility_probe(unsigned *value, unsigned *flag, unsigned *seen, int fence) {
  if (threadIdx.x != 0) return;
  if (blockIdx.x == 1) {
    akx::gst(value, 7u);
    if (fence) __threadfence();
    akx::st_volatile(flag, 1u);
    while (akx::ld_volatile(flag) != 2u) {
    }
  } else {
    while (akx::ld_volatile(flag) != 1u) {
    }
    akx::gst(seen, akx::ld_volatile(value));
    akx::st_volatile(flag, 2u);
  }
}

Test(sim_order, plain_stores_are_visible_after_a_fence_only) {
  for (int fence : {0, 1}) {
    sim_context sim;
    unsigned *value = sim.alloc<unsigned>(1);
    unsigned *flag = sim.alloc<unsigned>(1);
    unsigned *seen = sim.alloc<unsigned>(1);
    expect_success(AKX_LAUNCH("visibility_probe", visibility_probe, 2, 32, 0, NULL, value, flag,
                              seen, fence));
    cr_expect_eq(*seen, fence ? 7u : 0u, "fence %d: block 0 saw %u", fence, *seen);
  }
}
