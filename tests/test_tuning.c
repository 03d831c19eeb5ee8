/* The tuning table (src/core/tuning.c): rows are keyed by the device's own compute
 * capability. A CUDA context also carries the nearest sim profile (for the model only): an
 * A100 (8.0) or an L40 (8.9) must get the default row, not the H200's. */
#include <criterion/criterion.h>

#include "backend.h"
#include "fixture.h"
#include "tuning.h"

/* The partials a whole-array reduction's workspace holds: target_blocks + 1 (rounded). */
static size_t workspace_for(akx_context *ctx) {
  int64_t n = 1 << 20;
  akx_array v = akx_vector(NULL, AKX_FLOAT32, n);
  size_t bytes = 0;
  cr_assert_eq(akx_mapreduce_workspace_size(ctx, &v, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &bytes),
               AKX_SUCCESS, "%s", akx_last_error());
  return bytes;
}

Test(tuning, rows_follow_the_device_compute_capability) {
  akx_context *ctx = tfx_open();
  if (!tfx_is_sim(ctx)) cr_skip_test("pokes a sim context's device fields");
  const size_t h200 = workspace_for(ctx); /* sim h200: cc 9.0, 528 target blocks */
  /* The tags (the header's ticket, rounded to 256 bytes), then the partials and the slot. */
  cr_expect_eq(h200, 256 + (size_t)((528 + 1) * 4 + 255) / 256 * 256);
  /* What the CUDA backend builds for an A100: info from the device, profile the nearest. */
  const int ccs[][2] = {{8, 0}, {8, 9}, {7, 5}, {10, 0}};
  for (size_t i = 0; i < sizeof ccs / sizeof ccs[0]; i++) {
    ctx->info.cc_major = ccs[i][0];
    ctx->info.cc_minor = ccs[i][1];
    cr_expect_eq(workspace_for(ctx), 256 + (size_t)((256 + 1) * 4 + 255) / 256 * 256,
                 "cc %d.%d got the H200's row", ccs[i][0], ccs[i][1]);
  }
  tfx_close(ctx);
}

Test(tuning, lookup) {
  const akx__tuning any = akx__tuning_lookup(AKX__TUNE_REDUCE_WHOLE, 8, 6, 4, NULL);
  cr_expect_eq(any.target_blocks, 256);
  cr_expect_eq(any.block_size, 256);
  cr_expect_eq(any.items_per_thread, 16); /* 64 bytes of float32 */
  cr_expect_eq(akx__tuning_lookup(AKX__TUNE_REDUCE_WHOLE, 9, 0, 4, NULL).target_blocks, 528);
  cr_expect_eq(akx__tuning_lookup(AKX__TUNE_REDUCE_WHOLE, 12, 0, 16, NULL).items_per_thread, 4);
  const akx__tuning over = {128, 3, 7};
  const akx__tuning o = akx__tuning_lookup(AKX__TUNE_REDUCE_WHOLE, 9, 0, 8, &over);
  cr_expect(o.block_size == 128 && o.items_per_thread == 3 && o.target_blocks == 7);
}
