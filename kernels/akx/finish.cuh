// The finishing step every reduction pass stores through (docs/reduce_whole.md): a bare
// store of the accumulator (a partial, or a host result the host finishes), or: apply init,
// fold into dst's previous value, convert the accumulator to dst's dtype. init is applied
// exactly once, by the last pass; partials keep the accumulator type until this final store,
// and dst never holds intermediate values.
#pragma once
#include "akx/ops.cuh"
#include "akx/plan.h"

namespace akx {

// The value part, shared by the device store below and the host finish (src/reduce/finish_host.cpp).
// dst's previous value comes by value with a flag, not by pointer: a pointer to a local puts
// it in local memory (a stack frame in every reduction kernel, which the kernel_resources test fails on).
template <class Op, class Acc>
AKX_HD_INLINE Acc finish_value(Acc v, const akx__finish &f, bool has_previous, Acc previous) {
  // Nothing was combined: the kernel's v is the identity (-0.0 for a float ADD), the result
  // the op's empty value (+0.0), unless init or a previous value takes its place.
  if (f.empty && !f.has_init && !has_previous) return empty_value<Op, Acc>();
  if (f.has_init) v = Op::apply(bitcast_<Acc>(f.init), v);
  if (has_previous) v = Op::apply(previous, v);
  return v;
}

// dst's previous value as the accumulator (fold), and the accumulator converted to dst's
// dtype. Out of line and templated on Acc alone: every (source, op, map) kernel of a
// translation unit shares one copy per accumulator instead of inlining two 15-way switches of
// conversions (the bulk of a reduction kernel's code and of the library's build time).
template <class Acc>
AKX_DEVICE_OUTLINE Acc finish_load_dst(int32_t dst_dtype, const void *dst) {
  switch (dst_dtype) {
#define AKX_X_(D, T, N, S) \
  case D: return cvt<Acc>(gld(static_cast<const T *>(dst)));
    AKX_DTYPE_LIST(AKX_X_)
#undef AKX_X_
    default:  // unreachable: every launcher refuses an invalid dst dtype (AKX_ERROR_INTERNAL)
      return Acc{};
  }
}
template <class Acc>
AKX_DEVICE_OUTLINE void finish_store_dst(int32_t dst_dtype, void *dst, Acc v) {
  switch (dst_dtype) {
#define AKX_X_(D, T, N, S) \
  case D: gst(static_cast<T *>(dst), cvt<T>(v)); return;
    AKX_DTYPE_LIST(AKX_X_)
#undef AKX_X_
    default:  // unreachable, as above
      return;
  }
}

// The same store into `dst` instead of f.dst: one output of many (reductions along dims).
template <class Op, class Acc>
AKX_DEVICE void finish_store_at(Acc v, const akx__finish &f, void *dst) {
  if (f.bare) {
    gst(static_cast<Acc *>(dst), v);
    return;
  }
  if constexpr (is_user_op<Op>::value) {
    // A user op's TU is compiled for one dst type (kernels/akx/user_op.cuh): void, the
    // accumulator itself (akx_mapreduce), or a dtype's, through the op's store.
    using D = typename Op::dst_type;
    using A = typename Op::acc;
    if constexpr (is_same<D, void>::value) {
      const Acc prev = f.fold ? Op::wrap(gld(static_cast<const A *>(dst))) : v;
      gst(static_cast<A *>(dst), Op::unwrap(finish_value<Op>(v, f, f.fold != 0, prev)));
    } else {
      const Acc prev = f.fold ? Op::template load_dst<D>(gld(static_cast<const D *>(dst))) : v;
      gst(static_cast<D *>(dst), Op::template store<D>(finish_value<Op>(v, f, f.fold != 0, prev)));
    }
  } else {
    Acc prev = v;
    if (f.fold) prev = finish_load_dst<Acc>(f.dst_dtype, dst);
    finish_store_dst<Acc>(f.dst_dtype, dst, finish_value<Op>(v, f, f.fold != 0, prev));
  }
}

template <class Op, class Acc>
AKX_DEVICE void finish_store(Acc v, const akx__finish &f) {
  finish_store_at<Op>(v, f, f.dst);
}

}  // namespace akx
