/* akx-bench's internals, shared by its files: the options, the suites, the plan, the rows of
 * the output, the akx calls under test, and what each file gives the others. The files, each
 * one concern (akx_bench.c's opening comment says what the program does):
 *   akx_bench.c  main: the run from the arguments to the summary line, and SIGINT / SIGTERM;
 *   cli.c        the command line: --help and the arguments, checked before anything runs;
 *   plan.c       the plan (every case, listed before anything runs), its estimate, the ETA;
 *   suites.c     the suites: the cases each one plans and how one of them runs;
 *   run_case.c   one case: the akx calls under test, counted on the sim or timed on CUDA;
 *   data.c       the input data, its device buffers, and the checks against the host;
 *   counters.c   the sim's counters of one call, and the model's time of a device copy;
 *   output.c     the preamble, the table, CSV, JSON Lines and --kernels-csv, a row at a time;
 *   seeds.c      the seeds' measured rows, shown beside the rows that match them;
 *   plot.c       --plot: GB/s versus bytes, drawn by gnuplot.
 * The CUDA peers are in bench_cuda.cu, the scan without neutral element in bench_no_neutral.cpp
 * and the dist suite in bench_dist.c. Every C file defines _POSIX_C_SOURCE 200809L before its
 * first include (open_memstream, sigaction, setenv, clock_gettime). */
#ifndef AKX_BENCH_H
#define AKX_BENCH_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "akx.h"
#include "akx_sim.h"
#ifdef AKX_HAVE_CUDA
#include "bench_cuda.h"
#else
typedef akx_status (*akx_bench_enqueue_fn)(akx_context *ctx, void *arg);
#endif

enum { EXIT_FAILED = 1, EXIT_USAGE = 2 };
enum { WARMUP_RUNS = 3, MAX_KERNELS = 32, MAX_RECORDS = 1024, MAX_CASES = 512 };
/* --quick: sizes up to 10^QUICK_MAX_EXP and dims shapes up to QUICK_DIMS_ELEMENTS, on both
 * backends (bench/gpu_check.sh sets CUDA's calls beside the sim's case by case). */
enum { QUICK_MAX_EXP = 5, QUICK_DIMS_ELEMENTS = 1 << 23 };

/* ---- options (cli.c) --------------------------------------------------------------------- */

typedef struct {
  unsigned suites; /* a bit per row of suites[]; 0: every suite */
  akx_backend backend;
  const char *profile; /* --profile: the sim's device profile (AKX_SIM_DEVICE) */
  int quick, full, once;
  int runs;    /* 0: 20, or 5 with --quick */
  int max_exp; /* -1: no cap beyond the plan's */
  const char *csv, *json, *plot, *kernels_csv;
} bench_options;

extern bench_options opt; /* the command line, parsed once (parse_args) */

/* 0: run; 1: help printed; -1: usage error printed. */
int parse_args(int argc, char **argv, bench_options *o);

/* ---- suites (suites.c) ------------------------------------------------------------------- */

typedef struct planned_case planned_case;

/* A suite: a table of the output, one panel of the plot. Adding one is, in suites.c, a plan
 * function that lists its cases (plan_add), a run function for one case (run_and_free on a
 * bench_case), and a row of suites[]; and NSUITES here one more. */
typedef struct {
  const char *name;    /* the command-line word; the CSV's and JSON's "suite" */
  const char *help;    /* --help's line */
  const char *heading; /* the table's heading and the plot panel's title */
  void (*plan)(void);
  int (*run)(akx_context *ctx, const planned_case *p); /* 0, 1 (failed) or EXIT_USAGE */
} suite_def;

/* The suites in their order: of --help, of the run, of the plot's panels; NSUITES rows
 * (suites.c asserts the count). */
enum { NSUITES = 6 };
extern const suite_def suites[];

/* The sim's nanoseconds per element of a float32 scan of a whole array: the cost
 * calibrate_sim measures this machine's sim against. */
double scan_float32_sim_ns(void);

/* ---- the plan: every case of the run, listed before anything runs (plan.c) --------------- */

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

/* The plans: --quick (CI), the default (a minute on the sim), the complete tables (--full, and
 * the default on CUDA). */
typedef enum { PLAN_QUICK, PLAN_DEFAULT, PLAN_FULL } plan_mode;

extern planned_case plan[MAX_CASES];
extern int nplan;
extern plan_mode planning_mode; /* of the plan being made: the suites' plan functions read it */
extern double run_start;        /* now_seconds() when the run began */

double now_seconds(void);
void fmt_duration(char *buf, size_t size, double s);
double estimate_s(int64_t elements, double sim_ns, int passes);
void plan_add(int spec, int exp10, akx_dtype dtype, int64_t elements, const char *label,
              const char *shape, double est_s);
