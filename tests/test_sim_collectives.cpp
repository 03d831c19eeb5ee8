// The sim's warp collectives and barriers return what CUDA's do: shuffles (idx, up, down,
// xor, with width), votes, __syncthreads_count/and/or, __activemask, atomics; and a random
// schedule gives the same results.
#include <stdlib.h>

#include "sim_probe.hpp"

using akx::FULL_MASK;

// out[4 * tid + k]: what lane tid got from shuffle k of value (100 + lane).
AKX_GLOBAL void shuffle_probe(int *out, int width) {
  int lane = int(threadIdx.x % 32), v = 100 + lane;
  int *mine = out + 4 * threadIdx.x;
  akx::gst(mine + 0, __shfl_down_sync(FULL_MASK, v, 3, width));
  akx::gst(mine + 1, __shfl_up_sync(FULL_MASK, v, 3, width));
  akx::gst(mine + 2, __shfl_xor_sync(FULL_MASK, v, 5, width));
  akx::gst(mine + 3, __shfl_sync(FULL_MASK, v, 31 - lane, width));
}

static void check_shuffles(int width) {
  sim_context sim;
  int *out = sim.alloc<int>(4 * 64);
  expect_success(AKX_LAUNCH("shuffle_probe", shuffle_probe, 1, 64, 0, NULL, out, width));
  for (int tid = 0; tid < 64; ++tid) {
    int lane = tid % 32, seg = lane & ~(width - 1), last = seg + width - 1;
    int down = lane + 3 <= last ? lane + 3 : lane;
    int up = lane - 3 >= seg ? lane - 3 : lane;
    int x = (lane ^ 5) <= last ? lane ^ 5 : lane;
    int idx = seg + ((31 - lane) & (width - 1));
    cr_expect_eq(out[4 * tid + 0], 100 + down, "down, width %d, lane %d", width, lane);
    cr_expect_eq(out[4 * tid + 1], 100 + up, "up, width %d, lane %d", width, lane);
    cr_expect_eq(out[4 * tid + 2], 100 + x, "xor, width %d, lane %d", width, lane);
    cr_expect_eq(out[4 * tid + 3], 100 + idx, "idx, width %d, lane %d", width, lane);
  }
}

Test(sim_collectives, shuffles_full_width) { check_shuffles(32); }
Test(sim_collectives, shuffles_width_16) { check_shuffles(16); }
Test(sim_collectives, shuffles_width_4) { check_shuffles(4); }

// Wider values: 8-byte scalars, and 16-byte structs word by word (akx::shfl_*).
struct complex128 {
  double re, im;
};
AKX_GLOBAL void wide_shuffle_probe(double *d, complex128 *c) {
  int lane = int(threadIdx.x);
  akx::gst(d + lane, __shfl_xor_sync(FULL_MASK, 0.5 + lane, 1));
  complex128 v{double(lane), -double(lane)};
  akx::gst(c + lane, akx::shfl_down(FULL_MASK, v, 1));
}

Test(sim_collectives, wide_values) {
  sim_context sim;
  double *d = sim.alloc<double>(32);
  complex128 *c = sim.alloc<complex128>(32);
  expect_success(AKX_LAUNCH("wide_shuffle_probe", wide_shuffle_probe, 1, 32, 0, NULL, d, c));
  for (int lane = 0; lane < 32; ++lane) {
    int down = lane < 31 ? lane + 1 : lane;
    cr_expect_eq(d[lane], 0.5 + (lane ^ 1));
    cr_expect(c[lane].re == down && c[lane].im == -down, "lane %d: (%g, %g)", lane, c[lane].re,
              c[lane].im);
  }
}

// A shuffle among the lanes of a partial mask. A source beyond the segment (`width` lanes)
// gives the caller's own value, as CUDA defines it; a source inside the segment but outside
// the mask is undefined on a GPU, up and down included, and fails.
AKX_GLOBAL void partial_mask_probe(int *out, unsigned mask, int width, int up) {
  int lane = int(threadIdx.x);
  if (!(mask >> lane & 1)) return;
  akx::gst(out + lane, up ? __shfl_up_sync(mask, lane, 4, width)
                          : __shfl_down_sync(mask, lane, 4, width));
}

