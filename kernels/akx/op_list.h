/* The one list of ops every dispatch (C and C++) is generated from, as kernels/akx/dtype_list.h
 * is of dtypes. X(enum, C++ functor, name). The functors are kernels/akx/ops.cuh's; C code
 * reads the functor column only as text (#F: src/jit/instance.c names it in the kernels it
 * instantiates at run time). */
#ifndef AKX_OP_LIST_H
#define AKX_OP_LIST_H
#define AKX_OP_LIST(X)                 \
  X(AKX_OP_ADD, ::akx::op_add, ADD)    \
  X(AKX_OP_MUL, ::akx::op_mul, MUL)    \
  X(AKX_OP_MIN, ::akx::op_min, MIN)    \
  X(AKX_OP_MAX, ::akx::op_max, MAX)    \
  X(AKX_OP_AND, ::akx::op_and, AND)    \
  X(AKX_OP_OR, ::akx::op_or, OR)       \
  X(AKX_OP_XOR, ::akx::op_xor, XOR)
#endif
