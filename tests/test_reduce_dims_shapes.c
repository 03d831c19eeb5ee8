/* akx_reduce_dims along any subset of dims (Julia's mapreducedim!, docs/reduce_dims_shapes.md):
 * against the host reference, every combination of reduced dims of 1- to 4-d arrays with
 * sizes 0..5 per dim and random sizes up to 100 (as AK's reduce tests); row- and
 * column-major, offset views, negative strides, broadcast sources; each shape of the
 * selector forced (AKX_REDUCE_DIMS_SHAPE) and reached naturally (asserted through
 * akx__reduce_dims_plan_shape); splits; init, fold, overwrite, narrow dst with a wide
 * accumulator; every dtype with ADD and MAX, each map; the selector's choices for akx-bench's
 * dims shapes on the rtx5080 and h200 profiles; each of the selector's thresholds and split
 * rules with a case on each side of its boundary, derived from the device the context reports. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akx_sim.h"
#include "fixture.h"
#include "internal.h" /* akx__context_reread_settings */
#include "reduce/reduce_dims.h"
#include "reference.h"
#include "tuning.h"

#define MSG 2048
#define GUARD 64
#define SENTINEL 0xA5

/* ---- one case -------------------------------------------------------------------------------- */

typedef struct {
  int32_t ndim;
  int64_t shape[AKX_MAX_DIMS];
  unsigned reduce_mask;  /* bit d: dim d reduced */
  int src_order;         /* 0 row-major, 1 column-major */
  int dst_order;         /* 0 row-major, 1 column-major */
  unsigned src_flip;     /* bit d: negative stride along d */
  unsigned dst_flip;
  int64_t src_pad;       /* elements before the view (an offset view) */
  int src_gap;           /* extra elements between rows of the outermost dim (a sub-view) */
  int src_step;          /* > 1: every src_step-th element (no dim of stride 1); 0 means 1 */
} dims_case;

static void step_strides(const dims_case *k, int64_t *st, int64_t *span) {
  const int64_t m = k->src_step > 1 ? k->src_step : 1;
  for (int d = 0; d < k->ndim; d++) st[d] *= m;
  *span *= m;
}

static void strides_of(int32_t ndim, const int64_t *shape, int order, int gap, int64_t *st,
                       int64_t *span) {
  int64_t n = 1;
  for (int k = 0; k < ndim; k++) {
    const int d = order == 0 ? ndim - 1 - k : k;
    st[d] = n;
    n *= shape[d] > 0 ? shape[d] : 1;
    if (k == ndim - 2 || ndim == 1) n += gap; /* a gap before the outermost dim */
  }
  *span = n;
}

/* A view over [base, base + span) with the flips applied: data points at element (0,...,0). */
static void view_of(akx_array *a, int32_t ndim, const int64_t *shape, const int64_t *st,
                    unsigned flip, int64_t pad, int64_t *first) {
  int64_t off = pad;
  for (int d = 0; d < ndim; d++) {
    a->shape[d] = shape[d];
    a->strides[d] = st[d];
    if ((flip >> d) & 1) {
      if (shape[d] > 0) off += (shape[d] - 1) * st[d];
      a->strides[d] = -st[d];
    }
  }
  a->ndim = ndim;
  *first = off;
}

typedef struct {
  akx_map map;
  akx_op op;
  akx_dtype src_t, dst_t, acc; /* acc: AKX_DTYPE_AUTO or explicit */
  int init, fold;
} dims_op;

/* Runs one case and checks every output and the guards around dst. Returns 1 if all is well. */
static int run_case(akx_context *ctx, const dims_case *k, const dims_op *o, uint64_t seed,
                    char *msg, size_t len) {
  const akx_dtype acc = ref_resolve_acc(o->src_t, o->map, o->op, o->acc);
  if ((int)acc == (int)REF_UNSUPPORTED) {
    snprintf(msg, len, "unsupported case");
    return 0;
  }
  const size_t ss = ref_size(o->src_t), ds = ref_size(o->dst_t);
  int64_t sst[AKX_MAX_DIMS], dst_st[AKX_MAX_DIMS], sspan, dspan, dshape[AKX_MAX_DIMS];
  int64_t n_out = 1, n_src = 1;
  for (int d = 0; d < k->ndim; d++) {
    dshape[d] = ((k->reduce_mask >> d) & 1) ? 1 : k->shape[d];
    n_out *= dshape[d];
    n_src *= k->shape[d];
  }
  strides_of(k->ndim, k->shape, k->src_order, k->src_gap, sst, &sspan);
  step_strides(k, sst, &sspan);
  strides_of(k->ndim, dshape, k->dst_order, 0, dst_st, &dspan);
  const int64_t src_total = k->src_pad + sspan;
  void *hs = tfx_xmalloc((size_t)src_total * ss);
  ref_fill(hs, o->src_t, src_total, o->map, o->op, acc, n_src > 0 ? n_src : 1, seed, 0);
  const size_t dbytes = (size_t)dspan * ds + 2 * GUARD;
  unsigned char *hd = tfx_xmalloc(dbytes), *got = tfx_xmalloc(dbytes);
  memset(hd, SENTINEL, dbytes);
  if (o->fold) ref_fill_plain(hd + GUARD, o->dst_t, dspan, seed + 7);
  void *dsrc = tfx_upload(ctx, hs, (size_t)src_total * ss);
  unsigned char *ddst = tfx_upload(ctx, hd, dbytes);

  akx_array sv, dv, hv;
  memset(&sv, 0, sizeof sv);
  memset(&dv, 0, sizeof dv);
  int64_t sfirst, dfirst;
  view_of(&sv, k->ndim, k->shape, sst, k->src_flip, k->src_pad, &sfirst);
  view_of(&dv, k->ndim, dshape, dst_st, k->dst_flip, 0, &dfirst);
  sv.dtype = o->src_t;
  dv.dtype = o->dst_t;
  hv = sv;
  sv.data = (char *)dsrc + sfirst * (int64_t)ss;
  hv.data = (char *)hs + sfirst * (int64_t)ss;
  dv.data = ddst + GUARD + dfirst * (int64_t)ds;

  unsigned char init[16] = {0};
  ref_fill_plain(init, acc, 1, seed + 3);
  akx_reduce_opts opts = akx_reduce_opts_default();
  opts.acc = o->acc;
  opts.fold = o->fold;
  opts.init = o->init ? init : NULL;
  const akx_status s = akx_reduce_dims(ctx, &dv, &sv, o->map, o->op, &opts);
  const akx_status sync = akx_synchronize(ctx);
  tfx_to_host(ctx, got, ddst, dbytes);
  tfx_free(ctx, ddst);
  tfx_free(ctx, dsrc);

  char what[600], b1[200], b2[200];
  snprintf(what, sizeof what, "src %s -> dst %s, %s %s acc %s%s%s (order %d/%d flips %x/%x pad %lld gap %d)",
           tfx_describe(&hv, b1, sizeof b1), tfx_describe(&dv, b2, sizeof b2), ref_map_name(o->map),
           ref_op_name(o->op), ref_name(acc), o->init ? " init" : "", o->fold ? " fold" : "",
           k->src_order, k->dst_order, k->src_flip, k->dst_flip, (long long)k->src_pad, k->src_gap);
  int ok = 1;
  const int empty_minmax = n_out > 0 && n_src == 0 && (o->op == AKX_OP_MIN || o->op == AKX_OP_MAX) &&
                           !o->init && !o->fold;
  if (empty_minmax) {
    if (s != AKX_ERROR_INVALID_ARGUMENT || memcmp(got, hd, dbytes) != 0) {
      snprintf(msg, len, "%s: %s, expected AKX_ERROR_INVALID_ARGUMENT and nothing written",
               what, akx_status_string(s));
      ok = 0;
    }
    goto out;
  }
  if (s != AKX_SUCCESS || sync != AKX_SUCCESS) {
    snprintf(msg, len, "%s: %s / %s (%s)", what, akx_status_string(s), akx_status_string(sync),
             akx_last_error());
    ok = 0;
    goto out;
  }
  if (memcmp(got, hd, GUARD) != 0 || memcmp(got + dbytes - GUARD, hd + dbytes - GUARD, GUARD) != 0) {
    snprintf(msg, len, "%s: wrote outside dst", what);
    ok = 0;
    goto out;
  }
  int64_t idx[AKX_MAX_DIMS] = {0};
  for (int64_t i = 0; i < n_out && ok; i++) {
    int64_t doff = 0;
    for (int d = 0; d < k->ndim; d++) doff += idx[d] * dv.strides[d];
    const unsigned char *g = got + GUARD + (dfirst + doff) * (int64_t)ds;
    const unsigned char *before = hd + GUARD + (dfirst + doff) * (int64_t)ds;
    ref_val rinit, rprev;
    if (o->init) rinit = ref_load(init, acc);
    if (o->fold) rprev = ref_convert(ref_load(before, o->dst_t), acc);
    ref_expect e = ref_reduce_dims_at(&hv, dshape, idx, o->map, o->op, acc, o->init ? &rinit : NULL,
                                      o->fold ? &rprev : NULL);
    ref_expect ed = ref_expect_convert(&e, o->dst_t);
    char why[400];
    if (!ref_check(g, &ed, why, sizeof why)) {
      snprintf(msg, len, "%s: output %lld: %s", what, (long long)i, why);
      ok = 0;
    }
    for (int d = k->ndim - 1; d >= 0; d--) {
      if (++idx[d] < dshape[d]) break;
      idx[d] = 0;
    }
  }
  /* Bytes of dst between outputs (a gap) are not written either: dst here has none. */
out:
  free(hs);
  free(hd);
  free(got);
  return ok;
}

