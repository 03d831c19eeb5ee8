/* Device profiles: what shape selection, tuning and the sim's model know of a device.
 * The sim runs as one of these (AKX_SIM_DEVICE); a CUDA context gets the profile with the
 * same compute capability (for the model only: its info comes from the device itself). */
#ifndef AKX_DEVICE_PROFILE_H
#define AKX_DEVICE_PROFILE_H
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

/* Static shared memory per block that nvcc allows (48 KiB); dynamic shared memory above it
 * needs the per-kernel opt-in. */
enum { akx__static_shared_limit = 49152 };
/* The byte the sim fills new device memory, workspaces and shared memory with. */
enum { akx__sim_poison_byte = 0xCD };

typedef struct {
  const char *name;            /* "h200", "rtx5080" */
  const char *device_name;     /* as CUDA would report it */
  int32_t cc_major, cc_minor;
  int32_t sm_count;
  int32_t max_threads_per_sm;
  int32_t max_threads_per_block;
  int32_t max_blocks_per_sm;
  int32_t registers_per_sm;
  int32_t shared_reserved_per_block; /* the driver's reserve per resident block, bytes */
  int64_t shared_per_block;    /* opt-in maximum, bytes */
  int64_t shared_per_sm;
  double bandwidth_gbs;        /* peak DRAM bandwidth */
  double copy_gbs;             /* measured device-to-device copy bandwidth */
  int64_t l2_bytes;            /* L2 cache, bytes (the sim's model prices DRAM regardless) */
  int64_t bytes_in_flight_per_sm; /* needed to saturate DRAM (Little's law) */
  double dram_latency_ns;      /* one dependent DRAM round trip, lightly loaded */
  double l2_atomic_ns;         /* L2's time per atomic on one address: the next waits for it */
  double launch_us;            /* fixed cost of a launch */
  double pdl_overlap_us;       /* of it, what a programmatic dependent launch hides */
  double clock_ghz;
} akx__device_profile;

/* By name; NULL if unknown. */
const akx__device_profile *akx__profile_by_name(const char *name);
/* The default sim profile: AKX_SIM_DEVICE if set (NULL if it names no profile), else h200. */
const akx__device_profile *akx__profile_from_env(void);
/* The profile with this compute capability, else the closest older one, else h200. */
const akx__device_profile *akx__profile_by_cc(int major, int minor);

#ifdef __cplusplus
}
#endif
#endif
