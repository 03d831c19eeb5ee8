/* akx_scan_piece: an array cut along its scanned dim into consecutive pieces, each scanned in
 * order with the totals of the pieces before it, gives in each piece's dst that piece's part of
 * akx_scan of the whole array:
 * - int64 ADD and MAX, float64 ADD (integer values: exact) in 1, 2, 3 and 5 uneven pieces, an
 *   empty one first or in the middle, along each dim of 3-d arrays and AKX_DIM_ALL of a vector,
 *   inclusive, exclusive with init and inclusive with init; pieces long enough that the column
 *   kernels cut them into chunks;
 * - pieces in C order, Fortran order and strided views with negative steps, one layout for all
 *   or another per piece, dst unlike src: the lines pair up in C order of the kept dims;
 * - a non-commutative user op without identity (affine maps) against a sequential host scan;
 * - a user map that reads its position: index_base reaches it;
 * - a non-commutative user op with exact compositions along long lines (a vector, contiguous
 *   lines, lines along a strided dim) in pieces that span many tiles, pieces_before 0 to 4,
 *   bit for bit against the host's left-to-right fold; on the sim, such a piece in three
 *   launches with coalesced loads and stores; in a caller's workspace of the queried size;
 * - bad input refused before the exchange runs and before dst is written; an exchange that
 *   fails; a src without lines, which never calls the exchange.
 * The exchange is a single process's: one device buffer holds every piece's totals, in order.
 * The user ops are compiled at run time: the suite's timeout allows for a cold cache. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "akx.h"
#include "akx_layer.h"
#include "akx_sim.h"
#include "fixture.h"
#include "mem_order.h"
#include "views.h"
#include "pieces.h"
#include "affine_op.h"

static akx_context *ctx;
static void setup(void) { ctx = tfx_open(); }
static void teardown(void) { tfx_close(ctx); }
TestSuite(scan_piece, .init = setup, .fini = teardown, .timeout = 600);

#define POISON 0xA5

/* ---- the exchange ------------------------------------------------------------------------------ */

/* One sequence's exchange: piece k's totals go to block k of `all`; since the pieces run in
 * order, blocks 0..k-1 are then the totals of the pieces before k. */
typedef struct {
  int64_t k, pieces;  /* the piece now running; how many the sequence has */
  void *all;          /* `pieces` blocks of `bytes`, allocated at the first call */
  size_t bytes;
  int calls;
  int bytes_changed;  /* a later call of the sequence was given another size */
  akx_status fail;    /* returned at once, nothing copied, when not AKX_SUCCESS */
} xchg;

static xchg xchg_make(int64_t pieces) {
  xchg x;
  memset(&x, 0, sizeof x);
  x.pieces = pieces;
  x.fail = AKX_SUCCESS;
  return x;
}

static akx_status exchange(void *arg, const void *totals, size_t bytes, const void **before) {
  xchg *x = arg;
  x->calls++;
  if (x->fail != AKX_SUCCESS) return x->fail;
  if (!x->all) {
    x->bytes = bytes;
    const akx_status st = akx_malloc(ctx, &x->all, (size_t)x->pieces * bytes);
    if (st != AKX_SUCCESS) return st;
  } else if (bytes != x->bytes) { /* asserted by the caller: an assert here would hold ctx's lock */
    x->bytes_changed = 1;
    return AKX_ERROR_INTERNAL;
  }
  *before = x->k > 0 ? x->all : NULL;
  return akx_memcpy(ctx, (char *)x->all + (size_t)x->k * bytes, totals, bytes,
                    AKX_COPY_DEVICE_TO_DEVICE);
}

/* ---- pieces in several layouts ----------------------------------------------------------------- */

enum { LAY_C, LAY_F, LAY_STRIDED, LAY_KINDS /* as a choice: another layout per piece */ };
static const char *const lay_name[] = {"C", "Fortran", "strided", "mixed"};

/* A view of `shape` over a parent of its own: C or Fortran order, or every other element with
 * negative steps in some dims and an offset. A vector steps +2: AKX_DIM_ALL reads it in index
 * order, which a negative step would make a question of memory order. */
static tfx_layout layout(int kind, int32_t nd, const int64_t *shape) {
  if (kind != LAY_STRIDED) return tvw_dense(nd, shape, kind == LAY_F);
  int64_t pshape[AKX_MAX_DIMS], start[AKX_MAX_DIMS], step[AKX_MAX_DIMS];
  for (int32_t d = 0; d < nd; ++d) {
    step[d] = nd == 1 ? 2 : d == nd - 1 ? -1 : d % 2 ? 2 : -2;
    const int64_t span = shape[d] > 0 ? (shape[d] - 1) * llabs(step[d]) : 0;
    pshape[d] = span + 2;
    start[d] = step[d] > 0 ? 1 : span + 1;
  }
  return tfx_layout_sub(nd, pshape, start, shape, step);
}

typedef struct {
  akx_array a;   /* the view over base */
  void *base;    /* its device parent */
  tfx_layout L;
} dview;

static int64_t count_of(int32_t nd, const int64_t *shape) {
  int64_t n = 1;
  for (int32_t d = 0; d < nd; ++d) n *= shape[d];
  return n;
}

/* The offset in the whole C-order array of a piece's element idx, the piece starting at `start`
 * along d. */
static int64_t whole_offset(int32_t nd, const int64_t *whole, const int64_t *idx, int32_t d,
                            int64_t start) {
  int64_t o = 0;
  for (int32_t k = 0; k < nd; ++k) o = o * whole[k] + idx[k] + (k == d ? start : 0);
  return o;
}

/* A piece's src: elements [start, start + shape[d]) along d of the whole C-order array g, the
 * parent's other elements garbage. */
