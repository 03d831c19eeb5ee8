// Single-pass look-back between the tiles of a scan, bitwise deterministic.
//
// Decoupled look-back (Merrill & Garland) lets tile t combine whatever its predecessors
// have published so far, so the association of a float sum, and its rounding, depends on
// timing: CUB's and PyTorch's float scans differ run to run. Here the prefix of every tile
// is a fixed expression of the tile aggregates: a Fenwick (binary indexed) tree over tiles.
// Tile t (node i = t + 1) publishes one node, F(i) = fold of the aggregates of tiles
// [i - lowbit(i), t], and its exclusive prefix is the fold of the nodes of t's binary
// decomposition (t, t - lowbit(t), ...: popcount(t) nodes, all of earlier tiles), in tile
// order. F(i)'s inputs are exactly the lowbit nodes of that decomposition (its k = ctz(i)
// smallest), so a tile publishes F as soon as the k most recent nodes are there, then waits
// for the older ones. Nothing depends on which predecessors happened to be finished.
//
// Against the anchored fixed window (every W-th tile publishes an inclusive prefix, the
// others fold the aggregates back to it): there each anchor waits for the previous anchor,
// a chain of tiles / W dependent steps, or a tile reads up to W aggregates. Here a tile
// reads at most popcount(t) <= 32 nodes with one warp, in one round of loads, and waits only
// on nodes of earlier tiles whose own waits are on still earlier ones: the chain of
// dependent publications is at most log2(tiles) long.
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
// The ticket is put back to 0 by the tile that draws the last one (scan_tile_body).
#pragma once
#include "akx/block_limits.h"
#include "akx/kernel_resources.cuh"
#include "akx/scan_op.cuh"

namespace akx {

struct lookback_header {
  unsigned long long ticket;  // tiles are taken in ticket order, never by blockIdx
  unsigned long long waits;   // tiles that found a node not yet published (the slow path),
                              // counted since the last reset: a statistic for tests
  long long count;            // findall: the total, stored by the last tile of each call
  long long pad[5];
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
// look-back (kernels/akx/scan_tile.cuh, kernels/akx/select_tile.cuh): thread 0 draws it into
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
constexpr kernel_info scan_init_info{"scan_init", AKX_MAX_BLOCK_SCAN, 16, 1, false};

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

AKX_HD_INLINE int popcount64(uint64_t x) {
  int c = 0;
  while (x) { x &= x - 1; ++c; }
  return c;
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

// Called by all 32 lanes of warp 0 of the block scanning tile t of the call with `epoch`, with
// the tile's aggregate. Publishes node t + 1 and returns the exclusive prefix of tile t
// (S::identity() for tile 0) in every lane.
template <class S, class Order = lookback_release_acquire, class Epoch = lookback_epoch_exact>
AKX_DEVICE typename S::T lookback(const lookback_status<typename S::T> &st, uint64_t t,
                                  const typename S::T &aggregate, uint32_t epoch) {
  using T = typename S::T;
  const int lane = (int)(threadIdx.x & 31);
  const uint64_t i = t + 1;
  int k = 0;  // ctz(i): F(i) covers 2^k tiles
  while (((i >> k) & 1) == 0) ++k;
  const int m = popcount64(t);  // nodes in t's decomposition; m >= k, m <= 32 (tiles < 2^32)
  // Lane r takes the r-th node of the decomposition, most recent first: q_0 = t,
  // q_{r+1} = q_r - lowbit(q_r). Node q is tile q - 1's.
  uint64_t q = t;
  for (int r = 0; r < lane && q; ++r) q &= q - 1;
  bool waited = false;
  T mine = S::identity();
  auto fetch = [&](bool take) {
    if (take) {
      poll_bound bound;  // debug builds of the CUDA backend: a trap, not a hang
      while (!Epoch::current(Order::poll(st.flags + (q - 1)), epoch)) {
        waited = true;
        bound.step(st.flags + (q - 1), "look-back: the flag of an earlier tile");
        __nanosleep(32);
      }
      mine = gld(st.nodes + (q - 1));
    }
  };
  // 1. The k most recent nodes: F(i) = q_{k-1} o ... o q_0 o aggregate, published at once.
  fetch(lane < k);
  T low = S::identity();
  for (int r = k - 1; r >= 0; --r) low = S::apply(low, shfl_idx(FULL_MASK, mine, r));
  if (lane == 0) {
    gst(st.nodes + t, k ? S::apply(low, aggregate) : aggregate);
    Order::publish(st.flags + t, epoch);
  }
  // 2. The older nodes: prefix = q_{m-1} o ... o q_k o low.
  fetch(lane >= k && lane < m);
  T high = S::identity();
  for (int r = m - 1; r >= k; --r) high = S::apply(high, shfl_idx(FULL_MASK, mine, r));
  if (__any_sync(FULL_MASK, waited) && lane == 0) atomicAdd(&st.head->waits, 1ull);
  return m > k ? (k ? S::apply(high, low) : high) : low;
}

}  // namespace akx
