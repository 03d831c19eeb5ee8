/* The sim's check of the workspace's invariants after every call (docs/workspace.md, "The
 * invariants"). A GPU cannot say that a call left a tag another family will trust wrongly; it
 * gives a wrong answer one call later, or a store through a poisoned prefix into someone else's
 * memory. The sim can: the workspace is host memory there, so after the outermost call on a
 * context ends, this reads every tag the context claims to know and checks it against its
 * region's invariant, and checks that the call changed no region it does not own (the regions
 * other families trust, and the buffer past the call's scratch).
 *
 * A call owns what it asked for (akx__ws_need): a look-back call (flags) the header and its
 * flags, a whole-array reduction (header alone) the header's ticket word, a split dims
 * reduction its tickets, a segmented reduction its split tickets; every call its scratch.
 * No-ops on CUDA. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

enum {
  OWN_TICKET_WORD = 1, /* the header's first 8 bytes */
  OWN_HEADER = 2,      /* the rest of the header (the look-back's statistic, a call's count) */
  OWN_FLAGS = 4,
  OWN_TICKETS = 8,
  OWN_SPLITS = 16
};

#define PAGE ((size_t)4096)

struct akx__ws_watch_state {
  const void *ptr;            /* the buffer and layout the snapshot is of */
  akx__ws_layout layout;
  unsigned owned;
  size_t scratch_end;         /* the end of the widest scratch the call took */
  unsigned char *tags;        /* [0, tags_end) when the call first took them */
  size_t tags_len;
  uint64_t *pages;            /* FNV-1a of each PAGE of [tags_end, bytes) */
  size_t bytes, npages;
};

static int watching(const akx_context *ctx) { return ctx->be->kind == AKX_BACKEND_SIM; }

/* Field by field: the struct's padding is not part of a layout. */
static int same_layout(akx__ws_layout a, akx__ws_layout b) {
  return a.header == b.header && a.flags == b.flags && a.tickets == b.tickets && a.splits == b.splits;
}

