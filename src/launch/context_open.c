/* A context's life: the backend it opens (AUTO: CUDA when a usable device exists, else the
 * sim), and what is freed with it (its workspace, its user ops). Here, above the backends and
 * the run-time units, so that src/core names neither. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "internal.h"
#include "jit/user_op.h"

static akx_status open_backend(akx_context *ctx, const akx__backend *be, int device) {
  memset(ctx, 0, sizeof *ctx);
  ctx->be = be;
  ctx->device = device;
  return be->open(ctx, device);
}

akx_status akx_context_create(akx_context **out, akx_backend backend, int device) {
  if (!out) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "ctx (the output pointer) is NULL");
  /* *out is written only on success: a refused call writes nothing. */
  if ((int)backend < AKX_BACKEND_AUTO || (int)backend > AKX_BACKEND_SIM)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "backend is %d, which is not an akx_backend", (int)backend);
  if (device < 0) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "device is %d; it must be >= 0", device);
  if (backend == AKX_BACKEND_AUTO) {
    const char *env = getenv("AKX_BACKEND");
    if (env && *env) {
      if (!strcasecmp(env, "cuda")) backend = AKX_BACKEND_CUDA;
      else if (!strcasecmp(env, "sim")) backend = AKX_BACKEND_SIM;
      else
        return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                         "the environment variable AKX_BACKEND is \"%s\"; it must be \"cuda\" or \"sim\"", env);
    }
  }
  akx_context *ctx = calloc(1, sizeof *ctx);
  if (!ctx) return akx__fail(AKX_ERROR_OUT_OF_MEMORY, "no host memory for a context");
  /* AUTO's CUDA probe may fail with a sentence before the sim opens: a success never writes
   * akx_last_error(). */
  akx__error_saved before;
  akx__error_save(&before);
  akx__settings settings;
  akx_status s = akx__read_settings(&settings);
  if (s != AKX_SUCCESS) {
    free(ctx);
    return s;
  }
  if (backend == AKX_BACKEND_AUTO) {
    /* CUDA when a usable device exists, else the sim. */
    s = open_backend(ctx, &akx__backend_cuda, device);
    if (s == AKX_ERROR_NO_DEVICE) {
      s = open_backend(ctx, &akx__backend_sim, 0);
    }
  } else {
    s = open_backend(ctx, backend == AKX_BACKEND_CUDA ? &akx__backend_cuda : &akx__backend_sim, device);
  }
  if (s != AKX_SUCCESS) {
    free(ctx);
    return s;
  }
  ctx->settings = settings;
  ctx->ws.epoch = settings.lookback_epoch;
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&ctx->lock, &attr);
  pthread_mutexattr_destroy(&attr);
  akx__error_restore(&before);
  *out = ctx;
  return AKX_SUCCESS;
}

void akx_context_destroy(akx_context *ctx) {
  if (!ctx) return;
  /* A call still running on another thread finishes first (destroying a context in use is
   * the caller's bug, but it need not crash the call). */
  akx__lock(ctx);
  ctx->be->synchronize(ctx);
  akx__workspace_destroy(ctx);
  akx__user_ops_destroy(ctx);
  ctx->be->close(ctx);
  akx__unlock(ctx);
  pthread_mutex_destroy(&ctx->lock);
  free(ctx);
}
