// Tile scans with deterministic look-back (docs/scan_tiles.md): one tile per
// block, taken from a ticket. The tile body is shared by the whole-array scan (one
// sequence), the slice scan (many sequences of n elements back to back in index space,
// scanned as one segmented sequence: short slices share a tile, long ones span tiles) and a
// piece's lines with a carry read from the device (kernels/akx/scan_carry.cuh); a policy says
// how elements are loaded and results stored. (findall has its own selection tile,
// kernels/akx/select_tile.cuh, over the same look-back.)
//   1. striped load: thread t takes elements t, t + bd, ... (coalesced), converted to the
//      accumulator, into shared memory at kernels/akx/scan_layout.cuh's positions;
//   2. each thread folds its run of ipt consecutive elements;
//   3. block scan of the run totals (warp shuffles, kernels/akx/block_scan.cuh);
//   4. warp 0 publishes the tile's node and gets the tile's prefix (kernels/akx/lookback.cuh);
//   5. each thread rescans its run from its prefix, writing results in place;
//   6. striped store.
#pragma once
#include "akx/block_scan.cuh"
#include "akx/divide.cuh"
#include "akx/lookback.cuh"
#include "akx/scan_layout.cuh"

namespace akx {

// Loads in flight per thread in the striped load: a batch of this many elements is loaded
// into registers, as accumulators, before any is stored to shared memory (ipt is a run-time
// value, so the compiler cannot hoist the loads of an unknown trip count by itself). 16 for
// accumulators of 4 bytes or less: a float32 tile's 16 items all in flight, as CUB's sm_90
// scan policy keeps its 15 (with 8, a 10^6 float32 scan had 2 MB in flight where the H200
// needs 6 MB: the model priced its loads at a third of the bandwidth); 8 above (64 to 128
// bytes of registers), which is every item of the 8- and 16-byte tiles (tuning.c).
template <class Acc>
constexpr int scan_load_batch = sizeof(Acc) <= 4 ? 16 : 8;

// Launch bounds: the scan families' largest block (kernels/akx/block_limits.h). Registers: the
// kernels' classes (kernel_info.registers), the most ptxas gave any prebuilt instance for sm_90
// (CUDA 13.0) rounded up to 8 (bench/RESULTS.md, "Declared registers"). The tiles opt in to shared memory
// above 48 KiB: the runs of a large tile and the static scratch together may pass it
// (src/scan/tile_shared.cpp checks the sum against the device).
constexpr kernel_info scan_tile_info{"scan_tile", AKX_MAX_BLOCK_SCAN, 64, scan_load_batch<float>, true};
constexpr kernel_info scan_slices_info{"scan_slices", AKX_MAX_BLOCK_SCAN, 72, scan_load_batch<float>, true};

// Offset of slice s's first element.
AKX_HD_INLINE int64_t index_map_offset(const akx__index_map &m, int64_t s) {
  return mixed_radix_offset(s, m.ndim, m.shape, m.strides);
}

// (slice, i) of flat element f = slice * n + i, stepped by bd without a division per step.
struct slice_cursor {
  int64_t slice, i;
  AKX_DEVICE void start(int64_t f, int64_t n) { slice = idiv(f, n); i = f - slice * n; }
  AKX_DEVICE void step(int64_t d_slice, int64_t d_i, int64_t n) {
    slice += d_slice;
    i += d_i;
    if (i >= n) { i -= n; ++slice; }
  }
};

// What a scan result is: inclusive or exclusive, init applied once at the front of every
// sequence (init o x0 o ... o xi), kept in the accumulator until the store.
template <class S>
struct scan_result {
  using Acc = typename S::value_type;
  bool exclusive, has_init;
  Acc init;
  AKX_DEVICE Acc with_init(const Acc &v) const { return has_init ? S::combine(init, v) : v; }
  AKX_DEVICE Acc operator()(const typename S::T &before, const typename S::T &after,
                            bool head) const {
    if (!exclusive) return with_init(S::value(after));
    if (head) return has_init ? init : S::acc_empty();  // the empty prefix
    return with_init(S::value(before));
  }
};

// The scan policy: Src elements in, Dst elements out, S over the accumulator; from_plan builds
// it from the plan (kernels/akx/scan.cuh: the tile kernels' parameter, of a C layout).
template <class Src, class Dst, class S>
struct scan_policy {
  using scan = S;
  using Acc = typename S::value_type;
  const Src *src;
  Dst *dst;
  int64_t n, total;
  int64_t src_step, dst_step;
  akx__index_map src_outer, dst_outer;
  scan_result<S> result;
  // cursor steps for a stride of bd elements
  int64_t d_slice, d_i;

  AKX_DEVICE Acc load(const slice_cursor &c) const {
    return op_load<typename S::op, Acc>(gld_wide(src + index_map_offset(src_outer, c.slice) + c.i * src_step), c.i);
  }
  AKX_DEVICE void store(const slice_cursor &c, const Acc &v, int64_t) const {
    gst_wide(dst + index_map_offset(dst_outer, c.slice) + c.i * dst_step, op_store<typename S::op, Dst>(v));
  }
  AKX_DEVICE Acc emit(const typename S::T &before, const typename S::T &after, const Acc &,
                      bool head) const {
    return result(before, after, head);
  }
  AKX_DEVICE void finish(const typename S::T &, bool, lookback_header *) const {}

