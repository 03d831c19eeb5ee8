/* akx-bench: reproduces the timings of libakx's reductions.
 *
 *   akx-bench [reduce] [--backend auto|cuda|sim] [--min E] [--max E] [--runs N]
 *             [--dtype float32,float64] [--csv]
 *
 * On CUDA: akx_mapreduce (sum into device memory) beside CUB's DeviceReduce::Sum and a
 * device-to-device copy of the same bytes, CUDA events, median of N runs after warm-up.
 * On the sim: the wall time of one call, and the sim's counters of that call (launches,
 * shape, bytes, wavefronts and sectors per request, waves) with the model's time estimate.
 * Every sum is checked against the host; exit status 1 when any check fails, 2 on a usage
 * or setup error. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "akx.h"
#include "akx_sim.h"
#ifdef AKX_HAVE_CUDA
#include "bench_cuda.h"
#endif

enum { EXIT_CHECK_FAILED = 1, EXIT_USAGE = 2 };
enum { WARMUP_RUNS = 3, MAX_KERNELS = 32, MAX_EXPONENT = 9 };

typedef struct {
  akx_backend backend;
  int min_exp, max_exp; /* sizes 10^min_exp .. 10^max_exp; max_exp < 0: the backend's default */
  int runs;
  int csv;
  akx_dtype dtypes[2];
  int ndtypes;
} bench_options;

static void usage(FILE *f) {
  fprintf(f,
          "usage: akx-bench [reduce] [--backend auto|cuda|sim] [--min E] [--max E] [--runs N]\n"
          "                 [--dtype float32,float64] [--csv]\n"
          "  Sums of float32 and float64 vectors of 10^min .. 10^max elements.\n"
          "  --backend  auto (default: AKX_BACKEND, else CUDA when a device exists, else the sim)\n"
          "  --min      smallest exponent (default 4)\n"
          "  --max      largest exponent (default 8 on CUDA, 7 on the sim, which is slow)\n"
          "  --runs     timed runs per size on CUDA, the median is printed (default 20)\n"
          "  --dtype    comma-separated list of float32, float64 (default both)\n"
          "  --csv      comma-separated values on stdout instead of tables (notes go to stderr)\n");
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

static int parse_dtypes(const char *text, bench_options *o) {
  o->ndtypes = 0;
  char buf[64];
  snprintf(buf, sizeof buf, "%s", text ? text : "");
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    akx_dtype t = strcmp(tok, "float32") == 0 ? AKX_FLOAT32
                  : strcmp(tok, "float64") == 0 ? AKX_FLOAT64
                                                : AKX_DTYPE_AUTO;
    if (t == AKX_DTYPE_AUTO || o->ndtypes == 2) {
      fprintf(stderr, "akx-bench: --dtype takes float32 and/or float64, got '%s'\n", text);
      return -1;
    }
    o->dtypes[o->ndtypes++] = t;
  }
  if (o->ndtypes == 0) {
    fprintf(stderr, "akx-bench: --dtype is empty\n");
    return -1;
  }
  return 0;
}

