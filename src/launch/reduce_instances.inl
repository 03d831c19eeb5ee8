// The entry of one reduction family for one source dtype (AKX_SRC_DTYPE) and one backend:
// nvcc names it akx__cuda_<family>_<dtype>, the host compiler akx__sim_<family>_<dtype>.
// The includer defines
//   AKX_REDUCE_FAMILY   reduce_whole | reduce_dims (the entry's name)
//   AKX_REDUCE_PLAN     its plan type (kernels/akx/plan.h)
//   AKX_REDUCE_LAUNCH   its launcher, templated on <Src, Acc, Op>
//   AKX_REDUCE_SRC(p)   the plan's source dtype
// Instances are per (accumulator, op): the map is the kernels' argument (kernels/akx/ops.cuh,
// visit_map), and only pairs that some map makes prebuilt for this compiler
// (akx::reduce_prebuilt_any_map, AKX_PREBUILT_FOR) are compiled here; the rest of what
// akx::reduce_supported takes is compiled at run time.
// Host code (the entries and their launches): nothing under NVRTC, which compiles kernels alone
// (a run-time module instantiates them itself: src/jit/instance.h).
#if !defined(__CUDACC_RTC__)
#include "akx/fail.h"

#if defined(__CUDACC__)
#define AKX_REDUCE_ENTRY_3_(family, name) akx__cuda_##family##_##name
#else
#define AKX_REDUCE_ENTRY_3_(family, name) akx__sim_##family##_##name
#endif
#define AKX_REDUCE_ENTRY_2_(family, name) AKX_REDUCE_ENTRY_3_(family, name)
#define AKX_REDUCE_STR_2_(x) #x
#define AKX_REDUCE_STR_(x) AKX_REDUCE_STR_2_(x)

#ifndef AKX_REDUCE_AUTO_ONLY  // the family prebuilds the AUTO accumulator alone (src/core/families.h)
#define AKX_REDUCE_AUTO_ONLY 0
#endif

namespace {
using Src = akx::dtype_t<AKX_SRC_DTYPE>;

// Whether acc is the AUTO accumulator of some map's result (AKX_REDUCE_AUTO_ONLY).
constexpr bool auto_of_some_map(akx_dtype acc, akx_op op) {
  for (int m = 0; m < AKX_MAP_COUNT; ++m)
    if (akx::auto_acc(akx::map_result(akx::dtype_v<Src>, (akx_map)m), op) == acc) return true;
  return false;
}

akx_status no_instance(const AKX_REDUCE_PLAN &p) {
  return akx__fail(AKX_ERROR_INTERNAL,
                   "no " AKX_REDUCE_STR_(AKX_REDUCE_FAMILY) " kernel for source dtype %d, map %d, "
                   "accumulator %d, op %d (the host should have refused it)",
                   (int)AKX_REDUCE_SRC(p), (int)p.map, (int)p.acc, (int)p.op);
}

template <class Acc, class Op>
akx_status with_op(const AKX_REDUCE_PLAN &p, void *stream) {
  if constexpr (akx::reduce_prebuilt_any_map(akx::dtype_v<Src>, akx::dtype_v<Acc>, Op::id, AKX_PREBUILT_FOR) &&
                (!AKX_REDUCE_AUTO_ONLY || auto_of_some_map(akx::dtype_v<Acc>, Op::id))) {
    if (akx::reduce_prebuilt(akx::dtype_v<Src>, (akx_map)p.map, akx::dtype_v<Acc>, Op::id, AKX_PREBUILT_FOR) &&
        (!AKX_REDUCE_AUTO_ONLY ||
         akx::auto_acc(akx::map_result(akx::dtype_v<Src>, (akx_map)p.map), Op::id) == akx::dtype_v<Acc>))
      return AKX_REDUCE_LAUNCH<Src, Acc, Op>(p, stream);
  }
  return no_instance(p);
}
template <class Acc>
akx_status with_acc(const AKX_REDUCE_PLAN &p, void *stream) {
  switch (p.op) {
#define AKX_X_(E, O, N) case E: return with_op<Acc, O>(p, stream);
    AKX_OP_LIST(AKX_X_)
#undef AKX_X_
  }
  return no_instance(p);
}
}  // namespace

AKX_MODULE_EXPORT akx_status AKX_REDUCE_ENTRY_2_(AKX_REDUCE_FAMILY, AKX_SRC_NAME)(const AKX_REDUCE_PLAN *p,
                                                                         void *stream) {
  switch (p->acc) {
#define AKX_X_(D, T, N, S) case D: return with_acc<T>(*p, stream);
    AKX_DTYPE_LIST(AKX_X_)
#undef AKX_X_
  }
  return no_instance(*p);
}
#endif  // !__CUDACC_RTC__
