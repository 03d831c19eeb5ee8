/* The backend interface: one table of functions per backend (sim, CUDA). src/ runs the
 * ladder validate -> canonicalise -> plan -> workspace -> backend launch. */
#ifndef AKX_BACKEND_H
#define AKX_BACKEND_H
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include "akx.h"
#include "akx/plan.h"
#include "device_profile.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef struct akx__backend akx__backend;

/* Test and bench settings (src/core/settings.c), read from the environment once per context. */
typedef struct {
  int32_t scan_layout;  /* AKX_SCAN_LAYOUT: an akx__scan_layout */
  int32_t scan_shape;   /* AKX_SCAN_SHAPE: an akx__scan_shape, -1 for the planner's choice */
  int32_t dims_shape;   /* AKX_REDUCE_DIMS_SHAPE: an akx__dims_shape, -1 for the selector's */
  int32_t dims_splits;  /* AKX_REDUCE_DIMS_SPLITS: 1..65535, 0 for the planner's */
  int32_t kernels;      /* AKX_KERNELS: AKX__KERNELS_PREBUILT or AKX__KERNELS_RUNTIME */
  uint32_t lookback_epoch; /* AKX_LOOKBACK_EPOCH: the epoch before a context's first scan */
  int32_t pdl;          /* AKX_PDL: 1 (default) launches programmatic dependent launches where
                           the device has them (sm_90+), 0 plain launches */
  int32_t one_launch;   /* AKX_ONE_LAUNCH: 1 (default) trusts the status and tickets a completed
                           call left (docs/one_launch.md), 0 resets them at every call: the
                           scans' reset kernel, the reductions' second pass (as before one
                           launch per call: for comparisons) */
} akx__settings;
/* Whether ctx's launches are programmatic dependent launches (include/akx/device.cuh): the
 * device (or the sim's profile) is sm_90+ and AKX_PDL is not 0. */
int akx__context_pdl(const akx_context *ctx);
/* Where a launch takes its kernels: the prebuilt ones where the build has them, or one
 * compiled at run time from the same text (the sim's only, for now: src/jit/sim_module.h). */
enum { AKX__KERNELS_PREBUILT = 0, AKX__KERNELS_RUNTIME = 1 };
/* AKX_ERROR_INVALID_ARGUMENT naming the variable for a value it does not take. */
akx_status akx__read_settings(akx__settings *s);
struct akx_context;
/* Whether a launch on ctx takes a prebuilt kernel, given whether the backend's prebuilt set
 * holds its combination (in_set): the device runs the build's prebuilt kernels and
 * AKX_KERNELS does not ask for run-time ones. The one rule both backends and
 * akx__kernels_prepare follow (src/core/settings.c). */
int akx__prebuilt_serves(const struct akx_context *ctx, int in_set);

struct akx_context {
  const akx__backend *be;
  akx_context_info_t info;
  const akx__device_profile *profile; /* the sim's profile, or the closest one to a GPU */
  int device;
  void *stream;                       /* cudaStream_t; NULL on the sim */
  void *impl;                         /* the backend's private state */
  akx__settings settings;
  /* 1 when the build's prebuilt kernels run on this device (set by open: AKX_PREBUILT, and on
   * CUDA an image for the device's architecture); 0: every kernel is compiled at run time. */
  int prebuilt_runs;
  struct {
    void *ptr;
    size_t bytes;
    int caller_owned;
    int64_t allocations; /* times the cached buffer was (re)allocated */
    /* The cached buffer served a call while the stream was capturing: a graph may still
     * write it, so it is never freed before akx_context_destroy (src/core/workspace.c). */
    int captured;
    void **retired; /* such buffers the context has since replaced */
    size_t nretired, cap_retired;
    /* The caller-owned range [held_lo, held_hi) in the registry of live contexts' caller
     * workspaces (workspace.c), guarded by the registry's lock, not by `lock`. */
    int held;
    uintptr_t held_lo, held_hi;
    struct akx_context *next_holder;
    /* The look-back status at the buffer's start (include/akx/lookback.cuh) as the last call
     * left it (src/core/workspace.c, akx__workspace_lookback): the last call's epoch, and
     * status_tiles > 0 when the header's ticket is 0 and flags [0, status_tiles) hold 0 or
     * an epoch since the last reset; 0 when the bytes there may be anything. */
    uint32_t epoch;
    int64_t status_tiles;
    /* The buffer's first zero_bytes bytes are 0: the tickets the calls put back to 0 (the
     * scans' and the whole-array reduction's 8-byte word, a split dims reduction's column
     * tickets: akx__workspace_ticket). */
    size_t zero_bytes;
    /* A call used this buffer while the stream captured a graph: every replay writes it again
     * (its epoch, its nodes, its ticket) between the context's later calls, so from then on
     * the status and the ticket are never trusted (a reset, the two-launch reduction). */
    int graphed;
  } ws;
  /* User ops created on this context (src/core/user_ops.c), and the library's ARGMIN/ARGMAX
   * for each source dtype (created at first use), guarded by `lock`. */
  struct akx__user_op **user_ops;
  size_t n_user_ops, cap_user_ops;
  /* Held by every call on the context (akx__lock): its stream, workspace and launches
   * belong to one call at a time. Recursive, so a call may use another entry point. */
  pthread_mutex_t lock;
};

