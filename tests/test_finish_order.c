/* The combine order of every finish, bit for bit: the results of float32 and float64 sums equal
 * the bits of a host model that folds in exactly the order the kernels document, so that any
 * other association fails (the host references of the other files allow a tolerance, and the
 * one-launch path is compared bitwise only with the two-launch one, which runs the same code).
 * The trick that keeps each model small: the data make every partial a finish folds exact and
 * known (one nonzero value per partial's range, zeros elsewhere), with random magnitudes and
 * signs that round at nearly every addition, so the finish's own order decides the bits:
 *  - a whole-array reduction's finish (kernels/akx/reduce_whole.cuh, reduce_partials_block):
 *    thread i of the block folds partials i, i + bd, ... in order, then the block tree (each
 *    warp's shuffles at offsets 16, 8, 4, 2, 1, warp 0 the warps' totals likewise:
 *    kernels/akx/block_reduce.cuh); one launch and two (AKX_ONE_LAUNCH=0), 2, 3, 33 and the
 *    tuning's most blocks, blocks of 32, 64 and 256 threads, contiguous and strided;
 *  - a split dims reduction's finish (kernels/akx/reduce_dims.cuh, fold_lanes, finish_groups,
 *    finish_outputs): q lanes fold partials sub, sub + q, ... in order, then a shuffle tree of
 *    width q; with groups, each group of group_splits consecutive splits first, then the
 *    groups in order; one launch and two, 3 splits (one level), hundreds and 1000 (two), the
 *    tile and the rows bodies (lanes 32, 16, 8, 4);
 *  - the tile scan's look-back (kernels/akx/lookback.cuh): tile t's prefix is the fold of the
 *    nodes of t's base-32 decomposition, oldest first, the newest 31 x level of them folded
 *    apart (they and the tile's aggregate make its node; tests/support/lookback_model.h);
 *    1, 2, 3, 7, 64, 100 and 1030 (level-2 nodes) tiles of the tuning's size, inclusive and
 *    exclusive;
 *  - the column scans' carry (kernels/akx/scan_columns.cuh): each chunk folded left to right
 *    from its first element, the chunks' totals folded in order from the identity, each chunk
 *    rescanned from its carry; and akx_scan_piece's carries (src/scan/scan_piece.c): a piece's
 *    total is the fold of its chunks' totals, its carry the fold of the totals before it, each
 *    chunk starts from the carry then the chunks before it. Any data (every partial is a left
 *    fold, modelled whole).
 * The data of each case are drawn until the model tells its order from others (a sequential
 * fold; each lane's or thread's fold reversed, where one folds three or more), else the case
 * could not fail when the order changed. *_random_schedule runs the file with blocks finishing
 * in a shuffled order: the bits stay the documented order's. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "akx.h"
#include "akx_layer.h"
#include "akx_sim.h"
#include "fixture.h"
#include "lookback_model.h"
#include "internal.h"           /* akx__context_reread_settings */
#include "tuning.h"             /* akx__tuning_lookup */
#include "reduce/reduce_dims.h" /* akx__reduce_dims_plan_shape */
#include "scan/scan_plan.h"     /* akx__scan_prepare */

static akx_context *ctx;
static void setup(void) { ctx = tfx_open(); }
static void teardown(void) {
  unsetenv("AKX_ONE_LAUNCH");
  unsetenv("AKX_REDUCE_DIMS_SPLITS");
  unsetenv("AKX_REDUCE_DIMS_SHAPE");
  tfx_close(ctx);
}
TestSuite(finish_order, .init = setup, .fini = teardown, .timeout = 300);

/* An environment setting for ctx's next calls (NULL: unset). */
static void setting(const char *name, const char *value) {
  if (value) setenv(name, value, 1);
  else unsetenv(name);
  cr_assert_eq(akx__context_reread_settings(ctx), AKX_SUCCESS, "%s=%s: %s", name, value ? value : "(unset)",
               akx_last_error());
}

/* ---- values, sums and bits ----------------------------------------------------------------- */

/* Values are held in doubles; a float32 one is a float's value, and its sums round as floats. */
static double add(akx_dtype t, double a, double b) {
  return t == AKX_FLOAT32 ? (double)((float)a + (float)b) : a + b;
}
#define IDENTITY (-0.0) /* a float ADD's (kernels/akx/ops.cuh): x + -0.0 is x, +0.0 included */

/* A nonzero value of t with a full random mantissa, a random sign and a magnitude from 1 to 64:
 * nearly every sum of two rounds, so two associations of three or more tend to differ in the
 * last bits. The cases draw again (seed + draw) until the data tell the documented order from
 * the others (`order` below): a few draws at most. */
static double rough(akx_dtype t, uint64_t seed, uint64_t i) {
  const uint64_t r = ref_rand(seed, i), e = ref_rand(seed ^ 0x5bd1e995u, i);
  const int digits = t == AKX_FLOAT32 ? 24 : 53;
  const double mantissa = 1.0 + ldexp((double)(r >> (64 - (digits - 1))), -(digits - 1));
  const double v = ldexp(mantissa, (int)(e % 6));
  return (e >> 32) & 1 ? -v : v;
}
#define DRAWS 16