Test(sim_collectives, partial_mask_down_keeps_own_value) {
  sim_context sim;
  int *out = sim.alloc<int>(32);
  // Lanes 0..15 in segments of 16: lanes 12..15 read beyond the segment.
  expect_success(AKX_LAUNCH("partial_mask_probe", partial_mask_probe, 1, 32, 0, NULL, out,
                            0xffffu, 16, 0));
  for (int lane = 0; lane < 16; ++lane) cr_expect_eq(out[lane], lane + 4 < 16 ? lane + 4 : lane);
  // Lanes 0..19 of a 32-lane segment: lane 16 reads lane 20, in the segment, not in the mask.
  expect_sim_check(AKX_LAUNCH("partial_mask_probe", partial_mask_probe, 1, 32, 0, NULL, out,
                              0xfffffu, 32, 0),
                   "warp collective mask", "thread (16,0,0)", "__shfl_down_sync",
                   "lane 16 reads lane 20", "not in the mask");
  // Lanes 4..7, up by 4 in a 32-lane segment: lane 4 reads lane 0.
  expect_sim_check(AKX_LAUNCH("partial_mask_probe", partial_mask_probe, 1, 32, 0, NULL, out,
                              0xf0u, 32, 1),
                   "warp collective mask", "thread (4,0,0)", "__shfl_up_sync",
                   "lane 4 reads lane 0");
  // The same lanes up by 4 in segments of 4: every source is beyond the segment.
  expect_success(AKX_LAUNCH("partial_mask_probe", partial_mask_probe, 1, 32, 0, NULL, out,
                            0xf0u, 4, 1));
  for (int lane = 4; lane < 8; ++lane) cr_expect_eq(out[lane], lane);
}

// The same collective (kind, op, mask) reached from two source lines is one rendezvous, as
// on sm_70+ (a __syncwarp or a shuffle in both branches of an if).
AKX_GLOBAL void two_sites_probe(int *out) {
  int lane = int(threadIdx.x), v = 100 + lane;
  if (lane % 2) {
    __syncwarp();
    v = __shfl_xor_sync(FULL_MASK, v, 1);
  } else {
    __syncwarp();
    v = __shfl_xor_sync(FULL_MASK, v, 1);
  }
  akx::gst(out + lane, v);
}

// Two sides of a branch that meet different collectives: another mask, another kind (the
// sentence names whichever lane arrives second, which depends on the schedule).
AKX_GLOBAL void two_sites_mismatch_probe(int kind) {
  unsigned lane = threadIdx.x;
  if (lane < 16)
    __syncwarp();
  else if (kind == 0)
    __syncwarp(0xffff0000u | 0xffu);
  else
    (void)__ballot_sync(FULL_MASK, 1);
}

Test(sim_collectives, same_collective_from_two_source_lines) {
  sim_context sim;
  int *out = sim.alloc<int>(32);
  expect_success(AKX_LAUNCH("two_sites_probe", two_sites_probe, 1, 32, 0, NULL, out));
  for (int lane = 0; lane < 32; ++lane) cr_expect_eq(out[lane], 100 + (lane ^ 1));
  expect_sim_check(AKX_LAUNCH("two_sites_mismatch_probe", two_sites_mismatch_probe, 1, 32, 0,
                              NULL, 0),
                   "divergent warp collective", "mask 0xffff00ff", "mask 0xffffffff");
  expect_sim_check(AKX_LAUNCH("two_sites_mismatch_probe", two_sites_mismatch_probe, 1, 32, 0,
                              NULL, 1),
                   "divergent warp collective", "__ballot_sync", "__syncwarp");
}

AKX_GLOBAL void vote_probe(unsigned *out) {
  unsigned lane = threadIdx.x % 32;
  unsigned *mine = out + 4 * threadIdx.x;
  akx::gst(mine + 0, __ballot_sync(FULL_MASK, lane % 3 == 0));
  akx::gst(mine + 1, unsigned(__any_sync(FULL_MASK, lane == 7)));
  akx::gst(mine + 2, unsigned(__all_sync(FULL_MASK, lane < 32)));
  akx::gst(mine + 3, unsigned(__all_sync(FULL_MASK, lane < 31)));
}