/* 0: run; 1: help printed; -1: usage error printed. */
static int parse_args(int argc, char **argv, bench_options *o) {
  *o = (bench_options){.backend = AKX_BACKEND_AUTO, .min_exp = 4, .max_exp = -1, .runs = 20,
                       .dtypes = {AKX_FLOAT32, AKX_FLOAT64}, .ndtypes = 2};
  int i = 1;
  if (i < argc && argv[i][0] != '-') {
    if (strcmp(argv[i], "reduce") != 0) {
      fprintf(stderr, "akx-bench: unknown command '%s' (the only one is 'reduce')\n", argv[i]);
      return -1;
    }
    ++i;
  }
  for (; i < argc; ++i) {
    const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return 1;
    } else if (strcmp(a, "--csv") == 0) {
      o->csv = 1;
      continue;
    } else if (strcmp(a, "--backend") == 0) {
      if (val && strcmp(val, "auto") == 0) o->backend = AKX_BACKEND_AUTO;
      else if (val && strcmp(val, "cuda") == 0) o->backend = AKX_BACKEND_CUDA;
      else if (val && strcmp(val, "sim") == 0) o->backend = AKX_BACKEND_SIM;
      else {
        fprintf(stderr, "akx-bench: --backend takes auto, cuda or sim, got '%s'\n", val ? val : "");
        return -1;
      }
    } else if (strcmp(a, "--min") == 0) {
      if (parse_int(a, val, 0, MAX_EXPONENT, &o->min_exp)) return -1;
    } else if (strcmp(a, "--max") == 0) {
      if (parse_int(a, val, 0, MAX_EXPONENT, &o->max_exp)) return -1;
    } else if (strcmp(a, "--runs") == 0) {
      if (parse_int(a, val, 1, 100000, &o->runs)) return -1;
    } else if (strcmp(a, "--dtype") == 0) {
      if (parse_dtypes(val, o)) return -1;
    } else {
      fprintf(stderr, "akx-bench: unknown option '%s'\n", a);
      usage(stderr);
      return -1;
    }
    ++i; /* every option but --csv and --help takes a value */
  }
  return 0;
}

/* ---- input and reference --------------------------------------------------------------- */

/* Integers in -8..8 from a hash of the index (splitmix64's finalizer). Not uniform, so that a
 * block that adds the wrong element or misses one shows, and with a mean near 0 every partial
 * sum stays far below 2^24 (a random walk: ~5 sqrt(n)), so that float32 and float64 sums in
 * any order are exact and the check can demand equality. */
static double pattern_value(int64_t i) {
  uint64_t z = (uint64_t)i + 0x9e3779b97f4a7c15u;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  z ^= z >> 31;
  return (double)(int)(z % 17) - 8.0;
}

/* Fills host[0..n) and returns the exact sum (host double: every partial is an integer far
 * below 2^53). */
static double fill_input(void *host, akx_dtype t, int64_t n) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    double x = pattern_value(i);
    if (t == AKX_FLOAT32) ((float *)host)[i] = (float)x;
    else ((double *)host)[i] = x;
    sum += x;
  }
  return sum;
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int64_t pow10_i64(int e) {
  int64_t v = 1;
  while (e-- > 0) v *= 10;
  return v;
}

static void fail_status(const char *what, akx_status s) {
  fprintf(stderr, "akx-bench: %s: %s: %s\n", what, akx_status_string(s), akx_last_error());
}

/* One input on the context's device: allocated, filled from the host, with its exact sum. */
typedef struct {
  akx_dtype dtype;
  int64_t n;
  size_t bytes;
  void *device;     /* n elements */
  void *result;     /* one accumulator, device memory */
  double reference; /* the exact sum */
} bench_input;

static akx_status input_create(akx_context *ctx, akx_dtype t, int64_t n, bench_input *in) {
  *in = (bench_input){.dtype = t, .n = n, .bytes = (size_t)n * akx_dtype_size(t)};
  void *host = malloc(in->bytes);
  if (!host) {
    fprintf(stderr, "akx-bench: cannot allocate %zu bytes of host memory\n", in->bytes);
    return AKX_ERROR_OUT_OF_MEMORY;
  }
  in->reference = fill_input(host, t, n);
  akx_status s = akx_malloc(ctx, &in->device, in->bytes);
  if (s == AKX_SUCCESS) s = akx_malloc(ctx, &in->result, sizeof(double));
  if (s == AKX_SUCCESS) s = akx_memcpy(ctx, in->device, host, in->bytes, AKX_COPY_HOST_TO_DEVICE);
  free(host);
  if (s != AKX_SUCCESS) fail_status("setting up the input", s);
  return s;
}

static void input_destroy(akx_context *ctx, bench_input *in) {
  if (in->device) akx_free(ctx, in->device);
  if (in->result) akx_free(ctx, in->result);
}

/* The call every timing is of: akx_mapreduce's sum of the input into device memory, enqueued
 * on the context's stream. arg: a bench_input. */
