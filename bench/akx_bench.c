/* akx-bench: reproduces the tables behind libakx's scans and reductions (the notes in docs/).
 *
 *   akx-bench [scan|findall|reduce|dims|all] [--backend auto|cuda|sim] [--quick] [--full]
 *             [--runs N] [--max E] [--csv FILE] [--json FILE] [--plot FILE.png]
 *             [--kernels-csv FILE] [--once]
 *
 * Suites (one table each; `all` runs them in this order):
 *   scan:    inclusive scans of 10^4..10^8 elements, whole and along dims=1 of a column-major
 *            matrix: an operator without neutral element (float32, Optional partials, through
 *            include/akx.cuh), float64, float32 and int32 add (docs/scan_tiles.md);
 *   findall: the indices of the nonzero bytes of a bool vector (the same note's last row);
 *   reduce:  float32 sums at 10^4, 10^6, 10^8: akx_mapreduce to the host, akx_reduce_dims into
 *            one device element plus the copy back (docs/reduce_whole.md);
 *   dims:    sum(x; dims=...) over the shapes of docs/reduce_dims_shapes.md, float32 and
 *            bfloat16.
 * On CUDA: each akx call beside its CUB peer and a device-to-device copy moving the same bytes,
 * CUDA events, warm-up, variants interleaved, L2 flushed before every timed run, median and
 * minimum of --runs runs. On the sim: the counters and the model time of one call per case;
 * scan cases run three times, with AKX_SCAN_LAYOUT=dense, =odd_stride and the default layout
 * (AK's unpadded and padded tiles beside libakx's: docs/scan_tiles.md).
 * Every akx result is checked against the host. A call that returns AKX_ERROR_UNSUPPORTED
 * prints "n/a (unsupported: ...)" and does not fail the run; any other error or a wrong result
 * exits with status 1; a usage or setup error with 2. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "akx.h"
#include "internal.h" /* akx__context_reread_settings */
#include "akx_sim.h"
#include "bench_no_neutral.h"
#ifdef AKX_BENCH_DIST
#include "bench_dist.h"
#endif
#ifdef AKX_HAVE_CUDA
#include "bench_cuda.h"
#else
typedef akx_status (*akx_bench_enqueue_fn)(akx_context *ctx, void *arg);
#endif

enum { EXIT_FAILED = 1, EXIT_USAGE = 2 };
enum { WARMUP_RUNS = 3, MAX_KERNELS = 32, MAX_RECORDS = 512 };
/* Sim sweeps: 10^8 only with --full. --quick: sizes 10^4 and 10^5, dims shapes up to this many
 * elements, on both backends. */
enum { SIM_MAX_EXP = 7, QUICK_DIMS_ELEMENTS = 1 << 23 };

/* ---- options ----------------------------------------------------------------------------- */

enum { SUITE_SCAN = 1, SUITE_FINDALL = 2, SUITE_REDUCE = 4, SUITE_DIMS = 8, SUITE_ALL = 15 };

typedef struct {
  int suites;
  akx_backend backend;
  int quick, full, once;
  int runs;    /* 0: 20, or 5 with --quick */
  int max_exp; /* -1: the suite's default */
  const char *csv, *json, *plot, *kernels_csv;
} bench_options;

static void usage(FILE *f) {
  fprintf(f,
          "usage: akx-bench [scan|findall|reduce|dims|all] [--backend auto|cuda|sim] [--quick]\n"
          "                 [--full] [--runs N] [--max E] [--csv FILE] [--json FILE]\n"
          "                 [--plot FILE.png] [--kernels-csv FILE] [--once]\n"
          "  scan     inclusive scans, 10^4..10^8 elements, whole and along dims=1 of a matrix:\n"
          "           no neutral element (float32, via akx.cuh), float64, float32, int32 add\n"
          "  findall  indices of the nonzero bytes of a bool vector, 10^4..10^8\n"
          "  reduce   float32 sums at 10^4, 10^6, 10^8: akx_mapreduce to the host and\n"
          "           akx_reduce_dims into one device element + copy back\n"
          "  dims     sum(x; dims=...) of the dims-reduction shapes, float32 and bfloat16\n"
          "  all      all four (the default)\n"
          "  --backend  auto (default: AKX_BACKEND, else CUDA when a device exists, else the sim)\n"
          "  --quick    few sizes and runs (CI: every suite on the sim in well under 3 minutes)\n"
          "  --full     on the sim, also 10^8 elements (slow: minutes per case)\n"
          "  --runs     timed runs per variant on CUDA (default 20, 5 with --quick)\n"
          "  --max      largest exponent of the size sweeps (default 8 on CUDA, 7 on the sim)\n"
          "  --csv, --json  every row also into FILE ('-': stdout, and no table)\n"
          "  --plot     bandwidth versus size (akx, CUB, copy; the model on the sim) as a PNG,\n"
          "             drawn by gnuplot\n"
          "  --kernels-csv  per row and kernel, the sim's counters (bench/gpu_check.sh sets them\n"
          "             beside Nsight Compute's)\n"
          "  --once     on CUDA, run each akx call once after its check, no peers, no timing\n"
          "             (for Nsight Compute)\n");
}

static int parse_int(const char *flag, const char *text, int lo, int hi, int *out) {
  char *end;
  errno = 0;
  long v = text ? strtol(text, &end, 10) : 0;
  if (!text || errno || *end || end == text || v < lo || v > hi) {
    fprintf(stderr, "akx-bench: %s takes an integer in %d..%d, got '%s'\n", flag, lo, hi,
            text ? text : "");
    return -1;
  }
  *out = (int)v;
  return 0;
}

/* 0: run; 1: help printed; -1: usage error printed. */
static int parse_args(int argc, char **argv, bench_options *o) {
  *o = (bench_options){.suites = SUITE_ALL, .backend = AKX_BACKEND_AUTO, .max_exp = -1};
  int i = 1;
  if (i < argc && argv[i][0] != '-') {
    static const struct { const char *name; int suites; } cmds[] = {
        {"scan", SUITE_SCAN}, {"findall", SUITE_FINDALL}, {"reduce", SUITE_REDUCE},
        {"dims", SUITE_DIMS}, {"all", SUITE_ALL}};
    o->suites = 0;
    for (size_t c = 0; c < sizeof cmds / sizeof cmds[0]; ++c)
      if (strcmp(argv[i], cmds[c].name) == 0) o->suites = cmds[c].suites;
    if (!o->suites) {
      fprintf(stderr, "akx-bench: unknown suite '%s' (scan, findall, reduce, dims, all)\n", argv[i]);
      return -1;
    }
    ++i;
  }
  for (; i < argc; ++i) {
    const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
    int *flag = strcmp(a, "--quick") == 0 ? &o->quick
                : strcmp(a, "--full") == 0 ? &o->full
                : strcmp(a, "--once") == 0 ? &o->once
                                           : NULL;
    const char **file = strcmp(a, "--csv") == 0 ? &o->csv
                        : strcmp(a, "--json") == 0 ? &o->json
                        : strcmp(a, "--plot") == 0 ? &o->plot
                        : strcmp(a, "--kernels-csv") == 0 ? &o->kernels_csv
                                                          : NULL;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return 1;
    } else if (flag) {
      *flag = 1;
      continue;
    } else if (file) {
      if (!val || !*val) {
        fprintf(stderr, "akx-bench: %s takes a file name\n", a);
        return -1;
      }
      *file = val;
    } else if (strcmp(a, "--backend") == 0) {
      if (val && strcmp(val, "auto") == 0) o->backend = AKX_BACKEND_AUTO;
      else if (val && strcmp(val, "cuda") == 0) o->backend = AKX_BACKEND_CUDA;
      else if (val && strcmp(val, "sim") == 0) o->backend = AKX_BACKEND_SIM;
      else {
        fprintf(stderr, "akx-bench: --backend takes auto, cuda or sim, got '%s'\n", val ? val : "");
        return -1;
      }
    } else if (strcmp(a, "--runs") == 0) {
      if (parse_int(a, val, 1, 100000, &o->runs)) return -1;
    } else if (strcmp(a, "--max") == 0) {
      if (parse_int(a, val, 4, 9, &o->max_exp)) return -1;
    } else {
      fprintf(stderr, "akx-bench: unknown option '%s'\n", a);
      usage(stderr);
      return -1;
    }
    ++i; /* the option took a value */
  }
  if (o->plot && (strlen(o->plot) < 5 || strcmp(o->plot + strlen(o->plot) - 4, ".png") != 0)) {
    fprintf(stderr, "akx-bench: --plot takes a file name ending in .png, got '%s'\n", o->plot);
    return -1;
  }
  if (!o->runs) o->runs = o->quick ? 5 : 20;
  return 0;
}

