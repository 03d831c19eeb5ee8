// The dims reduction kernels of one source dtype (AKX_SRC_DTYPE), for one backend (the entry
// table: src/launch/reduce_instances.inl). Every shape shares the two kernel bodies of
// kernels/akx/reduce_dims.cuh.
#include "akx/reduce_dims.cuh"
#define AKX_REDUCE_FAMILY reduce_dims
#define AKX_REDUCE_PLAN akx__reduce_dims_plan
#define AKX_REDUCE_LAUNCH akx::reduce_dims_launch
#define AKX_REDUCE_SRC(p) (p).src_dtype
#include "reduce_instances.inl"
