/* akx_reduce_dims_piece: a 6x7x5 array cut into pieces along one of its reduced dims, each piece
 * reduced with an exchange that hands it every piece's partials, gives in every piece dst of the
 * whole reduction, against a host reference:
 * - int64 ADD and MAX, float64 ADD (integer values: exact) along every cut dim, reduced alone or
 *   with another dim, in 1, 2, 3 and 5 uneven pieces with empty ones, the pieces and dst in C,
 *   Fortran and strided layouts (a negative stride, a gap), with init, fold, both;
 *   float32 ADD, close to a double sum and bit for bit across pieces; maps whose accumulator is
 *   another dtype (int32 SQUARE and NONZERO into int64 counts, float64 ABS under MAX);
 * - ARGMAX of float32 (ties and a NaN) and ARGMIN of int64: the first position among each
 *   output's reduced elements of the whole array, into int64 and into src's dtype;
 * - a user op whose map reads positions, with init and fold; one without identity with empty
 *   pieces;
 * - one output (every dim reduced: the whole-array piece), no dim reduced (the pieces combined
 *   element by element), and a built-in op's dst with no dim of extent 1 to combine along;
 * - bad input and a failing exchange, dst unwritten; the workspace query against a caller's
 *   workspace of that size, and one byte short.
 * Each reduction runs twice (tests/support/gather.h): partials and results repeat bit for bit.
 * The user ops are compiled at run time: the suite's timeout allows for a cold cache. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "akx.h"
#include "akx_layer.h"
#include "fixture.h"
#include "gather.h"
#include "pieces.h"
#include "reduce_user_ops.h"

static akx_context *ctx;
static void setup(void) { ctx = tfx_open(); }
static void teardown(void) { tfx_close(ctx); }
TestSuite(reduce_dims_piece, .init = setup, .fini = teardown, .timeout = 600);

#define POISON 0xA5
static const int64_t W[3] = {6, 7, 5}; /* the whole array, C order */
#define WN (6 * 7 * 5)

/* ---- layouts ----------------------------------------------------------------------------------- */

/* C order; Fortran order; C order with dim 0 walked backwards and the last dim every other
 * element (a negative stride and a gap: dims keep C's order of |stride|). */
enum { LAYOUT_C, LAYOUT_F, LAYOUT_STRIDED, LAYOUTS };

typedef struct {
  akx_array dev;
  void *base; /* the device parent */
  size_t parent_bytes;
} placed_t;

static void layout_strides(int kind, const int64_t *shape, int64_t *strides, int64_t *offset) {
  int64_t s = 1;
  *offset = 0;
  if (kind == LAYOUT_F) {
    for (int d = 0; d < 3; ++d) strides[d] = s, s *= shape[d] > 0 ? shape[d] : 1;
    return;
  }
  const int64_t gap = kind == LAYOUT_STRIDED ? 2 : 1;
  s = gap;
  for (int d = 2; d >= 0; --d) strides[d] = s, s *= shape[d] > 0 ? shape[d] : 1;
  if (kind == LAYOUT_STRIDED && shape[0] > 1) {
    *offset = (shape[0] - 1) * strides[0];
    strides[0] = -strides[0];
  }
}

/* The C-order host array hc (shape, t) as a device array of layout `kind`, or (hc NULL) such an
 * array with every byte `fill`. */
static placed_t place(const void *hc, akx_dtype t, const int64_t *shape, int kind, unsigned char fill) {
  placed_t p;
  memset(&p, 0, sizeof p);
  int64_t strides[3], offset, extent = 1;
  layout_strides(kind, shape, strides, &offset);
  const int64_t n = shape[0] * shape[1] * shape[2];
  for (int d = 0; d < 3; ++d) extent += shape[d] > 1 ? (shape[d] - 1) * llabs(strides[d]) : 0;
  const size_t es = ref_size(t);
  p.parent_bytes = (size_t)extent * es;
  unsigned char *h = tfx_xmalloc(p.parent_bytes);
  memset(h, fill, p.parent_bytes);
  for (int64_t i = 0; hc && i < n; ++i) {
    const int64_t i0 = i / (shape[1] * shape[2]), i1 = i / shape[2] % shape[1], i2 = i % shape[2];
    const int64_t at = offset + i0 * strides[0] + i1 * strides[1] + i2 * strides[2];
    memcpy(h + (size_t)at * es, (const char *)hc + (size_t)i * es, es);
  }
  p.base = tfx_upload(ctx, h, p.parent_bytes);
  free(h);
  p.dev = akx_array_c((char *)p.base + (size_t)offset * es, t, 3, shape);
  for (int d = 0; d < 3; ++d) p.dev.strides[d] = strides[d];
  return p;
}

/* A placed array's elements in C order, to host. */
static void fetch(const placed_t *p, void *hc) {
  const size_t es = ref_size(p->dev.dtype);
  unsigned char *h = tfx_xmalloc(p->parent_bytes);
  tfx_to_host(ctx, h, p->base, p->parent_bytes);
  const int64_t *shape = p->dev.shape, *st = p->dev.strides;
  const int64_t offset = ((char *)p->dev.data - (char *)p->base) / (int64_t)es;
  for (int64_t i = 0; i < shape[0] * shape[1] * shape[2]; ++i) {
    const int64_t i0 = i / (shape[1] * shape[2]), i1 = i / shape[2] % shape[1], i2 = i % shape[2];
    memcpy((char *)hc + (size_t)i * es, h + (size_t)(offset + i0 * st[0] + i1 * st[1] + i2 * st[2]) * es, es);
  }
  free(h);
}

