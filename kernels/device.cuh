// The device programming model every kernel in kernels/ is written against.
//
// Under nvcc this is CUDA itself: plain shared arrays, plain or vector global loads.
// Under the host compiler it is the sim (src/sim/sim_device.hpp): the same names, run on
// fibers, with every shared and global access going through the helpers below so the sim
// can check races and bounds and count bank wavefronts and sectors per warp request.
//
// Rules for kernel code (so both compilers see the same program):
//  - shared memory only through AKX_SHARED / AKX_SHARED_DYNAMIC and smem<T>::ld / st;
//  - global memory only through gld / gst / gld_vec, the ordered accesses (ld_acquire,
//    st_release, ld_volatile, st_volatile) and atomics;
//  - warp collectives only through the *_sync intrinsics or akx::shfl_* below, with a mask
//    naming every participating lane (Volta+ does not run a warp in lockstep);
//  - launches only through AKX_LAUNCH, which returns an akx_status; a kernel declares a
//    kernel_info (launch bounds, registers, loads in flight, shared opt-in) beside itself,
//    is compiled with AKX_LAUNCH_BOUNDS(info.max_threads) and launched with its info.
// Between blocks (a GPU promises neither the order in which blocks start nor that a block
// runs while another waits for it):
//  - a kernel whose progress depends on other blocks (look-back, last-block finish) takes
//    its tile from an atomic ticket (atomicAdd on a counter the call resets), never from
//    blockIdx: a block may be resident and waiting while the block it waits for has not been
//    admitted (the sim admits blocks in a shuffled order under AKX_SIM_SCHEDULE=random);
//  - data goes from one block to another only through a release->acquire chain: the writer
//    stores its data, then st_release(flag) (or __threadfence() then a relaxed flag write:
//    st_volatile or an atomic); the reader ld_acquire(flag) (or a relaxed read then
//    __threadfence()) before it reads the data. A plain store becomes visible to other
//    blocks only at its block's next fence or release; the sim reports a plain read without
//    the chain as a global-memory race, and a poll that can never see a change as a livelock;
//  - status words that say "not ready" live in a workspace the call itself resets: the cached
//    workspace holds the last call's flags (the sim fills new memory with poison).
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <limits>
#include <type_traits>
#include "akx.h"

namespace akx {
// A vector of N elements of T, N * sizeof(T) in {2, 4, 8, 16}: the unit of a vector load.
template <class T, int N>
struct alignas(sizeof(T) * N) vec {
  T v[N];
};

// What a launch must know of its kernel beyond its code; declared beside the kernel and
// passed to AKX_LAUNCH in place of a name. A plain string names a kernel with the defaults.
struct kernel_info {
  const char *name;
  // The kernel's launch bounds: the kernel is compiled with AKX_LAUNCH_BOUNDS(max_threads)
  // and a launch with a larger block is refused (by the sim and the CUDA backend alike).
  int max_threads;
  // Registers per thread, for the sim's occupancy and model: the sm_90 figure ptxas reports
  // (bench/gpu_check.sh prints cudaFuncGetAttributes' numRegs to compare), or an estimate.
  int registers;
  // Independent global loads a thread has in flight before it uses the first (the model's
  // bytes in flight, Little's law).
  int loads_in_flight;
  // Dynamic shared memory above 48 KiB: the CUDA backend sets
  // cudaFuncAttributeMaxDynamicSharedMemorySize before such a launch; without the opt-in
  // the launch is refused, as the driver refuses it.
  bool smem_optin;
};
constexpr kernel_info kernel_info_of(const char *name) { return kernel_info{name, 1024, 32, 1, false}; }
constexpr kernel_info kernel_info_of(const kernel_info &k) { return k; }
}  // namespace akx

