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
akx_status no_segmented_scan(const akx__segmented_plan &p) {
  return akx__fail(AKX_ERROR_INTERNAL,
                   "no segmented scan kernel for source dtype %d, dst dtype %d, accumulator %d, op %d "
                   "(the host should have refused it)",
                   (int)p.src_dtype, (int)p.dst_dtype, (int)p.acc, (int)p.op);
}
template <class Acc, class Op>
akx_status segmented_scan_with_op(const akx__segmented_plan &p, void *stream) {
  if constexpr (akx::scan_prebuilt(akx::dtype_v<Src>, akx::dtype_v<Acc>, Op::id, akx::dtype_v<Acc>, AKX_PREBUILT_FOR) &&
                akx::dtype_v<Acc> == akx::auto_acc(akx::dtype_v<Src>, Op::id)) {
    if (p.dst_dtype == (int32_t)akx::dtype_v<Acc>) return akx::segmented_scan_launch<Src, Acc, Acc, Op>(p, stream);
    if constexpr (!akx::is_same<Src, Acc>::value)
      if (p.dst_dtype == (int32_t)akx::dtype_v<Src>) return akx::segmented_scan_launch<Src, Src, Acc, Op>(p, stream);
  }
  return no_segmented_scan(p);
}
template <class Acc>
akx_status segmented_scan_with_acc(const akx__segmented_plan &p, void *stream) {
  switch (p.op) {
#define AKX_X_(E, O, N) case E: return segmented_scan_with_op<Acc, O>(p, stream);
    AKX_OP_LIST(AKX_X_)
#undef AKX_X_
  }
  return no_segmented_scan(p);
}
}  // namespace

AKX_MODULE_EXPORT akx_status AKX_REDUCE_ENTRY_2_(segmented_scan, AKX_SRC_NAME)(const akx__segmented_plan *p,
                                                                      void *stream) {
  switch (p->acc) {
#define AKX_X_(D, T, N, S) case D: return segmented_scan_with_acc<T>(*p, stream);
    AKX_DTYPE_LIST(AKX_X_)
#undef AKX_X_
  }
  return no_segmented_scan(*p);
}
#endif  // !__CUDACC_RTC__