static void unplace(placed_t *p) { tfx_free(ctx, p->base); }

/* ---- the cut ----------------------------------------------------------------------------------- */

typedef struct {
  int32_t d;       /* the cut dim */
  int reduced[3];  /* dims reduced (d among them) */
  int64_t ext[5];
  int K;
} cut_t;

static void dst_shape(const cut_t *c, int64_t *shape) {
  for (int j = 0; j < 3; ++j) shape[j] = c->reduced[j] ? 1 : W[j];
}

/* Piece k's elements of the whole C-order host array g, C order. */
static void *piece_host(const void *g, akx_dtype t, const cut_t *c, int k, int64_t *shape) {
  int64_t start = 0;
  for (int q = 0; q < k; ++q) start += c->ext[q];
  for (int j = 0; j < 3; ++j) shape[j] = j == c->d ? c->ext[k] : W[j];
  const size_t es = ref_size(t);
  unsigned char *h = tfx_xmalloc((size_t)(shape[0] * shape[1] * shape[2]) * es + 1);
  int64_t n = 0;
  for (int64_t i0 = 0; i0 < shape[0]; ++i0)
    for (int64_t i1 = 0; i1 < shape[1]; ++i1)
      for (int64_t i2 = 0; i2 < shape[2]; ++i2) {
        int64_t w[3] = {i0, i1, i2};
        w[c->d] += start;
        memcpy(h + (size_t)n++ * es, (const char *)g + (size_t)((w[0] * W[1] + w[1]) * W[2] + w[2]) * es, es);
      }
  return h;
}

/* Where piece k's positions sit among each output's reduced elements of the whole: the reduced
 * dims in C order, the cut one's run of ext[k] among its W[d]. */
static akx_reduce_piece_t positions(const cut_t *c, int k) {
  int64_t start = 0, inner = 1, outer = 1;
  for (int q = 0; q < k; ++q) start += c->ext[q];
  for (int j = 0; j < 3; ++j)
    if (c->reduced[j] && j > c->d) inner *= W[j];
    else if (c->reduced[j] && j < c->d) outer *= W[j];
  akx_reduce_piece_t p;
  memset(&p, 0, sizeof p);
  p.position_base = start * inner;
  p.position_block = outer > 1 ? c->ext[k] * inner : 0;
  p.position_skip = outer > 1 ? (W[c->d] - c->ext[k]) * inner : 0;
  return p;
}

static const char *describe(char *buf, size_t len, const char *name, const cut_t *c, const char *mode) {
  size_t k = (size_t)snprintf(buf, len, "%s of 6x7x5 over dims {%s%s%s} cut along %d into {", name,
                              c->reduced[0] ? "0" : "", c->reduced[1] ? " 1" : "", c->reduced[2] ? " 2" : "",
                              (int)c->d);
  for (int p = 0; p < c->K && k < len; ++p) k += (size_t)snprintf(buf + k, len - k, "%s%lld", p ? ", " : "", (long long)c->ext[p]);
  if (k < len) snprintf(buf + k, len - k, "}%s", mode);
  return buf;
}

/* ---- the host reference ------------------------------------------------------------------------ */

/* visit(out, pos, value index in g) over every output (C order of dst) and its reduced elements,
 * pos their position among the output's reduced elements (C order of the reduced dims). */
#define FOR_EACH_REDUCED(c, o, pos, gi, ...)                                                    \
  do {                                                                                          \
    int64_t ds_[3];                                                                             \
    dst_shape(c, ds_);                                                                          \
    for (int64_t i0 = 0; i0 < W[0]; ++i0)                                                       \
      for (int64_t i1 = 0; i1 < W[1]; ++i1)                                                     \
        for (int64_t i2 = 0; i2 < W[2]; ++i2) {                                                 \
          const int64_t w_[3] = {i0, i1, i2};                                                   \
          int64_t o_ = 0, p_ = 0;                                                               \
          for (int j = 0; j < 3; ++j) {                                                         \
            o_ = o_ * ds_[j] + ((c)->reduced[j] ? 0 : w_[j]);                                   \
            if ((c)->reduced[j]) p_ = p_ * W[j] + w_[j];                                        \
          }                                                                                     \
          const int64_t o = o_, pos = p_, gi = (i0 * W[1] + i1) * W[2] + i2;                    \
          __VA_ARGS__;                                                                              \
        }                                                                                       \
  } while (0)

static int64_t outputs(const cut_t *c) {
  int64_t s[3];
  dst_shape(c, s);
  return s[0] * s[1] * s[2];
}

/* ---- a call in pieces -------------------------------------------------------------------------- */

typedef struct {
  akx_map map;
  akx_op op;
  const akx_reduce_opts *opts;
  akx_dtype dst_t;
  const void *prev;  /* dst's previous values in C order (fold); NULL: poison */
  int src_layouts;   /* how many of the layouts the pieces take (positions: C and strided) */
} call_t;

