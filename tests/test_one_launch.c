/* Calls in one launch (docs/scan_tiles.md and docs/reduce_whole.md, "One launch per call"),
 * counted by the sim, every value checked against a host reference:
 *  - a tile scan and a findall are one launch on a fresh workspace (zeroed when it is
 *    allocated or set) and once the workspace holds their status (findall: plus the copy of
 *    its count, which is no launch), whatever the size below the last one; a reset launch
 *    only where the buffer holds something else (another family's partials);
 *  - a whole-array reduction over several blocks is one launch once its ticket is known to be
 *    0, and its result is bitwise the result of the two-launch path (AKX_ONE_LAUNCH=0), on
 *    every dtype, over 1, 2 and many blocks, contiguous and strided;
 *  - so is a reduction along dims split over several blocks per output, once its column
 *    tickets are known to be 0: on every dtype, both kernel bodies, a column of outputs and
 *    one more, reductions that do not divide among the splits, three splits (one level of
 *    finish) and hundreds (two: groups of splits, then the column);
 *  - calls of every family back to back on one workspace, in a random order and of random
 *    sizes, stay right (the file's random-schedule copy runs them under a shuffled schedule);
 *    so do calls after a refused one, after an interrupted launch, and across the wrap of the
 *    look-back's 32-bit epoch (AKX_LOOKBACK_EPOCH starts it near the wrap);
 *  - a call captured in a graph (replayed later with its own epoch) resets its status;
 *  - on an sm_90+ profile every launch of every family is a programmatic dependent launch
 *    whose blocks wait before their first global access (the sim fails one that does not)
 *    and let the next kernel launch; AKX_PDL=0 turns it off, and the model charges each
 *    launch its whole launch cost again. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "akx_sim.h"
#include "checked_calls.h"
#include "fixture.h"
#include "internal.h" /* akx__sim_interrupt_after */
#include "reduce/reduce_dims.h" /* akx__reduce_dims_plan_shape */

static akx_context *ctx;
static void setup(void) { ctx = tfx_open(); }
static void teardown(void) {
  unsetenv("AKX_LOOKBACK_EPOCH");
  unsetenv("AKX_REDUCE_DIMS_SPLITS");
  unsetenv("AKX_REDUCE_DIMS_SHAPE");
  unsetenv("AKX_PDL");
  unsetenv("AKX_ONE_LAUNCH");
  tfx_close(ctx);
}
TestSuite(one_launch, .init = setup, .fini = teardown, .timeout = 560);

static uint64_t launches_since(void) {
  akx_sim_kernel_counters total;
  int32_t count = 0;
  cr_assert_eq(akx_sim_counters_get(ctx, &total, NULL, 0, &count), AKX_SUCCESS, "%s", akx_last_error());
  return total.launches;
}
static void counters_reset(void) { cr_assert_eq(akx_sim_counters_reset(ctx), AKX_SUCCESS); }
/* AKX_ONE_LAUNCH for ctx's next calls: 0 resets the status and takes the second passes at
 * every call (the two-launch path, for comparison), 1 is the default. */
static void one_launch(int on) {
  setenv("AKX_ONE_LAUNCH", on ? "1" : "0", 1);
  cr_assert_eq(akx__context_reread_settings(ctx), AKX_SUCCESS, "%s", akx_last_error());
}

/* ---- the calls, each checked (tests/support/checked_calls.h), on this file's context ---------- */

static float *small_floats(int64_t n, uint64_t seed) { return cc_small_floats(n, seed); }
static akx_status scan_checked(int64_t rows, int64_t cols, int32_t dim, uint64_t seed) {
  return cc_scan(ctx, rows, cols, dim, seed);
}
static akx_status scan_vector_checked(int64_t n, uint64_t seed) { return cc_scan_vector(ctx, n, seed); }
/* Most elements nonzero: most tiles scatter. */
static akx_status findall_checked(int64_t n, uint64_t seed) { return cc_findall(ctx, n, 85, seed); }
static akx_status sum_checked(int64_t n, int64_t stride, akx_where where, uint64_t seed) {
  return cc_sum(ctx, n, stride, where, seed);
}
/* Sums over the rows of rows x cols (dst 1 x cols): reduce_dims' own kernels and workspace. */
static akx_status column_sums_checked(int64_t rows, int64_t cols, uint64_t seed) {
  return cc_sums_along(ctx, rows, cols, 0, seed);
}

/* ---- launch counts ----------------------------------------------------------------------------- */

