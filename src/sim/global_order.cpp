// Global memory between the blocks of a launch: visibility, the global racecheck, polls and
// livelock.
//
// Visibility. Plain stores write through (their own block sees them at once), but until
// their block releases them (a fence, a release store, or the block's end) another block's
// acquire, volatile or atomic read of the word sees the value from before them: the block
// keeps an undo log of its unreleased plain stores (the old bytes). So a flag published by a
// plain store, or a value published without a fence, reads stale in another block. (A plain
// racy read of such a word is reported as a race below, whatever it reads.)
//
// Racecheck, at block granularity. Each block of the launch has a clock: the epoch its plain
// stores are made in, bumped at each release. A release store to X, or a relaxed write
// (volatile store, atomic) to X after a fence, records (block, released epoch) in X's sync
// object; an acquire load of X, or a relaxed read of X (volatile load, atomic) followed by
// a fence in the reading block, joins X's sync object into the reader's `acquired`. A plain
// load (or store) of a word that another block stored plainly in this launch at epoch e is a
// reported race unless the reader acquired that block at an epoch >= e. Chains are one hop:
// the reader must have synchronised with the writing block itself (the kernels here read
// only what the block they synchronise with published). A fence by any thread releases the
// stores its whole block made before it, and acquires what any thread of it read relaxed:
// the check does not see a missing __syncthreads between a block's threads and its
// publishing thread (the shared-memory racecheck usually does). Atomics, acquire/release
// and volatile accesses are exempt.
//
// Polls and livelock. A yielding load (acquire, volatile, atomic that changes nothing), or a
// plain load repeated back to back, that finds the same bytes at an address the thread
// already read since global memory last changed (rt.memory_epoch), is a poll. A thread that
// has polled `stuck_polls` times with nothing changed is stuck; when every live thread of
// the resident blocks is stuck or waits at a rendezvous, nothing can ever change: the launch
// fails with a livelock report (or a deadlock report naming the block that waits for itself).
#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "sim/runtime.hpp"

