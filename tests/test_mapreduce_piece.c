/* akx_mapreduce_piece: an array cut into pieces, each reduced with an exchange that hands it
 * every piece's partial, gives in every piece the reduction of the whole array:
 * - int64 ADD and MAX, float64 ADD (integer values: exact) in 1, 2, 3 and 5 uneven pieces, an
 *   empty one first or in the middle, with init, with fold, to the host and to the device;
 *   float32 ADD of fractions, close to a double sum;
 * - int32 MIN without init, an empty piece among the others;
 * - ARGMAX of float32 and ARGMIN of int64, the extreme repeated across pieces: the first
 *   position in the whole array, of a vector and of a 6x7x5 array cut along dim 1 (the pieces'
 *   positions interleave: position_block and position_skip);
 * - a user op whose map reads its position; one without identity, with an empty piece;
 * - bad input refused before the exchange runs, result unwritten; a failing exchange.
 * One process cannot run the pieces at once: each reduction runs twice (tests/support/gather.h).
 * Partials and results must repeat bit for bit.
 * The user ops are compiled at run time: the suite's timeout allows for a cold cache. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "akx.h"
#include "akx_layer.h"
#include "fixture.h"
#include "mem_order.h"
#include "views.h"
#include "pieces.h"
#include "reduce_user_ops.h"
#include "gather.h"

static akx_context *ctx;
static void setup(void) { ctx = tfx_open(); }
static void teardown(void) { tfx_close(ctx); }
TestSuite(mapreduce_piece, .init = setup, .fini = teardown, .timeout = 600);

#define POISON 0xA5
#define MAX_OUT 32 /* bytes of the largest result here */

/* ---- pieces ------------------------------------------------------------------------------------ */

typedef struct {
  int K;
  akx_array src[5];                /* C-contiguous device arrays */
  akx_reduce_piece_t at[5];        /* positions only */
} cut_t;

/* Cuts the whole C-order host array g along dim d into pieces of extents ext, each its own
 * C-contiguous array (memory order = its C order), with the positions that carry its C order
 * into the whole's: outer runs of ext*inner elements, the other pieces' between them. */
static cut_t cut(const void *g, akx_dtype t, int32_t nd, const int64_t *shape, int32_t d,
                 const int64_t *ext, int K) {
  cut_t c;
  memset(&c, 0, sizeof c);
  c.K = K;
  const size_t es = ref_size(t);
  int64_t outer = 1, inner = 1, start = 0;
  for (int32_t k = 0; k < d; ++k) outer *= shape[k];
  for (int32_t k = d + 1; k < nd; ++k) inner *= shape[k];
  for (int p = 0; p < K; ++p) {
    int64_t pshape[AKX_MAX_DIMS];
    for (int32_t k = 0; k < nd; ++k) pshape[k] = k == d ? ext[p] : shape[k];
    const size_t run = (size_t)(ext[p] * inner) * es;
    unsigned char *h = tfx_xmalloc(run * (size_t)outer + 1);
    for (int64_t o = 0; o < outer; ++o)
      memcpy(h + (size_t)o * run, (const char *)g + (size_t)((o * shape[d] + start) * inner) * es, run);
    c.src[p] = akx_array_c(tfx_upload(ctx, h, run * (size_t)outer), t, nd, pshape);
    free(h);
    c.at[p].position_base = start * inner;
    c.at[p].position_block = outer > 1 ? ext[p] * inner : 0;
    c.at[p].position_skip = outer > 1 ? (shape[d] - ext[p]) * inner : 0;
    start += ext[p];
  }
  cr_assert_eq(start, shape[d], "the pieces do not cover dim %d", (int)d);
  return c;
}

static void cut_free(cut_t *c) { for (int p = 0; p < c->K; ++p) tfx_free(ctx, c->src[p].data); }


/* The wholes: a vector, and a 6x7x5 array cut along dim 1. */
static const struct { int32_t nd; int64_t shape[3]; int32_t dim; } wholes[] = {
    {1, {3001, 1, 1}, 0}, {3, {6, 7, 5}, 1}};
static int64_t whole_n(int w) { return wholes[w].shape[0] * wholes[w].shape[1] * wholes[w].shape[2]; }

/* ---- calls ------------------------------------------------------------------------------------- */

