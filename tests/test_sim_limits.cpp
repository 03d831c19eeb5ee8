// The sim's launch limits, as nvcc and the driver set them: static shared memory up to
// 48 KiB (a larger declaration fails where it is reached, as nvcc would refuse to compile
// it), dynamic shared memory above 48 KiB only with the kernel's opt-in and never above the
// profile's per-block maximum, blocks no larger than the kernel's launch bounds. Each refused
// case has a twin just inside the limit that runs.
#include <stdlib.h>

#include "sim_probe.hpp"

static void in_order(void) {
  unsetenv("AKX_SIM_SCHEDULE");
  unsetenv("AKX_SIM_DEVICE");  // the h200 profile: 232448 bytes of shared memory per block
}
TestSuite(sim_limits, .init = in_order);

// ---- static shared memory -----------------------------------------------------------------------

// A tile of `Words` floats; each thread writes and reads back its own word.
template <int Words>
AKX_GLOBAL void static_tile_probe(float *out) {
  AKX_SHARED(float, tile, Words);
  tile.st(threadIdx.x, float(threadIdx.x));
  akx::gst(out + blockIdx.x * blockDim.x + threadIdx.x, tile.ld(threadIdx.x));
}

Test(sim_limits, static_shared_48_kib_fits) {
  sim_context sim;
  float *out = sim.alloc<float>(2 * 64);
  expect_success(AKX_LAUNCH("tile_48k", static_tile_probe<48 * 1024 / 4>, 2, 64, 0, NULL, out));
  cr_expect_eq(out[64 + 63], 63.0f);
}

Test(sim_limits, static_shared_49_kib_fails) {
  sim_context sim;
  float *out = sim.alloc<float>(64);
  expect_sim_check(AKX_LAUNCH("tile_49k", static_tile_probe<49 * 1024 / 4>, 1, 64, 0, NULL, out),
                   "shared memory size", "'tile'", "50176 bytes", "49152");
}

// Two declarations of 24 KiB each fit; a third one does not (the limit is the block's total).
AKX_GLOBAL void three_tiles_probe(float *out, int third) {
  AKX_SHARED(float, a, 24 * 256);
  AKX_SHARED(float, b, 24 * 256);
  a.st(threadIdx.x, 1.0f);
  b.st(threadIdx.x, 2.0f);
  float v = a.ld(threadIdx.x) + b.ld(threadIdx.x);
  if (third) {
    AKX_SHARED(float, c, 4);
    c.st(threadIdx.x % 4, 0.0f);
  }
  akx::gst(out + threadIdx.x, v);
}

Test(sim_limits, static_shared_limit_is_per_block) {
  sim_context sim;
  float *out = sim.alloc<float>(32);
  expect_success(AKX_LAUNCH("three_tiles", three_tiles_probe, 1, 32, 0, NULL, out, 0));
  cr_expect_eq(out[3], 3.0f);
  expect_sim_check(AKX_LAUNCH("three_tiles", three_tiles_probe, 1, 32, 0, NULL, out, 1),
                   "shared memory size", "'c'", "49152");
}

// ---- dynamic shared memory -----------------------------------------------------------------------

// Each thread writes and reads back the last word of the dynamic shared memory's
// blockDim.x-word stripes (so every launch touches its far end).
AKX_GLOBAL void dynamic_tile_probe(float *out) {
  AKX_SHARED_DYNAMIC(float, tile);
  const int64_t words = int64_t(tile.bytes / sizeof(float));
  const int64_t i = words - 1 - threadIdx.x;
  tile.st(i, float(i));
  akx::gst(out + blockIdx.x * blockDim.x + threadIdx.x, tile.ld(i));
}

static const akx::kernel_info dynamic_optin{"dynamic_optin", 1024, 32, 1, true};

Test(sim_limits, dynamic_shared_above_48_kib_needs_the_opt_in) {
  sim_context sim;
  float *out = sim.alloc<float>(2 * 32);
  const size_t bytes = 64 * 1024;
  cr_expect_eq(AKX_LAUNCH("dynamic_plain", dynamic_tile_probe, 2, 32, bytes, NULL, out),
               AKX_ERROR_INVALID_ARGUMENT);
  cr_expect(strstr(akx_last_error(), "'dynamic_plain'") != NULL, "%s", akx_last_error());
  cr_expect(strstr(akx_last_error(), "65536 bytes of dynamic shared memory without the opt-in") !=
                NULL,
            "%s", akx_last_error());
  // 48 KiB needs no opt-in; 64 KiB with it runs.
  expect_success(AKX_LAUNCH("dynamic_plain", dynamic_tile_probe, 2, 32, 48 * 1024, NULL, out));
  cr_expect_eq(out[32], float(48 * 1024 / 4 - 1));
  expect_success(AKX_LAUNCH(dynamic_optin, dynamic_tile_probe, 2, 32, bytes, NULL, out));
  cr_expect_eq(out[32 + 5], float(64 * 1024 / 4 - 1 - 5));
  cr_expect_eq(sim.kernel("dynamic_optin").launches, 1u);
}