Test(one_launch, scans_and_findall_are_one_launch_from_the_first_call) {
  /* A fresh workspace is zeroed when it is allocated: the status of a reset. One launch from
   * the first call, at the same size and below it. 10^4 and 10^5 elements: several tiles. */
  const int64_t sizes[] = {100000, 100000, 10000, 99999, 1, 100000};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
    counters_reset();
    cr_assert_eq(scan_vector_checked(sizes[i], 7 + i), AKX_SUCCESS, "%s", akx_last_error());
    cr_expect_eq(launches_since(), 1u, "scan %zu of %lld: %llu launches", i, (long long)sizes[i],
                 (unsigned long long)launches_since());
  }
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
    counters_reset();
    cr_assert_eq(findall_checked(sizes[i], 70 + i), AKX_SUCCESS, "%s", akx_last_error());
    /* The first may take more tiles than the scans' flags (8-byte partials) on the same
     * buffer: a reset then. */
    if (i == 0) cr_expect_leq(launches_since(), 2u, "findall of %lld: %llu launches", (long long)sizes[i],
                              (unsigned long long)launches_since());
    else cr_expect_eq(launches_since(), 1u, "findall %zu of %lld: %llu launches", i, (long long)sizes[i],
                      (unsigned long long)launches_since());
  }
  /* Slices of one workspace's status too. The first may take more tiles than findall's flags
   * (its selection tile reads 32 KiB: 13 tiles here): a reset then. */
  for (int i = 0; i < 3; ++i) {
    counters_reset();
    cr_assert_eq(scan_checked(37, 2000, 1, 100 + i), AKX_SUCCESS, "%s", akx_last_error());
    if (i == 0) cr_expect_leq(launches_since(), 2u, "slices scan %d: %llu launches", i, (unsigned long long)launches_since());
    else cr_expect_eq(launches_since(), 1u, "slices scan %d: %llu launches", i, (unsigned long long)launches_since());
  }
  /* A larger call than the flags known on the same buffer widens the layout where it fits (its
   * tags zeroed by a memset: docs/workspace.md): one launch, and one again after it. */
  for (int i = 0; i < 2; ++i) {
    counters_reset();
    cr_assert_eq(scan_vector_checked(300000, 5 + i), AKX_SUCCESS, "%s", akx_last_error());
    cr_expect_eq(launches_since(), 1u, "a larger scan (%d): %llu launches", i, (unsigned long long)launches_since());
  }
  /* One that grows the workspace finds it zeroed: one launch. */
  counters_reset();
  cr_assert_eq(scan_vector_checked(3000000, 7), AKX_SUCCESS, "%s", akx_last_error());
  cr_expect_eq(launches_since(), 1u, "a scan that grew the workspace: %llu launches",
               (unsigned long long)launches_since());
  /* A caller's buffer is zeroed when it is set: one launch. A reduction's partials then lie in
   * the scratch, not over the flags (docs/workspace.md): the next scan is one launch too. */
  void *big = tfx_alloc(ctx, 1 << 20);
  cr_assert_eq(akx_context_set_workspace(ctx, big, 1 << 20), AKX_SUCCESS, "%s", akx_last_error());
  const uint64_t expected[] = {1, 0, 1, 1};
  for (int i = 0; i < 4; ++i) {
    counters_reset();
    if (i == 1) {
      cr_assert_eq(sum_checked(1000000, 1, AKX_HOST, 8), AKX_SUCCESS, "%s", akx_last_error());
      continue;
    }
    cr_assert_eq(scan_vector_checked(200000, 20 + i), AKX_SUCCESS, "%s", akx_last_error());
    cr_expect_eq(launches_since(), expected[i], "scan %d on a caller's buffer: %llu launches, expected %llu", i,
                 (unsigned long long)launches_since(), (unsigned long long)expected[i]);
  }
  cr_assert_eq(akx_context_set_workspace(ctx, NULL, 0), AKX_SUCCESS);
  tfx_free(ctx, big);
}

Test(one_launch, whole_array_reduction_is_one_launch_from_the_first_call) {
  /* 10^4..10^6 float32: several blocks (h200 row: tiles of 4096, at most 528 blocks). The
   * fresh workspace's ticket is 0 (zeroed when allocated). */
  const int64_t sizes[] = {1000000, 1000000, 10000, 100000, 100, 1000000};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
    counters_reset();
    cr_assert_eq(sum_checked(sizes[i], 1, i % 2 ? AKX_DEVICE : AKX_HOST, 30 + i), AKX_SUCCESS, "%s", akx_last_error());
    cr_expect_eq(launches_since(), 1u, "sum %zu of %lld: %llu launches", i, (long long)sizes[i],
                 (unsigned long long)launches_since());
  }
  /* AKX_ONE_LAUNCH=0: the two-launch path at every call (a single block needs no second). */
  one_launch(0);
  for (int64_t n = 10000; n <= 1000000; n *= 10) {
    counters_reset();
    cr_assert_eq(sum_checked(n, 1, AKX_HOST, 40 + (uint64_t)n), AKX_SUCCESS, "%s", akx_last_error());
    cr_expect_eq(launches_since(), 2u, "AKX_ONE_LAUNCH=0, sum of %lld: %llu launches", (long long)n,
                 (unsigned long long)launches_since());
  }
  one_launch(1);
  /* After a scan (the same ticket word, put back to 0 by its last tile): still one. */
  cr_assert_eq(scan_vector_checked(50000, 3), AKX_SUCCESS, "%s", akx_last_error());
  counters_reset();
  cr_assert_eq(sum_checked(100000, 1, AKX_HOST, 4), AKX_SUCCESS, "%s", akx_last_error());
  cr_expect_eq(launches_since(), 1u, "a sum after a scan: %llu launches", (unsigned long long)launches_since());
  /* A strided source takes the general first pass, with the same finish. */
  counters_reset();
  cr_assert_eq(sum_checked(30000, 3, AKX_HOST, 5), AKX_SUCCESS, "%s", akx_last_error());
  cr_expect_eq(launches_since(), 1u, "a strided sum: %llu launches", (unsigned long long)launches_since());
}

