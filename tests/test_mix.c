/* Every family on one context, in random sequences: the workspace's tags (the look-back's epoch
 * flags, the reductions' tickets, a segmented reduction's split tickets: docs/workspace.md) survive
 * from one call to the next, so a call of one family must find them as the last call of its own
 * family left them whatever ran in between. Each sequence is a list of calls drawn from one seed
 * (akx_mapreduce to host and device, akx_reduce_dims over shapes that take every dims kernel,
 * split ones included, akx_scan whole and along a dim, akx_findall (its count to the host or to
 * device memory: akx_findall_where), the four segmented and keyed calls (akx_reduce_by_key's runs
 * to the host or to device memory: akx_reduce_by_key_where) with segments that split across
 * tiles, the pieces, akx_context_run, akx_select_flagged and akx_partition_flagged with their
 * count to the host or the device), each with random tuning overrides within what the
 * validation allows (src/core/validate.c, the families' checks of opts), sizes from 1 to 2x10^5
 * biased to small and tile-boundary sizes, and integer data, so every value is checked exactly
 * against the host reference (tests/support/reference.c, segmented_check.c, scan_check.c). A
 * failure names its sequence's seed and step: run
 *   AKX_TEST_MIX_SEED=<seed> test_mix --filter mix/replay
 * to replay it alone (add AKX_TEST_MIX_FRESH=1 to run each of its calls on a fresh context).
 * AKX_TEST_MIX_SCALE=k runs k times as many sequences (the schedule label's copy in
 * tests/CMakeLists.txt). The control test runs the same calls each on a fresh context: it must
 * pass wherever the calls are right, so a failure of the sequences alone is the workspace's. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "akx.h"
#include "akx_layer.h"
#include "fixture.h"
#include "reference.h"
#include "scan_check.h"
#include "segmented_check.h"
#include "segmented_reference.h"
#include "views.h"
#include "reduce/reduce_dims.h"

#define MSG 2048
#define MAX_N 200000

/* ---- a deterministic generator ------------------------------------------------------------ */

typedef struct {
  uint64_t seed, i;
} rng;
static uint64_t next(rng *r) { return ref_rand(r->seed, r->i++); }
static int64_t pick(rng *r, int64_t lo, int64_t hi) { /* lo..hi inclusive */
  return lo + (int64_t)(next(r) % (uint64_t)(hi - lo + 1));
}
static int chance(rng *r, int percent) { return (int)(next(r) % 100) < percent; }

/* ---- one call, drawn from a seed ----------------------------------------------------------- */

enum {
  K_MAPREDUCE,
  K_REDUCE_DIMS,
  K_SCAN,
  K_FINDALL,
  K_SEG_REDUCE,
  K_SEG_SCAN,
  K_REDUCE_BY_KEY,
  K_SCAN_BY_KEY,
  K_MAPREDUCE_PIECE,
  K_FINDALL_PIECE,
  K_CONTEXT_RUN,
  K_SELECT,
  K_KINDS
};
static const char *const kind_names[K_KINDS] = {
    "akx_mapreduce",     "akx_reduce_dims",        "akx_scan",           "akx_findall",
    "akx_segmented_reduce", "akx_segmented_scan",  "akx_reduce_by_key",  "akx_scan_by_key",
    "akx_mapreduce_piece", "akx_findall_piece",    "akx_context_run",    "akx_select_flagged"};

/* The dims shapes a reduction is drawn from (docs/reduce_dims_shapes.md's table; the h200
 * profile's wave is 1056 blocks of 256, so every columns case below splits). */
enum { RD_ROWS, RD_WARP_ROWS, RD_PER_THREAD, RD_TILED, RD_COLUMNS, RD_COLUMNS_3D, RD_STRIDED, RD_WHOLE, RD_ANY, RD_KINDS };

typedef struct {
  int kind;
  uint64_t seed;       /* the call's data */
  akx_dtype t, dst_t, acc, key_t, off_t;
  akx_op op;
  akx_map map;
  int64_t n;
  /* reduce_dims and scans along a dim: C-order shape, reduced dims, Fortran order, step */
  int rd;
  int32_t ndim;
  int64_t shape[3];
  unsigned mask;
  int fortran, step2;
  int32_t dim;
  int dst_layout;
  int exclusive, with_init, fold, in_place;
  akx_where where;
  int32_t block, items, target;
  /* segments and runs */
  int segs;            /* 0 uniform, 1 power law, 2 one big, 3 random runs */
  int64_t seg_len, nseg;
  int64_t cap;         /* findall / by-key capacity short of the count by this much (0: enough) */
  int64_t position_base;
  int partition;       /* K_SELECT: akx_partition_flagged */
  size_t run_bytes;    /* akx_context_run */
  int run_whole;       /* akx_context_run asks for the whole caller buffer */
} mix_call;

static const akx_dtype int_types[] = {AKX_INT8, AKX_UINT8, AKX_INT16, AKX_UINT16, AKX_INT32,
                                      AKX_UINT32, AKX_INT64, AKX_UINT64};
#define N_INT_TYPES (int)(sizeof int_types / sizeof int_types[0])
static const akx_op int_ops[] = {AKX_OP_ADD, AKX_OP_MUL, AKX_OP_MIN, AKX_OP_MAX, AKX_OP_AND, AKX_OP_OR, AKX_OP_XOR};

static akx_dtype any_int(rng *r) {
  /* int32 and int64 more often: the prebuilt sets' common case */
  if (chance(r, 50)) return chance(r, 50) ? AKX_INT32 : AKX_INT64;
  return int_types[pick(r, 0, N_INT_TYPES - 1)];
}
static akx_op any_op(rng *r) { return chance(r, 40) ? AKX_OP_ADD : int_ops[pick(r, 0, 6)]; }

/* A size from 1 to MAX_N: mostly small, often a tile's multiple +-1 (a few tiles, or about 32
 * or 64: where the radix-32 look-back's level-1 nodes begin, kernels/akx/lookback.cuh),
 * sometimes large. */
static int64_t any_size(rng *r, int64_t tile) {
  static const int64_t tiles[] = {1, 2, 3, 4, 31, 32, 33, 34, 63, 64, 65};
  const int64_t u = pick(r, 0, 99);
  int64_t n;
  if (u < 35) n = pick(r, 1, 64);
  else if (u < 60) {
    /* the look-back's level-1 boundaries where they stay short (the sim's time) */
    const int64_t k = tiles[pick(r, 0, 10)];
    n = (k * tile <= 70000 ? k : k % 4 + 1) * tile + pick(r, -1, 1);
  }
  else if (u < 85) n = pick(r, 65, 5000);
  else if (u < 97) n = pick(r, 5000, 40000);
  else n = pick(r, 40000, MAX_N);
  return n < 1 ? 1 : n > MAX_N ? MAX_N : n;
}

/* Tuning overrides within the checks: block a multiple of 32 in 32..256 (src/core/validate.c),
 * a scan tile's items 1..64 (src/scan/scan.c), a segment tile's 1..32 and at most 4096 elements
 * (src/segmented/segmented.c: AKX__SEGMENT_TILE_MAX), a reduction's items 1..256 and target
 * blocks 1..65535. 0: the tuning table. Small products keep the scan tile's shared memory
 * within every profile's. */
static int32_t any_block(rng *r) { return chance(r, 30) ? 0 : (int32_t)(32 * pick(r, 1, 8)); }
static int32_t any_items(rng *r, int32_t most) {
  if (chance(r, 30)) return 0;
  static const int32_t menu[] = {1, 2, 3, 4, 7, 8, 16, 32, 64};
  int32_t v;
  do v = menu[pick(r, 0, 8)]; while (v > most);
  return v;
}
static int64_t tile_of(int32_t block, int32_t items, int64_t dflt) {
  return block > 0 && items > 0 ? (int64_t)block * items : dflt;
}

