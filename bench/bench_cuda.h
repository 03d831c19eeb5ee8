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

/* One akx call under test: enqueues its work on the context's stream (a call that
 * synchronizes, such as akx_mapreduce to the host, is timed with its synchronization). */
typedef akx_status (*akx_bench_enqueue_fn)(akx_context *ctx, void *arg);

/* The CUB call a case is compared with: what a CUDA C++ programmer would write. */
typedef enum {
  AKX_PEER_NONE,
  AKX_PEER_SCAN_SUM,          /* cub::DeviceScan::InclusiveSum over n elements */
  AKX_PEER_SCAN_OP,           /* cub::DeviceScan::InclusiveScan, float32, an operator CUB is
                                 given no neutral element for (no_neutral_add, bench_cuda.cu) */
  AKX_PEER_SCAN_SUM_BY_KEY,   /* cub::DeviceScan::InclusiveSumByKey, key = index / segment_length:
                                 scans of contiguous columns (Julia dims=1) */
  AKX_PEER_SCAN_OP_BY_KEY,    /* cub::DeviceScan::InclusiveScanByKey with the operator above */
  AKX_PEER_REDUCE_SUM_TO_HOST,/* cub::DeviceReduce::Sum, then the result copied to the host */
  AKX_PEER_SEGMENTED_SUM,     /* cub::DeviceSegmentedReduce::Reduce (add, float32 result) over
                                 `segments` contiguous segments of segment_length elements */
  AKX_PEER_SELECT_FLAGGED,    /* cub::DeviceSelect::Flagged: the indices (int64) of the nonzero
                                 bytes of src, and their count */
  AKX_PEER_SELECT_FLAGGED_VALUES, /* cub::DeviceSelect::Flagged: src's items (int8, int32,
                                 float64) where the bool flags are set, and their count */
  AKX_PEER_PARTITION_FLAGGED  /* cub::DevicePartition::Flagged: the same, then the others
                                 reversed from the end */
} akx_bench_peer;

typedef struct {
  akx_bench_peer peer;
  akx_dtype dtype;           /* src's element type (float32, float64, int32, bfloat16, bool) */
  const void *src;           /* device memory, n elements, contiguous */
  const void *flags;         /* the select suite: n bool flags, device memory */
  int64_t n;
  int64_t segments, segment_length; /* by-key scans and segmented reductions */
  size_t copy_bytes;         /* the copy variant: cudaMemcpyAsync device to device of this many
                                bytes (half the case's minimum traffic: read + write the same) */
} akx_bench_cuda_case;

typedef struct {
  int ran;                   /* 0: not timed (the variant is absent or unsupported) */
  double median_us, min_us;
} akx_bench_timing;

typedef struct {
  akx_bench_timing akx[2], cub, copy;
  size_t l2_bytes;           /* the device's L2, flushed before every timed run */
} akx_bench_cuda_result;

/* Times up to two akx variants (akx[i] NULL: skipped), the case's CUB peer and the copy on
 * one stream of the context's device with CUDA events: `warmup` untimed rounds, then `runs`
 * rounds; a round runs every variant once (interleaved, so clock and thermal drift hit them
 * alike), each after a write of a buffer twice the size of L2 (so no input is served from L2)
 * and between its own pair of events. The context's stream is NULL again on return.
 * Returns 0, or -1 with a sentence in err. */
int akx_bench_cuda_time(akx_context *ctx, akx_bench_enqueue_fn const akx[2], void *arg,
                        const akx_bench_cuda_case *c, int warmup, int runs,
                        akx_bench_cuda_result *r, char *err, size_t err_size);

/* The registers per thread of the library's kernels that akx-bench can see (ptxas, by
 * cudaFuncGetAttributes) beside what their kernel_info declares to the sim; on stderr. */
void akx_bench_cuda_print_registers(void);

#ifdef __cplusplus
}
#endif
#endif