/* ---- bitwise: one launch against two ------------------------------------------------------------ */

/* Reduces `view` (over the device copy of `parent`) into an accumulator on the device; the
 * launches it took in *launches. */
static void reduce_bits(const akx_array *view, akx_dtype acc, const akx_reduce_opts *o, void *bits, uint64_t *launches) {
  void *dr = tfx_alloc(ctx, 16);
  counters_reset();
  cr_assert_eq(akx_mapreduce(ctx, view, AKX_MAP_IDENTITY, AKX_OP_ADD, o, dr, AKX_DEVICE), AKX_SUCCESS, "%s",
               akx_last_error());
  *launches = launches_since();
  memset(bits, 0, 16);
  tfx_to_host(ctx, bits, dr, ref_size(acc));
  tfx_free(ctx, dr);
}

Test(one_launch, one_launch_reduction_is_bitwise_the_two_launch_one) {
  /* Blocks of 64 threads, 4 items each, at most 8 blocks: tiles of 64 x (4, rounded to whole
   * 16-byte vectors) elements contiguous, 256 strided. Sizes: one tile (one block: one launch
   * either way), one more element (2 blocks), 20 tiles and 3 (8 blocks, each over several). */
  akx_reduce_opts o = akx_reduce_opts_default();
  o.block_size = 64;
  o.items_per_thread = 4;
  o.target_blocks = 8;
  int compared = 0;
  for (int t = 0; t < AKX_DTYPE_COUNT; ++t) {
    const akx_dtype dt = (akx_dtype)t;
    const akx_dtype acc = ref_resolve_acc(dt, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_DTYPE_AUTO);
    if (acc == REF_UNSUPPORTED) continue;
    const int64_t size = (int64_t)ref_size(dt), vec = 16 / size;
    for (int strided = 0; strided < 2; ++strided) {
      const int64_t tile = 64 * (strided ? 4 : (4 > vec ? 4 / vec * vec : vec));
      const int64_t ns[] = {tile, tile + 1, 20 * tile + 3};
      for (int k = 0; k < 3; ++k) {
        const int64_t n = ns[k], step = strided ? 2 : 1;
        unsigned char *h = tfx_xmalloc((size_t)(n * step) * (size_t)size);
        /* Floats of any magnitude: sums round, so another tree would give other bits. */
        ref_fill(h, dt, n * step, AKX_MAP_IDENTITY, AKX_OP_ADD, acc, n, 11 + (uint64_t)k, REF_FILL_ROUGH);
        void *src = tfx_upload(ctx, h, (size_t)(n * step) * (size_t)size);
        akx_array view = akx_vector(src, dt, n), hview = ref_vector(h, dt, n);
        view.strides[0] = hview.strides[0] = step;
        /* The two-launch path (AKX_ONE_LAUNCH=0), then the one-launch path. */
        unsigned char two[16], one[16];
        uint64_t l2 = 0, l1 = 0;
        one_launch(0);
        reduce_bits(&view, acc, &o, two, &l2);
        one_launch(1);
        reduce_bits(&view, acc, &o, one, &l1);
        char what[96];
        snprintf(what, sizeof what, "%s, %lld elements%s", ref_name(dt), (long long)n, strided ? " (stride 2)" : "");
        cr_expect_eq(l1, 1u, "%s: the one-launch call took %llu launches", what, (unsigned long long)l1);
        cr_expect_eq(l2, k == 0 ? 1u : 2u, "%s: the two-launch path took %llu launches", what, (unsigned long long)l2);
        cr_expect(memcmp(one, two, ref_size(acc)) == 0, "%s: one launch and two give different bits", what);
        const ref_expect e = ref_mapreduce(&hview, AKX_MAP_IDENTITY, AKX_OP_ADD, acc, NULL, NULL);
        char msg[512];
        cr_expect(ref_check(one, &e, msg, sizeof msg), "%s: %s", what, msg);
        compared += k > 0;
        free(h);
        tfx_free(ctx, src);
      }
    }
  }
  cr_expect_gt(compared, 20, "only %d one-launch results compared", compared);
}

/* A sum along `rdim` of a rows x cols source of dtype dt into its accumulator's dtype with
 * options o (the bits of every output in `bits`, a host buffer of the outputs), checked against
 * the host reference; the launches it took in *launches. */
