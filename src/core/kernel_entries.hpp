// What every family's launch checks before it reaches a kernel entry, prebuilt
// (src/core/kernel_entries.cpp) or compiled at run time (src/sim/backend_sim.cpp): the source
// dtype has entries, and what the kernels cannot report from the device is refused here.
#pragma once
#include "internal.h"
#include "jit/builtin_instance.h"

namespace akx {
inline int32_t source_dtype(const akx__reduce_whole_plan &p) { return p.src.dtype; }
inline int32_t source_dtype(const akx__reduce_dims_plan &p) { return p.src_dtype; }
inline int32_t source_dtype(const akx__scan_plan &p) { return p.src_dtype; }
inline int32_t source_dtype(const akx__findall_plan &p) { return p.src_dtype; }
// The family (src/jit/instance.h) and the dst dtype a user op's entry is compiled for.
inline int family_id(const akx__reduce_whole_plan &) { return 0; }
inline int family_id(const akx__reduce_dims_plan &) { return 1; }
inline int family_id(const akx__scan_plan &) { return 2; }
inline int family_id(const akx__findall_plan &) { return 3; }
inline int32_t op_of(const akx__reduce_whole_plan &p) { return p.op; }
inline int32_t op_of(const akx__reduce_dims_plan &p) { return p.op; }
inline int32_t op_of(const akx__scan_plan &p) { return p.op; }
inline int32_t op_of(const akx__findall_plan &) { return 0; }
inline int32_t dst_of(const akx__reduce_whole_plan &p) { return p.finish.dst_dtype; }
inline int32_t dst_of(const akx__reduce_dims_plan &p) { return p.finish.dst_dtype; }
inline int32_t dst_of(const akx__scan_plan &p) { return p.dst_dtype; }
inline int32_t dst_of(const akx__findall_plan &) { return -1; }
inline int32_t acc_of(const akx__reduce_whole_plan &p) { return p.acc; }
inline int32_t acc_of(const akx__reduce_dims_plan &p) { return p.acc; }
inline int32_t acc_of(const akx__scan_plan &p) { return p.acc; }
inline int32_t acc_of(const akx__findall_plan &) { return -1; }
inline int32_t map_of(const akx__reduce_whole_plan &p) { return p.map; }
inline int32_t map_of(const akx__reduce_dims_plan &p) { return p.map; }
inline int32_t map_of(const akx__scan_plan &) { return 0; }
inline int32_t map_of(const akx__findall_plan &) { return 0; }
// Whether the backend's prebuilt set holds the plan's combination (else: a unit compiled at
// run time, src/jit/builtin_instance.h). A user op's plan is never prebuilt.
template <class Plan>
inline bool is_prebuilt(akx_backend backend, const Plan &p) {
  if (op_of(p) >= AKX_USER_OP_FIRST) return false;
  return akx__builtin_prebuilt(backend, family_id(p), (akx_dtype)source_dtype(p), (akx_dtype)dst_of(p),
                               (akx_dtype)acc_of(p), (akx_op)op_of(p), (akx_map)map_of(p)) != 0;
}
inline const char *family_name(const akx__reduce_whole_plan &) { return "reduce_whole"; }
inline const char *family_name(const akx__reduce_dims_plan &) { return "reduce_dims"; }
inline const char *family_name(const akx__scan_plan &) { return "scan"; }
inline const char *family_name(const akx__findall_plan &) { return "findall"; }

// The finishing store has no status to return on the device: a dst dtype it cannot store
// is refused here.
inline akx_status check_finish(const akx__finish &f, const char *family) {
  if (!f.bare && (unsigned)f.dst_dtype >= AKX_DTYPE_COUNT)
    return akx__fail(AKX_ERROR_INTERNAL, "%s: dst dtype %d cannot be stored", family, (int)f.dst_dtype);
  return AKX_SUCCESS;
}
inline akx_status finish_check(const akx__reduce_whole_plan &p, const char *f) { return check_finish(p.finish, f); }
inline akx_status finish_check(const akx__reduce_dims_plan &p, const char *f) { return check_finish(p.finish, f); }
inline akx_status finish_check(const akx__scan_plan &, const char *) { return AKX_SUCCESS; }
inline akx_status finish_check(const akx__findall_plan &, const char *) { return AKX_SUCCESS; }

template <class Plan>
akx_status entry_check(const Plan &p) {
  const int32_t src = source_dtype(p);
  if ((unsigned)src >= AKX_DTYPE_COUNT)
    return akx__fail(AKX_ERROR_INTERNAL, "%s: source dtype %d has no kernels", family_name(p), (int)src);
  return finish_check(p, family_name(p));
}
}  // namespace akx