Test(sim_limits, dynamic_shared_above_the_profile_maximum) {
  sim_context sim;
  float *out = sim.alloc<float>(32);
  // h200: 227 KiB (232448 bytes) per block with the opt-in.
  expect_success(AKX_LAUNCH(dynamic_optin, dynamic_tile_probe, 1, 32, 232448, NULL, out));
  cr_expect_eq(AKX_LAUNCH(dynamic_optin, dynamic_tile_probe, 1, 32, 232448 + 16, NULL, out),
               AKX_ERROR_INVALID_ARGUMENT);
  cr_expect(strstr(akx_last_error(), "'dynamic_optin'") != NULL, "%s", akx_last_error());
  cr_expect(strstr(akx_last_error(), "232464 bytes of dynamic shared memory") != NULL, "%s",
            akx_last_error());
  cr_expect(strstr(akx_last_error(), "232448") != NULL, "%s", akx_last_error());
}

// ---- static and dynamic together -----------------------------------------------------------------

// 40 KiB of static shared memory beside the dynamic part: the driver counts the sum, against
// 48 KiB without the opt-in and the profile's maximum with it.
AKX_GLOBAL void static_and_dynamic_probe(float *out) {
  AKX_SHARED_DYNAMIC(float, dyn);
  AKX_SHARED(float, fixed, 40 * 256);
  fixed.st(threadIdx.x, 1.0f);
  dyn.st(threadIdx.x, 2.0f);
  akx::gst(out + threadIdx.x, fixed.ld(threadIdx.x) + dyn.ld(threadIdx.x));
}

Test(sim_limits, static_plus_dynamic_over_48_kib_needs_the_opt_in) {
  sim_context sim;
  float *out = sim.alloc<float>(32);
  // 40 KiB + 8 KiB fits 48 KiB; 40 KiB + 8 KiB + 16 does not, though each part alone would.
  expect_success(AKX_LAUNCH("static_and_dynamic", static_and_dynamic_probe, 1, 32, 8 * 1024, NULL, out));
  cr_expect_eq(out[31], 3.0f);
  expect_sim_check(AKX_LAUNCH("static_and_dynamic", static_and_dynamic_probe, 1, 32, 8 * 1024 + 16, NULL, out),
                   "shared memory size", "'fixed'", "40960 bytes of static", "8208 of dynamic", "49152",
                   "without the opt-in");
  // With the opt-in the same launch runs; the sum is then held against the profile's maximum.
  expect_success(AKX_LAUNCH(dynamic_optin, static_and_dynamic_probe, 1, 32, 8 * 1024 + 16, NULL, out));
  expect_success(AKX_LAUNCH(dynamic_optin, static_and_dynamic_probe, 1, 32, 232448 - 40960, NULL, out));
  expect_sim_check(AKX_LAUNCH(dynamic_optin, static_and_dynamic_probe, 1, 32, 232448 - 40960 + 16, NULL, out),
                   "shared memory size", "'fixed'", "232448", "opt-in maximum");
}

// ---- launch bounds -------------------------------------------------------------------------------

AKX_GLOBAL AKX_LAUNCH_BOUNDS(256) void bounded_probe(int *out) {
  akx::gst(out + blockIdx.x * blockDim.x + threadIdx.x, int(threadIdx.x));
}
static const akx::kernel_info bounded_info{"bounded_probe", 256, 32, 1, false};

Test(sim_limits, block_above_the_launch_bounds) {
  sim_context sim;
  int *out = sim.alloc<int>(2 * 512);
  expect_success(AKX_LAUNCH(bounded_info, bounded_probe, 2, 256, 0, NULL, out));
  cr_expect_eq(out[256 + 255], 255);
  cr_expect_eq(AKX_LAUNCH(bounded_info, bounded_probe, 2, 512, 0, NULL, out),
               AKX_ERROR_INVALID_ARGUMENT);
  cr_expect(strstr(akx_last_error(), "'bounded_probe'") != NULL, "%s", akx_last_error());
  cr_expect(strstr(akx_last_error(), "a block of 512 threads") != NULL, "%s", akx_last_error());
  cr_expect(strstr(akx_last_error(), "__launch_bounds__(256)") != NULL, "%s", akx_last_error());
  // A plain name has the default bounds (1024).
  expect_success(AKX_LAUNCH("bounded_probe", bounded_probe, 1, 512, 0, NULL, out));
}