static void dims_bits(akx_dtype dt, akx_dtype acc, const void *h, void *src, int64_t rows, int64_t cols, int rdim,
                      const akx_reduce_opts *o, unsigned char *bits, uint64_t *launches, const char *what) {
  const int64_t sshape[2] = {rows, cols}, dshape[2] = {rdim == 0 ? 1 : rows, rdim == 1 ? 1 : cols};
  const int64_t n_out = dshape[0] * dshape[1];
  const size_t asz = ref_size(acc);
  void *dst = tfx_alloc(ctx, (size_t)n_out * asz);
  akx_array s = akx_array_c(src, dt, 2, sshape), d = akx_array_c(dst, acc, 2, dshape);
  counters_reset();
  cr_assert_eq(akx_reduce_dims(ctx, &d, &s, AKX_MAP_IDENTITY, AKX_OP_ADD, o), AKX_SUCCESS, "%s: %s", what,
               akx_last_error());
  *launches = launches_since();
  tfx_to_host(ctx, bits, dst, (size_t)n_out * asz);
  tfx_free(ctx, dst);
  akx_array hv = akx_array_c((void *)h, dt, 2, sshape);
  for (int64_t o = 0; o < n_out; ++o) {
    const int64_t idx[2] = {rdim == 0 ? 0 : o, rdim == 1 ? 0 : o};
    const ref_expect e = ref_reduce_dims_at(&hv, dshape, idx, AKX_MAP_IDENTITY, AKX_OP_ADD, acc, NULL, NULL);
    char msg[512];
    if (!ref_check(bits + (size_t)o * asz, &e, msg, sizeof msg)) cr_assert_fail("%s, output %lld: %s", what, (long long)o, msg);
  }
}

Test(one_launch, split_dims_reduction_is_one_launch_and_bitwise_the_two_launch_one) {
  /* Forced splits, every kernel body: the tile body's columns of 32 outputs (33: a second
   * column of blocks), its 8-output tiles, a thread per output; the rows body with a warp per
   * output and with a block per output (2 outputs: 2 columns). Three splits (reductions of 7
   * and 40: neither divides by 3): the finish's one level. Hundreds of splits (more than there
   * are elements to some: empty splits): its two levels, groups of splits (src/reduce/
   * reduce_dims.c, finish_tree). The two-launch path (AKX_ONE_LAUNCH=0), then one launch, the
   * same bits, each against the host reference.
   * The three cases of about a thousand splits take blocks of 64 threads, not the tuning's
   * 256: the sim runs a fiber per thread, and those splits are 2200 to 9000 blocks per dtype
   * (two thirds of the file's time at 256). A split's share of the reduction (len / splits)
   * does not depend on the block's threads, so the empty splits stay; the finish keeps its
   * lanes (32 for a block or a warp per output) and its two levels (asserted below); the rows
   * body still reduces across the block's warps and the tile body down its rows of threads. */
  const struct {
    int64_t rows, cols;
    int rdim;
    const char *shape;  /* AKX_REDUCE_DIMS_SHAPE, or NULL: the selector's */
    const char *splits; /* AKX_REDUCE_DIMS_SPLITS */
    int tree;           /* two levels (groups > 1) */
    int32_t block_size; /* 0: the tuning's */
  } cases[] = {{7, 33, 0, "columns", "3", 0, 0},         {40, 2, 0, "tiled", "3", 0, 0},
               {40, 9, 0, NULL, "3", 0, 0},              {7, 40, 0, NULL, "3", 0, 0},
               {33, 7, 1, NULL, "3", 0, 0},              {2, 40, 1, "rows", "3", 0, 0},
               {613, 33, 0, "columns", "300", 1, 0},     {2000, 9, 0, "tiled", "1000", 1, 64},
               {613, 40, 0, "per_thread", "130", 1, 0},  {3, 2601, 1, "warp_rows", "1100", 1, 64},
               {2, 5003, 1, "rows", "1100", 1, 64}};
  int compared = 0, trees = 0, planned = 0;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    tfx_close(ctx);
    setenv("AKX_REDUCE_DIMS_SPLITS", cases[c].splits, 1);
    if (cases[c].shape) setenv("AKX_REDUCE_DIMS_SHAPE", cases[c].shape, 1);
    else unsetenv("AKX_REDUCE_DIMS_SHAPE");
    ctx = tfx_open(); /* one_launch() reads the settings again: the case's stay set */
    akx_reduce_opts o = akx_reduce_opts_default();
    o.block_size = cases[c].block_size;
    for (int t = 0; t < AKX_DTYPE_COUNT; ++t) {
      const akx_dtype dt = (akx_dtype)t;
      const akx_dtype acc = ref_resolve_acc(dt, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_DTYPE_AUTO);
      if (acc == REF_UNSUPPORTED) continue;
      /* The two-level cases take a third of the dtypes each, in turn (every dtype meets the tree
       * at least once): a dtype changes the element, not the splits or the groups, and these
       * cases were two thirds of the file's time. */
      if (cases[c].tree && (t + (int)c) % 3 != 0) continue;
      planned++;
      const int64_t rows = cases[c].rows, cols = cases[c].cols, n = rows * cols;
      const int rdim = cases[c].rdim;
      const size_t size = ref_size(dt), asz = ref_size(acc);
      unsigned char *h = tfx_xmalloc((size_t)n * size);
      ref_fill(h, dt, n, AKX_MAP_IDENTITY, AKX_OP_ADD, acc, rdim == 0 ? rows : cols, 70 + (uint64_t)c, REF_FILL_ROUGH);
      void *src = tfx_upload(ctx, h, (size_t)n * size);
      const int64_t sshape[2] = {rows, cols}, dshape[2] = {rdim == 0 ? 1 : rows, rdim == 1 ? 1 : cols};
      akx_array s = akx_array_c(src, dt, 2, sshape), d = akx_array_c(NULL, acc, 2, dshape);
      akx__reduce_dims_plan plan;
      cr_assert_eq(akx__reduce_dims_plan_shape(ctx, &d, &s, AKX_MAP_IDENTITY, AKX_OP_ADD, &o, &plan), AKX_SUCCESS,
                   "%s: %s", ref_name(dt), akx_last_error());
      char what[192];
      snprintf(what, sizeof what, "%s, %lldx%lld along dim %d (%s, %d splits, %d groups of %d, blocks of %d)",
               ref_name(dt), (long long)rows, (long long)cols, rdim, akx__reduce_dims_shape_name(plan.shape),
               plan.splits, plan.groups, plan.group_splits, plan.block_size);
      cr_assert_eq(plan.splits, atoi(cases[c].splits), "%s: not the forced splits", what);
      if (cases[c].block_size) cr_assert_eq(plan.block_size, cases[c].block_size, "%s: not the forced block", what);
      if (cases[c].shape)
        cr_assert_str_eq(akx__reduce_dims_shape_name(plan.shape), cases[c].shape, "%s: not the forced shape", what);
      cr_assert_eq(plan.groups > 1, cases[c].tree, "%s: expected %s", what, cases[c].tree ? "two levels" : "one level");
      trees += plan.groups > 1;
      const size_t out_bytes = (size_t)(dshape[0] * dshape[1]) * asz;
      unsigned char *two = tfx_xmalloc(out_bytes), *one = tfx_xmalloc(out_bytes);
      uint64_t l2 = 0, l1 = 0;
      one_launch(0);
      dims_bits(dt, acc, h, src, rows, cols, rdim, &o, two, &l2, what);
      one_launch(1);
      dims_bits(dt, acc, h, src, rows, cols, rdim, &o, one, &l1, what);
      cr_expect_eq(l2, 2u, "%s: the two-launch path took %llu launches", what, (unsigned long long)l2);
      cr_expect_eq(l1, 1u, "%s: the one-launch call took %llu launches", what, (unsigned long long)l1);
      cr_expect(memcmp(one, two, out_bytes) == 0, "%s: one launch and two give different bits", what);
      compared++;
      free(one);
      free(two);
      free(h);
      tfx_free(ctx, src);
    }
  }
  cr_expect_eq(compared, planned, "%d results compared of %d", compared, planned);
  cr_expect_gt(compared, 100, "only %d results compared", compared);
  cr_expect_gt(trees, 20, "only %d results through two levels", trees);
}