static dims_op op_make(akx_dtype src_t, akx_map m, akx_op op, akx_dtype dst_t) {
  dims_op o = {m, op, src_t, dst_t, AKX_DTYPE_AUTO, 0, 0};
  return o;
}

static akx__reduce_dims_plan plan_of(akx_context *ctx, const dims_case *k, akx_dtype t) {
  akx_array s, d;
  memset(&s, 0, sizeof s);
  memset(&d, 0, sizeof d);
  int64_t st[AKX_MAX_DIMS], span, dshape[AKX_MAX_DIMS], first;
  for (int i = 0; i < k->ndim; i++) dshape[i] = ((k->reduce_mask >> i) & 1) ? 1 : k->shape[i];
  strides_of(k->ndim, k->shape, k->src_order, k->src_gap, st, &span);
  step_strides(k, st, &span);
  view_of(&s, k->ndim, k->shape, st, k->src_flip, 0, &first);
  strides_of(k->ndim, dshape, k->dst_order, 0, st, &span);
  view_of(&d, k->ndim, dshape, st, k->dst_flip, 0, &first);
  s.dtype = d.dtype = t;
  akx__reduce_dims_plan p;
  cr_assert_eq(akx__reduce_dims_plan_shape(ctx, &d, &s, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &p),
               AKX_SUCCESS, "%s", akx_last_error());
  return p;
}

static dims_case case_of(int32_t ndim, const int64_t *shape, unsigned mask, int order) {
  dims_case k;
  memset(&k, 0, sizeof k);
  k.ndim = ndim;
  for (int d = 0; d < ndim; d++) k.shape[d] = shape[d];
  k.reduce_mask = mask;
  k.src_order = k.dst_order = order;
  return k;
}

/* ---- every subset of dims, sizes 0..5 -------------------------------------------------------- */

static void small_sizes(int32_t ndim, int sample) {
  akx_context *ctx = tfx_open();
  tfx_tally tally = {0};
  char msg[MSG];
  int64_t total = 1;
  for (int d = 0; d < ndim; d++) total *= 6;
  uint64_t c = 0;
  for (int64_t s = 0; s < total; s++) {
    if (sample && ref_rand(99, (uint64_t)s) % (uint64_t)sample != 0) continue;
    dims_case k;
    memset(&k, 0, sizeof k);
    k.ndim = ndim;
    int64_t r = s;
    for (int d = 0; d < ndim; d++) { k.shape[d] = r % 6; r /= 6; }
    for (unsigned mask = 0; mask < (1u << ndim); mask++, c++) {
      k.reduce_mask = mask;
      k.src_order = (int)(c % 2);
      k.dst_order = (int)((c / 2) % 2);
      k.src_flip = (unsigned)(ref_rand(5, c) % (1u << ndim)) * ((c % 3) == 0);
      k.dst_flip = (unsigned)(ref_rand(6, c) % (1u << ndim)) * ((c % 5) == 0);
      k.src_pad = (int64_t)(c % 3);
      k.src_gap = (int)(c % 4 == 1);
      k.src_step = c % 11 == 5 ? 2 : 1;
      dims_op o = op_make(AKX_FLOAT32, AKX_MAP_IDENTITY, c % 7 == 3 ? AKX_OP_MAX : AKX_OP_ADD,
                          c % 2 ? AKX_FLOAT64 : AKX_FLOAT32);
      o.init = c % 4 == 2;
      o.fold = c % 6 == 1;
      tfx_note(&tally, run_case(ctx, &k, &o, c, msg, sizeof msg), "%s", msg);
    }
  }
  tfx_done(&tally);
  tfx_close(ctx);
}

