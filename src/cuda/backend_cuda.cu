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
#include "launch_calls.h"
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

// The CUDA calls of src/cuda/launch_calls.c's decisions, each counted (CU); a decision's
// code is there, in every build, where tests/test_cuda_seams.c runs it on fake calls.
int calls_get_device(int *device) { return int(CU(cudaGetDevice(device))); }
int calls_set_device(int device) { return int(CU(cudaSetDevice(device))); }
int calls_func_get_attributes(const void *kernel, int *ptx_version, int64_t *static_bytes) {
  cudaFuncAttributes attr;
  const cudaError_t e = CU(cudaFuncGetAttributes(&attr, kernel));
  if (e != cudaSuccess) return int(e);
  *ptx_version = attr.ptxVersion;
  *static_bytes = int64_t(attr.sharedSizeBytes);
  return 0;
}
int calls_func_set_max_dynamic_smem(const void *kernel, int bytes) {
  return int(CU(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)));
}
int calls_stream_is_capturing(void *stream, int *status) {
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  const cudaError_t e = CU(cudaStreamIsCapturing(static_cast<cudaStream_t>(stream), &st));
  *status = int(st);
  return int(e);
}
// cudaStreamGetDevice is a late 12.x entry point (12.8): a runtime newer than the driver
// (minor-version compatibility) answers cudaErrorCallRequiresNewerDriver, and then the
// driver's answer is taken (calls_driver_stream_device, akx__cuda_stream_device).
int calls_stream_get_device(void *stream, int *device) {
#if CUDART_VERSION >= 12080
  return int(CU(cudaStreamGetDevice(static_cast<cudaStream_t>(stream), device)));
#else  // a toolkit without cudaStreamGetDevice: the driver's answer alone
  (void)stream;
  (void)device;
  return int(cudaErrorCallRequiresNewerDriver);
#endif
}
int calls_driver_stream_device(void *stream, int *device);  // below, with the driver's entry points
void calls_take_error() { (void)CU(cudaGetLastError()); }
const char *calls_error_string(int e) { return cudaGetErrorString(cudaError_t(e)); }
const char *calls_error_name(int e) { return cudaGetErrorName(cudaError_t(e)); }
const akx__cuda_calls cuda_calls = {
    calls_get_device,           calls_set_device,          calls_func_get_attributes,
    calls_func_set_max_dynamic_smem, calls_stream_is_capturing, calls_stream_get_device,
    calls_driver_stream_device, calls_take_error,          calls_error_string,
    calls_error_name,
};

// cudart's current device is per host thread and belongs to the caller: every entry that
// talks to the device holds a device_scope for its whole body (akx__cuda_device_enter: the
// context's device current, the caller's again on the way out). Kernels launched in between
// stay queued on the context's stream, which belongs to the context's device.
class device_scope {
 public:
  explicit device_scope(int device) { akx__cuda_device_enter(&cuda_calls, device, &scope_); }
  ~device_scope() { akx__cuda_device_leave(&cuda_calls, &scope_); }
  device_scope(const device_scope &) = delete;
  device_scope &operator=(const device_scope &) = delete;
  // cudaSetDevice's error (cudaSuccess when the device is current).
  cudaError_t error() const { return cudaError_t(scope_.error); }
  // AKX_SUCCESS, or AKX_ERROR_DEVICE with cudaSetDevice's sentence.
  akx_status check() const { return akx__cuda_device_check(&cuda_calls, &scope_); }

