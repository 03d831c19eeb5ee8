/* Built-in combinations outside the prebuilt set (kernels/akx/dtypes.cuh: acc_prebuilt,
 * scan_prebuilt), compiled at run time on first use: one unit per (family, source,
 * accumulator, op), and per dst for scans, through the kernel cache (src/jit/cache.h). */
#ifndef AKX_JIT_BUILTIN_INSTANCE_H
#define AKX_JIT_BUILTIN_INSTANCE_H
#include "akx.h"
#include "entries.h"
#include "instance.h"
#include "backend.h"
#include "families.h"
#ifdef __cplusplus
extern "C" {
#endif

/* The key of a combination's run-time entry (src/jit/entries.h), with what its unit does not
 * depend on made AUTO, as the unit is generated: a field its family's kind does not key
 * (akx__kind_row's keys; an op 0), a user op's acc. op: a built-in akx_op or a user op's id. */
akx__entry_key akx__builtin_entry_key(int32_t target, int family, int32_t src, int32_t dst, int32_t acc, int32_t op);

/* The instance key of a built-in combination's unit (src/jit/instance.h): the fields its
 * family's kind keys, the others AKX_DTYPE_AUTO (an op 0). */
akx__instance_key akx__builtin_instance_key(int family, int32_t src, int32_t dst, int32_t acc, int32_t op);

/* The unit of one combination: the one instance generator's text (src/jit/instance.h) and an
 * entry akx_unit_entry, an akx__launcher (src/launch/kernel_entries.h: the plan as const void *)
 * that calls the family's host launcher (the sim's). */
akx_status akx__builtin_unit_text(int family, akx_dtype src, akx_dtype dst, akx_dtype acc, akx_op op, char **text);

/* The sim's entry for a combination it does not run prebuilt: compiled on first use, then from
 * the table of run-time entries (src/jit/entries.h): the sim's run-time unit (src/launch/route.h). */
akx_status akx__builtin_entry(const akx_context *ctx, int family, akx_dtype src, akx_dtype dst, akx_dtype acc,
                              akx_op op, void **entry);

/* in's text, then akx_unit_entry(const void *plan, void *stream) { const Plan *p = plan;
 * entry_body; return in->launcher(*p, stream); }: malloc'd. */
akx_status akx__unit_with_entry(int family, const akx__instance *in, const char *entry_body, char **text);

#ifdef __cplusplus
}
#endif
#endif
