/* Contexts, streams, workspace and memory: thin checks in front of the backend table. A
 * context is created and destroyed above the backends and the run-time units it may hold
 * (src/launch/context_open.c). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "internal.h"


void akx__lock(const akx_context *ctx) {
  akx_context *c = (akx_context *)ctx;
  pthread_mutex_lock(&c->lock);
  c->call_depth++;
}
void akx__unlock(const akx_context *ctx) {
  akx_context *c = (akx_context *)ctx;
  c->call_depth--;
  pthread_mutex_unlock(&c->lock);
}
/* The outermost call's end: the sim checks the workspace's invariants (workspace_check.c). */
akx_status akx__locked_status(const akx_context *ctx, akx_status s, const char *call) {
  akx_context *c = (akx_context *)ctx;
  if (c->call_depth == 1) s = akx__ws_watch_end(c, s, call);
  akx__unlock(ctx);
  return s;
}

static akx_status refuse_if_capturing_locked(const akx_context *ctx, const char *call,
                                             const char *why, const char *instead) {
  AKX_TRY(akx__check_context(ctx));
  int capturing = 0;
  AKX_TRY(ctx->be->is_capturing(ctx, &capturing));
  if (!capturing) return AKX_SUCCESS;
  return akx__fail(AKX_ERROR_UNSUPPORTED,
                   "%s: the context's stream is capturing a CUDA graph and %s, which a capture "
                   "cannot hold: %s",
                   call, why,
                   instead ? instead
                           : "call it before cudaStreamBeginCapture or after cudaStreamEndCapture");
}

akx_status akx__refuse_if_capturing(const akx_context *ctx, const char *call, const char *why,
                                    const char *instead) {
  return AKX_LOCKED(ctx, refuse_if_capturing_locked(ctx, call, why, instead));
}

static akx_status context_set_stream_locked(akx_context *ctx, void *stream) {
  AKX_TRY(akx__check_context(ctx));
  AKX_TRY(akx__refuse_if_capturing(ctx, "akx_context_set_stream",
                                   "switching streams first waits for the current one",
                                   "set the stream before cudaStreamBeginCapture"));
  /* The backend synchronizes the old stream first: the workspace is never used by two
   * streams at once. */
  AKX_TRY(ctx->be->set_stream(ctx, stream));
  return AKX_SUCCESS;
}

static akx_status context_set_workspace_locked(akx_context *ctx, void *ptr, size_t bytes) {
  AKX_TRY(akx__check_context(ctx));
  if (!ptr && bytes)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "ptr is NULL but bytes is %zu", bytes);
  if (ptr && !bytes) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "bytes is 0 for a non-NULL ptr");
  if (ptr && (uintptr_t)ptr % 256)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "ptr = %p is not 256-byte aligned", ptr);
  /* Another context's buffer is named as such first (on the sim it is not this context's
   * memory either, which says less). */
  if (ptr) AKX_TRY(akx__workspace_check_shared(ctx, ptr, bytes));
  if (ptr && ctx->be->is_device_range(ctx, ptr, bytes) == 0)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "ptr = %p (+%zu bytes) is not device memory of this context (use akx_malloc)", ptr, bytes);
  AKX_TRY(akx__refuse_if_capturing(ctx, "akx_context_set_workspace",
                                   "the old workspace is first waited for (synchronized)",
                                   "hand the context its workspace before cudaStreamBeginCapture"));
  /* Work already queued may still use the old workspace. */
  AKX_TRY(ctx->be->synchronize(ctx));
  return akx__workspace_set(ctx, ptr, bytes);
}

static akx_status synchronize_locked(akx_context *ctx) {
  AKX_TRY(akx__check_context(ctx));
  AKX_TRY(akx__refuse_if_capturing(ctx, "akx_synchronize", "it waits for the stream", NULL));
  return ctx->be->synchronize(ctx);
}

akx_backend akx_context_backend(const akx_context *ctx) {
  return ctx ? ctx->be->kind : AKX_BACKEND_AUTO;
}

static akx_status context_info_locked(const akx_context *ctx, akx_context_info_t *info) {
  AKX_TRY(akx__check_context(ctx));
  if (!info) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "info is NULL");
  *info = ctx->info;
  info->workspace_bytes = (int64_t)ctx->ws.bytes;
  info->workspace_allocations = ctx->ws.allocations;
  return AKX_SUCCESS;
}

static akx_status malloc_locked(akx_context *ctx, void **ptr, size_t bytes) {
  AKX_TRY(akx__check_context(ctx));
  if (!ptr) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "ptr is NULL");
  /* *ptr is written only on success (NULL for 0 bytes, as cudaMalloc). */
  void *p = NULL;
  if (bytes > 0) AKX_TRY(ctx->be->malloc(ctx, &p, bytes));
  *ptr = p;
  return AKX_SUCCESS;
}

