/* akx-bench's plan: every case of the run, listed before anything runs, so that progress can
 * say "case i/N" with an ETA; the estimate of each case's seconds, scaled by this machine's
 * sim speed (calibrate_sim). */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "akx_bench.h"

planned_case plan[MAX_CASES];
int nplan;
plan_mode planning_mode;
static const suite_def *planning; /* the suite whose plan function runs */
double run_start;

double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Seconds a case takes, from what this 2-core machine measured (bench/RESULTS.md, "The default
 * run"): on the sim, the fibers cost `sim_ns` per element and layout pass, plus the host's
 * input, copy and check (about 25 ns per element) and a fixed 0.05 s; on CUDA the host's share
 * and the timed rounds' launches. Only the ETA and --full's announcement use it. */
static double sim_speed = 1.0; /* this machine's sim time over the costs' (calibrate_sim) */
double estimate_s(int64_t elements, double sim_ns, int passes) {
  double host = 25e-9 * (double)elements + 0.05;
  if (!on_sim) return host + (WARMUP_RUNS + opt.runs) * 3 * 20e-6;
  return host + sim_speed * sim_ns * 1e-9 * (double)elements * passes;
}

void plan_add(int spec, int exp10, akx_dtype dtype, int64_t elements, const char *label,
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
double make_plan(plan_mode mode) {
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

/* Whether the plan takes a sweep's size 10^e: every size for the complete tables, 10^4 and
 * 10^5 with --quick, else up to the spec's largest for the default sim run. */
int in_plan(int e, int default_max) {
  if (planning_mode == PLAN_QUICK) return e <= QUICK_MAX_EXP;
  return planning_mode == PLAN_FULL || e <= default_max;
}

/* The sim's speed on this machine, against the per-element costs the estimates use: the same
 * 2-core machine ran the same default plan in 17 s one day and 57 s another (bench/RESULTS.md),
 * so a fixed cost would be off by a factor of 2 to 3. The fastest of three float32 scans of 2^18
 * elements (against the scan suite's float32 cost; about 0.3 s each) sets the scale, kept within
 * 1/4..4 so that a probe disturbed by another process cannot make the estimate absurd. */
void calibrate_sim(akx_context *ctx) {
  const int64_t n = (int64_t)1 << 18;
  void *src = NULL, *dst = NULL;
  if (akx_malloc(ctx, &src, (size_t)n * 4) != AKX_SUCCESS || akx_malloc(ctx, &dst, (size_t)n * 4) != AKX_SUCCESS) {
    if (src) akx_free(ctx, src);
    return;
  }
  const akx_array a = akx_vector(src, AKX_FLOAT32, n), d = akx_vector(dst, AKX_FLOAT32, n);
  const double cost_ns = scan_float32_sim_ns();
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

/* ---- progress ---------------------------------------------------------------------------- */

void fmt_duration(char *buf, size_t size, double s) {
  if (s < 90) snprintf(buf, size, "%.0f s", s);
  else if (s < 5400) snprintf(buf, size, "%.0f min %02.0f s", floor(s / 60), fmod(s, 60));
  else snprintf(buf, size, "%.1f h", s / 3600);
}

/* "case i/N" with the case, elapsed time and ETA on stderr: overwritten in place on a terminal,
 * one line per case in a log. The ETA is the plan's estimate of the cases left, scaled by how
 * the estimate has matched this run so far. */
void progress(int i, const char *what) {
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

void progress_done(void) {
  if (isatty(2)) fprintf(stderr, "\r\033[K");
}
