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
  ctx->ws.resets++; /* the zeroing: every tag's reset state */
  ctx->ws.graphed = 0;
  return AKX_SUCCESS;
}

/* ---- the regions ------------------------------------------------------------------------
 *
 * A buffer serves every family in turn, so a call's tags (the bytes it trusts from one call to
 * the next) live where no other family writes (src/core/workspace_regions.h): the header (the
 * ticket word the look-back calls and the whole-array reduction put back to 0), the look-back's
 * flags (scans and findall: each holds the epoch of the call that published it), the split dims
 * reductions' tickets (each put back to 0 by its column's last block), then the scratch that
 * any call overwrites (partials, nodes, rows, akx_context_run's bytes). The buffer keeps one
 * layout, the union of what the calls since it was zeroed asked for, so that a mix of families
 * keeps every family's tags: a scan's flags survive a reduction, a split dims reduction's
 * tickets survive a scan. One epoch counter serves both look-back families: every flag holds 0
 * or an epoch drawn before the call's, whichever family drew it.
 *
 * What is known of the tags (ctx->ws): header_zero, flags_known (flags [0, flags_known) hold 0
 * or an earlier epoch), tickets_zero (tickets [0, tickets_zero) are 0). A call forgets its own
 * region while it runs and learns it back in *_done once its launch completed: a refused or
 * interrupted call leaves a ticket past 0 or half of its flags, and the next call resets. The
 * other regions keep what is known of them: the call never writes there. Still reset:
 *  - a buffer that cannot hold both layouts (a caller's buffer sized for one call, or one the
 *    capture holds): the call takes its own layout and every other tag is forgotten;
 *  - the epoch's wrap (every flag of the layout back to 0: the flags of before the wrap would
 *    match the epochs after it);
 *  - a buffer a graph captured (ws.graphed): its replays write it between later calls;
 *  - AKX_ONE_LAUNCH=0.
 * A new or grown buffer and a caller's new buffer are zeroed (one memset), a widened layout's
 * tags too: zeros are every tag's reset state. */

akx__ws_placement akx__ws_place(size_t bytes, akx__ws_layout now, const akx__ws_need *need, int grow,
                                akx__ws_layout *next) {
  akx__ws_layout want = need->tags;
  if (want.flags || want.tickets || want.splits) want.header = 1;
  if (now.flags || now.tickets || now.splits) now.header = 1;
  const int holds = (!want.header || now.header) && want.flags <= now.flags && want.tickets <= now.tickets &&
                    want.splits <= now.splits;
  /* A reserve is for a call that follows on the same buffer: on a cached buffer it is room
   * after the layout's tags (so that the follower neither grows nor frees the buffer the
   * first left its results in); a caller's buffer holds it as the query said. */
#define RESERVED(L) (grow ? bytes >= akx__ws_tags_end(L) + need->reserve : bytes >= need->reserve)
  if (holds && akx__ws_tags_end(now) + need->scratch <= bytes && RESERVED(now)) {
    *next = now;
    return AKX__WS_AS_LAID;
  }
  akx__ws_layout wide = now;
  wide.header = now.header || want.header;
  if (want.flags > wide.flags) wide.flags = want.flags;
  if (want.tickets > wide.tickets) wide.tickets = want.tickets;
  if (want.splits > wide.splits) wide.splits = want.splits;
  if (!holds && akx__ws_tags_end(wide) + need->scratch <= bytes && RESERVED(wide)) {
    *next = wide;
    return AKX__WS_WIDEN;
  }
  if (grow) {
    *next = wide;
    return AKX__WS_GROW;
  }
  if (akx__ws_tags_end(want) + need->scratch <= bytes && bytes >= need->reserve) {
    *next = want;
    return AKX__WS_OWN;
  }
#undef RESERVED
  *next = now;
  return AKX__WS_TOO_SMALL;
}

static void know_all(akx_context *ctx) {
  ctx->ws.header_zero = ctx->ws.layout.header;
  ctx->ws.flags_known = ctx->ws.layout.flags;
  ctx->ws.tickets_zero = ctx->ws.layout.tickets;
  ctx->ws.splits_zero[0] = ctx->ws.splits_zero[1] = ctx->ws.layout.splits;
}

