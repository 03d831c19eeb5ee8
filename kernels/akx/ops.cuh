// Reduction operators and element maps. An op is a functor type with
//   static Acc apply(Acc, Acc)   and   static Acc identity<Acc>()   (its neutral element);
// a map is a functor type with   static Acc apply<Acc>(Src)   (source element -> accumulator).
#pragma once
#include "akx/convert.cuh"
#include "akx/divide.cuh"
#include "akx/plan.h"
#include "akx/hypot.cuh"
#include "akx/op_list.h"

namespace akx {

// ---- arithmetic that wraps on integers and rounds 16-bit floats once per operation --------
template <class T>
AKX_HD_INLINE T wrap_add(T a, T b) {
  using U = typename make_unsigned<T>::type;
  return (T)(U)((U)a + (U)b);
}
template <class T>
AKX_HD_INLINE T wrap_mul(T a, T b) {
  using U = typename make_unsigned<T>::type;
  // Multiply in at least 32-bit unsigned: uint16 * uint16 would promote to signed int and overflow.
  using W = typename conditional<(sizeof(U) < 4), uint32_t, U>::type;
  return (T)(U)((W)(U)a * (W)(U)b);
}

template <class T>
AKX_HD_INLINE T lowest_of() {
  if constexpr (is_same<T, f16>::value) return f16{0xfc00};
  else if constexpr (is_same<T, bf16>::value) return bf16{0xff80};
  else if constexpr (is_floating_point<T>::value) return -numeric_limits<T>::infinity();
  else return numeric_limits<T>::lowest();
}
template <class T>
AKX_HD_INLINE T highest_of() {
  if constexpr (is_same<T, f16>::value) return f16{0x7c00};
  else if constexpr (is_same<T, bf16>::value) return bf16{0x7f80};
  else if constexpr (is_floating_point<T>::value) return numeric_limits<T>::infinity();
  else return numeric_limits<T>::max();
}
template <class T>
AKX_HD_INLINE bool is_nan(T x) {
  if constexpr (is_real_float_v<T>) { auto w = widen(x); return w != w; }
  else return false;
}

// ADD's neutral element on floats is -0.0, IEEE 754's additive identity: -0.0 + x == x for
// every x, where +0.0 + -0.0 == +0.0 would turn a sum or a scan of -0.0 into +0.0 wherever a
// running value starts (a tile, a thread's run, a padded lane). A sum of nothing is +0.0 all
// the same (numpy, Julia): that is empty_value below, which the finishing step and an
// exclusive scan's empty prefix use.
struct op_add {
  static constexpr akx_op id = AKX_OP_ADD;
  template <class T> AKX_HD_INLINE static T identity() {
    if constexpr (is_same<T, f16>::value || is_same<T, bf16>::value) return T{0x8000};
    else if constexpr (is_cplx_v<T>) return T{-0.0, -0.0};
    else if constexpr (is_floating_point<T>::value) return T(-0.0);
    else return cvt<T>(0);
  }
  template <class T> AKX_HD_INLINE static T apply(T a, T b) {
    if constexpr (is_same<T, bool>::value) return a || b;  // never an ADD accumulator; kept total
    else if constexpr (is_cplx_v<T>) return T{a.re + b.re, a.im + b.im};
    else if constexpr (is_small_float_v<T>) return cvt<T>(widen(a) + widen(b));
    else if constexpr (is_integral<T>::value) return wrap_add(a, b);
    else return a + b;
  }
};
// The result of combining no element, with no init and no previous value: the op's identity,
// but +0.0 for a float or complex ADD (numpy's and Julia's empty sum).
template <class Op, class = void>
struct is_add_op : false_type {};
template <class Op>
struct is_add_op<Op, void_t<decltype(Op::id)>> : bool_constant<Op::id == AKX_OP_ADD> {};
template <class Op, class T>
AKX_HD_INLINE T empty_value() {
  if constexpr (is_add_op<Op>::value) return cvt<T>(0);
  else return Op::template identity<T>();
}

struct op_mul {
  static constexpr akx_op id = AKX_OP_MUL;
  template <class T> AKX_HD_INLINE static T identity() { return cvt<T>(1); }
  template <class T> AKX_HD_INLINE static T apply(T a, T b) {
    if constexpr (is_same<T, bool>::value) return a && b;  // SQUARE of a bool
    else if constexpr (is_cplx_v<T>) return T{a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
    else if constexpr (is_small_float_v<T>) return cvt<T>(widen(a) * widen(b));
    else if constexpr (is_integral<T>::value) return wrap_mul(a, b);
    else return a * b;
  }
};
// MIN/MAX propagate NaN (numpy.minimum, Julia's min): a NaN operand wins.
struct op_min {
  static constexpr akx_op id = AKX_OP_MIN;
  template <class T> AKX_HD_INLINE static T identity() { return highest_of<T>(); }
  template <class T> AKX_HD_INLINE static T apply(T a, T b) {
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    return widen(b) < widen(a) ? b : a;
  }
};
struct op_max {
  static constexpr akx_op id = AKX_OP_MAX;
  template <class T> AKX_HD_INLINE static T identity() { return lowest_of<T>(); }
  template <class T> AKX_HD_INLINE static T apply(T a, T b) {
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    return widen(a) < widen(b) ? b : a;
  }
};
// Bit ops: bitwise on integers, logical on bool (whose operands are 0/1).
struct op_and {
  static constexpr akx_op id = AKX_OP_AND;
  template <class T> AKX_HD_INLINE static T identity() {
    if constexpr (is_same<T, bool>::value) return true;
    else return (T)~(T)0;
  }
  template <class T> AKX_HD_INLINE static T apply(T a, T b) { return (T)(a & b); }
};
struct op_or {
  static constexpr akx_op id = AKX_OP_OR;
  template <class T> AKX_HD_INLINE static T identity() { return (T)0; }
  template <class T> AKX_HD_INLINE static T apply(T a, T b) { return (T)(a | b); }
};
struct op_xor {
  static constexpr akx_op id = AKX_OP_XOR;
  template <class T> AKX_HD_INLINE static T identity() { return (T)0; }
  template <class T> AKX_HD_INLINE static T apply(T a, T b) { return (T)(a ^ b); }
};

// ARGMIN and ARGMAX (Max): numpy's argmin/argmax over a source of type T as a user's source sees
// it (kernels/akx/user_op.cuh, user_type: float16 and bfloat16 compare as float). The first NaN
// wins; then the smaller (larger) value; ties go to the earlier position. Their accumulator is
// (position, value), not a dtype, so they run as user ops (src/jit/user_ops.c names these
// members in the op's functions): combine, identity (the worst value at the last position, which
// loses to every element), map (element x at position i), store (dst int64: the position; dst of
// src's dtype: the value). Compiled at run time with the user ops, as the prebuilt rule has no
// accumulator of this kind.
template <class T, bool Max>
struct arg_op {
  struct acc {
    int64_t index;
    T value;
  };
  static constexpr bool floating = !is_integral<T>::value;
  AKX_HD_INLINE static bool nan_(const T &v) {
    if constexpr (floating) return !(+v == +v);
    else return false;
  }
  AKX_HD_INLINE static bool better(const T &x, const T &y) {
    if constexpr (Max) return +x > +y;
    else return +x < +y;
  }
  AKX_HD_INLINE static acc combine(const acc &a, const acc &b) {
    const bool an = nan_(a.value), bn = nan_(b.value);
    if (an || bn) return an && bn ? (b.index < a.index ? b : a) : (an ? a : b);
    if (better(b.value, a.value)) return b;
    if (better(a.value, b.value)) return a;
    return b.index < a.index ? b : a;
  }
  AKX_HD_INLINE static acc identity() {
    if constexpr (floating) {
      using W = typename conditional<(sizeof(T) > 4), double, float>::type;
      return acc{(int64_t)0x7fffffffffffffffll, T(Max ? -numeric_limits<W>::infinity() : numeric_limits<W>::infinity())};
    } else {
      return acc{(int64_t)0x7fffffffffffffffll, Max ? numeric_limits<T>::lowest() : numeric_limits<T>::max()};
    }
  }
  template <class S> AKX_HD_INLINE static acc at(const S &x, int64_t i) { return acc{i, x}; }
  template <class D> AKX_HD_INLINE static D store(const acc &a) {
    if constexpr (is_same<D, int64_t>::value) return a.index;
    else return D(a.value);
  }
};

// The op dispatch list, AKX_OP_LIST (X(enum, functor, name)): kernels/akx/op_list.h.

// ---- maps: source element -> accumulator ----------------------------------------------------
struct map_identity {
  static constexpr akx_map id = AKX_MAP_IDENTITY;
  template <class Acc, class Src> AKX_HD_INLINE static Acc apply(Src x) { return cvt<Acc>(x); }
};
// |x| of the converted value (int8 -128 in an int64 accumulator is 128); for complex, the
// modulus in the accumulator's precision, by kernels/akx/hypot.cuh (the same bits on the GPU and
// the sim; CUDA's hypot and glibc's differ).
struct map_abs {
  static constexpr akx_map id = AKX_MAP_ABS;
  template <class Acc, class Src> AKX_HD_INLINE static Acc apply(Src x) {
    if constexpr (is_cplx_v<Src>) {
      using W = decltype(widen(typename real_of<Acc>::type{}));
      return cvt<Acc>(hypot_w<W>(x));
    } else {
      const Acc v = cvt<Acc>(x);
      if constexpr (is_small_float_v<Acc>) return Acc{(uint16_t)(v.bits & 0x7fff)};
      else if constexpr (is_floating_point<Acc>::value) return (Acc)fabs((double)v);
      else if constexpr (is_signed<Acc>::value) return v < 0 ? (Acc)wrap_mul(v, (Acc)-1) : v;
      else return v;
    }
  }
  template <class W, class C> AKX_HD_INLINE static W hypot_w(C x) { return hypot_of<W>((W)x.re, (W)x.im); }
};
// x*x of the converted value; |x|^2 for complex, in the accumulator's precision.
struct map_square {
  static constexpr akx_map id = AKX_MAP_SQUARE;
  template <class Acc, class Src> AKX_HD_INLINE static Acc apply(Src x) {
    if constexpr (is_cplx_v<Src>) {
      using W = decltype(widen(typename real_of<Acc>::type{}));
      const W re = (W)x.re, im = (W)x.im;
      return cvt<Acc>(re * re + im * im);
    } else {
      const Acc v = cvt<Acc>(x);
      return op_mul::apply(v, v);
    }
  }
};
// x != 0 tested on the source value (float -0.0 is zero, NaN is not), then 1 or 0.
struct map_nonzero {
  static constexpr akx_map id = AKX_MAP_NONZERO;
  template <class Acc, class Src> AKX_HD_INLINE static Acc apply(Src x) { return cvt<Acc>(is_nonzero(x)); }
};

#define AKX_MAP_LIST(X)                                                                    \
  X(AKX_MAP_IDENTITY, ::akx::map_identity) X(AKX_MAP_ABS, ::akx::map_abs)                 \
  X(AKX_MAP_SQUARE, ::akx::map_square) X(AKX_MAP_NONZERO, ::akx::map_nonzero)

// ---- user ops: an op that brings its own map and store (kernels/akx/user_op.cuh) -------------
// Such an op declares `using user_fns = ...`; its map takes the element's position i.
template <class Op, class = void>
struct is_user_op : false_type {};
template <class Op>
struct is_user_op<Op, void_t<typename Op::user_fns>> : true_type {};
// The map of a user op, as a map type: apply<Acc>(x, i) is the op's own.
template <class Op>
struct user_map {
  using op_type = Op;
  template <class Acc, class Src> AKX_HD_INLINE static Acc apply(const Src &x, int64_t i) {
    return Op::template load<Acc>(x, i);
  }
};
template <class M, class = void>
struct is_user_map : false_type {};
template <class M>
struct is_user_map<M, void_t<typename M::op_type>> : true_type {};
// The position a user op's map sees for the element at position i of the reduced array (or of
// an output's reduced elements): its position in the whole array when the array is a piece of
// one (akx_mapreduce_piece, akx_reduce_dims_piece). Built-in
// maps read no position: for them this is i, and no arithmetic is compiled.
template <class Op>
AKX_HD_INLINE int64_t op_position(akx__positions ps, int64_t i) {
  if constexpr (is_user_op<Op>::value)
    return ps.base + i + (ps.block > 0 ? idiv(i, ps.block) * ps.skip : 0);
  else
    return i;
}
// M applied to element x at position i: the built-in maps do not read the position (the
// position's arithmetic is then dead code, and no kernel of a built-in op computes it).
template <class M, class Acc, class Src>
AKX_HD_INLINE Acc map_apply(const Src &x, int64_t i) {
  if constexpr (is_user_map<M>::value) return M::template apply<Acc>(x, i);
  else return M::template apply<Acc>(x);
}

// A scan's element in and out: converted, or through a user op's map (with the index along
// the scanned dim) and store.
template <class Op, class Acc, class Src>
AKX_HD_INLINE Acc op_load(const Src &x, int64_t i) {
  if constexpr (is_user_op<Op>::value) return Op::template load<Acc>(x, i);
  else return cvt<Acc>(x);
}
template <class Op, class Dst, class Acc>
AKX_HD_INLINE Dst op_store(const Acc &v) {
  if constexpr (is_user_op<Op>::value) return Op::template store<Dst>(v);
  else return cvt<Dst>(v);
}

// ---- the map, a runtime argument of every reduction kernel -----------------------------------
// f(M{}) for the map type M of `map`, when (Src, map, Acc, Op) is a supported combination
// (the host refuses the others). One uniform branch, taken per element or per vector: a
// template parameter for the map would compile every reduction kernel once per map (four
// times the instances, twice over: nvcc and the sim) for no measurable gain in a loop bound
// by memory. A user op's map is its own (the host passes AKX_MAP_IDENTITY).
template <class Src, class Acc, class Op, class F>
AKX_DEVICE void visit_map(int32_t map, F &&f) {
  if constexpr (is_user_op<Op>::value) {
    (void)map;
    f(user_map<Op>{});
  } else {
    switch (map) {
#define AKX_X_(E, M)                                                                   \
  case E:                                                                              \
    if constexpr (reduce_supported(dtype_v<Src>, E, dtype_v<Acc>, Op::id)) f(M{});     \
    return;
      AKX_MAP_LIST(AKX_X_)
#undef AKX_X_
    }
  }
}
// The visitors below are structs with a templated call, not generic lambdas: NVRTC (13.0)
// takes the call operator of a generic lambda in device code for a host function and refuses
// it. Each holds what the lambda captured by reference.
// acc combined with the mapped elements of one vector, in order: one branch on the map per
// vector, not per element (a 16-byte vector of int8 is 16 elements). i0: the position of the
// vector's first element.
template <class Acc, class Op, class Src, int V>
struct combine_vec_visitor {
  Acc &acc;
  const vec<Src, V> &x;
  int64_t i0;
  akx__positions ps;  // by value: a reference to a kernel parameter puts it in local memory
  template <class M>
  AKX_DEVICE void operator()(M) const {
#pragma unroll
    for (int j = 0; j < V; ++j) acc = Op::apply(acc, map_apply<M, Acc>(x.v[j], op_position<Op>(ps, i0 + j)));
  }
};
template <class Acc, class Op, class Src, int V>
AKX_DEVICE Acc combine_vec(Acc acc, const vec<Src, V> &x, int32_t map, int64_t i0, akx__positions ps) {
  visit_map<Src, Acc, Op>(map, combine_vec_visitor<Acc, Op, Src, V>{acc, x, i0, ps});
  return acc;
}
// The mapped value of one source element at position i (the op's identity for a refused map:
// unreachable).
template <class Src, class Acc, class Op>
struct map_value_visitor {
  Acc &r;
  const Src &x;
  int64_t i;
  template <class M>
  AKX_DEVICE void operator()(M) const { r = map_apply<M, Acc>(x, i); }
};
template <class Src, class Acc, class Op>
AKX_DEVICE Acc map_value(int32_t map, Src x, int64_t i) {
  Acc r = Op::template identity<Acc>();
  visit_map<Src, Acc, Op>(map, map_value_visitor<Src, Acc, Op>{r, x, i});
  return r;
}

}  // namespace akx
