// The entry of the whole-array reduction kernels for each backend: a table over the source
// dtype into the per-dtype instance files (src/kernel_instances.in), one dispatch for both.
#include "internal.h"
#include "src/core/dtype_list.h"

namespace {
using entry = akx_status (*)(const akx__reduce_whole_plan *, void *);

akx_status dispatch(const entry (&table)[AKX_DTYPE_COUNT], const akx__reduce_whole_plan *p,
                    void *stream) {
  if ((unsigned)p->src.dtype >= AKX_DTYPE_COUNT)
    return akx__fail(AKX_ERROR_INTERNAL, "reduce_whole: source dtype %d has no kernels", (int)p->src.dtype);
  // The finishing store has no status to return on the device: a dst dtype it cannot store
  // is refused here, before anything launches.
  if (!p->finish.bare && (unsigned)p->finish.dst_dtype >= AKX_DTYPE_COUNT)
    return akx__fail(AKX_ERROR_INTERNAL, "reduce_whole: dst dtype %d cannot be stored",
                     (int)p->finish.dst_dtype);
  return table[p->src.dtype](p, stream);
}

// The list runs in enum order, so a table built from it is indexed by akx_dtype.
#define AKX_X_(D, T, N, S) static_assert(D == __COUNTER__ - akx_counter_base_ - 1, "dtype list order");
constexpr int akx_counter_base_ = __COUNTER__;
AKX_DTYPE_LIST(AKX_X_)
#undef AKX_X_
}  // namespace

extern "C" {
#define AKX_X_(D, T, N, S) akx_status akx__sim_reduce_whole_##N(const akx__reduce_whole_plan *, void *);
AKX_DTYPE_LIST(AKX_X_)
#undef AKX_X_

akx_status akx__sim_reduce_whole_launch(const akx__reduce_whole_plan *p, void *stream) {
#define AKX_X_(D, T, N, S) akx__sim_reduce_whole_##N,
  static const entry table[AKX_DTYPE_COUNT] = {AKX_DTYPE_LIST(AKX_X_)};
#undef AKX_X_
  return dispatch(table, p, stream);
}

#if defined(AKX_HAVE_CUDA)
#define AKX_X_(D, T, N, S) akx_status akx__cuda_reduce_whole_##N(const akx__reduce_whole_plan *, void *);
AKX_DTYPE_LIST(AKX_X_)
#undef AKX_X_

akx_status akx__cuda_reduce_whole_launch(const akx__reduce_whole_plan *p, void *stream) {
#define AKX_X_(D, T, N, S) akx__cuda_reduce_whole_##N,
  static const entry table[AKX_DTYPE_COUNT] = {AKX_DTYPE_LIST(AKX_X_)};
#undef AKX_X_
  return dispatch(table, p, stream);
}
#endif
}
