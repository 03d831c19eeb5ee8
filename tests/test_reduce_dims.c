/* akx_reduce_dims into a one-element dst (dst ndim = src ndim, every dst dim 1): the
 * whole-array path finishing on the device. The accumulator is converted to dst's dtype
 * only at the end (partials never live in dst's type); init, fold, overwrite; contiguous
 * and strided sources; one tile, one pass, two passes; workspace reuse; refused shapes.
 * Reductions along some dims: tests/test_reduce_dims_shapes.c. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "reference.h"

static const akx_op k_ops[] = {AKX_OP_ADD, AKX_OP_MUL, AKX_OP_MIN, AKX_OP_MAX,
                               AKX_OP_AND, AKX_OP_OR,  AKX_OP_XOR};
static const akx_map k_maps[] = {AKX_MAP_IDENTITY, AKX_MAP_ABS, AKX_MAP_SQUARE, AKX_MAP_NONZERO};
#define NDTYPES 15
#define MSG 2048
/* The explicit options of tuned(): a tile of 256 threads x 16 items, 64 blocks in the first
 * pass (PASS: 262144 elements; beyond it every block loops over several tiles). Without an
 * explicit target_blocks the pass was the tuning table's (528 blocks on the h200 profile: 2.2
 * million elements), which sizes near 256 tiles did not reach; the grid is min(tiles,
 * target_blocks) whatever the number, and 64 partials still finish across the last block's
 * warps. */
#define TILE 4096
#define PASS_BLOCKS 64
#define PASS (TILE * PASS_BLOCKS)

static tfx_case tuned(akx_map m, akx_op op) {
  tfx_case c = tfx_case_make(m, op);
  c.block_size = 256;
  c.items_per_thread = 16;
  c.target_blocks = PASS_BLOCKS;
  return c;
}

/* host data -> reduce_dims into dst of dtype dst_t, checked */
static int run_values(akx_context *ctx, akx_dtype t, const void *h, int64_t n, const tfx_case *c,
                      akx_dtype dst_t, const void *prev, char *msg, size_t len) {
  tfx_layout L = tfx_layout_vector(n);
  return tfx_run(ctx, t, h, &L, c, dst_t, prev, msg, len);
}

/* ---- the accumulator's dtype as dst, for every source dtype, op and map -------------------- */

Test(reduce_dims, every_dtype_op_map_into_acc_dtype) {
  akx_context *ctx = tfx_open();
  tfx_tally tally = {0};
  char msg[MSG];
  static const int64_t sizes[] = {1, 300, 5000};
  for (int t = 0; t < NDTYPES; t++)
    for (int o = 0; o < 7; o++)
      for (int m = 0; m < 4; m++) {
        akx_dtype acc = ref_resolve_acc((akx_dtype)t, k_maps[m], k_ops[o], AKX_DTYPE_AUTO);
        if ((int)acc == (int)REF_UNSUPPORTED) {
          tfx_layout L = tfx_layout_vector(4);
          tfx_case c = tfx_case_make(k_maps[m], k_ops[o]);
          tfx_note(&tally,
                   tfx_fill_run(ctx, (akx_dtype)t, &L, &c, 1, 0, AKX_FLOAT64, NULL, msg,
                                sizeof msg),
                   "%s", msg);
          continue;
        }
        for (int s = 0; s < 3; s++) {
          tfx_layout L = tfx_layout_vector(sizes[s]);
          tfx_case c = tfx_case_make(k_maps[m], k_ops[o]);
          tfx_note(&tally,
                   tfx_fill_run(ctx, (akx_dtype)t, &L, &c, 100u * (uint64_t)t + (uint64_t)(o * 4 + m),
                                0, acc, NULL, msg, sizeof msg),
                   "%s", msg);
        }
      }
  tfx_done(&tally);
  tfx_close(ctx);
}

/* ---- conversion of the final accumulator into every dst dtype ------------------------------ */

static void every_dst(akx_context *ctx, tfx_tally *tally, akx_dtype t, const void *h, int64_t n,
                      const tfx_case *c, const char *what) {
  char msg[MSG];
  for (int d = 0; d < NDTYPES; d++)
    tfx_note(tally, run_values(ctx, t, h, n, c, (akx_dtype)d, NULL, msg, sizeof msg), "%s: %s",
             what, msg);
}