static void store_value(akx_dtype t, void *base, int64_t i, double v) {
  if (t == AKX_FLOAT32) ((float *)base)[i] = (float)v;
  else ((double *)base)[i] = v;
}
static double load_value(akx_dtype t, const void *base, int64_t i) {
  return t == AKX_FLOAT32 ? (double)((const float *)base)[i] : ((const double *)base)[i];
}
static int same_bits(akx_dtype t, double a, double b) {
  unsigned char x[8], y[8];
  store_value(t, x, 0, a);
  store_value(t, y, 0, b);
  return memcmp(x, y, akx_dtype_size(t)) == 0;
}
static const char *bits_text(akx_dtype t, double v, char *buf, size_t len) {
  if (t == AKX_FLOAT32) {
    const float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, 4);
    snprintf(buf, len, "%08x (%a)", (unsigned)u, v);
  } else {
    uint64_t u;
    memcpy(&u, &v, 8);
    snprintf(buf, len, "%016llx (%a)", (unsigned long long)u, v);
  }
  return buf;
}

/* Asserts that the n results of dtype t at `got` (host) are bit for bit `want`. */
static void assert_bits(akx_dtype t, const void *got, const double *want, int64_t n, const char *what) {
  int64_t first = -1, wrong = 0;
  for (int64_t i = 0; i < n; ++i)
    if (!same_bits(t, load_value(t, got, i), want[i])) {
      if (first < 0) first = i;
      ++wrong;
    }
  if (first >= 0) {
    char g[64], w[64];
    cr_assert_fail("%s: %lld of %lld results are not the documented order's bits; [%lld] is %s, expected %s", what,
                   (long long)wrong, (long long)n, (long long)first,
                   bits_text(t, load_value(t, got, first), g, sizeof g), bits_text(t, want[first], w, sizeof w));
  }
}

/* The orders a model computes: the documented one, and two others the data must tell apart
 * from it (else a changed order could pass). */
typedef enum {
  ORDER_DOCUMENTED,
  ORDER_SEQUENTIAL,      /* one left fold of everything, in index order */
  ORDER_LANES_REVERSED   /* each lane's (thread's) fold backwards, the trees as documented */
} order;

/* The sim's launches and the grid of one kernel since the last reset (0 on CUDA: not counted). */
static uint64_t launches_since(void) {
  if (!tfx_is_sim(ctx)) return 0;
  akx_sim_kernel_counters total;
  cr_assert_eq(akx_sim_counters_get(ctx, &total, NULL, 0, NULL), AKX_SUCCESS, "%s", akx_last_error());
  return total.launches;
}
static uint32_t grid_of(const char *kernel) {
  akx_sim_kernel_counters k[64];
  int32_t count = 0;
  cr_assert_eq(akx_sim_counters_get(ctx, NULL, k, 64, &count), AKX_SUCCESS, "%s", akx_last_error());
  for (int32_t i = 0; i < count && i < 64; ++i)
    if (strcmp(k[i].kernel, kernel) == 0) return k[i].last_grid;
  return 0;
}
static void counters_reset(void) {
  if (tfx_is_sim(ctx)) cr_assert_eq(akx_sim_counters_reset(ctx), AKX_SUCCESS, "%s", akx_last_error());
}

/* ---- the trees ------------------------------------------------------------------------------ */

/* Lane 0 of a shuffle tree over `width` lanes (a power of two up to 32): at each offset from
 * 16 down to 1 that is below width, lane l adds lane l + offset's value, or its own where that
 * lane is outside the width (shfl_down's rule): kernels/akx/warp_reduce.cuh with width 32,
 * kernels/akx/reduce_dims.cuh's fold_lanes with width q. */
static double shuffle_tree(akx_dtype t, const double *lanes, int width) {
  double v[32], next[32];
  memcpy(v, lanes, (size_t)width * sizeof *v);
  for (int off = 16; off > 0; off >>= 1) {
    if (off >= width) continue;
    for (int l = 0; l < width; ++l) next[l] = add(t, v[l], l + off < width ? v[l + off] : v[l]);
    memcpy(v, next, (size_t)width * sizeof *v);
  }
  return v[0];
}

/* kernels/akx/block_reduce.cuh: each warp's tree; one warp: its result; more: warp 0's tree
 * over the warps' totals, the identity in the lanes past them. */
static double block_tree(akx_dtype t, const double *threads, int bd) {
  const int warps = bd / 32;
  double totals[32];
  for (int w = 0; w < warps; ++w) totals[w] = shuffle_tree(t, threads + 32 * w, 32);
  if (warps == 1) return totals[0];
  for (int l = warps; l < 32; ++l) totals[l] = IDENTITY;
  return shuffle_tree(t, totals, 32);
}

/* `lanes` lanes fold count values, lane l values l, l + lanes, ... (backwards with
 * ORDER_LANES_REVERSED), into acc[lanes]; ORDER_SEQUENTIAL: all into lane 0, in order. */
static void fold_into_lanes(akx_dtype t, const double *values, int64_t count, int lanes, order o, double *acc) {
  for (int l = 0; l < lanes; ++l) acc[l] = IDENTITY;
  if (o == ORDER_SEQUENTIAL) {
    for (int64_t j = 0; j < count; ++j) acc[0] = add(t, acc[0], values[j]);
    return;
  }
  for (int l = 0; l < lanes && l < count; ++l) {
    const int64_t last = l + (count - 1 - l) / lanes * lanes;
    if (o == ORDER_DOCUMENTED)
      for (int64_t j = l; j < count; j += lanes) acc[l] = add(t, acc[l], values[j]);
    else
      for (int64_t j = last; j >= l; j -= lanes) acc[l] = add(t, acc[l], values[j]);
  }
}

/* ---- whole-array reductions ------------------------------------------------------------------ */