Test(reduce_dims_shapes, all_subsets_1d) { small_sizes(1, 0); }
Test(reduce_dims_shapes, all_subsets_2d) { small_sizes(2, 0); }
Test(reduce_dims_shapes, all_subsets_3d) { small_sizes(3, 0); }
Test(reduce_dims_shapes, all_subsets_4d_sampled) { small_sizes(4, 8); }

/* ---- random sizes up to 100 ------------------------------------------------------------------------ */

Test(reduce_dims_shapes, random_sizes_up_to_100) {
  akx_context *ctx = tfx_open();
  tfx_tally tally = {0};
  char msg[MSG];
  for (uint64_t c = 0; c < 60; c++) {
    dims_case k;
    memset(&k, 0, sizeof k);
    k.ndim = 1 + (int32_t)(ref_rand(11, c) % 3);
    int64_t n = 1;
    for (int d = 0; d < k.ndim; d++) {
      k.shape[d] = 1 + (int64_t)(ref_rand(12, c * 8 + (uint64_t)d) % 100);
      n *= k.shape[d];
    }
    if (n > 60000) k.shape[0] = 1 + k.shape[0] / 8;
    k.reduce_mask = (unsigned)(ref_rand(13, c) % (1u << k.ndim));
    k.src_order = (int)(c % 2);
    k.dst_order = (int)(ref_rand(14, c) % 2);
    k.src_flip = (unsigned)(ref_rand(15, c) % (1u << k.ndim)) * (c % 3 == 0);
    k.src_pad = (int64_t)(c % 5);
    k.src_gap = (int)(c % 3 == 2) * 3;
    k.src_step = c % 7 == 4 ? 2 : 1;
    dims_op o = op_make(AKX_FLOAT32, AKX_MAP_IDENTITY, c % 4 == 3 ? AKX_OP_MAX : AKX_OP_ADD, AKX_FLOAT32);
    tfx_note(&tally, run_case(ctx, &k, &o, 1000 + c, msg, sizeof msg), "%s", msg);
  }
  tfx_done(&tally);
  tfx_close(ctx);
}

/* ---- each shape forced, with and without splits ----------------------------------------------- */

static const char *k_forced[] = {"rows", "warp_rows", "per_thread", "tiled", "columns", "strided"};

static int make_forced_cases(dims_case *ks) {
  int n = 0;
  int64_t s1[2] = {37, 300}, s2[3] = {5, 67, 40}, s3[3] = {9, 3, 130}, s4[2] = {1000, 3};
  ks[n++] = case_of(2, s1, 2u, 0);                 /* row-major, reduce the last: contiguous */
  ks[n++] = case_of(2, s1, 1u, 0);                 /* reduce the first: strided, outputs contiguous */
  ks[n] = case_of(3, s2, 2u, 1); ks[n].src_flip = 4u; ks[n].src_pad = 3; n++; /* middle dim, col-major */
  ks[n] = case_of(3, s3, 5u, 0); ks[n].src_gap = 2; n++;   /* dims 0 and 2: contiguous runs with gaps */
  ks[n] = case_of(3, s2, 6u, 1); ks[n].dst_order = 0; ks[n].dst_flip = 1u; n++;
  ks[n++] = case_of(2, s4, 1u, 0);                 /* 3 outputs of 1000 */
  ks[n] = case_of(2, s1, 1u, 0); ks[n].src_order = 1; ks[n].src_gap = 5; n++;
  ks[n] = case_of(3, s2, 2u, 0); ks[n].src_step = 3; ks[n].src_flip = 1u; n++; /* no stride 1 */
  return n;
}

Test(reduce_dims_shapes, each_shape_forced, .timeout = 300) {
  akx_context *ctx = tfx_open();
  tfx_tally tally = {0};
  char msg[MSG];
  dims_case ks[16];
  const int nk = make_forced_cases(ks);
  for (int f = 0; f < 6; f++)
    for (int split = 0; split < 2; split++) {
      setenv("AKX_REDUCE_DIMS_SHAPE", k_forced[f], 1);
      if (split) setenv("AKX_REDUCE_DIMS_SPLITS", "3", 1);
      else unsetenv("AKX_REDUCE_DIMS_SPLITS");
      cr_assert_eq(akx__context_reread_settings(ctx), AKX_SUCCESS, "%s", akx_last_error());
      for (int i = 0; i < nk; i++) {
        akx__reduce_dims_plan p = plan_of(ctx, &ks[i], AKX_FLOAT32);
        const int rows = f < 2;
        const int can = !rows || p.shape == AKX__DIMS_ROWS || p.shape == AKX__DIMS_WARP_ROWS;
        if (can)
          cr_expect_str_eq(akx__reduce_dims_shape_name(p.shape), k_forced[f], "case %d", i);
        dims_op o = op_make(AKX_FLOAT32, AKX_MAP_IDENTITY, i % 2 ? AKX_OP_MAX : AKX_OP_ADD, AKX_FLOAT64);
        o.fold = i % 3 == 1;
        o.init = i % 3 == 2;
        tfx_note(&tally, run_case(ctx, &ks[i], &o, 77u + (uint64_t)i, msg, sizeof msg), "forced %s%s: %s",
                 k_forced[f], split ? " split 3" : "", msg);
        dims_op h = op_make(AKX_BFLOAT16, AKX_MAP_ABS, AKX_OP_ADD, AKX_BFLOAT16);
        tfx_note(&tally, run_case(ctx, &ks[i], &h, 88u + (uint64_t)i, msg, sizeof msg), "forced %s%s: %s",
                 k_forced[f], split ? " split 3" : "", msg);
      }
    }
  unsetenv("AKX_REDUCE_DIMS_SHAPE");
  unsetenv("AKX_REDUCE_DIMS_SPLITS");
  tfx_done(&tally);
  tfx_close(ctx);
}

/* ---- shapes reached naturally ---------------------------------------------------------------------- */

typedef struct {
  const char *name;
  int32_t ndim;
  int64_t shape[4];
  unsigned mask;
  int order;
  const char *want;
} natural_case;

