/* The plan of the segmented calls (kernels/akx/segment_tile.cuh, src/segmented/):
 * one struct for its two kernel families (segmented_reduce: akx_segmented_reduce and
 * akx_reduce_by_key; segmented_scan: akx_segmented_scan and akx_scan_by_key). Shared by C
 * and C++; the kernels take it by value. */
#ifndef AKX_SEGMENTED_PLAN_H
#define AKX_SEGMENTED_PLAN_H
#include "akx/plan.h"
#ifdef __cplusplus
extern "C" {
#endif

/* The most elements of one tile: a tile's positions fit 16 bits (the window's relative
 * offsets, the by-key ends), and its run of at most 32 elements a word of head bits. */
#define AKX__SEGMENT_TILE_MAX 4096
#define AKX__SEGMENT_RUN_MAX 32

/* What an empty segment writes (the host decides: src/segmented/segmented.c, empty_rule). */
typedef enum {
  AKX__SEGMENT_EMPTY_VALUE = 0,    /* init, else the op's empty value, through the finish */
  AKX__SEGMENT_EMPTY_LEAVE = 1,    /* nothing: no neutral element, or ARGMIN/ARGMAX into src's dtype */
  AKX__SEGMENT_EMPTY_MINUS_ONE = 2 /* ARGMIN/ARGMAX into an int64 dst: -1 */
} akx__segment_empty;

typedef struct {
  /* the values: n elements of src_dtype, element i at src + i * src_stride (elements) */
  const void *src;
  int64_t src_stride;
  int64_t n;
  int32_t src_dtype, dst_dtype, acc, op, map; /* akx_dtype x3, akx_op (or a user op's id), akx_map */
  int32_t by_keys; /* heads from keys (a run starts where the key changes), else from offsets */
  /* segments: nseg + 1 offsets of offsets_size (4 or 8) bytes, entry j at offsets + j *
   * offsets_stride elements; each clamped to [0, n] where it is read */
  const void *offsets;
  int64_t offsets_stride;
  int64_t nseg;
  int32_t offsets_size;
  /* keys: n keys of keys_size (1, 2, 4, 8) bytes (bool: nonzero is one key), and the keys of
   * the runs (akx_reduce_by_key), of the same size */
  int32_t keys_size, keys_bool;
  const void *keys;
  int64_t keys_stride;
  void *keys_out;
  int64_t keys_out_stride;
  /* the output: a scan's element i, or a reduction's output s (a segment, a run) at dst + i *
   * dst_stride elements of dst_size bytes */
  void *dst;
  int64_t dst_stride;
  int32_t dst_size;
  int32_t empty_rule; /* akx__segment_empty */
  int64_t capacity;   /* akx_reduce_by_key: runs written at most */
  int32_t exclusive;  /* scans */
  int32_t layout;     /* akx__scan_layout: the tile's runs in shared memory */
  akx__finish finish; /* init (scans and reductions); reductions: fold, the dst store */
  /* the tile: block_size x items_per_thread elements, tiles of them, in ticket order */
  int32_t block_size, items_per_thread;
  int64_t tiles;
  int64_t smem_bytes;  /* dynamic shared memory: the runs, then (offsets) the window, (keys) the
                          staged keys, (by-key reduce) the ends (akx__segment_smem) */
  int64_t window_at, window_cap; /* byte offset; entries of the window (segments + 1 a round) */
  int64_t keys_at, ends_at;      /* byte offsets */
  /* the look-back (kernels/akx/lookback.cuh), as the scan's. A segmented reduction takes no
   * look-back: its pieces (lead, then trail: an accumulator each per tile) lie where the nodes
   * would be, nodes_at bytes from status (kernels/akx/segment_tile.cuh, split_arrive) */
  void *status;
  uint32_t epoch;
  int32_t reset_status;
  int64_t reset_flags;
  int64_t nodes_at;
  /* a segmented reduction's split tickets (src/core/workspace.c, akx__workspace_splits): the
   * half it counts on (uint32 a tile, all 0 at the start) and the half of split_words words it
   * zeroes for the next call */
  void *split_count, *split_clear;
  int64_t split_words;
} akx__segmented_plan;

#ifdef __cplusplus
}
#endif
#endif
