/* akx-bench's suites: for each, the cases it plans (a table of specs, plan_add) and how one of
 * them runs (its input, its akx calls and their CUDA peer, through run_and_free). */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "akx_bench.h"

static void plan_scan(void), plan_findall(void), plan_reduce(void), plan_dims(void), plan_segmented(void),
    plan_select(void);
static int run_select_case(akx_context *, const planned_case *);
static int run_segmented_case(akx_context *, const planned_case *);
static int run_scan_case(akx_context *, const planned_case *);
static int run_findall_case(akx_context *, const planned_case *);
static int run_reduce_case(akx_context *, const planned_case *);
static int run_dims_case(akx_context *, const planned_case *);

const suite_def suites[] = {
    {"scan", "inclusive scans, whole and along dims=1 of a matrix: no neutral element\n"
             "           (float32, via akx.cuh), float64, float32, int32 add",
     "scan: inclusive scans, whole and along dims=1 (the columns of a column-major matrix)",
     plan_scan, run_scan_case},
    {"findall", "int64 indices of the nonzero elements of a bool and a float32 vector,\n"
                "           1%, 50% and 99% of them nonzero",
     "findall: int64 indices of the nonzero elements of a bool and a float32 vector, 1%, 50% and 99% nonzero",
     plan_findall, run_findall_case},
    {"reduce", "float32 sums of a whole array: akx_mapreduce to the host and\n"
               "           akx_reduce_dims into one device element + copy back",
     "reduce: float32 sum of a whole array (two-pass reduction)", plan_reduce, run_reduce_case},
    {"dims", "sum(x; dims=...) over the dims-reduction shapes, float32 and bfloat16",
     "dims: sum(x; dims=...) of column-major arrays; Julia dims=k is the C API's dim k-1",
     plan_dims, run_dims_case},
    {"segmented", "float32 sums of segments (int32 CSR offsets: 32, 1024, 65536 long, power-law\n"
                  "           lengths) and of runs of int32 keys (reduce and scan by key, runs of 1..10^4)",
     "segmented: float32 sums per segment (int32 offsets) and per run of int32 keys",
     plan_segmented, run_segmented_case},
    {"select", "flagged select and partition of int8, int32 and float64 by bool flags,\n"
               "           1%, 50% and 99% flagged",
     "select: akx_select_flagged and akx_partition_flagged by bool flags, 1%, 50% and 99% flagged",
     plan_select, run_select_case},
};
_Static_assert(sizeof suites / sizeof suites[0] == NSUITES, "NSUITES (akx_bench.h) counts suites[]");

static int64_t pow10_i64(int e) {
  int64_t v = 1;
  while (e-- > 0) v *= 10;
  return v;
}

#ifdef AKX_HAVE_CUDA
#define PEER(p) , p
#else
#define PEER(p)
#endif

/* ---- suite: scan ------------------------------------------------------------------------- */

/* sim_ns: the sim's nanoseconds per element of one call and layout pass (measured here: the
 * sim_wall_s of the whole --full run, 10^6..10^8, on a quiet machine, bench/RESULTS.md, "The
 * default run and the whole --full run"; the default's sizes cost about as much); default_max: the
 * largest exponent the default sim run takes, chosen so the whole default run stays near a
 * minute: the float32 whole-array scan (the notes' headline) goes to 10^7, the other whole scans
 * to 10^5 and the dims=1 ones to 10^5-10^6 (this machine's speed varies by a third from hour
 * to hour: the same default plan took 42 s and 57 s on 2026-12-03, so the plan aims at 40). */
typedef struct {
  const char *name, *series;
  akx_dtype dtype;
  int no_neutral, dims1;
  double sim_ns;
  int default_max;
#ifdef AKX_HAVE_CUDA
  akx_bench_peer peer;
#endif
} scan_spec;

