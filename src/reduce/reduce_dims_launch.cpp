// The entry of the dims reduction kernels for each backend: a table over the source dtype
// into the per-dtype instance files (src/reduce/reduce_dims_instances.in).
#include "internal.h"
#include "src/core/dtype_list.h"

namespace {
using entry = akx_status (*)(const akx__reduce_dims_plan *, void *);

akx_status dispatch(const entry (&table)[AKX_DTYPE_COUNT], const akx__reduce_dims_plan *p,
                    void *stream) {
  if ((unsigned)p->src_dtype >= AKX_DTYPE_COUNT)
    return akx__fail(AKX_ERROR_INTERNAL, "reduce_dims: source dtype %d has no kernels", (int)p->src_dtype);
  // The finishing store has no status to return on the device: refuse here what it cannot do.
  if ((unsigned)p->finish.dst_dtype >= AKX_DTYPE_COUNT)
    return akx__fail(AKX_ERROR_INTERNAL, "reduce_dims: dst dtype %d cannot be stored",
                     (int)p->finish.dst_dtype);
  return table[p->src_dtype](p, stream);
}
}  // namespace

// The per-dtype entries of backend B (sim, cuda): their declarations, then the launcher.
#define AKX_sim_RD_DECL_(D, T, N, S) akx_status akx__sim_reduce_dims_##N(const akx__reduce_dims_plan *, void *);
#define AKX_cuda_RD_DECL_(D, T, N, S) akx_status akx__cuda_reduce_dims_##N(const akx__reduce_dims_plan *, void *);
#define AKX_sim_RD_(D, T, N, S) akx__sim_reduce_dims_##N,
#define AKX_cuda_RD_(D, T, N, S) akx__cuda_reduce_dims_##N,
#define AKX_REDUCE_DIMS_BACKEND_(B)                                                        \
  AKX_DTYPE_LIST(AKX_##B##_RD_DECL_)                                                       \
  akx_status akx__##B##_reduce_dims_launch(const akx__reduce_dims_plan *p, void *stream) { \
    static const entry table[AKX_DTYPE_COUNT] = {AKX_DTYPE_LIST(AKX_##B##_RD_)};           \
    return dispatch(table, p, stream);                                                     \
  }

extern "C" {
AKX_REDUCE_DIMS_BACKEND_(sim)
#if defined(AKX_HAVE_CUDA)
AKX_REDUCE_DIMS_BACKEND_(cuda)
#endif
}