static akx_status enqueue_sum(akx_context *ctx, const void *arg) {
  const bench_input *in = arg;
  akx_array src = akx_vector(in->device, in->dtype, in->n);
  return akx_mapreduce(ctx, &src, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, in->result, AKX_DEVICE);
}

static akx_status sum_to_device(akx_context *ctx, const bench_input *in) {
  akx_status s = enqueue_sum(ctx, in);
  if (s == AKX_SUCCESS) s = akx_synchronize(ctx);
  if (s != AKX_SUCCESS) fail_status("akx_mapreduce", s);
  return s;
}

/* Copies the device result back; 1 when it equals the reference. */
static int check_result(akx_context *ctx, const bench_input *in, double *got) {
  union { float f; double d; } r;
  akx_status s = akx_memcpy(ctx, &r, in->result, akx_dtype_size(in->dtype), AKX_COPY_DEVICE_TO_HOST);
  if (s != AKX_SUCCESS) {
    fail_status("copying the result back", s);
    *got = NAN;
    return 0;
  }
  *got = in->dtype == AKX_FLOAT32 ? (double)r.f : r.d;
  return *got == in->reference;
}

static void print_check_failure(const bench_input *in, double got) {
  fprintf(stderr, "akx-bench: FAIL: sum of %" PRId64 " %s is %.17g, expected %.17g\n", in->n,
          akx_dtype_name(in->dtype), got, in->reference);
}

/* ---- sim --------------------------------------------------------------------------------- */

static double per_request(const akx_sim_traffic *t, uint64_t units) {
  return t->requests ? (double)units / (double)t->requests : 0.0;
}

/* "4.00 (4.00)": units per request and the ideal; "-" without requests. */
static const char *ratio_text(const akx_sim_traffic *t, char *buf, size_t size) {
  if (!t->requests) snprintf(buf, size, "-");
  else snprintf(buf, size, "%.2f (%.2f)", per_request(t, t->units), per_request(t, t->ideal));
  return buf;
}

static akx_sim_traffic traffic_sum(akx_sim_traffic a, akx_sim_traffic b) {
  return (akx_sim_traffic){a.requests + b.requests, a.units + b.units, a.ideal + b.ideal,
                           a.bytes + b.bytes};
}

static void sim_table_header(void) {
  printf("  %-32s %8s %13s %8s %12s %12s %15s %15s %15s %7s %11s\n", "kernel", "launches",
         "grid x block", "blocks", "bytes read", "bytes written", "smem wf/req", "gld sect/req",
         "gst sect/req", "waves", "model us");
}

static void sim_table_row(const char *name, const akx_sim_kernel_counters *k) {
  char grid[32], smem[32], gld[32], gst[32]; /* the totals have no grid: "-" */
  akx_sim_traffic shared = traffic_sum(k->shared_load, k->shared_store);
  if (k->last_grid) snprintf(grid, sizeof grid, "%u x %u", k->last_grid, k->last_block);
  else snprintf(grid, sizeof grid, "-");
  printf("  %-32s %8" PRIu64 " %13s %8" PRIu64 " %12" PRIu64 " %12" PRIu64 " %15s %15s %15s %7.2f %11.2f\n",
         name, k->launches, grid, k->blocks, k->global_load.bytes, k->global_store.bytes,
         ratio_text(&shared, smem, sizeof smem), ratio_text(&k->global_load, gld, sizeof gld),
         ratio_text(&k->global_store, gst, sizeof gst), k->waves, k->model_us);
}

static void sim_csv_header(void) {
  printf("backend,profile,dtype,n,wall_s,wall_ns_per_element,check,kernel,launches,last_grid,"
         "last_block,blocks,threads,warps,barriers,waves");
  const char *traffic[] = {"shared_load", "shared_store", "global_load", "global_store"};
  for (int i = 0; i < 4; ++i)
    printf(",%s_requests,%s_units,%s_ideal,%s_bytes", traffic[i], traffic[i], traffic[i], traffic[i]);
  printf(",model_us,footprint_bytes,l2_bytes,fits_l2\n");
}