static uint64_t fnv(const unsigned char *p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

static void release(struct akx__ws_watch_state *w) {
  if (!w) return;
  free(w->tags);
  free(w->pages);
  free(w);
}

static unsigned owned_by(const akx__ws_need *need) {
  if (need->untouched) return 0;
  unsigned o = 0;
  if (need->tags.flags) o |= OWN_TICKET_WORD | OWN_HEADER | OWN_FLAGS;
  else if (need->tags.header) o |= OWN_TICKET_WORD;
  if (need->tags.tickets) o |= OWN_TICKETS;
  if (need->tags.splits) o |= OWN_SPLITS;
  return o;
}

/* A snapshot of the buffer as the call found it (after its placement): the tags' bytes and a
 * hash of each page after them. Out of host memory: no watch (the check is the sim's, not the
 * call's). */
static struct akx__ws_watch_state *snapshot(const akx_context *ctx) {
  struct akx__ws_watch_state *w = calloc(1, sizeof *w);
  if (!w) return NULL;
  const unsigned char *b = ctx->ws.ptr;
  w->ptr = b;
  w->layout = ctx->ws.layout;
  w->bytes = ctx->ws.bytes;
  w->tags_len = akx__ws_tags_end(w->layout);
  if (w->tags_len > w->bytes) w->tags_len = w->bytes;
  w->scratch_end = w->tags_len;
  w->npages = (w->bytes - w->tags_len + PAGE - 1) / PAGE;
  w->tags = malloc(w->tags_len ? w->tags_len : 1);
  w->pages = malloc((w->npages ? w->npages : 1) * sizeof *w->pages);
  if (!w->tags || !w->pages) {
    release(w);
    return NULL;
  }
  if (w->tags_len) memcpy(w->tags, b, w->tags_len);
  for (size_t i = 0; i < w->npages; ++i) {
    const size_t at = w->tags_len + i * PAGE, n = w->bytes - at < PAGE ? w->bytes - at : PAGE;
    w->pages[i] = fnv(b + at, n);
  }
  return w;
}

void akx__ws_watch(akx_context *ctx, const akx__ws_need *need) {
  if (!watching(ctx) || !ctx->ws.ptr) return;
  struct akx__ws_watch_state *w = ctx->ws.watch;
  /* A second take of the same call keeps the first snapshot unless the buffer or its layout
   * changed under it (grown, widened): then what the first part of the call wrote is gone. */
  if (w && (w->ptr != ctx->ws.ptr || w->bytes != ctx->ws.bytes ||
            !same_layout(w->layout, ctx->ws.layout))) {
    const unsigned keep = w->owned;
    release(w);
    w = ctx->ws.watch = snapshot(ctx);
    if (w) w->owned = keep;
  } else if (!w) {
    w = ctx->ws.watch = snapshot(ctx);
  }
  if (!w) return;
  w->owned |= owned_by(need);
  const size_t end = w->tags_len + need->scratch;
  if (end > w->scratch_end) w->scratch_end = end;
}

static akx_status broken(const char *call, const char *what) {
  return akx__fail(AKX_ERROR_SIM_CHECK,
                   "the sim's workspace check after %s: %s (docs/workspace.md, \"The invariants\": "
                   "a later call would trust it)",
                   call, what);
}

/* Whether the call changed [from, to) of the tags, which it does not own. */
static int changed(const struct akx__ws_watch_state *w, const unsigned char *b, size_t from, size_t to,
                   size_t *at) {
  if (to > w->tags_len) to = w->tags_len;
  for (size_t i = from; i < to; ++i)
    if (b[i] != w->tags[i]) {
      *at = i;
      return 1;
    }
  return 0;
}

static akx_status check(const akx_context *ctx, const struct akx__ws_watch_state *w, const char *call) {
  const unsigned char *b = ctx->ws.ptr;
  const akx__ws_layout L = ctx->ws.layout;
  char what[256];
  /* 1. every region's invariant, over what the context claims to know of it */
  if (ctx->ws.header_zero && akx__ws_tags_end(L)) {
    uint64_t ticket;
    memcpy(&ticket, b, sizeof ticket);
    if (ticket) {
      snprintf(what, sizeof what, "the header's ticket holds %" PRIu64 ", not 0", ticket);
      return broken(call, what);
    }
  }
  const uint32_t *flags = (const uint32_t *)(b + akx__ws_flags_at(L));
  for (int64_t i = 0; i < ctx->ws.flags_known; ++i)
    if (flags[i] > ctx->ws.epoch) {
      snprintf(what, sizeof what,
               "look-back flag %" PRId64 " holds %" PRIu32 ", not 0 or an epoch up to the last call's (%" PRIu32 ")", i,
               flags[i], ctx->ws.epoch);
      return broken(call, what);
    }
  const uint32_t *tickets = (const uint32_t *)(b + akx__ws_tickets_at(L));
  for (int64_t i = 0; i < ctx->ws.tickets_zero; ++i)
    if (tickets[i]) {
      snprintf(what, sizeof what, "split dims ticket %" PRId64 " holds %" PRIu32 ", not 0", i, tickets[i]);
      return broken(call, what);
    }
  const unsigned char *splits = b + akx__ws_splits_at(L);
  for (int h = 0; h < 2; ++h)
    for (int64_t i = 0; i < ctx->ws.splits_zero[h]; ++i) {
      uint64_t word;
      memcpy(&word, splits + 8 * ((size_t)h * (size_t)L.splits + (size_t)i), sizeof word);
      if (word) {
        snprintf(what, sizeof what, "split ticket %" PRId64 " of half %d holds 0x%" PRIx64 ", not 0", i, h, word);
        return broken(call, what);
      }
    }
  /* 2. nothing the call does not own changed (only where the snapshot is of this buffer) */
  if (!w || w->ptr != ctx->ws.ptr || w->bytes != ctx->ws.bytes || !same_layout(w->layout, L))
    return AKX_SUCCESS;
  static const struct {
    unsigned bit;
    const char *name;
  } regions[] = {{OWN_TICKET_WORD, "the header's ticket"},
                 {OWN_HEADER, "the header"},
                 {OWN_FLAGS, "the look-back's flags"},
                 {OWN_TICKETS, "the split dims tickets"},
                 {OWN_SPLITS, "the split tickets"}};
  const size_t bounds[][2] = {{0, 8},
                              {8, AKX__WS_HEADER_BYTES},
                              {akx__ws_flags_at(L), akx__ws_tickets_at(L)},
                              {akx__ws_tickets_at(L), akx__ws_splits_at(L)},
                              {akx__ws_splits_at(L), akx__ws_splits_at(L) + 16 * (size_t)L.splits}};
  if (!akx__ws_tags_end(L)) return AKX_SUCCESS;
  for (size_t r = 0; r < sizeof regions / sizeof regions[0]; ++r) {
    size_t at;
    if (!(w->owned & regions[r].bit) && changed(w, b, bounds[r][0], bounds[r][1], &at)) {
      snprintf(what, sizeof what, "the call wrote %s, which it does not own (byte %zu: 0x%02x -> 0x%02x)",
               regions[r].name, at, w->tags[at], b[at]);
      return broken(call, what);
    }
  }
  for (size_t i = 0; i < w->npages; ++i) {
    const size_t at = w->tags_len + i * PAGE, n = w->bytes - at < PAGE ? w->bytes - at : PAGE;
    if (at < w->scratch_end) continue; /* the scratch: anything */
    if (fnv(b + at, n) != w->pages[i]) {
      snprintf(what, sizeof what, "the call wrote past its scratch (the page at byte %zu of %zu; its scratch ends at %zu)",
               at, w->bytes, w->scratch_end);
      return broken(call, what);
    }
  }
  return AKX_SUCCESS;
}

akx_status akx__ws_watch_end(akx_context *ctx, akx_status s, const char *call) {
  struct akx__ws_watch_state *w = ctx->ws.watch;
  ctx->ws.watch = NULL;
  if (watching(ctx) && ctx->ws.ptr && s == AKX_SUCCESS) s = check(ctx, w, call);
  release(w);
  return s;
}