Test(sim_collectives, votes) {
  sim_context sim;
  unsigned *out = sim.alloc<unsigned>(4 * 64);
  expect_success(AKX_LAUNCH("vote_probe", vote_probe, 1, 64, 0, NULL, out));
  unsigned ballot = 0;
  for (int lane = 0; lane < 32; lane += 3) ballot |= 1u << lane;
  for (int tid = 0; tid < 64; ++tid) {
    cr_expect_eq(out[4 * tid + 0], ballot);
    cr_expect_eq(out[4 * tid + 1], 1u);
    cr_expect_eq(out[4 * tid + 2], 1u);
    cr_expect_eq(out[4 * tid + 3], 0u);
  }
}

// __syncthreads_count/and/or over a block of 100 threads (a partial last warp).
AKX_GLOBAL void barrier_value_probe(int *out) {
  int t = int(threadIdx.x);
  int *mine = out + 5 * t;
  akx::gst(mine + 0, __syncthreads_count(t % 3 == 0));
  akx::gst(mine + 1, __syncthreads_and(t < 100));
  akx::gst(mine + 2, __syncthreads_and(t < 50));
  akx::gst(mine + 3, __syncthreads_or(t == 99));
  akx::gst(mine + 4, __syncthreads_or(0));
}

Test(sim_collectives, barrier_values) {
  sim_context sim;
  int *out = sim.alloc<int>(5 * 100);
  expect_success(AKX_LAUNCH("barrier_value_probe", barrier_value_probe, 1, 100, 0, NULL, out));
  for (int t = 0; t < 100; ++t) {
    cr_expect_eq(out[5 * t + 0], 34, "thread %d", t);
    cr_expect(out[5 * t + 1] != 0, "thread %d", t);
    cr_expect_eq(out[5 * t + 2], 0, "thread %d", t);
    cr_expect(out[5 * t + 3] != 0, "thread %d", t);
    cr_expect_eq(out[5 * t + 4], 0, "thread %d", t);
  }
}

// Threads that returned count as arrived at later barriers (sm_70+), and leave __activemask
// (here no thread can return between the barrier and the __activemask).
AKX_GLOBAL void early_return_probe(int *out, unsigned *active) {
  int t = int(threadIdx.x);
  if (t >= 40) return;
  __syncthreads();
  if (t == 32) akx::gst(active, __activemask());
  akx::gst(out + t, __syncthreads_count(1));
}

Test(sim_collectives, returned_threads_count_as_arrived) {
  unsetenv("AKX_SIM_SCHEDULE");  // a random schedule makes __activemask a random subset
  sim_context sim;
  int *out = sim.alloc<int>(64);
  unsigned *active = sim.alloc<unsigned>(1);
  expect_success(AKX_LAUNCH("early_return_probe", early_return_probe, 1, 64, 0, NULL, out, active));
  for (int t = 0; t < 40; ++t) cr_expect_eq(out[t], 40);
  cr_expect_eq(*active, 0xffu, "activemask 0x%x", *active);
}

// Under a random schedule __activemask is a random converged subset of the warp that holds
// the caller (a GPU promises no more: which lanes happen to run together is up to it). The
// lanes meet before and after it, so that in order every lane sees the whole warp.
AKX_GLOBAL void activemask_probe(unsigned *out) {
  __syncwarp();
  unsigned active = __activemask();
  __syncwarp();
  akx::gst(out + threadIdx.x, active);
}

