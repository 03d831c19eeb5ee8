// The segment tile's shared memory: the dynamic part's regions (the tile's runs as
// kernels/akx/scan_layout.cuh lays them out, the window of segment bounds, the staged keys in
// their own 8-byte layout, the by-key ends) and the static part the kernel declares, summed
// against the device's per-block limit before anything changes.
#include <inttypes.h>

#include "segment_shared.h"
#include "tile/tile.h"
#include "akx/block_limits.h"
#include "akx/block_scan.cuh"
#include "akx/scan_layout.cuh"


extern "C" size_t akx__segment_node_size(size_t acc_size, size_t acc_align) {
  const size_t align = acc_align > 8 ? acc_align : 8;
  return AKX__ROUND_UP(AKX__ROUND_UP(acc_size, 8) + 8, align);
}

// Every AKX_SHARED array of segment_tile_body in its order, each 16-byte aligned: the block
// scan's nodes, the ticket, each run's heads, the tile's constants, a segmented reduction's
// split jobs (3 x 2 words), for user ops the segment starts (one word otherwise), and for user
// ops and a segmented reduction's splits the max-scan's scratch (one word otherwise).
// tests/test_segment_shared.c compares the sum with the sim's layout.
extern "C" int64_t akx__segment_static_shared(size_t node_size, int user, int split) {
  int64_t statics = akx__align16((akx::block_scan_scratch + 1) * (int64_t)node_size) + akx__align16(8) +
                    akx__align16(AKX_MAX_BLOCK_SCAN * 4) + akx__align16(8 * 8) + akx__align16(6 * 8);
  statics += user ? akx__align16(AKX_MAX_BLOCK_SCAN * 8) : 16;
  statics += user || split ? akx__align16(akx::block_scan_scratch * 8) : 16;
  return statics;
}

extern "C" akx_status akx__segment_shared(const akx_context *ctx, size_t acc_size, size_t node_size, int reduce,
                                          int user, akx__segmented_plan *p) {
  const int32_t bd = p->block_size, ipt = p->items_per_thread;
  const int64_t tile = (int64_t)bd * ipt;
  int64_t at = akx__align16(akx::scan_layout::make(p->layout, ipt, (int32_t)acc_size).slots(bd) * (int64_t)acc_size);
  p->window_at = p->keys_at = p->ends_at = 0;
  p->window_cap = 0;
  if (!p->by_keys) {
    // A round of the window holds window_cap - 1 segments: a tile's whole range unless most
    // of its segments are empty.
    p->window_at = at;
    p->window_cap = tile + 2;
    at += akx__align16(p->window_cap * 2);
  } else {
    p->keys_at = at;
    at += akx__align16(akx::scan_layout::make(p->layout, ipt, 8).slots(bd) * 8);
    if (reduce) {
      p->ends_at = at;
      at += akx__align16(tile * 2);
    }
  }
  const int64_t statics = akx__segment_static_shared(node_size, user, reduce && !p->by_keys);
  if (at + statics > ctx->info.shared_per_block)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "opts->block_size %d x opts->items_per_thread %d of %zu-byte partials needs %" PRId64
                     " bytes of shared memory per segment tile: more than the %" PRId64 " a block may use on %s; "
                     "lower either",
                     (int)bd, (int)ipt, acc_size, at + statics, ctx->info.shared_per_block, ctx->info.device_name);
  p->smem_bytes = at;
  return AKX_SUCCESS;
}
