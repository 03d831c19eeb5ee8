/* libakx_dist under mpirun (tests/dist/CMakeLists.txt runs it on 1 to 4 ranks): every rank
 * builds the same global 3-d array from one formula, holds its own shard along split_dim
 * (uneven, and empty on rank 1 when there are 3 ranks or more) in a C, Fortran or strided
 * layout, and checks what the four families give it against a host reference over the global
 * array computed here:
 * - int64: exact equality (ADD, MIN, MAX, XOR; init; exclusive scans);
 * - float32: close to a double reference, bitwise identical across three runs and, for the
 *   reductions every rank receives whole, across ranks;
 * - every split_dim of the 3-d array, the scan along split_dim and along another dim, whole
 *   arrays split in memory order (AKX_DIM_ALL);
 * - ops that read positions (ARGMAX, ARGMIN, a user op whose map weighs by position): the
 *   global positions in the global memory order (akx_reduce_dims_all: among each output's
 *   reduced elements), every split_dim and layout;
 * - a non-commutative user op without identity (affine maps composed, its map reading the
 *   index) scanned along split_dim and over AKX_DIM_ALL: every rank's piece continues the
 *   ranks before it, in order;
 * - bad input on one rank only (a shape mismatch, a wrong dtype, a NULL dst, a user op value
 *   that is none there, an ARGMAX dst of neither int64 nor src's dtype, ranks whose reduced
 *   dims lie in different memory orders): the same status on every rank, the faulty rank
 *   named, nothing written.
 * - the partials' exchange keeps to the stream: no call makes a device-to-device copy or
 *   synchronizes beyond the host round trip MPI needs (one copy of the rank's partials to the
 *   host, one of everyone's back), counted by this program's own akx_memcpy and
 *   akx_synchronize, which stand in for libakx's;
 * A plain MPI program, not Criterion: Criterion forks a process per test, and a fork of an MPI
 * rank cannot take part in its collectives; here every rank runs the same cases in the same
 * order, and a failed check is counted, printed with its rank, and the run goes on (a return
 * from a case would leave the other ranks waiting in a collective). */
#define _GNU_SOURCE /* dlsym's RTLD_NEXT */
#include <dlfcn.h>
#include <math.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "akx.h"
#include "akx_dist.h"

static int rank, nranks, failures;
static akx_context *ctx;
static akx_comm *comm;