/* ---- records: one row of the output ------------------------------------------------------ */

typedef enum { ROW_OK, ROW_NA, ROW_FAIL, ROW_SKIPPED } row_state;
static const char *const state_name[] = {"ok", "n/a", "FAIL", "skipped"};

typedef struct {
  double median_us, min_us;
  int ran;
} timing;

typedef struct {
  char suite[8], name[40], dtype[10], shape[32], variant[40];
  int64_t elements;
  double bytes_min; /* the least traffic: src read once, dst written once */
  row_state state;
  char note[600];
  int exp10;        /* the size sweep's exponent, -1 for dims shapes */
  /* CUDA */
  timing akx, cub, copy;
  /* sim: the counters of one call, totals over its kernels */
  char kernels[200], grid[32];
  double waves, gld, gld_ideal, smem, smem_ideal, bytes_moved, model_us, wall_s;
  int fits_l2, counted;
  /* sim, scan cases: the same call with AKX_SCAN_LAYOUT=dense (unpadded runs: AK's tiles
   * before padding) and =odd_stride (AK's padding); the row's own figures are the default
   * layout's (the library's best) */
  int have_before;
  double smem_before, model_before, smem_odd, model_odd;
} record;

static record records[MAX_RECORDS];
static int nrecords;
static int on_sim;
static FILE *kernels_file;
static bench_options opt;
static akx_context_info_t dev;

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double run_start;

