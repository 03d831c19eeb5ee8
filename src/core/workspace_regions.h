/* The workspace's regions (src/core/workspace.c, "The regions"): what a call asks of the
 * buffer, how the buffer is laid out, and the one decision of where a call's bytes go. */
#ifndef AKX_WORKSPACE_REGIONS_H
#define AKX_WORKSPACE_REGIONS_H
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

/* The tags: bytes a call trusts from one call to the next, each region of one owner kind,
 * with one reset state and one invariant (docs/workspace.md, "The invariants"; the sim checks
 * them after every call: src/core/workspace_check.c). header: the 64-byte header
 * (kernels/akx/lookback.cuh's lookback_header) whose first word is the ticket of the
 * look-back calls and of the whole-array reduction; flags: the look-back's epoch-tagged
 * flags, one per tile (scans, findall, the segmented scans, the by-key calls); tickets: the
 * split dims reductions' 4-byte tickets; splits: a segmented reduction's split tickets, two
 * halves of `splits` 8-byte words (a call counts on one half and zeroes the other for the
 * next call: kernels/akx/segment_tile.cuh, split_arrive). Laid out in that order from the
 * buffer's start; the scratch starts at the next multiple of 256 after them. */
typedef struct {
  int32_t header;
  int64_t flags, tickets, splits;
} akx__ws_layout;

/* What a call takes: its tags and `scratch` bytes that anything may be written to. `reserve`:
 * a cached buffer is grown to at least this many bytes first (a call that a second call on
 * the same workspace follows, as akx_reduce_dims_piece's combine). `untouched`: the call is
 * sized and placed for its tags but neither reads nor writes them (a whole-array reduction of
 * one block finishes alone): what is known of them stays. */
typedef struct {
  akx__ws_layout tags;
  size_t scratch;
  size_t reserve;
  int32_t untouched;
} akx__ws_need;

#define AKX__WS_HEADER_BYTES ((size_t)64)
#define AKX__WS_SCRATCH_ALIGN ((size_t)256)

/* The flags, the tickets and the split tickets (half 0, then half 1) of L, from the buffer's
 * start. */
static inline size_t akx__ws_flags_at(akx__ws_layout L) { (void)L; return AKX__WS_HEADER_BYTES; }
static inline size_t akx__ws_tickets_at(akx__ws_layout L) { return AKX__WS_HEADER_BYTES + 4 * (size_t)L.flags; }
/* 8-byte aligned: a split ticket is an 8-byte atomic. */
static inline size_t akx__ws_splits_at(akx__ws_layout L) { return (akx__ws_tickets_at(L) + 4 * (size_t)L.tickets + 7) / 8 * 8; }

/* Where the scratch starts in layout L (0 when L has no tags). */
static inline size_t akx__ws_tags_end(akx__ws_layout L) {
  if (!L.header && !L.flags && !L.tickets && !L.splits) return 0;
  const size_t end = akx__ws_splits_at(L) + 16 * (size_t)L.splits;
  return (end + AKX__WS_SCRATCH_ALIGN - 1) / AKX__WS_SCRATCH_ALIGN * AKX__WS_SCRATCH_ALIGN;
}
/* The bytes a call needs on a buffer of its own: its tags, then its scratch. What every
 * *_workspace_size query returns. */
static inline size_t akx__ws_need_bytes(const akx__ws_need *n) {
  const size_t own = akx__ws_tags_end(n->tags) + n->scratch;
  return own > n->reserve ? own : n->reserve;
}

/* How a call gets its bytes (akx__ws_place). */
typedef enum {
  AKX__WS_AS_LAID,     /* the buffer's layout holds the call's tags: nothing moves */
  AKX__WS_WIDEN,       /* a wider layout fits the buffer: its tags are zeroed once (a memset) */
  AKX__WS_GROW,        /* a cached buffer too small: a new one, zeroed, with the wider layout */
  AKX__WS_OWN,         /* a buffer that cannot hold both (a caller's, or one a capture holds):
                        * the call's own layout; the other families' tags are lost */
  AKX__WS_TOO_SMALL    /* the buffer cannot hold the call at all (and cannot grow) */
} akx__ws_placement;

/* The one decision: a call needing `need` on a buffer of `bytes` laid out as `now`; `grow`:
 * the buffer may be replaced by a larger one (the context's cached buffer, no capture).
 * *next: the layout the call runs with. A wider layout is the union of both (each region as
 * large as either needs), so that a mix of families keeps every family's tags. */
akx__ws_placement akx__ws_place(size_t bytes, akx__ws_layout now, const akx__ws_need *need, int grow,
                                akx__ws_layout *next);

#ifdef __cplusplus
}
#endif
#endif
