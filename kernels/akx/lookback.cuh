// Single-pass look-back between the tiles of a scan, bitwise deterministic.
//
// Decoupled look-back (Merrill & Garland) lets tile t combine whatever its predecessors
// have published so far, so the association of a float sum, and its rounding, depends on
// timing: CUB's and PyTorch's float scans differ run to run. Here the prefix of every tile
// is a fixed expression of the tile aggregates: a radix-32 Fenwick tree over tiles.
//
// Write t in base 32. Tile t's level L is the number of its trailing digits equal to 31; it
// publishes one node, the fold of the aggregates of the 32^L tiles [t + 1 - 32^L, t]. Its
// exclusive prefix is the fold, oldest first, of the nodes of t's decomposition: for each digit
// d_j of t (the highest first), the d_j nodes of level j that end the complete blocks of 32^j
// tiles between the blocks above and t (sum of t's digits nodes, all of earlier tiles). The
// node's inputs are exactly the lowest L levels of that decomposition (31 nodes each) and the
// tile's aggregate, so a tile publishes its node as soon as those are there, then waits for the
// older ones. Nothing depends on which predecessors happened to be finished.
//
// Why radix 32 and not 2 (the binary Fenwick tree this file held first): a level-L node waits
// only for nodes of lower levels, so the longest chain of dependent publications is the number
// of base-32 digits of the tile count, 2 up to 1024 tiles and 3 up to 32768 (a 10^8 float32
// scan's 24415 tiles), where the binary tree's was log2(tiles), 15 there. Each step of that
// chain is a round trip through L2 that no other work hides (the sim's model prices it at
// dram_latency_ns: docs/scan_tiles.md). The price is reads: up to 31 nodes a level instead of
// one, which one warp takes 32 at a time in one round of loads per 32 nodes, and which lie
// next to each other: nodes are stored by level (lookback_slot), so a level's run of up to 31
// nodes and flags is one contiguous run of sectors.
//
// Against the anchored fixed window (every W-th tile publishes an inclusive prefix, the
// others fold the aggregates back to it): there each anchor waits for the previous anchor,
// a chain of tiles / W dependent steps. Here no node waits for a node of its own level.
//
// Status (workspace): a ticket, counters, one flag and one node per tile. A node is stored
// plainly, then its flag with st_release; readers ld_acquire the flag before reading the node
// (kernels/akx/device.cuh's rules). The header and the flags are the workspace's tags, where no
// other family writes (src/core/workspace.c, "The regions"): the header at the buffer's start,
// the flags after it; the nodes lie in the call's scratch, overwritten by any other call (a
// node is read only under a flag of the call's own epoch).
//
// No reset between calls (docs/scan_tiles.md, "One launch per call"): a flag holds the epoch
// of the call that published it, and a tile takes a node only when its flag holds its own
// call's epoch, so the flags an earlier call left behind read as "not yet". The host gives
// every call a new epoch (src/core/workspace.c, akx__workspace_lookback) and launches the
// reset kernel below only when the flags may hold bytes that are not an earlier epoch or 0
// (a failed call, a caller's buffer too small to keep them beside another family's tags; a
// new, grown, caller-set or widened workspace is zeroed by a memset instead) or the epoch
// wrapped (then every flag of the layout).
// The ticket is put back to 0 by the tile that draws the last one (draw_tile, below), in every
// tile body that takes its tiles through it.
#pragma once
#include "akx/block_limits.h"
#include "akx/dtypes.cuh"
#include "akx/scan_op.cuh"

// Whether the look-back counts its waits (lookback_header::waits): a statistic for tests, an
// atomic on the header's line, the one every tile's ticket is drawn from, the hottest of the
// launch, taken on every slow path. Counted on the sim (kernels under the host compiler, where
// tests/test_lookback.cpp and tests/test_scan.c read it); a GPU build (nvcc, NVRTC) counts it
// only when AKX_LOOKBACK_COUNT_WAITS=1 is defined, and its header then reads 0.
// tests/test_nvrtc_families.c asserts a release unit's PTX has no such atomic.
#ifndef AKX_LOOKBACK_COUNT_WAITS
#if defined(__CUDACC__)
#define AKX_LOOKBACK_COUNT_WAITS 0
#else
#define AKX_LOOKBACK_COUNT_WAITS 1
#endif
#endif

namespace akx {

struct lookback_header {
  unsigned long long ticket;  // tiles are taken in ticket order, never by blockIdx
  unsigned long long waits;   // tiles that found a node not yet published (the slow path),
                              // counted since the last reset where AKX_LOOKBACK_COUNT_WAITS
  long long count;            // a total the call reads back (the elements selected, the runs
                              // found), stored by its last tile where its tile body has one
  long long second_count;     // a second total right after it (a three-way partition's second
                              // side: kernels/akx/select_tile.cuh), so that one copy takes both
  long long pad[4];
};
static_assert(sizeof(lookback_header) == 64, "lookback header is 64 bytes");

template <class T>
struct lookback_status {
  lookback_header *head;
  uint32_t *flags;  // tiles
  T *nodes;         // tiles, 16-byte aligned

