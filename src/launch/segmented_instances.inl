// The segmented family's kernels of one source dtype (AKX_SRC_DTYPE) for one backend: the
// resolvers akx__<backend>_segmented_{reduce,scan}_<dtype> (src/launch/instance_table.inl): the
// reductions' per (accumulator, op), the map and dst at run time; the scans' by the scans' rule
// (akx::scan_prebuilt: stored to the accumulator's dtype or the source's). Both prebuild the
// AUTO accumulator alone (the family list's prebuilt column, src/core/families.h).
#include "akx/segment_tile.cuh"
#include "instance_table.inl"

#if !defined(__CUDACC_RTC__)
namespace {
namespace AKX_INSTANCES {
struct segmented_reduce_instances {
  template <class S, class A, class O>
  static constexpr akx__launcher instance() { return &erased<akx__segmented_plan, &akx::segmented_reduce_launch<S, A, O>>; }
};
struct segmented_scan_instances {
  template <class S, class D, class A, class O>
  static constexpr akx__launcher instance() {
    return &erased<akx__segmented_plan, &akx::segmented_scan_launch<S, D, A, O>>;
  }
};
}  // namespace AKX_INSTANCES
}  // namespace

AKX_MODULE_EXPORT akx__launcher AKX_ENTRY_NAME(segmented_reduce)(const akx__combination *c) {
  return AKX_INSTANCES::reduce_resolve<AKX_INSTANCES::segmented_reduce_instances, AKX__FAMILY_SEGMENTED_REDUCE>(c);
}

AKX_MODULE_EXPORT akx__launcher AKX_ENTRY_NAME(segmented_scan)(const akx__combination *c) {
  return AKX_INSTANCES::scan_resolve<AKX_INSTANCES::segmented_scan_instances, AKX__FAMILY_SEGMENTED_SCAN>(c);
}
#endif  // !__CUDACC_RTC__
