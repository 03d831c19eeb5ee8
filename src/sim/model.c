/* The sim's model of GPU time per launch. A model: it knows the counters, the kernel's
 * declaration (kernel_info) and the device profile; nothing of caches (L2 included: it
 * prices every sector from DRAM, see below), clocks under load, or instruction issue.
 *
 *   time = launch + dependent_steps x dram_latency + max(dram_time, shared_time, atomic_time)
 *
 * launch = launch_us, or launch_us - pdl_overlap_us for a programmatic dependent launch
 * (akx_sim_kernel_counters.pdl_launches: the backends launch so on sm_90+ unless AKX_PDL=0):
 * its launch overlaps the tail of the kernel before it in the stream, which the model assumes
 * is always long enough to hide that much (the caller's previous kernel, or the call's own).
 *
 * dram_time = max(load time, all bytes at the copy bandwidth), where
 *
 *   DRAM bytes = global sectors x 32 B: the 32-byte sectors the warp requests of global
 *                loads and stores touched (akx_sim_traffic.units of global sites), not the
 *                bytes the lanes asked for. A stride-8 float32 load moves 32 sectors per
 *                request (1024 B) for 128 B used, and is priced so.
 *   all bytes  = max(DRAM bytes, needed) / copy_gbs, needed = bytes_in_flight_per_sm x SMs:
 *                DRAM cannot move the launch's bytes faster than a copy does, and no launch
 *                takes less than one loaded round trip (below).
 *   load time  = load bytes (load sectors x 32 B) / the loads' effective bandwidth: the
 *                profile's copy bandwidth derated by Little's law. A device keeps `needed`
 *                bytes of loads in flight to saturate DRAM, and a launch that cannot have that
 *                many in flight gets the same fraction of it:
 *
 *   bytes per request = load sectors x 32 B / load requests (what one warp load request moves)
 *   resident warps    = min(blocks, resident blocks per SM x SMs) x ceil(threads / 32)
 *   in flight         = min(load bytes,
 *                           resident warps x loads_in_flight x bytes per request)
 *   bandwidth         = copy_gbs x min(1, in flight / needed)
 *
 * Only loads are bound by what is in flight: a warp waits for its loads, but a store is posted
 * (the warp issues it and goes on; L2 takes it and drains it to DRAM with no warp waiting), so
 * the stores of a launch move at the rate DRAM takes them, beside its loads, not at the rate of
 * the loads in flight. (The model priced every byte at the loads' rate until issue 34: a
 * findall of a bool array half set, 1 byte read and 4 written an element, was charged its 5
 * bytes at the rate of its 1 in flight, while the copy it is compared with had half its bytes
 * in flight; bench/RESULTS.md has the figures under both.)
 *
 * loads_in_flight is the kernel's declaration (kernel_info.loads_in_flight: independent
 * loads a thread issues before it uses the first), not guessed from the code's shape.
 * Resident blocks per SM (akx__sim_resident_blocks_per_sm): the least of the SM's block
 * limit, its threads, its registers (the kernel's declared registers per thread, allocated
 * per warp in units of 256) and its shared memory (the block's static + dynamic shared
 * memory plus the driver's 1 KiB reserve per block).
 *
 * A launch whose bytes all fit in flight at once (its loads in flight, its stores posted)
 * costs needed / copy_gbs (1.63 us on the H200 profile, 3.00 us on the RTX 5080's) of DRAM
 * time whatever its size: the loaded latency those two profile figures imply. It is larger than
 * dram_latency_ns (the lightly loaded round trip), so a tiny launch is priced high.
 *
 * L2: a launch's footprint (its DRAM bytes, an upper bound of the distinct bytes it
 * touched) is reported beside the profile's L2 size (akx_sim_kernel_counters.footprint_bytes,
 * l2_bytes, fits_l2). A GPU that runs the same call again may find such an input in L2
 * and beat the model; the model still prices DRAM, as for a cold first call.
 *
 * dependent_steps: the longest release->acquire chain between blocks of the launch (the
 * sim's global-memory ordering records it: a block that acquires a flag another block
 * released is one step after it). Each step is one round trip a block waits for before it
 * can go on, priced as dram_latency_ns and added, not overlapped: a chain serializes.
 *
 * atomic_time = atomic_chain x l2_atomic_ns: atomic_chain is the most global atomics the
 * launch made on one address (akx_sim_kernel_counters.atomic_chain, one per lane, a failed CAS
 * included). L2 performs the atomics on one address one after another, each waiting for the
 * one before; atomics on different addresses proceed in parallel, and beside the launch's
 * DRAM traffic, so the longest chain is a floor of the launch's busy time, not added to it.
 * A ticket per block (a few hundred on one address) is hidden under DRAM; every thread adding
 * to one word (2^24 of them: 16.8 ms) is not. A CAS loop's retries are atomics and priced so;
 * the round trip a loser waits before retrying is not (see docs/sim.md).
 *
 * shared_time = shared wavefronts / (active SMs x 1 wavefront per cycle x clock): each SM's
 * shared pipe serves one wavefront per cycle; active SMs = min(SMs, blocks), since a block
 * runs on one SM.
 *
 * Parameters: every number the model uses. Profile fields are per device (values and their
 * sources in src/core/device_profile.c); the others are the model's own, in akx__model below.
 *
 *   parameter                   H200        RTX 5080    source
 *   launch_us                   2.0 us      2.0 us      profile: typical launch cost (an estimate)
 *   pdl_overlap_us              1.0 us      1.0 us      profile: half the launch (an estimate)
 *   copy_gbs                    3980 GB/s   916.3 GB/s  profile: the best published H200
 *                                                       copy-class figure / the seed's
 *                                                       8192x8192 dims row on an RTX 5080;
 *                                                       neither measured here
 *   bytes_in_flight_per_sm      48 KiB      32 KiB      profile: CUB's sm_90 tuning / an
 *                                                       estimate for a GDDR7 part
 *   dram_latency_ns             600 ns      500 ns      profile: typical (an estimate)
 *   l2_atomic_ns                1 ns        1 ns        profile: GK110 whitepaper's one
 *                                                       same-address atomic per clock,
 *                                                       rounded up (an estimate)
 *   sm_count                    132         84          profile: spec sheets
 *   clock_ghz                   1.98        2.6         profile: spec sheet boost clock
 *   max_threads_per_sm          2048        1536        profile: CUDA programming guide,
 *   max_blocks_per_sm           32          24            table of compute capabilities
 *   registers_per_sm            65536       65536         (idem)
 *   shared_per_sm               228 KiB     100 KiB       (idem)
 *   shared_reserved_per_block   1 KiB       1 KiB         (idem: the driver's reserve)
 *   l2_bytes                    50 MiB      64 MiB      profile: NVIDIA's Hopper in-depth
 *                                                       blog / RTX Blackwell whitepaper;
 *                                                       reported only, never priced
 *   sector_bytes                32 B                    CUDA C++ Best Practices Guide,
 *                                                       "Coalesced Access to Global Memory"
 *   warp_threads                32                      CUDA programming guide
 *   register_unit               256 per warp            CUDA Occupancy Calculator (register
 *                                                       allocation unit size 256, per warp,
 *                                                       cc 5.0 to 12.x)
 *   default_registers           32                      kernel_info_of(name)'s default
 *                                                       (kernels/akx/device.cuh)
 *   shared_wavefronts_per_cycle 1 per SM                CUDA programming guide, shared
 *                                                       memory: 32 banks of 32 bits per clock
 *   loads_in_flight             per kernel              kernel_info.loads_in_flight (declared
 *                                                       beside the kernel)
 *   registers per thread        per kernel              kernel_info.registers (ptxas's figure
 *                                                       or an estimate, declared beside it)
 */
