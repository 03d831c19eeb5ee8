// Running the blocks of a launch: a set of resident blocks (rt.launch.resident of them, as
// the device profile's occupancy and AKX_SIM_RESIDENT allow) whose threads are fibers on
// the calling OS thread, interleaved: one run queue for all of them, resumed in order (or
// in a seeded random order under AKX_SIM_SCHEDULE=random:SEED), each until it returns,
// blocks at a rendezvous or yields (global atomics, fences, acquire/volatile loads, polls:
// global_order.cpp). Blocks are admitted in index order (shuffled under a random schedule)
// as slots free up, as a GPU admits them: a kernel whose progress depends on other blocks
// must take its tile from an atomic ticket, never from blockIdx.
//  - __syncthreads waits for every thread of the block that has not returned (a returned
//    thread counts as arrived, as on sm_70+); all must wait at the same __syncthreads;
//  - a warp collective (__syncwarp, shuffles, votes) waits for exactly the lanes of its
//    mask, which must all reach the same collective with the same mask (from any source
//    line); it is not a barrier for anyone else, and only __syncwarp orders shared memory.
// The last thread to arrive completes the rendezvous, computes every participant's result
// and makes the waiters runnable. A rendezvous that can never complete (a lane it waits
// for has returned, waits at the block barrier, or waits at another collective) is a
// failed check at once; when nothing can run and threads remain, the launch is deadlocked.
#include <stdio.h>
#include <string.h>

#include <utility>

#include "sim/runtime.hpp"

