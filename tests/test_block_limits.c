/* Block sizes and the kernels' launch bounds (kernels/akx/block_limits.h): every kernel is
 * compiled for at most its family's largest block, and
 *  - a block_size override above it is refused before anything is launched or written, with
 *    a sentence naming the bound and where it comes from;
 *  - the bound itself works (the result checked against the host);
 *  - no tuning row of any device or accumulator size asks for more than its family's bound. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "akx.h"
#include "akx_sim.h"
#include "fixture.h"
#include "akx/block_limits.h"
#include "tuning.h"

enum { N = 3000 };

static void expect_bound_sentence(int32_t bs, int32_t bound) {
  const char *e = akx_last_error();
  char want[64];
  snprintf(want, sizeof want, "opts->block_size is %d", (int)bs);
  cr_expect(strstr(e, want) != NULL, "%s", e);
  snprintf(want, sizeof want, "__launch_bounds__(%d)", (int)bound);
  cr_expect(strstr(e, want) != NULL, "%s", e);
  cr_expect(strstr(e, "kernels/akx/block_limits.h") != NULL, "%s", e);
}

static float *ramp(akx_context *ctx, float *host) {
  for (int i = 0; i < N; i++) host[i] = (float)(i % 7);
  return tfx_upload(ctx, host, sizeof(float) * N);
}

Test(block_limits, reductions_refuse_blocks_above_their_bound) {
  akx_context *ctx = tfx_open();
  float host[N];
  float *src = ramp(ctx, host);
  const akx_array v = akx_vector(src, AKX_FLOAT32, N);
  const int32_t too_big[] = {AKX_MAX_BLOCK_REDUCE + 32, 512, 1024};
  for (size_t i = 0; i < sizeof too_big / sizeof too_big[0]; i++) {
    akx_reduce_opts o = akx_reduce_opts_default();
    o.block_size = too_big[i];
    float r = -7.0f;
    if (tfx_is_sim(ctx)) akx_sim_counters_reset(ctx);
    cr_expect_eq(akx_mapreduce(ctx, &v, AKX_MAP_IDENTITY, AKX_OP_ADD, &o, &r, AKX_HOST),
                 AKX_ERROR_INVALID_ARGUMENT, "block_size %d", (int)too_big[i]);
    expect_bound_sentence(too_big[i], AKX_MAX_BLOCK_REDUCE);
    cr_expect_eq(r, -7.0f, "the result was written");
    size_t ws = 0;
    cr_expect_eq(akx_mapreduce_workspace_size(ctx, &v, AKX_MAP_IDENTITY, AKX_OP_ADD, &o, &ws),
                 AKX_ERROR_INVALID_ARGUMENT);
    /* akx_reduce_dims: {30, 100} -> {30, 1} */
    const int64_t shape[2] = {30, 100}, dshape[2] = {30, 1};
    float *dst = tfx_upload(ctx, host, sizeof(float) * 30);
    const akx_array m = akx_array_c(src, AKX_FLOAT32, 2, shape), d = akx_array_c(dst, AKX_FLOAT32, 2, dshape);
    cr_expect_eq(akx_reduce_dims(ctx, &d, &m, AKX_MAP_IDENTITY, AKX_OP_ADD, &o),
                 AKX_ERROR_INVALID_ARGUMENT, "block_size %d", (int)too_big[i]);
    expect_bound_sentence(too_big[i], AKX_MAX_BLOCK_REDUCE);
    float back[30];
    tfx_to_host(ctx, back, dst, sizeof back);
    cr_expect(memcmp(back, host, sizeof back) == 0, "dst was written");
    if (tfx_is_sim(ctx)) {
      akx_sim_kernel_counters c;
      memset(&c, 0, sizeof c);
      cr_assert_eq(akx_sim_counters_get(ctx, &c, NULL, 0, NULL), AKX_SUCCESS, "%s", akx_last_error());
      cr_expect_eq(c.launches, 0, "a refused call launched %llu kernels", (unsigned long long)c.launches);
    }
    tfx_free(ctx, dst);
  }
  /* The bound itself. */
  akx_reduce_opts o = akx_reduce_opts_default();
  o.block_size = AKX_MAX_BLOCK_REDUCE;
  o.items_per_thread = 1;
  float r = 0;
  cr_assert_eq(akx_mapreduce(ctx, &v, AKX_MAP_IDENTITY, AKX_OP_ADD, &o, &r, AKX_HOST), AKX_SUCCESS,
               "%s", akx_last_error());
  double want = 0;
  for (int i = 0; i < N; i++) want += host[i];
  cr_expect_eq(r, (float)want);
  tfx_free(ctx, src);
  tfx_close(ctx);
}