typedef struct {
  akx_map map;
  akx_op op;
  const akx_reduce_opts *opts;
  akx_where where;
  const void *prev;  /* the result's previous value (out_bytes), for fold; NULL: poison */
  size_t out_bytes;
} call_t;

/* One call into a fresh result (host or device as c->where); its bytes to out. piece NULL:
 * akx_mapreduce of src. */
static akx_status one_call(const call_t *c, const akx_array *src, const akx_reduce_piece_t *piece,
                           void *out) {
  unsigned char before[MAX_OUT];
  if (c->prev) memcpy(before, c->prev, c->out_bytes);
  else memset(before, POISON, c->out_bytes);
  void *r = out;
  if (c->where == AKX_HOST) memcpy(out, before, c->out_bytes);
  else r = tfx_upload(ctx, before, c->out_bytes);
  const akx_status st = piece ? akx_mapreduce_piece(ctx, src, c->map, c->op, c->opts, piece, r, c->where)
                              : akx_mapreduce(ctx, src, c->map, c->op, c->opts, r, c->where);
  if (c->where == AKX_DEVICE) {
    cr_assert_eq(akx_synchronize(ctx), AKX_SUCCESS, "%s", akx_last_error());
    tfx_to_host(ctx, out, r, c->out_bytes);
    tfx_free(ctx, r);
  }
  return st;
}

/* akx_mapreduce of the whole C-order host array g; its result to out. */
static void whole_call(const call_t *c, const void *g, akx_dtype t, int w, void *out,
                       const char *what) {
  void *d = tfx_upload(ctx, g, (size_t)whole_n(w) * ref_size(t));
  const akx_array a = akx_array_c(d, t, wholes[w].nd, wholes[w].shape);
  const akx_status st = one_call(c, &a, NULL, out);
  cr_assert_eq(st, AKX_SUCCESS, "%s: akx_mapreduce of the whole = %s: %s", what,
               akx_status_string(st), akx_last_error());
  tfx_free(ctx, d);
}

/* The two rounds over the pieces; round 2's result (the same bits in every piece) to out. */
static void in_pieces(const call_t *c, const cut_t *cu, void *out, const char *what) {
  tgx_gather x = tgx_make(ctx, cu->K);
  unsigned char got[MAX_OUT];
  for (x.round = 1; x.round <= 2; ++x.round)
    for (int k = 0; k < cu->K; ++k) {
      akx_reduce_piece_t piece = cu->at[k];
      piece.pieces = cu->K, piece.exchange = tgx_exchange, piece.arg = &x;
      x.k = k;
      const int calls = x.calls;
      const akx_status st = one_call(c, &cu->src[k], &piece, got);
      cr_assert(!x.wrong_size, "%s: round %d, piece %d's partial is not %zu bytes as before", what,
                x.round, k, x.bytes);
      cr_assert(!x.changed, "%s: piece %d's partial differs from round 1's", what, k);
      cr_assert_eq(st, AKX_SUCCESS, "%s: round %d, piece %d = %s: %s", what, x.round, k,
                   akx_status_string(st), akx_last_error());
      cr_assert_eq(x.calls, calls + 1, "%s: piece %d called the exchange %d times", what, k,
                   x.calls - calls);
      if (x.round == 1) continue;
      if (k == 0) memcpy(out, got, c->out_bytes);
      else cr_assert(memcmp(out, got, c->out_bytes) == 0,
                     "%s: piece %d's result is not piece 0's bit for bit", what, k);
    }
  tgx_free(&x);
}

static const char *describe(char *buf, size_t len, const char *name, int w, const int64_t *ext,
                            int K, const char *mode) {
  size_t k = (size_t)snprintf(buf, len, "%s of %s in pieces {", name,
                              wholes[w].nd == 1 ? "a vector" : "6x7x5 along dim 1");
  for (int p = 0; p < K && k < len; ++p)
    k += (size_t)snprintf(buf + k, len - k, "%s%lld", p ? ", " : "", (long long)ext[p]);
  if (k < len) snprintf(buf + k, len - k, "}%s", mode);
  return buf;
}

static void *gen(akx_dtype t, int64_t n, uint64_t seed) { return piece_values(t, n, seed, 0); }

/* ---- built-in ops ------------------------------------------------------------------------------ */

