// The CUDA half of akx-bench: each akx call beside its CUB peer (what a CUDA C++ programmer would
// call) and a device-to-device copy moving the same bytes (the bandwidth a streaming kernel can
// hope for), timed with CUDA events on one stream, L2 flushed before every timed run.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include <cub/device/device_partition.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include "bench_cuda.h"

// The library's kernel templates, for their registers: found when akx-bench has the source root
// on its include path (bench/CMakeLists.txt).
#if __has_include("kernels/akx/reduce_whole.cuh")
#include "akx/reduce_whole.cuh"
#define AKX_BENCH_KERNEL_HEADERS 1
#endif

namespace {

// The operator of the no-neutral-element scan case: an addition CUB is given without an
// identity (InclusiveScan needs none), the peer of akx.cuh's Optional-partials scan.
struct no_neutral_add {
  __host__ __device__ float operator()(float a, float b) const { return a + b; }
};
struct add_float {
  __host__ __device__ float operator()(float a, float b) const { return a + b; }
};
// Column index of element i of a column-major matrix with columns of `len` elements: the key
// of a scan by key along Julia dims=1.
struct column_of {
  int64_t len;
  __host__ __device__ int64_t operator()(int64_t i) const { return i / len; }
};
// float of a bfloat16 or float element, for the segmented reduction's float accumulator.
template <class T>
struct to_float {
  __host__ __device__ float operator()(T x) const { return static_cast<float>(x); }
};

// Everything one timing session holds, released in the destructor whatever path returns.
struct session {
  akx_context *ctx = nullptr;
  cudaStream_t stream = nullptr;
  void *peer_out = nullptr, *peer_temp = nullptr, *peer_count = nullptr, *copy_dst = nullptr;
  void *flush = nullptr, *host_out = nullptr;
  int64_t *offsets = nullptr;
  size_t peer_temp_bytes = 0, flush_bytes = 0;
  cudaEvent_t start = nullptr, stop = nullptr;