static dview piece_src(const void *g, akx_dtype t, int32_t nd, const int64_t *whole, int32_t d,
                       int64_t start, const int64_t *shape, int kind) {
  dview v;
  v.L = layout(kind, nd, shape);
  const size_t es = ref_size(t), bytes = (size_t)v.L.parent_n * es;
  unsigned char *host = tfx_xmalloc(bytes);
  memset(host, 0x5A, bytes);
  const akx_array hv = tvw_view(host, t, &v.L);
  int64_t idx[AKX_MAX_DIMS] = {0};
  if (count_of(nd, shape) > 0)
    do memcpy((void *)tvw_at(&hv, idx), (const char *)g + whole_offset(nd, whole, idx, d, start) * es, es);
    while (tmo_next(nd, shape, idx));
  v.base = tfx_upload(ctx, host, bytes);
  v.a = tvw_view(v.base, t, &v.L);
  free(host);
  return v;
}

/* A piece's dst, its whole parent poisoned. */
static dview piece_dst(akx_dtype t, int32_t nd, const int64_t *shape, int kind) {
  dview v;
  v.L = layout(kind, nd, shape);
  const size_t bytes = (size_t)v.L.parent_n * ref_size(t);
  unsigned char *host = tfx_xmalloc(bytes);
  memset(host, POISON, bytes);
  v.base = tfx_upload(ctx, host, bytes);
  v.a = tvw_view(v.base, t, &v.L);
  free(host);
  return v;
}

/* Copies a piece's dst into the whole C-order output o, and checks that nothing of its parent
 * outside the view was written. */
static void piece_back(const dview *v, int32_t nd, const int64_t *whole, int32_t d, int64_t start,
                       void *o, const char *what) {
  const size_t es = ref_size(v->a.dtype), bytes = (size_t)v->L.parent_n * es;
  unsigned char *host = tfx_xmalloc(bytes);
  tfx_to_host(ctx, host, v->base, bytes);
  const akx_array hv = tvw_view(host, v->a.dtype, &v->L);
  int64_t idx[AKX_MAX_DIMS] = {0};
  if (tvw_count(&v->a) > 0)
    do {
      void *e = (void *)tvw_at(&hv, idx);
      memcpy((char *)o + whole_offset(nd, whole, idx, d, start) * es, e, es);
      memset(e, POISON, es);
    } while (tmo_next(nd, v->a.shape, idx));
  for (size_t b = 0; b < bytes; ++b)
    cr_assert_eq(host[b], POISON, "%s: dst's parent written outside the view (byte %zu)", what, b);
  free(host);
}

static void dview_free(dview *v) {
  tfx_free(ctx, v->base);
  v->base = NULL;
}

/* ---- sequences --------------------------------------------------------------------------------- */

typedef struct {
  const char *name;            /* "int64 ADD" */
  akx_op op;
  akx_dtype src_t, dst_t;
  int32_t dim;                 /* or AKX_DIM_ALL, of a vector */
  int32_t nd;
  int64_t shape[3];            /* the whole array's */
  const int64_t *ext;          /* the pieces' extents along the scanned dim */
  int pieces;
  int src_kind, dst_kind;      /* LAY_*; LAY_KINDS: another per piece */
  const akx_scan_opts *opts;
} seq;

static const char *describe(const seq *s, char *buf, size_t len) {
  size_t k = (size_t)snprintf(buf, len, "%s dim %d of {", s->name, (int)s->dim);
  for (int32_t d = 0; d < s->nd && k < len; ++d)
    k += (size_t)snprintf(buf + k, len - k, "%s%lld", d ? ", " : "", (long long)s->shape[d]);
  if (k < len) k += (size_t)snprintf(buf + k, len - k, "} in pieces {");
  for (int p = 0; p < s->pieces && k < len; ++p)
    k += (size_t)snprintf(buf + k, len - k, "%s%lld", p ? ", " : "", (long long)s->ext[p]);
  const int excl = s->opts && s->opts->exclusive, init = s->opts && s->opts->init;
  if (k < len)
    snprintf(buf + k, len - k, "}, %s src, %s dst, %s%s", lay_name[s->src_kind],
             lay_name[s->dst_kind], excl ? "exclusive" : "inclusive", init ? " with init" : "");
  return buf;
}

static int32_t scanned(const seq *s) { return s->dim == AKX_DIM_ALL ? 0 : s->dim; }

/* Scans g (whole, C order) piece by piece through the exchange; returns the pieces' dsts as one
 * C-order array of the whole shape (host; free it). */
static void *scan_in_pieces(const seq *s, const void *g) {
  char what[512];
  describe(s, what, sizeof what);
  const int32_t d = scanned(s);
  int64_t sum = 0;
  for (int p = 0; p < s->pieces; ++p) sum += s->ext[p];
  cr_assert_eq(sum, s->shape[d], "%s: the pieces do not cover the dim", what);
  void *out = tfx_xmalloc((size_t)count_of(s->nd, s->shape) * ref_size(s->dst_t));
  xchg x = xchg_make(s->pieces);
  int64_t start = 0;
  for (int k = 0; k < s->pieces; ++k) {
    int64_t shape[3] = {s->shape[0], s->shape[1], s->shape[2]};
    shape[d] = s->ext[k];
    const int sk = s->src_kind == LAY_KINDS ? k % LAY_KINDS : s->src_kind;
    const int dk = s->dim == AKX_DIM_ALL ? sk /* dst with src's strides */
                   : s->dst_kind == LAY_KINDS ? (k + 2) % LAY_KINDS : s->dst_kind;
    dview src = piece_src(g, s->src_t, s->nd, s->shape, d, start, shape, sk);
    dview dst = piece_dst(s->dst_t, s->nd, shape, dk);
    const akx_scan_piece_t piece = {start, k, exchange, &x};
    x.k = k;
    const akx_status st = akx_scan_piece(ctx, &dst.a, &src.a, s->op, s->dim, s->opts, &piece);
    cr_assert(!x.bytes_changed, "%s: piece %d's totals are not %zu bytes as the first's", what, k,
              x.bytes);
    cr_assert_eq(st, AKX_SUCCESS, "%s: piece %d = %s: %s", what, k, akx_status_string(st),
                 akx_last_error());
    cr_assert_eq(x.calls, k + 1, "%s: piece %d (extent %lld) called the exchange %d times in all",
                 what, k, (long long)s->ext[k], x.calls);
    piece_back(&dst, s->nd, s->shape, d, start, out, what);
    dview_free(&src);
    dview_free(&dst);
    start += s->ext[k];
  }
  tfx_free(ctx, x.all);
  return out;
}