#if defined(__CUDACC__)
// ------------------------------------------------------------------------------ CUDA ---
#include <cuda_runtime.h>
#define AKX_DEVICE __device__ __forceinline__
#define AKX_HD __host__ __device__ __forceinline__
#define AKX_GLOBAL __global__
#define AKX_LAUNCH_BOUNDS(max_threads) __launch_bounds__(max_threads)
#define AKX_SITE_PARAM
#define AKX_SITE_ARG

namespace akx {
template <class T>
struct smem {
  T *p;
  AKX_DEVICE T ld(int64_t i) const { return p[i]; }
  AKX_DEVICE void st(int64_t i, const T &v) const { p[i] = v; }
};

template <class T>
AKX_DEVICE T gld(const T *p) { return *p; }
template <class T>
AKX_DEVICE void gst(T *p, const T &v) { *p = v; }
// p must be aligned to sizeof(vec<T, N>); the load is one 2/4/8/16-byte instruction.
template <class T, int N>
AKX_DEVICE vec<T, N> gld_vec(const T *p) {
  return *reinterpret_cast<const vec<T, N> *>(p);
}
}  // namespace akx

// Storage is raw bytes: __shared__ variables cannot have constructors.
#define AKX_SHARED(T, name, N)                                              \
  __shared__ alignas(16) unsigned char name##_bytes_[sizeof(T) * (N)];    \
  const ::akx::smem<T> name { reinterpret_cast<T *>(name##_bytes_) }
#define AKX_SHARED_DYNAMIC(T, name)                                         \
  extern __shared__ alignas(16) unsigned char akx_dynamic_smem_[];         \
  const ::akx::smem<T> name { reinterpret_cast<T *>(akx_dynamic_smem_) }

extern "C" akx_status akx__cuda_check_launch(const char *kernel_name);
// name: a string for error messages; k: a kernel (function pointer or template-id in parens).
#define AKX_LAUNCH(name, k, grid, block, smem_bytes, stream, ...)                        \
  ((k)<<<(grid), (block), (smem_bytes), (cudaStream_t)(stream)>>>(__VA_ARGS__),          \
   akx__cuda_check_launch(name))

#else
// ------------------------------------------------------------------------------- sim ---
#include "../src/sim/sim_device.hpp"
#endif

namespace akx {
constexpr unsigned FULL_MASK = 0xffffffffu;

// Shuffles of any trivially copyable T, word by word (CUDA's intrinsics take 4/8-byte
// scalars only; accumulators here may be complex or 2-byte floats).
template <class T>
AKX_DEVICE T shfl_down(unsigned mask, const T &v, int delta, int width = 32 AKX_SITE_PARAM) {
  constexpr int W = (sizeof(T) + 3) / 4;
  uint32_t w[W] = {};
  memcpy(w, &v, sizeof(T));
#pragma unroll
  for (int i = 0; i < W; ++i) w[i] = __shfl_down_sync(mask, w[i], delta, width AKX_SITE_ARG);
  T r;
  memcpy(&r, w, sizeof(T));
  return r;
}
template <class T>
AKX_DEVICE T shfl_idx(unsigned mask, const T &v, int src_lane, int width = 32 AKX_SITE_PARAM) {
  constexpr int W = (sizeof(T) + 3) / 4;
  uint32_t w[W] = {};
  memcpy(w, &v, sizeof(T));
#pragma unroll
  for (int i = 0; i < W; ++i) w[i] = __shfl_sync(mask, w[i], src_lane, width AKX_SITE_ARG);
  T r;
  memcpy(&r, w, sizeof(T));
  return r;
}
template <class T>
AKX_DEVICE T shfl_up(unsigned mask, const T &v, int delta, int width = 32 AKX_SITE_PARAM) {
  constexpr int W = (sizeof(T) + 3) / 4;
  uint32_t w[W] = {};
  memcpy(w, &v, sizeof(T));
#pragma unroll
  for (int i = 0; i < W; ++i) w[i] = __shfl_up_sync(mask, w[i], delta, width AKX_SITE_ARG);
  T r;
  memcpy(&r, w, sizeof(T));
  return r;
}
}  // namespace akx
