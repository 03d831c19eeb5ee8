// The sim's side of kernels/akx/device.cuh: CUDA's device names for code compiled by the host
// compiler. Each CUDA thread is a fiber; a block's fibers run on one OS thread; barriers,
// warp collectives and votes are rendezvous points of the fibers they name.
//
// Every shared access (smem<T>::ld / st) and global access (gld / gst / gld_vec / atomics)
// reports to the runtime with its source location (the access site), so that the runtime
// can check races and bounds, and group the accesses of a warp's lanes into requests.
// Implemented in src/sim/*.cpp.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <source_location>
#include <tuple>
#include <type_traits>
#include <utility>
#include "akx.h"

#define AKX_DEVICE inline
// The library's own host-device functions and a user's mark (kernels/akx/device.cuh).
#define AKX_HD_INLINE inline
#define AKX_HD
#define AKX_DEVICE_OUTLINE __attribute__((noinline))
#define AKX_GLOBAL
#define AKX_LAUNCH_BOUNDS(max_threads)
#define AKX_LAUNCH_BOUNDS_MIN(max_threads, min_blocks)
// For device helpers that take their caller's source location down to the accesses and
// collectives they make (empty under nvcc): `T f(T v AKX_SITE_PARAM)` and
// `smem.ld(i AKX_SITE_ARG)`.
#define AKX_SITE_PARAM , const ::akx::sim::site &akx_site_ = ::akx::sim::site::current()
#define AKX_SITE_ARG , akx_site_

struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

