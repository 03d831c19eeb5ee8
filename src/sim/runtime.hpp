// The sim's runtime: the state of one sim context (its allocations, its counters) and of
// the launch it runs (one block at a time: its threads as fibers, its warps, its barrier,
// its shared memory and the racecheck shadow of it).
//
// Files: fiber.* (stacks, switch), block.cpp (scheduling, barrier, warp collectives),
// checks.cpp (shared and global accesses: bounds, alignment, racecheck; shared memory),
// memory.cpp (device memory), sites.* (access sites), counters.* (requests, totals, the
// akx_sim_* API), request_cost.* (wavefronts and sectors of one request), report.cpp
// (AKX_SIM_REPORT), model.* (the time model), launch.cpp (run_kernel), fail.cpp (failed
// checks), backend_sim.cpp (the backend table), sim_testing.hpp (launching on a context).
#pragma once
#include <stdint.h>

#include <map>
#include <vector>

#include "akx.h"
#include "device_profile.h"
#include "sim/counters.hpp"
#include "sim/fiber.hpp"
#include "sim/device_model.hpp"
#include "sim/sites.hpp"

namespace akx::sim {

enum class thread_state : uint8_t { runnable, at_barrier, at_collective, exited };

// One CUDA thread of the running block.
struct thread_slot {
  thread_view view;  // first member: lane_now points here, and thread_of() gets the slot back
  fiber fib;
  uint32_t tid;      // linear index in the block, x fastest; warp = tid / 32, lane = tid % 32
  uint32_t warp, lane;
  thread_state state;
  uint32_t sync_pos;  // racecheck: the last sync event it took part in (see shadow_record)
  uint64_t result;    // what the barrier or collective it waited at returned to it
};

enum class collective_kind : uint8_t { shuffle, vote, syncwarp };

// A warp collective that some lanes of `mask` wait at.
struct pending_collective {
  collective_kind kind;
  int op;  // shfl_kind or vote_kind
  site where;
  uint32_t mask, arrived;
  uint64_t value[32];  // shuffles: the value; votes: the predicate
  int32_t arg[32];     // shuffles: source lane, delta or lane mask
  int32_t width[32];
};

struct warp_state {
  uint32_t lanes;       // lanes that exist (a block's last warp may be partial)
  uint32_t live;        // lanes that have not returned
  uint32_t at_barrier;  // lanes waiting at __syncthreads
  std::vector<pending_collective> pending;  // each with at least one lane arrived
  // Racecheck: the sync events that order lanes of this warp.
  uint32_t last_full;     // the last collective that every lane of the warp took part in
  uint32_t pair[32][32] = {};  // the last collective lanes i and j both took part in
  warp_window window;     // counters: accesses since the warp's last convergence point
};

// __syncthreads of the running block.
struct block_barrier {
  bool pending = false;
  site where;
  bar_kind kind;
  uint32_t arrived;
  uint32_t count;  // threads with a nonzero predicate
};

// Racecheck shadow of the arena: one record per 4-byte word. A word that an access covers
// only in part (1- and 2-byte elements) is split for good into one record per byte, so that
// threads writing neighbouring bytes of a word do not race.
//
// Sync events (block start, completed barriers, completed warp collectives) are numbered by
// one clock; a thread's sync_pos is the number of the last one it took part in. An access
// made at position p by thread u is ordered before thread t's access iff an event numbered
// above p contains both: a barrier (numbered >= last_barrier), or a warp collective whose
// mask holds both lanes (warp_state::last_full, pair). Records older than the last barrier
// are ordered for every thread, so a new block (an event of its own) needs no clearing.
//
// Readers since the last write are summarised by their warp, lanes and highest position:
// exact for readers in other warps (never ordered without a barrier) and for readers that
// one collective orders; readers ordered one by one by different partial-mask collectives
// count as unordered.
struct shadow_record {
  uint32_t w_pos;    // writer's position at the last write (0: none)
  uint32_t r_pos;    // the highest position among readers since then (same barrier interval)
  uint32_t r_lanes;  // reader lanes of warp r_warp
  uint32_t w_site, r_site;
  uint16_t w_tid;
  uint16_t r_warp;   // several_warps when readers were in more than one warp
  bool split;        // word records: its bytes have records of their own (byte_shadow)
  static constexpr uint16_t several_warps = 0xffff;
};

// A static shared allocation (AKX_SHARED) of the running launch.
struct shared_alloc {
  site where;  // the declaration; its identity is the allocation's
  const char *name;
  size_t offset, bytes;   // in the arena
  uint64_t poisoned_in;   // block serial in which it was last filled with poison
};

struct launch_state {
  const char *name = "";
  void (*fn)(void *) = nullptr;
  void *closure = nullptr;
  dim3 grid, block;
  size_t dyn_smem = 0;
  uint32_t threads = 0, warps = 0;  // per block
  uint64_t block_serial = 0;        // counts blocks over the runtime's life (poisoning)
  bool running = false;
  bool failed = false;
  size_t static_begin = 0, static_end = 0;  // arena range of the static allocations
  std::vector<shared_alloc> statics;
};

struct runtime {
  const akx__device_profile *profile = nullptr;
  bool counting = true;         // AKX_SIM_COUNTERS
  bool report = false;          // AKX_SIM_REPORT
  bool random_schedule = false; // AKX_SIM_SCHEDULE=random:SEED
  uint64_t rng = 0;

