// The flagged selections' kernels of one source dtype (AKX_SRC_DTYPE), for one backend: the
// resolver akx__<backend>_select_flagged_<dtype> (src/launch/instance_table.inl). The kernels are
// keyed by the values' width (kernels/akx/select_flagged.cuh): the planner asks for the width's
// dtype alone (uint8, uint16, uint32, uint64, complex128), so the other dtypes' resolvers hold
// nothing; a width's kernels are prebuilt where the set holds findall's (akx::source_only_prebuilt).
#include "akx/select_flagged.cuh"
#include "instance_table.inl"

#if !defined(__CUDACC_RTC__)
AKX_MODULE_EXPORT akx__launcher AKX_ENTRY_NAME(select_flagged)(const akx__combination *) {
  if constexpr (akx::source_only_prebuilt(AKX_PREBUILT_FOR) && akx::is_width_dtype(akx::dtype_v<AKX_INSTANCES::Src>))
    return &AKX_INSTANCES::erased<akx__select_plan, &akx::select_flagged_launch<AKX_INSTANCES::Src>>;
  else
    return nullptr;
}
#endif  // !__CUDACC_RTC__
