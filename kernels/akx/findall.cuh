// findall: 0-based positions (memory order) of the nonzero elements, in one pass over the
// source: the tile scan of kernels/akx/scan_tile.cuh over int64 flags, whose results are each
// element's output slot; the striped store scatters the positions of flagged elements
// (consecutive flagged elements, consecutive slots: the stores of a warp stay together).
// The last tile stores the total for the host (snprintf-style: the count is the total even
// when the capacity is smaller; at most capacity positions are written). A piece of a longer
// array (akx_findall_piece) stores its positions moved to the whole array's.
#pragma once
#include "akx/scan.cuh"

namespace akx {

// Opts in to shared memory above 48 KiB, as the scan tiles (kernels/akx/scan_tile.cuh).
constexpr kernel_info findall_info{"findall_tile", AKX_MAX_BLOCK_SCAN, 40, scan_load_batch<long long>, true};

template <class Src>
struct findall_policy {
  using scan = plain_scan<op_add, long long>;
  using Acc = long long;
  static constexpr long long flag = (long long)(1ull << 62);  // slots stay below 2^62
  const Src *src;
  akx__index_map map;  // position -> element offset
  long long *indices;
  int64_t capacity;
  int64_t n, total;
  int64_t d_slice, d_i;
  akx__positions at;  // where the positions sit in a whole array ({0, 0, 0}: their own)

  AKX_DEVICE Acc load(const slice_cursor &c) const {
    return nonzero(gld_wide(src + index_map_offset(map, c.i))) ? 1 : 0;
  }
  template <class X>
  AKX_DEVICE static bool nonzero(const X &x) {
    if constexpr (is_cplx_v<X>) return widen(x.re) != 0 || widen(x.im) != 0;
    else if constexpr (is_same<X, bool>::value) return x;
    else return widen(x) != 0;
  }
  AKX_DEVICE Acc emit(const Acc &before, const Acc &, const Acc &x, bool) const {
    return x ? (before | flag) : before;
  }
  AKX_DEVICE void store(const slice_cursor &, const Acc &v, int64_t position) const {
    if (v & flag) {
      const long long slot = v & ~flag;
      if (slot < capacity)
        gst(indices + slot, (long long)(at.base + position + (at.block > 0 ? idiv(position, at.block) * at.skip : 0)));
    }
  }
  AKX_DEVICE void finish(const Acc &total_count, bool last, lookback_header *head) const {
    if (last) gst(&head->count, total_count);
  }

  AKX_HD_INLINE static findall_policy from_plan(const akx__findall_plan &p) {
    findall_policy pol;
    pol.src = static_cast<const Src *>(p.src);
    pol.map = p.src_map;
    pol.indices = reinterpret_cast<long long *>(p.indices);
    pol.capacity = p.capacity;
    pol.n = p.n;
    pol.total = p.n;
    pol.d_slice = 0;
    pol.d_i = p.block_size;
    pol.at = p.positions;
    return pol;
  }
};

#if !defined(__CUDACC_RTC__)  // host code: NVRTC compiles the kernels alone
// findall_policy<Src>'s C layout, whatever Src (src/cuda/runtime_kernels.cu writes it).
struct findall_policy_c {
  const void *src;
  akx__index_map map;
  long long *indices;
  int64_t capacity, n, total, d_slice, d_i;
  akx__positions at;
};
static_assert(sizeof(findall_policy<double>) == sizeof(findall_policy_c) &&
                  __builtin_offsetof(findall_policy<double>, at) == __builtin_offsetof(findall_policy_c, at),
              "findall_policy's layout is findall_policy_c's");

// findall's kernels as its launch sequence calls them (as kernels/akx/scan.cuh's scan_kernels).
template <class Src>
struct findall_kernels {
  akx_status init(void *status, int64_t tiles, void *stream) const {
    return scan_kernels<void, void, void, void>{}.init(status, tiles, stream);
  }
  akx_status tile(const akx__findall_plan &p, void *stream) const {
    return AKX_LAUNCH((with_loads_in_flight(resourced<Src, void, void, void>(findall_info),
                                            scan_load_batch<long long>, p.items_per_thread)),
                      (scan_tile_kernel<findall_policy<Src>>),
                      dim3((unsigned)p.tiles), dim3((unsigned)p.block_size), (size_t)p.smem_bytes, stream,
                      findall_policy<Src>::from_plan(p), p.status, p.tiles, p.items_per_thread,
                      scan_layout::make(p.layout, p.items_per_thread, (int32_t)sizeof(long long)), p.epoch,
                      p.nodes_at);
  }
};

template <class K>
akx_status findall_launch_with(const akx__findall_plan &p, const K &k, void *stream) {
  if (p.n == 0) return AKX_SUCCESS;
  // The plan sized and checked the tile's shared memory (src/scan/tile_shared.cpp); the
  // status is reset only when it may hold foreign bytes (kernels/akx/lookback.cuh).
  if (p.reset_status) AKX_TRY(k.init(p.status, p.reset_flags, stream));
  return k.tile(p, stream);
}

template <class Src>
akx_status findall_launch(const akx__findall_plan &p, void *stream) {
  return findall_launch_with(p, findall_kernels<Src>{}, stream);
}
#endif

}  // namespace akx
