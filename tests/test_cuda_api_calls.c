/* The host work of a warm call on the CUDA backend, counted in CUDA API calls
 * (akx__cuda_api_calls, src/cuda/api_calls.h: the calling thread's count of the runtime and
 * driver calls libakx makes). The small-size goal is one launch per call: a warm whole-array
 * mapreduce into device memory, or a warm scan, at 2^16 elements makes the launch and a few
 * calls around it, never a cudaFuncGetAttributes per launch or two cudaPointerGetAttributes per
 * array. At least one (the launch itself is counted) and at most MAX_API_CALLS_PER_CALL.
 * Skipped without a CUDA device, and in a build without the CUDA backend. The times per call
 * are bench/gpu_check.sh's (stage api-calls, tests/cuda/api_calls_probe.c). */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>

#include "akx.h"

/* A warm call, as src/cuda/backend_cuda.cu counts it: one cuPointerGetAttributes per array
 * (src and dst or the result: 2), the workspace's capture test (cudaGetDevice and
 * cudaStreamIsCapturing: 2), the launch's device scope and capture test (PDL is not captured:
 * 2) and the launch (1); cudaFuncGetAttributes and cudaFuncSetAttribute only at a kernel's
 * first launch, and no cudaGetLastError around a launch that succeeded. */
#define MAX_API_CALLS_PER_CALL 7

#if defined(AKX_TEST_HAVE_CUDA)
#include <cuda_runtime_api.h>

#include "cuda/api_calls.h"

#define N (1 << 16)

static akx_context *open_cuda(void) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count < 1)
    cr_skip_test("needs a CUDA device (found none)");
  akx_context *ctx = NULL;
  cr_assert_eq(akx_context_create(&ctx, AKX_BACKEND_CUDA, 0), AKX_SUCCESS, "%s", akx_last_error());
  return ctx;
}

/* N float32 values i % 4 on the device; their sum is exact in float32. */
static float *upload(akx_context *ctx) {
  float *host = malloc(N * sizeof(float)), *dev = NULL;
  cr_assert(host != NULL);
  for (int i = 0; i < N; i++) host[i] = (float)(i % 4);
  cr_assert_eq(akx_malloc(ctx, (void **)&dev, N * sizeof(float)), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(akx_memcpy(ctx, dev, host, N * sizeof(float), AKX_COPY_HOST_TO_DEVICE), AKX_SUCCESS,
               "%s", akx_last_error());
  free(host);
  return dev;
}

static const double exact_sum = (double)N / 4 * (0 + 1 + 2 + 3);

Test(cuda_api_calls, a_warm_mapreduce_into_device_memory_makes_few_api_calls) {
  akx_context *ctx = open_cuda();
  float *x = upload(ctx), *result = NULL;
  cr_assert_eq(akx_malloc(ctx, (void **)&result, sizeof(float)), AKX_SUCCESS, "%s", akx_last_error());
  const akx_array v = akx_vector(x, AKX_FLOAT32, N);
  cr_assert_eq(akx_mapreduce(ctx, &v, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, result, AKX_DEVICE),
               AKX_SUCCESS, "warm-up: %s", akx_last_error());
  cr_assert_eq(akx_synchronize(ctx), AKX_SUCCESS, "%s", akx_last_error());
  const float poison = -1.0f;
  cr_assert_eq(akx_memcpy(ctx, result, &poison, sizeof poison, AKX_COPY_HOST_TO_DEVICE), AKX_SUCCESS);

  const uint64_t before = akx__cuda_api_calls();
  cr_assert_eq(akx_mapreduce(ctx, &v, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, result, AKX_DEVICE),
               AKX_SUCCESS, "%s", akx_last_error());
  const uint64_t calls = akx__cuda_api_calls() - before;

  float sum = 0;
  cr_assert_eq(akx_memcpy(ctx, &sum, result, sizeof sum, AKX_COPY_DEVICE_TO_HOST), AKX_SUCCESS);
  cr_expect_eq((double)sum, exact_sum, "the sum: %g, expected %g", (double)sum, exact_sum);
  cr_expect(calls >= 1, "no CUDA API call counted for a call that launched: the counter counts nothing");
  cr_expect(calls <= MAX_API_CALLS_PER_CALL,
            "a warm akx_mapreduce of 2^16 float32 into device memory made %llu CUDA API calls "
            "(at most %d)", (unsigned long long)calls, MAX_API_CALLS_PER_CALL);
  akx_free(ctx, x);
  akx_free(ctx, result);
  akx_context_destroy(ctx);
}

Test(cuda_api_calls, a_warm_scan_makes_few_api_calls) {
  akx_context *ctx = open_cuda();
  float *x = upload(ctx), *out = NULL;
  cr_assert_eq(akx_malloc(ctx, (void **)&out, N * sizeof(float)), AKX_SUCCESS, "%s", akx_last_error());
  const akx_array v = akx_vector(x, AKX_FLOAT32, N), o = akx_vector(out, AKX_FLOAT32, N);
  cr_assert_eq(akx_scan(ctx, &o, &v, AKX_OP_ADD, 0, NULL), AKX_SUCCESS, "warm-up: %s",
               akx_last_error());
  cr_assert_eq(akx_synchronize(ctx), AKX_SUCCESS, "%s", akx_last_error());
  const float poison = -1.0f;
  cr_assert_eq(akx_memcpy(ctx, out + N - 1, &poison, sizeof poison, AKX_COPY_HOST_TO_DEVICE),
               AKX_SUCCESS);

  const uint64_t before = akx__cuda_api_calls();
  cr_assert_eq(akx_scan(ctx, &o, &v, AKX_OP_ADD, 0, NULL), AKX_SUCCESS, "%s", akx_last_error());
  const uint64_t calls = akx__cuda_api_calls() - before;

  float last = 0;
  cr_assert_eq(akx_memcpy(ctx, &last, out + N - 1, sizeof last, AKX_COPY_DEVICE_TO_HOST), AKX_SUCCESS);
  cr_expect_eq((double)last, exact_sum, "the scan's last element: %g, expected %g", (double)last,
               exact_sum);
  cr_expect(calls >= 1, "no CUDA API call counted for a call that launched: the counter counts nothing");
  cr_expect(calls <= MAX_API_CALLS_PER_CALL,
            "a warm akx_scan of 2^16 float32 made %llu CUDA API calls (at most %d)",
            (unsigned long long)calls, MAX_API_CALLS_PER_CALL);
  akx_free(ctx, x);
  akx_free(ctx, out);
  akx_context_destroy(ctx);
}
#else
Test(cuda_api_calls, a_warm_mapreduce_into_device_memory_makes_few_api_calls) {
  cr_skip_test("built without the CUDA backend");
}
Test(cuda_api_calls, a_warm_scan_makes_few_api_calls) { cr_skip_test("built without the CUDA backend"); }
#endif
