/* The library's version, from the macros of include/akx.h (the one place it is written). */
#include "akx.h"

#define AKX_STR_(x) #x
#define AKX_STR(x) AKX_STR_(x)

const char *akx_version(void) {
  return AKX_STR(AKX_VERSION_MAJOR) "." AKX_STR(AKX_VERSION_MINOR) "." AKX_STR(AKX_VERSION_PATCH);
}
