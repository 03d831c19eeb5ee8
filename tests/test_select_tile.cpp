// The tile layer's device side (docs/tile.md, "Device"), on the sim, through policies that are
// not findall's: the selection tile (kernels/akx/select_tile.cuh) over items of two inputs, with
// a rejected side, with two selected sides (a three-way partition's two counts in the header),
// with a staging window smaller than a side's items in a tile (several compaction rounds), with
// each side's output cut at its capacity; and the run heads (kernels/akx/run_heads.cuh) as a
// "unique" policy's predicate. Each against a host reference, under the in-order and shuffled
// schedules. And the tile's shared memory as the planner sizes it (src/tile/select_shared.cpp)
// against what the sim measured of the kernel.
#include <stdlib.h>

#include <vector>

#include "akx/run_heads.cuh"
#include "akx/select_tile.cuh"
#include "sim_probe.hpp"
#include "tile/tile.h"

namespace {
const char *const schedules[] = {"inorder", "random:1", "random:7"};
constexpr int threads = 64, V = 4, E = 4;  // tiles of 64 x 4 slots of 4 items: 1024 items
constexpr int64_t tile_items = (int64_t)threads * V * E;

// Common to the probes: slots of 4 items, 4 slots a thread, 2 in flight, uint16 offsets.
struct probe_base {
  using Staged = uint16_t;
  static constexpr int per_vector = E, vectors = V, batch = 2;
  int64_t n, shift, window;
  AKX_DEVICE bool whole(int64_t position, int64_t items) const { return position >= 0 && position + items <= n; }
};

// A stable partition by flags: the flagged values from out[0], the others to rest in CUB's
// layout (reversed from rest[n - 1], the policy mapping the tile's in-order slots).
struct flag_partition : probe_base {
  struct Raw {
    akx::vec<float, E> v;
    akx::vec<uint8_t, E> f;
  };
  using Out = float;
  static constexpr int sides = 1;
  static constexpr bool rejects = true;
  const float *values;
  const uint8_t *flags;
  float *out, *rest;
  int64_t capacity, rejected_capacity;
  AKX_DEVICE Raw load_whole(int64_t k) const {
    return Raw{akx::gld_vec<float, E>(values + k * E), akx::gld_vec<uint8_t, E>(flags + k * E)};
  }
  AKX_DEVICE Raw load(int64_t k) const {
    Raw x{};
    for (int e = 0; e < E; ++e) {
      const int64_t i = k * E + e;
      if (i >= 0 && i < n) {
        x.v.v[e] = akx::gld(values + i);
        x.f.v[e] = akx::gld(flags + i);
      }
    }
    return x;
  }
  AKX_DEVICE static uint32_t selected(const Raw &x) {
    uint32_t m = 0;
    for (int e = 0; e < E; ++e) m |= (uint32_t)(x.f.v[e] != 0) << e;
    return m;
  }
  AKX_DEVICE void store(int64_t slot, Staged o, int64_t at) const { akx::gst(out + slot, akx::gld(values + at + o)); }
  AKX_DEVICE void store_rejected(int64_t slot, Staged o, int64_t at) const {
    akx::gst(rest + (n - 1 - slot), akx::gld(values + at + o));
  }
};

// A three-way partition (numpy: a[a < lo], a[(a >= lo) & (a > hi)], the rest): two selected
// sides, the unselected in order.
struct three_way : probe_base {
  using Raw = akx::vec<int32_t, E>;
  using Out = int32_t;
  static constexpr int sides = 2;
  static constexpr bool rejects = true;
  const int32_t *src;
  int32_t *first, *second, *unselected;
  int32_t lo, hi;
  int64_t capacity, second_capacity, rejected_capacity;
  AKX_DEVICE Raw load_whole(int64_t k) const { return akx::gld_vec<int32_t, E>(src + k * E); }
  AKX_DEVICE Raw load(int64_t k) const {
    Raw x{};
    for (int e = 0; e < E; ++e)
      if (k * E + e < n) x.v[e] = akx::gld(src + k * E + e);
    return x;
  }
  AKX_DEVICE uint32_t selected(const Raw &x) const {
    uint32_t m = 0;
    for (int e = 0; e < E; ++e) m |= (uint32_t)(x.v[e] < lo) << e;
    return m;
  }
  AKX_DEVICE uint32_t selected_second(const Raw &x) const {
    uint32_t m = 0;
    for (int e = 0; e < E; ++e) m |= (uint32_t)(x.v[e] > hi) << e;
    return m;
  }
  AKX_DEVICE void store(int64_t slot, Staged o, int64_t at) const { akx::gst(first + slot, akx::gld(src + at + o)); }
  AKX_DEVICE void store_second(int64_t slot, Staged o, int64_t at) const {
    akx::gst(second + slot, akx::gld(src + at + o));
  }
  AKX_DEVICE void store_rejected(int64_t slot, Staged o, int64_t at) const {
    akx::gst(unselected + slot, akx::gld(src + at + o));
  }
};

// "unique": the first key of each run of equal keys, the heads of kernels/akx/run_heads.cuh.
// Keys strided (every other uint16 of the buffer), so every tile loads a slot item by item.
struct key_view {
  const void *keys;
  int64_t keys_stride;
  int32_t keys_size, keys_bool;
};
struct unique_keys : probe_base {
  struct Raw {
    unsigned long long k[E];
    unsigned long long before;  // the key before the slot (run_key_before)
    int64_t first;              // the slot's first position
  };
  using Out = uint16_t;
  static constexpr int sides = 1;
  static constexpr bool rejects = false;
  key_view keys;
  uint16_t *out;
  int64_t capacity;
  AKX_DEVICE bool whole(int64_t, int64_t) const { return false; }
  AKX_DEVICE Raw load_whole(int64_t k) const { return load(k); }
  AKX_DEVICE Raw load(int64_t k) const {
    Raw x{};
    x.first = k * E;
    // A slot past the sequence (the tail tile's) reads nothing: the tile drops its items.
    x.before = x.first <= n ? akx::run_key_before(keys, x.first) : 0;
    for (int e = 0; e < E; ++e)
      if (x.first + e < n) x.k[e] = akx::run_key(keys, x.first + e);
    return x;
  }
  AKX_DEVICE static uint32_t selected(const Raw &x) {
    uint32_t m = 0;
    unsigned long long prev = x.before;
    for (int e = 0; e < E; ++e) {
      m |= (uint32_t)akx::run_head(x.first + e, x.k[e], prev) << e;
      prev = x.k[e];
    }
    return m;
  }
  AKX_DEVICE void store(int64_t slot, Staged o, int64_t at) const {
    akx::gst(out + slot, (uint16_t)akx::run_key(keys, at + o));
  }
};

template <class P>
AKX_GLOBAL void select_probe(P p, void *status, int64_t tiles) {
  using L = akx::lookback_status<akx::select_counts<P::sides>>;
  akx::select_tile_body(p, L::at(status, (int64_t)L::nodes_offset(tiles)), tiles, 1u);
}

int64_t tiles_of(int64_t n) { return (n + tile_items - 1) / tile_items; }

// Runs policy p over its n items on a fresh status; the header's counts into counts.
template <class P>
void run(sim_context &sim, P p, const char *schedule, long long counts[2]) {
  setenv("AKX_SIM_SCHEDULE", schedule, 1);
  const int64_t tiles = tiles_of(p.n);
  void *status = sim.alloc<char>(akx::lookback_status<akx::select_counts<P::sides>>::bytes(tiles));
  const akx_status s = AKX_LAUNCH("select_probe", select_probe<P>, (unsigned)tiles, threads,
                                  (size_t)p.window * sizeof(typename P::Staged), NULL, p, status, tiles);
  unsetenv("AKX_SIM_SCHEDULE");
  cr_assert_eq(s, AKX_SUCCESS, "n %lld, %s: %s", (long long)p.n, schedule, akx_last_error());
  const akx::lookback_header *h = static_cast<const akx::lookback_header *>(status);
  counts[0] = h->count;
  counts[1] = h->second_count;
  cr_assert_eq(h->ticket, 0ull, "the last tile puts the ticket back");
}

// 1 item; a tile less one, a tile, a tile and one; several tiles with a ragged tail.
const int64_t sizes[] = {1, 5, tile_items - 1, tile_items, tile_items + 1, 5 * tile_items + 37};
}  // namespace