  // The status in a workspace: the header at ws, the flags after it, the nodes nodes_at bytes
  // from ws (16-byte aligned; src/core/workspace_regions.h places them in the call's scratch).
  AKX_HD_INLINE static lookback_status at(void *ws, int64_t nodes_at) {
    char *b = static_cast<char *>(ws);
    return lookback_status{reinterpret_cast<lookback_header *>(b),
                           reinterpret_cast<uint32_t *>(b + sizeof(lookback_header)),
                           reinterpret_cast<T *>(b + nodes_at)};
  }
  // A status on a buffer of its own (tests/test_lookback.cpp): the nodes right after the flags.
  AKX_HD_INLINE static size_t nodes_offset(int64_t tiles) {
    return (sizeof(lookback_header) + (size_t)tiles * 4 + 15) / 16 * 16;
  }
  AKX_HD_INLINE static size_t bytes(int64_t tiles) {
    return nodes_offset(tiles) + (size_t)tiles * sizeof(T);
  }
};

// The tile a block takes, in ticket order (never by blockIdx), for every tile body over the
// look-back (a tile body that waits on the tiles before it): thread 0 draws it into
// `slot` (one shared word), the block reads it after a barrier. The last ticket: every tile of
// the launch has drawn its own (one atomic word, one order of its changes), so the counter goes
// back to 0 for the next call, as the reset kernel would leave it; stream order makes the store
// visible to the next launch. A ticket past the tile count means another call reset the header
// mid-launch (`what` says whose tile; a trap in debug builds).
template <class Slot>
AKX_DEVICE uint64_t draw_tile(lookback_header *head, int64_t tiles, const Slot &slot, const char *what) {
  if (threadIdx.x == 0) {
    const unsigned long long mine = atomicAdd(&head->ticket, 1ull);
    if (mine + 1 == (unsigned long long)tiles) atomicExch(&head->ticket, 0ull);
    slot.st(0, mine);
  }
  __syncthreads();
  const uint64_t t = slot.ld(0);
  debug_trap_if(t >= (uint64_t)tiles, what);
  return t;
}

// Launched with 256 threads (kernels/akx/scan.cuh, scan_kernels::init).
constexpr kernel_info scan_init_info{"scan_init", AKX_MAX_BLOCK_SCAN, 24, 1, false};

// Resets the header and the flags of `tiles` tiles to 0, which no call's epoch is: launched
// only when the status may hold foreign bytes (a caller's buffer too small for two families'
// tags, an interrupted call, the sim's poison) or the epoch wrapped (then every flag of the
// workspace's layout).
// (A template only so that every instance file may hold it: a kernel defined in a header.)
template <class H>
AKX_GLOBAL AKX_LAUNCH_BOUNDS(scan_init_info.max_threads)
void scan_init(H *head, uint32_t *flags, int64_t tiles) {
  grid_dependency_wait();  // PDL (kernels/akx/device.cuh): before the first global access
  grid_dependents_launch();
  const int64_t i0 = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i0 == 0) {
    gst(&head->ticket, 0ull);
    gst(&head->waits, 0ull);
    gst(&head->count, 0ll);
  }
  for (int64_t i = i0; i < tiles; i += (int64_t)gridDim.x * blockDim.x) gst(flags + i, 0u);
}

// How a node's flag is published and polled: st_release of the call's epoch after the node's
// plain store, and ld_acquire before reading the node (the only order kernels use). A
// parameter so that tests/test_lookback.cpp can plant a broken order and see the sim catch it.
struct lookback_release_acquire {
  AKX_DEVICE static void publish(uint32_t *flag, uint32_t epoch AKX_SITE_PARAM) { st_release(flag, epoch AKX_SITE_ARG); }
  AKX_DEVICE static uint32_t poll(const uint32_t *flag AKX_SITE_PARAM) { return ld_acquire(flag AKX_SITE_ARG); }
};

// Whether a flag polled by a tile of the call with `epoch` says that the node is this call's:
// exactly the call's epoch (epochs are never 0; a flag of an earlier call holds an earlier
// one). A parameter so that tests/test_lookback.cpp can plant a check that takes an earlier
// call's node.
struct lookback_epoch_exact {
  AKX_HD_INLINE static bool current(uint32_t flag, uint32_t epoch) { return flag == epoch; }
};

// The tree's radix, in bits: 32 nodes a level, one warp's lanes.
constexpr int lookback_digit_bits = 5;
constexpr uint64_t lookback_digit_max = 31;

