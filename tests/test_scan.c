/* akx_scan against the host reference: whole arrays (every size 0..600, tile boundaries,
 * many tiles), every dtype with ADD and MAX and the ops each supports, inclusive and
 * exclusive, with and without init, block sizes 32..256 (the scan kernels' launch bounds,
 * kernels/akx/block_limits.h) with odd and even runs, and
 * determinism under shuffled schedules. Dims: tests/test_scan_dims.c. Counters:
 * tests/test_scan_counters.c. The sim's checks are on throughout. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "scan_check.h"

static akx_context *ctx;
static void setup(void) { ctx = tfx_open(); }
static void teardown(void) { tfx_close(ctx); }
TestSuite(scan, .init = setup, .fini = teardown, .timeout = 280);

static void run(const tfx_layout *L, const tsc_case *c, uint64_t seed) {
  char msg[1024];
  cr_assert(tsc_run(ctx, L, c, seed, msg, sizeof msg), "%s", msg);
}

static const akx_dtype all_dtypes[] = {AKX_BOOL,    AKX_INT8,     AKX_UINT8,   AKX_INT16,
                                       AKX_UINT16,  AKX_INT32,    AKX_UINT32,  AKX_INT64,
                                       AKX_UINT64,  AKX_FLOAT16,  AKX_BFLOAT16, AKX_FLOAT32,
                                       AKX_FLOAT64, AKX_COMPLEX64, AKX_COMPLEX128};
#define COUNT(a) (int)(sizeof(a) / sizeof((a)[0]))

Test(scan, every_size_to_600_float32_and_int32) {
  /* 64-element tiles: sizes up to 600 take up to 10 tiles, every remainder */
  for (int64_t n = 0; n <= 600; ++n) {
    const tfx_layout L = tfx_layout_vector(n);
    tsc_case c = tsc_case_make(n % 2 ? AKX_FLOAT32 : AKX_INT32, AKX_OP_ADD);
    c.block_size = 32;
    c.items_per_thread = 2;
    c.exclusive = n % 3 == 0;
    c.with_init = n % 5 == 0;
    run(&L, &c, (uint64_t)n);
  }
}

Test(scan, tile_boundaries_default_tuning) {
  /* default tiles: 256 x 16 float32 = 4096 */
  const int64_t sizes[] = {1, 4095, 4096, 4097, 3 * 4096 + 17};
  for (int i = 0; i < COUNT(sizes); ++i) {
    const tfx_layout L = tfx_layout_vector(sizes[i]);
    tsc_case c = tsc_case_make(AKX_FLOAT32, AKX_OP_ADD);
    run(&L, &c, 11);
    c.exclusive = 1;
    c.with_init = 1;
    run(&L, &c, 12);
  }
}

/* Every dtype with every op its accumulator allows, inclusive and exclusive, init or not,
 * odd and even runs, sizes around a small tile (32 x ipt). */
Test(scan, every_dtype_and_op) {
  const akx_op ops[] = {AKX_OP_ADD, AKX_OP_MUL, AKX_OP_MIN, AKX_OP_MAX,
                        AKX_OP_AND, AKX_OP_OR,  AKX_OP_XOR};
  for (int d = 0; d < COUNT(all_dtypes); ++d) {
    for (int o = 0; o < COUNT(ops); ++o) {
      const akx_dtype acc = ref_resolve_acc(all_dtypes[d], AKX_MAP_IDENTITY, ops[o], AKX_DTYPE_AUTO);
      if (acc == REF_UNSUPPORTED) continue;
      for (int variant = 0; variant < 4; ++variant) {
        const int ipt = variant % 2 ? 3 : 4;
        const int64_t tile = 32 * ipt;
        const int64_t n = variant < 2 ? tile + 1 : 3 * tile - 1;
        const tfx_layout L = tfx_layout_vector(n);
        tsc_case c = tsc_case_make(all_dtypes[d], ops[o]);
        c.block_size = 32;
        c.items_per_thread = ipt;
        c.exclusive = variant == 1 || variant == 2;
        c.with_init = variant >= 2;
        if (c.exclusive && !c.with_init && (ops[o] == AKX_OP_MIN || ops[o] == AKX_OP_MAX))
          c.with_init = 1;
        run(&L, &c, (uint64_t)(d * 100 + o * 10 + variant));
      }
    }
  }
}