int in_plan(int e, int default_max);
double make_plan(plan_mode mode);
void calibrate_sim(akx_context *ctx);
void progress(int i, const char *what);
void progress_done(void);

/* ---- the context (akx_bench.c) ----------------------------------------------------------- */

extern akx_context_info_t dev; /* the device of the run's context */
extern int on_sim;             /* the context runs on the sim: counted and modelled, not timed */

/* ---- records: one row of the output (filled by run_case.c) ------------------------------- */

typedef enum { ROW_OK, ROW_NA, ROW_FAIL } row_state;

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

extern record records[MAX_RECORDS];
extern int nrecords;

/* ---- the seeds' measured rows (seeds.c) ------------------------------------------------- */

/* A row of a seed's table: AcceleratedKernels.jl's GPU time on the seed's device (RTX 5080)
 * for the bench row of that suite, case, dtype, shape and akx call. */
typedef struct {
  const char *suite, *name, *dtype, *shape, *variant;
  double us;
  const char *seed; /* the seed's file in ../shared/seeds, less .txt */
} seed_row;
/* Whether the run shows the seeds' column: on a GPU, and on the sim's rtx5080 profile. */
int seeds_shown(void);
/* The seed row r matches, or NULL. */
const seed_row *seed_for(const record *r);
/* r's time over the seed's (the model's on the sim, the median on a GPU); 0 where r has none. */
double seed_ratio(const record *r, const seed_row *s);

/* ---- the akx calls under test (run_case.c) ----------------------------------------------- */

typedef enum { OP_SCAN, OP_SCAN_NO_NEUTRAL, OP_FINDALL, OP_MAPREDUCE_HOST, OP_REDUCE_DIMS_COPY,
               OP_REDUCE_DIMS, OP_SEGMENTED_REDUCE, OP_REDUCE_BY_KEY, OP_SCAN_BY_KEY,
               OP_SELECT_FLAGGED, OP_PARTITION_FLAGGED } op_kind;

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
  /* the segmented suite: int32 offsets (nseg + 1) or int32 keys (n), on the device and the
   * host; reduce_by_key's keys out and its count of runs */
  akx_array offsets, keys, keys_out;
  const int32_t *host_offsets, *host_keys;
  int64_t runs;
  /* the select suite: bool flags (n) on the device and the host */
  akx_array flags;
  const unsigned char *host_flags;
  char err[512];        /* the failure's sentence, copied right after the call */
} op_arg;

/* ---- input data, device buffers, checks against the host (data.c) ------------------------ */

typedef struct {
  void *src, *dst, *host;
  size_t src_bytes, dst_bytes;
} buffers;

int64_t product(int nd, const int64_t *shape);
akx_status buffers_create(akx_context *ctx, buffers *b, akx_dtype t, int64_t n, size_t dst_bytes,
                          uint64_t seed);
void buffers_destroy(akx_context *ctx, buffers *b);
/* b's input (of buffers_create) made zero but for about permille/1000 of its elements, chosen
 * at random (bool: 1, else its nonzero value), on the host and the device (findall). */
akx_status buffers_select(akx_context *ctx, buffers *b, akx_dtype t, int64_t n, int permille, uint64_t seed);
/* A pseudo-random word of (seed, i): the inputs' and the select suite's flags' draws. */
uint64_t bench_rand(uint64_t seed, uint64_t i);
void use_buffers(op_arg *a, const buffers *b);
int check_op(akx_context *ctx, op_arg *a, char *why, size_t why_size);

/* ---- one case (run_case.c) --------------------------------------------------------------- */

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

/* Runs a case's variants, checks them, writes their rows, then frees the case's buffers. */
int run_and_free(akx_context *ctx, const bench_case *c, buffers *b);

/* ---- the sim: counters and model of one call (counters.c) -------------------------------- */

typedef struct {
  akx_sim_kernel_counters total, k[MAX_KERNELS];
  int32_t count;
} sim_counts;

akx_status sim_call(akx_context *ctx, akx_bench_enqueue_fn fn, op_arg *a, sim_counts *c,
                    double *wall);
void record_counts(record *r, const sim_counts *c);
double model_copy_us(double bytes);

/* ---- output: the table and the files (output.c) and the plot (plot.c) -------------------- */

double gbs(double bytes, double us);
int table_on(void);
int open_outputs(void);
void close_outputs(void);
void preamble(akx_context *ctx, double est_s, int full_cases, double full_s);
void print_header(void);
void output_row(const record *r);
void write_kernel_rows(const record *r, const sim_counts *c, const char *layout);
int plot_check(const char *png);
int write_plot(const char *png);

#endif
