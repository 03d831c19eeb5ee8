// The device programming model every kernel in kernels/ is written against.
//
// Under nvcc this is CUDA itself: plain shared arrays, plain or vector global loads.
// Under the host compiler it is the sim (kernels/akx/sim_device.hpp): the same names, run on
// fibers, with every shared and global access going through the helpers below so the sim
// can check races and bounds and count bank wavefronts and sectors per warp request.
//
// Rules for kernel code (so both compilers see the same program):
//  - shared memory only through AKX_SHARED / AKX_SHARED_DYNAMIC and smem<T>::ld / st (one
//    element) or ld_vec / st_vec (8 or 16 bytes of consecutive elements in one instruction,
//    aligned to their size: say where the GPU should move several words at once);
//  - global memory only through gld / gst / gld_vec, the ordered accesses (ld_acquire,
//    st_release, ld_volatile, st_volatile) and atomics;
//  - warp collectives only through the *_sync intrinsics or akx::shfl_* below, with a mask
//    naming every participating lane (Volta+ does not run a warp in lockstep);
//  - launches only through AKX_LAUNCH, which returns an akx_status; a kernel declares a
//    kernel_info (launch bounds, registers, loads in flight, shared opt-in) beside itself,
//    is compiled with AKX_LAUNCH_BOUNDS(info.max_threads) (kernels/akx/block_limits.h) and
//    launched with its info.
// Between blocks (a GPU promises neither the order in which blocks start nor that a block
// runs while another waits for it):
//  - a kernel whose progress depends on other blocks (look-back, last-block finish) takes
//    its tile from an atomic ticket (atomicAdd on a counter that is 0 when the call starts:
//    the block drawing the last ticket puts it back), never from blockIdx: a block may be
//    resident and waiting while the block it waits for has not been admitted (the sim
//    admits blocks in a shuffled order under AKX_SIM_SCHEDULE=random);
//  - data goes from one block to another only through a release->acquire chain: the writer
//    stores its data, then st_release(flag) (or __threadfence() then a relaxed flag write:
//    st_volatile or an atomic); the reader ld_acquire(flag) (or a relaxed read then
//    __threadfence()) before it reads the data. A plain store becomes visible to other
//    blocks only at its block's next fence or release; the sim reports a plain read without
//    the chain as a global-memory race, and a poll that can never see a change as a livelock;
//  - a launch may start before the kernel before it in the stream has ended (programmatic
//    dependent launch, sm_90+: the backends launch every kernel so where the device has it,
//    unless AKX_PDL=0): every kernel calls grid_dependency_wait() before its first global
//    access (that kernel may still be writing the source, dst or the workspace; the wait
//    returns once it has ended and its stores are visible), then grid_dependents_launch()
//    (the kernel after it may be scheduled once every block of this one has called it or
//    ended: all of them are resident by then, so its waiting blocks take no slot one of
//    ours needs). The sim fails a PDL launch's global access made before the wait;
//  - status words that say "not ready" must not be mistaken for an earlier call's: the
//    workspace holds the last call's flags, or bytes no call of the family wrote (a caller's
//    buffer too small for two families' tags, an interrupted call; the sim fills what the host
//    does not know with poison). They carry the call's epoch and live where no other family
//    writes (src/core/workspace.c, "The regions"), and the host resets them whenever they may
//    hold anything else (kernels/akx/lookback.cuh).
#pragma once
#include "akx/std.cuh"
#include "akx.h"

// A constexpr function that kernels call (the dtype rules, kernel_info_of). nvcc calls a plain
// constexpr function from device code (--expt-relaxed-constexpr, CMakeLists.txt); NVRTC
// refuses any function not marked __device__, a constexpr one too.
#if defined(__CUDACC_RTC__)
#define AKX_CONSTEXPR __host__ __device__ constexpr
#else
#define AKX_CONSTEXPR constexpr
#endif

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
  // Registers per thread: the kernel's class, a bound on every prebuilt instance of it, which
  // the kernel_resources test checks against what ptxas built for sm_90 in every CUDA build
  // (bench/kernel_resources.py: an instance above it, or any spill, fails), and which the sim's
  // occupancy and model take as the kernel's figure. A multiple of 8: the GPU allocates a
  // warp's registers 256 at a time.
  int registers;
  // Independent global loads a thread has in flight before it uses the first (the model's
  // bytes in flight, Little's law).
  int loads_in_flight;
  // Dynamic shared memory above 48 KiB: the CUDA backend sets
  // cudaFuncAttributeMaxDynamicSharedMemorySize before such a launch; without the opt-in
  // the launch is refused, as the driver refuses it.
  bool smem_optin;
  // The kernel function's key in the family list (src/core/families.h, its kernels' K rows)
  // where it differs from `name` (one kernel launched under several names: reduce_dims_tile
  // serves four shapes): the one its registers are checked under.
  const char *function = nullptr;
};
AKX_CONSTEXPR kernel_info kernel_info_of(const char *name) { return kernel_info{name, 1024, 32, 1, false}; }
AKX_CONSTEXPR kernel_info kernel_info_of(const kernel_info &k) { return k; }
// A launch's declaration with the loads its instance keeps in flight, where they depend on the
// instance (its accumulator's size) or the launch (a tile's items per thread): batch, or
// `most` when fewer.
AKX_CONSTEXPR kernel_info with_loads_in_flight(kernel_info k, int batch, int32_t most) {
  k.loads_in_flight = batch < most ? batch : most;
  return k;
}
}  // namespace akx