/* akx_scan of g (whole, C order) into a C-order dst; returns it (host; free it). */
static void *scan_whole(const seq *s, const void *g) {
  const int64_t n = count_of(s->nd, s->shape);
  const tfx_layout L = tvw_dense(s->nd, s->shape, 0);
  void *base = tfx_upload(ctx, g, (size_t)n * ref_size(s->src_t));
  const akx_array src = tvw_view(base, s->src_t, &L);
  akx_array dst = tvw_dst(ctx, s->dst_t, s->nd, s->shape, POISON);
  const akx_status st = akx_scan(ctx, &dst, &src, s->op, s->dim, s->opts);
  char what[512];
  cr_assert_eq(st, AKX_SUCCESS, "%s: akx_scan of the whole = %s: %s", describe(s, what, sizeof what),
               akx_status_string(st), akx_last_error());
  void *out = tfx_xmalloc((size_t)n * ref_size(s->dst_t));
  tfx_to_host(ctx, out, dst.data, (size_t)n * ref_size(s->dst_t));
  tfx_free(ctx, dst.data);
  tfx_free(ctx, base);
  return out;
}

/* Exact agreement: integers bit for bit, float64 by value (integer values, so every order of
 * the sums gives them exactly). */
static void expect_same(const seq *s, const void *got, const void *want) {
  const size_t es = ref_size(s->dst_t);
  const int64_t n = count_of(s->nd, s->shape);
  for (int64_t i = 0; i < n; ++i) {
    const void *a = (const char *)got + i * es, *b = (const char *)want + i * es;
    const int same = s->dst_t == AKX_FLOAT64 ? *(const double *)a == *(const double *)b
                                             : memcmp(a, b, es) == 0;
    if (same) continue;
    char what[512], ga[96], wa[96];
    cr_assert_fail("%s: element %lld (C order) is %s in pieces, %s from akx_scan of the whole",
                   describe(s, what, sizeof what), (long long)i,
                   ref_format(ref_load(a, s->dst_t), ga, sizeof ga),
                   ref_format(ref_load(b, s->dst_t), wa, sizeof wa));
  }
}

static void *gen(akx_dtype t, int64_t n, uint64_t seed) { return piece_values(t, n, seed, 1); }


/* s in each split from `first` on, every piece's part against the whole scan `want`. */
static void expect_splits(seq *s, const void *g, const void *want, int first) {
  for (int sp = first; sp < SPLITS; ++sp) {
    int64_t ext[5];
    s->pieces = split(s->shape[scanned(s)], sp, ext);
    s->ext = ext;
    void *got = scan_in_pieces(s, g);
    expect_same(s, got, want);
    free(got);
  }
}

/* The wholes: each dim of a small 3-d array, a vector (AKX_DIM_ALL), and a long dim that the
 * column kernels cut into chunks within a piece. */
static const struct { int32_t nd; int64_t shape[3]; int32_t dim; } wholes[] = {
    {3, {7, 5, 6}, 0}, {3, {7, 5, 6}, 1}, {3, {7, 5, 6}, 2}, {1, {3001, 1, 1}, AKX_DIM_ALL},
    {3, {3, 900, 2}, 1}};
#define WHOLES ((int)(sizeof wholes / sizeof wholes[0]))

static seq seq_make(const char *name, akx_op op, akx_dtype src_t, akx_dtype dst_t, int w) {
  seq s;
  memset(&s, 0, sizeof s);
  s.name = name, s.op = op, s.src_t = src_t, s.dst_t = dst_t;
  s.nd = wholes[w].nd, s.dim = wholes[w].dim;
  for (int d = 0; d < 3; ++d) s.shape[d] = wholes[w].shape[d];
  return s;
}

/* ---- built-in ops ------------------------------------------------------------------------------ */

Test(scan_piece, builtin_ops_match_the_whole_scan) {
  const struct { const char *name; akx_op op; akx_dtype t; } ops[] = {
      {"int64 ADD", AKX_OP_ADD, AKX_INT64}, {"int64 MAX", AKX_OP_MAX, AKX_INT64},
      {"float64 ADD", AKX_OP_ADD, AKX_FLOAT64}};
  /* MAX's init inside the values' range: it wins some early outputs, not all. */
  const int64_t add_i = 17, max_i = 250;
  const double add_d = 17.0;
  for (int o = 0; o < 3; ++o)
    for (int w = 0; w < WHOLES; ++w) {
      seq s = seq_make(ops[o].name, ops[o].op, ops[o].t, ops[o].t, w);
      void *g = gen(ops[o].t, count_of(s.nd, s.shape), (uint64_t)(o * 10 + w));
      for (int m = 0; m < 3; ++m) { /* inclusive; exclusive with init; inclusive with init */
        akx_scan_opts opts = akx_scan_opts_default();
        opts.exclusive = m == 1;
        if (m > 0)
          opts.init = ops[o].t == AKX_FLOAT64 ? (const void *)&add_d
                      : ops[o].op == AKX_OP_MAX ? (const void *)&max_i : (const void *)&add_i;
        s.opts = &opts;
        void *want = scan_whole(&s, g);
        expect_splits(&s, g, want, 0);
        free(want);
      }
      free(g);
    }
}

/* ---- layouts ----------------------------------------------------------------------------------- */

