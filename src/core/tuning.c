/* The tuning table: rows keyed by device (its own compute capability: a CUDA device's, or
 * the one a sim profile stands for; never the nearest profile's) and accumulator size, per
 * kernel family. One lookup; explicit options win.
 * Every row says where its numbers come from. */
#include <stdatomic.h>
#include "tuning.h"

typedef struct {
  akx__tuning_family family;
  int32_t cc_major, cc_minor; /* 0, 0: any device */
  int32_t acc_size;           /* 0: any size */
  akx__tuning t;              /* items_per_thread 0: 64 bytes of accumulator, clamped 4..16 */
} tuning_row;

static const tuning_row rows[] = {
    /* AK's whole-array reduction (docs/reduce_whole.md): 256 threads, target_blocks 256 (its
     * per-backend default), items_per_thread = 64 bytes of accumulator per thread ("within
     * 1% of the best setting for Float32 from 10^4 to 10^8" on an RTX 5080, cc 12.0). */
    {AKX__TUNE_REDUCE_WHOLE, 0, 0, 0, {256, 0, 256}},
    {AKX__TUNE_REDUCE_WHOLE, 12, 0, 0, {256, 0, 256}},
    /* H200 (cc 9.0, 132 SMs): by Little's law DRAM needs ~48 KiB in flight per SM (CUB's
     * sm_90 tuning), 6.2 MiB in all. 256 blocks x 256 threads x 64 bytes is 4 MiB: too few
     * to saturate; 4 blocks per SM (528) give 8.3 MiB. Not yet measured on the GPU. */
    {AKX__TUNE_REDUCE_WHOLE, 9, 0, 0, {256, 0, 528}},
    /* Reductions along dims (kernels/akx/reduce_dims.cuh): block_size only. AK's rules
     * (docs/reduce_dims_shapes.md) fix the tile shapes (8 and 32 outputs per block) and add no
     * tuning parameter; 256 threads is AK's and PyTorch's Reduce.cuh block. items_per_thread
     * and target_blocks are not read: loads in flight are four per thread in every body, and
     * splits follow from the device's resident threads (src/reduce/reduce_dims.c). Not yet
     * measured on a GPU. */
    {AKX__TUNE_REDUCE_DIMS, 0, 0, 0, {256, 0, 0}},
    {AKX__TUNE_REDUCE_DIMS, 9, 0, 0, {256, 0, 0}},
    {AKX__TUNE_REDUCE_DIMS, 12, 0, 0, {256, 0, 0}},
    /* Tile scans (kernels/akx/scan_tile.cuh, docs/scan_tiles.md), per partial size. A tile of
     * ~16 KiB of partials (AK's tiles: 256 threads x 8 items of 8 bytes) amortises the
     * look-back; items are odd or a power of two, the counts kernels/akx/scan_layout.cuh keeps
     * conflict-free for both the striped and the blocked phases. Smaller partials get longer
     * runs: 1- and 2-byte tiles would otherwise be 4-8 KiB. target_blocks is not read (one tile per
     * block, grid = tiles). Not yet measured on a GPU. */
    {AKX__TUNE_SCAN_TILE, 0, 0, 1, {256, 32, 0}},
    {AKX__TUNE_SCAN_TILE, 0, 0, 2, {256, 32, 0}},
    {AKX__TUNE_SCAN_TILE, 0, 0, 4, {256, 16, 0}},
    {AKX__TUNE_SCAN_TILE, 0, 0, 8, {256, 8, 0}},
    {AKX__TUNE_SCAN_TILE, 0, 0, 0, {256, 4, 0}}, /* 16 bytes and the segmented pairs */
    /* Scans along a strided dim (kernels/akx/scan_columns.cuh): a thread per column and chunk;
     * target_blocks = resident blocks per SM the chunking aims at (x SMs: a full wave). */
    {AKX__TUNE_SCAN_COLUMNS, 0, 0, 0, {256, 0, 8}},
    /* findall's selection tile (kernels/akx/select_tile.cuh): block_size only, the largest
     * the scan family's bound allows (kernels/akx/block_limits.h): the tile is that many threads
     * x AKX__FINDALL_VECTORS 16-byte vectors (kernels/akx/plan.h), and the larger
     * the tile, the fewer tiles and look-back steps (0.6 us each on the H200 profile: 10^7
     * bool elements are 306 tiles, 10 steps). items_per_thread and target_blocks are not
     * read. Not yet measured on a GPU. */
    {AKX__TUNE_FINDALL, 0, 0, 0, {256, 0, 0}},
};

static int32_t default_items(size_t acc_size) {
  int32_t items = acc_size ? (int32_t)(64 / acc_size) : 16;
  return items < 4 ? 4 : items > 16 ? 16 : items;
}

static _Atomic uint64_t lookups[AKX__TUNE_FAMILY_COUNT];

uint64_t akx__tuning_lookups(akx__tuning_family family) {
  return (unsigned)family < AKX__TUNE_FAMILY_COUNT ? atomic_load_explicit(&lookups[family], memory_order_relaxed) : 0;
}

akx__tuning akx__tuning_lookup(akx__tuning_family family, int cc_major, int cc_minor, size_t acc_size,
                               const akx__tuning *overrides) {
  if ((unsigned)family < AKX__TUNE_FAMILY_COUNT) atomic_fetch_add_explicit(&lookups[family], 1, memory_order_relaxed);
  const tuning_row *best = 0;
  int best_score = -1;
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i) {
    const tuning_row *r = &rows[i];
    if (r->family != family) continue;
    const int any_device = r->cc_major == 0 && r->cc_minor == 0;
    if (!any_device && (r->cc_major != cc_major || r->cc_minor != cc_minor)) continue;
    if (r->acc_size != 0 && (size_t)r->acc_size != acc_size) continue;
    const int score = (any_device ? 0 : 2) + (r->acc_size ? 1 : 0); /* most specific wins */
    if (score > best_score) { best = r; best_score = score; }
  }
  akx__tuning t = best ? best->t : (akx__tuning){256, 0, 256};
  if (t.items_per_thread == 0) t.items_per_thread = default_items(acc_size);
  if (overrides) {
    if (overrides->block_size) t.block_size = overrides->block_size;
    if (overrides->items_per_thread) t.items_per_thread = overrides->items_per_thread;
    if (overrides->target_blocks) t.target_blocks = overrides->target_blocks;
  }
  return t;
}
