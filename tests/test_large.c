/* 64-bit indexing: views whose byte offsets pass 2^32 (a few elements with huge strides in a
 * 4.6 GB allocation, whose pages the sim only touches where the view reads), and element
 * counts past 2^31 where no data is needed (sizes and validation). */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "fixture.h"

#define STRIDE 1500000001LL /* bytes of int8: offsets 0, 1.5e9, 3.0e9, 4.5e9 > 2^32 */

static void put(akx_context *ctx, unsigned char *base, int64_t offset, const void *v, size_t n) {
  tfx_to_device(ctx, base + offset, v, n);
}

Test(large, byte_offsets_past_4_gib, .timeout = 120) {
  akx_context *ctx = tfx_open();
  const size_t bytes = (size_t)(3 * STRIDE + 64);
  unsigned char *base = tfx_alloc(ctx, bytes);
  const int8_t vals[4] = {7, -3, 100, 21};
  for (int i = 0; i < 4; i++) put(ctx, base, i * STRIDE, &vals[i], 1);

  /* forward, backward and 2-d views of the same four bytes */
  akx_array fwd = akx_vector(base, AKX_INT8, 4);
  fwd.strides[0] = STRIDE;
  akx_array bwd = akx_vector(base + 3 * STRIDE, AKX_INT8, 4);
  bwd.strides[0] = -STRIDE;
  akx_array two = fwd;
  two.ndim = 2;
  two.shape[0] = 2;
  two.shape[1] = 2;
  two.strides[0] = 2 * STRIDE;
  two.strides[1] = STRIDE;
  const akx_array *views[] = {&fwd, &bwd, &two};
  for (int v = 0; v < 3; v++) {
    int64_t sum = 0;
    cr_assert_eq(akx_mapreduce(ctx, views[v], AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &sum, AKX_HOST),
                 AKX_SUCCESS, "view %d: %s", v, akx_last_error());
    cr_expect_eq(sum, 125, "view %d: %lld", v, (long long)sum);
    int8_t mx = 0;
    cr_assert_eq(akx_mapreduce(ctx, views[v], AKX_MAP_IDENTITY, AKX_OP_MAX, NULL, &mx, AKX_HOST),
                 AKX_SUCCESS, "view %d: %s", v, akx_last_error());
    cr_expect_eq(mx, 100, "view %d: %d", v, mx);
  }
  /* into a one-element dst at the far end of the allocation */
  int64_t one[2] = {1, 1};
  unsigned char *far = base + ((3 * STRIDE + 8 + 7) & ~7LL); /* past the last view byte, aligned */
  akx_array dst = akx_array_c(far, AKX_INT64, 2, one);
  cr_assert_eq(akx_reduce_dims(ctx, &dst, &two, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL), AKX_SUCCESS,
               "%s", akx_last_error());
  int64_t got = 0;
  tfx_to_host(ctx, &got, far, sizeof got);
  cr_expect_eq(got, 125);
  /* one byte past the allocation is refused, not read */
  akx_array past = fwd;
  past.shape[0] = 4;
  past.strides[0] = (int64_t)(bytes / 3) + 1;
  int64_t r = 0;
  cr_expect_eq(akx_mapreduce(ctx, &past, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &r, AKX_HOST),
               AKX_ERROR_INVALID_ARGUMENT);
  tfx_free(ctx, base);
  tfx_close(ctx);
}

Test(large, float64_elements_past_4_gib) {
  akx_context *ctx = tfx_open();
  const int64_t stride = 200000001; /* elements: byte offsets up to 4.8e9 */
  unsigned char *base = tfx_alloc(ctx, (size_t)(3 * stride + 1) * 8);
  const double vals[4] = {0.5, -2.25, 3.0, 1.75}; /* every partial sum exact */
  for (int i = 0; i < 4; i++) put(ctx, base, i * stride * 8, &vals[i], 8);
  akx_array v = akx_vector(base, AKX_FLOAT64, 4);
  v.strides[0] = stride;
  double sum = 0;
  cr_assert_eq(akx_mapreduce(ctx, &v, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &sum, AKX_HOST),
               AKX_SUCCESS, "%s", akx_last_error());
  cr_expect_eq(sum, 3.0, "%g", sum);
  tfx_free(ctx, base);
  tfx_close(ctx);
}

Test(large, element_counts_past_2_31) {
  akx_context *ctx = tfx_open();
  /* no data is needed to size a call: counts past 2^31 (and 2^32) in one and several dims */
  const int64_t shapes[][2] = {{(1LL << 31) + 5, 1}, {(1LL << 32) + 1, 1}, {65536, 65537}};
  for (int i = 0; i < 3; i++) {
    akx_array a = akx_array_c(NULL, AKX_INT8, 2, shapes[i]);
    size_t bytes = 0;
    cr_expect_eq(akx_mapreduce_workspace_size(ctx, &a, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &bytes),
                 AKX_SUCCESS, "%s", akx_last_error());
    cr_expect_gt(bytes, 0u);
  }
  tfx_close(ctx);
}
