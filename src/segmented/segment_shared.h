/* The segment tile's shared memory (kernels/akx/segment_tile.cuh), sized by the planner. */
#ifndef AKX_SEGMENT_SHARED_H
#define AKX_SEGMENT_SHARED_H
#include "internal.h"
#include "akx/segmented_plan.h"
#ifdef __cplusplus
extern "C" {
#endif
/* p's block_size, items_per_thread, layout and by_keys given: its dynamic shared memory and
 * the byte offsets in it (the runs of acc_size-byte partials, then the offsets' window or the
 * staged keys, then a by-key reduction's ends), or AKX_ERROR_INVALID_ARGUMENT when they and
 * the static part (node_size-byte nodes; user ops' segment starts) do not fit a block on the
 * device. */
akx_status akx__segment_shared(const akx_context *ctx, size_t acc_size, size_t node_size, int reduce, int user,
                               akx__segmented_plan *p);
#ifdef __cplusplus
}
#endif
#endif
