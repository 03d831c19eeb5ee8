/* Run-time compilation through NVRTC (src/jit/nvrtc.h), loaded with dlopen. Built only with
 * the CUDA backend (tests/CMakeLists.txt), and there an NVRTC that cannot be loaded FAILS
 * these tests rather than skipping them: CI proves the run-time CUDA path with this file.
 * Nothing here needs a GPU: NVRTC compiles for any architecture it knows without one.
 *
 * What is checked:
 *  - a templated kernel with an embedded header and a name expression becomes an sm_90 cubin
 *    (an ELF for EM_CUDA whose string table holds the lowered name) and compute_80 PTX
 *    (.version, .target sm_80, .entry <lowered name>);
 *  - the architecture ladder: a device newer than NVRTC knows gets PTX for the newest it
 *    knows, one older than all of them is AKX_ERROR_UNSUPPORTED;
 *  - the exact-arithmetic flags reach NVRTC (the PTX has no fma, and IEEE div and sqrt);
 *  - a compile error on line 3 is AKX_ERROR_INVALID_ARGUMENT naming "(3)" and "error", with
 *    the whole log in the thread's compile log;
 *  - AKX_NVRTC_LIBRARY=/nonexistent is AKX_ERROR_UNSUPPORTED naming the path;
 *  - threads compiling at once all succeed, each with its own log;
 *  - and it prints (does not assert) how long NVRTC takes, for bench/RESULTS.md. */
/* setenv, unsetenv and clock_gettime are POSIX, outside strict C11. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <elf.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "akx.h"
#include "elf_strtab.h"
#include "jit/compile_log.h"
#include "jit/nvrtc.h"

/* ---- a small templated kernel and its embedded header ----------------------------------------- */
static const char *const ops_header_name = "akx_test_ops.cuh";
static const char *const ops_header =
    "#pragma once\n"
    "namespace akx_test {\n"
    "template <typename T> struct plus {\n"
    "  __device__ T operator()(T a, T b) const { return a + b; }\n"
    "};\n"
    "}\n";
static const char *const tile_sum_source =
    "#include \"akx_test_ops.cuh\"\n"
    "namespace akx_test {\n"
    "template <typename T, int NT>\n"
    "__global__ void __launch_bounds__(NT) tile_sum(const T *in, T *out, int n) {\n"
    "  __shared__ T part[NT];\n"
    "  int i = blockIdx.x * NT + threadIdx.x;\n"
    "  part[threadIdx.x] = i < n ? in[i] : T(0);\n"
    "  __syncthreads();\n"
    "  for (int s = NT / 2; s > 0; s /= 2) {\n"
    "    if (threadIdx.x < s) part[threadIdx.x] = plus<T>()(part[threadIdx.x], part[threadIdx.x + s]);\n"
    "    __syncthreads();\n"
    "  }\n"
    "  if (threadIdx.x == 0) out[blockIdx.x] = part[0];\n"
    "}\n"
    "}\n";
static const char *const tile_sum_name = "akx_test::tile_sum<float, 128>";

static akx__nvrtc_request tile_sum_request(int arch, int want_ptx) {
  akx__nvrtc_request rq = {0};
  rq.source = tile_sum_source;
  rq.name = "tile_sum.cu";
  rq.n_headers = 1;
  rq.header_sources = &ops_header;
  rq.header_names = &ops_header_name;
  rq.n_names = 1;
  rq.name_expressions = &tile_sum_name;
  rq.arch = arch;
  rq.want_ptx = want_ptx;
  return rq;
}

/* Fails (never skips) when NVRTC does not load: see the opening comment. */
static void require_nvrtc(void) {
  akx_status s = akx__nvrtc_available();
  cr_assert_eq(s, AKX_SUCCESS, "NVRTC must load in a CUDA build: %s", akx_last_error());
}

