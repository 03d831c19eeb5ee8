// The no-neutral-element scan of akx-bench, through include/akx.cuh (C++ templates over a
// user functor). This file holds the sim's instance (host compiler) and the dispatch by the
// context's backend; bench_no_neutral_cuda.cu holds the CUDA one (nvcc).
#include "bench_no_neutral.h"

#include <cstdio>

#define AKX_NN_ENTRY akx_bench_no_neutral_scan_sim
#include "no_neutral_scan.inl"

extern "C" akx_status akx_bench_no_neutral_scan_cuda(akx_context *ctx, float *dst, const float *src,
                                                     int64_t rows, int64_t cols, int32_t dim);

namespace {
char last_error[512];
}

extern "C" akx_status akx_bench_no_neutral_scan(akx_context *ctx, float *dst, const float *src,
                                                int64_t rows, int64_t cols, int32_t dim) {
  akx_status s;
  if (akx_context_backend(ctx) == AKX_BACKEND_SIM) {
    s = akx_bench_no_neutral_scan_sim(ctx, dst, src, rows, cols, dim);
  } else {
#if defined(AKX_HAVE_CUDA)
    s = akx_bench_no_neutral_scan_cuda(ctx, dst, src, rows, cols, dim);
#else
    snprintf(last_error, sizeof last_error, "akx-bench was built without its CUDA timing");
    return AKX_ERROR_UNSUPPORTED;
#endif
  }
  if (s != AKX_SUCCESS) snprintf(last_error, sizeof last_error, "%s", akx_last_error());
  return s;
}

extern "C" const char *akx_bench_no_neutral_error(void) { return last_error; }
