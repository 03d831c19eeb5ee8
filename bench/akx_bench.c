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
 * The cases run come from one plan made before anything runs (plan.c, from the suites' plan_*
 * in suites.c), so that progress can say "case i/N" with an ETA. The default plan is what the
 * sim runs in about a minute on a 2-core machine: every family, sizes up to 10^8 where the sim
 * is fast enough. --full plans the complete tables of the notes (every size 10^4..10^8, every
 * dtype and shape, the scans also with the dense and odd-stride layouts); on CUDA the default
 * is --full (a GPU runs it in seconds). Rows go to the table and to --csv / --json as each case
 * finishes.
 * Every akx result is checked against the host. A call that returns AKX_ERROR_UNSUPPORTED
 * prints "n/a (unsupported: ...)" and does not fail the run; any other error or a wrong result
 * exits with status 1; a usage or setup error with 2; SIGINT or SIGTERM with 128 + the signal,
 * after the rows so far (and the plot of them) are written.
 * This file is the run from the arguments to the summary line; akx_bench.h lists the others,
 * one concern each. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "akx_bench.h"
#ifdef AKX_BENCH_DIST
#include "bench_dist.h"
#endif

akx_context_info_t dev;
int on_sim;

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

/* ---- main -------------------------------------------------------------------------------- */

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
    fprintf(stderr, "akx-bench: built without its CUDA timing (no CUDA, or configured where no GPU "
                    "was seen: -DAKX_GPU_TARGETS=ON builds it), cannot time the CUDA backend\n");
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
  close_outputs();

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
