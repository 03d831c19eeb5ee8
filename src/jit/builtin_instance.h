/* Built-in combinations outside the prebuilt set (include/akx/dtypes.cuh: acc_prebuilt,
 * scan_prebuilt), compiled at run time on first use: one unit per (family, source,
 * accumulator, op), and per dst for scans, through the kernel cache (src/jit/cache.h). */
#ifndef AKX_JIT_BUILTIN_INSTANCE_H
#define AKX_JIT_BUILTIN_INSTANCE_H
#include "akx.h"
#include "instance.h"
#ifdef __cplusplus
extern "C" {
#endif

/* Whether a call's combination is prebuilt. dst: the scan's dst dtype (ignored by the
 * reductions, whose kernels take dst at run time); map: the reductions' (ignored by scans). */
int akx__builtin_prebuilt(int family, akx_dtype src, akx_dtype dst, akx_dtype acc, akx_op op, akx_map map);

/* The unit of one combination: the one instance generator's text (src/jit/instance.h) and an
 * entry akx_unit_entry with the signature of src/core/backend.h's launcher of that family
 * (host code: the sim's), after the backend's prelude. */
akx_status akx__builtin_unit_text(int family, akx_dtype src, akx_dtype dst, akx_dtype acc, akx_op op, char **text);

/* The entry for a combination that is not prebuilt, compiled on first use (the sim); on
 * CUDA, AKX_ERROR_UNSUPPORTED with a sentence (its run-time kernels are not launched yet).
 * Called by the families before a call changes anything (a compile error refuses it), and by
 * the sim's launch. */
akx_status akx__builtin_entry(const akx_context *ctx, int family, akx_dtype src, akx_dtype dst, akx_dtype acc,
                              akx_op op, void **entry);

/* instance_text, then akx_unit_entry(const Plan *p, void *stream) { entry_body; return the
 * family's launcher<src, [dst,] acc, op>(*p, stream); }: malloc'd. */
akx_status akx__unit_with_entry(int family, const char *src_cxx, const char *dst_cxx, const char *acc_cxx,
                                const char *op_cxx, const char *instance_text, const char *entry_body,
                                char **text);

/* Nothing for a prebuilt combination; else akx__builtin_entry for its side effect: compiled
 * (or refused) before the call changes any state. */
akx_status akx__builtin_prepare(const akx_context *ctx, int family, akx_dtype src, akx_dtype dst, akx_dtype acc,
                                akx_op op, akx_map map);

#ifdef __cplusplus
}
#endif
#endif