Test(scan_piece, layouts_pair_their_lines) {
  const int64_t add_i = -40;
  for (int o = 0; o < 2; ++o) /* int64 exclusive with init; float64 inclusive */
    for (int w = 0; w < WHOLES; ++w) {
      const akx_dtype t = o == 0 ? AKX_INT64 : AKX_FLOAT64;
      seq s = seq_make(o == 0 ? "int64 ADD" : "float64 ADD", AKX_OP_ADD, t, t, w);
      akx_scan_opts opts = akx_scan_opts_default();
      opts.exclusive = o == 0;
      opts.init = o == 0 ? &add_i : NULL;
      s.opts = &opts;
      void *g = gen(t, count_of(s.nd, s.shape), (uint64_t)(100 + o * 10 + w));
      void *want = scan_whole(&s, g);
      for (int kind = 0; kind <= LAY_KINDS; ++kind) { /* each layout for all pieces, then mixed */
        s.src_kind = kind;
        s.dst_kind = kind == LAY_KINDS || s.dim == AKX_DIM_ALL ? kind : (kind + 1) % LAY_KINDS;
        expect_splits(&s, g, want, 2);
      }
      free(want);
      free(g);
    }
}

/* ---- user ops ---------------------------------------------------------------------------------- */

static akx_op create(const char *source, const char *acc, const char *combine,
                     const char *identity, const char *map, const char *store) {
  const akx_user_op_desc d = {source, acc, combine, identity, map, store};
  return tfx_user_op(ctx, &d);
}

/* The affine maps of tests/test_user_ops.c (tests/support/affine_op.h): no identity. */
typedef struct {
  double a, b;
} affine_acc;

/* The sequential scan of every line of the whole C-order g, with init (NULL: none) first. */
static double *affine_host(const float *g, int32_t nd, const int64_t *shape, int32_t d,
                           const affine_acc *init, int exclusive) {
  int64_t cstr[3], line_shape[3] = {shape[0], shape[1], shape[2]}, idx[3] = {0, 0, 0};
  tvw_c_strides(nd, shape, cstr);
  line_shape[d] = 1;
  double *want = tfx_xmalloc((size_t)count_of(nd, shape) * sizeof(double));
  do {
    const int64_t base = tmo_offset(nd, cstr, idx);
    affine_acc acc = init ? *init : (affine_acc){1, 0};
    int have = init != NULL;
    for (int64_t k = 0; k < shape[d]; ++k) {
      const double x = g[base + k * cstr[d]];
      const affine_acc f = {1.0 + x * 0.01, x};
      if (exclusive) want[base + k * cstr[d]] = acc.b;
      acc = have ? (affine_acc){acc.a * f.a, acc.b * f.a + f.b} : f;
      have = 1;
      if (!exclusive) want[base + k * cstr[d]] = acc.b;
    }
  } while (tmo_next(nd, line_shape, idx));
  return want;
}

static void expect_close(const seq *s, const double *got, const double *want, const char *whom) {
  const int64_t n = count_of(s->nd, s->shape);
  for (int64_t i = 0; i < n; ++i) {
    if (fabs(got[i] - want[i]) <= 1e-9 * (1 + fabs(want[i]))) continue;
    char what[512];
    cr_assert_fail("%s: element %lld (C order) is %.17g in pieces, %.17g from %s",
                   describe(s, what, sizeof what), (long long)i, got[i], want[i], whom);
  }
}

Test(scan_piece, affine_user_op_without_identity) {
  const akx_op op = create(AFFINE_SRC, "Affine", "af_then", NULL, "af_map", "af_at_zero");
  const int ws[3] = {0, 2, 3}; /* dim 0 and dim 2 of 7x5x6, a vector of 3001 */
  const affine_acc unit = {1, 0}, shift = {2, 1};
  const struct { int exclusive; const affine_acc *init; } modes[] = {
      {0, NULL}, {1, &unit}, {0, &shift}};
  for (int wi = 0; wi < 3; ++wi) {
    seq s = seq_make("float32 affine into float64", op, AKX_FLOAT32, AKX_FLOAT64, ws[wi]);
    s.src_kind = s.dst_kind = LAY_KINDS;
    const int32_t d = scanned(&s);
    float *g = gen(AKX_FLOAT32, count_of(s.nd, s.shape), (uint64_t)(200 + wi));
    for (int m = 0; m < 3; ++m) {
      akx_scan_opts opts = akx_scan_opts_default();
      opts.exclusive = modes[m].exclusive;
      opts.init = modes[m].init;
      s.opts = &opts;
      double *want = affine_host(g, s.nd, s.shape, d, modes[m].init, modes[m].exclusive);
      double *whole = scan_whole(&s, g);
      expect_close(&s, whole, want, "the sequential host scan (by akx_scan of the whole)");
      /* An empty piece first (its totals hold no value: no identity) or in the middle. */
      for (int first_empty = 0; first_empty < 2; ++first_empty) {
        const int64_t n = s.shape[d];
        int64_t ext[4] = {n / 3, 0, 1, n - n / 3 - 1};
        if (first_empty) ext[0] = 0, ext[1] = n / 3;
        s.ext = ext;
        s.pieces = 4;
        double *got = scan_in_pieces(&s, g);
        expect_close(&s, got, want, "the sequential host scan");
        expect_close(&s, got, whole, "akx_scan of the whole");
        free(got);
      }
      free(whole);
      free(want);
    }
    free(g);
  }
  cr_assert_eq(akx_user_op_destroy(ctx, op), AKX_SUCCESS, "%s", akx_last_error());
}

/* A sum whose map reads its position: were index_base lost, a later piece's map would number
 * its elements from 0, and its outputs would come out low. */
static const char INDEXED_SRC[] =
    "AKX_HD double ix_add(double a, double b) { return a + b; }\n"
    "AKX_HD double ix_zero() { return 0.0; }\n"
    "template <class S> AKX_HD double ix_map(S x, int64_t i) {\n"
    "  return (double)x + 1000.0 * (double)i;\n"
    "}\n";