static void forget_all(akx_context *ctx) {
  ctx->ws.header_zero = 0;
  ctx->ws.flags_known = 0;
  ctx->ws.tickets_zero = 0;
  ctx->ws.splits_zero[0] = ctx->ws.splits_zero[1] = 0;
}

/* On a GPU the workspace holds whatever the last call (or nobody) left there. The sim fills
 * [from, to) with poison, so a kernel that trusts it to start as zeros, or as the last call's
 * values, reads visibly wrong values instead of passing by luck. */
static void poison(const akx_context *ctx, void *ptr, size_t from, size_t to) {
  if (ctx->be->kind == AKX_BACKEND_SIM && from < to) memset((char *)ptr + from, akx__sim_poison_byte, to - from);
}

/* The sim poisons the call's scratch and every tag not known, as a GPU may hold anything there. */
static void poison_unknown(const akx_context *ctx, size_t scratch) {
  const akx__ws_layout L = ctx->ws.layout;
  const size_t end = akx__ws_tags_end(L);
  char *b = ctx->ws.ptr;
  if (end) {
    if (!ctx->ws.header_zero) poison(ctx, b, 0, AKX__WS_HEADER_BYTES);
    poison(ctx, b, akx__ws_flags_at(L) + 4 * (size_t)ctx->ws.flags_known, akx__ws_tickets_at(L));
    poison(ctx, b, akx__ws_tickets_at(L) + 4 * (size_t)ctx->ws.tickets_zero, akx__ws_splits_at(L));
    for (int h = 0; h < 2; ++h) {
      const size_t half = akx__ws_splits_at(L) + 8 * (size_t)h * (size_t)L.splits;
      poison(ctx, b, half + 8 * (size_t)ctx->ws.splits_zero[h], half + 8 * (size_t)L.splits);
    }
    poison(ctx, b, akx__ws_splits_at(L) + 16 * (size_t)L.splits, end);
  }
  poison(ctx, b, end, end + scratch);
}

static akx_status too_small(const akx_context *ctx, const akx__ws_need *need) {
  const size_t bytes = akx__ws_need_bytes(need);
  if (ctx->ws.caller_owned)
    return akx__fail(AKX_ERROR_WORKSPACE_TOO_SMALL,
                     "the workspace given to akx_context_set_workspace has %zu bytes; this call "
                     "needs %zu (ask the *_workspace_size query)",
                     ctx->ws.bytes, bytes);
  return akx__fail(AKX_ERROR_UNSUPPORTED,
                   "the context's stream is capturing a CUDA graph and this call needs %zu "
                   "bytes of workspace, more than the context's cached workspace holds "
                   "(%zu): growing it would allocate, synchronize and free during the "
                   "capture; size the workspace before capturing (run the call once outside "
                   "the capture, or hand the context a buffer of the size the call's "
                   "*_workspace_size query returns with akx_context_set_workspace)",
                   bytes, ctx->ws.bytes);
}