Test(reduce_dims, dst_every_dtype_from_integer_acc) {
  akx_context *ctx = tfx_open();
  tfx_tally tally = {0};
  static const int64_t sizes[] = {1, 300, 4097};
  for (int s = 0; s < 3; s++) {
    const int64_t n = sizes[s];
    int32_t *h = tfx_xmalloc((size_t)n * 4);
    tfx_case c = tfx_case_make(AKX_MAP_IDENTITY, AKX_OP_ADD); /* int64 accumulator */
    ref_fill_plain(h, AKX_INT32, n, 5u + (uint64_t)s);           /* small sums */
    every_dst(ctx, &tally, AKX_INT32, h, n, &c, "int32 small sum");
    ref_fill(h, AKX_INT32, n, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_INT64, n, 9u + (uint64_t)s, 0);
    every_dst(ctx, &tally, AKX_INT32, h, n, &c, "int32 full-range sum");
    for (int64_t i = 0; i < n; i++) h[i] = (int32_t)(i % 2 ? 300 : -1); /* wraps in 8 bits */
    every_dst(ctx, &tally, AKX_INT32, h, n, &c, "int32 wrapping sum");
    tfx_case x = tfx_case_make(AKX_MAP_IDENTITY, AKX_OP_MAX);
    every_dst(ctx, &tally, AKX_INT32, h, n, &x, "int32 max");
    free(h);
  }
  /* uint64 accumulators near the top of the range */
  uint64_t u[3] = {UINT64_MAX - 5, 2, 1};
  tfx_case c = tfx_case_make(AKX_MAP_IDENTITY, AKX_OP_ADD);
  every_dst(ctx, &tally, AKX_UINT64, u, 3, &c, "uint64 sum wrapping to 2^64 - 3 + ...");
  every_dst(ctx, &tally, AKX_UINT64, u, 1, &c, "uint64 near 2^64");
  /* int64 sums that float16 / bfloat16 / float32 must round once, to nearest even */
  int64_t v[][2] = {{2049, 0},  {2051, 0},  {65519, 0}, {65520, 0},
                    {257, 0},   {(INT64_C(1) << 24) + 1, 0}, {(INT64_C(1) << 60) + (INT64_C(1) << 36), 1},
                    {-65520, 0}, {-129, 0}};
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
    every_dst(ctx, &tally, AKX_INT64, v[i], 2, &c, "int64 rounding");
  tfx_done(&tally);
  tfx_close(ctx);
}

Test(reduce_dims, dst_every_dtype_from_float_acc) {
  akx_context *ctx = tfx_open();
  tfx_tally tally = {0};
  tfx_case add = tfx_case_make(AKX_MAP_IDENTITY, AKX_OP_ADD);
  tfx_case mx = tfx_case_make(AKX_MAP_IDENTITY, AKX_OP_MAX);
  static const int64_t sizes[] = {1, 300, 4097};
  for (int s = 0; s < 3; s++) {
    const int64_t n = sizes[s];
    float *h = tfx_xmalloc((size_t)n * 4);
    ref_fill(h, AKX_FLOAT32, n, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_FLOAT32, n, 3u + (uint64_t)s, 0);
    every_dst(ctx, &tally, AKX_FLOAT32, h, n, &add, "float32 sum");
    for (int64_t i = 0; i < n; i++) h[i] = 134217728.0f; /* 2^27: the sum leaves int32 */
    every_dst(ctx, &tally, AKX_FLOAT32, h, n, &add, "float32 sum of 2^27");
    for (int64_t i = 0; i < n; i++) h[i] = -134217728.0f * (float)(i % 3 + 1);
    every_dst(ctx, &tally, AKX_FLOAT32, h, n, &add, "float32 large negative sum");
    for (int64_t i = 0; i < n; i++) h[i] = (i == n / 2) ? -3.75f : 0.0f;
    every_dst(ctx, &tally, AKX_FLOAT32, h, n, &add, "float32 sum -3.75");
    for (int64_t i = 0; i < n; i++) h[i] = (i == n - 1) ? 0.75f : -0.0f;
    every_dst(ctx, &tally, AKX_FLOAT32, h, n, &add, "float32 sum 0.75");
    for (int64_t i = 0; i < n; i++) h[i] = (float)i - 7.5f;
    h[n / 3] = NAN;
    every_dst(ctx, &tally, AKX_FLOAT32, h, n, &mx, "float32 max with NaN");
    for (int64_t i = 0; i < n; i++) h[i] = -INFINITY;
    every_dst(ctx, &tally, AKX_FLOAT32, h, n, &mx, "float32 max -inf");
    free(h);
  }
  /* float64 -> float16 / bfloat16 rounds once (not through float32) */
  double d1[3] = {1.0, 0x1p-11, 0x1p-40}; /* just above a float16 midpoint */
  every_dst(ctx, &tally, AKX_FLOAT64, d1, 3, &add, "float64 1 + 2^-11 + 2^-40");
  double d2[3] = {1.0, 0x1p-8, 0x1p-40}; /* just above a bfloat16 midpoint */
  every_dst(ctx, &tally, AKX_FLOAT64, d2, 3, &add, "float64 1 + 2^-8 + 2^-40");
  double d3[2] = {65504.0, 15.9999};
  every_dst(ctx, &tally, AKX_FLOAT64, d3, 2, &add, "float64 just under 65520");
  double d4[2] = {65504.0, 16.0};
  every_dst(ctx, &tally, AKX_FLOAT64, d4, 2, &add, "float64 65520 (float16 inf)");
  double d5[2] = {0x1p-25, 0x1p-26}; /* float16 subnormal rounding */
  every_dst(ctx, &tally, AKX_FLOAT64, d5, 2, &add, "float64 3 * 2^-26");
  double d6[1] = {-1e300};
  every_dst(ctx, &tally, AKX_FLOAT64, d6, 1, &add, "float64 -1e300");
  double d7[1] = {NAN};
  every_dst(ctx, &tally, AKX_FLOAT64, d7, 1, &add, "float64 NaN sum");
  /* what the reference expects in three of these, written out (so the reference is checked
   * too) */
  cr_assert_eq(ref_f16_from_ld(1.0L + 0x1p-11L + 0x1p-40L), 0x3C01);
  cr_assert_eq(ref_bf16_from_ld(1.0L + 0x1p-8L + 0x1p-40L), 0x3F81);
  cr_assert_eq(ref_f16_from_ld(65520.0L), 0x7C00);
  tfx_done(&tally);
  tfx_close(ctx);
}

