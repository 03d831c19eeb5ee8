/* The per-call device workspace: a caller-owned buffer (never resized or freed here, as
 * zstd's) or the context's cached buffer, grown on demand.
 *
 * Stream capture (include/akx.h, "Stream capture"). A call enqueued while the context's
 * stream captures a CUDA graph is recorded with the workspace pointer it got, and every
 * replay of the graph writes that buffer again. So:
 *  - during a capture the cached buffer is never grown (growing allocates, synchronizes the
 *    stream and frees the old buffer: none of which a capture can hold); a call that needs
 *    more than it holds is refused before anything is enqueued;
 *  - a cached buffer that served a call during a capture is marked, and when a later call
 *    grows the workspace (or the caller hands the context a buffer of its own) the marked
 *    buffer is retired, not freed: akx_context_destroy frees it with the rest.
 *
 * Caller-owned workspaces of live contexts are kept in one process-wide registry: a buffer
 * (or any byte of it) serves one context at a time. Two contexts sharing one would reset each
 * other's look-back status in the middle of a launch (kernels/akx/lookback.cuh: tickets past the
 * tile count, polls on flags nobody sets: a hung GPU). */
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

/* ---- the registry of caller-owned workspaces ------------------------------------------------ */

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static akx_context *holders; /* live contexts holding a caller workspace, linked by ws.next_holder */

/* The context other than `self` whose caller workspace meets [lo, hi), or NULL. Registry
 * lock held. */
static const akx_context *overlapping(const akx_context *self, uintptr_t lo, uintptr_t hi) {
  for (const akx_context *c = holders; c; c = c->ws.next_holder)
    if (c != self && lo < c->ws.held_hi && c->ws.held_lo < hi) return c;
  return NULL;
}

static akx_status refuse_shared(const akx_context *other, const void *ptr, size_t bytes) {
  return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                   "ptr = %p (+%zu bytes) overlaps the workspace [%p, %p) that another context "
                   "(%p) holds: a caller workspace serves one context at a time (two contexts' "
                   "calls would reset each other's status words mid-launch); give each context "
                   "its own buffer, or hand it back from the other first with "
                   "akx_context_set_workspace(other, NULL, 0)",
                   ptr, bytes, (void *)other->ws.held_lo, (void *)other->ws.held_hi,
                   (const void *)other);
}

static void unhold_locked(akx_context *ctx) {
  if (!ctx->ws.held) return;
  for (akx_context **p = &holders; *p; p = &(*p)->ws.next_holder)
    if (*p == ctx) {
      *p = ctx->ws.next_holder;
      break;
    }
  ctx->ws.held = 0;
  ctx->ws.held_lo = ctx->ws.held_hi = 0;
  ctx->ws.next_holder = NULL;
}

akx_status akx__workspace_check_shared(const akx_context *ctx, const void *ptr, size_t bytes) {
  const uintptr_t lo = (uintptr_t)ptr;
  pthread_mutex_lock(&registry_lock);
  const akx_context *other = overlapping(ctx, lo, lo + bytes);
  akx_status s = other ? refuse_shared(other, ptr, bytes) : AKX_SUCCESS;
  pthread_mutex_unlock(&registry_lock);
  return s;
}

const akx_context *akx__workspace_holder(const void *ptr, size_t bytes) {
  const uintptr_t lo = (uintptr_t)ptr;
  pthread_mutex_lock(&registry_lock);
  const akx_context *c = overlapping(NULL, lo, lo + bytes);
  pthread_mutex_unlock(&registry_lock);
  return c;
}

/* ---- the cached buffer ------------------------------------------------------------------- */

/* Room for one more retired buffer (host memory, taken before anything changes). */
static akx_status reserve_retired(akx_context *ctx) {
  if (ctx->ws.nretired < ctx->ws.cap_retired) return AKX_SUCCESS;
  const size_t cap = ctx->ws.cap_retired ? 2 * ctx->ws.cap_retired : 4;
  void **r = realloc(ctx->ws.retired, cap * sizeof *r);
  if (!r) return akx__fail(AKX_ERROR_OUT_OF_MEMORY, "no host memory to keep a retired workspace");
  ctx->ws.retired = r;
  ctx->ws.cap_retired = cap;
  return AKX_SUCCESS;
}

/* Drops the cached buffer (room reserved when it is marked): retired if a capture used it,
 * else freed once the stream is done with it. */
static akx_status drop_cached(akx_context *ctx) {
  if (ctx->ws.caller_owned || !ctx->ws.ptr) return AKX_SUCCESS;
  if (ctx->ws.captured) {
    ctx->ws.retired[ctx->ws.nretired++] = ctx->ws.ptr;
  } else {
    AKX_TRY(ctx->be->free(ctx, ctx->ws.ptr));
  }
  ctx->ws.ptr = NULL;
  ctx->ws.bytes = 0;
  ctx->ws.captured = 0;
  return AKX_SUCCESS;
}

