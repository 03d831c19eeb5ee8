/* The scan case of akx-bench whose operator has no neutral element (Julia's Optional
 * partials): it goes through the C++ templates of include/akx.cuh over a user functor, so it
 * lives in bench_no_neutral.cpp, callable from C. */
#ifndef AKX_BENCH_NO_NEUTRAL_H
#define AKX_BENCH_NO_NEUTRAL_H
#include <stdint.h>
#include "akx.h"
#ifdef __cplusplus
extern "C" {
#endif

/* Inclusive scan of float32 with an addition given as a functor without a neutral element:
 * of the whole vector (dim < 0), or along dim 0 (Julia dims=1) of a column-major
 * rows x cols matrix. dst and src: device memory of rows * cols floats. Enqueued on the
 * context's stream. On failure the status, with akx_last_error()-like text in
 * akx_bench_no_neutral_error() (AKX_ERROR_UNSUPPORTED for a CUDA context when akx-bench was
 * built without its CUDA timing: AKX_GPU_TARGETS, CMakeLists.txt). */
akx_status akx_bench_no_neutral_scan(akx_context *ctx, float *dst, const float *src, int64_t rows,
                                     int64_t cols, int32_t dim);
/* The sentence of the last failure of akx_bench_no_neutral_scan (akx_last_error() when the
 * library refused the call). */
const char *akx_bench_no_neutral_error(void);

#ifdef __cplusplus
}
#endif
#endif