Test(reduce_dims_shapes, each_shape_natural, .timeout = 300) {
  akx_context *ctx = tfx_open();
  tfx_tally tally = {0};
  char msg[MSG];
  /* h200 profile: 132 SMs x 2048 threads = 270336 resident threads = 1056 blocks of 256. */
  static const natural_case cs[] = {
      {"rows: 40 x 3000, reduce the contiguous dim", 2, {40, 3000}, 2u, 0, "rows"},
      {"warp_rows: 500 x 60", 2, {500, 60}, 2u, 0, "warp_rows"},
      {"per_thread: short reduction", 2, {20, 700}, 1u, 0, "per_thread"},
      {"per_thread: 64 KiB row of outputs", 2, {40, 16384}, 1u, 0, "per_thread"},
      {"tiled: outputs >= elements", 2, {300, 2000}, 1u, 0, "tiled"},
      {"columns: few outputs, long reduction", 2, {5000, 70}, 1u, 0, "columns"},
      {"columns: middle dim of a 3-d array (col-major)", 3, {70, 400, 3}, 2u, 1, "columns"},
      {"strided: outputs contiguous in no dim", 3, {30, 50, 40}, 2u, 0, "strided"},
      {"whole: one output", 2, {30, 40}, 3u, 0, "whole"},
  };
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
    dims_case k = case_of(cs[i].ndim, cs[i].shape, cs[i].mask, cs[i].order);
    if (strcmp(cs[i].want, "strided") == 0) k.src_step = 2; /* every other element */
    akx__reduce_dims_plan p = plan_of(ctx, &k, AKX_FLOAT32);
    cr_expect_str_eq(akx__reduce_dims_shape_name(p.shape), cs[i].want, "%s", cs[i].name);
    dims_op o = op_make(AKX_FLOAT32, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_FLOAT32);
    tfx_note(&tally, run_case(ctx, &k, &o, 5u + i, msg, sizeof msg), "%s: %s", cs[i].name, msg);
    o = op_make(AKX_INT16, AKX_MAP_IDENTITY, AKX_OP_MAX, AKX_INT8);
    o.fold = 1;
    tfx_note(&tally, run_case(ctx, &k, &o, 50u + i, msg, sizeof msg), "%s: %s", cs[i].name, msg);
  }
  tfx_done(&tally);
  tfx_close(ctx);
}

/* ---- dtypes, ops, maps --------------------------------------------------------------------------------- */

Test(reduce_dims_shapes, every_dtype_add_max_each_map, .timeout = 300) {
  akx_context *ctx = tfx_open();
  tfx_tally tally = {0};
  char msg[MSG];
  int64_t s1[3] = {6, 23, 40};
  dims_case ks[4];
  ks[0] = case_of(3, s1, 4u, 0); /* contiguous */
  ks[1] = case_of(3, s1, 2u, 0); /* middle: columns */
  ks[2] = case_of(3, s1, 1u, 0); /* outer: tiled / per-thread */
  ks[3] = case_of(3, s1, 5u, 1); ks[3].src_flip = 2u;
  static const akx_op ops[] = {AKX_OP_ADD, AKX_OP_MAX};
  static const akx_map maps[] = {AKX_MAP_IDENTITY, AKX_MAP_ABS, AKX_MAP_SQUARE, AKX_MAP_NONZERO};
  uint64_t c = 0;
  for (int t = 0; t < AKX_DTYPE_COUNT; t++)
    for (int oi = 0; oi < 2; oi++)
      for (int m = 0; m < 4; m++) {
        const akx_dtype acc = ref_resolve_acc((akx_dtype)t, maps[m], ops[oi], AKX_DTYPE_AUTO);
        if ((int)acc == (int)REF_UNSUPPORTED) continue;
        for (int i = 0; i < 4; i++, c++) {
          dims_op o = op_make((akx_dtype)t, maps[m], ops[oi], acc);
          tfx_note(&tally, run_case(ctx, &ks[i], &o, 300 + c, msg, sizeof msg), "%s", msg);
        }
      }
  tfx_done(&tally);
  tfx_close(ctx);
}

/* ---- init, fold, overwrite; narrow dst with a wide accumulator ------------------------------------------ */

Test(reduce_dims_shapes, init_fold_narrow_dst, .timeout = 300) {
  akx_context *ctx = tfx_open();
  tfx_tally tally = {0};
  char msg[MSG];
  int64_t s1[2] = {40, 900}, s2[2] = {900, 40};
  dims_case ks[3] = {case_of(2, s1, 2u, 0), case_of(2, s2, 1u, 0), case_of(2, s1, 1u, 1)};
  for (int i = 0; i < 3; i++)
    for (int v = 0; v < 4; v++) {
      dims_op o = op_make(AKX_FLOAT16, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_FLOAT16);
      o.init = v & 1;
      o.fold = v >> 1;
      tfx_note(&tally, run_case(ctx, &ks[i], &o, 400u + (uint64_t)(i * 4 + v), msg, sizeof msg), "%s", msg);
      o = op_make(AKX_INT8, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_INT8); /* int64 acc into int8 */
      o.init = v & 1;
      o.fold = v >> 1;
      tfx_note(&tally, run_case(ctx, &ks[i], &o, 500u + (uint64_t)(i * 4 + v), msg, sizeof msg), "%s", msg);
      o = op_make(AKX_FLOAT32, AKX_MAP_SQUARE, AKX_OP_MIN, AKX_INT32);
      o.acc = AKX_FLOAT64;
      o.init = v & 1;
      o.fold = v >> 1;
      tfx_note(&tally, run_case(ctx, &ks[i], &o, 600u + (uint64_t)(i * 4 + v), msg, sizeof msg), "%s", msg);
    }
  tfx_done(&tally);
  tfx_close(ctx);
}

/* Every output's sum (32 c, exact) leaves float16's range and comes back: right only if no partial (split
 * or shared-memory step) is ever stored in dst's type. */
Test(reduce_dims_shapes, float16_partials_never_in_dst_type) {
  akx_context *ctx = tfx_open();
  const int64_t R = 4096, C = 24; /* row-major R x C, reduce dim 0 (columns) or 1 (rows) */
  uint16_t *h = tfx_xmalloc((size_t)(R * C) * 2);
  for (int64_t r = 0; r < R; r++)
    for (int64_t c = 0; c < C; c++)
      h[r * C + c] = ref_f16_from_ld(r < R / 2 ? 60000.0L : -60000.0L + (r == R - 1 ? 32.0L * (long double)c : 0));
  uint16_t *d = tfx_upload(ctx, h, (size_t)(R * C) * 2);
  uint16_t *out = tfx_alloc(ctx, (size_t)C * 2);
  int64_t shape[2] = {R, C}, dshape[2] = {1, C};
  akx_array src = akx_array_c(d, AKX_FLOAT16, 2, shape), dst = akx_array_c(out, AKX_FLOAT16, 2, dshape);
  static const char *shapes[] = {"columns", "tiled", "per_thread", "strided"};
  for (int f = 0; f < 4; f++)
    for (int split = 0; split < 2; split++) {
      setenv("AKX_REDUCE_DIMS_SHAPE", shapes[f], 1);
      if (split) setenv("AKX_REDUCE_DIMS_SPLITS", "4", 1);
      else unsetenv("AKX_REDUCE_DIMS_SPLITS");
      cr_assert_eq(akx__context_reread_settings(ctx), AKX_SUCCESS, "%s", akx_last_error());
      cr_assert_eq(akx_reduce_dims(ctx, &dst, &src, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL), AKX_SUCCESS,
                   "%s", akx_last_error());
      uint16_t got[24];
      tfx_to_host(ctx, got, out, sizeof got);
      for (int64_t c = 0; c < C; c++)
        cr_expect_eq(got[c], ref_f16_from_ld(32.0L * (long double)c), "%s split %d: column %lld: 0x%04x",
                     shapes[f], split, (long long)c, got[c]);
    }
  unsetenv("AKX_REDUCE_DIMS_SHAPE");
  unsetenv("AKX_REDUCE_DIMS_SPLITS");
  tfx_free(ctx, out);
  tfx_free(ctx, d);
  free(h);
  tfx_close(ctx);
}