#include "sim/model.h"
#include <math.h>

static const struct {
  double sector_bytes;
  uint64_t warp_threads;
  uint64_t register_unit;              /* registers, allocated per warp */
  uint64_t default_registers;          /* per thread, when a launch declares 0 */
  double shared_wavefronts_per_cycle;  /* per SM */
} akx__model = {
    .sector_bytes = akx__sim_sector_bytes,
    .warp_threads = 32,
    .register_unit = 256,
    .default_registers = 32,
    .shared_wavefronts_per_cycle = 1.0,
};

uint32_t akx__sim_resident_blocks_per_sm(const akx__device_profile *p,
                                         uint32_t threads_per_block,
                                         uint64_t shared_bytes_per_block,
                                         uint32_t registers_per_thread) {
  uint64_t blocks = (uint64_t)p->max_blocks_per_sm;
  if (threads_per_block) {
    uint64_t by_threads = (uint64_t)p->max_threads_per_sm / threads_per_block;
    if (by_threads < blocks) blocks = by_threads;
    /* Registers are allocated per warp in units of 256 (8 per thread, rounded up). */
    const uint64_t unit = akx__model.register_unit, w = akx__model.warp_threads;
    uint64_t regs = registers_per_thread ? registers_per_thread : akx__model.default_registers;
    uint64_t per_warp = (regs * w + unit - 1) / unit * unit;
    uint64_t warps = (threads_per_block + w - 1) / w;
    uint64_t by_regs = (uint64_t)p->registers_per_sm / (per_warp * warps);
    if (by_regs < blocks) blocks = by_regs;
  }
  if (shared_bytes_per_block) {
    uint64_t per_block = shared_bytes_per_block + (uint64_t)p->shared_reserved_per_block;
    uint64_t by_shared = (uint64_t)p->shared_per_sm / per_block;
    if (by_shared < blocks) blocks = by_shared;
  }
  return blocks > 0 ? (uint32_t)blocks : 1;
}