static const scan_spec scan_specs[] = {
    {"no-neutral add", "float32 no neutral element", AKX_FLOAT32, 1, 0, 1550, 5 PEER(AKX_PEER_SCAN_OP)},
    {"no-neutral add dims=1", "float32 no neutral, dims=1", AKX_FLOAT32, 1, 1, 2800, 5 PEER(AKX_PEER_SCAN_OP_BY_KEY)},
    {"add", "float64", AKX_FLOAT64, 0, 0, 2200, 5 PEER(AKX_PEER_SCAN_SUM)},
    {"add dims=1", "float64 dims=1", AKX_FLOAT64, 0, 1, 3460, 5 PEER(AKX_PEER_SCAN_SUM_BY_KEY)},
    {"add", "float32", AKX_FLOAT32, 0, 0, 1100, 7 PEER(AKX_PEER_SCAN_SUM)},
    {"add dims=1", "float32 dims=1", AKX_FLOAT32, 0, 1, 2000, 6 PEER(AKX_PEER_SCAN_SUM_BY_KEY)},
    {"add", "int32", AKX_INT32, 0, 0, 2100, 5 PEER(AKX_PEER_SCAN_SUM)},
    {"add dims=1", "int32 dims=1", AKX_INT32, 0, 1, 4400, 5 PEER(AKX_PEER_SCAN_SUM_BY_KEY)},
};

/* The sim's passes of a scan case: --full adds the dense and odd-stride layouts, but not for
 * akx.cuh's scan, which always takes the default layout (README, AKX_SCAN_LAYOUT). */
static int scan_passes(const scan_spec *sp) {
  return planning_mode == PLAN_FULL && on_sim && !sp->no_neutral ? 3 : 1;
}

static void plan_scan(void) {
  for (int k = 0; k < (int)(sizeof scan_specs / sizeof scan_specs[0]); ++k)
    for (int e = 4; e <= 8; ++e) {
      const scan_spec *sp = &scan_specs[k];
      if (!in_plan(e, sp->default_max)) continue;
      int64_t n = pow10_i64(e), rows = pow10_i64((e + 1) / 2);
      char shape[40];
      if (sp->dims1) snprintf(shape, sizeof shape, "%" PRId64 "x%" PRId64, rows, n / rows);
      else snprintf(shape, sizeof shape, "%" PRId64, n);
      plan_add(k, e, sp->dtype, n, sp->name, shape, estimate_s(n, sp->sim_ns, scan_passes(sp)));
    }
}

static int run_scan_case(akx_context *ctx, const planned_case *p) {
  const scan_spec *sp = &scan_specs[p->spec];
  int e = p->exp10;
  int64_t n = pow10_i64(e);
  int64_t rows = sp->dims1 ? pow10_i64((e + 1) / 2) : n, cols = n / rows;
  op_arg a = {.kind = sp->no_neutral ? OP_SCAN_NO_NEUTRAL : OP_SCAN, .dim = sp->dims1 ? 0 : -1,
              .rows = rows, .cols = cols, .n = n};
  int64_t shape[2] = {rows, cols};
  a.src = sp->dims1 ? akx_array_f(NULL, sp->dtype, 2, shape) : akx_vector(NULL, sp->dtype, n);
  a.dst = a.src;
  size_t bytes = (size_t)n * akx_dtype_size(sp->dtype);
  bench_case c = {.p = p, .name = sp->name, .series = {sp->series},
                  .variant = {sp->no_neutral ? "akx::scan_inclusive (akx.cuh)" : "akx_scan"},
                  .arg = {&a}, .scan_layouts = !sp->no_neutral, .bytes_min = 2.0 * (double)bytes};
  buffers b;
  if (buffers_create(ctx, &b, sp->dtype, n, bytes, 0x5ca9 + (uint64_t)p->spec) != AKX_SUCCESS)
    return EXIT_USAGE;
  use_buffers(&a, &b);
#ifdef AKX_HAVE_CUDA
  c.peer = (akx_bench_cuda_case){.peer = sp->peer, .dtype = sp->dtype, .src = b.src, .n = n,
                                 .segments = cols, .segment_length = rows, .copy_bytes = bytes};
#endif
  return run_and_free(ctx, &c, &b);
}

