// The entries of every kernel family, for each backend: a table over the source dtype into
// the per-dtype instance files (CMakeLists.txt, akx_kernel_instances), one dispatch for all
// (src/core/kernel_entries.inc). What a family's kernels cannot report from the device is
// refused here, before anything launches.
#include "internal.h"
#include "akx/dtype_list.h"

namespace {
template <class Plan>
using entry = akx_status (*)(const Plan *, void *);

int32_t source_dtype(const akx__reduce_whole_plan &p) { return p.src.dtype; }
int32_t source_dtype(const akx__reduce_dims_plan &p) { return p.src_dtype; }
int32_t source_dtype(const akx__scan_plan &p) { return p.src_dtype; }
int32_t source_dtype(const akx__findall_plan &p) { return p.src_dtype; }

// The finishing store has no status to return on the device: a dst dtype it cannot store
// is refused here.
akx_status check_finish(const akx__finish &f, const char *family) {
  if (!f.bare && (unsigned)f.dst_dtype >= AKX_DTYPE_COUNT)
    return akx__fail(AKX_ERROR_INTERNAL, "%s: dst dtype %d cannot be stored", family, (int)f.dst_dtype);
  return AKX_SUCCESS;
}
akx_status entry_check(const akx__reduce_whole_plan &p, const char *f) { return check_finish(p.finish, f); }
akx_status entry_check(const akx__reduce_dims_plan &p, const char *f) { return check_finish(p.finish, f); }
akx_status entry_check(const akx__scan_plan &, const char *) { return AKX_SUCCESS; }
akx_status entry_check(const akx__findall_plan &, const char *) { return AKX_SUCCESS; }

template <class Plan>
akx_status dispatch(const entry<Plan> (&table)[AKX_DTYPE_COUNT], const Plan *p, void *stream,
                    const char *family) {
  const int32_t src = source_dtype(*p);
  if ((unsigned)src >= AKX_DTYPE_COUNT)
    return akx__fail(AKX_ERROR_INTERNAL, "%s: source dtype %d has no kernels", family, (int)src);
  AKX_TRY(entry_check(*p, family));
  return table[src](p, stream);
}

// The list runs in enum order, so a table built from it is indexed by akx_dtype.
#define AKX_X_(D, T, N, S) static_assert(D == __COUNTER__ - akx_counter_base_ - 1, "dtype list order");
constexpr int akx_counter_base_ = __COUNTER__;
AKX_DTYPE_LIST(AKX_X_)
#undef AKX_X_
}  // namespace

#define AKX_ENTRY_BACKEND sim
#include "kernel_entries.inc"
#undef AKX_ENTRY_BACKEND
#if defined(AKX_HAVE_CUDA)
#define AKX_ENTRY_BACKEND cuda
#include "kernel_entries.inc"
#undef AKX_ENTRY_BACKEND
#endif