namespace akx::sim {

namespace {
// Polls with nothing changed before a thread counts as stuck. A bounded spin that gives up
// after fewer polls is never reported; every thread polls once per round of the run queue,
// so with a few thousand resident threads the report comes well within a second.
constexpr uint32_t stuck_polls = 1000;
// Undo entries a resident block keeps (its unreleased plain stores); beyond it the oldest
// values are forgotten and stale reads of them see the new value.
constexpr size_t undo_limit = size_t(1) << 20;

struct store_run {
  uintptr_t end;
  uint64_t block;   // linear index of the storing block
  uint32_t epoch;   // the block's store epoch
  uint32_t site_id;
  uint32_t tid;     // the first storing thread (runs of several threads merge)
};

struct release_mark {
  uint32_t epoch;
  uint32_t depth;
};

struct block_clock {
  uint32_t epoch = 1;     // plain stores made now carry this
  uint32_t released = 0;  // stores with epoch <= released are visible
  uint32_t fenced = 0;    // released epoch at the last fence: what a relaxed write releases
  uint32_t depth = 0;     // longest release->acquire chain that ends here
  std::unordered_map<uint64_t, uint32_t> acquired;  // writer block -> epoch acquired
  std::vector<uintptr_t> relaxed_reads;            // sync objects read relaxed since a fence
};

struct undo_entry {
  uintptr_t addr;
  uint32_t bytes;
  unsigned char old[16];
};

struct slot_undo {
  std::vector<undo_entry> log;
  uintptr_t lo = std::numeric_limits<uintptr_t>::max(), hi = 0;
  void clear() {
    log.clear();
    lo = std::numeric_limits<uintptr_t>::max();
    hi = 0;
  }
};
}  // namespace

struct global_order {
  bool multi = false;  // more than one block: cross-block checks on
  std::map<uintptr_t, store_run> runs;  // plain stores of the launch, by start address
  uintptr_t lo = std::numeric_limits<uintptr_t>::max(), hi = 0;  // their bounding box
  std::unordered_map<uint64_t, block_clock> clocks;  // by linear block index
  std::unordered_map<uintptr_t, std::unordered_map<uint64_t, release_mark>> syncs;
  std::vector<slot_undo> undo;  // by resident slot
  uint32_t max_depth = 0;
};

void global_order_deleter::operator()(global_order *o) const { delete o; }

namespace {

block_clock &clock_of(runtime &rt, const block_state &b) { return rt.order->clocks[b.linear]; }

bool covered(const block_clock &reader, uint64_t writer, uint32_t epoch) {
  auto it = reader.acquired.find(writer);
  return it != reader.acquired.end() && it->second >= epoch;
}

dim3 block_index(const runtime &rt, uint64_t linear) {
  const dim3 &g = rt.launch.grid;
  return dim3(unsigned(linear % g.x), unsigned(linear / g.x % g.y),
              unsigned(linear / (uint64_t(g.x) * g.y)));
}

[[noreturn]] void fail_global_race(runtime &rt, thread_slot &th, const site &s, uintptr_t a,
                                   unsigned bytes, bool write, const store_run &r) {
  const site &o = rt.sites[r.site_id].where;
  dim3 wb = block_index(rt, r.block);
  fail_thread(rt, th, "global-memory race", s,
              "this thread %s the %u bytes at %p, which block (%u,%u,%u) stored at %s:%u in "
              "this launch with no release->acquire (or fence+atomic) chain from that store to "
              "this block",
              write ? "writes" : "reads", bytes, (void *)a, wb.x, wb.y, wb.z,
              file_basename(o.file_name()), unsigned(o.line()));
}

// Plain stores of other blocks overlapping [a, a + bytes) that this block has not acquired.
void check_runs(runtime &rt, thread_slot &th, uintptr_t a, unsigned bytes, bool write,
                const site &s) {
  global_order &o = *rt.order;
  if (a + bytes <= o.lo || a >= o.hi) return;
  const block_clock &me = clock_of(rt, *th.blk);
  auto it = o.runs.upper_bound(a);
  if (it != o.runs.begin()) --it;
  for (; it != o.runs.end() && it->first < a + bytes; ++it) {
    const store_run &r = it->second;
    if (r.end <= a || r.block == th.blk->linear) continue;
    if (!covered(me, r.block, r.epoch)) fail_global_race(rt, th, s, a, bytes, write, r);
  }
}

// Records [a, a + bytes) as stored by this block now: overlapped parts of older runs go,
// and the new run merges with neighbours of the same block and epoch.
void record_run(global_order &o, uintptr_t a, uintptr_t e, const store_run &nr) {
  auto it = o.runs.upper_bound(a);
  if (it != o.runs.begin()) --it;
  while (it != o.runs.end() && it->first < e) {
    if (it->second.end <= a) {
      ++it;
      continue;
    }
    uintptr_t s0 = it->first;
    store_run r = it->second;
    it = o.runs.erase(it);
    if (s0 < a) o.runs.emplace(s0, store_run{a, r.block, r.epoch, r.site_id, r.tid});
    if (r.end > e) it = o.runs.emplace(e, store_run{r.end, r.block, r.epoch, r.site_id, r.tid}).first;
  }
  store_run run = nr;
  run.end = e;
  uintptr_t start = a;
  auto next = o.runs.lower_bound(e);
  if (next != o.runs.end() && next->first == e && next->second.block == run.block &&
      next->second.epoch == run.epoch) {
    run.end = next->second.end;
    o.runs.erase(next);
  }
  auto prev = o.runs.lower_bound(a);
  if (prev != o.runs.begin()) {
    --prev;
    if (prev->second.end == a && prev->second.block == run.block &&
        prev->second.epoch == run.epoch) {
      prev->second.end = run.end;
      return;
    }
  }
  o.runs.emplace(start, run);
}

// The block's plain stores so far become visible (and, for a release, releasable).
void release_block(runtime &rt, block_state &b, block_clock &c) {
  c.released = c.epoch++;
  slot_undo &u = rt.order->undo[b.slot];
  if (!u.log.empty()) ++rt.memory_epoch;
  u.clear();
}

void acquire_from(runtime &rt, block_clock &c, uintptr_t addr) {
  global_order &o = *rt.order;
  auto it = o.syncs.find(addr);
  if (it == o.syncs.end()) return;
  for (const auto &[block, mark] : it->second) {
    uint32_t &e = c.acquired[block];
    if (mark.epoch > e) e = mark.epoch;
    if (mark.depth + 1 > c.depth) c.depth = mark.depth + 1;
  }
  if (c.depth > o.max_depth) o.max_depth = c.depth;
}

void publish(runtime &rt, const block_state &b, const block_clock &c, uintptr_t addr,
             uint32_t epoch) {
  if (epoch == 0) return;
  release_mark &m = rt.order->syncs[addr][b.linear];
  if (epoch > m.epoch) m.epoch = epoch;
  if (c.depth > m.depth) m.depth = c.depth;
}

void note_relaxed_read(block_clock &c, uintptr_t addr) {
  for (uintptr_t x : c.relaxed_reads)
    if (x == addr) return;
  if (c.relaxed_reads.size() >= 64) c.relaxed_reads.erase(c.relaxed_reads.begin());
  c.relaxed_reads.push_back(addr);
}

// The bytes at [a, a + bytes) as a block other than `reader` sees them: the oldest value
// an unreleased plain store of another resident block overwrote, else memory.
void visible_bytes(runtime &rt, const block_state &reader, uintptr_t a, unsigned bytes,
                   void *out) {
  memcpy(out, reinterpret_cast<const void *>(a), bytes);
  if (!rt.order->multi) return;
  for (uint32_t s = 0; s < rt.launch.resident; ++s) {
    if (s == reader.slot || !rt.slots[s]->active) continue;
    const slot_undo &u = rt.order->undo[s];
    if (u.log.empty() || a + bytes <= u.lo || a >= u.hi) continue;
    for (const undo_entry &e : u.log)  // oldest first: the value before all of them
      if (e.addr <= a && a + bytes <= e.addr + e.bytes) {
        memcpy(out, e.old + (a - e.addr), bytes);
        return;
      }
  }
}

// ---- polls and livelock -------------------------------------------------------------------

[[noreturn]] void report_livelock(runtime &rt, thread_slot &th) {
  for (uint32_t s = 0; s < rt.launch.resident; ++s)
    if (rt.slots[s]->active && report_block_deadlock(rt, *rt.slots[s])) abandon_thread(rt, th);
  const poll_state &ps = th.poll;
  fail_thread(rt, th, "livelock", ps.where != nullptr ? *ps.where : site::current(),
              "every thread that has not returned polls global memory or waits at a "
              "rendezvous, and nothing has changed since each last polled; this thread polls "
              "the word at %p (%u polls since the last change); %llu of %llu blocks ran to "
              "their end, %llu were never admitted (a kernel whose blocks wait for others must "
              "take its tile from an atomic ticket, not from blockIdx, and publish with a "
              "fence or release)",
              (void *)ps.last_addr, ps.stale, (unsigned long long)rt.finished,
              (unsigned long long)rt.launch.grid_blocks,
              (unsigned long long)(rt.admission.size() - rt.admitted));
}

bool thread_stuck(const runtime &rt, const thread_slot &t) {
  return t.poll.epoch == rt.memory_epoch && t.poll.stale >= stuck_polls;
}

void note_stale_poll(runtime &rt, thread_slot &th, uintptr_t a, const site &s) {
  poll_state &ps = th.poll;
  ps.where = &s;
  ps.last_addr = a;
  if (++ps.stale != stuck_polls) return;
  if (rt.stuck_epoch != rt.memory_epoch) {
    rt.stuck_epoch = rt.memory_epoch;
    rt.stuck_threads = 0;
  }
  if (++rt.stuck_threads < rt.live_threads - rt.blocked_threads) return;
  for (uint32_t i = 0; i < rt.launch.resident; ++i) {
    const block_state &b = *rt.slots[i];
    if (!b.active) continue;
    for (const thread_slot &t : b.threads)
      if (t.state == thread_state::runnable && !thread_stuck(rt, t)) return;
  }
  report_livelock(rt, th);
}

// A yielding load's bytes: a poll when this thread read the same bytes there since memory
// last changed.
void observe_poll(runtime &rt, thread_slot &th, uintptr_t a, unsigned bytes, const void *v,
                  const site &s) {
  poll_state &ps = th.poll;
  if (ps.epoch != rt.memory_epoch) {
    ps.epoch = rt.memory_epoch;
    ps.stale = 0;
    memset(ps.bytes, 0, sizeof ps.bytes);
  }
  if (bytes > 16) return;
  for (int i = 0; i < poll_state::ring; ++i)
    if (ps.addr[i] == a && ps.bytes[i] == bytes && memcmp(ps.value[i], v, bytes) == 0) {
      note_stale_poll(rt, th, a, s);
      return;
    }
  int i = ps.next;
  ps.next = uint8_t((ps.next + 1) % poll_state::ring);
  ps.addr[i] = a;
  ps.bytes[i] = uint8_t(bytes);
  memcpy(ps.value[i], v, bytes);
}

thread_slot *running_thread() {
  return lane_now != nullptr ? &thread_of(lane_now) : nullptr;
}
}  // namespace

// ---- launch and block events ----------------------------------------------------------------

void order_launch_begin(runtime &rt) {
  if (!rt.order) rt.order.reset(new global_order);
  global_order &o = *rt.order;
  o.multi = rt.launch.grid_blocks > 1;
  o.runs.clear();
  o.lo = std::numeric_limits<uintptr_t>::max();
  o.hi = 0;
  o.clocks.clear();
  o.syncs.clear();
  o.undo.resize(rt.launch.resident);
  for (slot_undo &u : o.undo) u.clear();
  o.max_depth = 0;
  rt.stuck_threads = 0;
  rt.blocked_threads = 0;
  ++rt.memory_epoch;
}

void order_launch_end(runtime &rt) {
  rt.counts.dependent_steps = rt.order->max_depth;
  // A kernel's end orders everything before it with everything after: forget the launch.
  rt.order->runs.clear();
  rt.order->clocks.clear();
  rt.order->syncs.clear();
  ++rt.memory_epoch;
}

void order_block_start(runtime &rt, block_state &b) {
  rt.order->clocks[b.linear] = block_clock{};
  rt.order->undo[b.slot].clear();
}

void order_block_end(runtime &rt, block_state &b) {
  // Visible from now on, but nobody acquired them: a plain read in another block still needs
  // a chain.
  block_clock &c = clock_of(rt, b);
  c.released = c.epoch++;
  rt.order->undo[b.slot].clear();
  ++rt.memory_epoch;
}

// ---- plain accesses (from global_access) ------------------------------------------------------

void order_plain_store(runtime &rt, thread_slot &th, uintptr_t a, unsigned bytes,
                       uint32_t site_id, const site &s) {
  ++rt.memory_epoch;
  global_order &o = *rt.order;
  if (!o.multi) return;
  check_runs(rt, th, a, bytes, true, s);
  block_state &b = *th.blk;
  const block_clock &c = clock_of(rt, b);
  record_run(o, a, a + bytes, store_run{0, b.linear, c.epoch, site_id, th.tid});
  if (a < o.lo) o.lo = a;
  if (a + bytes > o.hi) o.hi = a + bytes;
  slot_undo &u = o.undo[b.slot];
  if (bytes <= 16 && u.log.size() < undo_limit) {
    undo_entry e;
    e.addr = a;
    e.bytes = bytes;
    memcpy(e.old, reinterpret_cast<const void *>(a), bytes);
    u.log.push_back(e);
    if (a < u.lo) u.lo = a;
    if (a + bytes > u.hi) u.hi = a + bytes;
  }
}

void order_plain_load(runtime &rt, thread_slot &th, uintptr_t a, unsigned bytes, const site &s) {
  if (rt.order->multi) check_runs(rt, th, a, bytes, false, s);
}

void plain_load_done(const void *p, unsigned bytes, const void *value, const site &s) {
  thread_slot *th = running_thread();
  if (th == nullptr || bytes > 16) return;
  runtime &rt = *current_runtime;
  poll_state &ps = th->poll;
  uintptr_t a = uintptr_t(p);
  if (ps.plain_addr == a && ps.plain_epoch == rt.memory_epoch &&
      memcmp(ps.plain_value, value, bytes) == 0) {
    // The same word again with nothing changed: a spin on a plain load.
    observe_poll(rt, *th, a, bytes, value, s);
    yield_thread(rt, *th);
    return;
  }
  ps.plain_addr = a;
  ps.plain_epoch = rt.memory_epoch;
  memcpy(ps.plain_value, value, bytes);
}

// ---- ordered accesses (kernels/akx/device.cuh) ----------------------------------------------------

void sync_load(const void *p, unsigned bytes, unsigned alignment, void *out, sync_load_kind k,
               const site &s) {
  thread_slot *th = running_thread();
  if (th == nullptr) {  // host code
    memcpy(out, p, bytes);
    return;
  }
  runtime &rt = *current_runtime;
  global_access(p, bytes, false, false, s, alignment, true);
  yield_thread(rt, *th);  // others go first: a poll finds what they did
  uintptr_t a = uintptr_t(p);
  visible_bytes(rt, *th->blk, a, bytes, out);
  block_clock &c = clock_of(rt, *th->blk);
  if (k == LOAD_ACQUIRE)
    acquire_from(rt, c, a);
  else
    note_relaxed_read(c, a);
  observe_poll(rt, *th, a, bytes, out, s);
}

void sync_store(void *p, unsigned bytes, unsigned alignment, const void *in, sync_store_kind k,
                const site &s) {
  thread_slot *th = running_thread();
  if (th == nullptr) {
    memcpy(p, in, bytes);
    return;
  }
  runtime &rt = *current_runtime;
  global_access(p, bytes, true, false, s, alignment, true);
  block_clock &c = clock_of(rt, *th->blk);
  uintptr_t a = uintptr_t(p);
  if (k == STORE_RELEASE) {
    release_block(rt, *th->blk, c);
    publish(rt, *th->blk, c, a, c.released);
  } else {
    publish(rt, *th->blk, c, a, c.fenced);
  }
  memcpy(p, in, bytes);
  ++rt.memory_epoch;
  yield_thread(rt, *th);
}

void atomic_begin(void *p, unsigned bytes, unsigned alignment, const site &s) {
  thread_slot *th = running_thread();
  if (th == nullptr) return;
  runtime &rt = *current_runtime;
  global_access(p, bytes, true, true, s, alignment);
  yield_thread(rt, *th);
}

void atomic_end(void *p, unsigned bytes, const void *old_bytes, const void *new_bytes,
                const site &s) {
  thread_slot *th = running_thread();
  if (th == nullptr) return;
  runtime &rt = *current_runtime;
  block_clock &c = clock_of(rt, *th->blk);
  uintptr_t a = uintptr_t(p);
  note_relaxed_read(c, a);
  publish(rt, *th->blk, c, a, c.fenced);
  if (memcmp(old_bytes, new_bytes, bytes) != 0)
    ++rt.memory_epoch;
  else
    observe_poll(rt, *th, a, bytes, old_bytes, s);  // a CAS that fails again and again
}

// Programmatic dependent launch: nothing runs beside the launch on the sim; the wait lets
// the thread's global accesses through (src/sim/checks.cpp), both are counted per block.
void grid_dependency(bool launch_dependents, const site &) {
  thread_slot *th = running_thread();
  if (th == nullptr) return;
  runtime &rt = *current_runtime;
  if (!launch_dependents) th->dependency_waited = true;
  if (th->tid == 0) ++(launch_dependents ? rt.counts.dependents_launches : rt.counts.dependency_waits);
}

void fence(fence_scope scope, const site &) {
  thread_slot *th = running_thread();
  if (th == nullptr) return;
  runtime &rt = *current_runtime;
  if (scope == FENCE_DEVICE) {
    block_clock &c = clock_of(rt, *th->blk);
    for (uintptr_t a : c.relaxed_reads) acquire_from(rt, c, a);
    c.relaxed_reads.clear();
    release_block(rt, *th->blk, c);
    c.fenced = c.released;
  }
  yield_thread(rt, *th);
}

void nanosleep_yield() {
  thread_slot *th = running_thread();
  if (th != nullptr) yield_thread(*current_runtime, *th);
}
}  // namespace akx::sim