/* the float32 whole-array add of scan_specs (the last such row) */
double scan_float32_sim_ns(void) {
  double cost_ns = 0;
  for (size_t k = 0; k < sizeof scan_specs / sizeof scan_specs[0]; ++k)
    if (scan_specs[k].dtype == AKX_FLOAT32 && !scan_specs[k].no_neutral && !scan_specs[k].dims1)
      cost_ns = scan_specs[k].sim_ns;
  return cost_ns;
}

/* ---- suite: select ----------------------------------------------------------------------- */

/* The flagged selections (issue 46's table: int8, int32 and float64 at 1%, 50% and 99%; the
 * goal: within 1.3x of a device copy of the ideal bytes, src and flags read, the items written).
 * sim_ns: the sim's CPU nanoseconds per item, an estimate from the tests' runs (a tile's items
 * each go through the staging window); default_max: 10^6 for the sparse selects, 10^5 for the
 * rest, about 10 s of the default run. */
typedef struct {
  akx_dtype dtype;
  int permille, partition;
  const char *label;
  int default_max;
  double sim_ns;
} select_spec;
static const select_spec select_specs[] = {
    {AKX_INT8, 10, 0, "select 1%", 6, 60},        {AKX_INT8, 500, 0, "select 50%", 5, 250},
    {AKX_INT8, 990, 0, "select 99%", 5, 400},     {AKX_INT32, 10, 0, "select 1%", 6, 120},
    {AKX_INT32, 500, 0, "select 50%", 5, 350},    {AKX_INT32, 990, 0, "select 99%", 5, 500},
    {AKX_FLOAT64, 10, 0, "select 1%", 6, 200},    {AKX_FLOAT64, 500, 0, "select 50%", 5, 500},
    {AKX_FLOAT64, 990, 0, "select 99%", 5, 700},  {AKX_INT8, 10, 1, "partition 1%", 5, 400},
    {AKX_INT8, 500, 1, "partition 50%", 5, 400},  {AKX_INT8, 990, 1, "partition 99%", 5, 400},
    {AKX_INT32, 10, 1, "partition 1%", 5, 500},   {AKX_INT32, 500, 1, "partition 50%", 5, 500},
    {AKX_INT32, 990, 1, "partition 99%", 5, 500}, {AKX_FLOAT64, 10, 1, "partition 1%", 5, 700},
    {AKX_FLOAT64, 500, 1, "partition 50%", 5, 700}, {AKX_FLOAT64, 990, 1, "partition 99%", 5, 700},
};
enum { SELECT_SPECS = sizeof select_specs / sizeof select_specs[0] };

static void plan_select(void) {
  for (int k = 0; k < SELECT_SPECS; ++k)
    for (int e = 4; e <= 8; ++e)
      if (in_plan(e, select_specs[k].default_max))
        plan_add(k, e, select_specs[k].dtype, pow10_i64(e), select_specs[k].label, "",
                 estimate_s(pow10_i64(e), select_specs[k].sim_ns, 1));
}