static void sim_csv_row(const akx_context_info_t *info, const bench_input *in, double wall,
                        int pass, const char *name, const akx_sim_kernel_counters *k) {
  printf("sim,%s,%s,%" PRId64 ",%.6f,%.3f,%s,%s,%" PRIu64 ",%u,%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64
         ",%" PRIu64 ",%.4f",
         info->sim_profile, akx_dtype_name(in->dtype), in->n, wall, wall * 1e9 / (double)in->n,
         pass ? "PASS" : "FAIL", name, k->launches, k->last_grid, k->last_block, k->blocks,
         k->threads, k->warps, k->barriers, k->waves);
  const akx_sim_traffic *t[] = {&k->shared_load, &k->shared_store, &k->global_load, &k->global_store};
  for (int i = 0; i < 4; ++i)
    printf(",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64, t[i]->requests, t[i]->units,
           t[i]->ideal, t[i]->bytes);
  printf(",%.3f,%" PRIu64 ",%" PRIu64 ",%d\n", k->model_us, k->footprint_bytes, k->l2_bytes,
         (int)k->fits_l2);
}

/* One size on the sim: one call, timed on the wall clock, counted by the sim. */
static int bench_sim_size(akx_context *ctx, const akx_context_info_t *info, const bench_input *in,
                          const bench_options *o) {
  akx_status s = akx_sim_counters_reset(ctx);
  if (s != AKX_SUCCESS) {
    fail_status("akx_sim_counters_reset", s);
    return EXIT_USAGE;
  }
  double t0 = now_seconds();
  if (sum_to_device(ctx, in) != AKX_SUCCESS) return EXIT_CHECK_FAILED;
  double wall = now_seconds() - t0;

  akx_sim_kernel_counters total, kernels[MAX_KERNELS];
  int32_t count = 0;
  s = akx_sim_counters_get(ctx, &total, kernels, MAX_KERNELS, &count);
  if (s != AKX_SUCCESS) {
    fail_status("akx_sim_counters_get", s);
    return EXIT_USAGE;
  }
  if (count > MAX_KERNELS) count = MAX_KERNELS;
  double got;
  int pass = check_result(ctx, in, &got);
  if (!pass) print_check_failure(in, got);

  if (o->csv) {
    for (int32_t k = 0; k < count; ++k) sim_csv_row(info, in, wall, pass, kernels[k].kernel, &kernels[k]);
    sim_csv_row(info, in, wall, pass, "total", &total);
  } else {
    printf("%s n=%" PRId64 ": sum %s; sim wall time %.3f s = %.1f ns/element; ",
           akx_dtype_name(in->dtype), in->n, pass ? "PASS" : "FAIL", wall, wall * 1e9 / (double)in->n);
    /* With AKX_SIM_COUNTERS=0 nothing is counted, and a model of no bytes would be a lie. */
    if (in->n > 0 && total.global_load.bytes == 0)
      printf("model n/a (counters off: AKX_SIM_COUNTERS=0)\n");
    else
      printf("model %.2f us = %.0f GB/s read%s\n", total.model_us,
             total.model_us > 0 ? (double)in->bytes / (total.model_us * 1e3) : 0.0,
             /* The footprint (sectors moved) within the profile's L2: a GPU repeating the
              * call may read it from L2, faster than the model, which prices DRAM. */
             total.fits_l2 ? "; fits L2 (model prices DRAM)" : "");
    sim_table_header();
    for (int32_t k = 0; k < count; ++k) sim_table_row(kernels[k].kernel, &kernels[k]);
    sim_table_row("total", &total);
    printf("\n");
  }
  return pass ? 0 : EXIT_CHECK_FAILED;
}

/* The profile's L2 in MiB, as the sim's counters report it (0 when they cannot say). */
static double sim_l2_mib(akx_context *ctx) {
  akx_sim_kernel_counters total;
  if (akx_sim_counters_get(ctx, &total, NULL, 0, NULL) != AKX_SUCCESS) return 0.0;
  return (double)total.l2_bytes / (1024.0 * 1024.0);
}

