/* The combine order of the segmented and keyed family (kernels/akx/segment_tile.cuh), bit for
 * bit: float32 sums of values of very different magnitudes (2^-8 to 2^9, random signs and
 * mantissas, so that nearly every addition rounds) equal the bits of a host model that runs the
 * documented association step by step, and the same data are shown to give other bits under
 * each nearby association (else the check could not fail when the order changed). The model,
 * over (value, head count) pairs (keyed_scan: a head restarts the fold):
 *  - tiles of block_size x items_per_thread consecutive elements (forced to 64 x 4: 256), each
 *    thread's run of 4 folded left to right; the run totals scanned by
 *    kernels/akx/block_scan.cuh (each warp's Hillis-Steele shuffle scan, warp 0 the warps'
 *    totals likewise, a warp's prefix put before its lanes'); an element's value is
 *    ((tile prefix o run prefix) o its run's elements up to it, left to right);
 *  - akx_segmented_reduce: no look-back (tile prefix: the identity). A segment within one tile
 *    is the in-tile value at its last element; one spanning tiles t1..t2 is the split finish of
 *    its pieces (trail[t1]: the in-tile value at t1's last element; lead[t]: at t's last
 *    element, or at the segment's for t2): lane l of 32 folds pieces l*c .. (l+1)*c - 1 (c =
 *    ceil(pieces / 32)) from the identity, then the lanes in order from the identity; then
 *    the finish: dst's previous value (fold) o (init o value);
 *  - akx_segmented_scan, akx_scan_by_key, akx_reduce_by_key: the tile prefix from
 *    kernels/akx/lookback.cuh (node t = the 31 x level newest nodes of t's base-32
 *    decomposition, oldest first, o the tile's aggregate; prefix = (the older nodes, oldest
 *    first) o (those); tests/support/lookback_model.h); a scan's output is init o the inclusive value (exclusive: init o the
 *    value before, a segment's first init or +0.0), a by-key reduction's the run's last.
 * The data: 100 tiles (the last partial) of segments of 1 to 100 elements around ones that
 * cross tiles: 1000 and 5000 long, one beginning and one ending at a tile's edge, one of two
 * tiles, and one of 65 tiles (three pieces a lane: its lanes' order and each lane's direction
 * both matter). Keys are the segment's index. The other associations each case must tell
 * apart: one left fold per segment; the runs' totals folded left to right (not the block scan);
 * a split's pieces in one left fold, or each lane's backwards; the tile prefixes as a left fold
 * of the aggregates, or each as one left fold of its look-back nodes (not the older ones, then
 * the newest). *_random_schedule runs the file with the blocks in a shuffled order: the bits
 * stay the model's. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "akx.h"
#include "akx_sim.h"
#include "fixture.h"
#include "lookback_model.h"

static akx_context *ctx;
static void setup(void) { ctx = tfx_open(); }
static void teardown(void) { tfx_close(ctx); }
TestSuite(segmented_finish_order, .init = setup, .fini = teardown, .timeout = 120);

enum { BLOCK = 64, ITEMS = 4, TILE = BLOCK * ITEMS, TILES = 100 };

/* ---- the pairs ------------------------------------------------------------------------------- */

/* keyed_value<float> and keyed_scan's apply: b's head restarts the value, the counts add. */
typedef struct {
  float v;
  long long heads;
} pair;
static const pair PAIR_IDENTITY = {-0.0f, 0}; /* a float ADD's identity (kernels/akx/ops.cuh) */
static pair pair_apply(pair a, pair b) {
  pair r;
  if (b.heads) {
    r.v = b.v;
    r.heads = a.heads + b.heads;
  } else {
    r.v = a.v + b.v;
    r.heads = a.heads;
  }
  return r;
}
static pair pair_make(float x, int head) {
  const pair r = {x, head ? 1 : 0};
  return r;
}

/* The associations a model computes: the documented one, and the others the data must tell
 * apart from it. */