static int run_select_case(akx_context *ctx, const planned_case *p) {
  const select_spec *f = &select_specs[p->spec];
  const int64_t n = pow10_i64(p->exp10);
  const size_t esize = akx_dtype_size(f->dtype);
  op_arg a = {.kind = f->partition ? OP_PARTITION_FLAGGED : OP_SELECT_FLAGGED, .n = n};
  a.src = akx_vector(NULL, f->dtype, n);
  a.dst = akx_vector(NULL, f->dtype, n);
  char series[64];
  snprintf(series, sizeof series, "%s, %d%% flagged", akx_dtype_name(f->dtype), (f->permille + 5) / 10);
  bench_case c = {.p = p, .name = f->label, .series = {series},
                  .variant = {f->partition ? "akx_partition_flagged" : "akx_select_flagged"}, .arg = {&a}};
  buffers b;
  if (buffers_create(ctx, &b, f->dtype, n, (size_t)n * esize, 0x5e1ec7) != AKX_SUCCESS) return EXIT_USAGE;
  /* bool flags, permille of them set at random */
  unsigned char *hf = malloc((size_t)n);
  void *df = NULL;
  int64_t set = 0;
  for (int64_t i = 0; hf && i < n; ++i) {
    hf[i] = (unsigned char)(bench_rand(0xf1a65, (uint64_t)i) % 1000 < (uint64_t)f->permille);
    set += hf[i];
  }
  if (!hf || akx_malloc(ctx, &df, (size_t)n) != AKX_SUCCESS ||
      akx_memcpy(ctx, df, hf, (size_t)n, AKX_COPY_HOST_TO_DEVICE) != AKX_SUCCESS) {
    fprintf(stderr, "akx-bench: select's flags: %s\n", hf ? akx_last_error() : "no host memory");
    if (df) akx_free(ctx, df);
    free(hf);
    buffers_destroy(ctx, &b);
    return EXIT_USAGE;
  }
  a.flags = akx_vector(df, AKX_BOOL, n);
  a.host_flags = hf;
  /* the ideal bytes: src and the flags read once, the items written once (a partition's all) */
  c.bytes_min = (double)n * (double)esize + (double)n + (double)(f->partition ? n : set) * (double)esize;
  use_buffers(&a, &b);
#ifdef AKX_HAVE_CUDA
  c.peer = (akx_bench_cuda_case){.peer = f->partition ? AKX_PEER_PARTITION_FLAGGED : AKX_PEER_SELECT_FLAGGED_VALUES,
                                 .dtype = f->dtype, .src = b.src, .flags = df, .n = n,
                                 .copy_bytes = (size_t)(c.bytes_min / 2)};
#endif
  const int failed = run_and_free(ctx, &c, &b);
  akx_free(ctx, df);
  free(hf);
  return failed;
}

/* ---- suite: findall ---------------------------------------------------------------------- */

/* The sources and densities of the findall table (the goal: within 1.3x of a device copy of
 * the same bytes, 10^5..10^8). sim_ns: the sim's CPU nanoseconds per element (measured here,
 * 2026-12-04, the --full run's sim_wall_s at 10^7 and 10^8: each selected element's position is
 * staged and stored, so the dense cases cost more); default_max: the largest exponent the default
 * sim run takes, about 13 s of its minute in all (10^8 where a case takes about 5 s). */
typedef struct {
  akx_dtype dtype;
  int permille;
  const char *label;
  int default_max;
  double sim_ns;
} findall_spec;
static const findall_spec findall_specs[] = {
    {AKX_BOOL, 10, "findall 1%", 8, 55},      {AKX_BOOL, 500, "findall 50%", 7, 290},
    {AKX_BOOL, 990, "findall 99%", 6, 490},   {AKX_FLOAT32, 10, "findall 1%", 7, 210},
    {AKX_FLOAT32, 500, "findall 50%", 6, 450}, {AKX_FLOAT32, 990, "findall 99%", 6, 950},
};
enum { FINDALL_SPECS = sizeof findall_specs / sizeof findall_specs[0] };

static void plan_findall(void) {
  for (int k = 0; k < FINDALL_SPECS; ++k)
    for (int e = 4; e <= 8; ++e)
      if (in_plan(e, findall_specs[k].default_max))
        plan_add(k, e, findall_specs[k].dtype, pow10_i64(e), findall_specs[k].label, "",
                 estimate_s(pow10_i64(e), findall_specs[k].sim_ns, 1));
}