/* The two rounds over the pieces; round 2's dst (the same bits in every piece) to out, C order. */
static void in_pieces(const call_t *c, const void *g, akx_dtype t, const cut_t *cu, void *out, const char *what) {
  tgx_gather x = tgx_make(ctx, cu->K);
  int64_t ds[3];
  dst_shape(cu, ds);
  const size_t out_bytes = (size_t)outputs(cu) * ref_size(c->dst_t);
  unsigned char *got = tfx_xmalloc(out_bytes);
  placed_t src[5];
  for (int k = 0; k < cu->K; ++k) {
    int64_t shape[3];
    void *h = piece_host(g, t, cu, k, shape);
    const int kinds[] = {LAYOUT_C, LAYOUT_STRIDED, LAYOUT_F};
    src[k] = place(h, t, shape, kinds[(k + cu->d) % c->src_layouts], 0);
    free(h);
  }
  for (x.round = 1; x.round <= 2; ++x.round)
    for (int k = 0; k < cu->K; ++k) {
      akx_reduce_piece_t piece = positions(cu, k);
      piece.pieces = cu->K, piece.exchange = tgx_exchange, piece.arg = &x;
      x.k = k;
      placed_t dst = place(c->prev, c->dst_t, ds, (k + cu->K) % LAYOUTS, POISON);
      const int calls = x.calls;
      const akx_status st = akx_reduce_dims_piece(ctx, &dst.dev, &src[k].dev, c->map, c->op, c->opts, &piece);
      cr_assert(!x.wrong_size, "%s: round %d, piece %d's partials are not %zu bytes as before", what,
                x.round, k, x.bytes);
      cr_assert(!x.changed, "%s: piece %d's partials differ from round 1's", what, k);
      cr_assert_eq(st, AKX_SUCCESS, "%s: round %d, piece %d = %s: %s", what, x.round, k,
                   akx_status_string(st), akx_last_error());
      cr_assert_eq(x.calls, calls + 1, "%s: piece %d called the exchange %d times", what, k, x.calls - calls);
      if (x.round == 2) {
        fetch(&dst, got);
        if (k == 0) memcpy(out, got, out_bytes);
        else cr_assert(memcmp(out, got, out_bytes) == 0, "%s: piece %d's dst is not piece 0's bit for bit", what, k);
      }
      unplace(&dst);
    }
  for (int k = 0; k < cu->K; ++k) unplace(&src[k]);
  free(got);
  tgx_free(&x);
}

static void *gen(akx_dtype t, uint64_t seed) { return piece_values(t, WN, seed, 0); }

/* Cut c of dims {d} or {d, e}: the cut's extents from pieces.h's split `sp`. */
static cut_t make_cut(int32_t d, int32_t e, int sp) {
  cut_t c;
  memset(&c, 0, sizeof c);
  c.d = d;
  c.reduced[d] = 1;
  if (e >= 0) c.reduced[e] = 1;
  c.K = split(W[d], sp, c.ext);
  return c;
}

/* ---- built-in ops ------------------------------------------------------------------------------ */

Test(reduce_dims_piece, builtin_ops_match_the_host) {
  const struct { const char *name; akx_op op; akx_dtype t; } ops[] = {
      {"int64 ADD", AKX_OP_ADD, AKX_INT64}, {"int64 MAX", AKX_OP_MAX, AKX_INT64},
      {"float64 ADD", AKX_OP_ADD, AKX_FLOAT64}};
  const char *modes[] = {"", ", init", ", fold", ", init and fold"};
  for (int o = 0; o < 3; ++o) {
    const int is_max = ops[o].op == AKX_OP_MAX, is_f = ops[o].t == AKX_FLOAT64;
    void *g = gen(ops[o].t, (uint64_t)(10 + o));
    const int64_t init_i = is_max ? 250 : 17;
    const double init_d = 17.0;
    for (int32_t d = 0; d < 3; ++d)
      for (int r = 0; r < 2; ++r)
        for (int sp = 0; sp < SPLITS; ++sp) {
          const cut_t cu = make_cut(d, r ? (d + 1) % 3 : -1, sp);
          const int m = (sp + d + r) % 4, init = m & 1, fold = m >> 1;
          const int64_t n_out = outputs(&cu);
          int64_t want[WN], prev_i[WN];
          double prev_d[WN];
          for (int64_t k = 0; k < n_out; ++k) {
            want[k] = is_max ? INT64_MIN : 0;
            prev_i[k] = is_max ? (int64_t)(k % 7) * 100 - 300 : (int64_t)k * 3 - 40;
            prev_d[k] = (double)prev_i[k];
          }
          FOR_EACH_REDUCED(&cu, out, pos, gi, {
            (void)pos;
            const int64_t v = is_f ? (int64_t)((double *)g)[gi] : ((int64_t *)g)[gi];
            want[out] = is_max ? (v > want[out] ? v : want[out]) : want[out] + v;
          });
          for (int64_t k = 0; k < n_out; ++k) {
            if (init) want[k] = is_max ? (init_i > want[k] ? init_i : want[k]) : want[k] + init_i;
            if (fold) want[k] = is_max ? (prev_i[k] > want[k] ? prev_i[k] : want[k]) : want[k] + prev_i[k];
          }
          akx_reduce_opts opts = akx_reduce_opts_default();
          opts.init = !init ? NULL : is_f ? (const void *)&init_d : (const void *)&init_i;
          opts.fold = fold;
          const call_t c = {AKX_MAP_IDENTITY, ops[o].op, &opts, ops[o].t,
                            !fold ? NULL : is_f ? (const void *)prev_d : (const void *)prev_i, LAYOUTS};
          char what[256];
          describe(what, sizeof what, ops[o].name, &cu, modes[m]);
          union { int64_t i[WN]; double d[WN]; } got;
          in_pieces(&c, g, ops[o].t, &cu, &got, what);
          for (int64_t k = 0; k < n_out; ++k)
            cr_assert(is_f ? got.d[k] == (double)want[k] : got.i[k] == want[k],
                      "%s: output %lld is %lld (as int64) or %g (as float64), the host's %lld", what,
                      (long long)k, (long long)got.i[k], got.d[k], (long long)want[k]);
        }
    free(g);
  }
}

