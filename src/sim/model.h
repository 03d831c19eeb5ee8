/* The sim's model of a launch's GPU time: an estimate from the counters and the device
 * profile, never a measurement. Always present it as "model". The formula is in model.c. */
#ifndef AKX_SIM_MODEL_H
#define AKX_SIM_MODEL_H
#include <stdint.h>

#include "device_profile.h"
#ifdef __cplusplus
extern "C" {
#endif

/* What the model needs to know of one launch. */
typedef struct {
  uint64_t blocks;
  uint32_t threads_per_block;
  uint64_t shared_bytes_per_block; /* static + dynamic */
  uint32_t registers_per_thread;   /* as the kernel declares */
  uint64_t global_bytes;           /* loaded + stored */
  uint64_t global_lane_accesses;   /* executions of global loads and stores by lanes */
  double loads_per_window;         /* global loads a thread issues between two convergence
                                      points (barrier, warp collective, start, end), mean */
  uint64_t shared_wavefronts;      /* loads + stores */
} akx__sim_launch_stats;

/* Blocks of this shape one SM holds at once: the least of the SM's block limit, threads per
 * SM / threads per block, registers per SM / the block's registers (allocated per warp in
 * units of 256), shared per SM / (shared per block + the driver's per-block reserve); at
 * least 1. */
uint32_t akx__sim_resident_blocks_per_sm(const akx__device_profile *p,
                                         uint32_t threads_per_block,
                                         uint64_t shared_bytes_per_block,
                                         uint32_t registers_per_thread);

/* The model's time of one launch, microseconds. */
double akx__sim_model_us(const akx__device_profile *p, const akx__sim_launch_stats *s);

#ifdef __cplusplus
}
#endif
#endif
