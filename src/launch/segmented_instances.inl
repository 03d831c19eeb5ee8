// The segmented family's kernels of one source dtype (AKX_SRC_DTYPE) for one backend: the
// reductions' entry akx__<backend>_segmented_reduce_<dtype> (src/launch/reduce_instances.inl's
// ladder: per accumulator and op, the map and dst at run time) and the scans' entry
// akx__<backend>_segmented_scan_<dtype> (the scans' rule: akx::scan_prebuilt, stored to the
// accumulator's dtype or the source's; the rest compiled at run time). Both take the AUTO
// accumulator alone (src/core/families.h, akx__family_auto_acc_only).
#include "akx/segment_tile.cuh"
#define AKX_REDUCE_FAMILY segmented_reduce
#define AKX_REDUCE_PLAN akx__segmented_plan
#define AKX_REDUCE_LAUNCH akx::segmented_reduce_launch
#define AKX_REDUCE_SRC(p) (p).src_dtype
#define AKX_REDUCE_AUTO_ONLY 1  // src/core/families.h, akx__family_auto_acc_only
#include "reduce_instances.inl"

#if !defined(__CUDACC_RTC__)
namespace {
struct segmented_scan_launcher {
  template <class S, class D, class A, class O>
  static akx_status launch(const akx__segmented_plan &p, void *stream) {
    return akx::segmented_scan_launch<S, D, A, O>(p, stream);
  }
};
}  // namespace
#include "scan_ladder.inl"

AKX_MODULE_EXPORT akx_status AKX_REDUCE_ENTRY_2_(segmented_scan, AKX_SRC_NAME)(const akx__segmented_plan *p,
                                                                      void *stream) {
  return scan_ladder<segmented_scan_launcher, true, Src>("segmented scan", *p, stream);
}
#endif  // !__CUDACC_RTC__