static void sim_preamble(akx_context *ctx, const akx_context_info_t *info, const bench_options *o) {
  FILE *f = o->csv ? stderr : stdout;
  fprintf(f,
          "akx-bench reduce on the sim, profile %s (%d SMs, sm_%d%d, %.0f GB/s peak).\n"
          "The sim runs every GPU thread as a CPU fiber: it is slow (hence at most 10^7 elements\n"
          "unless --max says otherwise), and its wall time says nothing of a GPU's.\n"
          "Per kernel, the sim's counters of one call:\n"
          "smem wf/req = shared-memory wavefronts per request (ideal in parentheses),\n"
          "gld/gst sect/req = 32-byte global sectors per load/store request (ideal),\n"
          "waves = blocks / blocks resident at once. 'model' is the sim's estimate of the GPU\n"
          "time from those counters and the profile (src/sim/model.c), not a measurement: DRAM\n"
          "time from the 32-byte sectors moved, bytes in flight from each kernel's declared\n"
          "loads in flight and occupancy, plus launch and dependent-step latency.\n"
          "'fits L2' marks a call whose footprint (sectors moved) is within the profile's L2\n"
          "(%.0f MiB): a GPU repeating it may read it from L2; the model still prices DRAM.\n"
          "Input: integers in -8..8 from a hash of the index; the sum must be exact.\n\n",
          info->sim_profile, info->sm_count, info->cc_major, info->cc_minor,
          info->bandwidth_gbs, sim_l2_mib(ctx));
  const char *counting = getenv("AKX_SIM_COUNTERS");
  if (counting && strcmp(counting, "0") == 0)
    fprintf(f, "AKX_SIM_COUNTERS=0: counting is off, the counters below are zero.\n\n");
  if (o->csv) sim_csv_header();
}

/* ---- CUDA -------------------------------------------------------------------------------- */

#ifdef AKX_HAVE_CUDA
static void cuda_preamble(const akx_context_info_t *info, const bench_options *o) {
  FILE *f = o->csv ? stderr : stdout;
  fprintf(f,
          "akx-bench reduce on CUDA: %s (sm_%d%d, %d SMs, %.0f GB/s peak)\n"
          "Median of %d runs after %d warm-up runs, CUDA events around each call, one stream;\n"
          "akx = akx_mapreduce sum into device memory, CUB = cub::DeviceReduce::Sum (temp storage\n"
          "allocated once), memcpy = device-to-device cudaMemcpyAsync of the same bytes.\n"
          "GB/s = DRAM bytes moved / time (a sum reads n elements; a copy reads and writes them).\n"
          "akx/CUB and akx/memcpy are ratios of times (below 1: akx is faster).\n"
          "Input: integers in -8..8 from a hash of the index; the sum must be exact.\n\n",
          info->device_name, info->cc_major, info->cc_minor, info->sm_count, info->bandwidth_gbs,
          o->runs, WARMUP_RUNS);
  if (o->csv)
    printf("backend,device,dtype,n,bytes,akx_us,akx_gbs,cub_us,cub_gbs,memcpy_us,memcpy_gbs,"
           "akx_over_cub,akx_over_memcpy,check\n");
  else
    /* µ is two bytes in UTF-8: its columns are one byte wider to line up with the rows. */
    printf("%-8s %11s %10s %9s %10s %9s %10s %9s %8s %10s  %s\n", "dtype", "n", "akx µs",
           "akx GB/s", "CUB µs", "CUB GB/s", "memcpy µs", "copy GB/s", "akx/CUB", "akx/memcpy",
           "check");
}

