// The dims reduction kernels of one source dtype (AKX_SRC_DTYPE), for one backend: nvcc
// names the entry akx__cuda_reduce_dims_<dtype>, the host compiler akx__sim_reduce_dims_<dtype>.
// Instances are per (accumulator, op): the map is a runtime switch inside the kernels
// (kernels/reduce_dims.cuh), and only pairs that some map makes valid
// (akx::reduce_supported) are compiled. Every shape shares the two kernel bodies.
#include "kernels/reduce_dims.cuh"
#include "src/core/error.h"

#if defined(__CUDACC__)
#define AKX_DIMS_ENTRY_2_(name) akx__cuda_reduce_dims_##name
#else
#define AKX_DIMS_ENTRY_2_(name) akx__sim_reduce_dims_##name
#endif
#define AKX_DIMS_ENTRY_(name) AKX_DIMS_ENTRY_2_(name)

namespace {
using Src = akx::dtype_t<AKX_SRC_DTYPE>;

akx_status no_instance(const akx__reduce_dims_plan &p) {
  return akx__fail(AKX_ERROR_INTERNAL,
                   "no reduce_dims kernel for source dtype %d, map %d, accumulator %d, op %d "
                   "(the host should have refused it)",
                   (int)p.src_dtype, (int)p.map, (int)p.acc, (int)p.op);
}

constexpr bool any_map(akx_dtype acc, akx_op op) {
  return akx::reduce_supported(akx::dtype_v<Src>, AKX_MAP_IDENTITY, acc, op) ||
         akx::reduce_supported(akx::dtype_v<Src>, AKX_MAP_ABS, acc, op) ||
         akx::reduce_supported(akx::dtype_v<Src>, AKX_MAP_SQUARE, acc, op) ||
         akx::reduce_supported(akx::dtype_v<Src>, AKX_MAP_NONZERO, acc, op);
}

template <class Acc, class Op>
akx_status with_op(const akx__reduce_dims_plan &p, void *stream) {
  if constexpr (any_map(akx::dtype_v<Acc>, Op::id)) {
    if (!akx::reduce_supported(akx::dtype_v<Src>, (akx_map)p.map, akx::dtype_v<Acc>, Op::id))
      return no_instance(p);
    return akx::reduce_dims_launch<Src, Acc, Op>(p, stream);
  } else {
    return no_instance(p);
  }
}
template <class Acc>
akx_status with_acc(const akx__reduce_dims_plan &p, void *stream) {
  switch (p.op) {
#define AKX_X_(E, O) case E: return with_op<Acc, O>(p, stream);
    AKX_OP_LIST(AKX_X_)
#undef AKX_X_
  }
  return no_instance(p);
}
}  // namespace

extern "C" akx_status AKX_DIMS_ENTRY_(AKX_SRC_NAME)(const akx__reduce_dims_plan *p, void *stream) {
  switch (p->acc) {
#define AKX_X_(D, T, N, S) case D: return with_acc<T>(*p, stream);
    AKX_DTYPE_LIST(AKX_X_)
#undef AKX_X_
  }
  return no_instance(*p);
}