/* The finish of `count` partials by a block of bd threads (kernels/akx/reduce_whole.cuh,
 * reduce_partials_block): thread i folds partials i, i + bd, ..., then the block tree. */
static double whole_finish(akx_dtype t, const double *partials, int64_t count, int bd, order o) {
  double *threads = tfx_xmalloc((size_t)bd * sizeof *threads);
  fold_into_lanes(t, partials, count, bd, o, threads);
  const double r = block_tree(t, threads, bd);
  free(threads);
  return r;
}

/* A sum of n elements of t (every `stride`-th of a parent: 1, or 2 for the strided first
 * pass) over `blocks` blocks of bd threads, one nonzero value per block in the first element
 * it folds, all others zero: each block's partial is that value exactly, and the result is the
 * finish's order alone. One launch and two (AKX_ONE_LAUNCH=0), each bitwise the model. */
static void whole_case(akx_dtype t, int bd, int32_t blocks, int32_t target_blocks, int64_t stride, uint64_t seed) {
  const size_t size = akx_dtype_size(t);
  const int64_t V = 16 / (int64_t)size, items = 4;
  /* Pass 1's tiles (src/reduce/reduce_whole.c, plan_whole): bd threads of whole 16-byte vectors
   * (contiguous; items per thread rounded to them), or of `items` elements (strided). Block b
   * takes tiles b, b + blocks, ...: half as many tiles again, so that some blocks take two. */
  const int64_t per_thread = stride == 1 ? (items > V ? items / V * V : V) : items;
  const int64_t tile = (int64_t)bd * per_thread, n = ((int64_t)blocks + blocks / 2 + 1) * tile;
  unsigned char *h = calloc((size_t)(n * stride), size);
  cr_assert(h);
  double *partials = tfx_xmalloc((size_t)blocks * sizeof *partials);
  char what[160];
  snprintf(what, sizeof what, "%s sum of %lld elements%s over %d blocks of %d threads", akx_dtype_name(t), (long long)n,
           stride == 1 ? "" : " (stride 2)", (int)blocks, bd);
  /* Two partials sum alike in any order; from three, the data must tell the finish from a
   * sequential fold, and, where a thread folds three or more, from its fold reversed. */
  double want = 0;
  int draw = 0;
  for (; draw < DRAWS; ++draw) {
    for (int32_t b = 0; b < blocks; ++b) partials[b] = rough(t, seed + 1000 * (uint64_t)draw, (uint64_t)b);
    want = whole_finish(t, partials, blocks, bd, ORDER_DOCUMENTED);
    if (blocks < 3) break;
    if (same_bits(t, want, whole_finish(t, partials, blocks, bd, ORDER_SEQUENTIAL))) continue;
    if (blocks > 2 * bd && same_bits(t, want, whole_finish(t, partials, blocks, bd, ORDER_LANES_REVERSED))) continue;
    break;
  }
  cr_assert_lt(draw, DRAWS, "%s: no data of %d draws tell the finish's order from the others", what, DRAWS);
  /* The first element block b folds: its first tile's (contiguous: thread 0's first vector),
   * or element b * bd (strided: thread 0's first element, the grid striding by elements). */
  for (int32_t b = 0; b < blocks; ++b)
    store_value(t, h, (stride == 1 ? (int64_t)b * tile : (int64_t)b * bd) * stride, partials[b]);

  void *src = tfx_upload(ctx, h, (size_t)(n * stride) * size), *dr = tfx_alloc(ctx, 16);
  cr_assert(stride != 1 || (uintptr_t)src % 16 == 0, "the source is not 16-byte aligned: pass 1's vectors shift");
  akx_array s = akx_vector(src, t, n);
  s.strides[0] = stride;
  akx_reduce_opts opts = akx_reduce_opts_default();
  opts.block_size = bd;
  opts.items_per_thread = (int32_t)items;
  opts.target_blocks = target_blocks;
  for (int one = 0; one < 2; ++one) {
    setting("AKX_ONE_LAUNCH", one ? "1" : "0");
    counters_reset();
    cr_assert_eq(akx_mapreduce(ctx, &s, AKX_MAP_IDENTITY, AKX_OP_ADD, &opts, dr, AKX_DEVICE), AKX_SUCCESS, "%s: %s",
                 what, akx_last_error());
    if (tfx_is_sim(ctx)) {
      const char *pass1 = stride == 1 ? "reduce_whole_contiguous" : "reduce_whole_strided";
      cr_assert_eq(grid_of(pass1), (uint32_t)blocks, "%s: pass 1 ran %u blocks", what, grid_of(pass1));
      cr_assert_eq(launches_since(), one ? 1u : 2u, "%s, %s path: %llu launches", what, one ? "one-launch" : "two-launch",
                   (unsigned long long)launches_since());
    }
    unsigned char got[8];
    tfx_to_host(ctx, got, dr, size);
    char path[200];
    snprintf(path, sizeof path, "%s, %s", what, one ? "one launch" : "two launches");
    assert_bits(t, got, &want, 1, path);
  }
  free(partials);
  free(h);
  tfx_free(ctx, src);
  tfx_free(ctx, dr);
}

/* The tuning's most blocks for t's accumulator on ctx's device (src/core/tuning.c). */
static int32_t most_blocks(akx_dtype t) {
  akx_context_info_t info;
  cr_assert_eq(akx_context_info(ctx, &info), AKX_SUCCESS, "%s", akx_last_error());
  return akx__tuning_lookup(AKX__TUNE_REDUCE_WHOLE, info.cc_major, info.cc_minor, akx_dtype_size(t), NULL)
      .target_blocks;
}