Test(scan_piece, index_base_reaches_the_map) {
  const akx_op op = create(INDEXED_SRC, "double", "ix_add", "ix_zero", "ix_map", NULL);
  const double init = 7.0;
  for (int w = 0; w < WHOLES; ++w) {
    seq s = seq_make("int32 indexed sum into float64", op, AKX_INT32, AKX_FLOAT64, w);
    s.src_kind = s.dst_kind = LAY_KINDS;
    int32_t *g = gen(AKX_INT32, count_of(s.nd, s.shape), (uint64_t)(300 + w));
    for (int m = 0; m < 2; ++m) { /* inclusive; exclusive with init */
      akx_scan_opts opts = akx_scan_opts_default();
      opts.exclusive = m;
      opts.init = m ? &init : NULL;
      s.opts = &opts;
      void *want = scan_whole(&s, g);
      expect_splits(&s, g, want, 1);
      free(want);
    }
    free(g);
  }
  cr_assert_eq(akx_user_op_destroy(ctx, op), AKX_SUCCESS, "%s", akx_last_error());
}

/* ---- refusals, a failing exchange, no lines ---------------------------------------------------- */

static void expect_untouched(const akx_array *dst, const char *what) {
  const size_t bytes = (size_t)tvw_count(dst) * ref_size(dst->dtype);
  unsigned char *back = tfx_xmalloc(bytes);
  tfx_to_host(ctx, back, dst->data, bytes);
  for (size_t b = 0; b < bytes; ++b)
    cr_assert_eq(back[b], POISON, "%s: dst byte %zu was written", what, b);
  free(back);
}

Test(scan_piece, bad_input_refused_before_the_exchange) {
  const int64_t shape[3] = {7, 5, 6}, other[3] = {7, 4, 6};
  int64_t *g = gen(AKX_INT64, 7 * 5 * 6, 400);
  void *base = tfx_upload(ctx, g, sizeof(int64_t) * 7 * 5 * 6);
  const akx_array src = akx_array_c(base, AKX_INT64, 3, shape);
  const struct {
    const char *what, *names;
    int no_piece, no_exchange, other_dst;
    int64_t before, index_base;
  } cases[] = {
      {"piece NULL", "piece", 1, 0, 0, 0, 0},
      {"piece->exchange NULL", "exchange", 0, 1, 0, 0, 0},
      {"pieces_before -1", "pieces_before", 0, 0, 0, -1, 0},
      {"index_base -1", "index_base", 0, 0, 0, 0, -1},
      {"dst of another shape", "dst", 0, 0, 1, 1, 5},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    akx_array dst = tvw_dst(ctx, AKX_INT64, 3, cases[c].other_dst ? other : shape, POISON);
    xchg x = xchg_make(2);
    const akx_scan_piece_t piece = {cases[c].index_base, cases[c].before,
                                    cases[c].no_exchange ? NULL : exchange, &x};
    const akx_status st = akx_scan_piece(ctx, &dst, &src, AKX_OP_ADD, 1, NULL,
                                         cases[c].no_piece ? NULL : &piece);
    cr_assert_eq(st, AKX_ERROR_INVALID_ARGUMENT, "%s: %s (%s)", cases[c].what,
                 akx_status_string(st), akx_last_error());
    cr_assert(strstr(akx_last_error(), cases[c].names), "%s: the sentence names %s: %s",
              cases[c].what, cases[c].names, akx_last_error());
    cr_assert_eq(x.calls, 0, "%s: the exchange was called", cases[c].what);
    expect_untouched(&dst, cases[c].what);
    tfx_free(ctx, dst.data);
  }
  tfx_free(ctx, base);
  free(g);
}

Test(scan_piece, failing_exchange_leaves_dst_unwritten) {
  const int64_t shape[3] = {7, 5, 6};
  int64_t *g = gen(AKX_INT64, 7 * 5 * 6, 500);
  void *base = tfx_upload(ctx, g, sizeof(int64_t) * 7 * 5 * 6);
  const akx_array src = akx_array_c(base, AKX_INT64, 3, shape);
  for (int64_t before = 0; before < 3; before += 2) { /* the first piece, a later one */
    akx_array dst = tvw_dst(ctx, AKX_INT64, 3, shape, POISON);
    xchg x = xchg_make(3);
    x.fail = AKX_ERROR_DEVICE;
    const akx_scan_piece_t piece = {before * 5, before, exchange, &x};
    const akx_status st = akx_scan_piece(ctx, &dst, &src, AKX_OP_ADD, 1, NULL, &piece);
    cr_assert_eq(st, AKX_ERROR_DEVICE, "pieces_before %lld: the exchange's AKX_ERROR_DEVICE came "
                 "back as %s (%s)", (long long)before, akx_status_string(st), akx_last_error());
    cr_assert_eq(x.calls, 1, "pieces_before %lld: %d calls of the exchange", (long long)before,
                 x.calls);
    expect_untouched(&dst, "a failed exchange");
    tfx_free(ctx, dst.data);
  }
  /* The abandoned calls leave the context fit for the next sequence. */
  seq s = seq_make("int64 ADD after a failed exchange", AKX_OP_ADD, AKX_INT64, AKX_INT64, 1);
  int64_t ext[5];
  s.pieces = split(5, 3, ext);
  s.ext = ext;
  void *want = scan_whole(&s, g), *got = scan_in_pieces(&s, g);
  expect_same(&s, got, want);
  free(got), free(want);
  tfx_free(ctx, base);
  free(g);
}

