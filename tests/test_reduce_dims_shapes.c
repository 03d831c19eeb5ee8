/* akx_reduce_dims along any subset of dims (Julia's mapreducedim!, docs/reduce_dims_shapes.md):
 * against the host reference, every combination of reduced dims of 1- to 4-d arrays with
 * sizes 0..5 per dim and random sizes up to 100 (as AK's reduce tests); row- and
 * column-major, offset views, negative strides, broadcast sources; each shape of the
 * selector forced (AKX_REDUCE_DIMS_SHAPE) and reached naturally (asserted through
 * akx__reduce_dims_plan_shape); splits; init, fold, overwrite, narrow dst with a wide
 * accumulator; every dtype with ADD and MAX, each map; the selector's choices for akx-bench's
 * dims shapes on the rtx5080 and h200 profiles. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "internal.h" /* akx__context_reread_settings */
#include "reduce/reduce_dims.h"
#include "reference.h"

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
