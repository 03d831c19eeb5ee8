/* Two contexts on two host threads, both scanning with tiles over 48 KiB of shared memory
 * (bench/gpu_check.sh, stage two-threads-big-tiles). The dynamic shared memory a kernel may take
 * above 48 KiB is an attribute of the kernel (cudaFuncAttributeMaxDynamicSharedMemorySize), one
 * for the whole process: two threads that each set it to their own launch's size undo each
 * other, and a launch larger than the other's setting fails ("invalid argument"). Both threads
 * use the same kernel (an inclusive float64 ADD scan) with tiles of different sizes:
 *   thread 0: opts 256 threads x 32 items of 8 bytes, 64 KiB of runs per tile;
 *   thread 1: opts 256 threads x 27 items, 54 KiB;
 * start together (a barrier) and each makes CALLS scans (default 10^4), alternating between two
 * sources so that a scan that did not run leaves the other source's result; every result is
 * copied back and checked whole (small integers: exact).
 * Usage: akx_two_threads_probe [CALLS] [--sim]. --sim runs the same on two sim contexts
 * (whose kernels hold the same attribute per kernel), to check the probe without a GPU.
 * Skipped (77) without a CUDA device (unless --sim). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"

enum { TILES = 5, BLOCK = 256 };

typedef struct {
  int index, items, calls;
  akx_backend backend;
  pthread_barrier_t *start;
  int failures;
  char sentence[512];
} worker;

static double source_value(int which, int64_t i) {
  return which ? (double)(i % 5) : (double)((i * 3) % 7);
}

static void *run(void *arg) {
  worker *w = arg;
  akx_context *ctx = NULL;
  akx_status s = akx_context_create(&ctx, w->backend, 0);
  if (s != AKX_SUCCESS) {
    snprintf(w->sentence, sizeof w->sentence, "akx_context_create: %s: %s", akx_status_string(s),
             akx_last_error());
    w->failures = 1;
    pthread_barrier_wait(w->start);
    return NULL;
  }
  /* A few tiles and a partial one: the look-back between tiles runs too. */
  const int64_t n = (int64_t)TILES * BLOCK * w->items - 77;
  double *host = malloc((size_t)n * sizeof(double)), *expect[2], *got = malloc((size_t)n * sizeof(double));
  void *src[2], *dst = NULL;
  for (int k = 0; k < 2; k++) {
    expect[k] = malloc((size_t)n * sizeof(double));
    double run_sum = 0;
    for (int64_t i = 0; i < n; i++) {
      host[i] = source_value(k, i);
      run_sum += host[i];
      expect[k][i] = run_sum;
    }
    PROBE_AKX(akx_malloc(ctx, &src[k], (size_t)n * sizeof(double)));
    PROBE_AKX(akx_memcpy(ctx, src[k], host, (size_t)n * sizeof(double), AKX_COPY_HOST_TO_DEVICE));
  }
  PROBE_AKX(akx_malloc(ctx, &dst, (size_t)n * sizeof(double)));
  akx_scan_opts o = akx_scan_opts_default();
  o.block_size = BLOCK;
  o.items_per_thread = w->items;
  const akx_array d = akx_vector(dst, AKX_FLOAT64, n);
  pthread_barrier_wait(w->start);
  for (int call = 0; call < w->calls && !w->failures; call++) {
    const int k = call & 1;
    const akx_array v = akx_vector(src[k], AKX_FLOAT64, n);
    s = akx_scan(ctx, &d, &v, AKX_OP_ADD, 0, &o);
    if (s == AKX_SUCCESS)
      s = akx_memcpy(ctx, got, dst, (size_t)n * sizeof(double), AKX_COPY_DEVICE_TO_HOST);
    if (s != AKX_SUCCESS) {
      snprintf(w->sentence, sizeof w->sentence, "call %d: %s: %s", call, akx_status_string(s),
               akx_last_error());
      w->failures++;
      break;
    }
    for (int64_t i = 0; i < n; i++)
      if (got[i] != expect[k][i]) {
        snprintf(w->sentence, sizeof w->sentence,
                 "call %d: element %lld is %.17g, expected %.17g", call, (long long)i, got[i],
                 expect[k][i]);
        w->failures++;
        break;
      }
  }
  for (int k = 0; k < 2; k++) {
    PROBE_AKX(akx_free(ctx, src[k]));
    free(expect[k]);
  }
  PROBE_AKX(akx_free(ctx, dst));
  free(host);
  free(got);
  akx_context_destroy(ctx);
  return NULL;
}

int main(int argc, char **argv) {
  int calls = 10000, sim = 0;
  for (int a = 1; a < argc; a++) {
    if (strcmp(argv[a], "--sim") == 0)
      sim = 1;
    else if ((calls = atoi(argv[a])) < 1) {
      fprintf(stderr, "usage: akx_two_threads_probe [CALLS >= 1] [--sim]\n");
      return 2;
    }
  }
  if (!sim) probe_need_device("two_threads_probe");
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, 2);
  worker w[2] = {{0, 32, calls, sim ? AKX_BACKEND_SIM : AKX_BACKEND_CUDA, &start, 0, ""},
                 {1, 27, calls, sim ? AKX_BACKEND_SIM : AKX_BACKEND_CUDA, &start, 0, ""}};
  pthread_t t[2];
  const double t0 = probe_now_us();
  for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, run, &w[i]);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  const double seconds = (probe_now_us() - t0) * 1e-6;
  pthread_barrier_destroy(&start);
  int failures = 0;
  for (int i = 0; i < 2; i++) {
    printf("  thread %d: float64 scans of %d x %d items (%d KiB of runs a tile), %d calls: %s%s\n",
           i, BLOCK, w[i].items, BLOCK * w[i].items * 8 / 1024, calls,
           w[i].failures ? "FAILED: " : "every value exact", w[i].sentence);
    failures += w[i].failures;
  }
  printf("two_threads_probe (%s): %.1f s: %s\n", sim ? "sim" : "cuda", seconds,
         failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
}