static void check(int ok, int line, const char *fmt, ...) {
  if (ok) return;
  ++failures;
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "rank %d/%d, line %d: ", rank, nranks, line);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}
#define CHECK(cond, ...) check((cond) != 0, __LINE__, __VA_ARGS__)
#define CALL(expr)                                                                           \
  do {                                                                                       \
    const akx_status s_ = (expr);                                                            \
    CHECK(s_ == AKX_SUCCESS, "%s = %s: %s", #expr, akx_status_string(s_), akx_last_error()); \
  } while (0)

/* ---- the global array and the shards -------------------------------------------------------- */

enum { ND = 3 };
static const int64_t GSHAPE[ND] = {7, 5, 6};

/* Rank r's range [start, start + n) of a global extent g: uneven weights r + 1, and none for
 * rank 1 when there are at least 3 ranks. */
static void shard(int64_t g, int r, int64_t *start, int64_t *n) {
  int64_t w_before = 0, w_all = 0;
  for (int q = 0; q < nranks; ++q) {
    const int64_t w = (q == 1 && nranks >= 3) ? 0 : q + 1;
    if (q < r) w_before += w;
    w_all += w;
  }
  const int64_t w_me = (r == 1 && nranks >= 3) ? 0 : r + 1;
  *start = g * w_before / w_all;
  *n = g * (w_before + w_me) / w_all - *start;
}

/* The global element at C-order linear index k. int64 values are small (exact sums); float32
 * values are sevenths, whose sums round. */
static double value(akx_dtype t, int64_t k, int seed) {
  const int64_t v = (k * 7919 + seed * 31) % 23 - 11;
  return t == AKX_FLOAT32 ? (double)(float)((double)v / 7.0) : (double)v;
}
static int64_t glinear(const int64_t *idx) { return (idx[0] * GSHAPE[1] + idx[1]) * GSHAPE[2] + idx[2]; }

static void put(akx_dtype t, void *p, double v) {
  if (t == AKX_FLOAT32) *(float *)p = (float)v;
  else if (t == AKX_INT32) *(int32_t *)p = (int32_t)v;
  else *(int64_t *)p = (int64_t)v;
}
static double get(akx_dtype t, const void *p) {
  return t == AKX_FLOAT32 ? *(const float *)p : t == AKX_INT32 ? *(const int32_t *)p : (double)*(const int64_t *)p;
}

enum { LAYOUT_C, LAYOUT_F, LAYOUT_STRIDED, LAYOUTS };
static const char *LAYOUT_NAME[] = {"C", "F", "strided"};

/* A local array: its device buffer, the view over it, and a host copy of the buffer. */
typedef struct {
  akx_array a;
  void *dev, *host;
  size_t bytes;
  int64_t start; /* along split_dim */
} local_array;

/* This rank's shard (global values) of split_dim in a layout; `shape_override` >= 0 replaces
 * the extent of dim (split_dim + 1) % 3 (the bad-input cases). */
static local_array make_local(akx_dtype t, int32_t split, int layout, int seed, int64_t bad_extent) {
  local_array L;
  memset(&L, 0, sizeof L);
  int64_t shape[ND], n;
  memcpy(shape, GSHAPE, sizeof shape);
  shard(GSHAPE[split], rank, &L.start, &n);
  shape[split] = n;
  if (bad_extent >= 0) shape[(split + 1) % ND] = bad_extent;
  /* Strided: every other index of dim 0 of a parent twice as long, dim 1 backwards, dim 2 with
   * one spare column. */
  int64_t pshape[ND] = {shape[0], shape[1], shape[2]};
  if (layout == LAYOUT_STRIDED) pshape[0] *= 2, pshape[2] += 1;
  const int64_t parent = pshape[0] * pshape[1] * pshape[2];
  const size_t es = akx_dtype_size(t);
  L.bytes = (size_t)parent * es;
  L.host = calloc((size_t)parent + 1, es);
  if (layout == LAYOUT_C) L.a = akx_array_c(NULL, t, ND, shape);
  if (layout == LAYOUT_F) L.a = akx_array_f(NULL, t, ND, shape);
  int64_t origin = 0;
  if (layout == LAYOUT_STRIDED) {
    L.a = akx_array_c(NULL, t, ND, shape);
    L.a.strides[0] = 2 * pshape[1] * pshape[2];
    L.a.strides[1] = -pshape[2];
    L.a.strides[2] = 1;
    origin = (pshape[1] - 1) * pshape[2];
  }
  int64_t idx[ND];
  for (idx[0] = 0; idx[0] < shape[0]; ++idx[0])
    for (idx[1] = 0; idx[1] < shape[1]; ++idx[1])
      for (idx[2] = 0; idx[2] < shape[2]; ++idx[2]) {
        int64_t g[ND] = {idx[0], idx[1], idx[2]};
        g[split] += L.start;
        const int64_t off = origin + idx[0] * L.a.strides[0] + idx[1] * L.a.strides[1] + idx[2] * L.a.strides[2];
        put(t, (unsigned char *)L.host + off * (int64_t)es, value(t, glinear(g), seed));
      }
  if (L.bytes) {
    CALL(akx_malloc(ctx, &L.dev, L.bytes));
    CALL(akx_memcpy(ctx, L.dev, L.host, L.bytes, AKX_COPY_HOST_TO_DEVICE));
  }
  L.a.data = L.dev ? (unsigned char *)L.dev + origin * (int64_t)es : NULL;
  return L;
}

static void free_local(local_array *L) {
  if (L->dev) akx_free(ctx, L->dev);
  free(L->host);
  memset(L, 0, sizeof *L);
}

/* The element of a local array at local index idx, read back from the device. */
static double local_at(const local_array *L, const void *host_copy, const int64_t *idx) {
  const int64_t off = ((unsigned char *)L->a.data - (unsigned char *)L->dev) / (int64_t)akx_dtype_size(L->a.dtype) +
                      idx[0] * L->a.strides[0] + idx[1] * L->a.strides[1] + idx[2] * L->a.strides[2];
  return get(L->a.dtype, (const unsigned char *)host_copy + off * (int64_t)akx_dtype_size(L->a.dtype));
}
static void *download(const local_array *L) {
  void *h = calloc(L->bytes + 8, 1);
  if (L->bytes) CALL(akx_memcpy(ctx, h, L->dev, L->bytes, AKX_COPY_DEVICE_TO_HOST));
  return h;
}

static int same_everywhere(const void *bytes, size_t n) {
  unsigned char *all = malloc(n * (size_t)nranks);
  MPI_Allgather(bytes, (int)n, MPI_BYTE, all, (int)n, MPI_BYTE, MPI_COMM_WORLD);
  int same = 1;
  for (int q = 1; q < nranks; ++q) same &= memcmp(all, all + (size_t)q * n, n) == 0;
  free(all);
  return same;
}

/* ---- what libakx_dist asks of the stream ----------------------------------------------------- */
/* These definitions stand in for libakx's: the dynamic linker binds libakx_dist.so's calls to
 * the executable's, which count them and pass them on (dlsym RTLD_NEXT: libakx.so's). Every
 * akx_memcpy synchronizes the context's stream. */
static struct {
  int64_t copies[3]; /* by akx_copy_kind */
  int64_t synchronizes;
} seen;

akx_status akx_memcpy(akx_context *c, void *dst, const void *src, size_t bytes, akx_copy_kind k) {
  static akx_status (*real)(akx_context *, void *, const void *, size_t, akx_copy_kind);
  if (!real) *(void **)&real = dlsym(RTLD_NEXT, "akx_memcpy");
  if ((unsigned)k < 3) ++seen.copies[k];
  return real(c, dst, src, bytes, k);
}

akx_status akx_synchronize(akx_context *c) {
  static akx_status (*real)(akx_context *);
  if (!real) *(void **)&real = dlsym(RTLD_NEXT, "akx_synchronize");
  ++seen.synchronizes;
  return real(c);
}

/* ---- host reference ------------------------------------------------------------------------- */

static double combine(akx_op op, double a, double b) {
  switch (op) {
  case AKX_OP_ADD: return a + b;
  case AKX_OP_MIN: return a < b ? a : b;
  case AKX_OP_MAX: return a > b ? a : b;
  case AKX_OP_XOR: return (double)((int64_t)a ^ (int64_t)b);
  default: return NAN;
  }
}
static double neutral(akx_op op) {
  return op == AKX_OP_MIN ? INFINITY : op == AKX_OP_MAX ? -INFINITY : 0.0;
}
static double close_tol(double want) { return 1e-5 * (1.0 + fabs(want)); }
static int matches(akx_dtype t, double got, double want) {
  return t == AKX_FLOAT32 ? fabs(got - want) <= close_tol(want) : got == want;
}

/* ---- akx_mapreduce_all ---------------------------------------------------------------------- */

static void case_mapreduce(akx_dtype t, akx_op op, int32_t split, int layout, int with_init) {
  local_array L = make_local(t, split, layout, 1, -1);
  const double init = 3;
  double want = with_init ? init : neutral(op);
  for (int64_t k = 0; k < GSHAPE[0] * GSHAPE[1] * GSHAPE[2]; ++k) want = combine(op, want, value(t, k, 1));
  akx_reduce_opts o = akx_reduce_opts_default();
  unsigned char init_bytes[8];
  put(t, init_bytes, init);
  if (with_init) o.init = init_bytes;
  unsigned char runs[3][8];
  for (int run = 0; run < 3; ++run) {
    memset(runs[run], 0, 8);
    CALL(akx_mapreduce_all(comm, &L.a, split, AKX_MAP_IDENTITY, op, &o, runs[run], AKX_HOST));
  }
  const double got = get(t, runs[0]);
  CHECK(matches(t, got, want), "mapreduce_all %s op %d split %d %s init %d: %.9g, want %.9g",
        akx_dtype_name(t), (int)op, (int)split, LAYOUT_NAME[layout], with_init, got, want);
  CHECK(!memcmp(runs[0], runs[1], 8) && !memcmp(runs[0], runs[2], 8),
        "mapreduce_all %s split %d %s: three runs differ", akx_dtype_name(t), (int)split, LAYOUT_NAME[layout]);
  CHECK(same_everywhere(runs[0], 8), "mapreduce_all %s op %d split %d %s: ranks differ",
        akx_dtype_name(t), (int)op, (int)split, LAYOUT_NAME[layout]);
  /* The same into device memory, folded into a previous value. */
  if (op == AKX_OP_ADD && t == AKX_INT64) {
    int64_t prev = 100, *dev = NULL, back = 0;
    CALL(akx_malloc(ctx, (void **)&dev, sizeof *dev));
    CALL(akx_memcpy(ctx, dev, &prev, sizeof prev, AKX_COPY_HOST_TO_DEVICE));
    o.fold = 1;
    CALL(akx_mapreduce_all(comm, &L.a, split, AKX_MAP_IDENTITY, op, &o, dev, AKX_DEVICE));
    CALL(akx_memcpy(ctx, &back, dev, sizeof back, AKX_COPY_DEVICE_TO_HOST));
    CHECK(back == (int64_t)want + 100, "mapreduce_all fold into device: %lld, want %lld",
          (long long)back, (long long)want + 100);
    akx_free(ctx, dev);
  }
  free_local(&L);
}

/* A whole array split in memory order: rank r holds a vector of r * 3 + 1 elements (none on
 * rank 1 with 3 ranks or more), and float ADD's signed zero: a global array of -0.0 alone sums
 * to -0.0, as the single-process call gives, even beside empty shards. */
static void case_mapreduce_dim_all(void) {
  int64_t before = 0, n = (rank == 1 && nranks >= 3) ? 0 : rank * 3 + 1, total = 0;
  for (int q = 0; q < nranks; ++q) {
    const int64_t m = (q == 1 && nranks >= 3) ? 0 : q * 3 + 1;
    if (q < rank) before += m;
    total += m;
  }
  int64_t *h = calloc((size_t)n + 1, sizeof *h), *d = NULL;
  for (int64_t i = 0; i < n; ++i) h[i] = (before + i) * 5 % 13;
  if (n) {
    CALL(akx_malloc(ctx, (void **)&d, (size_t)n * sizeof *h));
    CALL(akx_memcpy(ctx, d, h, (size_t)n * sizeof *h, AKX_COPY_HOST_TO_DEVICE));
  }
  akx_array a = akx_vector(d, AKX_INT64, n);
  int64_t want = 0, got = -1;
  for (int64_t i = 0; i < total; ++i) want ^= i * 5 % 13;
  CALL(akx_mapreduce_all(comm, &a, AKX_DIM_ALL, AKX_MAP_IDENTITY, AKX_OP_XOR, NULL, &got, AKX_HOST));
  CHECK(got == want, "mapreduce_all XOR DIM_ALL: %lld, want %lld", (long long)got, (long long)want);

  /* -0.0 on rank 0 only: the sum is -0.0 (the other ranks hold nothing). */
  float mz = -0.0f, *dz = NULL, sum = 1;
  const int64_t nz = rank == 0 ? 1 : 0;
  if (nz) {
    CALL(akx_malloc(ctx, (void **)&dz, sizeof mz));
    CALL(akx_memcpy(ctx, dz, &mz, sizeof mz, AKX_COPY_HOST_TO_DEVICE));
  }
  akx_array z = akx_vector(dz, AKX_FLOAT32, nz);
  CALL(akx_mapreduce_all(comm, &z, AKX_DIM_ALL, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &sum, AKX_HOST));
  CHECK(sum == 0 && signbit(sum), "sum of [-0.0] split with empty shards: %g (sign %d), want -0.0",
        sum, signbit(sum) != 0);
  /* Every shard empty: MAX without init is refused everywhere; a sum is +0.0. */
  akx_array none = akx_vector(NULL, AKX_FLOAT32, 0);
  float r = 1;
  akx_status s = akx_mapreduce_all(comm, &none, AKX_DIM_ALL, AKX_MAP_IDENTITY, AKX_OP_MAX, NULL, &r, AKX_HOST);
  CHECK(s == AKX_ERROR_INVALID_ARGUMENT && r == 1, "MAX of an empty global array: %s, result %g",
        akx_status_string(s), r);
  CALL(akx_mapreduce_all(comm, &none, AKX_DIM_ALL, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &r, AKX_HOST));
  CHECK(r == 0 && !signbit(r), "sum of an empty global array: %g, want +0.0", r);
  if (dz) akx_free(ctx, dz);
  if (d) akx_free(ctx, d);
  free(h);
}

/* ---- akx_mapreduce_all with ops that read positions ----------------------------------------- */

/* The global position of global index g: memory order, C-like for the C and strided layouts
 * (|strides| decrease with the dim), Fortran for F. */
static int64_t gposition(const int64_t *g, int layout) {
  return layout == LAYOUT_F ? (g[2] * GSHAPE[1] + g[1]) * GSHAPE[0] + g[0] : glinear(g);
}

/* ARGMAX of float32 (values repeat: ties go to the first position in memory order, so every
 * rank's positions must be the global ones) and ARGMIN of int64; the result {int64 index;
 * value} padded to 16 bytes, identical on every rank and over three runs. */
static void case_argminmax(akx_dtype t, akx_op op, int32_t split, int layout) {
  local_array L = make_local(t, split, layout, 10, -1);
  int64_t best = -1;
  double best_v = 0;
  const int64_t n = GSHAPE[0] * GSHAPE[1] * GSHAPE[2];
  for (int64_t pos = 0; pos < n; ++pos) {
    /* the global index of position pos, in the layout's memory order */
    int64_t g[ND];
    if (layout == LAYOUT_F) {
      g[0] = pos % GSHAPE[0], g[1] = pos / GSHAPE[0] % GSHAPE[1], g[2] = pos / (GSHAPE[0] * GSHAPE[1]);
    } else {
      g[2] = pos % GSHAPE[2], g[1] = pos / GSHAPE[2] % GSHAPE[1], g[0] = pos / (GSHAPE[1] * GSHAPE[2]);
    }
    const double v = value(t, glinear(g), 10);
    if (best < 0 || (op == AKX_OP_ARGMAX ? v > best_v : v < best_v)) best = pos, best_v = v;
  }
  unsigned char runs[3][16];
  for (int run = 0; run < 3; ++run) {
    memset(runs[run], 0, 16);
    CALL(akx_mapreduce_all(comm, &L.a, split, AKX_MAP_IDENTITY, op, NULL, runs[run], AKX_HOST));
  }
  int64_t index;
  memcpy(&index, runs[0], 8);
  const double got_v = get(t, runs[0] + 8);
  CHECK(index == best && got_v == best_v, "mapreduce_all %s %s split %d %s: (%lld, %g), want (%lld, %g)",
        op == AKX_OP_ARGMAX ? "ARGMAX" : "ARGMIN", akx_dtype_name(t), (int)split, LAYOUT_NAME[layout],
        (long long)index, got_v, (long long)best, best_v);
  CHECK(!memcmp(runs[0], runs[1], 16) && !memcmp(runs[0], runs[2], 16), "ARG split %d %s: runs differ",
        (int)split, LAYOUT_NAME[layout]);
  CHECK(same_everywhere(runs[0], 16), "ARG split %d %s: ranks differ", (int)split, LAYOUT_NAME[layout]);
  free_local(&L);
}

/* A user op whose map weighs each element by its global position (exact in double: small
 * integers), with init and with fold into a device result. */
static const char WEIGHTED_SRC[] =
    "AKX_HD double w_add(double a, double b) { return a + b; }\n"
    "AKX_HD double w_zero() { return 0.0; }\n"
    "template <class S> AKX_HD double w_map(S x, int64_t i) { return (double)x * (double)(i % 5 + 1) + (double)i; }\n";
static akx_op weighted_op;

static void case_mapreduce_user(int32_t split, int layout) {
  local_array L = make_local(AKX_INT64, split, layout, 11, -1);
  double want = 10; /* init */
  int64_t g[ND];
  for (g[0] = 0; g[0] < GSHAPE[0]; ++g[0])
    for (g[1] = 0; g[1] < GSHAPE[1]; ++g[1])
      for (g[2] = 0; g[2] < GSHAPE[2]; ++g[2]) {
        const int64_t i = gposition(g, layout);
        want += value(AKX_INT64, glinear(g), 11) * (double)(i % 5 + 1) + (double)i;
      }
  const double init = 10;
  akx_reduce_opts o = akx_reduce_opts_default();
  o.init = &init;
  double got = -1;
  CALL(akx_mapreduce_all(comm, &L.a, split, AKX_MAP_IDENTITY, weighted_op, &o, &got, AKX_HOST));
  CHECK(got == want, "mapreduce_all weighted user op split %d %s: %.17g, want %.17g", (int)split,
        LAYOUT_NAME[layout], got, want);
  /* fold into a device result holding 1 */
  double *dev = NULL, one = 1, back = 0;
  CALL(akx_malloc(ctx, (void **)&dev, sizeof *dev));
  CALL(akx_memcpy(ctx, dev, &one, sizeof one, AKX_COPY_HOST_TO_DEVICE));
  o.init = NULL;
  o.fold = 1;
  CALL(akx_mapreduce_all(comm, &L.a, split, AKX_MAP_IDENTITY, weighted_op, &o, dev, AKX_DEVICE));
  CALL(akx_memcpy(ctx, &back, dev, sizeof back, AKX_COPY_DEVICE_TO_HOST));
  CHECK(back == want - 10 + 1, "mapreduce_all weighted user op, fold into device: %.17g, want %.17g", back,
        want - 10 + 1);
  akx_free(ctx, dev);
  free_local(&L);
}

/* ---- akx_reduce_dims_all -------------------------------------------------------------------- */

/* Three calls of akx_reduce_dims_all into dst (bytes at dev), each run's bytes to runs[run]
 * (freed by dims_runs_agree). */
static void dims_three_runs(const akx_array *dst, const local_array *L, int32_t split, akx_op op,
                            const akx_reduce_opts *o, const void *dev, size_t bytes, unsigned char **runs) {
  for (int run = 0; run < 3; ++run) {
    runs[run] = calloc(bytes + 8, 1);
    CALL(akx_reduce_dims_all(comm, dst, &L->a, split, AKX_MAP_IDENTITY, op, o));
    if (bytes) CALL(akx_memcpy(ctx, runs[run], dev, bytes, AKX_COPY_DEVICE_TO_HOST));
  }
}
/* The three runs gave the same bits, and (split_dim reduced) so did every rank. */
static void dims_runs_agree(unsigned char **runs, size_t bytes, int split_reduced, const char *what) {
  CHECK(!memcmp(runs[0], runs[1], bytes) && !memcmp(runs[0], runs[2], bytes), "%s: three runs differ", what);
  if (split_reduced) CHECK(same_everywhere(runs[0], bytes), "%s: ranks differ", what);
  for (int run = 0; run < 3; ++run) free(runs[run]);
}
/* Whether global index g is one of output oi's elements (mask: the reduced dims; this rank's
 * slice starts at `start` along a kept split_dim). */
static int maps_to(const int64_t *g, const int64_t *oi, unsigned mask, int32_t split, int64_t start) {
  int in = 1;
  for (int d = 0; d < ND; ++d)
    if (!((mask >> d) & 1)) in &= g[d] == (d == split ? oi[d] + start : oi[d]);
  return in;
}

/* dims reduced: the bits of `mask`; split_dim reduced or kept as the mask says. dst is C order
 * over the local shape with 1 in the reduced dims (the rank's slice when split_dim is kept). */
static void case_reduce_dims(akx_dtype t, akx_op op, int32_t split, int layout, unsigned mask,
                             int with_init) {
  local_array L = make_local(t, split, layout, 2, -1);
  const int split_reduced = (mask >> split) & 1;
  int64_t dshape[ND];
  for (int d = 0; d < ND; ++d) dshape[d] = ((mask >> d) & 1) ? 1 : L.a.shape[d];
  const int64_t nout = dshape[0] * dshape[1] * dshape[2];
  const akx_dtype dt = t;
  void *dev = NULL;
  const size_t bytes = (size_t)nout * akx_dtype_size(dt);
  if (bytes) CALL(akx_malloc(ctx, &dev, bytes));
  akx_array dst = akx_array_c(dev, dt, ND, dshape);
  akx_reduce_opts o = akx_reduce_opts_default();
  unsigned char init_bytes[8];
  put(t, init_bytes, -2);
  if (with_init) o.init = init_bytes;
  unsigned char *runs[3];
  dims_three_runs(&dst, &L, split, op, &o, dev, bytes, runs);
  /* The reference: each output over the global array's elements that map to it. */
  int bad = 0;
  int64_t o_idx[ND];
  for (o_idx[0] = 0; o_idx[0] < dshape[0]; ++o_idx[0])
    for (o_idx[1] = 0; o_idx[1] < dshape[1]; ++o_idx[1])
      for (o_idx[2] = 0; o_idx[2] < dshape[2]; ++o_idx[2]) {
        double want = with_init ? -2 : neutral(op);
        int64_t g[ND];
        for (g[0] = 0; g[0] < GSHAPE[0]; ++g[0])
          for (g[1] = 0; g[1] < GSHAPE[1]; ++g[1])
            for (g[2] = 0; g[2] < GSHAPE[2]; ++g[2])
              if (maps_to(g, o_idx, mask, split, L.start)) want = combine(op, want, value(t, glinear(g), 2));
        const int64_t k = (o_idx[0] * dshape[1] + o_idx[1]) * dshape[2] + o_idx[2];
        const double got = get(dt, runs[0] + k * (int64_t)akx_dtype_size(dt));
        if (!matches(t, got, want) && bad++ < 3)
          CHECK(0, "reduce_dims_all %s op %d split %d (%s) %s mask %u: output %lld is %.9g, want %.9g",
                akx_dtype_name(t), (int)op, (int)split, split_reduced ? "reduced" : "kept",
                LAYOUT_NAME[layout], mask, (long long)k, got, want);
      }
  char what[128];
  snprintf(what, sizeof what, "reduce_dims_all %s op %d split %d %s mask %u", akx_dtype_name(t), (int)op,
           (int)split, LAYOUT_NAME[layout], mask);
  dims_runs_agree(runs, bytes, split_reduced, what);
  if (dev) akx_free(ctx, dev);
  free_local(&L);
}

/* Ops that read positions along dims: each output's reduced elements numbered in the global
 * array's memory order over the reduced dims (C-like for the C and strided layouts, Fortran for
 * F). ARGMAX of float32 (values repeat: the first position wins) and ARGMIN of int64 into int64
 * positions, and the weighted user op (with init) into float64; identical on every rank (a
 * reduced split_dim) and over three runs. */
static void case_reduce_dims_positions(akx_dtype t, akx_op op, int32_t split, int layout, unsigned mask) {
  local_array L = make_local(t, split, layout, 12, -1);
  const int weighted = op == weighted_op;
  const akx_dtype dt = weighted ? AKX_FLOAT64 : AKX_INT64;
  int64_t dshape[ND];
  for (int d = 0; d < ND; ++d) dshape[d] = ((mask >> d) & 1) ? 1 : L.a.shape[d];
  const int64_t nout = dshape[0] * dshape[1] * dshape[2];
  const size_t bytes = (size_t)nout * 8;
  void *dev = NULL;
  if (bytes) CALL(akx_malloc(ctx, &dev, bytes));
  /* dst in Fortran order when src is C: its outputs pair up by index, not by memory. */
  akx_array dst = layout == LAYOUT_C ? akx_array_f(dev, dt, ND, dshape) : akx_array_c(dev, dt, ND, dshape);
  const double init = 10;
  akx_reduce_opts o = akx_reduce_opts_default();
  if (weighted) o.init = &init;
  unsigned char *runs[3];
  dims_three_runs(&dst, &L, split, op, &o, dev, bytes, runs);
  int bad = 0;
  int64_t oi[ND];
  for (oi[0] = 0; oi[0] < dshape[0]; ++oi[0])
    for (oi[1] = 0; oi[1] < dshape[1]; ++oi[1])
      for (oi[2] = 0; oi[2] < dshape[2]; ++oi[2]) {
        double want = weighted ? init : -1, best = 0;
        int64_t g[ND];
        for (g[0] = 0; g[0] < GSHAPE[0]; ++g[0])
          for (g[1] = 0; g[1] < GSHAPE[1]; ++g[1])
            for (g[2] = 0; g[2] < GSHAPE[2]; ++g[2]) {
              if (!maps_to(g, oi, mask, split, L.start)) continue;
              int64_t pos = 0;
              for (int k = 0; k < ND; ++k) {
                const int d = layout == LAYOUT_F ? ND - 1 - k : k;
                if ((mask >> d) & 1) pos = pos * GSHAPE[d] + g[d];
              }
              const double v = value(t, glinear(g), 12);
              if (weighted) want += v * (double)(pos % 5 + 1) + (double)pos;
              else if (want < 0 || (op == AKX_OP_ARGMAX ? v > best : v < best) || (v == best && pos < want))
                want = (double)pos, best = v;
            }
        /* dst's element at oi, in its own layout */
        const int64_t k = layout == LAYOUT_C ? (oi[2] * dshape[1] + oi[1]) * dshape[0] + oi[0]
                                             : (oi[0] * dshape[1] + oi[1]) * dshape[2] + oi[2];
        double got;
        if (weighted) memcpy(&got, runs[0] + k * 8, 8);
        else {
          int64_t gi;
          memcpy(&gi, runs[0] + k * 8, 8);
          got = (double)gi;
        }
        if (got != want && bad++ < 3)
          CHECK(0, "reduce_dims_all op %d %s split %d %s mask %u: output (%lld, %lld, %lld) is %.17g, want %.17g",
                (int)op, akx_dtype_name(t), (int)split, LAYOUT_NAME[layout], mask, (long long)oi[0],
                (long long)oi[1], (long long)oi[2], got, want);
      }
  char what[128];
  snprintf(what, sizeof what, "reduce_dims_all op %d %s split %d %s mask %u", (int)op, akx_dtype_name(t),
           (int)split, LAYOUT_NAME[layout], mask);
  dims_runs_agree(runs, bytes, (mask >> split) & 1, what);
  if (dev) akx_free(ctx, dev);
  free_local(&L);
}

/* ---- akx_scan_all --------------------------------------------------------------------------- */

/* The scan of the global array along dim, compared on this rank's slice; dst is a fresh C-order
 * array (or src itself: in place). */
static void case_scan(akx_dtype t, akx_op op, int32_t split, int32_t dim, int layout, int exclusive,
                      int with_init, int in_place) {
  local_array L = make_local(t, split, layout, 3, -1);
  local_array D = L;
  if (!in_place) {
    D = make_local(t, split, LAYOUT_C, 4, -1); /* overwritten */
  }
  akx_scan_opts o = akx_scan_opts_default();
  o.exclusive = exclusive;
  unsigned char init_bytes[8];
  put(t, init_bytes, 5);
  if (with_init) o.init = init_bytes;
  void *runs[3];
  for (int run = 0; run < 3; ++run) {
    if (in_place && L.bytes) /* each run from the same data */
      CALL(akx_memcpy(ctx, L.dev, L.host, L.bytes, AKX_COPY_HOST_TO_DEVICE));
    CALL(akx_scan_all(comm, &D.a, &L.a, split, op, dim, &o));
    runs[run] = download(&D);
  }
  int bad = 0;
  int64_t idx[ND];
  for (idx[0] = 0; idx[0] < D.a.shape[0]; ++idx[0])
    for (idx[1] = 0; idx[1] < D.a.shape[1]; ++idx[1])
      for (idx[2] = 0; idx[2] < D.a.shape[2]; ++idx[2]) {
        int64_t g[ND] = {idx[0], idx[1], idx[2]};
        g[split] += L.start;
        const int64_t upto = g[dim];
        double want = with_init ? 5 : neutral(op);
        for (int64_t k = 0; k < upto + (exclusive ? 0 : 1); ++k) {
          g[dim] = k;
          want = combine(op, want, value(t, glinear(g), 3));
        }
        const double got = local_at(&D, runs[0], idx);
        if (!matches(t, got, want) && bad++ < 3)
          CHECK(0, "scan_all %s op %d split %d dim %d %s excl %d init %d in place %d: at (%lld,%lld,%lld) "
                "%.9g, want %.9g", akx_dtype_name(t), (int)op, (int)split, (int)dim, LAYOUT_NAME[layout],
                exclusive, with_init, in_place, (long long)idx[0], (long long)idx[1], (long long)idx[2],
                got, want);
      }
  CHECK(!memcmp(runs[0], runs[1], D.bytes) && !memcmp(runs[0], runs[2], D.bytes),
        "scan_all %s split %d dim %d %s: three runs differ", akx_dtype_name(t), (int)split, (int)dim,
        LAYOUT_NAME[layout]);
  for (int run = 0; run < 3; ++run) free(runs[run]);
  if (!in_place) free_local(&D);
  free_local(&L);
}

/* AKX_DIM_ALL: C-order 2-d shards of 2 x (r + 1) columns... one after the other in memory
 * order: a cumulative sum of int64 with an exclusive start. */
static void case_scan_dim_all(int exclusive) {
  int64_t before = 0, rows = (rank == 1 && nranks >= 3) ? 0 : 2, cols = rank + 1;
  for (int q = 0; q < rank; ++q) before += ((q == 1 && nranks >= 3) ? 0 : 2) * (q + 1);
  const int64_t n = rows * cols, shape[2] = {rows, cols};
  int64_t *h = calloc((size_t)n + 1, sizeof *h), *d = NULL, *back = calloc((size_t)n + 1, sizeof *h);
  for (int64_t i = 0; i < n; ++i) h[i] = (before + i) % 7 - 2;
  if (n) {
    CALL(akx_malloc(ctx, (void **)&d, (size_t)n * sizeof *h));
    CALL(akx_memcpy(ctx, d, h, (size_t)n * sizeof *h, AKX_COPY_HOST_TO_DEVICE));
  }
  akx_array a = akx_array_c(d, AKX_INT64, 2, shape);
  akx_scan_opts o = akx_scan_opts_default();
  o.exclusive = exclusive;
  CALL(akx_scan_all(comm, &a, &a, AKX_DIM_ALL, AKX_OP_ADD, AKX_DIM_ALL, &o));
  if (n) CALL(akx_memcpy(ctx, back, d, (size_t)n * sizeof *h, AKX_COPY_DEVICE_TO_HOST));
  int64_t run = 0;
  for (int64_t i = 0; i < before; ++i) run += i % 7 - 2;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t incl = run + h[i];
    CHECK(back[i] == (exclusive ? run : incl), "scan_all DIM_ALL excl %d: element %lld is %lld, want %lld",
          exclusive, (long long)i, (long long)back[i], (long long)(exclusive ? run : incl));
    run = incl;
  }
  if (d) akx_free(ctx, d);
  free(h);
  free(back);
}