static int run_findall_case(akx_context *ctx, const planned_case *p) {
  const findall_spec *f = &findall_specs[p->spec];
  int64_t n = pow10_i64(p->exp10);
  op_arg a = {.kind = OP_FINDALL, .n = n};
  a.src = akx_vector(NULL, f->dtype, n);
  a.dst = akx_vector(NULL, AKX_INT64, n);
  char series[64];
  snprintf(series, sizeof series, "%s, %d%% -> int64 indices", akx_dtype_name(f->dtype), (f->permille + 5) / 10);
  bench_case c = {.p = p, .name = f->label, .series = {series}, .variant = {"akx_findall"}, .arg = {&a}};
  buffers b;
  if (buffers_create(ctx, &b, f->dtype, n, (size_t)n * 8, 0xf1a7) != AKX_SUCCESS) return EXIT_USAGE;
  if (buffers_select(ctx, &b, f->dtype, n, f->permille, 0xf1a7) != AKX_SUCCESS) {
    fprintf(stderr, "akx-bench: findall's input: %s\n", akx_last_error());
    buffers_destroy(ctx, &b);
    return EXIT_USAGE;
  }
  /* read the source once, write the indices of the nonzero elements */
  const size_t esize = akx_dtype_size(f->dtype);
  int64_t set = 0;
  for (int64_t i = 0; i < n; ++i) {
    const unsigned char *e = (const unsigned char *)b.host + i * (int64_t)esize;
    for (size_t j = 0; j < esize; ++j)
      if (e[j]) {
        ++set;
        break;
      }
  }
  c.bytes_min = (double)n * (double)esize + 8.0 * (double)set;
  use_buffers(&a, &b);
#ifdef AKX_HAVE_CUDA
  c.peer = (akx_bench_cuda_case){.peer = AKX_PEER_SELECT_FLAGGED, .dtype = f->dtype, .src = b.src,
                                 .n = n, .copy_bytes = (size_t)(c.bytes_min / 2)};
#endif
  return run_and_free(ctx, &c, &b);
}

/* ---- suite: reduce ----------------------------------------------------------------------- */

/* Every size 10^4..10^8 in every plan: the two-pass reduction is the sim's fastest family. */
static const double reduce_sim_ns = 23;

static void plan_reduce(void) {
  for (int e = 4; e <= 8; ++e)
    if (in_plan(e, 8))
      plan_add(0, e, AKX_FLOAT32, pow10_i64(e), "sum", "", estimate_s(pow10_i64(e), reduce_sim_ns, 2));
}

static int run_reduce_case(akx_context *ctx, const planned_case *p) {
  int64_t n = pow10_i64(p->exp10), one = 1;
  op_arg host = {.kind = OP_MAPREDUCE_HOST, .n = n}, dev1 = {.kind = OP_REDUCE_DIMS_COPY, .n = n};
  host.src = dev1.src = akx_vector(NULL, AKX_FLOAT32, n);
  dev1.dst = akx_array_c(NULL, AKX_FLOAT32, 1, &one);
  bench_case c = {.p = p, .name = "sum",
                  .variant = {"akx_mapreduce -> host", "akx_reduce_dims -> dev + copy"},
                  .series = {"akx_mapreduce to the host", "akx_reduce_dims to the device + copy"},
                  .arg = {&host, &dev1}, .bytes_min = 4.0 * (double)n + 4};
  buffers b;
  if (buffers_create(ctx, &b, AKX_FLOAT32, n, sizeof(float), 0x5e1) != AKX_SUCCESS)
    return EXIT_USAGE;
  host.src.data = dev1.src.data = b.src;
  dev1.dst.data = b.dst;
  host.host_src = dev1.host_src = b.host;
#ifdef AKX_HAVE_CUDA
  c.peer = (akx_bench_cuda_case){.peer = AKX_PEER_REDUCE_SUM_TO_HOST, .dtype = AKX_FLOAT32,
                                 .src = b.src, .n = n, .copy_bytes = (size_t)n * 2};
#endif
  return run_and_free(ctx, &c, &b);
}

/* ---- suite: dims ------------------------------------------------------------------------- */

/* Julia's column-major shapes and dims (1-based) of docs/reduce_dims_shapes.md's figures;
 * in_default: which dtypes the default sim run takes (bit 0 float32, bit 1 bfloat16). */
typedef struct {
  int ndim;
  int64_t shape[3];
  int dims[2]; /* Julia dims reduced, 0-terminated */
  int in_default;
} dims_spec;

static const dims_spec dims_specs[] = {
    {3, {768, 1024, 8}, {2}, 3},    {3, {64, 4096, 32}, {2}, 1}, {2, {3072, 2048}, {2}, 1},
    {2, {8192, 8192}, {2}, 0},      {2, {4096, 4096}, {1}, 0},   {2, {4096, 4096}, {2}, 0},
    {2, {3, 3000000}, {2}, 1},      {2, {32768, 32}, {1}, 3},    {2, {32768, 32}, {2}, 3},
    {3, {1024, 1024, 64}, {1, 3}, 1},
};
static const akx_dtype dims_dtypes[] = {AKX_FLOAT32, AKX_BFLOAT16};
static char dims_names[sizeof dims_specs / sizeof dims_specs[0]][24];
static const double dims_sim_ns = 85;