Test(mapreduce_piece, builtin_ops_match_the_whole) {
  const struct { const char *name; akx_op op; akx_dtype t; } ops[] = {
      {"int64 ADD", AKX_OP_ADD, AKX_INT64}, {"int64 MAX", AKX_OP_MAX, AKX_INT64},
      {"float64 ADD", AKX_OP_ADD, AKX_FLOAT64}};
  const struct { int init, fold; akx_where where; const char *name; } modes[] = {
      {0, 0, AKX_HOST, ", to the host"}, {1, 0, AKX_DEVICE, ", init, to the device"},
      {0, 1, AKX_DEVICE, ", fold, to the device"}, {1, 1, AKX_HOST, ", init and fold, to the host"}};
  const int64_t n = 3001;
  for (int o = 0; o < 3; ++o) {
    const int is_max = ops[o].op == AKX_OP_MAX, is_f = ops[o].t == AKX_FLOAT64;
    void *g = gen(ops[o].t, n, (uint64_t)(10 + o));
    /* MAX: an init and a previous value the elements beat; ADD: any. */
    const int64_t init_i = is_max ? 250 : 17, prev_i = is_max ? -5 : -40;
    const double init_d = 17.0, prev_d = -40.0;
    int64_t host = is_max ? INT64_MIN : 0;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t v = is_f ? (int64_t)((double *)g)[i] : ((int64_t *)g)[i];
      host = is_max ? (v > host ? v : host) : host + v;
    }
    for (int m = 0; m < 4; ++m) {
      akx_reduce_opts opts = akx_reduce_opts_default();
      opts.init = !modes[m].init ? NULL : is_f ? (const void *)&init_d : (const void *)&init_i;
      opts.fold = modes[m].fold;
      const call_t c = {AKX_MAP_IDENTITY, ops[o].op, &opts, modes[m].where,
                        !modes[m].fold ? NULL : is_f ? (const void *)&prev_d : (const void *)&prev_i, 8};
      int64_t want = host;
      if (modes[m].init) want = is_max ? (init_i > want ? init_i : want) : want + init_i;
      if (modes[m].fold) want = is_max ? (prev_i > want ? prev_i : want) : want + prev_i;
      for (int sp = 0; sp < SPLITS; ++sp) {
        int64_t ext[5];
        char what[256], gs[96], ws[96];
        const int K = split(n, sp, ext);
        describe(what, sizeof what, ops[o].name, 0, ext, K, modes[m].name);
        cut_t cu = cut(g, ops[o].t, 1, &n, 0, ext, K);
        union { int64_t i; double d; } got, whole;
        in_pieces(&c, &cu, &got, what);
        whole_call(&c, g, ops[o].t, 0, &whole, what);
        const int ok = is_f ? got.d == (double)want && whole.d == (double)want
                            : got.i == want && whole.i == want;
        cr_assert(ok, "%s: %s in pieces, %s from akx_mapreduce of the whole, the host's %lld", what,
                  ref_format(ref_load(&got, ops[o].t), gs, sizeof gs),
                  ref_format(ref_load(&whole, ops[o].t), ws, sizeof ws), (long long)want);
        cut_free(&cu);
      }
    }
    free(g);
  }
}

Test(mapreduce_piece, float32_add_close_to_a_double_sum) {
  const int64_t n = 3001;
  float *g = gen(AKX_FLOAT32, n, 20);
  double host = 0;
  for (int64_t i = 0; i < n; ++i) host += g[i];
  for (int where = 0; where < 2; ++where) {
    const call_t c = {AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, where ? AKX_DEVICE : AKX_HOST, NULL, 4};
    float whole;
    whole_call(&c, g, AKX_FLOAT32, 0, &whole, "float32 ADD");
    for (int sp = 0; sp < SPLITS; ++sp) {
      int64_t ext[5];
      char what[256];
      const int K = split(n, sp, ext);
      describe(what, sizeof what, "float32 ADD", 0, ext, K, where ? ", to the device" : "");
      cut_t cu = cut(g, AKX_FLOAT32, 1, &n, 0, ext, K);
      float got;
      in_pieces(&c, &cu, &got, what); /* bit for bit across pieces */
      cr_assert_leq(fabs(got - host), 1e-5 * fabs(host), "%s: %.9g, the double sum %.17g", what,
                    (double)got, host);
      cr_assert_leq(fabs(got - whole), 1e-5 * fabs(host), "%s: %.9g, akx_mapreduce's %.9g", what,
                    (double)got, (double)whole);
      cut_free(&cu);
    }
  }
  free(g);
}