// Tile t's level: its trailing base-32 digits equal to 31.
AKX_HD_INLINE int lookback_level(uint64_t t) {
  int level = 0;
  while (((t >> (lookback_digit_bits * level)) & lookback_digit_max) == lookback_digit_max) ++level;
  return level;
}

// Where the node (and the flag) of the level-`level` tile whose index shifted right by
// 5 x level is `u` lies among `tiles` tiles: the nodes of each level together, level 0 first,
// each level in tile order (a bijection onto [0, tiles)). The tiles of level >= j are those
// with j trailing 31s, tiles >> 5j of them, so level j starts at tiles - (tiles >> 5j); a
// level-j tile's rank among its level is u - u / 32 (u's last digit is never 31).
AKX_HD_INLINE uint64_t lookback_slot(uint64_t tiles, int level, uint64_t u) {
  return tiles - (tiles >> (lookback_digit_bits * level)) + u - (u >> lookback_digit_bits);
}

// Called by all 32 lanes of warp 0 of the block scanning tile t (of `tiles`) of the call with
// `epoch`, with the tile's aggregate. Publishes tile t's node and returns the exclusive prefix of
// tile t (S::identity() for tile 0) in every lane.
template <class S, class Order = lookback_release_acquire, class Epoch = lookback_epoch_exact>
AKX_DEVICE typename S::T lookback(const lookback_status<typename S::T> &st, int64_t tiles, uint64_t t,
                                  const typename S::T &aggregate, uint32_t epoch) {
  using T = typename S::T;
  const int lane = (int)(threadIdx.x & 31);
  const int level = lookback_level(t);
  int m = 0;  // nodes in t's decomposition: the sum of its digits, at most 31 x 7 (tiles < 2^35)
  for (uint64_t x = t; x; x >>= lookback_digit_bits) m += (int)(x & lookback_digit_max);
  bool waited = false;
  // The fold from the identity, oldest first, of the nodes [from, to) of t's decomposition
  // numbered newest first (node f: level j, the (d_j - 1 - r)-th of that level's d_j, where f
  // = d_0 + ... + d_{j-1} + r): lane r of each round of 32 loads one, the oldest round first.
  auto fold = [&](int from, int to) {
    T acc = S::identity();
    if (to <= from) return acc;
    for (int c = from + (to - from - 1) / 32 * 32; c >= from; c -= 32) {
      T mine = S::identity();
      int f = c + lane;
      if (f < to) {
        int j = 0;
        uint64_t d = t & lookback_digit_max;
        while (f >= (int)d) {
          f -= (int)d;
          ++j;
          d = (t >> (lookback_digit_bits * j)) & lookback_digit_max;
        }
        // The level-j blocks end at the tiles whose index >> 5j is (t >> 5(j + 1)) x 32 + k.
        const uint64_t k = d - 1 - (uint64_t)f;
        const uint64_t slot = lookback_slot((uint64_t)tiles, j,
                                            ((t >> (lookback_digit_bits * (j + 1))) << lookback_digit_bits) + k);
        poll_bound bound;  // debug builds of the CUDA backend: a trap, not a hang
        while (!Epoch::current(Order::poll(st.flags + slot), epoch)) {
          waited = true;
          bound.step(st.flags + slot, "look-back: the flag of an earlier tile");
          __nanosleep(32);
        }
        mine = gld(st.nodes + slot);
      }
      const int count = to - c < 32 ? to - c : 32;
      for (int r = count - 1; r >= 0; --r) acc = S::apply(acc, shfl_idx(FULL_MASK, mine, r));
    }
    return acc;
  };
  // 1. The lowest `level` levels (31 nodes each, the newest): the node = low o aggregate,
  //    published at once.
  const int low_nodes = (int)lookback_digit_max * level;
  const T low = fold(0, low_nodes);
  if (lane == 0) {
    const uint64_t own = lookback_slot((uint64_t)tiles, level, t >> (lookback_digit_bits * level));
    gst(st.nodes + own, level ? S::apply(low, aggregate) : aggregate);
    Order::publish(st.flags + own, epoch);
  }
  // The node is out before any lane polls an older one: lanes diverge (independent thread
  // scheduling), and a lane that acquired an older node before lane 0 published would make the
  // node wait for it, one more step on the chain (tests/test_lookback.cpp sees it under the
  // sim's random schedule).
  __syncwarp(FULL_MASK);
  // 2. The older nodes: prefix = (the older ones, oldest first) o low.
  const T high = fold(low_nodes, m);
#if AKX_LOOKBACK_COUNT_WAITS
  if (__any_sync(FULL_MASK, waited) && lane == 0) atomicAdd(&st.head->waits, 1ull);
#else
  (void)waited;
#endif
  return m > low_nodes ? (level ? S::apply(high, low) : high) : low;
}

}  // namespace akx
