// The selection tile: stream compaction at copy speed, as CUB's DeviceSelect does it. One tile
// per block (taken from the look-back's ticket), tiles of blockDim.x x P::vectors 16-byte
// vectors of the source:
//   1. striped wide loads: vector j of thread t is the tile's vector j * bd + t, so that a
//      warp's request moves 512 contiguous bytes (16 sectors); P::batch of them in flight per
//      thread (a tile that is not whole in vectors, P::whole: the head and tail tiles, a
//      strided source, a slot at a time through P::load). Each vector gives a mask of its
//      selected elements (the policy's predicate);
//   2. a block scan of the per-vector counts, packed four 16-bit fields to a 64-bit word so
//      that one scan gives every vector's rank in the tile's order (j-major, then thread);
//   3. warp 0 publishes the tile's count and gets the count before it (kernels/akx/lookback.cuh;
//      the last tile stores the total in the status header);
//   4. compaction through shared memory: the selected elements' offsets in the tile, written
//      at their ranks, a window of select_window at a time; then coalesced contiguous stores
//      of the window's slots (whole sectors, aligned to 32 bytes), at most capacity of them.
// The policy P says how a vector slot is loaded (P::load: a P::Raw of P::per_vector elements,
// zeros outside the source; P::vectors per thread, P::batch in flight), which of its elements
// are selected (P::selected: a mask of per_vector bits), what is staged for one (P::Staged: its
// offset in the tile) and what is stored (P::store, P::Out); kernels/akx/findall.cuh's
// findall_policy stores the positions of the nonzero elements.
//
// The tile's positions: vector slot k (counted from the source's first 16-byte boundary at or
// before position 0) holds positions [k * E - p.shift, (k + 1) * E - p.shift), E = P::per_vector;
// the policy loads a slot that is not whole (the head, the tail) element by element.
#pragma once
#include "akx/block_scan.cuh"
#include "akx/lookback.cuh"