namespace akx {
namespace sim {
using site = std::source_location;

// The state a kernel's code sees of its own thread; the runtime points `lane_now` at the
// running fiber's before every switch into it.
struct thread_view {
  dim3 threadIdx, blockIdx, blockDim, gridDim;
};

// ---- the runtime's entries (src/sim/*.cpp), as kernel code calls them -----------------------
// One list, so that libakx's own kernels call them directly and a kernel module compiled at
// run time (src/jit/sim_module.cpp, AKX_SIM_MODULE defined) calls the same ones through the
// table libakx hands it at load: a module imports no symbol from libakx, which exports only
// akx_*. X(return type, name, parameters, arguments).
//
// shared_access: `base` is the start of the smem<T> object's storage, `offset` the byte
// offset of the access within it, `bytes` the access size; `limit` the storage's bytes.
// Returns normally only if the access is allowed (else the fiber is abandoned and the launch
// fails with AKX_ERROR_SIM_CHECK). `alignment` is alignof the accessed type (0: that of a
// `bytes`-sized scalar): a GPU moves a type in instructions of at most that many bytes (a
// struct of two doubles: two 8-byte loads), which is what the counters count; the access
// must start at a multiple of it. A load of bytes no thread of the running block has stored
// is a failure (initcheck).
// global_access: `bytes` at `p`, which must be aligned to `alignment` (alignof the accessed
// type; a vec<T, N> is aligned to its size; 0: that of a `bytes`-sized scalar). `ordered`: an
// acquire/release or volatile access (exempt from the global racecheck).
// shared_static: the running block's allocation of one AKX_SHARED declaration (its source
// location: one declaration in one function, so one per template instance), shared by all
// its threads as a __shared__ variable is; a declaration in a loop or in a function called
// twice is the same storage each time. They are laid out one after the other, 16-byte
// aligned, in the order threads first reach them.
// shared_dynamic: the dynamic shared memory of the launch (its smem_bytes), at the start of
// the block's arena, before the static allocations.
// Collectives (core, word-sized; the CUDA-named templates below call these): shfl, vote,
// syncwarp, syncthreads, activemask.
// Global-memory ordering (global_order.cpp): plain stores of a block become visible to other
// blocks at a fence, a release or the block's end; a plain load of a word another block
// stored in the same launch needs a release->acquire (or fence+relaxed ... relaxed+fence)
// chain from that store. Atomics, acquire/release and volatile accesses are exempt from the
// race check and are yield points. sync_load loads `bytes` (<= 16) at p into out as another
// block would see it now; atomic_begin / atomic_end bracket a read-modify-write (checks and
// yields; old and new bytes); plain_load_done follows a plain load's read (a plain-load spin
// is a poll).
// lane: the running fiber's view of its thread (threadIdx, ... below).
// fail_text: akx__fail's sentence, formatted by the caller (a module formats its own).
enum shfl_kind { SHFL_IDX, SHFL_UP, SHFL_DOWN, SHFL_XOR };
enum vote_kind { VOTE_BALLOT, VOTE_ANY, VOTE_ALL };
enum bar_kind { BAR_PLAIN, BAR_COUNT, BAR_AND, BAR_OR };
enum sync_load_kind { LOAD_ACQUIRE, LOAD_VOLATILE };
enum sync_store_kind { STORE_RELEASE, STORE_VOLATILE };
enum fence_scope { FENCE_BLOCK, FENCE_DEVICE };
struct launch_desc;
#define AKX_SIM_RUNTIME(X)                                                                     \
  X(void, shared_access, (const void *base, size_t limit, int64_t offset, unsigned bytes,      \
                          bool write, const site &s, unsigned alignment),                      \
    (base, limit, offset, bytes, write, s, alignment))                                         \
  X(void, global_access, (const void *p, unsigned bytes, bool write, bool atomic,             \
                          const site &s, unsigned alignment, bool ordered),                    \
    (p, bytes, write, atomic, s, alignment, ordered))                                          \
  X(void *, shared_static, (size_t bytes, const char *name, const site &s), (bytes, name, s))  \
  X(void *, shared_dynamic, (size_t *bytes, const site &s), (bytes, s))                        \
  X(uint64_t, shfl, (unsigned mask, uint64_t v, shfl_kind k, int arg, int width,              \
                     const site &s), (mask, v, k, arg, width, s))                              \
  X(unsigned, vote, (unsigned mask, int pred, vote_kind k, const site &s), (mask, pred, k, s)) \
  X(void, syncwarp, (unsigned mask, const site &s), (mask, s))                                 \
  X(int, syncthreads, (int pred, bar_kind k, const site &s), (pred, k, s))                     \
  X(unsigned, activemask, (), ())                                                              \
  X(void, sync_load, (const void *p, unsigned bytes, unsigned alignment, void *out,           \
                      sync_load_kind k, const site &s), (p, bytes, alignment, out, k, s))      \
  X(void, sync_store, (void *p, unsigned bytes, unsigned alignment, const void *in,           \
                       sync_store_kind k, const site &s), (p, bytes, alignment, in, k, s))     \
  X(void, atomic_begin, (void *p, unsigned bytes, unsigned alignment, const site &s),         \
    (p, bytes, alignment, s))                                                                  \
  X(void, atomic_end, (void *p, unsigned bytes, const void *old_bytes, const void *new_bytes, \
                       const site &s), (p, bytes, old_bytes, new_bytes, s))                    \
  X(void, plain_load_done, (const void *p, unsigned bytes, const void *value, const site &s), \
    (p, bytes, value, s))                                                                      \
  X(void, fence, (fence_scope scope, const site &s), (scope, s))                               \
  X(void, grid_dependency, (bool launch_dependents, const site &s), (launch_dependents, s))   \
  X(void, nanosleep_yield, (), ())                                                             \
  X(akx_status, run_kernel, (const launch_desc &d, void (*fn)(void *), void *closure),        \
    (d, fn, closure))                                                                          \
  X(const thread_view *, lane, (), ())                                                         \
  X(akx_status, fail_text, (akx_status status, const char *text), (status, text))

// The table a module gets (src/sim/module_api.cpp fills it). `version` changes with the list.
#define AKX_SIM_RUNTIME_VERSION 4
#define AKX_SIM_RUNTIME_FIELD_(R, name, params, args) R(*name) params;
struct runtime_api {
  uint32_t version, size;  // AKX_SIM_RUNTIME_VERSION, sizeof(runtime_api)
  AKX_SIM_RUNTIME(AKX_SIM_RUNTIME_FIELD_)
};
#undef AKX_SIM_RUNTIME_FIELD_

#if defined(AKX_SIM_MODULE)
// Set by the module's akx_sim_module_init (src/jit/sim_module.cpp's prelude) before any entry runs.
extern const runtime_api *module_runtime __attribute__((visibility("hidden")));
#define AKX_SIM_RUNTIME_CALL_(R, name, params, args) \
  inline R name params { return module_runtime->name args; }
AKX_SIM_RUNTIME(AKX_SIM_RUNTIME_CALL_)
#undef AKX_SIM_RUNTIME_CALL_
#define AKX_MODULE_EXPORT extern "C" __attribute__((visibility("default")))
#else
// libakx's own kernels read the running fiber's view directly (src/sim/launch.cpp sets it).
extern thread_local const thread_view *lane_now;
inline const thread_view *lane() { return lane_now; }
#define AKX_MODULE_EXPORT extern "C"
#define AKX_SIM_RUNTIME_DECL_(R, name, params, args) R name params;
AKX_SIM_RUNTIME(AKX_SIM_RUNTIME_DECL_)
#undef AKX_SIM_RUNTIME_DECL_
#endif
// The defaults kernel code relies on.
inline void shared_access(const void *base, size_t limit, int64_t offset, unsigned bytes,
                          bool write, const site &s) {
  shared_access(base, limit, offset, bytes, write, s, 0);
}
inline void global_access(const void *p, unsigned bytes, bool write, bool atomic, const site &s,
                          unsigned alignment = 0) {
  global_access(p, bytes, write, atomic, s, alignment, false);
}

// ---- launch -------------------------------------------------------------------------------
struct launch_desc {
  const char *name;
  dim3 grid, block;
  size_t dyn_smem;
  int max_threads, registers, loads_in_flight;
  bool smem_optin;
  // The kernel itself (its address; set by launch): what its process-wide attributes are
  // kept by (src/core/launch_rules.h), as CUDA keeps them per function.
  const void *kernel = nullptr;
};
inline launch_desc make_launch_desc(const kernel_info &k, dim3 grid, dim3 block, size_t smem) {
  return launch_desc{k.name, grid, block, smem, k.max_threads, k.registers, k.loads_in_flight,
                     k.smem_optin};
}
// run_kernel (the list above) runs fn(closure) once per thread of every block. Returns
// AKX_SUCCESS, or AKX_ERROR_SIM_CHECK / AKX_ERROR_INVALID_ARGUMENT with akx_last_error() set.

template <class... P, class... A>
akx_status launch(const launch_desc &d, void (*k)(P...), A &&...args) {
  struct closure {
    void (*k)(P...);
    std::tuple<std::decay_t<P>...> params;  // kernel parameters are copied, as on a GPU
  } c{k, std::tuple<std::decay_t<P>...>(std::forward<A>(args)...)};
  launch_desc dk = d;
  dk.kernel = reinterpret_cast<const void *>(k);
  return run_kernel(
      dk, [](void *p) { auto *c = static_cast<closure *>(p); std::apply(c->k, c->params); },
      &c);
}
}  // namespace sim

template <class T>
struct smem {
  T *p;
  size_t bytes;
  T ld(int64_t i, const sim::site &s = sim::site::current()) const {
    sim::shared_access(p, bytes, i * (int64_t)sizeof(T), sizeof(T), false, s, alignof(T));
    T v;
    memcpy(&v, p + i, sizeof(T));
    return v;
  }
  void st(int64_t i, const T &v, const sim::site &s = sim::site::current()) const {
    sim::shared_access(p, bytes, i * (int64_t)sizeof(T), sizeof(T), true, s, alignof(T));
    memcpy(p + i, &v, sizeof(T));
  }
  // Elements [i, i + N) as one 8- or 16-byte access (LDS.64 / LDS.128 on a GPU): one request
  // of that width, which must start at a multiple of its size (vec<T, N> is aligned to it),
  // else a misaligned-access failure, as the GPU would fault.
  template <int N>
  vec<T, N> ld_vec(int64_t i, const sim::site &s = sim::site::current()) const {
    static_assert(N * sizeof(T) == 8 || N * sizeof(T) == 16, "ld_vec of 8 or 16 bytes");
    sim::shared_access(p, bytes, i * (int64_t)sizeof(T), sizeof(vec<T, N>), false, s,
                       alignof(vec<T, N>));
    vec<T, N> v;
    memcpy(&v, p + i, sizeof v);
    return v;
  }
  template <int N>
  void st_vec(int64_t i, const vec<T, N> &v, const sim::site &s = sim::site::current()) const {
    static_assert(N * sizeof(T) == 8 || N * sizeof(T) == 16, "st_vec of 8 or 16 bytes");
    sim::shared_access(p, bytes, i * (int64_t)sizeof(T), sizeof(vec<T, N>), true, s,
                       alignof(vec<T, N>));
    memcpy(p + i, &v, sizeof v);
  }
};

template <class T>
inline T gld(const T *p, const sim::site &s = sim::site::current()) {
  sim::global_access(p, sizeof(T), false, false, s, alignof(T));
  T v;
  if constexpr (std::is_same_v<T, bool>) {  // a bool is any byte: nonzero is true
    unsigned char b;
    memcpy(&b, p, 1);
    v = b != 0;
  } else {
    memcpy(&v, p, sizeof(T));
  }
  sim::plain_load_done(p, sizeof(T), &v, s);
  return v;
}
template <class T>
inline void gst(T *p, const T &v, const sim::site &s = sim::site::current()) {
  sim::global_access(p, sizeof(T), true, false, s, alignof(T));
  memcpy(p, &v, sizeof(T));
}
template <class T, int N>
inline vec<T, N> gld_vec(const T *p, const sim::site &s = sim::site::current()) {
  sim::global_access(p, sizeof(vec<T, N>), false, false, s, alignof(vec<T, N>));
  vec<T, N> v;
  if constexpr (std::is_same_v<T, bool>) {
    unsigned char b[N];
    memcpy(b, p, N);
    for (int j = 0; j < N; ++j) v.v[j] = b[j] != 0;
  } else {
    memcpy(&v, p, sizeof(v));
  }
  sim::plain_load_done(p, sizeof(v), &v, s);
  return v;
}

// Programmatic dependent launch (kernels/akx/device.cuh documents them): no kernel runs beside
// another on the sim, so neither waits; a PDL launch's global access before the wait fails
// its check, and both are counted (akx_sim_kernel_counters).
inline void grid_dependency_wait(const sim::site &s = sim::site::current()) { sim::grid_dependency(false, s); }
inline void grid_dependents_launch(const sim::site &s = sim::site::current()) { sim::grid_dependency(true, s); }

// Device-scope acquire load / release store and volatile accesses of 4- or 8-byte words
// (kernels/akx/device.cuh documents them).
template <class T>
inline T ld_acquire(const T *p, const sim::site &s = sim::site::current()) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "ld_acquire of 4- or 8-byte words");
  T v;
  sim::sync_load(p, sizeof(T), alignof(T), &v, sim::LOAD_ACQUIRE, s);
  return v;
}
template <class T>
inline T ld_volatile(const T *p, const sim::site &s = sim::site::current()) {
  static_assert(sizeof(T) <= 16, "ld_volatile of at most 16 bytes");
  T v;
  sim::sync_load(p, sizeof(T), alignof(T), &v, sim::LOAD_VOLATILE, s);
  return v;
}
template <class T>
inline void st_release(T *p, const T &v, const sim::site &s = sim::site::current()) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "st_release of 4- or 8-byte words");
  sim::sync_store(p, sizeof(T), alignof(T), &v, sim::STORE_RELEASE, s);
}
template <class T>
inline void st_volatile(T *p, const T &v, const sim::site &s = sim::site::current()) {
  static_assert(sizeof(T) <= 16, "st_volatile of at most 16 bytes");
  sim::sync_store(p, sizeof(T), alignof(T), &v, sim::STORE_VOLATILE, s);
}
}  // namespace akx