typedef enum {
  DOCUMENTED,
  STRAIGHT,              /* each segment one left fold, element by element */
  RUNS_LEFT_FOLD,        /* a tile's run totals folded left to right, not the block scan */
  LOOKBACK_LEFT_FOLD,    /* the tile prefixes a left fold of the aggregates */
  LOOKBACK_ONE_FOLD,     /* a tile's prefix one left fold of its nodes, not (older) o (newest k) */
  PIECES_LEFT_FOLD,      /* a split's pieces in one left fold */
  PIECES_LANES_REVERSED  /* each lane's pieces folded backwards */
} order;
static const char *order_name(order o) {
  switch (o) {
    case DOCUMENTED: return "the documented order";
    case STRAIGHT: return "one left fold per segment";
    case RUNS_LEFT_FOLD: return "the run totals folded left to right";
    case LOOKBACK_LEFT_FOLD: return "the tile prefixes as a left fold of the aggregates";
    case LOOKBACK_ONE_FOLD: return "a tile's prefix as one left fold of its look-back nodes";
    case PIECES_LEFT_FOLD: return "a split's pieces in one left fold";
    default: return "each lane's pieces folded backwards";
  }
}

/* ---- the tile: run folds and block scan ------------------------------------------------------ */

/* kernels/akx/warp_scan.cuh: at offsets 1, 2, ..., 16, lane l >= offset takes lane l - offset's
 * value (before this step) o its own. */
static void warp_scan_inclusive(pair *v) {
  for (int off = 1; off < 32; off <<= 1) {
    pair next[32];
    for (int l = 0; l < 32; ++l) next[l] = l >= off ? pair_apply(v[l - off], v[l]) : v[l];
    memcpy(v, next, sizeof next);
  }
}

/* kernels/akx/block_scan.cuh: each thread's exclusive prefix into excl, the block's total
 * returned. RUNS_LEFT_FOLD: one left fold of the totals instead. */
static pair block_scan_exclusive(const pair *total, int bd, order o, pair *excl) {
  if (o == RUNS_LEFT_FOLD) {
    pair running = PAIR_IDENTITY;
    for (int i = 0; i < bd; ++i) {
      excl[i] = running;
      running = pair_apply(running, total[i]);
    }
    return running;
  }
  const int warps = bd / 32;
  pair incl[1024], w[32];
  memcpy(incl, total, (size_t)bd * sizeof *incl);
  for (int k = 0; k < warps; ++k) warp_scan_inclusive(incl + 32 * k);
  for (int l = 0; l < 32; ++l) w[l] = l < warps ? incl[32 * l + 31] : PAIR_IDENTITY;
  warp_scan_inclusive(w);
  for (int i = 0; i < bd; ++i) {
    const int lane = i & 31, warp = i >> 5;
    pair e = lane ? incl[i - 1] : PAIR_IDENTITY;
    if (warp > 0) e = pair_apply(w[warp - 1], e);
    excl[i] = e;
  }
  return w[warps - 1];
}

/* ---- the look-back --------------------------------------------------------------------------- */

/* kernels/akx/lookback.cuh over the tiles' aggregates (the radix-32 tree:
 * tests/support/lookback_model.h): tile t's prefix is high o low, each fold from the identity
 * oldest first, its node low o agg[t]. LOOKBACK_ONE_FOLD: the prefix as one left fold of all
 * its nodes. */
