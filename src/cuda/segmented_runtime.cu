// The segmented family's launches through a module compiled at run time
// (src/cuda/runtime_kernels.cu loads it): kernels/akx/segment_tile.cuh's one launch sequence
// over the module's kernels, found by key; the plan goes by value, as to the prebuilt kernels.
#include "akx/segment_tile.cuh"
#include "runtime_module.hpp"

namespace {
using akx::cuda_runtime::cuda_module;
using akx::cuda_runtime::handles;
using akx::cuda_runtime::in_family;

static_assert(in_family<AKX__FAMILY_SEGMENTED_REDUCE>(akx::scan_init_info) &&
                  in_family<AKX__FAMILY_SEGMENTED_REDUCE>(akx::segmented_reduce_info) &&
                  in_family<AKX__FAMILY_SEGMENTED_REDUCE>(akx::reduce_by_key_info),
              "segmented_reduce's run-time launches ask for a kernel its family list does not hold");
static_assert(in_family<AKX__FAMILY_SEGMENTED_SCAN>(akx::scan_init_info) &&
                  in_family<AKX__FAMILY_SEGMENTED_SCAN>(akx::segmented_scan_info) &&
                  in_family<AKX__FAMILY_SEGMENTED_SCAN>(akx::scan_by_key_info),
              "segmented_scan's run-time launches ask for a kernel its family list does not hold");

struct segmented_handles : handles {
  bool reduce;
  akx_status init(void *status, int64_t tiles, void *s) const {
    const auto st = akx::lookback_status<akx::lookback_header>::at(status, 0);
    return go(akx::scan_init_info, dim3(akx::scan_init_blocks(tiles)), dim3(256), 0, s, st.head, st.flags, tiles);
  }
  akx_status tile(const akx__segmented_plan &p, void *s) const {
    const akx::kernel_info &info = reduce ? (p.by_keys ? akx::reduce_by_key_info : akx::segmented_reduce_info)
                                          : (p.by_keys ? akx::scan_by_key_info : akx::segmented_scan_info);
    return go(info, dim3((unsigned)p.tiles), dim3((unsigned)p.block_size), (size_t)p.smem_bytes, s, p);
  }
};
}  // namespace

extern "C" akx_status akx__cuda_runtime_segmented_reduce(const akx_context *ctx, const void *m, const void *plan) {
  const auto &p = *static_cast<const akx__segmented_plan *>(plan);
  return akx::segmented_launch_with(p, segmented_handles{{static_cast<const cuda_module *>(m)}, true}, ctx->stream);
}
extern "C" akx_status akx__cuda_runtime_segmented_scan(const akx_context *ctx, const void *m, const void *plan) {
  const auto &p = *static_cast<const akx__segmented_plan *>(plan);
  return akx::segmented_launch_with(p, segmented_handles{{static_cast<const cuda_module *>(m)}, false}, ctx->stream);
}
