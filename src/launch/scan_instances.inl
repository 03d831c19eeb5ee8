// The scan and findall kernels of one source dtype (AKX_SRC_DTYPE), for one backend: the
// resolvers akx__<backend>_{scan,findall}_<dtype> (src/launch/instance_table.inl). Scans: the
// prebuilt set of this compiler (akx::scan_prebuilt, AKX_PREBUILT_FOR), each stored to dst of
// the accumulator's dtype or of the source's (the rest is compiled at run time); findall once
// per source dtype where the set holds it (akx::source_only_prebuilt: the library's, not the
// tests' plugin).
#include "akx/findall.cuh"
#include "akx/scan.cuh"
#include "instance_table.inl"

#if !defined(__CUDACC_RTC__)
namespace {
namespace AKX_INSTANCES {
struct scan_instances {
  template <class S, class D, class A, class O>
  static constexpr akx__launcher instance() { return &erased<akx__scan_plan, &akx::scan_launch<S, D, A, O>>; }
};
}  // namespace AKX_INSTANCES
}  // namespace

AKX_MODULE_EXPORT akx__launcher AKX_ENTRY_NAME(scan)(const akx__combination *c) {
  return AKX_INSTANCES::scan_resolve<AKX_INSTANCES::scan_instances, AKX__FAMILY_SCAN>(c);
}

AKX_MODULE_EXPORT akx__launcher AKX_ENTRY_NAME(findall)(const akx__combination *) {
  if constexpr (akx::source_only_prebuilt(AKX_PREBUILT_FOR))
    return &AKX_INSTANCES::erased<akx__findall_plan, &akx::findall_launch<AKX_INSTANCES::Src>>;
  else
    return nullptr;
}
#endif  // !__CUDACC_RTC__