/* The source's own dtype as accumulator (wrapping int32 sums, float16 scanned in float16),
 * and a narrow dst of a wide accumulator (int8 data, int64 sums stored as int8). */
Test(scan, accumulator_and_dst_dtypes) {
  const akx_dtype narrow[] = {AKX_INT8, AKX_UINT16, AKX_INT32, AKX_FLOAT16, AKX_BFLOAT16, AKX_BOOL};
  for (int d = 0; d < COUNT(narrow); ++d) {
    const tfx_layout L = tfx_layout_vector(1000);
    tsc_case c = tsc_case_make(narrow[d], AKX_OP_ADD);
    c.dst_t = narrow[d] == AKX_BOOL ? AKX_INT64 : narrow[d]; /* wide acc, narrow dst */
    run(&L, &c, 5);
    if (narrow[d] != AKX_BOOL) {
      c.acc = narrow[d]; /* the source's own accumulator */
      c.dst_t = AKX_DTYPE_AUTO;
      run(&L, &c, 6);
    }
  }
}

Test(scan, block_sizes_and_runs) {
  const int bs[] = {32, 64, 96, 160, 224, 256};
  const int ipts[] = {1, 2, 5, 8, 13, 16};
  for (int b = 0; b < COUNT(bs); ++b)
    for (int i = 0; i < COUNT(ipts); ++i) {
      if ((int64_t)bs[b] * ipts[i] * 8 > 48 * 1024) continue;
      const int64_t tile = (int64_t)bs[b] * ipts[i];
      const tfx_layout L = tfx_layout_vector(tile * 2 + 7);
      tsc_case c = tsc_case_make(i % 2 ? AKX_FLOAT64 : AKX_INT16, i % 3 ? AKX_OP_ADD : AKX_OP_MAX);
      c.block_size = bs[b];
      c.items_per_thread = ipts[i];
      c.exclusive = b % 2;
      c.with_init = 1;
      run(&L, &c, (uint64_t)(b * 10 + i));
    }
}

/* Offset views with a step (negative too) and in place. */
Test(scan, views_and_in_place) {
  const int64_t pshape[1] = {5000};
  const int64_t starts[] = {3, 4999, 0};
  const int64_t steps[] = {2, -3, 1};
  const int64_t counts[] = {2000, 1500, 4000};
  for (int v = 0; v < 3; ++v) {
    const tfx_layout L = tfx_layout_sub(1, pshape, &starts[v], &counts[v], &steps[v]);
    tsc_case c = tsc_case_make(AKX_FLOAT32, AKX_OP_ADD);
    c.block_size = 64;
    c.items_per_thread = 4;
    run(&L, &c, (uint64_t)v);
    c.dst_layout = TSC_IN_PLACE;
    run(&L, &c, (uint64_t)v + 10);
    c.dst_layout = TSC_DST_REVERSED;
    c.exclusive = 1;
    run(&L, &c, (uint64_t)v + 20);
  }
}

/* Hundreds of tiles at 10^4: the look-back's slow path (a node not yet published) is taken,
 * and counted in the status header (kernels/akx/lookback.cuh: waits at byte 8). */
