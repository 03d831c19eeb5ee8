// The sim's runtime: the state of one sim context (its allocations, its counters) and of
// the launch it runs (a set of resident blocks, each with its threads as fibers, its warps,
// its barrier, its shared memory and the racecheck shadow of it).
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
#include <memory>
#include <string>
#include <vector>

#include "akx.h"
#include "device_profile.h"
#include "sim/counters.hpp"
#include "sim/fiber.hpp"
#include "sim/device_model.hpp"
#include "sim/sites.hpp"

namespace akx::sim {

struct global_order;  // global_order.cpp
struct global_order_deleter {
  void operator()(global_order *o) const;
};

enum class thread_state : uint8_t { runnable, at_barrier, at_collective, exited };

struct block_state;

// Poll detection (global_order.cpp): the recent yielding loads of a thread. A load of an
// address it already loaded, with the same bytes, since global memory last changed is a
// poll; a thread that has polled `stuck_polls` times with nothing changed is stuck.
struct poll_state {
  static constexpr int ring = 8;
  uintptr_t addr[ring] = {};
  unsigned char value[ring][16] = {};
  uint8_t bytes[ring] = {};
  uint8_t next = 0;
  uint64_t epoch = 0;       // the memory epoch these entries belong to
  uint32_t stale = 0;       // polls in `epoch` that found nothing changed
  const site *where = nullptr;  // the last poll, for the livelock sentence
  uintptr_t last_addr = 0;
  uintptr_t plain_addr = 0; // the previous plain load (a plain-load spin is a poll too)
  unsigned char plain_value[16] = {};
  uint64_t plain_epoch = 0;
};

// One CUDA thread of a resident block.
struct thread_slot {
  thread_view view;  // first member: lane_now points here, and thread_of() gets the slot back
  fiber fib;
  block_state *blk;
  uint32_t tid;      // linear index in the block, x fastest; warp = tid / 32, lane = tid % 32
  uint32_t warp, lane;
  thread_state state;
  uint32_t sync_pos;  // racecheck: the last sync event it took part in (see shadow_record)
  bool dependency_waited;  // called grid_dependency_wait() (a PDL launch's global accesses need it)
  uint64_t result;    // what the barrier or collective it waited at returned to it
  poll_state poll;
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

// __syncthreads of one block.
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
// Sync events (block start, completed barriers, completed __syncwarp) are numbered by the
// block slot's clock; a thread's sync_pos is the number of the last one it took part in. An
// access made at position p by thread u is ordered before thread t's access iff an event
// numbered above p contains both: a barrier (numbered >= last_barrier), or a __syncwarp
// whose mask holds both lanes (warp_state::last_full, pair). Records older than the last
// barrier are ordered for every thread, so a new block (an event of its own) needs no
// clearing; records older than the block's start are not its writes (initcheck).
//
// Readers since the last write are summarised by their warp, lanes and highest position:
// exact for readers in other warps (never ordered without a barrier) and for readers that
// one __syncwarp orders; readers ordered one by one by different partial-mask __syncwarps
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

// A static shared allocation (AKX_SHARED) of the running launch: laid out once for the
// launch (every block has the same layout), at the first declaration any thread reaches.
struct shared_alloc {
  site where;  // the declaration; its identity is the allocation's
  const char *name;
  size_t offset, bytes;   // in the arena
};

// A resident block: a slot of the launch's resident set, holding one block of the grid at a
// time. Its threads' stacks and its arena belong to the slot and are reused by the blocks
// admitted into it.
struct block_state {
  uint32_t slot = 0;       // index in runtime::slots (its stacks: slot * threads + tid)
  bool active = false;     // holds a block that has not finished
  dim3 idx;
  uint64_t linear = 0;     // x + y * gridDim.x + z * gridDim.x * gridDim.y
  uint64_t serial = 0;     // counts blocks over the runtime's life
  std::vector<thread_slot> threads;
  std::vector<warp_state> warps;
  block_barrier barrier;
  uint32_t exited = 0;

  // Shared memory: the arena (the dynamic area first: its size is known at launch; then the
  // static allocations as threads declare them) and its racecheck shadow.
  unsigned char *arena = nullptr;
  size_t arena_bytes = 0;
  size_t poisoned_upto = 0;                 // arena bytes filled with poison for this block
  std::vector<shadow_record> shadow;       // per word
  std::vector<shadow_record> byte_shadow;  // 4 per word, allocated at the first split
  uint32_t sync_clock = 1, last_barrier = 1, start_pos = 1;