Test(reduce_dims, dst_every_dtype_from_complex_acc) {
  akx_context *ctx = tfx_open();
  tfx_tally tally = {0};
  tfx_case add = tfx_case_make(AKX_MAP_IDENTITY, AKX_OP_ADD);
  float c1[4] = {2.5f, -1.0f, 1.25f, 4.0f}; /* (3.75, 3) */
  every_dst(ctx, &tally, AKX_COMPLEX64, c1, 2, &add, "complex64 (3.75, 3)");
  float c2[4] = {0.0f, 5.0f, -0.0f, 0.0f}; /* (0, 5): real part 0, but nonzero */
  every_dst(ctx, &tally, AKX_COMPLEX64, c2, 2, &add, "complex64 (0, 5)");
  double c3[4] = {-300.5, 0.0, 0.0, 0.0};
  every_dst(ctx, &tally, AKX_COMPLEX128, c3, 2, &add, "complex128 (-300.5, 0)");
  static const int64_t sizes[] = {7, 300, 4097};
  for (int s = 0; s < 3; s++) {
    double *h = tfx_xmalloc((size_t)sizes[s] * 16);
    ref_fill(h, AKX_COMPLEX128, sizes[s], AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_COMPLEX128, sizes[s],
             8u + (uint64_t)s, 0);
    every_dst(ctx, &tally, AKX_COMPLEX128, h, sizes[s], &add, "complex128 sum");
    tfx_case sq = tfx_case_make(AKX_MAP_SQUARE, AKX_OP_ADD);
    every_dst(ctx, &tally, AKX_COMPLEX128, h, sizes[s], &sq, "sum |complex128|^2");
    free(h);
  }
  tfx_done(&tally);
  tfx_close(ctx);
}

/* ---- float16 in a float32 accumulator ------------------------------------------------------ */

static long double f16_sum(const uint16_t *h, int64_t n) {
  long double s = 0;
  for (int64_t i = 0; i < n; i++) s += ref_f16_to_ld(h[i]);
  return s;
}

