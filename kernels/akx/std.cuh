// What the kernel headers take from the C and C++ standard libraries, in one place.
//
// nvcc and the host compiler (the sim) have their standard libraries: this header includes
// them and brings the traits the kernels use into namespace akx (akx::is_same is
// std::is_same), so that the code compiled ahead of time is what it was with std:: spelled out.
// NVRTC has no standard header at all (not even <stdint.h>), and a run-time compile must not
// depend on a toolkit's include directory being where the build found it: under
// __CUDACC_RTC__ the same names are defined here, as small as the kernels need them.
// NVRTC has memcpy, printf and the math functions (fabs, sqrt, ...) built in.
//
// Kernel code says akx::is_same (or is_same inside namespace akx), never std::.
#pragma once

#if !defined(__CUDACC_RTC__)
// ---------------------------------------------------------------- nvcc, host compiler ---
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <limits>
#include <type_traits>

namespace akx {
using std::bool_constant;
using std::conditional;
using std::declval;
using std::false_type;
using std::is_floating_point;
using std::is_integral;
using std::is_same;
using std::is_signed;
using std::is_trivially_copyable;
using std::make_unsigned;
using std::numeric_limits;
using std::true_type;
using std::void_t;
}  // namespace akx

#else
// ------------------------------------------------------------------------------- NVRTC ---
// The fixed-width types as glibc defines them for LP64 (int64_t is long, not long long): a
// kernel's lowered name spells its parameter types, and must be the one nvcc gives it.
static_assert(sizeof(long) == 8 && sizeof(void *) == 8, "akx/std.cuh: NVRTC for an LP64 target");
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long uint64_t;
typedef long intptr_t;
typedef unsigned long uintptr_t;
typedef decltype(sizeof(0)) size_t;
typedef decltype((char *)0 - (char *)0) ptrdiff_t;

namespace akx {
template <class T, T v>
struct integral_constant {
  static constexpr T value = v;
  using value_type = T;
  using type = integral_constant;
  __host__ __device__ constexpr operator value_type() const { return value; }
};
template <bool B>
using bool_constant = integral_constant<bool, B>;
using true_type = bool_constant<true>;
using false_type = bool_constant<false>;

template <class A, class B>
struct is_same : false_type {};
template <class A>
struct is_same<A, A> : true_type {};

template <bool B, class T, class F>
struct conditional {
  using type = T;
};
template <class T, class F>
struct conditional<false, T, F> {
  using type = F;
};

template <class...>
using void_t = void;

template <class T> struct remove_cv_ { using type = T; };
template <class T> struct remove_cv_<const T> { using type = T; };
template <class T> struct remove_cv_<volatile T> { using type = T; };
template <class T> struct remove_cv_<const volatile T> { using type = T; };

// The integer types and bool (the character types a kernel never takes are left out).
template <class T> struct is_integral_ : false_type {};
template <> struct is_integral_<bool> : true_type {};
template <> struct is_integral_<char> : true_type {};
template <> struct is_integral_<signed char> : true_type {};
template <> struct is_integral_<unsigned char> : true_type {};
template <> struct is_integral_<short> : true_type {};
template <> struct is_integral_<unsigned short> : true_type {};
template <> struct is_integral_<int> : true_type {};
template <> struct is_integral_<unsigned int> : true_type {};
template <> struct is_integral_<long> : true_type {};
template <> struct is_integral_<unsigned long> : true_type {};
template <> struct is_integral_<long long> : true_type {};
template <> struct is_integral_<unsigned long long> : true_type {};
template <class T> struct is_integral : is_integral_<typename remove_cv_<T>::type> {};

// float and double (a kernel has no long double).
template <class T> struct is_floating_point_ : false_type {};
template <> struct is_floating_point_<float> : true_type {};
template <> struct is_floating_point_<double> : true_type {};
template <class T> struct is_floating_point : is_floating_point_<typename remove_cv_<T>::type> {};

// Arithmetic types where T(-1) < T(0) (bool is not signed); false for anything else.
template <class T, bool = is_integral<T>::value || is_floating_point<T>::value>
struct is_signed_ : bool_constant<(T(-1) < T(0))> {};
template <class T>
struct is_signed_<T, false> : false_type {};
template <class T> struct is_signed : is_signed_<typename remove_cv_<T>::type> {};

template <class T> struct make_unsigned;
template <> struct make_unsigned<char> { using type = unsigned char; };
template <> struct make_unsigned<signed char> { using type = unsigned char; };
template <> struct make_unsigned<unsigned char> { using type = unsigned char; };
template <> struct make_unsigned<short> { using type = unsigned short; };
template <> struct make_unsigned<unsigned short> { using type = unsigned short; };
template <> struct make_unsigned<int> { using type = unsigned int; };
template <> struct make_unsigned<unsigned int> { using type = unsigned int; };
template <> struct make_unsigned<long> { using type = unsigned long; };
template <> struct make_unsigned<unsigned long> { using type = unsigned long; };
template <> struct make_unsigned<long long> { using type = unsigned long long; };
template <> struct make_unsigned<unsigned long long> { using type = unsigned long long; };

template <class T>
struct is_trivially_copyable : bool_constant<__is_trivially_copyable(T)> {};

template <class T>
__host__ __device__ T &&declval() noexcept;

// lowest(), max() and, for float and double, infinity(): the members the kernels use.
template <class T>
struct numeric_limits_int_ {
  using U = typename make_unsigned<T>::type;
  static constexpr bool is_signed_v = T(-1) < T(0);
  __host__ __device__ static constexpr T max() { return is_signed_v ? T(U(~U(0)) >> 1) : T(~U(0)); }
  __host__ __device__ static constexpr T lowest() { return is_signed_v ? T(-max() - 1) : T(0); }
};
template <class T> struct numeric_limits;
template <> struct numeric_limits<bool> {
  __host__ __device__ static constexpr bool max() { return true; }
  __host__ __device__ static constexpr bool lowest() { return false; }
};
template <> struct numeric_limits<char> : numeric_limits_int_<char> {};
template <> struct numeric_limits<signed char> : numeric_limits_int_<signed char> {};
template <> struct numeric_limits<unsigned char> : numeric_limits_int_<unsigned char> {};
template <> struct numeric_limits<short> : numeric_limits_int_<short> {};
template <> struct numeric_limits<unsigned short> : numeric_limits_int_<unsigned short> {};
template <> struct numeric_limits<int> : numeric_limits_int_<int> {};
template <> struct numeric_limits<unsigned int> : numeric_limits_int_<unsigned int> {};
template <> struct numeric_limits<long> : numeric_limits_int_<long> {};
template <> struct numeric_limits<unsigned long> : numeric_limits_int_<unsigned long> {};
template <> struct numeric_limits<long long> : numeric_limits_int_<long long> {};
template <> struct numeric_limits<unsigned long long> : numeric_limits_int_<unsigned long long> {};
template <> struct numeric_limits<float> {
  __host__ __device__ static constexpr float max() { return 0x1.fffffep127f; }
  __host__ __device__ static constexpr float lowest() { return -0x1.fffffep127f; }
  __host__ __device__ static constexpr float infinity() { return __builtin_bit_cast(float, 0x7f800000u); }
};
template <> struct numeric_limits<double> {
  __host__ __device__ static constexpr double max() { return 0x1.fffffffffffffp1023; }
  __host__ __device__ static constexpr double lowest() { return -0x1.fffffffffffffp1023; }
  __host__ __device__ static constexpr double infinity() {
    return __builtin_bit_cast(double, 0x7ff0000000000000ull);
  }
};
}  // namespace akx
#endif