  ~session() {
    if (stream) {
      cudaStreamSynchronize(stream);
      if (ctx) akx_context_set_stream(ctx, nullptr);
    }
    cudaFree(peer_out);
    cudaFree(peer_temp);
    cudaFree(peer_count);
    cudaFree(copy_dst);
    cudaFree(flush);
    cudaFree(offsets);
    cudaFreeHost(host_out);
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
    if (stream) cudaStreamDestroy(stream);
  }
};

// The CUB call of a case on typed pointers; the size query (temp == nullptr) and the run take
// the same path, so they agree on the storage needed.
template <class T>
cudaError_t cub_scan(session &s, const akx_bench_cuda_case &c, void *temp, size_t &bytes) {
  const T *in = static_cast<const T *>(c.src);
  T *out = static_cast<T *>(s.peer_out);
  auto keys = thrust::make_transform_iterator(thrust::make_counting_iterator<int64_t>(0),
                                              column_of{c.segment_length});
  switch (c.peer) {
    case AKX_PEER_SCAN_SUM:
      return cub::DeviceScan::InclusiveSum(temp, bytes, in, out, c.n, s.stream);
    case AKX_PEER_SCAN_SUM_BY_KEY:
      return cub::DeviceScan::InclusiveSumByKey(temp, bytes, keys, in, out, c.n,
                                                cuda::std::equal_to<>(), s.stream);
    default:
      return cudaErrorInvalidValue;
  }
}

// The select suite's peers: CUB's flagged select and partition of the values themselves.
template <class T>
cudaError_t cub_select(session &s, const akx_bench_cuda_case &c, void *temp, size_t &bytes) {
  const T *in = static_cast<const T *>(c.src);
  const bool *flags = static_cast<const bool *>(c.flags);
  T *out = static_cast<T *>(s.peer_out);
  int64_t *count = static_cast<int64_t *>(s.peer_count);
  if (c.peer == AKX_PEER_PARTITION_FLAGGED)
    return cub::DevicePartition::Flagged(temp, bytes, in, flags, out, count, c.n, s.stream);
  return cub::DeviceSelect::Flagged(temp, bytes, in, flags, out, count, c.n, s.stream);
}

cudaError_t cub_call(session &s, const akx_bench_cuda_case &c, void *temp, size_t &bytes) {
  switch (c.peer) {
    case AKX_PEER_SELECT_FLAGGED_VALUES:
    case AKX_PEER_PARTITION_FLAGGED:
      if (c.dtype == AKX_INT8) return cub_select<int8_t>(s, c, temp, bytes);
      if (c.dtype == AKX_INT32) return cub_select<int32_t>(s, c, temp, bytes);
      if (c.dtype == AKX_FLOAT64) return cub_select<double>(s, c, temp, bytes);
      return cudaErrorInvalidValue;
    case AKX_PEER_SCAN_SUM:
    case AKX_PEER_SCAN_SUM_BY_KEY:
      if (c.dtype == AKX_FLOAT32) return cub_scan<float>(s, c, temp, bytes);
      if (c.dtype == AKX_FLOAT64) return cub_scan<double>(s, c, temp, bytes);
      if (c.dtype == AKX_INT32) return cub_scan<int32_t>(s, c, temp, bytes);
      return cudaErrorInvalidValue;
    case AKX_PEER_SCAN_OP:
      return cub::DeviceScan::InclusiveScan(temp, bytes, static_cast<const float *>(c.src),
                                            static_cast<float *>(s.peer_out), no_neutral_add{},
                                            c.n, s.stream);
    case AKX_PEER_SCAN_OP_BY_KEY: {
      auto keys = thrust::make_transform_iterator(thrust::make_counting_iterator<int64_t>(0),
                                                  column_of{c.segment_length});
      return cub::DeviceScan::InclusiveScanByKey(temp, bytes, keys, static_cast<const float *>(c.src),
                                                 static_cast<float *>(s.peer_out), no_neutral_add{},
                                                 c.n, cuda::std::equal_to<>(), s.stream);
    }
    case AKX_PEER_REDUCE_SUM_TO_HOST: {
      cudaError_t e = cub::DeviceReduce::Sum(temp, bytes, static_cast<const float *>(c.src),
                                             static_cast<float *>(s.peer_out), c.n, s.stream);
      // The sum comes back to the host, as akx's two variants do (docs/reduce_whole.md's "+ copy").
      if (e == cudaSuccess && temp)
        e = cudaMemcpyAsync(s.host_out, s.peer_out, sizeof(float), cudaMemcpyDeviceToHost, s.stream);
      if (e == cudaSuccess && temp) e = cudaStreamSynchronize(s.stream);
      return e;
    }
    case AKX_PEER_SEGMENTED_SUM:
      if (c.dtype == AKX_BFLOAT16) {
        auto in = thrust::make_transform_iterator(static_cast<const __nv_bfloat16 *>(c.src),
                                                  to_float<__nv_bfloat16>{});
        // Summed in float and written as float (akx writes bfloat16: 2 bytes fewer per
        // output, and outputs are few where the segments are contiguous).
        return cub::DeviceSegmentedReduce::Reduce(temp, bytes, in, static_cast<float *>(s.peer_out),
                                                  c.segments, s.offsets, s.offsets + 1, add_float{},
                                                  0.0f, s.stream);
      }
      return cub::DeviceSegmentedReduce::Reduce(temp, bytes, static_cast<const float *>(c.src),
                                                static_cast<float *>(s.peer_out), c.segments,
                                                s.offsets, s.offsets + 1, add_float{}, 0.0f, s.stream);
    case AKX_PEER_SELECT_FLAGGED:  /* the source's elements are the flags (nonzero: selected) */
      if (c.dtype == AKX_FLOAT32)
        return cub::DeviceSelect::Flagged(temp, bytes, thrust::make_counting_iterator<int64_t>(0),
                                          static_cast<const float *>(c.src),
                                          static_cast<int64_t *>(s.peer_out),
                                          static_cast<int64_t *>(s.peer_count), c.n, s.stream);
      return cub::DeviceSelect::Flagged(temp, bytes, thrust::make_counting_iterator<int64_t>(0),
                                        static_cast<const uint8_t *>(c.src),
                                        static_cast<int64_t *>(s.peer_out),
                                        static_cast<int64_t *>(s.peer_count), c.n, s.stream);
    default:
      return cudaErrorInvalidValue;
  }
}

size_t peer_out_bytes(const akx_bench_cuda_case &c) {
  switch (c.peer) {
    case AKX_PEER_NONE: return 0;
    case AKX_PEER_REDUCE_SUM_TO_HOST: return sizeof(double);
    case AKX_PEER_SEGMENTED_SUM: return (size_t)c.segments * sizeof(float);
    case AKX_PEER_SELECT_FLAGGED: return (size_t)c.n * sizeof(int64_t);
    default: return (size_t)c.n * akx_dtype_size(c.dtype);
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

enum variant { AKX0, AKX1, CUB, COPY, VARIANTS };

#define BENCH_CUDA_TRY(call)                                                    \
  do {                                                                          \
    cudaError_t bench_e_ = (call);                                              \
    if (bench_e_ != cudaSuccess) {                                              \
      snprintf(err, err_size, "%s: %s", #call, cudaGetErrorString(bench_e_));   \
      return -1;                                                                \
    }                                                                           \
  } while (0)

}  // namespace

extern "C" int akx_bench_cuda_time(akx_context *ctx, akx_bench_enqueue_fn const akx[2], void *arg,
                                   const akx_bench_cuda_case *c, int warmup, int runs,
                                   akx_bench_cuda_result *r, char *err, size_t err_size) {
  *r = akx_bench_cuda_result{};
  if (runs < 1 || c->n < 1) {
    snprintf(err, err_size, "runs (%d) and n (%lld) must be at least 1", runs, (long long)c->n);
    return -1;
  }
  session s;
  s.ctx = ctx;
  BENCH_CUDA_TRY(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
  if (akx_context_set_stream(ctx, s.stream) != AKX_SUCCESS) {
    snprintf(err, err_size, "akx_context_set_stream: %s", akx_last_error());
    return -1;
  }
  // The L2 flush: a write of twice the L2 before every timed run, outside its events, evicts
  // the input that the previous run left there (a 40 MB input would otherwise be read from the
  // H200's 50 MB L2).
  int device = 0, l2 = 0;
  BENCH_CUDA_TRY(cudaGetDevice(&device));
  BENCH_CUDA_TRY(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  r->l2_bytes = (size_t)l2;
  s.flush_bytes = std::max<size_t>(2 * (size_t)l2, 1 << 20);
  BENCH_CUDA_TRY(cudaMalloc(&s.flush, s.flush_bytes));
  BENCH_CUDA_TRY(cudaMalloc(&s.copy_dst, std::max<size_t>(c->copy_bytes, 1)));
  BENCH_CUDA_TRY(cudaMallocHost(&s.host_out, sizeof(double)));
  BENCH_CUDA_TRY(cudaEventCreate(&s.start));
  BENCH_CUDA_TRY(cudaEventCreate(&s.stop));

  // CUB's output and temporary storage, sized and allocated once outside the timing (akx's
  // workspace is cached by the context after the first call).
  bool have_cub = c->peer != AKX_PEER_NONE;
  if (have_cub) {
    BENCH_CUDA_TRY(cudaMalloc(&s.peer_out, std::max<size_t>(peer_out_bytes(*c), 8)));
    BENCH_CUDA_TRY(cudaMalloc(&s.peer_count, sizeof(int64_t)));
    if (c->peer == AKX_PEER_SEGMENTED_SUM) {
      std::vector<int64_t> off((size_t)c->segments + 1);
      for (int64_t i = 0; i <= c->segments; ++i) off[(size_t)i] = i * c->segment_length;
      BENCH_CUDA_TRY(cudaMalloc(&s.offsets, off.size() * sizeof(int64_t)));
      BENCH_CUDA_TRY(cudaMemcpy(s.offsets, off.data(), off.size() * sizeof(int64_t),
                                cudaMemcpyHostToDevice));
    }
    BENCH_CUDA_TRY(cub_call(s, *c, nullptr, s.peer_temp_bytes));
    BENCH_CUDA_TRY(cudaMalloc(&s.peer_temp, std::max<size_t>(s.peer_temp_bytes, 1)));
  }

  bool present[VARIANTS] = {akx[0] != nullptr, akx[1] != nullptr, have_cub, c->copy_bytes > 0};
  auto run_variant = [&](int v) -> int {
    if (v == AKX0 || v == AKX1) {
      akx_status st = akx[v](ctx, arg);
      if (st != AKX_SUCCESS) {
        snprintf(err, err_size, "akx call %d: %s: %s", v, akx_status_string(st), akx_last_error());
        return -1;
      }
      return 0;
    }
    cudaError_t e = v == CUB ? cub_call(s, *c, s.peer_temp, s.peer_temp_bytes)
                             : cudaMemcpyAsync(s.copy_dst, c->src, c->copy_bytes,
                                               cudaMemcpyDeviceToDevice, s.stream);
    if (e != cudaSuccess) {
      snprintf(err, err_size, "%s: %s", v == CUB ? "CUB" : "cudaMemcpyAsync", cudaGetErrorString(e));
      return -1;
    }
    return 0;
  };

  for (int w = 0; w < warmup; ++w)
    for (int v = 0; v < VARIANTS; ++v)
      if (present[v] && run_variant(v)) return -1;
  BENCH_CUDA_TRY(cudaStreamSynchronize(s.stream));

  std::vector<double> us[VARIANTS];
  for (int round = 0; round < runs; ++round) {
    for (int v = 0; v < VARIANTS; ++v) {
      if (!present[v]) continue;
      BENCH_CUDA_TRY(cudaMemsetAsync(s.flush, round & 0xff, s.flush_bytes, s.stream));
      BENCH_CUDA_TRY(cudaEventRecord(s.start, s.stream));
      if (run_variant(v)) return -1;
      BENCH_CUDA_TRY(cudaEventRecord(s.stop, s.stream));
      BENCH_CUDA_TRY(cudaEventSynchronize(s.stop));
      float ms = 0;
      BENCH_CUDA_TRY(cudaEventElapsedTime(&ms, s.start, s.stop));
      us[v].push_back(ms * 1e3);
    }
  }
  akx_bench_timing *out[VARIANTS] = {&r->akx[0], &r->akx[1], &r->cub, &r->copy};
  for (int v = 0; v < VARIANTS; ++v) {
    if (!present[v]) continue;
    out[v]->ran = 1;
    out[v]->median_us = median(us[v]);
    out[v]->min_us = *std::min_element(us[v].begin(), us[v].end());
  }
  return 0;
}

// Registers per thread of the reduce_whole kernels a float sum launches, as ptxas gave them
// (cudaFuncGetAttributes' numRegs), beside what their kernel_info declares to the sim's
// occupancy and time model; bench/gpu_check.sh reads every kernel's from Nsight Compute.
extern "C" void akx_bench_cuda_print_registers(void) {
#ifdef AKX_BENCH_KERNEL_HEADERS
  struct entry {
    akx::kernel_info info;
    const void *kernel;
  };
  const entry kernels[] = {
      {akx::reduce_whole_contiguous_info,
       reinterpret_cast<const void *>(&akx::reduce_whole_contiguous<float, float, akx::op_add>)},
      {akx::reduce_whole_partials_info,
       reinterpret_cast<const void *>(&akx::reduce_whole_partials<float, akx::op_add>)},
  };
  for (const entry &k : kernels) {
    cudaFuncAttributes a;
    cudaError_t e = cudaFuncGetAttributes(&a, k.kernel);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      fprintf(stderr, "akx-bench: registers of %s<float>: cudaFuncGetAttributes: %s\n", k.info.name,
              cudaGetErrorString(e));
      continue;
    }
    fprintf(stderr, "akx-bench: registers of %s<float>: %d per thread (ptxas, sm_%d%d), %d declared\n",
            k.info.name, a.numRegs, a.binaryVersion / 10, a.binaryVersion % 10, k.info.registers);
  }
#else
  fprintf(stderr, "akx-bench: kernel registers not printed: built without the kernel headers on "
          "the include path\n");
#endif
}