  AKX_HD_INLINE static scan_policy from_plan(const akx__scan_plan &p) {
    scan_policy pol;
    pol.src = static_cast<const Src *>(p.src);
    pol.dst = static_cast<Dst *>(p.dst);
    pol.n = p.n;
    pol.total = p.n * p.slices;
    pol.src_step = p.src_step;
    pol.dst_step = p.dst_step;
    pol.src_outer = p.src_outer;
    pol.dst_outer = p.dst_outer;
    pol.result.exclusive = p.exclusive != 0;
    pol.result.has_init = p.has_init != 0;
    pol.result.init = bitcast_<Acc>(p.init);
    pol.d_slice = p.block_size / p.n;
    pol.d_i = p.block_size % p.n;
    return pol;
  }
};

// epoch: the call's (kernels/akx/lookback.cuh): the status needs no reset between calls;
// status: the workspace's start, the nodes nodes_at bytes after it (lookback_status::at).
template <class P>
AKX_DEVICE void scan_tile_body(const P &p, void *status, int64_t tiles, int32_t ipt,
                               scan_layout layout, uint32_t epoch, int64_t nodes_at) {
  using S = typename P::scan;
  using T = typename S::T;
  using Acc = typename S::value_type;
  AKX_SHARED_DYNAMIC(wide<Acc>, tile);  // partials in one access each (device.cuh)
  AKX_SHARED(T, scratch, block_scan_scratch + 1);
  AKX_SHARED(unsigned long long, ticket, 1);
  const int32_t tid = (int32_t)threadIdx.x, bd = (int32_t)blockDim.x;
  const lookback_status<T> st = lookback_status<T>::at(status, nodes_at);
  const uint64_t t = draw_tile(st.head, tiles, ticket, "scan tile: a ticket past the tile count (the status "
                                                        "header was reset by another call mid-launch)");
  const int64_t tile_elems = (int64_t)bd * ipt;
  const int64_t base = (int64_t)t * tile_elems;
  const int64_t valid = p.total - base < tile_elems ? p.total - base : tile_elems;

  // 1. striped load, scan_load_batch loads in flight
  {
    constexpr int batch = scan_load_batch<Acc>;
    striped_walk w(tid, bd, ipt);
    slice_cursor c;
    c.start(base + tid, p.n);
    for (int32_t j0 = 0; j0 < ipt; j0 += batch) {
      Acc x[batch];
#pragma unroll
      for (int u = 0; u < batch; ++u) {
        const int64_t e = (int64_t)(j0 + u) * bd + tid;
        x[u] = S::acc_identity();
        if (j0 + u < ipt && e < valid) x[u] = p.load(c);
        if (j0 + u < ipt) c.step(p.d_slice, p.d_i, p.n);
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
  __syncthreads();

  // 2. the run's total; a head is the first element of a slice
  const int64_t run_first = base + (int64_t)tid * ipt;
  int64_t i0 = 0;
  if (S::segmented) i0 = run_first - idiv(run_first, p.n) * p.n;
  T total;
  {
    int64_t i = i0;
    total = S::make(tile.ld(layout.pos(tid, 0)).v, S::segmented && i == 0);
    for (int32_t k = 1; k < ipt; ++k) {
      if (S::segmented && ++i == p.n) i = 0;
      total = S::apply(total, S::make(tile.ld(layout.pos(tid, k)).v, S::segmented && i == 0));
    }
  }

  // 3. block scan of run totals
  T aggregate;
  const T run_prefix = block_scan_exclusive<S>(total, scratch, &aggregate);

  // 4. look-back
  if (tid < 32) {
    const T prefix = lookback<S>(st, tiles, t, aggregate, epoch);
    if (tid == 0) {
      scratch.st(block_scan_scratch, prefix);
      p.finish(S::apply(prefix, aggregate), t + 1 == (uint64_t)tiles, st.head);
    }
  }
  __syncthreads();
  const T tile_prefix = scratch.ld(block_scan_scratch);

  // 5. rescan the run from its prefix
  {
    T running = S::apply(tile_prefix, run_prefix);
    if (t == 0 && tid == 0) running = S::identity();  // nothing before the first element
    int64_t i = i0;
    for (int32_t k = 0; k < ipt; ++k) {
      if (S::segmented && k > 0 && ++i == p.n) i = 0;
      const bool head = S::segmented ? i == 0 : (t == 0 && tid == 0 && k == 0);
      const int64_t at = layout.pos(tid, k);
      const Acc x = tile.ld(at).v;
      const T after = S::apply(running, S::make(x, S::segmented && head));
      tile.st(at, wide<Acc>{p.emit(running, after, x, head)});
      running = after;
    }
  }
  __syncthreads();

  // 6. striped store
  {
    striped_walk w(tid, bd, ipt);
    slice_cursor c;
    c.start(base + tid, p.n);
    for (int32_t j = 0; j < ipt; ++j) {
      const int64_t e = (int64_t)j * bd + tid;
      if (e < valid) p.store(c, tile.ld(layout.pos(w.run, w.k)).v, base + e);
      w.next();
      c.step(p.d_slice, p.d_i, p.n);
    }
  }
}

}  // namespace akx