/* ---- workspace ------------------------------------------------------------------------------------------ */

Test(reduce_dims_shapes, workspace_query_and_caller_buffer) {
  akx_context *ctx = tfx_open();
  const int64_t R = 5000, C = 7;
  float *h = tfx_xmalloc((size_t)(R * C) * 4);
  for (int64_t i = 0; i < R * C; i++) h[i] = (float)(i % 13);
  float *d = tfx_upload(ctx, h, (size_t)(R * C) * 4);
  float *out = tfx_alloc(ctx, (size_t)C * 4);
  int64_t shape[2] = {R, C}, dshape[2] = {1, C};
  akx_array src = akx_array_c(d, AKX_FLOAT32, 2, shape), dst = akx_array_c(out, AKX_FLOAT32, 2, dshape);
  size_t need = 0;
  cr_assert_eq(akx_reduce_dims_workspace_size(ctx, &dst, &src, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &need),
               AKX_SUCCESS, "%s", akx_last_error());
  cr_assert(need > 0, "7 outputs of 5000 split: partials needed");
  void *ws = tfx_alloc(ctx, need);
  cr_assert_eq(akx_context_set_workspace(ctx, ws, need - 1), AKX_SUCCESS);
  float sentinel[7] = {-1, -2, -3, -4, -5, -6, -7}, got[7];
  tfx_to_device(ctx, out, sentinel, sizeof sentinel);
  akx_status s = akx_reduce_dims(ctx, &dst, &src, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL);
  cr_assert_eq(s, AKX_ERROR_WORKSPACE_TOO_SMALL, "%s (%s)", akx_status_string(s), akx_last_error());
  cr_assert(strstr(akx_last_error(), "workspace") != NULL, "%s", akx_last_error());
  tfx_to_host(ctx, got, out, sizeof got);
  cr_assert(memcmp(got, sentinel, sizeof got) == 0, "dst was written");
  cr_assert_eq(akx_context_set_workspace(ctx, ws, need), AKX_SUCCESS);
  cr_assert_eq(akx_reduce_dims(ctx, &dst, &src, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL), AKX_SUCCESS, "%s",
               akx_last_error());
  tfx_to_host(ctx, got, out, sizeof got);
  for (int64_t c = 0; c < C; c++) {
    double want = 0;
    for (int64_t r = 0; r < R; r++) want += h[r * C + c];
    cr_expect(got[c] == (float)want, "column %lld: %g, expected %g", (long long)c, got[c], want);
  }
  cr_assert_eq(akx_context_set_workspace(ctx, NULL, 0), AKX_SUCCESS);
  tfx_free(ctx, ws);
  tfx_free(ctx, out);
  tfx_free(ctx, d);
  free(h);
  tfx_close(ctx);
}

/* ---- the selector on both sim profiles, for the bench cases (Julia's dims, column-major) ------------- */

typedef struct {
  int32_t ndim;
  int64_t shape[3];
  unsigned julia_dims; /* bit d: Julia's dims = d + 1 */
  akx_dtype t;
  const char *h200, *rtx5080;
} seed_case;

static const seed_case k_seed[] = {
    {3, {768, 1024, 8}, 2u, AKX_BFLOAT16, "tiled", "tiled"},
    {3, {768, 1024, 8}, 2u, AKX_FLOAT32, "tiled", "tiled"},
    {3, {64, 4096, 32}, 2u, AKX_FLOAT32, "columns", "columns"},
    {2, {3072, 2048}, 2u, AKX_BFLOAT16, "tiled", "tiled"},
    {2, {8192, 8192}, 2u, AKX_FLOAT32, "tiled", "tiled"},
    {2, {4096, 4096}, 1u, AKX_FLOAT32, "rows", "rows"},
    {2, {4096, 4096}, 2u, AKX_FLOAT32, "tiled", "tiled"},
    {2, {3, 3000000}, 2u, AKX_FLOAT32, "columns", "columns"},
    {2, {32768, 32}, 1u, AKX_FLOAT32, "rows", "rows"},
    {2, {32768, 32}, 2u, AKX_FLOAT32, "per_thread", "per_thread"},
    {3, {1024, 1024, 64}, 5u, AKX_FLOAT32, "rows", "rows"},
};

static void seed_choices(const char *device) {
  setenv("AKX_SIM_DEVICE", device, 1);
  akx_context *ctx = tfx_open();
  for (size_t i = 0; i < sizeof k_seed / sizeof k_seed[0]; i++) {
    const seed_case *s = &k_seed[i];
    dims_case k = case_of(s->ndim, s->shape, s->julia_dims, 1);
    akx__reduce_dims_plan p = plan_of(ctx, &k, s->t);
    const char *want = strcmp(device, "h200") == 0 ? s->h200 : s->rtx5080;
    cr_expect_str_eq(akx__reduce_dims_shape_name(p.shape), want, "%s: case %zu (%lld x %lld x %lld dims %u)",
                     device, i, (long long)s->shape[0], (long long)s->shape[1],
                     (long long)(s->ndim > 2 ? s->shape[2] : 1), s->julia_dims);
  }
  tfx_close(ctx);
}

Test(reduce_dims_shapes, seed_choices_rtx5080) { seed_choices("rtx5080"); }
Test(reduce_dims_shapes, seed_choices_h200) { seed_choices("h200"); }

/* ---- each threshold of the selector, a case on each side -------------------------------------------
 * src/reduce/reduce_dims.c's columns_shape and its split rules. The boundaries follow from the
 * device the context reports (akx_context_info) and the dims kernels' block size (the tuning
 * table), as the selector reads them; the arithmetic in the comments is the default sim
 * profile's (h200: 132 SMs x 2048 threads = 270336 resident threads, blocks of 256). Each side
 * asserts the shape (and the splits where a split rule is the boundary), then, where the case
 * is cheap on the sim, the values against the host reference. */