Test(reduce_dims, float16_sum_past_65504) {
  akx_context *ctx = tfx_open();
  tfx_tally tally = {0};
  char msg[MSG];
  static const int64_t sizes[] = {1000, TILE + 1, PASS + 1};
  for (int s = 0; s < 3; s++) {
    const int64_t n = sizes[s];
    uint16_t *h = tfx_xmalloc((size_t)n * 2);
    /* integers lo..lo+7, with lo making the sum pass 65520 while it stays below 2^24
     * (exact in float32) */
    const int64_t lo = (70000 + n - 1) / n;
    cr_assert((lo + 7) * n < 16777216);
    for (int64_t i = 0; i < n; i++)
      h[i] = ref_f16_from_ld((long double)(lo + (int64_t)(ref_rand(2, (uint64_t)i) % 8)));
    const long double want = f16_sum(h, n);
    cr_assert(want > 65520 && want < 16777216.0L);
    tfx_case c = tuned(AKX_MAP_IDENTITY, AKX_OP_ADD);
    static const akx_dtype dsts[] = {AKX_FLOAT32, AKX_FLOAT64, AKX_INT32, AKX_FLOAT16,
                                     AKX_BFLOAT16, AKX_COMPLEX64};
    for (int d = 0; d < 6; d++)
      tfx_note(&tally, run_values(ctx, AKX_FLOAT16, h, n, &c, dsts[d], NULL, msg, sizeof msg),
               "%s", msg);
    /* written out: float32 dst exact, float16 dst +inf */
    uint16_t *d = tfx_upload(ctx, h, (size_t)n * 2);
    akx_array src = akx_vector(d, AKX_FLOAT16, n);
    float *r32 = tfx_alloc(ctx, 4);
    uint16_t *r16 = tfx_alloc(ctx, 2);
    akx_array dst32 = akx_vector(r32, AKX_FLOAT32, 1), dst16 = akx_vector(r16, AKX_FLOAT16, 1);
    cr_assert_eq(akx_reduce_dims(ctx, &dst32, &src, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL),
                 AKX_SUCCESS, "%s", akx_last_error());
    cr_assert_eq(akx_reduce_dims(ctx, &dst16, &src, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL),
                 AKX_SUCCESS, "%s", akx_last_error());
    float g32;
    uint16_t g16;
    tfx_to_host(ctx, &g32, r32, 4);
    tfx_to_host(ctx, &g16, r16, 2);
    cr_assert((long double)g32 == want, "n %lld: float32 dst %.9g, expected %.9Lg", (long long)n,
              g32, want);
    cr_assert_eq(g16, 0x7C00, "n %lld: float16 dst 0x%04X, expected +inf (0x7C00)", (long long)n,
                 g16);
    tfx_free(ctx, r16);
    tfx_free(ctx, r32);
    tfx_free(ctx, d);
    free(h);
  }
  tfx_done(&tally);
  tfx_close(ctx);
}

/* Partials far beyond float16's range, a final value inside it: a dst of float16 is right
 * only if no partial was ever stored as float16. Tiles alternate +1024 / -1024 (each
 * block's partial is +-2^22), the total is the last element. */
Test(reduce_dims, float16_partials_never_in_dst_type) {
  akx_context *ctx = tfx_open();
  tfx_tally tally = {0};
  char msg[MSG];
  static const int64_t sizes[] = {2 * TILE + 1, PASS + 1, 2 * PASS + 1};
  for (int s = 0; s < 3; s++) {
    const int64_t n = sizes[s];
    uint16_t *h = tfx_xmalloc((size_t)n * 2);
    for (int64_t i = 0; i < n; i++)
      h[i] = ref_f16_from_ld(((i / TILE) % 2) ? -1024.0L : 1024.0L);
    h[n - 1] = ref_f16_from_ld(1000.0L); /* total = 1000 + (0 or one stray +1024 tile) */
    const long double want = f16_sum(h, n);
    cr_assert(fabsl(want) < 65504);
    tfx_case c = tuned(AKX_MAP_IDENTITY, AKX_OP_ADD);
    tfx_note(&tally, run_values(ctx, AKX_FLOAT16, h, n, &c, AKX_FLOAT16, NULL, msg, sizeof msg),
             "%s", msg);
    tfx_note(&tally, run_values(ctx, AKX_FLOAT16, h, n, &c, AKX_INT8, NULL, msg, sizeof msg),
             "%s", msg);
    c.block_size = 64; /* other tiles, more passes over the grid */
    c.items_per_thread = 4;
    c.target_blocks = 5;
    tfx_note(&tally, run_values(ctx, AKX_FLOAT16, h, n, &c, AKX_FLOAT16, NULL, msg, sizeof msg),
             "%s", msg);
    free(h);
  }
  tfx_done(&tally);
  tfx_close(ctx);
}

/* ---- init, fold, overwrite ----------------------------------------------------------------- */

static void init_fold_into(akx_dtype src_t, akx_dtype dst_t) {
  static const int64_t sizes[] = {0, 1, 300, TILE + 1, PASS + 1};
  akx_context *ctx = tfx_open();
  tfx_tally tally = {0};
  char msg[MSG];
  for (int o = 0; o < 7; o++) {
    akx_dtype acc = ref_resolve_acc(src_t, AKX_MAP_IDENTITY, k_ops[o], AKX_DTYPE_AUTO);
    if ((int)acc == (int)REF_UNSUPPORTED) continue;
    for (int s = 0; s < 5; s++) {
      if (sizes[s] > PASS && o > 3) continue;
      for (int variant = 0; variant < 4; variant++) { /* overwrite, init, fold, both */
        int minmax = k_ops[o] == AKX_OP_MIN || k_ops[o] == AKX_OP_MAX;
        if (sizes[s] == 0 && minmax && (variant == 0 || variant == 2)) continue;
        unsigned char init[16], prev[16];
        memset(init, 0, sizeof init);
        memset(prev, 0, sizeof prev);
        ref_fill_plain(init, acc, 1, 50u + (uint64_t)(o * 5 + s));
        ref_fill_plain(prev, dst_t, 1, 60u + (uint64_t)(o * 5 + s));
        tfx_case c = tuned(AKX_MAP_IDENTITY, k_ops[o]);
        c.init = (variant & 1) ? init : NULL;
        c.fold = variant >= 2;
        tfx_layout L = tfx_layout_vector(sizes[s]);
        tfx_note(&tally,
                 tfx_fill_run(ctx, src_t, &L, &c, 70u + (uint64_t)(o * 5 + s), 0, dst_t,
                              c.fold ? prev : NULL, msg, sizeof msg),
                 "%s", msg);
      }
    }
  }
  tfx_done(&tally);
  tfx_close(ctx);
}

