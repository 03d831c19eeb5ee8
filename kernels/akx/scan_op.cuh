// The operators the scan machinery combines with: a value type T and an associative
// apply(a, b) that keeps operand order (a is earlier), with identity(). Three kinds:
//  - plain_scan<Op, Acc>: an akx_op over the accumulator (kernels/akx/ops.cuh);
//  - seg_scan<Op, Acc>: the same op over (value, head) pairs, where a head starts a new
//    sequence: many short slices scanned as one (Blelloch's segmented scan; associative, so
//    tiles and look-back combine pairs exactly as they combine plain values);
//  - a user functor F (include/akx.cuh, functor_traits): plain_scan or seg_scan over
//    functor_op<F>, or over optional_op<F, T> with Optional values when F has no neutral
//    element (AK's way for operators without one).
#pragma once
#include "akx/ops.cuh"

namespace akx {

template <class Op, class Acc>
struct plain_scan {
  using op = Op;
  using T = Acc;
  using value_type = Acc;
  static constexpr bool segmented = false;
  AKX_HD_INLINE static T identity() { return Op::template identity<Acc>(); }
  AKX_HD_INLINE static T apply(const T &a, const T &b) { return Op::apply(a, b); }
  AKX_HD_INLINE static T make(const Acc &v, bool) { return v; }
  AKX_HD_INLINE static Acc value(const T &t) { return t; }
  AKX_HD_INLINE static bool head(const T &) { return false; }
  AKX_HD_INLINE static Acc combine(const Acc &a, const Acc &b) { return Op::apply(a, b); }
  AKX_HD_INLINE static Acc acc_identity() { return Op::template identity<Acc>(); }
  AKX_HD_INLINE static Acc acc_empty() { return empty_value<Op, Acc>(); }
};

template <class Acc>
struct seg_value {
  Acc v;
  uint32_t head;
};

template <class Op, class Acc>
struct seg_scan {
  using op = Op;
  using T = seg_value<Acc>;
  using value_type = Acc;
  static constexpr bool segmented = true;
  AKX_HD_INLINE static T identity() { return T{Op::template identity<Acc>(), 0u}; }
  AKX_HD_INLINE static T apply(const T &a, const T &b) {
    if (b.head) return b;
    return T{Op::apply(a.v, b.v), a.head};
  }
  AKX_HD_INLINE static T make(const Acc &v, bool head) { return T{v, head ? 1u : 0u}; }
  AKX_HD_INLINE static Acc value(const T &t) { return t.v; }
  AKX_HD_INLINE static bool head(const T &t) { return t.head != 0; }
  AKX_HD_INLINE static Acc combine(const Acc &a, const Acc &b) { return Op::apply(a, b); }
  AKX_HD_INLINE static Acc acc_identity() { return Op::template identity<Acc>(); }
  AKX_HD_INLINE static Acc acc_empty() { return empty_value<Op, Acc>(); }
};

}  // namespace akx