Test(reduce_dims_piece, float32_add_close_to_a_double_sum) {
  float *g = gen(AKX_FLOAT32, 20);
  const call_t c = {AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, AKX_FLOAT32, NULL, LAYOUTS};
  for (int sp = 0; sp < SPLITS; ++sp) {
    const cut_t cu = make_cut(1, 2, sp);
    double want[WN] = {0};
    FOR_EACH_REDUCED(&cu, out, pos, gi, { (void)pos; want[out] += g[gi]; });
    char what[256];
    describe(what, sizeof what, "float32 ADD", &cu, "");
    float got[WN];
    in_pieces(&c, g, AKX_FLOAT32, &cu, got, what);
    for (int64_t k = 0; k < outputs(&cu); ++k)
      cr_assert_leq(fabs(got[k] - want[k]), 1e-5 * fabs(want[k]), "%s: output %lld is %.9g, the double sum %.17g",
                    what, (long long)k, (double)got[k], want[k]);
  }
  free(g);
}

/* Maps whose accumulator is not the source's dtype: the pieces' partials are int64 counts and
 * squares of int32 elements; |x| of float64 under MAX. */
Test(reduce_dims_piece, maps_and_their_accumulators) {
  const struct { const char *name; akx_map map; akx_op op; akx_dtype t, dst; } cases[] = {
      {"int32 SQUARE ADD into int64", AKX_MAP_SQUARE, AKX_OP_ADD, AKX_INT32, AKX_INT64},
      {"int32 NONZERO ADD into int64", AKX_MAP_NONZERO, AKX_OP_ADD, AKX_INT32, AKX_INT64},
      {"float64 ABS MAX into float64", AKX_MAP_ABS, AKX_OP_MAX, AKX_FLOAT64, AKX_FLOAT64}};
  for (int k = 0; k < 3; ++k) {
    void *g = gen(cases[k].t, (uint64_t)(30 + k));
    if (cases[k].map == AKX_MAP_NONZERO) /* zeros to count around */
      for (int64_t i = 0; i < WN; i += 3) ((int32_t *)g)[i] = 0;
    for (int sp = 0; sp < SPLITS; ++sp) {
      const cut_t cu = make_cut(1, sp % 2 ? 2 : -1, sp);
      double want[WN] = {0};
      FOR_EACH_REDUCED(&cu, out, pos, gi, {
        (void)pos;
        const double x = cases[k].t == AKX_INT32 ? (double)((int32_t *)g)[gi] : ((double *)g)[gi];
        if (cases[k].map == AKX_MAP_SQUARE) want[out] += x * x;
        else if (cases[k].map == AKX_MAP_NONZERO) want[out] += x != 0;
        else want[out] = fmax(want[out], fabs(x));
      });
      const call_t c = {cases[k].map, cases[k].op, NULL, cases[k].dst, NULL, LAYOUTS};
      char what[256];
      describe(what, sizeof what, cases[k].name, &cu, "");
      union { int64_t i[WN]; double d[WN]; } got;
      in_pieces(&c, g, cases[k].t, &cu, &got, what);
      for (int64_t o = 0; o < outputs(&cu); ++o) {
        const double v = cases[k].dst == AKX_INT64 ? (double)got.i[o] : got.d[o];
        cr_assert_eq(v, want[o], "%s: output %lld is %.17g, the host's %.17g", what, (long long)o, v, want[o]);
      }
    }
    free(g);
  }
}

/* ---- ARGMIN / ARGMAX --------------------------------------------------------------------------- */

/* Values from a small set (ties everywhere, across pieces too); for ARGMAX float32 a NaN at a
 * few places, which wins (the first one). The answer: the first position in the whole's order. */