static void draw_segments(rng *r, mix_call *c, int by_key) {
  const int64_t tile = tile_of(c->block, c->items, 1024);
  c->segs = by_key ? 3 : (int)pick(r, 0, 2);
  if (!by_key && chance(r, 50)) {
    /* segments of 1.5 tiles: every second one split across two tiles */
    c->segs = 0;
    c->seg_len = tile + tile / 2;
    c->nseg = pick(r, 1, 1 + MAX_N / 4 / c->seg_len);
  } else if (c->segs == 0) {
    c->seg_len = chance(r, 50) ? pick(r, 1, 64) : pick(r, 1, 3 * tile);
    c->nseg = pick(r, 1, 1 + any_size(r, tile) / c->seg_len);
  } else if (c->segs == 1) {
    c->nseg = pick(r, 1, 500);
    c->seg_len = pick(r, 1, 3 * tile);
  } else if (c->segs == 2) {
    c->seg_len = pick(r, 1, 8 * tile); /* the big one */
    c->nseg = pick(r, 1, 500);
  } else {
    c->n = any_size(r, tile);
    c->seg_len = chance(r, 30) ? tile + tile / 2 : pick(r, 1, 100); /* the longest run */
  }
  if (c->segs == 0 && c->nseg * c->seg_len > MAX_N) c->nseg = MAX_N / c->seg_len > 0 ? MAX_N / c->seg_len : 1;
}

static void draw_dims(rng *r, mix_call *c) {
  c->rd = (int)pick(r, 0, RD_KINDS - 1);
  c->ndim = 2;
  c->fortran = 0;
  c->step2 = 0;
  switch (c->rd) {
  case RD_ROWS: c->shape[0] = pick(r, 1, 20), c->shape[1] = pick(r, 1024, 3000), c->mask = 2u; break;
  case RD_WARP_ROWS: c->shape[0] = pick(r, 1, 1000), c->shape[1] = pick(r, 2, 150), c->mask = 2u; break;
  case RD_PER_THREAD: c->shape[0] = pick(r, 2, 31), c->shape[1] = pick(r, 100, 3000), c->mask = 1u; break;
  case RD_TILED:
    c->shape[0] = pick(r, 32, 64), c->shape[1] = pick(r, c->shape[0], 1000), c->mask = 1u;
    break;
  case RD_COLUMNS: c->shape[0] = pick(r, 500, 2000), c->shape[1] = pick(r, 2, 40), c->mask = 1u; break;
  case RD_COLUMNS_3D:
    c->ndim = 3, c->fortran = 1, c->shape[0] = pick(r, 40, 90), c->shape[1] = pick(r, 100, 400),
    c->shape[2] = pick(r, 1, 3), c->mask = 2u;
    break;
  case RD_STRIDED:
    c->ndim = 3, c->step2 = 1, c->shape[0] = pick(r, 2, 30), c->shape[1] = pick(r, 2, 50),
    c->shape[2] = pick(r, 32, 40), c->mask = 2u;
    break;
  case RD_WHOLE: c->shape[0] = pick(r, 1, 300), c->shape[1] = pick(r, 1, 300), c->mask = 3u; break;
  default:
    c->ndim = (int32_t)pick(r, 1, 3);
    for (int d = 0; d < 3; ++d) c->shape[d] = pick(r, 1, c->ndim == 1 ? 5000 : c->ndim == 2 ? 400 : 50);
    c->mask = (unsigned)pick(r, 0, (1 << c->ndim) - 1);
    c->fortran = chance(r, 30);
    break;
  }
}

/* What a sequence's calls share half the time: a tile (block x items) and a length, so that one
 * family's tags lie where the next one's do. */
typedef struct {
  int32_t block, items;
  int64_t n;
} mix_theme;

static mix_call draw_call(rng *r, int kind) {
  mix_call c;
  memset(&c, 0, sizeof c);
  c.kind = kind;
  c.seed = next(r);
  c.t = any_int(r);
  c.op = any_op(r);
  c.map = AKX_MAP_IDENTITY;
  c.acc = AKX_DTYPE_AUTO;
  c.dst_t = AKX_DTYPE_AUTO;
  c.block = any_block(r);
  switch (kind) {
  case K_MAPREDUCE:
  case K_MAPREDUCE_PIECE:
    c.map = (akx_map)pick(r, 0, 3);
    c.items = any_items(r, 64);
    c.target = chance(r, 70) ? 0 : (int32_t)pick(r, 1, 600);
    c.where = chance(r, 50) ? AKX_HOST : AKX_DEVICE;
    c.n = any_size(r, tile_of(c.block ? c.block : 256, c.items ? c.items : 4, 1024));
    break;
  case K_REDUCE_DIMS:
    c.map = (akx_map)pick(r, 0, 3);
    draw_dims(r, &c);
    /* dst: the accumulator's dtype, or the source's (a narrowing store) */
    c.dst_t = chance(r, 50) ? AKX_DTYPE_AUTO : c.t;
    if (c.mask == (1u << c.ndim) - 1) c.items = any_items(r, 64), c.target = chance(r, 70) ? 0 : (int32_t)pick(r, 1, 600);
    break;
  case K_SCAN:
    c.items = any_items(r, 64);
    if (c.block && c.items && c.block * c.items > 4096) c.items = 4096 / c.block;
    c.exclusive = chance(r, 40);
    c.with_init = chance(r, 30) || (c.exclusive && (c.op == AKX_OP_MIN || c.op == AKX_OP_MAX));
    /* the source's own accumulator (an int32 ADD wrapping at 32 bits): prebuilt on the sim */
    c.acc = chance(r, 25) ? c.t : AKX_DTYPE_AUTO;
    if (chance(r, 50)) {
      c.ndim = 1;
      c.dim = chance(r, 50) ? AKX_DIM_ALL : 0;
      c.shape[0] = any_size(r, tile_of(c.block, c.items, 2048));
      c.dst_layout = (int)pick(r, 0, 3);
    } else {
      c.ndim = 2;
      c.shape[0] = pick(r, 1, chance(r, 50) ? 8 : 300);
      c.shape[1] = any_size(r, tile_of(c.block, c.items, 2048)) / c.shape[0] + 1;
      c.dim = (int32_t)pick(r, -1, 1);
      c.dst_layout = c.dim == AKX_DIM_ALL ? (chance(r, 50) ? TSC_DST_C : TSC_IN_PLACE) : (int)pick(r, 0, 3);
    }
    break;
  case K_FINDALL:
  case K_FINDALL_PIECE:
    c.n = any_size(r, 2048);
    c.target = (int32_t)pick(r, 0, 100); /* percent nonzero */
    if (chance(r, 20)) c.target = chance(r, 50) ? 0 : 100;
    c.step2 = chance(r, 25);
    c.cap = kind == K_FINDALL && chance(r, 15) ? pick(r, 1, 5) : 0;
    c.position_base = pick(r, 0, 1000000);
    if (kind == K_FINDALL && chance(r, 40)) c.where = AKX_DEVICE; /* akx_findall_where */
    break;
  case K_SEG_REDUCE:
  case K_SEG_SCAN:
  case K_REDUCE_BY_KEY:
  case K_SCAN_BY_KEY: {
    const int by_key = kind == K_REDUCE_BY_KEY || kind == K_SCAN_BY_KEY;
    const int scan = kind == K_SEG_SCAN || kind == K_SCAN_BY_KEY;
    c.items = any_items(r, 32);
    if (c.block && c.items && c.block * c.items > 4096) c.items = 4096 / c.block;
    if (!scan) c.map = (akx_map)pick(r, 0, 3);
    c.off_t = chance(r, 50) ? AKX_INT32 : AKX_INT64;
    c.key_t = chance(r, 60) ? AKX_INT32 : chance(r, 50) ? AKX_INT64 : AKX_UINT8;
    c.exclusive = scan && chance(r, 40);
    c.with_init = chance(r, 30) || (c.exclusive && (c.op == AKX_OP_MIN || c.op == AKX_OP_MAX));
    c.fold = kind == K_SEG_REDUCE && chance(r, 20);
    c.in_place = scan && chance(r, 20);
    if (!scan && chance(r, 30)) c.dst_t = c.t;
    c.cap = kind == K_REDUCE_BY_KEY && chance(r, 15) ? pick(r, 1, 3) : 0;
    if (kind == K_REDUCE_BY_KEY && chance(r, 40)) c.where = AKX_DEVICE; /* akx_reduce_by_key_where */
    draw_segments(r, &c, by_key);
    break;
  }
  case K_CONTEXT_RUN:
    c.run_bytes = (size_t)pick(r, 0, 1 << 20);
    c.run_whole = chance(r, 30);
    break;
  case K_SELECT:
    c.n = any_size(r, 2048);
    c.target = (int32_t)pick(r, 0, 100); /* percent flagged */
    if (chance(r, 20)) c.target = chance(r, 50) ? 0 : 100;
    c.step2 = chance(r, 25);
    c.partition = chance(r, 35);
    c.cap = !c.partition && chance(r, 15) ? pick(r, 1, 5) : 0;
    if (chance(r, 40)) c.where = AKX_DEVICE;
    break;
  }
  /* a map whose accumulator cannot take the op (MUL of NONZERO's bool): the identity */
  if ((int)ref_resolve_acc(c.t, c.map, c.op, AKX_DTYPE_AUTO) == (int)REF_UNSUPPORTED) c.map = AKX_MAP_IDENTITY;
  return c;
}

