/* akx-bench's dims cases (Julia's sum(x; dims=...), column-major, float32 and bfloat16)
 * at full size on the sim with its checks on: each result checked against the host, and a
 * table of what the sim counted (shape, grid, waves, sectors per request, bytes against the
 * minimum, model time) printed to stderr. The default run takes the cases up to 2^24
 * elements; AKX_DIMS_SEED_ALL=1 takes all of them (8192 x 8192 and 1024 x 1024 x 64 take
 * minutes on the sim). Each dtype's cases come in two tests by size: up to 2^20 elements
 * (32768 x 32 along each dim: a split rows reduction and its finish, a thread per output),
 * which the random-schedule copy runs (tests/CMakeLists.txt), and the larger ones. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akx_sim.h"
#include "fixture.h"
#include "reduce/reduce_dims.h"
#include "reference.h"

typedef struct {
  int32_t ndim;
  int64_t shape[3];
  unsigned julia_dims; /* bit d: Julia's dims = d + 1 */
} bench_case;

static const bench_case k_cases[] = {
    {3, {768, 1024, 8}, 2u},   {3, {64, 4096, 32}, 2u}, {2, {3072, 2048}, 2u},
    {2, {8192, 8192}, 2u},     {2, {4096, 4096}, 1u},   {2, {4096, 4096}, 2u},
    {2, {3, 3000000}, 2u},     {2, {32768, 32}, 1u},    {2, {32768, 32}, 2u},
    {3, {1024, 1024, 64}, 5u},
};

static void run_bench_case(akx_context *ctx, const bench_case *b, akx_dtype t, int check) {
  const size_t es = akx_dtype_size(t);
  int64_t n = 1, n_out = 1, dshape[3];
  for (int d = 0; d < b->ndim; d++) {
    n *= b->shape[d];
    dshape[d] = ((b->julia_dims >> d) & 1) ? 1 : b->shape[d];
    n_out *= dshape[d];
  }
  void *h = tfx_xmalloc((size_t)n * es);
  ref_fill(h, t, n, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_FLOAT32, n, 9, 0);
  void *d = tfx_upload(ctx, h, (size_t)n * es);
  void *o = tfx_alloc(ctx, (size_t)n_out * es);
  akx_array src = akx_array_f(d, t, b->ndim, b->shape), dst = akx_array_f(o, t, b->ndim, dshape);
  akx__reduce_dims_plan p;
  cr_assert_eq(akx__reduce_dims_plan_shape(ctx, &dst, &src, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &p),
               AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(akx_sim_counters_reset(ctx), AKX_SUCCESS);
  cr_assert_eq(akx_reduce_dims(ctx, &dst, &src, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL), AKX_SUCCESS, "%s",
               akx_last_error());
  cr_assert_eq(akx_synchronize(ctx), AKX_SUCCESS, "%s", akx_last_error());
  akx_sim_kernel_counters tot, per[8];
  int32_t count = 0;
  cr_assert_eq(akx_sim_counters_get(ctx, &tot, per, 8, &count), AKX_SUCCESS);
  /* the table row */
  char names[160] = "", grid[64];
  double waves = 0;
  for (int i = 0; i < count && i < 8; i++) {
    snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? "+" : "", per[i].kernel);
    waves += per[i].waves;
  }
  if (p.shape == AKX__DIMS_WHOLE) snprintf(grid, sizeof grid, "-");
  else snprintf(grid, sizeof grid, "%lldx%d (%d)", (long long)p.blocks_x, p.splits, p.block_size);
  const double min_bytes = (double)n * (double)es + (double)n_out * (double)es +
                           (p.splits > 1 ? 2.0 * (double)p.splits * (double)n_out * 4.0 : 0.0);
  const double lane_bytes = (double)(tot.global_load.bytes + tot.global_store.bytes);
  const double sector_bytes = 32.0 * (double)(tot.global_load.units + tot.global_store.units);
  fprintf(stderr,
          "| %lldx%lldx%lld dims=%s | %s | %s | %s | %.2f | %.2f / %.2f | %.3f | %.3f | %.1f |\n",
          (long long)b->shape[0], (long long)b->shape[1], (long long)(b->ndim > 2 ? b->shape[2] : 1),
          b->julia_dims == 1 ? "1" : b->julia_dims == 2 ? "2" : "(1,3)", akx_dtype_name(t), names, grid,
          waves, tot.global_load.requests ? (double)tot.global_load.units / (double)tot.global_load.requests : 0,
          tot.global_load.requests ? (double)tot.global_load.ideal / (double)tot.global_load.requests : 0,
          lane_bytes / min_bytes, sector_bytes / min_bytes, tot.model_us);
  /* Held to the ideal (+2%), narrow outputs too: 3 outputs of 3x3000000 (dims=2) read 2.93
   * sectors a request of bfloat16 against 2.46 before the tile's rows spanned whole sectors
   * (src/reduce/reduce_dims.c, tile_steps). A split finish with one lane an output (a thread
   * per output, 32768x32 dims=2 in two splits) folds each output's `splits` consecutive
   * partials: a warp's request spans splits x 128 bytes of them for 128 used, so the partials'
   * bytes count once more in sectors, and no more. */
  const double partial_sectors =
      p.splits > 1 && p.finish_lanes == 1 ? (double)p.splits * (double)n_out * 4.0 / 32.0 : 0.0;
  cr_expect((double)tot.global_load.units <= (double)tot.global_load.ideal * 1.02 + partial_sectors,
            "sectors %llu against the ideal %llu (+ %.0f of split partials)", (unsigned long long)tot.global_load.units,
            (unsigned long long)tot.global_load.ideal, partial_sectors);
  cr_expect(lane_bytes <= 1.05 * min_bytes, "bytes %.0f against the minimum %.0f", lane_bytes, min_bytes);
  if (check) {
    void *got = tfx_xmalloc((size_t)n_out * es);
    tfx_to_host(ctx, got, o, (size_t)n_out * es);
    akx_array hv = akx_array_f(h, t, b->ndim, b->shape);
    int64_t idx[3] = {0, 0, 0};
    int bad = 0;
    for (int64_t i = 0; i < n_out && bad < 5; i++) {
      /* column-major output order: the first dim fastest */
      ref_expect e = ref_reduce_dims_at(&hv, dshape, idx, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_FLOAT32, NULL, NULL);
      ref_expect ed = ref_expect_convert(&e, t);
      char why[300];
      if (!ref_check((char *)got + i * (int64_t)es, &ed, why, sizeof why)) {
        cr_expect_fail("output %lld: %s", (long long)i, why);
        bad++;
      }
      for (int dd = 0; dd < b->ndim; dd++) {
        if (++idx[dd] < dshape[dd]) break;
        idx[dd] = 0;
      }
    }
    free(got);
  }
  tfx_free(ctx, o);
  tfx_free(ctx, d);
  free(h);
}