Test(reduce_dims_piece, argmax_argmin_first_position_of_the_whole) {
  const struct { const char *name; akx_op op; akx_dtype t, dst; } ops[] = {
      {"float32 ARGMAX into int64", AKX_OP_ARGMAX, AKX_FLOAT32, AKX_INT64},
      {"int64 ARGMIN into int64", AKX_OP_ARGMIN, AKX_INT64, AKX_INT64},
      {"float32 ARGMAX into float32", AKX_OP_ARGMAX, AKX_FLOAT32, AKX_FLOAT32}};
  for (int o = 0; o < 3; ++o) {
    const akx_dtype t = ops[o].t;
    const int is_f = t == AKX_FLOAT32, is_max = ops[o].op == AKX_OP_ARGMAX;
    void *g = tfx_xmalloc((size_t)WN * 8);
    for (int64_t i = 0; i < WN; ++i) {
      const uint64_t r = ref_rand((uint64_t)(40 + o), (uint64_t)i);
      if (is_f) ((float *)g)[i] = r % 29 == 0 ? NAN : (float)(r % 6);
      else ((int64_t *)g)[i] = (int64_t)(r % 6) - 2;
    }
    for (int32_t d = 0; d < 3; ++d)
      for (int r = 0; r < 2; ++r)
        for (int sp = 0; sp < SPLITS; ++sp) {
          if (o == 2 && (r || sp != 3)) continue; /* the value: one cut per dim */
          const cut_t cu = make_cut(d, r ? (d + 2) % 3 : -1, sp);
          int64_t at[WN];
          double best[WN];
          for (int64_t k = 0; k < WN; ++k) at[k] = -1;
          FOR_EACH_REDUCED(&cu, out, pos, gi, {
            const double v = is_f ? (double)((float *)g)[gi] : (double)((int64_t *)g)[gi];
            const int wins = at[out] < 0 || (!isnan(best[out]) && (isnan(v) || (is_max ? v > best[out] : v < best[out])));
            if (wins) at[out] = pos, best[out] = v;
          });
          const call_t c = {AKX_MAP_IDENTITY, ops[o].op, NULL, ops[o].dst, NULL, 2};
          char what[256];
          describe(what, sizeof what, ops[o].name, &cu, "");
          union { int64_t i[WN]; float f[WN]; } got;
          in_pieces(&c, g, t, &cu, &got, what);
          for (int64_t k = 0; k < outputs(&cu); ++k)
            if (ops[o].dst == AKX_INT64)
              cr_assert_eq(got.i[k], at[k], "%s: output %lld's position is %lld, the host's %lld", what,
                           (long long)k, (long long)got.i[k], (long long)at[k]);
            else
              cr_assert(isnan(best[k]) ? isnan(got.f[k]) : got.f[k] == (float)best[k],
                        "%s: output %lld's value is %g, the host's %g", what, (long long)k, (double)got.f[k], best[k]);
        }
    free(g);
  }
}

/* ---- user ops ---------------------------------------------------------------------------------- */

static akx_op create(const char *source, const char *acc, const char *combine, const char *identity,
                     const char *map, const char *store) {
  const akx_user_op_desc d = {source, acc, combine, identity, map, store};
  return tfx_user_op(ctx, &d);
}


Test(reduce_dims_piece, user_map_sees_the_whole_positions) {
  const akx_op op = create(WEIGHTED_SRC, "double", "w_add", "w_zero", "w_map", NULL);
  int64_t *g = gen(AKX_INT64, 50);
  const double init = 0.5;
  for (int32_t d = 0; d < 3; d += 2)
    for (int sp = 0; sp < SPLITS; ++sp) {
      const cut_t cu = make_cut(d, 1, sp);
      const int m = sp % 2;
      double want[WN] = {0}, prev[WN];
      for (int64_t k = 0; k < WN; ++k) prev[k] = (double)k - 3.0;
      FOR_EACH_REDUCED(&cu, out, pos, gi, { want[out] += weighted_term((double)g[gi], pos); });
      akx_reduce_opts opts = akx_reduce_opts_default();
      opts.init = m ? &init : NULL;
      opts.fold = m;
      const call_t c = {AKX_MAP_IDENTITY, op, &opts, AKX_FLOAT64, m ? prev : NULL, 2};
      char what[256];
      describe(what, sizeof what, "int64 weighted sum", &cu, m ? ", init, fold" : "");
      double got[WN];
      in_pieces(&c, g, AKX_INT64, &cu, got, what);
      for (int64_t k = 0; k < outputs(&cu); ++k) {
        const double w = want[k] + (m ? init + prev[k] : 0);
        cr_assert_eq(got[k], w, "%s: output %lld is %.17g, the host's %.17g", what, (long long)k, got[k], w);
      }
    }
  free(g);
  cr_assert_eq(akx_user_op_destroy(ctx, op), AKX_SUCCESS, "%s", akx_last_error());
}

/* No identity (RANGE_SRC): an empty piece's partial holds no value, which the combine must skip. */

Test(reduce_dims_piece, user_op_without_identity_and_empty_pieces) {
  const akx_op op = create(RANGE_SRC, "Range", "r_join", NULL, "r_map", "r_width");
  int32_t *g = gen(AKX_INT32, 60);
  for (int32_t d = 0; d < 3; ++d)
    for (int sp = 1; sp < SPLITS; ++sp) { /* the first empty of three; the middle of five */
      const cut_t cu = make_cut(d, -1, sp + (sp == 1));
      double lo[WN], hi[WN];
      for (int64_t k = 0; k < WN; ++k) lo[k] = INFINITY, hi[k] = -INFINITY;
      FOR_EACH_REDUCED(&cu, out, pos, gi, { (void)pos; lo[out] = fmin(lo[out], g[gi]), hi[out] = fmax(hi[out], g[gi]); });
      const call_t c = {AKX_MAP_IDENTITY, op, NULL, AKX_FLOAT64, NULL, LAYOUTS};
      char what[256];
      describe(what, sizeof what, "int32 range (no identity)", &cu, "");
      double got[WN];
      in_pieces(&c, g, AKX_INT32, &cu, got, what);
      for (int64_t k = 0; k < outputs(&cu); ++k)
        cr_assert_eq(got[k], hi[k] - lo[k], "%s: output %lld is %g, the host's %g", what, (long long)k, got[k],
                     hi[k] - lo[k]);
    }
  free(g);
  cr_assert_eq(akx_user_op_destroy(ctx, op), AKX_SUCCESS, "%s", akx_last_error());
}

