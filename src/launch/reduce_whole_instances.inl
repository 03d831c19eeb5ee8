// The whole-array reduction kernels of one source dtype (AKX_SRC_DTYPE), for one backend
// (the entry table: src/launch/reduce_instances.inl).
#include "akx/reduce_whole.cuh"
#define AKX_REDUCE_FAMILY reduce_whole
#define AKX_REDUCE_PLAN akx__reduce_whole_plan
#define AKX_REDUCE_LAUNCH akx::reduce_whole_launch
#define AKX_REDUCE_SRC(p) (p).src.dtype
#include "reduce_instances.inl"