Test(one_launch, split_dims_sum_of_hundreds_of_splits_is_one_launch_from_the_first_call) {
  /* The selector's own splits (akx-model-calls' split dims sum at 10^6: column sums of
   * 31250x32 float32, hundreds of splits of a single column of blocks): two levels, one
   * launch on the fresh workspace and again on the one it left. */
  akx_array s = akx_array_c(NULL, AKX_FLOAT32, 2, (int64_t[]){31250, 32});
  akx_array d = akx_array_c(NULL, AKX_FLOAT32, 2, (int64_t[]){1, 32});
  akx__reduce_dims_plan plan;
  cr_assert_eq(akx__reduce_dims_plan_shape(ctx, &d, &s, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &plan), AKX_SUCCESS, "%s",
               akx_last_error());
  cr_assert_gt(plan.splits, 500, "%d splits", plan.splits);
  cr_assert_gt(plan.groups, 1, "%d splits in one group", plan.splits);
  for (int call = 0; call < 2; ++call) {
    counters_reset();
    cr_assert_eq(column_sums_checked(31250, 32, 90 + (uint64_t)call), AKX_SUCCESS, "%s", akx_last_error());
    cr_expect_eq(launches_since(), 1u, "call %d: %llu launches (%d splits, %d groups)", call,
                 (unsigned long long)launches_since(), plan.splits, plan.groups);
  }
}

/* ---- programmatic dependent launch ----------------------------------------------------------- */

/* Every family twice, with every value checked: the two-launch path (AKX_ONE_LAUNCH=0: the
 * reset and the second passes included), then the one-launch one; the totals of the counters. */
