// A program's mix of calls on one context, on a GPU (bench/gpu_check.sh, stage mixed): a
// whole-array sum to the host, a split dims reduction (n/1000 x 1000 into n/1000 outputs), a
// columns dims reduction (n/100 x 100 into 100), an inclusive scan, a findall (bool, half set),
// a sum, a scan; float32 at 10^4, 10^5, 10^6. One warm-up round, then ROUNDS rounds, every
// value checked against the host (small integers: exact). Beside it, CUB's DeviceScan
// InclusiveSum and DeviceSelect::Flagged (findall's peer: the positions of the set flags) on
// the same data and stream. Prints the median microseconds per call (CUDA events around each
// call, host wait included for the calls that return a host value) for akx and CUB; the sim's
// launch counts for the same sequence are tests/test_steady_state.c's (one per call).
// Usage: akx_mixed_probe [ROUNDS] (default 100). Skipped (77) without a device.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <vector>

#include "probe.h"

namespace {

int failures = 0;
void check(bool ok, const char *what, long long n, double got, double want) {
  if (!ok) {
    if (failures < 20) printf("  FAILED: %s of %lld: %.9g, expected %.9g\n", what, n, got, want);
    ++failures;
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct timer {
  cudaEvent_t a, b;
  cudaStream_t s;
  explicit timer(cudaStream_t st) : s(st) {
    PROBE_CUDA(cudaEventCreate(&a));
    PROBE_CUDA(cudaEventCreate(&b));
  }
  ~timer() {
    cudaEventDestroy(a);
    cudaEventDestroy(b);
  }
  void start() { PROBE_CUDA(cudaEventRecord(a, s)); }
  double stop_us() {
    PROBE_CUDA(cudaEventRecord(b, s));
    PROBE_CUDA(cudaEventSynchronize(b));
    float ms = 0;
    PROBE_CUDA(cudaEventElapsedTime(&ms, a, b));
    return ms * 1e3;
  }
};

enum { SUM, SPLIT_DIMS, COLUMNS_DIMS, SCAN, FINDALL, SUM2, SCAN2, CALLS };
const char *const names[CALLS] = {"sum", "split dims", "columns dims", "scan", "findall", "sum", "scan"};

}  // namespace

int main(int argc, char **argv) {
  probe_need_device("akx_mixed_probe");
  const int rounds = argc > 1 ? atoi(argv[1]) : 100;
  cudaStream_t stream;
  PROBE_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  akx_context *ctx = nullptr;
  PROBE_AKX(akx_context_create(&ctx, AKX_BACKEND_CUDA, 0));
  PROBE_AKX(akx_context_set_stream(ctx, stream));
  timer t(stream);
  printf("akx_mixed_probe: %d rounds after a warm-up; median us per call\n", rounds);
  printf("%-13s %9s %10s %10s\n", "call", "n", "akx", "CUB");
  for (long long n = 10000; n <= 1000000; n *= 10) {
    std::vector<float> h(n), hscan(n);
    std::vector<unsigned char> hf(n);
    std::vector<long long> hpos;
    double total = 0;
    for (long long i = 0; i < n; ++i) {
      h[i] = (float)(int)(i % 7) - 3.0f;
      total += h[i];
      hscan[i] = (float)total;
      hf[i] = (unsigned char)(((unsigned long long)i * 2654435761ull) >> 7 & 1);
      if (hf[i]) hpos.push_back(i);
    }
    float *src, *dst, *outs;
    unsigned char *flags;
    long long *idx, *cub_out, *cub_count;
    PROBE_CUDA(cudaMalloc(&src, n * sizeof(float)));
    PROBE_CUDA(cudaMalloc(&dst, n * sizeof(float)));
    PROBE_CUDA(cudaMalloc(&outs, (n / 100 + 100) * sizeof(float)));
    PROBE_CUDA(cudaMalloc(&flags, n));
    PROBE_CUDA(cudaMalloc(&idx, n * sizeof(long long)));
    PROBE_CUDA(cudaMalloc(&cub_out, n * sizeof(long long)));
    PROBE_CUDA(cudaMalloc(&cub_count, sizeof(long long)));
    PROBE_CUDA(cudaMemcpy(src, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    PROBE_CUDA(cudaMemcpy(flags, hf.data(), n, cudaMemcpyHostToDevice));
    const akx_array s = akx_vector(src, AKX_FLOAT32, n), d = akx_vector(dst, AKX_FLOAT32, n);
    const akx_array f = akx_vector(flags, AKX_BOOL, n), ix = akx_vector(idx, AKX_INT64, n);
    const int64_t split_s[2] = {n / 1000, 1000}, split_d[2] = {n / 1000, 1};
    const int64_t col_s[2] = {n / 100, 100}, col_d[2] = {1, 100};
    const akx_array ss = akx_array_c(src, AKX_FLOAT32, 2, split_s), sd = akx_array_c(outs, AKX_FLOAT32, 2, split_d);
    const akx_array cs = akx_array_c(src, AKX_FLOAT32, 2, col_s), cd = akx_array_c(outs, AKX_FLOAT32, 2, col_d);
    std::vector<double> us[CALLS];
    std::vector<float> got(n);
    std::vector<long long> gotpos(n);
    for (int r = 0; r <= rounds; ++r)
      for (int k = 0; k < CALLS; ++k) {
        t.start();
        float sum = 0;
        int64_t count = 0;
        switch (k) {
          case SUM: case SUM2: PROBE_AKX(akx_mapreduce(ctx, &s, AKX_MAP_IDENTITY, AKX_OP_ADD, nullptr, &sum, AKX_HOST)); break;
          case SPLIT_DIMS: PROBE_AKX(akx_reduce_dims(ctx, &sd, &ss, AKX_MAP_IDENTITY, AKX_OP_ADD, nullptr)); break;
          case COLUMNS_DIMS: PROBE_AKX(akx_reduce_dims(ctx, &cd, &cs, AKX_MAP_IDENTITY, AKX_OP_ADD, nullptr)); break;
          case SCAN: case SCAN2: PROBE_AKX(akx_scan(ctx, &d, &s, AKX_OP_ADD, 0, nullptr)); break;
          default: PROBE_AKX(akx_findall(ctx, &f, &ix, &count)); break;
        }
        const double u = t.stop_us();
        if (r > 0) us[k].push_back(u);
        // Values: every call of the first two rounds and of the last, each round's sums.
        const bool full = r < 2 || r == rounds;
        if (k == SUM || k == SUM2) check(sum == (float)total, "sum", n, sum, total);
        if ((k == SCAN || k == SCAN2) && full) {
          PROBE_CUDA(cudaMemcpy(got.data(), dst, n * sizeof(float), cudaMemcpyDeviceToHost));
          for (long long i = 0; i < n; ++i)
            if (got[i] != hscan[i]) { check(false, "scan element", i, got[i], hscan[i]); break; }
        }
        if (k == FINDALL) {
          check(count == (int64_t)hpos.size(), "findall count", n, (double)count, (double)hpos.size());
          if (full) {
            PROBE_CUDA(cudaMemcpy(gotpos.data(), idx, count * sizeof(long long), cudaMemcpyDeviceToHost));
            for (long long i = 0; i < count; ++i)
              if (gotpos[i] != hpos[i]) { check(false, "findall position", i, (double)gotpos[i], (double)hpos[i]); break; }
          }
        }
        if ((k == SPLIT_DIMS || k == COLUMNS_DIMS) && full) {
          const long long cols = k == SPLIT_DIMS ? 1000 : 100, outs_n = k == SPLIT_DIMS ? n / 1000 : 100;
          PROBE_CUDA(cudaMemcpy(got.data(), outs, outs_n * sizeof(float), cudaMemcpyDeviceToHost));
          for (long long o = 0; o < outs_n; ++o) {
            double want = 0;
            for (long long j = 0; j < (k == SPLIT_DIMS ? cols : n / 100); ++j)
              want += h[k == SPLIT_DIMS ? o * cols + j : j * cols + o];
            if (got[o] != (float)want) { check(false, names[k], n, got[o], want); break; }
          }
        }
      }
    // CUB beside: the same scan and the findall's peer (positions of the set flags), warm.
    size_t scan_tmp = 0, sel_tmp = 0;
    const auto positions = thrust::make_counting_iterator<long long>(0);
    PROBE_CUDA(cub::DeviceScan::InclusiveSum(nullptr, scan_tmp, src, dst, (int)n, stream));
    PROBE_CUDA(cub::DeviceSelect::Flagged(nullptr, sel_tmp, positions, flags, cub_out, cub_count, (int)n, stream));
    void *tmp;
    PROBE_CUDA(cudaMalloc(&tmp, std::max(scan_tmp, sel_tmp)));
    std::vector<double> cub_scan, cub_select;
    for (int r = 0; r <= rounds; ++r) {
      t.start();
      PROBE_CUDA(cub::DeviceScan::InclusiveSum(tmp, scan_tmp, src, dst, (int)n, stream));
      if (r) cub_scan.push_back(t.stop_us()); else t.stop_us();
      long long c = 0;
      t.start();
      PROBE_CUDA(cub::DeviceSelect::Flagged(tmp, sel_tmp, positions, flags, cub_out, cub_count, (int)n, stream));
      PROBE_CUDA(cudaMemcpyAsync(&c, cub_count, sizeof c, cudaMemcpyDeviceToHost, stream));
      if (r) cub_select.push_back(t.stop_us()); else t.stop_us();
      check(c == (long long)hpos.size(), "CUB select count", n, (double)c, (double)hpos.size());
    }
    for (int k = 0; k < CALLS; ++k) {
      const double peer = k == SCAN || k == SCAN2 ? median(cub_scan) : k == FINDALL ? median(cub_select) : 0;
      if (peer > 0) printf("%-13s %9lld %10.2f %10.2f\n", names[k], n, median(us[k]), peer);
      else printf("%-13s %9lld %10.2f %10s\n", names[k], n, median(us[k]), "-");
    }
    cudaFree(tmp);
    cudaFree(src), cudaFree(dst), cudaFree(outs), cudaFree(flags), cudaFree(idx), cudaFree(cub_out);
    cudaFree(cub_count);
  }
  akx_context_destroy(ctx);
  cudaStreamDestroy(stream);
  printf("akx_mixed_probe: %s (%d failed checks)\n", failures ? "FAILED" : "passed", failures);
  return failures ? 1 : 0;
}
