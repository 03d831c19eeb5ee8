/* The one routing of a launch (src/launch/route.h). */
#include "route.h"

#include "builtin_instance.h"
#include "entries.h"
#include "internal.h"
#include "kernel_entries.h"
#include "user_op.h"

/* A unit compiled at run time is compiled, and on CUDA loaded into the context
 * (cudaLibraryLoadData), at its first use: work a capture cannot hold (a load may synchronize
 * the context and is not a node of the graph). While the stream captures, a call whose unit is
 * not loaded yet is refused before anything changes; once the same call ran outside the
 * capture, its unit is in the table of run-time entries and the call is captured as any.
 * Called for a unit the table does not hold. */
static akx_status refuse_first_use_in_capture(const akx_context *ctx, const akx__entry_key *key) {
  int capturing = 0;
  AKX_TRY(ctx->be->is_capturing(ctx, &capturing));
  if (!capturing) return AKX_SUCCESS;
  return akx__fail(AKX_ERROR_UNSUPPORTED,
                   "the context's stream is capturing a CUDA graph and this call's kernels are "
                   "compiled at run time and not loaded yet (a %s unit: a user op, a combination "
                   "outside the prebuilt set, or AKX_KERNELS=runtime): compiling and loading them "
                   "cannot be captured; make the same call once before capturing",
                   akx__family_name(key->family));
}

akx_status akx__route(const akx_context *ctx, const akx__combination *c, akx__entry *entry) {
  entry->prebuilt = NULL;
  entry->unit = NULL;
  const akx_backend b = ctx->be->kind;
  if (c->op < AKX_USER_OP_FIRST && akx__prebuilt_serves(ctx, akx__combination_prebuilt(c, akx__backend_prebuilt_set(b))))
    return akx__prebuilt_launcher(b, c, &entry->prebuilt);
  if (c->op >= AKX_USER_OP_FIRST && !akx__user_op_find(ctx, (akx_op)c->op))
    return akx__fail(AKX_ERROR_INTERNAL, "a %s call names op %d, which is no user op of its context",
                     akx__family_name(c->family), (int)c->op);
  /* The key of the unit: the CUDA backend's per architecture, the sim's 0. */
  const int32_t arch = b == AKX_BACKEND_CUDA ? akx__context_arch(ctx) : 0;
  const akx__entry_key key = akx__builtin_entry_key(arch, c->family, c->src, c->dst, c->acc, c->op);
  /* Loaded before: the table of run-time entries answers (every call after a unit's first). */
  if ((entry->unit = akx__entry_find(&key))) return AKX_SUCCESS;
  AKX_TRY(refuse_first_use_in_capture(ctx, &key));
  return ctx->be->runtime_unit(ctx, c, &entry->unit);
}

akx_status akx__kernels_prepare(const akx_context *ctx, int family, akx_dtype src, akx_dtype dst, akx_dtype acc,
                                int32_t op, akx_map map) {
  const akx__combination c = {family, src, dst, acc, op, map};
  akx__entry entry;
  return akx__route(ctx, &c, &entry);
}

/* The finishing store has no status to return on the device: a dst dtype it cannot store is
 * refused here, before anything is compiled or launched, whatever path the kernels take
 * (prebuilt or a run-time unit), for every family whose row says its kernels store through a
 * finish (akx__family_finish). A user op's unit stores through the op's store, compiled for
 * its dst (akx__user_op_form STORE: AKX_DTYPE_AUTO, the accumulator itself), not by dst_dtype. */
static akx_status check_finish(const akx__combination *c, const void *plan) {
  if (c->op >= AKX_USER_OP_FIRST) return AKX_SUCCESS;
  const akx__finish *f = akx__family_finish(c->family, plan);
  if (f && !f->bare && (unsigned)f->dst_dtype >= AKX_DTYPE_COUNT)
    return akx__fail(AKX_ERROR_INTERNAL, "%s: dst dtype %d cannot be stored", akx__family_name(c->family),
                     (int)f->dst_dtype);
  return AKX_SUCCESS;
}

akx_status akx__launch(akx_context *ctx, akx__combination c, const void *plan) {
  AKX_TRY(check_finish(&c, plan));
  akx__entry entry;
  AKX_TRY(akx__route(ctx, &c, &entry));
  return ctx->be->launch(ctx, c.family, &entry, plan);
}
