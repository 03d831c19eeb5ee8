// The dims reduction kernels of one source dtype (AKX_SRC_DTYPE), for one backend: the resolver
// akx__<backend>_reduce_dims_<dtype> (src/launch/instance_table.inl), per (accumulator, op), the
// map at run time. Every shape shares the kernel bodies of kernels/akx/reduce_dims.cuh.
#include "akx/reduce_dims.cuh"
#include "instance_table.inl"

#if !defined(__CUDACC_RTC__)
namespace {
namespace AKX_INSTANCES {
struct reduce_dims_instances {
  template <class S, class A, class O>
  static constexpr akx__launcher instance() { return &erased<akx__reduce_dims_plan, &akx::reduce_dims_launch<S, A, O>>; }
};
}  // namespace AKX_INSTANCES
}  // namespace

AKX_MODULE_EXPORT akx__launcher AKX_ENTRY_NAME(reduce_dims)(const akx__combination *c) {
  return AKX_INSTANCES::reduce_resolve<AKX_INSTANCES::reduce_dims_instances, AKX__FAMILY_REDUCE_DIMS>(c);
}
#endif  // !__CUDACC_RTC__
