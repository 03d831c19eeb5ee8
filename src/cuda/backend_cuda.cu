// The CUDA backend: cudart on the context's device and stream. Every failing CUDA call ends
// in akx__fail with the runtime's own sentence (cudaGetErrorString) in akx_last_error().
//
// The context holds no CUDA state of its own besides the stream (NULL: the legacy default
// stream): the device's primary context is the one every cudart user in the process
// shares, so device pointers and streams made by the caller work here unchanged.
#include <cuda_runtime.h>
#include <stdio.h>

#include "api_calls.h"
#include "backend.h"
#include "error.h"
#include "kernel_entries.hpp"

// An empty kernel compiled with the same architectures as the prebuilt kernels: whether the
// device has an image of it says whether it can run them (SASS for its architecture, or PTX
// the driver can compile for it).
__global__ void akx__cuda_image_probe() {}

namespace {

// A failed runtime call also leaves its error as the thread's "last error", which the next
// launch check (cudaGetLastError) would report as that kernel's failure: take it back here.
akx_status cuda_fail(akx_status s, cudaError_t e, const char *what) {
  (void)cudaGetLastError();
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
    cudaError_t e = cudaGetDevice(&saved_);
    if (e == cudaSuccess && saved_ == device) return;
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      saved_ = -1;  // nothing to restore
    }
    error_ = cudaSetDevice(device);
    switched_ = error_ == cudaSuccess;
  }
  // A failure to switch back cannot be reported (the call's own status is decided by then);
  // it is not left behind as the caller's "last error" either.
  ~device_scope() {
    if (switched_ && saved_ >= 0 && cudaSetDevice(saved_) != cudaSuccess) (void)cudaGetLastError();
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

cudaStream_t stream_of(const akx_context *ctx) { return static_cast<cudaStream_t>(ctx->stream); }

// Peak DRAM bandwidth in GB/s: two transfers per memory clock (DDR) over the bus. CUDA 13
// dropped memoryClockRate from cudaDeviceProp; the attribute is still there. 0 if unknown.
double peak_bandwidth_gbs(int device) {
  int clock_khz = 0, bus_bits = 0;
  if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0.0;
  }
  return 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) / 1e9;
}

akx_status cuda_open(akx_context *ctx, int device) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
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
  if (e == cudaSuccess) e = cudaFree(nullptr);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return akx__fail(AKX_ERROR_NO_DEVICE, "CUDA device %d is not usable: %s (%s)", device,
                     cudaGetErrorString(e), cudaGetErrorName(e));
  }
  cudaDeviceProp prop;
  e = cudaGetDeviceProperties(&prop, device);
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
  // A device the build has no image for (libakx's default is sm_90 SASS alone: an A100 or an
  // RTX 5080) takes every kernel from NVRTC, compiled for its own architecture on first use.
  cudaFuncAttributes probe;
  e = cudaFuncGetAttributes(&probe, akx__cuda_image_probe);
  if (e != cudaSuccess) (void)cudaGetLastError();
  ctx->prebuilt_runs = AKX_PREBUILT && e == cudaSuccess;
  return AKX_SUCCESS;
}

// Nothing to release: the stream is the caller's, the primary context is shared.
void cuda_close(akx_context *ctx) { (void)ctx; }

