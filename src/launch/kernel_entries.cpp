// The prebuilt entries of every family, for each backend: tables over (source dtype, family)
// into the per-dtype instance files (CMakeLists.txt, akx_kernel_instances), generated from the
// family list (src/core/families.h) and the dtype list.
#include "kernel_entries.h"

#include "akx/dtype_list.h"
#include "internal.h"

namespace {
// The list runs in enum order, so a table built from it is indexed by akx_dtype.
#define AKX_X_(D, T, N, S) static_assert(D == __COUNTER__ - akx_counter_base_ - 1, "dtype list order");
constexpr int akx_counter_base_ = __COUNTER__;
AKX_DTYPE_LIST(AKX_X_)
#undef AKX_X_

#if AKX_PREBUILT
#define AKX_ENTRY_BACKEND sim
#include "kernel_entries.inc"
#undef AKX_ENTRY_BACKEND
#if defined(AKX_HAVE_CUDA)
#define AKX_ENTRY_BACKEND cuda
#include "kernel_entries.inc"
#undef AKX_ENTRY_BACKEND
#endif
#endif
}  // namespace

extern "C" akx_status akx__prebuilt_launcher(akx_backend backend, const akx__combination *c, akx__launcher *out) {
  *out = nullptr;
  if ((unsigned)c->family >= AKX__FAMILY_COUNT)
    return akx__fail(AKX_ERROR_INTERNAL, "kernel family %d is none", (int)c->family);
  if ((unsigned)c->src >= AKX_DTYPE_COUNT)
    return akx__fail(AKX_ERROR_INTERNAL, "%s: source dtype %d has no kernels", akx__family_name(c->family), (int)c->src);
  akx__resolver resolve = nullptr;
#if AKX_PREBUILT
  if (backend == AKX_BACKEND_SIM) resolve = sim_entries[c->src][c->family];
#if defined(AKX_HAVE_CUDA)
  if (backend == AKX_BACKEND_CUDA) resolve = cuda_entries[c->src][c->family];
#endif
#endif
  if (!resolve)
    return akx__fail(AKX_ERROR_INTERNAL, "libakx has no prebuilt %s kernels for this backend (built with "
                     "AKX_PREBUILT=OFF or without CUDA): the routing should have compiled them at run time",
                     akx__family_name(c->family));
  if (!(*out = resolve(c)))
    return akx__fail(AKX_ERROR_INTERNAL,
                     "no prebuilt %s kernel for source dtype %d, dst dtype %d, accumulator %d, op %d, map %d: "
                     "the host's prebuilt rule (akx__combination_prebuilt) and the compiled set disagree",
                     akx__family_name(c->family), (int)c->src, (int)c->dst, (int)c->acc, (int)c->op, (int)c->map);
  return AKX_SUCCESS;
}
