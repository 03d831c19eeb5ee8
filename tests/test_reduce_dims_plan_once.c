/* A reduction plans once: akx_reduce_dims into one output takes the whole-array path without
 * first canonicalising and tuning for the dims kernels, and the whole-array path looks its
 * tuning row up once per call (the plan and its workspace from the same row). The window is
 * the tuning table's lookup count per family (akx__tuning_lookups): every plan looks its row
 * up, and a dims plan that is never made looks nothing up. The values are checked too. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include "akx.h"
#include "fixture.h"
#include "tuning.h"
#include "reduce/reduce_dims.h" /* akx__reduce_dims_plan_shape */

static akx_context *ctx;
static void setup(void) { ctx = tfx_open(); }
static void teardown(void) { tfx_close(ctx); }
TestSuite(reduce_dims_plan_once, .init = setup, .fini = teardown);

#define ROWS 30
#define COLS 40
static const int64_t k_shape[2] = {ROWS, COLS};

typedef struct {
  uint64_t dims, whole;
} lookups;

static lookups lookups_now(void) {
  return (lookups){akx__tuning_lookups(AKX__TUNE_REDUCE_DIMS), akx__tuning_lookups(AKX__TUNE_REDUCE_WHOLE)};
}
static lookups lookups_since(lookups before) {
  const lookups now = lookups_now();
  return (lookups){now.dims - before.dims, now.whole - before.whole};
}

/* src[i][j] = i + 1 (float32, C order, exact sums). */
static void *upload_src(void) {
  float h[ROWS * COLS];
  for (int i = 0; i < ROWS; ++i)
    for (int j = 0; j < COLS; ++j) h[i * COLS + j] = (float)(i + 1);
  return tfx_upload(ctx, h, sizeof h);
}

Test(reduce_dims_plan_once, one_output_call_tunes_once_for_the_whole_array_path) {
  void *src = upload_src();
  float *out = tfx_alloc(ctx, sizeof(float));
  const akx_array s = akx_array_c(src, AKX_FLOAT32, 2, k_shape);
  const akx_array d = akx_array_c(out, AKX_FLOAT32, 2, (int64_t[]){1, 1});
  const lookups before = lookups_now();
  cr_assert_eq(akx_reduce_dims(ctx, &d, &s, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL), AKX_SUCCESS, "%s",
               akx_last_error());
  const lookups n = lookups_since(before);
  cr_expect_eq(n.dims, 0u, "the one-output call looked up the dims kernels' tuning %llu times",
               (unsigned long long)n.dims);
  cr_expect_eq(n.whole, 1u, "the one-output call looked up the whole-array tuning %llu times",
               (unsigned long long)n.whole);
  float got = 0;
  tfx_to_host(ctx, &got, out, sizeof got);
  cr_expect_eq(got, (float)(COLS * ROWS * (ROWS + 1) / 2), "sum %g", (double)got);
  tfx_free(ctx, out);
  tfx_free(ctx, src);
}

Test(reduce_dims_plan_once, one_output_workspace_query_is_the_whole_arrays_from_one_lookup) {
  const akx_array s = akx_array_c(NULL, AKX_FLOAT32, 2, k_shape);
  const akx_array d = akx_array_c(NULL, AKX_FLOAT32, 2, (int64_t[]){1, 1});
  size_t whole = 0, dims = 0;
  cr_assert_eq(akx_mapreduce_workspace_size(ctx, &s, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &whole), AKX_SUCCESS,
               "%s", akx_last_error());
  const lookups before = lookups_now();
  cr_assert_eq(akx_reduce_dims_workspace_size(ctx, &d, &s, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &dims), AKX_SUCCESS,
               "%s", akx_last_error());
  const lookups n = lookups_since(before);
  cr_expect_eq(n.dims, 0u, "the query looked up the dims kernels' tuning %llu times", (unsigned long long)n.dims);
  cr_expect_eq(n.whole, 1u, "the query looked up the whole-array tuning %llu times", (unsigned long long)n.whole);
  cr_expect_gt(whole, 0u);
  cr_expect_eq(dims, whole, "the one-output query says %zu bytes, akx_mapreduce's %zu", dims, whole);
}

Test(reduce_dims_plan_once, one_output_plan_is_whole_without_a_dims_lookup) {
  const akx_array s = akx_array_c(NULL, AKX_FLOAT32, 2, k_shape);
  const akx_array d = akx_array_c(NULL, AKX_FLOAT32, 2, (int64_t[]){1, 1});
  akx__reduce_dims_plan p;
  const lookups before = lookups_now();
  cr_assert_eq(akx__reduce_dims_plan_shape(ctx, &d, &s, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &p), AKX_SUCCESS, "%s",
               akx_last_error());
  cr_expect_str_eq(akx__reduce_dims_shape_name(p.shape), "whole");
  cr_expect_eq(p.n_out, 1);
  cr_expect_eq(lookups_since(before).dims, 0u);
}

Test(reduce_dims_plan_once, mapreduce_tunes_once) {
  void *src = upload_src();
  const akx_array s = akx_array_c(src, AKX_FLOAT32, 2, k_shape);
  float got = 0;
  const lookups before = lookups_now();
  cr_assert_eq(akx_mapreduce(ctx, &s, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &got, AKX_HOST), AKX_SUCCESS, "%s",
               akx_last_error());
  const lookups n = lookups_since(before);
  cr_expect_eq(n.whole, 1u, "akx_mapreduce looked up its tuning %llu times", (unsigned long long)n.whole);
  cr_expect_eq(n.dims, 0u);
  cr_expect_eq(got, (float)(COLS * ROWS * (ROWS + 1) / 2), "sum %g", (double)got);
  tfx_free(ctx, src);
}

/* The window sees a plan: several outputs take the dims kernels, one lookup of their row. */
Test(reduce_dims_plan_once, several_outputs_tune_the_dims_kernels_once) {
  void *src = upload_src();
  float *out = tfx_alloc(ctx, COLS * sizeof(float));
  const akx_array s = akx_array_c(src, AKX_FLOAT32, 2, k_shape);
  const akx_array d = akx_array_c(out, AKX_FLOAT32, 2, (int64_t[]){1, COLS});
  const lookups before = lookups_now();
  cr_assert_eq(akx_reduce_dims(ctx, &d, &s, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL), AKX_SUCCESS, "%s",
               akx_last_error());
  const lookups n = lookups_since(before);
  cr_expect_eq(n.dims, 1u, "%llu lookups of the dims kernels' tuning", (unsigned long long)n.dims);
  cr_expect_eq(n.whole, 0u, "%llu lookups of the whole-array tuning", (unsigned long long)n.whole);
  float got[COLS];
  tfx_to_host(ctx, got, out, sizeof got);
  for (int j = 0; j < COLS; ++j) cr_expect_eq(got[j], (float)(ROWS * (ROWS + 1) / 2), "column %d: %g", j, (double)got[j]);
  tfx_free(ctx, out);
  tfx_free(ctx, src);
}
