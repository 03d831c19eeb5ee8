/* The CUDA backend's decisions around a launch, over a table of the CUDA calls they make
 * (akx__cuda_calls): src/cuda/backend_cuda.cu fills the table with cudart and the driver,
 * tests/test_cuda_seams.c with fakes. What the backend does with the calls' answers (a kernel's
 * PTX version, a stream's capture status, a stream's device, the thread's current device) is
 * this file's code, compiled into every build (CMakeLists.txt: AKX_CUDA_SEAM_SOURCES), so that
 * it runs and is tested where there is no GPU; the .cu files keep only the calls themselves.
 * The pure rules these follow are src/core/launch_rules.h's. */
#ifndef AKX_CUDA_LAUNCH_CALLS_H
#define AKX_CUDA_LAUNCH_CALLS_H
#include <stddef.h>
#include <stdint.h>
#include "akx.h"
#ifdef __cplusplus
extern "C" {
#endif

/* cudaError_t and cudaStreamCaptureStatus values (driver_types.h) the decisions read. */
enum {
  AKX__CUDA_SUCCESS = 0,
  AKX__CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER = 36,
  AKX__CUDA_ERROR_INVALID_RESOURCE_HANDLE = 400,
  AKX__CUDA_ERROR_NOT_SUPPORTED = 801,
  AKX__CUDA_ERROR_STREAM_CAPTURE_IMPLICIT = 906,
  AKX__CUDA_CAPTURE_STATUS_NONE = 0,
};

/* Each member makes one CUDA call (the backend's counts it, src/cuda/api_calls.h) and returns
 * its cudaError_t as an int; none takes the thread's last error back (take_error does). */
typedef struct {
  int (*get_device)(int *device);                /* cudaGetDevice */
  int (*set_device)(int device);                 /* cudaSetDevice */
  /* cudaFuncGetAttributes: the kernel image's ptxVersion and its static shared memory. */
  int (*func_get_attributes)(const void *kernel, int *ptx_version, int64_t *static_bytes);
  /* cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes). */
  int (*func_set_max_dynamic_smem)(const void *kernel, int bytes);
  /* cudaStreamIsCapturing: *status a cudaStreamCaptureStatus. */
  int (*stream_is_capturing)(void *stream, int *status);
  /* cudaStreamGetDevice (cudaErrorCallRequiresNewerDriver from a toolkit without it). */
  int (*stream_get_device)(void *stream, int *device);
  /* The driver's answer instead: the device of the stream's context (cuStreamGetCtx, then
   * cuCtxGetDevice with it pushed); a CUresult, 0 on success; -1 where the driver lacks those
   * entry points. */
  int (*driver_stream_device)(void *stream, int *device);
  void (*take_error)(void);                      /* cudaGetLastError, its answer dropped */
  const char *(*error_string)(int e);            /* cudaGetErrorString */
  const char *(*error_name)(int e);              /* cudaGetErrorName */
} akx__cuda_calls;

/* AKX_SUCCESS for cudaSuccess; else takes the error back and fails with status s and
 * "<what> failed: <string> (<name>)". */
akx_status akx__cuda_check(const akx__cuda_calls *calls, akx_status s, int e, const char *what);

/* ---- the device a call runs on ------------------------------------------------------------------
 * cudart's current device is per host thread and belongs to the caller: an entry that talks to
 * the device makes the context's device current for its whole body (cudaSetDevice only when
 * it is not already) and makes the caller's current again on the way out. */
typedef struct {
  int saved;    /* the caller's device, -1 when cudaGetDevice failed (nothing to restore) */
  int switched; /* cudaSetDevice ran and succeeded */
  int error;    /* cudaSetDevice's error, 0 when the device is current */
} akx__cuda_device_scope;
void akx__cuda_device_enter(const akx__cuda_calls *calls, int device, akx__cuda_device_scope *scope);
void akx__cuda_device_leave(const akx__cuda_calls *calls, const akx__cuda_device_scope *scope);
/* AKX_SUCCESS, or AKX_ERROR_DEVICE with cudaSetDevice's sentence. */
akx_status akx__cuda_device_check(const akx__cuda_calls *calls, const akx__cuda_device_scope *scope);
/* fn(arg) with the context's device current, the caller's restored after: the run-time
 * unit's NVRTC compile and module load (src/cuda/runtime_kernels.cu), which otherwise
 * run on whatever device the thread has current, and may create a primary context there. */
akx_status akx__cuda_on_device(const akx__cuda_calls *calls, int device, akx_status (*fn)(void *), void *arg);

/* ---- stream capture ------------------------------------------------------------------------------
 * Whether work enqueued on `stream` now is captured into a CUDA graph (cudaStreamIsCapturing:
 * a capture active or invalidated). The legacy stream (NULL) cannot capture: there the call
 * answers cudaErrorStreamCaptureImplicit while another stream of the device captures in global
 * or thread-local mode, and work on the legacy stream would join that capture (or invalidate
 * it): refused with AKX_ERROR_UNSUPPORTED, the sentence naming the way out. */
akx_status akx__cuda_capturing(const akx__cuda_calls *calls, void *stream, int *capturing);

/* The stream's device: cudaStreamGetDevice's answer, or the driver's where the runtime is
 * newer than the driver (akx__stream_device_way). A cudaError_t; never takes an error back. */
int akx__cuda_stream_device(const akx__cuda_calls *calls, void *stream, int *device);

/* ---- a family call's facts and its launches ---------------------------------------------------- */
/* What the calling thread's launches need to know of the call they belong to (a family's
 * call or akx_context_run's function): set for the call's length by akx__cuda_call_enter. */
typedef struct {
  void *stream;
  int device;
  int pdl_setting, cc_major; /* akx__context_pdl, the device's compute capability */
  int capturing;             /* the stream captures a graph (akx__cuda_capturing) */
  int64_t shared_per_block;  /* the device's opt-in maximum (akx_context_info) */
} akx__cuda_call_facts;
/* The context's facts, its stream's capture status asked (one cudaStreamIsCapturing).
 * The context's device must be current. */
akx_status akx__cuda_call_facts_of(const akx__cuda_calls *calls, const akx_context *ctx, akx__cuda_call_facts *f);
/* Makes *f the calling thread's facts until akx__cuda_call_leave(the returned value): f
 * must outlive the call. Scopes nest. */
const akx__cuda_call_facts *akx__cuda_call_enter(const akx__cuda_call_facts *f);
void akx__cuda_call_leave(const akx__cuda_call_facts *previous);

/* akx__cuda_prepare_launch's body (kernels/akx/device.cuh): the checks of the kernel's
 * declaration, the kernel's attributes on the call's device (read and its opt-in set once per
 * (kernel, device), src/core/launch_rules.h), and *pdl. Refused (AKX_ERROR_UNSUPPORTED, no CUDA
 * call made) outside a call's scope on this thread, where no context says which device, which
 * opt-in maximum and which settings, and at a kernel's first launch on a device while the
 * stream captures: reading the attributes and setting the opt-in are driver calls, which a
 * capture does not hold. */
akx_status akx__cuda_prepare_launch_with(const akx__cuda_calls *calls, const void *kernel, const char *kernel_name,
                                         int max_threads, int smem_optin, unsigned threads, size_t smem_bytes,
                                         int *pdl);

#ifdef __cplusplus
}
#endif
#endif