Test(reduce_dims, init_fold_float32_into_float32) { init_fold_into(AKX_FLOAT32, AKX_FLOAT32); }
Test(reduce_dims, init_fold_float32_into_float16) { init_fold_into(AKX_FLOAT32, AKX_FLOAT16); }
Test(reduce_dims, init_fold_float16_into_float64) { init_fold_into(AKX_FLOAT16, AKX_FLOAT64); }
Test(reduce_dims, init_fold_int32_into_int16) { init_fold_into(AKX_INT32, AKX_INT16); }
Test(reduce_dims, init_fold_int8_into_uint8) { init_fold_into(AKX_INT8, AKX_UINT8); }
Test(reduce_dims, init_fold_uint16_into_float32) { init_fold_into(AKX_UINT16, AKX_FLOAT32); }
Test(reduce_dims, init_fold_float64_into_int32) { init_fold_into(AKX_FLOAT64, AKX_INT32); }
Test(reduce_dims, init_fold_bool_into_bool) { init_fold_into(AKX_BOOL, AKX_BOOL); }
Test(reduce_dims, init_fold_complex64_into_complex64) {
  init_fold_into(AKX_COMPLEX64, AKX_COMPLEX64);
}

Test(reduce_dims, init_fold_overwrite_values) {
  akx_context *ctx = tfx_open();
  float x[4] = {1.5f, 2.0f, -0.25f, 4.0f}; /* sum 7.25 */
  float *d = tfx_upload(ctx, x, sizeof x);
  akx_array src = akx_vector(d, AKX_FLOAT32, 4);
  int16_t prev = 7;
  int16_t *dd = tfx_upload(ctx, &prev, 2);
  akx_array dst = akx_vector(dd, AKX_INT16, 1);
  akx_reduce_opts o = akx_reduce_opts_default();
  int16_t got;
  /* overwrite: trunc(7.25) = 7 (the old 7 is not added) */
  prev = -999;
  tfx_to_device(ctx, dd, &prev, 2);
  cr_assert_eq(akx_reduce_dims(ctx, &dst, &src, AKX_MAP_IDENTITY, AKX_OP_ADD, &o), AKX_SUCCESS,
               "%s", akx_last_error());
  tfx_to_host(ctx, &got, dd, 2);
  cr_assert_eq(got, 7, "overwrite: got %d, expected 7", got);
  /* fold: trunc(7 + 7.25) = 14 (combined in the float32 accumulator, not truncated first) */
  o.fold = 1;
  cr_assert_eq(akx_reduce_dims(ctx, &dst, &src, AKX_MAP_IDENTITY, AKX_OP_ADD, &o), AKX_SUCCESS,
               "%s", akx_last_error());
  tfx_to_host(ctx, &got, dd, 2);
  cr_assert_eq(got, 14, "fold: got %d, expected 14", got);
  /* init 0.75 and fold: trunc(14 + 0.75 + 7.25) = 22 */
  float init = 0.75f;
  o.init = &init;
  cr_assert_eq(akx_reduce_dims(ctx, &dst, &src, AKX_MAP_IDENTITY, AKX_OP_ADD, &o), AKX_SUCCESS,
               "%s", akx_last_error());
  tfx_to_host(ctx, &got, dd, 2);
  cr_assert_eq(got, 22, "init + fold: got %d, expected 22", got);
  /* fold with MIN: min(22, 1.5, ...) keeps -0.25 -> 0 */
  o.init = NULL;
  cr_assert_eq(akx_reduce_dims(ctx, &dst, &src, AKX_MAP_IDENTITY, AKX_OP_MIN, &o), AKX_SUCCESS,
               "%s", akx_last_error());
  tfx_to_host(ctx, &got, dd, 2);
  cr_assert_eq(got, 0, "fold MIN: got %d, expected trunc(-0.25) = 0", got);
  /* empty src with fold and no init: dst keeps its value (ADD's neutral element) */
  prev = 123;
  tfx_to_device(ctx, dd, &prev, 2);
  akx_array empty = akx_vector(d, AKX_FLOAT32, 0);
  cr_assert_eq(akx_reduce_dims(ctx, &dst, &empty, AKX_MAP_IDENTITY, AKX_OP_ADD, &o), AKX_SUCCESS,
               "%s", akx_last_error());
  tfx_to_host(ctx, &got, dd, 2);
  cr_assert_eq(got, 123, "fold of an empty sum: got %d, expected 123", got);
  o.fold = 0;
  cr_assert_eq(akx_reduce_dims(ctx, &dst, &empty, AKX_MAP_IDENTITY, AKX_OP_ADD, &o), AKX_SUCCESS,
               "%s", akx_last_error());
  tfx_to_host(ctx, &got, dd, 2);
  cr_assert_eq(got, 0, "overwrite with an empty sum: got %d, expected 0", got);
  tfx_free(ctx, dd);
  tfx_free(ctx, d);
  tfx_close(ctx);
}

