/* The sim's model of GPU time per launch. A model: it knows the counters and the device
 * profile, nothing of caches, clocks under load, or instruction issue.
 *
 *   time = launch_us + max(dram_time, shared_time)
 *
 * dram_time = global bytes / effective bandwidth, where the effective bandwidth is the
 * profile's measured copy bandwidth derated by Little's law: a device keeps
 * bytes_in_flight_per_sm x SMs bytes of loads in flight to saturate DRAM, and a launch
 * that cannot have that many in flight gets the same fraction of the bandwidth:
 *
 *   in_flight = min(global bytes,
 *                   resident threads x mean bytes per lane access x loads in flight per thread)
 *   bandwidth = copy_gbs x min(1, in_flight / (bytes_in_flight_per_sm x SMs))
 *
 * resident threads = min(blocks, resident blocks per SM x SMs) x threads per block.
 * Loads in flight per thread = the mean number of global loads a thread issues between
 * two convergence points (nothing forces it to wait for them before the next barrier or
 * collective), capped at 16: a kernel unrolls a bounded batch of loads (the whole-array
 * reduction's items_per_thread is clamped to 4..16), not a whole loop.
 *
 * shared_time = shared wavefronts / (active SMs x 1 wavefront per cycle x clock): each SM's
 * shared pipe serves one wavefront per cycle; active SMs = min(SMs, blocks), since a block
 * runs on one SM.
 */
#include "sim/model.h"

enum { akx__model_max_loads_in_flight = 16 };

uint32_t akx__sim_resident_blocks_per_sm(const akx__device_profile *p,
                                         uint32_t threads_per_block,
                                         uint64_t shared_bytes_per_block,
                                         uint32_t registers_per_thread) {
  uint64_t blocks = (uint64_t)p->max_blocks_per_sm;
  if (threads_per_block) {
    uint64_t by_threads = (uint64_t)p->max_threads_per_sm / threads_per_block;
    if (by_threads < blocks) blocks = by_threads;
    /* Registers are allocated per warp in units of 256 (8 per thread, rounded up). */
    uint64_t regs = registers_per_thread ? registers_per_thread : 32;
    uint64_t per_warp = (regs * 32 + 255) / 256 * 256;
    uint64_t warps = (threads_per_block + 31) / 32;
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
  double resident_threads = resident_blocks * s->threads_per_block;

  double dram_us = 0.0;
  if (s->global_bytes > 0) {
    double bytes = (double)s->global_bytes;
    double bytes_per_access =
        s->global_lane_accesses ? bytes / (double)s->global_lane_accesses : bytes;
    double loads = s->loads_per_window < 1.0 ? 1.0 : s->loads_per_window;
    loads = akx__min(loads, akx__model_max_loads_in_flight);
    double in_flight = akx__min(bytes, resident_threads * bytes_per_access * loads);
    double needed = (double)p->bytes_in_flight_per_sm * sms;
    double gbs = p->copy_gbs * akx__min(1.0, in_flight / needed);
    dram_us = bytes / (gbs * 1e3); /* GB/s = 1e3 bytes per microsecond */
  }

  double shared_us = 0.0;
  if (s->shared_wavefronts > 0) {
    double active_sms = akx__min(sms, (double)s->blocks);
    shared_us = (double)s->shared_wavefronts / (active_sms * p->clock_ghz * 1e3);
  }
  return p->launch_us + (dram_us > shared_us ? dram_us : shared_us);
}