/* MIN has no answer for an empty array without init, but an empty piece only adds nothing. */
Test(mapreduce_piece, int32_min_with_an_empty_piece_without_init) {
  const int64_t n = 3001;
  int32_t *g = gen(AKX_INT32, n, 30), host = INT32_MAX;
  for (int64_t i = 0; i < n; ++i) host = g[i] < host ? g[i] : host;
  const call_t c = {AKX_MAP_IDENTITY, AKX_OP_MIN, NULL, AKX_HOST, NULL, 4};
  int32_t whole;
  whole_call(&c, g, AKX_INT32, 0, &whole, "int32 MIN");
  cr_assert_eq(whole, host, "int32 MIN of the whole: %d, the host's %d", whole, host);
  for (int sp = 0; sp < 3; ++sp) { /* the first empty; the middle one of three; of five */
    int64_t ext[5] = {n / 2, 0, n - n / 2};
    const int K = sp == 2 ? 3 : split(n, sp == 0 ? 2 : 3, ext);
    char what[256];
    describe(what, sizeof what, "int32 MIN", 0, ext, K, ", no init");
    cut_t cu = cut(g, AKX_INT32, 1, &n, 0, ext, K);
    int32_t got;
    in_pieces(&c, &cu, &got, what);
    cr_assert_eq(got, host, "%s: %d, the host's and akx_mapreduce's %d", what, got, host);
    cut_free(&cu);
  }
  free(g);
}

/* ---- ARGMIN / ARGMAX --------------------------------------------------------------------------- */

typedef struct {
  int64_t index;
  union { float f; int64_t i; } value; /* src's type at offset 8: 16 bytes in all */
} arg_result;

/* Ties across pieces: the values come from a small set, the extreme (for ARGMAX a float32 6,
 * for ARGMIN an int64 -3) only after the first third (so not always in the first piece) and
 * many times; the answer is the first in the whole array's C order. */
Test(mapreduce_piece, argmax_argmin_first_position_of_the_whole) {
  const struct { const char *name; akx_op op; akx_dtype t; } ops[] = {
      {"float32 ARGMAX", AKX_OP_ARGMAX, AKX_FLOAT32}, {"int64 ARGMIN", AKX_OP_ARGMIN, AKX_INT64}};
  for (int o = 0; o < 2; ++o)
    for (int w = 0; w < 2; ++w) {
      const int64_t n = whole_n(w);
      const akx_dtype t = ops[o].t;
      void *g = tfx_xmalloc((size_t)n * ref_size(t));
      int64_t first = -1;
      for (int64_t i = 0; i < n; ++i) {
        const uint64_t r = ref_rand((uint64_t)(40 + 2 * o + w), (uint64_t)i);
        const int extreme = i >= n / 3 && (r % 13 == 0 || i == n - 1);
        if (extreme && first < 0) first = i;
        if (t == AKX_FLOAT32) ((float *)g)[i] = extreme ? 6.0f : (float)(r % 6);
        else ((int64_t *)g)[i] = extreme ? -3 : (int64_t)(r % 6) - 2;
      }
      for (int where = 0; where < 2; ++where) {
        const call_t c = {AKX_MAP_IDENTITY, ops[o].op, NULL, where ? AKX_DEVICE : AKX_HOST, NULL,
                          sizeof(arg_result)};
        arg_result whole;
        whole_call(&c, g, t, w, &whole, ops[o].name);
        cr_assert_eq(whole.index, first, "%s of %lld: akx_mapreduce's index %lld, want %lld",
                     ops[o].name, (long long)n, (long long)whole.index, (long long)first);
        for (int sp = 0; sp < SPLITS; ++sp) {
          int64_t ext[5];
          char what[256];
          const int K = split(wholes[w].shape[wholes[w].dim], sp, ext);
          describe(what, sizeof what, ops[o].name, w, ext, K, where ? ", to the device" : "");
          cut_t cu = cut(g, t, wholes[w].nd, wholes[w].shape, wholes[w].dim, ext, K);
          arg_result got;
          in_pieces(&c, &cu, &got, what);
          cr_assert_eq(got.index, first, "%s: index %lld, the first extreme is at %lld", what,
                       (long long)got.index, (long long)first);
          cr_assert(t == AKX_FLOAT32 ? got.value.f == 6.0f : got.value.i == -3,
                    "%s: value %g (as float32) or %lld (as int64)", what, (double)got.value.f,
                    (long long)got.value.i);
          cut_free(&cu);
        }
      }
      free(g);
    }
}

