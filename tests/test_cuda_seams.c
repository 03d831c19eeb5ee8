/* The CUDA backend's decisions around a launch (src/cuda/launch_calls.h) on fake CUDA calls:
 * what it does with a kernel image's PTX version, a stream's capture status, a stream's
 * device and the thread's current device. src/cuda/backend_cuda.cu runs the same code over
 * cudart; here a table of fakes answers and counts, so that the call sites run without a GPU
 * (the rules themselves have their tables in tests/test_launch_rules.c). Built in every
 * configuration: the decisions are C, compiled into the sim-only build too. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "akx.h"
#include "backend.h"
#include "cuda/launch_calls.h"

/* ---- the fakes: one CUDA device set per test, every call counted --------------------------- */
static struct {
  int current;              /* the thread's current device */
  int get_device_error;
  int ptx_version;          /* what cudaFuncGetAttributes says of every kernel */
  int64_t static_bytes;
  int capture_error, capture_status;
  int stream_device_error, stream_device; /* cudaStreamGetDevice */
  int driver_error, driver_device;        /* the driver's answer */
  int device_seen_by_fn;
  /* calls */
  int get_device, set_device, func_get_attributes, func_set, set_value, stream_is_capturing,
      stream_get_device, driver_stream_device, take_error;
} fake;

static int f_get_device(int *d) {
  fake.get_device++;
  *d = fake.current;
  return fake.get_device_error;
}
static int f_set_device(int d) {
  fake.set_device++;
  fake.current = d;
  return 0;
}
static int f_func_get_attributes(const void *k, int *ptx, int64_t *st) {
  (void)k;
  fake.func_get_attributes++;
  *ptx = fake.ptx_version;
  *st = fake.static_bytes;
  return 0;
}
static int f_func_set(const void *k, int bytes) {
  (void)k;
  fake.func_set++;
  fake.set_value = bytes;
  return 0;
}
static int f_stream_is_capturing(void *s, int *status) {
  (void)s;
  fake.stream_is_capturing++;
  *status = fake.capture_status;
  return fake.capture_error;
}
static int f_stream_get_device(void *s, int *d) {
  (void)s;
  fake.stream_get_device++;
  if (fake.stream_device_error == 0) *d = fake.stream_device;
  return fake.stream_device_error;
}
static int f_driver_stream_device(void *s, int *d) {
  (void)s; /* (-1 in driver_error: no such entry points) */
  fake.driver_stream_device++;
  if (fake.driver_error == 0) *d = fake.driver_device;
  return fake.driver_error;
}
static void f_take_error(void) { fake.take_error++; }
static const char *f_error_string(int e) { return e == 906 ? "operation would make the legacy stream depend on a capturing blocking stream" : "some error"; }
static const char *f_error_name(int e) { return e == 906 ? "cudaErrorStreamCaptureImplicit" : "cudaErrorSomething"; }

static const akx__cuda_calls calls = {f_get_device,         f_set_device,      f_func_get_attributes,
                                      f_func_set,           f_stream_is_capturing, f_stream_get_device,
                                      f_driver_stream_device, f_take_error,    f_error_string,
                                      f_error_name};

static void reset(void) {
  memset(&fake, 0, sizeof fake);
  fake.ptx_version = 90;
}

/* Each test's kernels: addresses no other test uses, so that the process-wide attribute table
 * (src/core/launch_rules.c) has no entry for them yet. */
static char kernels[16][8];

/* A call's facts on an sm_90 device with AKX_PDL on, not capturing. */
static akx__cuda_call_facts facts(int device) {
  const akx__cuda_call_facts f = {NULL, device, 1, 9, 0, 232448};
  return f;
}

static akx_status prepare(const void *kernel, int smem_optin, size_t smem, int *pdl) {
  return akx__cuda_prepare_launch_with(&calls, kernel, "k", 256, smem_optin, 256, smem, pdl);
}

/* ---- outside a call: refused, no driver call, no attribute pinned ---------------------------- */