static const char *describe_call(const mix_call *c, char *buf, size_t len) {
  snprintf(buf, len,
           "%s %s %s map %s acc %s dst %s n %" PRId64 " shape {%" PRId64 ", %" PRId64 ", %" PRId64
           "} ndim %d mask %u%s%s dim %d%s%s%s%s where %s bs %d ipt %d tb %d segs %d len %" PRId64
           " nseg %" PRId64 " cap-%" PRId64 " keys %s offsets %s run %zu%s",
           kind_names[c->kind], ref_name(c->t), ref_op_name(c->op), ref_map_name(c->map), ref_name(c->acc),
           ref_name(c->dst_t), c->n, c->shape[0], c->shape[1], c->shape[2], (int)c->ndim, c->mask,
           c->fortran ? " F" : "", c->step2 ? " step 2" : "", (int)c->dim, c->exclusive ? " exclusive" : "",
           c->with_init ? " init" : "", c->fold ? " fold" : "", c->in_place ? " in place" : "",
           c->where == AKX_HOST ? "host" : "device", (int)c->block, (int)c->items, (int)c->target, c->segs,
           c->seg_len, c->nseg, c->cap, ref_name(c->key_t), ref_name(c->off_t), c->run_bytes,
           c->run_whole ? " (whole buffer)" : "");
  return buf;
}

/* ---- segments and runs ----------------------------------------------------------------------- */

static tsg_offsets segments_of(const mix_call *c) {
  switch (c->segs) {
  case 0: return tsg_uniform(c->nseg, c->seg_len);
  case 1: {
    tsg_offsets o = tsg_power_law(c->nseg, c->seg_len, c->seed);
    return o;
  }
  case 2: return tsg_one_big(c->seg_len, c->nseg, c->seed);
  default: {
    /* runs of 1..seg_len keys (no empty run) over n elements */
    int64_t *e = tfx_xmalloc((size_t)(c->n + 1) * sizeof *e);
    int64_t k = 0, at = 0;
    rng r = {c->seed ^ 0x7275, 0};
    e[k++] = 0;
    while (at < c->n) {
      at += chance(&r, 10) ? c->seg_len : pick(&r, 1, c->seg_len < 8 ? c->seg_len : 8);
      if (at > c->n) at = c->n;
      e[k++] = at;
    }
    tsg_offsets o = tsg_given(c->n, k - 1, e, "random runs");
    free(e);
    return o;
  }
  }
}

/* ---- the families' runs ------------------------------------------------------------------------ */

static int run_mapreduce(akx_context *ctx, const mix_call *c, char *msg, size_t len) {
  tfx_case k = tfx_case_make(c->map, c->op);
  k.where = c->where;
  k.block_size = c->block, k.items_per_thread = c->items, k.target_blocks = c->target;
  const tfx_layout L = tfx_layout_vector(c->n);
  return tfx_fill_run(ctx, c->t, &L, &k, c->seed, 0, AKX_DTYPE_AUTO, NULL, msg, len);
}

static tfx_layout dims_layout(const mix_call *c) {
  if (c->step2) { /* every other element of the innermost dim: no dim of outputs contiguous */
    int64_t ps[3], st[3] = {0, 0, 0}, sp[3] = {1, 1, 1};
    for (int d = 0; d < c->ndim; ++d) ps[d] = c->shape[d];
    ps[c->ndim - 1] = 2 * c->shape[c->ndim - 1];
    sp[c->ndim - 1] = 2;
    return tfx_layout_sub(c->ndim, ps, st, c->shape, sp);
  }
  return tvw_dense(c->ndim, c->shape, c->fortran);
}

/* akx_reduce_dims into dst (src's ndim, reduced dims 1; C order, or F with c->fortran), every
 * output checked exactly, dst's guards kept. */
static int run_reduce_dims(akx_context *ctx, const mix_call *c, char *msg, size_t len) {
  char desc[1024];
  describe_call(c, desc, sizeof desc);
  const akx_dtype acc = ref_resolve_acc(c->t, c->map, c->op, AKX_DTYPE_AUTO);
  const akx_dtype dst_t = c->dst_t == AKX_DTYPE_AUTO ? acc : c->dst_t;
  const tfx_layout L = dims_layout(c);
  const int64_t n = tfx_layout_count(&L);
  unsigned char *sp = tfx_xmalloc((size_t)L.parent_n * ref_size(c->t));
  ref_fill(sp, c->t, L.parent_n, c->map, c->op, acc, n + 1, c->seed, 0);
  tvw_pair src = tvw_upload(ctx, c->t, sp, &L);
  int64_t dshape[3];
  for (int d = 0; d < c->ndim; ++d) dshape[d] = (c->mask >> d) & 1 ? 1 : c->shape[d];
  tfx_layout Ld = tvw_dense(c->ndim, dshape, c->fortran);
  const int64_t n_out = Ld.parent_n, guard = 4;
  Ld.offset = guard;
  Ld.parent_n += 2 * guard;
  const size_t dsz = ref_size(dst_t);
  unsigned char *before = tfx_xmalloc((size_t)Ld.parent_n * dsz);
  memset(before, 0xA5, (size_t)Ld.parent_n * dsz);
  tvw_pair dst = tvw_upload(ctx, dst_t, before, &Ld);
  akx_reduce_opts o = akx_reduce_opts_default();
  o.block_size = c->block, o.items_per_thread = c->items, o.target_blocks = c->target;
  const akx_status st = akx_reduce_dims(ctx, &dst.dev, &src.dev, c->map, c->op, &o);
  int ok = 1;
  if (st != AKX_SUCCESS) {
    snprintf(msg, len, "%s: akx_reduce_dims returned %s: %s", desc, akx_status_string(st), akx_last_error());
    ok = 0;
  }
  unsigned char *after = tfx_xmalloc((size_t)Ld.parent_n * dsz);
  tfx_to_host(ctx, after, dst.dev_base, (size_t)Ld.parent_n * dsz);
  if (ok && (memcmp(after, before, (size_t)guard * dsz) ||
             memcmp(after + (guard + n_out) * (int64_t)dsz, before + (guard + n_out) * (int64_t)dsz, (size_t)guard * dsz))) {
    snprintf(msg, len, "%s: a guard element of dst was written", desc);
    ok = 0;
  }
  int64_t idx[3] = {0, 0, 0};
  for (int64_t k = 0; ok && k < n_out; ++k) {
    /* k in dst's memory order: its index from the dense strides */
    int64_t rem = k;
    for (int dd = 0; dd < c->ndim; ++dd) {
      const int d = c->fortran ? dd : c->ndim - 1 - dd;
      idx[d] = rem % dshape[d];
      rem /= dshape[d];
    }
    ref_expect want = ref_reduce_dims_at(&src.host, dshape, idx, c->map, c->op, acc, NULL, NULL);
    want = ref_expect_convert(&want, dst_t);
    char m2[256];
    if (!ref_check(after + (guard + k) * (int64_t)dsz, &want, m2, sizeof m2)) {
      snprintf(msg, len, "%s: output {%" PRId64 ", %" PRId64 ", %" PRId64 "}: %s", desc, idx[0], idx[1], idx[2], m2);
      ok = 0;
    }
  }
  free(after);
  free(before);
  free(sp);
  tvw_free(ctx, &dst);
  tvw_free(ctx, &src);
  return ok;
}

