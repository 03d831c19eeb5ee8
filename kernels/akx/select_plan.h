/* The plan of the flagged selections (kernels/akx/select_flagged.cuh, src/select/): one struct
 * for akx_select_flagged and akx_partition_flagged, whose kernels differ in their rejected side
 * alone. Shared by C and C++; the kernels take it by value. */
#ifndef AKX_SELECT_PLAN_H
#define AKX_SELECT_PLAN_H
#include "akx/plan.h"
#ifdef __cplusplus
extern "C" {
#endif

/* 16-byte slots of values a thread of a tile loads (all of them in flight, and kept in
 * registers to the compaction: 16 registers), and the planner's tile size: one place. A tile
 * of 256 threads moves 16 KiB of values; of 1-byte values 8 KiB, 2 slots a thread: 4 slots of
 * 16 items each made ptxas spill the uint8 select at the tile kernels' 80-register bound (258
 * bytes, CUDA 13.0, sm_90; the other widths took 60 to 78). */
#define AKX__SELECT_VECTORS_OF(value_size) ((value_size) == 1 ? 2 : 4)

typedef enum {
  AKX__SELECT_KEEP = 0,     /* akx_select_flagged: the flagged items in order, at most capacity */
  AKX__SELECT_PARTITION = 1 /* akx_partition_flagged: then the others from dst[n - 1] backwards */
} akx__select_mode;

typedef struct {
  /* the values: n items of value_size bytes (the kernel's width type), item i at
   * src + i * src_stride items (memory order of a 1-d view: any stride) */
  const void *src;
  int64_t src_stride;
  int64_t n;
  int32_t src_dtype;  /* the width's dtype the kernels are keyed by: uint8, uint16, uint32, uint64
                         or complex128 (a width's every dtype moves as it: bits kept) */
  int32_t mode;       /* akx__select_mode */
  /* the flags: n items of flags_size bytes (1, 2, 4, 8 or 16), item i at flags + i *
   * flags_stride items; a flag selects where (its bits & flags_mask) != 0 (the low word's mask
   * for flags of 8 bytes or fewer; a 16-byte flag's high word under the second) */
  const void *flags;
  int64_t flags_stride;
  int32_t flags_size;
  int32_t vectorised;   /* values and flags contiguous, each aligned to its item and the same
                           number of items past a slot's boundary: whole slots load as vectors */
  uint64_t flags_mask[2];
  int64_t shift;        /* vectorised: items between slot 0's start and item 0 */
  /* the output: dst + i * dst_stride items of the values' width */
  void *dst;
  int64_t dst_stride;
  int64_t capacity;     /* a select's: dst's length; a partition's: n */
  int32_t block_size, items_per_thread; /* items: a thread's items of a tile */
  int64_t tiles;
  void *status;         /* the look-back status (kernels/akx/lookback.cuh), the count in its header */
  uint32_t epoch;
  int32_t reset_status;
  int64_t reset_flags;
  int64_t nodes_at;
  int64_t window;       /* the selection tile's staging window: entries (items of the width) */
  int64_t smem_bytes;   /* its dynamic shared memory (akx__select_tile_shared) */
} akx__select_plan;

#ifdef __cplusplus
}
#endif
#endif
