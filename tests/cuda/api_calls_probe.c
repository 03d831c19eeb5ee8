/* The host work of one libakx call at small sizes (bench/gpu_check.sh, stage api-calls): per
 * family and size (2^10, 2^16 float32 elements), the CUDA runtime and driver API calls libakx
 * makes in one warm call (akx__cuda_api_calls, src/cuda/api_calls.h: the calling thread's
 * count) and the mean host time per call over CALLS calls in a row (steady clock; the
 * asynchronous families are issued back to back, then one akx_synchronize; those that return a
 * host result synchronize in each call). The families:
 *   mapreduce_device   akx_mapreduce ADD into device memory
 *   mapreduce_host     akx_mapreduce ADD to the host (synchronizes)
 *   reduce_dims        akx_reduce_dims of a 32 x n/32 matrix's rows
 *   scan               akx_scan ADD, inclusive
 *   findall            akx_findall (synchronizes: the count)
 * One line per case: family, n, api_calls, host_us_per_call, us_per_call_with_sync (the time
 * until the last call's result is there, over CALLS). The values are read back and checked
 * once (a call that did nothing would be fast). Usage: akx_api_calls_probe [CALLS] [--sim]
 * (default 1000; --sim: the same calls on the sim, to check the probe without a GPU: its API
 * call counts are 0 and its times are the sim's). Skipped (77) without a CUDA device. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"
#include "cuda/api_calls.h"

typedef enum { MAPREDUCE_DEVICE, MAPREDUCE_HOST, REDUCE_DIMS, SCAN, FINDALL, FAMILIES } family;
static const char *const family_name[] = {"mapreduce_device", "mapreduce_host", "reduce_dims",
                                          "scan", "findall"};
enum { ROWS = 32 };

typedef struct {
  float *x, *out, *rows, *result;
  int64_t *idx;
  int64_t n;
} buffers;

static akx_status call(akx_context *ctx, family f, const buffers *b) {
  const akx_array x = akx_vector(b->x, AKX_FLOAT32, b->n);
  switch (f) {
    case MAPREDUCE_DEVICE:
      return akx_mapreduce(ctx, &x, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, b->result, AKX_DEVICE);
    case MAPREDUCE_HOST: {
      float sum;
      return akx_mapreduce(ctx, &x, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &sum, AKX_HOST);
    }
    case REDUCE_DIMS: {
      const int64_t ms[2] = {ROWS, b->n / ROWS}, rs[2] = {ROWS, 1};
      const akx_array m = akx_array_c(b->x, AKX_FLOAT32, 2, ms);
      const akx_array r = akx_array_c(b->rows, AKX_FLOAT32, 2, rs);
      return akx_reduce_dims(ctx, &r, &m, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL);
    }
    case SCAN: {
      const akx_array o = akx_vector(b->out, AKX_FLOAT32, b->n);
      return akx_scan(ctx, &o, &x, AKX_OP_ADD, 0, NULL);
    }
    case FINDALL: {
      const akx_array i = akx_vector(b->idx, AKX_INT64, b->n);
      int64_t count;
      return akx_findall(ctx, &x, &i, &count);
    }
    default:
      return AKX_ERROR_INTERNAL;
  }
}

/* The results of the last call of family f, against the exact ones: 1 when right. */
static int right(akx_context *ctx, family f, const buffers *b, const float *host) {
  double total = 0;
  int64_t nonzero = 0;
  for (int64_t i = 0; i < b->n; i++) {
    total += host[i];
    nonzero += host[i] != 0;
  }
  if (f == MAPREDUCE_DEVICE) {
    float got;
    PROBE_AKX(akx_memcpy(ctx, &got, b->result, sizeof got, AKX_COPY_DEVICE_TO_HOST));
    return got == (float)total;
  }
  if (f == REDUCE_DIMS) {
    float rows[ROWS];
    PROBE_AKX(akx_memcpy(ctx, rows, b->rows, sizeof rows, AKX_COPY_DEVICE_TO_HOST));
    double all = 0;
    for (int r = 0; r < ROWS; r++) all += rows[r];
    return all == total;
  }
  if (f == SCAN) {
    float last;
    PROBE_AKX(akx_memcpy(ctx, &last, b->out + b->n - 1, sizeof last, AKX_COPY_DEVICE_TO_HOST));
    return last == (float)total;
  }
  if (f == FINDALL) {
    const akx_array x = akx_vector(b->x, AKX_FLOAT32, b->n);
    const akx_array i = akx_vector(b->idx, AKX_INT64, b->n);
    int64_t count = -1;
    PROBE_AKX(akx_findall(ctx, &x, &i, &count));
    return count == nonzero;
  }
  float sum = 0;
  const akx_array x = akx_vector(b->x, AKX_FLOAT32, b->n);
  PROBE_AKX(akx_mapreduce(ctx, &x, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &sum, AKX_HOST));
  return sum == (float)total;
}