typedef struct {
  int64_t threads; /* resident threads of the device: sm_count x max_threads_per_sm */
  int64_t bd;      /* threads per block of the dims kernels */
} dims_device;

static dims_device dims_device_of(akx_context *ctx, akx_dtype acc) {
  akx_context_info_t info;
  cr_assert_eq(akx_context_info(ctx, &info), AKX_SUCCESS, "%s", akx_last_error());
  const akx__tuning t = akx__tuning_lookup(AKX__TUNE_REDUCE_DIMS, info.cc_major, info.cc_minor,
                                           akx_dtype_size(acc), NULL);
  dims_device d = {(int64_t)info.sm_count * info.max_threads_per_sm, t.block_size};
  cr_assert_gt(d.threads, 0, "akx_context_info: %d SMs x %d threads", info.sm_count,
               info.max_threads_per_sm);
  return d;
}

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t lmin(int64_t a, int64_t b) { return a < b ? a : b; }

/* A row-major 2-d case reducing dim 0 (mask 1: strided reduction, outputs contiguous) or dim 1
 * (mask 2: contiguous reduction). */
static dims_case rm2(int64_t rows, int64_t cols, unsigned mask) {
  const int64_t shape[2] = {rows, cols};
  return case_of(2, shape, mask, 0);
}

/* One side of a boundary: the plan's shape, its splits when want_splits > 0, and with `run`
 * the values (ADD of t into t) against the host reference. */
static void side(akx_context *ctx, tfx_tally *tally, const char *what, const dims_case *k, akx_dtype t,
                 const char *want, int32_t want_splits, int run) {
  const akx__reduce_dims_plan p = plan_of(ctx, k, t);
  cr_expect_str_eq(akx__reduce_dims_shape_name(p.shape), want, "%s: shape", what);
  if (want_splits > 0)
    cr_expect_eq(p.splits, want_splits, "%s: %d splits, expected %d", what, (int)p.splits, (int)want_splits);
  if (run) {
    char msg[MSG];
    const dims_op o = op_make(t, AKX_MAP_IDENTITY, AKX_OP_ADD, t);
    tfx_note(tally, run_case(ctx, k, &o, 7000u + (uint64_t)tally->checks, msg, sizeof msg), "%s: %s", what,
             msg);
  }
}

/* A strided reduction into contiguous outputs takes a thread per output when the reduction is
 * shorter than 32: 31 does, 32 and 33 do not (100 outputs: 4 tiles of 32, far from filling any
 * device, but 32 or 33 elements give the columns kernel's 8 threads on an output 4 loads once,
 * so it would not split, and the tiled kernel has no pass to save: the columns kernel). The
 * strided fallback's width follows the same rule: a thread per output below 32, 32 outputs per
 * block from 32 on. */
Test(reduce_dims_shapes, threshold_reduction_length_32) {
  akx_context *ctx = tfx_open();
  tfx_tally tally = {0};
  const dims_device dev = dims_device_of(ctx, AKX_FLOAT32);
  cr_assert_lt(cdiv(100, 32) * dev.bd, dev.threads, "100 outputs would fill the device");
  char what[128];
  for (int64_t len = 31; len <= 33; len++) {
    snprintf(what, sizeof what, "{%lld, 100} float32, reduce dim 0", (long long)len);
    dims_case k = rm2(len, 100, 1u);
    side(ctx, &tally, what, &k, AKX_FLOAT32, len < 32 ? "per_thread" : "columns", 0, 1);
    /* {30, len, 40} every other element, reduce the middle: outputs contiguous in no dim */
    const int64_t s3[3] = {30, len, 40};
    k = case_of(3, s3, 2u, 0);
    k.src_step = 2;
    snprintf(what, sizeof what, "{30, %lld, 40} step 2, reduce dim 1", (long long)len);
    side(ctx, &tally, what, &k, AKX_FLOAT32, "strided", 0, 1);
    const akx__reduce_dims_plan p = plan_of(ctx, &k, AKX_FLOAT32);
    cr_expect_eq(p.width, len < 32 ? dev.bd : 32, "%s: %d outputs per block", what, (int)p.width);
  }
  tfx_done(&tally);
  tfx_close(ctx);
}

/* A contiguous reduction takes a block per output when each of its threads gets at least one
 * 16-byte vector (len x size >= block x 16; h200 float32: 256 x 16 / 4 = 1024 elements), else a
 * warp per output. */
Test(reduce_dims_shapes, threshold_warp_or_block_per_row) {
  akx_context *ctx = tfx_open();
  tfx_tally tally = {0};
  static const akx_dtype ts[] = {AKX_FLOAT32, AKX_FLOAT64, AKX_INT16};
  char what[128];
  for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) {
    const akx_dtype acc = ref_resolve_acc(ts[i], AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_DTYPE_AUTO);
    const dims_device dev = dims_device_of(ctx, acc);
    const int64_t len = dev.bd * 16 / (int64_t)akx_dtype_size(ts[i]);
    for (int64_t n = len - 1; n <= len; n++) {
      snprintf(what, sizeof what, "{20, %lld} %s, reduce dim 1", (long long)n, akx_dtype_name(ts[i]));
      const dims_case k = rm2(20, n, 2u);
      side(ctx, &tally, what, &k, ts[i], n < len ? "warp_rows" : "rows", 0, 1);
    }
  }
  tfx_done(&tally);
  tfx_close(ctx);
}

/* The single-pass shape the selector picks for n_out contiguous outputs of a reduction of len
 * that is neither short nor over a 64 KiB row: tiled when outputs >= elements per output and
 * the columns kernel would split (32-output tiles would not fill the device, and len gives its
 * bd / 32 threads on an output 4 loads twice: len >= bd / 4), else columns. */
static const char *tiled_or_columns(const dims_device *dev, int64_t n_out, int64_t len) {
  return n_out >= len && cdiv(n_out, 32) * dev->bd < dev->threads && len >= dev->bd / 4 ? "tiled" : "columns";
}

/* A thread per output when a row of outputs is at least 64 KiB: one element under it is not. */
Test(reduce_dims_shapes, threshold_row_of_outputs_64k, .timeout = 300) {
  akx_context *ctx = tfx_open();
  tfx_tally tally = {0};
  static const akx_dtype ts[] = {AKX_FLOAT32, AKX_BFLOAT16, AKX_FLOAT64, AKX_INT8};
  char what[128];
  for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) {
    const akx_dtype acc = ref_resolve_acc(ts[i], AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_DTYPE_AUTO);
    const dims_device dev = dims_device_of(ctx, acc);
    const int64_t at = 65536 / (int64_t)akx_dtype_size(ts[i]); /* float32: 16384 outputs */
    for (int64_t n = at - 1; n <= at; n++) {
      snprintf(what, sizeof what, "{40, %lld} %s, reduce dim 0", (long long)n, akx_dtype_name(ts[i]));
      const dims_case k = rm2(40, n, 1u);
      side(ctx, &tally, what, &k, ts[i], n < at ? tiled_or_columns(&dev, n, 40) : "per_thread", 0,
           ts[i] == AKX_FLOAT32);
    }
  }
  tfx_done(&tally);
  tfx_close(ctx);
}