static akx_status grow(akx_context *ctx, size_t bytes) {
  /* Everything that can fail comes before the old buffer is let go: a failed growth leaves
   * the workspace as it was. */
  if (ctx->ws.ptr && ctx->ws.captured) AKX_TRY(reserve_retired(ctx));
  /* The old buffer may still be in use by work queued on the stream. */
  if (ctx->ws.ptr && !ctx->ws.captured) AKX_TRY(ctx->be->synchronize(ctx));
  const size_t grown = bytes < 4096 ? 4096 : bytes;
  void *fresh = NULL;
  AKX_TRY(ctx->be->malloc(ctx, &fresh, grown));
  /* Zeros are the status of a reset and tickets put back: the call that grew the buffer then
   * runs in one launch, as every later one (one memset per growth, not a launch per call). */
  akx_status s = ctx->be->zero(ctx, fresh, grown);
  if (s == AKX_SUCCESS) s = drop_cached(ctx);
  if (s != AKX_SUCCESS) {
    (void)ctx->be->free(ctx, fresh);
    return s;
  }
  ctx->ws.ptr = fresh;
  ctx->ws.bytes = grown;
  ctx->ws.allocations++;
  ctx->ws.status_tiles = 0;
  ctx->ws.zero_bytes = grown;
  ctx->ws.graphed = 0;
  return AKX_SUCCESS;
}

/* The buffer of at least `bytes`, grown if the context owns it; nothing written. */
static akx_status take(akx_context *ctx, size_t bytes, void **ptr) {
  *ptr = NULL;
  if (bytes == 0) return AKX_SUCCESS;
  int capturing = 0;
  AKX_TRY(ctx->be->is_capturing(ctx, &capturing));
  if (ctx->ws.caller_owned) {
    if (ctx->ws.bytes < bytes)
      return akx__fail(AKX_ERROR_WORKSPACE_TOO_SMALL,
                       "the workspace given to akx_context_set_workspace has %zu bytes; this call "
                       "needs %zu (ask the *_workspace_size query)",
                       ctx->ws.bytes, bytes);
  } else if (ctx->ws.bytes < bytes) {
    if (capturing)
      return akx__fail(AKX_ERROR_UNSUPPORTED,
                       "the context's stream is capturing a CUDA graph and this call needs %zu "
                       "bytes of workspace, more than the context's cached workspace holds "
                       "(%zu): growing it would allocate, synchronize and free during the "
                       "capture; size the workspace before capturing (run the call once outside "
                       "the capture, or hand the context a buffer of the size the call's "
                       "*_workspace_size query returns with akx_context_set_workspace)",
                       bytes, ctx->ws.bytes);
    AKX_TRY(grow(ctx, bytes));
  }
  if (capturing && !ctx->ws.caller_owned) ctx->ws.captured = 1;
  if (capturing) ctx->ws.graphed = 1;
  *ptr = ctx->ws.ptr;
  return AKX_SUCCESS;
}

/* On a GPU the workspace holds whatever the last call (or nobody) left there. The sim fills
 * [from, bytes) with poison at every call, so a kernel that trusts it to start as zeros, or
 * as the last call's values, reads visibly wrong values instead of passing by luck. */
static void poison(const akx_context *ctx, void *ptr, size_t from, size_t bytes) {
  if (ctx->be->kind == AKX_BACKEND_SIM && from < bytes)
    memset((char *)ptr + from, akx__sim_poison_byte, bytes - from);
}

akx_status akx__workspace(akx_context *ctx, size_t bytes, void **ptr) {
  *ptr = NULL;
  if (bytes == 0) return AKX_SUCCESS;
  AKX_TRY(take(ctx, bytes, ptr));
  poison(ctx, *ptr, 0, bytes);
  ctx->ws.status_tiles = 0; /* this call writes anything there */
  ctx->ws.zero_bytes = 0;
  return AKX_SUCCESS;
}

/* The look-back status needs no reset between calls (kernels/akx/lookback.cuh): a call takes
 * the next epoch, and its tiles take only nodes whose flag holds it. That is right while
 * every flag the call reads holds 0 or the epoch of a call since the last reset, which all
 * differ from the new one: after completed scans or findalls on this buffer that kept at
 * least as many flags, with no other use of the buffer since, and no wrap of the epoch's 32
 * bits. Else the call resets the status first (reset = 1: the reset kernel, a second launch).
 * A call keeps the flags the buffer holds (slots) when its nodes still fit after them, so
 * that calls of fewer tiles do not overwrite the flags of the larger ones with nodes. The
 * status is forgotten until akx__workspace_lookback_done says the call's launch completed (a
 * refused or interrupted call leaves a ticket that is not 0, or half of its flags). */