#if defined(__CUDACC__)
// ------------------------------------------------------------------------------ CUDA ---
// (NVRTC too: it defines __CUDACC__ and __CUDACC_RTC__, and has the CUDA built-ins without
// <cuda_runtime.h>.)
#if !defined(__CUDACC_RTC__)
#include <cuda_runtime.h>
#endif
#define AKX_DEVICE __device__ __forceinline__
// The library's own host-device functions: defined in headers, so inline on every backend,
// and forced inline on CUDA (the prebuilt kernels were built and measured so).
#define AKX_HD_INLINE __host__ __device__ __forceinline__
// The mark of a user's host-device function (a user op's source, a functor for
// include/akx.cuh): an attribute only, as CUB's _CCCL_HOST_DEVICE is, so that `AKX_HD inline`
// and CUDA's own `__host__ __device__ inline` compile alike.
#define AKX_HD __host__ __device__
// A helper kept out of line: one copy per translation unit serves every kernel that calls it
// (the finishing step's switch over 15 dst dtypes, called once per block).
#define AKX_DEVICE_OUTLINE __device__ __noinline__
#define AKX_GLOBAL __global__
// An entry of a translation unit of kernels (the *_instances.inl files): libakx calls it by name.
#define AKX_MODULE_EXPORT extern "C"
#define AKX_LAUNCH_BOUNDS(max_threads) __launch_bounds__(max_threads)
#define AKX_LAUNCH_BOUNDS_MIN(max_threads, min_blocks) __launch_bounds__(max_threads, min_blocks)
#define AKX_SITE_PARAM
#define AKX_SITE_ARG

namespace akx {
template <class T>
struct smem {
  T *p;
  AKX_DEVICE T ld(int64_t i) const { return p[i]; }
  AKX_DEVICE void st(int64_t i, const T &v) const { p[i] = v; }
  // Elements [i, i + N) as one LDS.64 / LDS.128 (the sim checks that i * sizeof(T) is a
  // multiple of the vector's size: the GPU faults otherwise).
  template <int N>
  AKX_DEVICE vec<T, N> ld_vec(int64_t i) const {
    static_assert(N * sizeof(T) == 8 || N * sizeof(T) == 16, "ld_vec of 8 or 16 bytes");
    return *reinterpret_cast<const vec<T, N> *>(p + i);
  }
  template <int N>
  AKX_DEVICE void st_vec(int64_t i, const vec<T, N> &v) const {
    static_assert(N * sizeof(T) == 8 || N * sizeof(T) == 16, "st_vec of 8 or 16 bytes");
    *reinterpret_cast<vec<T, N> *>(p + i) = v;
  }
};

// A bool in memory is any byte, nonzero true (what numpy and Julia hand over need not be 0/1):
// loads read the byte, so that 2 & 1 is true.
template <class T>
AKX_DEVICE T gld(const T *p) {
  if constexpr (is_same<T, bool>::value) return *reinterpret_cast<const unsigned char *>(p) != 0;
  else return *p;
}
template <class T>
AKX_DEVICE void gst(T *p, const T &v) { *p = v; }
// p must be aligned to sizeof(vec<T, N>); the load is one 2/4/8/16-byte instruction.
template <class T, int N>
AKX_DEVICE vec<T, N> gld_vec(const T *p) {
  if constexpr (is_same<T, bool>::value) {
    const vec<unsigned char, N> b = *reinterpret_cast<const vec<unsigned char, N> *>(p);
    vec<bool, N> v;
#pragma unroll
    for (int j = 0; j < N; ++j) v.v[j] = b.v[j] != 0;
    return v;
  } else {
    return *reinterpret_cast<const vec<T, N> *>(p);
  }
}

// Device-scope acquire load / release store of 4- or 8-byte words: PTX's ld.acquire.gpu /
// st.release.gpu (sm_70+), what cuda::atomic_ref<T, cuda::thread_scope_device> compiles to,
// without libcu++ in every kernel's includes. The "memory" clobber keeps the compiler from
// moving other accesses across them.
template <class T>
AKX_DEVICE T ld_acquire(const T *p) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "ld_acquire of 4- or 8-byte words");
  T v;
  if constexpr (sizeof(T) == 4) {
    uint32_t w;
    asm volatile("ld.acquire.gpu.b32 %0, [%1];" : "=r"(w) : "l"(p) : "memory");
    memcpy(&v, &w, sizeof v);
  } else {
    uint64_t w;
    asm volatile("ld.acquire.gpu.b64 %0, [%1];" : "=l"(w) : "l"(p) : "memory");
    memcpy(&v, &w, sizeof v);
  }
  return v;
}
template <class T>
AKX_DEVICE void st_release(T *p, const T &v) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "st_release of 4- or 8-byte words");
  if constexpr (sizeof(T) == 4) {
    uint32_t w;
    memcpy(&w, &v, sizeof w);
    asm volatile("st.release.gpu.b32 [%0], %1;" ::"l"(p), "r"(w) : "memory");
  } else {
    uint64_t w;
    memcpy(&w, &v, sizeof w);
    asm volatile("st.release.gpu.b64 [%0], %1;" ::"l"(p), "l"(w) : "memory");
  }
}

