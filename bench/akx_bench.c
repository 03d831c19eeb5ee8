/* akx-bench: how fast libakx's scans and reductions are. On a GPU each call runs beside its
 * CUB peer and a device copy of the same bytes; on the sim each call runs once, counted, beside
 * the model's time of a device copy of the same bytes and the profile's peak bandwidth.
 *
 *   akx-bench [SUITE...] [--backend auto|cuda|sim] [--profile h200|rtx5080] [--full | --quick]
 *             [--runs N] [--max E] [--csv FILE] [--json FILE] [--plot FILE.png]
 *             [--kernels-csv FILE] [--once]
 *
 * Suites (one table each, in this order; no suite or `all`: every one):
 *   scan:    inclusive scans, whole and along dims=1 of a column-major matrix: an operator
 *            without neutral element (float32, Optional partials, through include/akx.cuh),
 *            float64, float32 and int32 add (docs/scan_tiles.md);
 *   findall: the indices of the nonzero bytes of a bool vector (the same note's last row);
 *   reduce:  float32 sums of the whole array: akx_mapreduce to the host, akx_reduce_dims into
 *            one device element plus the copy back (docs/reduce_whole.md);
 *   dims:    sum(x; dims=...) over the shapes of docs/reduce_dims_shapes.md, float32 and
 *            bfloat16.
 * The cases run come from one plan made before anything runs (plan_* below), so that progress
 * can say "case i/N" with an ETA. The default plan is what the sim runs in about a minute on a
 * 2-core machine: every family, sizes up to 10^8 where the sim is fast enough. --full plans the
 * complete tables of the notes (every size 10^4..10^8, every dtype and shape, the scans also
 * with the dense and odd-stride layouts); on CUDA the default is --full (a GPU runs it in
 * seconds). Rows go to the table and to --csv / --json as each case finishes.
 * Every akx result is checked against the host. A call that returns AKX_ERROR_UNSUPPORTED
 * prints "n/a (unsupported: ...)" and does not fail the run; any other error or a wrong result
 * exits with status 1; a usage or setup error with 2; SIGINT or SIGTERM with 128 + the signal,
 * after the rows so far (and the plot of them) are written. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "akx.h"
#include "internal.h"  /* akx__context_reread_settings */
#include "sim/model.h" /* akx__sim_model_us: the model's time of a device copy */
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
enum { WARMUP_RUNS = 3, MAX_KERNELS = 32, MAX_RECORDS = 512, MAX_CASES = 256 };
/* --quick: sizes up to 10^QUICK_MAX_EXP and dims shapes up to QUICK_DIMS_ELEMENTS, on both
 * backends (bench/gpu_check.sh sets CUDA's calls beside the sim's case by case). */
enum { QUICK_MAX_EXP = 5, QUICK_DIMS_ELEMENTS = 1 << 23 };

/* ---- options ----------------------------------------------------------------------------- */

typedef struct {
  unsigned suites; /* a bit per row of suites[]; 0: every suite */
  akx_backend backend;
  const char *profile; /* --profile: the sim's device profile (AKX_SIM_DEVICE) */
  int quick, full, once;
  int runs;    /* 0: 20, or 5 with --quick */
  int max_exp; /* -1: no cap beyond the plan's */
  const char *csv, *json, *plot, *kernels_csv;
} bench_options;

static bench_options opt;
typedef struct planned_case planned_case;

/* A suite: a table of the output, one panel of the plot. Adding one is a plan function that
 * lists its cases (plan_add), a run function for one case (run_case on a bench_case), and a
 * row here. */
typedef struct {
  const char *name;    /* the command-line word; the CSV's and JSON's "suite" */
  const char *help;    /* --help's line */
  const char *heading; /* the table's heading and the plot panel's title */
  void (*plan)(void);
  int (*run)(akx_context *ctx, const planned_case *p); /* 0, 1 (failed) or EXIT_USAGE */
} suite_def;

static void plan_scan(void), plan_findall(void), plan_reduce(void), plan_dims(void);
static int run_scan_case(akx_context *, const planned_case *);
static int run_findall_case(akx_context *, const planned_case *);
static int run_reduce_case(akx_context *, const planned_case *);
static int run_dims_case(akx_context *, const planned_case *);

static const suite_def suites[] = {
    {"scan", "inclusive scans, whole and along dims=1 of a matrix: no neutral element\n"
             "           (float32, via akx.cuh), float64, float32, int32 add",
     "scan: inclusive scans, whole and along dims=1 (the columns of a column-major matrix)",
     plan_scan, run_scan_case},
    {"findall", "int64 indices of the nonzero bytes of a bool vector",
     "findall: int64 indices of the nonzero bytes of a bool vector, half of them set", plan_findall,
     run_findall_case},
    {"reduce", "float32 sums of a whole array: akx_mapreduce to the host and\n"
               "           akx_reduce_dims into one device element + copy back",
     "reduce: float32 sum of a whole array (two-pass reduction)", plan_reduce, run_reduce_case},
    {"dims", "sum(x; dims=...) over the dims-reduction shapes, float32 and bfloat16",
     "dims: sum(x; dims=...) of column-major arrays; Julia dims=k is the C API's dim k-1",
     plan_dims, run_dims_case},
};
enum { NSUITES = sizeof suites / sizeof suites[0] };

