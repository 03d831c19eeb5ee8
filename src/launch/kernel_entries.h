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
 * instances, and the sim's units compiled at run time, have this signature. */
typedef akx_status (*akx__launcher)(const void *plan, void *stream);
/* A prebuilt entry, one per (backend, family, source dtype): the launcher of c's instance, or
 * NULL where the build's set does not hold c (src/launch/instance_table.inl). */
typedef akx__launcher (*akx__resolver)(const akx__combination *c);

/* The backend's prebuilt launcher of c's instance; AKX_ERROR_INTERNAL when this build has none
 * (the routing, src/launch/route.h, asks only where the prebuilt set holds c: a NULL here is a
 * disagreement between the host's rule and the compiled set). */
akx_status akx__prebuilt_launcher(akx_backend backend, const akx__combination *c, akx__launcher *out);

#ifdef __cplusplus
}
#endif
#endif
