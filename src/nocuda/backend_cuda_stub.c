/* The CUDA backend of a build without CUDA (AKX_CUDA=OFF, or no nvcc found): the table
 * exists so that src/ needs no #ifdef, and opening it says why there is no device. Every
 * member is filled, so that no path through src/ can call a null pointer. */
#include "backend.h"
#include "error.h"

static akx_status unavailable(void) {
  return akx__fail(AKX_ERROR_NO_DEVICE,
                   "libakx was built without the CUDA backend (AKX_CUDA=OFF or no nvcc)");
}

static akx_status nocuda_open(akx_context *ctx, int device) { return unavailable(); }
static void nocuda_close(akx_context *ctx) {}
static akx_status nocuda_malloc(akx_context *ctx, void **ptr, size_t bytes) { return unavailable(); }
static akx_status nocuda_free(akx_context *ctx, void *ptr) { return unavailable(); }
static akx_status nocuda_memcpy(akx_context *ctx, void *dst, const void *src, size_t bytes,
                                akx_copy_kind k) {
  return unavailable();
}
static akx_status nocuda_zero(akx_context *ctx, void *ptr, size_t bytes) { return unavailable(); }
static akx_status nocuda_synchronize(akx_context *ctx) { return unavailable(); }
static akx_status nocuda_set_stream(akx_context *ctx, void *stream) { return unavailable(); }
static akx_status nocuda_is_capturing(const akx_context *ctx, int *capturing) {
  *capturing = 0;
  return unavailable();
}
static int nocuda_is_device_range(const akx_context *ctx, const void *p, size_t bytes) { return 0; }
static int nocuda_allocation_of(const akx_context *ctx, const void *p, const void **base, size_t *bytes) {
  return 0;
}
static akx_status nocuda_launch(akx_context *ctx, int family, const akx__entry *entry, const void *plan) {
  return unavailable();
}
static akx_status nocuda_runtime_unit(const akx_context *ctx, const akx__combination *c, void **unit) {
  return unavailable();
}
static akx_status nocuda_run(akx_context *ctx, akx_status (*fn)(void *, void *, void *),
                             void *workspace, void *arg) {
  return unavailable();
}

akx_status akx__cuda_copy_async(akx_context *ctx, void *dst, const void *src, size_t bytes) { return unavailable(); }

const akx__backend akx__backend_cuda = {
    .kind = AKX_BACKEND_CUDA,
    .open = nocuda_open,
    .close = nocuda_close,
    .malloc = nocuda_malloc,
    .free = nocuda_free,
    .memcpy = nocuda_memcpy,
    .zero = nocuda_zero,
    .synchronize = nocuda_synchronize,
    .set_stream = nocuda_set_stream,
    .is_capturing = nocuda_is_capturing,
    .is_device_range = nocuda_is_device_range,
    .allocation_of = nocuda_allocation_of,
    .launch = nocuda_launch,
    .runtime_unit = nocuda_runtime_unit,
    .module_runtime = NULL,
    .run = nocuda_run,
};

/* src/cuda/api_calls.h: no CUDA backend, no CUDA calls. */
#include "../cuda/api_calls.h"
uint64_t akx__cuda_api_calls(void) { return 0; }
void akx__cuda_api_calls_add(uint64_t n) { (void)n; }

/* kernels/akx/device.cuh's launcher calls this from a program nvcc compiled against the
 * installed headers: libakx.so exports it in every build (cmake/akx.map), so that program links
 * here too, and its launches (through a sim context's akx_context_run) are refused. */
akx_status akx__cuda_prepare_launch(const void *kernel, const char *kernel_name, int max_threads, int smem_optin,
                                    unsigned threads, size_t smem_bytes, int *pdl) {
  return unavailable();
}
