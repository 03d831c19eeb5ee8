// The GPU's registers and static shared memory for every built-in kernel instance, for the
// sim's occupancy model: src/sim/kernel_resources.inc, generated from a CUDA build for sm_90
// by bench/kernel_resources.py, which the kernel_resources ctest runs against every CUDA build
// (a spill or local memory fails it, and so does a table that disagrees with the build).
//
// A launcher names its kernel's instance: AKX_LAUNCH(resourced<Src, Dst, Acc, Op>(info), ...),
// with void for a template parameter the kernel does not have. On the sim the row of that
// instance replaces the kernel_info's declared registers and gives its static shared memory;
// a kernel the table does not hold (a user functor of include/akx.cuh) keeps its declaration.
// nvcc needs none of it: the GPU knows its own figures.
#pragma once
#include "akx/dtypes.cuh"

namespace akx {

// -1: the kernel has no such template parameter (or it is not a built-in dtype / op).
template <class T, class = void>
struct dtype_key {
  static constexpr int value = -1;
};
template <class T>
struct dtype_key<T, void_t<decltype(dtype_of_type<T>::value)>> {
  static constexpr int value = (int)dtype_of_type<T>::value;
};
template <class Op, class = void>
struct op_key {
  static constexpr int value = -1;
};
template <class Op>
struct op_key<Op, void_t<decltype(Op::id)>> {
  static constexpr int value = (int)Op::id;
};

#if defined(__CUDACC__)
template <class Src, class Dst, class Acc, class Op>
AKX_HD_INLINE constexpr kernel_info resourced(const kernel_info &info) { return info; }
#else
struct kernel_resources_row {
  const char *function;
  int src, dst, acc, op;
  int registers, static_smem;
};
// The rows of src/sim/kernel_resources.inc, compiled once (src/sim/kernel_resources.cpp: a new
// table rebuilds that file alone), sorted by (function by strcmp, src, dst, acc, op).
extern const kernel_resources_row kernel_resources_table[];
extern const size_t kernel_resources_count;
// sim::find_kernel_resources (kernels/akx/sim_device.hpp's runtime entries): the row of
// (function, src, dst, acc, op), or nullptr, by a binary search of that table.

template <class Src, class Dst, class Acc, class Op>
inline kernel_info resourced(const kernel_info &info) {
  const kernel_resources_row *r =
      sim::find_kernel_resources(info.function ? info.function : info.name, dtype_key<Src>::value,
                            dtype_key<Dst>::value, dtype_key<Acc>::value, op_key<Op>::value);
  if (!r) return info;
  kernel_info k = info;
  k.registers = r->registers;
  k.static_smem = r->static_smem;
  return k;
}
#endif

}  // namespace akx