/* ---- one output, no dim reduced ---------------------------------------------------------------- */

Test(reduce_dims_piece, one_output_is_the_whole_array_piece) {
  float *g = tfx_xmalloc(WN * sizeof(float));
  int64_t *gi64 = gen(AKX_INT64, 71);
  for (int64_t i = 0; i < WN; ++i) g[i] = (float)(ref_rand(70, (uint64_t)i) % 9);
  int64_t first = -1, sum = 0;
  for (int64_t i = 0; i < WN; ++i) {
    if (first < 0 || g[i] > g[first]) first = i;
    sum += gi64[i];
  }
  const int64_t init = 1000;
  akx_reduce_opts opts = akx_reduce_opts_default();
  opts.init = &init;
  for (int sp = 0; sp < SPLITS; ++sp) {
    cut_t cu = make_cut(1, 0, sp);
    cu.reduced[2] = 1;
    char what[256];
    int64_t got;
    const call_t a = {AKX_MAP_IDENTITY, AKX_OP_ARGMAX, NULL, AKX_INT64, NULL, 2};
    describe(what, sizeof what, "float32 ARGMAX", &cu, "");
    in_pieces(&a, g, AKX_FLOAT32, &cu, &got, what);
    cr_assert_eq(got, first, "%s: %lld, the host's %lld", what, (long long)got, (long long)first);
    const call_t s = {AKX_MAP_IDENTITY, AKX_OP_ADD, &opts, AKX_INT64, NULL, LAYOUTS};
    describe(what, sizeof what, "int64 ADD", &cu, ", init");
    in_pieces(&s, gi64, AKX_INT64, &cu, &got, what);
    cr_assert_eq(got, sum + init, "%s: %lld, the host's %lld", what, (long long)got, (long long)(sum + init));
  }
  free(g);
  free(gi64);
}

/* Nothing reduced: every piece has the same shape, and dst is their element-wise combine. */
Test(reduce_dims_piece, no_dim_reduced_combines_element_by_element) {
  const akx_op range = create(RANGE_SRC, "Range", "r_join", NULL, "r_map", "r_width");
  const int64_t shape[3] = {3, 4, 5}, n = 60;
  const int K = 3;
  int64_t *h[3], want_add[60];
  double want_range[60];
  for (int k = 0; k < K; ++k) h[k] = gen(AKX_INT64, (uint64_t)(80 + k)); /* WN >= n elements */
  for (int64_t i = 0; i < n; ++i) {
    int64_t lo = h[0][i], hi = h[0][i];
    want_add[i] = 0;
    for (int k = 0; k < K; ++k) {
      want_add[i] += h[k][i];
      lo = h[k][i] < lo ? h[k][i] : lo, hi = h[k][i] > hi ? h[k][i] : hi;
    }
    want_range[i] = (double)(hi - lo);
  }
  for (int u = 0; u < 2; ++u) {
    const akx_dtype dt = u ? AKX_FLOAT64 : AKX_INT64;
    tgx_gather x = tgx_make(ctx, K);
    for (x.round = 1; x.round <= 2; ++x.round)
      for (int k = 0; k < K; ++k) {
        x.k = k;
        placed_t src = place(h[k], AKX_INT64, shape, k % LAYOUTS, 0);
        placed_t dst = place(NULL, dt, shape, (k + 1) % LAYOUTS, POISON);
        const akx_reduce_piece_t piece = {0, 0, 0, K, tgx_exchange, &x};
        const akx_status st = akx_reduce_dims_piece(ctx, &dst.dev, &src.dev, AKX_MAP_IDENTITY,
                                                    u ? range : AKX_OP_ADD, NULL, &piece);
        cr_assert_eq(st, AKX_SUCCESS, "%s, piece %d = %s: %s", u ? "range" : "int64 ADD", k,
                     akx_status_string(st), akx_last_error());
        cr_assert(!x.changed && !x.wrong_size, "piece %d's partials changed between rounds", k);
        if (x.round == 2) {
          union { int64_t i[60]; double d[60]; } got;
          fetch(&dst, &got);
          for (int64_t i = 0; i < n; ++i)
            cr_assert(u ? got.d[i] == want_range[i] : got.i[i] == want_add[i],
                      "%s, piece %d: element %lld is %lld (as int64) or %g (as float64), the host's %g",
                      u ? "range" : "int64 ADD", k, (long long)i, (long long)got.i[i], got.d[i],
                      u ? want_range[i] : (double)want_add[i]);
        }
        unplace(&src);
        unplace(&dst);
      }
    tgx_free(&x);
  }
  for (int k = 0; k < K; ++k) free(h[k]);
  cr_assert_eq(akx_user_op_destroy(ctx, range), AKX_SUCCESS, "%s", akx_last_error());
}

/* ---- refusals, a failing exchange, the workspace ---------------------------------------------- */

static void expect_poison(const placed_t *dst, const char *what) {
  unsigned char *h = tfx_xmalloc(dst->parent_bytes);
  tfx_to_host(ctx, h, dst->base, dst->parent_bytes);
  for (size_t b = 0; b < dst->parent_bytes; ++b) cr_assert_eq(h[b], POISON, "%s: dst byte %zu was written", what, b);
  free(h);
}