namespace akx {

// Entries of the shared staging window (P::Staged each): a tile with more selected elements
// than this compacts in several rounds (a barrier pair each).
constexpr int select_window = 8192;

AKX_DEVICE int popcount32(uint32_t x) {
#if defined(__CUDACC__)
  return __popc(x);
#else
  return __builtin_popcount(x);
#endif
}

// Per-vector counts, four 16-bit fields to a word (a field holds at most bd x E <= 256 x 16;
// a rank at most the tile's elements - 1 < 2^16).
template <int W>
struct packed_counts {
  unsigned long long w[W];
};
template <int W>
struct packed_sum {
  using T = packed_counts<W>;
  AKX_HD_INLINE static T identity() {
    T t;
    for (int i = 0; i < W; ++i) t.w[i] = 0;
    return t;
  }
  AKX_HD_INLINE static T apply(const T &a, const T &b) {
    T t;
    for (int i = 0; i < W; ++i) t.w[i] = a.w[i] + b.w[i];
    return t;
  }
  AKX_HD_INLINE static uint32_t field(const T &t, int j) { return (uint32_t)(t.w[j >> 2] >> (16 * (j & 3))) & 0xffffu; }
};

// st: the look-back status, built once by the kernel (kernels/akx/findall.cuh); epoch: the call's.
template <class P>
AKX_DEVICE void select_tile_body(const P &p, const lookback_status<long long> &st, int64_t tiles, uint32_t epoch) {
  using Staged = typename P::Staged;
  constexpr int V = P::vectors, E = P::per_vector, B = P::batch, W = (V + 3) / 4;
  static_assert(V % B == 0, "the vectors come in whole batches");
  static_assert(32 % E == 0, "a vector's mask lies within one word");
  using C = packed_sum<W>;
  using S = plain_scan<op_add, long long>;
  AKX_SHARED(typename C::T, scratch, block_scan_scratch);
  AKX_SHARED(long long, tile_prefix, 1);
  AKX_SHARED(unsigned long long, ticket, 1);
  AKX_SHARED(Staged, staged, select_window);
  const int32_t tid = (int32_t)threadIdx.x, bd = (int32_t)blockDim.x;
  const uint64_t t = draw_tile(st.head, tiles, ticket, "select tile: a ticket past the tile count (the status "
                                                        "header was reset by another call mid-launch)");
  const int64_t first_slot = (int64_t)t * bd * V;  // the tile's first vector slot
  const int64_t tile_position = first_slot * E - p.shift;

  // 1. loads, a batch in flight; the thread's selected elements as bits (vector j's E bits
  // from bit j * E)
  constexpr int words = (V * E + 31) / 32;
  uint32_t bits[words];
#pragma unroll
  for (int i = 0; i < words; ++i) bits[i] = 0;
  typename C::T counts = C::identity();
  auto take = [&](int j, const typename P::Raw &x) {
    const uint32_t m = p.selected(x);
    bits[j * E / 32] |= m << (j * E % 32);
    counts.w[j >> 2] |= (unsigned long long)popcount32(m) << (16 * (j & 3));
  };
  if (p.whole(tile_position, (int64_t)bd * V * E)) {
#pragma unroll
    for (int j0 = 0; j0 < V; j0 += B) {
      typename P::Raw x[B];
#pragma unroll
      for (int u = 0; u < B; ++u) x[u] = p.load_whole(first_slot + (int64_t)(j0 + u) * bd + tid);
#pragma unroll
      for (int u = 0; u < B; ++u) take(j0 + u, x[u]);
    }
  } else {  // the head and tail tiles, a strided source: a slot at a time
#pragma unroll
    for (int j = 0; j < V; ++j) take(j, p.load(first_slot + (int64_t)j * bd + tid));
  }

  // 2. ranks: vector j of thread t comes after every vector j' < j of the tile and after
  // vector j of the threads before t. A rank is below the tile's elements (<= 2^16), so the
  // ranks stay packed: the scan's field plus the fields of the totals before it.
  typename C::T totals;
  typename C::T rank = block_scan_exclusive<C>(counts, scratch, &totals);
  long long aggregate = 0;
#pragma unroll
  for (int j = 0; j < V; ++j) {
    rank.w[j >> 2] += (unsigned long long)aggregate << (16 * (j & 3));
    aggregate += C::field(totals, j);
  }

  // 3. look-back
  if (tid < 32) {
    const long long prefix = lookback<S>(st, tiles, t, aggregate, epoch);
    if (tid == 0) {
      tile_prefix.st(0, prefix);
      if (t + 1 == (uint64_t)tiles) p.finish(prefix + aggregate, st.head);
    }
  }
  __syncthreads();
  const long long prefix = tile_prefix.ld(0);

  // 4. compaction: slots [prefix, prefix + aggregate) of which those below capacity
  const int64_t room = p.capacity > prefix ? p.capacity - prefix : 0;
  const int64_t count = aggregate < room ? aggregate : room;
  constexpr int64_t align = 32 / sizeof(typename P::Out) > 0 ? 32 / sizeof(typename P::Out) : 1;
  for (int64_t w0 = 0; w0 < count; w0 += select_window) {
    const int64_t w1 = count < w0 + select_window ? count : w0 + select_window;
    if (w0 > 0) __syncthreads();  // the previous window's stores have read their entries
#pragma unroll
    for (int j = 0; j < V; ++j) {
      uint32_t m = (bits[j * E / 32] >> (j * E % 32)) & (E == 32 ? ~0u : (1u << E) - 1u);
      int64_t r = C::field(rank, j);
      if (r >= w1 || r + popcount32(m) <= w0) continue;
      const uint32_t offset = ((uint32_t)j * (uint32_t)bd + (uint32_t)tid) * (uint32_t)E;
      for (int e = 0; m; ++e, m >>= 1) {
        if (!(m & 1u)) continue;
        if (r >= w0 && r < w1) staged.st(r - w0, (Staged)(offset + (uint32_t)e));
        ++r;
      }
    }
    __syncthreads();
    // From the 32-byte boundary at or before the window's first slot: whole sectors per warp.
    // The loop's trips are the block's (a lane's first slot may lie before `from`), and each
    // ends in a warp convergence, so that a warp request is one trip's 32 consecutive slots.
    const int64_t from = prefix + w0, to = prefix + w1;
    for (int64_t s0 = from & ~(align - 1); s0 < to; s0 += bd) {
      const int64_t s = s0 + tid;
      if (s >= from && s < to) p.store(s, staged.ld(s - from), tile_position);
      __syncwarp();
    }
  }
}

}  // namespace akx
