// The CUDA backend: cudart on the context's device and stream. Every failing CUDA call ends
// in akx__fail with the runtime's own sentence (cudaGetErrorString) in akx_last_error().
//
// The context holds no CUDA state of its own besides the stream (NULL: the legacy default
// stream): the device's primary context is the one every cudart user in the process
// shares, so device pointers and streams made by the caller work here unchanged.
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "api_calls.h"
#include "backend.h"
#include "error.h"
#include "launch_rules.h"

// src/cuda/api_calls.h: every CUDA runtime or driver call below goes through CU(), which counts
// it for the calling thread, so that a CUDA test can assert the host work of one call.
static thread_local uint64_t api_calls = 0;
extern "C" uint64_t akx__cuda_api_calls(void) { return api_calls; }
extern "C" void akx__cuda_api_calls_add(uint64_t n) { api_calls += n; }
#define CU(call) (++api_calls, (call))

// An empty kernel compiled with the same architectures as the prebuilt kernels: whether the
// device has an image of it says whether it can run them (SASS for its architecture, or PTX
// the driver can compile for it).
__global__ void akx__cuda_image_probe() {}

namespace {

// A failed runtime call also leaves its error as the thread's "last error", which would be
// reported later as someone else's: take it back here.
akx_status cuda_fail(akx_status s, cudaError_t e, const char *what) {
  (void)CU(cudaGetLastError());
  return akx__fail(s, "%s failed: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

// cudart's current device is per host thread and belongs to the caller: other code (another
// context, the caller itself) may have changed it since this context's last call, and a call
// must leave it as it found it. Every entry that talks to the device holds a device_scope for
// its whole body: it makes the context's device current (cudaSetDevice only when it is not
// already) and, on the way out, makes the caller's device current again. Kernels launched in
// between stay queued on the context's stream, which belongs to the context's device.
class device_scope {
 public:
  explicit device_scope(int device) {
    cudaError_t e = CU(cudaGetDevice(&saved_));
    if (e == cudaSuccess && saved_ == device) return;
    if (e != cudaSuccess) {
      (void)CU(cudaGetLastError());
      saved_ = -1;  // nothing to restore
    }
    error_ = CU(cudaSetDevice(device));
    switched_ = error_ == cudaSuccess;
  }
  // A failure to switch back cannot be reported (the call's own status is decided by then);
  // it is not left behind as the caller's "last error" either.
  ~device_scope() {
    if (switched_ && saved_ >= 0 && CU(cudaSetDevice(saved_)) != cudaSuccess) (void)CU(cudaGetLastError());
  }
  device_scope(const device_scope &) = delete;
  device_scope &operator=(const device_scope &) = delete;
  // cudaSetDevice's error (cudaSuccess when the device is current).
  cudaError_t error() const { return error_; }
  // AKX_SUCCESS, or AKX_ERROR_DEVICE with cudaSetDevice's sentence.
  akx_status check() const {
    return error_ == cudaSuccess ? AKX_SUCCESS : cuda_fail(AKX_ERROR_DEVICE, error_, "cudaSetDevice");
  }

 private:
  int saved_ = -1;
  bool switched_ = false;
  cudaError_t error_ = cudaSuccess;
};

// cudaMalloc, cudaFree and cudaStreamSynchronize are "unsafe" calls for a stream capture in
// global mode on ANY thread of the process: made while another thread captures, they
// invalidate that thread's capture. The library makes them only on its own behalf, never as
// part of a caller's graph, so for their duration this thread's capture interaction mode is
// relaxed, as CUB's and Thrust's caching allocators do (cudaThreadExchangeStreamCaptureMode).
// A call refused for capturing (src/core/context.c) is refused before it gets here.
class relaxed_capture_mode {
 public:
  relaxed_capture_mode() : mode_(cudaStreamCaptureModeRelaxed) {
    ok_ = CU(cudaThreadExchangeStreamCaptureMode(&mode_)) == cudaSuccess;
    if (!ok_) (void)CU(cudaGetLastError());
  }
  ~relaxed_capture_mode() {
    if (ok_ && CU(cudaThreadExchangeStreamCaptureMode(&mode_)) != cudaSuccess) (void)CU(cudaGetLastError());
  }
  relaxed_capture_mode(const relaxed_capture_mode &) = delete;
  relaxed_capture_mode &operator=(const relaxed_capture_mode &) = delete;

 private:
  cudaStreamCaptureMode mode_;
  bool ok_;
};

cudaStream_t stream_of(const akx_context *ctx) { return static_cast<cudaStream_t>(ctx->stream); }

// Peak DRAM bandwidth in GB/s: two transfers per memory clock (DDR) over the bus. CUDA 13
// dropped memoryClockRate from cudaDeviceProp; the attribute is still there. 0 if unknown.
double peak_bandwidth_gbs(int device) {
  int clock_khz = 0, bus_bits = 0;
  if (CU(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, device)) != cudaSuccess ||
      CU(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device)) != cudaSuccess) {
    (void)CU(cudaGetLastError());
    return 0.0;
  }
  return 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) / 1e9;
}

