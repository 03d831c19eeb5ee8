/* The CUDA backend's decisions around a launch, over its table of CUDA calls (the contract is
 * in launch_calls.h). */
#include "launch_calls.h"

#include "backend.h"
#include "error.h"
#include "launch_rules.h"

akx_status akx__cuda_check(const akx__cuda_calls *calls, akx_status s, int e, const char *what) {
  if (e == AKX__CUDA_SUCCESS) return AKX_SUCCESS;
  /* A failed runtime call also leaves its error as the thread's "last error", which would be
   * reported later as someone else's: take it back here. */
  calls->take_error();
  return akx__fail(s, "%s failed: %s (%s)", what, calls->error_string(e), calls->error_name(e));
}

/* ---- the device a call runs on ---------------------------------------------------------------- */

void akx__cuda_device_enter(const akx__cuda_calls *calls, int device, akx__cuda_device_scope *scope) {
  scope->saved = -1;
  scope->switched = 0;
  scope->error = AKX__CUDA_SUCCESS;
  const int e = calls->get_device(&scope->saved);
  if (e == AKX__CUDA_SUCCESS && scope->saved == device) return;
  if (e != AKX__CUDA_SUCCESS) {
    calls->take_error();
    scope->saved = -1;
  }
  scope->error = calls->set_device(device);
  scope->switched = scope->error == AKX__CUDA_SUCCESS;
}

/* A failure to switch back cannot be reported (the call's own status is decided by then); it
 * is not left behind as the caller's "last error" either. */
void akx__cuda_device_leave(const akx__cuda_calls *calls, const akx__cuda_device_scope *scope) {
  if (scope->switched && scope->saved >= 0 && calls->set_device(scope->saved) != AKX__CUDA_SUCCESS)
    calls->take_error();
}

akx_status akx__cuda_device_check(const akx__cuda_calls *calls, const akx__cuda_device_scope *scope) {
  return akx__cuda_check(calls, AKX_ERROR_DEVICE, scope->error, "cudaSetDevice");
}

akx_status akx__cuda_on_device(const akx__cuda_calls *calls, int device, akx_status (*fn)(void *), void *arg) {
  akx__cuda_device_scope scope;
  akx__cuda_device_enter(calls, device, &scope);
  akx_status s = akx__cuda_device_check(calls, &scope);
  if (s == AKX_SUCCESS) s = fn(arg);
  akx__cuda_device_leave(calls, &scope);
  return s;
}

/* ---- stream capture ------------------------------------------------------------------------------ */

akx_status akx__cuda_capturing(const akx__cuda_calls *calls, void *stream, int *capturing) {
  *capturing = 0;
  int status = AKX__CUDA_CAPTURE_STATUS_NONE;
  const int e = calls->stream_is_capturing(stream, &status);
  if (e == AKX__CUDA_ERROR_STREAM_CAPTURE_IMPLICIT) {
    calls->take_error();
    /* Only the legacy stream is answered so (it cannot capture itself). */
    return akx__fail(AKX_ERROR_UNSUPPORTED,
                     "the context is on the legacy default stream (NULL) while another stream of its CUDA device "
                     "is capturing a CUDA graph in global or thread-local mode (cudaStreamIsCapturing: "
                     "cudaErrorStreamCaptureImplicit): work on the legacy stream would join that capture or "
                     "invalidate it; make the call after that capture ends, and give the context a stream of its "
                     "own (akx_context_set_stream, outside any capture)");
  }
  AKX_TRY(akx__cuda_check(calls, AKX_ERROR_DEVICE, e, "cudaStreamIsCapturing"));
  /* An invalidated capture still counts: the caller ends it with cudaStreamEndCapture. */
  *capturing = status != AKX__CUDA_CAPTURE_STATUS_NONE;
  return AKX_SUCCESS;
}

int akx__cuda_stream_device(const akx__cuda_calls *calls, void *stream, int *device) {
  const int e = calls->stream_get_device(stream, device);
  if (akx__stream_device_way(e) != 1) return e;
  calls->take_error();
  const int r = calls->driver_stream_device(stream, device);
  /* No driver entry points: the runtime's own answer says why. */
  if (r < 0) return e;
  return r == 0 ? AKX__CUDA_SUCCESS : AKX__CUDA_ERROR_INVALID_RESOURCE_HANDLE;
}

/* ---- a family call's facts and its launches ---------------------------------------------------- */

akx_status akx__cuda_call_facts_of(const akx__cuda_calls *calls, const akx_context *ctx, akx__cuda_call_facts *f) {
  f->stream = ctx->stream;
  f->device = ctx->device;
  f->pdl_setting = akx__context_pdl(ctx);
  f->cc_major = ctx->info.cc_major;
  f->shared_per_block = ctx->info.shared_per_block;
  /* Asked whatever AKX_PDL says: a capturing stream takes plain launches (akx__launch_pdl), a
   * kernel's first launch is refused in it (fill_attributes), and the legacy stream is refused
   * while another stream captures (akx__cuda_capturing). */
  return akx__cuda_capturing(calls, ctx->stream, &f->capturing);
}

