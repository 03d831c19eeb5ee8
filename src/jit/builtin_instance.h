/* Built-in combinations outside the prebuilt set (include/akx/dtypes.cuh: acc_prebuilt,
 * scan_prebuilt), compiled at run time on first use: one unit per (family, source,
 * accumulator, op), and per dst for scans, through the kernel cache (src/jit/cache.h). */
#ifndef AKX_JIT_BUILTIN_INSTANCE_H
#define AKX_JIT_BUILTIN_INSTANCE_H
#include "akx.h"
#include "entries.h"
#include "instance.h"
#include "backend.h"
#ifdef __cplusplus
extern "C" {
#endif

/* Whether a call's combination is in the backend's prebuilt set (include/akx/dtypes.cuh). dst:
 * the scan's dst dtype (ignored by the reductions, whose kernels take dst at run time); map:
 * the reductions' (ignored by scans). */
int akx__builtin_prebuilt(akx_backend backend, int family, akx_dtype src, akx_dtype dst, akx_dtype acc, akx_op op,
                          akx_map map);

/* The key of a combination's run-time entry (src/jit/entries.h), with what its unit does not
 * depend on made AUTO, as the unit is generated: the reductions' dst, findall's acc, dst and op,
 * a user op's acc. op: a built-in akx_op or a user op's id. */
akx__entry_key akx__builtin_entry_key(int32_t target, int family, int32_t src, int32_t dst, int32_t acc, int32_t op);

/* The unit of one combination: the one instance generator's text (src/jit/instance.h) and an
 * entry akx_unit_entry with the signature of src/core/backend.h's launcher of that family
 * (host code: the sim's), after the backend's prelude. */
akx_status akx__builtin_unit_text(int family, akx_dtype src, akx_dtype dst, akx_dtype acc, akx_op op, char **text);

/* The sim's entry for a combination that is not prebuilt: compiled on first use, then from the
 * table of run-time entries (src/jit/entries.h). Called by akx__kernels_prepare before a call
 * changes anything (a compile error refuses it), and by the sim's launch. */
akx_status akx__builtin_entry(const akx_context *ctx, int family, akx_dtype src, akx_dtype dst, akx_dtype acc,
                              akx_op op, void **entry);

/* instance_text, then akx_unit_entry(const Plan *p, void *stream) { entry_body; return the
 * family's launcher<src, [dst,] acc, op>(*p, stream); }: malloc'd. */
akx_status akx__unit_with_entry(int family, const char *src_cxx, const char *dst_cxx, const char *acc_cxx,
                                const char *op_cxx, const char *instance_text, const char *entry_body,
                                char **text);

/* What every family calls before its call changes any state (the workspace, dst): compiles
 * the kernels the call will launch where they are not prebuilt (a combination outside the
 * backend's prebuilt set, a user op, every kernel on CUDA under AKX_KERNELS=runtime or
 * AKX_PREBUILT=OFF), so that a compile error, or NVRTC missing, refuses the call cleanly and
 * the launch finds them in the table of run-time entries. op: a built-in akx_op or a user op's
 * id (acc and map then unread). */
akx_status akx__kernels_prepare(const akx_context *ctx, int family, akx_dtype src, akx_dtype dst, akx_dtype acc,
                                int32_t op, akx_map map);

#ifdef __cplusplus
}
#endif
#endif