static void whole_sweep(akx_dtype t) {
  const int32_t most = most_blocks(t);
  cr_assert_gt(most, 33, "the tuning's most blocks: %d", (int)most);
  const int32_t counts[] = {2, 3, 33};
  const int bds[] = {32, 64, 256};
  for (int k = 0; k < 3; ++k)
    for (int j = 0; j < 3; ++j) whole_case(t, bds[j], counts[k], counts[k], 1, 10 * (uint64_t)k + (uint64_t)j);
  /* The tuning's most blocks (target_blocks 0: the table's), fewer threads than partials. */
  whole_case(t, 64, most, 0, 1, 41);
  whole_case(t, 256, most, 0, 1, 42);
  /* The strided first pass, the same finish. */
  whole_case(t, 64, 33, 33, 2, 43);
}

Test(finish_order, whole_array_float32) { whole_sweep(AKX_FLOAT32); }
Test(finish_order, whole_array_float64) { whole_sweep(AKX_FLOAT64); }

/* ---- split dims reductions -------------------------------------------------------------------- */

/* q lanes fold count partials, then the shuffle tree of width q (kernels/akx/reduce_dims.cuh,
 * fold_lanes). */
static double lanes_fold(akx_dtype t, const double *partials, int64_t count, int q, order o) {
  double acc[32];
  fold_into_lanes(t, partials, count, q, o, acc);
  return o == ORDER_SEQUENTIAL ? acc[0] : shuffle_tree(t, acc, q);
}

/* One output's finish from its `splits` partials: one level, or each group of group_splits
 * consecutive splits (the last one shorter), then the groups in order (finish_groups,
 * finish_outputs). */
static double dims_finish(akx_dtype t, const double *partials, const akx__reduce_dims_plan *p, order o) {
  if (p->groups <= 1) return lanes_fold(t, partials, p->splits, p->finish_lanes, o);
  double *groups = tfx_xmalloc((size_t)p->groups * sizeof *groups);
  for (int32_t g = 0; g < p->groups; ++g) {
    const int64_t s0 = (int64_t)g * p->group_splits;
    const int64_t count = p->splits - s0 < p->group_splits ? p->splits - s0 : p->group_splits;
    groups[g] = lanes_fold(t, partials + s0, count, p->finish_lanes, o);
  }
  const double r = lanes_fold(t, groups, p->groups, p->finish_lanes, o);
  free(groups);
  return r;
}

/* Where split s of an output's reduction of len elements begins, or -1 for an empty split: the
 * tile body's rows [s * chunk, ...), chunk = ceil(len / splits); the rows body's share of the
 * row's 16-byte vectors likewise (len a multiple of V, rows aligned: no scalars). */
static int64_t split_first(const akx__reduce_dims_plan *p, int64_t len, int64_t V, int64_t s) {
  const int rows_body = p->shape == AKX__DIMS_ROWS || p->shape == AKX__DIMS_WARP_ROWS;
  const int64_t units = rows_body ? len / V : len, chunk = (units + p->splits - 1) / p->splits;
  if (s * chunk >= units) return -1;
  return rows_body ? s * chunk * V : s * chunk;
}

typedef struct {
  int64_t rows, cols;
  int rdim;             /* 0: the tile body (the outputs are the columns), 1: the rows body */
  const char *shape;    /* AKX_REDUCE_DIMS_SHAPE */
  const char *splits;   /* AKX_REDUCE_DIMS_SPLITS */
  int groups;           /* two levels expected */
  int32_t block_size;   /* 0: the tuning's */
} dims_shape;

