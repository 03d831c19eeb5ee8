/* The one list of dtypes every dispatch (C and C++) is generated from.
 * X(enum, C++ element type, name, size in bytes). The C++ type column is only expanded by
 * C++ code (kernels/akx/dtypes.cuh), which checks sizeof against the size column. */
#ifndef AKX_DTYPE_LIST_H
#define AKX_DTYPE_LIST_H
#define AKX_DTYPE_LIST(X)                          \
  X(AKX_BOOL, bool, bool, 1)                       \
  X(AKX_INT8, int8_t, int8, 1)                     \
  X(AKX_UINT8, uint8_t, uint8, 1)                  \
  X(AKX_INT16, int16_t, int16, 2)                  \
  X(AKX_UINT16, uint16_t, uint16, 2)               \
  X(AKX_INT32, int32_t, int32, 4)                  \
  X(AKX_UINT32, uint32_t, uint32, 4)               \
  X(AKX_INT64, int64_t, int64, 8)                  \
  X(AKX_UINT64, uint64_t, uint64, 8)               \
  X(AKX_FLOAT16, ::akx::f16, float16, 2)           \
  X(AKX_BFLOAT16, ::akx::bf16, bfloat16, 2)        \
  X(AKX_FLOAT32, float, float32, 4)                \
  X(AKX_FLOAT64, double, float64, 8)               \
  X(AKX_COMPLEX64, ::akx::c64, complex64, 8)       \
  X(AKX_COMPLEX128, ::akx::c128, complex128, 16)
/* The source dtypes whose kernels libakx prebuilds (akx::library_source, kernels/akx/dtypes.cuh,
 * which says why these). CMake reads the list too: each of them is a build unit of its own per
 * family file, the others share one (CMakeLists.txt, akx_kernel_instances). */
#define AKX_LIBRARY_SOURCE_LIST(X) X(AKX_INT32) X(AKX_INT64) X(AKX_FLOAT32) X(AKX_FLOAT64)
#endif