static void plan_dims(void) {
  for (int k = 0; k < (int)(sizeof dims_specs / sizeof dims_specs[0]); ++k) {
    const dims_spec *sp = &dims_specs[k];
    snprintf(dims_names[k], sizeof dims_names[k], "sum dims=%s%d%s", sp->dims[1] ? "(" : "",
             sp->dims[0], sp->dims[1] ? ",3)" : "");
  }
  for (int k = 0; k < (int)(sizeof dims_specs / sizeof dims_specs[0]); ++k)
    for (int t = 0; t < 2; ++t) {
      const dims_spec *sp = &dims_specs[k];
      int64_t n = product(sp->ndim, sp->shape);
      int take = planning_mode == PLAN_QUICK ? n <= QUICK_DIMS_ELEMENTS
                 : planning_mode == PLAN_FULL || (sp->in_default >> t & 1);
      char shape[40];
      snprintf(shape, sizeof shape, "%" PRId64 "x%" PRId64, sp->shape[0], sp->shape[1]);
      if (sp->ndim == 3)
        snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "x%" PRId64, sp->shape[2]);
      if (take)
        plan_add(k * 2 + t, -1, dims_dtypes[t], n, dims_names[k], shape, estimate_s(n, dims_sim_ns, 1));
    }
}

static int run_dims_case(akx_context *ctx, const planned_case *p) {
  const dims_spec *sp = &dims_specs[p->spec / 2];
  akx_dtype dt = dims_dtypes[p->spec % 2];
  int64_t dshape[3];
  int reduced[3] = {0, 0, 0};
  for (int j = 0; j < 2 && sp->dims[j]; ++j) reduced[sp->dims[j] - 1] = 1;
  for (int d = 0; d < sp->ndim; ++d) dshape[d] = reduced[d] ? 1 : sp->shape[d];
  int64_t n = product(sp->ndim, sp->shape), outs = product(sp->ndim, dshape);
  op_arg a = {.kind = OP_REDUCE_DIMS, .n = n};
  a.src = akx_array_f(NULL, dt, sp->ndim, sp->shape);
  a.dst = akx_array_f(NULL, dt, sp->ndim, dshape);
  size_t esize = akx_dtype_size(dt);
  bench_case c = {.p = p, .name = p->label, .variant = {"akx_reduce_dims"},
                  .series = {akx_dtype_name(dt)}, .arg = {&a},
                  .bytes_min = (double)((n + outs) * (int64_t)esize)};
  buffers b;
  if (buffers_create(ctx, &b, dt, n, (size_t)outs * esize, 0xd1 + (uint64_t)p->spec / 2) != AKX_SUCCESS)
    return EXIT_USAGE;
  use_buffers(&a, &b);
#ifdef AKX_HAVE_CUDA
  /* contiguous segments: only the leading dims reduced (Julia dims=1 of a matrix) */
  int contiguous = reduced[0] && !reduced[sp->ndim - 1];
  for (int d = 1; d < sp->ndim; ++d) contiguous &= !reduced[d] || reduced[d - 1];
  int64_t seg_len = 1;
  for (int d = 0; d < sp->ndim && reduced[d]; ++d) seg_len *= sp->shape[d];
  c.peer = (akx_bench_cuda_case){.peer = contiguous ? AKX_PEER_SEGMENTED_SUM : AKX_PEER_NONE,
                                 .dtype = dt, .src = b.src, .n = n, .segments = outs,
                                 .segment_length = seg_len, .copy_bytes = (size_t)(c.bytes_min / 2)};
#endif
  return run_and_free(ctx, &c, &b);
}

/* ---- suite: segmented -------------------------------------------------------------------- */

