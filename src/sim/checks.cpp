// Kernels' memory accesses: every shared access (smem<T>::ld/st) and global access (gld,
// gst, gld_vec, atomics) passes here before it happens. Shared: bounds of its object,
// alignment, racecheck and initcheck (see shadow_record), counting. Global: inside one
// akx_malloc allocation of the context, aligned to its size, counting. Also the block's
// shared memory itself: the arena, its static allocations, the poison it starts with.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <iterator>
#include <utility>

#include "sim/request_cost.hpp"
#include "sim/runtime.hpp"

namespace akx::sim {
namespace {

// Uninitialised shared memory on a GPU holds whatever the last block left; the sim fills it
// with this so that a kernel that reads before it writes gets visibly wrong values.
constexpr unsigned char poison = akx__sim_poison_byte;

size_t align16(size_t n) { return (n + 15) & ~size_t(15); }

// "'partials' declared at f.cuh:12" or "the dynamic shared memory": the object at an arena
// offset, for messages.
void describe_shared_object(const runtime &rt, size_t offset, char *out, size_t size) {
  if (offset < rt.launch.dyn_smem) {
    snprintf(out, size, "the dynamic shared memory");
    return;
  }
  for (const shared_alloc &a : rt.launch.statics)
    if (offset >= a.offset && offset < a.offset + a.bytes) {
      snprintf(out, size, "'%s' declared at %s:%u", a.name, file_basename(a.where.file_name()),
               unsigned(a.where.line()));
      return;
    }
  snprintf(out, size, "no shared object");
}

const thread_view &view_of(const block_state &b, uint32_t tid) { return b.threads[tid].view; }

// "the 4-byte word at shared offset 8" or "the byte at shared offset 9".
[[noreturn]] void fail_race(runtime &rt, thread_slot &th, const site &s, size_t offset,
                            unsigned unit, bool write, const char *other_did, uint32_t other_tid,
                            uint32_t other_site) {
  char object[160];
  describe_shared_object(rt, offset, object, sizeof object);
  const char *what = unit == 4 ? "4-byte word" : "byte";
  const site &o = rt.sites[other_site].where;
  if (other_tid == shadow_record::several_warps) {
    fail_thread(rt, th, "shared-memory race", s,
                "this thread %s the %s at shared offset %zu (in %s), which threads of other "
                "warps read (last at %s:%u) with no barrier between them",
                write ? "writes" : "reads", what, offset, object, file_basename(o.file_name()),
                unsigned(o.line()));
  }
  const dim3 &t = view_of(*th.blk, other_tid).threadIdx;
  fail_thread(rt, th, "shared-memory race", s,
              "this thread %s the %s at shared offset %zu (in %s), which thread (%u,%u,%u) %s "
              "at %s:%u with no barrier or __syncwarp between them",
              write ? "writes" : "reads", what, offset, object, t.x, t.y, t.z, other_did,
              file_basename(o.file_name()), unsigned(o.line()));
}

// initcheck: a load of a word (or byte) that no thread of the running block has stored. On a
// GPU it reads whatever the SM's last block left there (the sim's poison here), so a kernel
// that depends on it is wrong whatever value it happens to see.
[[noreturn]] void fail_uninitialised(runtime &rt, thread_slot &th, const site &s, size_t offset,
                                     unsigned unit) {
  char object[160];
  describe_shared_object(rt, offset, object, sizeof object);
  fail_thread(rt, th, "shared initcheck", s,
              "this thread reads the %s at shared offset %zu (in %s), which no thread of this "
              "block has written: shared memory starts with what the SM's last block left",
              unit == 4 ? "4-byte word" : "byte", offset, object);
}

// Is an access that thread `other` made at sync position `pos` (after the last barrier)
// ordered before th's? Only a __syncwarp of both lanes can order it.
bool ordered_in_warp(const thread_slot &th, uint32_t other_warp, uint32_t other_lane,
                     uint32_t pos) {
  if (other_warp != th.warp) return false;
  const warp_state &w = th.blk->warps[other_warp];
  return w.last_full > pos || w.pair[th.lane][other_lane] > pos;
}

// Checks th's access against one record (a word or a byte at arena `offset`), then records it.
void racecheck_unit(runtime &rt, thread_slot &th, uint32_t site_id, shadow_record &sh,
                    size_t offset, unsigned unit, bool write, const site &s) {
  const uint32_t since = th.blk->last_barrier;
  // Records written before the block's start (w_pos < start_pos) are an earlier block's,
  // or nobody's (0).
  if (!write && sh.w_pos < th.blk->start_pos) fail_uninitialised(rt, th, s, offset, unit);
  if (sh.w_pos >= since && sh.w_tid != th.tid &&
      !ordered_in_warp(th, sh.w_tid / 32, sh.w_tid % 32, sh.w_pos))
    fail_race(rt, th, s, offset, unit, write, "wrote", sh.w_tid, sh.w_site);
  if (write) {
    if (sh.r_pos >= since) {
      if (sh.r_warp == shadow_record::several_warps)
        fail_race(rt, th, s, offset, unit, write, "read", shadow_record::several_warps,
                  sh.r_site);
      uint32_t others = sh.r_lanes & ~(sh.r_warp == th.warp ? 1u << th.lane : 0u);
      for (; others != 0; others &= others - 1) {
        uint32_t lane = uint32_t(__builtin_ctz(others));
        if (!ordered_in_warp(th, sh.r_warp, lane, sh.r_pos))
          fail_race(rt, th, s, offset, unit, write, "read", sh.r_warp * 32 + lane, sh.r_site);
      }
    }
    sh.w_pos = th.sync_pos;
    sh.w_tid = uint16_t(th.tid);
    sh.w_site = site_id;
    sh.r_pos = 0;  // reads before this write are ordered before it, hence before what follows
    return;
  }
  if (sh.r_pos < since) {  // the first read since the last barrier
    sh.r_warp = uint16_t(th.warp);
    sh.r_lanes = 1u << th.lane;
    sh.r_pos = th.sync_pos;
  } else {
    if (sh.r_warp != th.warp) sh.r_warp = shadow_record::several_warps;
    sh.r_lanes |= 1u << th.lane;
    if (th.sync_pos > sh.r_pos) sh.r_pos = th.sync_pos;
  }
  sh.r_site = site_id;
}

// Bytes [at, at + bytes) of the arena: whole words against their word records, parts of
// words against byte records (the word is split at its first partial access: each byte
// inherits the word's history).
void racecheck(runtime &rt, thread_slot &th, uint32_t site_id, size_t at, unsigned bytes,
               bool write, const site &s) {
  block_state &blk = *th.blk;
  for (size_t word = at / 4; word <= (at + bytes - 1) / 4; ++word) {
    shadow_record &w = blk.shadow[word];
    size_t lo = word * 4 > at ? word * 4 : at;
    size_t hi = word * 4 + 4 < at + bytes ? word * 4 + 4 : at + bytes;
    if (hi - lo == 4 && !w.split) {
      racecheck_unit(rt, th, site_id, w, word * 4, 4, write, s);
      continue;
    }
    if (!w.split) {
      if (blk.byte_shadow.empty()) blk.byte_shadow.assign(blk.shadow.size() * 4, shadow_record{});
      for (size_t b = 0; b < 4; ++b) blk.byte_shadow[word * 4 + b] = w;
      w.split = true;
    }
    for (size_t b = lo; b < hi; ++b)
      racecheck_unit(rt, th, site_id, blk.byte_shadow[b], b, 1, write, s);
  }
}

[[noreturn]] void fail_global_range(runtime &rt, thread_slot &th, uintptr_t a, unsigned bytes,
                                    const char *what, const site &s) {
  auto next = rt.allocations.upper_bound(a);
  if (next != rt.allocations.begin()) {
    auto prev = std::prev(next);
    if (a < prev->first + prev->second)
      fail_thread(rt, th, "global out of bounds", s,
                  "a %u-byte %s at %p runs %zu bytes past the end of the %zu-byte allocation at "
                  "%p",
                  bytes, what, (void *)a, size_t(a + bytes - (prev->first + prev->second)),
                  prev->second, (void *)prev->first);
    fail_thread(rt, th, "global out of bounds", s,
                "a %u-byte %s at %p is outside every akx_malloc allocation of this context "
                "(the nearest below is the %zu-byte allocation at %p, which ends %zu bytes "
                "before it)",
                bytes, what, (void *)a, prev->second, (void *)prev->first,
                size_t(a - (prev->first + prev->second)));
  }
  fail_thread(rt, th, "global out of bounds", s,
              "a %u-byte %s at %p is outside every akx_malloc allocation of this context", bytes,
              what, (void *)a);
}
}  // namespace

// ---- racecheck sync events -------------------------------------------------------------------

void sync_block(block_state &b) {
  b.last_barrier = ++b.sync_clock;
  for (thread_slot &t : b.threads) t.sync_pos = b.last_barrier;
}

void sync_warp_lanes(block_state &b, warp_state &w, uint32_t mask) {
  uint32_t event = ++b.sync_clock;
  if ((mask & w.lanes) == w.lanes) {
    w.last_full = event;
  } else {
    for (uint32_t i = mask; i != 0; i &= i - 1)
      for (uint32_t j = mask; j != 0; j &= j - 1)
        w.pair[__builtin_ctz(i)][__builtin_ctz(j)] = event;
  }
  size_t first = size_t(&w - b.warps.data()) * 32;
  for (uint32_t m = mask; m != 0; m &= m - 1) b.threads[first + __builtin_ctz(m)].sync_pos = event;
}

// ---- the block's shared memory ----------------------------------------------------------------

block_state::~block_state() { free(arena); }

bool reserve_shared(runtime &rt, block_state &b) {
  // The dynamic area, then at most the static limit (a larger static layout fails its
  // declaration, as nvcc would refuse to compile it).
  size_t bytes = align16(rt.launch.dyn_smem) + align16(size_t(akx__static_shared_limit));
  if (b.arena != nullptr && b.arena_bytes >= bytes) return true;
  free(b.arena);
  b.arena = static_cast<unsigned char *>(aligned_alloc(4096, (bytes + 4095) & ~size_t(4095)));
  if (b.arena == nullptr) {
    b.arena_bytes = 0;
    return false;
  }
  b.arena_bytes = bytes;
  b.shadow.assign(bytes / 4, shadow_record{});
  b.byte_shadow.clear();
  b.sync_clock = b.last_barrier = 1;
  return true;
}

void begin_block_shared(runtime &rt, block_state &b) {
  // Sync positions are 32-bit; long before they wrap, start the shadow afresh (all zero:
  // nothing to check against), between two blocks where no record matters any more.
  if (b.sync_clock > 0xF0000000u) {
    std::fill(b.shadow.begin(), b.shadow.end(), shadow_record{});
    std::fill(b.byte_shadow.begin(), b.byte_shadow.end(), shadow_record{});
    for (warp_state &w : b.warps) memset(w.pair, 0, sizeof w.pair);
    b.sync_clock = 1;
  }
  b.poisoned_upto = rt.launch.static_end;
  memset(b.arena, poison, b.poisoned_upto);
  sync_block(b);  // the block's start orders it after everything before
  b.start_pos = b.last_barrier;
}

void *shared_static(size_t bytes, const char *name, const site &s) {
  if (lane_now == nullptr) return nullptr;  // host code: there is no block
  runtime &rt = *current_runtime;
  thread_slot &th = thread_of(lane_now);
  launch_state &L = rt.launch;
  shared_alloc *a = nullptr;
  for (shared_alloc &x : L.statics)
    if (same_site(x.where, s)) a = &x;
  if (a == nullptr) {  // the first thread to reach this declaration lays it out
    size_t offset = align16(L.static_end);
    size_t static_bytes = offset + bytes - L.static_begin;
    // A block's static and dynamic shared memory together must fit 48 KiB without the
    // opt-in, and the device's per-block maximum with it, as the driver counts them.
    const size_t limit = L.smem_optin ? size_t(rt.profile->shared_per_block)
                                      : size_t(akx__static_shared_limit);
    if (static_bytes > size_t(akx__static_shared_limit) || offset + bytes < offset)
      fail_thread(rt, th, "shared memory size", s,
                  "AKX_SHARED '%s' of %zu bytes does not fit: the block's static shared "
                  "memory would be %zu bytes, over the %d bytes nvcc allows statically (larger "
                  "tiles need dynamic shared memory with the opt-in)",
                  name, bytes, static_bytes, akx__static_shared_limit);
    else if (static_bytes + L.dyn_smem > limit)
      fail_thread(rt, th, "shared memory size", s,
                  "AKX_SHARED '%s' of %zu bytes does not fit: %zu bytes of static and %zu of "
                  "dynamic shared memory are more than the %zu a block may use %s",
                  name, bytes, static_bytes, L.dyn_smem, limit,
                  L.smem_optin ? "(the profile's opt-in maximum)"
                               : "without the opt-in (kernel_info.smem_optin)");
    L.statics.push_back(shared_alloc{s, name, offset, bytes});
    L.static_end = offset + bytes;
    a = &L.statics.back();
  } else if (a->bytes != bytes) {
    fail_thread(rt, th, "shared memory size", s,
                "AKX_SHARED '%s' declares %zu bytes here, where another thread declared %zu", name,
                bytes, a->bytes);
  }
  block_state &blk = *th.blk;
  if (blk.poisoned_upto < a->offset + a->bytes) {  // laid out after this block started
    memset(blk.arena + blk.poisoned_upto, poison, a->offset + a->bytes - blk.poisoned_upto);
    blk.poisoned_upto = a->offset + a->bytes;
  }
  return blk.arena + a->offset;
}

void *shared_dynamic(size_t *bytes, const site &) {
  if (lane_now == nullptr) {
    *bytes = 0;
    return nullptr;
  }
  *bytes = current_runtime->launch.dyn_smem;
  return thread_of(lane_now).blk->arena;
}

// ---- accesses ---------------------------------------------------------------------------------

void shared_access(const void *base, size_t limit, int64_t offset, unsigned bytes, bool write,
                   const site &s, unsigned alignment) {
  if (lane_now == nullptr) return;  // host code
  runtime &rt = *current_runtime;
  thread_slot &th = thread_of(lane_now);
  block_state &blk = *th.blk;
  size_t at = size_t(static_cast<const unsigned char *>(base) - blk.arena);
  if (offset < 0 || uint64_t(offset) + bytes > limit) {
    char object[160];
    describe_shared_object(rt, at, object, sizeof object);
    fail_thread(rt, th, "shared out of bounds", s,
                "a %u-byte %s at byte offset %lld of %s, which has %zu bytes", bytes,
                write ? "store" : "load", (long long)offset, object, limit);
  }
  at += size_t(offset);
  if (at + bytes > blk.arena_bytes)  // a pointer that is not from AKX_SHARED*
    fail_thread(rt, th, "shared out of bounds", s,
                "a %u-byte %s at %p, which is not in the block's shared memory", bytes,
                write ? "store" : "load", static_cast<const void *>(
                                               static_cast<const unsigned char *>(base) + offset));
  // A GPU faults on a shared access not aligned to its type (a vector: to its size). The
  // arena and its objects are 16-byte aligned, so an arena offset stands for an address.
  unsigned width = instruction_bytes(bytes, alignment);
  unsigned required = alignment != 0 ? alignment : width;
  if (at & (required - 1)) {
    char object[160];
    describe_shared_object(rt, at, object, sizeof object);
    fail_thread(rt, th, "misaligned shared access", s,
                "a %u-byte %s at byte offset %lld of %s (shared offset %zu) is not aligned to "
                "%u bytes, the alignment of its type (a vector access must be aligned to its "
                "size)",
                bytes, write ? "store" : "load", (long long)offset, object, at, required);
  }
  uint32_t site_id = rt.sites.id(s, true, write, bytes, width);
  racecheck(rt, th, site_id, at, bytes, write, s);
  if (rt.counting) count_access(rt, th, site_id, at);
}

void global_access(const void *p, unsigned bytes, bool write, bool atomic, const site &s,
                   unsigned alignment, bool ordered) {
  if (lane_now == nullptr) return;  // host code
  runtime &rt = *current_runtime;
  thread_slot &th = thread_of(lane_now);
  uintptr_t a = uintptr_t(p);
  const char *what = atomic ? "atomic" : write ? "store" : "load";
  if (rt.launch.pdl && !th.dependency_waited)
    fail_thread(rt, th, "global access before the grid dependency wait", s,
                "a %u-byte %s at %p before the thread called grid_dependency_wait(), in a "
                "programmatic dependent launch: on a GPU the kernel before it in the stream may "
                "still be writing there (kernels/akx/device.cuh)",
                bytes, what, p);
  if (!(a >= rt.hit_lo[0] && a + bytes <= rt.hit_hi[0])) {
    if (a >= rt.hit_lo[1] && a + bytes <= rt.hit_hi[1]) {
      std::swap(rt.hit_lo[0], rt.hit_lo[1]);
      std::swap(rt.hit_hi[0], rt.hit_hi[1]);
    } else {
      auto it = find_allocation(rt, a, bytes);
      if (it == rt.allocations.end()) fail_global_range(rt, th, a, bytes, what, s);
      rt.hit_lo[1] = rt.hit_lo[0];
      rt.hit_hi[1] = rt.hit_hi[0];
      rt.hit_lo[0] = it->first;
      rt.hit_hi[0] = it->first + it->second;
    }
  }
  // A GPU faults on an access not aligned to its type (a vec<T, N> is aligned to its size).
  unsigned width = instruction_bytes(bytes, alignment);
  unsigned required = alignment != 0 ? alignment : width;
  if (a & (required - 1))
    fail_thread(rt, th, "misaligned global access", s,
                "a %u-byte %s at %p is not aligned to %u bytes, the alignment of its type (a "
                "vector access must be aligned to its size)",
                bytes, what, p, required);
  uint32_t site_id = rt.sites.id(s, false, write || atomic, bytes, width, atomic);
  if (!atomic && !ordered) {
    if (write)
      order_plain_store(rt, th, a, bytes, site_id, s);
    else
      order_plain_load(rt, th, a, bytes, s);
  }
  if (rt.counting) {
    count_access(rt, th, site_id, a);
    if (atomic) count_atomic(rt, site_id, a);
  }
}
}  // namespace akx::sim