static int run_scan(akx_context *ctx, const mix_call *c, char *msg, size_t len) {
  tsc_case k = tsc_case_make(c->t, c->op);
  k.acc = c->acc;
  k.dim = c->dim;
  k.exclusive = c->exclusive;
  k.with_init = c->with_init;
  k.dst_layout = c->dst_layout;
  k.block_size = c->block, k.items_per_thread = c->items;
  const tfx_layout L = tvw_dense(c->ndim, c->shape, 0);
  return tsc_run(ctx, &L, &k, c->seed, msg, len);
}

/* akx_findall (or akx_findall_piece at position_base) of c->n elements, target percent nonzero,
 * every other element of a parent with step2; a capacity short by c->cap when there are that
 * many: AKX_ERROR_OUTPUT_TOO_SMALL with the first positions written and the total counted. */
static int run_findall(akx_context *ctx, const mix_call *c, char *msg, size_t len) {
  char desc[1024];
  describe_call(c, desc, sizeof desc);
  const int64_t step = c->step2 ? 2 : 1, pn = c->n * step;
  const size_t sz = ref_size(c->t);
  unsigned char *hp = tfx_xmalloc((size_t)pn * sz);
  int64_t *want = tfx_xmalloc((size_t)c->n * sizeof *want), total = 0;
  for (int64_t i = 0; i < pn; ++i) {
    const uint64_t u = ref_rand(c->seed, (uint64_t)i);
    const int set = (int)(u % 100) < c->target;
    ref_store_at(hp, i, ref_int(c->t, set ? (int64_t)(1 + (u >> 32) % 100) : 0));
    if (set && i % step == 0) want[total++] = i / step;
  }
  const int64_t capacity = c->cap && total > c->cap ? total - c->cap : total;
  void *dsrc = tfx_upload(ctx, hp, (size_t)pn * sz);
  akx_array src = akx_vector(dsrc, c->t, c->n);
  src.strides[0] = step;
  const int64_t ipn = capacity + 8;
  int64_t *ibefore = tfx_xmalloc((size_t)ipn * sizeof *ibefore);
  for (int64_t i = 0; i < ipn; ++i) ibefore[i] = -7;
  int64_t *dind = tfx_upload(ctx, ibefore, (size_t)ipn * sizeof *ibefore);
  const akx_array ind = akx_vector(dind, AKX_INT64, capacity);
  int64_t count = -1;
  akx_status st;
  int64_t base = 0;
  if (c->kind == K_FINDALL_PIECE) {
    akx_findall_piece_t p = {c->position_base, 0, 0};
    base = c->position_base;
    st = akx_findall_piece(ctx, &src, &ind, &count, &p);
  } else if (c->where == AKX_DEVICE) { /* the count in device memory: SUCCESS whatever the capacity */
    int64_t *dcount = tfx_upload(ctx, &count, sizeof count);
    st = akx_findall_where(ctx, &src, &ind, dcount, AKX_DEVICE);
    tfx_to_host(ctx, &count, dcount, sizeof count);
    tfx_free(ctx, dcount);
  } else {
    st = akx_findall(ctx, &src, &ind, &count);
  }
  const akx_status st_want = capacity < total && c->where != AKX_DEVICE ? AKX_ERROR_OUTPUT_TOO_SMALL : AKX_SUCCESS;
  int ok = 1;
  if (st != st_want) {
    snprintf(msg, len, "%s: returned %s (%s), expected %s (%" PRId64 " nonzero, capacity %" PRId64 ")", desc,
             akx_status_string(st), akx_last_error(), akx_status_string(st_want), total, capacity);
    ok = 0;
  } else if (count != total) {
    snprintf(msg, len, "%s: *count = %" PRId64 ", expected %" PRId64, desc, count, total);
    ok = 0;
  }
  int64_t *got = tfx_xmalloc((size_t)ipn * sizeof *got);
  tfx_to_host(ctx, got, dind, (size_t)ipn * sizeof *got);
  for (int64_t i = 0; ok && i < ipn; ++i) {
    const int64_t w = i < capacity ? want[i] + base : -7;
    if (got[i] != w) {
      snprintf(msg, len, "%s: indices[%" PRId64 "] = %" PRId64 ", expected %" PRId64 "%s", desc, i, got[i], w,
               i >= capacity ? " (past the capacity: untouched)" : "");
      ok = 0;
    }
  }
  free(got);
  free(ibefore);
  free(want);
  free(hp);
  tfx_free(ctx, dind);
  tfx_free(ctx, dsrc);
  return ok;
}

/* akx_select_flagged or akx_partition_flagged of c->n items (every other item of a parent with
 * step2), target percent flagged (uint8 flags); a select's capacity short by c->cap when there are
 * that many; the count to the host or to device memory. */
static int run_select(akx_context *ctx, const mix_call *c, char *msg, size_t len) {
  char desc[1024];
  describe_call(c, desc, sizeof desc);
  const int64_t step = c->step2 ? 2 : 1, pn = c->n * step, n = c->n;
  const size_t sz = ref_size(c->t);
  unsigned char *hp = tfx_xmalloc((size_t)pn * sz), *hf = tfx_xmalloc((size_t)n);
  unsigned char *want = tfx_xmalloc((size_t)n * sz);
  int64_t total = 0, rejected = 0;
  for (int64_t i = 0; i < pn; ++i) ref_store_at(hp, i, ref_int(c->t, (int64_t)(ref_rand(c->seed, (uint64_t)i) % 251)));
  for (int64_t i = 0; i < n; ++i) hf[i] = (int)(ref_rand(c->seed + 1, (uint64_t)i) % 100) < c->target ? 1 : 0;
  for (int64_t i = 0; i < n; ++i)
    if (hf[i]) memcpy(want + total++ * (int64_t)sz, hp + i * step * (int64_t)sz, sz);
  for (int64_t i = 0; i < n; ++i)  /* the others, reversed from the end (a partition) */
    if (!hf[i]) memcpy(want + (n - 1 - rejected++) * (int64_t)sz, hp + i * step * (int64_t)sz, sz);
  const int64_t capacity = c->partition ? n : c->cap && total > c->cap ? total - c->cap : n;
  void *dsrc = tfx_upload(ctx, hp, (size_t)pn * sz), *dflags = tfx_upload(ctx, hf, (size_t)n);
  const int64_t dn = capacity + 8;
  unsigned char *before = tfx_xmalloc((size_t)dn * sz);
  memset(before, 0x5c, (size_t)dn * sz);
  void *ddst = tfx_upload(ctx, before, (size_t)dn * sz);
  akx_array src = akx_vector(dsrc, c->t, n), flags = akx_vector(dflags, AKX_UINT8, n), dst = akx_vector(ddst, c->t, capacity);
  src.strides[0] = step;
  int64_t count = -1;
  int64_t *dcount = c->where == AKX_DEVICE ? tfx_upload(ctx, &count, sizeof count) : NULL;
  const akx_status st = c->partition ? akx_partition_flagged(ctx, &dst, &src, &flags, dcount ? dcount : &count, c->where)
                                     : akx_select_flagged(ctx, &dst, &src, &flags, dcount ? dcount : &count, c->where);
  if (dcount) {
    tfx_to_host(ctx, &count, dcount, sizeof count);
    tfx_free(ctx, dcount);
  }
  const akx_status st_want = capacity < total && c->where == AKX_HOST ? AKX_ERROR_OUTPUT_TOO_SMALL : AKX_SUCCESS;
  int ok = 1;
  if (st != st_want) {
    snprintf(msg, len, "%s: returned %s (%s), expected %s (%" PRId64 " flagged, capacity %" PRId64 ")", desc,
             akx_status_string(st), akx_last_error(), akx_status_string(st_want), total, capacity);
    ok = 0;
  } else if (count != total) {
    snprintf(msg, len, "%s: *count = %" PRId64 ", expected %" PRId64, desc, count, total);
    ok = 0;
  }
  unsigned char *got = tfx_xmalloc((size_t)dn * sz);
  tfx_to_host(ctx, got, ddst, (size_t)dn * sz);
  const int64_t written = c->partition ? n : total < capacity ? total : capacity;
  for (int64_t i = 0; ok && i < dn; ++i) {
    const unsigned char *w = i < written ? want + i * (int64_t)sz : before + i * (int64_t)sz;
    if (memcmp(got + i * (int64_t)sz, w, sz) != 0) {
      snprintf(msg, len, "%s: dst[%" PRId64 "] wrong%s", desc, i, i >= written ? " (past what is written: untouched)" : "");
      ok = 0;
    }
  }
  free(got);
  free(before);
  free(want);
  free(hp);
  free(hf);
  tfx_free(ctx, ddst);
  tfx_free(ctx, dflags);
  tfx_free(ctx, dsrc);
  return ok;
}