// Volatile (relaxed, never cached in a register) accesses of at most 16 bytes, word by word
// in the widest words that both the size and the alignment of T allow (a 4- or 8-byte scalar:
// one access), as the sim's ld_volatile / st_volatile take them.
template <class T>
struct volatile_word {
  static constexpr size_t g = (sizeof(T) | alignof(T)) & (~(sizeof(T) | alignof(T)) + 1);
  using type = typename conditional<
      g >= 8, uint64_t,
      typename conditional<g == 4, uint32_t,
                           typename conditional<g == 2, uint16_t, uint8_t>::type>::type>::type;
};
template <class T>
AKX_DEVICE T ld_volatile(const T *p) {
  static_assert(sizeof(T) <= 16 && is_trivially_copyable<T>::value,
                "ld_volatile of at most 16 bytes");
  using W = typename volatile_word<T>::type;
  constexpr int n = int(sizeof(T) / sizeof(W));
  const volatile W *q = reinterpret_cast<const volatile W *>(p);
  W w[n];
#pragma unroll
  for (int i = 0; i < n; ++i) w[i] = q[i];
  T v;
  memcpy(&v, w, sizeof v);
  return v;
}
template <class T>
AKX_DEVICE void st_volatile(T *p, const T &v) {
  static_assert(sizeof(T) <= 16 && is_trivially_copyable<T>::value,
                "st_volatile of at most 16 bytes");
  using W = typename volatile_word<T>::type;
  constexpr int n = int(sizeof(T) / sizeof(W));
  volatile W *q = reinterpret_cast<volatile W *>(p);
  W w[n];
  memcpy(w, &v, sizeof v);
#pragma unroll
  for (int i = 0; i < n; ++i) q[i] = w[i];
}

// Programmatic dependent launch (sm_90+; PTX's griddepcontrol, what the runtime's
// cudaGridDependencySynchronize / cudaTriggerProgrammaticLaunchCompletion compile to). Older
// architectures have no such launch: both are nothing there.
AKX_DEVICE void grid_dependency_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
AKX_DEVICE void grid_dependents_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}
}  // namespace akx