/* A tile whose rows are adjacent in memory (its W outputs a whole row, the reduction stepping a
 * row: {len, W} row-major, reduce dim 0) reads the array as one stream; each warp's request
 * starts on a 32-byte sector only if a block's step (tile_rows x W elements) and each split's
 * first row do (src/reduce/reduce_dims.c, tile_steps). Before, 85 rows of 3 float32 a step
 * shifted each request by 4 bytes: 5 sectors a request for 4 sectors' bytes. The sim's
 * sectors of the columns kernel's loads are held to their ideal (the lanes' bytes in whole
 * sectors) plus 2% for the split finish's partials, for widths that divide no sector and
 * elements of 1 to 8 bytes; and the values against the host reference. */
Test(reduce_dims_shapes, adjacent_rows_whole_sectors, .timeout = 300) {
  akx_context *ctx = tfx_open();
  tfx_tally tally = {0};
  static const akx_dtype ts[] = {AKX_FLOAT32, AKX_BFLOAT16, AKX_FLOAT64, AKX_UINT8};
  static const int64_t widths[] = {3, 5, 7, 12};
  char what[128], msg[MSG];
  for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
      const int64_t W = widths[w], len = 6000;
      const dims_case k = rm2(len, W, 1u);
      snprintf(what, sizeof what, "{%lld, %lld} %s, reduce dim 0", (long long)len, (long long)W,
               akx_dtype_name(ts[i]));
      const akx__reduce_dims_plan p = plan_of(ctx, &k, ts[i]);
      cr_expect_str_eq(akx__reduce_dims_shape_name(p.shape), "columns", "%s: shape", what);
      const int64_t row_bytes = W * (int64_t)akx_dtype_size(ts[i]);
      cr_expect_eq(p.tile_rows * row_bytes % 32, 0, "%s: a step of %d rows of %lld bytes", what,
                   (int)p.tile_rows, (long long)row_bytes);
      cr_expect_eq(p.split_len * row_bytes % 32, 0, "%s: a split of %lld rows", what, (long long)p.split_len);
      cr_expect_gt(p.splits, 1, "%s: split", what);
      cr_expect_geq(p.split_len * p.splits, len, "%s: the splits cover the reduction", what);
      cr_expect_lt(p.split_len * (p.splits - 1), len, "%s: no split is empty", what);
      cr_expect_gt(p.tile_rows * W * 2, p.block_size, "%s: %d rows of %lld outputs in a block of %d", what,
                   (int)p.tile_rows, (long long)W, (int)p.block_size);
      cr_assert_eq(akx_sim_counters_reset(ctx), AKX_SUCCESS, "%s", akx_last_error());
      const dims_op o = op_make(ts[i], AKX_MAP_IDENTITY, AKX_OP_ADD, ts[i]);
      tfx_note(&tally, run_case(ctx, &k, &o, 9100u + (uint64_t)w, msg, sizeof msg), "%s: %s", what, msg);
      akx_sim_kernel_counters per[16];
      int32_t n = 0;
      cr_assert_eq(akx_sim_counters_get(ctx, NULL, per, 16, &n), AKX_SUCCESS, "%s", akx_last_error());
      int found = 0;
      for (int32_t j = 0; j < n && j < 16; j++) {
        if (strcmp(per[j].kernel, "reduce_dims_columns") != 0) continue;
        found = 1;
        const akx_sim_traffic *l = &per[j].global_load;
        cr_expect_leq(l->units * 100, l->ideal * 102, "%s: %llu sectors loaded, ideal %llu", what,
                      (unsigned long long)l->units, (unsigned long long)l->ideal);
      }
      cr_expect(found, "%s: no reduce_dims_columns launch among %d kernels", what, (int)n);
    }
  tfx_done(&tally);
  tfx_close(ctx);
}

/* Tiled while ceil(n_out / 32) tiles of 32 outputs x the block size stay under the device's
 * resident threads, columns from there: T = ceil(threads / bd) tiles fill it (h200: 270336 / 256
 * = 1056), so 32 (T - 1) = 33760 outputs are the last tiled and 33761 the first columns. int8
 * keeps that row under 64 KiB (33761 bytes), where a thread per output would take it. And
 * tiled only while outputs >= elements per output: 100 outputs of 100 are tiled, 99 are not. */
Test(reduce_dims_shapes, threshold_fill, .timeout = 300) {
  /* 64 elements an output: the columns kernel's 8 threads on one get 4 loads twice, so below a
   * wave it would split (threshold_reduction_length_32: with 32 it would not). */
  akx_context *ctx = tfx_open();
  tfx_tally tally = {0};
  const dims_device dev = dims_device_of(ctx, AKX_INT64); /* int8 ADD widens to int64 */
  const int64_t T = cdiv(dev.threads, dev.bd);
  const int64_t last_tiled = 32 * (T - 1);
  cr_assert_lt(last_tiled + 1, 65536, "the fill boundary (%lld outputs) is past a 64 KiB row of int8",
               (long long)(last_tiled + 1));
  char what[128];
  for (int64_t n = last_tiled; n <= last_tiled + 1; n++) {
    snprintf(what, sizeof what, "{64, %lld} int8, reduce dim 0 (fill at %lld tiles)", (long long)n,
             (long long)T);
    const dims_case k = rm2(64, n, 1u);
    side(ctx, &tally, what, &k, AKX_INT8, n == last_tiled ? "tiled" : "columns", 0, 1);
  }
  for (int64_t n = 99; n <= 100; n++) {
    snprintf(what, sizeof what, "{100, %lld} float32, reduce dim 0", (long long)n);
    const dims_case k = rm2(100, n, 1u);
    side(ctx, &tally, what, &k, AKX_FLOAT32, n < 100 ? "columns" : "tiled", 0, 1);
  }
  tfx_done(&tally);
  tfx_close(ctx);
}

/* The splits of each output's reduction (splits_for and the single-pass shapes' rules):
 *  - rows: a block per output; split while n_out blocks hold fewer than the resident threads,
 *    into enough splits to fill them, each split keeping a block's worth (bd elements);
 *  - columns: split likewise, each split keeping 4 loads for each of the bd / 32 threads on an
 *    output;
 *  - tiled and per_thread: split only below half a wave, and only while the partials stay
 *    under 1/8 of the source bytes (len x size / (2 x acc x 8) splits at most). */
