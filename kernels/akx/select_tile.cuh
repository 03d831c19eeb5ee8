// The selection tile: stream compaction at copy speed, as CUB's DeviceSelect / DevicePartition
// do it. One tile per block (taken from the look-back's ticket), tiles of blockDim.x x
// P::vectors vector slots of P::per_vector items each:
//   1. striped wide loads: slot j of thread t is the tile's slot j * bd + t, so that a warp's
//      request moves contiguous bytes (512 of a 16-byte slot: 16 sectors); P::batch of them in
//      flight per thread (a tile that is not whole in slots, P::whole: the head and tail tiles,
//      a strided source, a slot at a time through P::load). Each slot gives a mask of its
//      items of each selected side (P::sides of them: 1, or 2 for a three-way partition, whose
//      second side takes the items the first does not), cut to the items in [0, P::n);
//   2. a block scan of the per-slot counts, packed four 16-bit fields to a 64-bit word so
//      that one scan gives every slot's rank in the tile's order (j-major, then thread), of
//      every side at once;
//   3. warp 0 publishes the tile's counts (one or two, select_counts) and gets the counts before
//      it (kernels/akx/lookback.cuh); the last tile stores the totals in the status header's
//      count and second_count, where the host's count-back reads them (src/tile/tile.c). The
//      rejected side (the items of no side) needs no count of its own: the items before a
//      position are known, so an item's rejected rank is its position less the selected items
//      before it (CUB's partition does the same), and its total is n less the sides';
//   4. compaction through shared memory, one side after the other: the side's items' offsets
//      in the tile, written at their ranks, a window of P::window entries at a time (dynamic
//      shared memory the planner sized: src/tile/select_shared.cpp); then coalesced contiguous
//      stores of the window's slots (whole sectors, aligned to 32 bytes), at most the side's
//      capacity of them.
//
// The policy P: what a client of the tile defines (docs/tile.md, "Device"; kernels/akx/findall.cuh's
// findall_policy is one client, tests/test_select_tile.cpp's partitions others):
//   types   Raw (one slot's loaded items: one input's vector, or a struct of two inputs' (values
//           and flags, values and keys with the key before the slot), whatever P::selected
//           reads), Staged (an item's offset in its tile, e.g. uint16_t), Out (what a store
//           writes: its size sets the stores' 32-byte alignment);
//   values  per_vector (items a slot: a power of two up to 32), vectors (slots a thread),
//           batch (slots in flight; divides vectors), sides (1 or 2), rejects (whether the items
//           of no side are stored);
//   members n (items in the sequence), shift (items of slot 0 before position 0), capacity
//           (the first side's slots), window (the staging window's entries: the dynamic
//           shared memory holds window x sizeof(Staged) bytes); second_capacity where sides is
//           2, rejected_capacity where rejects;
//   calls   whole(position, items): the items from position are all in the sequence and read a
//           slot at once; load_whole(k) (slot k of such a tile), load(k) (any slot: what it
//           holds outside [0, n) does not matter, the tile drops those items); selected(raw):
//           a mask of per_vector bits, the first side's; where sides is 2, selected_second(raw),
//           the second side's (the tile takes out the first side's items); store(slot, offset,
//           tile_position): the item at tile_position + offset to the first side's slot;
//           store_second(...), store_rejected(...) likewise for the other sides. A side's slots
//           are its items' ranks in the sequence's order: a policy that lays a side out
//           otherwise (a partition's rejected side reversed from dst[n - 1]) maps the slot.
//   kept    (optional) keeps_items = true: the tile keeps each slot's Raw in registers from its
//           load to the compaction, and stages item(raw, e) (a Staged: the item itself) where
//           the others stage the item's offset; store(...) then receives that item. A policy
//           whose source is also its destination (an in-place select) needs it: every item is
//           read before the tile publishes its counts, and a later tile writes only behind the
//           items its predecessors published (so no store overtakes a load).
// The tile's positions: vector slot k (counted from the source's first 16-byte boundary at or
// before position 0) holds positions [k * E - p.shift, (k + 1) * E - p.shift), E = P::per_vector;
// the policy loads a slot that is not whole (the head, the tail) item by item.
#pragma once
#include "akx/block_scan.cuh"
#include "akx/lookback.cuh"

