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
#include "families.h"
#include "workspace_regions.h"
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
/* Whether ctx's launches are programmatic dependent launches (kernels/akx/device.cuh): the
 * device (or the sim's profile) is sm_90+ and AKX_PDL is not 0. */
int akx__context_pdl(const akx_context *ctx);
/* Where a launch takes its kernels (AKX_KERNELS): the prebuilt ones where the build has them,
 * or units compiled at run time from the same kernel text, on either backend (the routing:
 * src/launch/route.h). */
enum { AKX__KERNELS_PREBUILT = 0, AKX__KERNELS_RUNTIME = 1 };
/* AKX_ERROR_INVALID_ARGUMENT naming the variable for a value it does not take. */
akx_status akx__read_settings(akx__settings *s);
struct akx_context;
/* Whether a launch on ctx takes a prebuilt kernel, given whether the backend's prebuilt set
 * holds its combination (in_set): the device runs the build's prebuilt kernels and
 * AKX_KERNELS does not ask for run-time ones (src/core/settings.c; the routing,
 * src/launch/route.h, asks it). */
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
    /* The buffer's regions (src/core/workspace.c, "The regions"): the tags' layout, what is
     * known of them (the header's ticket is 0; flags [0, flags_known) hold 0 or an earlier
     * epoch; tickets [0, tickets_zero) are 0), the last look-back call's epoch, and whether
     * the buffer is still all zeros (set or grown, no call since). */
    akx__ws_layout layout;
    int header_zero;
    int64_t flags_known, tickets_zero;
    /* split tickets: [0, splits_zero[h]) of half h are 0; the next segmented reduction
     * counts on half split_half */
    int64_t splits_zero[2];
    int split_half;
    /* the sim's watch (src/core/workspace_check.c): what the current call owns and what the
     * other tags held when it took them */
    struct akx__ws_watch_state *watch;
    uint32_t epoch;
    int zeroed;
    /* Calls that could not trust their tags (a look-back reset, a reduction's second pass
     * taken for its tickets) or widened the layout (a memset): a statistic for tests. */
    int64_t resets;
    /* A call used this buffer while the stream captured a graph: every replay writes it again
     * (its epoch, its nodes, its ticket) between the context's later calls, so from then on
     * the status and the ticket are never trusted (a reset, the two-launch reduction). */
    int graphed;
  } ws;
  /* User ops created on this context (src/jit/user_ops.c), and the library's ARGMIN/ARGMAX
   * for each source dtype (created at first use), guarded by `lock`. */
  struct akx__user_op **user_ops;
  size_t n_user_ops, cap_user_ops;
  /* Held by every call on the context (akx__lock): its stream, workspace and launches
   * belong to one call at a time. Recursive, so a call may use another entry point. */
  pthread_mutex_t lock;
  int call_depth; /* calls in progress on this thread under `lock` (the outermost ends the watch) */
};

/* What a launch takes (src/launch/route.h): a prebuilt entry, or a unit compiled at run time. */
typedef struct {
  akx_status (*prebuilt)(const void *plan, void *stream); /* the prebuilt entry, or NULL */
  void *unit;                                             /* else the backend's run-time unit */
} akx__entry;

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
  /* 1 and the start and size of the allocation holding byte p where the backend knows it (the
   * sim: its akx_malloc block), else 0: for the sentence of a range that starts inside a block
   * and runs past its end. */
  int (*allocation_of)(const akx_context *ctx, const void *p, const void **base, size_t *bytes);
  /* Launches plan, a plan of `family` (src/core/families.h), on the context's stream through
   * the entry the routing chose (src/launch/route.h). */
  akx_status (*launch)(akx_context *ctx, int family, const akx__entry *entry, const void *plan);
  /* The run-time unit of c on this context: compiled (the sim: the host compiler; CUDA: NVRTC
   * for the device's architecture) and loaded at its first use, then found in the table of
   * run-time entries (src/jit/entries.h). The sim's is an akx__launcher; the CUDA backend's a
   * loaded module, which its launch takes through the family's run-time launch. */
  akx_status (*runtime_unit)(const akx_context *ctx, const akx__combination *c, void **unit);
  /* The sim's runtime table (kernels/akx/sim_device.hpp, AKX_SIM_RUNTIME), handed to every
   * module the sim compiles at run time (src/jit/sim_module.h); NULL on CUDA. */
  const void *(*module_runtime)(void);
  /* Runs fn(stream, workspace, arg) with the context's device current (the sim: launches
   * attributed to ctx). For akx_context_run. */
  akx_status (*run)(akx_context *ctx, akx_status (*fn)(void *, void *, void *), void *workspace,
                    void *arg);
};

/* The architecture a CUDA context's kernels are compiled for, 10 * major + minor (90 for
 * sm_90): NVRTC's target and a key of every run-time unit. */
static inline int akx__context_arch(const akx_context *ctx) { return ctx->info.cc_major * 10 + ctx->info.cc_minor; }

extern const akx__backend akx__backend_sim;
/* The sim has no streams: this marks a sim context's stream as capturing a graph (1) or not
 * (0), so that tests see the decisions a CUDA context makes under cudaStreamBeginCapture
 * (launches still run at once). AKX_ERROR_INVALID_ARGUMENT for a context not of the sim. */
akx_status akx__sim_set_capturing(akx_context *ctx, int capturing);
/* Makes a sim context's next launch fail its checks (AKX_ERROR_SIM_CHECK, "interrupted") as
 * soon as `blocks` of its blocks have ended, the others left where they were: a call
 * interrupted mid-launch, for tests. 0 cancels. */
akx_status akx__sim_interrupt_after(akx_context *ctx, uint64_t blocks);
extern const akx__backend akx__backend_cuda; /* open() fails with NO_DEVICE when built without CUDA */
/* Enqueues a copy of `bytes` of device memory on a CUDA context's stream and returns: no
 * synchronization, so a graph capture takes it (the count-back to device memory,
 * src/tile/tile.c; the backend's memcpy waits for its copy). Without CUDA: AKX_ERROR_NO_DEVICE. */
akx_status akx__cuda_copy_async(akx_context *ctx, void *dst, const void *src, size_t bytes);

/* The CUDA backend's launch of a plan through a run-time module (src/cuda/runtime_kernels.cu:
 * each family's akx__cuda_runtime_<name>, from the family list). */
akx_status akx__cuda_runtime_launch(const akx_context *ctx, int family, const void *module, const void *plan);
/* The CUDA backend's run-time unit (akx__backend.runtime_unit): the loaded module of c. */
akx_status akx__cuda_runtime_unit(const akx_context *ctx, const akx__combination *c, void **module);

#ifdef __cplusplus
}
#endif
#endif