/* Every variable libakx or akx-bench reads (grep getenv in src/ and bench/), for --help. */
static const char *const env_help =
    "environment (read when the context is created; README \"Environment variables\"):\n"
    "  AKX_BACKEND             cuda or sim: the backend of --backend auto\n"
    "  AKX_SIM_DEVICE          h200 (default) or rtx5080: the sim's profile (--profile sets it)\n"
    "  AKX_SIM_SCHEDULE        inorder (default), random, random:SEED: the sim's fiber order\n"
    "  AKX_SIM_RESIDENT        1..65536 (default 16): blocks the sim keeps resident at once\n"
    "  AKX_SIM_COUNTERS        1 (default) or 0: 0 stops the counters (and the model columns)\n"
    "  AKX_SIM_REPORT          0 (default) or 1: per-kernel counters on stderr at the end\n"
    "  AKX_KERNELS             prebuilt (default) or runtime: compile every kernel at run time\n"
    "  AKX_SIM_CXX             the host compiler for the sim's run-time kernels\n"
    "  AKX_CACHE_DIR           the compiled-kernel cache, or off (default $XDG_CACHE_HOME/akx,\n"
    "                          else $HOME/.cache/akx); AKX_CACHE_VERBOSE=1 says why one is unused\n"
    "  AKX_CACHE_LOCK_WAIT_MS  how long to wait for another process compiling the same kernel\n"
    "                          (default 60000), then compile it here\n"
    "  TMPDIR                  where the sim compiles run-time kernels when the cache is off\n"
    "  AKX_NVRTC_LIBRARY       the NVRTC library the CUDA backend loads for run-time kernels\n"
    "                          (default: the driver's major's, 12.3 or newer)\n"
    "  AKX_SCAN_LAYOUT         conflict_free (default), dense, odd_stride (--full sets it per pass)\n"
    "  AKX_SCAN_SHAPE          whole, slices, columns: force akx_scan's shape (testing)\n"
    "  AKX_REDUCE_DIMS_SHAPE   rows, warp_rows, per_thread, tiled, columns, strided (testing)\n"
    "  AKX_REDUCE_DIMS_SPLITS  1..65535: split each dims reduction over blocks (testing)\n"
    "  AKX_LOOKBACK_EPOCH      0..4294967295: the scans' first epoch (testing the wrap)\n"
    "  AKX_PDL                 1 (default) or 0: programmatic dependent launches on sm_90+\n"
    "  AKX_ONE_LAUNCH          1 (default) or 0: reset the scans' status and take the reductions'\n"
    "                          second pass at every call (two launches, for comparison)\n"
    "  PATH                    where --plot finds gnuplot\n";