/* ---- user ops ---------------------------------------------------------------------------------- */

static akx_op create(const char *source, const char *acc, const char *combine,
                     const char *identity, const char *map) {
  const akx_user_op_desc d = {source, acc, combine, identity, map, NULL};
  return tfx_user_op(ctx, &d);
}


Test(mapreduce_piece, user_map_sees_the_whole_positions) {
  const akx_op op = create(WEIGHTED_SRC, "double", "w_add", "w_zero", "w_map");
  const double init = 0.5, prev = -3.0;
  for (int w = 0; w < 2; ++w) {
    const int64_t n = whole_n(w);
    int64_t *g = gen(AKX_INT64, n, (uint64_t)(50 + w));
    double host = 0; /* exact: integers far below 2^53 */
    for (int64_t i = 0; i < n; ++i) host += weighted_term((double)g[i], i);
    for (int m = 0; m < 2; ++m) { /* to the host; init and fold into the device */
      akx_reduce_opts opts = akx_reduce_opts_default();
      opts.init = m ? &init : NULL;
      opts.fold = m;
      const call_t c = {AKX_MAP_IDENTITY, op, &opts, m ? AKX_DEVICE : AKX_HOST, m ? &prev : NULL, 8};
      const double want = host + (m ? init + prev : 0);
      double whole;
      whole_call(&c, g, AKX_INT64, w, &whole, "int64 weighted sum");
      cr_assert_eq(whole, want, "akx_mapreduce of the whole: %.17g, the host's %.17g", whole, want);
      for (int sp = 0; sp < SPLITS; ++sp) {
        int64_t ext[5];
        char what[256];
        const int K = split(wholes[w].shape[wholes[w].dim], sp, ext);
        describe(what, sizeof what, "int64 weighted sum", w, ext, K, m ? ", init, fold" : "");
        cut_t cu = cut(g, AKX_INT64, wholes[w].nd, wholes[w].shape, wholes[w].dim, ext, K);
        double got;
        in_pieces(&c, &cu, &got, what);
        cr_assert_eq(got, want, "%s: %.17g, the host's %.17g", what, got, want);
        cut_free(&cu);
      }
    }
    free(g);
  }
  cr_assert_eq(akx_user_op_destroy(ctx, op), AKX_SUCCESS, "%s", akx_last_error());
}

/* No identity (RANGE_SRC): an empty piece's partial holds no value, which the combine must skip. */

typedef struct { double lo, hi; } range_acc;

Test(mapreduce_piece, user_op_without_identity_and_an_empty_piece) {
  const akx_op op = create(RANGE_SRC, "Range", "r_join", NULL, "r_map");
  for (int w = 0; w < 2; ++w) {
    const int64_t n = whole_n(w), len = wholes[w].shape[wholes[w].dim];
    int32_t *g = gen(AKX_INT32, n, (uint64_t)(60 + w));
    range_acc host = {INFINITY, -INFINITY};
    for (int64_t i = 0; i < n; ++i) host.lo = fmin(host.lo, g[i]), host.hi = fmax(host.hi, g[i]);
    const call_t c = {AKX_MAP_IDENTITY, op, NULL, AKX_HOST, NULL, sizeof(range_acc)};
    range_acc whole;
    whole_call(&c, g, AKX_INT32, w, &whole, "int32 range");
    cr_assert(whole.lo == host.lo && whole.hi == host.hi, "akx_mapreduce: {%g, %g}, the host's {%g, %g}",
              whole.lo, whole.hi, host.lo, host.hi);
    for (int sp = 0; sp < 3; ++sp) { /* one empty among 4 in the middle; first of 3; among 5 */
      int64_t ext[5] = {len / 3, 0, 1, len - len / 3 - 1};
      const int K = sp == 0 ? 4 : split(len, sp + 1, ext);
      char what[256];
      describe(what, sizeof what, "int32 range (no identity)", w, ext, K, "");
      cut_t cu = cut(g, AKX_INT32, wholes[w].nd, wholes[w].shape, wholes[w].dim, ext, K);
      range_acc got;
      in_pieces(&c, &cu, &got, what);
      cr_assert(got.lo == host.lo && got.hi == host.hi, "%s: {%g, %g}, the host's {%g, %g}", what,
                got.lo, got.hi, host.lo, host.hi);
      cut_free(&cu);
    }
    free(g);
  }
  cr_assert_eq(akx_user_op_destroy(ctx, op), AKX_SUCCESS, "%s", akx_last_error());
}