static void lookback_prefixes(const pair *agg, int64_t tiles, order o, pair *prefix) {
  pair *node = tfx_xmalloc((size_t)tiles * sizeof *node);
  pair running = PAIR_IDENTITY;
  for (int64_t t = 0; t < tiles; ++t) {
    if (o == LOOKBACK_LEFT_FOLD) {
      prefix[t] = running;
      running = pair_apply(running, agg[t]);
      continue;
    }
    uint64_t q[TLB_MAX_TERMS];
    int k;
    const int m = tlb_lookback_terms((uint64_t)t, q, &k);
    pair low = PAIR_IDENTITY, high = PAIR_IDENTITY, all = PAIR_IDENTITY;
    for (int j = m - k; j < m; ++j) low = pair_apply(low, node[q[j]]);
    for (int j = 0; j < m - k; ++j) high = pair_apply(high, node[q[j]]);
    for (int j = 0; j < m; ++j) all = pair_apply(all, node[q[j]]);
    node[t] = k ? pair_apply(low, agg[t]) : agg[t];
    prefix[t] = o == LOOKBACK_ONE_FOLD ? all : m > k ? (k ? pair_apply(high, low) : high) : low;
  }
  free(node);
}

/* ---- the data and the whole model ------------------------------------------------------------ */

typedef struct {
  int64_t n, nseg;
  int64_t *off;        /* nseg + 1 */
  float *x;            /* n */
  unsigned char *head; /* n: a segment begins here */
  int32_t *key;        /* n: the segment's index */
} data;

/* A nonzero float of 2^-8 to 2^9 with a full random mantissa and a random sign. */
static float wide_value(uint64_t seed, uint64_t i) {
  const uint64_t r = ref_rand(seed, i), e = ref_rand(seed ^ 0x9e3779b9u, i);
  const double mantissa = 1.0 + ldexp((double)(r >> 41), -23);
  const float v = (float)ldexp(mantissa, (int)(e % 17) - 8);
  return (e >> 32) & 1 ? -v : v;
}

/* Segments of 1 to 100 around the long ones (see the file's comment), n = 99 tiles and 156. */
static data make_data(uint64_t seed) {
  data d;
  d.n = (int64_t)(TILES - 1) * TILE + 156;
  d.off = tfx_xmalloc((size_t)(d.n + 1) * sizeof *d.off);
  d.nseg = 0;
  int64_t pos = 0;
  uint64_t draw = 0;
#define SEG(len) (d.off[d.nseg++] = pos, pos += (len))
#define SMALL_UNTIL(end)                                                            \
  while (pos < (end)) {                                                             \
    int64_t len_ = 1 + (int64_t)(ref_rand(seed ^ 0xabcdefu, draw++) % 100);         \
    SEG(pos + len_ > (end) ? (end) - pos : len_);                                   \
  }
  SEG(3);
  SEG(1);
  SEG(250);             /* within tile 0 */
  SEG(1000);            /* tiles 0..4 */
  SMALL_UNTIL(5 * TILE);
  SEG(5000);            /* begins at tile 5's start: 5..24 */
  SMALL_UNTIL(25 * TILE - 120);
  SEG(120);             /* ends at tile 24's end, within it */
  SEG(300);             /* tiles 25..26, begins at the edge */
  SEG(28 * TILE - pos); /* tiles 26..27, ends at the edge */
  SMALL_UNTIL(31 * TILE + 77);
  /* tiles 31..95: 65 pieces (three a lane); it ends in tile 95, of level 1, whose prefix is
   * (node 31 o node 63) o (the fold of tiles 64..94's aggregates): a by-key reduction's output
   * that tells that from one fold of the nodes (a tile of level 0 folds its nodes in one) */
  SEG(95 * TILE + 100 - pos);
  SMALL_UNTIL(d.n);
#undef SEG
#undef SMALL_UNTIL
  d.off[d.nseg] = pos;
  cr_assert_eq(pos, d.n, "the segments cover %lld of %lld elements", (long long)pos, (long long)d.n);
  d.x = tfx_xmalloc((size_t)d.n * sizeof *d.x);
  d.head = calloc((size_t)d.n, 1);
  d.key = tfx_xmalloc((size_t)d.n * sizeof *d.key);
  cr_assert(d.head);
  for (int64_t s = 0; s < d.nseg; ++s) {
    cr_assert_gt(d.off[s + 1], d.off[s], "segment %lld is empty", (long long)s);
    d.head[d.off[s]] = 1;
    for (int64_t i = d.off[s]; i < d.off[s + 1]; ++i) d.key[i] = (int32_t)s;
  }
  for (int64_t i = 0; i < d.n; ++i) d.x[i] = wide_value(seed, (uint64_t)i);
  return d;
}
static void free_data(data *d) {
  free(d->off);
  free(d->x);
  free(d->head);
  free(d->key);
}

