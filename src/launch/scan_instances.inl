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

akx_status no_scan_instance(const akx__scan_plan &p) {
  return akx__fail(AKX_ERROR_INTERNAL,
                   "no scan kernel for source dtype %d, dst dtype %d, accumulator %d, op %d "
                   "(the host should have refused it)",
                   (int)p.src_dtype, (int)p.dst_dtype, (int)p.acc, (int)p.op);
}

template <class Acc, class Op>
akx_status scan_with_op(const akx__scan_plan &p, void *stream) {
  if constexpr (akx::scan_prebuilt(akx::dtype_v<Src>, akx::dtype_v<Acc>, Op::id, akx::dtype_v<Acc>, AKX_PREBUILT_FOR)) {
    if (p.dst_dtype == (int32_t)akx::dtype_v<Acc>) return akx::scan_launch<Src, Acc, Acc, Op>(p, stream);
    if constexpr (!akx::is_same<Src, Acc>::value)
      if (p.dst_dtype == (int32_t)akx::dtype_v<Src>) return akx::scan_launch<Src, Src, Acc, Op>(p, stream);
  }
  return no_scan_instance(p);
}
template <class Acc>
akx_status scan_with_acc(const akx__scan_plan &p, void *stream) {
  switch (p.op) {
#define AKX_X_(E, O, N) case E: return scan_with_op<Acc, O>(p, stream);
    AKX_OP_LIST(AKX_X_)
#undef AKX_X_
  }
  return no_scan_instance(p);
}
}  // namespace

AKX_MODULE_EXPORT akx_status AKX_SCAN_ENTRY_(scan, AKX_SRC_NAME)(const akx__scan_plan *p, void *stream) {
  switch (p->acc) {
#define AKX_X_(D, T, N, S) case D: return scan_with_acc<T>(*p, stream);
    AKX_DTYPE_LIST(AKX_X_)
#undef AKX_X_
  }
  return no_scan_instance(*p);
}

AKX_MODULE_EXPORT akx_status AKX_SCAN_ENTRY_(findall, AKX_SRC_NAME)(const akx__findall_plan *p, void *stream) {
  return akx::findall_launch<Src>(*p, stream);
}
#endif  // !__CUDACC_RTC__