static akx_status free_locked(akx_context *ctx, void *ptr) {
  AKX_TRY(akx__check_context(ctx));
  if (!ptr) return AKX_SUCCESS;
  if (ptr == ctx->ws.ptr && !ctx->ws.caller_owned)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "ptr = %p is the context's own workspace", ptr);
  if (ptr == ctx->ws.ptr)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "ptr = %p is the workspace this context holds (akx_context_set_workspace): "
                     "hand it back with akx_context_set_workspace(ctx, NULL, 0) first", ptr);
  if (akx__workspace_is_retired(ctx, ptr))
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "ptr = %p is a workspace this context used during a stream capture (a "
                     "graph may still write it): akx_context_destroy frees it", ptr);
  return ctx->be->free(ctx, ptr);
}

static akx_status memcpy_locked(akx_context *ctx, void *dst, const void *src, size_t bytes, akx_copy_kind k) {
  AKX_TRY(akx__check_context(ctx));
  if ((int)k < AKX_COPY_HOST_TO_DEVICE || (int)k > AKX_COPY_DEVICE_TO_DEVICE)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "k is %d, which is not an akx_copy_kind", (int)k);
  if (bytes == 0) return AKX_SUCCESS;
  if (!dst) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "dst is NULL");
  if (!src) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "src is NULL");
  if (k != AKX_COPY_HOST_TO_DEVICE && ctx->be->is_device_range(ctx, src, bytes) == 0)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "src = %p (+%zu bytes) is not device memory of this context", src, bytes);
  if (k != AKX_COPY_DEVICE_TO_HOST && ctx->be->is_device_range(ctx, dst, bytes) == 0)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "dst = %p (+%zu bytes) is not device memory of this context", dst, bytes);
  AKX_TRY(akx__refuse_if_capturing(ctx, "akx_memcpy", "the copy is waited for (synchronized)",
                                   "copy with cudaMemcpyAsync on the stream, or outside the capture"));
  return ctx->be->memcpy(ctx, dst, src, bytes, k);
}

akx_status akx_context_set_stream(akx_context *ctx, void *stream) {
  return AKX_LOCKED(ctx, context_set_stream_locked(ctx, stream));
}

akx_status akx_context_set_workspace(akx_context *ctx, void *ptr, size_t bytes) {
  return AKX_LOCKED(ctx, context_set_workspace_locked(ctx, ptr, bytes));
}

akx_status akx_synchronize(akx_context *ctx) {
  return AKX_LOCKED(ctx, synchronize_locked(ctx));
}

akx_status akx_context_info(const akx_context *ctx, akx_context_info_t *info) {
  return AKX_LOCKED(ctx, context_info_locked(ctx, info));
}

akx_status akx_malloc(akx_context *ctx, void **ptr, size_t bytes) {
  return AKX_LOCKED(ctx, malloc_locked(ctx, ptr, bytes));
}

akx_status akx_free(akx_context *ctx, void *ptr) {
  return AKX_LOCKED(ctx, free_locked(ctx, ptr));
}

akx_status akx_memcpy(akx_context *ctx, void *dst, const void *src, size_t bytes, akx_copy_kind k) {
  return AKX_LOCKED(ctx, memcpy_locked(ctx, dst, src, bytes, k));
}

static akx_status context_run_locked(akx_context *ctx, size_t workspace_bytes,
                                     akx_status (*fn)(void *, void *, void *), void *arg) {
  AKX_TRY(akx__check_context(ctx));
  if (!fn) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "fn is NULL");
  void *ws = NULL;
  if (workspace_bytes) AKX_TRY(akx__workspace(ctx, workspace_bytes, &ws));
  return ctx->be->run(ctx, fn, ws, arg);
}

akx_status akx_context_run(akx_context *ctx, size_t workspace_bytes,
                           akx_status (*fn)(void *stream, void *workspace, void *arg), void *arg) {
  return AKX_LOCKED(ctx, context_run_locked(ctx, workspace_bytes, fn, arg));
}

akx_status akx__context_reread_settings(akx_context *ctx) {
  AKX_TRY(akx__check_context(ctx));
  akx__settings s;
  AKX_TRY(akx__read_settings(&s));
  akx__lock(ctx);
  /* A new starting epoch may be one the status already holds: the next scan resets it. */
  if (s.lookback_epoch != ctx->settings.lookback_epoch) {
    ctx->ws.epoch = s.lookback_epoch;
    ctx->ws.flags_known = 0;
  }
  ctx->settings = s;
  akx__unlock(ctx);
  return AKX_SUCCESS;
}