/* A progress line on stderr: overwritten in place on a terminal, one per case in a log. */
static void progress(const char *fmt, ...) {
  char line[200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (isatty(2)) fprintf(stderr, "\r\033[K[%6.1f s] %s", now_seconds() - run_start, line);
  else fprintf(stderr, "[%6.1f s] %s\n", now_seconds() - run_start, line);
}

static void progress_done(void) {
  if (isatty(2)) fprintf(stderr, "\r\033[K");
}

/* ---- input data and host references ------------------------------------------------------ */

static uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

/* Random nonzero integers in -8..-1, 1..8 (splitmix64 of the index and a per-case seed): a
 * lost or repeated element shows, and every partial sum of up to 10^8 of them (a random walk,
 * ~5 sqrt(n)) stays far below 2^24, so float32, bfloat16-into-float32 and float64 results in
 * any order are exact and the checks demand equality. */
static int value_at(uint64_t seed, int64_t i) {
  int v = (int)(mix((uint64_t)i * 0x9e3779b97f4a7c15u + seed) % 16);
  return v < 8 ? v - 8 : v - 7;
}

static uint16_t bf16_from_float(float f) { /* round to nearest even; no NaNs here */
  uint32_t u;
  memcpy(&u, &f, 4);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

static double bf16_to_double(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static void store_value(void *p, akx_dtype t, int64_t i, double v) {
  switch (t) {
    case AKX_FLOAT32: ((float *)p)[i] = (float)v; break;
    case AKX_FLOAT64: ((double *)p)[i] = v; break;
    case AKX_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
    case AKX_BFLOAT16: ((uint16_t *)p)[i] = bf16_from_float((float)v); break;
    case AKX_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    default: break;
  }
}

static double load_value(const void *p, akx_dtype t, int64_t i) {
  switch (t) {
    case AKX_FLOAT32: return ((const float *)p)[i];
    case AKX_FLOAT64: return ((const double *)p)[i];
    case AKX_INT32: return ((const int32_t *)p)[i];
    case AKX_BFLOAT16: return bf16_to_double(((const uint16_t *)p)[i]);
    case AKX_BOOL: return ((const uint8_t *)p)[i];
    default: return NAN;
  }
}

/* What a result of exact value v reads as in dtype t (bfloat16 rounds once, from float32). */
static double as_dtype(double v, akx_dtype t) {
  return t == AKX_BFLOAT16 ? bf16_to_double(bf16_from_float((float)v)) : t == AKX_FLOAT32 ? (float)v : v;
}

/* ---- the akx calls under test ------------------------------------------------------------ */

typedef enum { OP_SCAN, OP_SCAN_NO_NEUTRAL, OP_FINDALL, OP_MAPREDUCE_HOST, OP_REDUCE_DIMS_COPY,
               OP_REDUCE_DIMS } op_kind;

typedef struct {
  op_kind kind;
  akx_array src, dst;   /* device memory of the context */
  int32_t dim;          /* scans: -1 whole, else the dim (C API) */
  int64_t rows, cols;   /* scans along dims=1: the column-major matrix */
  int64_t count;        /* findall's count */
  double host_result;   /* reductions to the host */
  float host_result_f;
  void *host_src;       /* the input on the host, for the references */
  int64_t n;
  char err[512];        /* the failure's sentence, copied right after the call */
} op_arg;

static akx_status run_scan(akx_context *ctx, void *p) {
  op_arg *a = p;
  akx_status s;
  if (a->kind == OP_SCAN_NO_NEUTRAL) {
    s = akx_bench_no_neutral_scan(ctx, a->dst.data, a->src.data, a->rows, a->cols, a->dim);
    if (s != AKX_SUCCESS) snprintf(a->err, sizeof a->err, "%s", akx_bench_no_neutral_error());
    return s;
  }
  akx_scan_opts so = akx_scan_opts_default();
  s = akx_scan(ctx, &a->dst, &a->src, AKX_OP_ADD, a->dim < 0 ? 0 : a->dim, &so);
  if (s != AKX_SUCCESS) snprintf(a->err, sizeof a->err, "%s", akx_last_error());
  return s;
}

static akx_status run_findall(akx_context *ctx, void *p) {
  op_arg *a = p;
  akx_status s = akx_findall(ctx, &a->src, &a->dst, &a->count);
  if (s != AKX_SUCCESS) snprintf(a->err, sizeof a->err, "%s", akx_last_error());
  return s;
}

static akx_status run_mapreduce_host(akx_context *ctx, void *p) {
  op_arg *a = p;
  akx_status s = akx_mapreduce(ctx, &a->src, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &a->host_result_f,
                               AKX_HOST);
  if (s != AKX_SUCCESS) snprintf(a->err, sizeof a->err, "%s", akx_last_error());
  else a->host_result = a->host_result_f;
  return s;
}

static akx_status run_reduce_dims(akx_context *ctx, void *p) {
  op_arg *a = p;
  akx_status s = akx_reduce_dims(ctx, &a->dst, &a->src, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL);
  if (s == AKX_SUCCESS && a->kind == OP_REDUCE_DIMS_COPY) {
    s = akx_memcpy(ctx, &a->host_result_f, a->dst.data, sizeof(float), AKX_COPY_DEVICE_TO_HOST);
    a->host_result = a->host_result_f;
  }
  if (s != AKX_SUCCESS) snprintf(a->err, sizeof a->err, "%s", akx_last_error());
  return s;
}

static akx_bench_enqueue_fn op_fn(op_kind k) {
  switch (k) {
    case OP_SCAN:
    case OP_SCAN_NO_NEUTRAL: return run_scan;
    case OP_FINDALL: return run_findall;
    case OP_MAPREDUCE_HOST: return run_mapreduce_host;
    default: return run_reduce_dims;
  }
}

/* ---- checks against the host ------------------------------------------------------------- */

static int64_t product(int nd, const int64_t *shape) {
  int64_t n = 1;
  for (int d = 0; d < nd; ++d) n *= shape[d];
  return n;
}

/* 1 when the result matches the host reference; else 0 with a sentence in why. */
static int check_op(akx_context *ctx, op_arg *a, char *why, size_t why_size) {
  if (a->kind == OP_MAPREDUCE_HOST || a->kind == OP_REDUCE_DIMS_COPY) {
    double ref = 0;
    for (int64_t i = 0; i < a->n; ++i) ref += load_value(a->host_src, a->src.dtype, i);
    if (a->host_result == ref) return 1;
    snprintf(why, why_size, "sum is %.17g, expected %.17g", a->host_result, ref);
    return 0;
  }
  int64_t out_n = a->kind == OP_FINDALL ? a->n : product(a->dst.ndim, a->dst.shape);
  size_t esize = akx_dtype_size(a->dst.dtype);
  void *got = malloc((size_t)out_n * esize + 1);
  if (!got) {
    snprintf(why, why_size, "no host memory for the check");
    return 0;
  }
  akx_status s = akx_memcpy(ctx, got, a->dst.data, (size_t)out_n * esize, AKX_COPY_DEVICE_TO_HOST);
  int ok = s == AKX_SUCCESS;
  if (!ok) snprintf(why, why_size, "copying the result back: %s", akx_last_error());
  if (ok && (a->kind == OP_SCAN || a->kind == OP_SCAN_NO_NEUTRAL)) {
    /* whole: one running sum; dims=1: a running sum per column of `rows` elements */
    int64_t seg = a->dim < 0 ? a->n : a->rows;
    double run = 0;
    for (int64_t i = 0; i < a->n && ok; ++i) {
      if (i % seg == 0) run = 0;
      run += load_value(a->host_src, a->src.dtype, i);
      double g = load_value(got, a->dst.dtype, i);
      if (g != as_dtype(run, a->dst.dtype)) {
        snprintf(why, why_size, "element %" PRId64 " is %.17g, expected %.17g", i, g, run);
        ok = 0;
      }
    }
  } else if (ok && a->kind == OP_FINDALL) {
    int64_t k = 0;
    for (int64_t i = 0; i < a->n && ok; ++i) {
      if (!((const uint8_t *)a->host_src)[i]) continue;
      if (k >= a->count || ((const int64_t *)got)[k] != i) {
        snprintf(why, why_size, "index %" PRId64 " is %" PRId64 ", expected %" PRId64, k,
                 k < a->count ? ((const int64_t *)got)[k] : -1, i);
        ok = 0;
      }
      ++k;
    }
    if (ok && k != a->count) {
      snprintf(why, why_size, "count is %" PRId64 ", expected %" PRId64, a->count, k);
      ok = 0;
    }
  } else if (ok) { /* OP_REDUCE_DIMS: column-major, dst's dim is 1 where reduced */
    double *ref = calloc((size_t)out_n, sizeof(double));
    int nd = a->src.ndim;
    int64_t idx[AKX_MAX_DIMS] = {0};
    for (int64_t i = 0; ref && i < a->n; ++i) {
      int64_t o = 0, stride = 1;
      for (int d = 0; d < nd; ++d) {
        if (a->dst.shape[d] != 1) o += idx[d] * stride;
        stride *= a->dst.shape[d];
      }
      ref[o] += load_value(a->host_src, a->src.dtype, i);
      for (int d = 0; d < nd && ++idx[d] == a->src.shape[d]; ++d) idx[d] = 0;
    }
    for (int64_t o = 0; ref && o < out_n && ok; ++o) {
      double g = load_value(got, a->dst.dtype, o), want = as_dtype(ref[o], a->dst.dtype);
      if (g != want) {
        snprintf(why, why_size, "output %" PRId64 " is %.17g, expected %.17g", o, g, want);
        ok = 0;
      }
    }
    if (!ref) {
      snprintf(why, why_size, "no host memory for the check");
      ok = 0;
    }
    free(ref);
  }
  free(got);
  return ok;
}

/* ---- the sim: counters and model of one call --------------------------------------------- */

typedef struct {
  akx_sim_kernel_counters total, k[MAX_KERNELS];
  int32_t count;
} sim_counts;

static double per_request(const akx_sim_traffic *t, uint64_t units) {
  return t->requests ? (double)units / (double)t->requests : 0.0;
}

static akx_sim_traffic traffic_sum(akx_sim_traffic a, akx_sim_traffic b) {
  return (akx_sim_traffic){a.requests + b.requests, a.units + b.units, a.ideal + b.ideal,
                           a.bytes + b.bytes};
}

/* One call on the sim, counted: its status; the counters into c, the wall time into *wall. */
static akx_status sim_call(akx_context *ctx, akx_bench_enqueue_fn fn, op_arg *a, sim_counts *c,
                           double *wall) {
  akx_status s = akx_sim_counters_reset(ctx);
  double t0 = now_seconds();
  if (s == AKX_SUCCESS) s = fn(ctx, a);
  if (s == AKX_SUCCESS) s = akx_synchronize(ctx);
  *wall = now_seconds() - t0;
  if (s == AKX_SUCCESS) {
    s = akx_sim_counters_get(ctx, &c->total, c->k, MAX_KERNELS, &c->count);
    if (c->count > MAX_KERNELS) c->count = MAX_KERNELS;
  }
  return s;
}

static void record_counts(record *r, const sim_counts *c) {
  const akx_sim_kernel_counters *t = &c->total;
  akx_sim_traffic shared = traffic_sum(t->shared_load, t->shared_store);
  r->kernels[0] = 0;
  uint64_t most = 0;
  for (int32_t i = 0; i < c->count; ++i) {
    size_t len = strlen(r->kernels);
    snprintf(r->kernels + len, sizeof r->kernels - len, "%s%s", i ? "+" : "", c->k[i].kernel);
    uint64_t moved = c->k[i].global_load.bytes + c->k[i].global_store.bytes;
    if (i == 0 || moved > most) {
      most = moved;
      snprintf(r->grid, sizeof r->grid, "%ux%u", c->k[i].last_grid, c->k[i].last_block);
    }
  }
  if (!c->count) snprintf(r->grid, sizeof r->grid, "-");
  r->waves = t->waves;
  r->gld = per_request(&t->global_load, t->global_load.units);
  r->gld_ideal = per_request(&t->global_load, t->global_load.ideal);
  r->smem = per_request(&shared, shared.units);
  r->smem_ideal = per_request(&shared, shared.ideal);
  r->bytes_moved = (double)(t->global_load.bytes + t->global_store.bytes);
  r->model_us = t->model_us;
  r->fits_l2 = t->fits_l2;
  r->counted = t->global_load.bytes > 0;
}

static void csv_field(FILE *f, const char *s, int last) {
  if (strpbrk(s, ",\"\n")) {
    fputc('"', f);
    for (; *s; ++s) {
      if (*s == '"') fputc('"', f);
      fputc(*s, f);
    }
    fputc('"', f);
  } else {
    fputs(s, f);
  }
  fputc(last ? '\n' : ',', f);
}

/* --kernels-csv: one line per kernel of the call, for bench/gpu_check.sh's comparison. */
static void write_kernel_rows(const record *r, const sim_counts *c, const char *layout) {
  if (!kernels_file) return;
  for (int32_t i = 0; i < c->count; ++i) {
    const akx_sim_kernel_counters *k = &c->k[i];
    const char *f[] = {r->suite, r->name, r->dtype, r->shape, r->variant, layout, k->kernel};
    for (int j = 0; j < 7; ++j) csv_field(kernels_file, f[j], 0);
    fprintf(kernels_file, "%" PRIu64 ",%u,%u,%.4f", k->launches, k->last_grid, k->last_block, k->waves);
    const akx_sim_traffic *t[] = {&k->shared_load, &k->shared_store, &k->global_load, &k->global_store};
    for (int j = 0; j < 4; ++j)
      fprintf(kernels_file, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64, t[j]->requests,
              t[j]->units, t[j]->ideal, t[j]->bytes);
    fprintf(kernels_file, ",%.3f\n", k->model_us);
  }
}

/* ---- output: the table ------------------------------------------------------------------- */

static int table_on(void) {
  return !(opt.csv && strcmp(opt.csv, "-") == 0) && !(opt.json && strcmp(opt.json, "-") == 0);
}

static void print_header(int suite) {
  if (!table_on()) return;
  if (!on_sim) {
    /* µ is two bytes in UTF-8: those headers are one byte wider to line up with the rows. */
    printf("%-24s %-9s %-16s %-30s %18s %8s %18s %8s %18s %8s %7s %8s  %s\n", "case", "dtype",
           "shape", "akx call", "akx µs med/min", "akx GB/s", "CUB µs med/min", "CUB GB/s",
           "copy µs med/min", "cp GB/s", "akx/CUB", "akx/copy", "check");
  } else if (suite == SUITE_SCAN) {
    printf("%-22s %-8s %-12s %-9s %6s %13s %12s %6s %6s %10s %6s %6s  %s\n", "case", "dtype",
           "shape", "grid", "waves", "gld sect/req", "smem wf/req", "dense", "odd", "model µs",
           "dense", "odd", "kernels / check");
  } else {
    printf("%-24s %-9s %-16s %-30s %-12s %6s %12s %11s %9s %10s %9s  %s\n", "case", "dtype",
           "shape", "akx call", "grid", "waves", "gld sect/req", "smem wf/req", "bytes/min",
           "model µs", "model GB/s", "kernels / check");
  }
}

static void fmt_timing(char *buf, size_t size, const timing *t) {
  if (t->ran) snprintf(buf, size, "%.2f/%.2f", t->median_us, t->min_us);
  else snprintf(buf, size, "-");
}

static double gbs(double bytes, double us) { return us > 0 ? bytes / (us * 1e3) : 0.0; }

static void print_record(const record *r, int suite) {
  if (!table_on()) return;
  char note[640];
  if (r->state == ROW_OK) snprintf(note, sizeof note, "PASS");
  else snprintf(note, sizeof note, "%s%s%s", r->state == ROW_FAIL ? "FAIL: " : "",
                r->state == ROW_NA ? "n/a (unsupported: " : "", r->note);
  if (r->state == ROW_NA) strncat(note, ")", sizeof note - strlen(note) - 1);
  if (!on_sim) {
    char a[32], c[32], m[32];
    fmt_timing(a, sizeof a, &r->akx);
    fmt_timing(c, sizeof c, &r->cub);
    fmt_timing(m, sizeof m, &r->copy);
    char ag[16] = "-", cg[16] = "-", mg[16] = "-", rc[16] = "-", rm[16] = "-";
    if (r->akx.ran) snprintf(ag, sizeof ag, "%.0f", gbs(r->bytes_min, r->akx.median_us));
    if (r->cub.ran) snprintf(cg, sizeof cg, "%.0f", gbs(r->bytes_min, r->cub.median_us));
    if (r->copy.ran) snprintf(mg, sizeof mg, "%.0f", gbs(r->bytes_min, r->copy.median_us));
    if (r->akx.ran && r->cub.ran) snprintf(rc, sizeof rc, "%.3f", r->akx.median_us / r->cub.median_us);
    if (r->akx.ran && r->copy.ran) snprintf(rm, sizeof rm, "%.3f", r->akx.median_us / r->copy.median_us);
    printf("%-24s %-9s %-16s %-30s %17s %8s %17s %8s %17s %8s %7s %8s  %s\n", r->name, r->dtype,
           r->shape, r->variant, a, ag, c, cg, m, mg, rc, rm, note);
    return;
  }
  if (r->state == ROW_SKIPPED || r->state == ROW_NA || !r->counted) {
    const char *why = r->state == ROW_OK && !r->counted ? "model n/a (counters off: AKX_SIM_COUNTERS=0)" : note;
    if (suite == SUITE_SCAN) printf("%-22s %-8s %-12s %-9s  %s\n", r->name, r->dtype, r->shape, "-", why);
    else printf("%-24s %-9s %-16s %-30s  %s\n", r->name, r->dtype, r->shape, r->variant, why);
    return;
  }
  char gld[32], smem[32];
  snprintf(gld, sizeof gld, "%.2f (%.2f)", r->gld, r->gld_ideal);
  if (r->smem_ideal > 0) snprintf(smem, sizeof smem, "%.2f (%.2f)", r->smem, r->smem_ideal);
  else snprintf(smem, sizeof smem, "-");
  char tail[900];
  snprintf(tail, sizeof tail, "%s; %s%s", r->kernels, note, r->fits_l2 ? "; fits L2" : "");
  if (suite == SUITE_SCAN) {
    char b[4][16] = {"-", "-", "-", "-"};
    if (r->have_before) {
      snprintf(b[0], sizeof b[0], "%.2f", r->smem_before);
      snprintf(b[1], sizeof b[1], "%.2f", r->smem_odd);
      snprintf(b[2], sizeof b[2], "%.1f", r->model_before);
      snprintf(b[3], sizeof b[3], "%.1f", r->model_odd);
    }
    printf("%-22s %-8s %-12s %-9s %6.2f %13s %12s %6s %6s %9.2f %6s %6s  %s\n", r->name, r->dtype,
           r->shape, r->grid, r->waves, gld, smem, b[0], b[1], r->model_us, b[2], b[3], tail);
  } else {
    printf("%-24s %-9s %-16s %-30s %-12s %6.2f %12s %11s %9.2f %9.2f %9.0f  %s\n", r->name,
           r->dtype, r->shape, r->variant, r->grid, r->waves, gld, smem,
           r->bytes_min > 0 ? r->bytes_moved / r->bytes_min : 0.0, r->model_us,
           gbs(r->bytes_min, r->model_us), tail);
  }
}

/* ---- one case ---------------------------------------------------------------------------- */

typedef struct {
  const char *suite_name;
  int suite;
  const char *name, *variant[2];
  op_arg *arg[2];          /* one per variant (NULL: none) */
  int scan_layouts;        /* on the sim: run with AKX_SCAN_LAYOUT=dense, =odd_stride, default */
  int exp10;
  double bytes_min;
#ifdef AKX_HAVE_CUDA
  akx_bench_cuda_case peer;
#endif
} bench_case;

static void fill_record(record *r, const bench_case *c, const op_arg *a, int v) {
  memset(r, 0, sizeof *r);
  snprintf(r->suite, sizeof r->suite, "%s", c->suite_name);
  snprintf(r->name, sizeof r->name, "%s", c->name);
  snprintf(r->dtype, sizeof r->dtype, "%s", akx_dtype_name(a->src.dtype));
  r->shape[0] = 0;
  for (int d = 0; d < a->src.ndim; ++d) {
    size_t len = strlen(r->shape);
    snprintf(r->shape + len, sizeof r->shape - len, "%s%" PRId64, d ? "x" : "", a->src.shape[d]);
  }
  snprintf(r->variant, sizeof r->variant, "%s", c->variant[v]);
  r->elements = a->n;
  r->bytes_min = c->bytes_min;
  r->exp10 = c->exp10;
}

static record *new_record(void) {
  if (nrecords == MAX_RECORDS) {
    fprintf(stderr, "akx-bench: more than %d rows\n", MAX_RECORDS);
    exit(EXIT_USAGE);
  }
  return &records[nrecords++];
}

#ifdef AKX_HAVE_CUDA
/* Runs one variant once, checked; the row's state says how it went. Returns the status. */
static akx_status run_checked(akx_context *ctx, akx_bench_enqueue_fn fn, op_arg *a, record *r) {
  a->err[0] = 0;
  akx_status s = fn(ctx, a);
  if (s == AKX_SUCCESS) s = akx_synchronize(ctx);
  if (s == AKX_ERROR_UNSUPPORTED) {
    r->state = ROW_NA;
    snprintf(r->note, sizeof r->note, "%s", a->err);
  } else if (s != AKX_SUCCESS) {
    r->state = ROW_FAIL;
    snprintf(r->note, sizeof r->note, "%s: %s", akx_status_string(s), a->err[0] ? a->err : akx_last_error());
  } else if (!check_op(ctx, a, r->note, sizeof r->note)) {
    r->state = ROW_FAIL;
    s = AKX_ERROR_INTERNAL;
  }
  return s;
}
#endif

static int run_case(akx_context *ctx, const bench_case *c) {
  int failed = 0;
  int nv = c->arg[1] ? 2 : 1;
  record *rows[2];
  for (int v = 0; v < nv; ++v) {
    rows[v] = new_record();
    fill_record(rows[v], c, c->arg[v], v);
    progress("%s: %s %s %s", c->suite_name, c->name, rows[v]->shape, c->variant[v]);
  }
  if (on_sim) {
    for (int v = 0; v < nv; ++v) {
      record *r = rows[v];
      op_arg *a = c->arg[v];
      akx_bench_enqueue_fn fn = op_fn(a->kind);
      static const char *const layouts[] = {"dense", "odd_stride", NULL};
      for (int pass = c->scan_layouts ? 0 : 2; pass < 3; ++pass) {
        if (pass < 2) setenv("AKX_SCAN_LAYOUT", layouts[pass], 1);
        else unsetenv("AKX_SCAN_LAYOUT");
        /* the context reads its settings once; these passes change one on purpose */
        if (akx__context_reread_settings(ctx) != AKX_SUCCESS) {
          fprintf(stderr, "akx-bench: %s\n", akx_last_error());
          return failed + 1;
        }
        sim_counts counts;
        a->err[0] = 0;
        akx_status s = sim_call(ctx, fn, a, &counts, &r->wall_s);
        if (s == AKX_ERROR_UNSUPPORTED) {
          r->state = ROW_NA;
          snprintf(r->note, sizeof r->note, "%s", a->err[0] ? a->err : akx_last_error());
          break;
        }
        if (s != AKX_SUCCESS) {
          r->state = ROW_FAIL;
          snprintf(r->note, sizeof r->note, "%s: %s", akx_status_string(s), a->err[0] ? a->err : akx_last_error());
          break;
        }
        if (!check_op(ctx, a, r->note, sizeof r->note)) {
          r->state = ROW_FAIL;
          break;
        }
        record_counts(r, &counts);
        write_kernel_rows(r, &counts, pass < 2 ? layouts[pass] : "");
        if (pass == 0) {
          r->have_before = 1;
          r->smem_before = r->smem;
          r->model_before = r->model_us;
        } else if (pass == 1) {
          r->smem_odd = r->smem;
          r->model_odd = r->model_us;
        }
      }
      failed |= r->state == ROW_FAIL;
    }
  }
#ifdef AKX_HAVE_CUDA
  else {
    akx_bench_enqueue_fn fns[2] = {NULL, NULL};
    int any = 0;
    for (int v = 0; v < nv; ++v) {
      akx_bench_enqueue_fn fn = op_fn(c->arg[v]->kind);
      if (run_checked(ctx, fn, c->arg[v], rows[v]) == AKX_SUCCESS) {
        fns[v] = fn;
        any = 1;
      }
      failed |= rows[v]->state == ROW_FAIL;
    }
    /* The peers run even when akx cannot (their figures are the target); two akx variants
     * share one arg (the reduce suite), so the timing takes the first. */
    if (!opt.once && !failed) {
      akx_bench_cuda_result res;
      char err[512];
      op_arg *arg = c->arg[0];
      if (nv == 2 && !fns[0]) arg = c->arg[1];
      if (akx_bench_cuda_time(ctx, fns, arg, &c->peer, WARMUP_RUNS, opt.runs, &res, err, sizeof err)) {
        for (int v = 0; v < nv; ++v) {
          rows[v]->state = ROW_FAIL;
          snprintf(rows[v]->note, sizeof rows[v]->note, "timing: %s", err);
        }
        failed = 1;
      } else {
        for (int v = 0; v < nv; ++v) {
          rows[v]->akx = (timing){res.akx[v].median_us, res.akx[v].min_us, res.akx[v].ran};
          rows[v]->cub = (timing){res.cub.median_us, res.cub.min_us, res.cub.ran};
          rows[v]->copy = (timing){res.copy.median_us, res.copy.min_us, res.copy.ran};
        }
      }
    }
    (void)any;
  }
#endif
  progress_done();
  for (int v = 0; v < nv; ++v) print_record(rows[v], c->suite);
  fflush(stdout);
  return failed;
}

static void skip_row(const bench_case *c, const op_arg *a, const char *why) {
  for (int v = 0; v < (c->arg[1] ? 2 : 1); ++v) {
    record *r = new_record();
    fill_record(r, c, a, v);
    r->state = ROW_SKIPPED;
    snprintf(r->note, sizeof r->note, "%s", why);
    print_record(r, c->suite);
  }
}

/* ---- device buffers ---------------------------------------------------------------------- */

typedef struct {
  void *src, *dst, *host;
  size_t src_bytes, dst_bytes;
} buffers;

static akx_status buffers_create(akx_context *ctx, buffers *b, akx_dtype t, int64_t n,
                                 size_t dst_bytes, uint64_t seed) {
  *b = (buffers){.src_bytes = (size_t)n * akx_dtype_size(t), .dst_bytes = dst_bytes};
  b->host = malloc(b->src_bytes);
  if (!b->host) return AKX_ERROR_OUT_OF_MEMORY;
  for (int64_t i = 0; i < n; ++i)
    store_value(b->host, t, i, t == AKX_BOOL ? (double)(mix((uint64_t)i + seed) & 1) : value_at(seed, i));
  akx_status s = akx_malloc(ctx, &b->src, b->src_bytes);
  if (s == AKX_SUCCESS) s = akx_malloc(ctx, &b->dst, dst_bytes);
  if (s == AKX_SUCCESS) s = akx_memcpy(ctx, b->src, b->host, b->src_bytes, AKX_COPY_HOST_TO_DEVICE);
  if (s != AKX_SUCCESS)
    fprintf(stderr, "akx-bench: input of %" PRId64 " %s: %s: %s\n", n, akx_dtype_name(t),
            akx_status_string(s), akx_last_error());
  return s;
}

static void buffers_destroy(akx_context *ctx, buffers *b) {
  if (b->src) akx_free(ctx, b->src);
  if (b->dst) akx_free(ctx, b->dst);
  free(b->host);
}

static int64_t pow10_i64(int e) {
  int64_t v = 1;
  while (e-- > 0) v *= 10;
  return v;
}

/* The size sweep of a suite: 10^lo..10^hi, with --quick only some of them. */
static int sweep_max(void) {
  if (opt.max_exp >= 0) return opt.max_exp;
  return on_sim && !opt.full ? SIM_MAX_EXP : 8;
}

/* ---- suite: scan ------------------------------------------------------------------------- */

typedef struct {
  const char *name;
  akx_dtype dtype;
  int no_neutral, dims1;
#ifdef AKX_HAVE_CUDA
  akx_bench_peer peer;
#endif
} scan_spec;

#ifdef AKX_HAVE_CUDA
#define PEER(p) , p
#else
#define PEER(p)
#endif

static const scan_spec scan_specs[] = {
    {"no-neutral add", AKX_FLOAT32, 1, 0 PEER(AKX_PEER_SCAN_OP)},
    {"no-neutral add dims=1", AKX_FLOAT32, 1, 1 PEER(AKX_PEER_SCAN_OP_BY_KEY)},
    {"add", AKX_FLOAT64, 0, 0 PEER(AKX_PEER_SCAN_SUM)},
    {"add dims=1", AKX_FLOAT64, 0, 1 PEER(AKX_PEER_SCAN_SUM_BY_KEY)},
    {"add", AKX_FLOAT32, 0, 0 PEER(AKX_PEER_SCAN_SUM)},
    {"add dims=1", AKX_FLOAT32, 0, 1 PEER(AKX_PEER_SCAN_SUM_BY_KEY)},
    {"add", AKX_INT32, 0, 0 PEER(AKX_PEER_SCAN_SUM)},
    {"add dims=1", AKX_INT32, 0, 1 PEER(AKX_PEER_SCAN_SUM_BY_KEY)},
};

static int size_in_sweep(int e) {
  /* the same on both backends, so that gpu_check.sh can set CUDA's calls beside the sim's */
  return !opt.quick || e <= 5;
}

static int suite_scan(akx_context *ctx) {
  int failed = 0;
  int hi = sweep_max();
  if (table_on()) {
    printf("\n== scan: inclusive scans (seed scan-padded-tiles); dims=1: the columns of a "
           "column-major matrix\n");
    if (on_sim)
      printf("   smem wf/req (ideal) and model µs: the default layout (the library's best); beside\n"
             "   them the same call with AKX_SCAN_LAYOUT=dense (unpadded runs: the seed's before)\n"
             "   and =odd_stride (the seed's padding: its after).\n");
    print_header(SUITE_SCAN);
  }
  for (size_t k = 0; k < sizeof scan_specs / sizeof scan_specs[0]; ++k) {
    const scan_spec *sp = &scan_specs[k];
    for (int e = 4; e <= 8; ++e) {
      if (!size_in_sweep(e)) continue;
      int64_t n = pow10_i64(e);
      int64_t rows = sp->dims1 ? pow10_i64((e + 1) / 2) : n, cols = n / rows;
      op_arg a = {.kind = sp->no_neutral ? OP_SCAN_NO_NEUTRAL : OP_SCAN, .dim = sp->dims1 ? 0 : -1,
                  .rows = rows, .cols = cols, .n = n};
      int64_t shape[2] = {rows, cols};
      a.src = sp->dims1 ? akx_array_f(NULL, sp->dtype, 2, shape) : akx_vector(NULL, sp->dtype, n);
      a.dst = a.src;
      size_t bytes = (size_t)n * akx_dtype_size(sp->dtype);
      bench_case c = {.suite_name = "scan", .suite = SUITE_SCAN, .name = sp->name,
                      .variant = {sp->no_neutral ? "akx::scan_inclusive (akx.cuh)" : "akx_scan"},
                      .arg = {&a}, .scan_layouts = 1, .exp10 = e, .bytes_min = 2.0 * (double)bytes};
      if (e > hi) {
        skip_row(&c, &a, on_sim ? "skipped on sim (use --full)" : "skipped (--max)");
        continue;
      }
      buffers b;
      if (buffers_create(ctx, &b, sp->dtype, n, bytes, 0x5ca9 + k) != AKX_SUCCESS) {
        buffers_destroy(ctx, &b);
        return EXIT_USAGE;
      }
      a.src.data = b.src;
      a.dst.data = b.dst;
      a.host_src = b.host;
#ifdef AKX_HAVE_CUDA
      c.peer = (akx_bench_cuda_case){.peer = sp->peer, .dtype = sp->dtype, .src = b.src, .n = n,
                                     .segments = cols, .segment_length = rows, .copy_bytes = bytes};
#endif
      failed |= run_case(ctx, &c);
      buffers_destroy(ctx, &b);
    }
  }
  return failed;
}

/* ---- suite: findall ---------------------------------------------------------------------- */

static int suite_findall(akx_context *ctx) {
  int failed = 0;
  if (table_on()) {
    printf("\n== findall: indices (int64) of the nonzero bytes of a bool vector, half of them set "
           "(seed scan-padded-tiles)\n");
    print_header(SUITE_FINDALL);
  }
  for (int e = 4; e <= 8; ++e) {
    if (!size_in_sweep(e)) continue;
    int64_t n = pow10_i64(e);
    op_arg a = {.kind = OP_FINDALL, .n = n};
    a.src = akx_vector(NULL, AKX_BOOL, n);
    a.dst = akx_vector(NULL, AKX_INT64, n);
    /* read n bytes, write the indices of about half of them */
    bench_case c = {.suite_name = "findall", .suite = SUITE_FINDALL, .name = "findall",
                    .variant = {"akx_findall"}, .arg = {&a}, .exp10 = e,
                    .bytes_min = (double)n + 8.0 * (double)n / 2};
    if (e > sweep_max()) {
      skip_row(&c, &a, on_sim ? "skipped on sim (use --full)" : "skipped (--max)");
      continue;
    }
    buffers b;
    if (buffers_create(ctx, &b, AKX_BOOL, n, (size_t)n * 8, 0xf1a7) != AKX_SUCCESS) {
      buffers_destroy(ctx, &b);
      return EXIT_USAGE;
    }
    int64_t set = 0;
    for (int64_t i = 0; i < n; ++i) set += ((uint8_t *)b.host)[i];
    c.bytes_min = (double)n + 8.0 * (double)set;
    a.src.data = b.src;
    a.dst.data = b.dst;
    a.host_src = b.host;
#ifdef AKX_HAVE_CUDA
    c.peer = (akx_bench_cuda_case){.peer = AKX_PEER_SELECT_FLAGGED, .dtype = AKX_BOOL, .src = b.src,
                                   .n = n, .copy_bytes = (size_t)(c.bytes_min / 2)};
#endif
    failed |= run_case(ctx, &c);
    buffers_destroy(ctx, &b);
  }
  return failed;
}

/* ---- suite: reduce ----------------------------------------------------------------------- */

static int suite_reduce(akx_context *ctx) {
  int failed = 0;
  if (table_on()) {
    printf("\n== reduce: float32 sums (seed reduce-whole-array-on-device): akx_mapreduce to the "
           "host;\n   akx_reduce_dims into one device element + copy back%s\n",
           on_sim ? "" : "; CUB: DeviceReduce::Sum + copy back");
    print_header(SUITE_REDUCE);
  }
  const int exps[] = {4, 6, 8};
  for (int i = 0; i < 3; ++i) {
    int e = exps[i];
    if (opt.quick && e == 8) continue;
    int64_t n = pow10_i64(e), one = 1;
    op_arg host = {.kind = OP_MAPREDUCE_HOST, .n = n}, dev1 = {.kind = OP_REDUCE_DIMS_COPY, .n = n};
    host.src = dev1.src = akx_vector(NULL, AKX_FLOAT32, n);
    dev1.dst = akx_array_c(NULL, AKX_FLOAT32, 1, &one);
    bench_case c = {.suite_name = "reduce", .suite = SUITE_REDUCE, .name = "sum",
                    .variant = {"akx_mapreduce -> host", "akx_reduce_dims -> dev + copy"},
                    .arg = {&host, &dev1}, .exp10 = e, .bytes_min = 4.0 * (double)n + 4};
    if (e > sweep_max()) {
      skip_row(&c, &host, on_sim ? "skipped on sim (use --full)" : "skipped (--max)");
      continue;
    }
    buffers b;
    if (buffers_create(ctx, &b, AKX_FLOAT32, n, sizeof(float), 0x5e1) != AKX_SUCCESS) {
      buffers_destroy(ctx, &b);
      return EXIT_USAGE;
    }
    host.src.data = dev1.src.data = b.src;
    dev1.dst.data = b.dst;
    host.host_src = dev1.host_src = b.host;
#ifdef AKX_HAVE_CUDA
    c.peer = (akx_bench_cuda_case){.peer = AKX_PEER_REDUCE_SUM_TO_HOST, .dtype = AKX_FLOAT32,
                                   .src = b.src, .n = n, .copy_bytes = (size_t)n * 2};
#endif
    failed |= run_case(ctx, &c);
    buffers_destroy(ctx, &b);
  }
  return failed;
}

/* ---- suite: dims ------------------------------------------------------------------------- */

/* Julia's column-major shapes and dims (1-based) of docs/reduce_dims_shapes.md's figures. */
typedef struct {
  int ndim;
  int64_t shape[3];
  int dims[2]; /* Julia dims reduced, 0-terminated */
} dims_spec;

static const dims_spec dims_specs[] = {
    {3, {768, 1024, 8}, {2}},    {3, {64, 4096, 32}, {2}}, {2, {3072, 2048}, {2}},
    {2, {8192, 8192}, {2}},      {2, {4096, 4096}, {1}},   {2, {4096, 4096}, {2}},
    {2, {3, 3000000}, {2}},      {2, {32768, 32}, {1}},    {2, {32768, 32}, {2}},
    {3, {1024, 1024, 64}, {1, 3}},
};

static int suite_dims(akx_context *ctx) {
  int failed = 0;
  if (table_on()) {
    printf("\n== dims: sum(x; dims=...) of column-major arrays (seed reduce-dims-shapes); Julia "
           "dims=k is the C API's dim k-1;\n   bytes/min: bytes moved over src read once + dst "
           "written once%s\n",
           on_sim ? "" : "; CUB: DeviceSegmentedReduce where the reduced elements are contiguous");
    print_header(SUITE_DIMS);
  }
  const akx_dtype dtypes[] = {AKX_FLOAT32, AKX_BFLOAT16};
  for (size_t k = 0; k < sizeof dims_specs / sizeof dims_specs[0]; ++k) {
    const dims_spec *sp = &dims_specs[k];
    for (int t = 0; t < 2; ++t) {
      akx_dtype dt = dtypes[t];
      int64_t dshape[3];
      int reduced[3] = {0, 0, 0};
      for (int j = 0; j < 2 && sp->dims[j]; ++j) reduced[sp->dims[j] - 1] = 1;
      for (int d = 0; d < sp->ndim; ++d) dshape[d] = reduced[d] ? 1 : sp->shape[d];
      int64_t n = product(sp->ndim, sp->shape), outs = product(sp->ndim, dshape);
      char name[40];
      snprintf(name, sizeof name, "sum dims=%s%d%s%s", sp->dims[1] ? "(" : "", sp->dims[0],
               sp->dims[1] ? ",3)" : "", "");
      op_arg a = {.kind = OP_REDUCE_DIMS, .n = n};
      a.src = akx_array_f(NULL, dt, sp->ndim, sp->shape);
      a.dst = akx_array_f(NULL, dt, sp->ndim, dshape);
      size_t esize = akx_dtype_size(dt);
      bench_case c = {.suite_name = "dims", .suite = SUITE_DIMS, .name = name,
                      .variant = {"akx_reduce_dims"}, .arg = {&a}, .exp10 = -1,
                      .bytes_min = (double)((n + outs) * (int64_t)esize)};
      if (opt.quick && n > QUICK_DIMS_ELEMENTS) {
        skip_row(&c, &a, "skipped with --quick");
        continue;
      }
      buffers b;
      if (buffers_create(ctx, &b, dt, n, (size_t)outs * esize, 0xd1 + k) != AKX_SUCCESS) {
        buffers_destroy(ctx, &b);
        return EXIT_USAGE;
      }
      a.src.data = b.src;
      a.dst.data = b.dst;
      a.host_src = b.host;
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
      failed |= run_case(ctx, &c);
      buffers_destroy(ctx, &b);
    }
  }
  return failed;
}

/* ---- files: CSV, JSON, plot -------------------------------------------------------------- */

static FILE *open_out(const char *path) {
  if (strcmp(path, "-") == 0) return stdout;
  FILE *f = fopen(path, "w");
  if (!f) fprintf(stderr, "akx-bench: cannot write %s: %s\n", path, strerror(errno));
  return f;
}

static void close_out(FILE *f) {
  if (f && f != stdout) fclose(f);
}

static const char *const csv_columns =
    "backend,device,suite,case,dtype,shape,variant,elements,bytes_min,state,note,"
    "akx_median_us,akx_min_us,cub_median_us,cub_min_us,copy_median_us,copy_min_us,"
    "akx_gbs,cub_gbs,copy_gbs,akx_over_cub,akx_over_copy,"
    "sim_kernels,sim_grid,sim_waves,sim_gld_sectors_per_req,sim_gld_ideal,"
    "sim_smem_wavefronts_per_req,sim_smem_ideal,sim_bytes_moved,sim_model_us,sim_model_gbs,"
    "sim_fits_l2,sim_wall_s,sim_smem_wavefronts_per_req_unpadded,sim_model_us_unpadded,"
    "sim_smem_wavefronts_per_req_odd_stride,sim_model_us_odd_stride";

/* The numbers of a row, in csv_columns' order from akx_median_us on; NAN where absent. */
enum { NUMBERS = 25 };
static void row_numbers(const record *r, double v[NUMBERS]) {
  for (int i = 0; i < NUMBERS; ++i) v[i] = NAN;
  if (!on_sim) {
    const timing *t[] = {&r->akx, &r->cub, &r->copy};
    for (int i = 0; i < 3; ++i)
      if (t[i]->ran) {
        v[2 * i] = t[i]->median_us;
        v[2 * i + 1] = t[i]->min_us;
        v[6 + i] = gbs(r->bytes_min, t[i]->median_us);
      }
    if (r->akx.ran && r->cub.ran) v[9] = r->akx.median_us / r->cub.median_us;
    if (r->akx.ran && r->copy.ran) v[10] = r->akx.median_us / r->copy.median_us;
  } else if (r->state == ROW_OK && r->counted) {
    double s[] = {r->waves, r->gld, r->gld_ideal, r->smem, r->smem_ideal, r->bytes_moved,
                  r->model_us, gbs(r->bytes_min, r->model_us), r->fits_l2, r->wall_s};
    for (int i = 0; i < 10; ++i) v[11 + i] = s[i];
    if (r->have_before) {
      v[21] = r->smem_before;
      v[22] = r->model_before;
      v[23] = r->smem_odd;
      v[24] = r->model_odd;
    }
  }
}

static int write_csv(const char *path) {
  FILE *f = open_out(path);
  if (!f) return -1;
  fprintf(f, "%s\n", csv_columns);
  for (int i = 0; i < nrecords; ++i) {
    const record *r = &records[i];
    char num[40];
    snprintf(num, sizeof num, "%" PRId64, r->elements);
    const char *text[] = {on_sim ? "sim" : "cuda", dev.device_name, r->suite, r->name, r->dtype,
                          r->shape, r->variant, num};
    for (int j = 0; j < 8; ++j) csv_field(f, text[j], 0);
    fprintf(f, "%.0f,", r->bytes_min);
    csv_field(f, state_name[r->state], 0);
    csv_field(f, r->note, 0);
    double v[NUMBERS];
    row_numbers(r, v);
    for (int j = 0; j < NUMBERS; ++j) {
      if (j == 11) { /* the kernels and grid, between akx_over_copy and the waves */
        csv_field(f, on_sim ? r->kernels : "", 0);
        csv_field(f, on_sim ? r->grid : "", 0);
      }
      if (!isnan(v[j])) fprintf(f, "%.6g", v[j]);
      fputc(j == NUMBERS - 1 ? '\n' : ',', f);
    }
  }
  close_out(f);
  return 0;
}

static void json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; ++s) {
    if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
    else if ((unsigned char)*s < 0x20) fprintf(f, "\\u%04x", *s);
    else fputc(*s, f);
  }
  fputc('"', f);
}

static int write_json(const char *path) {
  FILE *f = open_out(path);
  if (!f) return -1;
  fprintf(f, "{\"backend\": \"%s\", \"device\": ", on_sim ? "sim" : "cuda");
  json_string(f, dev.device_name);
  fprintf(f, ", \"rows\": [\n");
  /* the column names, split from csv_columns */
  char names[1024];
  snprintf(names, sizeof names, "%s", csv_columns);
  const char *col[40];
  int ncol = 0;
  for (char *save = NULL, *t = strtok_r(names, ",", &save); t && ncol < 40; t = strtok_r(NULL, ",", &save))
    col[ncol++] = t;
  for (int i = 0; i < nrecords; ++i) {
    const record *r = &records[i];
    fprintf(f, "  {\"suite\": ");
    json_string(f, r->suite);
    const char *text[] = {r->name, r->dtype, r->shape, r->variant};
    for (int j = 0; j < 4; ++j) {
      fprintf(f, ", \"%s\": ", col[3 + j]);
      json_string(f, text[j]);
    }
    fprintf(f, ", \"elements\": %" PRId64 ", \"bytes_min\": %.0f, \"state\": ", r->elements, r->bytes_min);
    json_string(f, state_name[r->state]);
    fprintf(f, ", \"note\": ");
    json_string(f, r->note);
    if (on_sim) {
      fprintf(f, ", \"sim_kernels\": ");
      json_string(f, r->kernels);
      fprintf(f, ", \"sim_grid\": ");
      json_string(f, r->grid);
    }
    double v[NUMBERS];
    row_numbers(r, v);
    for (int j = 0; j < NUMBERS; ++j) {
      if (isnan(v[j])) continue;
      int c = 11 + j + (j >= 11 ? 2 : 0);
      fprintf(f, ", \"%s\": %.6g", col[c], v[j]);
    }
    fprintf(f, "}%s\n", i + 1 < nrecords ? "," : "");
  }
  fprintf(f, "]}\n");
  close_out(f);
  return 0;
}

static void plot_title(const record *r, char *buf, size_t size) {
  int reduce = strcmp(r->suite, "reduce") == 0;
  snprintf(buf, size, "%s %s %s%s%s", r->suite, r->name, r->dtype, reduce ? ": " : "",
           reduce ? r->variant : "");
}

/* Bandwidth versus size, one panel per case of the size sweeps: akx, CUB and the copy on
 * CUDA, the model on the sim. gnuplot draws it (Debian: gnuplot-nox). */
static int write_plot(const char *png) {
  if (system("command -v gnuplot >/dev/null 2>&1") != 0) {
    fprintf(stderr, "akx-bench: --plot needs gnuplot, which is not on PATH (Debian: apt-get "
                    "install gnuplot-nox); the tables, --csv and --json are unaffected\n");
    return -1;
  }
  char data[4096], script[4096];
  snprintf(data, sizeof data, "%s.dat", png);
  snprintf(script, sizeof script, "%s.gp", png);
  /* one gnuplot data block per (suite, case, dtype, variant) with a size sweep */
  char titles[64][120];
  int blocks = 0;
  for (int i = 0; i < nrecords && blocks < 64; ++i) {
    char title[120];
    if (records[i].exp10 < 0) continue;
    plot_title(&records[i], title, sizeof title);
    double v[NUMBERS];
    row_numbers(&records[i], v);
    if (isnan(on_sim ? v[18] : v[6]) && isnan(v[7]) && isnan(v[8])) continue; /* nothing to draw */
    int seen = 0;
    for (int b = 0; b < blocks; ++b) seen |= strcmp(titles[b], title) == 0;
    if (!seen) snprintf(titles[blocks++], sizeof titles[0], "%s", title);
  }
  if (!blocks) {
    fprintf(stderr, "akx-bench: --plot: no size sweep in this run (the dims suite has none)\n");
    return -1;
  }
  FILE *d = fopen(data, "w"), *g = fopen(script, "w");
  if (!d || !g) {
    fprintf(stderr, "akx-bench: cannot write %s / %s: %s\n", data, script, strerror(errno));
    if (d) fclose(d);
    if (g) fclose(g);
    return -1;
  }
  for (int b = 0; b < blocks; ++b) {
    fprintf(d, "# %s\n# elements akx CUB copy (GB/s; NaN: none)\n", titles[b]);
    for (int j = 0; j < nrecords; ++j) {
      const record *q = &records[j];
      char t2[120];
      if (q->exp10 < 0) continue;
      plot_title(q, t2, sizeof t2);
      if (strcmp(t2, titles[b]) != 0) continue;
      double v[NUMBERS];
      row_numbers(q, v);
      double cols[3] = {on_sim ? v[18] : v[6], on_sim ? NAN : v[7], on_sim ? NAN : v[8]};
      fprintf(d, "%" PRId64, q->elements);
      for (int c = 0; c < 3; ++c) {
        if (isnan(cols[c])) fprintf(d, " NaN");
        else fprintf(d, " %.3f", cols[c]);
      }
      fprintf(d, "\n");
    }
    fprintf(d, "\n\n");
  }
  fclose(d);
  int ncols = blocks < 3 ? blocks : 3, nrows = (blocks + ncols - 1) / ncols;
  fprintf(g, "set terminal pngcairo size %d,%d font ',9' noenhanced\n", 420 * ncols, 320 * nrows + 40);
  fprintf(g, "set output '%s'\n", png);
  fprintf(g, "set multiplot layout %d,%d title '%s, %s: GB/s (least bytes moved / %s time) "
             "versus elements'\n", nrows, ncols, on_sim ? "akx-bench on the sim" : "akx-bench on CUDA",
          dev.device_name, on_sim ? "model" : "median");
  fprintf(g, "set logscale x\nset format x '10^%%L'\nset key top left\nset grid\nset yrange [0:*]\n"
             "set datafile missing 'NaN'\n");
  for (int b = 0; b < blocks; ++b) {
    fprintf(g, "set title '%s'\n", titles[b]);
    if (on_sim)
      fprintf(g, "plot '%s' index %d using 1:2 with linespoints title 'akx (model)'\n", data, b);
    else
      fprintf(g, "plot '%s' index %d using 1:2 with linespoints title 'akx', '' index %d using 1:3 "
                 "with linespoints title 'CUB', '' index %d using 1:4 with lines dashtype 2 title 'copy'\n",
              data, b, b, b);
  }
  fprintf(g, "unset multiplot\n");
  fclose(g);
  char cmd[8400];
  snprintf(cmd, sizeof cmd, "gnuplot '%s'", script);
  if (system(cmd) != 0) {
    fprintf(stderr, "akx-bench: gnuplot failed on %s\n", script);
    return -1;
  }
  fprintf(stderr, "akx-bench: plot in %s (data %s, script %s)\n", png, data, script);
  return 0;
}

/* ---- main -------------------------------------------------------------------------------- */

static void preamble(akx_context *ctx) {
  if (!table_on()) return;
  if (on_sim) {
    akx_sim_kernel_counters total;
    double l2 = akx_sim_counters_get(ctx, &total, NULL, 0, NULL) == AKX_SUCCESS
                    ? (double)total.l2_bytes / (1024.0 * 1024.0) : 0.0;
    printf("akx-bench on the sim, profile %s (%d SMs, sm_%d%d, %.0f GB/s peak, L2 %.0f MiB)%s.\n"
           "Each row: one call, run on CPU fibers and counted as Nsight Compute would. grid: the\n"
           "launch moving the most bytes; waves: blocks / blocks resident at once, summed over\n"
           "launches; gld sect/req: 32-byte sectors per global load request (ideal); smem wf/req:\n"
           "shared-memory wavefronts per request, loads and stores (ideal); bytes/min: global\n"
           "bytes moved over the least (src once + dst once); model µs: the sim's estimate of the\n"
           "GPU time (src/sim/model.c), never a measurement; model GB/s = min bytes / model time.\n"
           "'fits L2': a GPU repeating the call may serve it from L2; the model prices DRAM.\n"
           "Input: random nonzero integers in -8..8 (bool: half set); every result is checked.\n",
           dev.sim_profile, dev.sm_count, dev.cc_major, dev.cc_minor, dev.bandwidth_gbs, l2,
           opt.quick ? ", --quick" : "");
    const char *counting = getenv("AKX_SIM_COUNTERS");
    if (counting && strcmp(counting, "0") == 0)
      printf("AKX_SIM_COUNTERS=0: counting is off, there is no model.\n");
  } else {
    printf("akx-bench on CUDA: %s (sm_%d%d, %d SMs, %.0f GB/s peak)%s.\n"
           "µs: median/minimum of %d runs after %d warm-up rounds; a round runs akx, CUB and the\n"
           "copy one after the other (interleaved) on one stream, each after a write of twice the\n"
           "L2 (so inputs come from DRAM) and between its own CUDA events. copy: cudaMemcpyAsync\n"
           "device to device of half the case's least traffic, so it moves (reads + writes) the\n"
           "same bytes: the bandwidth limit. GB/s = least bytes (src once + dst once) / median.\n"
           "akx/CUB, akx/copy: ratios of median times (below 1: akx is faster).\n"
           "Input: random nonzero integers in -8..8 (bool: half set); every result is checked.\n",
           dev.device_name, dev.cc_major, dev.cc_minor, dev.sm_count, dev.bandwidth_gbs,
           opt.once ? ", --once (no timing)" : "", opt.runs, WARMUP_RUNS);
  }
}

int main(int argc, char **argv) {
#ifdef AKX_BENCH_DIST
  if (argc > 1 && strcmp(argv[1], "dist") == 0) return akx_bench_dist(argc, argv); /* under mpirun */
#endif
  int parsed = parse_args(argc, argv, &opt);
  if (parsed) return parsed > 0 ? 0 : EXIT_USAGE;
  run_start = now_seconds();

  akx_context *ctx = NULL;
  akx_status s = akx_context_create(&ctx, opt.backend, 0);
  if (s != AKX_SUCCESS) {
    fprintf(stderr, "akx-bench: akx_context_create: %s: %s\n", akx_status_string(s), akx_last_error());
    return EXIT_USAGE;
  }
  akx_context_info(ctx, &dev);
  on_sim = dev.backend == AKX_BACKEND_SIM;
#ifndef AKX_HAVE_CUDA
  if (!on_sim) {
    fprintf(stderr, "akx-bench: built without CUDA, cannot time the CUDA backend\n");
    akx_context_destroy(ctx);
    return EXIT_USAGE;
  }
#else
  if (!on_sim && !opt.once) akx_bench_cuda_print_registers();
#endif
  if (opt.kernels_csv) {
    if (!on_sim) {
      fprintf(stderr, "akx-bench: --kernels-csv needs the sim's counters (--backend sim)\n");
      akx_context_destroy(ctx);
      return EXIT_USAGE;
    }
    kernels_file = open_out(opt.kernels_csv);
    if (!kernels_file) return EXIT_USAGE;
    fprintf(kernels_file, "suite,case,dtype,shape,variant,layout,kernel,launches,grid,block,waves");
    const char *tr[] = {"shared_load", "shared_store", "global_load", "global_store"};
    for (int i = 0; i < 4; ++i)
      fprintf(kernels_file, ",%s_requests,%s_units,%s_ideal,%s_bytes", tr[i], tr[i], tr[i], tr[i]);
    fprintf(kernels_file, ",model_us\n");
  }
  preamble(ctx);

  int status = 0;
  if (opt.suites & SUITE_SCAN) status |= suite_scan(ctx);
  if (!(status & EXIT_USAGE) && (opt.suites & SUITE_FINDALL)) status |= suite_findall(ctx);
  if (!(status & EXIT_USAGE) && (opt.suites & SUITE_REDUCE)) status |= suite_reduce(ctx);
  if (!(status & EXIT_USAGE) && (opt.suites & SUITE_DIMS)) status |= suite_dims(ctx);
  if (status & EXIT_USAGE) status = EXIT_USAGE;

  if (opt.csv && write_csv(opt.csv)) status = EXIT_USAGE;
  if (opt.json && write_json(opt.json)) status = EXIT_USAGE;
  if (opt.plot && write_plot(opt.plot)) status = EXIT_USAGE;
  close_out(kernels_file);

  int ok = 0, na = 0, fail = 0, skipped = 0;
  for (int i = 0; i < nrecords; ++i) {
    ok += records[i].state == ROW_OK;
    na += records[i].state == ROW_NA;
    fail += records[i].state == ROW_FAIL;
    skipped += records[i].state == ROW_SKIPPED;
  }
  fprintf(stderr, "akx-bench: %d rows: %d passed, %d n/a (unsupported), %d skipped, %d FAILED; %.1f s\n",
          nrecords, ok, na, skipped, fail, now_seconds() - run_start);
  akx_context_destroy(ctx);
  return status;
}
