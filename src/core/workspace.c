/* The per-call device workspace: a caller-owned buffer (never resized or freed here, as
 * zstd's) or the context's cached buffer, grown on demand. */
#include <inttypes.h>
#include <string.h>
#include "internal.h"

akx_status akx__workspace(akx_context *ctx, size_t bytes, void **ptr) {
  *ptr = NULL;
  if (bytes == 0) return AKX_SUCCESS;
  if (ctx->ws.caller_owned) {
    if (ctx->ws.bytes < bytes)
      return akx__fail(AKX_ERROR_WORKSPACE_TOO_SMALL,
                       "the workspace given to akx_context_set_workspace has %zu bytes; this call "
                       "needs %zu (ask the *_workspace_size query)",
                       ctx->ws.bytes, bytes);
  } else if (ctx->ws.bytes < bytes) {
    /* The old buffer may still be in use by work queued on the stream. */
    AKX_TRY(ctx->be->synchronize(ctx));
    akx__workspace_release(ctx);
    size_t grown = bytes < 4096 ? 4096 : bytes;
    AKX_TRY(ctx->be->malloc(ctx, &ctx->ws.ptr, grown));
    ctx->ws.bytes = grown;
    ctx->ws.allocations++;
  }
  *ptr = ctx->ws.ptr;
  /* On a GPU the workspace holds whatever the last call (or nobody) left there. The sim
   * fills it with poison at every call, so a kernel that trusts it to start as zeros, or as
   * the last call's flags, reads visibly wrong values instead of passing by luck. */
  if (ctx->be->kind == AKX_BACKEND_SIM) memset(*ptr, akx__sim_poison_byte, bytes);
  return AKX_SUCCESS;
}

void akx__workspace_release(akx_context *ctx) {
  if (!ctx->ws.caller_owned && ctx->ws.ptr) ctx->be->free(ctx, ctx->ws.ptr);
  ctx->ws.ptr = NULL;
  ctx->ws.bytes = 0;
  ctx->ws.caller_owned = 0;
}
