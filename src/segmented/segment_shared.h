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
/* The node of the tile's block scan (keyed_value<Acc>: the accumulator, rounded to 8 bytes, and
 * an 8-byte flag, aligned as the accumulator or 8). */
size_t akx__segment_node_size(size_t acc_size, size_t acc_align);
/* The kernel's static shared memory (its AKX_SHARED arrays) for node_size-byte nodes, user ops
 * or not, a segmented reduction's kernel (split: its arrivals' block max) or another. */
int64_t akx__segment_static_shared(size_t node_size, int user, int split);
akx_status akx__segment_shared(const akx_context *ctx, size_t acc_size, size_t node_size, int reduce, int user,
                               akx__segmented_plan *p);
#ifdef __cplusplus
}
#endif
#endif