static void dims_case(akx_dtype t, const dims_shape *c, uint64_t seed) {
  setting("AKX_REDUCE_DIMS_SPLITS", c->splits);
  setting("AKX_REDUCE_DIMS_SHAPE", c->shape);
  const size_t size = akx_dtype_size(t);
  const int64_t V = 16 / (int64_t)size, rows = c->rows, cols = c->rdim == 1 ? c->cols * V : c->cols;
  const int64_t n = rows * cols, n_out = c->rdim == 0 ? cols : rows, len = c->rdim == 0 ? rows : cols;
  const int64_t sshape[2] = {rows, cols}, dshape[2] = {c->rdim == 0 ? 1 : rows, c->rdim == 1 ? 1 : cols};
  akx_reduce_opts opts = akx_reduce_opts_default();
  opts.block_size = c->block_size;
  akx__reduce_dims_plan p;
  akx_array s = akx_array_c(NULL, t, 2, sshape), d = akx_array_c(NULL, t, 2, dshape);
  cr_assert_eq(akx__reduce_dims_plan_shape(ctx, &d, &s, AKX_MAP_IDENTITY, AKX_OP_ADD, &opts, &p), AKX_SUCCESS, "%s",
               akx_last_error());
  char what[200];
  snprintf(what, sizeof what, "%s %lldx%lld along dim %d (%s, %d splits, %d groups of %d, %d lanes, blocks of %d)",
           akx_dtype_name(t), (long long)rows, (long long)cols, c->rdim, akx__reduce_dims_shape_name(p.shape), p.splits,
           p.groups, p.group_splits, p.finish_lanes, p.block_size);
  cr_assert_str_eq(akx__reduce_dims_shape_name(p.shape), c->shape, "%s: not the forced shape", what);
  cr_assert_eq(p.splits, atoi(c->splits), "%s: not the forced splits", what);
  cr_assert_eq(p.groups > 1, c->groups, "%s: expected %s", what, c->groups ? "two levels" : "one level");

  /* Output o's split s holds one value, at its first element. */
  unsigned char *h = calloc((size_t)n, size);
  double *partials = tfx_xmalloc((size_t)(n_out * p.splits) * sizeof *partials);
  double *want = tfx_xmalloc((size_t)n_out * sizeof *want);
  cr_assert(h);
  /* The data must tell the finish from a sequential fold, and, where a lane folds three
   * partials or more (a reversed fold of two is the same sum), from each lane's fold reversed. */
  const int lanes_of_three = p.group_splits >= 3 * p.finish_lanes;
  int draw = 0;
  for (; draw < DRAWS; ++draw) {
    int sequential_differs = 0, reversed_differs = 0;
    for (int64_t o = 0; o < n_out; ++o) {
      double *po = partials + o * p.splits;
      for (int64_t sp = 0; sp < p.splits; ++sp)
        po[sp] = split_first(&p, len, V, sp) < 0 ? IDENTITY
                                                  : rough(t, seed + 1000 * (uint64_t)draw, (uint64_t)(o * p.splits + sp));
      want[o] = dims_finish(t, po, &p, ORDER_DOCUMENTED);
      sequential_differs += !same_bits(t, want[o], dims_finish(t, po, &p, ORDER_SEQUENTIAL));
      if (lanes_of_three) reversed_differs += !same_bits(t, want[o], dims_finish(t, po, &p, ORDER_LANES_REVERSED));
    }
    if (sequential_differs > 0 && (reversed_differs > 0 || !lanes_of_three)) break;
  }
  cr_assert_lt(draw, DRAWS, "%s: no data of %d draws tell the finish's order from the others", what, DRAWS);
  for (int64_t o = 0; o < n_out; ++o)
    for (int64_t sp = 0; sp < p.splits; ++sp) {
      const int64_t r = split_first(&p, len, V, sp);
      if (r >= 0) store_value(t, h, c->rdim == 0 ? r * cols + o : o * cols + r, partials[o * p.splits + sp]);
    }

  void *src = tfx_upload(ctx, h, (size_t)n * size), *dst = tfx_alloc(ctx, (size_t)n_out * size);
  cr_assert((uintptr_t)src % 16 == 0, "the source is not 16-byte aligned: the rows body's vectors shift");
  s.data = src;
  d.data = dst;
  unsigned char *got = tfx_xmalloc((size_t)n_out * size);
  for (int one = 0; one < 2; ++one) {
    setting("AKX_ONE_LAUNCH", one ? "1" : "0");
    counters_reset();
    cr_assert_eq(akx_reduce_dims(ctx, &d, &s, AKX_MAP_IDENTITY, AKX_OP_ADD, &opts), AKX_SUCCESS, "%s: %s", what,
                 akx_last_error());
    if (tfx_is_sim(ctx))
      cr_assert_eq(launches_since(), one ? 1u : 2u, "%s, %s path: %llu launches", what, one ? "one-launch" : "two-launch",
                   (unsigned long long)launches_since());
    tfx_to_host(ctx, got, dst, (size_t)n_out * size);
    char path[260];
    snprintf(path, sizeof path, "%s, %s", what, one ? "one launch" : "two launches");
    assert_bits(t, got, want, n_out, path);
  }
  free(got);
  free(want);
  free(partials);
  free(h);
  tfx_free(ctx, src);
  tfx_free(ctx, dst);
}

/* Three splits (one level) on each body and lane count, hundreds and 1000 (two levels: groups,
 * each with lanes of three partials or more). A rows body's cols are in 16-byte vectors (x V
 * elements). Blocks of 64 threads for 1000 splits: the sim runs a fiber per thread. */
static const dims_shape dims_shapes[] = {
    {7, 33, 0, "columns", "3", 0, 0},       /* 8 lanes, a second column of one output */
    {40, 9, 0, "per_thread", "3", 0, 0},    /* 16 lanes */
    {40, 9, 0, "tiled", "3", 0, 0},         /* 32 lanes */
    {2, 40, 1, "rows", "3", 0, 0},          /* 32 lanes, a block per output */
    {5, 12, 1, "warp_rows", "3", 0, 0},     /* 32 lanes, a warp per output */
    {613, 33, 0, "columns", "300", 1, 0},   /* 5 groups of 64 */
    {613, 40, 0, "per_thread", "130", 1, 0}, /* 4 lanes, 5 groups of 32 */
    {1000, 5, 0, "columns", "1000", 1, 64}, /* one split a row */
    {900, 9, 0, "tiled", "1000", 1, 64},    /* 100 empty splits */
    {2, 1000, 1, "rows", "1000", 1, 64},    /* one vector a split */
};

static void dims_sweep(akx_dtype t) {
  for (size_t i = 0; i < sizeof dims_shapes / sizeof dims_shapes[0]; ++i) dims_case(t, &dims_shapes[i], 100 + i);
}

Test(finish_order, split_dims_float32) { dims_sweep(AKX_FLOAT32); }
Test(finish_order, split_dims_float64) { dims_sweep(AKX_FLOAT64); }

/* ---- the tile scan's look-back --------------------------------------------------------------- */

/* Exclusive prefixes of `tiles` tiles with aggregates agg (kernels/akx/lookback.cuh, the radix-32
 * tree: tests/support/lookback_model.h): tile t's prefix is high o low, each fold from the
 * identity oldest first, and its node low o agg[t]. ORDER_SEQUENTIAL: the plain left fold of the
 * aggregates; ORDER_LANES_REVERSED: both folds newest first. */