/* ---- contiguous and strided sources ---------------------------------------------------------- */

static int make_layouts(tfx_layout *out, const char **names) {
  int k = 0;
  {
    int64_t ps[2] = {37, 50}, st[2] = {2, 3}, sh[2] = {30, 40}, sp[2] = {1, 1};
    names[k] = "2-d rows with gaps";
    out[k++] = tfx_layout_sub(2, ps, st, sh, sp);
    names[k] = "2-d transposed";
    out[k] = out[k - 1];
    out[k].shape[0] = 40;
    out[k].strides[0] = out[k - 1].strides[1];
    out[k].shape[1] = 30;
    out[k].strides[1] = out[k - 1].strides[0];
    k++;
  }
  {
    int64_t ps[3] = {7, 11, 13}, st[3] = {6, 1, 12}, sh[3] = {6, 5, 6}, sp[3] = {-1, 2, -2};
    names[k] = "3-d mixed signs";
    out[k++] = tfx_layout_sub(3, ps, st, sh, sp);
  }
  {
    int64_t ps[1] = {2000}, st[1] = {1999}, sh[1] = {2000}, sp[1] = {-1};
    names[k] = "1-d reversed";
    out[k++] = tfx_layout_sub(1, ps, st, sh, sp);
  }
  {
    tfx_layout L = tfx_layout_vector(5000);
    L.parent_n = 2;
    L.offset = 1;
    L.strides[0] = 0;
    names[k] = "broadcast element x5000";
    out[k++] = L;
  }
  {
    int64_t ps[2] = {30, 40}, st[2] = {0, 0}, sh[2] = {30, 40}, sp[2] = {1, 1};
    names[k] = "2-d contiguous";
    out[k++] = tfx_layout_sub(2, ps, st, sh, sp);
  }
  {
    tfx_layout L;
    memset(&L, 0, sizeof L);
    L.parent_n = 3;
    L.offset = 2;
    names[k] = "0-d";
    out[k++] = L;
  }
  { /* 42000 elements: 11 tiles of the default general path, 165 of the small one (v == 1 in
     * strided_into()): several blocks, each over several tiles (was 1050x1000) */
    int64_t ps[2] = {220, 224}, st[2] = {5, 7}, sh[2] = {210, 200}, sp[2] = {1, 1};
    names[k] = "2-d 210x200 with gaps";
    out[k++] = tfx_layout_sub(2, ps, st, sh, sp);
  }
  return k;
}

static void strided_into(akx_dtype src_t, akx_map m, akx_op op, akx_dtype dst_t) {
  tfx_layout ls[16];
  const char *names[16];
  int nl = make_layouts(ls, names);
  akx_context *ctx = tfx_open();
  tfx_tally tally = {0};
  char msg[MSG];
  for (int i = 0; i < nl; i++)
    for (int v = 0; v < 2; v++) {
      tfx_case c = tfx_case_make(m, op);
      if (v) {
        c.block_size = 64;
        c.items_per_thread = 4;
        c.target_blocks = 3;
      }
      tfx_note(&tally,
               tfx_fill_run(ctx, src_t, &ls[i], &c, 40u + (uint64_t)i, 0, dst_t, NULL, msg,
                            sizeof msg),
               "%s: %s", names[i], msg);
    }
  tfx_done(&tally);
  tfx_close(ctx);
}

Test(reduce_dims, strided_float32_sum_into_float64) {
  strided_into(AKX_FLOAT32, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_FLOAT64);
}
Test(reduce_dims, strided_int8_sum_into_int16) {
  strided_into(AKX_INT8, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_INT16);
}
Test(reduce_dims, strided_float16_max_into_float16) {
  strided_into(AKX_FLOAT16, AKX_MAP_ABS, AKX_OP_MAX, AKX_FLOAT16);
}
Test(reduce_dims, strided_complex64_sum_into_complex128) {
  strided_into(AKX_COMPLEX64, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_COMPLEX128);
}
Test(reduce_dims, strided_uint32_count_into_int32) {
  strided_into(AKX_UINT32, AKX_MAP_NONZERO, AKX_OP_ADD, AKX_INT32);
}