Test(nvrtc, loads_and_reports_its_version) {
  require_nvrtc();
  int major = 0, minor = -1;
  cr_assert_eq(akx__nvrtc_version(&major, &minor), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert(major >= 12 && minor >= 0, "NVRTC %d.%d", major, minor);
  int archs[64], n = 0;
  cr_assert_eq(akx__nvrtc_supported_archs(archs, 64, &n), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert(n > 0 && n <= 64);
  int has_80 = 0, has_90 = 0;
  for (int i = 0; i < n; i++) has_80 |= archs[i] == 80, has_90 |= archs[i] == 90;
  cr_assert(has_80 && has_90, "NVRTC %d.%d lacks sm_80 or sm_90", major, minor);
}

Test(nvrtc, cubin_for_sm_90) {
  require_nvrtc();
  akx__nvrtc_request rq = tile_sum_request(90, 0);
  akx__nvrtc_result res;
  cr_assert_eq(akx__nvrtc_compile(&rq, &res), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(res.is_ptx, 0);
  cr_assert_eq(res.arch_compiled, 90);
  cr_assert_not_null(res.log);
  cr_assert_eq(res.n_lowered_names, 1);
  const char *lowered = res.lowered_names[0];
  cr_assert(strncmp(lowered, "_Z", 2) == 0, "lowered name '%s'", lowered);
  cr_assert(strstr(lowered, "tile_sum") != NULL, "lowered name '%s'", lowered);
  const unsigned char *img = res.image;
  cr_assert(res.size > sizeof(Elf64_Ehdr));
  cr_assert(memcmp(img, "\x7f" "ELF", 4) == 0, "not an ELF image");
  cr_assert_eq(img[EI_CLASS], ELFCLASS64);
  cr_assert_eq(((const Elf64_Ehdr *)img)->e_machine, EM_CUDA);  /* 190 */
  cr_assert(akx_test_elf_strtab_has(img, res.size, lowered), "'%s' is in no string table", lowered);
  akx__nvrtc_result_free(&res);
  cr_assert_null(res.image);
  akx__nvrtc_result_free(&res);  /* a zeroed result: nothing happens */
}

Test(nvrtc, ptx_for_compute_80_on_request) {
  require_nvrtc();
  akx__nvrtc_request rq = tile_sum_request(80, 1);
  akx__nvrtc_result res;
  cr_assert_eq(akx__nvrtc_compile(&rq, &res), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(res.is_ptx, 1);
  cr_assert_eq(res.arch_compiled, 80);
  const char *ptx = res.image;
  cr_assert_eq(ptx[res.size - 1], '\0', "PTX is NUL-terminated");
  cr_assert(strstr(ptx, ".version ") != NULL);
  cr_assert(strstr(ptx, ".target sm_80") != NULL);
  char entry[512];
  snprintf(entry, sizeof entry, ".entry %s(", res.lowered_names[0]);
  cr_assert(strstr(ptx, entry) != NULL, "no '%s' in the PTX", entry);
  akx__nvrtc_result_free(&res);
}

Test(nvrtc, architecture_ladder) {
  require_nvrtc();
  int archs[64], n = 0;
  cr_assert_eq(akx__nvrtc_supported_archs(archs, 64, &n), AKX_SUCCESS);
  int newest = archs[n - 1], oldest = archs[0];
  /* A device newer than every architecture NVRTC knows: PTX for the newest, for the driver. */
  akx__nvrtc_request rq = tile_sum_request(newest + 10, 0);
  akx__nvrtc_result res;
  cr_assert_eq(akx__nvrtc_compile(&rq, &res), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(res.is_ptx, 1);
  cr_assert_eq(res.arch_compiled, newest);
  char target[32];
  snprintf(target, sizeof target, ".target sm_%d", newest);
  cr_assert(strstr(res.image, target) != NULL, "no '%s'", target);
  akx__nvrtc_result_free(&res);
  /* Older than all of them: refused, naming the range. */
  rq = tile_sum_request(oldest - 5, 0);
  cr_assert_eq(akx__nvrtc_compile(&rq, &res), AKX_ERROR_UNSUPPORTED);
  cr_assert(strstr(akx_last_error(), "older") != NULL, "%s", akx_last_error());
  cr_assert_null(res.image);
  /* The architecture is the request's, never an option's. */
  const char *opt = "-arch=sm_80";
  rq = tile_sum_request(90, 0);
  rq.n_options = 1;
  rq.options = &opt;
  cr_assert_eq(akx__nvrtc_compile(&rq, &res), AKX_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(akx_last_error(), "-arch=sm_80") != NULL, "%s", akx_last_error());
  rq = tile_sum_request(0, 0);
  cr_assert_eq(akx__nvrtc_compile(&rq, &res), AKX_ERROR_INVALID_ARGUMENT);
}

/* --fmad=false -prec-div=true -prec-sqrt=true -ftz=false, seen in the PTX they make: a*b + c
 * stays a rounded multiply and a rounded add, division and square root are the IEEE ones,
 * and nothing flushes subnormals. */
Test(nvrtc, exact_arithmetic_flags_reach_nvrtc) {
  require_nvrtc();
  akx__nvrtc_request rq = {0};
  rq.source =
      "extern \"C\" __global__ void exact(const float *a, const float *b, float *c) {\n"
      "  int i = threadIdx.x;\n"
      "  c[i] = a[i] * b[i] + c[i];\n"
      "  c[i + 32] = a[i] / b[i] + sqrtf(b[i]);\n"
      "}\n";
  rq.arch = 80;
  rq.want_ptx = 1;
  akx__nvrtc_result res;
  cr_assert_eq(akx__nvrtc_compile(&rq, &res), AKX_SUCCESS, "%s", akx_last_error());
  const char *ptx = res.image;
  cr_assert(strstr(ptx, "fma.") == NULL, "contracted:\n%s", ptx);
  cr_assert(strstr(ptx, "mul.rn.f32") != NULL, "%s", ptx);
  cr_assert(strstr(ptx, "div.rn.f32") != NULL, "%s", ptx);
  cr_assert(strstr(ptx, "sqrt.rn.f32") != NULL, "%s", ptx);
  cr_assert(strstr(ptx, ".ftz") == NULL, "flushes subnormals:\n%s", ptx);
  akx__nvrtc_result_free(&res);
}

/* Line 2 draws a warning whose text holds "error", ahead of the error in the log: the
 * sentence must still be line 3's. */
static const char *const error_on_line_3 =
    "extern \"C\" __global__ void broken(int *p) {\n"
    "#warning \"error: not an error\"\n"
    "  p[0] = 1 + no_such_name;\n"
    "}\n";

Test(nvrtc, compile_error_names_its_line) {
  require_nvrtc();
  akx__nvrtc_request rq = {0};
  rq.source = error_on_line_3;
  rq.name = "broken.cu";
  rq.arch = 90;
  akx__nvrtc_result res;
  cr_assert_eq(akx__nvrtc_compile(&rq, &res), AKX_ERROR_INVALID_ARGUMENT);
  const char *e = akx_last_error();
  cr_assert(strstr(e, "(3)") != NULL && strstr(e, "error") != NULL, "%s", e);
  cr_assert(strstr(e, "no_such_name") != NULL, "%s", e);
  cr_assert(strchr(e, '\n') == NULL, "one line: %s", e);
  const char *log = akx__compile_log_get();
  cr_assert(strstr(log, "broken.cu(3)") != NULL, "%s", log);
  cr_assert(strstr(log, "broken.cu(2): warning") != NULL, "the warning is in the log too:\n%s", log);
  cr_assert(strstr(log, "1 error detected") != NULL, "%s", log);
  cr_assert_null(res.image);
  cr_assert_null(res.log);
  /* A good compile replaces the log. */
  rq = tile_sum_request(90, 0);
  cr_assert_eq(akx__nvrtc_compile(&rq, &res), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert(strstr(akx__compile_log_get(), "broken") == NULL);
  akx__nvrtc_result_free(&res);
}

Test(nvrtc, missing_library_is_unsupported_and_named) {
  setenv("AKX_NVRTC_LIBRARY", "/nonexistent/libnvrtc.so.13", 1);
  akx__nvrtc_reset_for_tests();
  cr_assert_eq(akx__nvrtc_available(), AKX_ERROR_UNSUPPORTED);
  const char *e = akx_last_error();
  cr_assert(strstr(e, "NVRTC is not available") != NULL, "%s", e);
  cr_assert(strstr(e, "/nonexistent/libnvrtc.so.13") != NULL, "%s", e);
  akx__nvrtc_request rq = tile_sum_request(90, 0);
  akx__nvrtc_result res;
  cr_assert_eq(akx__nvrtc_compile(&rq, &res), AKX_ERROR_UNSUPPORTED);
  cr_assert(strstr(akx_last_error(), "/nonexistent") != NULL, "%s", akx_last_error());
  int major, minor;
  cr_assert_eq(akx__nvrtc_version(&major, &minor), AKX_ERROR_UNSUPPORTED);
  /* The outcome is kept until a reset; after one, the default search finds NVRTC again. */
  unsetenv("AKX_NVRTC_LIBRARY");
  cr_assert_eq(akx__nvrtc_available(), AKX_ERROR_UNSUPPORTED);
  akx__nvrtc_reset_for_tests();
  require_nvrtc();
}

/* ---- threads ------------------------------------------------------------------------------------ */
typedef struct {
  int broken;  /* compile error_on_line_3 instead */
  int nt;      /* the tile_sum instance to build */
  akx_status status;
  char lowered[256];
  char log_marker_ok;  /* this thread's compile log is its own */
  char error[1024];
} thread_job;

static void *compile_in_thread(void *arg) {
  thread_job *job = arg;
  akx__nvrtc_request rq = tile_sum_request(90, 0);
  char expr[64];
  snprintf(expr, sizeof expr, "akx_test::tile_sum<float, %d>", job->nt);
  const char *exprs[] = {expr};
  rq.name_expressions = exprs;
  if (job->broken) {
    rq.source = error_on_line_3;
    rq.n_names = 0;
  }
  akx__nvrtc_result res;
  job->status = akx__nvrtc_compile(&rq, &res);
  snprintf(job->error, sizeof job->error, "%s", akx_last_error());
  const char *log = akx__compile_log_get();
  job->log_marker_ok = job->broken ? strstr(log, "no_such_name") != NULL
                                   : strstr(log, "no_such_name") == NULL;
  if (job->status == AKX_SUCCESS) {
    snprintf(job->lowered, sizeof job->lowered, "%s", res.lowered_names[0]);
    akx__nvrtc_result_free(&res);
  }
  return NULL;
}

Test(nvrtc, threads_compile_at_once) {
  require_nvrtc();
  thread_job jobs[3] = {{.nt = 64}, {.nt = 256}, {.broken = 1}};
  pthread_t tid[3];
  for (int i = 0; i < 3; i++) cr_assert_eq(pthread_create(&tid[i], NULL, compile_in_thread, &jobs[i]), 0);
  for (int i = 0; i < 3; i++) pthread_join(tid[i], NULL);
  for (int i = 0; i < 2; i++) {
    cr_assert_eq(jobs[i].status, AKX_SUCCESS, "thread %d: %s", i, jobs[i].error);
    char nt[16];
    snprintf(nt, sizeof nt, "Li%dE", jobs[i].nt);
    cr_assert(strstr(jobs[i].lowered, nt) != NULL, "thread %d: %s", i, jobs[i].lowered);
    cr_assert(jobs[i].log_marker_ok, "thread %d saw another thread's log", i);
  }
  cr_assert_eq(jobs[2].status, AKX_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(jobs[2].error, "(3)") != NULL, "%s", jobs[2].error);
  cr_assert(jobs[2].log_marker_ok, "the failing thread's log is not its own");
}

/* ---- timing, printed for bench/RESULTS.md ------------------------------------------------------ */
static double seconds_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int count_lines(const char *s) {
  int n = 0;
  for (; *s; s++) n += *s == '\n';
  return n;
}

/* About 200 lines: 24 small templated device functions chained by one kernel, built for two
 * element types, in the shape of the library's kernels (templates, shared memory, a barrier). */
static char *long_kernel_source(int *lines) {
  size_t cap = 64 * 1024, used = 0;
  char *src = malloc(cap);
  cr_assert_not_null(src);
  enum { STEPS = 24 };
  for (int k = 0; k < STEPS; k++)
    used += (size_t)snprintf(src + used, cap - used,
                             "template <typename T>\n"
                             "__device__ __forceinline__ T step_%d(T x, const T *table, int i) {\n"
                             "  T y = x * table[(i + %d) & 31];\n"
                             "  if (y > T(%d)) y -= T(%d);\n"
                             "  else y += table[(i * %d) & 31];\n"
                             "  return y + T(1) / (x + T(%d));\n"
                             "}\n\n",
                             k, k, k, k, k + 1, k + 1);
  used += (size_t)snprintf(src + used, cap - used,
                           "template <typename T, int NT>\n"
                           "__global__ void __launch_bounds__(NT) long_kernel(const T *in, T *out, int n) {\n"
                           "  __shared__ T table[32];\n"
                           "  int i = blockIdx.x * NT + threadIdx.x;\n"
                           "  if (threadIdx.x < 32) table[threadIdx.x] = in[threadIdx.x];\n"
                           "  __syncthreads();\n"
                           "  if (i >= n) return;\n"
                           "  T x = in[i];\n");
  for (int k = 0; k < STEPS; k++)
    used += (size_t)snprintf(src + used, cap - used, "  x = step_%d(x, table, i);\n", k);
  used += (size_t)snprintf(src + used, cap - used, "  out[i] = x;\n}\n");
  cr_assert(used < cap);
  *lines = count_lines(src);
  return src;
}

static double time_compile(const akx__nvrtc_request *rq) {
  akx__nvrtc_result res;
  double t0 = seconds_now();
  akx_status s = akx__nvrtc_compile(rq, &res);
  double t = seconds_now() - t0;
  cr_assert_eq(s, AKX_SUCCESS, "%s", akx_last_error());
  akx__nvrtc_result_free(&res);
  return t;
}

Test(nvrtc, compile_time_is_printed, .timeout = 240) {
  require_nvrtc();
  int major = 0, minor = 0;
  akx__nvrtc_version(&major, &minor);
  /* The first compile of a process also loads libnvrtc-builtins; the later ones do not. */
  akx__nvrtc_request small = tile_sum_request(90, 0);
  double small_first = time_compile(&small);
  double small_best = 1e30;
  for (int r = 0; r < 3; r++) {
    double t = time_compile(&small);
    if (t < small_best) small_best = t;
  }
  int lines = 0;
  char *src = long_kernel_source(&lines);
  const char *exprs[] = {"long_kernel<float, 256>", "long_kernel<double, 256>"};
  akx__nvrtc_request big = {.source = src, .name = "long_kernel.cu", .n_names = 2,
                            .name_expressions = exprs, .arch = 90};
  double big_best = 1e30;
  for (int r = 0; r < 3; r++) {
    double t = time_compile(&big);
    if (t < big_best) big_best = t;
  }
  free(src);
  fprintf(stderr,
          "nvrtc timing (NVRTC %d.%d, sm_90 cubin, wall): small kernel (%d-line tile_sum) first "
          "%.3f s, best of 3 after %.3f s; %d-line kernel, 2 instances, best of 3 %.3f s\n",
          major, minor, count_lines(tile_sum_source), small_first, small_best, lines, big_best);
}