/* One size on CUDA: a checked call (also the first warm-up), then the timed rounds. */
static int bench_cuda_size(akx_context *ctx, const akx_context_info_t *info, const bench_input *in,
                           const bench_options *o) {
  if (sum_to_device(ctx, in) != AKX_SUCCESS) return EXIT_CHECK_FAILED;
  double got;
  int pass = check_result(ctx, in, &got);
  if (!pass) print_check_failure(in, got);

  akx_bench_cuda_times t;
  char err[512];
  if (akx_bench_cuda_reduce(ctx, enqueue_sum, in, in->device, in->dtype, in->n, WARMUP_RUNS,
                            o->runs, &t, err, sizeof err) != 0) {
    fprintf(stderr, "akx-bench: timing %s n=%" PRId64 ": %s\n", akx_dtype_name(in->dtype), in->n, err);
    return EXIT_USAGE;
  }
  double gb = (double)in->bytes / 1e9;
  double akx_gbs = gb / (t.akx_us * 1e-6), cub_gbs = gb / (t.cub_us * 1e-6),
         copy_gbs = 2 * gb / (t.memcpy_us * 1e-6);
  if (o->csv)
    printf("cuda,%s,%s,%" PRId64 ",%zu,%.3f,%.1f,%.3f,%.1f,%.3f,%.1f,%.4f,%.4f,%s\n",
           info->device_name, akx_dtype_name(in->dtype), in->n, in->bytes, t.akx_us, akx_gbs,
           t.cub_us, cub_gbs, t.memcpy_us, copy_gbs, t.akx_us / t.cub_us, t.akx_us / t.memcpy_us,
           pass ? "PASS" : "FAIL");
  else
    printf("%-8s %11" PRId64 " %9.2f %9.1f %9.2f %9.1f %9.2f %9.1f %8.3f %10.3f  %s\n",
           akx_dtype_name(in->dtype), in->n, t.akx_us, akx_gbs, t.cub_us, cub_gbs, t.memcpy_us,
           copy_gbs, t.akx_us / t.cub_us, t.akx_us / t.memcpy_us, pass ? "PASS" : "FAIL");
  return pass ? 0 : EXIT_CHECK_FAILED;
}
#endif

/* ---- main -------------------------------------------------------------------------------- */

int main(int argc, char **argv) {
  bench_options o;
  int parsed = parse_args(argc, argv, &o);
  if (parsed) return parsed > 0 ? 0 : EXIT_USAGE;

  akx_context *ctx = NULL;
  akx_status s = akx_context_create(&ctx, o.backend, 0);
  if (s != AKX_SUCCESS) {
    fail_status("akx_context_create", s);
    return EXIT_USAGE;
  }
  akx_context_info_t info;
  akx_context_info(ctx, &info);
  int on_sim = info.backend == AKX_BACKEND_SIM;
#ifndef AKX_HAVE_CUDA
  if (!on_sim) { /* unreachable: the CUDA backend of such a build has no device */
    fprintf(stderr, "akx-bench: built without CUDA, cannot time the CUDA backend\n");
    akx_context_destroy(ctx);
    return EXIT_USAGE;
  }
#endif
  int max_exp = o.max_exp >= 0 ? o.max_exp : on_sim ? 7 : 8;
  if (o.min_exp > max_exp) {
    fprintf(stderr, "akx-bench: --min %d is above --max %d\n", o.min_exp, max_exp);
    akx_context_destroy(ctx);
    return EXIT_USAGE;
  }

  if (on_sim) sim_preamble(ctx, &info, &o);
#ifdef AKX_HAVE_CUDA
  else cuda_preamble(&info, &o);
#endif

  int status = 0;
  for (int d = 0; d < o.ndtypes && status != EXIT_USAGE; ++d) {
    for (int e = o.min_exp; e <= max_exp; ++e) {
      bench_input in;
      if (input_create(ctx, o.dtypes[d], pow10_i64(e), &in) != AKX_SUCCESS) {
        input_destroy(ctx, &in);
        status = EXIT_USAGE;
        break;
      }
      int r = 0;
      if (on_sim) r = bench_sim_size(ctx, &info, &in, &o);
#ifdef AKX_HAVE_CUDA
      else r = bench_cuda_size(ctx, &info, &in, &o);
#endif
      input_destroy(ctx, &in);
      fflush(stdout);
      if (r == EXIT_USAGE) {
        status = EXIT_USAGE;
        break;
      }
      if (r) status = EXIT_CHECK_FAILED;
    }
  }
  if (status == EXIT_CHECK_FAILED) fprintf(stderr, "akx-bench: some sums FAILED their check\n");
  akx_context_destroy(ctx);
  return status;
}