 private:
  akx__cuda_device_scope scope_;
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
// The device of the stream's context, from the driver (cuStreamGetCtx, cuCtxGetDevice with
// that context pushed): a CUresult, -1 where the driver lacks those entry points.
int calls_driver_stream_device(void *stream, int *device) {
  const driver_api &d = drv();
  if (!d.stream_get_ctx || !d.ctx_push || !d.ctx_pop || !d.ctx_get_device) return -1;
  void *cu_ctx = nullptr, *popped = nullptr;
  int r = CU(d.stream_get_ctx(stream, &cu_ctx));
  if (r == 0) r = CU(d.ctx_push(cu_ctx));
  if (r != 0) return r;
  r = CU(d.ctx_get_device(device));
  (void)CU(d.ctx_pop(&popped));
  return r;
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

akx_status cuda_set_stream(akx_context *ctx, void *stream) {
  device_scope scope(ctx->device);
  AKX_TRY(scope.check());
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (s != nullptr) {
    int stream_device_ordinal = -1;
    const cudaError_t e = cudaError_t(akx__cuda_stream_device(&cuda_calls, s, &stream_device_ordinal));
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
// running; the legacy stream is refused while another stream captures (akx__cuda_capturing).
akx_status capturing_now(const akx_context *ctx, int *capturing) {
  return akx__cuda_capturing(&cuda_calls, ctx->stream, capturing);
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

// What the calling thread's launches need to know of the family call they belong to
// (akx__cuda_call_facts: its device, stream and capture status, and whether its launches may be
// programmatic dependent launches at all), set for the length of the call.
struct call_scope {
  const akx__cuda_call_facts *previous;
  explicit call_scope(const akx__cuda_call_facts &f) : previous(akx__cuda_call_enter(&f)) {}
  ~call_scope() { akx__cuda_call_leave(previous); }
  call_scope(const call_scope &) = delete;
  call_scope &operator=(const call_scope &) = delete;
};

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
  akx__cuda_call_facts f;
  AKX_TRY(akx__cuda_call_facts_of(&cuda_calls, ctx, &f));
  call_scope facts(f);
  if (entry->prebuilt) return entry->prebuilt(plan, ctx->stream);
  return akx__cuda_runtime_launch(ctx, family, entry->unit, plan);
}

akx_status cuda_run(akx_context *ctx, akx_status (*fn)(void *, void *, void *), void *workspace,
                    void *arg) {
  device_scope scope(ctx->device);
  AKX_TRY(scope.check());
  akx__cuda_call_facts f;
  AKX_TRY(akx__cuda_call_facts_of(&cuda_calls, ctx, &f));
  call_scope facts(f);
  return fn(ctx->stream, workspace, arg);
}

}  // namespace

// The checks of the sim's run_kernel (src/sim/launch.cpp) that come from the kernel's
// declaration, with the same sentences: the driver would refuse both launches too, but as
// "invalid argument" / "invalid configuration" naming neither the kernel nor the limit.
extern "C" akx_status akx__cuda_prepare_launch(const void *kernel, const char *kernel_name,
                                               int max_threads, int smem_optin,
                                               unsigned threads, size_t smem_bytes, int *pdl) {
  AKX_TRY(akx__cuda_prepare_launch_with(&cuda_calls, kernel, kernel_name, max_threads, smem_optin, threads,
                                        smem_bytes, pdl));
  ++api_calls;  // the cudaLaunchKernelEx that follows (kernels/akx/device.cuh)
  return AKX_SUCCESS;
}

// The run-time unit's NVRTC compile and module load (src/cuda/runtime_kernels.cu) with the
// context's device current: run on whatever device the thread has current, they could create
// a primary context there.
extern "C" akx_status akx__cuda_on_context_device(const akx_context *ctx, akx_status (*fn)(void *), void *arg) {
  return akx__cuda_on_device(&cuda_calls, ctx->device, fn, arg);
}

// In the order of akx__backend's members (C++17 has no designated initializers).
// No cudaStreamSynchronize (cuda_memcpy's): the copy runs behind the stream's launches, and a
// capture records it as a node of the graph.
extern "C" akx_status akx__cuda_copy_async(akx_context *ctx, void *dst, const void *src, size_t bytes) {
  if (bytes == 0) return AKX_SUCCESS;
  device_scope scope(ctx->device);
  AKX_TRY(scope.check());
  cudaError_t e = CU(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_of(ctx)));
  if (e != cudaSuccess) return cuda_fail(AKX_ERROR_DEVICE, e, "cudaMemcpyAsync");
  return AKX_SUCCESS;
}

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