/* Places the call (akx__ws_place) and carries the placement out; the grant's pointers. */
static akx_status take(akx_context *ctx, const akx__ws_need *need, akx__ws_grant *g) {
  memset(g, 0, sizeof *g);
  if (akx__ws_need_bytes(need) == 0) return AKX_SUCCESS; /* nothing taken: every pointer NULL */
  int capturing = 0;
  AKX_TRY(ctx->be->is_capturing(ctx, &capturing));
  akx__ws_layout next;
  const akx__ws_placement how =
      akx__ws_place(ctx->ws.bytes, ctx->ws.layout, need, !ctx->ws.caller_owned && !capturing, &next);
  switch (how) {
    case AKX__WS_TOO_SMALL: return too_small(ctx, need);
    case AKX__WS_GROW: {
      const size_t own = akx__ws_tags_end(next) + (need->scratch > need->reserve ? need->scratch : need->reserve);
      AKX_TRY(grow(ctx, own));
      ctx->ws.layout = next;
      know_all(ctx); /* grow zeroed the buffer */
      break;
    }
    case AKX__WS_WIDEN:
      /* Zeros are every tag's reset state: one memset (none on a buffer still all zeros, as
       * a caller's new one), then the wider layout is known. */
      if (!ctx->ws.zeroed) {
        AKX_TRY(ctx->be->zero(ctx, ctx->ws.ptr, akx__ws_tags_end(next)));
        ctx->ws.resets++;
      }
      ctx->ws.layout = next;
      know_all(ctx);
      break;
    case AKX__WS_OWN:
      ctx->ws.layout = next;
      if (ctx->ws.zeroed) know_all(ctx);
      else forget_all(ctx);
      break;
    case AKX__WS_AS_LAID: break;
  }
  if (capturing && !ctx->ws.caller_owned) ctx->ws.captured = 1;
  if (capturing) ctx->ws.graphed = 1;
  ctx->ws.zeroed = 0; /* the call writes its scratch */
  const akx__ws_layout L = ctx->ws.layout;
  char *b = ctx->ws.ptr;
  g->ptr = b;
  g->flags = (uint32_t *)(b + akx__ws_flags_at(L));
  g->tickets = (uint32_t *)(b + akx__ws_tickets_at(L));
  g->splits = (uint64_t *)(b + akx__ws_splits_at(L));
  g->scratch = b + akx__ws_tags_end(L);
  poison_unknown(ctx, need->scratch);
  akx__ws_watch(ctx, need);
  return AKX_SUCCESS;
}

akx_status akx__workspace(akx_context *ctx, size_t bytes, void **ptr) {
  *ptr = NULL;
  if (bytes == 0) return AKX_SUCCESS;
  const akx__ws_need need = {{0, 0, 0, 0}, bytes, 0, 0};
  akx__ws_grant g;
  AKX_TRY(take(ctx, &need, &g));
  *ptr = g.scratch;
  return AKX_SUCCESS;
}

/* A look-back call needs no reset while every flag it reads holds 0 or an earlier epoch
 * (kernels/akx/lookback.cuh): known flags enough for its tiles, the header's ticket at 0, no
 * wrap, no graph. Else the reset kernel zeroes the header and its flags (at the wrap: every
 * flag of the layout) before its tiles run. */
akx_status akx__workspace_lookback(akx_context *ctx, const akx__ws_need *need, akx__ws_grant *g) {
  AKX_TRY(take(ctx, need, g));
  const int64_t tiles = need->tags.flags;
  uint32_t e = ctx->ws.epoch + 1;
  const int wrap = e == 0;
  if (wrap) e = 1; /* 0 is the reset's: the wrap resets every flag to it */
  const int reset = !ctx->ws.header_zero || ctx->ws.flags_known < tiles || wrap || ctx->ws.graphed ||
                    !ctx->settings.one_launch;
  g->epoch = e;
  g->trusted = !reset;
  g->reset_flags = wrap ? ctx->ws.layout.flags : tiles;
  /* Flags the call leaves known: those of before (no other family writes them), or after a
   * reset those it zeroed and those of before beyond them. */
  g->known_after = wrap ? ctx->ws.layout.flags : ctx->ws.flags_known > tiles ? ctx->ws.flags_known : tiles;
  if (reset) ctx->ws.resets++;
  ctx->ws.epoch = e;
  ctx->ws.header_zero = 0;
  ctx->ws.flags_known = 0;
  return AKX_SUCCESS;
}

void akx__workspace_lookback_done(akx_context *ctx, const akx__ws_grant *g) {
  if (ctx->ws.graphed) return; /* a graph's replays write the buffer whenever they run */
  ctx->ws.header_zero = 1;     /* the reset or the last tile left the ticket at 0 */
  ctx->ws.flags_known = g->known_after;
}

/* A whole-array reduction's ticket (the header's first word) or a split dims reduction's
 * tickets: trusted (one launch) when known to be 0. */