Test(cuda_seams, a_launch_outside_a_call_is_refused_without_a_cuda_call) {
  reset();
  int pdl = 7;
  cr_assert_eq(prepare(kernels[0], 1, 1024, &pdl), AKX_ERROR_UNSUPPORTED, "%s", akx_last_error());
  cr_expect(strstr(akx_last_error(), "outside a libakx call") != NULL, "%s", akx_last_error());
  cr_expect(strstr(akx_last_error(), "akx_context_run") != NULL, "%s", akx_last_error());
  cr_expect_eq(pdl, 0);
  cr_expect_eq(fake.func_get_attributes + fake.func_set, 0, "a CUDA call outside a call's scope");
  /* Inside a call's scope the same kernel fills and its attribute is the device's maximum less
   * its static shared memory: the refusal kept nothing in the table. */
  fake.static_bytes = 1024;
  const akx__cuda_call_facts f = facts(0);
  const akx__cuda_call_facts *prev = akx__cuda_call_enter(&f);
  cr_assert_eq(prepare(kernels[0], 1, 1024, &pdl), AKX_SUCCESS, "%s", akx_last_error());
  akx__cuda_call_leave(prev);
  cr_expect_eq(fake.func_set, 1);
  cr_expect_eq(fake.set_value, 232448 - 1024, "the attribute: %d", fake.set_value);
  /* The scope ended: refused again. */
  cr_expect_eq(prepare(kernels[0], 1, 1024, &pdl), AKX_ERROR_UNSUPPORTED);
}

Test(cuda_seams, an_unknown_opt_in_maximum_is_never_pinned) {
  reset();
  akx__cuda_call_facts f = facts(0);
  f.shared_per_block = 0;
  const akx__cuda_call_facts *prev = akx__cuda_call_enter(&f);
  int pdl = 0;
  cr_expect_eq(prepare(kernels[1], 1, 0, &pdl), AKX_ERROR_INTERNAL, "%s", akx_last_error());
  cr_expect(strstr(akx_last_error(), "unknown") != NULL, "%s", akx_last_error());
  cr_expect_eq(fake.func_set, 0, "cudaFuncSetAttribute(%d) from an unknown maximum", fake.set_value);
  /* A kernel without the opt-in sets nothing and needs no maximum. */
  cr_expect_eq(prepare(kernels[2], 0, 0, &pdl), AKX_SUCCESS, "%s", akx_last_error());
  cr_expect_eq(fake.func_set, 0);
  akx__cuda_call_leave(prev);
}

Test(cuda_seams, scopes_nest_and_restore) {
  reset();
  const akx__cuda_call_facts outer = facts(0), inner = facts(1);
  const akx__cuda_call_facts *p0 = akx__cuda_call_enter(&outer);
  const akx__cuda_call_facts *p1 = akx__cuda_call_enter(&inner);
  cr_expect_eq(p1, &outer);
  akx__cuda_call_leave(p1);
  int pdl = 0;
  cr_expect_eq(prepare(kernels[3], 0, 0, &pdl), AKX_SUCCESS, "the outer scope holds: %s", akx_last_error());
  akx__cuda_call_leave(p0);
  cr_expect_eq(p0, NULL);
  cr_expect_eq(prepare(kernels[3], 0, 0, &pdl), AKX_ERROR_UNSUPPORTED);
}

/* ---- PDL by the kernel's image: an sm_90 device, AKX_PDL on -------------------------------- */

Test(cuda_seams, an_image_of_compute_80_launches_without_pdl) {
  reset();
  const akx__cuda_call_facts f = facts(0);
  const akx__cuda_call_facts *prev = akx__cuda_call_enter(&f);
  int pdl = 7;
  fake.ptx_version = 80;
  cr_assert_eq(prepare(kernels[4], 0, 0, &pdl), AKX_SUCCESS, "%s", akx_last_error());
  cr_expect_eq(pdl, 0, "a compute_80 image has no griddepcontrol.wait: launched with PDL");
  fake.ptx_version = 90;
  cr_assert_eq(prepare(kernels[5], 0, 0, &pdl), AKX_SUCCESS, "%s", akx_last_error());
  cr_expect_eq(pdl, 1, "a compute_90 image on an sm_90 device with AKX_PDL on: no PDL");
  /* Each kernel keeps its own image's answer (from the table: no second cudaFuncGetAttributes). */
  cr_assert_eq(prepare(kernels[4], 0, 0, &pdl), AKX_SUCCESS);
  cr_expect_eq(pdl, 0);
  cr_expect_eq(fake.func_get_attributes, 2);
  akx__cuda_call_leave(prev);
}