// ---- the driver entry points the runtime has no cheap equivalent of ---------------------------
// Taken with dlsym from libcuda.so.1, which cudart has loaded already (no link to the driver:
// a program that never opens a CUDA context runs where no driver is installed). The driver's
// C ABI is stable; these have existed since CUDA 9.2 (cuStreamGetCtx) and 7.0.
typedef int (*cu_pointer_get_attributes_fn)(unsigned, const int *, void **, unsigned long long);
typedef int (*cu_stream_get_ctx_fn)(void *, void **);
typedef int (*cu_ctx_push_fn)(void *);
typedef int (*cu_ctx_pop_fn)(void **);
typedef int (*cu_ctx_get_device_fn)(int *);
struct driver_api {
  cu_pointer_get_attributes_fn pointer_get_attributes;
  cu_stream_get_ctx_fn stream_get_ctx;
  cu_ctx_push_fn ctx_push;
  cu_ctx_pop_fn ctx_pop;
  cu_ctx_get_device_fn ctx_get_device;
};
driver_api driver;
pthread_once_t driver_once = PTHREAD_ONCE_INIT;
void load_driver() {
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (!h) h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) return;
  driver.pointer_get_attributes = reinterpret_cast<cu_pointer_get_attributes_fn>(dlsym(h, "cuPointerGetAttributes"));
  driver.stream_get_ctx = reinterpret_cast<cu_stream_get_ctx_fn>(dlsym(h, "cuStreamGetCtx"));
  driver.ctx_push = reinterpret_cast<cu_ctx_push_fn>(dlsym(h, "cuCtxPushCurrent_v2"));
  driver.ctx_pop = reinterpret_cast<cu_ctx_pop_fn>(dlsym(h, "cuCtxPopCurrent_v2"));
  driver.ctx_get_device = reinterpret_cast<cu_ctx_get_device_fn>(dlsym(h, "cuCtxGetDevice"));
}
const driver_api &drv() {
  pthread_once(&driver_once, load_driver);
  return driver;
}

// Per device, what every call's pointer checks need and the device cannot change: whether it
// reads pageable host memory (HMM, ATS). Set when a context opens the device; 0 until then.
constexpr int max_devices = 64;
int pageable_access[max_devices];

