// The no-neutral-element scan of akx-bench, through include/akx.cuh (C++ templates over a user
// functor). Compiled by the host compiler for the sim and by nvcc (as CUDA) for a CUDA build.
#include "bench_no_neutral.h"

#include <cstdio>

namespace {
char last_error[512];
}

// TODO(akx.cuh): include/akx.cuh (akx::scan_inclusive<Functor>) is being written; until it is in
// the tree this case reports "n/a (unsupported: ...)". When it lands, call it here with
// no_neutral_add (a + b, given to the templates without an identity, so the kernels carry
// Optional partials: a value and a has-value flag).
#if __has_include("akx.cuh") && defined(AKX_BENCH_HAVE_AKX_CUH)
#include "akx.cuh"
#endif

extern "C" akx_status akx_bench_no_neutral_scan(akx_context *ctx, float *dst, const float *src,
                                                int64_t rows, int64_t cols, int32_t dim) {
  (void)ctx, (void)dst, (void)src, (void)rows, (void)cols, (void)dim;
  snprintf(last_error, sizeof last_error,
           "include/akx.cuh (akx::scan_inclusive over a functor without a neutral element) is not "
           "in this tree yet");
  return AKX_ERROR_UNSUPPORTED;
}

extern "C" const char *akx_bench_no_neutral_error(void) { return last_error; }
