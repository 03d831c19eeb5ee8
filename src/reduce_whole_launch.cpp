// The entry of the whole-array reduction kernels for each backend: one switch over the
// source dtype into the per-dtype instance files (src/kernel_instances.in).
#include "internal.h"
#include "src/dtype_list.h"

extern "C" {
#define AKX_X_(D, T, N, S) akx_status akx__sim_reduce_whole_##N(const akx__reduce_whole_plan *, void *);
AKX_DTYPE_LIST(AKX_X_)
#undef AKX_X_

akx_status akx__sim_reduce_whole_launch(const akx__reduce_whole_plan *p, void *stream) {
  switch (p->src.dtype) {
#define AKX_X_(D, T, N, S) case D: return akx__sim_reduce_whole_##N(p, stream);
    AKX_DTYPE_LIST(AKX_X_)
#undef AKX_X_
  }
  return akx__fail(AKX_ERROR_INTERNAL, "reduce_whole: source dtype %d has no kernels", (int)p->src.dtype);
}

#if defined(AKX_HAVE_CUDA)
#define AKX_X_(D, T, N, S) akx_status akx__cuda_reduce_whole_##N(const akx__reduce_whole_plan *, void *);
AKX_DTYPE_LIST(AKX_X_)
#undef AKX_X_

akx_status akx__cuda_reduce_whole_launch(const akx__reduce_whole_plan *p, void *stream) {
  switch (p->src.dtype) {
#define AKX_X_(D, T, N, S) case D: return akx__cuda_reduce_whole_##N(p, stream);
    AKX_DTYPE_LIST(AKX_X_)
#undef AKX_X_
  }
  return akx__fail(AKX_ERROR_INTERNAL, "reduce_whole: source dtype %d has no kernels", (int)p->src.dtype);
}
#endif
}
