// The scan family's launcher: the shape the host chose (src/scan/scan.c), its kernels.
#pragma once
#include "akx/scan_columns.cuh"
#if !defined(__CUDACC_RTC__)
#include "akx/fail.h"
#endif

namespace akx {

template <class P>
AKX_GLOBAL AKX_LAUNCH_BOUNDS_MIN(AKX_MAX_BLOCK_SCAN, AKX_MIN_BLOCKS_SCAN_TILE)
void scan_tile_kernel(P p, void *status, int64_t tiles, int32_t ipt, scan_layout layout) {
  scan_tile_body(p, status, tiles, ipt, layout);
}

#if !defined(__CUDACC_RTC__)  // host code: NVRTC compiles the kernels alone
template <class T>
akx_status scan_launch_init(void *status, int64_t tiles, void *stream) {
  const lookback_status<T> st = lookback_status<T>::at(status, tiles);
  int64_t blocks = (tiles + 255) / 256;
  if (blocks > 1024) blocks = 1024;
  if (blocks < 1) blocks = 1;
  return AKX_LAUNCH((resourced<void, void, void, void>(scan_init_info)), scan_init<lookback_header>,
                    dim3((unsigned)blocks), dim3(256), 0, stream,
                    st.head, st.flags, tiles);
}

template <class Src, class Dst, class S>
akx_status scan_launch_tiles(const akx__scan_plan &p, const kernel_info &info, void *stream) {
  using Acc = typename S::value_type;
  // The plan sized and checked the tile's shared memory (src/scan/tile_shared.cpp).
  const scan_layout layout = scan_layout::make(p.layout, p.items_per_thread, (int32_t)sizeof(Acc));
  const size_t smem = (size_t)p.smem_bytes;
  scan_policy<Src, Dst, S> pol;
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
  AKX_TRY(scan_launch_init<typename S::T>(p.status, p.tiles, stream));
  return AKX_LAUNCH(info, (scan_tile_kernel<scan_policy<Src, Dst, S>>), dim3((unsigned)p.tiles),
                    dim3((unsigned)p.block_size), smem, stream, pol, p.status, p.tiles,
                    p.items_per_thread, layout);
}

template <class Src, class Dst, class Acc, class Op>
akx_status scan_launch(const akx__scan_plan &p, void *stream) {
  if (p.n == 0 || p.slices == 0) return AKX_SUCCESS;
  switch (p.shape) {
    case AKX__SCAN_WHOLE:
      return scan_launch_tiles<Src, Dst, plain_scan<Op, Acc>>(
          p, resourced<Src, Dst, Acc, Op>(scan_tile_info), stream);
    case AKX__SCAN_SLICES:
      return scan_launch_tiles<Src, Dst, seg_scan<Op, Acc>>(
          p, resourced<Src, Dst, Acc, Op>(scan_slices_info), stream);
    case AKX__SCAN_COLUMNS: {
      scan_result<plain_scan<Op, Acc>> result;
      result.exclusive = p.exclusive != 0;
      result.has_init = p.has_init != 0;
      result.init = bitcast_<Acc>(p.init);
      const int64_t threads = p.slices * p.chunks;
      const int32_t bd = p.block_size;
      const int64_t blocks = (threads + bd - 1) / bd;
      const auto kernel = scan_columns<Src, Dst, Op, Acc>;
      const kernel_info info = resourced<Src, Dst, Acc, Op>(scan_columns_info);
      if (p.chunks == 1)
        return AKX_LAUNCH(info, kernel, dim3((unsigned)blocks), dim3((unsigned)bd), 0,
                          stream, p, result, (int32_t)columns_scan);
      AKX_TRY(AKX_LAUNCH(info, kernel, dim3((unsigned)blocks), dim3((unsigned)bd), 0,
                         stream, p, result, (int32_t)columns_reduce));
      const int64_t carry_blocks = (p.slices + bd - 1) / bd;
      AKX_TRY(AKX_LAUNCH((resourced<void, void, Acc, Op>(scan_columns_carry_info)),
                         (scan_columns_carry<Op, Acc>),
                         dim3((unsigned)carry_blocks), dim3((unsigned)bd), 0, stream,
                         static_cast<Acc *>(p.status), p.slices, p.chunks));
      return AKX_LAUNCH(info, kernel, dim3((unsigned)blocks), dim3((unsigned)bd), 0, stream, p,
                        result, (int32_t)columns_scan_from_carry);
    }
  }
  return akx__fail(AKX_ERROR_INTERNAL, "scan shape %d is not a shape", (int)p.shape);
}
#endif

}  // namespace akx
