/* libakx sim backend: counters, as Nsight Compute would report them.
 *
 * The sim groups the accesses of a warp's lanes into requests: the k-th execution of one
 * access site (source location) by each active lane of a warp since the warp's last
 * convergence point (barrier, warp collective, kernel end) is one request.
 *  - Shared memory: 32 banks of 4 bytes. A request of w-byte lanes is served in phases:
 *    1 phase for w <= 4, 2 half-warp phases for w = 8, 4 quarter-warp phases for w = 16.
 *    A phase costs the largest number of distinct 4-byte words that fall in one bank (lanes
 *    on the same word are a broadcast). Wavefronts = sum over phases; ideal = number of
 *    phases with an active lane.
 *  - Global memory: sectors = distinct 32-byte sectors a request touches; ideal = the
 *    request's bytes / 32 rounded up per 128-byte line.
 *  - Global atomics: one per lane, also counted by address (akx_sim_kernel_counters.atomics,
 *    atomic_chain), so that a test can bound the atomics a kernel makes per block or per tile.
 * Counting is on by default; AKX_SIM_COUNTERS=0 turns it off (the checks stay on).
 * AKX_SIM_REPORT=1 prints a per-kernel table to stderr when the context is destroyed.
 * On other backends these functions return AKX_ERROR_UNSUPPORTED. */
#ifndef AKX_SIM_H
#define AKX_SIM_H
#include <stdint.h>
#include "akx.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  uint64_t requests;
  uint64_t units;       /* wavefronts (shared) or sectors (global) */
  uint64_t ideal;       /* the ideal number of units for the same requests */
  uint64_t bytes;       /* bytes moved by the lanes */
} akx_sim_traffic;

typedef struct {
  char kernel[128];            /* kernel name as given to the launch ("" for the totals) */
  uint64_t launches;
  uint64_t blocks;
  uint64_t threads;
  uint64_t barriers;           /* __syncthreads executed, counted once per block */
  uint64_t warps;              /* warps launched */
  double waves;                /* sum over launches of blocks / (blocks resident at once) */
  uint32_t last_grid, last_block;  /* grid.x and block.x of the last launch */
  uint64_t last_dyn_smem;          /* dynamic shared bytes of the last launch */
  akx_sim_traffic shared_load, shared_store;
  akx_sim_traffic global_load, global_store; /* atomics count as stores */
  double model_us;             /* the model's GPU time estimate (src/sim/model.c), summed */
  /* The footprint beside L2. footprint_bytes: bytes of the 32-byte global sectors (loads and
   * stores) the kernel's largest launch moved, a stand-in for the distinct bytes it touched
   * (larger when a launch moves a sector twice); in the totals, the sum over kernels.
   * l2_bytes: the profile's L2. fits_l2: 1 when 0 < footprint_bytes <= l2_bytes, where a GPU
   * repeating the call may serve it from L2; the model still prices every sector from DRAM. */
  uint64_t footprint_bytes;
  uint64_t l2_bytes;
  uint64_t dependent_steps;    /* longest release->acquire chain between blocks of a launch,
                                  summed over launches (the model's latency term) */
  int32_t fits_l2;
  /* Programmatic dependent launch (sm_90+ profiles unless AKX_PDL=0; kernels/akx/device.cuh):
   * launches made so (the model overlaps their launch with the kernel before), and blocks
   * whose thread 0 called grid_dependency_wait() / grid_dependents_launch(). */
  uint64_t pdl_launches;
  uint64_t dependency_waits;
  uint64_t dependents_launches;
  /* Global atomics: the read-modify-writes (atomicAdd, atomicCAS, atomicExch, ...; not acquire
   * loads or release stores), one per lane that executed one, a failed CAS included. They are
   * in global_store too. atomic_addresses: distinct addresses they hit, summed over launches.
   * atomic_chain: the most atomics on one address in one launch; per kernel the largest over
   * its launches, in the totals the largest over kernels. L2 performs the atomics on one
   * address one after another, so this chain is what the model prices (src/sim/model.c). */
  uint64_t atomics;
  uint64_t atomic_addresses;
  uint64_t atomic_chain;
  /* Static shared bytes (its AKX_SHARED arrays, laid out 16-byte aligned as nvcc does) of the
   * last launch: what a planner that sums a kernel's static part must match
   * (tests/test_segment_shared.c). */
  uint64_t last_static_smem;
} akx_sim_kernel_counters;

/* Zero every counter of the context. */
akx_status akx_sim_counters_reset(akx_context *ctx);
/* Totals over all kernels into *total (may be NULL); up to `capacity` per-kernel records,
 * sorted by name, into per_kernel (may be NULL when capacity is 0); the number of kernels
 * into *count (may be NULL). */
akx_status akx_sim_counters_get(const akx_context *ctx, akx_sim_kernel_counters *total,
                                akx_sim_kernel_counters *per_kernel, int32_t capacity,
                                int32_t *count);

typedef struct {
  char kernel[128];
  char file[128];              /* source file of the access site (basename) */
  int32_t line, column;
  int32_t shared;              /* 1 shared, 0 global */
  int32_t store;               /* 1 store (or atomic), 0 load */
  akx_sim_traffic traffic;
  int32_t atomic;              /* 1 a global atomic (then store is 1 too) */
  uint64_t atomics;            /* atomics the site's lanes executed, summed over launches */
  uint64_t atomic_chain;       /* the most of them on one address in one launch */
} akx_sim_site_counters;

/* Per access site counters, sorted by kernel, file, line; like akx_sim_counters_get. */
akx_status akx_sim_sites_get(const akx_context *ctx, akx_sim_site_counters *sites,
                             int32_t capacity, int32_t *count);

#ifdef __cplusplus
}
#endif
#endif
