/* The prebuilt entries (src/launch/kernel_entries.cpp): a launcher per (backend, family, source
 * dtype), from the instance files CMake generates out of the family list. */
#ifndef AKX_LAUNCH_KERNEL_ENTRIES_H
#define AKX_LAUNCH_KERNEL_ENTRIES_H
#include "akx.h"
#include "families.h"
#ifdef __cplusplus
extern "C" {
#endif

/* A family's launch of one plan on a stream (cudaStream_t; NULL on the sim): the prebuilt
 * entries, and the sim's units compiled at run time, have this signature. */
typedef akx_status (*akx__launcher)(const void *plan, void *stream);

/* The backend's prebuilt launcher of c's family for c's source dtype; AKX_ERROR_INTERNAL when
 * this build has none (the routing, src/launch/route.h, asks only where the prebuilt kernels
 * serve). */
akx_status akx__prebuilt_launcher(akx_backend backend, const akx__combination *c, akx__launcher *out);

#ifdef __cplusplus
}
#endif
#endif
