// The segment tile: segmented and keyed reductions and scans (docs/segmented.md), one tile body
// for the four calls, as CUB's AgentReduceByKey / AgentScanByKey sit on its block scan and
// look-back. Tiles of blockDim.x x ipt consecutive elements; the sequence is scanned as one
// segmented sequence (Blelloch: a head restarts the fold), so a segment of any length is split
// across tiles by the look-back (the scans and the by-key reductions: their tiles taken in
// ticket order, draw_tile) or by its tiles' split tickets (a segmented reduction: its tiles go
// by blockIdx and wait on none, split_arrive below), and every output is written in the same
// launch, whatever the lengths: no shape is chosen per segment, and a tile's work does not
// depend on how the elements fall into segments (a power law costs what uniform segments
// cost). Bitwise deterministic: the look-back's order is kernels/akx/lookback.cuh's, a split's
// is split_finish's (fixed by the segment's first and last tiles).
//   1. heads. Offsets: the tile's segments are found by two searches (galloping from where
//      uniform segments would put them, so one or two probes for those), their bounds staged
//      in shared memory as positions relative to the tile (the window), and each thread marks
//      the begins that fall in its run (no two threads write one head: a run is its thread's).
//      Keys: the run heads of kernels/akx/run_heads.cuh (the tile's keys staged, striped and
//      coalesced; a head where a key differs from the one before it, the key before the tile
//      read from global memory);
//   2. (user ops: their map sees the position within the segment) each element's segment
//      start, from the heads and a block max-scan; keys: the start of the run holding the
//      tile's first element from a max-scan look-back over the tiles' last heads
//      (positions_status);
//   3. striped loads of the values, mapped and converted, into the tile's runs;
//   4. run folds, block scan, look-back (not a segmented reduction's), rescan
//      (kernels/akx/scan_tile.cuh's steps) over (value, head count) pairs: keyed_scan below;
//   5. the outputs: a scan stores every element in [offsets[0], offsets[nseg]) striped; a
//      segmented reduction stores a segment that lies in one tile from that tile (its value is
//      the inclusive scan at its last element), an empty one from the tile holding its begin,
//      coalesced over s, and a segment that spans tiles from the last of its tiles to arrive
//      (split_arrive, split_finish: each tile parks its piece); a by-key reduction
//      stores run r (r: the head count) from the tile holding the run's last element, its
//      ends compacted in shared memory first, so that runs of one element store coalesced.
// Offsets are device data: each is clamped to [0, n] where it is read, a segment whose end is
// not past its begin is empty, and a segment is written only by the tile its bounds name, so
// garbage offsets give wrong values but no access out of bounds and no two writers.
#pragma once
#include "akx/block_scan.cuh"
#include "akx/finish.cuh"
#include "akx/lookback.cuh"
#include "akx/run_heads.cuh"
#include "akx/scan_layout.cuh"
#include "akx/scan.cuh"
#include "akx/segmented_plan.h"
#if !defined(__CUDACC_RTC__)
#include "akx/fail.h"
#endif

