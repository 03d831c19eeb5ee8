// The sim backend's table (src/core/backend.h): a context is a runtime (runtime.hpp) running as
// one device profile; device memory is host memory registered with the context; launches
// run on the calling thread, so the context has no stream and synchronizing does nothing.
//
// Environment, read when a context is created:
//   AKX_SIM_DEVICE    profile name (h200 default, rtx5080)
//   AKX_SIM_SCHEDULE  "inorder" (default) or "random[:SEED]": the order fibers are resumed in
//   AKX_SIM_COUNTERS  "1" (default) or "0": count requests (the checks stay on either way)
//   AKX_SIM_REPORT    "0" (default) or "1": print the counters when the context is destroyed
//   AKX_KERNELS       "prebuilt" (default) or "runtime": every kernel from a unit the sim
//                     compiles at run time (src/jit/builtin_instance.h), also where a prebuilt
//                     one exists (the settings of every backend: src/core/settings.c)
//   AKX_SIM_RESIDENT  blocks resident at once, at most (default 16; the profile's occupancy
//                     caps it too): each resident block holds a fiber stack per thread and
//                     its shared memory in host memory
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <new>

#include "backend.h"
#include "error.h"
#include "sim/runtime.hpp"
#include "sim/sim_testing.hpp"
#include "jit/builtin_instance.h"
#include "jit/test_kernels.h"
#include "jit/user_op.h"

extern "C" int akx__sim_allocation_of(const akx_context *ctx, const void *p, const void **base, size_t *bytes);

namespace akx::sim {
// The table a run-time module calls (src/sim/module_api.cpp), handed to it by src/jit.
const runtime_api *runtime_table();

runtime::~runtime() { free_all_device(*this); }

namespace {

runtime &runtime_of(const akx_context *ctx) { return *static_cast<runtime *>(ctx->impl); }

// A 0/1 switch from the environment.
akx_status read_switch(const char *var, bool fallback, bool *out) {
  const char *v = getenv(var);
  if (v == nullptr || v[0] == '\0') {
    *out = fallback;
    return AKX_SUCCESS;
  }
  if (strcmp(v, "0") == 0 || strcmp(v, "1") == 0) {
    *out = v[0] == '1';
    return AKX_SUCCESS;
  }
  return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "%s=\"%s\" is not understood: use 0 or 1", var,
                   v);
}

akx_status read_schedule(runtime &rt) {
  const char *v = getenv("AKX_SIM_SCHEDULE");
  rt.random_schedule = false;
  if (v == nullptr || v[0] == '\0' || strcmp(v, "inorder") == 0) return AKX_SUCCESS;
  if (strcmp(v, "random") == 0) {
    rt.random_schedule = true;
    rt.rng = 1;
    return AKX_SUCCESS;
  }
  if (strncmp(v, "random:", 7) == 0 && v[7] != '\0') {
    char *end = nullptr;
    errno = 0;
    unsigned long long seed = strtoull(v + 7, &end, 0);
    if (errno == 0 && *end == '\0' && v[7] != '-') {
      rt.random_schedule = true;
      rt.rng = seed;
      return AKX_SUCCESS;
    }
  }
  return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                   "AKX_SIM_SCHEDULE=\"%s\" is not understood: use inorder, random or "
                   "random:SEED (SEED an unsigned integer)",
                   v);
}

// Resident blocks by default: enough for blocks to overtake, wait for and publish to each
// other as on a GPU (its 132 SMs hold ~1000 blocks), few enough that the fibers' stacks and
// arenas stay in the host's caches.
constexpr uint32_t default_resident = 16;

akx_status read_resident(runtime &rt) {
  const char *v = getenv("AKX_SIM_RESIDENT");
  rt.resident_cap = default_resident;
  if (v == nullptr || v[0] == '\0') return AKX_SUCCESS;
  char *end = nullptr;
  errno = 0;
  unsigned long n = strtoul(v, &end, 10);
  if (errno == 0 && *end == '\0' && v[0] != '-' && n >= 1 && n <= 65536) {
    rt.resident_cap = uint32_t(n);
    return AKX_SUCCESS;
  }
  return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                   "AKX_SIM_RESIDENT=\"%s\" is not understood: use a number of blocks from 1 "
                   "to 65536",
                   v);
}

