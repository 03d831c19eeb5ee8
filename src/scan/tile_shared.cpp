// The shared memory of a scan tile (kernels/akx/scan_tile.cuh), for the planners of scans and
// findall: the dynamic part (the runs, kernels/akx/scan_layout.cuh) that the launch passes, and
// the static part the kernel declares (the block scan's scratch of nodes and the ticket).
// The driver counts both against one per-block limit (48 KiB without the opt-in, which the
// tile kernels declare; the device's opt-in maximum with it), so the plan refuses a tile
// whose sum does not fit before anything changes, and the launch cannot fail on it.
#include <inttypes.h>

#include "internal.h"
#include "tile/tile.h"
#include "akx/block_scan.cuh"
#include "akx/scan_layout.cuh"


extern "C" akx_status akx__scan_tile_shared(const akx_context *ctx, int32_t layout,
                                            int32_t block_size, int32_t items_per_thread,
                                            size_t partial_size, size_t node_size,
                                            int64_t *dynamic_bytes) {
  const akx::scan_layout l = akx::scan_layout::make(layout, items_per_thread, (int32_t)partial_size);
  const int64_t dynamic = l.slots(block_size) * (int64_t)partial_size;
  // AKX_SHARED(T, scratch, block_scan_scratch + 1) and AKX_SHARED(unsigned long long, ticket,
  // 1), each at a 16-byte boundary (as the sim lays them out; ptxas packs them no looser).
  const int64_t statics = akx__align16((akx::block_scan_scratch + 1) * (int64_t)node_size) + akx__align16(8);
  if (dynamic + statics > ctx->info.shared_per_block)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "opts->block_size %d x opts->items_per_thread %d of %zu-byte partials needs "
                     "%" PRId64 " bytes of shared memory per tile (%" PRId64 " for the runs, %" PRId64
                     " static): more than the %" PRId64 " a block may use on %s; lower either",
                     (int)block_size, (int)items_per_thread, partial_size, dynamic + statics, dynamic,
                     statics, ctx->info.shared_per_block, ctx->info.device_name);
  *dynamic_bytes = dynamic;
  return AKX_SUCCESS;
}