Test(scan_piece, no_lines_no_exchange) {
  void *base = tfx_alloc(ctx, 64), *out = tfx_alloc(ctx, 64);
  const struct { int32_t nd; int64_t shape[3]; int32_t dim; int calls; } cases[] = {
      {2, {4, 0, 1}, 0, 0},    /* 4 x 0 along dim 0: no line */
      {3, {0, 5, 6}, 1, 0},    /* an extent of 0 outside the dim */
      {3, {5, 0, 6}, 0, 0},
      {2, {0, 4, 1}, 0, 1},    /* empty along dim, 4 lines: the exchange runs all the same */
      {1, {0, 1, 1}, AKX_DIM_ALL, 1},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    const akx_array src = akx_array_c(base, AKX_INT64, cases[c].nd, cases[c].shape);
    const akx_array dst = akx_array_c(out, AKX_INT64, cases[c].nd, cases[c].shape);
    xchg x = xchg_make(1);
    /* Where it must not run, an exchange that fails: a success then shows it did not. */
    if (cases[c].calls == 0) x.fail = AKX_ERROR_DEVICE;
    const akx_scan_piece_t piece = {0, 0, exchange, &x};
    const akx_status st = akx_scan_piece(ctx, &dst, &src, AKX_OP_ADD, cases[c].dim, NULL, &piece);
    cr_assert_eq(st, AKX_SUCCESS, "case %zu: %s (%s)", c, akx_status_string(st), akx_last_error());
    cr_assert_eq(x.calls, cases[c].calls, "case %zu: %d calls of the exchange, want %d", c,
                 x.calls, cases[c].calls);
    tfx_free(ctx, x.all);
  }
  tfx_free(ctx, out);
  tfx_free(ctx, base);
}

/* A caller's workspace of the queried size runs a piece, one byte less is refused before the
 * exchange runs, dst unwritten; the first piece and a third one (two pieces' totals before). */
Test(scan_piece, workspace_query_covers_the_call) {
  const int64_t shape[3] = {7, 5, 6};
  int64_t *g = gen(AKX_INT64, 7 * 5 * 6, 600);
  void *base = tfx_upload(ctx, g, sizeof(int64_t) * 7 * 5 * 6);
  const akx_array src = akx_array_c(base, AKX_INT64, 3, shape);
  for (int64_t before = 0; before < 3; before += 2) {
    akx_array dst = tvw_dst(ctx, AKX_INT64, 3, shape, POISON);
    size_t bytes = 0;
    akx_status st = akx_scan_piece_workspace_size(ctx, &dst, &src, AKX_OP_ADD, 1, NULL, before, &bytes);
    cr_assert_eq(st, AKX_SUCCESS, "the query: %s", akx_last_error());
    cr_assert_geq(bytes, (size_t)(before + 2) * 42 * sizeof(int64_t),
                  "pieces_before %lld: %zu bytes, less than the totals' rows", (long long)before, bytes);
    for (int shortfall = 1; shortfall >= 0; --shortfall) {
      void *ws = tfx_alloc(ctx, bytes);
      cr_assert_eq(akx_context_set_workspace(ctx, ws, bytes - (size_t)shortfall), AKX_SUCCESS, "%s",
                   akx_last_error());
      xchg x = xchg_make(3);
      x.k = before;
      /* The pieces before total zeros (ADD's identity): dst is this piece's own scan. */
      int64_t zeros[3 * 42] = {0};
      x.bytes = sizeof zeros / 3;
      x.all = tfx_upload(ctx, zeros, sizeof zeros);
      const akx_scan_piece_t piece = {before * 5, before, exchange, &x};
      st = akx_scan_piece(ctx, &dst, &src, AKX_OP_ADD, 1, NULL, &piece);
      cr_assert_eq(st, shortfall ? AKX_ERROR_WORKSPACE_TOO_SMALL : AKX_SUCCESS, "pieces_before %lld, %zu bytes: %s (%s)",
                   (long long)before, bytes - (size_t)shortfall, akx_status_string(st), akx_last_error());
      cr_assert_eq(x.calls, shortfall ? 0 : 1, "%d calls of the exchange", x.calls);
      if (shortfall) expect_untouched(&dst, "a workspace one byte short");
      else {
        int64_t got[210];
        tfx_to_host(ctx, got, dst.data, sizeof got);
        for (int64_t i = 0; i < 7; ++i)
          for (int64_t k = 0; k < 6; ++k) {
            int64_t run = 0;
            for (int64_t j = 0; j < 5; ++j) {
              run += g[(i * 5 + j) * 6 + k];
              cr_assert_eq(got[(i * 5 + j) * 6 + k], run, "(%lld, %lld, %lld): %lld, the host's %lld", (long long)i,
                           (long long)j, (long long)k, (long long)got[(i * 5 + j) * 6 + k], (long long)run);
            }
          }
      }
      cr_assert_eq(akx_context_set_workspace(ctx, NULL, 0), AKX_SUCCESS, "%s", akx_last_error());
      tfx_free(ctx, ws);
      tfx_free(ctx, x.all);
    }
    tfx_free(ctx, dst.data);
  }
  tfx_free(ctx, base);
  free(g);
}

/* ---- a user op along long lines ---------------------------------------------------------------- */

/* Affine maps of slope +1 or -1 over int64: they do not commute and have no identity, and every
 * composition is exact, so that any grouping of the same operands in the same order gives the
 * same bits: the pieces' outputs must equal the host's left-to-right fold exactly. The map
 * reads its position, so that index_base must reach it. */
static const char SIGNED_SRC[] =
    "struct Signed { int64_t a, b; };  // x -> a*x + b, a = +1 or -1\n"
    "AKX_HD Signed sg_then(Signed f, Signed g) {\n"
    "  Signed r; r.a = f.a * g.a; r.b = f.b * g.a + g.b; return r;\n"
    "}\n"
    "template <class S> AKX_HD Signed sg_map(S x, int64_t i) {\n"
    "  Signed r; r.a = ((int64_t)x + i) % 3 == 0 ? -1 : 1; r.b = (int64_t)x + i % 7; return r;\n"
    "}\n"
    "template <class D> AKX_HD D sg_b(Signed f) { return (D)f.b; }\n";

typedef struct {
  int64_t a, b;
} signed_acc;

static signed_acc sg_then(signed_acc f, signed_acc g) { return (signed_acc){f.a * g.a, f.b * g.a + g.b}; }
static signed_acc sg_map(int64_t x, int64_t i) { return (signed_acc){(x + i) % 3 == 0 ? -1 : 1, x + i % 7}; }

