/* The device profiles: what shape selection, tuning and the sim's model know of a device.
 *
 * Where the numbers come from:
 *  - cc, SMs, threads per SM and per block, blocks and registers per SM, shared memory per
 *    block (opt-in maximum), per SM and the 1 KiB the driver reserves per resident block: the CUDA programming guide's table of compute capabilities and the vendors'
 *    spec sheets (H200 SXM: 132 SMs; RTX 5080: 84 SMs);
 *  - bandwidth_gbs: spec sheet peak (H200: 4.8 TB/s HBM3e; RTX 5080: 30 Gbps GDDR7 on a
 *    256-bit bus = 960 GB/s);
 *  - copy_gbs: device-to-device copy bandwidth. H200: 3.98 TB/s, the best published
 *    copy-class figure the project holds (docs/sim.md, "Calibration"; tests/
 *    test_sim_calibration.cpp holds the model to it). It was 4.3 TB/s, close to CUB's
 *    DeviceReduce::Sum on an H200 (4.31 TB/s at 2^28 int32, NVIDIA/cccl pull request 9722):
 *    a read-only stream, which a copy (reads and writes sharing the bus) does not reach; the
 *    model then priced a 2^24 float32 copy at 4.04 TB/s. RTX 5080: 916.3 GB/s, from the one
 *    row a seed measured with nothing in L2 (reduce-dims-shapes: AK's sum(x; dims=2) of an
 *    8192x8192 float32 matrix, 268,468,224 bytes read and written once, four times the L2, in
 *    295 us of GPU time): those bytes in 295 us less the model's launch_us, so that the model's
 *    copy of the row is no slower than AK's kernel (tests/test_sim_calibration.cpp); 95% of
 *    the 960 GB/s peak, a read-mostly stream's. It was 850 GB/s, an estimate, which made the
 *    model's copy (317.8 us) slower than the kernel measured. Neither profile's figure was
 *    measured with this library;
 *  - bytes_in_flight_per_sm: bytes of loads a SM must have in flight to saturate DRAM
 *    (Little's law). H200: 48 KiB, CUB's sm_90 tuning; RTX 5080: 32 KiB, an
 *    estimate for a GDDR7 part with fewer SMs;
 *  - l2_bytes: H200 50 MiB: NVIDIA's "NVIDIA Hopper Architecture In-Depth" (developer
 *    blog, 2022) and the H100 Tensor Core GPU Architecture whitepaper give H100 SXM5 a
 *    50 MB L2 (the full GH100 die has 60 MB); H200 is the same GH100 with HBM3e, its L2
 *    unchanged. RTX 5080: 64 MiB, the full GB203 (NVIDIA RTX Blackwell GPU Architecture
 *    whitepaper; TechPowerUp's RTX 5080 Founders Edition review: "64 MB", as the RTX 4080).
 *    Not yet compared with a device's cudaDeviceProp::l2CacheSize. The sim's model reports
 *    whether a launch's footprint fits L2 but still prices DRAM;
 *  - dram_latency_ns, launch_us: typical values (estimates), used only by the sim's model
 *    (dram_latency_ns: the cost of each dependent release->acquire step between blocks;
 *    launch_us: a launch's fixed cost when the kernel before it in the stream has ended);
 *  - pdl_overlap_us: the part of launch_us that a programmatic dependent launch hides behind
 *    the kernel before it (the dependent grid is launched and its blocks scheduled while that
 *    kernel's last blocks run; kernels/akx/device.cuh): an estimate, half the launch. Neither
 *    launch figure was measured with this library (no GPU lent yet); bench/gpu_check.sh's
 *    akx-versus-CUB rows at 2^16 are where a GPU shows them;
 *  - l2_atomic_ns: the time L2 takes for one atomic on an address before it can take the next
 *    on the same address (different addresses proceed in parallel). NVIDIA's Kepler GK110
 *    whitepaper (2012) states one atomic per clock to a common global address, and the
 *    later parts have kept same-address atomics at L2; no per-clock figure for Hopper or
 *    Blackwell is published. 1 ns (about two clocks at either profile's boost clock) is an
 *    estimate that errs slow; it is not one L2 round trip (about 280 cycles, ~140 ns):
 *    same-address atomics from different SMs are pipelined at L2, their round trips overlap.
 *    Used only by the sim's model (src/sim/model.c); not measured with this library;
 *  - clock_ghz: spec sheet boost clock (H200 1.98 GHz; RTX 5080 2.62 GHz, rounded to 2.6).
 */