akx_status akx__workspace_lookback(akx_context *ctx, size_t bytes, int64_t tiles, akx__lookback_call *call) {
  AKX_TRY(take(ctx, bytes, &call->status));
  int64_t known = ctx->ws.status_tiles;
  /* Zeros (a fresh buffer's, src/core/workspace.c's grow) are what the reset writes. */
  if (known < tiles && ctx->ws.zero_bytes >= akx__lookback_flags_end(tiles)) known = tiles;
  const size_t nodes = bytes - AKX__ROUND_UP(akx__lookback_flags_end(tiles), 16);
  uint32_t e = ctx->ws.epoch + 1;
  call->reset = known < tiles || e == 0 || ctx->ws.graphed || !ctx->settings.one_launch;
  if (e == 0) e = 1; /* 0 is the reset's: the wrap resets every flag to it */
  /* A reset zeroes the call's own flags: the others are forgotten. */
  const int keep = !call->reset && known > tiles &&
                   AKX__ROUND_UP(akx__lookback_flags_end(known), 16) + nodes <= ctx->ws.bytes;
  call->slots = keep ? known : tiles;
  /* The sim poisons all but the header and the flags the call trusts. */
  poison(ctx, call->status, call->reset ? 0 : akx__lookback_flags_end(call->slots),
         AKX__ROUND_UP(akx__lookback_flags_end(call->slots), 16) + nodes);
  ctx->ws.epoch = e;
  ctx->ws.status_tiles = 0;
  ctx->ws.zero_bytes = 0;
  call->epoch = e;
  return AKX_SUCCESS;
}

void akx__workspace_lookback_done(akx_context *ctx, const akx__lookback_call *call) {
  if (ctx->ws.graphed) return; /* a graph's replays write the buffer whenever they run */
  /* The reset or the last tile left the ticket at 0; the nodes start after the slots' flags. */
  ctx->ws.status_tiles = call->slots;
  ctx->ws.zero_bytes = sizeof(unsigned long long);
}

/* Tickets at the buffer's start, which the last block of a one-launch call puts back to 0:
 * the whole-array reduction's (kernels/akx/reduce_whole.cuh) is the buffer's first word, as
 * the scans' (kernels/akx/lookback.cuh's header), 0 after a completed call of either; a split
 * dims reduction's (kernels/akx/reduce_dims.cuh) are one per column of blocks. *zero when the
 * first ticket_bytes are known 0. The partials after them overwrite the scans' flags. */
akx_status akx__workspace_ticket(akx_context *ctx, size_t bytes, size_t ticket_bytes, void **ptr, int32_t *zero) {
  AKX_TRY(take(ctx, bytes, ptr));
  *zero = ctx->ws.zero_bytes >= ticket_bytes && !ctx->ws.graphed && ctx->settings.one_launch;
  poison(ctx, *ptr, *zero ? ticket_bytes : 0, bytes);
  ctx->ws.status_tiles = 0;
  ctx->ws.zero_bytes = 0;
  return AKX_SUCCESS;
}

void akx__workspace_ticket_done(akx_context *ctx, size_t ticket_bytes) {
  if (!ctx->ws.graphed) ctx->ws.zero_bytes = ticket_bytes;
}

int akx__workspace_is_retired(const akx_context *ctx, const void *ptr) {
  for (size_t i = 0; i < ctx->ws.nretired; i++)
    if (ctx->ws.retired[i] == ptr) return 1;
  return 0;
}

akx_status akx__workspace_set(akx_context *ctx, void *ptr, size_t bytes) {
  if (ctx->ws.ptr && ctx->ws.captured && !ctx->ws.caller_owned) AKX_TRY(reserve_retired(ctx));
  const uintptr_t lo = (uintptr_t)ptr;
  pthread_mutex_lock(&registry_lock);
  if (ptr) {
    /* Checked again under the same hold of the lock that claims it: two contexts cannot
     * both take one buffer. */
    const akx_context *other = overlapping(ctx, lo, lo + bytes);
    if (other) {
      const akx_status s = refuse_shared(other, ptr, bytes);
      pthread_mutex_unlock(&registry_lock);
      return s;
    }
  }
  const akx_status s = drop_cached(ctx);
  if (s != AKX_SUCCESS) {
    pthread_mutex_unlock(&registry_lock);
    return s;
  }
  unhold_locked(ctx);
  if (ptr) {
    ctx->ws.held = 1;
    ctx->ws.held_lo = lo;
    ctx->ws.held_hi = lo + bytes;
    ctx->ws.next_holder = holders;
    holders = ctx;
  }
  pthread_mutex_unlock(&registry_lock);
  ctx->ws.ptr = ptr;
  ctx->ws.bytes = ptr ? bytes : 0;
  ctx->ws.caller_owned = ptr != NULL;
  ctx->ws.captured = 0;
  ctx->ws.status_tiles = 0;
  ctx->ws.zero_bytes = 0;
  ctx->ws.graphed = 0;
  /* The caller's bytes are anything: zeros make them a reset's status, as a grown buffer's. */
  if (ptr) {
    AKX_TRY(ctx->be->zero(ctx, ptr, bytes));
    ctx->ws.zero_bytes = bytes;
  }
  return AKX_SUCCESS;
}

void akx__workspace_destroy(akx_context *ctx) {
  pthread_mutex_lock(&registry_lock);
  unhold_locked(ctx);
  pthread_mutex_unlock(&registry_lock);
  if (!ctx->ws.caller_owned && ctx->ws.ptr) (void)ctx->be->free(ctx, ctx->ws.ptr);
  for (size_t i = 0; i < ctx->ws.nretired; i++) (void)ctx->be->free(ctx, ctx->ws.retired[i]);
  free(ctx->ws.retired);
  memset(&ctx->ws, 0, sizeof ctx->ws);
}
