// The CUDA half of akx-bench: akx_mapreduce beside its two baselines, CUB's DeviceReduce::Sum
// (what a CUDA C++ programmer would call) and a device-to-device copy of the same bytes (the
// bandwidth a streaming kernel can hope for), timed with CUDA events on one stream.
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <vector>

#include <cub/device/device_reduce.cuh>

#include "bench_cuda.h"

// The library's kernel templates, for their registers (print_kernel_registers): found when
// akx-bench has the source root and src/ on its include path.
#if __has_include("kernels/reduce_whole.cuh")
#include "kernels/reduce_whole.cuh"
#define AKX_BENCH_KERNEL_HEADERS 1
#endif

namespace {

// Registers per thread of the reduce_whole kernels a sum of T launches (pass 1 contiguous,
// pass 2 over the partials), as ptxas gave them (cudaFuncGetAttributes' numRegs), beside
// what their kernel_info declares to the sim's occupancy and time model: a GPU run prints
// both so that the declarations can be corrected. The kernels are this file's instances of
// the library's templates, compiled for the same architecture. Once per T, on stderr (the
// CSV on stdout stays clean).
template <class T>
void print_kernel_registers(const char *type) {
  static bool printed = false;
  if (printed) return;
  printed = true;
#ifdef AKX_BENCH_KERNEL_HEADERS
  struct entry {
    akx::kernel_info info;
    const void *kernel;
  };
  const entry kernels[] = {
      {akx::reduce_whole_contiguous_info,
       reinterpret_cast<const void *>(&akx::reduce_whole_contiguous<T, T, akx::op_add, akx::map_identity>)},
      {akx::reduce_whole_partials_info,
       reinterpret_cast<const void *>(&akx::reduce_whole_partials<T, akx::op_add>)},
  };
  for (const entry &k : kernels) {
    cudaFuncAttributes a;
    cudaError_t e = cudaFuncGetAttributes(&a, k.kernel);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      fprintf(stderr, "akx-bench: registers of %s<%s>: cudaFuncGetAttributes: %s\n", k.info.name,
              type, cudaGetErrorString(e));
      continue;
    }
    fprintf(stderr, "akx-bench: registers of %s<%s>: %d per thread (ptxas, sm_%d%d), %d declared\n",
            k.info.name, type, a.numRegs, a.binaryVersion / 10, a.binaryVersion % 10,
            k.info.registers);
  }
#else
  fprintf(stderr, "akx-bench: registers of the %s kernels not printed: akx-bench was built without "
          "the kernel headers on its include path\n", type);
#endif
}

// Everything one timing session holds, released in the destructor whatever path returns.
struct session {
  akx_context *ctx = nullptr;
  akx_bench_enqueue_fn akx_sum = nullptr;
  const void *akx_arg = nullptr;
  cudaStream_t stream = nullptr;
  void *cub_out = nullptr, *cub_temp = nullptr, *copy_dst = nullptr;
  size_t cub_temp_bytes = 0;
  cudaEvent_t start = nullptr, stop = nullptr;

