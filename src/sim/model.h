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
  uint32_t registers_per_thread;   /* as the kernel declares (kernel_info.registers) */
  uint32_t loads_in_flight;        /* independent global loads a thread has in flight, as the
                                      kernel declares (kernel_info.loads_in_flight) */
  uint64_t global_sectors;         /* 32-byte sectors of global loads + stores (units) */
  uint64_t global_requests;        /* warp requests of global loads + stores */
  uint64_t load_sectors;           /* of global loads only: the requests kept in flight */
  uint64_t load_requests;
  uint64_t shared_wavefronts;      /* loads + stores */
  uint32_t dependent_steps;        /* longest release->acquire chain between blocks */
  int32_t pdl;                     /* a programmatic dependent launch */
  uint64_t atomic_chain;           /* the most global atomics on one address */
} akx__sim_launch_stats;

/* Bytes of one global sector: what DRAM and L2 move per sector a request touches. */
enum { akx__sim_sector_bytes = 32 };

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
/* The model's time of a device-to-device copy reading and writing `bytes` in all (half each
 * way), as a copy kernel would launch on p: 16-byte loads (512 bytes per warp request), 4 in
 * flight per thread, enough 256-thread blocks to fill the device. What the model charges a
 * kernel that only streams these bytes (akx-bench's copy column on the sim, the tests' copy
 * bounds). NAN for no bytes. */
double akx__sim_model_copy_us(const akx__device_profile *p, double bytes);

#ifdef __cplusplus
}
#endif
#endif