akx_status cuda_open(akx_context *ctx, int device) {
  int count = 0;
  cudaError_t e = CU(cudaGetDeviceCount(&count));
  if (e != cudaSuccess) {
    (void)CU(cudaGetLastError());
    return akx__fail(AKX_ERROR_NO_DEVICE, "no usable CUDA device: cudaGetDeviceCount failed: %s (%s)",
                     cudaGetErrorString(e), cudaGetErrorName(e));
  }
  if (count == 0) return akx__fail(AKX_ERROR_NO_DEVICE, "no usable CUDA device: the driver reports 0 devices");
  if (device < 0 || device >= count)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "device is %d, expected a CUDA device ordinal in 0..%d",
                     device, count - 1);

  // The device is current only while the context is opened (device_scope).
  device_scope scope(device);
  e = scope.error();
  // cudaFree(NULL) creates the primary context now, so that a device that cannot be used
  // (exclusive mode, out of memory, driver too old) fails here rather than in the first call.
  if (e == cudaSuccess) e = CU(cudaFree(nullptr));
  if (e != cudaSuccess) {
    (void)CU(cudaGetLastError());
    return akx__fail(AKX_ERROR_NO_DEVICE, "CUDA device %d is not usable: %s (%s)", device,
                     cudaGetErrorString(e), cudaGetErrorName(e));
  }
  cudaDeviceProp prop;
  e = CU(cudaGetDeviceProperties(&prop, device));
  if (e != cudaSuccess) return cuda_fail(AKX_ERROR_DEVICE, e, "cudaGetDeviceProperties");

  ctx->device = device;
  ctx->stream = nullptr;
  ctx->impl = nullptr;
  ctx->profile = akx__profile_by_cc(prop.major, prop.minor);

  akx_context_info_t *info = &ctx->info;
  info->backend = AKX_BACKEND_CUDA;
  // The field holds 63 characters; a longer name is cut.
  snprintf(info->device_name, sizeof info->device_name, "%.*s", (int)sizeof info->device_name - 1,
           prop.name);
  info->sm_count = prop.multiProcessorCount;
  info->cc_major = prop.major;
  info->cc_minor = prop.minor;
  info->max_threads_per_sm = prop.maxThreadsPerMultiProcessor;
  info->shared_per_block = static_cast<int64_t>(prop.sharedMemPerBlockOptin);
  info->bandwidth_gbs = peak_bandwidth_gbs(device);
  if (info->bandwidth_gbs <= 0.0) info->bandwidth_gbs = ctx->profile->bandwidth_gbs;
  info->sim_profile[0] = '\0';
  if (device < max_devices) __atomic_store_n(&pageable_access[device], prop.pageableMemoryAccess ? 1 : 0, __ATOMIC_RELAXED);
  // A device the build has no image for (libakx's default is sm_90 SASS alone: an A100 or an
  // RTX 5080) takes every kernel from NVRTC, compiled for its own architecture on first use.
  cudaFuncAttributes probe;
  e = CU(cudaFuncGetAttributes(&probe, akx__cuda_image_probe));
  if (e != cudaSuccess) (void)CU(cudaGetLastError());
  ctx->prebuilt_runs = AKX_PREBUILT && e == cudaSuccess;
  return AKX_SUCCESS;
}

// Nothing to release: the stream is the caller's, the primary context is shared.
void cuda_close(akx_context *ctx) { (void)ctx; }

akx_status cuda_malloc(akx_context *ctx, void **ptr, size_t bytes) {
  device_scope scope(ctx->device);
  AKX_TRY(scope.check());
  relaxed_capture_mode relaxed;
  cudaError_t e = CU(cudaMalloc(ptr, bytes));
  if (e == cudaErrorMemoryAllocation) {
    (void)CU(cudaGetLastError());
    *ptr = nullptr;
    return akx__fail(AKX_ERROR_OUT_OF_MEMORY, "cudaMalloc of %zu bytes on device %d failed: %s",
                     bytes, ctx->device, cudaGetErrorString(e));
  }
  // Any other error is an earlier fault of the device (sticky), not a lack of memory.
  if (e != cudaSuccess) {
    *ptr = nullptr;
    return cuda_fail(AKX_ERROR_DEVICE, e, "cudaMalloc");
  }
  return AKX_SUCCESS;
}

akx_status cuda_free(akx_context *ctx, void *ptr) {
  device_scope scope(ctx->device);
  AKX_TRY(scope.check());
  relaxed_capture_mode relaxed;
  cudaError_t e = CU(cudaFree(ptr));
  if (e != cudaSuccess) return cuda_fail(AKX_ERROR_DEVICE, e, "cudaFree");
  return AKX_SUCCESS;
}

akx_status cuda_zero(akx_context *ctx, void *ptr, size_t bytes) {
  if (bytes == 0) return AKX_SUCCESS;
  device_scope scope(ctx->device);
  AKX_TRY(scope.check());
  cudaError_t e = CU(cudaMemsetAsync(ptr, 0, bytes, stream_of(ctx)));
  if (e != cudaSuccess) return cuda_fail(AKX_ERROR_DEVICE, e, "cudaMemsetAsync");
  return AKX_SUCCESS;
}

akx_status cuda_memcpy(akx_context *ctx, void *dst, const void *src, size_t bytes, akx_copy_kind k) {
  if (bytes == 0) return AKX_SUCCESS;
  device_scope scope(ctx->device);
  AKX_TRY(scope.check());
  cudaMemcpyKind kind = k == AKX_COPY_HOST_TO_DEVICE   ? cudaMemcpyHostToDevice
                        : k == AKX_COPY_DEVICE_TO_HOST ? cudaMemcpyDeviceToHost
                                                       : cudaMemcpyDeviceToDevice;
  cudaError_t e = CU(cudaMemcpyAsync(dst, src, bytes, kind, stream_of(ctx)));
  if (e != cudaSuccess) return cuda_fail(AKX_ERROR_DEVICE, e, "cudaMemcpyAsync");
  relaxed_capture_mode relaxed;
  e = CU(cudaStreamSynchronize(stream_of(ctx)));
  if (e != cudaSuccess) return cuda_fail(AKX_ERROR_DEVICE, e, "cudaStreamSynchronize after cudaMemcpyAsync");
  return AKX_SUCCESS;
}