static void lookback_prefixes(akx_dtype t, const double *agg, int64_t tiles, order o, double *prefix) {
  double *node = tfx_xmalloc((size_t)tiles * sizeof *node);
  double running = IDENTITY;
  for (int64_t tile = 0; tile < tiles; ++tile) {
    if (o == ORDER_SEQUENTIAL) {
      prefix[tile] = running;
      running = add(t, running, agg[tile]);
      continue;
    }
    uint64_t q[TLB_MAX_TERMS];
    int k;
    const int m = tlb_lookback_terms((uint64_t)tile, q, &k);
    double low = IDENTITY, high = IDENTITY;
    for (int j = 0; j < k; ++j) low = add(t, low, node[q[o == ORDER_DOCUMENTED ? m - k + j : m - 1 - j]]);
    for (int j = 0; j < m - k; ++j) high = add(t, high, node[q[o == ORDER_DOCUMENTED ? j : m - k - 1 - j]]);
    node[tile] = k ? add(t, low, agg[tile]) : agg[tile];
    prefix[tile] = m > k ? (k ? add(t, high, low) : high) : low;
  }
  free(node);
}

/* A whole scan of `tiles` tiles of the plan's size (the tuning's), one nonzero value per tile
 * at its first element: each tile's aggregate is that value exactly, every element of tile t
 * is prefix(t) o value (an exclusive scan: prefix(t) at the tile's first, +0.0 at the
 * sequence's head), each compared bitwise. The last tile is partial where tiles is even. */
static void lookback_case(akx_dtype t, int64_t tiles, int exclusive, uint64_t seed) {
  const size_t size = akx_dtype_size(t);
  akx_scan_opts opts = akx_scan_opts_default();
  opts.exclusive = exclusive;
  akx__scan_plan p;
  size_t ws = 0;
  akx_array s = akx_vector(NULL, t, 1000000), d = akx_vector(NULL, t, 1000000);
  cr_assert_eq(akx__scan_prepare(ctx, &d, &s, AKX_OP_ADD, AKX_DIM_ALL, &opts, 0, NULL, &p, &ws), AKX_SUCCESS, "%s",
               akx_last_error());
  const int64_t tile = (int64_t)p.block_size * p.items_per_thread;
  const int64_t n = tiles * tile - (tiles % 2 == 0 ? tile / 3 : 0);
  s = akx_vector(NULL, t, n);
  d = akx_vector(NULL, t, n);
  cr_assert_eq(akx__scan_prepare(ctx, &d, &s, AKX_OP_ADD, AKX_DIM_ALL, &opts, 0, NULL, &p, &ws), AKX_SUCCESS, "%s",
               akx_last_error());
  char what[160];
  snprintf(what, sizeof what, "%s %s scan of %lld elements, %lld tiles of %d x %d", akx_dtype_name(t),
           exclusive ? "exclusive" : "inclusive", (long long)n, (long long)tiles, (int)p.block_size,
           (int)p.items_per_thread);
  cr_assert_eq(p.shape, AKX__SCAN_WHOLE, "%s: not the tile scan", what);
  cr_assert_eq(p.tiles, tiles, "%s: the plan has %lld tiles", what, (long long)p.tiles);

  unsigned char *h = calloc((size_t)n, size);
  cr_assert(h);
  double *agg = tfx_xmalloc((size_t)tiles * sizeof *agg), *prefix = tfx_xmalloc((size_t)tiles * sizeof *prefix);
  double *other = tfx_xmalloc((size_t)tiles * sizeof *other);
  /* From 35 tiles the tree's folds are not the left fold (tile 34: node 31 o (v32 o v33)); from
   * 4, a fold of three nodes or more (tile 3's) is not its reverse. The data must tell them. */
  const order others[2] = {ORDER_SEQUENTIAL, ORDER_LANES_REVERSED};
  int draw = 0;
  for (; draw < DRAWS; ++draw) {
    for (int64_t k = 0; k < tiles; ++k) agg[k] = rough(t, seed + 1000 * (uint64_t)draw, (uint64_t)k);
    lookback_prefixes(t, agg, tiles, ORDER_DOCUMENTED, prefix);
    int told = 1;
    for (int j = 0; j < 2; ++j) {
      if (tiles < (j == 0 ? 35 : 4)) continue;
      lookback_prefixes(t, agg, tiles, others[j], other);
      int differs = 0;
      for (int64_t k = 0; k < tiles; ++k) differs += !same_bits(t, add(t, prefix[k], agg[k]), add(t, other[k], agg[k]));
      told = told && differs > 0;
    }
    if (told) break;
  }
  cr_assert_lt(draw, DRAWS, "%s: no data of %d draws tell the look-back's order from the others", what, DRAWS);
  for (int64_t k = 0; k < tiles; ++k) store_value(t, h, k * tile, agg[k]);
  double *want = tfx_xmalloc((size_t)n * sizeof *want);
  for (int64_t e = 0; e < n; ++e) {
    const int64_t k = e / tile;
    want[e] = exclusive && e == k * tile ? (e == 0 ? 0.0 : prefix[k]) : add(t, prefix[k], agg[k]);
  }

  void *src = tfx_upload(ctx, h, (size_t)n * size), *dst = tfx_alloc(ctx, (size_t)n * size);
  s.data = src;
  d.data = dst;
  cr_assert_eq(akx_scan(ctx, &d, &s, AKX_OP_ADD, AKX_DIM_ALL, &opts), AKX_SUCCESS, "%s: %s", what, akx_last_error());
  unsigned char *got = tfx_xmalloc((size_t)n * size);
  tfx_to_host(ctx, got, dst, (size_t)n * size);
  assert_bits(t, got, want, n, what);
  free(got);
  free(want);
  free(other);
  free(prefix);
  free(agg);
  free(h);
  tfx_free(ctx, src);
  tfx_free(ctx, dst);
}

