// The flagged selections' launches through a module compiled at run time
// (src/cuda/runtime_kernels.cu loads it): kernels/akx/select_flagged.cuh's launch sequence over
// the module's kernels, found by key; the plan goes by value, as to the prebuilt kernels.
#include "akx/select_flagged.cuh"
#include "runtime_module.hpp"

namespace {
using akx::cuda_runtime::cuda_module;
using akx::cuda_runtime::handles;
using akx::cuda_runtime::in_family;

static_assert(in_family<AKX__FAMILY_SELECT_FLAGGED>(akx::scan_init_info) &&
                  in_family<AKX__FAMILY_SELECT_FLAGGED>(akx::select_flagged_info) &&
                  in_family<AKX__FAMILY_SELECT_FLAGGED>(akx::partition_flagged_info),
              "select_flagged's run-time launches ask for a kernel its family list does not hold");

struct select_flagged_handles : handles {
  akx_status init(void *status, int64_t tiles, void *s) const {
    const auto st = akx::lookback_status<akx::lookback_header>::at(status, 0);
    return go(akx::scan_init_info, dim3(akx::scan_init_blocks(tiles)), dim3(256), 0, s, st.head, st.flags, tiles);
  }
  akx_status tile(const akx__select_plan &p, void *s) const {
    const akx::kernel_info &info =
        p.mode == AKX__SELECT_PARTITION ? akx::partition_flagged_info : akx::select_flagged_info;
    return go(info, dim3((unsigned)p.tiles), dim3((unsigned)p.block_size), (size_t)p.smem_bytes, s, p);
  }
};
}  // namespace

extern "C" akx_status akx__cuda_runtime_select_flagged(const akx_context *ctx, const void *m, const void *plan) {
  const auto &p = *static_cast<const akx__select_plan *>(plan);
  return akx::select_flagged_launch_with(p, select_flagged_handles{{static_cast<const cuda_module *>(m)}},
                                         ctx->stream);
}