static tsg_case seg_case(const mix_call *c) {
  tsg_case k = tsg_case_make(c->t, c->op);
  k.dst_t = c->dst_t;
  k.off_t = c->off_t;
  k.key_t = c->key_t;
  k.map = c->map;
  k.with_init = c->with_init;
  k.fold = c->fold;
  k.exclusive = c->exclusive;
  k.in_place = c->in_place;
  k.block_size = c->block, k.items_per_thread = c->items;
  k.runs_on_device = c->kind == K_REDUCE_BY_KEY && c->where == AKX_DEVICE;
  return k;
}

static int run_segmented(akx_context *ctx, const mix_call *c, char *msg, size_t len) {
  tsg_case k = seg_case(c);
  tsg_offsets o = segments_of(c);
  int ok;
  switch (c->kind) {
  case K_SEG_REDUCE: ok = tsg_reduce_run(ctx, &k, &o, c->seed, NULL, msg, len); break;
  case K_SEG_SCAN: ok = tsg_scan_run(ctx, &k, &o, c->seed, NULL, msg, len); break;
  case K_REDUCE_BY_KEY:
    if (c->cap && o.nseg > c->cap) k.cap_vals = o.nseg - c->cap;
    ok = tsg_reduce_by_key_run(ctx, &k, &o, c->seed, NULL, msg, len);
    break;
  default: ok = tsg_scan_by_key_run(ctx, &k, &o, c->seed, NULL, msg, len); break;
  }
  tsg_free(&o);
  return ok;
}

/* akx_mapreduce_piece as the only piece (its exchange hands back its own partial): the
 * reduction of the whole array. */
static akx_status own_partial(void *arg, const void *partial, size_t bytes, const void **all) {
  (void)arg, (void)bytes;
  *all = partial;
  return AKX_SUCCESS;
}
static int run_mapreduce_piece(akx_context *ctx, const mix_call *c, char *msg, size_t len) {
  char desc[1024];
  describe_call(c, desc, sizeof desc);
  const akx_dtype acc = ref_resolve_acc(c->t, c->map, c->op, AKX_DTYPE_AUTO);
  const size_t sz = ref_size(c->t), asz = ref_size(acc);
  unsigned char *hp = tfx_xmalloc((size_t)c->n * sz);
  ref_fill(hp, c->t, c->n, c->map, c->op, acc, c->n + 1, c->seed, 0);
  void *dsrc = tfx_upload(ctx, hp, (size_t)c->n * sz);
  const akx_array src = akx_vector(dsrc, c->t, c->n), host = ref_vector(hp, c->t, c->n);
  akx_reduce_opts o = akx_reduce_opts_default();
  o.block_size = c->block, o.items_per_thread = c->items, o.target_blocks = c->target;
  const akx_reduce_piece_t piece = {0, 0, 0, 1, own_partial, NULL};
  unsigned char got[32];
  memset(got, 0xA5, sizeof got);
  void *dres = c->where == AKX_DEVICE ? tfx_upload(ctx, got, sizeof got) : NULL;
  const akx_status st = akx_mapreduce_piece(ctx, &src, c->map, c->op, &o, &piece, dres ? dres : got, c->where);
  if (dres) tfx_to_host(ctx, got, dres, sizeof got);
  int ok = 1;
  if (st != AKX_SUCCESS) {
    snprintf(msg, len, "%s: returned %s: %s", desc, akx_status_string(st), akx_last_error());
    ok = 0;
  } else {
    const ref_expect want = ref_mapreduce(&host, c->map, c->op, acc, NULL, NULL);
    char m2[256];
    if (!ref_check(got, &want, m2, sizeof m2)) {
      snprintf(msg, len, "%s: %s", desc, m2);
      ok = 0;
    }
    for (size_t b = asz; ok && b < sizeof got; ++b)
      if (got[b] != 0xA5) {
        snprintf(msg, len, "%s: byte %zu past the result written", desc, b);
        ok = 0;
      }
  }
  if (dres) tfx_free(ctx, dres);
  tfx_free(ctx, dsrc);
  free(hp);
  return ok;
}

/* A user's kernel on the context's workspace: on the sim, every byte it is given set to
 * garbage (docs/workspace.md: its bytes are scratch, or, when it asks for the whole of a
 * caller's buffer, lie over the tags, which the next call must then lay out again). */
typedef struct {
  size_t bytes;
  int sim;
} run_arg;
static akx_status scribble(void *stream, void *workspace, void *arg) {
  (void)stream;
  const run_arg *a = arg;
  if (a->sim && workspace) memset(workspace, 0x5B, a->bytes);
  return AKX_SUCCESS;
}

/* ---- sequences ---------------------------------------------------------------------------------- */

typedef struct {
  size_t caller_bytes; /* 0: the context's own buffer */
  void *caller_buf;
} mix_ws;

static int run_call(akx_context *ctx, const mix_call *c, const mix_ws *ws, char *msg, size_t len) {
  switch (c->kind) {
  case K_MAPREDUCE: return run_mapreduce(ctx, c, msg, len);
  case K_REDUCE_DIMS: return run_reduce_dims(ctx, c, msg, len);
  case K_SCAN: return run_scan(ctx, c, msg, len);
  case K_FINDALL:
  case K_FINDALL_PIECE: return run_findall(ctx, c, msg, len);
  case K_SELECT: return run_select(ctx, c, msg, len);
  case K_MAPREDUCE_PIECE: return run_mapreduce_piece(ctx, c, msg, len);
  case K_CONTEXT_RUN: {
    run_arg a = {c->run_bytes, tfx_is_sim(ctx)};
    if (ws && ws->caller_bytes && (c->run_whole || a.bytes > ws->caller_bytes)) a.bytes = ws->caller_bytes;
    const akx_status st = akx_context_run(ctx, a.bytes, scribble, &a);
    if (st != AKX_SUCCESS) {
      snprintf(msg, len, "akx_context_run of %zu bytes returned %s: %s", a.bytes, akx_status_string(st),
               akx_last_error());
      return 0;
    }
    return 1;
  }
  default: return run_segmented(ctx, c, msg, len);
  }
}

/* The theme's tile and length on a call that takes them. */
static void themed(mix_call *c, const mix_theme *th) {
  switch (c->kind) {
  case K_MAPREDUCE:
  case K_MAPREDUCE_PIECE:
  case K_FINDALL:
  case K_FINDALL_PIECE:
  case K_SELECT:
    c->n = th->n;
    if (c->kind == K_MAPREDUCE || c->kind == K_MAPREDUCE_PIECE) c->block = th->block, c->items = th->items;
    break;
  case K_SCAN:
    c->block = th->block, c->items = th->items;
    c->ndim = 1, c->shape[0] = th->n;
    if (c->dim > 0) c->dim = 0;
    if (c->dst_layout > TSC_IN_PLACE) c->dst_layout = TSC_DST_C;
    break;
  case K_SEG_REDUCE:
  case K_SEG_SCAN:
    c->block = th->block, c->items = th->items;
    c->segs = 0, c->seg_len = (int64_t)th->block * th->items * 3 / 2;
    c->nseg = th->n / c->seg_len + 1;
    break;
  case K_REDUCE_BY_KEY:
  case K_SCAN_BY_KEY:
    c->block = th->block, c->items = th->items;
    c->n = th->n;
    break;
  default: break;
  }
}