static void lookback_sweep(akx_dtype t) {
  const int64_t tiles[] = {1, 2, 3, 7, 64, 100, 1030};
  for (size_t i = 0; i < sizeof tiles / sizeof tiles[0]; ++i) lookback_case(t, tiles[i], 0, 200 + i);
  lookback_case(t, 100, 1, 210);
  lookback_case(t, 7, 1, 211);
}

Test(finish_order, lookback_float32) { lookback_sweep(AKX_FLOAT32); }
Test(finish_order, lookback_float64) { lookback_sweep(AKX_FLOAT64); }

/* ---- the column scans' carries ---------------------------------------------------------------- */

/* One line of n values (x[i * step]) scanned in chunks of chunk_len from `carry`
 * (kernels/akx/scan_columns.cuh): each chunk's total is its left fold from its first element,
 * its start the left fold of carry and the totals before it (from the identity), its outputs
 * the left fold from its start; out[i * step], inclusive. Returns the fold of the chunks'
 * totals from the identity (a piece's total, src/scan/scan_piece.c). ORDER_SEQUENTIAL: a plain
 * scan from carry. */
static double chunked_scan(akx_dtype t, const double *x, int64_t n, int64_t step, int64_t chunk_len, double carry,
                           order o, double *out) {
  double start = add(t, IDENTITY, carry), total = IDENTITY;
  for (int64_t c0 = 0; c0 < n; c0 += chunk_len) {
    const int64_t c1 = c0 + chunk_len < n ? c0 + chunk_len : n;
    double chunk = x[c0 * step];
    for (int64_t i = c0 + 1; i < c1; ++i) chunk = add(t, chunk, x[i * step]);
    double running = start;
    for (int64_t i = c0; i < c1; ++i) out[i * step] = running = add(t, running, x[i * step]);
    start = o == ORDER_SEQUENTIAL ? running : add(t, start, chunk);
    total = add(t, total, chunk);
  }
  return total;
}

/* A rows x cols scan along dim 0 (a thread per column, the scanned dim cut into the plan's
 * chunks), any values. */
static void columns_case(akx_dtype t, int64_t rows, int64_t cols, uint64_t seed) {
  const size_t size = akx_dtype_size(t);
  const int64_t n = rows * cols, shape[2] = {rows, cols};
  akx_array s = akx_array_c(NULL, t, 2, shape), d = akx_array_c(NULL, t, 2, shape);
  akx__scan_plan p;
  size_t ws = 0;
  cr_assert_eq(akx__scan_prepare(ctx, &d, &s, AKX_OP_ADD, 0, NULL, 0, NULL, &p, &ws), AKX_SUCCESS, "%s",
               akx_last_error());
  char what[160];
  snprintf(what, sizeof what, "%s scan of %lldx%lld along dim 0 (%lld chunks of %lld)", akx_dtype_name(t),
           (long long)rows, (long long)cols, (long long)p.chunks, (long long)p.chunk_len);
  cr_assert_eq(p.shape, AKX__SCAN_COLUMNS, "%s: not the column scan", what);
  cr_assert_gt(p.chunks, 2, "%s: too few chunks to carry", what);
  double *x = tfx_xmalloc((size_t)n * sizeof *x), *want = tfx_xmalloc((size_t)n * sizeof *want);
  double *other = tfx_xmalloc((size_t)n * sizeof *other);
  unsigned char *h = tfx_xmalloc((size_t)n * size);
  for (int64_t i = 0; i < n; ++i) store_value(t, h, i, x[i] = rough(t, seed, (uint64_t)i));
  int differs = 0;
  for (int64_t c = 0; c < cols; ++c) {
    chunked_scan(t, x + c, rows, cols, p.chunk_len, IDENTITY, ORDER_DOCUMENTED, want + c);
    chunked_scan(t, x + c, rows, cols, p.chunk_len, IDENTITY, ORDER_SEQUENTIAL, other + c);
  }
  for (int64_t i = 0; i < n; ++i) differs += !same_bits(t, want[i], other[i]);
  cr_assert_gt(differs, 0, "%s: the data do not tell the chunks' carries from a sequential scan", what);
  void *src = tfx_upload(ctx, h, (size_t)n * size), *dst = tfx_alloc(ctx, (size_t)n * size);
  s.data = src;
  d.data = dst;
  cr_assert_eq(akx_scan(ctx, &d, &s, AKX_OP_ADD, 0, NULL), AKX_SUCCESS, "%s: %s", what, akx_last_error());
  tfx_to_host(ctx, h, dst, (size_t)n * size);
  assert_bits(t, h, want, n, what);
  free(h);
  free(other);
  free(want);
  free(x);
  tfx_free(ctx, src);
  tfx_free(ctx, dst);
}

Test(finish_order, column_scan_carries) {
  columns_case(AKX_FLOAT32, 3000, 5, 300);
  columns_case(AKX_FLOAT64, 3000, 5, 301);
  columns_case(AKX_FLOAT32, 1000, 70, 302);
}

