// The whole-array reduction kernels of one source dtype (AKX_SRC_DTYPE), for one backend: the
// resolver akx__<backend>_reduce_whole_<dtype> (src/launch/instance_table.inl), per
// (accumulator, op), the map at run time.
#include "akx/reduce_whole.cuh"
#include "instance_table.inl"

#if !defined(__CUDACC_RTC__)
namespace {
namespace AKX_INSTANCES {
struct reduce_whole_instances {
  template <class S, class A, class O>
  static constexpr akx__launcher instance() { return &erased<akx__reduce_whole_plan, &akx::reduce_whole_launch<S, A, O>>; }
};
}  // namespace AKX_INSTANCES
}  // namespace

AKX_MODULE_EXPORT akx__launcher AKX_ENTRY_NAME(reduce_whole)(const akx__combination *c) {
  return AKX_INSTANCES::reduce_resolve<AKX_INSTANCES::reduce_whole_instances, AKX__FAMILY_REDUCE_WHOLE>(c);
}
#endif  // !__CUDACC_RTC__
