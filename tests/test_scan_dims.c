/* akx_scan along a dim of 1- to 4-d arrays: every dim of every shape with sizes 0..3 (and up
 * to 5 in 2-d), random shapes up to 100, row- and column-major, offset views with negative
 * steps, dst in another layout, in place, each shape forced (AKX_SCAN_SHAPE) and reached
 * naturally, and AKX_DIM_ALL over C and Fortran arrays. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h" /* akx__context_reread_settings */
#include "scan_check.h"

static akx_context *ctx;
static void setup(void) { ctx = tfx_open(); }
static void teardown(void) {
  unsetenv("AKX_SCAN_SHAPE");
  tfx_close(ctx);
}
TestSuite(scan_dims, .init = setup, .fini = teardown, .timeout = 280);

static void run(const tfx_layout *L, const tsc_case *c, uint64_t seed) {
  char msg[1024];
  cr_assert(tsc_run(ctx, L, c, seed, msg, sizeof msg), "%s", msg);
}

/* A row-major parent of `shape`, viewed whole (column-major: reversed shape and strides). */
static tfx_layout dense(int32_t nd, const int64_t *shape, int fortran) {
  tfx_layout L;
  memset(&L, 0, sizeof L);
  L.ndim = nd;
  int64_t s = 1;
  for (int32_t d = nd - 1; d >= 0; --d) {
    L.shape[d] = shape[d];
    L.strides[d] = s;
    s *= shape[d] > 0 ? shape[d] : 1;
  }
  L.parent_n = 1;
  for (int32_t d = 0; d < nd; ++d) L.parent_n *= shape[d];
  if (fortran) { /* the same memory seen as the transposed (column-major) array */
    for (int32_t d = 0; d < nd / 2; ++d) {
      int64_t t = L.shape[d]; L.shape[d] = L.shape[nd - 1 - d]; L.shape[nd - 1 - d] = t;
      t = L.strides[d]; L.strides[d] = L.strides[nd - 1 - d]; L.strides[nd - 1 - d] = t;
    }
  }
  return L;
}

Test(scan_dims, all_small_shapes_every_dim) {
  int64_t shape[4];
  uint64_t seed = 0;
  for (int32_t nd = 1; nd <= 4; ++nd) {
    const int maxs = nd <= 2 ? 5 : 3;
    int64_t combos = 1;
    for (int32_t d = 0; d < nd; ++d) combos *= maxs + 1;
    for (int64_t k = 0; k < combos; ++k) {
      int64_t r = k;
      for (int32_t d = 0; d < nd; ++d) { shape[d] = r % (maxs + 1); r /= maxs + 1; }
      for (int32_t dim = 0; dim < nd; ++dim) {
        const tfx_layout L = dense(nd, shape, (int)(k % 2));
        tsc_case c = tsc_case_make(k % 3 ? AKX_INT32 : AKX_FLOAT64, AKX_OP_ADD);
        c.dim = dim;
        c.exclusive = (int)(k % 4 == 1);
        c.with_init = (int)(k % 5 == 2);
        c.dst_layout = (int)(k % 3);
        run(&L, &c, ++seed);
      }
    }
  }
}

Test(scan_dims, random_shapes_up_to_100) {
  for (int t = 0; t < 40; ++t) {
    const uint64_t r = ref_rand(42, (uint64_t)t);
    const int32_t nd = 1 + (int32_t)(r % 4);
    int64_t shape[4];
    int64_t total = 1;
    for (int32_t d = 0; d < nd; ++d) {
      shape[d] = 1 + (int64_t)(ref_rand(43, (uint64_t)(t * 4 + d)) % (nd <= 2 ? 100 : 30));
      total *= shape[d];
    }
    (void)total;
    const tfx_layout L = dense(nd, shape, t % 2);
    tsc_case c = tsc_case_make(t % 3 == 0 ? AKX_FLOAT32 : t % 3 == 1 ? AKX_INT16 : AKX_COMPLEX64,
                               t % 4 == 3 && t % 3 != 2 ? AKX_OP_MAX : AKX_OP_ADD);
    c.dim = (int32_t)((r >> 8) % (uint64_t)nd);
    c.exclusive = t % 2;
    c.with_init = t % 3 == 1;
    if (c.exclusive && c.op == AKX_OP_MAX) c.with_init = 1;
    c.dst_layout = t % 3;
    run(&L, &c, (uint64_t)t);
  }
}