akx_status cuda_malloc(akx_context *ctx, void **ptr, size_t bytes) {
  device_scope scope(ctx->device);
  AKX_TRY(scope.check());
  cudaError_t e = cudaMalloc(ptr, bytes);
  if (e == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
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
  cudaError_t e = cudaFree(ptr);
  if (e != cudaSuccess) return cuda_fail(AKX_ERROR_DEVICE, e, "cudaFree");
  return AKX_SUCCESS;
}

akx_status cuda_zero(akx_context *ctx, void *ptr, size_t bytes) {
  if (bytes == 0) return AKX_SUCCESS;
  device_scope scope(ctx->device);
  AKX_TRY(scope.check());
  cudaError_t e = cudaMemsetAsync(ptr, 0, bytes, stream_of(ctx));
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
  cudaError_t e = cudaMemcpyAsync(dst, src, bytes, kind, stream_of(ctx));
  if (e != cudaSuccess) return cuda_fail(AKX_ERROR_DEVICE, e, "cudaMemcpyAsync");
  e = cudaStreamSynchronize(stream_of(ctx));
  if (e != cudaSuccess) return cuda_fail(AKX_ERROR_DEVICE, e, "cudaStreamSynchronize after cudaMemcpyAsync");
  return AKX_SUCCESS;
}

akx_status cuda_synchronize(akx_context *ctx) {
  device_scope scope(ctx->device);
  AKX_TRY(scope.check());
  cudaError_t e = cudaStreamSynchronize(stream_of(ctx));
  if (e != cudaSuccess) return cuda_fail(AKX_ERROR_DEVICE, e, "cudaStreamSynchronize");
  return AKX_SUCCESS;
}

akx_status cuda_set_stream(akx_context *ctx, void *stream) {
  device_scope scope(ctx->device);
  AKX_TRY(scope.check());
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (s != nullptr) {
    int stream_device = -1;
    cudaError_t e = cudaStreamGetDevice(s, &stream_device);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "stream %p is not a usable CUDA stream: %s", stream,
                       cudaGetErrorString(e));
    }
    if (stream_device != ctx->device)
      return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                       "stream %p belongs to CUDA device %d, expected the context's device %d", stream,
                       stream_device, ctx->device);
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
akx_status cuda_is_capturing(const akx_context *ctx, int *capturing) {
  *capturing = 0;
  device_scope scope(ctx->device);
  AKX_TRY(scope.check());
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  cudaError_t e = cudaStreamIsCapturing(stream_of(ctx), &status);
  if (e == cudaErrorStreamCaptureImplicit) {
    (void)cudaGetLastError();
    *capturing = 1;
    return AKX_SUCCESS;
  }
  if (e != cudaSuccess) return cuda_fail(AKX_ERROR_DEVICE, e, "cudaStreamIsCapturing");
  *capturing = status != cudaStreamCaptureStatusNone;
  return AKX_SUCCESS;
}

// A device pointer cannot be told from a host one without a driver call per argument
// (cudaPointerGetAttributes); the CUDA backend accepts and lets the kernel fault instead.
// Can this context's device address the byte at p? Device memory of this device, managed
// memory, host memory mapped into the device's address space, or (on systems whose devices
// read pageable host memory: HMM, ATS) any host memory. A kernel touching anything else
// faults with a sticky error that kills the caller's CUDA context: refuse it before launching.
bool device_can_address(const akx_context *ctx, const void *p) {
  cudaPointerAttributes a;
  cudaError_t e = cudaPointerGetAttributes(&a, p);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // not sticky: an unknown pointer
    return false;
  }
  switch (a.type) {
    case cudaMemoryTypeDevice: return a.device == ctx->device;
    case cudaMemoryTypeManaged: return true;
    case cudaMemoryTypeHost: return a.devicePointer == p;  // pinned and mapped (UVA)
    default: {
      int pageable = 0;
      return cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, ctx->device) ==
                 cudaSuccess &&
             pageable != 0;
    }
  }
}

int cuda_is_device_range(const akx_context *ctx, const void *p, size_t bytes) {
  device_scope scope(ctx->device);
  if (scope.error() != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  if (bytes == 0) return 1;
  // Both ends: a range that starts in one allocation and runs past it into host memory is
  // refused too (the runtime has no allocation sizes to check the whole range against).
  return device_can_address(ctx, p) &&
         device_can_address(ctx, static_cast<const char *>(p) + (bytes - 1));
}

// Every family's launch, on the context's device and stream. A non-sticky error left by an
// earlier failed call of the caller's would otherwise be reported by the launch check as this
// call's kernel failing to launch: it is cleared first.
// Whether the calling thread's launches are programmatic dependent launches: set for the length
// of a family's call (akx__context_pdl), read by every launch (include/akx/device.cuh's
// cuda_launch, src/cuda/runtime_kernels.cu's handles).
thread_local int pdl_now = 0;
struct pdl_scope {
  int previous;
  explicit pdl_scope(int on) : previous(pdl_now) { pdl_now = on; }
  ~pdl_scope() { pdl_now = previous; }
  pdl_scope(const pdl_scope &) = delete;
  pdl_scope &operator=(const pdl_scope &) = delete;
};

// Prebuilt kernels where the build has them; else (a combination outside the prebuilt set, a
// user op, AKX_KERNELS=runtime, -DAKX_PREBUILT=OFF, a device without their image) the
// family's kernels compiled at run time.
template <class Plan, akx_status (*launch)(const Plan *, void *),
          akx_status (*runtime)(const akx_context *, const Plan *)>
akx_status cuda_launch(akx_context *ctx, const Plan *plan) {
  device_scope scope(ctx->device);
  AKX_TRY(scope.check());
  pdl_scope pdl(akx__context_pdl(ctx));
  (void)cudaGetLastError();
  if (!akx__prebuilt_serves(ctx, akx::is_prebuilt(AKX_BACKEND_CUDA, *plan))) return runtime(ctx, plan);
  return launch(plan, ctx->stream);
}

akx_status cuda_run(akx_context *ctx, akx_status (*fn)(void *, void *, void *), void *workspace,
                    void *arg) {
  device_scope scope(ctx->device);
  AKX_TRY(scope.check());
  (void)cudaGetLastError();  // as cuda_launch
  return fn(ctx->stream, workspace, arg);
}

}  // namespace

