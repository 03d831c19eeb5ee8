/* One call of each family through the public API, its values checked against a host
 * reference: the calls that tests of launch counts and of the workspace (test_one_launch,
 * test_steady_state) run in sequences. Inputs are small integers in float32 (zeros among them),
 * so every sum and prefix is exact in any order and a check is exact. Each returns the call's
 * status; values are checked (a Criterion failure) only when it succeeded. */
#ifndef AKX_TEST_CHECKED_CALLS_H
#define AKX_TEST_CHECKED_CALLS_H
#include <stdint.h>
#include "akx.h"

/* n small integers in float32 from seed (a host buffer to free()). */
float *cc_small_floats(int64_t n, uint64_t seed);

/* A float32 sum scan of rows x cols (C order) along dim 0 or 1. */
akx_status cc_scan(akx_context *ctx, int64_t rows, int64_t cols, int32_t dim, uint64_t seed);
/* A whole float32 scan of n elements (one row). */
akx_status cc_scan_vector(akx_context *ctx, int64_t n, uint64_t seed);
/* akx_findall of n float32 elements, about `percent` in 100 nonzero (the others 0). */
akx_status cc_findall(akx_context *ctx, int64_t n, int percent, uint64_t seed);
/* akx_mapreduce: the float32 sum of n elements (every `stride`-th of a parent) to `where`. */
akx_status cc_sum(akx_context *ctx, int64_t n, int64_t stride, akx_where where, uint64_t seed);
/* akx_reduce_dims of rows x cols: dim 0 (dst 1 x cols) or dim 1 (dst rows x 1). */
akx_status cc_sums_along(akx_context *ctx, int64_t rows, int64_t cols, int32_t dim, uint64_t seed);

#endif