TestSuite(select_tile, .timeout = 300);

// Every density (none, some, all), windows of every size from 16 entries (many rounds a tile)
// to the tile's items (one), each side cut at a capacity below its total or not.
Test(select_tile, partition_by_flags_in_cub_layout_with_every_window_and_capacity) {
  sim_context sim;
  for (int64_t n : sizes) {
    float *values = sim.alloc<float>((size_t)n);
    uint8_t *flags = sim.alloc<uint8_t>((size_t)n);
    float *out = sim.alloc<float>((size_t)n), *rest = sim.alloc<float>((size_t)n);
    for (int density : {0, 3, 100}) {
      std::vector<float> sel, rej;
      for (int64_t i = 0; i < n; ++i) {
        values[i] = (float)i * 0.5f - 7.0f;
        flags[i] = (uint8_t)((i * 2654435761u >> 7) % 100 < (unsigned)density ? 1 + i % 200 : 0);
        (flags[i] ? sel : rej).push_back(values[i]);
      }
      for (int64_t window : {(int64_t)16, (int64_t)100, tile_items}) {
        for (int cut = 0; cut < 2; ++cut) {
          const int64_t cap = cut ? (int64_t)sel.size() / 2 : n, rcap = cut ? (int64_t)rej.size() / 3 : n;
          for (const char *schedule : schedules) {
            for (int64_t i = 0; i < n; ++i) out[i] = rest[i] = -1e30f;
            flag_partition p{};
            p.n = n;
            p.window = window;
            p.values = values;
            p.flags = flags;
            p.out = out;
            p.rest = rest;
            p.capacity = cap;
            p.rejected_capacity = rcap;
            long long counts[2];
            run(sim, p, schedule, counts);
            cr_assert_eq(counts[0], (long long)sel.size(), "n %lld density %d: count %lld", (long long)n, density,
                         counts[0]);
            for (int64_t i = 0; i < n; ++i) {
              const bool in_sel = i < (int64_t)sel.size() && i < cap;
              cr_assert_eq(out[i], in_sel ? sel[(size_t)i] : -1e30f,
                           "n %lld density %d window %lld cap %lld %s: out[%lld]", (long long)n, density,
                           (long long)window, (long long)cap, schedule, (long long)i);
              const int64_t r = n - 1 - i;  // rest[n - 1 - r] holds the r-th rejected value
              const bool in_rej = r < (int64_t)rej.size() && r < rcap;
              cr_assert_eq(rest[i], in_rej ? rej[(size_t)r] : -1e30f,
                           "n %lld density %d window %lld rcap %lld %s: rest[%lld]", (long long)n, density,
                           (long long)window, (long long)rcap, schedule, (long long)i);
            }
          }
        }
      }
    }
  }
}