static double akx__min(double a, double b) { return a < b ? a : b; }

double akx__sim_model_us(const akx__device_profile *p, const akx__sim_launch_stats *s) {
  double sms = (double)p->sm_count;
  double resident_blocks =
      akx__min((double)s->blocks,
               (double)akx__sim_resident_blocks_per_sm(p, s->threads_per_block,
                                                       s->shared_bytes_per_block,
                                                       s->registers_per_thread) * sms);
  const uint64_t w = akx__model.warp_threads;
  double resident_warps = resident_blocks * (double)((s->threads_per_block + w - 1) / w);

  double dram_us = 0.0;
  if (s->global_sectors > 0) {
    const double needed = (double)p->bytes_in_flight_per_sm * sms;
    const double bytes = (double)s->global_sectors * akx__model.sector_bytes;
    dram_us = (bytes > needed ? bytes : needed) / (p->copy_gbs * 1e3); /* GB/s = 1e3 bytes per us */
    if (s->load_requests > 0) {
      const double load_bytes = (double)s->load_sectors * akx__model.sector_bytes;
      const double per_request = load_bytes / (double)s->load_requests;
      const double loads = s->loads_in_flight ? (double)s->loads_in_flight : 1.0;
      const double in_flight = akx__min(load_bytes, resident_warps * loads * per_request);
      const double gbs = p->copy_gbs * akx__min(1.0, in_flight / needed);
      const double load_us = load_bytes / (gbs * 1e3);
      if (load_us > dram_us) dram_us = load_us;
    }
  }

  double shared_us = 0.0;
  if (s->shared_wavefronts > 0) {
    double active_sms = akx__min(sms, (double)s->blocks);
    shared_us = (double)s->shared_wavefronts /
                (active_sms * akx__model.shared_wavefronts_per_cycle * p->clock_ghz * 1e3);
  }
  /* The longest same-address chain of atomics: L2 performs them one after another. */
  const double atomic_us = (double)s->atomic_chain * p->l2_atomic_ns * 1e-3;
  double busy_us = dram_us > shared_us ? dram_us : shared_us;
  if (atomic_us > busy_us) busy_us = atomic_us;
  double latency_us = (double)s->dependent_steps * p->dram_latency_ns * 1e-3;
  const double overlap = s->pdl ? akx__min(p->pdl_overlap_us, p->launch_us) : 0.0;
  return p->launch_us - overlap + latency_us + busy_us;
}

double akx__sim_model_copy_us(const akx__device_profile *p, double bytes) {
  if (!p || bytes <= 0) return NAN;
  const uint64_t sectors = (uint64_t)ceil(bytes / akx__sim_sector_bytes);
  const uint64_t requests = (sectors + 15) / 16;
  const uint64_t blocks = (uint64_t)ceil(bytes / 2 / (256.0 * 16 * 4));
  akx__sim_launch_stats s = {.blocks = blocks ? blocks : 1, .threads_per_block = 256, .registers_per_thread = 32,
                             .loads_in_flight = 4, .global_sectors = sectors, .global_requests = requests,
                             .load_sectors = (sectors + 1) / 2, .load_requests = (requests + 1) / 2};
  return akx__sim_model_us(p, &s);
}