/* Every element's pair before and after it: the tiles' run folds, block scans and rescans,
 * from the look-back's tile prefixes (lookback) or the identity (the segmented reduction).
 * STRAIGHT: one left fold of all the pairs. */
static void model_pairs(const data *d, int lookback, order o, pair *before, pair *after) {
  if (o == STRAIGHT) {
    pair running = PAIR_IDENTITY;
    for (int64_t i = 0; i < d->n; ++i) {
      before[i] = running;
      after[i] = running = pair_apply(running, pair_make(d->x[i], d->head[i]));
    }
    return;
  }
  const int64_t tiles = (d->n + TILE - 1) / TILE;
  pair *run_prefix = tfx_xmalloc((size_t)(tiles * BLOCK) * sizeof *run_prefix);
  pair *agg = tfx_xmalloc((size_t)tiles * sizeof *agg), *prefix = tfx_xmalloc((size_t)tiles * sizeof *prefix);
  for (int64_t t = 0; t < tiles; ++t) {
    pair total[BLOCK];
    for (int tid = 0; tid < BLOCK; ++tid)
      for (int k = 0; k < ITEMS; ++k) {
        /* past the end: the identity, no head (value_loader) */
        const int64_t i = t * TILE + tid * ITEMS + k;
        const pair e = i < d->n ? pair_make(d->x[i], d->head[i]) : pair_make(PAIR_IDENTITY.v, 0);
        total[tid] = k ? pair_apply(total[tid], e) : e;
      }
    agg[t] = block_scan_exclusive(total, BLOCK, o, run_prefix + t * BLOCK);
  }
  if (lookback) lookback_prefixes(agg, tiles, o, prefix);
  else
    for (int64_t t = 0; t < tiles; ++t) prefix[t] = PAIR_IDENTITY;
  for (int64_t t = 0; t < tiles; ++t)
    for (int tid = 0; tid < BLOCK; ++tid) {
      pair running = pair_apply(prefix[t], run_prefix[t * BLOCK + tid]);
      if (t == 0 && tid == 0) running = PAIR_IDENTITY;
      for (int k = 0; k < ITEMS; ++k) {
        const int64_t i = t * TILE + tid * ITEMS + k;
        if (i >= d->n) break;
        before[i] = running;
        after[i] = running = pair_apply(running, pair_make(d->x[i], d->head[i]));
      }
    }
  free(prefix);
  free(agg);
  free(run_prefix);
}

/* split_finish: 32 lanes, lane l folding pieces l*c .. (l+1)*c - 1 from the identity, then the
 * lanes' results in lane order from the identity. */
static float split_fold(const float *pieces, int64_t count, order o) {
  float all = PAIR_IDENTITY.v;
  if (o == PIECES_LEFT_FOLD) {
    for (int64_t j = 0; j < count; ++j) all += pieces[j];
    return all;
  }
  const int64_t c = (count + 31) / 32;
  for (int64_t l = 0; l < 32; ++l) {
    const int64_t lo = l * c, hi = (l + 1) * c < count ? (l + 1) * c : count;
    float v = PAIR_IDENTITY.v;
    if (o == PIECES_LANES_REVERSED)
      for (int64_t j = hi - 1; j >= lo; --j) v += pieces[j];
    else
      for (int64_t j = lo; j < hi; ++j) v += pieces[j];
    all += v;
  }
  return all;
}

/* Each segment's reduction before the finish (akx_segmented_reduce: no look-back, a segment
 * spanning tiles finished from its pieces). */