/* The calls of sequence `seed`: 2 to 12 of them. */
static int draw_sequence(uint64_t seed, mix_call *calls, int most) {
  rng r = {seed, 0};
  /* half of them short: on a fresh context, the calls that meet the first calls' tags while the
   * epochs are still as small as the counts a tag may hold */
  const int n = chance(&r, 50) ? (int)pick(&r, 2, 4) : (int)pick(&r, 5, most);
  static const int32_t blocks[] = {32, 64, 128}, items[] = {2, 4, 8};
  mix_theme th = {blocks[pick(&r, 0, 2)], items[pick(&r, 0, 2)], 0};
  const int64_t tile = (int64_t)th.block * th.items;
  /* a third of the themes at 31..65 tiles: the look-back's level-1 nodes lie over a segmented
   * reduction's split tickets there (tests mix/segmented_reduce_then_*) */
  th.n = chance(&r, 33) ? tile * pick(&r, 31, 65) + pick(&r, -1, 1) : any_size(&r, tile);
  if (th.n > MAX_N) th.n = MAX_N;
  /* the families with tags (the look-back's, the split tickets) drawn more often */
  static const int weight[K_KINDS] = {2, 2, 3, 2, 3, 2, 2, 2, 1, 1, 1, 2};
  int total = 0;
  for (int k = 0; k < K_KINDS; ++k) total += weight[k];
  for (int i = 0; i < n; ++i) {
    int w = (int)pick(&r, 0, total - 1), kind = 0;
    while (w >= weight[kind]) w -= weight[kind++];
    calls[i] = draw_call(&r, kind);
    if (chance(&r, 60)) themed(&calls[i], &th);
  }
  return n;
}
#define MOST_CALLS 12

/* The workspace a call needs alone (its *_workspace_size query over descriptors of its shapes;
 * the data pointers are distinct fakes, never read). The by-key calls have no query of their
 * own: the segmented scan's over the same length and tile stands for them (one flag per tile,
 * reduce_by_key's count in the header: docs/workspace.md). akx_context_run: its bytes. */
static size_t call_bytes(akx_context *ctx, const mix_call *c) {
  size_t b = 0;
  akx_status st = AKX_SUCCESS;
  char *fake = (char *)(uintptr_t)0x100000000ull;
  switch (c->kind) {
  case K_MAPREDUCE:
  case K_MAPREDUCE_PIECE: {
    const akx_array s = akx_vector(fake, c->t, c->n);
    akx_reduce_opts o = akx_reduce_opts_default();
    o.block_size = c->block, o.items_per_thread = c->items, o.target_blocks = c->target;
    st = akx_mapreduce_workspace_size(ctx, &s, c->map, c->op, &o, &b);
    break;
  }
  case K_REDUCE_DIMS: {
    const tfx_layout L = dims_layout(c);
    const akx_array s = tvw_view(fake, c->t, &L);
    int64_t dshape[3];
    for (int d = 0; d < c->ndim; ++d) dshape[d] = (c->mask >> d) & 1 ? 1 : c->shape[d];
    const akx_dtype acc = ref_resolve_acc(c->t, c->map, c->op, AKX_DTYPE_AUTO);
    const tfx_layout Ld = tvw_dense(c->ndim, dshape, c->fortran);
    const akx_array d = tvw_view(fake + (1ull << 30), c->dst_t == AKX_DTYPE_AUTO ? acc : c->dst_t, &Ld);
    akx_reduce_opts o = akx_reduce_opts_default();
    o.block_size = c->block, o.items_per_thread = c->items, o.target_blocks = c->target;
    st = akx_reduce_dims_workspace_size(ctx, &d, &s, c->map, c->op, &o, &b);
    break;
  }
  case K_SCAN: {
    const tfx_layout L = tvw_dense(c->ndim, c->shape, 0);
    const akx_array s = tvw_view(fake, c->t, &L);
    akx_array d = s;
    const akx_dtype acc = c->acc == AKX_DTYPE_AUTO ? ref_auto_acc(c->t, AKX_MAP_IDENTITY, c->op) : c->acc;
    if (c->dst_layout != TSC_IN_PLACE) {
      d.data = fake + (1ull << 30), d.dtype = acc;
      const tfx_layout Ld = tvw_dense(c->ndim, c->shape, c->dst_layout == TSC_DST_F);
      /* tsc_run's reversed C order has these strides negated: the same tiles */
      for (int k = 0; k < c->ndim; ++k) d.strides[k] = Ld.strides[k];
    }
    akx_scan_opts o = akx_scan_opts_default();
    /* inclusive: an exclusive MIN/MAX needs its init, and the bytes are the same */
    o.acc = c->acc, o.block_size = c->block, o.items_per_thread = c->items;
    st = akx_scan_workspace_size(ctx, &d, &s, c->op, c->dim, &o, &b);
    break;
  }
  case K_FINDALL:
  case K_FINDALL_PIECE: {
    akx_array s = akx_vector(fake, c->t, c->n);
    s.strides[0] = c->step2 ? 2 : 1;
    const akx_array ind = akx_vector(fake + (1ull << 30), AKX_INT64, c->n);
    st = akx_findall_workspace_size(ctx, &s, &ind, &b);
    break;
  }
  case K_CONTEXT_RUN: return c->run_whole ? 0 : c->run_bytes;
  case K_SELECT: {
    akx_array s = akx_vector(fake, c->t, c->n);
    s.strides[0] = c->step2 ? 2 : 1;
    const akx_array f = akx_vector(fake + (2ull << 30), AKX_UINT8, c->n);
    const akx_array d = akx_vector(fake + (1ull << 30), c->t, c->n);
    st = c->partition ? akx_partition_flagged_workspace_size(ctx, &d, &s, &f, &b)
                      : akx_select_flagged_workspace_size(ctx, &d, &s, &f, &b);
    break;
  }
  default: {
    tsg_offsets o = segments_of(c);
    const akx_array s = akx_vector(fake, c->t, o.n);
    const akx_array off = akx_vector(fake + (2ull << 30), c->off_t, o.nseg + 1);
    const akx_dtype racc = ref_resolve_acc(c->t, c->map, c->op, AKX_DTYPE_AUTO);
    if (c->kind == K_SEG_REDUCE) {
      const akx_array d = akx_vector(fake + (1ull << 30), c->dst_t == AKX_DTYPE_AUTO ? racc : c->dst_t, o.nseg);
      akx_reduce_opts ro = akx_reduce_opts_default();
      ro.block_size = c->block, ro.items_per_thread = c->items;
      st = akx_segmented_reduce_workspace_size(ctx, &d, &s, &off, c->map, c->op, &ro, &b);
    } else {
      const akx_dtype sacc = ref_auto_acc(c->t, AKX_MAP_IDENTITY, c->op);
      const akx_array d = akx_vector(fake + (1ull << 30), sacc, o.n);
      const akx_array one = akx_vector(fake + (2ull << 30), AKX_INT64, 2);
      akx_scan_opts so = akx_scan_opts_default();
      so.block_size = c->block, so.items_per_thread = c->items; /* inclusive, as the scan's above */
      st = akx_segmented_scan_workspace_size(ctx, &d, &s, c->kind == K_SEG_SCAN ? &off : &one, c->op, &so, &b);
    }
    tsg_free(&o);
    break;
  }
  }
  char desc[1024];
  cr_assert_eq(st, AKX_SUCCESS, "the workspace query of %s: %s", describe_call(c, desc, sizeof desc), akx_last_error());
  return b;
}

/* Runs the calls on ctx (fresh: each on a context of its own). Returns 1 when all went well,
 * else 0 with the first failure in msg. */
static int run_sequence(akx_context *ctx, uint64_t seed, int fresh, const mix_ws *ws, char *msg, size_t len) {
  mix_call calls[MOST_CALLS];
  const int n = draw_sequence(seed, calls, MOST_CALLS);
  for (int i = 0; i < n; ++i) {
    akx_context *c = fresh ? tfx_open() : ctx;
    char m[MSG - 200];
    m[0] = 0;
    const int ok = run_call(c, &calls[i], ws, m, sizeof m);
    if (fresh) tfx_close(c);
    if (!ok) {
      snprintf(msg, len, "sequence seed %" PRIu64 " step %d of %d (replay: AKX_TEST_MIX_SEED=%" PRIu64
               " test_mix --filter mix/replay): %s", seed, i + 1, n, seed, m);
      return 0;
    }
  }
  return 1;
}