/* ---- akx_scan_all with a user op: non-commutative, no identity, a map that reads its index ---- */

/* x -> a*x + b maps composed in order (f first, then g): the scan of a sequence of them is the
 * composition of its prefix, which changes when two elements swap. The map reads the element's
 * global index along the scanned dim, which each rank's piece must see. */
static const char AFFINE_SRC[] =
    "struct Affine { double a, b; };\n"
    "AKX_HD Affine af_then(Affine f, Affine g) {\n"
    "  Affine r; r.a = f.a * g.a; r.b = f.b * g.a + g.b; return r;\n"
    "}\n"
    "template <class S> AKX_HD Affine af_map(S x, int64_t i) {\n"
    "  Affine r; r.a = 1.0 + (double)x * 0.01; r.b = (double)x + 0.001 * (double)i; return r;\n"
    "}\n"
    "template <class D> AKX_HD D af_at_zero(Affine f) { return (D)f.b; }\n";
typedef struct {
  double a, b;
} affine;
static akx_op affine_op;

static affine affine_of(double x, int64_t i) { return (affine){1.0 + x * 0.01, x + 0.001 * (double)i}; }
static affine affine_then(affine f, affine g) { return (affine){f.a * g.a, f.b * g.a + g.b}; }

/* The scan of the global lines along split_dim into float64, on this rank's slice: compared with
 * the sequential composition over the global line (rounding of the op's own arithmetic only),
 * bitwise identical over three runs. */
