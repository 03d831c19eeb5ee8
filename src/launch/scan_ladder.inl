// The scans' ladder of one source dtype (AKX_SRC_DTYPE) for one backend, shared by the scan
// family's entry (src/launch/scan_instances.inl) and the segmented scans'
// (src/launch/segmented_instances.inl): a plan's (accumulator, op, dst) to the prebuilt launch
// of this compiler's set (akx::scan_prebuilt, AKX_PREBUILT_FOR), stored to dst of the
// accumulator's dtype or of the source's; the rest is compiled at run time. L::launch<Src, Dst,
// Acc, Op>(plan, stream) is the family's launcher; AutoOnly: the family prebuilds the AUTO
// accumulator alone (src/core/families.h, akx__family_auto_acc_only). Host code only.
#include "akx/fail.h"

namespace {
template <class Plan>
akx_status no_scan_instance(const char *family, const Plan &p) {
  return akx__fail(AKX_ERROR_INTERNAL,
                   "no %s kernel for source dtype %d, dst dtype %d, accumulator %d, op %d (the host should "
                   "have refused it)",
                   family, (int)p.src_dtype, (int)p.dst_dtype, (int)p.acc, (int)p.op);
}

template <class L, bool AutoOnly, class Src, class Acc, class Op, class Plan>
akx_status scan_with_op(const char *family, const Plan &p, void *stream) {
  if constexpr (akx::scan_prebuilt(akx::dtype_v<Src>, akx::dtype_v<Acc>, Op::id, akx::dtype_v<Acc>, AKX_PREBUILT_FOR) &&
                (!AutoOnly || akx::dtype_v<Acc> == akx::auto_acc(akx::dtype_v<Src>, Op::id))) {
    if (p.dst_dtype == (int32_t)akx::dtype_v<Acc>) return L::template launch<Src, Acc, Acc, Op>(p, stream);
    if constexpr (!akx::is_same<Src, Acc>::value)
      if (p.dst_dtype == (int32_t)akx::dtype_v<Src>) return L::template launch<Src, Src, Acc, Op>(p, stream);
  }
  return no_scan_instance(family, p);
}
template <class L, bool AutoOnly, class Src, class Acc, class Plan>
akx_status scan_with_acc(const char *family, const Plan &p, void *stream) {
  switch (p.op) {
#define AKX_X_(E, O, N) case E: return scan_with_op<L, AutoOnly, Src, Acc, O>(family, p, stream);
    AKX_OP_LIST(AKX_X_)
#undef AKX_X_
  }
  return no_scan_instance(family, p);
}
// The entry's body: the plan's accumulator, then its op.
template <class L, bool AutoOnly, class Src, class Plan>
akx_status scan_ladder(const char *family, const Plan &p, void *stream) {
  switch (p.acc) {
#define AKX_X_(D, T, N, S) case D: return scan_with_acc<L, AutoOnly, Src, T>(family, p, stream);
    AKX_DTYPE_LIST(AKX_X_)
#undef AKX_X_
  }
  return no_scan_instance(family, p);
}
}  // namespace