/* ---- one tile, one pass, two passes -------------------------------------------------------- */

static void sizes_into(akx_dtype src_t, akx_op op, akx_dtype dst_t) {
  static const int64_t sizes[] = {TILE - 1, TILE, TILE + 1, PASS - 1, PASS, PASS + 1,
                                  2 * PASS + 1};
  akx_context *ctx = tfx_open();
  tfx_tally tally = {0};
  char msg[MSG];
  for (int s = 0; s < 7; s++)
    for (int fold = 0; fold < 2; fold++) {
      if (fold && sizes[s] > PASS && sizes[s] != PASS + 1) continue;
      unsigned char prev[16] = {0};
      ref_fill_plain(prev, dst_t, 1, 3);
      tfx_case c = tuned(AKX_MAP_IDENTITY, op);
      c.fold = fold;
      tfx_layout L = tfx_layout_vector(sizes[s]);
      tfx_note(&tally,
               tfx_fill_run(ctx, src_t, &L, &c, 20u + (uint64_t)s, 0, dst_t, fold ? prev : NULL,
                            msg, sizeof msg),
               "%s", msg);
    }
  tfx_done(&tally);
  tfx_close(ctx);
}

Test(reduce_dims, tile_pass_float32_sum, .timeout = 300) {
  sizes_into(AKX_FLOAT32, AKX_OP_ADD, AKX_FLOAT32);
}
Test(reduce_dims, tile_pass_int32_sum_into_int64, .timeout = 300) {
  sizes_into(AKX_INT32, AKX_OP_ADD, AKX_INT64);
}
Test(reduce_dims, tile_pass_float64_min_into_float32, .timeout = 300) {
  sizes_into(AKX_FLOAT64, AKX_OP_MIN, AKX_FLOAT32);
}

/* ---- workspace ------------------------------------------------------------------------------- */

static akx_context_info_t info_of(akx_context *ctx) {
  akx_context_info_t info;
  memset(&info, 0, sizeof info);
  cr_assert_eq(akx_context_info(ctx, &info), AKX_SUCCESS, "%s", akx_last_error());
  return info;
}

Test(reduce_dims, workspace_reuse_caller_buffer, .timeout = 300) {
  akx_context *ctx = tfx_open();
  char msg[MSG];
  const int64_t n = PASS + 1;
  float *h = tfx_xmalloc((size_t)n * 4);
  ref_fill(h, AKX_FLOAT32, n, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_FLOAT32, n, 1, 0);
  float *d = tfx_upload(ctx, h, (size_t)n * 4);
  akx_array src = akx_vector(d, AKX_FLOAT32, n);
  akx_reduce_opts o = akx_reduce_opts_default();
  o.block_size = 256;
  o.items_per_thread = 16;
  o.target_blocks = PASS_BLOCKS;
  size_t need = 0;
  cr_assert_eq(akx_mapreduce_workspace_size(ctx, &src, AKX_MAP_IDENTITY, AKX_OP_ADD, &o, &need),
               AKX_SUCCESS, "%s", akx_last_error());
  const size_t bytes = need * 2 + 4096;
  void *ws = tfx_alloc(ctx, bytes);
  cr_assert_eq(akx_context_set_workspace(ctx, ws, bytes), AKX_SUCCESS, "%s", akx_last_error());
  akx_context_info_t before = info_of(ctx);
  for (int i = 0; i < 4; i++) {
    tfx_case c = tuned(AKX_MAP_IDENTITY, i % 2 ? AKX_OP_MAX : AKX_OP_ADD);
    tfx_layout L = tfx_layout_vector(n - i * 1000);
    L.parent_n = n;
    cr_assert(tfx_run(ctx, AKX_FLOAT32, h, &L, &c, i % 2 ? AKX_FLOAT16 : AKX_FLOAT64, NULL, msg,
                      sizeof msg),
              "call %d with a caller workspace: %s", i, msg);
    akx_context_info_t now = info_of(ctx);
    cr_assert_eq(now.workspace_allocations, before.workspace_allocations,
                 "call %d allocated (%lld -> %lld)", i, (long long)before.workspace_allocations,
                 (long long)now.workspace_allocations);
    cr_assert_eq(now.workspace_bytes, (int64_t)bytes);
  }
  /* too small: WORKSPACE_TOO_SMALL, dst untouched */
  double sentinel = -4242.5;
  double *dd = tfx_upload(ctx, &sentinel, 8);
  akx_array dst = akx_vector(dd, AKX_FLOAT64, 1);
  cr_assert_eq(akx_context_set_workspace(ctx, ws, need - 1), AKX_SUCCESS, "%s", akx_last_error());
  akx_status s = akx_reduce_dims(ctx, &dst, &src, AKX_MAP_IDENTITY, AKX_OP_ADD, &o);
  cr_assert_eq(s, AKX_ERROR_WORKSPACE_TOO_SMALL, "%zu bytes (1 short): %s (%s)", need - 1,
               akx_status_string(s), akx_last_error());
  cr_assert(strstr(akx_last_error(), "workspace") != NULL, "%s", akx_last_error());
  double got = 0;
  cr_assert_eq(akx_synchronize(ctx), AKX_SUCCESS);
  tfx_to_host(ctx, &got, dd, 8);
  cr_assert(got == sentinel, "dst was written (%g)", got);
  tfx_free(ctx, dd);
  cr_assert_eq(akx_context_set_workspace(ctx, NULL, 0), AKX_SUCCESS);
  tfx_free(ctx, ws);
  tfx_free(ctx, d);
  free(h);
  tfx_close(ctx);
}

