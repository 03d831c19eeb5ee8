// The README's C example on the legacy default stream (bench/gpu_check.sh, stage legacy-stream):
// a context left on stream NULL (never akx_context_set_stream), and the caller's own kernels on
// stream 0 between libakx's calls, which the legacy stream must order with them:
//   akx_malloc, akx_memcpy of the README's values ((i % 7) - 3, N = 10^6);
//   a user kernel on stream 0 that scales x by k (no synchronization after it);
//   akx_mapreduce ADD to the host: the scaled sum, -3k (the kernel ran first);
//   akx_reduce_dims into a one-element device array (asynchronous), then a user kernel on
//   stream 0 that copies it, times 10, elsewhere; akx_memcpy of the first and cudaMemcpy of the
//   second: -3k and -30k (the user kernel ran after the reduction);
//   the NONZERO count (int64, as akx_mapreduce_result_dtype says): 857143;
//   XOR of float32 refused, AKX_ERROR_UNSUPPORTED, with a sentence.
// The first round is the README's, k = 1; the next rounds use k = 2, 3, ... set by the kernel
// alone. Usage: akx_legacy_stream_probe [ROUNDS] (default 20). Skipped (77) without a device.
#include <cuda_runtime.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "probe.h"

namespace {

constexpr int kN = 1000000;

__global__ void scale_from_pattern(float *x, int n, float k) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    x[i] = ((float)(i % 7) - 3.0f) * k;
}

__global__ void copy_times_ten(const float *from, float *to) { *to = *from * 10.0f; }

int failures = 0;
void check(bool ok, const char *what, double got, double want) {
  if (!ok) {
    printf("  FAILED: %s: %.9g, expected %.9g\n", what, got, want);
    ++failures;
  }
}

}  // namespace

int main(int argc, char **argv) {
  const int rounds = argc > 1 ? atoi(argv[1]) : 20;
  probe_need_device("legacy_stream_probe");
  std::vector<float> host(kN);
  for (int i = 0; i < kN; ++i) host[size_t(i)] = (float)(i % 7) - 3.0f;

  akx_context *ctx;
  PROBE_AKX(akx_context_create(&ctx, AKX_BACKEND_CUDA, 0));
  float *x, *total, *copied;
  PROBE_AKX(akx_malloc(ctx, (void **)&x, kN * sizeof(float)));
  PROBE_AKX(akx_malloc(ctx, (void **)&total, sizeof(float)));
  PROBE_AKX(akx_malloc(ctx, (void **)&copied, sizeof(float)));
  PROBE_AKX(akx_memcpy(ctx, x, host.data(), kN * sizeof(float), AKX_COPY_HOST_TO_DEVICE));
  const akx_array xs = akx_vector(x, AKX_FLOAT32, kN);
  const int64_t one = 1;
  const akx_array r = akx_array_c(total, AKX_FLOAT32, 1, &one);
  akx_dtype count_t;
  PROBE_AKX(akx_mapreduce_result_dtype(&xs, AKX_MAP_NONZERO, AKX_OP_ADD, NULL, &count_t));
  check(count_t == AKX_INT64, "the NONZERO count's dtype", count_t, AKX_INT64);

  for (int k = 1; k <= rounds; ++k) {
    // Round 1 is the README's values as copied; the kernel rewrites them scaled by k (k = 1:
    // the same values, written by the kernel after the copy).
    scale_from_pattern<<<256, 256, 0, 0>>>(x, kN, (float)k);
    PROBE_CUDA(cudaGetLastError());
    float sum = 0;
    PROBE_AKX(akx_mapreduce(ctx, &xs, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &sum, AKX_HOST));
    check(sum == -3.0f * (float)k, "sum = (akx_mapreduce to the host)", sum, -3.0 * k);

    const float poison = 12345.0f;
    PROBE_CUDA(cudaMemcpy(copied, &poison, sizeof poison, cudaMemcpyHostToDevice));
    PROBE_AKX(akx_reduce_dims(ctx, &r, &xs, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL));
    copy_times_ten<<<1, 1, 0, 0>>>(total, copied);
    PROBE_CUDA(cudaGetLastError());
    float sum_bang = 0, copied_host = 0;
    PROBE_AKX(akx_memcpy(ctx, &sum_bang, total, sizeof sum_bang, AKX_COPY_DEVICE_TO_HOST));
    PROBE_CUDA(cudaMemcpy(&copied_host, copied, sizeof copied_host, cudaMemcpyDeviceToHost));
    check(sum_bang == -3.0f * (float)k, "sum! = (akx_reduce_dims, akx_memcpy)", sum_bang, -3.0 * k);
    check(copied_host == -30.0f * (float)k, "a user kernel on stream 0 after akx_reduce_dims",
          copied_host, -30.0 * k);

    int64_t count = -1;
    PROBE_AKX(akx_mapreduce(ctx, &xs, AKX_MAP_NONZERO, AKX_OP_ADD, NULL, &count, AKX_HOST));
    check(count == 857143, "nonzero =", (double)count, 857143);

    const akx_status s = akx_mapreduce(ctx, &xs, AKX_MAP_IDENTITY, AKX_OP_XOR, NULL, &sum, AKX_HOST);
    check(s == AKX_ERROR_UNSUPPORTED && akx_last_error()[0] != '\0', "xor of float32 (status)",
          s, AKX_ERROR_UNSUPPORTED);
    if (k == 1) {
      printf("  round 1: sum = %g, sum! = %g, nonzero = %" PRId64 ", xor of float32: %s: %s\n",
             sum, sum_bang, count, akx_status_string(s), akx_last_error());
    }
    if (failures > 10) break;
  }
  PROBE_AKX(akx_free(ctx, x));
  PROBE_AKX(akx_free(ctx, total));
  PROBE_AKX(akx_free(ctx, copied));
  akx_context_destroy(ctx);
  printf("legacy_stream_probe: %d rounds on stream NULL: %s\n", rounds,
         failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
}
