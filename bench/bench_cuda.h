/* The CUDA half of akx-bench (bench_cuda.cu), callable from C: akx-bench's C code never
 * includes a CUDA header. Built only with the CUDA backend (AKX_HAVE_CUDA). */
#ifndef AKX_BENCH_CUDA_H
#define AKX_BENCH_CUDA_H
#include <stddef.h>
#include <stdint.h>
#include "akx.h"
#ifdef __cplusplus
extern "C" {
#endif

/* Medians, in microseconds, of one sum of n elements each way. */
typedef struct {
  double akx_us;    /* akx_mapreduce, ADD, result in device memory */
  double cub_us;    /* cub::DeviceReduce::Sum, temp storage allocated beforehand */
  double memcpy_us; /* cudaMemcpyAsync device to device of the same n elements */
} akx_bench_cuda_times;

/* The akx call under test: enqueues the sum of the input on the context's stream. */
typedef akx_status (*akx_bench_enqueue_fn)(akx_context *ctx, const void *arg);

/* Times the three on one stream of the context's device with CUDA events: `warmup` untimed
 * rounds, then `runs` rounds, each running the three one after the other (interleaved, so
 * clock and thermal drift hit them alike) and timing each between its own pair of events.
 * akx_sum(ctx, arg) is the akx call; d_in: its n elements of dtype (float32 or float64) in
 * device memory, for the baselines. The context's stream is NULL again on return. Returns 0,
 * or -1 with a sentence in err. */
int akx_bench_cuda_reduce(akx_context *ctx, akx_bench_enqueue_fn akx_sum, const void *arg,
                          const void *d_in, akx_dtype dtype, int64_t n, int warmup, int runs,
                          akx_bench_cuda_times *times, char *err, size_t err_size);

#ifdef __cplusplus
}
#endif
#endif
