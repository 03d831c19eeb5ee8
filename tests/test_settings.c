/* The test and bench settings from the environment (AKX_SCAN_LAYOUT, AKX_SCAN_SHAPE,
 * AKX_REDUCE_DIMS_SHAPE, AKX_REDUCE_DIMS_SPLITS): validated like the AKX_SIM_* ones (a value
 * they do not take makes akx_context_create fail naming the variable) and read once, when the
 * context is created: changing the environment later does not change how it plans. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "akx_sim.h"
#include "fixture.h"

TestSuite(settings);

Test(settings, invalid_values_refuse_the_context) {
  static const struct {
    const char *var, *value;
  } bad[] = {{"AKX_SCAN_LAYOUT", "padded"},      {"AKX_SCAN_LAYOUT", "seed"},
             {"AKX_SCAN_SHAPE", "rows"},         {"AKX_REDUCE_DIMS_SHAPE", "column"},
             {"AKX_REDUCE_DIMS_SPLITS", "0"},    {"AKX_REDUCE_DIMS_SPLITS", "65536"},
             {"AKX_REDUCE_DIMS_SPLITS", "3x"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    setenv(bad[i].var, bad[i].value, 1);
    akx_context *ctx = NULL;
    const akx_status s = akx_context_create(&ctx, AKX_BACKEND_SIM, 0);
    cr_assert_eq(s, AKX_ERROR_INVALID_ARGUMENT, "%s=%s: %s", bad[i].var, bad[i].value, akx_status_string(s));
    cr_assert(ctx == NULL);
    cr_assert(strstr(akx_last_error(), bad[i].var) && strstr(akx_last_error(), bad[i].value), "\"%s\"",
              akx_last_error());
    unsetenv(bad[i].var);
  }
  static const struct {
    const char *var, *value;
  } good[] = {{"AKX_SCAN_LAYOUT", "dense"},         {"AKX_SCAN_LAYOUT", "odd_stride"},
              {"AKX_SCAN_LAYOUT", "conflict_free"}, {"AKX_SCAN_SHAPE", "columns"},
              {"AKX_REDUCE_DIMS_SHAPE", "tiled"},   {"AKX_REDUCE_DIMS_SPLITS", "65535"}};
  for (size_t i = 0; i < sizeof good / sizeof good[0]; ++i) {
    setenv(good[i].var, good[i].value, 1);
    akx_context *ctx = NULL;
    cr_assert_eq(akx_context_create(&ctx, AKX_BACKEND_SIM, 0), AKX_SUCCESS, "%s=%s: %s", good[i].var,
                 good[i].value, akx_last_error());
    akx_context_destroy(ctx);
    unsetenv(good[i].var);
  }
}

/* The kernel a 2-d float32 scan along its contiguous dim launches. */
static int launched(akx_context *ctx, const char *kernel) {
  akx_sim_kernel_counters per[16];
  int32_t count = 0;
  cr_assert_eq(akx_sim_counters_get(ctx, NULL, per, 16, &count), AKX_SUCCESS, "%s", akx_last_error());
  for (int32_t i = 0; i < count && i < 16; ++i)
    if (!strcmp(per[i].kernel, kernel) && per[i].launches > 0) return 1;
  return 0;
}

Test(settings, read_once_per_context) {
  setenv("AKX_SCAN_SHAPE", "columns", 1);
  akx_context *forced = tfx_open();
  unsetenv("AKX_SCAN_SHAPE");
  akx_context *plain = tfx_open();
  setenv("AKX_SCAN_SHAPE", "columns", 1); /* after creation: no effect on `plain` */
  akx_context *ctxs[2] = {forced, plain};
  for (int k = 0; k < 2; ++k) {
    akx_context *ctx = ctxs[k];
    const int64_t shape[2] = {8, 300};
    float host[8 * 300];
    for (int i = 0; i < 8 * 300; ++i) host[i] = (float)(i % 7);
    float *src = tfx_upload(ctx, host, sizeof host), *dst = tfx_alloc(ctx, sizeof host);
    const akx_array s = akx_array_c(src, AKX_FLOAT32, 2, shape), d = akx_array_c(dst, AKX_FLOAT32, 2, shape);
    cr_assert_eq(akx_sim_counters_reset(ctx), AKX_SUCCESS);
    cr_assert_eq(akx_scan(ctx, &d, &s, AKX_OP_ADD, 1, NULL), AKX_SUCCESS, "%s", akx_last_error());
    float back[8 * 300];
    tfx_to_host(ctx, back, dst, sizeof back);
    for (int r = 0; r < 8; ++r) {
      float run = 0;
      for (int c = 0; c < 300; ++c) {
        run += host[r * 300 + c];
        cr_assert_eq(back[r * 300 + c], run, "row %d col %d", r, c);
      }
    }
    cr_assert_eq(launched(ctx, "scan_columns"), k == 0, "context %d: scan_columns launched: %d", k,
                 launched(ctx, "scan_columns"));
    cr_assert_eq(launched(ctx, "scan_slices"), k == 1, "context %d: scan_slices", k);
    tfx_free(ctx, dst);
    tfx_free(ctx, src);
  }
  unsetenv("AKX_SCAN_SHAPE");
  tfx_close(plain);
  tfx_close(forced);
}