  // Device memory: akx_malloc allocations, by start address. The last two hits are cached
  // (a kernel mostly alternates between its source and its destination).
  std::map<uintptr_t, size_t> allocations;
  uintptr_t hit_lo[2] = {0, 0}, hit_hi[2] = {0, 0};

  site_table sites;
  stack_pool stacks;
  fiber scheduler;  // the calling thread's own context while a block runs

  // The running launch and block.
  launch_state launch;
  std::vector<thread_slot> threads;
  std::vector<warp_state> warps;
  block_barrier barrier;
  uint32_t exited = 0;
  std::vector<uint32_t> runq;  // runnable threads, resumed from runq_head on
  size_t runq_head = 0;

  // Shared memory of the running block: the arena (the dynamic area first: its size is
  // known at launch; then the static allocations as threads declare them) and its shadow.
  unsigned char *arena = nullptr;
  size_t arena_bytes = 0;
  std::vector<shadow_record> shadow;       // per word
  std::vector<shadow_record> byte_shadow;  // 4 per word, allocated at the first split
  uint32_t sync_clock = 1, last_barrier = 1;

  launch_counts counts;
  counter_store store;

  ~runtime();
};

// The runtime AKX_LAUNCH runs on, for the calling OS thread (see sim_testing.hpp).
extern thread_local runtime *current_runtime;

inline thread_slot &thread_of(const thread_view *v) {
  return *reinterpret_cast<thread_slot *>(const_cast<thread_view *>(v));
}

// ---- block.cpp: scheduling --------------------------------------------------------------
// Runs every thread of block `idx` to its end, a failed check or a deadlock.
void run_block(runtime &rt, dim3 idx);

// ---- memory.cpp: device memory ---------------------------------------------------------------
akx_status allocate_device(runtime &rt, void **ptr, size_t bytes);
akx_status free_device(runtime &rt, void *ptr);
void free_all_device(runtime &rt);
// The allocation that holds all of [a, a + bytes), or allocations.end().
std::map<uintptr_t, size_t>::const_iterator find_allocation(const runtime &rt, uintptr_t a,
                                                            size_t bytes);

// ---- checks.cpp: shared memory and racecheck ---------------------------------------------
bool reserve_shared(runtime &rt);   // the arena and its shadow, at the profile's size
void begin_block_shared(runtime &rt);
// Racecheck's sync events: a barrier or block start orders every thread; a warp
// collective orders the lanes of its mask.
void sync_block(runtime &rt);
void sync_warp_lanes(runtime &rt, warp_state &w, uint32_t mask);

// ---- fail.cpp: failed checks ---------------------------------------------------------------
// Sets akx_last_error() to "sim check failed (<check>) in kernel ... at file:line: <detail>"
// (the first failure of a launch only) and marks the launch failed.
void record_failure(runtime &rt, const thread_slot &th, const char *check, const site &where,
                    const char *fmt, ...) __attribute__((format(printf, 5, 6)));
// The same from inside th's fiber, which is then abandoned: never returns.
[[noreturn]] void fail_thread(runtime &rt, thread_slot &th, const char *check,
                              const site &where, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
[[noreturn]] void abandon_thread(runtime &rt, thread_slot &th);
}  // namespace akx::sim