static void case_scan_user(int32_t split, int layout, int exclusive, int with_init) {
  local_array L = make_local(AKX_FLOAT32, split, layout, 8, -1);
  int64_t dshape[ND];
  memcpy(dshape, L.a.shape, sizeof dshape);
  const int64_t n = dshape[0] * dshape[1] * dshape[2];
  void *dev = NULL;
  if (n) CALL(akx_malloc(ctx, &dev, (size_t)n * sizeof(double)));
  const akx_array dst = akx_array_c(dev, AKX_FLOAT64, ND, dshape);
  const affine init = exclusive ? (affine){1, 0} : (affine){2, 1};
  akx_scan_opts o = akx_scan_opts_default();
  o.exclusive = exclusive;
  if (with_init) o.init = &init;
  double *runs[3];
  for (int run = 0; run < 3; ++run) {
    runs[run] = calloc((size_t)n + 1, sizeof(double));
    CALL(akx_scan_all(comm, &dst, &L.a, split, affine_op, split, &o));
    if (n) CALL(akx_memcpy(ctx, runs[run], dev, (size_t)n * sizeof(double), AKX_COPY_DEVICE_TO_HOST));
  }
  int bad = 0;
  int64_t idx[ND];
  for (idx[0] = 0; idx[0] < dshape[0]; ++idx[0])
    for (idx[1] = 0; idx[1] < dshape[1]; ++idx[1])
      for (idx[2] = 0; idx[2] < dshape[2]; ++idx[2]) {
        int64_t g[ND] = {idx[0], idx[1], idx[2]};
        g[split] += L.start;
        const int64_t upto = g[split] + (exclusive ? 0 : 1);
        affine acc = with_init ? init : (affine){1, 0};
        int have = with_init;
        for (int64_t k = 0; k < upto; ++k) {
          g[split] = k;
          const affine f = affine_of(value(AKX_FLOAT32, glinear(g), 8), k);
          acc = have ? affine_then(acc, f) : f;
          have = 1;
        }
        const double want = acc.b, got = runs[0][(idx[0] * dshape[1] + idx[1]) * dshape[2] + idx[2]];
        if (!(fabs(got - want) <= 1e-9 * (1 + fabs(want))) && bad++ < 3)
          CHECK(0, "scan_all user op split %d %s excl %d init %d: at (%lld,%lld,%lld) %.17g, want %.17g",
                (int)split, LAYOUT_NAME[layout], exclusive, with_init, (long long)idx[0],
                (long long)idx[1], (long long)idx[2], got, want);
      }
  CHECK(!memcmp(runs[0], runs[1], (size_t)n * sizeof(double)) &&
            !memcmp(runs[0], runs[2], (size_t)n * sizeof(double)),
        "scan_all user op split %d %s: three runs differ", (int)split, LAYOUT_NAME[layout]);
  for (int run = 0; run < 3; ++run) free(runs[run]);
  if (dev) akx_free(ctx, dev);
  free_local(&L);
}

