/* The sim's test-only kernels (src/jit/test_kernels.h): libakx prebuilds the library's set on
 * both backends (kernels/akx/dtypes.cuh, the prebuilt sets); the rest of what the tests call is
 * the plugin's, which every test executable points AKX_SIM_TEST_KERNELS at
 * (tests/sim_test_kernels/env.c). Here: a combination outside the library's set runs from the
 * plugin without compiling; with the variable empty, or under AKX_KERNELS=runtime, the same
 * combination compiles at run time as in a user's program; a path that is no plugin refuses the
 * call with a sentence naming the variable, before anything is written. Each Criterion test is
 * a process of its own: the plugin is loaded at most once per process. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "akx.h"
#include "akx_layer.h"
#include "fixture.h"
#include "scan_check.h"
#include "tests/sim_test_kernels/used.h"

static void run_int8_scan(akx_context *ctx, uint64_t seed) {
  /* int8 sources are outside the library's set (akx::library_source): an int8 running max into
   * int8, the source's own accumulator, is in the tests' set. */
  const tfx_layout vec = tfx_layout_vector(5000);
  tsc_case c = tsc_case_make(AKX_INT8, AKX_OP_MAX);
  c.acc = AKX_INT8;
  c.dst_t = AKX_INT8;
  c.dim = AKX_DIM_ALL;
  char msg[1024];
  cr_assert(tsc_run(ctx, &vec, &c, seed, msg, sizeof msg), "%s", msg);
}

/* Run-time units loaded: compiled now, or compiled by an earlier process and found in the disk
 * cache (either way the host compiler's, not the plugin's). */
static uint64_t compiles(void) {
  akx_kernel_cache_counters_t k;
  akx_kernel_cache_counters(&k);
  return k.compiles + k.disk_hits;
}

Test(test_kernels, the_plugin_serves_without_compiling, .timeout = 300) {
#if !AKX_PREBUILT
  cr_skip_test("AKX_PREBUILT=OFF: no plugin is built, every kernel compiles at run time");
#endif
  const char *path = getenv("AKX_SIM_TEST_KERNELS");
  cr_assert(path && *path, "tests/sim_test_kernels/env.c names the plugin");
  akx_context *ctx = tfx_open();
  const uint64_t before = compiles();
  run_int8_scan(ctx, 1);
  run_int8_scan(ctx, 2);
  cr_expect_eq(compiles(), before, "the plugin's combination loaded %llu run-time units",
               (unsigned long long)(compiles() - before));
  tfx_close(ctx);
}

/* The plugin holds the combinations of its list (tests/sim_test_kernels/used.h, what the suite
 * calls through it); another of the tests' set compiles at run time, as outside the set, with
 * the same values. int16 running products into int16 are in the set (a scan in the source's
 * own dtype) and, compiled at run time here, never enter a record of the plugin's. */
#define AKX_X_(F, S, D, A, O) {#F, S, D, A, O},
static const struct {
  const char *family;
  int src, dst, acc, op;
} k_listed[] = {AKX_TEST_KERNELS_USED(AKX_X_)};
#undef AKX_X_

Test(test_kernels, a_combination_off_the_list_compiles, .timeout = 300) {
  for (size_t i = 0; i < sizeof k_listed / sizeof k_listed[0]; ++i)
    cr_assert(!(strcmp(k_listed[i].family, "SCAN") == 0 && k_listed[i].src == AKX_INT16 &&
                k_listed[i].dst == AKX_INT16 && k_listed[i].acc == AKX_INT16 && k_listed[i].op == AKX_OP_MUL),
              "int16 MUL into int16 is on the plugin's list: take a combination off it here");
  akx_context *ctx = tfx_open();
  const tfx_layout vec = tfx_layout_vector(3000);
  tsc_case c = tsc_case_make(AKX_INT16, AKX_OP_MUL);
  c.acc = AKX_INT16;
  c.dst_t = AKX_INT16;
  c.dim = AKX_DIM_ALL;
  const uint64_t before = compiles();
  char msg[1024];
  cr_assert(tsc_run(ctx, &vec, &c, 5, msg, sizeof msg), "%s", msg);
  cr_expect_eq(compiles(), before + 1, "one run-time unit loaded, not %llu", (unsigned long long)(compiles() - before));
  tfx_close(ctx);
}

Test(test_kernels, without_the_plugin_the_combination_compiles, .timeout = 300) {
  setenv("AKX_SIM_TEST_KERNELS", "", 1);
  akx_context *ctx = tfx_open();
  const uint64_t before = compiles();
  run_int8_scan(ctx, 3);
  cr_expect_eq(compiles(), before + 1, "one run-time unit loaded, not %llu",
               (unsigned long long)(compiles() - before));
  tfx_close(ctx);
}

Test(test_kernels, kernels_runtime_passes_over_the_plugin, .timeout = 300) {
  setenv("AKX_KERNELS", "runtime", 1);
  akx_context *ctx = tfx_open();
  const uint64_t before = compiles();
  run_int8_scan(ctx, 4);
  cr_expect_eq(compiles(), before + 1, "AKX_KERNELS=runtime: one run-time unit loaded, not %llu",
               (unsigned long long)(compiles() - before));
  tfx_close(ctx);
}

Test(test_kernels, a_path_that_is_no_plugin_refuses_the_call) {
  setenv("AKX_SIM_TEST_KERNELS", "/nonexistent/libakx_sim_test_kernels.so", 1);
  akx_context *ctx = tfx_open();
  int8_t *src = NULL, *dst = NULL;
  cr_assert_eq(akx_malloc(ctx, (void **)&src, 64), AKX_SUCCESS);
  cr_assert_eq(akx_malloc(ctx, (void **)&dst, 64), AKX_SUCCESS);
  int8_t ones[64], back[64];
  memset(ones, 1, sizeof ones);
  memset(back, 0x5a, sizeof back);
  cr_assert_eq(akx_memcpy(ctx, src, ones, 64, AKX_COPY_HOST_TO_DEVICE), AKX_SUCCESS);
  cr_assert_eq(akx_memcpy(ctx, dst, back, 64, AKX_COPY_HOST_TO_DEVICE), AKX_SUCCESS);
  akx_array a = akx_vector(src, AKX_INT8, 64), d = akx_vector(dst, AKX_INT8, 64);
  akx_scan_opts o = akx_scan_opts_default();
  o.acc = AKX_INT8;
  const akx_status s = akx_scan(ctx, &d, &a, AKX_OP_MAX, AKX_DIM_ALL, &o);
  cr_assert_eq(s, AKX_ERROR_UNSUPPORTED, "status %d: %s", (int)s, akx_last_error());
  cr_expect_not_null(strstr(akx_last_error(), "AKX_SIM_TEST_KERNELS"), "%s", akx_last_error());
  cr_expect_not_null(strstr(akx_last_error(), "/nonexistent/"), "%s", akx_last_error());
  cr_assert_eq(akx_memcpy(ctx, back, dst, 64, AKX_COPY_DEVICE_TO_HOST), AKX_SUCCESS);
  for (int i = 0; i < 64; ++i) cr_assert_eq(back[i], 0x5a, "dst[%d] written", i);
  akx_free(ctx, src);
  akx_free(ctx, dst);
  tfx_close(ctx);
}
