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