// Storage is raw bytes: __shared__ variables cannot have constructors.
#define AKX_SHARED(T, name, N)                                              \
  __shared__ alignas(16) unsigned char name##_bytes_[sizeof(T) * (N)];    \
  const ::akx::smem<T> name { reinterpret_cast<T *>(name##_bytes_) }
#define AKX_SHARED_DYNAMIC(T, name)                                         \
  extern __shared__ __align__(16) unsigned char akx_dynamic_smem_[];       \
  const ::akx::smem<T> name { reinterpret_cast<T *>(akx_dynamic_smem_) }

// Launches are host code: NVRTC compiles kernels alone, and a run-time module's kernels are
// launched through the driver API.
#if !defined(__CUDACC_RTC__)
#include "akx/fail.h"
// src/cuda/backend_cuda.cu. Before a launch, what the sim's run_kernel checks of the kernel's
// declaration: a block above its launch bounds, dynamic shared memory above 48 KiB without the
// opt-in or above the kernel's attribute are refused (AKX_ERROR_INVALID_ARGUMENT naming the
// kernel; the driver's own refusal names neither the kernel nor the reason). The kernel's
// attributes are read and its opt-in attribute set once per (kernel, device) in the process
// (src/core/launch_rules.h). *pdl: whether this launch is a programmatic dependent launch,
// decided by the kernel's image (akx__launch_pdl). Counts the launch that follows as a CUDA API
// call (src/cuda/api_calls.h).
extern "C" akx_status akx__cuda_prepare_launch(const void *kernel, const char *kernel_name,
                                               int max_threads, int smem_optin,
                                               unsigned threads, size_t smem_bytes, int *pdl);

namespace akx {
// A cudaLaunchKernelEx configuration, with programmatic stream serialization when `pdl` (what
// akx__cuda_prepare_launch decided for this kernel): the kernel may start while the one before
// it in the stream ends, and waits for it (grid_dependency_wait) before its first global
// access. Not copyable: config points at attr.
struct launch_config {
  cudaLaunchAttribute attr[1];
  cudaLaunchConfig_t config;
  launch_config(dim3 grid, dim3 block, size_t smem_bytes, cudaStream_t stream, int pdl) : attr{}, config{} {
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    config.gridDim = grid;
    config.blockDim = block;
    config.dynamicSmemBytes = smem_bytes;
    config.stream = stream;
    config.attrs = attr;
    config.numAttrs = pdl ? 1 : 0;
  }
  launch_config(const launch_config &) = delete;
  launch_config &operator=(const launch_config &) = delete;
};

// What a launch through cudaLaunchKernelEx (or ExC) returns as a status. The call returns the
// launch's own error, so the runtime's last error is read only to take that error back; a
// pending error the caller left there before the call is the caller's and stays.
inline akx_status launch_status(const char *kernel_name, cudaError_t e) {
  if (e == cudaSuccess) return AKX_SUCCESS;
  (void)cudaGetLastError();
  return akx__fail(AKX_ERROR_DEVICE, "kernel %s failed to launch: %s (%s)", kernel_name, cudaGetErrorString(e),
                   cudaGetErrorName(e));
}

// AKX_LAUNCH's two halves: the configuration (checked, then launched by operator()) and the
// kernel's arguments, so that an empty argument list needs no __VA_OPT__.
template <class... P>
struct cuda_launch {
  void (*kernel)(P...);
  kernel_info info;
  dim3 grid, block;
  size_t smem_bytes;
  cudaStream_t stream;
  template <class... A>
  akx_status operator()(A &&...args) const {
    int pdl = 0;
    const akx_status s = akx__cuda_prepare_launch(
        reinterpret_cast<const void *>(kernel), info.name, info.max_threads, info.smem_optin,
        block.x * block.y * block.z, smem_bytes, &pdl);
    if (s != AKX_SUCCESS) return s;
    launch_config c(grid, block, smem_bytes, stream, pdl);
    return launch_status(info.name, cudaLaunchKernelEx(&c.config, kernel, static_cast<A &&>(args)...));
  }
};
template <class... P>
cuda_launch<P...> make_cuda_launch(const kernel_info &info, void (*kernel)(P...), dim3 grid,
                                   dim3 block, size_t smem_bytes, cudaStream_t stream) {
  return cuda_launch<P...>{kernel, info, grid, block, smem_bytes, stream};
}
}  // namespace akx

// info: the kernel's kernel_info, or a string naming a kernel with the defaults; k: a kernel
// (function pointer or template-id in parens).
#define AKX_LAUNCH(info, k, grid, block, smem_bytes, stream, ...)                             \
  ::akx::make_cuda_launch(::akx::kernel_info_of(info), (k), dim3(grid), dim3(block),          \
                          (size_t)(smem_bytes), (cudaStream_t)(stream))(__VA_ARGS__)
#endif  // !__CUDACC_RTC__

#else
// ------------------------------------------------------------------------------- sim ---
#include "akx/sim_device.hpp"
#endif

// ---- bounded polls (debug builds) ------------------------------------------------------------
// A block polling for a flag another block sets waits forever on a GPU if the flag never
// comes: a kernel bug, or a workspace whose status words another call reset mid-launch
// (src/core/workspace.c refuses two contexts one caller workspace). The GPU then hangs, and
// with it every later call on the device. In debug builds of the CUDA backend, NDEBUG not
// defined (CMake's Debug configuration: the `debug` preset), every poll loop times its
// polls and after poll_limit_ns of them prints where it waited and executes __trap(): the launch
// fails (cudaErrorLaunchFailure, reported by the next synchronizing call) instead of hanging.
// The bound is a time, read from the GPU's global nanosecond timer (PTX %globaltimer) every
// 1024 polls: a count of polls would mean anything from milliseconds to minutes, depending on
// the backoff and on how many blocks poll at once. 20 s is far past any wait on a predecessor
// that runs (tiles come from an atomic ticket, so every awaited block is resident; a wait on a
// kernel before it in the stream ends when that kernel does), and short enough that a hang is
// reported rather than taken for a slow call.
// On the sim the livelock report (src/sim/global_order.cpp) stops such a poll in every build,
// so poll_bound counts nothing there, and cannot give up before that report.
#if defined(__CUDACC__) && !defined(NDEBUG)
#define AKX_BOUNDED_POLLS 1
#if !defined(__CUDACC_RTC__)  // NVRTC has printf built in
#include <stdio.h>
#endif
#else
#define AKX_BOUNDED_POLLS 0
#endif

namespace akx {
constexpr uint64_t poll_limit_ns = 20ull * 1000 * 1000 * 1000;

#if AKX_BOUNDED_POLLS
AKX_DEVICE uint64_t global_timer_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
#endif

struct poll_bound {
#if AKX_BOUNDED_POLLS
  uint32_t polls = 0;
  uint64_t start = 0;
#endif
  // One more poll of `addr` that found nothing; `what` names the loop.
  AKX_DEVICE void step(const void *addr, const char *what) {
#if AKX_BOUNDED_POLLS
    if ((polls++ & 1023u) != 0) return;
    const uint64_t now = global_timer_ns();
    if (polls == 1) {
      start = now;
    } else if (now - start > poll_limit_ns) {
      printf("libakx (debug build): %s: block (%u,%u,%u) thread %u polled %p for %llu s (%u polls) and "
             "it never changed; trapping instead of hanging (kernels/akx/device.cuh, poll_bound)\n",
             what, blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x, addr,
             (unsigned long long)((now - start) / 1000000000ull), polls);
      __trap();
    }
#else
    (void)addr;
    (void)what;
#endif
  }
};

// In debug builds of the CUDA backend, a broken invariant of a kernel's status words (a
// ticket past the tile count: another call reset the header mid-launch) traps with `what`,
// as poll_bound does; elsewhere nothing (the sim's bounds checks and livelock report).
AKX_DEVICE void debug_trap_if(bool broken, const char *what) {
#if AKX_BOUNDED_POLLS
  if (broken) {
    printf("libakx (debug build): block (%u,%u,%u) thread %u: %s; trapping (kernels/akx/device.cuh)\n",
           blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x, what);
    __trap();
  }
#else
  (void)broken;
  (void)what;
#endif
}
}  // namespace akx

namespace akx {
// A T moved in one instruction: a struct whose alignment is below its size (complex64 and
// complex128: two 4- or 8-byte parts) is otherwise loaded part by part, two requests of half
// width at twice the stride, which doubles a warp's sectors (global) or bank wavefronts
// (shared). wide<T> has T's size and an alignment equal to it (sizes 2..16).
template <class T>
constexpr size_t wide_align_v =
    (sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8 || sizeof(T) == 16) ? sizeof(T) : alignof(T);
template <class T>
struct alignas(wide_align_v<T>) wide {
  T v;
};
// Global accesses of one element in one instruction where its address allows (a view of a
// complex128 array may start at an odd multiple of 8 bytes: then part by part).
template <class T>
AKX_DEVICE T gld_wide(const T *p AKX_SITE_PARAM) {
  if constexpr (wide_align_v<T> > alignof(T)) {
    if ((uintptr_t)p % wide_align_v<T> == 0)
      return gld(reinterpret_cast<const wide<T> *>(p) AKX_SITE_ARG).v;
  }
  return gld(p AKX_SITE_ARG);
}
template <class T>
AKX_DEVICE void gst_wide(T *p, const T &v AKX_SITE_PARAM) {
  if constexpr (wide_align_v<T> > alignof(T)) {
    if ((uintptr_t)p % wide_align_v<T> == 0) {
      gst(reinterpret_cast<wide<T> *>(p), wide<T>{v} AKX_SITE_ARG);
      return;
    }
  }
  gst(p, v AKX_SITE_ARG);
}
}  // namespace akx

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