Test(reduce_dims_shapes, threshold_splits, .timeout = 300) {
  akx_context *ctx = tfx_open();
  tfx_tally tally = {0};
  const dims_device dev = dims_device_of(ctx, AKX_FLOAT32);
  const int64_t T = cdiv(dev.threads, dev.bd); /* blocks in a wave (h200: 1056) */
  char what[160];

  /* rows over the wave: T outputs of 1024 fill it (one split); T - 1 do not, and split in
   * ceil(threads / ((T - 1) bd)) = 2, under the floor of 1024 / bd = 4. */
  const int64_t len = dev.bd * 16 / 4; /* a block per output from here on */
  for (int64_t n = T - 1; n <= T; n++) {
    snprintf(what, sizeof what, "{%lld, %lld} float32, reduce dim 1 (rows, wave %lld)", (long long)n,
             (long long)len, (long long)T);
    const dims_case k = rm2(n, len, 2u);
    const int32_t want = n == T ? 1 : (int32_t)lmin(cdiv(dev.threads, n * dev.bd), len / dev.bd);
    cr_assert(n == T || want > 1, "%s: no split on the short side", what);
    side(ctx, &tally, what, &k, AKX_FLOAT32, "rows", want, 1);
  }
  /* rows' floor: 8 outputs want ceil(threads / (8 bd)) = 132 splits, limited to len / bd:
   * 5 bd - 1 elements give 4, 5 bd give 5. */
  cr_assert_gt(cdiv(dev.threads, 8 * dev.bd), 5, "8 rows nearly fill the device");
  for (int64_t n = 5 * dev.bd - 1; n <= 5 * dev.bd; n++) {
    snprintf(what, sizeof what, "{8, %lld} float32, reduce dim 1 (rows' floor)", (long long)n);
    const dims_case k = rm2(8, n, 2u);
    side(ctx, &tally, what, &k, AKX_FLOAT32, "rows", n < 5 * dev.bd ? 4 : 5, 1);
  }
  /* columns' floor: 40 outputs of len (fewer than len: columns) in 2 blocks of 32 outputs want
   * ceil(threads / (2 bd)) = 528 splits, limited to len / (bd / 32 x 4) = len / 32: 63 gives
   * 1, 64 gives 2. */
  const int64_t floor_c = dev.bd / 32 * 4;
  cr_assert_gt(cdiv(dev.threads, 2 * dev.bd), 2, "2 blocks nearly fill the device");
  for (int64_t n = 2 * floor_c - 1; n <= 2 * floor_c; n++) {
    snprintf(what, sizeof what, "{%lld, 40} float32, reduce dim 0 (columns' floor)", (long long)n);
    const dims_case k = rm2(n, 40, 1u);
    side(ctx, &tally, what, &k, AKX_FLOAT32, "columns", n < 2 * floor_c ? 1 : 2, 1);
  }
  /* columns over the wave (the plan only: a billion elements): 32 (T - 1) outputs of one more
   * element each take T - 1 blocks and split in 2; 32 (T - 1) + 1 take T blocks, a wave. int8
   * keeps the row of outputs under 64 KiB. */
  const dims_device dev8 = dims_device_of(ctx, AKX_INT64); /* int8 ADD widens to int64 */
  const int64_t T8 = cdiv(dev8.threads, dev8.bd), floor8 = dev8.bd / 32 * 4;
  cr_assert_lt(32 * (T8 - 1) + 1, 65536, "the wave (%lld blocks) is past a 64 KiB row of int8", (long long)T8);
  for (int64_t n = 32 * (T8 - 1); n <= 32 * (T8 - 1) + 1; n++) {
    snprintf(what, sizeof what, "{%lld, %lld} int8, reduce dim 0 (columns, wave)", (long long)(n + 1),
             (long long)n);
    const dims_case k = rm2(n + 1, n, 1u);
    const int32_t want =
        n == 32 * (T8 - 1) ? (int32_t)lmin(cdiv(dev8.threads, (T8 - 1) * dev8.bd), (n + 1) / floor8) : 1;
    cr_assert(n > 32 * (T8 - 1) || want > 1, "%s: no split on the short side", what);
    side(ctx, &tally, what, &k, AKX_INT8, "columns", want, 0);
  }
  /* tiled below half a wave: blocks of 8 float32 outputs split while blocks x bd x 2 < threads,
   * H = ceil(threads / (2 bd)) = 528 blocks do not (h200: 528 x 256 x 2 = 270336 exactly), so
   * 8 (H - 1) = 4216 outputs of 256 split, in min(ceil(threads / ((H - 1) bd)) = 3,
   * 256 / (32 x 4) = 2, 256 x 4 / (2 x 4 x 8) = 16) = 2; 4217 outputs do not. */
  const int64_t H = cdiv(dev.threads, 2 * dev.bd);
  for (int64_t n = 8 * (H - 1); n <= 8 * (H - 1) + 1; n++) {
    snprintf(what, sizeof what, "{256, %lld} float32, reduce dim 0 (tiled, half wave %lld blocks)",
             (long long)n, (long long)H);
    const dims_case k = rm2(256, n, 1u);
    const int64_t per_output = dev.bd / 8;
    const int32_t want =
        n == 8 * (H - 1)
            ? (int32_t)lmin(lmin(cdiv(dev.threads, (H - 1) * dev.bd), 256 / (per_output * 4)), 256 * 4 / 64)
            : 1;
    cr_assert(n > 8 * (H - 1) || want > 1, "%s: no split on the short side", what);
    side(ctx, &tally, what, &k, AKX_FLOAT32, "tiled", want, n == 8 * (H - 1));
  }
  /* per_thread's partials share: 16384 float32 outputs (a 64 KiB row) in 16384 / bd blocks,
   * under half a wave; len x 4 / (2 x 4 x 8) = len / 16 splits at most: 31 gives 1, 32 gives 2
   * (under ceil(threads / 16384) = 17 and the floor of 32 / 4 = 8). The bench's 32768x32
   * (dims=2) is such a case: two splits of 16 loads a thread in flight. */
  cr_assert_lt(16384 * 2, dev.threads, "16384 threads are half a wave");
  for (int64_t n = 31; n <= 32; n++) {
    snprintf(what, sizeof what, "{%lld, 16384} float32, reduce dim 0 (per_thread's partials)", (long long)n);
    const dims_case k = rm2(n, 16384, 1u);
    side(ctx, &tally, what, &k, AKX_FLOAT32, "per_thread", n < 32 ? 1 : 2, 1);
  }
  tfx_done(&tally);
  tfx_close(ctx);
}