// Two counts through the look-back (16-byte nodes) into the header's count and second_count.
Test(select_tile, three_way_partition_keeps_each_side_in_order_and_counts_both) {
  sim_context sim;
  for (int64_t n : sizes) {
    int32_t *src = sim.alloc<int32_t>((size_t)n);
    int32_t *a = sim.alloc<int32_t>((size_t)n), *b = sim.alloc<int32_t>((size_t)n), *c = sim.alloc<int32_t>((size_t)n);
    std::vector<int32_t> ra, rb, rc;
    for (int64_t i = 0; i < n; ++i) {
      src[i] = (int32_t)((i * 2654435761u) % 1000u) - 500;
      (src[i] < -300 ? ra : src[i] > 100 ? rb : rc).push_back(src[i]);
    }
    for (int cut = 0; cut < 2; ++cut) {
      const int64_t ca = cut ? (int64_t)ra.size() - 1 : n, cb = cut ? (int64_t)rb.size() / 2 : n,
                    cc = cut ? (int64_t)rc.size() / 4 : n;
      for (const char *schedule : schedules) {
        for (int64_t i = 0; i < n; ++i) a[i] = b[i] = c[i] = INT32_MIN;
        three_way p{};
        p.n = n;
        p.window = 64;
        p.src = src;
        p.first = a;
        p.second = b;
        p.unselected = c;
        p.lo = -300;
        p.hi = 100;
        p.capacity = ca;
        p.second_capacity = cb;
        p.rejected_capacity = cc;
        long long counts[2];
        run(sim, p, schedule, counts);
        cr_assert_eq(counts[0], (long long)ra.size(), "n %lld: first count %lld", (long long)n, counts[0]);
        cr_assert_eq(counts[1], (long long)rb.size(), "n %lld: second count %lld", (long long)n, counts[1]);
        for (int64_t i = 0; i < n; ++i) {
          cr_assert_eq(a[i], i < (int64_t)ra.size() && i < ca ? ra[(size_t)i] : INT32_MIN, "n %lld %s: first[%lld]",
                       (long long)n, schedule, (long long)i);
          cr_assert_eq(b[i], i < (int64_t)rb.size() && i < cb ? rb[(size_t)i] : INT32_MIN, "n %lld %s: second[%lld]",
                       (long long)n, schedule, (long long)i);
          cr_assert_eq(c[i], i < (int64_t)rc.size() && i < cc ? rc[(size_t)i] : INT32_MIN,
                       "n %lld %s: unselected[%lld]", (long long)n, schedule, (long long)i);
        }
      }
    }
  }
}

