// The selection tile's shared memory (kernels/akx/select_tile.cuh), for the planners of its
// clients (src/scan/findall.c today): the staging window in dynamic shared memory, sized here,
// and the static part the kernel declares (the packed counts' block-scan scratch, the tile's
// prefix, the ticket). As the scan tile's (src/scan/tile_shared.cpp) and the segment tile's
// (src/segmented/segment_shared.cpp): the driver counts both parts against one per-block limit,
// 48 KiB for a kernel without the opt-in (kernel_info.smem_optin, kernels/akx/device.cuh) and
// the device's opt-in maximum for one with it, so the plan refuses a tile that does not fit
// before anything changes, and the launch cannot fail on it.
#include <inttypes.h>

#include "internal.h"
#include "device_profile.h"
#include "tile/tile.h"
#include "akx/select_tile.cuh"


extern "C" akx_status akx__select_tile_shared(const akx_context *ctx, int32_t block_size, int32_t vectors,
                                              int32_t per_vector, int32_t sides, size_t staged_size, int optin,
                                              const char *block_from, int64_t *window, int64_t *dynamic_bytes,
                                              int64_t *static_bytes) {
  // A tile's items, at most: a window as large never takes a second round.
  const int64_t items = (int64_t)block_size * vectors * per_vector;
  const int64_t entries = items < akx::select_window_max ? items : akx::select_window_max;
  const int64_t dynamic = akx__align16(entries * (int64_t)staged_size);
  // AKX_SHARED(packed_sum<W x sides>::T, scratch, block_scan_scratch), AKX_SHARED(
  // select_counts<sides>, tile_prefix, 1), AKX_SHARED(unsigned long long, ticket, 1), each from a
  // 16-byte boundary, the last one's 8 bytes unpadded (as the sim lays them out and measures
  // them, tests/test_select_tile.cpp; ptxas packs them no looser). W: four 16-bit counts a word.
  const int64_t words = (vectors + 3) / 4 * (int64_t)sides;
  const int64_t statics = akx__align16(akx::block_scan_scratch * 8 * words) + akx__align16(8 * (int64_t)sides) + 8;
  const int64_t without = (int64_t)akx__static_shared_limit;
  const int64_t limit = optin || ctx->info.shared_per_block < without ? ctx->info.shared_per_block : without;
  if (dynamic + statics > limit)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "%s %d: a selection tile of %d threads x %d slots of %d items needs %" PRId64
                     " bytes of shared memory (%" PRId64 " for its window of %" PRId64 " %zu-byte entries, %" PRId64
                     " static): more than the %" PRId64 " a block may use on %s%s; lower it",
                     block_from, (int)block_size, (int)block_size, (int)vectors, (int)per_vector, dynamic + statics, dynamic, entries, staged_size,
                     statics, limit, ctx->info.device_name, optin ? "" : " without the opt-in");
  *window = entries;
  *dynamic_bytes = dynamic;
  if (static_bytes) *static_bytes = statics;
  return AKX_SUCCESS;
}