/* AKX_DIM_ALL: int32 vectors of 3r + 2 elements (none on rank 1 with 3 ranks or more) one after
 * the other, the map's index the global position. */
static void case_scan_user_dim_all(void) {
  int64_t before = 0, total = 0;
  const int64_t n = (rank == 1 && nranks >= 3) ? 0 : rank * 3 + 2;
  for (int q = 0; q < nranks; ++q) {
    const int64_t m = (q == 1 && nranks >= 3) ? 0 : q * 3 + 2;
    if (q < rank) before += m;
    total += m;
  }
  int32_t *h = calloc((size_t)total + 1, sizeof *h), *d = NULL;
  for (int64_t i = 0; i < total; ++i) h[i] = (int32_t)(i * 5 % 11) - 5;
  double *got = calloc((size_t)n + 1, sizeof *got), *out = NULL;
  if (n) {
    CALL(akx_malloc(ctx, (void **)&d, (size_t)n * sizeof *h));
    CALL(akx_malloc(ctx, (void **)&out, (size_t)n * sizeof *got));
    CALL(akx_memcpy(ctx, d, h + before, (size_t)n * sizeof *h, AKX_COPY_HOST_TO_DEVICE));
  }
  const akx_array a = akx_vector(d, AKX_INT32, n), r = akx_vector(out, AKX_FLOAT64, n);
  CALL(akx_scan_all(comm, &r, &a, AKX_DIM_ALL, affine_op, AKX_DIM_ALL, NULL));
  if (n) CALL(akx_memcpy(ctx, got, out, (size_t)n * sizeof *got, AKX_COPY_DEVICE_TO_HOST));
  affine acc = {1, 0};
  for (int64_t i = 0; i < before + n; ++i) {
    const affine f = affine_of(h[i], i);
    acc = i == 0 ? f : affine_then(acc, f);
    if (i >= before)
      CHECK(fabs(got[i - before] - acc.b) <= 1e-9 * (1 + fabs(acc.b)),
            "scan_all user op DIM_ALL: element %lld is %.17g, want %.17g", (long long)i, got[i - before], acc.b);
  }
  if (d) akx_free(ctx, d);
  if (out) akx_free(ctx, out);
  free(h);
  free(got);
}