// The run heads as a selection: runs that cross slots, threads and tiles (a run of 3000 spans
// three tiles), strided keys, the first element a head whatever it holds.
Test(select_tile, unique_keys_by_run_heads_across_tiles) {
  sim_context sim;
  for (int64_t n : sizes) {
    uint16_t *buf = sim.alloc<uint16_t>((size_t)(2 * n));
    uint16_t *out = sim.alloc<uint16_t>((size_t)n);
    std::vector<uint16_t> heads;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t run = i < 3000 ? 0 : (i - 3000) / (1 + (i % 7 == 0 ? 0 : 3));
      buf[2 * i] = (uint16_t)(run * 40503u);
      buf[2 * i + 1] = 0xdead;  // what the stride steps over
      if (i == 0 || buf[2 * i] != buf[2 * i - 2]) heads.push_back(buf[2 * i]);
    }
    for (const char *schedule : schedules) {
      for (int64_t i = 0; i < n; ++i) out[i] = 0xbeef;
      unique_keys p{};
      p.n = n;
      p.window = 256;
      p.keys = key_view{buf, 2, 2, 0};
      p.out = out;
      p.capacity = n;
      long long counts[2];
      run(sim, p, schedule, counts);
      cr_assert_eq(counts[0], (long long)heads.size(), "n %lld: %lld runs, expected %zu", (long long)n, counts[0],
                   heads.size());
      for (size_t i = 0; i < heads.size(); ++i)
        cr_assert_eq(out[i], heads[i], "n %lld %s: out[%zu]", (long long)n, schedule, i);
      for (int64_t i = (int64_t)heads.size(); i < n; ++i) cr_assert_eq(out[i], 0xbeef, "out[%lld] past the count", (long long)i);
    }
  }
}

// The planner's sizes against the kernel's: the window's dynamic bytes as launched, and the
// static part the sim measured of the kernel's AKX_SHARED arrays, for one and two sides.
Test(select_tile, shared_memory_as_planned_is_what_the_kernel_declares) {
  sim_context sim;
  int64_t window = 0, dynamic = 0, statics = 0;
  cr_assert_eq(akx__select_tile_shared(sim.ctx, threads, V, E, 1, 2, 0, "block", &window, &dynamic, &statics),
               AKX_SUCCESS, "%s", akx_last_error());
  cr_expect_eq(window, tile_items, "a tile of 1024 items gets a window of them all");
  cr_expect_eq(dynamic, 2 * tile_items);
  std::vector<int32_t> host(3000);
  int32_t *src = sim.alloc<int32_t>(3000), *a = sim.alloc<int32_t>(3000), *b = sim.alloc<int32_t>(3000),
          *c = sim.alloc<int32_t>(3000);
  three_way p{};
  p.n = 3000;
  p.src = src;
  p.first = a;
  p.second = b;
  p.unselected = c;
  p.capacity = p.second_capacity = p.rejected_capacity = 3000;
  int64_t w2 = 0, d2 = 0, s2 = 0;
  cr_assert_eq(akx__select_tile_shared(sim.ctx, threads, V, E, 2, sizeof(uint16_t), 0, "block", &w2, &d2, &s2),
               AKX_SUCCESS, "%s", akx_last_error());
  p.window = w2;
  long long counts[2];
  run(sim, p, "inorder", counts);
  const akx_sim_kernel_counters k = sim.kernel("select_probe");
  cr_expect_eq((int64_t)k.last_dyn_smem, d2, "launched %llu dynamic bytes, planned %lld",
               (unsigned long long)k.last_dyn_smem, (long long)d2);
  cr_expect_eq((int64_t)k.last_static_smem, s2, "the kernel declares %llu static bytes, the planner counts %lld",
               (unsigned long long)k.last_static_smem, (long long)s2);
  cr_expect_gt(s2, statics, "two sides' counts take more static memory than one");
  // The largest window (8192 entries) and the most a tile can ask: refused, naming the block
  // size as the caller gave it, before anything is written.
  int64_t untouched = -1;
  cr_assert_eq(akx__select_tile_shared(sim.ctx, 1024, 16, 32, 2, 8, 0, "opts->block_size", &untouched, &untouched,
                                       NULL),
               AKX_ERROR_INVALID_ARGUMENT);
  cr_expect(strstr(akx_last_error(), "opts->block_size 1024") != NULL, "%s", akx_last_error());
  cr_expect_eq(untouched, -1);
  cr_assert_eq(akx__select_tile_shared(sim.ctx, 256, 8, 16, 1, 2, 0, "b", &window, &dynamic, NULL), AKX_SUCCESS);
  cr_expect_eq(window, akx::select_window_max, "a 32768-item tile's window is capped at select_window_max");
}