akx_status akx__workspace_tickets(akx_context *ctx, const akx__ws_need *need, akx__ws_grant *g) {
  AKX_TRY(take(ctx, need, g));
  const int64_t k = need->tags.tickets;
  if ((!k && !need->tags.header) || need->untouched) return AKX_SUCCESS; /* nothing trusted */
  const int zero = (k ? ctx->ws.tickets_zero >= k : ctx->ws.header_zero) && !ctx->ws.graphed &&
                   ctx->settings.one_launch;
  g->trusted = zero;
  if (!zero) ctx->ws.resets++;
  if (k) {
    g->known_after = ctx->ws.tickets_zero > k ? ctx->ws.tickets_zero : k;
    ctx->ws.tickets_zero = 0;
  } else {
    ctx->ws.header_zero = 0;
  }
  return AKX_SUCCESS;
}

void akx__workspace_tickets_done(akx_context *ctx, const akx__ws_need *need, const akx__ws_grant *g) {
  if (ctx->ws.graphed || (!need->tags.tickets && !need->tags.header) || need->untouched) return;
  if (need->tags.tickets) ctx->ws.tickets_zero = g->known_after;
  else ctx->ws.header_zero = 1;
}

/* A segmented reduction's split tickets: the half it counts on must be all zeros (the atomicAdd
 * of each arrival starts from 0: kernels/akx/segment_tile.cuh, split_arrive). The other half is
 * the next call's: its tiles zero the whole of it, so that the next call trusts it whatever the
 * offsets did to this call's half (garbage offsets may leave counts that never completed).
 * Where the call's half is not known to be zero (a buffer a graph replays, an interrupted call,
 * AKX_ONE_LAUNCH=0) it is zeroed first (a memset: a reset). */
akx_status akx__workspace_splits(akx_context *ctx, const akx__ws_need *need, akx__ws_grant *g) {
  AKX_TRY(take(ctx, need, g));
  const int h = ctx->ws.split_half;
  const int64_t words = ctx->ws.layout.splits, k = need->tags.splits;
  g->split_count = g->splits + (size_t)h * (size_t)words;
  g->split_clear = g->splits + (size_t)(1 - h) * (size_t)words;
  g->split_words = words;
  const int zero = ctx->ws.splits_zero[h] >= k && !ctx->ws.graphed && ctx->settings.one_launch;
  /* Both halves are written from here on: forgotten until the launch completed. */
  ctx->ws.splits_zero[0] = ctx->ws.splits_zero[1] = 0;
  if (!zero) {
    AKX_TRY(ctx->be->zero(ctx, g->split_count, 8 * (size_t)k));
    ctx->ws.resets++;
  }
  g->trusted = zero;
  return AKX_SUCCESS;
}

void akx__workspace_splits_done(akx_context *ctx, const akx__ws_grant *g) {
  if (ctx->ws.graphed) return;
  const int h = ctx->ws.split_half;
  ctx->ws.splits_zero[1 - h] = g->split_words; /* the call's tiles zeroed the other half */
  ctx->ws.split_half = 1 - h;
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
  ctx->ws.graphed = 0;
  ctx->ws.layout = (akx__ws_layout){0, 0, 0, 0};
  forget_all(ctx);
  /* The caller's bytes are anything: zeros are every tag's reset state, as a grown buffer's.
   * The layout starts empty: the calls widen it (their tags zeros already). */
  if (ptr) {
    AKX_TRY(ctx->be->zero(ctx, ptr, bytes));
    ctx->ws.zeroed = 1;
    ctx->ws.resets++;
  }
  return AKX_SUCCESS;
}

void akx__workspace_destroy(akx_context *ctx) {
  (void)akx__ws_watch_end(ctx, AKX_ERROR_INTERNAL, "akx_context_destroy"); /* frees a pending watch */
  pthread_mutex_lock(&registry_lock);
  unhold_locked(ctx);
  pthread_mutex_unlock(&registry_lock);
  if (!ctx->ws.caller_owned && ctx->ws.ptr) (void)ctx->be->free(ctx, ctx->ws.ptr);
  for (size_t i = 0; i < ctx->ws.nretired; i++) (void)ctx->be->free(ctx, ctx->ws.retired[i]);
  free(ctx->ws.retired);
  memset(&ctx->ws, 0, sizeof ctx->ws);
}
