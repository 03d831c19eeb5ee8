// User operators (akx_user_op_desc, include/akx.h): the types a user's source sees, and the
// adaptor that makes its functions an op of kernels/akx/ops.cuh. src/jit/user_op.c writes,
// for each op, a struct of its functions (Fns: acc, has_identity, akx_combine, akx_identity,
// akx_map<S>, akx_store<D>) after the user's source; every kernel family then takes user_op<Fns, Dst> where
// it takes a built-in op, so a user op runs in the built-in ops' kernels, shapes and layouts.
#pragma once
#include "akx/ops.cuh"

// A user's source in CUDA's own spelling compiles on the sim too: the execution spaces mean
// nothing to the host compiler (every function runs on the sim's fibers), and __forceinline__
// is inline. Defined here, after every header a unit includes (src/jit/user_op.c puts the
// user's text after this one), so only the user's text sees them. (Not __noinline__: glibc's
// and libstdc++'s headers spell their attribute so.)
#if !defined(__CUDACC__)
#ifndef __host__
#define __host__
#endif
#ifndef __device__
#define __device__
#endif
#ifndef __forceinline__
#define __forceinline__ inline
#endif
#endif

namespace akx {

// float16 and bfloat16 as a user's source sees them: they convert to and from float (the
// kernels' f16 and bf16 are bare bits, aggregates the dtype tables initialise by bits).
struct float16 {
  uint16_t bits;
  float16() = default;
  AKX_HD_INLINE float16(float f) : bits(cvt<f16>(f).bits) {}
  AKX_HD_INLINE operator float() const { return widen(f16{bits}); }
};
struct bfloat16 {
  uint16_t bits;
  bfloat16() = default;
  AKX_HD_INLINE bfloat16(float f) : bits(cvt<bf16>(f).bits) {}
  AKX_HD_INLINE operator float() const { return widen(bf16{bits}); }
};
template <class T>
using complex = cplx<T>;

// The C++ type a user's map takes for a source element and its store gives for dst.
template <class T> struct user_type { using type = T; };
template <> struct user_type<f16> { using type = float16; };
template <> struct user_type<bf16> { using type = bfloat16; };

template <class To, class From>
AKX_HD_INLINE To bit_copy(const From &x) {
  static_assert(sizeof(To) == sizeof(From), "bit_copy: sizes differ");
  To r;
  memcpy(&r, &x, sizeof r);
  return r;
}

// The accumulator of an op without a neutral element: a value and a valid flag (AK's
// Optional partials). The host writes init in this layout (src/jit/user_op.c's probe reports
// its size and the flag's offset).
template <class A>
struct user_optional {
  A v;
  uint32_t valid;
};

// Whether D(a) compiles: a store-less op may fold only into a dst it can read back as Acc.
template <class A, class D, class = void>
struct user_acc_from : false_type {};
template <class A, class D>
struct user_acc_from<A, D, void_t<decltype(A(declval<D>()))>> : true_type {};

// Dst: dst's C++ type (a dtype's), or void: the accumulator itself is stored (akx_mapreduce).
template <class Fns, class Dst>
struct user_op {
  using user_fns = Fns;
  using dst_type = Dst;
  using acc = typename Fns::acc;
  // What the kernels carry: the user's accumulator, or it with a valid flag.
  using value = typename conditional<Fns::has_identity, acc, user_optional<acc>>::type;
  // Not an akx_op: 1024 is outside the enum's range, which clang refuses in a constant.
  static constexpr int32_t id = AKX_USER_OP_FIRST;

  template <class U> AKX_HD_INLINE static U identity() {
    if constexpr (Fns::has_identity) return Fns::akx_identity();
    else return U{acc{}, 0u};
  }
  template <class U> AKX_HD_INLINE static U apply(const U &a, const U &b) {
    if constexpr (Fns::has_identity) {
      return Fns::akx_combine(a, b);
    } else {
      if (!a.valid) return b;
      if (!b.valid) return a;
      return U{Fns::akx_combine(a.v, b.v), 1u};
    }
  }
  // Source element x at position i (include/akx.h, akx_user_op_desc's map).
  template <class U, class Src> AKX_HD_INLINE static U load(const Src &x, int64_t i) {
    const typename user_type<Src>::type s = bit_copy<typename user_type<Src>::type>(x);
    if constexpr (Fns::has_identity) return Fns::akx_map(s, i);
    else return U{Fns::akx_map(s, i), 1u};
  }
  AKX_HD_INLINE static const acc &unwrap(const value &v) {
    if constexpr (Fns::has_identity) return v;
    else return v.v;
  }
  AKX_HD_INLINE static value wrap(const acc &a) {
    if constexpr (Fns::has_identity) return a;
    else return value{a, 1u};
  }
  // The accumulator as dst element D.
  template <class D> AKX_HD_INLINE static D store(const value &v) {
    using UD = typename user_type<D>::type;
    return bit_copy<D>(Fns::template akx_store<UD>(unwrap(v)));
  }
  // dst's previous value as the accumulator (fold without a store).
  template <class D> AKX_HD_INLINE static value load_dst(const D &d) {
    using UD = typename user_type<D>::type;
    if constexpr (user_acc_from<acc, UD>::value) return wrap(acc(bit_copy<UD>(d)));
    else return identity<value>();  // refused by the module's entry (src/jit/user_op.c)
  }
};

// Where the valid flag of Op's value sits (0 without one): the host writes init there.
template <class Op>
AKX_HD_INLINE constexpr size_t user_valid_offset() {
  if constexpr (Op::user_fns::has_identity) return 0;
  else return __builtin_offsetof(typename Op::value, valid);
}

}  // namespace akx