/* The goal (docs/segmented.md): a segmented sum at most 1.25x the model's device copy of the
 * same bytes (src read once, offsets read once, dst written once), by key at most 1.3x (keys
 * and values read once, the outputs written once), 2^24 float32 elements. length: the segments'
 * or runs' length (0: power-law lengths, many of them empty; -1: one segment of all n). sim_ns: the sim's nanoseconds per
 * element (measured here, 2026-12-05: about 2 s a call at 2^20); the default run takes the
 * segment sums to 2^20 and the by-key calls to 2^16, --full all of them to 2^24. */
typedef struct {
  op_kind kind;
  int64_t length;
  const char *label;
} segmented_spec;
static const segmented_spec segmented_specs[] = {
    {OP_SEGMENTED_REDUCE, 32, "segment sum 32"},      {OP_SEGMENTED_REDUCE, 1024, "segment sum 1024"},
    {OP_SEGMENTED_REDUCE, 65536, "segment sum 65536"}, {OP_SEGMENTED_REDUCE, 0, "segment sum power law"},
    {OP_SEGMENTED_REDUCE, -1, "segment sum one"}, /* one segment of every element: every tile's
                                                    * arrival on one split ticket */
    {OP_REDUCE_BY_KEY, 1, "reduce_by_key runs 1"},    {OP_REDUCE_BY_KEY, 100, "reduce_by_key runs 100"},
    {OP_REDUCE_BY_KEY, 10000, "reduce_by_key runs 1e4"}, {OP_SCAN_BY_KEY, 1, "scan_by_key runs 1"},
    {OP_SCAN_BY_KEY, 100, "scan_by_key runs 100"},    {OP_SCAN_BY_KEY, 10000, "scan_by_key runs 1e4"},
};
enum { SEGMENTED_SPECS = sizeof segmented_specs / sizeof segmented_specs[0] };
static const double segmented_sim_ns = 2000;

/* 2^16 (the quick run), 2^20 (the default), 2^24 (--full): planned under exponents 5, 6, 7. */
static void plan_segmented(void) {
  for (int k = 0; k < SEGMENTED_SPECS; ++k)
    for (int e = 5; e <= 7; ++e)
      if (in_plan(e, segmented_specs[k].kind == OP_SEGMENTED_REDUCE ? 6 : 5)) { /* the default: the segment sums to 2^20, by key 2^16 */
        const int64_t n = (int64_t)1 << (e == 5 ? 16 : e == 6 ? 20 : 24);
        plan_add(k, e, AKX_FLOAT32, n, segmented_specs[k].label, "", estimate_s(n, segmented_sim_ns, 1));
      }
}

/* Power-law lengths: floor(0.5 u^-1.2), u uniform in (0, 1]: 44% of the segments empty, a
 * heavy tail (capped at 2^20). */
static int64_t power_law_length(uint64_t *state) {
  *state = *state * 6364136223846793005u + 1442695040888963407u;
  const double u = ((double)(*state >> 11) + 1.0) / 9007199254740992.0;
  const double l = floor(0.5 * pow(u, -1.2));
  return l > (double)(1 << 20) ? (int64_t)1 << 20 : (int64_t)l;
}