akx_status cuda_synchronize(akx_context *ctx) {
  device_scope scope(ctx->device);
  AKX_TRY(scope.check());
  relaxed_capture_mode relaxed;
  cudaError_t e = CU(cudaStreamSynchronize(stream_of(ctx)));
  if (e != cudaSuccess) return cuda_fail(AKX_ERROR_DEVICE, e, "cudaStreamSynchronize");
  return AKX_SUCCESS;
}

// The device a stream belongs to. cudaStreamGetDevice is a late 12.x entry point (12.8): a runtime
// newer than the driver (minor-version compatibility) gets cudaErrorCallRequiresNewerDriver
// from it, and then the driver's cuStreamGetCtx and that context's device answer instead
// (akx__stream_device_way).
cudaError_t stream_device(cudaStream_t s, int *device) {
#if CUDART_VERSION >= 12080
  cudaError_t e = CU(cudaStreamGetDevice(s, device));
#else  // a toolkit without cudaStreamGetDevice: the driver's answer alone
  cudaError_t e = cudaErrorCallRequiresNewerDriver;
#endif
  const int way = akx__stream_device_way(int(e));
  if (way != 1) return e;
  (void)CU(cudaGetLastError());
  const driver_api &d = drv();
  if (!d.stream_get_ctx || !d.ctx_push || !d.ctx_pop || !d.ctx_get_device) return e;
  void *cu_ctx = nullptr, *popped = nullptr;
  if (CU(d.stream_get_ctx(s, &cu_ctx)) != 0 || CU(d.ctx_push(cu_ctx)) != 0) return cudaErrorInvalidResourceHandle;
  const int r = CU(d.ctx_get_device(device));
  (void)CU(d.ctx_pop(&popped));
  return r == 0 ? cudaSuccess : cudaErrorInvalidResourceHandle;
}

akx_status cuda_set_stream(akx_context *ctx, void *stream) {
  device_scope scope(ctx->device);
  AKX_TRY(scope.check());
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (s != nullptr) {
    int stream_device_ordinal = -1;
    cudaError_t e = stream_device(s, &stream_device_ordinal);
    if (e != cudaSuccess) {
      (void)CU(cudaGetLastError());
      return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "stream %p is not a usable CUDA stream: %s", stream,
                       cudaGetErrorString(e));
    }
    if (stream_device_ordinal != ctx->device)
      return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                       "stream %p belongs to CUDA device %d, expected the context's device %d", stream,
                       stream_device_ordinal, ctx->device);
  }
  // The workspace is shared by every call of the context: let the old stream finish with it
  // before work on the new stream can touch it.
  AKX_TRY(cuda_synchronize(ctx));
  ctx->stream = stream;
  return AKX_SUCCESS;
}

// Stream capture (cudaStreamBeginCapture): work enqueued now becomes a graph node instead of
// running. An invalidated capture still counts (the caller ends it with cudaStreamEndCapture);
// the legacy stream cannot be used at all while another stream captures in global or
// thread-local mode (cudaErrorStreamCaptureImplicit), so it counts as capturing too.
akx_status capturing_now(const akx_context *ctx, int *capturing) {
  *capturing = 0;
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  cudaError_t e = CU(cudaStreamIsCapturing(stream_of(ctx), &status));
  if (e == cudaErrorStreamCaptureImplicit) {
    (void)CU(cudaGetLastError());
    *capturing = 1;
    return AKX_SUCCESS;
  }
  if (e != cudaSuccess) return cuda_fail(AKX_ERROR_DEVICE, e, "cudaStreamIsCapturing");
  *capturing = status != cudaStreamCaptureStatusNone;
  return AKX_SUCCESS;
}

akx_status cuda_is_capturing(const akx_context *ctx, int *capturing) {
  *capturing = 0;
  device_scope scope(ctx->device);
  AKX_TRY(scope.check());
  return capturing_now(ctx, capturing);
}