static void model_segmented_reduce(const data *d, order o, float *out) {
  pair *before = tfx_xmalloc((size_t)d->n * sizeof *before), *after = tfx_xmalloc((size_t)d->n * sizeof *after);
  model_pairs(d, 0, o, before, after);
  float pieces[TILES];
  for (int64_t s = 0; s < d->nseg; ++s) {
    const int64_t b = d->off[s], e = d->off[s + 1], t1 = b / TILE, t2 = (e - 1) / TILE;
    if (o == STRAIGHT || t1 == t2) {
      out[s] = after[e - 1].v;
      continue;
    }
    for (int64_t t = t1; t < t2; ++t) pieces[t - t1] = after[(t + 1) * TILE - 1].v; /* trail[t1], lead[t] */
    pieces[t2 - t1] = after[e - 1].v;                                                /* lead[t2] */
    out[s] = split_fold(pieces, t2 - t1 + 1, o);
  }
  free(after);
  free(before);
}

/* A scan's outputs (kernels/akx/scan_tile.cuh, scan_result), init NULL for none. */
static void model_scan(const data *d, int exclusive, const float *init, order o, float *out) {
  pair *before = tfx_xmalloc((size_t)d->n * sizeof *before), *after = tfx_xmalloc((size_t)d->n * sizeof *after);
  model_pairs(d, 1, o, before, after);
  for (int64_t i = 0; i < d->n; ++i) {
    if (!exclusive) out[i] = init ? *init + after[i].v : after[i].v;
    else if (d->head[i]) out[i] = init ? *init : 0.0f; /* the empty prefix: init, or +0.0 */
    else out[i] = init ? *init + before[i].v : before[i].v;
  }
  free(after);
  free(before);
}

/* A by-key reduction's runs before the finish: the value at each run's last element. */
static void model_reduce_by_key(const data *d, order o, float *out) {
  pair *before = tfx_xmalloc((size_t)d->n * sizeof *before), *after = tfx_xmalloc((size_t)d->n * sizeof *after);
  model_pairs(d, 1, o, before, after);
  for (int64_t s = 0; s < d->nseg; ++s) out[s] = after[d->off[s + 1] - 1].v;
  free(after);
  free(before);
}

/* What a case computes: akx_segmented_reduce's and akx_reduce_by_key's outputs before the finish
 * (one a segment), a scan's outputs (one an element). */
typedef enum { SEGMENTED_REDUCE, SCAN, REDUCE_BY_KEY } family;
typedef struct {
  family f;
  int exclusive;
  const float *init; /* a scan's, or NULL */
} model_case;
static int64_t outputs_of(const data *d, const model_case *c) { return c->f == SCAN ? d->n : d->nseg; }
static void model(const data *d, const model_case *c, order o, float *out) {
  if (c->f == SEGMENTED_REDUCE) model_segmented_reduce(d, o, out);
  else if (c->f == SCAN) model_scan(d, c->exclusive, c->init, o, out);
  else model_reduce_by_key(d, o, out);
}

