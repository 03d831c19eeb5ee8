// Programmatic dependent launch against a kernel image without the wait (bench/gpu_check.sh,
// stages pdl-arch80 and pdl-sm90). A producer kernel of this program calls
// cudaTriggerProgrammaticLaunchCompletion (griddepcontrol.launch_dependents) as it starts, spins
// about 100 us (globaltimer) and only then writes its output; the next kernel on the stream,
// launched with programmatic stream serialization, may start as soon as every producer block
// has triggered, and sees the output only if it waits (cudaGridDependencySynchronize,
// griddepcontrol.wait) before reading it. The consumers, each many times at several sizes:
//  - control without the wait (this program's, launched with the attribute): must read early
//    at least once, else this device and driver do not overlap the launches and the probe
//    could not tell a missing wait (the probe then fails: inconclusive);
//  - control with the wait: every sum exact (the producer and the expected sums are right);
//  - akx_mapreduce (ADD, float32 and int64, into device memory) on the context's stream
//    (akx_context_set_stream): every sum exact. libakx launches its kernels with the attribute
//    when it decides PDL is on; a library built for compute_80 (CMAKE_CUDA_ARCHITECTURES=80)
//    has kernels whose wait compiled to nothing, and must then launch them without it.
// The producer is built for sm_90 whatever the library's architectures (tests/cuda/CMakeLists.txt),
// so that it triggers. Skipped (77) without a CUDA device or below compute capability 9.0 (no
// PDL there). Usage: akx_pdl_probe [REPETITIONS] (default 300 per size and consumer).
#include <cuda_runtime.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <unistd.h>

#include "probe.h"

namespace {

constexpr unsigned long long kSpinNs = 100000;  // 100 us: far longer than a launch takes
constexpr int kPeriod = 13;                      // values repeat with the repetition mod 13

__device__ __forceinline__ unsigned long long globaltimer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// The value the producer writes at i in repetition rep: small integers, so every sum is exact
// in float32 below 2^24 whatever the order of the additions.
template <class T>
__host__ __device__ T value_at(long long i, int rep) {
  return T((i + rep) % kPeriod + 1);
}

template <class T>
__global__ void produce_late(T *out, long long n, int rep) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cudaTriggerProgrammaticLaunchCompletion();
#endif
  const unsigned long long t0 = globaltimer_ns();
  while (globaltimer_ns() - t0 < kSpinNs) {
  }
  const long long step = (long long)gridDim.x * blockDim.x;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += step)
    out[i] = value_at<T>(i, rep);
}

__device__ void add_to(float *sum, float v) { atomicAdd(sum, v); }
__device__ void add_to(long long *sum, long long v) {
  atomicAdd(reinterpret_cast<unsigned long long *>(sum), static_cast<unsigned long long>(v));
}

// A consumer of this program's: one block, its sum into *sum (zeroed by the caller's memset
// before the producer). With wait = 0 it reads at once: the control that shows early reads.
template <class T, class Acc>
__global__ void consume(const T *in, long long n, Acc *sum, int wait) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (wait) cudaGridDependencySynchronize();
#endif
  Acc s = 0;
  for (long long i = threadIdx.x; i < n; i += blockDim.x) s += Acc(in[i]);
  add_to(sum, s);
}

template <class T>
struct dtype_of;
template <>
struct dtype_of<float> {
  static constexpr akx_dtype value = AKX_FLOAT32;
  static constexpr const char *name = "float32";
};
template <>
struct dtype_of<long long> {
  static constexpr akx_dtype value = AKX_INT64;
  static constexpr const char *name = "int64";
};

// Waits for the stream at most 5 s (a run takes tens of milliseconds): a kernel launched early may also draw a ticket before the
// call before it reset it, and then never finish (issue: "scans then hang"). A hang is reported
// as such and ends the process, which ends its kernels.
void wait_or_stop(cudaStream_t stream, const char *what) {
  const double deadline = probe_now_us() + 5e6;
  cudaError_t e;
  while ((e = cudaStreamQuery(stream)) == cudaErrorNotReady) {
    if (probe_now_us() > deadline) {
      printf("pdl_probe: FAILED: %s did not finish within 5 s: a hang\n", what);
      fflush(stdout);
      _exit(1);
    }
    usleep(100);
  }
  PROBE_CUDA(e);
}

enum consumer { NO_WAIT, WAIT, LIBAKX };
const char *const consumer_name[] = {"control without the wait", "control with the wait",
                                     "akx_mapreduce"};