/* Each line of the whole C-order g folded left to right, init (NULL: none) first; its b stored
 * (exclusive: before the element). */
static int64_t *signed_host(const int32_t *g, int32_t nd, const int64_t *shape, int32_t d,
                            const signed_acc *init, int exclusive) {
  int64_t cstr[3], line_shape[3] = {shape[0], shape[1], shape[2]}, idx[3] = {0, 0, 0};
  tvw_c_strides(nd, shape, cstr);
  line_shape[d] = 1;
  int64_t *want = tfx_xmalloc((size_t)count_of(nd, shape) * sizeof(int64_t));
  do {
    const int64_t base = tmo_offset(nd, cstr, idx);
    signed_acc acc = init ? *init : (signed_acc){1, 0};
    int have = init != NULL;
    for (int64_t k = 0; k < shape[d]; ++k) {
      const signed_acc f = sg_map(g[base + k * cstr[d]], k);
      if (exclusive) want[base + k * cstr[d]] = acc.b;
      acc = have ? sg_then(acc, f) : f;
      have = 1;
      if (!exclusive) want[base + k * cstr[d]] = acc.b;
    }
  } while (tmo_next(nd, line_shape, idx));
  return want;
}

/* Lines long enough that a piece spans many tiles and many column chunks: one vector, three
 * contiguous lines, two lines along a strided dim. */
static const struct { int32_t nd; int64_t shape[3]; int32_t dim; } long_wholes[] = {
    {1, {40961, 1, 1}, AKX_DIM_ALL}, {2, {3, 20011, 1}, 1}, {2, {12007, 2, 1}, 0}};

Test(scan_piece, user_op_long_lines_match_the_host_fold_bit_for_bit) {
  const akx_op op = create(SIGNED_SRC, "Signed", "sg_then", NULL, "sg_map", "sg_b");
  const signed_acc flip = {-1, 5}, shift = {1, -9};
  const struct { int exclusive; const signed_acc *init; } modes[] = {{0, NULL}, {1, &flip}, {0, &shift}};
  for (int w = 0; w < 3; ++w) {
    seq s;
    memset(&s, 0, sizeof s);
    s.name = "int32 signed affine into int64", s.op = op, s.src_t = AKX_INT32, s.dst_t = AKX_INT64;
    s.nd = long_wholes[w].nd, s.dim = long_wholes[w].dim;
    for (int d = 0; d < 3; ++d) s.shape[d] = long_wholes[w].shape[d];
    s.src_kind = s.dst_kind = LAY_KINDS;
    const int32_t d = scanned(&s);
    int32_t *g = gen(AKX_INT32, count_of(s.nd, s.shape), (uint64_t)(700 + w));
    for (int m = 0; m < 3; ++m) {
      akx_scan_opts opts = akx_scan_opts_default();
      opts.exclusive = modes[m].exclusive;
      opts.init = modes[m].init;
      s.opts = &opts;
      int64_t *want = signed_host(g, s.nd, s.shape, d, modes[m].init, modes[m].exclusive);
      /* Three long pieces (pieces_before 0, 1, 2), their cuts off the tiles' edges; then the
       * splits with a piece of one element and empty ones. */
      const int64_t n = s.shape[d];
      int64_t three[3] = {n / 3 - 1, n / 3 + 2, n - 2 * (n / 3) - 1};
      for (int sp = 0; sp < 3; ++sp) {
        int64_t ext[5];
        if (sp == 0) {
          memcpy(ext, three, sizeof three);
          s.pieces = 3;
        } else {
          s.pieces = split(n, sp + 1, ext);
        }
        s.ext = ext;
        int64_t *got = scan_in_pieces(&s, g);
        expect_same(&s, got, want);
        free(got);
      }
      free(want);
    }
    free(g);
  }
  cr_assert_eq(akx_user_op_destroy(ctx, op), AKX_SUCCESS, "%s", akx_last_error());
}

/* The third piece of a long vector, run twice (the second time measured): its loads and
 * stores are coalesced (sectors within a quarter of the ideal: a thread walking a chunk of
 * its own touches a sector per element), and it takes three launches (the lines' totals, the
 * carry over the totals before it, the scan from that carry), whatever the length: no pass
 * walks the chunks of the line one after the other. */