/* ---- akx_findall_all ------------------------------------------------------------------------ */

static void case_findall(int32_t split, int layout) {
  local_array L = make_local(AKX_INT64, split, layout, 5, -1);
  /* Nonzero where the value is > 4 (about a quarter): zero the rest on the host copy and
   * upload again. */
  const size_t es = 8;
  int64_t idx[ND];
  const int64_t origin = ((unsigned char *)L.a.data - (unsigned char *)L.dev) / (int64_t)es;
  for (idx[0] = 0; idx[0] < L.a.shape[0]; ++idx[0])
    for (idx[1] = 0; idx[1] < L.a.shape[1]; ++idx[1])
      for (idx[2] = 0; idx[2] < L.a.shape[2]; ++idx[2]) {
        int64_t *p = (int64_t *)L.host + origin + idx[0] * L.a.strides[0] + idx[1] * L.a.strides[1] +
                     idx[2] * L.a.strides[2];
        if (*p <= 4) *p = 0;
      }
  if (L.bytes) CALL(akx_memcpy(ctx, L.dev, L.host, L.bytes, AKX_COPY_HOST_TO_DEVICE));
  /* The global memory order: the layouts order dims as C (strided: |strides| C-like) or F. */
  const int fortran = layout == LAYOUT_F;
  int64_t want_total = 0, want_mine = 0, *want = calloc(256, sizeof *want);
  int64_t g[ND];
  for (g[0] = 0; g[0] < GSHAPE[0]; ++g[0])
    for (g[1] = 0; g[1] < GSHAPE[1]; ++g[1])
      for (g[2] = 0; g[2] < GSHAPE[2]; ++g[2]) {
        if (value(AKX_INT64, glinear(g), 5) <= 4) continue;
        ++want_total;
        if (g[split] < L.start || g[split] >= L.start + L.a.shape[split]) continue;
        const int64_t pos = fortran ? (g[2] * GSHAPE[1] + g[1]) * GSHAPE[0] + g[0] : glinear(g);
        want[want_mine++] = pos;
      }
  /* Memory order = ascending positions. */
  for (int64_t i = 1; i < want_mine; ++i)
    for (int64_t j = i; j > 0 && want[j - 1] > want[j]; --j) {
      const int64_t t = want[j];
      want[j] = want[j - 1];
      want[j - 1] = t;
    }
  int64_t *dev = NULL, got[256], count = -1, total = -1;
  CALL(akx_malloc(ctx, (void **)&dev, 256 * sizeof *dev));
  akx_array ind = akx_vector(dev, AKX_INT64, 256);
  CALL(akx_findall_all(comm, &L.a, split, &ind, &count, &total));
  CHECK(count == want_mine && total == want_total, "findall_all split %d %s: count %lld total %lld, "
        "want %lld %lld", (int)split, LAYOUT_NAME[layout], (long long)count, (long long)total,
        (long long)want_mine, (long long)want_total);
  if (count == want_mine && count > 0) {
    CALL(akx_memcpy(ctx, got, dev, (size_t)count * sizeof *got, AKX_COPY_DEVICE_TO_HOST));
    for (int64_t i = 0; i < count; ++i)
      if (got[i] != want[i]) {
        CHECK(0, "findall_all split %d %s: position %lld is %lld, want %lld", (int)split,
              LAYOUT_NAME[layout], (long long)i, (long long)got[i], (long long)want[i]);
        break;
      }
  }
  /* A capacity of 1 on the last rank: every rank hears of it. */
  ind.shape[0] = rank == nranks - 1 ? 1 : 256;
  const akx_status s = akx_findall_all(comm, &L.a, split, &ind, &count, &total);
  const int overflow = (rank == nranks - 1 ? count : 0) > 1;
  int any = 0;
  MPI_Allreduce(&overflow, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  CHECK(s == (any ? AKX_ERROR_OUTPUT_TOO_SMALL : AKX_SUCCESS) && total == want_total,
        "findall_all with a small capacity on rank %d: %s (total %lld): %s", nranks - 1,
        akx_status_string(s), (long long)total, akx_last_error());
  akx_free(ctx, dev);
  free(want);
  free_local(&L);
}

/* AKX_DIM_ALL puts each local array, in its own memory order, after the ranks' before it: the
 * ranks' layouts need not agree (C on even ranks, Fortran on odd ones, 2 x (r + 2) each). */
static void case_findall_dim_all_layouts(void) {
  int64_t before = 0;
  for (int q = 0; q < rank; ++q) before += 2 * (q + 2);
  const int64_t shape[2] = {2, rank + 2}, n = 2 * (rank + 2);
  const int fortran = rank % 2;
  int64_t *h = calloc((size_t)n, sizeof *h), *d = NULL, *dind = NULL, want[64], got[64];
  int64_t want_n = 0, total_want = 0;
  for (int q = 0; q < nranks; ++q) {
    int64_t b = 0;
    for (int k = 0; k < q; ++k) b += 2 * (k + 2);
    for (int64_t m = 0; m < 2 * (q + 2); ++m) total_want += (b + m) % 3 != 0;
  }
  /* Memory position m of this rank holds global position before + m; nonzero unless that is a
   * multiple of 3. */
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < shape[1]; ++j) {
      const int64_t m = fortran ? j * 2 + i : i * shape[1] + j;
      h[m] = (before + m) % 3 != 0 ? before + m + 1 : 0;
    }
  for (int64_t m = 0; m < n; ++m)
    if (h[m]) want[want_n++] = before + m;
  CALL(akx_malloc(ctx, (void **)&d, (size_t)n * sizeof *h));
  CALL(akx_malloc(ctx, (void **)&dind, 64 * sizeof *h));
  CALL(akx_memcpy(ctx, d, h, (size_t)n * sizeof *h, AKX_COPY_HOST_TO_DEVICE));
  const akx_array a = fortran ? akx_array_f(d, AKX_INT64, 2, shape) : akx_array_c(d, AKX_INT64, 2, shape);
  const akx_array ind = akx_vector(dind, AKX_INT64, 64);
  int64_t count = -1, total = -1;
  CALL(akx_findall_all(comm, &a, AKX_DIM_ALL, &ind, &count, &total));
  CHECK(count == want_n && total == total_want, "findall_all DIM_ALL, C and F ranks: count %lld total %lld, "
        "want %lld %lld", (long long)count, (long long)total, (long long)want_n, (long long)total_want);
  if (count == want_n && count > 0) {
    CALL(akx_memcpy(ctx, got, dind, (size_t)count * sizeof *got, AKX_COPY_DEVICE_TO_HOST));
    for (int64_t k = 0; k < count; ++k)
      if (got[k] != want[k]) {
        CHECK(0, "findall_all DIM_ALL, C and F ranks: position %lld is %lld, want %lld", (long long)k,
              (long long)got[k], (long long)want[k]);
        break;
      }
  }
  akx_free(ctx, d);
  akx_free(ctx, dind);
  free(h);
}

/* ---- bad input on one rank ------------------------------------------------------------------ */

/* ---- the partials' exchange stays on the stream ---------------------------------------------- */