int main(int argc, char **argv) {
  int calls = 1000, sim = 0;
  for (int a = 1; a < argc; a++) {
    if (strcmp(argv[a], "--sim") == 0)
      sim = 1;
    else if ((calls = atoi(argv[a])) < 1) {
      fprintf(stderr, "usage: akx_api_calls_probe [CALLS >= 1] [--sim]\n");
      return 2;
    }
  }
  if (!sim) probe_need_device("api_calls_probe");
  akx_context *ctx = NULL;
  PROBE_AKX(akx_context_create(&ctx, sim ? AKX_BACKEND_SIM : AKX_BACKEND_CUDA, 0));
  const akx_context_info_t info = probe_info(ctx);
  printf("api_calls_probe: %s, %d calls per case\n", info.device_name, calls);
  printf("%-17s %8s %10s %17s %22s\n", "family", "n", "api_calls", "host_us_per_call",
         "us_per_call_with_sync");
  int failures = 0;
  const int64_t sizes[] = {1 << 10, 1 << 16};
  for (int si = 0; si < 2; si++) {
    buffers b;
    b.n = sizes[si];
    float *host = malloc((size_t)b.n * sizeof(float));
    if (!host) return 1;
    for (int64_t i = 0; i < b.n; i++) host[i] = (float)(i % 4);
    PROBE_AKX(akx_malloc(ctx, (void **)&b.x, (size_t)b.n * sizeof(float)));
    PROBE_AKX(akx_malloc(ctx, (void **)&b.out, (size_t)b.n * sizeof(float)));
    PROBE_AKX(akx_malloc(ctx, (void **)&b.rows, ROWS * sizeof(float)));
    PROBE_AKX(akx_malloc(ctx, (void **)&b.result, sizeof(float)));
    PROBE_AKX(akx_malloc(ctx, (void **)&b.idx, (size_t)b.n * sizeof(int64_t)));
    PROBE_AKX(akx_memcpy(ctx, b.x, host, (size_t)b.n * sizeof(float), AKX_COPY_HOST_TO_DEVICE));
    for (family f = 0; f < FAMILIES; f++) {
      PROBE_AKX(call(ctx, f, &b)); /* warm: kernels loaded, workspace grown */
      PROBE_AKX(akx_synchronize(ctx));
      const uint64_t before = akx__cuda_api_calls();
      PROBE_AKX(call(ctx, f, &b));
      const uint64_t api = akx__cuda_api_calls() - before;
      PROBE_AKX(akx_synchronize(ctx));
      const double t0 = probe_now_us();
      for (int c = 0; c < calls; c++) PROBE_AKX(call(ctx, f, &b));
      const double t1 = probe_now_us();
      PROBE_AKX(akx_synchronize(ctx));
      const double t2 = probe_now_us();
      const int ok = right(ctx, f, &b, host);
      printf("%-17s %8lld %10llu %17.2f %22.2f%s\n", family_name[f], (long long)b.n,
             (unsigned long long)api, (t1 - t0) / calls, (t2 - t0) / calls,
             ok ? "" : "   FAILED: wrong result");
      failures += !ok;
    }
    PROBE_AKX(akx_free(ctx, b.x));
    PROBE_AKX(akx_free(ctx, b.out));
    PROBE_AKX(akx_free(ctx, b.rows));
    PROBE_AKX(akx_free(ctx, b.result));
    PROBE_AKX(akx_free(ctx, b.idx));
    free(host);
  }
  akx_context_destroy(ctx);
  printf("api_calls_probe: %s\n", failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
}