akx_status sim_open(akx_context *ctx, int device) {
  if (device != 0)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "device is %d, but the sim backend has one device, 0", device);
  const akx__device_profile *profile = akx__profile_from_env();
  if (profile == nullptr)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "AKX_SIM_DEVICE=\"%s\" names no sim device profile: use h200 or rtx5080",
                     getenv("AKX_SIM_DEVICE"));
  runtime *rt = new (std::nothrow) runtime;
  if (rt == nullptr)
    return akx__fail(AKX_ERROR_OUT_OF_MEMORY, "the sim could not allocate its runtime");
  rt->profile = profile;
  akx_status s = read_schedule(*rt);
  if (s == AKX_SUCCESS) s = read_resident(*rt);
  if (s == AKX_SUCCESS) s = read_switch("AKX_SIM_COUNTERS", true, &rt->counting);
  if (s == AKX_SUCCESS) s = read_switch("AKX_SIM_REPORT", false, &rt->report);
  if (s != AKX_SUCCESS) {
    delete rt;
    return s;
  }

  ctx->prebuilt_runs = AKX_PREBUILT;
  akx_context_info_t &info = ctx->info;
  memset(&info, 0, sizeof info);
  info.backend = AKX_BACKEND_SIM;
  snprintf(info.device_name, sizeof info.device_name, "sim:%s", profile->name);
  info.sm_count = profile->sm_count;
  info.cc_major = profile->cc_major;
  info.cc_minor = profile->cc_minor;
  info.max_threads_per_sm = profile->max_threads_per_sm;
  info.shared_per_block = profile->shared_per_block;
  info.bandwidth_gbs = profile->bandwidth_gbs;
  snprintf(info.sim_profile, sizeof info.sim_profile, "%s", profile->name);
  ctx->profile = profile;
  ctx->device = 0;
  ctx->stream = nullptr;
  ctx->impl = rt;
  return AKX_SUCCESS;
}

void sim_close(akx_context *ctx) {
  if (ctx->impl == nullptr) return;
  runtime *rt = &runtime_of(ctx);
  if (rt->report) print_report(*rt);
  delete rt;
  ctx->impl = nullptr;
}

akx_status sim_malloc(akx_context *ctx, void **ptr, size_t bytes) {
  return allocate_device(runtime_of(ctx), ptr, bytes);
}

akx_status sim_free(akx_context *ctx, void *ptr) { return free_device(runtime_of(ctx), ptr); }

// The sim's capture check: what CUDA refuses on a capturing stream (and invalidates the capture
// for), the sim refuses too, so that a test of a captured call fails where the call waits for the
// device: a copy to or from the host (cudaMemcpy synchronizes; the library's copies to the host
// are its waits) and a synchronization. A device-to-device copy is enqueued (cudaMemcpyAsync).
static akx_status refuse_while_capturing(const akx_context *ctx, const char *what) {
  if (!runtime_of(ctx).capturing) return AKX_SUCCESS;
  return akx__fail(AKX_ERROR_UNSUPPORTED,
                   "the sim's capture check: %s while the stream captures a graph (CUDA refuses it and "
                   "invalidates the capture): the call waited for the device",
                   what);
}

akx_status sim_memcpy(akx_context *ctx, void *dst, const void *src, size_t bytes, akx_copy_kind k) {
  if (k != AKX_COPY_DEVICE_TO_DEVICE)
    AKX_TRY(refuse_while_capturing(ctx, k == AKX_COPY_DEVICE_TO_HOST ? "a copy to the host" : "a copy from the host"));
  memmove(dst, src, bytes);  // host and device memory are one on the sim
  return AKX_SUCCESS;
}

akx_status sim_zero(akx_context *, void *ptr, size_t bytes) {
  memset(ptr, 0, bytes);
  return AKX_SUCCESS;
}

akx_status sim_synchronize(akx_context *ctx) { return refuse_while_capturing(ctx, "a synchronization"); }

akx_status sim_set_stream(akx_context *, void *stream) {
  if (stream != nullptr)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "stream is %p, but the sim backend has no streams: only NULL is accepted",
                     stream);
  return AKX_SUCCESS;
}

