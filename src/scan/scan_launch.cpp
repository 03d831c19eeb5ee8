// The entries of the scan and findall kernels for each backend: tables over the source dtype
// into the per-dtype instance files (src/scan/scan_instances.in).
#include "internal.h"
#include "src/core/dtype_list.h"

namespace {
using scan_entry = akx_status (*)(const akx__scan_plan *, void *);
using findall_entry = akx_status (*)(const akx__findall_plan *, void *);

template <class Entry, class Plan>
akx_status dispatch(const Entry (&table)[AKX_DTYPE_COUNT], const Plan *p, int32_t src_dtype,
                    void *stream) {
  if ((unsigned)src_dtype >= AKX_DTYPE_COUNT)
    return akx__fail(AKX_ERROR_INTERNAL, "scan: source dtype %d has no kernels", (int)src_dtype);
  return table[src_dtype](p, stream);
}
}  // namespace

extern "C" {
#define AKX_X_(D, T, N, S)                                                  \
  akx_status akx__sim_scan_##N(const akx__scan_plan *, void *);             \
  akx_status akx__sim_findall_##N(const akx__findall_plan *, void *);
AKX_DTYPE_LIST(AKX_X_)
#undef AKX_X_

akx_status akx__sim_scan_launch(const akx__scan_plan *p, void *stream) {
#define AKX_X_(D, T, N, S) akx__sim_scan_##N,
  static const scan_entry table[AKX_DTYPE_COUNT] = {AKX_DTYPE_LIST(AKX_X_)};
#undef AKX_X_
  return dispatch(table, p, p->src_dtype, stream);
}
akx_status akx__sim_findall_launch(const akx__findall_plan *p, void *stream) {
#define AKX_X_(D, T, N, S) akx__sim_findall_##N,
  static const findall_entry table[AKX_DTYPE_COUNT] = {AKX_DTYPE_LIST(AKX_X_)};
#undef AKX_X_
  return dispatch(table, p, p->src_dtype, stream);
}

#if defined(AKX_HAVE_CUDA)
#define AKX_X_(D, T, N, S)                                                  \
  akx_status akx__cuda_scan_##N(const akx__scan_plan *, void *);            \
  akx_status akx__cuda_findall_##N(const akx__findall_plan *, void *);
AKX_DTYPE_LIST(AKX_X_)
#undef AKX_X_

akx_status akx__cuda_scan_launch(const akx__scan_plan *p, void *stream) {
#define AKX_X_(D, T, N, S) akx__cuda_scan_##N,
  static const scan_entry table[AKX_DTYPE_COUNT] = {AKX_DTYPE_LIST(AKX_X_)};
#undef AKX_X_
  return dispatch(table, p, p->src_dtype, stream);
}
akx_status akx__cuda_findall_launch(const akx__findall_plan *p, void *stream) {
#define AKX_X_(D, T, N, S) akx__cuda_findall_##N,
  static const findall_entry table[AKX_DTYPE_COUNT] = {AKX_DTYPE_LIST(AKX_X_)};
#undef AKX_X_
  return dispatch(table, p, p->src_dtype, stream);
}
#endif
}