  ~block_state();
};

struct launch_state {
  const char *name = "";
  void (*fn)(void *) = nullptr;
  void *closure = nullptr;
  dim3 grid, block;
  size_t dyn_smem = 0;
  bool smem_optin = false;          // the kernel's opt-in to shared memory above 48 KiB
  bool pdl = false;                 // programmatic dependent launch (runtime::pdl at launch)
  uint32_t threads = 0, warps = 0;  // per block
  uint64_t grid_blocks = 0;
  uint32_t resident = 0;            // blocks resident at once
  uint32_t registers = 32;          // per thread, as the kernel declares (kernel_info)
  uint32_t loads_in_flight = 1;     // per thread, as the kernel declares (kernel_info)
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
  uint32_t resident_cap = 0;    // AKX_SIM_RESIDENT (blocks resident at once, at most)
  bool capturing = false;       // the context's "stream" captures a graph (akx__sim_set_capturing)
  bool pdl = false;             // launches are programmatic dependent launches (the backend sets
                                // it per call: the profile's architecture, AKX_PDL)
  uint64_t interrupt_after = 0; // the next launch fails when this many blocks ended (a test's
                                // interrupted call: akx__sim_interrupt_after); 0: never

  // Device memory: akx_malloc allocations, by start address. The last two hits are cached
  // (a kernel mostly alternates between its source and its destination).
  std::map<uintptr_t, size_t> allocations;
  uintptr_t hit_lo[2] = {0, 0}, hit_hi[2] = {0, 0};

  site_table sites;
  stack_pool stacks;
  fiber scheduler;  // the calling thread's own context while a launch runs

  // The running launch: its resident blocks and the grid's blocks not admitted yet.
  launch_state launch;
  std::vector<std::unique_ptr<block_state>> slots;
  std::vector<uint64_t> admission;   // linear block indices in admission order
  size_t admitted = 0;               // admission[0, admitted) have been admitted
  uint64_t finished = 0;             // blocks that ran to their end
  uint64_t block_serial = 0;         // blocks admitted over the runtime's life
  uint32_t live_threads = 0;         // threads of resident blocks that have not returned
  uint32_t blocked_threads = 0;      // of those, waiting at a barrier or warp collective
  std::vector<thread_slot *> runq;   // runnable threads, resumed from runq_head on
  size_t runq_head = 0;
  bool slot_freed = false;           // a block finished: admit the next before going on

  // Global memory ordering and polls (global_order.cpp).
  std::unique_ptr<global_order, global_order_deleter> order;
  uint64_t memory_epoch = 1;         // advances whenever global memory visibly changes
  uint32_t stuck_threads = 0;        // threads stuck polling in memory_epoch
  uint64_t stuck_epoch = 0;

  launch_counts counts;
  counter_store store;
  std::map<std::string, size_t> static_bytes_seen;  // per kernel name: occupancy by shared

  ~runtime();
};

// The runtime AKX_LAUNCH runs on, for the calling OS thread (see sim_testing.hpp).
extern thread_local runtime *current_runtime;

inline thread_slot &thread_of(const thread_view *v) {
  return *reinterpret_cast<thread_slot *>(const_cast<thread_view *>(v));
}

// ---- block.cpp: scheduling --------------------------------------------------------------
// Runs every block of the launch (rt.admission) to its end, a failed check, a deadlock or a
// livelock, keeping rt.launch.resident of them resident at once.
void run_blocks(runtime &rt);
// A yield point of the running thread (atomics, fences, acquire and volatile loads, polls):
// it goes to the back of the run queue (a random place under a random schedule).
void yield_thread(runtime &rt, thread_slot &th);
// Under a random schedule: a random converged subset of the calling lane's warp (the
// lanes that have not returned and do not wait at a rendezvous), containing the caller.
uint32_t active_lanes(runtime &rt, const thread_slot &th);
uint64_t next_random(runtime &rt);

// A resident block whose every live thread waits at a rendezvous: reports the deadlock.
bool report_block_deadlock(runtime &rt, const block_state &blk);

// ---- global_order.cpp: global-memory ordering, polls, livelock ------------------------------
void order_launch_begin(runtime &rt);
void order_launch_end(runtime &rt);
void order_block_start(runtime &rt, block_state &b);
void order_block_end(runtime &rt, block_state &b);
// Plain global accesses of a launch of several blocks (from global_access): the global
// racecheck, and the stores' record and undo log.
void order_plain_store(runtime &rt, thread_slot &th, uintptr_t a, unsigned bytes,
                       uint32_t site_id, const site &s);
void order_plain_load(runtime &rt, thread_slot &th, uintptr_t a, unsigned bytes, const site &s);

// ---- memory.cpp: device memory ---------------------------------------------------------------
akx_status allocate_device(runtime &rt, void **ptr, size_t bytes);
akx_status free_device(runtime &rt, void *ptr);
void free_all_device(runtime &rt);
// The allocation that holds all of [a, a + bytes), or allocations.end().
std::map<uintptr_t, size_t>::const_iterator find_allocation(const runtime &rt, uintptr_t a,
                                                            size_t bytes);

// ---- checks.cpp: shared memory and racecheck ---------------------------------------------
// The slot's arena and its shadow, for dyn_smem bytes of dynamic and up to the static limit.
bool reserve_shared(runtime &rt, block_state &b);
void begin_block_shared(runtime &rt, block_state &b);
// Racecheck's sync events: a barrier or block start orders every thread of the block; a
// __syncwarp orders the lanes of its mask.
void sync_block(block_state &b);
void sync_warp_lanes(block_state &b, warp_state &w, uint32_t mask);

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
