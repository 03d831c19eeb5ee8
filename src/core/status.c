/* Status names and messages, generated from one table so they cannot drift (libuv's way). */
#include "akx.h"

/* X(enum, message) */
#define AKX_STATUS_LIST(X)                                                              \
  X(AKX_SUCCESS, "success")                                                             \
  X(AKX_ERROR_INVALID_ARGUMENT, "an argument is invalid")                               \
  X(AKX_ERROR_UNSUPPORTED, "the request is valid but not supported")                    \
  X(AKX_ERROR_OUT_OF_MEMORY, "out of memory")                                           \
  X(AKX_ERROR_WORKSPACE_TOO_SMALL, "the caller's workspace is too small")               \
  X(AKX_ERROR_OUTPUT_TOO_SMALL, "the output is too small")                              \
  X(AKX_ERROR_NO_DEVICE, "no usable CUDA device")                                       \
  X(AKX_ERROR_DEVICE, "the CUDA runtime reported an error")                             \
  X(AKX_ERROR_SIM_CHECK, "the sim caught a race, an out-of-bounds access or a divergent barrier") \
  X(AKX_ERROR_INTERNAL, "internal error in libakx")

const char *akx_status_string(akx_status s) {
  switch (s) {
#define AKX_X_(E, M) case E: return #E;
    AKX_STATUS_LIST(AKX_X_)
#undef AKX_X_
  }
  return "unknown status";
}