Test(block_limits, scans_refuse_blocks_above_their_bound) {
  akx_context *ctx = tfx_open();
  float host[N];
  float *src = ramp(ctx, host);
  float *dst = tfx_upload(ctx, host, sizeof(float) * N);
  const akx_array s = akx_vector(src, AKX_FLOAT32, N), d = akx_vector(dst, AKX_FLOAT32, N);
  const int32_t too_big[] = {AKX_MAX_BLOCK_SCAN + 32, 512, 1024};
  for (size_t i = 0; i < sizeof too_big / sizeof too_big[0]; i++) {
    akx_scan_opts o = akx_scan_opts_default();
    o.block_size = too_big[i];
    cr_expect_eq(akx_scan(ctx, &d, &s, AKX_OP_ADD, 0, &o), AKX_ERROR_INVALID_ARGUMENT,
                 "block_size %d", (int)too_big[i]);
    expect_bound_sentence(too_big[i], AKX_MAX_BLOCK_SCAN);
  }
  float back[N];
  tfx_to_host(ctx, back, dst, sizeof back);
  cr_expect(memcmp(back, host, sizeof back) == 0, "dst was written");
  akx_scan_opts o = akx_scan_opts_default();
  o.block_size = AKX_MAX_BLOCK_SCAN;
  o.items_per_thread = 3;
  cr_assert_eq(akx_scan(ctx, &d, &s, AKX_OP_ADD, 0, &o), AKX_SUCCESS, "%s", akx_last_error());
  tfx_to_host(ctx, back, dst, sizeof back);
  float run = 0;
  for (int i = 0; i < N; i++) {
    run += host[i]; /* small integers: exact in any order */
    cr_expect_eq(back[i], run, "element %d", i);
    if (back[i] != run) break;
  }
  tfx_free(ctx, src);
  tfx_free(ctx, dst);
  tfx_close(ctx);
}

Test(block_limits, tuning_rows_stay_within_the_bounds) {
  const struct {
    akx__tuning_family family;
    int32_t bound;
  } families[] = {{AKX__TUNE_REDUCE_WHOLE, AKX_MAX_BLOCK_REDUCE},
                  {AKX__TUNE_REDUCE_DIMS, AKX_MAX_BLOCK_REDUCE},
                  {AKX__TUNE_SCAN_TILE, AKX_MAX_BLOCK_SCAN},
                  {AKX__TUNE_SCAN_COLUMNS, AKX_MAX_BLOCK_SCAN}};
  const int ccs[][2] = {{0, 0}, {7, 5}, {8, 0}, {8, 9}, {9, 0}, {10, 0}, {12, 0}};
  const size_t sizes[] = {1, 2, 4, 8, 16};
  for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
    for (size_t c = 0; c < sizeof ccs / sizeof ccs[0]; c++)
      for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        const akx__tuning t =
            akx__tuning_lookup(families[f].family, ccs[c][0], ccs[c][1], sizes[s], NULL);
        cr_expect(t.block_size >= 32 && t.block_size <= families[f].bound && t.block_size % 32 == 0,
                  "family %d, cc %d.%d, %zu-byte accumulator: block %d, bound %d",
                  (int)families[f].family, ccs[c][0], ccs[c][1], sizes[s], (int)t.block_size,
                  (int)families[f].bound);
      }
}
