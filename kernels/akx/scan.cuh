// The scan family's launcher: the shape the host chose (src/scan/scan.c), its kernels.
#pragma once
#include "akx/scan_carry.cuh"
#include "akx/scan_columns.cuh"
#if !defined(__CUDACC_RTC__)
#include "akx/fail.h"
#endif

namespace akx {

// A tile kernel takes its policy (P::from_plan of the plan) as a parameter: built inside the
// kernel, its index maps became a 192-byte stack frame in every instance (CUDA 13.0). Its
// layout is C's whatever the types (scan_policy_layout below), which a launcher that knows no
// C++ type (src/cuda/runtime_kernels.cu) writes byte by byte.
template <class P>
AKX_GLOBAL AKX_LAUNCH_BOUNDS_MIN(AKX_MAX_BLOCK_SCAN, AKX_MIN_BLOCKS_SCAN_TILE)
void scan_tile_kernel(P p, void *status, int64_t tiles, int32_t ipt, scan_layout layout, uint32_t epoch,
                      int64_t nodes_at) {
  grid_dependency_wait();  // PDL (kernels/akx/device.cuh): before the first global access
  grid_dependents_launch();
  scan_tile_body(p, status, tiles, ipt, layout, epoch, nodes_at);
}

// scan_policy<Src, Dst, S> as bytes: the fields before the result rule, the result rule
// (scan_columns.cuh: two bools, then the accumulator at its alignment), the cursor steps.
struct scan_policy_head {
  const void *src;
  void *dst;
  int64_t n, total, src_step, dst_step;
  akx__index_map src_outer, dst_outer;
};
struct scan_policy_layout {
  size_t result, steps, size;
  AKX_HD_INLINE static constexpr size_t up(size_t x, size_t a) { return (x + a - 1) / a * a; }
  AKX_HD_INLINE static constexpr scan_policy_layout of(size_t acc_size, size_t acc_align) {
    const size_t r = up(sizeof(scan_policy_head), acc_align);
    const size_t st = up(r + scan_result_size(acc_size, acc_align), 8);
    return scan_policy_layout{r, st, up(st + 16, acc_align > 8 ? acc_align : 8)};
  }
};
#if !defined(__CUDACC_RTC__)  // checked by nvcc and the host compiler (NVRTC refuses the offsetof)
template <class Src, class Dst, class S>
constexpr bool scan_policy_layout_holds() {
  using P = scan_policy<Src, Dst, S>;
  using A = typename S::value_type;
  constexpr scan_policy_layout l = scan_policy_layout::of(sizeof(A), alignof(A));
  return sizeof(P) == l.size && __builtin_offsetof(P, result) == l.result && __builtin_offsetof(P, d_slice) == l.steps;
}
static_assert(scan_policy_layout_holds<float, float, plain_scan<op_add, float>>() &&
                  scan_policy_layout_holds<int8_t, int64_t, seg_scan<op_add, int64_t>>() &&
                  scan_policy_layout_holds<c128, c128, seg_scan<op_mul, c128>>() &&
                  scan_policy_layout_holds<f16, f16, plain_scan<op_max, f16>>() &&
                  scan_policy_layout_holds<bool, bool, plain_scan<op_or, bool>>(),
              "scan_policy's layout is scan_policy_layout's");
#endif

// The look-back reset's grid: a thread per tile's flag, at most 1024 blocks of 256.
AKX_HD_INLINE unsigned scan_init_blocks(int64_t tiles) {
  int64_t blocks = (tiles + 255) / 256;
  if (blocks > 1024) blocks = 1024;
  if (blocks < 1) blocks = 1;
  return (unsigned)blocks;
}

#if !defined(__CUDACC_RTC__)  // host code: NVRTC compiles the kernels alone
// A scan's kernels as the launch sequence below calls them: K is scan_kernels<...> (the
// templates themselves: the prebuilt kernels, and the sim's run-time units) or a backend's
// handles into a module compiled at run time (src/cuda/runtime_kernels.cu). Each method takes
// the launch's configuration and the kernel's C arguments.
template <class Src, class Dst, class Acc, class Op>
struct scan_kernels {
  akx_status init(void *status, int64_t tiles, void *stream) const {
    const lookback_status<lookback_header> st = lookback_status<lookback_header>::at(status, 0);
    return AKX_LAUNCH((scan_init_info), scan_init<lookback_header>,
                      dim3(scan_init_blocks(tiles)), dim3(256), 0, stream, st.head, st.flags, tiles);
  }
  akx_status tile(bool segmented, const akx__scan_plan &p, void *stream) const {
    const dim3 grid((unsigned)p.tiles), block((unsigned)p.block_size);
    const scan_layout layout = scan_layout::make(p.layout, p.items_per_thread, (int32_t)sizeof(Acc));
    if (segmented)
      return AKX_LAUNCH((with_loads_in_flight(scan_slices_info, scan_load_batch<Acc>,
                                              p.items_per_thread)),
                        (scan_tile_kernel<scan_policy<Src, Dst, seg_scan<Op, Acc>>>), grid, block,
                        (size_t)p.smem_bytes, stream, scan_policy<Src, Dst, seg_scan<Op, Acc>>::from_plan(p),
                        p.status, p.tiles, p.items_per_thread, layout, p.epoch, p.nodes_at);
    return AKX_LAUNCH((with_loads_in_flight(scan_tile_info, scan_load_batch<Acc>,
                                            p.items_per_thread)),
                      (scan_tile_kernel<scan_policy<Src, Dst, plain_scan<Op, Acc>>>), grid, block,
                      (size_t)p.smem_bytes, stream, scan_policy<Src, Dst, plain_scan<Op, Acc>>::from_plan(p),
                      p.status, p.tiles, p.items_per_thread, layout, p.epoch, p.nodes_at);
  }
  // A piece's tile launches (kernels/akx/scan_carry.cuh): user ops only (akx_scan_piece), whose
  // units are compiled at run time, so that no prebuilt instance holds the kernel.
  akx_status carried(const akx__scan_plan &p, int32_t mode, void *stream) const {
    if constexpr (is_user_op<Op>::value) {
      using P = scan_carry_policy<Src, Dst, seg_scan<Op, Acc>>;
      const dim3 grid((unsigned)p.tiles), block((unsigned)p.block_size);
      const scan_layout layout = scan_layout::make(p.layout, p.items_per_thread, (int32_t)sizeof(Acc));
      return AKX_LAUNCH((with_loads_in_flight(scan_carried_info, scan_load_batch<Acc>,
                                              p.items_per_thread)),
                        (scan_tile_kernel<P>), grid, block, (size_t)p.smem_bytes, stream,
                        P{scan_carry_params::from_plan(p, mode)}, p.status, p.tiles, p.items_per_thread, layout,
                        p.epoch, p.nodes_at);
    } else {
      (void)p, (void)mode, (void)stream;
      return akx__fail(AKX_ERROR_INTERNAL, "a built-in op reached the carried tile scan (akx_scan_piece takes "
                       "it for user ops only)");
    }
  }
  akx_status columns(dim3 grid, dim3 block, const akx__scan_plan &p, int32_t mode, void *stream) const {
    scan_result<plain_scan<Op, Acc>> result;
    result.exclusive = p.exclusive != 0;
    result.has_init = p.has_init != 0;
    result.init = bitcast_<Acc>(p.init);
    return AKX_LAUNCH((scan_columns_info), (scan_columns<Src, Dst, Op, Acc>),
                      grid, block, 0, stream, p, result, mode);
  }
  akx_status carry(dim3 grid, dim3 block, const akx__scan_plan &p, void *stream) const {
    return AKX_LAUNCH((scan_columns_carry_info), (scan_columns_carry<Op, Acc>),
                      grid, block, 0, stream, p);
  }
};

// The one launch sequence of a scan, for every set of kernels K.
template <class K>
akx_status scan_launch_with(const akx__scan_plan &p, const K &k, void *stream) {
  // A carry pass reads only its rows: an empty piece's totals are its identities.
  if (p.slices == 0 || (p.n == 0 && p.step != AKX__SCAN_STEP_CARRY)) return AKX_SUCCESS;
  switch (p.shape) {
    case AKX__SCAN_WHOLE:
    case AKX__SCAN_SLICES:
      // The plan sized and checked the tile's shared memory (src/scan/tile_shared.cpp). The
      // status is reset only when the workspace may hold foreign bytes there
      // (kernels/akx/lookback.cuh): otherwise the call is the tile launch alone.
      if (p.reset_status) AKX_TRY(k.init(p.status, p.reset_flags, stream));
      if (p.step == AKX__SCAN_STEP_TOTALS || p.step == AKX__SCAN_STEP_CARRIED)
        return k.carried(p, (int32_t)(p.step == AKX__SCAN_STEP_TOTALS ? carry_totals : carry_scan), stream);
      return k.tile(p.shape == AKX__SCAN_SLICES, p, stream);
    case AKX__SCAN_COLUMNS: {
      const int64_t threads = p.slices * p.chunks;
      const int32_t bd = p.block_size;
      const dim3 grid((unsigned)((threads + bd - 1) / bd)), block((unsigned)bd);
      const dim3 carry_grid((unsigned)((p.slices + bd - 1) / bd));
      switch (p.step) {  // one pass (akx_scan_piece, src/scan/scan_piece.c)
        case AKX__SCAN_STEP_REDUCE: return k.columns(grid, block, p, (int32_t)columns_reduce, stream);
        case AKX__SCAN_STEP_CARRY: return k.carry(carry_grid, block, p, stream);
        case AKX__SCAN_STEP_SCAN: return k.columns(grid, block, p, (int32_t)columns_scan_carried, stream);
        default: break;
      }
      if (p.chunks == 1) return k.columns(grid, block, p, (int32_t)columns_scan, stream);
      AKX_TRY(k.columns(grid, block, p, (int32_t)columns_reduce, stream));
      AKX_TRY(k.carry(carry_grid, block, p, stream));
      return k.columns(grid, block, p, (int32_t)columns_scan_from_carry, stream);
    }
  }
  return akx__fail(AKX_ERROR_INTERNAL, "scan shape %d is not a shape", (int)p.shape);
}

template <class Src, class Dst, class Acc, class Op>
akx_status scan_launch(const akx__scan_plan &p, void *stream) {
  return scan_launch_with(p, scan_kernels<Src, Dst, Acc, Op>{}, stream);
}
#endif

}  // namespace akx
