// The host half of the finishing step: a host result (akx_mapreduce with AKX_HOST) comes
// back from the device bare and is finished here with the same finish_value as on the GPU.
#include "internal.h"
#include "akx/finish.cuh"

namespace {
template <class Acc, class Op>
void finish_host(const void *bare, const akx__finish *f) {
  Acc v, prev{};
  memcpy(&v, bare, sizeof v);
  if constexpr (std::is_same_v<Acc, bool>) {  // the caller's bool: any byte, nonzero true
    if (f->fold) prev = *static_cast<const unsigned char *>(f->dst) != 0;
  } else if (f->fold) {
    memcpy(&prev, f->dst, sizeof prev);
  }
  v = akx::finish_value<Op>(v, *f, f->fold != 0, prev);
  memcpy(f->dst, &v, sizeof v);
}
template <class Acc>
akx_status with_acc(int32_t op, const void *bare, const akx__finish *f) {
  switch (op) {
#define AKX_X_(E, O, N)                                                                 \
  case E:                                                                               \
    if constexpr (akx::op_allowed(akx::dtype_v<Acc>, E)) {                             \
      finish_host<Acc, O>(bare, f);                                                     \
      return AKX_SUCCESS;                                                               \
    }                                                                                   \
    break;
    AKX_OP_LIST(AKX_X_)
#undef AKX_X_
  }
  return akx__fail(AKX_ERROR_INTERNAL,
                   "finishing a host result: op %d is not an op of the %s accumulator (the "
                   "validation should have refused it)",
                   (int)op, akx_dtype_name(akx::dtype_v<Acc>));
}
}  // namespace

extern "C" akx_status akx__finish_host(int32_t op, int32_t acc, const void *bare,
                                       const akx__finish *f) {
  switch (acc) {
#define AKX_X_(D, T, N, S) case D: return with_acc<T>(op, bare, f);
    AKX_DTYPE_LIST(AKX_X_)
#undef AKX_X_
    default: break;
  }
  return akx__fail(AKX_ERROR_INTERNAL,
                   "finishing a host result: accumulator dtype %d is not an akx_dtype (the "
                   "validation should have refused it)",
                   (int)acc);
}
