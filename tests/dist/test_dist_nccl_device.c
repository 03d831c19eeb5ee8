/* Which CUDA device an NCCL communicator may serve (src/dist/nccl_device.c): akx_comm_create_nccl
 * asks the communicator's device (ncclCommCuDevice) and the context's (cudaGetDevice inside
 * akx_context_run) and takes the pair only when they are one device; the sentence names both.
 * The decision is a pure function, so it is tested here on the CPU, in every build of
 * libakx_dist, with or without NCCL. */
#include <criterion/criterion.h>
#include <string.h>

#include "akx.h"
#include "src/dist/internal.h"

typedef struct {
  int comm_device, ctx_device;
  const char *ctx_name;
  akx_status want;
  const char *says[3];
} device_row;

static const device_row rows[] = {
    {0, 0, "NVIDIA H200", AKX_SUCCESS, {0}},
    {3, 3, "NVIDIA H200", AKX_SUCCESS, {0}},
    {1, 0, "NVIDIA H200", AKX_ERROR_INVALID_ARGUMENT,
     {"nccl_comm is on CUDA device 1", "ctx is on CUDA device 0 (NVIDIA H200)", "own thread or process"}},
    {0, 2, "NVIDIA A100-SXM4-80GB", AKX_ERROR_INVALID_ARGUMENT,
     {"CUDA device 0", "CUDA device 2 (NVIDIA A100-SXM4-80GB)", NULL}},
    {0, 1, "", AKX_ERROR_INVALID_ARGUMENT, {"ctx is on CUDA device 1;", NULL, NULL}},
};

Test(dist_nccl_device, the_table) {
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    const device_row *r = &rows[i];
    char why[512] = "(unchanged)";
    akx_status got = akx__dist_nccl_device_check(r->comm_device, r->ctx_device, r->ctx_name, why, sizeof why);
    cr_expect_eq(got, r->want, "communicator on %d, context on %d: %s, want %s (%s)", r->comm_device,
                 r->ctx_device, akx_status_string(got), akx_status_string(r->want), why);
    for (int k = 0; k < 3 && r->says[k]; k++)
      cr_expect(strstr(why, r->says[k]) != NULL, "communicator on %d, context on %d: the sentence lacks \"%s\": %s",
                r->comm_device, r->ctx_device, r->says[k], why);
  }
}

/* The call site: the context's device is what the device query finds inside the context's
 * akx_context_run (cudaGetDevice in src/dist/engine_nccl.c; a stand-in here, on a sim context),
 * compared with the communicator's. */
static int device_told;
static int runs;
static akx_status tell_device(void *stream, void *workspace, void *arg) {
  (void)stream;
  (void)workspace;
  runs++;
  *(int *)arg = device_told;
  return AKX_SUCCESS;
}

Test(dist_nccl_device, the_context_device_is_asked_inside_its_run) {
  akx_context *ctx = NULL;
  cr_assert_eq(akx_context_create(&ctx, AKX_BACKEND_SIM, 0), AKX_SUCCESS, "%s", akx_last_error());
  akx_context_info_t info;
  cr_assert_eq(akx_context_info(ctx, &info), AKX_SUCCESS);
  char why[512] = "(unchanged)";
  device_told = 2;
  cr_expect_eq(akx__dist_nccl_context_check(ctx, 1, tell_device, why, sizeof why), AKX_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(runs, 1, "the query ran %d times", runs);
  cr_expect(strstr(why, "nccl_comm is on CUDA device 1") != NULL, "%s", why);
  cr_expect(strstr(why, "ctx is on CUDA device 2") != NULL, "%s", why);
  cr_expect(strstr(why, info.device_name) != NULL, "the context's name (%s) not in: %s", info.device_name, why);
  device_told = 1;
  cr_expect_eq(akx__dist_nccl_context_check(ctx, 1, tell_device, why, sizeof why), AKX_SUCCESS, "%s", why);
  cr_expect_eq(why[0], '\0');
  akx_context_destroy(ctx);
}