/* ---- akx_scan_piece's carries ----------------------------------------------------------------- */

/* The exchange of one process's pieces, run in order: piece k's totals go to block k of `all`,
 * whose blocks 0..k-1 are then the totals of the pieces before it. */
typedef struct {
  akx_context *ctx;
  int64_t k, pieces;
  void *all;
  size_t bytes;
} piece_exchange;

static akx_status exchange(void *arg, const void *totals, size_t bytes, const void **before) {
  piece_exchange *x = arg;
  if (!x->all) {
    x->bytes = bytes;
    const akx_status st = akx_malloc(x->ctx, &x->all, (size_t)x->pieces * bytes);
    if (st != AKX_SUCCESS) return st;
  } else if (bytes != x->bytes) {
    return AKX_ERROR_INTERNAL; /* the pieces' lines differ: the call fails, the test sees it */
  }
  *before = x->k > 0 ? x->all : NULL;
  return akx_memcpy(x->ctx, (char *)x->all + (size_t)x->k * bytes, totals, bytes, AKX_COPY_DEVICE_TO_DEVICE);
}

/* A (sum of lens) x cols array cut along dim 0 into pieces, each scanned by akx_scan_piece in
 * order; each piece's outputs bitwise its chunks' model from the fold of the totals before it. */
static void piece_case(akx_dtype t, const int64_t *lens, int pieces, int64_t cols, uint64_t seed) {
  const size_t size = akx_dtype_size(t);
  piece_exchange x = {ctx, 0, pieces, NULL, 0};
  double *totals = tfx_xmalloc((size_t)(pieces * cols) * sizeof *totals);
  int differs = 0;
  int64_t index_base = 0;
  for (int k = 0; k < pieces; ++k) {
    const int64_t rows = lens[k], n = rows * cols, shape[2] = {rows, cols};
    akx_array s = akx_array_c(NULL, t, 2, shape), d = akx_array_c(NULL, t, 2, shape);
    const akx_scan_piece_t piece = {index_base, k, exchange, &x};
    index_base += rows;
    akx__scan_plan p;
    size_t ws = 0;
    cr_assert_eq(akx__scan_prepare(ctx, &d, &s, AKX_OP_ADD, 0, NULL, 0, &piece, &p, &ws), AKX_SUCCESS, "%s",
                 akx_last_error());
    char what[160];
    snprintf(what, sizeof what, "%s piece %d of %d, %lldx%lld along dim 0 (%lld chunks of %lld)", akx_dtype_name(t), k,
             pieces, (long long)rows, (long long)cols, (long long)p.chunks, (long long)p.chunk_len);
    cr_assert_gt(p.chunks, 2, "%s: too few chunks to carry", what);
    double *v = tfx_xmalloc((size_t)n * sizeof *v), *want = tfx_xmalloc((size_t)n * sizeof *want);
    double *other = tfx_xmalloc((size_t)n * sizeof *other);
    unsigned char *h = tfx_xmalloc((size_t)n * size);
    for (int64_t i = 0; i < n; ++i) store_value(t, h, i, v[i] = rough(t, seed + (uint64_t)k, (uint64_t)i));
    for (int64_t c = 0; c < cols; ++c) {
      /* The carry: the totals of the pieces before, in order, from the identity. */
      double carry = IDENTITY;
      for (int j = 0; j < k; ++j) carry = add(t, carry, totals[j * cols + c]);
      totals[k * cols + c] = chunked_scan(t, v + c, rows, cols, p.chunk_len, carry, ORDER_DOCUMENTED, want + c);
      chunked_scan(t, v + c, rows, cols, p.chunk_len, carry, ORDER_SEQUENTIAL, other + c);
    }
    for (int64_t i = 0; i < n; ++i) differs += !same_bits(t, want[i], other[i]);
    void *src = tfx_upload(ctx, h, (size_t)n * size), *dst = tfx_alloc(ctx, (size_t)n * size);
    s.data = src;
    d.data = dst;
    x.k = k;
    cr_assert_eq(akx_scan_piece(ctx, &d, &s, AKX_OP_ADD, 0, NULL, &piece), AKX_SUCCESS, "%s: %s", what,
                 akx_last_error());
    tfx_to_host(ctx, h, dst, (size_t)n * size);
    assert_bits(t, h, want, n, what);
    /* The totals the piece handed over: the fold of its chunks' totals. */
    unsigned char *sent = tfx_xmalloc((size_t)cols * size);
    tfx_to_host(ctx, sent, (char *)x.all + (size_t)k * x.bytes, (size_t)cols * size);
    cr_assert_eq(x.bytes, (size_t)cols * size, "%s: %zu bytes of totals", what, x.bytes);
    snprintf(what + strlen(what), sizeof what - strlen(what), ", its totals");
    assert_bits(t, sent, totals + k * cols, cols, what);
    free(sent);
    free(h);
    free(other);
    free(want);
    free(v);
    tfx_free(ctx, src);
    tfx_free(ctx, dst);
  }
  cr_assert_gt(differs, 0, "%s pieces: the data do not tell the carries from a sequential scan", akx_dtype_name(t));
  free(totals);
  tfx_free(ctx, x.all);
}

Test(finish_order, scan_piece_carries) {
  const int64_t lens[] = {1100, 700, 1500};
  piece_case(AKX_FLOAT32, lens, 3, 3, 400);
  piece_case(AKX_FLOAT64, lens, 3, 3, 401);
}