static int scale(void) {
  const char *s = getenv("AKX_TEST_MIX_SCALE");
  const int k = s ? atoi(s) : 1;
  return k > 0 ? k : 1;
}

/* count sequences from seed base (times AKX_TEST_MIX_SCALE) on one context (a fresh one per
 * sequence with fresh_context), or each call on a context of its own (fresh_calls). */
static void sequences(uint64_t base, int count, int fresh_context, int fresh_calls) {
  count *= scale();
  tfx_tally tally = {0};
  char msg[MSG];
  akx_context *ctx = fresh_calls ? NULL : tfx_open();
  for (int k = 0; k < count; ++k) {
    if (fresh_context && k) {
      tfx_close(ctx);
      ctx = tfx_open();
    }
    tfx_note(&tally, run_sequence(ctx, base + (uint64_t)k, fresh_calls, NULL, msg, sizeof msg), "%s", msg);
  }
  if (ctx) tfx_close(ctx);
  tfx_done(&tally);
}

/* Sequences with a caller's buffer sized by the queries of the sequence's calls: with sum_all
 * their sum (enough for every layout at once, docs/workspace.md "Sizes"), else the largest alone
 * (too small for two families at once: a change of family takes its own layout, and the next
 * call of another family resets). */
static void caller_sequences(uint64_t base, int count, int sum_all) {
  count *= scale();
  tfx_tally tally = {0};
  char msg[MSG];
  akx_context *ctx = tfx_open();
  for (int k = 0; k < count; ++k) {
    mix_call calls[MOST_CALLS];
    const int n = draw_sequence(base + (uint64_t)k, calls, MOST_CALLS);
    size_t most = 0, sum = 0;
    for (int i = 0; i < n; ++i) {
      const size_t b = call_bytes(ctx, &calls[i]);
      most = b > most ? b : most;
      sum += b;
    }
    mix_ws ws = {sum_all ? sum : most, NULL};
    if (ws.caller_bytes < 256) ws.caller_bytes = 256;
    ws.caller_buf = tfx_alloc(ctx, ws.caller_bytes);
    cr_assert_eq(akx_context_set_workspace(ctx, ws.caller_buf, ws.caller_bytes), AKX_SUCCESS, "%s", akx_last_error());
    tfx_note(&tally, run_sequence(ctx, base + (uint64_t)k, 0, &ws, msg, sizeof msg), "%s (caller buffer of %zu bytes)",
             msg, ws.caller_bytes);
    cr_assert_eq(akx_context_set_workspace(ctx, NULL, 0), AKX_SUCCESS, "%s", akx_last_error());
    tfx_free(ctx, ws.caller_buf);
  }
  tfx_close(ctx);
  tfx_done(&tally);
}

/* A long-lived context's epochs are far from any count a tag may hold; a fresh one's are not:
 * both kinds of sequence. */
/* 155 sequences in the README's suite (about 35 s of its 2 cores), four times as many in the
 * schedule label's copy. */
Test(mix, sequences_on_one_context_0, .timeout = 300) { sequences(1000, 20, 0, 0); }
Test(mix, sequences_on_one_context_1, .timeout = 300) { sequences(2000, 20, 0, 0); }
Test(mix, sequences_each_on_a_fresh_context_0, .timeout = 300) { sequences(3000, 25, 1, 0); }
Test(mix, sequences_each_on_a_fresh_context_1, .timeout = 300) { sequences(4000, 25, 1, 0); }
Test(mix, sequences_each_on_a_fresh_context_2, .timeout = 300) { sequences(5000, 25, 1, 0); }
Test(mix, sequences_on_a_caller_buffer_for_every_family, .timeout = 300) { caller_sequences(6000, 15, 1); }
Test(mix, sequences_on_a_caller_buffer_too_small_for_two_families, .timeout = 300) { caller_sequences(7000, 15, 0); }
/* The control: the first sequences' calls, each on a context of its own. */
Test(mix, control_each_call_on_a_fresh_context, .timeout = 300) { sequences(1000, 10, 0, 1); }

Test(mix, replay, .timeout = 300) {
  const char *s = getenv("AKX_TEST_MIX_SEED");
  if (!s) cr_skip_test("set AKX_TEST_MIX_SEED to a sequence's seed (a failure's message names it)");
  const uint64_t seed = strtoull(s, NULL, 0);
  const int fresh = getenv("AKX_TEST_MIX_FRESH") && atoi(getenv("AKX_TEST_MIX_FRESH"));
  mix_call calls[MOST_CALLS];
  const int n = draw_sequence(seed, calls, MOST_CALLS);
  char d[1024];
  for (int i = 0; i < n; ++i) cr_log_info("step %d: %s", i + 1, describe_call(&calls[i], d, sizeof d));
  akx_context *ctx = tfx_open();
  char msg[MSG];
  const int ok = run_sequence(ctx, seed, fresh, NULL, msg, sizeof msg);
  tfx_close(ctx);
  cr_assert(ok, "%s", msg);
}

/* ---- every dims kernel shape is among the sequences' reductions -------------------------------- */

/* The reductions the default suite's sequences draw, planned (akx__reduce_dims_plan_shape:
 * nothing launched) on this context's device: every shape of docs/reduce_dims_shapes.md's table
 * is taken, and a split one (splits > 1) too. */
Test(mix, the_sequences_take_every_dims_shape_and_a_split, .timeout = 300) {
  akx_context *ctx = tfx_open();
  int seen[AKX__DIMS_PIECES + 1] = {0}, splits = 0, total = 0;
  static const uint64_t bases[] = {1000, 2000, 3000, 4000, 5000, 6000, 7000};
  static const int counts[] = {30, 30, 45, 45, 45, 20, 20}; /* as the tests below */
  for (size_t b = 0; b < sizeof bases / sizeof bases[0]; ++b)
    for (int k = 0; k < counts[b]; ++k) {
      mix_call calls[MOST_CALLS];
      const int n = draw_sequence(bases[b] + (uint64_t)k, calls, MOST_CALLS);
      for (int i = 0; i < n; ++i) {
        const mix_call *c = &calls[i];
        if (c->kind != K_REDUCE_DIMS) continue;
        const tfx_layout L = dims_layout(c);
        char *fake = (char *)(uintptr_t)0x100000000ull;
        const akx_array s = tvw_view(fake, c->t, &L);
        int64_t dshape[3];
        for (int d = 0; d < c->ndim; ++d) dshape[d] = (c->mask >> d) & 1 ? 1 : c->shape[d];
        const akx_dtype acc = ref_resolve_acc(c->t, c->map, c->op, AKX_DTYPE_AUTO);
        const tfx_layout Ld = tvw_dense(c->ndim, dshape, c->fortran);
        const akx_array d = tvw_view(fake + (1ull << 30), c->dst_t == AKX_DTYPE_AUTO ? acc : c->dst_t, &Ld);
        akx_reduce_opts o = akx_reduce_opts_default();
        o.block_size = c->block, o.items_per_thread = c->items, o.target_blocks = c->target;
        akx__reduce_dims_plan p;
        cr_assert_eq(akx__reduce_dims_plan_shape(ctx, &d, &s, c->map, c->op, &o, &p), AKX_SUCCESS, "%s",
                     akx_last_error());
        seen[p.shape]++;
        splits += p.splits > 1;
        total++;
      }
    }
  static const akx__dims_shape want[] = {AKX__DIMS_ROWS,    AKX__DIMS_WARP_ROWS, AKX__DIMS_PER_THREAD, AKX__DIMS_TILED,
                                         AKX__DIMS_COLUMNS, AKX__DIMS_STRIDED,   AKX__DIMS_WHOLE};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; ++i)
    cr_expect_gt(seen[want[i]], 0, "no reduction of the sequences takes the %s shape (of %d)",
                 akx__reduce_dims_shape_name(want[i]), total);
  cr_expect_gt(splits, 0, "no reduction of the sequences is split across blocks (of %d)", total);
  tfx_close(ctx);
}