static uint32_t bits_of(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

#define DRAWS 16
/* The case's data, drawn (seed + 1000 * draw) until the documented results differ from each of
 * the `count` other orders' in at least one output, so that the bitwise check fails if the
 * kernel took another; *want: the documented results (outputs_of entries, malloc'd). A few
 * draws at most: where a look-back prefix meets only a run's last element (akx_reduce_by_key),
 * two associations of a few tile sums may round alike. */
static data told_apart(const model_case *c, const order *others, int count, uint64_t seed, const char *what,
                       float **want) {
  order untold = DOCUMENTED;
  for (int draw = 0; draw < DRAWS; ++draw) {
    data d = make_data(seed + 1000 * (uint64_t)draw);
    const int64_t n = outputs_of(&d, c);
    float *w = tfx_xmalloc((size_t)n * sizeof *w), *other = tfx_xmalloc((size_t)n * sizeof *other);
    model(&d, c, DOCUMENTED, w);
    untold = DOCUMENTED;
    for (int k = 0; k < count && untold == DOCUMENTED; ++k) {
      model(&d, c, others[k], other);
      int64_t differ = 0;
      for (int64_t i = 0; i < n; ++i) differ += bits_of(w[i]) != bits_of(other[i]);
      if (differ == 0) untold = others[k];
    }
    free(other);
    if (untold == DOCUMENTED) {
      *want = w;
      return d;
    }
    free(w);
    free_data(&d);
  }
  cr_assert_fail("%s: no data of %d draws tell the documented order from %s", what, DRAWS, order_name(untold));
  abort(); /* not reached */
}

/* ---- checks ---------------------------------------------------------------------------------- */

/* Asserts that got[0..n) are bit for bit want's. */
static void assert_bits(const float *got, const float *want, int64_t n, const char *what) {
  int64_t first = -1, wrong = 0;
  for (int64_t i = 0; i < n; ++i)
    if (bits_of(got[i]) != bits_of(want[i])) {
      if (first < 0) first = i;
      ++wrong;
    }
  if (first >= 0)
    cr_assert_fail("%s: %lld of %lld results are not the documented order's bits; [%lld] is %08x (%a), expected "
                   "%08x (%a)",
                   what, (long long)wrong, (long long)n, (long long)first, (unsigned)bits_of(got[first]),
                   (double)got[first], (unsigned)bits_of(want[first]), (double)want[first]);
}

/* On the sim: the kernel ran TILES blocks of BLOCK threads (the forced tile). */
static void assert_tiles(const char *kernel, const char *what) {
  if (!tfx_is_sim(ctx)) return;
  akx_sim_kernel_counters k[64];
  int32_t count = 0;
  cr_assert_eq(akx_sim_counters_get(ctx, NULL, k, 64, &count), AKX_SUCCESS, "%s", akx_last_error());
  for (int32_t i = 0; i < count && i < 64; ++i)
    if (strcmp(k[i].kernel, kernel) == 0) {
      cr_assert_eq(k[i].last_grid, (uint32_t)TILES, "%s: %u tiles, not %d", what, k[i].last_grid, TILES);
      cr_assert_eq(k[i].last_block, (uint32_t)BLOCK, "%s: blocks of %u, not %d", what, k[i].last_block, BLOCK);
      return;
    }
  cr_assert_fail("%s: no launch of %s counted", what, kernel);
}

/* ---- akx_segmented_reduce ---------------------------------------------------------------------- */

static akx_reduce_opts reduce_opts(void) {
  akx_reduce_opts o = akx_reduce_opts_default();
  o.block_size = BLOCK;
  o.items_per_thread = ITEMS;
  return o;
}

/* dst[s] for the data, with init and fold where given (prev: dst's values before). */
static void run_segmented_reduce(const data *d, const akx_reduce_opts *opts, const float *prev, float *got) {
  void *src = tfx_upload(ctx, d->x, (size_t)d->n * 4), *off = tfx_upload(ctx, d->off, (size_t)(d->nseg + 1) * 8);
  void *dst = tfx_alloc(ctx, (size_t)d->nseg * 4);
  if (prev) tfx_to_device(ctx, dst, prev, (size_t)d->nseg * 4);
  const akx_array s = akx_vector(src, AKX_FLOAT32, d->n), o = akx_vector(off, AKX_INT64, d->nseg + 1);
  const akx_array r = akx_vector(dst, AKX_FLOAT32, d->nseg);
  cr_assert_eq(akx_segmented_reduce(ctx, &r, &s, &o, AKX_MAP_IDENTITY, AKX_OP_ADD, opts), AKX_SUCCESS, "%s",
               akx_last_error());
  tfx_to_host(ctx, got, dst, (size_t)d->nseg * 4);
  assert_tiles("segmented_reduce", "akx_segmented_reduce");
  tfx_free(ctx, src);
  tfx_free(ctx, off);
  tfx_free(ctx, dst);
}

Test(segmented_finish_order, segmented_reduce_split_and_whole_segments) {
  const char *what = "akx_segmented_reduce, float32 ADD, 64 x 4 tiles";
  const model_case c = {SEGMENTED_REDUCE, 0, NULL};
  const order others[] = {STRAIGHT, RUNS_LEFT_FOLD, PIECES_LEFT_FOLD, PIECES_LANES_REVERSED};
  float *want;
  data d = told_apart(&c, others, 4, 1, what, &want);
  float *got = tfx_xmalloc((size_t)d.nseg * 4);
  const akx_reduce_opts opts = reduce_opts();
  run_segmented_reduce(&d, &opts, NULL, got);
  assert_bits(got, want, d.nseg, what);
  free(got);
  free(want);
  free_data(&d);
}

/* The finish: dst's previous value o (init o the segment's value), each rounding. */
Test(segmented_finish_order, segmented_reduce_init_and_fold) {
  data d = make_data(2);
  const int64_t ns = d.nseg;
  float *value = tfx_xmalloc((size_t)ns * 4), *prev = tfx_xmalloc((size_t)ns * 4);
  float *want = tfx_xmalloc((size_t)ns * 4), *other = tfx_xmalloc((size_t)ns * 4), *got = tfx_xmalloc((size_t)ns * 4);
  const float init = 0x1.3579bdp+5f;
  model_segmented_reduce(&d, DOCUMENTED, value);
  for (int64_t s = 0; s < ns; ++s) {
    prev[s] = wide_value(77, (uint64_t)s);
    want[s] = prev[s] + (init + value[s]);
    other[s] = (prev[s] + init) + value[s];
  }
  int64_t differ = 0;
  for (int64_t s = 0; s < ns; ++s) differ += bits_of(want[s]) != bits_of(other[s]);
  cr_assert_gt(differ, 0, "the data do not tell prev o (init o v) from (prev o init) o v");
  akx_reduce_opts opts = reduce_opts();
  opts.init = &init;
  opts.fold = 1;
  run_segmented_reduce(&d, &opts, prev, got);
  assert_bits(got, want, ns, "akx_segmented_reduce, float32 ADD with init and fold, 64 x 4 tiles");
  free(got);
  free(other);
  free(want);
  free(prev);
  free(value);
  free_data(&d);
}

/* ---- the scans over the look-back ---------------------------------------------------------------- */

static akx_scan_opts scan_opts(int exclusive, const float *init) {
  akx_scan_opts o = akx_scan_opts_default();
  o.block_size = BLOCK;
  o.items_per_thread = ITEMS;
  o.exclusive = exclusive;
  o.init = init;
  return o;
}

static const order scan_others[] = {STRAIGHT, RUNS_LEFT_FOLD, LOOKBACK_LEFT_FOLD, LOOKBACK_ONE_FOLD};

/* One scan of the data (by the offsets, or by_keys by the keys), bitwise the model. */
static void scan_case(int by_keys, int exclusive, const float *init, uint64_t seed) {
  char what[160];
  snprintf(what, sizeof what, "%s, float32 ADD, %s%s, 64 x 4 tiles", by_keys ? "akx_scan_by_key" : "akx_segmented_scan",
           exclusive ? "exclusive" : "inclusive", init ? " with init" : "");
  const model_case c = {SCAN, exclusive, init};
  float *want;
  data d = told_apart(&c, scan_others, 4, seed, what, &want);
  const int64_t n = d.n;
  float *got = tfx_xmalloc((size_t)n * 4);
  void *src = tfx_upload(ctx, d.x, (size_t)n * 4), *dst = tfx_alloc(ctx, (size_t)n * 4);
  const akx_array s = akx_vector(src, AKX_FLOAT32, n), r = akx_vector(dst, AKX_FLOAT32, n);
  const akx_scan_opts opts = scan_opts(exclusive, init);
  void *aux;
  if (by_keys) {
    aux = tfx_upload(ctx, d.key, (size_t)n * 4);
    const akx_array k = akx_vector(aux, AKX_INT32, n);
    cr_assert_eq(akx_scan_by_key(ctx, &r, &k, &s, AKX_OP_ADD, &opts), AKX_SUCCESS, "%s: %s", what, akx_last_error());
  } else {
    aux = tfx_upload(ctx, d.off, (size_t)(d.nseg + 1) * 8);
    const akx_array o = akx_vector(aux, AKX_INT64, d.nseg + 1);
    cr_assert_eq(akx_segmented_scan(ctx, &r, &s, &o, AKX_OP_ADD, &opts), AKX_SUCCESS, "%s: %s", what,
                 akx_last_error());
  }
  tfx_to_host(ctx, got, dst, (size_t)n * 4);
  assert_tiles(by_keys ? "scan_by_key" : "segmented_scan", what);
  assert_bits(got, want, n, what);
  tfx_free(ctx, src);
  tfx_free(ctx, dst);
  tfx_free(ctx, aux);
  free(got);
  free(want);
  free_data(&d);
}

Test(segmented_finish_order, segmented_scan_across_many_tiles) {
  const float init = -0x1.2468acp+3f;
  scan_case(0, 0, NULL, 3);
  scan_case(0, 1, &init, 4);
}

Test(segmented_finish_order, scan_by_key_across_many_tiles) {
  const float init = 0x1.fedcbap-2f;
  scan_case(1, 0, &init, 5);
  scan_case(1, 1, NULL, 6);
}

Test(segmented_finish_order, reduce_by_key_across_many_tiles) {
  const float init = 0x1.5a5a5ap+1f;
  const char *what = "akx_reduce_by_key, float32 ADD with init, 64 x 4 tiles";
  const model_case c = {REDUCE_BY_KEY, 0, NULL};
  float *want;
  data d = told_apart(&c, scan_others, 4, 7, what, &want);
  const int64_t n = d.n, ns = d.nseg;
  float *got = tfx_xmalloc((size_t)ns * 4);
  for (int64_t s = 0; s < ns; ++s) want[s] = init + want[s];
  void *vals = tfx_upload(ctx, d.x, (size_t)n * 4), *keys = tfx_upload(ctx, d.key, (size_t)n * 4);
  void *keys_out = tfx_alloc(ctx, (size_t)ns * 4), *vals_out = tfx_alloc(ctx, (size_t)ns * 4);
  const akx_array v = akx_vector(vals, AKX_FLOAT32, n), k = akx_vector(keys, AKX_INT32, n);
  const akx_array ko = akx_vector(keys_out, AKX_INT32, ns), vo = akx_vector(vals_out, AKX_FLOAT32, ns);
  akx_reduce_opts opts = reduce_opts();
  opts.init = &init;
  int64_t runs = -1;
  cr_assert_eq(akx_reduce_by_key(ctx, &ko, &vo, &k, &v, AKX_MAP_IDENTITY, AKX_OP_ADD, &opts, &runs), AKX_SUCCESS,
               "%s: %s", what, akx_last_error());
  cr_assert_eq(runs, ns, "%s: %lld runs, not %lld", what, (long long)runs, (long long)ns);
  assert_tiles("reduce_by_key", what);
  int32_t *got_keys = tfx_xmalloc((size_t)ns * 4);
  tfx_to_host(ctx, got_keys, keys_out, (size_t)ns * 4);
  for (int64_t s = 0; s < ns; ++s)
    cr_assert_eq(got_keys[s], (int32_t)s, "%s: keys_out[%lld] is %d", what, (long long)s, got_keys[s]);
  tfx_to_host(ctx, got, vals_out, (size_t)ns * 4);
  assert_bits(got, want, ns, what);
  free(got_keys);
  tfx_free(ctx, vals);
  tfx_free(ctx, keys);
  tfx_free(ctx, keys_out);
  tfx_free(ctx, vals_out);
  free(got);
  free(want);
  free_data(&d);
}