#include "device_profile.h"

#include <stddef.h>
#include <stdlib.h>

/* Sorted by compute capability: akx__profile_by_cc relies on it. */
static const akx__device_profile akx__profiles[] = {
    {
        .name = "h200",
        .device_name = "NVIDIA H200",
        .cc_major = 9,
        .cc_minor = 0,
        .sm_count = 132,
        .max_threads_per_sm = 2048,
        .max_threads_per_block = 1024,
        .max_blocks_per_sm = 32,
        .registers_per_sm = 65536,
        .shared_reserved_per_block = 1024,
        .shared_per_block = 232448, /* 227 KiB */
        .shared_per_sm = 233472,    /* 228 KiB */
        .bandwidth_gbs = 4800.0,
        .copy_gbs = 3980.0,
        .l2_bytes = 52428800, /* 50 MiB */
        .bytes_in_flight_per_sm = 49152, /* 48 KiB */
        .dram_latency_ns = 600.0,
        .l2_atomic_ns = 1.0,
        .launch_us = 2.0,
        .pdl_overlap_us = 1.0,
        .clock_ghz = 1.98,
    },
    {
        .name = "rtx5080",
        .device_name = "NVIDIA GeForce RTX 5080",
        .cc_major = 12,
        .cc_minor = 0,
        .sm_count = 84,
        .max_threads_per_sm = 1536,
        .max_threads_per_block = 1024,
        .max_blocks_per_sm = 24,
        .registers_per_sm = 65536,
        .shared_reserved_per_block = 1024,
        .shared_per_block = 101376, /* 99 KiB */
        .shared_per_sm = 102400,    /* 100 KiB */
        .bandwidth_gbs = 960.0,
        .copy_gbs = 916.3,
        .l2_bytes = 67108864, /* 64 MiB */
        .bytes_in_flight_per_sm = 32768, /* 32 KiB */
        .dram_latency_ns = 500.0,
        .l2_atomic_ns = 1.0,
        .launch_us = 2.0,
        .pdl_overlap_us = 1.0,
        .clock_ghz = 2.6,
    },
};
enum { akx__profile_count = sizeof akx__profiles / sizeof akx__profiles[0] };

/* ASCII case-insensitive equality: "H200" names the same profile as "h200". */
static int akx__same_name(const char *a, const char *b) {
  for (; *a && *b; ++a, ++b) {
    char x = (*a >= 'A' && *a <= 'Z') ? (char)(*a - 'A' + 'a') : *a;
    char y = (*b >= 'A' && *b <= 'Z') ? (char)(*b - 'A' + 'a') : *b;
    if (x != y) return 0;
  }
  return *a == *b;
}

const akx__device_profile *akx__profile_by_name(const char *name) {
  if (name == NULL) return NULL;
  for (int i = 0; i < akx__profile_count; ++i)
    if (akx__same_name(akx__profiles[i].name, name)) return &akx__profiles[i];
  return NULL;
}

const akx__device_profile *akx__profile_from_env(void) {
  const char *name = getenv("AKX_SIM_DEVICE");
  if (name == NULL || name[0] == '\0') return &akx__profiles[0];
  return akx__profile_by_name(name);
}

const akx__device_profile *akx__profile_by_cc(int major, int minor) {
  const akx__device_profile *best = NULL;
  for (int i = 0; i < akx__profile_count; ++i) {
    const akx__device_profile *p = &akx__profiles[i];
    if (p->cc_major < major || (p->cc_major == major && p->cc_minor <= minor)) best = p;
  }
  return best != NULL ? best : &akx__profiles[0];
}