namespace akx {

// (value, heads): seg_scan's pairs (kernels/akx/scan_op.cuh) with the head flag a count, so
// that the inclusive count at an element is its run's index + 1 (akx_reduce_by_key's output
// slot) and the last tile's total is the number of runs. Associative as seg_scan is.
template <class Acc>
struct keyed_value {
  Acc v;
  long long heads;
};
template <class Op, class Acc>
struct keyed_scan {
  using op = Op;
  using T = keyed_value<Acc>;
  using value_type = Acc;
  static constexpr bool segmented = true;
  AKX_HD_INLINE static T identity() { return T{Op::template identity<Acc>(), 0}; }
  AKX_HD_INLINE static T apply(const T &a, const T &b) {
    if (b.heads) return T{b.v, a.heads + b.heads};
    return T{Op::apply(a.v, b.v), a.heads};
  }
  AKX_HD_INLINE static T make(const Acc &v, bool head) { return T{v, head ? 1 : 0}; }
  AKX_HD_INLINE static Acc value(const T &t) { return t.v; }
  AKX_HD_INLINE static bool head(const T &t) { return t.heads != 0; }
  AKX_HD_INLINE static Acc combine(const Acc &a, const Acc &b) { return Op::apply(a, b); }
  AKX_HD_INLINE static Acc acc_identity() { return Op::template identity<Acc>(); }
  AKX_HD_INLINE static Acc acc_empty() { return empty_value<Op, Acc>(); }
};

// Launch bounds and loads in flight as the scan tiles'. Registers: the kernel's class (kernel_info.registers), the most ptxas gave any prebuilt
// instance for sm_90 (CUDA 13.0) rounded up to 8; bench/RESULTS.md, "Declared registers".
constexpr kernel_info segmented_reduce_info{"segmented_reduce", AKX_MAX_BLOCK_SCAN, 80, scan_load_batch<float>, true};
constexpr kernel_info reduce_by_key_info{"reduce_by_key", AKX_MAX_BLOCK_SCAN, 80, scan_load_batch<float>, true};
constexpr kernel_info segmented_scan_info{"segmented_scan", AKX_MAX_BLOCK_SCAN, 64, scan_load_batch<float>, true};
constexpr kernel_info scan_by_key_info{"scan_by_key", AKX_MAX_BLOCK_SCAN, 80, scan_load_batch<float>, true};

// A view of the dynamic shared memory `at` bytes after its start (the plan's byte offsets).
template <class U, class T>
AKX_DEVICE smem<U> smem_at(const smem<T> &base, int64_t at, int64_t count) {
#if defined(__CUDACC__)
  (void)count;
  return smem<U>{reinterpret_cast<U *>(reinterpret_cast<unsigned char *>(base.p) + at)};
#else
  return smem<U>{reinterpret_cast<U *>(reinterpret_cast<unsigned char *>(base.p) + at), (size_t)count * sizeof(U)};
#endif
}

// offsets[j] clamped to [0, n].
AKX_DEVICE int64_t segment_bound(const akx__segmented_plan &p, int64_t j) {
  const unsigned char *b = static_cast<const unsigned char *>(p.offsets) + j * p.offsets_stride * (int64_t)p.offsets_size;
  const int64_t v = p.offsets_size == 4 ? (int64_t)gld(reinterpret_cast<const int32_t *>(b))
                                        : (int64_t)gld(reinterpret_cast<const int64_t *>(b));
  return v < 0 ? 0 : v > p.n ? p.n : v;
}

// The first j in [lo0, hi0) with segment_bound(j) >= x (hi0 if none) for non-decreasing offsets
// (offsets in any order still end it in [lo0, hi0]: the bracket only shrinks), found from
// `guess` by the 32 lanes of a warp together, all calling it with the same arguments: each
// round is W probes in one request, one round trip, and shrinks the bracket about W + 1 times.
// Why not one thread's galloping binary search (this file's first version): a probe is a round
// trip the tile waits for before it can use its heads (on a GPU, 0.3 to 0.6 us each, which no
// other work of the tile hides), and power-law lengths took it about 40 probes a tile (~20 each
// for the tile's first and last segment); here about 13 rounds (1 at the guess, 1 galloping in
// powers of 8, then about log9 of the distance).
// On the sim's model, each of those one-sector requests also lowered the tile's bytes per load
// request under the 128 B its loads in flight need (bench/RESULTS.md, "power-law lengths").
// W = 8: 16 would take a round or two fewer at twice the sectors.
template <int W>
AKX_DEVICE int64_t segment_search_warp(const akx__segmented_plan &p, int64_t lo0, int64_t hi0, int64_t x, int64_t guess) {
  static_assert(W >= 2 && W <= 32, "probes a round: 2 to 32 lanes");
  if (hi0 <= lo0) return hi0;
  const int lane = (int)(threadIdx.x & 31);
  int64_t lo = lo0 - 1, hi = hi0;  // bound(lo) < x <= bound(hi), the ends virtual
  const int64_t g = guess < lo0 ? lo0 : guess >= hi0 ? hi0 - 1 : guess;
  // One round: lane l probes j (ascending with l; j outside (lo, hi): no probe). hi becomes the
  // lowest probe at or past x, lo the highest probe below x under it.
  unsigned at_or_past = 0, below = 0;
  auto round = [&](int64_t j) {
    const bool probe = j > lo && j < hi;
    const bool ge = probe && segment_bound(p, j) >= x;
    at_or_past = __ballot_sync(FULL_MASK, ge);
    below = __ballot_sync(FULL_MASK, probe && !ge);
    unsigned under = below;
    if (at_or_past) {
      int h = 0;
      while (!((at_or_past >> h) & 1u)) ++h;
      hi = shfl_idx(FULL_MASK, j, h);
      under &= (1u << h) - 1u;
    }
    if (under) {
      int l = 31;
      while (!((under >> l) & 1u)) --l;
      lo = shfl_idx(FULL_MASK, j, l);
    }
  };
  round(lane == 0 ? g - 1 : lane == 1 ? g : lo);  // uniform segments: exact, done
  // Galloping away from g, lane l at 8^(e + l) (8^(e + W - 1 - l) downwards, so that the probes
  // ascend with the lanes), until a probe passes the answer or none is left inside.
#pragma unroll 1
  for (int e = 1; hi - lo > 1 && e <= 20; e += W) {
    const bool up = lo >= g;
    const int ex = e + (up ? lane : W - 1 - lane);
    int64_t j = lo;
    if (lane < W && ex <= 20) j = up ? lo + ((int64_t)1 << (3 * ex)) : hi - ((int64_t)1 << (3 * ex));
    round(j);
    if ((up ? at_or_past : below) != 0 || (at_or_past | below) == 0) break;
  }
#pragma unroll 1
  while (hi - lo > 1) {  // W probes evenly inside the bracket
    const int64_t span = hi - lo, step = span > W ? span / (W + 1) : 1;
    round(lane < W ? lo + step * (lane + 1) : lo);
  }
  return hi;
}

// Where uniform segments would put the bound at or after position x.
AKX_DEVICE int64_t segment_guess(const akx__segmented_plan &p, int64_t x) {
  if (p.n <= 0) return 0;
  return (int64_t)((double)x / (double)p.n * (double)p.nseg);
}

AKX_DEVICE void segment_key_store(const akx__segmented_plan &p, int64_t r, unsigned long long k) {
  unsigned char *b = static_cast<unsigned char *>(p.keys_out) + r * p.keys_out_stride * (int64_t)p.keys_size;
  switch (p.keys_size) {
    case 1: gst(b, (unsigned char)k); return;
    case 2: gst(reinterpret_cast<uint16_t *>(b), (uint16_t)k); return;
    case 4: gst(reinterpret_cast<uint32_t *>(b), (uint32_t)k); return;
    default: gst(reinterpret_cast<unsigned long long *>(b), k); return;
  }
}

AKX_HD_INLINE int segment_high_bit(uint32_t x) {  // x != 0
  int h = 31;
  while (!((x >> h) & 1u)) --h;
  return h;
}
AKX_HD_INLINE uint32_t segment_bits_through(int k) { return k >= 31 ? 0xffffffffu : (2u << k) - 1u; }

// The window's entries: bounds relative to the tile's start, clamped to [-1, E + 1] (16 bits:
// every comparison the tile makes is with its own positions, 0..E - 1).
AKX_HD_INLINE int16_t segment_rel(int64_t bound, int64_t base, int64_t tile_elems) {
  int64_t r = bound - base;
  if (r < -1) r = -1;
  if (r > tile_elems + 1) r = tile_elems + 1;
  return (int16_t)r;
}

// A scan's element in: converted, or through a user op's map (kernels/akx/ops.cuh, op_load),
// as a map type for value_loader.
template <class Op>
struct scan_map {
  using op_type = Op;  // map_apply passes the position
  template <class Acc, class Src> AKX_HD_INLINE static Acc apply(const Src &x, int64_t i) { return op_load<Op, Acc>(x, i); }
};

// The tile's values, striped with a batch of loads in flight, each through the map M (a user
// op's at its position within the segment: its start from the run's heads, else the run's
// incoming start), into the tile's runs.
template <class Src, class Acc, class Op>
struct value_loader {
  const akx__segmented_plan &p;
  const smem<wide<Acc>> &tile;
  scan_layout layout;
  const smem<uint32_t> &run_heads;
  const smem<long long> &run_start;
  int64_t base, valid;
  int32_t tid, bd, ipt;
  template <class M>
  AKX_DEVICE void operator()(M) const {
    constexpr int batch = scan_load_batch<Acc>;
    const Src *src = static_cast<const Src *>(p.src);
    striped_walk w(tid, bd, ipt);
    for (int32_t j0 = 0; j0 < ipt; j0 += batch) {
      Acc x[batch];
#pragma unroll
      for (int u = 0; u < batch; ++u) {
        const int64_t e = (int64_t)(j0 + u) * bd + tid;
        x[u] = Op::template identity<Acc>();
        if (j0 + u < ipt && e < valid) {
          int64_t pos = base + e;
          if constexpr (is_user_op<Op>::value) {
            const int64_t run = e / ipt;
            const int32_t k = (int32_t)(e - run * ipt);
            const uint32_t bits = run_heads.ld(run) & segment_bits_through(k);
            pos -= bits ? base + run * ipt + segment_high_bit(bits) : run_start.ld(run);
          }
          x[u] = map_apply<M, Acc>(gld_wide(src + (base + e) * p.src_stride), pos);
        }
      }
#pragma unroll
      for (int u = 0; u < batch; ++u) {
        if (j0 + u < ipt) {
          tile.st(layout.pos(w.run, w.k), wide<Acc>{x[u]});
          w.next();
        }
      }
    }
  }
};

// ---- a segmented reduction's splits ------------------------------------------------------------
// A segment whose elements span tiles t1..t2 (t1 the tile of its begin, t2 of its last element)
// is split: t1 parks its fold from the begin to its own end in trail[t1], each tile after it
// its fold from its start up to the segment's end (or its own end) in lead[t]; each then takes
// the segment's ticket, count[t1] (one per tile: no two split segments begin in one tile
// and go on past it), and the last of the t2 - t1 + 1 to take it finishes the segment in the
// same launch (as the dims splits finish, kernels/akx/reduce_dims.cuh). One atomicAdd an
// arrival: the call's half of the workspace's split tickets (src/core/workspace.c,
// akx__workspace_splits) is all zeros when it starts, and its tiles zero the other half for the
// next call (split_clear), so no count, finished or not (garbage offsets can leave a split
// that never completes), outlives the call after it; the split tickets are a region of their
// own, which no look-back call reads (docs/workspace.md, "The invariants"). A compare-and-swap
// loop that tags a count with the call's epoch would cost a segment of k tiles O(k^2)
// attempts at L2 latency when its tiles arrive together. Release/acquire: the piece stored,
// __threadfence, the ticket (atomic); the last one's block, once all its own arrivals are
// done, a __threadfence and a barrier before warp 0 reads the pieces.
// Offsets are device data, and decreasing ones can start two split segments in one tile. So a
// tile arrives at most once for the split crossing its start (its lead piece) and once for the
// split starting in it and crossing its end (its trail piece), the lowest segment of each kind
// (a piece slot has one writer), and an arrival adds its segment's signature (split_signature:
// a 32-bit mix of s above a count of 1): the last arrival of segment s finds k times its own
// signature, k = t2 - t1 + 1, only when the k arrivals so far are s's own, which come from
// distinct tiles of [t1, t2], each after its piece. Arrivals of two segments on one ticket
// then finish neither (unless their mixes collide: 2^-32 a ticket), where a bare count let
// one finish with another's pieces half written (a race). Valid offsets never share a ticket.
// The fences of a split: a parameter so that tests/test_split_order.cpp can plant a missing one
// and see the sim catch it (as tests/test_lookback.cpp does for the look-back's flags).
struct split_fences {
  AKX_DEVICE static void release() { __threadfence(); }  // a piece before its ticket
  AKX_DEVICE static void acquire() { __threadfence(); }  // every ticket before the pieces
};

// The next call's split tickets, all of them, striped over the grid: this launch never reads
// them, and the launch before it (which counted on them) completed before any tile ran
// (grid_dependency_wait).
AKX_DEVICE void split_clear_next(const akx__segmented_plan &p, uint64_t t, int32_t tid, int32_t bd) {
  unsigned long long *clear = static_cast<unsigned long long *>(p.split_clear);
  for (int64_t i = (int64_t)t * bd + tid; i < p.split_words; i += p.tiles * bd) gst(clear + i, 0ull);
}

// A split's signature: its count of 1 in the low word, a 32-bit mix of s (Fibonacci hashing)
// in the high word; k arrivals of s sum to k times it (k < 2^32: no carry into the mix).
AKX_HD_INLINE unsigned long long split_signature(int64_t s) {
  const unsigned long long mix = ((unsigned long long)s * 0x9E3779B97F4A7C15ull) >> 32;
  return (mix << 32) | 1ull;
}

template <class Op, class Acc, class Order = split_fences>
AKX_DEVICE void split_arrive(const akx__segmented_plan &p, int64_t s, uint64_t t, int64_t E, const Acc &piece,
                             bool first, const smem<long long> &jobs, int slot) {
  const int64_t begin = segment_bound(p, s), end = segment_bound(p, s + 1);
  const int64_t t1 = begin / E, t2 = (end - 1) / E;
  Acc *lead = reinterpret_cast<Acc *>(static_cast<unsigned char *>(p.status) + p.nodes_at), *trail = lead + p.tiles;
  gst(first ? trail + t : lead + t, piece);
  Order::release();  // the piece before the ticket
  unsigned long long *ticket = static_cast<unsigned long long *>(p.split_count) + t1;
  const unsigned long long w = split_signature(s);
  if (atomicAdd(ticket, w) + w != (unsigned long long)(t2 - t1 + 1) * w) return;
  jobs.st(3 * slot, s);
  jobs.st(3 * slot + 1, t1);
  jobs.st(3 * slot + 2, t2);
}
// Warp 0 folds a split's pieces in this order (fixed by t1 and t2 alone, so every call gives
// the same bits): lane l folds the pieces t1 + l * c .. t1 + (l + 1) * c - 1 (c = ceil(pieces /
// 32)) left to right from the identity, then lane 0 folds the lanes' results in lane order; the
// result goes through the finish (init, fold, dst's dtype) into `out`.
template <class Op, class Acc>
AKX_DEVICE void split_finish(const akx__segmented_plan &p, int64_t s, int64_t t1, int64_t t2, void *out) {
  const int lane = (int)(threadIdx.x & 31);
  const Acc *lead = reinterpret_cast<const Acc *>(static_cast<const unsigned char *>(p.status) + p.nodes_at);
  const Acc *trail = lead + p.tiles;
  const int64_t pieces = t2 - t1 + 1, c = (pieces + 31) / 32;
  Acc v = Op::template identity<Acc>();
  for (int64_t u = t1 + lane * c; u < t1 + (lane + 1) * c && u <= t2; ++u)
    v = Op::apply(v, gld(u == t1 ? trail + u : lead + u));
  Acc all = Op::template identity<Acc>();
  for (int r = 0; r < 32; ++r) all = Op::apply(all, shfl_idx(FULL_MASK, v, r));
  (void)s;
  if (lane == 0) finish_store_at<Op>(all, p.finish, out);
}

// The by-key user ops' positions look-back (step 2 of segment_tile_body): a max-scan of each
// tile's last head over the same radix-32 tree as the values' (kernels/akx/lookback.cuh), with
// flags and nodes of its own: its flags the `tiles` words after the values' (the workspace's
// tags, each 0 or the epoch of the call that published it, so that a later call never takes a
// stale one; src/segmented/segmented.c sizes 2 x tiles flags and resets them all), its nodes
// (8 bytes a tile) after the values' nodes in the call's scratch. The host's node size is at
// least sizeof(keyed_value<Acc>), a multiple of 8, so they lie inside its scratch, aligned.
template <class T>
AKX_DEVICE lookback_status<long long> positions_status(const lookback_status<T> &values, int64_t tiles) {
  return lookback_status<long long>{values.head, values.flags + tiles, reinterpret_cast<long long *>(values.nodes + tiles)};
}

template <class Src, class Dst, class Acc, class Op, bool ByKeys>
AKX_DEVICE void segment_tile_body(const akx__segmented_plan &p) {
  using S = keyed_scan<Op, Acc>;
  using T = typename S::T;
  constexpr bool reduce = is_same<Dst, void>::value;
  constexpr bool user = is_user_op<Op>::value;
  // A segmented reduction waits on no other tile (its split segments are finished by the
  // last of their tiles): its tiles go by blockIdx. The others take theirs in ticket order,
  // for the look-back.
  constexpr bool split = reduce && !ByKeys;
  constexpr int32_t max_runs = AKX_MAX_BLOCK_SCAN;
  AKX_SHARED_DYNAMIC(wide<Acc>, tile);  // the runs (kernels/akx/scan_layout.cuh)
  AKX_SHARED(T, scratch, block_scan_scratch + 1);
  AKX_SHARED(unsigned long long, ticket, 1);
  AKX_SHARED(uint32_t, run_heads, max_runs);  // each run's head bits, for its neighbours
  AKX_SHARED(long long, consts, 8);
  AKX_SHARED(long long, jobs, 6);  // segmented reductions: (s, t1, t2) of the splits this tile finishes
  AKX_SHARED(long long, run_start, user ? max_runs : 1);  // user ops: the segment start before each run
  // the user ops' max-scans, a segmented reduction's min-scans of its arrivals
  AKX_SHARED(long long, max_scratch, user || split ? block_scan_scratch : 1);
  enum { c_lo, c_hi, c_first, c_last, c_begin, c_pred, c_next, c_ends };
  using MaxScan = plain_scan<op_max, long long>;
  using MinScan = plain_scan<op_min, long long>;

  const int32_t tid = (int32_t)threadIdx.x, bd = (int32_t)blockDim.x, ipt = p.items_per_thread;
  const scan_layout layout = scan_layout::make(p.layout, ipt, (int32_t)sizeof(Acc));
  const lookback_status<T> st = lookback_status<T>::at(p.status, p.nodes_at);
  uint64_t t = blockIdx.x;
  if constexpr (!split)
    t = draw_tile(st.head, p.tiles, ticket, "segment tile: a ticket past the tile count (the status header was "
                                            "reset by another call mid-launch)");
  const int64_t E = (int64_t)bd * ipt;
  const int64_t base = (int64_t)t * E;
  int64_t valid = p.n - base;
  if (valid > E) valid = E;
  if (valid < 0) valid = 0;
  const bool last_tile = t + 1 == (uint64_t)p.tiles;
  if constexpr (split) split_clear_next(p, t, tid, bd);
  const int64_t r0 = (int64_t)tid * ipt;  // the thread's run, in tile positions
  uint32_t heads = 0;                      // bit k: position r0 + k starts a segment or run

  // ---- 1. heads ------------------------------------------------------------------------------
  const smem<int16_t> window = smem_at<int16_t>(tile, p.window_at, ByKeys ? 0 : p.window_cap);
  const scan_layout klayout = scan_layout::make(p.layout, ipt, 8);
  const smem<unsigned long long> kbuf = smem_at<unsigned long long>(tile, p.keys_at, ByKeys ? klayout.slots(bd) : 0);
  int64_t rounds = 0;
  if constexpr (!ByKeys) {
    if (tid < 32) {
      // s_lo: the first segment that ends at or after the tile's start (its end offsets[s + 1]);
      // s_hi: the last that begins in the tile (every one left, for the last tile: those
      // empty at n are its to write). Warp 0 searches, W lanes a round.
      // s_hi from s_lo (no bound before s_lo is at or past the tile's end), guessed where
      // uniform segments would put it: its rounds grow with how far the tile's own segments
      // are from that, not with how far the whole array's are. One loop for both searches, not
      // two calls: two inlined copies pushed some instances past the 80-register bound (a
      // spill, CUDA 13.0, sm_90).
      constexpr int W = 8;
      int64_t s_lo = 0, s_hi = p.nseg - 1;
#pragma unroll 1
      for (int k = 0; k < (last_tile ? 1 : 2); ++k) {
        const int64_t j = segment_search_warp<W>(p, k ? s_lo : 1, k ? p.nseg : p.nseg + 1, k ? base + valid : base,
                                                 k ? s_lo + segment_guess(p, valid) : segment_guess(p, base) + 1);
        if (k == 0) s_lo = j - 1;
        else s_hi = j - 1;
      }
      if (tid == 0) {
        consts.st(c_lo, s_lo);
        consts.st(c_hi, s_hi);
        consts.st(c_first, segment_bound(p, 0));
        consts.st(c_last, segment_bound(p, p.nseg));
        if (user) {  // the start of the segment holding the tile's first element
          int64_t begin = base;
          if (s_lo < p.nseg && segment_bound(p, s_lo + 1) > base) {
            const int64_t b = segment_bound(p, s_lo);
            begin = b < base ? b : base;
          }
          consts.st(c_begin, begin);
        }
      }
    }
    __syncthreads();
    const int64_t s_lo = consts.ld(c_lo), s_hi = consts.ld(c_hi), cap = p.window_cap - 1;
    rounds = s_hi >= s_lo ? (s_hi - s_lo + cap) / cap : 0;
    for (int64_t s0 = s_lo; s0 <= s_hi; s0 += cap) {
      const int64_t cnt = s_hi - s0 + 1 < cap ? s_hi - s0 + 1 : cap;
      if (s0 != s_lo) __syncthreads();  // the last round's readers are done
      for (int64_t j = tid; j <= cnt; j += bd) window.st(j, segment_rel(segment_bound(p, s0 + j), base, E));
      __syncthreads();
      if (r0 < valid) {
        int64_t lo = -1, hi = cnt;  // the first begin at or after the run's start
        while (hi - lo > 1) {
          const int64_t mid = lo + (hi - lo) / 2;
          if (window.ld(mid) >= r0) hi = mid;
          else lo = mid;
        }
        for (int64_t j = hi; j < cnt; ++j) {
          const int64_t b = window.ld(j);
          if (b >= r0 + ipt || b >= valid) break;
          if (b >= r0 && window.ld(j + 1) > b) heads |= 1u << (b - r0);
        }
      }
    }
  } else {
    // The run heads (kernels/akx/run_heads.cuh): the keys staged, the key before the tile (and
    // after it, for the runs' ends), the head test over each thread's run.
    const key_stager<scan_load_batch<Acc>, akx__segmented_plan> stage{p, kbuf, klayout, base, valid, tid, bd, ipt};
    switch (p.keys_size) {  // one branch per tile: the loads' batch is unrolled per key width
      case 1: stage(uint8_t{}); break;
      case 2: stage(uint16_t{}); break;
      case 4: stage(uint32_t{}); break;
      default: stage((unsigned long long)0); break;
    }
    if (tid == 0) {
      consts.st(c_pred, (long long)run_key_before(p, base));
      consts.st(c_next, (long long)run_key_after(p, base, valid, p.n));
      consts.st(c_first, 0);
      consts.st(c_last, p.n);
    }
    __syncthreads();
    if (r0 < valid)
      heads = run_head_bits(kbuf, klayout, tid, ipt, base + r0, valid - r0,
                            tid == 0 ? (unsigned long long)consts.ld(c_pred) : kbuf.ld(klayout.pos(tid - 1, ipt - 1)));
  }
  run_heads.st(tid, heads);
  __syncthreads();

  // ---- 2. user ops: each element's segment start (its map's position is i - start) ---------
  if constexpr (user) {
    const long long last_head = heads ? base + r0 + segment_high_bit(heads) : -1;
    long long tile_last;  // the tile's last head (-1: none)
    const long long before = block_scan_exclusive<MaxScan>(last_head, max_scratch, &tile_last);
    if constexpr (ByKeys) {
      // The run holding the tile's first element began at the last head before the tile: the
      // exclusive max-scan of the tiles' last heads, through a look-back of its own (every tile
      // knows its last head from its keys alone, before any value is loaded), so that a tile
      // learns it in as many dependent steps as the tile count has base-32 digits, where a walk
      // back through the keys read every key of the run before the tile (quadratic in a run's
      // length: docs/segmented.md, "Positions").
      if (tid < 32) {
        const lookback_status<long long> pst = positions_status(st, p.tiles);
        const long long prefix = lookback<MaxScan>(pst, p.tiles, t, tile_last, p.epoch);
        if (tid == 0) consts.st(c_begin, prefix < 0 ? 0 : prefix);  // tile 0: its element 0 is a head
      }
      __syncthreads();
    }
    const long long begin = consts.ld(c_begin);
    run_start.st(tid, before > begin ? before : begin);
    __syncthreads();
  }

  // ---- 3. striped loads of the values ---------------------------------------------------------
  {
    const value_loader<Src, Acc, Op> load{p, tile, layout, run_heads, run_start, base, valid, tid, bd, ipt};
    if constexpr (reduce) visit_map<Src, Acc, Op>(p.map, load);  // one branch per tile, as the reductions'
    else load(scan_map<Op>{});
  }
  __syncthreads();

  // ---- 4. run fold, block scan, look-back ----------------------------------------------------
  T total = S::make(tile.ld(layout.pos(tid, 0)).v, heads & 1u);
  for (int32_t k = 1; k < ipt; ++k) total = S::apply(total, S::make(tile.ld(layout.pos(tid, k)).v, (heads >> k) & 1u));
  T aggregate;
  const T run_prefix = block_scan_exclusive<S>(total, scratch, &aggregate);
  if (tid < 32) {
    T prefix = S::identity();
    if constexpr (!split) prefix = lookback<S>(st, p.tiles, t, aggregate, p.epoch);
    if (tid == 0) {
      scratch.st(block_scan_scratch, prefix);
      if (!split && last_tile) gst(&st.head->count, S::apply(prefix, aggregate).heads);  // the runs
    }
  }
  if (split && tid == 0) {
    jobs.st(0, -1);
    jobs.st(3, -1);
  }
  __syncthreads();
  const T tile_prefix = scratch.ld(block_scan_scratch);

  // ---- 5. rescan: each element's result in place ---------------------------------------------
  const smem<uint16_t> ends = smem_at<uint16_t>(tile, p.ends_at, reduce && ByKeys ? E : 0);
  // by-key reductions: the run index of the tile's first element, and of each run end its
  // rank among the tile's ends
  const long long r_base = tile_prefix.heads + (long long)(run_heads.ld(0) & 1u) - 1;
  scan_result<S> result;
  result.exclusive = p.exclusive != 0;
  result.has_init = p.finish.has_init != 0;
  result.init = bitcast_<Acc>(p.finish.init);
  {
    T running = S::apply(tile_prefix, run_prefix);
    if (t == 0 && tid == 0) running = S::identity();  // nothing before the first element
    for (int32_t k = 0; k < ipt; ++k) {
      const bool head = (heads >> k) & 1u;
      const int64_t at = layout.pos(tid, k);
      const Acc x = tile.ld(at).v;
      const T after = S::apply(running, S::make(x, head));
      if constexpr (reduce) {
        tile.st(at, wide<Acc>{S::value(after)});
        if constexpr (ByKeys) {
          const int64_t q = r0 + k;
          if (q < valid) {
            bool end;
            if (q + 1 == valid) end = base + valid == p.n || (unsigned long long)consts.ld(c_next) != kbuf.ld(klayout.pos(tid, k));
            else if (k + 1 < ipt) end = (heads >> (k + 1)) & 1u;
            else end = run_heads.ld(tid + 1) & 1u;
            const long long rank = after.heads - 1 - r_base;
            if (end) ends.st(rank, (uint16_t)q);
            if (q + 1 == valid) consts.st(c_ends, rank + (end ? 1 : 0));
          }
        }
      } else {
        tile.st(at, wide<Acc>{result(running, after, head)});
      }
      running = after;
    }
  }
  __syncthreads();

  // ---- 6. the outputs -------------------------------------------------------------------------
  if constexpr (!reduce) {
    Dst *dst = static_cast<Dst *>(p.dst);
    const int64_t first = consts.ld(c_first), last = consts.ld(c_last);
    striped_walk w(tid, bd, ipt);
    for (int32_t j = 0; j < ipt; ++j) {
      const int64_t e = (int64_t)j * bd + tid;
      const int64_t i = base + e;
      if (e < valid && i >= first && i < last)
        gst_wide(dst + i * p.dst_stride, op_store<Op, Dst>(tile.ld(layout.pos(w.run, w.k)).v));
      w.next();
    }
  } else if constexpr (!ByKeys) {
    unsigned char *dst = static_cast<unsigned char *>(p.dst);
    const int64_t step = p.dst_stride * (int64_t)p.dst_size;
    const int64_t s_lo = consts.ld(c_lo), s_hi = consts.ld(c_hi), cap = p.window_cap - 1;
    akx__finish empty_finish = p.finish;
    empty_finish.empty = 1;
    const long long none = MinScan::identity();
    long long lead = none, trail = none;  // the lowest split crossing the tile's start, its end
    for (int64_t s0 = s_lo; s0 <= s_hi; s0 += cap) {
      const int64_t cnt = s_hi - s0 + 1 < cap ? s_hi - s0 + 1 : cap;
      if (rounds > 1) {  // the window holds the last round's bounds: stage this round's again
        __syncthreads();
        for (int64_t j = tid; j <= cnt; j += bd) window.st(j, segment_rel(segment_bound(p, s0 + j), base, E));
        __syncthreads();
      }
      for (int64_t j = tid; j < cnt; j += bd) {
        const int64_t s = s0 + j;
        const int64_t b = window.ld(j), e = window.ld(j + 1);
        void *out = dst + s * step;
        if (e > b) {
          const int64_t q = e - 1;
          if (q >= 0 && q < valid) {
            if (b >= 0)  // the whole segment is the tile's
              finish_store_at<Op>(tile.ld(layout.pos(q / ipt, (int32_t)(q % ipt))).v, p.finish, out);
            else if (s < lead) lead = s;  // its end: the split's last piece
          } else if (q >= valid && b < valid) {  // it goes on past the tile: a piece of the split
            if (b >= 0) {
              if (s < trail) trail = s;
            } else if (s < lead) {
              lead = s;
            }
          }
        } else {  // empty: the tile holding its begin (n - 1 past the end) writes it
          int64_t at = p.n - base - 1;
          if (b < at) at = b;
          const bool mine = p.n == 0 ? t == 0 : at >= 0 && at < valid;
          if (!mine) continue;
          if (p.empty_rule == AKX__SEGMENT_EMPTY_VALUE) finish_store_at<Op>(S::acc_identity(), empty_finish, out);
          else if (p.empty_rule == AKX__SEGMENT_EMPTY_MINUS_ONE) gst(static_cast<int64_t *>(out), (int64_t)-1);
        }
      }
    }
    // The tile's arrivals, one a kind (split_arrive): the lowest segments, the aggregates of
    // two block min-scans (every thread holds them).
    __syncthreads();
    (void)block_scan_exclusive<MinScan>(lead, max_scratch, &lead);
    __syncthreads();
    (void)block_scan_exclusive<MinScan>(trail, max_scratch, &trail);
    // Two threads (of two warps where the block has them): one thread's second fence would
    // come after its first ticket, an acquire that chains the splits (docs/segmented.md).
    const int32_t trail_tid = bd > 32 ? 32 : 1;
    if (tid == 0 && lead != none) {  // its piece: from the tile's start to the segment's end
      int64_t q = segment_bound(p, lead + 1) - base;
      q = (q < valid ? q : valid) - 1;
      split_arrive<Op, Acc>(p, lead, t, E, tile.ld(layout.pos(q / ipt, (int32_t)(q % ipt))).v, false, jobs, 0);
    }
    if (tid == trail_tid && trail != none)  // its piece: from the segment's begin to the tile's end
      split_arrive<Op, Acc>(p, trail, t, E, tile.ld(layout.pos((valid - 1) / ipt, (int32_t)((valid - 1) % ipt))).v,
                            true, jobs, 1);
    // The splits whose last piece this tile brought: folded by warp 0 in the documented order,
    // after every arrival of the tile (their releases come before its acquire, so that no
    // release of a split carries another split's wait: one dependent step, however many splits).
    __syncthreads();
    const bool finishing = jobs.ld(0) >= 0 || jobs.ld(3) >= 0;
    if (finishing && tid == 0) split_fences::acquire();  // every piece, released before its ticket
    __syncthreads();
    if (finishing && tid < 32)
      for (int k = 0; k < 2; ++k)
        if (jobs.ld(3 * k) >= 0) split_finish<Op, Acc>(p, jobs.ld(3 * k), jobs.ld(3 * k + 1), jobs.ld(3 * k + 2), dst + jobs.ld(3 * k) * step);
  } else {
    unsigned char *dst = static_cast<unsigned char *>(p.dst);
    const int64_t step = p.dst_stride * (int64_t)p.dst_size;
    const long long count = valid > 0 ? consts.ld(c_ends) : 0;
    for (long long j = tid; j < count; j += bd) {
      const long long r = r_base + j;
      if (r >= p.capacity) break;
      const int64_t q = ends.ld(j);
      const int64_t run = q / ipt;
      const int32_t k = (int32_t)(q - run * ipt);
      finish_store_at<Op>(tile.ld(layout.pos(run, k)).v, p.finish, dst + r * step);
      segment_key_store(p, r, kbuf.ld(klayout.pos(run, k)));
    }
  }
}

// The kernels: the plan by value (src/cuda/segmented_runtime.cu passes the same bytes).
template <class Src, class Acc, class Op, bool ByKeys>
AKX_GLOBAL AKX_LAUNCH_BOUNDS_MIN(AKX_MAX_BLOCK_SCAN, AKX_MIN_BLOCKS_SCAN_TILE)
void segmented_reduce_kernel(akx__segmented_plan p) {
  grid_dependency_wait();  // PDL (kernels/akx/device.cuh): before the first global access
  grid_dependents_launch();
  segment_tile_body<Src, void, Acc, Op, ByKeys>(p);
}
template <class Src, class Dst, class Acc, class Op, bool ByKeys>
AKX_GLOBAL AKX_LAUNCH_BOUNDS_MIN(AKX_MAX_BLOCK_SCAN, AKX_MIN_BLOCKS_SCAN_TILE)
void segmented_scan_kernel(akx__segmented_plan p) {
  grid_dependency_wait();
  grid_dependents_launch();
  segment_tile_body<Src, Dst, Acc, Op, ByKeys>(p);
}

#if !defined(__CUDACC_RTC__)  // host code: NVRTC compiles the kernels alone
// The family's kernels as its launch sequence calls them (as kernels/akx/scan.cuh's
// scan_kernels): Dst void for the reductions.
template <class Src, class Dst, class Acc, class Op>
struct segmented_kernels {
  akx_status init(void *status, int64_t tiles, void *stream) const {
    return scan_kernels<void, void, void, void>{}.init(status, tiles, stream);
  }
  akx_status tile(const akx__segmented_plan &p, void *stream) const {
    const dim3 grid((unsigned)p.tiles), block((unsigned)p.block_size);
    const size_t smem = (size_t)p.smem_bytes;
    if constexpr (is_same<Dst, void>::value) {
      if (p.by_keys)
        return AKX_LAUNCH((with_loads_in_flight(reduce_by_key_info, scan_load_batch<Acc>,
                                                p.items_per_thread)),
                          (segmented_reduce_kernel<Src, Acc, Op, true>), grid, block, smem, stream, p);
      return AKX_LAUNCH((with_loads_in_flight(segmented_reduce_info, scan_load_batch<Acc>,
                                              p.items_per_thread)),
                        (segmented_reduce_kernel<Src, Acc, Op, false>), grid, block, smem, stream, p);
    } else {
      if (p.by_keys)
        return AKX_LAUNCH((with_loads_in_flight(scan_by_key_info, scan_load_batch<Acc>,
                                                p.items_per_thread)),
                          (segmented_scan_kernel<Src, Dst, Acc, Op, true>), grid, block, smem, stream, p);
      return AKX_LAUNCH((with_loads_in_flight(segmented_scan_info, scan_load_batch<Acc>,
                                              p.items_per_thread)),
                        (segmented_scan_kernel<Src, Dst, Acc, Op, false>), grid, block, smem, stream, p);
    }
  }
};

// The one launch sequence, for every set of kernels K: the status reset only when the
// workspace may hold foreign bytes there (kernels/akx/lookback.cuh), then the tiles.
template <class K>
akx_status segmented_launch_with(const akx__segmented_plan &p, const K &k, void *stream) {
  if (p.tiles == 0) return AKX_SUCCESS;
  if (p.reset_status) AKX_TRY(k.init(p.status, p.reset_flags, stream));
  return k.tile(p, stream);
}
template <class Src, class Acc, class Op>
akx_status segmented_reduce_launch(const akx__segmented_plan &p, void *stream) {
  return segmented_launch_with(p, segmented_kernels<Src, void, Acc, Op>{}, stream);
}
template <class Src, class Dst, class Acc, class Op>
akx_status segmented_scan_launch(const akx__segmented_plan &p, void *stream) {
  return segmented_launch_with(p, segmented_kernels<Src, Dst, Acc, Op>{}, stream);
}
#endif

}  // namespace akx