static void every_family_once(void) {
  cr_assert_eq(scan_vector_checked(30000, 81), AKX_SUCCESS, "%s", akx_last_error());      /* scan_init + tile */
  cr_assert_eq(scan_checked(9, 500, 1, 82), AKX_SUCCESS, "%s", akx_last_error());         /* slices */
  cr_assert_eq(scan_checked(3000, 5, 0, 83), AKX_SUCCESS, "%s", akx_last_error());        /* columns */
  cr_assert_eq(findall_checked(30000, 84), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(sum_checked(300000, 1, AKX_HOST, 85), AKX_SUCCESS, "%s", akx_last_error()); /* two passes */
  cr_assert_eq(sum_checked(3000, 3, AKX_DEVICE, 86), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(column_sums_checked(2000, 40, 87), AKX_SUCCESS, "%s", akx_last_error());   /* split dims */
}
static akx_sim_kernel_counters every_family(void) {
  counters_reset();
  one_launch(0);
  every_family_once();
  one_launch(1);
  every_family_once();
  akx_sim_kernel_counters total;
  int32_t count = 0;
  cr_assert_eq(akx_sim_counters_get(ctx, &total, NULL, 0, &count), AKX_SUCCESS, "%s", akx_last_error());
  return total;
}

Test(one_launch, every_launch_is_a_programmatic_dependent_launch_on_sm90) {
  /* The h200 profile (sm_90): every launch is one, and every block of every kernel waits
   * for the kernel before it and lets the next one launch (thread 0 of each is counted). */
  const akx_sim_kernel_counters on = every_family();
  cr_assert_gt(on.launches, 8u);
  cr_expect_eq(on.pdl_launches, on.launches, "%llu of %llu launches are PDL", (unsigned long long)on.pdl_launches,
               (unsigned long long)on.launches);
  cr_expect_eq(on.dependency_waits, on.blocks, "%llu of %llu blocks waited", (unsigned long long)on.dependency_waits,
               (unsigned long long)on.blocks);
  cr_expect_eq(on.dependents_launches, on.blocks, "%llu of %llu blocks let the next kernel launch",
               (unsigned long long)on.dependents_launches, (unsigned long long)on.blocks);
  /* AKX_PDL=0: plain launches (the kernels still wait, which costs nothing then); the model
   * charges each its whole launch again: launch_us - pdl_overlap_us = 1 us more per launch on
   * the h200 profile (src/core/device_profile.c). */
  tfx_close(ctx);
  setenv("AKX_PDL", "0", 1);
  ctx = tfx_open();
  const akx_sim_kernel_counters off = every_family();
  cr_expect_eq(off.launches, on.launches, "%llu launches without PDL, %llu with", (unsigned long long)off.launches,
               (unsigned long long)on.launches);
  cr_expect_eq(off.pdl_launches, 0u, "%llu PDL launches with AKX_PDL=0", (unsigned long long)off.pdl_launches);
  cr_expect_eq(off.dependency_waits, off.blocks);
  const double saved = off.model_us - on.model_us;
  cr_expect(saved > 0.999 * (double)on.launches && saved < 1.001 * (double)on.launches,
            "the model's time without PDL is %g us more over %llu launches, expected 1 us each", saved,
            (unsigned long long)on.launches);
  setenv("AKX_PDL", "2", 1);
  akx_context *bad = NULL;
  cr_expect_eq(akx_context_create(&bad, AKX_BACKEND_SIM, 0), AKX_ERROR_INVALID_ARGUMENT, "AKX_PDL=2");
  cr_expect(strstr(akx_last_error(), "AKX_PDL") != NULL, "%s", akx_last_error());
  /* The rtx5080 profile (sm_120) has it too. */
  unsetenv("AKX_PDL");
  setenv("AKX_SIM_DEVICE", "rtx5080", 1);
  tfx_close(ctx);
  ctx = tfx_open();
  unsetenv("AKX_SIM_DEVICE");
  const akx_sim_kernel_counters rtx = every_family();
  cr_expect_eq(rtx.pdl_launches, rtx.launches, "rtx5080: %llu of %llu launches are PDL",
               (unsigned long long)rtx.pdl_launches, (unsigned long long)rtx.launches);
}

/* ---- back to back on one workspace ----------------------------------------------------------- */

Test(one_launch, hundred_calls_of_every_family_back_to_back) {
  uint64_t seed = 12345;
  int prev = -1;
  int64_t prev_n = 0;
  for (int call = 0; call < 100; ++call) {
    /* A third of the calls repeat the last one (same family and size): then one launch. */
    const uint64_t r = ref_rand(seed, (uint64_t)call);
    const int repeat = prev >= 0 && r % 3 == 0;
    const int family = repeat ? prev : (int)((r >> 8) % 7);
    const int64_t n = repeat ? prev_n : 1 + (int64_t)((r >> 16) % 40000);
    counters_reset();
    akx_status s = AKX_SUCCESS;
    switch (family) {
      case 0: s = scan_vector_checked(n, r); break;                 /* whole-array scan */
      case 1: s = scan_checked(1 + n % 37, 1 + n / 40, 1, r); break; /* slices */
      case 2: s = scan_checked(1 + n / 100, 1 + n % 50, 0, r); break; /* columns: its own workspace */
      case 3: s = findall_checked(n, r); break;
      case 4: s = sum_checked(n, 1, (r >> 40) % 2 ? AKX_DEVICE : AKX_HOST, r); break;
      case 5: s = sum_checked(1 + n / 3, 3, AKX_HOST, r); break;      /* strided sum */
      case 6: s = column_sums_checked(1 + n / 64, 1 + n % 64, r); break; /* reduce_dims */
    }
    cr_assert_eq(s, AKX_SUCCESS, "call %d (family %d, %lld): %s", call, family, (long long)n, akx_last_error());
    const uint64_t l = launches_since();
    if (family != 2) {
      cr_expect_leq(l, 2u, "call %d (family %d, %lld): %llu launches", call, family, (long long)n, (unsigned long long)l);
      if (repeat)
        cr_expect_eq(l, 1u, "call %d repeats the last (family %d, %lld): %llu launches", call, family, (long long)n,
                     (unsigned long long)l);
    }
    prev = family;
    prev_n = n;
  }
}

Test(one_launch, epoch_wraps_around) {
  /* The epoch before the first call: 2^32 - 3. Calls take 2^32 - 2 (the new workspace is
   * zeroed: no reset), 2^32 - 1, then the wrap (a reset: the flags hold every epoch since the
   * last one; 0 is the reset's own), 1 and 2 after it. */
  tfx_close(ctx);
  setenv("AKX_LOOKBACK_EPOCH", "4294967293", 1);
  ctx = tfx_open();
  const uint64_t expected[] = {1, 1, 2, 1, 1};
  for (int i = 0; i < 5; ++i) {
    counters_reset();
    cr_assert_eq(scan_vector_checked(20000 - 1000 * i, 40 + i), AKX_SUCCESS, "%s", akx_last_error());
    cr_expect_eq(launches_since(), expected[i], "call %d: %llu launches, expected %llu", i,
                 (unsigned long long)launches_since(), (unsigned long long)expected[i]);
  }
  unsetenv("AKX_LOOKBACK_EPOCH");
  setenv("AKX_LOOKBACK_EPOCH", "-1", 1);
  akx_context *bad = NULL;
  cr_expect_eq(akx_context_create(&bad, AKX_BACKEND_SIM, 0), AKX_ERROR_INVALID_ARGUMENT, "a negative epoch");
  cr_expect(strstr(akx_last_error(), "AKX_LOOKBACK_EPOCH") != NULL, "%s", akx_last_error());
}

Test(one_launch, right_after_a_refused_call) {
  cr_assert_eq(scan_vector_checked(50000, 1), AKX_SUCCESS, "%s", akx_last_error());
  /* Refused before anything runs: a dst of another shape. */
  float *a = tfx_alloc(ctx, 100 * sizeof(float));
  akx_array s = akx_vector(a, AKX_FLOAT32, 100), d = akx_vector(a, AKX_FLOAT32, 99);
  cr_assert_eq(akx_scan(ctx, &d, &s, AKX_OP_ADD, 0, NULL), AKX_ERROR_INVALID_ARGUMENT);
  counters_reset();
  cr_assert_eq(scan_vector_checked(50000, 2), AKX_SUCCESS, "%s", akx_last_error());
  cr_expect_eq(launches_since(), 1u, "%llu launches", (unsigned long long)launches_since());
  /* Refused for its workspace: a caller's buffer too small, then one large enough (zeroed
   * when it is set: no reset). */
  void *small = tfx_alloc(ctx, 64), *big = tfx_alloc(ctx, 1 << 20);
  cr_assert_eq(akx_context_set_workspace(ctx, small, 64), AKX_SUCCESS);
  cr_assert_eq(scan_vector_checked(50000, 3), AKX_ERROR_WORKSPACE_TOO_SMALL);
  cr_assert_eq(akx_context_set_workspace(ctx, big, 1 << 20), AKX_SUCCESS);
  counters_reset();
  cr_assert_eq(scan_vector_checked(50000, 4), AKX_SUCCESS, "%s", akx_last_error());
  cr_expect_eq(launches_since(), 1u, "a caller's new buffer: %llu launches", (unsigned long long)launches_since());
  counters_reset();
  cr_assert_eq(scan_vector_checked(40000, 5), AKX_SUCCESS, "%s", akx_last_error());
  cr_expect_eq(launches_since(), 1u, "%llu launches", (unsigned long long)launches_since());
  cr_assert_eq(akx_context_set_workspace(ctx, NULL, 0), AKX_SUCCESS);
  tfx_free(ctx, small);
  tfx_free(ctx, big);
  tfx_free(ctx, a);
}

Test(one_launch, right_after_an_interrupted_call) {
  /* Interrupted after 3 blocks: the ticket past 0, some flags of the call's epoch, nodes
   * half written; a whole-array reduction's ticket past 0 (10^5 float32: 25 blocks). The next
   * call resets and is right. */
  for (int family = 0; family < 3; ++family) {
    akx_status s = AKX_SUCCESS;
    for (int round = 0; round < 2; ++round) {
      s = family == 0 ? scan_vector_checked(100000, 9) : family == 1 ? findall_checked(100000, 9)
                                                                      : sum_checked(100000, 1, AKX_HOST, 9);
      cr_assert_eq(s, AKX_SUCCESS, "family %d: %s", family, akx_last_error());
    }
    cr_assert_eq(akx__sim_interrupt_after(ctx, 3), AKX_SUCCESS);
    s = family == 0 ? scan_vector_checked(100000, 10) : family == 1 ? findall_checked(100000, 10)
                                                                     : sum_checked(100000, 1, AKX_HOST, 10);
    cr_assert_eq(s, AKX_ERROR_SIM_CHECK, "family %d: %s", family, akx_last_error());
    cr_expect(strstr(akx_last_error(), "interrupted") != NULL, "%s", akx_last_error());
    counters_reset();
    s = family == 0 ? scan_vector_checked(100000, 11) : family == 1 ? findall_checked(100000, 11)
                                                                     : sum_checked(100000, 1, AKX_HOST, 11);
    cr_assert_eq(s, AKX_SUCCESS, "family %d after the interruption: %s", family, akx_last_error());
    cr_expect_eq(launches_since(), 2u, "family %d after the interruption: %llu launches", family,
                 (unsigned long long)launches_since());
  }
}

Test(one_launch, a_call_captured_in_a_graph_resets_its_status_at_every_replay) {
  /* A graph replays a captured call with the epoch it was captured with, and writes the
   * workspace between the context's later calls: a captured scan takes its reset with it, a
   * captured reduction the two-launch path, and the buffer is never trusted again (one launch
   * again on a new buffer). The sim runs captured launches at once: values are checked after
   * the capture (copies are refused during it). */
  const int64_t n = 100000;
  float *h = small_floats(n, 60);
  float *src = tfx_upload(ctx, h, (size_t)n * sizeof(float));
  float *dst = tfx_alloc(ctx, (size_t)n * sizeof(float)), *sum = tfx_alloc(ctx, sizeof(float));
  akx_array s = akx_vector(src, AKX_FLOAT32, n), d = akx_vector(dst, AKX_FLOAT32, n);
  for (int i = 0; i < 2; ++i) {
    cr_assert_eq(akx_scan(ctx, &d, &s, AKX_OP_ADD, 0, NULL), AKX_SUCCESS, "%s", akx_last_error());
    cr_assert_eq(akx_mapreduce(ctx, &s, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, sum, AKX_DEVICE), AKX_SUCCESS, "%s",
                 akx_last_error());
  }
  tfx_free(ctx, dst);
  dst = tfx_alloc(ctx, (size_t)n * sizeof(float)); /* the captured scan's output only */
  d = akx_vector(dst, AKX_FLOAT32, n);
  cr_assert_eq(akx__sim_set_capturing(ctx, 1), AKX_SUCCESS);
  for (int i = 0; i < 2; ++i) {
    counters_reset();
    cr_assert_eq(akx_scan(ctx, &d, &s, AKX_OP_ADD, 0, NULL), AKX_SUCCESS, "%s", akx_last_error());
    cr_expect_eq(launches_since(), 2u, "a captured scan: %llu launches", (unsigned long long)launches_since());
    counters_reset();
    cr_assert_eq(akx_mapreduce(ctx, &s, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, sum, AKX_DEVICE), AKX_SUCCESS, "%s",
                 akx_last_error());
    cr_expect_eq(launches_since(), 2u, "a captured sum: %llu launches", (unsigned long long)launches_since());
  }
  cr_assert_eq(akx__sim_set_capturing(ctx, 0), AKX_SUCCESS);
  float *got = tfx_xmalloc((size_t)n * sizeof(float)), r = 0;
  tfx_to_host(ctx, got, dst, (size_t)n * sizeof(float));
  tfx_to_host(ctx, &r, sum, sizeof r);
  double ref = 0;
  for (int64_t i = 0; i < n; ++i) {
    ref += h[i];
    if ((double)got[i] != ref) cr_assert_fail("captured scan: element %lld is %g, expected %g", (long long)i, (double)got[i], ref);
  }
  cr_expect_eq((double)r, ref, "captured sum: %g, expected %g", (double)r, ref);
  free(got);
  free(h);
  tfx_free(ctx, src);
  tfx_free(ctx, dst);
  tfx_free(ctx, sum);
  counters_reset();
  cr_assert_eq(scan_vector_checked(n, 64), AKX_SUCCESS, "%s", akx_last_error());
  cr_expect_eq(launches_since(), 2u, "a scan on a graph's buffer: %llu launches", (unsigned long long)launches_since());
  cr_assert_eq(akx_context_set_workspace(ctx, NULL, 0), AKX_SUCCESS);
  for (int i = 0; i < 2; ++i) {
    counters_reset();
    cr_assert_eq(scan_vector_checked(n, 65 + i), AKX_SUCCESS, "%s", akx_last_error());
    cr_expect_eq(launches_since(), 1u, "a scan on a new buffer (%d): %llu launches", i,
                 (unsigned long long)launches_since());
  }
}