extern "C" int akx__cuda_launch_pdl(void) { return pdl_now; }

// src/cuda/api_calls.h. Counted by AKX_CUDA_API (below) at every call site.
static thread_local uint64_t api_calls = 0;
extern "C" uint64_t akx__cuda_api_calls(void) { return api_calls; }

extern "C" akx_status akx__cuda_check_launch(const char *kernel_name) {
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    return akx__fail(AKX_ERROR_DEVICE, "kernel %s failed to launch: %s (%s)", kernel_name,
                     cudaGetErrorString(e), cudaGetErrorName(e));
  return AKX_SUCCESS;
}

// The checks of the sim's run_kernel (src/sim/launch.cpp) that come from the kernel's
// declaration, with the same sentences: the driver would refuse both launches too, but as
// "invalid argument" / "invalid configuration" naming neither the kernel nor the limit.
extern "C" akx_status akx__cuda_prepare_launch(const void *kernel, const char *kernel_name,
                                               int max_threads, int smem_optin,
                                               unsigned threads, size_t smem_bytes) {
  if (threads > unsigned(max_threads))
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "kernel '%s': a block of %u threads is more than its launch bounds "
                     "(__launch_bounds__(%d)) allow",
                     kernel_name, threads, max_threads);
  // The driver counts the kernel's static shared memory and the launch's dynamic part against
  // one limit: 48 KiB without the opt-in attribute.
  cudaFuncAttributes attr;
  cudaError_t fe = cudaFuncGetAttributes(&attr, kernel);
  if (fe != cudaSuccess) {
    (void)cudaGetLastError();
    return akx__fail(AKX_ERROR_DEVICE, "kernel '%s': cudaFuncGetAttributes failed: %s (%s)",
                     kernel_name, cudaGetErrorString(fe), cudaGetErrorName(fe));
  }
  if (smem_bytes + attr.sharedSizeBytes <= size_t(akx__static_shared_limit)) return AKX_SUCCESS;
  if (!smem_optin)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "kernel '%s': %zu bytes of dynamic and %zu of static shared memory without "
                     "the opt-in: above %d bytes together a kernel must be declared with "
                     "smem_optin (the CUDA backend then sets "
                     "cudaFuncAttributeMaxDynamicSharedMemorySize)",
                     kernel_name, smem_bytes, (size_t)attr.sharedSizeBytes, akx__static_shared_limit);
  // Set before every such launch (a cheap host-side call): the attribute is per kernel and
  // per device, and the launch may be on another device than the last one.
  cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       int(smem_bytes));
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // else the launch check would report it as the launch's
    return akx__fail(e == cudaErrorInvalidValue ? AKX_ERROR_INVALID_ARGUMENT : AKX_ERROR_DEVICE,
                     "kernel '%s': cudaFuncSetAttribute(cudaFuncAttributeMaxDynamicSharedMemorySize, "
                     "%zu) failed: %s (%s)",
                     kernel_name, smem_bytes, cudaGetErrorString(e), cudaGetErrorName(e));
  }
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
    cuda_launch<akx__reduce_whole_plan, akx__cuda_reduce_whole_launch, akx__cuda_runtime_reduce_whole>,
    cuda_launch<akx__reduce_dims_plan, akx__cuda_reduce_dims_launch, akx__cuda_runtime_reduce_dims>,
    cuda_launch<akx__scan_plan, akx__cuda_scan_launch, akx__cuda_runtime_scan>,
    cuda_launch<akx__findall_plan, akx__cuda_findall_launch, akx__cuda_runtime_findall>,
    cuda_run,              // run
};