#define threadIdx (::akx::sim::lane()->threadIdx)
#define blockIdx (::akx::sim::lane()->blockIdx)
#define blockDim (::akx::sim::lane()->blockDim)
#define gridDim (::akx::sim::lane()->gridDim)
#define warpSize 32

#define AKX_SHARED(T, name, N)                                                            \
  const ::akx::smem<T> name {                                                             \
    static_cast<T *>(::akx::sim::shared_static(sizeof(T) * (N), #name,                   \
                                               ::akx::sim::site::current())),             \
        sizeof(T) * (N)                                                                   \
  }
#define AKX_SHARED_DYNAMIC(T, name)                                                       \
  size_t name##_bytes_ = 0;                                                               \
  const ::akx::smem<T> name {                                                             \
    static_cast<T *>(::akx::sim::shared_dynamic(&name##_bytes_, ::akx::sim::site::current())), \
        name##_bytes_                                                                     \
  }

#define AKX_LAUNCH(name, k, grid, block, smem_bytes, stream, ...)                          \
  ((void)(stream),                                                                         \
   ::akx::sim::launch(::akx::sim::make_launch_desc(::akx::kernel_info_of(name), dim3(grid),  \
                                                   dim3(block), (size_t)(smem_bytes)),       \
                      (k) __VA_OPT__(, ) __VA_ARGS__))

// ---- CUDA intrinsics ----------------------------------------------------------------------
template <class T>
inline T akx_sim_shfl_(unsigned mask, T v, ::akx::sim::shfl_kind k, int arg, int width,
                       const ::akx::sim::site &s) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>, "shuffle of 4/8-byte scalars");
  uint64_t w = 0;
  memcpy(&w, &v, sizeof(T));
  w = ::akx::sim::shfl(mask, w, k, arg, width, s);
  T r;
  memcpy(&r, &w, sizeof(T));
  return r;
}
template <class T>
inline T __shfl_sync(unsigned mask, T v, int src, int width = 32,
                     const ::akx::sim::site &s = ::akx::sim::site::current()) {
  return akx_sim_shfl_(mask, v, ::akx::sim::SHFL_IDX, src, width, s);
}
template <class T>
inline T __shfl_up_sync(unsigned mask, T v, unsigned d, int width = 32,
                        const ::akx::sim::site &s = ::akx::sim::site::current()) {
  return akx_sim_shfl_(mask, v, ::akx::sim::SHFL_UP, (int)d, width, s);
}
template <class T>
inline T __shfl_down_sync(unsigned mask, T v, unsigned d, int width = 32,
                          const ::akx::sim::site &s = ::akx::sim::site::current()) {
  return akx_sim_shfl_(mask, v, ::akx::sim::SHFL_DOWN, (int)d, width, s);
}
template <class T>
inline T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32,
                         const ::akx::sim::site &s = ::akx::sim::site::current()) {
  return akx_sim_shfl_(mask, v, ::akx::sim::SHFL_XOR, lane_mask, width, s);
}
inline unsigned __ballot_sync(unsigned mask, int pred,
                              const ::akx::sim::site &s = ::akx::sim::site::current()) {
  return ::akx::sim::vote(mask, pred, ::akx::sim::VOTE_BALLOT, s);
}
inline int __any_sync(unsigned mask, int pred,
                      const ::akx::sim::site &s = ::akx::sim::site::current()) {
  return (int)::akx::sim::vote(mask, pred, ::akx::sim::VOTE_ANY, s);
}
inline int __all_sync(unsigned mask, int pred,
                      const ::akx::sim::site &s = ::akx::sim::site::current()) {
  return (int)::akx::sim::vote(mask, pred, ::akx::sim::VOTE_ALL, s);
}
inline unsigned __activemask() { return ::akx::sim::activemask(); }
inline void __syncwarp(unsigned mask = 0xffffffffu,
                       const ::akx::sim::site &s = ::akx::sim::site::current()) {
  ::akx::sim::syncwarp(mask, s);
}
inline void __syncthreads(const ::akx::sim::site &s = ::akx::sim::site::current()) {
  ::akx::sim::syncthreads(0, ::akx::sim::BAR_PLAIN, s);
}
inline int __syncthreads_count(int p, const ::akx::sim::site &s = ::akx::sim::site::current()) {
  return ::akx::sim::syncthreads(p, ::akx::sim::BAR_COUNT, s);
}
inline int __syncthreads_and(int p, const ::akx::sim::site &s = ::akx::sim::site::current()) {
  return ::akx::sim::syncthreads(p, ::akx::sim::BAR_AND, s);
}
inline int __syncthreads_or(int p, const ::akx::sim::site &s = ::akx::sim::site::current()) {
  return ::akx::sim::syncthreads(p, ::akx::sim::BAR_OR, s);
}
inline void __threadfence(const ::akx::sim::site &s = ::akx::sim::site::current()) {
  ::akx::sim::fence(::akx::sim::FENCE_DEVICE, s);
}
inline void __threadfence_block(const ::akx::sim::site &s = ::akx::sim::site::current()) {
  ::akx::sim::fence(::akx::sim::FENCE_BLOCK, s);
}
inline void __nanosleep(unsigned) { ::akx::sim::nanosleep_yield(); }