static void usage(FILE *f) {
  fprintf(f,
          "usage: akx-bench [SUITE...] [--backend auto|cuda|sim] [--profile h200|rtx5080]\n"
          "                 [--full | --quick] [--runs N] [--max E] [--csv FILE] [--json FILE]\n"
          "                 [--plot FILE.png] [--kernels-csv FILE] [--once]\n"
          "suites (none, or all: every one):\n");
  for (int s = 0; s < NSUITES; ++s) fprintf(f, "  %-8s %s\n", suites[s].name, suites[s].help);
  fprintf(f,
          "options:\n"
          "  --backend  auto (default: AKX_BACKEND, else CUDA when a device exists, else the sim)\n"
          "  --profile  the sim's device profile, h200 (default) or rtx5080; implies --backend sim\n"
          "  (default)  on the sim, the cases it runs in about a minute (every family, 10^8 where\n"
          "             the sim is fast enough); on CUDA, the complete tables\n"
          "  --full     the complete tables (every size 10^4..10^8, dtype and shape; scans also\n"
          "             with the dense and odd-stride layouts): says up front how long (an estimate)\n"
          "  --quick    10^4 and 10^5 and the small dims shapes, 5 runs (CI)\n"
          "  --runs     timed runs per variant on CUDA (default 20, 5 with --quick)\n"
          "  --max      the largest size exponent run (4..9)\n"
          "  --csv      every row into FILE as its case finishes ('-': stdout, and no table)\n"
          "  --json     every row into FILE as JSON Lines: one object per line, each line written\n"
          "             whole and flushed as its case finishes, so the file stays valid when the\n"
          "             run is interrupted ('-': stdout, and no table)\n"
          "  --plot     GB/s versus bytes as a PNG, log-log, one panel per suite, with the peak and\n"
          "             a copy line; needs gnuplot on PATH (Debian: gnuplot-nox), checked first\n"
          "  --kernels-csv  per row and kernel, the sim's counters (bench/gpu_check.sh sets them\n"
          "             beside Nsight Compute's)\n"
          "  --once     on CUDA, run each akx call once after its check, no peers, no timing\n"
          "             (for Nsight Compute)\n"
          "Ctrl-C (SIGINT) or SIGTERM: stop after the case running, keep the rows written so far\n"
          "and plot them; a second one stops at once (the files keep every finished row).\n");
  fputs(env_help, f);
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
  *o = (bench_options){.backend = AKX_BACKEND_AUTO, .max_exp = -1};
  int i = 1, backend_given = 0;
  for (; i < argc && argv[i][0] != '-'; ++i) {
    int found = strcmp(argv[i], "all") == 0;
    for (int s = 0; s < NSUITES; ++s)
      if (strcmp(argv[i], suites[s].name) == 0) {
        o->suites |= 1u << s;
        found = 1;
      }
    if (!found) {
      fprintf(stderr, "akx-bench: unknown suite '%s' (", argv[i]);
      for (int s = 0; s < NSUITES; ++s) fprintf(stderr, "%s, ", suites[s].name);
      fprintf(stderr, "all)\n");
      return -1;
    }
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
      backend_given = 1;
      if (val && strcmp(val, "auto") == 0) o->backend = AKX_BACKEND_AUTO;
      else if (val && strcmp(val, "cuda") == 0) o->backend = AKX_BACKEND_CUDA;
      else if (val && strcmp(val, "sim") == 0) o->backend = AKX_BACKEND_SIM;
      else {
        fprintf(stderr, "akx-bench: --backend takes auto, cuda or sim, got '%s'\n", val ? val : "");
        return -1;
      }
    } else if (strcmp(a, "--profile") == 0) {
      if (!val || (strcasecmp(val, "h200") != 0 && strcasecmp(val, "rtx5080") != 0)) {
        fprintf(stderr, "akx-bench: --profile takes h200 or rtx5080, got '%s'\n", val ? val : "");
        return -1;
      }
      o->profile = val;
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
  if (o->quick && o->full) {
    fprintf(stderr, "akx-bench: --quick and --full exclude each other\n");
    return -1;
  }
  if (o->profile) {
    if (backend_given && o->backend == AKX_BACKEND_CUDA) {
      fprintf(stderr, "akx-bench: --profile chooses the sim's device profile; a CUDA run times "
                      "the GPU it has\n");
      return -1;
    }
    o->backend = AKX_BACKEND_SIM;
  }
  if (o->plot && (strlen(o->plot) < 5 || strcmp(o->plot + strlen(o->plot) - 4, ".png") != 0)) {
    fprintf(stderr, "akx-bench: --plot takes a file name ending in .png, got '%s'\n", o->plot);
    return -1;
  }
  if (!o->runs) o->runs = o->quick ? 5 : 20;
  return 0;
}

/* ---- the plan: every case of the run, listed before anything runs ------------------------ */

struct planned_case {
  const suite_def *suite;
  int spec;         /* the row of the suite's table of cases */
  int exp10;        /* 10^exp10 elements; -1: the spec's fixed shape */
  akx_dtype dtype;
  int64_t elements;
  const char *label; /* the case, as its rows name it ("add dims=1") */
  char shape[40];    /* as the rows give it ("1000x1000") */
  double est_s;      /* the expected seconds of the case on this backend (estimate_s) */
};

static planned_case plan[MAX_CASES];
static int nplan;
static int on_sim;
static const suite_def *planning; /* the suite whose plan function runs */
/* The plans: --quick (CI), the default (a minute on the sim), the complete tables (--full, and
 * the default on CUDA). */
typedef enum { PLAN_QUICK, PLAN_DEFAULT, PLAN_FULL } plan_mode;
static plan_mode planning_mode;

/* Seconds a case takes, from what this 2-core machine measured (bench/RESULTS.md, "The default
 * run"): on the sim, the fibers cost `sim_ns` per element and layout pass, plus the host's
 * input, copy and check (about 25 ns per element) and a fixed 0.05 s; on CUDA the host's share
 * and the timed rounds' launches. Only the ETA and --full's announcement use it. */
static double sim_speed = 1.0; /* this machine's sim time over the costs' (calibrate_sim) */
static double estimate_s(int64_t elements, double sim_ns, int passes) {
  double host = 25e-9 * (double)elements + 0.05;
  if (!on_sim) return host + (WARMUP_RUNS + opt.runs) * 3 * 20e-6;
  return host + sim_speed * sim_ns * 1e-9 * (double)elements * passes;
}

static void plan_add(int spec, int exp10, akx_dtype dtype, int64_t elements, const char *label,
                     const char *shape, double est_s) {
  if (opt.max_exp >= 0 && exp10 > opt.max_exp) return;
  if (nplan == MAX_CASES) {
    fprintf(stderr, "akx-bench: more than %d cases in the plan\n", MAX_CASES);
    exit(EXIT_USAGE);
  }
  planned_case *p = &plan[nplan++];
  *p = (planned_case){planning, spec, exp10, dtype, elements, label, "", est_s};
  if (*shape) snprintf(p->shape, sizeof p->shape, "%s", shape);
  else snprintf(p->shape, sizeof p->shape, "%" PRId64, elements);
}

/* Lists the cases of the chosen suites in the plan `mode`; returns the sum of their estimates. */
static double make_plan(plan_mode mode) {
  nplan = 0;
  planning_mode = mode;
  for (int s = 0; s < NSUITES; ++s) {
    if (opt.suites && !(opt.suites & (1u << s))) continue;
    planning = &suites[s];
    suites[s].plan();
  }
  double total = 0;
  for (int i = 0; i < nplan; ++i) total += plan[i].est_s;
  return total;
}

/* ---- records: one row of the output ------------------------------------------------------ */

typedef enum { ROW_OK, ROW_NA, ROW_FAIL } row_state;
static const char *const state_name[] = {"ok", "n/a", "FAIL"};

typedef struct {
  double median_us, min_us;
  int ran;
} timing;

typedef struct {
  char suite[16], name[40], dtype[10], shape[32], variant[40];
  char series[64]; /* the plot's line this row is a point of */
  int64_t elements;
  double bytes_min; /* the least traffic: src read once, dst written once */
  row_state state;
  char note[600];
  /* CUDA */
  timing akx, cub, copy;
  /* sim: the counters of one call, totals over its kernels */
  char kernels[200], grid[32];
  double waves, gld, gld_ideal, smem, smem_ideal, bytes_moved, model_us, wall_s;
  double copy_model_us; /* the model's time of a device copy of bytes_min (model_copy_us) */
  int fits_l2, counted;
  /* sim, scan cases with --full: the same call with AKX_SCAN_LAYOUT=dense (runs back to back)
   * and =odd_stride (AcceleratedKernels.jl's padded tiles); the row's own figures are the
   * default layout's (the library's choice) */
  int have_layouts;
  double smem_dense, model_dense, smem_odd, model_odd;
} record;

static record records[MAX_RECORDS];
static int nrecords;
static FILE *kernels_file, *csv_file, *json_file;
static akx_context_info_t dev;

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double run_start;

/* ---- interruption: SIGINT / SIGTERM ------------------------------------------------------ */

/* The first signal asks the case loop to stop after the case running (a sim call cannot be
 * cut short), so that the plot of the rows so far is still drawn; the second ends the process
 * at once. Either way the CSV and JSON already hold every finished row: they are flushed a
 * whole line at a time as each case ends. */
static volatile sig_atomic_t stop_signal;

static void on_signal(int sig) {
  if (stop_signal) {
    signal(sig, SIG_DFL);
    raise(sig);
    return;
  }
  stop_signal = sig;
  static const char msg[] = "\nakx-bench: stopping after this case (the rows so far are kept); "
                            "again to stop now\n";
  ssize_t w = write(2, msg, sizeof msg - 1);
  (void)w;
}

static void catch_signals(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

/* ---- progress ---------------------------------------------------------------------------- */

static void fmt_duration(char *buf, size_t size, double s) {
  if (s < 90) snprintf(buf, size, "%.0f s", s);
  else if (s < 5400) snprintf(buf, size, "%.0f min %02.0f s", floor(s / 60), fmod(s, 60));
  else snprintf(buf, size, "%.1f h", s / 3600);
}

/* "case i/N" with the case, elapsed time and ETA on stderr: overwritten in place on a terminal,
 * one line per case in a log. The ETA is the plan's estimate of the cases left, scaled by how
 * the estimate has matched this run so far. */
static void progress(int i, const char *what) {
  double elapsed = now_seconds() - run_start, done_est = 0, left_est = 0;
  for (int k = 0; k < nplan; ++k) *(k < i ? &done_est : &left_est) += plan[k].est_s;
  double scale = i > 0 && done_est > 0 && elapsed > 1 ? elapsed / done_est : 1.0;
  char el[32], eta[32];
  fmt_duration(el, sizeof el, elapsed);
  fmt_duration(eta, sizeof eta, left_est * scale);
  if (isatty(2))
    fprintf(stderr, "\r\033[Kcase %d/%d  %s  elapsed %s, ETA %s", i + 1, nplan, what, el, eta);
  else
    fprintf(stderr, "case %d/%d  %s  elapsed %s, ETA %s\n", i + 1, nplan, what, el, eta);
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


/* The model's time of a device-to-device copy reading and writing `bytes` in all (half each
 * way), as a copy kernel would launch on the context's profile: 16-byte loads (512 bytes per
 * warp request), 4 in flight per thread, enough 256-thread blocks to fill the device. It is
 * what the model charges a kernel that only streams these bytes: the sim's counterpart of the
 * copy column on CUDA. */
static double model_copy_us(double bytes) {
  const akx__device_profile *p = akx__profile_by_name(dev.sim_profile);
  if (!p || bytes <= 0) return NAN;
  uint64_t sectors = (uint64_t)ceil(bytes / akx__sim_sector_bytes);
  uint64_t load_sectors = (sectors + 1) / 2, requests = (sectors + 15) / 16;
  uint64_t blocks = (uint64_t)ceil(bytes / 2 / (256.0 * 16 * 4));
  akx__sim_launch_stats s = {.blocks = blocks ? blocks : 1, .threads_per_block = 256,
                             .registers_per_thread = 32, .loads_in_flight = 4,
                             .global_sectors = sectors, .global_requests = requests,
                             .load_sectors = load_sectors, .load_requests = (requests + 1) / 2};
  return akx__sim_model_us(p, &s);
}

/* ---- output: the table ------------------------------------------------------------------- */

static int table_on(void) {
  return !(opt.csv && strcmp(opt.csv, "-") == 0) && !(opt.json && strcmp(opt.json, "-") == 0);
}

static void print_header(void) {
  if (!on_sim) {
    /* µ is two bytes in UTF-8: those headers are one byte wider to line up with the rows. */
    printf("%-24s %-9s %-16s %-30s %18s %8s %18s %8s %18s %8s %7s %8s  %s\n", "case", "dtype",
           "shape", "akx call", "akx µs med/min", "akx GB/s", "CUB µs med/min", "CUB GB/s",
           "copy µs med/min", "cp GB/s", "akx/CUB", "akx/copy", "check");
  } else {
    printf("%-22s %-9s %-12s %-29s %-10s %5s %12s %11s %5s %9s %8s %6s %6s %5s  %s\n", "case",
           "dtype", "shape", "akx call", "grid", "waves", "gld sect/req", "smem wf/req", "bytes",
           "model µs", "copy µs", "/copy", "GB/s", "%peak", "kernels; check");
  }
}

static void fmt_timing(char *buf, size_t size, const timing *t) {
  if (t->ran) snprintf(buf, size, "%.2f/%.2f", t->median_us, t->min_us);
  else snprintf(buf, size, "-");
}

static double gbs(double bytes, double us) { return us > 0 ? bytes / (us * 1e3) : 0.0; }

static void print_record(const record *r) {
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
  if (r->state == ROW_NA || !r->counted) {
    const char *why = r->state == ROW_OK ? "PASS; no model (counters off: AKX_SIM_COUNTERS=0)" : note;
    printf("%-22s %-9s %-12s %-29s  %s\n", r->name, r->dtype, r->shape, r->variant, why);
    return;
  }
  char gld[32], smem[32], layouts[128] = "";
  snprintf(gld, sizeof gld, "%.2f (%.2f)", r->gld, r->gld_ideal);
  if (r->smem_ideal > 0) snprintf(smem, sizeof smem, "%.2f (%.2f)", r->smem, r->smem_ideal);
  else snprintf(smem, sizeof smem, "-");
  if (r->have_layouts)
    snprintf(layouts, sizeof layouts, "; dense layout %.2f wf/req %.1f µs, odd stride %.2f wf/req %.1f µs",
             r->smem_dense, r->model_dense, r->smem_odd, r->model_odd);
  double g = gbs(r->bytes_min, r->model_us);
  printf("%-22s %-9s %-12s %-29s %-10s %5.2f %12s %11s %5.2f %8.1f %7.1f %6.2f %6.0f %4.0f%%  %s; %s%s%s\n",
         r->name, r->dtype, r->shape, r->variant, r->grid, r->waves, gld, smem,
         r->bytes_min > 0 ? r->bytes_moved / r->bytes_min : 0.0, r->model_us, r->copy_model_us,
         r->model_us / r->copy_model_us, g, 100.0 * g / dev.bandwidth_gbs, r->kernels, note,
         layouts, r->fits_l2 ? "; fits L2" : "");
}

/* ---- files: CSV and JSON Lines, a row at a time ------------------------------------------ */

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
    "sim_fits_l2,sim_wall_s,sim_smem_wavefronts_per_req_dense,sim_model_us_dense,"
    "sim_smem_wavefronts_per_req_odd_stride,sim_model_us_odd_stride,"
    "sim_copy_model_us,sim_model_over_copy,sim_peak_gbs";

/* The numbers of a row, in csv_columns' order from akx_median_us on; NAN where absent. */
enum { NUMBERS = 28 };
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
  } else {
    v[27] = dev.bandwidth_gbs;
    v[25] = r->copy_model_us;
    if (r->state == ROW_OK && r->counted) {
      double s[] = {r->waves, r->gld, r->gld_ideal, r->smem, r->smem_ideal, r->bytes_moved,
                    r->model_us, gbs(r->bytes_min, r->model_us), r->fits_l2, r->wall_s};
      for (int i = 0; i < 10; ++i) v[11 + i] = s[i];
      v[26] = r->model_us / r->copy_model_us;
    }
    if (r->have_layouts) {
      v[21] = r->smem_dense;
      v[22] = r->model_dense;
      v[23] = r->smem_odd;
      v[24] = r->model_odd;
    }
  }
}

/* Writes what the memory stream `text` holds to f in one write and flushes it, so that a row
 * is in the file whole or not at all when the run is stopped (a line under the stdio buffer
 * size reaches the file in one write(2)). */
static void emit(FILE *f, FILE *text, char **buf, size_t *len) {
  fclose(text);
  fwrite(*buf, 1, *len, f);
  fflush(f);
  free(*buf);
}

static void csv_row(FILE *out, const record *r) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return;
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
  emit(out, f, &buf, &len);
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

/* One JSON object on one line: the row's text fields, then its numbers under csv_columns'
 * names (absent where the CSV's field is empty). */
static void json_row(FILE *out, const record *r) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return;
  char names[1400];
  snprintf(names, sizeof names, "%s", csv_columns);
  const char *col[48];
  int ncol = 0;
  for (char *save = NULL, *t = strtok_r(names, ",", &save); t && ncol < 48; t = strtok_r(NULL, ",", &save))
    col[ncol++] = t;
  const char *text[] = {on_sim ? "sim" : "cuda", dev.device_name, r->suite, r->name, r->dtype,
                        r->shape, r->variant};
  for (int j = 0; j < 7; ++j) {
    fprintf(f, "%s\"%s\": ", j ? ", " : "{", col[j]);
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
  fprintf(f, "}\n");
  emit(out, f, &buf, &len);
}

/* ---- one case ---------------------------------------------------------------------------- */

typedef struct {
  const planned_case *p;
  const char *name, *variant[2];
  const char *series[2];   /* the plot's line of each variant */
  op_arg *arg[2];          /* one per variant (NULL: none) */
  int scan_layouts;        /* on the sim with --full: also AKX_SCAN_LAYOUT=dense, =odd_stride */
  double bytes_min;
#ifdef AKX_HAVE_CUDA
  akx_bench_cuda_case peer;
#endif
} bench_case;

static void fill_record(record *r, const bench_case *c, const op_arg *a, int v) {
  memset(r, 0, sizeof *r);
  snprintf(r->suite, sizeof r->suite, "%s", c->p->suite->name);
  snprintf(r->name, sizeof r->name, "%s", c->name);
  snprintf(r->dtype, sizeof r->dtype, "%s", akx_dtype_name(a->src.dtype));
  r->shape[0] = 0;
  for (int d = 0; d < a->src.ndim; ++d) {
    size_t len = strlen(r->shape);
    snprintf(r->shape + len, sizeof r->shape - len, "%s%" PRId64, d ? "x" : "", a->src.shape[d]);
  }
  snprintf(r->variant, sizeof r->variant, "%s", c->variant[v]);
  snprintf(r->series, sizeof r->series, "%s", c->series[v]);
  r->elements = a->n;
  r->bytes_min = c->bytes_min;
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

/* Runs a case's variants, checks them, and writes their rows to the table and the files. */
static int run_case(akx_context *ctx, const bench_case *c) {
  int failed = 0;
  int nv = c->arg[1] ? 2 : 1;
  record *rows[2];
  for (int v = 0; v < nv; ++v) {
    rows[v] = new_record();
    fill_record(rows[v], c, c->arg[v], v);
  }
  if (on_sim) {
    for (int v = 0; v < nv; ++v) {
      record *r = rows[v];
      op_arg *a = c->arg[v];
      akx_bench_enqueue_fn fn = op_fn(a->kind);
      r->copy_model_us = model_copy_us(r->bytes_min);
      static const char *const layouts[] = {"dense", "odd_stride", NULL};
      for (int pass = c->scan_layouts && opt.full ? 0 : 2; pass < 3; ++pass) {
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
          r->have_layouts = 1;
          r->smem_dense = r->smem;
          r->model_dense = r->model_us;
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
    for (int v = 0; v < nv; ++v) {
      akx_bench_enqueue_fn fn = op_fn(c->arg[v]->kind);
      if (run_checked(ctx, fn, c->arg[v], rows[v]) == AKX_SUCCESS) fns[v] = fn;
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
  }
#endif
  progress_done();
  for (int v = 0; v < nv; ++v) {
    if (table_on()) print_record(rows[v]);
    if (csv_file) csv_row(csv_file, rows[v]);
    if (json_file) json_row(json_file, rows[v]);
  }
  fflush(stdout);
  return failed;
}

/* ---- device buffers ---------------------------------------------------------------------- */

typedef struct {
  void *src, *dst, *host;
  size_t src_bytes, dst_bytes;
} buffers;

static void buffers_destroy(akx_context *ctx, buffers *b) {
  if (b->src) akx_free(ctx, b->src);
  if (b->dst) akx_free(ctx, b->dst);
  free(b->host);
}

/* The case's input on the host and the device; on failure nothing is held. */
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
  if (s != AKX_SUCCESS) {
    fprintf(stderr, "akx-bench: input of %" PRId64 " %s: %s: %s\n", n, akx_dtype_name(t),
            akx_status_string(s), akx_last_error());
    buffers_destroy(ctx, b);
  }
  return s;
}

static void use_buffers(op_arg *a, const buffers *b) {
  a->src.data = b->src;
  a->dst.data = b->dst;
  a->host_src = b->host;
}

static int run_and_free(akx_context *ctx, const bench_case *c, buffers *b) {
  int failed = run_case(ctx, c);
  buffers_destroy(ctx, b);
  return failed;
}

static int64_t pow10_i64(int e) {
  int64_t v = 1;
  while (e-- > 0) v *= 10;
  return v;
}

/* Whether the plan takes a sweep's size 10^e: every size for the complete tables, 10^4 and
 * 10^5 with --quick, else up to the spec's largest for the default sim run. */
static int in_plan(int e, int default_max) {
  if (planning_mode == PLAN_QUICK) return e <= QUICK_MAX_EXP;
  return planning_mode == PLAN_FULL || e <= default_max;
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

/* ---- suite: findall ---------------------------------------------------------------------- */

/* 10^7 would take 16-22 s of the default's minute on its own (1.6-2.2 µs of CPU per element) */
enum { FINDALL_DEFAULT_MAX = 6 };
static const double findall_sim_ns = 2000;

static void plan_findall(void) {
  for (int e = 4; e <= 8; ++e)
    if (in_plan(e, FINDALL_DEFAULT_MAX))
      plan_add(0, e, AKX_BOOL, pow10_i64(e), "findall", "", estimate_s(pow10_i64(e), findall_sim_ns, 1));
}

static int run_findall_case(akx_context *ctx, const planned_case *p) {
  int64_t n = pow10_i64(p->exp10);
  op_arg a = {.kind = OP_FINDALL, .n = n};
  a.src = akx_vector(NULL, AKX_BOOL, n);
  a.dst = akx_vector(NULL, AKX_INT64, n);
  bench_case c = {.p = p, .name = "findall", .series = {"bool -> int64 indices"},
                  .variant = {"akx_findall"}, .arg = {&a}};
  buffers b;
  if (buffers_create(ctx, &b, AKX_BOOL, n, (size_t)n * 8, 0xf1a7) != AKX_SUCCESS)
    return EXIT_USAGE;
  /* read n bytes, write the indices of the set ones (about half) */
  int64_t set = 0;
  for (int64_t i = 0; i < n; ++i) set += ((uint8_t *)b.host)[i];
  c.bytes_min = (double)n + 8.0 * (double)set;
  use_buffers(&a, &b);
#ifdef AKX_HAVE_CUDA
  c.peer = (akx_bench_cuda_case){.peer = AKX_PEER_SELECT_FLAGGED, .dtype = AKX_BOOL, .src = b.src,
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

/* ---- the plot ---------------------------------------------------------------------------- */

static int gnuplot_found(void) { return system("command -v gnuplot >/dev/null 2>&1") == 0; }

/* Whether path can be written, without leaving a file behind that was not there. */
static int writable(const char *path) {
  int existed = access(path, F_OK) == 0;
  FILE *f = fopen(path, "a");
  if (!f) {
    fprintf(stderr, "akx-bench: cannot write %s: %s\n", path, strerror(errno));
    return 0;
  }
  fclose(f);
  if (!existed) unlink(path);
  return 1;
}

/* Checked before anything runs: a plot that cannot be drawn is said at once, not after the run. */
static int plot_check(const char *png) {
  if (!gnuplot_found()) {
    fprintf(stderr, "akx-bench: --plot needs gnuplot, which is not on PATH (Debian: apt-get "
                    "install gnuplot-nox); nothing was run\n");
    return -1;
  }
  char data[4096], script[4096];
  snprintf(data, sizeof data, "%s.dat", png);
  snprintf(script, sizeof script, "%s.gp", png);
  return writable(png) && writable(data) && writable(script) ? 0 : -1;
}

static double plot_y(const record *r, int cub) {
  if (r->state != ROW_OK) return NAN;
  if (on_sim) return cub || !r->counted ? NAN : gbs(r->bytes_min, r->model_us);
  const timing *t = cub ? &r->cub : &r->akx;
  return t->ran ? gbs(r->bytes_min, t->median_us) : NAN;
}

typedef struct {
  double x, y;
} point;

/* gnuplot's filled point types (circle, square, triangles, diamond, pentagon); one less is the
 * same shape open, for CUB. Distinct shapes, drawn smaller for each later series, keep series
 * that coincide (the reduce variants share one model time) visible. */
static const int filled_point[6] = {7, 5, 9, 11, 13, 15};

static int by_x(const void *a, const void *b) {
  double d = ((const point *)a)->x - ((const point *)b)->x;
  return d < 0 ? -1 : d > 0;
}

/* GB/s versus the least bytes moved, log-log, one panel per suite with rows: a line per series
 * (akx; on CUDA also CUB, dashed), the device copy of the same bytes (measured on CUDA, the
 * model's on the sim) and the peak bandwidth. Bytes rather than elements on x, so that the copy
 * and the series of every dtype share one axis. */
static int write_plot(const char *png) {
  char data[4096], script[4096];
  snprintf(data, sizeof data, "%s.dat", png);
  snprintf(script, sizeof script, "%s.gp", png);
  FILE *d = fopen(data, "w"), *g = fopen(script, "w");
  if (!d || !g) {
    fprintf(stderr, "akx-bench: cannot write %s / %s: %s\n", data, script, strerror(errno));
    if (d) fclose(d);
    if (g) fclose(g);
    return -1;
  }
  const double peak = dev.bandwidth_gbs;
  double ymin = peak;
  int panels = 0, block = 0;
  static char plots[NSUITES][8192]; /* each panel's plot command */
  const char *panel_title[NSUITES];
  static point pts[MAX_RECORDS];
  for (int s = 0; s < NSUITES; ++s) {
    const char *suite = suites[s].name;
    int dims = strcmp(suite, "dims") == 0; /* shapes, not a sweep: points only */
    char *cmd = plots[panels];
    size_t used = 0;
    double xmin = INFINITY, xmax = 0;
    const char *series[MAX_RECORDS];
    int nseries = 0;
    for (int i = 0; i < nrecords; ++i) {
      const record *r = &records[i];
      if (strcmp(r->suite, suite) != 0) continue;
      int seen = 0;
      for (int k = 0; k < nseries; ++k) seen |= strcmp(series[k], r->series) == 0;
      if (!seen) series[nseries++] = r->series;
    }
    for (int k = 0; k < nseries; ++k) {
      for (int cub = 0; cub < (on_sim ? 1 : 2); ++cub) {
        int n = 0;
        for (int i = 0; i < nrecords; ++i) {
          const record *r = &records[i];
          double y = plot_y(r, cub);
          if (strcmp(r->suite, suite) != 0 || strcmp(r->series, series[k]) != 0 || isnan(y) || y <= 0)
            continue;
          pts[n++] = (point){r->bytes_min, y};
        }
        if (!n) continue;
        qsort(pts, (size_t)n, sizeof pts[0], by_x);
        fprintf(d, "# %s: %s%s\n# bytes GB/s\n", suite, series[k], cub ? " CUB" : "");
        for (int i = 0; i < n; ++i) {
          fprintf(d, "%.0f %.4g\n", pts[i].x, pts[i].y);
          xmin = fmin(xmin, pts[i].x);
          xmax = fmax(xmax, pts[i].x);
          ymin = fmin(ymin, pts[i].y);
        }
        fprintf(d, "\n\n");
        used += (size_t)snprintf(cmd + used, sizeof plots[0] - used,
                                 "%s'%s' index %d using 1:2 with %s lc %d pt %d ps %.1f%s title '%s%s'",
                                 used ? ", " : "plot ", data, block++,
                                 dims ? "points" : "linespoints", k + 1, filled_point[k % 6] - cub,
                                 fmax(0.7, 1.6 - 0.4 * k),
                                 cub ? " dt 2" : "", series[k], cub ? " (CUB)" : "");
      }
    }
    if (!used) continue; /* nothing of this suite ran, or nothing to draw */
    /* the copy: on the sim, the model's copy along the panel's x range; on CUDA the measured
     * copy of each case */
    int n = 0;
    if (on_sim) {
      for (double x = xmin / 2; x <= xmax * 2 && n < 64; x *= 1.5) {
        double us = model_copy_us(x);
        if (!isnan(us)) pts[n++] = (point){x, gbs(x, us)};
      }
    } else {
      for (int i = 0; i < nrecords; ++i)
        if (strcmp(records[i].suite, suite) == 0 && records[i].copy.ran)
          pts[n++] = (point){records[i].bytes_min, gbs(records[i].bytes_min, records[i].copy.median_us)};
      qsort(pts, (size_t)n, sizeof pts[0], by_x);
    }
    if (n) {
      fprintf(d, "# %s: device copy of the same bytes%s\n# bytes GB/s\n", suite, on_sim ? " (model)" : "");
      for (int i = 0; i < n; ++i) {
        fprintf(d, "%.0f %.4g\n", pts[i].x, pts[i].y);
        ymin = fmin(ymin, pts[i].y);
      }
      fprintf(d, "\n\n");
      used += (size_t)snprintf(cmd + used, sizeof plots[0] - used,
                               ", '%s' index %d using 1:2 with lines dt 2 lw 2 lc rgb 'black' "
                               "title 'device copy%s'", data, block++, on_sim ? " (model)" : "");
    }
    snprintf(cmd + used, sizeof plots[0] - used,
             ", %g with lines dt 3 lw 2 lc rgb '#c00000' title 'peak %.0f GB/s'", peak, peak);
    panel_title[panels++] = suites[s].heading;
  }
  fclose(d);
  if (!panels) {
    fclose(g);
    fprintf(stderr, "akx-bench: --plot: no row of this run has a time to plot\n");
    return -1;
  }
  int ncols = panels < 2 ? 1 : 2, nrows = (panels + ncols - 1) / ncols;
  /* one panel alone is wider than one of two, for the run's title */
  fprintf(g, "set terminal pngcairo size %d,%d font ',10' noenhanced\n", ncols > 1 ? 760 * ncols : 1100,
          520 * nrows + 50);
  fprintf(g, "set output '%s'\n", png);
  if (on_sim)
    fprintf(g, "set multiplot layout %d,%d title 'akx-bench on the sim, %s profile: GB/s = least "
               "bytes / the model time (an estimate, not a measurement)' font ',13'\n",
            nrows, ncols, dev.sim_profile);
  else
    fprintf(g, "set multiplot layout %d,%d title 'akx-bench on %s: GB/s = least bytes / median "
               "time of %d runs' font ',13'\n", nrows, ncols, dev.device_name, opt.runs);
  fprintf(g, "set logscale xy\nset format x '%%.0s %%cB'\nset format y '%%g'\nset grid\n"
             "set key bottom right font ',9' spacing 0.9\nset xlabel 'least bytes moved (src read "
             "once + dst written once)'\nset ylabel 'GB/s'\nset yrange [%g:%g]\n",
          pow(10, floor(log10(ymin > 0 ? ymin : 1))), peak * 2.5);
  for (int p = 0; p < panels; ++p) {
    fprintf(g, "set title '");
    for (const char *c = panel_title[p]; *c; ++c) fputs(*c == '\'' ? "''" : (char[]){*c, 0}, g);
    fprintf(g, "'\n%s\n", plots[p]);
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

/* The sim's speed on this machine, against the per-element costs the estimates use: the same
 * 2-core machine ran the same default plan in 17 s one day and 57 s another (bench/RESULTS.md),
 * so a fixed cost would be off by a factor of 2 to 3. The fastest of three float32 scans of 2^18
 * elements (against the scan suite's float32 cost; about 0.3 s each) sets the scale, kept within
 * 1/4..4 so that a probe disturbed by another process cannot make the estimate absurd. */
static void calibrate_sim(akx_context *ctx) {
  const int64_t n = (int64_t)1 << 18;
  void *src = NULL, *dst = NULL;
  if (akx_malloc(ctx, &src, (size_t)n * 4) != AKX_SUCCESS || akx_malloc(ctx, &dst, (size_t)n * 4) != AKX_SUCCESS) {
    if (src) akx_free(ctx, src);
    return;
  }
  const akx_array a = akx_vector(src, AKX_FLOAT32, n), d = akx_vector(dst, AKX_FLOAT32, n);
  double cost_ns = 0;
  for (size_t k = 0; k < sizeof scan_specs / sizeof scan_specs[0]; ++k)
    if (scan_specs[k].dtype == AKX_FLOAT32 && !scan_specs[k].no_neutral && !scan_specs[k].dims1)
      cost_ns = scan_specs[k].sim_ns;
  float *zeros = calloc((size_t)n, sizeof *zeros);
  /* the first call compiles or finds its kernels and sizes the workspace: not timed */
  if (zeros && akx_memcpy(ctx, src, zeros, (size_t)n * 4, AKX_COPY_HOST_TO_DEVICE) == AKX_SUCCESS &&
      akx_scan(ctx, &d, &a, AKX_OP_ADD, AKX_DIM_ALL, NULL) == AKX_SUCCESS) {
    double best = -1;
    for (int k = 0; k < 3; ++k) { /* the fastest of three: another process only slows a probe */
      const double t0 = now_seconds();
      if (akx_scan(ctx, &d, &a, AKX_OP_ADD, AKX_DIM_ALL, NULL) != AKX_SUCCESS) break;
      const double t = now_seconds() - t0;
      if (best < 0 || t < best) best = t;
    }
    if (best > 0) {
      const double r = best / (cost_ns * 1e-9 * (double)n);
      sim_speed = r < 0.25 ? 0.25 : r > 4 ? 4 : r;
    }
  }
  free(zeros);
  akx_free(ctx, src);
  akx_free(ctx, dst);
}

static void preamble(akx_context *ctx, double est_s, int full_cases, double full_s) {
  char est[32], full[32];
  fmt_duration(est, sizeof est, est_s);
  fmt_duration(full, sizeof full, full_s);
  if (!table_on()) {
    /* the plan still goes to stderr: it is what a user waits for */
    fprintf(stderr, "akx-bench: %d case%s, about %s (an estimate)\n", nplan, nplan == 1 ? "" : "s", est);
    return;
  }
  if (on_sim) {
    akx_sim_kernel_counters total;
    double l2 = akx_sim_counters_get(ctx, &total, NULL, 0, NULL) == AKX_SUCCESS
                    ? (double)total.l2_bytes / (1024.0 * 1024.0) : 0.0;
    printf("akx-bench on the sim, profile %s (%d SMs, sm_%d%d, peak %.0f GB/s, L2 %.0f MiB).\n"
           "CUB columns need a GPU: akx-bench --backend cuda times each call beside CUB and a\n"
           "device copy. Here each row is one call run on CPU fibers, counted as Nsight Compute\n"
           "would, and priced by the sim's model (src/sim/model.c): an estimate, never a\n"
           "measurement. Columns:\n"
           "  grid          blocks x threads per block of the launch moving the most bytes\n"
           "  waves         blocks / blocks resident at once, summed over the call's launches\n"
           "  gld sect/req  32-byte sectors per global load request (ideal in parentheses)\n"
           "  smem wf/req   shared-memory wavefronts per request, loads and stores (ideal)\n"
           "  bytes         global bytes moved / the least (src read once + dst written once)\n"
           "  model µs      the model's time of the call\n"
           "  copy µs       the model's time of a device copy moving the same least bytes\n"
           "  /copy         model µs / copy µs (1.00: as fast as copying the data)\n"
           "  GB/s, %%peak   least bytes / model time, and that over the peak %.0f GB/s\n"
           "  fits L2       a GPU repeating the call may serve it from L2; the model prices DRAM\n"
           "Input: random nonzero integers in -8..8 (bool: half set); every result is checked.\n",
           dev.sim_profile, dev.sm_count, dev.cc_major, dev.cc_minor, dev.bandwidth_gbs, l2,
           dev.bandwidth_gbs);
    const char *counting = getenv("AKX_SIM_COUNTERS");
    if (counting && strcmp(counting, "0") == 0)
      printf("AKX_SIM_COUNTERS=0: counting is off, there is no model.\n");
    if (opt.full)
      printf("--full: %d cases, about %s on this machine (an estimate); scans run three times, "
             "the\ndense and odd-stride layouts beside the default (at the end of their rows).\n",
             nplan, est);
    else
      printf("%s%d cases, about %s (an estimate). --full runs the complete tables: %d cases, "
             "about %s.\n", opt.quick ? "--quick: " : "", nplan, est, full_cases, full);
  } else {
    printf("akx-bench on CUDA: %s (sm_%d%d, %d SMs, %.0f GB/s peak)%s.\n"
           "µs: median/minimum of %d runs after %d warm-up rounds; a round runs akx, CUB and the\n"
           "copy one after the other (interleaved) on one stream, each after a write of twice the\n"
           "L2 (so inputs come from DRAM) and between its own CUDA events. copy: cudaMemcpyAsync\n"
           "device to device of half the case's least traffic, so it moves (reads + writes) the\n"
           "same bytes: the bandwidth limit. GB/s = least bytes (src once + dst once) / median.\n"
           "akx/CUB, akx/copy: ratios of median times (below 1: akx is faster).\n"
           "Input: random nonzero integers in -8..8 (bool: half set); every result is checked.\n"
           "%d cases, about %s (an estimate).\n",
           dev.device_name, dev.cc_major, dev.cc_minor, dev.sm_count, dev.bandwidth_gbs,
           opt.once ? ", --once (no timing)" : "", opt.runs, WARMUP_RUNS, nplan, est);
  }
}

/* Opens every output before anything runs, so that an unwritable path stops the run at once. */
static int open_outputs(void) {
  if (opt.plot && plot_check(opt.plot)) return -1;
  if (opt.csv && !(csv_file = open_out(opt.csv))) return -1;
  if (opt.json && !(json_file = open_out(opt.json))) return -1;
  if (opt.kernels_csv && !(kernels_file = open_out(opt.kernels_csv))) return -1;
  if (csv_file) {
    fprintf(csv_file, "%s\n", csv_columns);
    fflush(csv_file);
  }
  if (kernels_file) {
    fprintf(kernels_file, "suite,case,dtype,shape,variant,layout,kernel,launches,grid,block,waves");
    const char *tr[] = {"shared_load", "shared_store", "global_load", "global_store"};
    for (int i = 0; i < 4; ++i)
      fprintf(kernels_file, ",%s_requests,%s_units,%s_ideal,%s_bytes", tr[i], tr[i], tr[i], tr[i]);
    fprintf(kernels_file, ",model_us\n");
  }
  return 0;
}

int main(int argc, char **argv) {
#ifdef AKX_BENCH_DIST
  if (argc > 1 && strcmp(argv[1], "dist") == 0) return akx_bench_dist(argc, argv); /* under mpirun */
#endif
  int parsed = parse_args(argc, argv, &opt);
  if (parsed) return parsed > 0 ? 0 : EXIT_USAGE;
  run_start = now_seconds();
  if (opt.kernels_csv && opt.backend == AKX_BACKEND_CUDA) {
    fprintf(stderr, "akx-bench: --kernels-csv needs the sim's counters (--backend sim)\n");
    return EXIT_USAGE;
  }
  /* The library reads its profile from the environment when a context is created (README,
   * "Environment variables"); there is no other way to choose one. */
  if (opt.profile) setenv("AKX_SIM_DEVICE", opt.profile, 1);
  akx_context *ctx = NULL;
  akx_status s = akx_context_create(&ctx, opt.backend, 0);
  if (s != AKX_SUCCESS) {
    fprintf(stderr, "akx-bench: akx_context_create: %s: %s\n", akx_status_string(s), akx_last_error());
    return EXIT_USAGE;
  }
  akx_context_info(ctx, &dev);
  on_sim = dev.backend == AKX_BACKEND_SIM;
  int status = 0;
#ifndef AKX_HAVE_CUDA
  if (!on_sim) {
    fprintf(stderr, "akx-bench: built without CUDA, cannot time the CUDA backend\n");
    status = EXIT_USAGE;
  }
#endif
  if (opt.kernels_csv && !on_sim) {
    fprintf(stderr, "akx-bench: --kernels-csv needs the sim's counters (--backend sim)\n");
    status = EXIT_USAGE;
  }
  if (status || open_outputs()) {
    akx_context_destroy(ctx);
    return EXIT_USAGE;
  }
  if (on_sim) calibrate_sim(ctx);
  /* On CUDA the default is the complete tables: a GPU runs them in seconds. */
  double full_s = make_plan(PLAN_FULL);
  int full_cases = nplan;
  double est_s = make_plan(opt.quick ? PLAN_QUICK : opt.full || !on_sim ? PLAN_FULL : PLAN_DEFAULT);
#ifdef AKX_HAVE_CUDA
  if (!on_sim && !opt.once) akx_bench_cuda_print_registers();
#endif
  preamble(ctx, est_s, full_cases, full_s);
  catch_signals();

  const suite_def *shown = NULL;
  int done = 0;
  for (int i = 0; i < nplan && !stop_signal; ++i, ++done) {
    const planned_case *p = &plan[i];
    if (p->suite != shown && table_on()) {
      printf("\n== %s\n", p->suite->heading);
      print_header();
    }
    shown = p->suite;
    char what[160];
    snprintf(what, sizeof what, "%s: %s, %s, %s", p->suite->name, p->label, akx_dtype_name(p->dtype),
             p->shape);
    progress(i, what);
    int r = p->suite->run(ctx, p);
    if (r == EXIT_USAGE) {
      status = EXIT_USAGE;
      break;
    }
    status |= r;
  }
  progress_done();
  if (stop_signal)
    fprintf(stderr, "akx-bench: stopped by signal %d after %d of %d cases\n", (int)stop_signal,
            done, nplan);
  if (opt.plot && nrecords && write_plot(opt.plot)) status = EXIT_USAGE;
  close_out(csv_file);
  close_out(json_file);
  close_out(kernels_file);

  int ok = 0, na = 0, fail = 0;
  for (int i = 0; i < nrecords; ++i) {
    ok += records[i].state == ROW_OK;
    na += records[i].state == ROW_NA;
    fail += records[i].state == ROW_FAIL;
  }
  char took[32];
  fmt_duration(took, sizeof took, now_seconds() - run_start);
  fprintf(stderr, "akx-bench: %d rows: %d passed, %d n/a (unsupported), %d FAILED; %s\n", nrecords,
          ok, na, fail, took);
  akx_context_destroy(ctx);
  if (stop_signal) return 128 + stop_signal;
  return status;
}