Test(sim_collectives, activemask_under_a_random_schedule) {
  unsetenv("AKX_SIM_SCHEDULE");
  {
    sim_context sim;
    unsigned *out = sim.alloc<unsigned>(32);
    expect_success(AKX_LAUNCH("activemask_probe", activemask_probe, 1, 32, 0, NULL, out));
    for (int lane = 0; lane < 32; ++lane) cr_expect_eq(out[lane], FULL_MASK, "in order");
  }
  bool strict = false, seeds_differ = false;
  unsigned first[32];
  for (int seed = 1; seed <= 8; ++seed) {
    char schedule[32];
    snprintf(schedule, sizeof schedule, "random:%d", seed);
    setenv("AKX_SIM_SCHEDULE", schedule, 1);
    sim_context sim;
    unsigned *out = sim.alloc<unsigned>(32);
    expect_success(AKX_LAUNCH("activemask_probe", activemask_probe, 1, 32, 0, NULL, out));
    for (int lane = 0; lane < 32; ++lane) {
      cr_expect(out[lane] >> lane & 1, "%s: lane %d got 0x%08x, without itself", schedule, lane,
                out[lane]);
      strict = strict || out[lane] != FULL_MASK;
    }
    if (seed == 1) memcpy(first, out, sizeof first);
    else seeds_differ = seeds_differ || memcmp(first, out, sizeof first) != 0;
  }
  unsetenv("AKX_SIM_SCHEDULE");
  cr_expect(strict, "no seed gave a strict subset of the warp");
  cr_expect(seeds_differ, "every seed gave the same masks");
}

AKX_GLOBAL void atomic_probe(float *fsum, unsigned long long *isum, int *imax) {
  atomicAdd(fsum, 1.0f);
  atomicAdd(isum, 2ull);
  atomicMax(imax, int(blockIdx.x * blockDim.x + threadIdx.x));
}

Test(sim_collectives, atomics) {
  sim_context sim;
  float *fsum = sim.alloc<float>(1);
  unsigned long long *isum = sim.alloc<unsigned long long>(1);
  int *imax = sim.alloc<int>(1);
  expect_success(AKX_LAUNCH("atomic_probe", atomic_probe, 4, 96, 0, NULL, fsum, isum, imax));
  cr_expect_eq(*fsum, 384.0f);
  cr_expect_eq(*isum, 768ull);
  cr_expect_eq(*imax, 383);
}

// A block reduction in the style of the library's kernels: strided loads, warp shuffles,
// one shared word per warp, a barrier, a last warp.
AKX_GLOBAL void block_sum(const float *x, float *partials, int n) {
  AKX_SHARED(float, warp_sums, 32);
  float acc = 0.0f;
  for (int i = int(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += int(gridDim.x * blockDim.x))
    acc += akx::gld(x + i);
  for (int d = 16; d > 0; d /= 2) acc += akx::shfl_down(FULL_MASK, acc, d);
  if (threadIdx.x % 32 == 0) warp_sums.st(threadIdx.x / 32, acc);
  __syncthreads();
  if (threadIdx.x < 32) {
    float v = threadIdx.x < blockDim.x / 32 ? warp_sums.ld(threadIdx.x) : 0.0f;
    for (int d = 16; d > 0; d /= 2) v += akx::shfl_down(FULL_MASK, v, d);
    if (threadIdx.x == 0) akx::gst(partials + blockIdx.x, v);
  }
}

static void run_block_sum(float *partials_out) {
  sim_context sim;
  const int n = 100000, blocks = 24;
  float *x = sim.alloc<float>(n);
  float *partials = sim.alloc<float>(blocks);
  for (int i = 0; i < n; ++i) x[i] = float(i % 17);
  expect_success(AKX_LAUNCH("block_sum", block_sum, blocks, 256, 0, NULL, (const float *)x,
                            partials, n));
  memcpy(partials_out, partials, blocks * sizeof(float));
}

Test(sim_collectives, random_schedule_gives_the_same_results) {
  float in_order[24], shuffled[24];
  run_block_sum(in_order);
  double total = 0;
  for (float p : in_order) total += p;
  double expected = 0;
  for (int i = 0; i < 100000; ++i) expected += i % 17;
  cr_expect_eq(total, expected);
  for (const char *seed : {"random:1", "random:12345", "random"}) {
    setenv("AKX_SIM_SCHEDULE", seed, 1);
    run_block_sum(shuffled);
    for (int b = 0; b < 24; ++b)
      cr_expect_eq(shuffled[b], in_order[b], "%s, block %d", seed, b);
  }
}