/* ---- shapes refused ------------------------------------------------------------------------ */

static void expect_refused(akx_context *ctx, const akx_array *dst, const akx_array *src,
                           akx_status want, const char *what) {
  unsigned char before[64], after[64];
  memset(before, 0x5A, sizeof before);
  tfx_to_device(ctx, dst->data, before, sizeof before);
  akx_status s = akx_reduce_dims(ctx, dst, src, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL);
  cr_expect_eq(s, want, "%s: %s, expected %s (%s)", what, akx_status_string(s),
               akx_status_string(want), akx_last_error());
  cr_expect(strstr(akx_last_error(), "dst") != NULL, "%s: the sentence names dst: \"%s\"", what,
            akx_last_error());
  akx_synchronize(ctx);
  tfx_to_host(ctx, after, dst->data, sizeof after);
  cr_expect(memcmp(before, after, sizeof after) == 0, "%s: dst was written", what);
}

Test(reduce_dims, refused_shapes) {
  akx_context *ctx = tfx_open();
  float *d = tfx_alloc(ctx, 20 * 4);
  float *dd = tfx_alloc(ctx, 64);
  int64_t s45[2] = {4, 5}, s41[2] = {4, 1}, s15[2] = {1, 5}, s11[2] = {1, 1}, s1[1] = {1};
  int64_t s20[1] = {20}, s3[1] = {3}, s111[3] = {1, 1, 1};
  akx_array src = akx_array_c(d, AKX_FLOAT32, 2, s45);
  akx_array dst;
  /* reductions along some dims are taken (tests/test_reduce_dims_shapes.c checks them) */
  dst = akx_array_c(dd, AKX_FLOAT32, 2, s41);
  cr_assert_eq(akx_reduce_dims(ctx, &dst, &src, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL), AKX_SUCCESS,
               "dst {4, 1} of src {4, 5}: %s", akx_last_error());
  dst = akx_array_c(dd, AKX_FLOAT32, 2, s15);
  cr_assert_eq(akx_reduce_dims(ctx, &dst, &src, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL), AKX_SUCCESS,
               "dst {1, 5} of src {4, 5}: %s", akx_last_error());
  dst = akx_array_c(dd, AKX_FLOAT32, 1, s1);
  expect_refused(ctx, &dst, &src, AKX_ERROR_INVALID_ARGUMENT, "dst ndim 1, src ndim 2");
  dst = akx_array_c(dd, AKX_FLOAT32, 3, s111);
  expect_refused(ctx, &dst, &src, AKX_ERROR_INVALID_ARGUMENT, "dst ndim 3, src ndim 2");
  akx_array v = akx_array_c(d, AKX_FLOAT32, 1, s20);
  dst = akx_array_c(dd, AKX_FLOAT32, 1, s3);
  expect_refused(ctx, &dst, &v, AKX_ERROR_INVALID_ARGUMENT, "dst {3} of src {20}");
  dst = akx_array_c(dd, AKX_FLOAT32, 2, s11);
  dst.shape[0] = 2;
  dst.strides[0] = 0; /* a repeated dst element */
  expect_refused(ctx, &dst, &src, AKX_ERROR_INVALID_ARGUMENT, "dst with stride 0");
  /* and the accepted one-element dst, for contrast */
  dst = akx_array_c(dd, AKX_FLOAT32, 2, s11);
  cr_assert_eq(akx_reduce_dims(ctx, &dst, &src, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL), AKX_SUCCESS,
               "%s", akx_last_error());
  tfx_free(ctx, dd);
  tfx_free(ctx, d);
  tfx_close(ctx);
}