  ~session() {
    if (stream) {
      cudaStreamSynchronize(stream);
      if (ctx) akx_context_set_stream(ctx, nullptr);
    }
    cudaFree(cub_out);
    cudaFree(cub_temp);
    cudaFree(copy_dst);
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
    if (stream) cudaStreamDestroy(stream);
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

// The operations under test, in the order each round runs them.
enum variant { AKX, CUB, MEMCPY, VARIANTS };
const char *const variant_name[VARIANTS] = {"akx_mapreduce", "cub::DeviceReduce::Sum",
                                            "cudaMemcpyAsync"};

// cub::DeviceReduce::Sum as a CUDA C++ programmer would call it: with an int count when n
// fits one (CUB picks 32-bit offsets then), else with the 64-bit count. The size query
// (temp == nullptr) and the run take the same branch, so they agree on the storage needed.
template <class T>
cudaError_t cub_sum(void *temp, size_t &temp_bytes, const void *d_in, void *d_out, int64_t n,
                    cudaStream_t stream) {
  const T *in = static_cast<const T *>(d_in);
  T *out = static_cast<T *>(d_out);
  if (n <= INT_MAX) return cub::DeviceReduce::Sum(temp, temp_bytes, in, out, static_cast<int>(n), stream);
  return cub::DeviceReduce::Sum(temp, temp_bytes, in, out, n, stream);
}

// Enqueues one operation on the session's stream: 0, or -1 with err filled.
template <class T>
int run_variant(session &s, variant v, const void *d_in, int64_t n, char *err, size_t err_size) {
  if (v == AKX) {
    akx_status st = s.akx_sum(s.ctx, s.akx_arg);
    if (st != AKX_SUCCESS) {
      snprintf(err, err_size, "akx_mapreduce: %s: %s", akx_status_string(st), akx_last_error());
      return -1;
    }
    return 0;
  }
  cudaError_t e =
      v == CUB ? cub_sum<T>(s.cub_temp, s.cub_temp_bytes, d_in, s.cub_out, n, s.stream)
               : cudaMemcpyAsync(s.copy_dst, d_in, n * sizeof(T), cudaMemcpyDeviceToDevice, s.stream);
  if (e != cudaSuccess) {
    snprintf(err, err_size, "%s: %s", variant_name[v], cudaGetErrorString(e));
    return -1;
  }
  return 0;
}

#define BENCH_CUDA_TRY(call)                                                    \
  do {                                                                          \
    cudaError_t bench_e_ = (call);                                              \
    if (bench_e_ != cudaSuccess) {                                              \
      snprintf(err, err_size, "%s: %s", #call, cudaGetErrorString(bench_e_));   \
      return -1;                                                                \
    }                                                                           \
  } while (0)

template <class T>
int time_sum(akx_context *ctx, akx_bench_enqueue_fn akx_sum, const void *arg, const void *d_in,
             int64_t n, int warmup, int runs, akx_bench_cuda_times *times, char *err,
             size_t err_size) {
  session s;
  s.ctx = ctx;
  s.akx_sum = akx_sum;
  s.akx_arg = arg;
  BENCH_CUDA_TRY(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
  akx_status st = akx_context_set_stream(ctx, s.stream);
  if (st != AKX_SUCCESS) {
    snprintf(err, err_size, "akx_context_set_stream: %s", akx_last_error());
    return -1;
  }
  BENCH_CUDA_TRY(cudaMalloc(&s.cub_out, sizeof(T)));
  BENCH_CUDA_TRY(cudaMalloc(&s.copy_dst, n * sizeof(T)));
  // CUB's temporary storage is sized and allocated once, outside the timing, as akx's
  // workspace is cached by the context after the first call (a warm-up round).
  BENCH_CUDA_TRY(cub_sum<T>(nullptr, s.cub_temp_bytes, d_in, s.cub_out, n, s.stream));
  BENCH_CUDA_TRY(cudaMalloc(&s.cub_temp, std::max<size_t>(s.cub_temp_bytes, 1)));
  BENCH_CUDA_TRY(cudaEventCreate(&s.start));
  BENCH_CUDA_TRY(cudaEventCreate(&s.stop));

  for (int r = 0; r < warmup; ++r)
    for (int v = 0; v < VARIANTS; ++v)
      if (run_variant<T>(s, variant(v), d_in, n, err, err_size)) return -1;
  BENCH_CUDA_TRY(cudaStreamSynchronize(s.stream));

  std::vector<double> us[VARIANTS];
  for (int r = 0; r < runs; ++r) {
    for (int v = 0; v < VARIANTS; ++v) {
      BENCH_CUDA_TRY(cudaEventRecord(s.start, s.stream));
      if (run_variant<T>(s, variant(v), d_in, n, err, err_size)) return -1;
      BENCH_CUDA_TRY(cudaEventRecord(s.stop, s.stream));
      BENCH_CUDA_TRY(cudaEventSynchronize(s.stop));
      float ms = 0;
      BENCH_CUDA_TRY(cudaEventElapsedTime(&ms, s.start, s.stop));
      us[v].push_back(ms * 1e3);
    }
  }
  times->akx_us = median(us[AKX]);
  times->cub_us = median(us[CUB]);
  times->memcpy_us = median(us[MEMCPY]);
  return 0;
}

}  // namespace

extern "C" int akx_bench_cuda_reduce(akx_context *ctx, akx_bench_enqueue_fn akx_sum, const void *arg,
                                     const void *d_in, akx_dtype dtype, int64_t n, int warmup,
                                     int runs, akx_bench_cuda_times *times, char *err,
                                     size_t err_size) {
  if (runs < 1 || n < 1) {
    snprintf(err, err_size, "runs (%d) and n (%lld) must be at least 1", runs, (long long)n);
    return -1;
  }
  switch (dtype) {
    case AKX_FLOAT32:
      print_kernel_registers<float>("float");
      return time_sum<float>(ctx, akx_sum, arg, d_in, n, warmup, runs, times, err, err_size);
    case AKX_FLOAT64:
      print_kernel_registers<double>("double");
      return time_sum<double>(ctx, akx_sum, arg, d_in, n, warmup, runs, times, err, err_size);
    default:
      snprintf(err, err_size, "dtype %s has no CUB baseline here (float32, float64)", akx_dtype_name(dtype));
      return -1;
  }
}