static int run_segmented_case(akx_context *ctx, const planned_case *p) {
  const segmented_spec *sp = &segmented_specs[p->spec];
  const int64_t n = p->elements;
  const int by_offsets = sp->kind == OP_SEGMENTED_REDUCE;
  /* the segments' offsets, or the keys (run r's key is r) */
  int64_t nseg = 0;
  int32_t *hoff = NULL, *hkeys = NULL;
  if (by_offsets) {
    hoff = malloc(((size_t)n + 2) * sizeof(int32_t));
    uint64_t state = 0x5e6;
    hoff[0] = 0;
    for (int64_t at = 0; at < n;) {
      const int64_t len = sp->length > 0 ? sp->length : sp->length < 0 ? n : power_law_length(&state);
      at = at + len < n ? at + len : n;
      hoff[++nseg] = (int32_t)at;
    }
  } else {
    hkeys = malloc((size_t)n * sizeof(int32_t));
    for (int64_t i = 0; i < n; ++i) hkeys[i] = (int32_t)(i / sp->length);
    nseg = (n + sp->length - 1) / sp->length;
  }
  const int64_t outputs = sp->kind == OP_SCAN_BY_KEY ? n : nseg;
  op_arg a = {.kind = sp->kind, .n = n, .host_offsets = hoff, .host_keys = hkeys};
  a.src = akx_vector(NULL, AKX_FLOAT32, n);
  a.dst = akx_vector(NULL, AKX_FLOAT32, outputs);
  char series[64];
  if (sp->kind == OP_SEGMENTED_REDUCE)
    snprintf(series, sizeof series, "segment sum, %s", sp->length ? sp->label + 12 : "power law");
  else
    snprintf(series, sizeof series, "%s", sp->label);
  const int64_t uniform = sp->length < 0 ? n : sp->length; /* CUB's peers' segment length */
  (void)uniform;
  bench_case c = {.p = p, .name = sp->label, .series = {series},
                  .variant = {sp->kind == OP_SEGMENTED_REDUCE ? "akx_segmented_reduce"
                              : sp->kind == OP_REDUCE_BY_KEY  ? "akx_reduce_by_key"
                                                              : "akx_scan_by_key"},
                  .arg = {&a}};
  /* the least bytes: the values and the offsets (or keys) read once, the outputs (and the
   * runs' keys) written once */
  c.bytes_min = 4.0 * (double)n + 4.0 * (double)outputs +
                (by_offsets ? 4.0 * (double)(nseg + 1) : 4.0 * (double)n) +
                (sp->kind == OP_REDUCE_BY_KEY ? 4.0 * (double)nseg : 0);
  buffers b;
  void *doff = NULL, *dkeys = NULL, *dkeys_out = NULL;
  akx_status st = buffers_create(ctx, &b, AKX_FLOAT32, n, (size_t)(outputs > 0 ? outputs : 1) * 4, 0x5e9 + (uint64_t)p->spec);
  if (st == AKX_SUCCESS && by_offsets) st = akx_malloc(ctx, &doff, ((size_t)nseg + 1) * 4);
  if (st == AKX_SUCCESS && by_offsets)
    st = akx_memcpy(ctx, doff, hoff, ((size_t)nseg + 1) * 4, AKX_COPY_HOST_TO_DEVICE);
  if (st == AKX_SUCCESS && !by_offsets) st = akx_malloc(ctx, &dkeys, (size_t)n * 4);
  if (st == AKX_SUCCESS && !by_offsets) st = akx_memcpy(ctx, dkeys, hkeys, (size_t)n * 4, AKX_COPY_HOST_TO_DEVICE);
  if (st == AKX_SUCCESS && sp->kind == OP_REDUCE_BY_KEY) st = akx_malloc(ctx, &dkeys_out, (size_t)nseg * 4);
  int rc = EXIT_USAGE;
  if (st == AKX_SUCCESS) {
    a.offsets = akx_vector(doff, AKX_INT32, nseg + 1);
    a.keys = akx_vector(dkeys, AKX_INT32, n);
    a.keys_out = akx_vector(dkeys_out, AKX_INT32, nseg);
    use_buffers(&a, &b);
#ifdef AKX_HAVE_CUDA
    /* CUB's peers take uniform segments (the power law has none) */
    if (sp->length && sp->kind != OP_REDUCE_BY_KEY)
      c.peer = (akx_bench_cuda_case){.peer = sp->kind == OP_SEGMENTED_REDUCE ? AKX_PEER_SEGMENTED_SUM : AKX_PEER_SCAN_SUM_BY_KEY,
                                     .dtype = AKX_FLOAT32, .src = b.src, .n = n, .segments = nseg,
                                     .segment_length = uniform, .copy_bytes = (size_t)(c.bytes_min / 2)};
#endif
    rc = run_and_free(ctx, &c, &b);
  } else {
    fprintf(stderr, "akx-bench: the segmented suite's input: %s\n", akx_last_error());
    buffers_destroy(ctx, &b);
  }
  if (doff) akx_free(ctx, doff);
  if (dkeys) akx_free(ctx, dkeys);
  if (dkeys_out) akx_free(ctx, dkeys_out);
  free(hoff);
  free(hkeys);
  return rc;
}