static _Thread_local const akx__cuda_call_facts *call_now;

const akx__cuda_call_facts *akx__cuda_call_enter(const akx__cuda_call_facts *f) {
  const akx__cuda_call_facts *previous = call_now;
  call_now = f;
  return previous;
}

void akx__cuda_call_leave(const akx__cuda_call_facts *previous) { call_now = previous; }

typedef struct {
  const akx__cuda_calls *calls;
  const akx__cuda_call_facts *facts;
  const char *kernel_name;
  int smem_optin;
} fill_arg;

/* A kernel's attributes on the call's device (current: the call's scope made it so), read
 * once and its opt-in attribute set once, under the table's lock (src/core/launch_rules.c), so
 * that no launch ever changes what another thread's launch of the same kernel was checked
 * against. Not kept when it fails, so that the same kernel's launch outside the capture fills it. */
static akx_status fill_attributes(const void *kernel, const void *device, void *arg, akx__kernel_attributes *out) {
  (void)device;
  const fill_arg *g = arg;
  const akx__cuda_call_facts *f = g->facts;
  if (f->capturing)
    return akx__fail(AKX_ERROR_UNSUPPORTED,
                     "the context's stream is capturing a CUDA graph and kernel '%s' was never launched on CUDA "
                     "device %d: a kernel's first launch on a device reads its attributes (cudaFuncGetAttributes) "
                     "and sets its shared-memory opt-in (cudaFuncSetAttribute), which a capture cannot hold; make "
                     "the same call once before capturing",
                     g->kernel_name, f->device);
  int ptx_version = 0;
  int64_t static_bytes = 0;
  AKX_TRY(akx__cuda_check(g->calls, AKX_ERROR_DEVICE, g->calls->func_get_attributes(kernel, &ptx_version, &static_bytes),
                          "cudaFuncGetAttributes"));
  out->ptx_version = ptx_version;
  out->static_bytes = static_bytes;
  out->max_dynamic = (int64_t)akx__static_shared_limit - static_bytes;
  if (!g->smem_optin) return AKX_SUCCESS;
  /* The attribute holds for the whole process: set from an unknown maximum (0), it would cap
   * every later launch of the kernel on the device at its static shared memory. */
  if (f->shared_per_block <= 0)
    return akx__fail(AKX_ERROR_INTERNAL,
                     "kernel '%s': the opt-in maximum of shared memory per block of CUDA device %d is unknown "
                     "(%lld bytes): cudaFuncAttributeMaxDynamicSharedMemorySize is not set from it",
                     g->kernel_name, f->device, (long long)f->shared_per_block);
  const int64_t value = akx__dynamic_smem_attribute(1, f->shared_per_block, static_bytes);
  AKX_TRY(akx__cuda_check(g->calls, AKX_ERROR_DEVICE, g->calls->func_set_max_dynamic_smem(kernel, (int)value),
                          "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)"));
  out->max_dynamic = value;
  return AKX_SUCCESS;
}

akx_status akx__cuda_prepare_launch_with(const akx__cuda_calls *calls, const void *kernel, const char *kernel_name,
                                         int max_threads, int smem_optin, unsigned threads, size_t smem_bytes,
                                         int *pdl) {
  *pdl = 0;
  const akx__cuda_call_facts *f = call_now;
  /* Outside a call nothing says which device the launch is for, its opt-in maximum (the
   * attribute set from it holds for the whole process) or its settings. */
  if (!f)
    return akx__fail(AKX_ERROR_UNSUPPORTED,
                     "kernel '%s' is launched outside a libakx call on this thread: libakx's launches run inside a "
                     "family call or inside the function akx_context_run calls, on the thread that called it "
                     "(include/akx_layer.h), which gives them the context's device and settings",
                     kernel_name);
  if (threads > (unsigned)max_threads)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "kernel '%s': a block of %u threads is more than its launch bounds "
                     "(__launch_bounds__(%d)) allow",
                     kernel_name, threads, max_threads);
  akx__kernel_attributes a;
  fill_arg g = {calls, f, kernel_name, smem_optin};
  AKX_TRY(akx__kernel_attributes_get(kernel, (const void *)(intptr_t)f->device, fill_attributes, &g, &a));
  /* The driver counts the kernel's static shared memory and the launch's dynamic part against
   * one limit: 48 KiB without the opt-in, the attribute with it (max_dynamic holds either). */
  AKX_TRY(akx__check_dynamic_smem(kernel_name, smem_optin, smem_bytes, &a));
  *pdl = akx__launch_pdl(f->pdl_setting, f->cc_major, a.ptx_version, f->capturing);
  return AKX_SUCCESS;
}