/* The cases of more than `above` elements and at most `upto` (AKX_DIMS_SEED_ALL: no upper bound). */
static void bench_cases(akx_dtype t, int64_t above, int64_t upto) {
  akx_context *ctx = tfx_open();
  if (!tfx_is_sim(ctx)) {
    tfx_close(ctx);
    return;
  }
  const int all = getenv("AKX_DIMS_SEED_ALL") && atoi(getenv("AKX_DIMS_SEED_ALL")) != 0;
  fprintf(stderr, "| case | dtype | kernels | grid (block) | waves | sectors/request (ideal) | bytes/min (lanes) | bytes/min (sectors) | model us |\n");
  for (size_t i = 0; i < sizeof k_cases / sizeof k_cases[0]; i++) {
    int64_t n = 1;
    for (int d = 0; d < k_cases[i].ndim; d++) n *= k_cases[i].shape[d];
    if (n <= above || (!all && n > upto)) continue;
    run_bench_case(ctx, &k_cases[i], t, 1);
  }
  tfx_close(ctx);
}

#define SMALL (INT64_C(1) << 20)
#define DEFAULT_MAX (INT64_C(1) << 24)
Test(reduce_dims_seed, float32_to_2_20, .timeout = 1200) { bench_cases(AKX_FLOAT32, 0, SMALL); }
Test(reduce_dims_seed, float32, .timeout = 1200) { bench_cases(AKX_FLOAT32, SMALL, DEFAULT_MAX); }
Test(reduce_dims_seed, bfloat16_to_2_20, .timeout = 1200) { bench_cases(AKX_BFLOAT16, 0, SMALL); }
Test(reduce_dims_seed, bfloat16, .timeout = 1200) { bench_cases(AKX_BFLOAT16, SMALL, DEFAULT_MAX); }