struct akx__backend {
  akx_backend kind;
  /* Fills ctx->info, ctx->profile, ctx->impl; AKX_ERROR_NO_DEVICE when unusable. */
  akx_status (*open)(akx_context *ctx, int device);
  void (*close)(akx_context *ctx);
  akx_status (*malloc)(akx_context *ctx, void **ptr, size_t bytes);
  akx_status (*free)(akx_context *ctx, void *ptr);
  akx_status (*memcpy)(akx_context *ctx, void *dst, const void *src, size_t bytes,
                       akx_copy_kind k);
  /* Enqueues zeros over [ptr, ptr + bytes) of device memory on the context's stream (the
   * workspace's fresh bytes: src/core/workspace.c). */
  akx_status (*zero)(akx_context *ctx, void *ptr, size_t bytes);
  akx_status (*synchronize)(akx_context *ctx);
  akx_status (*set_stream)(akx_context *ctx, void *stream);
  /* *capturing = 1 while work enqueued on the context's stream would be captured into a CUDA
   * graph instead of running (cudaStreamIsCapturing: a capture active or invalidated; for the
   * legacy stream, another stream capturing), else 0. The sim: what akx__sim_set_capturing
   * last set. */
  akx_status (*is_capturing)(const akx_context *ctx, int *capturing);
  /* 1 when [p, p + bytes) lies in memory this context's device can address (the sim: inside
   * one akx_malloc allocation; CUDA: cudaPointerGetAttributes of both ends), 0 otherwise. */
  int (*is_device_range)(const akx_context *ctx, const void *p, size_t bytes);
  /* Launches the passes of a whole-array reduction on the context's stream. */
  akx_status (*reduce_whole)(akx_context *ctx, const akx__reduce_whole_plan *plan);
  /* Launches the passes of a reduction along dims on the context's stream. */
  akx_status (*reduce_dims)(akx_context *ctx, const akx__reduce_dims_plan *plan);
  /* Launches a scan (src/scan/scan.c's plan) on the context's stream. */
  akx_status (*scan)(akx_context *ctx, const akx__scan_plan *plan);
  /* Launches findall; the total is left at the head of plan->status. */
  akx_status (*findall)(akx_context *ctx, const akx__findall_plan *plan);
  /* Runs fn(stream, workspace, arg) with the context's device current (the sim: launches
   * attributed to ctx). For akx_context_run. */
  akx_status (*run)(akx_context *ctx, akx_status (*fn)(void *, void *, void *), void *workspace,
                    void *arg);
};

/* The architecture a CUDA context's kernels are compiled for, 10 * major + minor (90 for
 * sm_90): NVRTC's target and a key of every run-time unit. */
static inline int akx__context_arch(const akx_context *ctx) { return ctx->info.cc_major * 10 + ctx->info.cc_minor; }

extern const akx__backend akx__backend_sim;
/* A sim context's akx_malloc block holding byte p: 1 and its start and size, else 0. For the
 * sentence of a range that starts inside a block and runs past its end. */
int akx__sim_allocation_of(const akx_context *ctx, const void *p, const void **base, size_t *bytes);
/* The sim has no streams: this marks a sim context's stream as capturing a graph (1) or not
 * (0), so that tests see the decisions a CUDA context makes under cudaStreamBeginCapture
 * (launches still run at once). AKX_ERROR_INVALID_ARGUMENT for a context not of the sim. */
akx_status akx__sim_set_capturing(akx_context *ctx, int capturing);
/* Makes a sim context's next launch fail its checks (AKX_ERROR_SIM_CHECK, "interrupted") as
 * soon as `blocks` of its blocks have ended, the others left where they were: a call
 * interrupted mid-launch, for tests. 0 cancels. */
akx_status akx__sim_interrupt_after(akx_context *ctx, uint64_t blocks);
extern const akx__backend akx__backend_cuda; /* open() fails with NO_DEVICE when built without CUDA */

/* Kernel launchers, compiled from the same kernel source once per backend
 * (src/core/kernel_entries.cpp). They launch on `stream` and check every launch. */
akx_status akx__sim_reduce_whole_launch(const akx__reduce_whole_plan *plan, void *stream);
akx_status akx__cuda_reduce_whole_launch(const akx__reduce_whole_plan *plan, void *stream);
akx_status akx__sim_reduce_dims_launch(const akx__reduce_dims_plan *plan, void *stream);
akx_status akx__cuda_reduce_dims_launch(const akx__reduce_dims_plan *plan, void *stream);
akx_status akx__sim_scan_launch(const akx__scan_plan *plan, void *stream);
akx_status akx__cuda_scan_launch(const akx__scan_plan *plan, void *stream);
akx_status akx__sim_findall_launch(const akx__findall_plan *plan, void *stream);
akx_status akx__cuda_findall_launch(const akx__findall_plan *plan, void *stream);

/* The CUDA backend's launches of kernels compiled at run time (src/cuda/runtime_kernels.cu):
 * a combination outside the prebuilt set, a user op, or every kernel under AKX_KERNELS=runtime
 * or -DAKX_PREBUILT=OFF. */
akx_status akx__cuda_runtime_reduce_whole(const akx_context *ctx, const akx__reduce_whole_plan *plan);
akx_status akx__cuda_runtime_reduce_dims(const akx_context *ctx, const akx__reduce_dims_plan *plan);
akx_status akx__cuda_runtime_scan(const akx_context *ctx, const akx__scan_plan *plan);
akx_status akx__cuda_runtime_findall(const akx_context *ctx, const akx__findall_plan *plan);
/* Compiles (NVRTC) and loads the module a launch of that combination will take, before the
 * call changes any state (src/jit/builtin_instance.h, akx__kernels_prepare). op: a built-in
 * akx_op or a user op's id (acc then unread). */
akx_status akx__cuda_runtime_prepare(const akx_context *ctx, int family, int32_t src, int32_t dst, int32_t acc,
                                     int32_t op);

#ifdef __cplusplus
}
#endif
#endif
