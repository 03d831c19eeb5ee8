/* What the CUDA probes of bench/gpu_check.sh share (tests/cuda/): a line and exit code 77
 * where there is no CUDA device (ctest counts it as skipped, the suite still passes), checks
 * that stop the program with the failing call's sentence, and a steady clock. Each probe prints
 * what it checked and exits 0 when every check held, 1 when one did not. C and CUDA C++. */
#ifndef AKX_TEST_CUDA_PROBE_H
#define AKX_TEST_CUDA_PROBE_H
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "akx.h"

#define PROBE_SKIP 77

/* A CUDA runtime call that must succeed. */
#define PROBE_CUDA(call)                                                                     \
  do {                                                                                       \
    const cudaError_t probe_e_ = (call);                                                     \
    if (probe_e_ != cudaSuccess) {                                                           \
      fprintf(stderr, "%s:%d: %s: %s (%s)\n", __FILE__, __LINE__, #call,                     \
              cudaGetErrorString(probe_e_), cudaGetErrorName(probe_e_));                     \
      exit(1);                                                                               \
    }                                                                                        \
  } while (0)

/* A libakx call that must succeed. */
#define PROBE_AKX(call)                                                                      \
  do {                                                                                       \
    const akx_status probe_s_ = (call);                                                      \
    if (probe_s_ != AKX_SUCCESS) {                                                           \
      fprintf(stderr, "%s:%d: %s: %s: %s\n", __FILE__, __LINE__, #call,                      \
              akx_status_string(probe_s_), akx_last_error());                                \
      exit(1);                                                                               \
    }                                                                                        \
  } while (0)

/* Exits with PROBE_SKIP and a line saying so when no CUDA device can be used. */
static inline void probe_need_device(const char *probe) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count < 1) {
    printf("%s: skipped: no CUDA device (%s)\n", probe,
           e != cudaSuccess ? cudaGetErrorName(e) : "none found");
    exit(PROBE_SKIP);
  }
}

static inline double probe_now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

/* The device's compute capability, as a CUDA context of libakx reports it. */
static inline akx_context_info_t probe_info(const akx_context *ctx) {
  akx_context_info_t info;
  PROBE_AKX(akx_context_info(ctx, &info));
  return info;
}

#endif