/* ---- refusals, a failing exchange -------------------------------------------------------------- */

static void expect_poison(const unsigned char *r, size_t bytes, const char *what) {
  for (size_t b = 0; b < bytes; ++b)
    cr_assert_eq(r[b], POISON, "%s: result byte %zu was written", what, b);
}

Test(mapreduce_piece, bad_input_refused_before_the_exchange) {
  const int64_t n = 100;
  int64_t *g = gen(AKX_INT64, n, 70);
  const akx_array src = akx_vector(tfx_upload(ctx, g, (size_t)n * 8), AKX_INT64, n);
  const struct {
    const char *what, *names;
    int no_piece, no_exchange, no_result;
    int64_t pieces, block;
  } cases[] = {
      {"piece NULL", "piece", 1, 0, 0, 2, 0},
      {"piece->exchange NULL", "exchange", 0, 1, 0, 2, 0},
      {"piece->pieces 0", "pieces", 0, 0, 0, 0, 0},
      {"position_block -1", "position", 0, 0, 0, 2, -1},
      {"result NULL", "result", 0, 0, 1, 2, 0},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    tgx_gather x = tgx_make(ctx, 2);
    akx_reduce_piece_t piece = {0, cases[k].block, 0, cases[k].pieces,
                                cases[k].no_exchange ? NULL : tgx_exchange, &x};
    unsigned char result[16];
    memset(result, POISON, sizeof result);
    const akx_status st =
        akx_mapreduce_piece(ctx, &src, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL,
                            cases[k].no_piece ? NULL : &piece, cases[k].no_result ? NULL : result,
                            AKX_HOST);
    cr_assert_eq(st, AKX_ERROR_INVALID_ARGUMENT, "%s: %s (%s)", cases[k].what,
                 akx_status_string(st), akx_last_error());
    cr_assert(strstr(akx_last_error(), cases[k].names), "%s: the sentence names %s: %s",
              cases[k].what, cases[k].names, akx_last_error());
    cr_assert_eq(x.calls, 0, "%s: the exchange was called", cases[k].what);
    expect_poison(result, sizeof result, cases[k].what);
    tgx_free(&x);
  }
  tfx_free(ctx, src.data);
  free(g);
}

Test(mapreduce_piece, failing_exchange_leaves_the_result_unwritten) {
  const int64_t n = 3001;
  int64_t *g = gen(AKX_INT64, n, 80), host = 0;
  for (int64_t i = 0; i < n; ++i) host += g[i];
  const akx_array src = akx_vector(tfx_upload(ctx, g, (size_t)n * 8), AKX_INT64, n);
  tgx_gather x = tgx_make(ctx, 3);
  x.fail = AKX_ERROR_DEVICE;
  const akx_reduce_piece_t piece = {100, 0, 0, 3, tgx_exchange, &x};
  unsigned char result[8];
  memset(result, POISON, sizeof result);
  const akx_status st =
      akx_mapreduce_piece(ctx, &src, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &piece, result, AKX_HOST);
  cr_assert_eq(st, AKX_ERROR_DEVICE, "the exchange's AKX_ERROR_DEVICE came back as %s (%s)",
               akx_status_string(st), akx_last_error());
  cr_assert_eq(x.calls, 1, "%d calls of the exchange", x.calls);
  expect_poison(result, sizeof result, "a failed exchange");
  tgx_free(&x);
  /* The abandoned call leaves the context fit for the next. */
  int64_t sum = 0;
  const akx_status again = akx_mapreduce(ctx, &src, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &sum, AKX_HOST);
  cr_assert_eq(again, AKX_SUCCESS, "akx_mapreduce after it = %s: %s", akx_status_string(again),
               akx_last_error());
  cr_assert_eq(sum, host, "akx_mapreduce after it: %lld, the host's %lld", (long long)sum,
               (long long)host);
  tfx_free(ctx, src.data);
  free(g);
}
