/* The tuning table (src/core/tuning.c): one lookup per kernel family. */
#ifndef AKX_TUNING_H
#define AKX_TUNING_H
#include <stddef.h>
#include "device_profile.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  AKX__TUNE_REDUCE_WHOLE, /* kernels/akx/reduce_whole.cuh */
  AKX__TUNE_SCAN_TILE,    /* whole-array and slice tile scans (kernels/akx/scan_*.cuh) */
  AKX__TUNE_SCAN_COLUMNS, /* scans along a strided dim: a thread per column */
  AKX__TUNE_REDUCE_DIMS,  /* reductions along dims (kernels/akx/reduce_dims*.cuh) */
  AKX__TUNE_FINDALL,      /* findall's selection tile (kernels/akx/select_tile.cuh) */
  AKX__TUNE_FAMILY_COUNT
} akx__tuning_family;

typedef struct {
  int32_t block_size;
  int32_t items_per_thread;
  int32_t target_blocks;
} akx__tuning;

/* The row for a device of this compute capability (the device's own: a CUDA context's
 * info, a sim profile's) and accumulator size; an unknown device gets the default row;
 * explicit overrides (non-zero) win. */
akx__tuning akx__tuning_lookup(akx__tuning_family family, int cc_major, int cc_minor, size_t acc_size,
                               const akx__tuning *overrides);
/* Lookups of family's rows since the library was loaded (any thread): a test's window on how
 * often a call plans (tests/test_reduce_dims_plan_once.c). */
uint64_t akx__tuning_lookups(akx__tuning_family family);

#ifdef __cplusplus
}
#endif
#endif
