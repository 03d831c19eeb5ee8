// include/akx.cuh from an installed tree, compiled by the host compiler for the sim and linked
// to libakx.a (tests/test_install.sh, step 4): the kernel headers it includes (kernels/akx/)
// must all be installed and need nothing from the source tree. A user functor (a max that
// keeps the earlier operand on ties) scans and reduces 1000 int32 values.
#include <stdio.h>
#include "akx.cuh"

struct max_i32 {
  AKX_HD int32_t operator()(int32_t a, int32_t b) const { return b > a ? b : a; }
};

int main() {
  akx_context *ctx = nullptr;
  if (akx_context_create(&ctx, AKX_BACKEND_SIM, 0) != AKX_SUCCESS) return 1;
  const int64_t n = 1000;
  int32_t host[1000], scanned[1000];
  for (int64_t i = 0; i < n; ++i) host[i] = (int32_t)((i * 7919) % 1009) - 500;
  void *src = nullptr, *dst = nullptr;
  if (akx_malloc(ctx, &src, sizeof host) || akx_malloc(ctx, &dst, sizeof host)) return 2;
  if (akx_memcpy(ctx, src, host, sizeof host, AKX_COPY_HOST_TO_DEVICE)) return 3;
  int32_t best = 0;
  if (akx::scan_inclusive(ctx, (int32_t *)dst, (const int32_t *)src, n, max_i32{}) ||
      akx::reduce(ctx, (const int32_t *)src, n, &best, max_i32{})) {
    printf("akx.cuh failed: %s\n", akx_last_error());
    return 4;
  }
  if (akx_memcpy(ctx, scanned, dst, sizeof scanned, AKX_COPY_DEVICE_TO_HOST)) return 5;
  int32_t running = host[0];
  for (int64_t i = 0; i < n; ++i) {
    running = host[i] > running ? host[i] : running;
    if (scanned[i] != running) return 6;
  }
  printf("akx.cuh: max %d, scan of %lld ok\n", (int)best, (long long)n);
  akx_free(ctx, src);
  akx_free(ctx, dst);
  akx_context_destroy(ctx);
  return best == running ? 0 : 7;
}