// Runs `reps` repetitions of memset, producer, consumer on the stream; returns how many
// consumer sums differ from the exact ones.
template <class T>
int run(akx_context *ctx, cudaStream_t stream, int blocks, long long n, int reps, consumer c) {
  using Acc = T;  // AUTO accumulator of an ADD of float32 (float32) and of int64 (int64)
  T *data = nullptr;
  Acc *sums = nullptr;
  PROBE_CUDA(cudaMalloc(&data, size_t(n) * sizeof(T)));
  PROBE_CUDA(cudaMalloc(&sums, size_t(reps) * sizeof(Acc)));
  PROBE_CUDA(cudaMemsetAsync(sums, 0, size_t(reps) * sizeof(Acc), stream));
  const akx_array v = akx_vector(data, dtype_of<T>::value, n);
  if (c == LIBAKX) {  // a warm call: the workspace is grown and zeroed outside the loop
    PROBE_AKX(akx_mapreduce(ctx, &v, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, sums, AKX_DEVICE));
  }
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(1);
  cfg.blockDim = dim3(256);
  cfg.stream = stream;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  for (int rep = 0; rep < reps; ++rep) {
    // A value the producer never writes, so that a consumer that read early cannot be right.
    PROBE_CUDA(cudaMemsetAsync(data, 0, size_t(n) * sizeof(T), stream));
    produce_late<T><<<blocks, 256, 0, stream>>>(data, n, rep);
    PROBE_CUDA(cudaGetLastError());
    if (c == LIBAKX) {
      PROBE_AKX(akx_mapreduce(ctx, &v, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, sums + rep, AKX_DEVICE));
    } else {
      PROBE_CUDA(cudaLaunchKernelEx(&cfg, consume<T, Acc>, (const T *)data, n, sums + rep,
                                    c == WAIT ? 1 : 0));
    }
  }
  wait_or_stop(stream, consumer_name[c]);
  std::vector<Acc> got(static_cast<size_t>(reps));
  PROBE_CUDA(cudaMemcpy(got.data(), sums, size_t(reps) * sizeof(Acc), cudaMemcpyDeviceToHost));
  long long exact[kPeriod];
  for (int r = 0; r < kPeriod; ++r) {
    exact[r] = 0;
    for (long long i = 0; i < n; ++i) exact[r] += value_at<long long>(i, r);
  }
  int wrong = 0, first = -1;
  for (int rep = 0; rep < reps; ++rep)
    if (!(got[size_t(rep)] == Acc(exact[rep % kPeriod]))) {  // NaN counts as wrong
      if (first < 0) first = rep;
      ++wrong;
    }
  printf("  %-8s n=%-9lld %-26s %4d of %d sums wrong", dtype_of<T>::name, n, consumer_name[c],
         wrong, reps);
  if (first >= 0)
    printf(" (first: repetition %d gave %.17g, exact %lld)", first, double(got[size_t(first)]),
           exact[first % kPeriod]);
  printf("\n");
  PROBE_CUDA(cudaFree(data));
  PROBE_CUDA(cudaFree(sums));
  return wrong;
}

}  // namespace

int main(int argc, char **argv) {
  probe_need_device("pdl_probe");
  const int reps = argc > 1 ? atoi(argv[1]) : 300;
  if (reps < 1) {
    fprintf(stderr, "usage: akx_pdl_probe [REPETITIONS >= 1]\n");
    return 2;
  }
  akx_context *ctx = nullptr;
  PROBE_AKX(akx_context_create(&ctx, AKX_BACKEND_CUDA, 0));
  const akx_context_info_t info = probe_info(ctx);
  if (info.cc_major < 9) {
    printf("pdl_probe: skipped: %s is compute capability %d.%d; PDL needs 9.0\n",
           info.device_name, int(info.cc_major), int(info.cc_minor));
    akx_context_destroy(ctx);
    return PROBE_SKIP;
  }
  cudaFuncAttributes fa;
  PROBE_CUDA(cudaFuncGetAttributes(&fa, produce_late<float>));
  const char *pdl = getenv("AKX_PDL");
  printf("pdl_probe: %s (cc %d.%d), producer ptxVersion %d binaryVersion %d, AKX_PDL=%s, "
         "%d repetitions per case\n",
         info.device_name, int(info.cc_major), int(info.cc_minor), fa.ptxVersion,
         fa.binaryVersion, pdl ? pdl : "(unset: on)", reps);
  if (fa.ptxVersion < 90) {
    printf("pdl_probe: FAILED: the producer was built for compute_%d and cannot trigger: "
           "build it for sm_90 (tests/cuda/CMakeLists.txt)\n", fa.ptxVersion);
    return 1;
  }
  cudaStream_t stream;
  PROBE_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  PROBE_AKX(akx_context_set_stream(ctx, stream));
  // One block per SM: the producer is one wave, so that every block triggers at its start.
  const int blocks = info.sm_count;
  const long long sizes[] = {1000, 1 << 16, (1 << 20) + 3};
  int early_reads = 0, wrong_waiting = 0, wrong_libakx = 0;
  for (long long n : sizes) {
    early_reads += run<float>(ctx, stream, blocks, n, reps, NO_WAIT);
    wrong_waiting += run<float>(ctx, stream, blocks, n, reps, WAIT);
    wrong_libakx += run<float>(ctx, stream, blocks, n, reps, LIBAKX);
    wrong_libakx += run<long long>(ctx, stream, blocks, n, reps, LIBAKX);
  }
  PROBE_AKX(akx_context_set_stream(ctx, NULL));
  PROBE_CUDA(cudaStreamDestroy(stream));
  akx_context_destroy(ctx);
  int failed = 0;
  if (early_reads == 0) {
    printf("pdl_probe: FAILED (inconclusive): the control without the wait never read early, "
           "so a missing wait in libakx's kernels could not show either\n");
    failed = 1;
  }
  if (wrong_waiting) {
    printf("pdl_probe: FAILED: the control with the wait summed wrong %d times: the probe "
           "itself is wrong\n", wrong_waiting);
    failed = 1;
  }
  if (wrong_libakx) {
    printf("pdl_probe: FAILED: akx_mapreduce read the producer's output before it was written "
           "%d times (a kernel without the wait launched as a programmatic dependent)\n",
           wrong_libakx);
    failed = 1;
  }
  if (!failed)
    printf("pdl_probe: passed: akx_mapreduce exact every time; the control without the wait "
           "read early %d times\n", early_reads);
  return failed;
}