Test(reduce_dims_piece, bad_input_refused_before_the_exchange) {
  int64_t *g = gen(AKX_INT64, 90);
  placed_t src = place(g, AKX_INT64, W, LAYOUT_C, 0);
  const int64_t ds[3] = {6, 1, 5}, wrong[3] = {3, 1, 5}, eight[8] = {2, 2, 2, 2, 2, 2, 2, 2};
  const struct {
    const char *what, *names;
    int no_piece, no_exchange, wrong_dst, eight_dims;
    int64_t pieces, block;
    akx_status want;
  } cases[] = {
      {"piece NULL", "piece", 1, 0, 0, 0, 2, 0, AKX_ERROR_INVALID_ARGUMENT},
      {"piece->exchange NULL", "exchange", 0, 1, 0, 0, 2, 0, AKX_ERROR_INVALID_ARGUMENT},
      {"piece->pieces 0", "pieces", 0, 0, 0, 0, 0, 0, AKX_ERROR_INVALID_ARGUMENT},
      {"position_block -1", "position", 0, 0, 0, 0, 2, -1, AKX_ERROR_INVALID_ARGUMENT},
      {"dst->shape[0] 3 of 6", "dst->shape[0]", 0, 0, 1, 0, 2, 0, AKX_ERROR_INVALID_ARGUMENT},
      {"8 dims, none of extent 1", "extent 1", 0, 0, 0, 1, 2, 0, AKX_ERROR_UNSUPPORTED},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    tgx_gather x = tgx_make(ctx, 2);
    const akx_reduce_piece_t piece = {0, cases[k].block, 0, cases[k].pieces,
                                      cases[k].no_exchange ? NULL : tgx_exchange, &x};
    placed_t dst = place(NULL, AKX_INT64, cases[k].wrong_dst ? wrong : ds, LAYOUT_C, POISON);
    akx_array s = src.dev, d = dst.dev;
    void *e8 = NULL;
    if (cases[k].eight_dims) { /* src and dst of 2x2x...x2: every dim kept */
      unsigned char p[256 * 8];
      memset(p, POISON, sizeof p);
      e8 = tfx_upload(ctx, p, sizeof p);
      unplace(&dst);
      dst.base = tfx_upload(ctx, p, sizeof p);
      dst.parent_bytes = sizeof p;
      s = akx_array_c(e8, AKX_INT64, 8, eight);
      d = akx_array_c(dst.base, AKX_INT64, 8, eight);
    }
    const akx_status st = akx_reduce_dims_piece(ctx, &d, &s, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL,
                                                cases[k].no_piece ? NULL : &piece);
    cr_assert_eq(st, cases[k].want, "%s: %s (%s)", cases[k].what, akx_status_string(st), akx_last_error());
    cr_assert(strstr(akx_last_error(), cases[k].names), "%s: the sentence names %s: %s", cases[k].what,
              cases[k].names, akx_last_error());
    cr_assert_eq(x.calls, 0, "%s: the exchange was called", cases[k].what);
    expect_poison(&dst, cases[k].what);
    unplace(&dst);
    if (e8) tfx_free(ctx, e8);
    tgx_free(&x);
  }
  unplace(&src);
  free(g);
}

Test(reduce_dims_piece, failing_exchange_leaves_dst_unwritten) {
  int64_t *g = gen(AKX_INT64, 91);
  placed_t src = place(g, AKX_INT64, W, LAYOUT_STRIDED, 0);
  const int64_t ds[3] = {1, 7, 1};
  for (int u = 0; u < 2; ++u) { /* a built-in op; ARGMIN (the pieces kernel) */
    placed_t dst = place(NULL, AKX_INT64, ds, LAYOUT_C, POISON);
    tgx_gather x = tgx_make(ctx, 3);
    x.fail = AKX_ERROR_DEVICE;
    const akx_reduce_piece_t piece = {0, 0, 0, 3, tgx_exchange, &x};
    const akx_status st = akx_reduce_dims_piece(ctx, &dst.dev, &src.dev, AKX_MAP_IDENTITY,
                                                u ? AKX_OP_ARGMIN : AKX_OP_ADD, NULL, &piece);
    cr_assert_eq(st, AKX_ERROR_DEVICE, "the exchange's AKX_ERROR_DEVICE came back as %s (%s)",
                 akx_status_string(st), akx_last_error());
    cr_assert_eq(x.calls, 1, "%d calls of the exchange", x.calls);
    expect_poison(&dst, "a failed exchange");
    unplace(&dst);
    tgx_free(&x);
  }
  unplace(&src);
  free(g);
}

/* A caller's workspace of the queried size runs the call; one byte less is refused before
 * anything runs. Splits forced on a context of its own, so that the piece's pass needs tickets
 * and partials beside its slot. */
