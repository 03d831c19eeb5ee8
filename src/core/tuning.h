/* The tuning table (src/tuning.c): one lookup per kernel family. */
#ifndef AKX_TUNING_H
#define AKX_TUNING_H
#include <stddef.h>
#include "device_profile.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef enum { AKX__FAMILY_REDUCE_WHOLE } akx__family;

typedef struct {
  int32_t block_size;
  int32_t items_per_thread;
  int32_t target_blocks;
} akx__tuning;

/* The row for this device and accumulator size; explicit overrides (non-zero) win. */
akx__tuning akx__tuning_lookup(akx__family family, const akx__device_profile *device,
                               size_t acc_size, const akx__tuning *overrides);

#ifdef __cplusplus
}
#endif
#endif
