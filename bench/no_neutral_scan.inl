// The body of the no-neutral-element scan, compiled once per backend (bench_no_neutral.cpp:
// the sim, by the host compiler; bench_no_neutral_cuda.cu: CUDA, by nvcc) under the name
// AKX_NN_ENTRY.
#include "akx.cuh"

namespace {
// a + b given without identity(): the kernels carry Optional<float> partials (8 bytes).
struct no_neutral_add {
  AKX_HD float operator()(float a, float b) const { return a + b; }
};
}  // namespace

extern "C" akx_status AKX_NN_ENTRY(akx_context *ctx, float *dst, const float *src, int64_t rows,
                                   int64_t cols, int32_t dim) {
  // Whole vector; or dims=1 of a column-major rows x cols matrix: cols slices of rows floats.
  if (dim < 0) return akx::scan_inclusive(ctx, dst, src, rows * cols, no_neutral_add{});
  return akx::scan_inclusive_slices(ctx, dst, src, rows, cols, no_neutral_add{});
}