Test(reduce_dims_piece, workspace_query_covers_the_call) {
  setenv("AKX_REDUCE_DIMS_SPLITS", "3", 1);
  akx_context *c3 = tfx_open();
  unsetenv("AKX_REDUCE_DIMS_SPLITS");
  int64_t *g = gen(AKX_INT64, 92);
  const int64_t ds[3] = {6, 1, 5};
  for (int u = 0; u < 2; ++u) {
    akx_context *ctxs[2] = {ctx, c3};
    for (int w = 0; w < 2; ++w) {
      akx_context *cx = ctxs[w];
      const akx_op op = u ? AKX_OP_ARGMAX : AKX_OP_ADD;
      void *s = tfx_upload(cx, g, WN * 8);
      const akx_array src = akx_array_c(s, AKX_INT64, 3, W);
      akx_array dst = akx_array_c(NULL, AKX_INT64, 3, ds);
      size_t bytes = 0;
      akx_status st = akx_reduce_dims_piece_workspace_size(cx, &dst, &src, AKX_MAP_IDENTITY, op, NULL, 1, &bytes);
      cr_assert_eq(st, AKX_SUCCESS, "the query: %s", akx_last_error());
      cr_assert_geq(bytes, 6 * 5 * 8, "the query gives %zu bytes, less than the 30 partials", bytes);
      dst.data = tfx_alloc(cx, 30 * 8);
      for (int shortfall = 1; shortfall >= 0; --shortfall) {
        void *ws = tfx_alloc(cx, bytes);
        cr_assert_eq(akx_context_set_workspace(cx, ws, bytes - (size_t)shortfall), AKX_SUCCESS, "%s", akx_last_error());
        tgx_gather x = tgx_make(cx, 1);
        const akx_reduce_piece_t piece = {0, 0, 0, 1, tgx_exchange, &x};
        st = akx_reduce_dims_piece(cx, &dst, &src, AKX_MAP_IDENTITY, op, NULL, &piece);
        cr_assert_eq(st, shortfall ? AKX_ERROR_WORKSPACE_TOO_SMALL : AKX_SUCCESS, "%s, %s, %zu bytes: %s (%s)",
                     u ? "ARGMAX" : "ADD", w ? "3 splits" : "one pass", bytes - (size_t)shortfall,
                     akx_status_string(st), akx_last_error());
        cr_assert_eq(x.calls, shortfall ? 0 : 1, "%d calls of the exchange", x.calls);
        if (!shortfall) {
          int64_t got[30];
          tfx_to_host(cx, got, dst.data, sizeof got);
          for (int64_t o = 0; o < 30; ++o) {
            int64_t want = u ? 0 : 0, best = g[o / 5 * 35 + o % 5];
            for (int64_t j = 0; j < 7; ++j) {
              const int64_t v = g[o / 5 * 35 + j * 5 + o % 5];
              if (u && v > best) best = v, want = j;
              if (!u) want += v;
            }
            cr_assert_eq(got[o], want, "%s: output %lld is %lld, the host's %lld", u ? "ARGMAX" : "ADD",
                         (long long)o, (long long)got[o], (long long)want);
          }
        }
        cr_assert_eq(akx_context_set_workspace(cx, NULL, 0), AKX_SUCCESS, "%s", akx_last_error());
        tfx_free(cx, ws);
        tgx_free(&x);
      }
      tfx_free(cx, dst.data);
      tfx_free(cx, s);
    }
  }
  free(g);
  tfx_close(c3);
}

/* The pieces' partials are folded by kernels that count them in 32 bits, stepping by up to 256
 * at a time: a count of pieces near INT32_MAX would overflow them, so more than 2^30 pieces
 * (far past any number of devices) are refused, by both reductions in pieces and the query. */
static akx_status never_called(void *arg, const void *partial, size_t bytes, const void **all) {
  (void)arg, (void)partial, (void)bytes, (void)all;
  cr_assert_fail("the exchange of a refused call ran");
  return AKX_ERROR_INTERNAL;
}

Test(reduce_dims_piece, more_than_2_to_the_30_pieces_are_refused) {
  float *src = tfx_alloc(ctx, 64 * sizeof(float)), *dst = tfx_alloc(ctx, 8 * sizeof(float));
  const int64_t s_shape[2] = {8, 8}, d_shape[2] = {8, 1};
  const akx_array s = akx_array_c(src, AKX_FLOAT32, 2, s_shape), d = akx_array_c(dst, AKX_FLOAT32, 2, d_shape);
  const int64_t counts[] = {((int64_t)1 << 30) + 1, INT32_MAX - 1, INT32_MAX};
  for (size_t k = 0; k < sizeof counts / sizeof counts[0]; ++k) {
    size_t bytes = 0;
    cr_expect_eq(akx_reduce_dims_piece_workspace_size(ctx, &d, &s, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, counts[k], &bytes),
                 AKX_ERROR_INVALID_ARGUMENT, "%lld pieces", (long long)counts[k]);
    cr_expect(strstr(akx_last_error(), "pieces") && strstr(akx_last_error(), "1073741824"), "%s", akx_last_error());
    const akx_reduce_piece_t piece = {0, 0, 0, counts[k], never_called, NULL};
    cr_expect_eq(akx_reduce_dims_piece(ctx, &d, &s, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &piece),
                 AKX_ERROR_INVALID_ARGUMENT, "%lld pieces", (long long)counts[k]);
    cr_expect(strstr(akx_last_error(), "piece->pieces") && strstr(akx_last_error(), "1073741824"), "%s",
              akx_last_error());
    float r = 0;
    cr_expect_eq(akx_mapreduce_piece(ctx, &s, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &piece, &r, AKX_HOST),
                 AKX_ERROR_INVALID_ARGUMENT, "%lld pieces", (long long)counts[k]);
  }
  size_t bytes = 0;
  cr_expect_eq(akx_reduce_dims_piece_workspace_size(ctx, &d, &s, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, (int64_t)1 << 30,
                                                    &bytes),
               AKX_SUCCESS, "2^30 pieces: %s", akx_last_error());
  tfx_free(ctx, dst);
  tfx_free(ctx, src);
}