/* ---- stream capture --------------------------------------------------------------------------- */

Test(cuda_seams, a_first_launch_inside_a_capture_makes_no_driver_call) {
  reset();
  akx__cuda_call_facts f = facts(0);
  f.capturing = 1;
  const akx__cuda_call_facts *prev = akx__cuda_call_enter(&f);
  int pdl = 7;
  cr_assert_eq(prepare(kernels[6], 1, 0, &pdl), AKX_ERROR_UNSUPPORTED, "%s", akx_last_error());
  cr_expect(strstr(akx_last_error(), "capturing") != NULL, "%s", akx_last_error());
  cr_expect(strstr(akx_last_error(), "once before capturing") != NULL, "%s", akx_last_error());
  cr_expect_eq(fake.func_get_attributes + fake.func_set, 0, "a driver call inside the capture");
  /* Launched once outside a capture, the kernel is captured with no driver call, plainly. */
  f.capturing = 0;
  cr_assert_eq(prepare(kernels[6], 1, 0, &pdl), AKX_SUCCESS, "%s", akx_last_error());
  cr_expect_eq(pdl, 1);
  const int before = fake.func_get_attributes + fake.func_set;
  f.capturing = 1;
  cr_assert_eq(prepare(kernels[6], 1, 0, &pdl), AKX_SUCCESS, "%s", akx_last_error());
  cr_expect_eq(pdl, 0, "a captured launch is plain");
  cr_expect_eq(fake.func_get_attributes + fake.func_set, before);
  akx__cuda_call_leave(prev);
}

static akx_context *open_sim(void) {
  akx_context *ctx = NULL;
  cr_assert_eq(akx_context_create(&ctx, AKX_BACKEND_SIM, 0), AKX_SUCCESS, "%s", akx_last_error());
  return ctx;
}

/* The call's facts ask the stream's capture status whatever AKX_PDL says: with PDL off too, a
 * kernel's first launch inside a capture is refused. */
Test(cuda_seams, a_calls_facts_ask_the_capture_status_with_pdl_off) {
  reset();
  akx_context *ctx = open_sim();
  ctx->settings.pdl = 0;
  fake.capture_status = 1; /* cudaStreamCaptureStatusActive */
  akx__cuda_call_facts f;
  cr_assert_eq(akx__cuda_call_facts_of(&calls, ctx, &f), AKX_SUCCESS, "%s", akx_last_error());
  cr_expect_eq(fake.stream_is_capturing, 1);
  cr_expect_eq(f.capturing, 1);
  cr_expect_eq(f.pdl_setting, 0);
  cr_expect_eq(f.device, ctx->device);
  cr_expect_eq(f.shared_per_block, ctx->info.shared_per_block);
  const akx__cuda_call_facts *prev = akx__cuda_call_enter(&f);
  int pdl = 0;
  cr_expect_eq(prepare(kernels[7], 0, 0, &pdl), AKX_ERROR_UNSUPPORTED, "%s", akx_last_error());
  cr_expect_eq(fake.func_get_attributes, 0);
  akx__cuda_call_leave(prev);
  /* Status 2 (invalidated) still counts as capturing: the caller ends it. */
  fake.capture_status = 2;
  cr_assert_eq(akx__cuda_call_facts_of(&calls, ctx, &f), AKX_SUCCESS);
  cr_expect_eq(f.capturing, 1);
  fake.capture_status = 0;
  cr_assert_eq(akx__cuda_call_facts_of(&calls, ctx, &f), AKX_SUCCESS);
  cr_expect_eq(f.capturing, 0);
  akx_context_destroy(ctx);
}

/* The legacy stream while another stream captures in global mode: cudaStreamIsCapturing answers
 * cudaErrorStreamCaptureImplicit. The call is refused, the error taken back, the way out named. */
