// Element types of every akx_dtype, and the rules that map (source dtype, map, op) to an
// accumulator. The rules are constexpr functions over akx_dtype values so that one
// definition serves the host's validation (src/core/dtype_rules.cpp) and the choice of kernel
// instances (src/launch/reduce_whole_instances.inl).
#pragma once
#include "akx/device.cuh"
#include "akx/dtype_list.h"

namespace akx {

// float16 and bfloat16 are carried as their bits; arithmetic on them goes through float.
struct f16 { uint16_t bits; };
struct bf16 { uint16_t bits; };
template <class R>
struct cplx { R re, im; };
using c64 = cplx<float>;
using c128 = cplx<double>;

template <akx_dtype D> struct type_of_dtype;
template <class T> struct dtype_of_type;
#define AKX_X_(D, T, N, S)                                                \
  template <> struct type_of_dtype<D> { using type = T; };                \
  template <> struct dtype_of_type<T> { static constexpr akx_dtype value = D; }; \
  static_assert(sizeof(T) == S, "dtype size");
AKX_DTYPE_LIST(AKX_X_)
#undef AKX_X_
template <akx_dtype D> using dtype_t = typename type_of_dtype<D>::type;
template <class T> constexpr akx_dtype dtype_v = dtype_of_type<T>::value;

// Bytes of an element of dtype t (0 for anything else): the kernels' own akx_dtype_size,
// which a run-time module cannot import from libakx.
AKX_HD_INLINE constexpr size_t dtype_bytes(int32_t t) {
#define AKX_X_(D, T, N, S) if (t == D) return S;
  AKX_DTYPE_LIST(AKX_X_)
#undef AKX_X_
  return 0;
}

// ---- kinds ---------------------------------------------------------------------------------
AKX_CONSTEXPR bool is_bool(akx_dtype t) { return t == AKX_BOOL; }
AKX_CONSTEXPR bool is_signed_int(akx_dtype t) {
  return t == AKX_INT8 || t == AKX_INT16 || t == AKX_INT32 || t == AKX_INT64;
}
AKX_CONSTEXPR bool is_unsigned_int(akx_dtype t) {
  return t == AKX_UINT8 || t == AKX_UINT16 || t == AKX_UINT32 || t == AKX_UINT64;
}
AKX_CONSTEXPR bool is_int(akx_dtype t) { return is_signed_int(t) || is_unsigned_int(t); }
AKX_CONSTEXPR bool is_float(akx_dtype t) {
  return t == AKX_FLOAT16 || t == AKX_BFLOAT16 || t == AKX_FLOAT32 || t == AKX_FLOAT64;
}
AKX_CONSTEXPR bool is_complex(akx_dtype t) { return t == AKX_COMPLEX64 || t == AKX_COMPLEX128; }
AKX_CONSTEXPR bool is_valid_dtype(int t) { return t >= AKX_BOOL && t <= AKX_COMPLEX128; }

// ---- the rules (documented in include/akx.h) -----------------------------------------------
// The type a map produces from a source element, before any widening.
AKX_CONSTEXPR akx_dtype map_result(akx_dtype src, akx_map m) {
  if (m == AKX_MAP_NONZERO) return AKX_BOOL;
  if ((m == AKX_MAP_ABS || m == AKX_MAP_SQUARE) && is_complex(src))
    return src == AKX_COMPLEX64 ? AKX_FLOAT32 : AKX_FLOAT64;
  return src;
}
// AUTO accumulator: 16-bit floats widen to float32 (their sums leave float16's range fast);
// bool and narrow integers widen to 64 bits for ADD and MUL (as Julia's sum and prod do).
AKX_CONSTEXPR akx_dtype auto_acc(akx_dtype r, akx_op op) {
  if (r == AKX_FLOAT16 || r == AKX_BFLOAT16) return AKX_FLOAT32;
  if (op == AKX_OP_ADD || op == AKX_OP_MUL) {
    if (r == AKX_BOOL || r == AKX_INT8 || r == AKX_INT16 || r == AKX_INT32) return AKX_INT64;
    if (r == AKX_UINT8 || r == AKX_UINT16 || r == AKX_UINT32) return AKX_UINT64;
  }
  return r;
}
// An explicit accumulator: the AUTO one, R itself, or a wide type of R's kind; also int64 for
// unsigned integers narrower than 64 bits (PyTorch promotes uint8 sums to int64).
AKX_CONSTEXPR bool acc_allowed(akx_dtype r, akx_op op, akx_dtype acc) {
  if (acc == r || acc == auto_acc(r, op)) return true;
  if (is_bool(r) || is_signed_int(r)) return acc == AKX_INT64 || acc == AKX_FLOAT64;
  if (is_unsigned_int(r))
    return acc == AKX_UINT64 || acc == AKX_FLOAT64 || (acc == AKX_INT64 && r != AKX_UINT64);
  if (is_float(r)) return acc == AKX_FLOAT32 || acc == AKX_FLOAT64;
  if (is_complex(r)) return acc == AKX_COMPLEX128;
  return false;
}
// ---- the prebuilt sets ----------------------------------------------------------------------
// What a build compiles ahead of time (src/launch/*_instances.inl); everything else the rules
// take is compiled at run time on first use (src/jit/builtin_instance.c, NVRTC on CUDA), from
// the same text (docs/runtime_kernels.md, "The prebuilt sets"):
//   library: what libakx holds, on both backends: the AUTO accumulators (what a call without
//     opts->acc uses) of the source dtypes of library_source and the ops of library_op. nvcc
//     was most of the build (a reduction kernel is 10 to 50 KB of SASS: four maps, unrolled
//     vector loads; every explicit accumulator of every dtype made 118 MB of sm_90 code before
//     compression, bench/RESULTS.md); the sim holds the same set, so that a sim context routes
//     every call as a CUDA context does and libakx.so carries no kernel a user's program does
//     not ask for;
//   tests: the rest of what the tests call, which would cost them 0.5 to 1 s of the host
//     compiler per combination (several seconds of clang under the sanitizers): every
//     accumulator the rules allow (a scan's: AUTO or the source's), for the sim alone, built
//     into the test-only plugin the sim loads on demand (src/jit/test_kernels.h);
//   all: both (AKX_CUDA_PREBUILT_ALL, the all-kernels preset: nvcc prebuilds every kernel the
//     tests run, so that the kernel_resources test checks each against its declaration).
enum prebuilt_for : int { prebuilt_for_library = 0, prebuilt_for_tests = 1, prebuilt_for_all = 2 };
#if defined(__CUDACC__) && defined(AKX_CUDA_PREBUILT_ALL) && AKX_CUDA_PREBUILT_ALL
#define AKX_PREBUILT_FOR ::akx::prebuilt_for_all
#elif !defined(__CUDACC__) && defined(AKX_PREBUILT_TEST_SET)
#define AKX_PREBUILT_FOR ::akx::prebuilt_for_tests
#else
#define AKX_PREBUILT_FOR ::akx::prebuilt_for_library
#endif
// The library prebuilds the sources of C's and Julia's default types; bool, float16, bfloat16
// and the narrow integers compile at run time on first use (NVRTC, a few seconds once per
// machine: the disk cache keeps them). float16 and bfloat16 were nvcc's two largest units of
// every family, and the README's build of the whole library had to stay within its ten minutes
// on two cores (bench/RESULTS.md, "Build time").
AKX_CONSTEXPR bool library_source(akx_dtype src) {
#define AKX_X_(D) || src == D
  return false AKX_LIBRARY_SOURCE_LIST(AKX_X_);
#undef AKX_X_
}
// The library prebuilds ADD, MIN and MAX (sums, counts, softmax's max, ranges); MUL and the bit
// ops compile at run time on first use (kept by the disk cache). Half of nvcc's build time
// went to those four ops of the integer sources, seven ops where the floats have four, for the
// calls a program makes least (measured: bench/RESULTS.md, "Build time").
AKX_CONSTEXPR bool library_op(akx_op op) { return op == AKX_OP_ADD || op == AKX_OP_MIN || op == AKX_OP_MAX; }
// A set's membership from the library's and from all of them (the library lies within all).
AKX_CONSTEXPR bool in_set(bool library, bool all, prebuilt_for b) {
  return b == prebuilt_for_library ? library : b == prebuilt_for_all ? all : all && !library;
}
// Kernels keyed by their source alone (findall): every source dtype's in the library's set, so
// none in the tests'.
AKX_CONSTEXPR bool source_only_prebuilt(prebuilt_for b) { return b != prebuilt_for_tests; }
// Ops an accumulator supports: bit ops need integers or bool, MIN/MAX an order (no
// complex), ADD/MUL a number (a bool accumulator would silently saturate).
AKX_CONSTEXPR bool op_allowed(akx_dtype acc, akx_op op) {
  switch (op) {
    case AKX_OP_ADD: case AKX_OP_MUL: return !is_bool(acc);
    case AKX_OP_MIN: case AKX_OP_MAX: return !is_complex(acc);
    case AKX_OP_AND: case AKX_OP_OR: case AKX_OP_XOR: return is_int(acc) || is_bool(acc);
    // Their accumulator is a position and a value, no dtype (kernels/akx/user_op.cuh's path).
    case AKX_OP_ARGMIN: case AKX_OP_ARGMAX: return false;
  }
  return false;
}
AKX_CONSTEXPR bool reduce_supported(akx_dtype src, akx_map m, akx_dtype acc, akx_op op) {
  return acc_allowed(map_result(src, m), op, acc) && op_allowed(acc, op);
}
AKX_CONSTEXPR bool reduce_prebuilt(akx_dtype src, akx_map m, akx_dtype acc, akx_op op, prebuilt_for b) {
  const bool all = reduce_supported(src, m, acc, op);
  return in_set(all && library_source(src) && library_op(op) && acc == auto_acc(map_result(src, m), op), all, b);
}
// Whether some map makes (src, map, acc, op) supported (a run-time compile takes it), or
// prebuilt: reduction kernels are compiled per
// (source, accumulator, op) and take the map as an argument.
AKX_CONSTEXPR bool reduce_supported_any_map(akx_dtype src, akx_dtype acc, akx_op op) {
  for (int m = 0; m < AKX_MAP_COUNT; ++m)
    if (reduce_supported(src, (akx_map)m, acc, op)) return true;
  return false;
}
AKX_CONSTEXPR bool reduce_prebuilt_any_map(akx_dtype src, akx_dtype acc, akx_op op, prebuilt_for b) {
  for (int m = 0; m < AKX_MAP_COUNT; ++m)
    if (reduce_prebuilt(src, (akx_map)m, acc, op, b)) return true;
  return false;
}
// Scans take every accumulator reductions take (the identity map's) and store to any dst
// dtype, converted once at the store.
AKX_CONSTEXPR bool scan_supported(akx_dtype src, akx_dtype acc, akx_op op) {
  return acc_allowed(src, op, acc) && op_allowed(acc, op);
}
// Scans compile fewer combinations ahead of time than they take (each is four kernels): the
// library's AUTO accumulator, or (the tests' set) the AUTO one or the source's own, stored to
// the accumulator's dtype or the source's (a float16 cumsum into float16).
AKX_CONSTEXPR bool scan_prebuilt(akx_dtype src, akx_dtype acc, akx_op op, akx_dtype dst, prebuilt_for b) {
  const bool auto_one = acc == auto_acc(src, op);
  const bool all = (auto_one || acc == src) && op_allowed(acc, op) && (dst == acc || dst == src);
  return in_set(all && auto_one && library_source(src) && library_op(op), all, b);
}

}  // namespace akx