akx_status sim_is_capturing(const akx_context *ctx, int *capturing) {
  *capturing = runtime_of(ctx).capturing ? 1 : 0;
  return AKX_SUCCESS;
}

int sim_is_device_range(const akx_context *ctx, const void *p, size_t bytes) {
  const runtime &rt = runtime_of(ctx);
  return find_allocation(rt, uintptr_t(p), bytes) != rt.allocations.end();
}

// Every family's launch: on this context (its counters, checks and schedule), through the entry
// the routing chose (src/launch/route.h): a prebuilt one, or a unit compiled at run time
// from the same text (sim_runtime_unit).
akx_status sim_launch(akx_context *ctx, int, const akx__entry *entry, const void *plan) {
  scoped_context current(ctx);
  scoped_pdl pdl(ctx, akx__context_pdl(ctx) != 0);  // the call's launches (kernels/akx/device.cuh)
  if (entry->prebuilt) return entry->prebuilt(plan, nullptr);
  return reinterpret_cast<akx_status (*)(const void *, void *)>(entry->unit)(plan, nullptr);
}

// A combination outside the library's set: the tests' plugin's entry where it is loaded and
// holds it (src/jit/test_kernels.h), else a unit the host compiler builds at run time: a user
// op's, or the one instance generator's for a built-in combination
// (src/jit/builtin_instance.h); its akx_unit_entry is the launcher.
akx_status sim_runtime_unit(const akx_context *ctx, const akx__combination *c, void **unit) {
  if (c->op >= AKX_USER_OP_FIRST) return akx__user_op_launch_entry(ctx, c->op, c->family, c->src, c->dst, unit);
  AKX_TRY(akx__test_kernels_entry(ctx, c, unit));
  if (*unit) return AKX_SUCCESS;
  return akx__builtin_entry(ctx, c->family, (akx_dtype)c->src, (akx_dtype)c->dst, (akx_dtype)c->acc, (akx_op)c->op,
                            unit);
}

const void *sim_module_runtime(void) { return runtime_table(); }

akx_status sim_run(akx_context *ctx, akx_status (*fn)(void *, void *, void *), void *workspace,
                   void *arg) {
  scoped_context current(ctx);
  return fn(nullptr, workspace, arg);
}
}  // namespace
}  // namespace akx::sim

// A sim context's akx_malloc block holding byte p (akx__backend.allocation_of).
extern "C" int akx__sim_allocation_of(const akx_context *ctx, const void *p, const void **base,
                                      size_t *bytes) {
  const akx::sim::runtime &rt = akx::sim::runtime_of(ctx);
  auto it = akx::sim::find_allocation(rt, uintptr_t(p), 1);
  if (it == rt.allocations.end()) return 0;
  *base = reinterpret_cast<const void *>(it->first);
  *bytes = it->second;
  return 1;
}

extern "C" akx_status akx__sim_set_capturing(akx_context *ctx, int capturing) {
  if (ctx == nullptr || ctx->be != &akx__backend_sim)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "akx__sim_set_capturing: ctx is %s, not a sim context",
                     ctx == nullptr ? "NULL" : "a CUDA context");
  akx::sim::runtime_of(ctx).capturing = capturing != 0;
  return AKX_SUCCESS;
}

extern "C" akx_status akx__sim_interrupt_after(akx_context *ctx, uint64_t blocks) {
  if (ctx == nullptr || ctx->be != &akx__backend_sim)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "akx__sim_interrupt_after: ctx is %s, not a sim context",
                     ctx == nullptr ? "NULL" : "a CUDA context");
  akx::sim::runtime_of(ctx).interrupt_after = blocks;
  return AKX_SUCCESS;
}

extern "C" const akx__backend akx__backend_sim = {
    AKX_BACKEND_SIM,
    akx::sim::sim_open,
    akx::sim::sim_close,
    akx::sim::sim_malloc,
    akx::sim::sim_free,
    akx::sim::sim_memcpy,
    akx::sim::sim_zero,
    akx::sim::sim_synchronize,
    akx::sim::sim_set_stream,
    akx::sim::sim_is_capturing,
    akx::sim::sim_is_device_range,
    akx__sim_allocation_of,
    akx::sim::sim_launch,
    akx::sim::sim_runtime_unit,
    akx::sim::sim_module_runtime,
    akx::sim::sim_run,
};
