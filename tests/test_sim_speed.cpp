// The sim's speed on the kind of kernel the library runs: block reductions over 2^20
// floats, with counting on and off (AKX_SIM_COUNTERS=0). Asserts the results; the wall
// times go to the log (run with --verbose to see them): they are measurements of this
// machine, not a test.
#include <stdlib.h>
#include <time.h>

#include "sim_probe.hpp"

using akx::FULL_MASK;

// One element per thread, a shared-memory tree: 9 barriers per 256-thread block.
AKX_GLOBAL void tree_sum(const float *x, float *partials) {
  AKX_SHARED(float, tree, 256);
  unsigned t = threadIdx.x;
  tree.st(t, akx::gld(x + blockIdx.x * 256 + t));
  __syncthreads();
  for (unsigned s = 128; s > 0; s /= 2) {
    if (t < s) tree.st(t, tree.ld(t) + tree.ld(t + s));
    __syncthreads();
  }
  if (t == 0) akx::gst(partials + blockIdx.x, tree.ld(0));
}

// 256 blocks striding over 16-byte vector loads, warp shuffles, one barrier.
AKX_GLOBAL void strided_sum(const float *x, float *partials, int n) {
  AKX_SHARED(float, warp_sums, 8);
  float acc = 0.0f;
  for (int i = 4 * int(blockIdx.x * blockDim.x + threadIdx.x); i < n;
       i += 4 * int(gridDim.x * blockDim.x)) {
    akx::vec<float, 4> v = akx::gld_vec<float, 4>(x + i);
    acc += (v.v[0] + v.v[1]) + (v.v[2] + v.v[3]);
  }
  for (int d = 16; d > 0; d /= 2) acc += __shfl_down_sync(FULL_MASK, acc, d);
  if (threadIdx.x % 32 == 0) warp_sums.st(threadIdx.x / 32, acc);
  __syncthreads();
  if (threadIdx.x < 32) {
    float v = threadIdx.x < 8 ? warp_sums.ld(threadIdx.x) : 0.0f;
    for (int d = 4; d > 0; d /= 2) v += __shfl_down_sync(FULL_MASK, v, d);
    if (threadIdx.x == 0) akx::gst(partials + blockIdx.x, v);
  }
}

static double seconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

// Wall seconds of one launch of `kernel` over 2^20 ones, counting on or off.
static double time_reduction(bool counting, bool tree) {
  setenv("AKX_SIM_COUNTERS", counting ? "1" : "0", 1);
  sim_context sim;
  const int n = 1 << 20, blocks = tree ? n / 256 : 256;
  float *x = sim.alloc<float>(n);
  float *partials = sim.alloc<float>(blocks);
  for (int i = 0; i < n; ++i) x[i] = 1.0f;
  double start = seconds();
  if (tree)
    expect_success(AKX_LAUNCH("tree_sum", tree_sum, blocks, 256, 0, NULL, (const float *)x, partials));
  else
    expect_success(AKX_LAUNCH("strided_sum", strided_sum, blocks, 256, 0, NULL, (const float *)x,
                              partials, n));
  double elapsed = seconds() - start;
  double total = 0;
  for (int b = 0; b < blocks; ++b) total += partials[b];
  cr_expect_eq(total, double(n));
  if (counting) {
    akx_sim_kernel_counters k = sim.kernel(tree ? "tree_sum" : "strided_sum");
    cr_expect_eq(k.global_load.bytes, uint64_t(n) * 4);
    cr_expect_eq(k.global_load.units, k.global_load.ideal);
  }
  return elapsed;
}

Test(sim_speed, block_reductions_of_2_20_floats) {
  for (bool tree : {true, false}) {
    double on = time_reduction(true, tree), off = time_reduction(false, tree);
    cr_log_info("%s over 2^20 floats: %.3f s counting, %.3f s not counting (x%.2f)",
                tree ? "tree_sum (4096 blocks x 256 threads, 9 barriers)"
                     : "strided_sum (256 blocks x 256 threads, 16-byte loads)",
                on, off, on / off);
  }
}