// Atomics are real (__atomic builtins on one OS thread: fibers never interleave inside one),
// count as global accesses, yield, and order memory as CUDA's relaxed atomics do (a
// fence before one releases, a fence after one acquires). Floating-point ones (and any T
// without a fetch-and-op builtin) go through a compare-and-swap loop.
template <class T, class F>
inline T akx_sim_atomic_(T *p, const ::akx::sim::site &s, F &&f) {
  ::akx::sim::atomic_begin(p, sizeof(T), alignof(T), s);
  T old;
  memcpy(&old, p, sizeof(T));
  T next = f(old);
  memcpy(p, &next, sizeof(T));
  ::akx::sim::atomic_end(p, sizeof(T), &old, &next, s);
  return old;
}
template <class T>
inline T atomicAdd(T *p, T v, const ::akx::sim::site &s = ::akx::sim::site::current()) {
  return akx_sim_atomic_(p, s, [&](T old) { return T(old + v); });
}
template <class T>
inline T atomicSub(T *p, T v, const ::akx::sim::site &s = ::akx::sim::site::current()) {
  return akx_sim_atomic_(p, s, [&](T old) { return T(old - v); });
}
// CUDA's atomicInc: old >= limit ? 0 : old + 1.
inline unsigned atomicInc(unsigned *p, unsigned limit,
                          const ::akx::sim::site &s = ::akx::sim::site::current()) {
  return akx_sim_atomic_(p, s, [&](unsigned old) { return old >= limit ? 0u : old + 1u; });
}
template <class T>
inline T atomicCAS(T *p, T cmp, T v, const ::akx::sim::site &s = ::akx::sim::site::current()) {
  return akx_sim_atomic_(p, s, [&](T old) { return memcmp(&old, &cmp, sizeof(T)) == 0 ? v : old; });
}
template <class T>
inline T atomicExch(T *p, T v, const ::akx::sim::site &s = ::akx::sim::site::current()) {
  return akx_sim_atomic_(p, s, [&](T) { return v; });
}
template <class T>
inline T atomicOr(T *p, T v, const ::akx::sim::site &s = ::akx::sim::site::current()) {
  return akx_sim_atomic_(p, s, [&](T old) { return T(old | v); });
}
template <class T>
inline T atomicAnd(T *p, T v, const ::akx::sim::site &s = ::akx::sim::site::current()) {
  return akx_sim_atomic_(p, s, [&](T old) { return T(old & v); });
}
template <class T>
inline T atomicMax(T *p, T v, const ::akx::sim::site &s = ::akx::sim::site::current()) {
  return akx_sim_atomic_(p, s, [&](T old) { return old < v ? v : old; });
}
template <class T>
inline T atomicMin(T *p, T v, const ::akx::sim::site &s = ::akx::sim::site::current()) {
  return akx_sim_atomic_(p, s, [&](T old) { return v < old ? v : old; });
}