// Can this context's device address [p, p + bytes)? One driver call per range
// (cuPointerGetAttributes: type, device, mapping and the allocation's range at once; it
// answers CUDA_SUCCESS with empty facts for memory CUDA does not know), decided by
// akx__device_range_ok. A kernel touching memory its device cannot address faults with a
// sticky error that kills the caller's CUDA context: refuse it before launching.
bool device_can_address(const akx_context *ctx, const void *p, size_t bytes) {
  const int pageable = ctx->device < max_devices ? __atomic_load_n(&pageable_access[ctx->device], __ATOMIC_RELAXED) : 0;
  const driver_api &d = drv();
  if (d.pointer_get_attributes) {
    // CUpointer_attribute values (cuda.h): MEMORY_TYPE 2, DEVICE_POINTER 3, IS_MANAGED 8,
    // DEVICE_ORDINAL 9, RANGE_START_ADDR 11, RANGE_SIZE 12.
    static const int which[] = {2, 3, 8, 9, 11, 12};
    unsigned int type = 0;
    unsigned long long device_ptr = 0, start = 0;
    int managed = 0, ordinal = -2;
    size_t size = 0;
    void *out[] = {&type, &device_ptr, &managed, &ordinal, &start, &size};
    if (CU(d.pointer_get_attributes(6, which, out, (unsigned long long)(uintptr_t)p)) != 0) return false;
    const akx__pointer_facts f = {(int)type, ordinal, managed, (uintptr_t)device_ptr, (uintptr_t)start, size};
    return akx__device_range_ok(&f, ctx->device, pageable, (uintptr_t)p, bytes) != 0;
  }
  // No driver entry point (not expected where cudart runs): the runtime's facts of both ends,
  // each taken as a one-byte range (the runtime gives no allocation's range), by the same rule.
  for (const char *q : {static_cast<const char *>(p), static_cast<const char *>(p) + (bytes - 1)}) {
    cudaPointerAttributes a;
    if (CU(cudaPointerGetAttributes(&a, q)) != cudaSuccess) {
      (void)CU(cudaGetLastError());  // not sticky: an unknown pointer
      return false;
    }
    // cudaMemoryType to CUmemorytype: device 2 and host 1 alike; managed is its own flag.
    const int type = a.type == cudaMemoryTypeDevice ? 2 : a.type == cudaMemoryTypeHost ? 1 : 0;
    const akx__pointer_facts f = {type, a.device, a.type == cudaMemoryTypeManaged,
                                  (uintptr_t)a.devicePointer, (uintptr_t)q, 1};
    if (!akx__device_range_ok(&f, ctx->device, pageable, (uintptr_t)q, 1)) return false;
  }
  return true;
}

// No device_scope: under unified addressing a pointer's attributes are the same whichever
// device is current, and the device it must belong to is named in the check.
int cuda_is_device_range(const akx_context *ctx, const void *p, size_t bytes) {
  if (bytes == 0) return 1;
  return device_can_address(ctx, p, bytes);
}

// What the calling thread's launches need to know of the family call they belong to: its
// device, and whether its launches may be programmatic dependent launches at all (AKX_PDL,
// an sm_90+ device, a stream that is not capturing); each kernel's image decides the rest
// (akx__cuda_prepare_launch). Set for the length of a family's call (call_scope).
struct call_facts {
  int device = 0;
  int pdl_setting = 0, cc_major = 0, capturing = 0;
  int64_t shared_per_block = 0;  // the device's opt-in maximum (akx_context_info)
};
thread_local call_facts call_now;
struct call_scope {
  call_facts previous;
  explicit call_scope(const call_facts &f) : previous(call_now) { call_now = f; }
  ~call_scope() { call_now = previous; }
  call_scope(const call_scope &) = delete;
  call_scope &operator=(const call_scope &) = delete;
};

akx_status facts_of(const akx_context *ctx, call_facts *f) {
  f->device = ctx->device;
  f->pdl_setting = akx__context_pdl(ctx);
  f->cc_major = ctx->info.cc_major;
  f->shared_per_block = ctx->info.shared_per_block;
  f->capturing = 0;
  // A capturing stream takes plain launches (akx__launch_pdl): asked only when PDL is on.
  if (f->pdl_setting) AKX_TRY(capturing_now(ctx, &f->capturing));
  return AKX_SUCCESS;
}

// The CUDA backend names no allocation in its sentences (cudaPointerGetAttributes gives no
// block's extent for every kind of memory).
int cuda_allocation_of(const akx_context *, const void *, const void **, size_t *) { return 0; }

