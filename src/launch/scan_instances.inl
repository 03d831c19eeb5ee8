// The scan and findall kernels of one source dtype (AKX_SRC_DTYPE), for one backend: nvcc
// names the entries akx__cuda_{scan,findall}_<dtype>, the host compiler akx__sim_...
// Instances: the prebuilt set of this compiler (akx::scan_prebuilt, AKX_PREBUILT_FOR), each
// storing to dst of the accumulator's dtype or of the source's (the rest is compiled at run
// time); findall once per source dtype.
#include "akx/findall.cuh"
#include "akx/scan.cuh"

// Host code (the entries and their launches): nothing under NVRTC, which compiles kernels alone
// (a run-time module instantiates them itself: src/jit/instance.h).
#if !defined(__CUDACC_RTC__)
#if defined(__CUDACC__)
#define AKX_SCAN_ENTRY_2_(kind, name) akx__cuda_##kind##_##name
#else
#define AKX_SCAN_ENTRY_2_(kind, name) akx__sim_##kind##_##name
#endif
#define AKX_SCAN_ENTRY_(kind, name) AKX_SCAN_ENTRY_2_(kind, name)

namespace {
using Src = akx::dtype_t<AKX_SRC_DTYPE>;
struct scan_launcher {
  template <class S, class D, class A, class O>
  static akx_status launch(const akx__scan_plan &p, void *stream) { return akx::scan_launch<S, D, A, O>(p, stream); }
};
}  // namespace
#include "scan_ladder.inl"

AKX_MODULE_EXPORT akx_status AKX_SCAN_ENTRY_(scan, AKX_SRC_NAME)(const akx__scan_plan *p, void *stream) {
  return scan_ladder<scan_launcher, false, Src>("scan", *p, stream);
}

AKX_MODULE_EXPORT akx_status AKX_SCAN_ENTRY_(findall, AKX_SRC_NAME)(const akx__findall_plan *p, void *stream) {
  return akx::findall_launch<Src>(*p, stream);
}
#endif  // !__CUDACC_RTC__
