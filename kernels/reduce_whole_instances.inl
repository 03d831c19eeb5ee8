// The whole-array reduction kernels of one source dtype (AKX_SRC_DTYPE), for one backend:
// nvcc names the entry akx__cuda_reduce_whole_<dtype>, the host compiler
// akx__sim_reduce_whole_<dtype>. Only (source, map, accumulator, op) combinations that
// akx::reduce_supported allows are instantiated.
#include "kernels/reduce_whole.cuh"
#include "src/core/error.h"

#if defined(__CUDACC__)
#define AKX_ENTRY_2_(name) akx__cuda_reduce_whole_##name
#else
#define AKX_ENTRY_2_(name) akx__sim_reduce_whole_##name
#endif
#define AKX_ENTRY_(name) AKX_ENTRY_2_(name)

namespace {
using Src = akx::dtype_t<AKX_SRC_DTYPE>;

akx_status no_instance(const akx__reduce_whole_plan &p) {
  return akx__fail(AKX_ERROR_INTERNAL,
                   "no reduce_whole kernel for source dtype %d, map %d, accumulator %d, op %d "
                   "(the host should have refused it)",
                   (int)p.src.dtype, (int)p.map, (int)p.acc, (int)p.op);
}

template <class Acc, class Op, class Map>
akx_status with_map(const akx__reduce_whole_plan &p, void *stream) {
  if constexpr (akx::reduce_supported(akx::dtype_v<Src>, Map::id, akx::dtype_v<Acc>, Op::id))
    return akx::reduce_whole_launch<Src, Acc, Op, Map>(p, stream);
  else
    return no_instance(p);
}
template <class Acc, class Op>
akx_status with_op(const akx__reduce_whole_plan &p, void *stream) {
  switch (p.map) {
#define AKX_X_(E, M) case E: return with_map<Acc, Op, M>(p, stream);
    AKX_MAP_LIST(AKX_X_)
#undef AKX_X_
  }
  return no_instance(p);
}
template <class Acc>
akx_status with_acc(const akx__reduce_whole_plan &p, void *stream) {
  switch (p.op) {
#define AKX_X_(E, O) case E: return with_op<Acc, O>(p, stream);
    AKX_OP_LIST(AKX_X_)
#undef AKX_X_
  }
  return no_instance(p);
}
}  // namespace

extern "C" akx_status AKX_ENTRY_(AKX_SRC_NAME)(const akx__reduce_whole_plan *p, void *stream) {
  switch (p->acc) {
#define AKX_X_(D, T, N, S) case D: return with_acc<T>(*p, stream);
    AKX_DTYPE_LIST(AKX_X_)
#undef AKX_X_
  }
  return no_instance(*p);
}