// Every family's launch, through the entry the routing chose (src/launch/route.h): a prebuilt
// one, or a run-time module (src/cuda/runtime_kernels.cu). A non-sticky error the caller left
// pending is the caller's: the launches report their own errors (kernels/akx/device.cuh,
// launch_status).
akx_status cuda_launch(akx_context *ctx, int family, const akx__entry *entry, const void *plan) {
  device_scope scope(ctx->device);
  AKX_TRY(scope.check());
  call_facts f;
  AKX_TRY(facts_of(ctx, &f));
  call_scope facts(f);
  if (entry->prebuilt) return entry->prebuilt(plan, ctx->stream);
  return akx__cuda_runtime_launch(ctx, family, entry->unit, plan);
}

akx_status cuda_run(akx_context *ctx, akx_status (*fn)(void *, void *, void *), void *workspace,
                    void *arg) {
  device_scope scope(ctx->device);
  AKX_TRY(scope.check());
  call_facts f;
  AKX_TRY(facts_of(ctx, &f));
  call_scope facts(f);
  return fn(ctx->stream, workspace, arg);
}

// A kernel's attributes on the current device, read once and its opt-in attribute set once
// (under the table's lock: src/core/launch_rules.c), so that no launch ever changes what
// another thread's launch of the same kernel was checked against.
struct fill_arg {
  int smem_optin;
  int64_t optin_max;  // the device's opt-in maximum per block, from its context
};
akx_status fill_attributes(const void *kernel, const void *, void *arg, akx__kernel_attributes *out) {
  const fill_arg &g = *static_cast<const fill_arg *>(arg);
  cudaFuncAttributes attr;
  cudaError_t e = CU(cudaFuncGetAttributes(&attr, kernel));
  if (e != cudaSuccess) return cuda_fail(AKX_ERROR_DEVICE, e, "cudaFuncGetAttributes");
  out->ptx_version = attr.ptxVersion;
  out->static_bytes = int64_t(attr.sharedSizeBytes);
  out->max_dynamic = int64_t(akx__static_shared_limit) - out->static_bytes;
  const int64_t value = akx__dynamic_smem_attribute(g.smem_optin, g.optin_max, out->static_bytes);
  if (value >= 0) {
    e = CU(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(value)));
    if (e != cudaSuccess) return cuda_fail(AKX_ERROR_DEVICE, e, "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
    out->max_dynamic = value;
  }
  return AKX_SUCCESS;
}

}  // namespace

// The checks of the sim's run_kernel (src/sim/launch.cpp) that come from the kernel's
// declaration, with the same sentences: the driver would refuse both launches too, but as
// "invalid argument" / "invalid configuration" naming neither the kernel nor the limit.
extern "C" akx_status akx__cuda_prepare_launch(const void *kernel, const char *kernel_name,
                                               int max_threads, int smem_optin,
                                               unsigned threads, size_t smem_bytes, int *pdl) {
  *pdl = 0;
  if (threads > unsigned(max_threads))
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "kernel '%s': a block of %u threads is more than its launch bounds "
                     "(__launch_bounds__(%d)) allow",
                     kernel_name, threads, max_threads);
  const call_facts &f = call_now;
  akx__kernel_attributes a;
  fill_arg g{smem_optin, f.shared_per_block};
  AKX_TRY(akx__kernel_attributes_get(kernel, reinterpret_cast<const void *>(intptr_t(f.device)), fill_attributes,
                                     &g, &a));
  // The driver counts the kernel's static shared memory and the launch's dynamic part against
  // one limit: 48 KiB without the opt-in, the attribute with it (max_dynamic holds either).
  AKX_TRY(akx__check_dynamic_smem(kernel_name, smem_optin, smem_bytes, &a));
  *pdl = akx__launch_pdl(f.pdl_setting, f.cc_major, a.ptx_version, f.capturing);
  ++api_calls;  // the cudaLaunchKernelEx that follows (kernels/akx/device.cuh)
  return AKX_SUCCESS;
}

// In the order of akx__backend's members (C++17 has no designated initializers).
extern "C" const akx__backend akx__backend_cuda = {
    AKX_BACKEND_CUDA,      // kind
    cuda_open,             // open
    cuda_close,            // close
    cuda_malloc,           // malloc
    cuda_free,             // free
    cuda_memcpy,           // memcpy
    cuda_zero,             // zero
    cuda_synchronize,      // synchronize
    cuda_set_stream,       // set_stream
    cuda_is_capturing,     // is_capturing
    cuda_is_device_range,  // is_device_range
    cuda_allocation_of,    // allocation_of
    cuda_launch,
    akx__cuda_runtime_unit,
    nullptr,               // module_runtime: the sim's
    cuda_run,              // run
};
