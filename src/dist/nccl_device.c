/* akx_comm_create_nccl's device check (the contract is in internal.h). A file of its own, with
 * no NCCL or CUDA in it, so that the decision and its call site (which device each side is
 * taken from) are compiled and tested (tests/dist/test_dist_nccl_device.c) in every build of
 * libakx_dist. */
#include <stdio.h>
#include "internal.h"

akx_status akx__dist_nccl_device_check(int comm_device, int ctx_device, const char *ctx_name, char *why,
                                       size_t cap) {
  if (why && cap) why[0] = '\0';
  if (comm_device == ctx_device) return AKX_SUCCESS;
  if (why && cap) {
    const int named = ctx_name && ctx_name[0];
    snprintf(why, cap,
             "nccl_comm is on CUDA device %d, but ctx is on CUDA device %d%s%s%s; a rank's context must "
             "be on its communicator's device (each rank in its own thread or process, with its own "
             "context)",
             comm_device, ctx_device, named ? " (" : "", named ? ctx_name : "", named ? ")" : "");
  }
  return AKX_ERROR_INVALID_ARGUMENT;
}

akx_status akx__dist_nccl_context_check(akx_context *ctx, int comm_device,
                                        akx_status (*current_device)(void *, void *, void *), char *why,
                                        size_t cap) {
  if (why && cap) why[0] = '\0';
  int ctx_device = -1;
  /* The context's device is the one current inside its akx_context_run. */
  const akx_status s = akx_context_run(ctx, 0, current_device, &ctx_device);
  if (s != AKX_SUCCESS) return s;
  akx_context_info_t info;
  if (akx_context_info(ctx, &info) != AKX_SUCCESS) info.device_name[0] = '\0';
  return akx__dist_nccl_device_check(comm_device, ctx_device, info.device_name, why, cap);
}