/* One call between copies_begin and copies_end: the copies it made, beside the exchanges of
 * partials (the engine's collectives less the call's one agreement). Over MPI the partials go
 * through the host: per exchange one copy there (it waits for the rank's partial) and one back;
 * never a device-to-device copy (the NCCL path's exchange is all on the stream), never an
 * akx_synchronize. */
static akx_comm_counters_t counters_before;
static void copies_begin(void) {
  memset(&seen, 0, sizeof seen);
  CALL(akx_comm_counters(comm, &counters_before));
}
static void copies_end(const char *what) {
  akx_comm_counters_t c;
  CALL(akx_comm_counters(comm, &c));
  const uint64_t calls = c.calls - counters_before.calls;
  const int64_t exchanges = (int64_t)(c.exchanges - counters_before.exchanges - calls);
  CHECK(calls == 1 && exchanges == 1, "%s: %llu agreements and %lld exchanges of partials, want 1 and 1", what,
        (unsigned long long)calls, (long long)exchanges);
  CHECK(seen.copies[AKX_COPY_DEVICE_TO_DEVICE] == 0, "%s: %lld device-to-device copies (each synchronizes)", what,
        (long long)seen.copies[AKX_COPY_DEVICE_TO_DEVICE]);
  CHECK(seen.synchronizes == 0, "%s: %lld synchronizes", what, (long long)seen.synchronizes);
  CHECK(seen.copies[AKX_COPY_DEVICE_TO_HOST] == exchanges && seen.copies[AKX_COPY_HOST_TO_DEVICE] == exchanges,
        "%s: %lld copies to the host and %lld back for %lld exchanges, want one each way per exchange", what,
        (long long)seen.copies[AKX_COPY_DEVICE_TO_HOST], (long long)seen.copies[AKX_COPY_HOST_TO_DEVICE],
        (long long)exchanges);
}

/* The reductions through their built-in path (each rank's partial in the communicator's slot)
 * and through the pieces' exchange (ARGMAX, user ops: the partial where libakx left it), into
 * device results, each checked against the same call into a host result; the scans along
 * split_dim, built-in and user op, against the case_scan* references' paths. */
static void case_exchange_copies(void) {
  local_array L = make_local(AKX_FLOAT32, 0, LAYOUT_C, 13, -1);
  void *dev = NULL;
  CALL(akx_malloc(ctx, &dev, 64));
  const struct { akx_op op; int32_t split; const char *what; } reductions[] = {
      {AKX_OP_ADD, 0, "mapreduce_all ADD (the communicator's slot)"},
      {AKX_OP_ARGMAX, 0, "mapreduce_all ARGMAX (a piece's exchange)"},
  };
  for (size_t i = 0; i < sizeof reductions / sizeof reductions[0]; ++i) {
    unsigned char on_host[16] = {0}, from_dev[16] = {0};
    CALL(akx_mapreduce_all(comm, &L.a, reductions[i].split, AKX_MAP_IDENTITY, reductions[i].op, NULL, on_host,
                           AKX_HOST));
    copies_begin();
    CALL(akx_mapreduce_all(comm, &L.a, reductions[i].split, AKX_MAP_IDENTITY, reductions[i].op, NULL, dev,
                           AKX_DEVICE));
    copies_end(reductions[i].what);
    const size_t bytes = reductions[i].op == AKX_OP_ARGMAX ? 16 : 4;
    CALL(akx_memcpy(ctx, from_dev, dev, bytes, AKX_COPY_DEVICE_TO_HOST));
    CHECK(!memcmp(on_host, from_dev, bytes), "%s: the device result differs from the host one", reductions[i].what);
  }

  /* ARGMAX over dims {0, 2} (split_dim 0 reduced: every rank gets the whole dst). */
  int64_t dshape[ND] = {1, GSHAPE[1], 1};
  void *ddev = NULL;
  CALL(akx_malloc(ctx, &ddev, (size_t)GSHAPE[1] * 8));
  const akx_array dst = akx_array_c(ddev, AKX_INT64, ND, dshape);
  copies_begin();
  CALL(akx_reduce_dims_all(comm, &dst, &L.a, 0, AKX_MAP_IDENTITY, AKX_OP_ARGMAX, NULL));
  copies_end("reduce_dims_all ARGMAX (a piece's exchange)");
  akx_free(ctx, ddev);

  /* Scans along split_dim 0 into a float64 copy of the shard's shape. */
  const int64_t n = L.a.shape[0] * L.a.shape[1] * L.a.shape[2];
  void *sdev = NULL;
  if (n) CALL(akx_malloc(ctx, &sdev, (size_t)n * sizeof(double)));
  const akx_array sdst = akx_array_c(sdev, AKX_FLOAT64, ND, L.a.shape);
  copies_begin();
  CALL(akx_scan_all(comm, &sdst, &L.a, 0, AKX_OP_ADD, 0, NULL));
  copies_end("scan_all ADD (the communicator's slot)");
  copies_begin();
  CALL(akx_scan_all(comm, &sdst, &L.a, 0, affine_op, 0, NULL));
  copies_end("scan_all of a user op (a piece's exchange)");
  if (sdev) akx_free(ctx, sdev);
  akx_free(ctx, dev);
  free_local(&L);
}

static void expect_everywhere(akx_status s, akx_status want, int faulty, const char *what) {
  char named[32];
  snprintf(named, sizeof named, "rank %d", faulty);
  CHECK(s == want, "%s: %s, want %s (%s)", what, akx_status_string(s), akx_status_string(want),
        akx_last_error());
  CHECK(strstr(akx_last_error(), named) != NULL, "%s: the sentence does not name %s: %s", what, named,
        akx_last_error());
}

