/* akx-bench's command line: --help (the suites, the options, the environment) and the
 * arguments, checked before anything runs. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "akx_bench.h"

bench_options opt;

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
    "  AKX_SIM_TEST_KERNELS    the tests' kernel plugin the sim loads on demand (tests only)\n"
    "  AKX_SIM_TEST_KERNELS_RECORD  a file: the plugin's combinations served, one a line (tests\n"
    "                          only: tests/sim_test_kernels/record_used.py)\n"
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

int parse_args(int argc, char **argv, bench_options *o) {
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