Test(cuda_seams, the_legacy_stream_is_refused_while_another_stream_captures) {
  reset();
  akx_context *ctx = open_sim();
  fake.capture_error = 906;
  akx__cuda_call_facts f;
  cr_assert_eq(akx__cuda_call_facts_of(&calls, ctx, &f), AKX_ERROR_UNSUPPORTED, "%s", akx_last_error());
  const char *why = akx_last_error();
  cr_expect(strstr(why, "legacy default stream") != NULL, "%s", why);
  cr_expect(strstr(why, "cudaErrorStreamCaptureImplicit") != NULL, "%s", why);
  cr_expect(strstr(why, "akx_context_set_stream") != NULL, "%s", why);
  cr_expect_eq(fake.take_error, 1, "the error was left as the caller's last error");
  int capturing = 7;
  cr_expect_eq(akx__cuda_capturing(&calls, NULL, &capturing), AKX_ERROR_UNSUPPORTED);
  /* Any other error is the device's. */
  fake.capture_error = 700;
  cr_expect_eq(akx__cuda_capturing(&calls, NULL, &capturing), AKX_ERROR_DEVICE);
  cr_expect(strstr(akx_last_error(), "cudaStreamIsCapturing failed") != NULL, "%s", akx_last_error());
  akx_context_destroy(ctx);
}

/* ---- a stream's device: the runtime's answer, else the driver's -------------------------------- */

Test(cuda_seams, a_stream_device_falls_back_to_the_driver) {
  reset();
  int device = -1;
  fake.stream_device_error = 0;
  fake.stream_device = 2;
  cr_expect_eq(akx__cuda_stream_device(&calls, (void *)0x10, &device), 0);
  cr_expect_eq(device, 2);
  cr_expect_eq(fake.driver_stream_device, 0);
  /* A runtime newer than the driver: cudaErrorCallRequiresNewerDriver, then cudaErrorNotSupported. */
  const int newer[] = {36, 801};
  for (int i = 0; i < 2; i++) {
    reset();
    fake.stream_device_error = newer[i];
    fake.driver_device = 3;
    device = -1;
    cr_expect_eq(akx__cuda_stream_device(&calls, (void *)0x10, &device), 0, "error %d", newer[i]);
    cr_expect_eq(device, 3, "error %d: the driver's answer not taken", newer[i]);
    cr_expect_eq(fake.driver_stream_device, 1);
    cr_expect_eq(fake.take_error, 1, "error %d not taken back", newer[i]);
    /* The driver fails too: the stream is not usable. */
    fake.driver_error = 201;
    cr_expect_eq(akx__cuda_stream_device(&calls, (void *)0x10, &device), 400);
  }
  /* A driver without the entry points: the runtime's own error. */
  reset();
  fake.stream_device_error = 36;
  fake.driver_error = -1;
  cr_expect_eq(akx__cuda_stream_device(&calls, (void *)0x10, &device), 36);
  /* An invalid stream: refused, the driver not asked. */
  reset();
  fake.stream_device_error = 400;
  cr_expect_eq(akx__cuda_stream_device(&calls, (void *)0x10, &device), 400);
  cr_expect_eq(fake.driver_stream_device, 0);
}

/* ---- the device a call runs on ------------------------------------------------------------------ */

static akx_status note_device(void *arg) {
  (void)arg;
  fake.device_seen_by_fn = fake.current;
  return AKX_SUCCESS;
}

Test(cuda_seams, work_runs_on_the_contexts_device_and_the_callers_comes_back) {
  reset();
  fake.current = 1;
  cr_assert_eq(akx__cuda_on_device(&calls, 0, note_device, NULL), AKX_SUCCESS, "%s", akx_last_error());
  cr_expect_eq(fake.device_seen_by_fn, 0, "ran on device %d", fake.device_seen_by_fn);
  cr_expect_eq(fake.current, 1, "the caller's device %d was not restored", fake.current);
  /* Already current: no cudaSetDevice. */
  reset();
  cr_assert_eq(akx__cuda_on_device(&calls, 0, note_device, NULL), AKX_SUCCESS);
  cr_expect_eq(fake.set_device, 0);
  /* No current device known: switched, nothing to restore. */
  reset();
  fake.current = 5;
  fake.get_device_error = 3;
  cr_assert_eq(akx__cuda_on_device(&calls, 0, note_device, NULL), AKX_SUCCESS);
  cr_expect_eq(fake.device_seen_by_fn, 0);
  cr_expect_eq(fake.set_device, 1);
  cr_expect_eq(fake.take_error, 1);
}
