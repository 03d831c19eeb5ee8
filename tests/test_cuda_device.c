/* The caller's current CUDA device (cudaSetDevice, per host thread) is the caller's: a call on
 * a context of another device makes that device current only for its own duration
 * (src/cuda/backend_cuda.cu, device_scope). Needs two CUDA devices; skipped with fewer, and
 * in a build without the CUDA backend. */
#include <criterion/criterion.h>
#include <stdint.h>

#include "akx.h"

#if defined(AKX_TEST_HAVE_CUDA)
#include <cuda_runtime_api.h>

static int current_device(void) {
  int d = -1;
  cr_assert_eq(cudaGetDevice(&d), cudaSuccess);
  return d;
}

Test(cuda_device, calls_leave_the_callers_device_current) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count < 2)
    cr_skip_test("needs two CUDA devices (found %d)", count);
  for (int mine = 0; mine < 2; mine++) {
    const int other = 1 - mine;
    cr_assert_eq(cudaSetDevice(mine), cudaSuccess);
    akx_context *ctx = NULL;
    cr_assert_eq(akx_context_create(&ctx, AKX_BACKEND_CUDA, other), AKX_SUCCESS, "%s",
                 akx_last_error());
    cr_expect_eq(current_device(), mine, "akx_context_create(device %d)", other);
    float host[1000], *dev = NULL;
    for (int i = 0; i < 1000; i++) host[i] = (float)(i % 5);
    cr_assert_eq(akx_malloc(ctx, (void **)&dev, sizeof host), AKX_SUCCESS, "%s", akx_last_error());
    cr_expect_eq(current_device(), mine, "akx_malloc");
    cr_assert_eq(akx_memcpy(ctx, dev, host, sizeof host, AKX_COPY_HOST_TO_DEVICE), AKX_SUCCESS);
    cr_expect_eq(current_device(), mine, "akx_memcpy");
    const akx_array v = akx_vector(dev, AKX_FLOAT32, 1000);
    float sum = 0;
    cr_assert_eq(akx_mapreduce(ctx, &v, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &sum, AKX_HOST),
                 AKX_SUCCESS, "%s", akx_last_error());
    cr_expect_eq(sum, 2.0f * 1000, "the sum on device %d", other);
    cr_expect_eq(current_device(), mine, "akx_mapreduce");
    cr_assert_eq(akx_scan(ctx, &v, &v, AKX_OP_ADD, 0, NULL), AKX_SUCCESS, "%s", akx_last_error());
    cr_expect_eq(current_device(), mine, "akx_scan");
    cr_assert_eq(akx_synchronize(ctx), AKX_SUCCESS);
    cr_expect_eq(current_device(), mine, "akx_synchronize");
    cr_assert_eq(akx_free(ctx, dev), AKX_SUCCESS);
    cr_expect_eq(current_device(), mine, "akx_free");
    akx_context_destroy(ctx);
    cr_expect_eq(current_device(), mine, "akx_context_destroy");
  }
}
#else
Test(cuda_device, calls_leave_the_callers_device_current) {
  cr_skip_test("built without the CUDA backend");
}
#endif