namespace akx::sim {
namespace {

void push_runnable(runtime &rt, thread_slot &th) {
  if (th.state == thread_state::at_barrier || th.state == thread_state::at_collective)
    --rt.blocked_threads;
  th.state = thread_state::runnable;
  if (rt.runq_head == rt.runq.size()) {  // drained: start over, so the queue stays small
    rt.runq.clear();
    rt.runq_head = 0;
  } else if (rt.runq_head > 4096 && rt.runq_head * 2 > rt.runq.size()) {
    rt.runq.erase(rt.runq.begin(), rt.runq.begin() + ptrdiff_t(rt.runq_head));
    rt.runq_head = 0;
  }
  rt.runq.push_back(&th);
}

thread_slot *pop_runnable(runtime &rt) {
  size_t n = rt.runq.size() - rt.runq_head;
  if (n == 0) return nullptr;
  if (rt.random_schedule && n > 1) {
    // A random thread among the next few: the order within and across blocks is shuffled,
    // and every runnable thread still runs within a bounded number of switches. (A uniform
    // pick over thousands of resident threads cost 1.7x the time in cache misses on their
    // stacks, for no interleaving a bounded window cannot reach: threads that yield go to
    // the back of the queue, among other blocks' threads.)
    constexpr size_t window = 64;
    size_t j = rt.runq_head + next_random(rt) % (n < window ? n : window);
    std::swap(rt.runq[rt.runq_head], rt.runq[j]);
  }
  return rt.runq[rt.runq_head++];
}

// Leaves `from` (a blocked, yielding or finished thread, or the scheduler) for the next
// runnable thread, or for the scheduler when none is left or a block has just finished (so
// that the next block is admitted before anyone goes on: a thread polling for it would
// otherwise spin forever). Returns when `from` is resumed.
void switch_to_next(runtime &rt, fiber *from) {
  thread_slot *next = rt.slot_freed && from != &rt.scheduler ? nullptr : pop_runnable(rt);
  fiber *to = next != nullptr ? &next->fib : &rt.scheduler;
  lane_now = next != nullptr ? &next->view : nullptr;
  if (to != from) switch_fiber(from, to);
}

// Under a random schedule the thread that completes a rendezvous does not simply go on:
// it joins the others in the run queue.
void after_rendezvous(runtime &rt, thread_slot &self) {
  if (rt.random_schedule) {
    push_runnable(rt, self);
    switch_to_next(rt, &self.fib);
  }
}

thread_slot &lane_thread(block_state &b, const warp_state &w, uint32_t lane) {
  return b.threads[size_t(&w - b.warps.data()) * 32 + lane];
}

const char *collective_name(collective_kind kind, int op) {
  switch (kind) {
    case collective_kind::shuffle: {
      static const char *const names[] = {"__shfl_sync", "__shfl_up_sync", "__shfl_down_sync",
                                          "__shfl_xor_sync"};
      return names[op];
    }
    case collective_kind::vote: {
      static const char *const names[] = {"__ballot_sync", "__any_sync", "__all_sync"};
      return names[op];
    }
    case collective_kind::syncwarp:
      return "__syncwarp";
  }
  return "?";
}

const char *barrier_name(bar_kind k) {
  static const char *const names[] = {"__syncthreads", "__syncthreads_count",
                                      "__syncthreads_and", "__syncthreads_or"};
  return names[k];
}

// ---- block barrier --------------------------------------------------------------------------

// Every thread that has not returned has arrived: release them. `self` is the last to
// arrive (it goes on running), or NULL when the last missing thread returned instead.
void complete_barrier(runtime &rt, block_state &blk, thread_slot *self) {
  block_barrier &b = blk.barrier;
  uint32_t result = 0;
  switch (b.kind) {
    case BAR_PLAIN: break;
    case BAR_COUNT: result = b.count; break;
    case BAR_AND: result = b.count == b.arrived; break;
    case BAR_OR: result = b.count > 0; break;
  }
  b.pending = false;
  ++rt.counts.barriers;
  if (rt.counting) flush_block_warps(rt, blk);
  sync_block(blk);
  for (warp_state &w : blk.warps) w.at_barrier = 0;
  for (thread_slot &t : blk.threads) {
    if (t.state != thread_state::at_barrier) continue;
    t.result = result;
    if (&t == self) {
      --rt.blocked_threads;
      t.state = thread_state::runnable;
    } else {
      push_runnable(rt, t);
    }
  }
}

// ---- warp collectives ---------------------------------------------------------------------

// The lane a shuffle reads, as PTX shfl.sync computes it (b = the lane argument's low five
// bits; a segment is `width` lanes): a lane outside the segment means the caller's own, as
// CUDA defines it. A lane inside the segment but outside the mask is undefined on a GPU (up
// and down included): complete_collective fails it.
uint32_t shuffle_source(int op, uint32_t lane, int32_t arg, int32_t width) {
  uint32_t b = uint32_t(arg) & 31;
  uint32_t seg_begin = lane & ~uint32_t(width - 1), seg_last = seg_begin + uint32_t(width) - 1;
  switch (op) {
    case SHFL_IDX: return seg_begin | (b & uint32_t(width - 1));
    case SHFL_UP: return lane >= seg_begin + b ? lane - b : lane;
    case SHFL_DOWN: return lane + b <= seg_last ? lane + b : lane;
    case SHFL_XOR: return (lane ^ b) <= seg_last ? lane ^ b : lane;
  }
  return lane;
}

// Every lane of p's mask has arrived: compute each lane's result, release the others.
void complete_collective(runtime &rt, block_state &blk, warp_state &w, size_t index,
                         thread_slot &self) {
  const pending_collective &p = w.pending[index];
  uint64_t result[32];
  if (p.kind == collective_kind::shuffle) {
    for (uint32_t m = p.mask; m != 0; m &= m - 1) {
      uint32_t lane = uint32_t(__builtin_ctz(m));
      uint32_t src = shuffle_source(p.op, lane, p.arg[lane], p.width[lane]);
      if (src != lane && !(p.mask >> src & 1)) {
        record_failure(rt, lane_thread(blk, w, lane), "warp collective mask", p.where,
                       "%s with mask 0x%08x: lane %u reads lane %u, which is not in the mask "
                       "(undefined on a GPU)",
                       collective_name(p.kind, p.op), p.mask, lane, src);
        abandon_thread(rt, self);
      }
      result[lane] = p.value[src];
    }
  } else if (p.kind == collective_kind::vote) {
    uint32_t ballot = 0;
    for (uint32_t m = p.mask; m != 0; m &= m - 1)
      if (p.value[__builtin_ctz(m)] != 0) ballot |= m & (~m + 1);
    uint64_t r = p.op == VOTE_BALLOT ? ballot : p.op == VOTE_ANY ? ballot != 0 : ballot == p.mask;
    for (uint64_t &x : result) x = r;
  } else {
    memset(result, 0, sizeof result);
  }

  uint32_t mask = p.mask;
  bool orders_memory = p.kind == collective_kind::syncwarp;
  w.pending.erase(w.pending.begin() + ptrdiff_t(index));
  // Every collective is a convergence point for the counters; but only __syncwarp orders
  // shared memory among its lanes (CUDA promises no memory ordering for shuffles and votes:
  // a lane may go on to its next access before the others' accesses are visible).
  if (rt.counting) flush_warp(rt, w);
  if (orders_memory) sync_warp_lanes(blk, w, mask);
  for (uint32_t m = mask; m != 0; m &= m - 1) {
    thread_slot &t = lane_thread(blk, w, uint32_t(__builtin_ctz(m)));
    t.result = result[t.lane];
    if (&t == &self) {
      --rt.blocked_threads;
      t.state = thread_state::runnable;
    } else {
      push_runnable(rt, t);
    }
  }
}

uint64_t warp_collective(collective_kind kind, int op, uint32_t mask, uint64_t value, int arg,
                         int width, const site &s) {
  if (lane_now == nullptr) return value;  // host code: there is no warp
  runtime &rt = *current_runtime;
  thread_slot &th = thread_of(lane_now);
  block_state &blk = *th.blk;
  warp_state &w = blk.warps[th.warp];
  uint32_t bit = 1u << th.lane;
  const char *what = collective_name(kind, op);

  if (!(mask & bit))
    fail_thread(rt, th, "warp collective mask", s,
                "%s with mask 0x%08x, which does not include the calling lane %u", what, mask,
                th.lane);
  if (mask & ~w.lanes)
    fail_thread(rt, th, "warp collective mask", s,
                "%s with mask 0x%08x names lanes 0x%08x that do not exist (warp %u of this "
                "%u-thread block has lanes 0x%08x)",
                what, mask, mask & ~w.lanes, th.warp, rt.launch.threads, w.lanes);
  if (kind == collective_kind::shuffle && (width < 1 || width > 32 || (width & (width - 1))))
    fail_thread(rt, th, "shuffle width", s,
                "%s with width %d: the width must be a power of two from 1 to 32", what, width);
  if (mask & ~w.live)
    fail_thread(rt, th, "deadlock", s,
                "%s with mask 0x%08x waits for lane %u, which has returned", what, mask,
                unsigned(__builtin_ctz(mask & ~w.live)));
  if (mask & w.at_barrier)
    fail_thread(rt, th, "deadlock", s,
                "%s with mask 0x%08x waits for lane %u, which waits at %s at %s:%u", what,
                mask, unsigned(__builtin_ctz(mask & w.at_barrier)),
                barrier_name(blk.barrier.kind), file_basename(blk.barrier.where.file_name()),
                unsigned(blk.barrier.where.line()));

  size_t index = w.pending.size();
  for (size_t i = 0; i < w.pending.size(); ++i) {
    const pending_collective &q = w.pending[i];
    if (!(q.mask & mask)) continue;
    // The same collective (kind, op, mask) from another source line is the same rendezvous
    // on sm_70+ (independent thread scheduling: e.g. a __syncwarp in both branches of an if).
    if (q.mask != mask || q.kind != kind || q.op != op)
      fail_thread(rt, th, "divergent warp collective", s,
                  "%s with mask 0x%08x, while lanes 0x%08x of this warp wait for lanes of it "
                  "at %s with mask 0x%08x at %s:%u",
                  what, mask, q.arrived, collective_name(q.kind, q.op), q.mask,
                  file_basename(q.where.file_name()), unsigned(q.where.line()));
    index = i;
    break;
  }
  if (index == w.pending.size()) {
    pending_collective &q = w.pending.emplace_back();
    q.kind = kind;
    q.op = op;
    q.where = s;
    q.mask = mask;
    q.arrived = 0;
  }
  pending_collective &p = w.pending[index];
  p.arrived |= bit;
  p.value[th.lane] = value;
  p.arg[th.lane] = arg;
  p.width[th.lane] = width;
  th.state = thread_state::at_collective;
  ++rt.blocked_threads;
  if (p.arrived != mask) {
    switch_to_next(rt, &th.fib);
  } else {
    complete_collective(rt, blk, w, index, th);
    after_rendezvous(rt, th);
  }
  return th.result;
}

// ---- threads --------------------------------------------------------------------------------

[[noreturn]] void thread_returned(runtime &rt, thread_slot &th) {
  block_state &blk = *th.blk;
  warp_state &w = blk.warps[th.warp];
  uint32_t bit = 1u << th.lane;
  for (const pending_collective &p : w.pending)
    if (p.mask & bit)
      fail_thread(rt, th, "deadlock", p.where,
                  "this thread returned while lanes 0x%08x of its warp wait for it at %s with "
                  "mask 0x%08x",
                  p.arrived, collective_name(p.kind, p.op), p.mask);
  th.state = thread_state::exited;
  ++blk.exited;
  --rt.live_threads;
  w.live &= ~bit;
  if (blk.barrier.pending && blk.barrier.arrived + blk.exited == rt.launch.threads)
    complete_barrier(rt, blk, nullptr);
  if (blk.exited == rt.launch.threads) {  // the block's end
    // Kernel end is the last convergence point of its warps.
    if (rt.counting) flush_block_warps(rt, blk);
    order_block_end(rt, blk);
    blk.active = false;
    ++rt.finished;
    rt.slot_freed = true;
    if (rt.interrupt_after != 0 && rt.finished == rt.interrupt_after) {
      rt.interrupt_after = 0;
      record_failure(rt, th, "interrupted", site::current(),
                     "a test interrupted the launch after %llu blocks ended (akx__sim_interrupt_after)",
                     (unsigned long long)rt.finished);
    }
  }
  switch_to_next(rt, &th.fib);
  __builtin_unreachable();  // a returned thread is never resumed
}

void thread_entry(fctx::transfer_t t) {
  fiber_started(t);
  runtime &rt = *current_runtime;
  thread_slot &th = thread_of(lane_now);
  rt.launch.fn(rt.launch.closure);
  thread_returned(rt, th);
}

// Where a blocked thread waits, for the deadlock sentence.
void describe_wait(const thread_slot &th, char *out, size_t size, site *where) {
  const block_state &blk = *th.blk;
  if (th.state == thread_state::at_barrier) {
    *where = blk.barrier.where;
    snprintf(out, size, "%s at %s:%u", barrier_name(blk.barrier.kind),
             file_basename(where->file_name()), unsigned(where->line()));
    return;
  }
  for (const pending_collective &p : blk.warps[th.warp].pending)
    if (p.arrived >> th.lane & 1) {
      *where = p.where;
      snprintf(out, size, "%s with mask 0x%08x at %s:%u", collective_name(p.kind, p.op), p.mask,
               file_basename(where->file_name()), unsigned(where->line()));
      return;
    }
  snprintf(out, size, "nothing it can name");
}

}  // namespace

// A resident block whose every live thread waits at a rendezvous: none of them can go on.
// Reports it (naming a second place threads wait at, when there is one) and returns true.
bool report_block_deadlock(runtime &rt, const block_state &blk) {
  const thread_slot *first = nullptr, *other = nullptr;
  char first_wait[160] = "", other_wait[160] = "", wait[160];
  site first_site, other_site;
  for (const thread_slot &t : blk.threads) {
    if (t.state == thread_state::exited) continue;
    if (t.state == thread_state::runnable) return false;
    if (first == nullptr) {
      first = &t;
      describe_wait(t, first_wait, sizeof first_wait, &first_site);
    } else if (other == nullptr) {
      describe_wait(t, wait, sizeof wait, &other_site);
      if (strcmp(wait, first_wait) != 0) {  // the first thread waiting somewhere else
        other = &t;
        memcpy(other_wait, wait, sizeof wait);
      }
    }
  }
  if (first == nullptr) return false;
  if (other == nullptr) {
    record_failure(rt, *first, "deadlock", first_site,
                   "every thread of this block that has not returned is blocked and none can "
                   "go on; this thread waits at %s",
                   first_wait);
    return true;
  }
  const dim3 &o = other->view.threadIdx;
  record_failure(rt, *first, "deadlock", first_site,
                 "every thread of this block that has not returned is blocked and none can go "
                 "on; this thread waits at %s, thread (%u,%u,%u) at %s",
                 first_wait, o.x, o.y, o.z, other_wait);
  return true;
}

namespace {
void admit_block(runtime &rt, block_state &blk, uint64_t linear) {
  launch_state &L = rt.launch;
  blk.active = true;
  blk.linear = linear;
  blk.serial = ++rt.block_serial;
  blk.idx = dim3(unsigned(linear % L.grid.x), unsigned(linear / L.grid.x % L.grid.y),
                 unsigned(linear / (uint64_t(L.grid.x) * L.grid.y)));
  blk.exited = 0;
  blk.barrier.pending = false;
  for (uint32_t tid = 0; tid < L.threads; ++tid) {
    thread_slot &th = blk.threads[tid];
    th.view.threadIdx = dim3(tid % L.block.x, tid / L.block.x % L.block.y,
                             tid / (L.block.x * L.block.y));
    th.view.blockIdx = blk.idx;
    th.view.blockDim = L.block;
    th.view.gridDim = L.grid;
    th.blk = &blk;
    th.tid = tid;
    th.warp = tid / 32;
    th.lane = tid % 32;
    th.result = 0;
    th.dependency_waited = false;
    th.state = thread_state::runnable;
    th.poll = poll_state{};
    rt.stacks.start(th.fib, size_t(blk.slot) * L.threads + tid, thread_entry);
  }
  for (uint32_t i = 0; i < L.warps; ++i) {
    warp_state &w = blk.warps[i];
    uint32_t n = L.threads - i * 32 < 32 ? L.threads - i * 32 : 32;
    w.lanes = w.live = n == 32 ? ~0u : (1u << n) - 1;
    w.at_barrier = 0;
    w.pending.clear();
    w.last_full = 0;
  }
  begin_block_shared(rt, blk);
  order_block_start(rt, blk);
  rt.live_threads += L.threads;
  for (thread_slot &th : blk.threads) push_runnable(rt, th);
}
}  // namespace

void run_blocks(runtime &rt) {
  launch_state &L = rt.launch;
  rt.admitted = 0;
  rt.finished = 0;
  rt.live_threads = 0;
  rt.runq.clear();
  rt.runq_head = 0;
  for (auto &b : rt.slots) b->active = false;
  while (!L.failed) {
    for (uint32_t s = 0; s < L.resident && rt.admitted < rt.admission.size(); ++s)
      if (!rt.slots[s]->active) admit_block(rt, *rt.slots[s], rt.admission[rt.admitted++]);
    rt.slot_freed = false;
    if (rt.runq_head == rt.runq.size()) {
      if (rt.finished == rt.admission.size()) break;
      // Nothing can run: some resident block waits for itself.
      bool reported = false;
      for (uint32_t s = 0; s < L.resident && !reported; ++s)
        if (rt.slots[s]->active) reported = report_block_deadlock(rt, *rt.slots[s]);
      if (!reported)
        record_failure(rt, rt.slots[0]->threads[0], "deadlock", site::current(),
                       "no thread can run and the launch has not ended");
      break;
    }
    // Back here when nothing can run, a block has ended, or a check failed.
    switch_to_next(rt, &rt.scheduler);
  }
  // After a failure, what ran is counted too.
  if (rt.counting)
    for (uint32_t s = 0; s < L.resident; ++s)
      if (rt.slots[s]->active) flush_block_warps(rt, *rt.slots[s]);
  for (auto &b : rt.slots) b->active = false;
  lane_now = nullptr;
}

void yield_thread(runtime &rt, thread_slot &th) {
  push_runnable(rt, th);
  switch_to_next(rt, &th.fib);
}

// splitmix64: a small generator whose sequence depends only on the seed.
uint64_t next_random(runtime &rt) {
  uint64_t z = (rt.rng += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint32_t active_lanes(runtime &rt, const thread_slot &th) {
  const warp_state &w = th.blk->warps[th.warp];
  uint32_t converged = w.live & ~w.at_barrier;
  for (const pending_collective &p : w.pending) converged &= ~p.arrived;
  return (converged & uint32_t(next_random(rt))) | (1u << th.lane);
}

// ---- sim_device.hpp's collectives -------------------------------------------------------------

uint64_t shfl(unsigned mask, uint64_t v, shfl_kind k, int arg, int width, const site &s) {
  return warp_collective(collective_kind::shuffle, k, mask, v, arg, width, s);
}

unsigned vote(unsigned mask, int pred, vote_kind k, const site &s) {
  return unsigned(warp_collective(collective_kind::vote, k, mask, pred != 0, 0, 32, s));
}

void syncwarp(unsigned mask, const site &s) {
  warp_collective(collective_kind::syncwarp, 0, mask, 0, 0, 32, s);
}

int syncthreads(int pred, bar_kind kind, const site &s) {
  if (lane_now == nullptr) return 0;  // host code: there is no block
  runtime &rt = *current_runtime;
  thread_slot &th = thread_of(lane_now);
  block_state &blk = *th.blk;
  warp_state &w = blk.warps[th.warp];
  uint32_t bit = 1u << th.lane;
  for (const pending_collective &p : w.pending)
    if (p.mask & bit)
      fail_thread(rt, th, "divergent barrier", s,
                  "this thread reached %s while lanes 0x%08x of its warp wait for it at %s "
                  "with mask 0x%08x at %s:%u",
                  barrier_name(kind), p.arrived, collective_name(p.kind, p.op), p.mask,
                  file_basename(p.where.file_name()), unsigned(p.where.line()));
  block_barrier &b = blk.barrier;
  if (!b.pending) {
    b.pending = true;
    b.where = s;
    b.kind = kind;
    b.arrived = 0;
    b.count = 0;
  } else if (!same_site(b.where, s) || b.kind != kind) {
    fail_thread(rt, th, "divergent barrier", s,
                "this thread waits at %s here while other threads of the block wait at %s at "
                "%s:%u",
                barrier_name(kind), barrier_name(b.kind), file_basename(b.where.file_name()),
                unsigned(b.where.line()));
  }
  ++b.arrived;
  b.count += pred != 0;
  th.state = thread_state::at_barrier;
  ++rt.blocked_threads;
  w.at_barrier |= bit;
  if (b.arrived + blk.exited == rt.launch.threads) {
    complete_barrier(rt, blk, &th);
    after_rendezvous(rt, th);
  } else {
    switch_to_next(rt, &th.fib);
  }
  return int(th.result);
}

unsigned activemask() {
  if (lane_now == nullptr) return 0;
  runtime &rt = *current_runtime;
  const thread_slot &th = thread_of(lane_now);
  if (rt.random_schedule) return active_lanes(rt, th);
  return th.blk->warps[th.warp].live;
}
}  // namespace akx::sim