static void case_bad_input(void) {
  const int last = nranks - 1;
  /* A shape mismatch: the last rank's dim (split + 1) is one longer. */
  local_array L = make_local(AKX_INT64, 0, LAYOUT_C, 6, rank == last ? GSHAPE[1] + 1 : -1);
  int64_t result = 77;
  akx_status s = akx_mapreduce_all(comm, &L.a, 0, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &result, AKX_HOST);
  if (nranks > 1) {
    expect_everywhere(s, AKX_ERROR_INVALID_ARGUMENT, last, "mapreduce_all, shape mismatch on the last rank");
    CHECK(result == 77, "mapreduce_all refused but wrote its result");
  }
  free_local(&L);

  /* A wrong dtype on rank 0 (int32 where the others have int64), into a dst that must stay. */
  const akx_dtype t0 = rank == 0 && nranks > 1 ? AKX_INT32 : AKX_INT64;
  L = make_local(t0, 1, LAYOUT_F, 6, -1);
  local_array D = make_local(t0, 1, LAYOUT_C, 7, -1);
  s = akx_scan_all(comm, &D.a, &L.a, 1, AKX_OP_ADD, 1, NULL);
  if (nranks > 1) {
    expect_everywhere(s, AKX_ERROR_INVALID_ARGUMENT, 1, "scan_all, int32 on rank 0");
    void *after = download(&D);
    CHECK(!memcmp(after, D.host, D.bytes), "scan_all refused but wrote dst");
    free(after);
  }
  free_local(&D);
  free_local(&L);

  /* A NULL dst on the last rank. */
  L = make_local(AKX_FLOAT32, 2, LAYOUT_STRIDED, 6, -1);
  int64_t dshape[ND] = {GSHAPE[0], GSHAPE[1], 1};
  void *dev = NULL;
  CALL(akx_malloc(ctx, &dev, (size_t)(GSHAPE[0] * GSHAPE[1]) * sizeof(float)));
  const float canary[1] = {42};
  CALL(akx_memcpy(ctx, dev, canary, sizeof canary, AKX_COPY_HOST_TO_DEVICE));
  akx_array dst = akx_array_c(dev, AKX_FLOAT32, ND, dshape);
  s = akx_reduce_dims_all(comm, rank == last ? NULL : &dst, &L.a, 2, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL);
  expect_everywhere(s, AKX_ERROR_INVALID_ARGUMENT, last, "reduce_dims_all, NULL dst on the last rank");
  float first = 0;
  CALL(akx_memcpy(ctx, &first, dev, sizeof first, AKX_COPY_DEVICE_TO_HOST));
  CHECK(first == 42, "reduce_dims_all refused but wrote dst");
  /* A user op value that is not one on the last rank (refused there, so everywhere). */
  if (nranks > 1) {
    local_array F = make_local(AKX_FLOAT64, 2, LAYOUT_C, 9, -1);
    s = akx_scan_all(comm, &F.a, &L.a, 2, rank == last ? (akx_op)(AKX_USER_OP_FIRST + 999) : affine_op, 2, NULL);
    expect_everywhere(s, AKX_ERROR_INVALID_ARGUMENT, last, "scan_all, no such user op on the last rank");
    void *after = download(&F);
    CHECK(!memcmp(after, F.host, F.bytes), "scan_all refused a user op but wrote dst");
    free(after);
    free_local(&F);
  }
  /* ARGMAX into an int32 dst (it stores int64 positions or src's float32 values): refused on
   * every rank. */
  const akx_array dst32 = akx_array_c(dev, AKX_INT32, ND, dshape);
  s = akx_reduce_dims_all(comm, &dst32, &L.a, 2, AKX_MAP_IDENTITY, AKX_OP_ARGMAX, NULL);
  expect_everywhere(s, AKX_ERROR_UNSUPPORTED, 0, "reduce_dims_all ARGMAX into int32");
  CALL(akx_memcpy(ctx, &first, dev, sizeof first, AKX_COPY_DEVICE_TO_HOST));
  CHECK(first == 42, "reduce_dims_all refused ARGMAX but wrote dst");
  akx_free(ctx, dev);
  free_local(&L);
  /* ARGMAX over every dim, the reference rank (the longest shard along dim 0) in Fortran order
   * and the others in C: their reduced dims 1 and 2 come in another memory order, so the global
   * positions have none; refused everywhere, naming the first other rank with elements. */
  if (nranks > 1) {
    int ref = 0, named = -1;
    int64_t ext[8], start;
    for (int q = 0; q < nranks; ++q) {
      shard(GSHAPE[0], q, &start, &ext[q]);
      if (ext[q] > ext[ref]) ref = q;
    }
    for (int q = 0; q < nranks && named < 0; ++q)
      if (q != ref && ext[q] > 0) named = q;
    L = make_local(AKX_FLOAT32, 0, rank == ref ? LAYOUT_F : LAYOUT_C, 6, -1);
    const int64_t one[ND] = {1, 1, 1};
    int64_t *pos = NULL, canary64 = 42;
    CALL(akx_malloc(ctx, (void **)&pos, sizeof *pos));
    CALL(akx_memcpy(ctx, pos, &canary64, sizeof canary64, AKX_COPY_HOST_TO_DEVICE));
    const akx_array d1 = akx_array_c(pos, AKX_INT64, ND, one);
    s = akx_reduce_dims_all(comm, &d1, &L.a, 0, AKX_MAP_IDENTITY, AKX_OP_ARGMAX, NULL);
    expect_everywhere(s, AKX_ERROR_INVALID_ARGUMENT, named, "reduce_dims_all ARGMAX, orders differ");
    CALL(akx_memcpy(ctx, &canary64, pos, sizeof canary64, AKX_COPY_DEVICE_TO_HOST));
    CHECK(canary64 == 42, "reduce_dims_all refused ARGMAX but wrote dst");
    akx_free(ctx, pos);
    free_local(&L);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  akx_status s = akx_context_create(&ctx, AKX_BACKEND_SIM, 0);
  if (s != AKX_SUCCESS) {
    fprintf(stderr, "rank %d: akx_context_create: %s\n", rank, akx_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Comm world = MPI_COMM_WORLD;
  s = akx_comm_create_mpi(ctx, &world, &comm);
  if (s != AKX_SUCCESS) {
    fprintf(stderr, "rank %d: akx_comm_create_mpi: %s\n", rank, akx_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int r = -1, size = -1;
  CALL(akx_comm_rank(comm, &r, &size));
  CHECK(r == rank && size == nranks, "akx_comm_rank: %d of %d, want %d of %d", r, size, rank, nranks);

  for (int32_t split = 0; split < ND; ++split)
    for (int layout = 0; layout < LAYOUTS; ++layout) {
      case_mapreduce(AKX_INT64, AKX_OP_ADD, split, layout, layout == LAYOUT_F);
      case_mapreduce(AKX_FLOAT32, AKX_OP_ADD, split, layout, 0);
      case_mapreduce(AKX_INT64, layout == LAYOUT_C ? AKX_OP_MIN : AKX_OP_MAX, split, layout, 0);
    }
  case_mapreduce_dim_all();
  const akx_user_op_desc weighted_desc = {WEIGHTED_SRC, "double", "w_add", "w_zero", "w_map", NULL};
  CALL(akx_user_op_create(ctx, &weighted_desc, &weighted_op));
  for (int32_t split = 0; split < ND; ++split)
    for (int layout = 0; layout < LAYOUTS; ++layout) {
      case_argminmax(AKX_FLOAT32, AKX_OP_ARGMAX, split, layout);
      if (layout != LAYOUT_STRIDED) case_argminmax(AKX_INT64, AKX_OP_ARGMIN, split, layout);
      case_mapreduce_user(split, layout);
    }

  for (int32_t split = 0; split < ND; ++split)
    for (int layout = 0; layout < LAYOUTS; ++layout) {
      const unsigned other = 1u << ((split + 1 + layout % 2) % ND);
      case_reduce_dims(AKX_INT64, AKX_OP_ADD, split, layout, (1u << split) | other, layout == LAYOUT_C);
      case_reduce_dims(AKX_FLOAT32, AKX_OP_ADD, split, layout, 1u << split, 0);
      case_reduce_dims(AKX_INT64, AKX_OP_MAX, split, layout, other, 0); /* split kept */
      case_reduce_dims_positions(AKX_FLOAT32, AKX_OP_ARGMAX, split, layout, (1u << split) | other);
      case_reduce_dims_positions(AKX_INT64, AKX_OP_ARGMIN, split, layout, 1u << split);
      case_reduce_dims_positions(AKX_INT64, weighted_op, split, layout, layout == LAYOUT_STRIDED ? other : (1u << split) | other);
    }
  case_reduce_dims_positions(AKX_FLOAT32, AKX_OP_ARGMAX, 1, LAYOUT_F, 7); /* one output */

  for (int32_t split = 0; split < ND; ++split)
    for (int layout = 0; layout < LAYOUTS; ++layout) {
      case_scan(AKX_INT64, AKX_OP_ADD, split, split, layout, layout == LAYOUT_F, layout == LAYOUT_STRIDED, 0);
      case_scan(AKX_FLOAT32, AKX_OP_ADD, split, split, layout, 0, 0, layout == LAYOUT_C);
      case_scan(AKX_INT64, AKX_OP_MIN, split, split, layout, 1, 1, 0); /* exclusive MIN needs init */
    }
  case_scan(AKX_INT64, AKX_OP_ADD, 0, 2, LAYOUT_STRIDED, 0, 0, 0); /* along another dim: local */
  const akx_user_op_desc affine_desc = {AFFINE_SRC, "Affine", "af_then", NULL, "af_map", "af_at_zero"};
  CALL(akx_user_op_create(ctx, &affine_desc, &affine_op));
  for (int32_t split = 0; split < ND; ++split)
    for (int layout = 0; layout < LAYOUTS; ++layout) case_scan_user(split, layout, layout == LAYOUT_F, layout != LAYOUT_C);
  case_scan_user_dim_all();
  case_scan_dim_all(0);
  case_scan_dim_all(1);

  for (int32_t split = 0; split < ND; ++split)
    for (int layout = 0; layout < LAYOUTS; ++layout) case_findall(split, layout);
  case_findall_dim_all_layouts();

  case_exchange_copies();
  case_bad_input();

  akx_comm_counters_t c;
  CALL(akx_comm_counters(comm, &c));
  CHECK(c.calls > 0 && c.bytes_sent > 0, "the counters saw no call");
  int all_failures = 0;
  MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("test_dist on %d ranks: %llu calls, %llu exchanges, %llu bytes sent by rank 0; %d failed "
           "checks\n", nranks, (unsigned long long)c.calls, (unsigned long long)c.exchanges,
           (unsigned long long)c.bytes_sent, all_failures);
  akx_comm_destroy(comm);
  akx_context_destroy(ctx);
  MPI_Finalize();
  return all_failures ? 1 : 0;
}
