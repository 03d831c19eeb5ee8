// The entries of the scan and findall kernels for each backend: tables over the source dtype
// into the per-dtype instance files (src/scan/scan_instances.in).
#include "internal.h"
#include "src/core/dtype_list.h"

namespace {
template <class Plan>
using entry = akx_status (*)(const Plan *, void *);

template <class Plan>
akx_status dispatch(const entry<Plan> (&table)[AKX_DTYPE_COUNT], const Plan *p, void *stream) {
  if ((unsigned)p->src_dtype >= AKX_DTYPE_COUNT)
    return akx__fail(AKX_ERROR_INTERNAL, "scan: source dtype %d has no kernels", (int)p->src_dtype);
  return table[p->src_dtype](p, stream);
}
}  // namespace

// The per-dtype entries of backend B (sim, cuda): their declarations, then the two launchers.
#define AKX_sim_DECL_(D, T, N, S)                                            \
  akx_status akx__sim_scan_##N(const akx__scan_plan *, void *);              \
  akx_status akx__sim_findall_##N(const akx__findall_plan *, void *);
#define AKX_cuda_DECL_(D, T, N, S)                                           \
  akx_status akx__cuda_scan_##N(const akx__scan_plan *, void *);             \
  akx_status akx__cuda_findall_##N(const akx__findall_plan *, void *);
#define AKX_sim_SCAN_(D, T, N, S) akx__sim_scan_##N,
#define AKX_cuda_SCAN_(D, T, N, S) akx__cuda_scan_##N,
#define AKX_sim_FINDALL_(D, T, N, S) akx__sim_findall_##N,
#define AKX_cuda_FINDALL_(D, T, N, S) akx__cuda_findall_##N,
#define AKX_SCAN_BACKEND_(B)                                                                 \
  AKX_DTYPE_LIST(AKX_##B##_DECL_)                                                            \
  akx_status akx__##B##_scan_launch(const akx__scan_plan *p, void *stream) {                 \
    static const entry<akx__scan_plan> table[AKX_DTYPE_COUNT] = {AKX_DTYPE_LIST(AKX_##B##_SCAN_)}; \
    return dispatch(table, p, stream);                                                       \
  }                                                                                          \
  akx_status akx__##B##_findall_launch(const akx__findall_plan *p, void *stream) {           \
    static const entry<akx__findall_plan> table[AKX_DTYPE_COUNT] = {                         \
        AKX_DTYPE_LIST(AKX_##B##_FINDALL_)};                                                 \
    return dispatch(table, p, stream);                                                       \
  }

extern "C" {
AKX_SCAN_BACKEND_(sim)
#if defined(AKX_HAVE_CUDA)
AKX_SCAN_BACKEND_(cuda)
#endif
}
