// The entries of every kernel family, for each backend: a table over the source dtype into
// the per-dtype instance files (CMakeLists.txt, akx_kernel_instances), one dispatch for all
// (src/core/kernel_entries.inc). What a family's kernels cannot report from the device is
// refused here, before anything launches.
#include "internal.h"
#include "kernel_entries.hpp"
#include "akx/dtype_list.h"

namespace {
template <class Plan>
using entry = akx_status (*)(const Plan *, void *);

template <class Plan>
akx_status dispatch(const entry<Plan> (&table)[AKX_DTYPE_COUNT], const Plan *p, void *stream) {
  AKX_TRY(akx::entry_check(*p));
  return table[akx::source_dtype(*p)](p, stream);
}

// The list runs in enum order, so a table built from it is indexed by akx_dtype.
#define AKX_X_(D, T, N, S) static_assert(D == __COUNTER__ - akx_counter_base_ - 1, "dtype list order");
constexpr int akx_counter_base_ = __COUNTER__;
AKX_DTYPE_LIST(AKX_X_)
#undef AKX_X_
}  // namespace

#if AKX_PREBUILT
#define AKX_ENTRY_BACKEND sim
#include "kernel_entries.inc"
#undef AKX_ENTRY_BACKEND
#endif
#if defined(AKX_HAVE_CUDA) && AKX_PREBUILT
#define AKX_ENTRY_BACKEND cuda
#include "kernel_entries.inc"
#undef AKX_ENTRY_BACKEND
#endif

#if !AKX_PREBUILT
// Built with -DAKX_PREBUILT=OFF: no kernel is compiled ahead of time. The sim compiles every
// family's at run time (src/sim/backend_sim.cpp never calls these); the CUDA backend's run-time
// path (NVRTC, src/jit/nvrtc.h) does not launch yet.
#define AKX_NO_PREBUILT_(B, F, Plan)                                                          \
  extern "C" akx_status akx__##B##_##F##_launch(const Plan *, void *) {                      \
    return akx__fail(AKX_ERROR_UNSUPPORTED, "libakx was built with AKX_PREBUILT=OFF: the "      \
                     #B " backend has no " #F " kernel%s", #B[0] == 'c' ? " (run-time CUDA "  \
                     "kernels are compiled by NVRTC but not launched yet)" : "");               \
  }
AKX_NO_PREBUILT_(sim, reduce_whole, akx__reduce_whole_plan)
AKX_NO_PREBUILT_(sim, reduce_dims, akx__reduce_dims_plan)
AKX_NO_PREBUILT_(sim, scan, akx__scan_plan)
AKX_NO_PREBUILT_(sim, findall, akx__findall_plan)
#if defined(AKX_HAVE_CUDA)
AKX_NO_PREBUILT_(cuda, reduce_whole, akx__reduce_whole_plan)
AKX_NO_PREBUILT_(cuda, reduce_dims, akx__reduce_dims_plan)
AKX_NO_PREBUILT_(cuda, scan, akx__scan_plan)
AKX_NO_PREBUILT_(cuda, findall, akx__findall_plan)
#endif
#endif