Test(scan_piece, user_op_long_line_is_coalesced_in_three_launches) {
  const akx_op op = create(SIGNED_SRC, "Signed", "sg_then", NULL, "sg_map", "sg_b");
  const signed_acc shift = {1, -9};
  const int64_t ext[3] = {30001, 30002, 50003}, n = ext[0] + ext[1] + ext[2];
  int32_t *g = gen(AKX_INT32, n, 800);
  for (int m = 0; m < 2; ++m) { /* inclusive; exclusive with init */
    akx_scan_opts opts = akx_scan_opts_default();
    opts.exclusive = m;
    opts.init = m ? &shift : NULL;
    const int64_t shape[3] = {n, 1, 1};
    int64_t *want = signed_host(g, 1, shape, 0, opts.init, m);
    xchg x = xchg_make(3);
    int64_t start = 0;
    for (int k = 0; k < 3; ++k) {
      void *src = tfx_upload(ctx, g + start, (size_t)ext[k] * sizeof(int32_t));
      void *dst = tfx_alloc(ctx, (size_t)ext[k] * sizeof(int64_t));
      const akx_array a = akx_vector(src, AKX_INT32, ext[k]), o = akx_vector(dst, AKX_INT64, ext[k]);
      const akx_scan_piece_t piece = {start, k, exchange, &x};
      x.k = k;
      for (int run = 0; run < (k == 2 ? 2 : 1); ++run) {
        if (run == 1) cr_assert_eq(akx_sim_counters_reset(ctx), AKX_SUCCESS, "%s", akx_last_error());
        const akx_status st = akx_scan_piece(ctx, &o, &a, op, AKX_DIM_ALL, &opts, &piece);
        cr_assert_eq(st, AKX_SUCCESS, "piece %d: %s (%s)", k, akx_status_string(st), akx_last_error());
      }
      if (k == 2 && tfx_is_sim(ctx)) {
        akx_sim_kernel_counters t;
        cr_assert_eq(akx_sim_counters_get(ctx, &t, NULL, 0, NULL), AKX_SUCCESS, "%s", akx_last_error());
        const char *what = m ? "exclusive with init" : "inclusive";
        cr_assert_leq(t.launches, 3, "%s: the third piece of %lld elements took %llu launches", what,
                      (long long)ext[k], (unsigned long long)t.launches);
        cr_assert_leq(t.global_load.units * 4, t.global_load.ideal * 5,
                      "%s: %llu load sectors for an ideal %llu", what,
                      (unsigned long long)t.global_load.units, (unsigned long long)t.global_load.ideal);
        cr_assert_leq(t.global_store.units * 4, t.global_store.ideal * 5,
                      "%s: %llu store sectors for an ideal %llu", what,
                      (unsigned long long)t.global_store.units, (unsigned long long)t.global_store.ideal);
      }
      int64_t *got = tfx_xmalloc((size_t)ext[k] * sizeof(int64_t));
      tfx_to_host(ctx, got, dst, (size_t)ext[k] * sizeof(int64_t));
      for (int64_t i = 0; i < ext[k]; ++i)
        cr_assert_eq(got[i], want[start + i], "%s: piece %d, element %lld: %lld, the host's %lld",
                     m ? "exclusive with init" : "inclusive", k, (long long)i, (long long)got[i],
                     (long long)want[start + i]);
      free(got);
      tfx_free(ctx, dst);
      tfx_free(ctx, src);
      start += ext[k];
    }
    tfx_free(ctx, x.all);
    free(want);
  }
  free(g);
  cr_assert_eq(akx_user_op_destroy(ctx, op), AKX_SUCCESS, "%s", akx_last_error());
}

/* A long line's piece (the tiles' status and the totals' rows in one workspace) runs in a
 * caller's workspace of the queried size, one byte less refused before the exchange runs;
 * the first piece and a third one. */
Test(scan_piece, user_op_long_line_runs_in_the_queried_workspace) {
  const akx_op op = create(SIGNED_SRC, "Signed", "sg_then", NULL, "sg_map", "sg_b");
  const int64_t n = 20011, shape[3] = {3 * 20011, 1, 1};
  int32_t *g = gen(AKX_INT32, 3 * n, 900);
  int64_t *want = signed_host(g, 1, shape, 0, NULL, 0);
  for (int64_t before = 0; before < 3; before += 2) {
    void *src = tfx_upload(ctx, g + before * n, (size_t)n * sizeof(int32_t));
    akx_array dst = tvw_dst(ctx, AKX_INT64, 1, &n, POISON);
    const akx_array a = akx_vector(src, AKX_INT32, n);
    size_t bytes = 0;
    akx_status st = akx_scan_piece_workspace_size(ctx, &dst, &a, op, AKX_DIM_ALL, NULL, before, &bytes);
    cr_assert_eq(st, AKX_SUCCESS, "the query: %s", akx_last_error());
    /* The pieces before: the first two of the sequence, their totals from a run of their own. */
    xchg x = xchg_make(3);
    int64_t start = 0;
    for (int k = 0; k < before; ++k, start += n) {
      void *s = tfx_upload(ctx, g + start, (size_t)n * sizeof(int32_t));
      akx_array d = tvw_dst(ctx, AKX_INT64, 1, &n, POISON);
      const akx_array v = akx_vector(s, AKX_INT32, n);
      const akx_scan_piece_t piece = {start, k, exchange, &x};
      x.k = k;
      cr_assert_eq(akx_scan_piece(ctx, &d, &v, op, AKX_DIM_ALL, NULL, &piece), AKX_SUCCESS, "%s", akx_last_error());
      tfx_free(ctx, d.data);
      tfx_free(ctx, s);
    }
    for (int shortfall = 1; shortfall >= 0; --shortfall) {
      void *ws = tfx_alloc(ctx, bytes);
      cr_assert_eq(akx_context_set_workspace(ctx, ws, bytes - (size_t)shortfall), AKX_SUCCESS, "%s",
                   akx_last_error());
      const int calls = x.calls;
      const akx_scan_piece_t piece = {before * n, before, exchange, &x};
      x.k = before;
      st = akx_scan_piece(ctx, &dst, &a, op, AKX_DIM_ALL, NULL, &piece);
      cr_assert_eq(st, shortfall ? AKX_ERROR_WORKSPACE_TOO_SMALL : AKX_SUCCESS,
                   "pieces_before %lld, %zu bytes: %s (%s)", (long long)before, bytes - (size_t)shortfall,
                   akx_status_string(st), akx_last_error());
      cr_assert_eq(x.calls - calls, shortfall ? 0 : 1, "%d calls of the exchange", x.calls - calls);
      if (shortfall) {
        expect_untouched(&dst, "a workspace one byte short");
      } else {
        int64_t *got = tfx_xmalloc((size_t)n * sizeof(int64_t));
        tfx_to_host(ctx, got, dst.data, (size_t)n * sizeof(int64_t));
        for (int64_t i = 0; i < n; ++i)
          cr_assert_eq(got[i], want[before * n + i], "pieces_before %lld, element %lld: %lld, the host's %lld",
                       (long long)before, (long long)i, (long long)got[i], (long long)want[before * n + i]);
        free(got);
      }
      cr_assert_eq(akx_context_set_workspace(ctx, NULL, 0), AKX_SUCCESS, "%s", akx_last_error());
      tfx_free(ctx, ws);
    }
    tfx_free(ctx, x.all);
    tfx_free(ctx, dst.data);
    tfx_free(ctx, src);
  }
  free(want);
  free(g);
  cr_assert_eq(akx_user_op_destroy(ctx, op), AKX_SUCCESS, "%s", akx_last_error());
}
