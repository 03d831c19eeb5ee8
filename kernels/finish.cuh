// The finishing step every reduction pass stores through (seed
// reduce-whole-array-on-device): a bare store of the accumulator (a partial, or a host
// result the host finishes), or: apply init, fold into dst's previous value, convert the
// accumulator to dst's dtype. init is applied exactly once, by the last pass; partials keep
// the accumulator type until this final store, and dst never holds intermediate values.
#pragma once
#include "kernels/ops.cuh"
#include "src/core/plan.h"

namespace akx {

// The value part, shared by the device store below and the host finish (src/reduce/finish_host.cpp).
template <class Op, class Acc>
AKX_HD Acc finish_value(Acc v, const akx__finish &f, const Acc *previous) {
  if (f.has_init) v = Op::apply(bitcast_<Acc>(f.init), v);
  if (previous) v = Op::apply(*previous, v);
  return v;
}

// The same store into `dst` instead of f.dst: one output of many (reductions along dims).
template <class Op, class Acc>
AKX_DEVICE void finish_store_at(Acc v, const akx__finish &f, void *dst) {
  if (f.bare) {
    gst(static_cast<Acc *>(dst), v);
    return;
  }
  switch (f.dst_dtype) {
#define AKX_X_(D, T, N, S)                                                       \
  case D: {                                                                   \
    T *d = static_cast<T *>(dst);                                             \
    Acc prev = f.fold ? cvt<Acc>(gld(d)) : v;                                 \
    gst(d, cvt<T>(finish_value<Op>(v, f, f.fold ? &prev : nullptr)));         \
    return;                                                                   \
  }
    AKX_DTYPE_LIST(AKX_X_)
#undef AKX_X_
    default:  // unreachable: every launcher refuses an invalid dst dtype (AKX_ERROR_INTERNAL)
      return;
  }
}

template <class Op, class Acc>
AKX_DEVICE void finish_store(Acc v, const akx__finish &f) {
  finish_store_at<Op>(v, f, f.dst);
}

}  // namespace akx
