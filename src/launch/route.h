/* The one routing of a launch: which kernels a call on a context takes, prebuilt or compiled at
 * run time, decided here for both backends (src/launch/route.c). A planner calls
 * akx__kernels_prepare before its call changes any state, and akx__launch to launch. */
#ifndef AKX_LAUNCH_ROUTE_H
#define AKX_LAUNCH_ROUTE_H
#include "akx.h"
#include "backend.h"
#include "families.h"
#ifdef __cplusplus
extern "C" {
#endif

/* Where a launch of c on ctx takes its kernels, compiling (NVRTC on CUDA, the host compiler
 * on the sim) and loading a run-time unit where the prebuilt kernels do not serve (a combination
 * outside the prebuilt set, a user op, AKX_KERNELS=runtime, AKX_PREBUILT=OFF, a device without
 * their image). A unit's first use while the stream captures a graph is refused (loading it
 * cannot be captured). */
akx_status akx__route(const akx_context *ctx, const akx__combination *c, akx__entry *entry);

/* What every planner calls before its call changes any state (the workspace, dst): the routing
 * of the combination its launches will take, so that a compile error, or NVRTC missing,
 * refuses the call cleanly and the launch finds the unit in the table of run-time entries.
 * op: a built-in akx_op or a user op's id (acc and map then unread). */
akx_status akx__kernels_prepare(const akx_context *ctx, int family, akx_dtype src, akx_dtype dst, akx_dtype acc,
                                int32_t op, akx_map map);

/* Launches plan (of c's family) on ctx's stream: the routing, then the backend's launch. */
akx_status akx__launch(akx_context *ctx, akx__combination c, const void *plan);

#ifdef __cplusplus
}
#endif
#endif