Test(scan, many_tiles_waits_counted) {
  size_t ws_bytes = 0;
  const int64_t n = 10000;
  void *data = tfx_alloc(ctx, (size_t)n * 4);
  float *host = tfx_xmalloc((size_t)n * 4);
  for (int64_t i = 0; i < n; ++i) host[i] = (float)(i % 7) - 3.0f;
  tfx_to_device(ctx, data, host, (size_t)n * 4);
  akx_array v = akx_vector(data, AKX_FLOAT32, n);
  akx_scan_opts o = akx_scan_opts_default();
  o.block_size = 32;
  o.items_per_thread = 1; /* 313 tiles */
  cr_assert_eq(akx_scan_workspace_size(ctx, &v, &v, AKX_OP_ADD, 0, &o, &ws_bytes), AKX_SUCCESS);
  void *ws = tfx_alloc(ctx, ws_bytes);
  cr_assert_eq(akx_context_set_workspace(ctx, ws, ws_bytes), AKX_SUCCESS);
  cr_assert_eq(akx_scan(ctx, &v, &v, AKX_OP_ADD, 0, &o), AKX_SUCCESS, "%s", akx_last_error());
  unsigned long long head[3];
  tfx_to_host(ctx, head, ws, sizeof head);
  /* All 313 tickets drawn, then the last tile put the ticket back to 0 for the next call. */
  cr_assert_eq(head[0], 0, "ticket %llu", head[0]);
  if (tfx_is_sim(ctx)) cr_assert_gt(head[1], 0, "no tile waited for a node: the slow path was not taken");
  fprintf(stderr, "many_tiles: %llu of 313 tiles waited for a node\n", head[1]);
  float *out = tfx_xmalloc((size_t)n * 4);
  tfx_to_host(ctx, out, data, (size_t)n * 4);
  double s = 0;
  for (int64_t i = 0; i < n; ++i) {
    s += host[i];
    cr_assert_eq(out[i], (float)s, "element %lld: %g, expected %g", (long long)i, out[i], s);
  }
  cr_assert_eq(akx_context_set_workspace(ctx, NULL, 0), AKX_SUCCESS);
  tfx_free(ctx, ws);
  tfx_free(ctx, data);
  free(host);
  free(out);
}

Test(scan, million_float32_and_float64) {
  const tfx_layout L = tfx_layout_vector(1000000);
  tsc_case c = tsc_case_make(AKX_FLOAT32, AKX_OP_ADD);
  run(&L, &c, 77);
  c = tsc_case_make(AKX_FLOAT64, AKX_OP_ADD);
  c.exclusive = 1;
  run(&L, &c, 78);
}

/* Bitwise identical float32 results of 10^5 random values under shuffled schedules: the
 * prefix of a tile never depends on which tiles happened to be finished. */
Test(scan, deterministic_under_random_schedules) {
  const int64_t n = 100000;
  float *host = tfx_xmalloc((size_t)n * 4);
  for (int64_t i = 0; i < n; ++i)
    host[i] = (float)((double)(ref_rand(3, (uint64_t)i) >> 11) / 9007199254740992.0 * 2.0 - 0.7);
  float *first = tfx_xmalloc((size_t)n * 4), *out = tfx_xmalloc((size_t)n * 4);
  for (int run_i = 0; run_i < 11; ++run_i) {
    char sched[64];
    snprintf(sched, sizeof sched, "random:%d", 1000 + run_i);
    setenv("AKX_SIM_SCHEDULE", sched, 1);
    akx_context *c2 = tfx_open();
    void *src = tfx_upload(c2, host, (size_t)n * 4);
    void *dst = tfx_alloc(c2, (size_t)n * 4);
    akx_array s = akx_vector(src, AKX_FLOAT32, n), d = akx_vector(dst, AKX_FLOAT32, n);
    akx_scan_opts o = akx_scan_opts_default();
    o.block_size = 64;
    o.items_per_thread = 4; /* 391 tiles */
    cr_assert_eq(akx_scan(c2, &d, &s, AKX_OP_ADD, AKX_DIM_ALL, &o), AKX_SUCCESS, "%s", akx_last_error());
    tfx_to_host(c2, run_i ? out : first, dst, (size_t)n * 4);
    if (run_i) cr_assert(memcmp(first, out, (size_t)n * 4) == 0, "schedule %s differs from the first", sched);
    tfx_free(c2, src);
    tfx_free(c2, dst);
    tfx_close(c2);
  }
  unsetenv("AKX_SIM_SCHEDULE");
  free(host);
  free(first);
  free(out);
}

/* int32 sums into int32 (the int64 accumulator, narrowed at the store), 10^6 + 1 elements: 245
 * tiles of the default tuning, a partial last one, far more than the sim's 16 resident blocks
 * (so blocks wait on tiles of blocks admitted later and earlier). It was 10^7 (2442 tiles, the
 * bench's size; 13 s of the file's 22 on the sim), which takes no path 245 tiles do not. */
Test(scan, million_int32_into_int32) {
  const tfx_layout L = tfx_layout_vector(1000001);
  tsc_case c = tsc_case_make(AKX_INT32, AKX_OP_ADD);
  c.dst_t = AKX_INT32;
  run(&L, &c, 99);
}