/* Sub-views with offsets and negative steps, scanned along each dim, each shape forced. */
Test(scan_dims, views_each_shape_forced) {
  const int64_t pshape[3] = {9, 40, 70};
  const int64_t start[3] = {8, 2, 5};
  const int64_t shape[3] = {4, 17, 30};
  const int64_t step[3] = {-2, 2, 2};
  const char *shapes[] = {NULL, "slices", "columns"};
  for (int s = 0; s < 3; ++s) {
    if (shapes[s]) setenv("AKX_SCAN_SHAPE", shapes[s], 1);
    else unsetenv("AKX_SCAN_SHAPE");
    cr_assert_eq(akx__context_reread_settings(ctx), AKX_SUCCESS, "%s", akx_last_error());
    for (int32_t dim = 0; dim < 3; ++dim) {
      const tfx_layout L = tfx_layout_sub(3, pshape, start, shape, step);
      tsc_case c = tsc_case_make(AKX_FLOAT32, AKX_OP_ADD);
      c.dim = dim;
      c.block_size = 64;
      c.items_per_thread = 3;
      c.exclusive = dim == 1;
      c.with_init = dim == 2;
      c.dst_layout = (s + dim) % 3;
      run(&L, &c, (uint64_t)(s * 3 + dim));
      c.dst_layout = TSC_IN_PLACE;
      run(&L, &c, (uint64_t)(s * 3 + dim + 100));
    }
  }
}

/* Reached naturally: long contiguous slices (tile scans spanning tiles), many short slices
 * (several per tile), a strided dim with many columns (one pass) and with few columns (split
 * into chunks with a carry pass). */
Test(scan_dims, natural_shapes) {
  const int64_t long_rows[2] = {3, 20000};   /* dim 1 contiguous, 5 tiles per row */
  const int64_t short_rows[2] = {3000, 7};   /* dim 1 contiguous, slices of 7 */
  const int64_t many_cols[2] = {50, 3000};   /* dim 0 strided, 3000 columns */
  const int64_t few_cols[2] = {20000, 3};    /* dim 0 strided, 3 columns: chunks */
  const struct { const int64_t *shape; int32_t dim; akx_dtype t; } cases[] = {
      {long_rows, 1, AKX_FLOAT32}, {short_rows, 1, AKX_INT64}, {many_cols, 0, AKX_FLOAT64},
      {few_cols, 0, AKX_INT32}, {few_cols, 0, AKX_FLOAT32}};
  for (int i = 0; i < 5; ++i) {
    const tfx_layout L = dense(2, cases[i].shape, 0);
    tsc_case c = tsc_case_make(cases[i].t, AKX_OP_ADD);
    c.dim = cases[i].dim;
    c.exclusive = i % 2;
    c.with_init = i >= 3;
    run(&L, &c, (uint64_t)i);
  }
}

/* AKX_DIM_ALL of an N-d view whose other dims have size 1: a strided vector. */
Test(scan_dims, dim_all_one_long_dim) {
  const int64_t pshape[3] = {1, 300, 2};
  const int64_t start[3] = {0, 299, 1}, shape[3] = {1, 100, 1}, step[3] = {1, -3, 1};
  const tfx_layout L = tfx_layout_sub(3, pshape, start, shape, step);
  tsc_case c = tsc_case_make(AKX_FLOAT64, AKX_OP_ADD);
  c.dim = AKX_DIM_ALL;
  c.block_size = 32;
  c.items_per_thread = 2;
  c.dst_layout = TSC_DST_LIKE_SRC;
  run(&L, &c, 3);
}

Test(scan_dims, dim_all_memory_order) {
  const int64_t shape[3] = {7, 9, 33};
  for (int f = 0; f < 2; ++f) {
    const tfx_layout L = dense(3, shape, f);
    tsc_case c = tsc_case_make(AKX_INT32, AKX_OP_ADD);
    c.dim = AKX_DIM_ALL;
    c.block_size = 32;
    c.items_per_thread = 5;
    c.dst_layout = TSC_DST_LIKE_SRC;
    run(&L, &c, (uint64_t)f);
    c.dst_layout = TSC_IN_PLACE;
    c.exclusive = 1;
    run(&L, &c, (uint64_t)f + 5);
  }
}