/* ---- the reproductions ---------------------------------------------------------------------------- */

/* 2^16 float32 ones in segments of 1,536 (the last one shorter), tiles of 128 x 8 = 1,024: every
 * second segment is split across two tiles (its tickets in the look-back flags' place). */
#define REPRO_N 65536
#define REPRO_SEG 1536
static float *ones(akx_context *ctx, int64_t n) {
  float *h = tfx_xmalloc((size_t)n * sizeof *h);
  for (int64_t i = 0; i < n; ++i) h[i] = 1.0f;
  float *d = tfx_upload(ctx, h, (size_t)n * sizeof *h);
  free(h);
  return d;
}
static int64_t *repro_offsets(akx_context *ctx, int64_t *nseg) {
  int64_t e[REPRO_N / REPRO_SEG + 2], k = 0;
  for (int64_t at = 0; at < REPRO_N; at += REPRO_SEG) e[k++] = at;
  e[k] = REPRO_N;
  *nseg = k;
  return tfx_upload(ctx, e, (size_t)(k + 1) * sizeof *e);
}
static void segmented_reduce_ones(akx_context *ctx, float *src, int64_t *offs, int64_t nseg) {
  float *dst = tfx_alloc(ctx, (size_t)nseg * sizeof(float));
  const akx_array d = akx_vector(dst, AKX_FLOAT32, nseg), s = akx_vector(src, AKX_FLOAT32, REPRO_N),
                  o = akx_vector(offs, AKX_INT64, nseg + 1);
  akx_reduce_opts ro = akx_reduce_opts_default();
  ro.block_size = 128, ro.items_per_thread = 8;
  cr_assert_eq(akx_segmented_reduce(ctx, &d, &s, &o, AKX_MAP_IDENTITY, AKX_OP_ADD, &ro), AKX_SUCCESS, "%s",
               akx_last_error());
  float *h = tfx_xmalloc((size_t)nseg * sizeof *h);
  tfx_to_host(ctx, h, dst, (size_t)nseg * sizeof *h);
  for (int64_t s2 = 0; s2 < nseg; ++s2) {
    const float want = (float)(s2 + 1 < nseg ? REPRO_SEG : REPRO_N - s2 * REPRO_SEG);
    cr_assert_eq(h[s2], want, "segment %" PRId64 ": %g, expected %g", s2, (double)h[s2], (double)want);
  }
  free(h);
  tfx_free(ctx, dst);
}

/* (a) akx_scan after the segmented reduction, on the same context and source. */
Test(mix, segmented_reduce_then_scan, .timeout = 300) {
  akx_context *ctx = tfx_open();
  float *src = ones(ctx, REPRO_N);
  int64_t nseg;
  int64_t *offs = repro_offsets(ctx, &nseg);
  segmented_reduce_ones(ctx, src, offs, nseg);
  float *dst = tfx_alloc(ctx, REPRO_N * sizeof(float));
  const akx_array d = akx_vector(dst, AKX_FLOAT32, REPRO_N), s = akx_vector(src, AKX_FLOAT32, REPRO_N);
  akx_scan_opts so = akx_scan_opts_default();
  so.block_size = 128, so.items_per_thread = 8;
  cr_assert_eq(akx_scan(ctx, &d, &s, AKX_OP_ADD, AKX_DIM_ALL, &so), AKX_SUCCESS, "%s", akx_last_error());
  float *h = tfx_xmalloc(REPRO_N * sizeof *h);
  tfx_to_host(ctx, h, dst, REPRO_N * sizeof *h);
  int64_t wrong = 0, first = -1;
  for (int64_t i = 0; i < REPRO_N; ++i)
    if (h[i] != (float)(i + 1)) wrong++, first = first < 0 ? i : first;
  cr_expect_eq(wrong, 0, "%" PRId64 " of %d scan outputs wrong, the first at %" PRId64 " (%g, expected %g)", wrong,
               REPRO_N, first, first < 0 ? 0.0 : (double)h[first], (double)(first + 1));
  free(h);
  tfx_free(ctx, dst);
  tfx_free(ctx, offs);
  tfx_free(ctx, src);
  tfx_close(ctx);
}

/* (b) akx_segmented_scan after the segmented reduction, segments of 1.5 tiles both. */
Test(mix, segmented_reduce_then_segmented_scan, .timeout = 300) {
  akx_context *ctx = tfx_open();
  float *src = ones(ctx, REPRO_N);
  int64_t nseg;
  int64_t *offs = repro_offsets(ctx, &nseg);
  segmented_reduce_ones(ctx, src, offs, nseg);
  float *dst = tfx_alloc(ctx, REPRO_N * sizeof(float));
  const akx_array d = akx_vector(dst, AKX_FLOAT32, REPRO_N), s = akx_vector(src, AKX_FLOAT32, REPRO_N),
                  o = akx_vector(offs, AKX_INT64, nseg + 1);
  akx_scan_opts so = akx_scan_opts_default();
  so.block_size = 128, so.items_per_thread = 8;
  cr_assert_eq(akx_segmented_scan(ctx, &d, &s, &o, AKX_OP_ADD, &so), AKX_SUCCESS, "%s", akx_last_error());
  float *h = tfx_xmalloc(REPRO_N * sizeof *h);
  tfx_to_host(ctx, h, dst, REPRO_N * sizeof *h);
  int64_t wrong = 0, first = -1;
  for (int64_t i = 0; i < REPRO_N; ++i)
    if (h[i] != (float)(i % REPRO_SEG + 1)) wrong++, first = first < 0 ? i : first;
  cr_expect_eq(wrong, 0, "%" PRId64 " of %d segmented scan outputs wrong, the first at %" PRId64 " (%g, expected %g)",
               wrong, REPRO_N, first, first < 0 ? 0.0 : (double)h[first], (double)(first % REPRO_SEG + 1));
  free(h);
  tfx_free(ctx, dst);
  tfx_free(ctx, offs);
  tfx_free(ctx, src);
  tfx_close(ctx);
}

/* (c) a segmented reduction, a scan, then akx_reduce_by_key of 200,003 int32 keys, on one context,
 * all in tiles of 128 x 8: AKX_SUCCESS and the right runs and values. The reduction's segments
 * of 2.5 tiles (over the same 200,003 elements) each span three tiles (their split tickets count three arrivals), the scan takes
 * the look-back between them. */
Test(mix, segmented_reduction_scan_then_reduce_by_key_of_200003_keys, .timeout = 300) {
  akx_context *ctx = tfx_open();
  tfx_tally tally = {0};
  char msg[MSG];
  tsg_case r = tsg_case_make(AKX_INT32, AKX_OP_ADD);
  r.block_size = 128, r.items_per_thread = 8;
  int64_t e[200003 / 2560 + 2], ns = 0;
  for (int64_t at = 0; at < 200003; at += 2560) e[ns++] = at;
  e[ns] = 200003;
  tsg_offsets o = tsg_given(200003, ns, e, "segments of 2,560 over 200,003");
  tfx_note(&tally, tsg_reduce_run(ctx, &r, &o, 1, NULL, msg, sizeof msg), "segmented reduce: %s", msg);
  tsg_free(&o);
  tsc_case s = tsc_case_make(AKX_INT32, AKX_OP_ADD);
  s.block_size = 128, s.items_per_thread = 8;
  const tfx_layout L = tfx_layout_vector(4096);
  tfx_note(&tally, tsc_run(ctx, &L, &s, 2, msg, sizeof msg), "scan: %s", msg);
  /* 200,003 keys in runs of 1..8 */
  mix_call c;
  memset(&c, 0, sizeof c);
  c.segs = 3, c.n = 200003, c.seg_len = 8, c.seed = 5;
  o = segments_of(&c);
  tsg_case k = tsg_case_make(AKX_INT32, AKX_OP_ADD);
  k.block_size = 128, k.items_per_thread = 8;
  tfx_note(&tally, tsg_reduce_by_key_run(ctx, &k, &o, 6, NULL, msg, sizeof msg), "reduce by key: %s", msg);
  tsg_free(&o);
  tfx_done(&tally);
  tfx_close(ctx);
}