namespace akx {

// The most entries a planner gives the staging window (P::Staged each, in dynamic shared memory:
// src/tile/select_shared.cpp gives a tile the smaller of this and its items): a tile with more
// items of one side than its window compacts in several rounds (a barrier pair each). 8192
// uint16 offsets (16 KiB) was the static window findall's tiles had.
constexpr int select_window_max = 8192;

AKX_DEVICE int popcount32(uint32_t x) {
#if defined(__CUDACC__)
  return __popc(x);
#else
  return __builtin_popcount(x);
#endif
}

// N words of T added word by word: the tile's packed per-slot counts, and its per-side totals.
template <class T, int N>
struct words {
  T w[N];
};
template <class T, int N>
struct words_sum {
  using Words = words<T, N>;
  AKX_HD_INLINE static Words identity() {
    Words t;
    for (int i = 0; i < N; ++i) t.w[i] = 0;
    return t;
  }
  AKX_HD_INLINE static Words apply(const Words &a, const Words &b) {
    Words t;
    for (int i = 0; i < N; ++i) t.w[i] = a.w[i] + b.w[i];
    return t;
  }
};

// Per-vector counts, four 16-bit fields to a word (a field holds at most bd x E <= 256 x 16;
// a rank at most the tile's elements - 1 < 2^16).
template <int W>
struct packed_sum : words_sum<unsigned long long, W> {
  using T = words<unsigned long long, W>;
  AKX_HD_INLINE static uint32_t field(const T &t, int j) { return (uint32_t)(t.w[j >> 2] >> (16 * (j & 3))) & 0xffffu; }
};

// A tile's counts of its selected items, one per side, as the look-back folds them (integer
// adds: any order gives the same totals). One side's is 8 bytes, the node findall's planner sizes.
template <int Sides>
using select_counts = words<long long, Sides>;
template <int Sides>
struct select_count_scan : words_sum<long long, Sides> {
  using T = select_counts<Sides>;
};
static_assert(sizeof(select_counts<1>) == 8 && sizeof(select_counts<2>) == 16, "a look-back node of 8 or 16 bytes");

// Whether a policy keeps its items (keeps_items, above); false where it does not say.
template <class P, class = void>
struct select_keeps_items {
  static constexpr bool value = false;
};
template <class P>
struct select_keeps_items<P, decltype((void)P::keeps_items)> {
  static constexpr bool value = P::keeps_items;
};

// A slot's E items as bits.
template <int E>
constexpr uint32_t select_slot_mask = E == 32 ? ~0u : (1u << E) - 1u;

// The items of the slot at sequence position q that lie in [0, n): E bits.
template <int E>
AKX_HD_INLINE uint32_t select_present(int64_t q, int64_t n) {
  const uint32_t all = select_slot_mask<E>;
  if (q >= 0 && q + E <= n) return all;
  const int64_t lo = q < 0 ? -q : 0, hi = n - q;
  if (hi <= 0 || lo >= E) return 0u;
  uint32_t m = all << lo;  // lo < E
  if (hi < E) m &= (1u << hi) - 1u;
  return m;
}
// The sequence's items before position q.
AKX_HD_INLINE int64_t select_items_before(int64_t q, int64_t n) { return q < 0 ? 0 : q > n ? n : q; }

// Step 4 for one side (Side: 0 and 1 the selected sides, select_rejected the items of none):
// its slots [prefix, prefix + count) (count already cut at the side's capacity), the items'
// offsets staged at their ranks a window at a time, then stored coalesced. mask(j): the side's
// items of the thread's slot j; rank(j): the side's rank in the tile of that slot's first one.
constexpr int select_rejected = 2;
template <int Side, class P, class Mask, class Rank, class Item>
AKX_DEVICE void select_compact(const P &p, const smem<typename P::Staged> &staged, int64_t prefix, int64_t count,
                               int64_t tile_position, const Mask &mask, const Rank &rank, const Item &item) {
  using Staged = typename P::Staged;
  constexpr int V = P::vectors, E = P::per_vector;
  constexpr int64_t align = 32 / sizeof(typename P::Out) > 0 ? 32 / sizeof(typename P::Out) : 1;
  const int32_t tid = (int32_t)threadIdx.x, bd = (int32_t)blockDim.x;
  const int64_t window = p.window;
  for (int64_t w0 = 0; w0 < count; w0 += window) {
    const int64_t w1 = count < w0 + window ? count : w0 + window;
    if (w0 > 0) __syncthreads();  // the previous window's stores have read their entries
#pragma unroll
    for (int j = 0; j < V; ++j) {
      uint32_t m = mask(j);
      int64_t r = rank(j);
      if (r >= w1 || r + popcount32(m) <= w0) continue;
      if constexpr (select_keeps_items<P>::value) {
        // The kept items are registers: e unrolled, so that no item is indexed at run time (a
        // local-memory array on the GPU).
#pragma unroll
        for (int e = 0; e < E; ++e) {
          if (!(m >> e & 1u)) continue;
          if (r >= w0 && r < w1) staged.st(r - w0, item(j, e));
          ++r;
        }
      } else {
        const uint32_t offset = ((uint32_t)j * (uint32_t)bd + (uint32_t)tid) * (uint32_t)E;
        for (int e = 0; m; ++e, m >>= 1) {
          if (!(m & 1u)) continue;
          if (r >= w0 && r < w1) staged.st(r - w0, (Staged)(offset + (uint32_t)e));
          ++r;
        }
      }
    }
    __syncthreads();
    // From the 32-byte boundary at or before the window's first slot: whole sectors per warp.
    // The loop's trips are the block's (a lane's first slot may lie before `from`), and each
    // ends in a warp convergence, so that a warp request is one trip's 32 consecutive slots.
    const int64_t from = prefix + w0, to = prefix + w1;
    for (int64_t s0 = from & ~(align - 1); s0 < to; s0 += bd) {
      const int64_t s = s0 + tid;
      if (s >= from && s < to) {
        if constexpr (Side == select_rejected) p.store_rejected(s, staged.ld(s - from), tile_position);
        else if constexpr (Side == 1) p.store_second(s, staged.ld(s - from), tile_position);
        else p.store(s, staged.ld(s - from), tile_position);
      }
      __syncwarp();
    }
  }
}

// st: the look-back status over select_counts<P::sides>, built once by the kernel
// (kernels/akx/findall.cuh); epoch: the call's. The launch passes p.window x sizeof(P::Staged)
// bytes of dynamic shared memory.
template <class P>
AKX_DEVICE void select_tile_body(const P &p, const lookback_status<select_counts<P::sides>> &st, int64_t tiles,
                                 uint32_t epoch) {
  using Staged = typename P::Staged;
  constexpr int V = P::vectors, E = P::per_vector, B = P::batch, W = (V + 3) / 4, N = P::sides;
  static_assert(V % B == 0, "the vectors come in whole batches");
  static_assert(32 % E == 0, "a vector's mask lies within one word");
  static_assert(N == 1 || N == 2, "one or two selected sides");
  // Side s's field of slot j is field s * 4W + j: one packed scan ranks both sides.
  using C = packed_sum<W * N>;
  using S = select_count_scan<N>;
  AKX_SHARED(typename C::T, scratch, block_scan_scratch);
  AKX_SHARED(typename S::T, tile_prefix, 1);
  AKX_SHARED(unsigned long long, ticket, 1);
  AKX_SHARED_DYNAMIC(Staged, staged);  // the window: p.window entries
  const int32_t tid = (int32_t)threadIdx.x, bd = (int32_t)blockDim.x;
  const uint64_t t = draw_tile(st.head, tiles, ticket, "select tile: a ticket past the tile count (the status "
                                                        "header was reset by another call mid-launch)");
  const int64_t first_slot = (int64_t)t * bd * V;  // the tile's first vector slot
  const int64_t tile_position = first_slot * E - p.shift;

  // 1. loads, a batch in flight; the thread's items of side s as bits (vector j's E bits from
  // bit j * E of bits[s])
  constexpr int mask_words = (V * E + 31) / 32;
  uint32_t bits[N][mask_words];
#pragma unroll
  for (int s = 0; s < N; ++s)
#pragma unroll
    for (int i = 0; i < mask_words; ++i) bits[s][i] = 0;
  typename C::T counts = C::identity();
  auto take = [&](int j, const typename P::Raw &x, uint32_t present) {
    const uint32_t m0 = p.selected(x) & present;
    bits[0][j * E / 32] |= m0 << (j * E % 32);
    counts.w[j >> 2] |= (unsigned long long)popcount32(m0) << (16 * (j & 3));
    if constexpr (N == 2) {
      const uint32_t m1 = p.selected_second(x) & present & ~m0;
      bits[1][j * E / 32] |= m1 << (j * E % 32);
      counts.w[W + (j >> 2)] |= (unsigned long long)popcount32(m1) << (16 * (j & 3));
    }
  };
  constexpr uint32_t vector_mask = select_slot_mask<E>;
  constexpr bool keeps = select_keeps_items<P>::value;
  typename P::Raw kept[keeps ? V : 1];  // the slots' items, where the policy keeps them
  const bool whole = p.whole(tile_position, (int64_t)bd * V * E);
  if (whole) {
#pragma unroll
    for (int j0 = 0; j0 < V; j0 += B) {
      typename P::Raw x[B];
#pragma unroll
      for (int u = 0; u < B; ++u) x[u] = p.load_whole(first_slot + (int64_t)(j0 + u) * bd + tid);
#pragma unroll
      for (int u = 0; u < B; ++u) {
        take(j0 + u, x[u], vector_mask);
        if constexpr (keeps) kept[j0 + u] = x[u];
      }
    }
  } else {  // the head and tail tiles, a strided source: a slot at a time, cut to [0, n)
#pragma unroll
    for (int j = 0; j < V; ++j) {
      const int64_t k = first_slot + (int64_t)j * bd + tid;
      const typename P::Raw x = p.load(k);
      take(j, x, select_present<E>(k * E - p.shift, p.n));
      if constexpr (keeps) kept[j] = x;
    }
  }
  // What step 4 stages of the thread's slot j, item e (a kept item; else its offset, which the
  // compaction computes itself).
  auto item = [&](int j, int e) -> Staged {
    if constexpr (keeps) return p.item(kept[j], e);
    else return Staged{};
  };

  // 2. ranks: vector j of thread t comes after every vector j' < j of the tile and after
  // vector j of the threads before t. A rank is below the tile's items (<= 2^16), so the
  // ranks stay packed: the scan's field plus the fields of the totals before it.
  typename C::T totals;
  typename C::T rank = block_scan_exclusive<C>(counts, scratch, &totals);
  typename S::T aggregate = S::identity();
#pragma unroll
  for (int s = 0; s < N; ++s)
#pragma unroll
    for (int j = 0; j < V; ++j) {
      rank.w[s * W + (j >> 2)] += (unsigned long long)aggregate.w[s] << (16 * (j & 3));
      aggregate.w[s] += C::field(totals, s * 4 * W + j);
    }

  // 3. look-back; the last tile's totals to the header, where the count-back reads them
  if (tid < 32) {
    const typename S::T prefix = lookback<S>(st, tiles, t, aggregate, epoch);
    if (tid == 0) {
      tile_prefix.st(0, prefix);
      if (t + 1 == (uint64_t)tiles) {
        gst(&st.head->count, prefix.w[0] + aggregate.w[0]);
        if constexpr (N == 2) gst(&st.head->second_count, prefix.w[1] + aggregate.w[1]);
      }
    }
  }
  __syncthreads();
  const typename S::T prefix = tile_prefix.ld(0);

  // 4. compaction, side by side: side s's slots [prefix, prefix + aggregate) of which those below
  // its capacity
  auto side_bits = [&](int s, int j) { return (bits[s][j * E / 32] >> (j * E % 32)) & vector_mask; };
  auto side_rank = [&](int s, int j) { return (int64_t)C::field(rank, s * 4 * W + j); };
  auto side_count = [&](int64_t capacity, int64_t side_prefix, int64_t total) {
    const int64_t room = capacity > side_prefix ? capacity - side_prefix : 0;
    return total < room ? total : room;
  };
  select_compact<0>(p, staged, prefix.w[0], side_count(p.capacity, prefix.w[0], aggregate.w[0]), tile_position,
                    [&](int j) { return side_bits(0, j); }, [&](int j) { return side_rank(0, j); }, item);
  if constexpr (N == 2) {
    __syncthreads();  // the first side's last window has been read
    select_compact<1>(p, staged, prefix.w[1], side_count(p.second_capacity, prefix.w[1], aggregate.w[1]),
                      tile_position, [&](int j) { return side_bits(1, j); }, [&](int j) { return side_rank(1, j); },
                      item);
  }
  // The rejected side (a partition's): the items of [0, n) of no side, in order; their rank is
  // the items before them less the selected ones before them.
  if constexpr (P::rejects) {
    const int64_t before = select_items_before(tile_position, p.n);
    int64_t r_prefix = before, r_total = select_items_before(tile_position + (int64_t)bd * V * E, p.n) - before;
#pragma unroll
    for (int s = 0; s < N; ++s) {
      r_prefix -= prefix.w[s];
      r_total -= aggregate.w[s];
    }
    auto rejected_bits = [&](int j) {
      uint32_t m = select_present<E>(tile_position + ((int64_t)j * bd + tid) * E, p.n);
#pragma unroll
      for (int s = 0; s < N; ++s) m &= ~side_bits(s, j);
      return m;
    };
    auto rejected_rank = [&](int j) {  // the tile's items before slot j less those of any side
      int64_t r = select_items_before(tile_position + ((int64_t)j * bd + tid) * E, p.n) - before;
#pragma unroll
      for (int s = 0; s < N; ++s) r -= side_rank(s, j);
      return r;
    };
    __syncthreads();  // the selected sides' last window has been read
    select_compact<select_rejected>(p, staged, r_prefix, side_count(p.rejected_capacity, r_prefix, r_total),
                                    tile_position, rejected_bits, rejected_rank, item);
  }
}

}  // namespace akx
