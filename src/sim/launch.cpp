// run_kernel: a launch on the current sim runtime. The configuration is checked against the
// device profile as a GPU would check it (an invalid one is AKX_ERROR_INVALID_ARGUMENT, and
// nothing runs); then the blocks run one after another on the calling thread, until the
// last or the first failed check.
#include "backend.h"
#include "error.h"
#include "sim/runtime.hpp"
#include "sim/sim_testing.hpp"

namespace akx::sim {

thread_local const thread_view *lane_now = nullptr;
thread_local runtime *current_runtime = nullptr;

scoped_context::scoped_context(const akx_context *ctx) : previous_(current_runtime) {
  bool sim = ctx != nullptr && ctx->be == &akx__backend_sim;
  current_runtime = sim ? static_cast<runtime *>(ctx->impl) : nullptr;
}

scoped_context::~scoped_context() { current_runtime = previous_; }

namespace {
akx_status check_configuration(const runtime &rt, const launch_desc &d, const char *name) {
  const akx__device_profile &p = *rt.profile;
  const dim3 &g = d.grid, &b = d.block;
  if (g.x == 0 || g.y == 0 || g.z == 0 || g.x > 0x7fffffffu || g.y > 65535 || g.z > 65535)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "kernel '%s': grid (%u,%u,%u) is invalid: each dimension must be at least "
                     "1, x at most 2^31-1, y and z at most 65535",
                     name, g.x, g.y, g.z);
  uint64_t threads = uint64_t(b.x) * b.y * b.z;
  if (b.x == 0 || b.y == 0 || b.z == 0 || b.x > 1024 || b.y > 1024 || b.z > 64 ||
      threads > uint64_t(p.max_threads_per_block))
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "kernel '%s': block (%u,%u,%u) is invalid: each dimension must be at least "
                     "1, x and y at most 1024, z at most 64, and the %s profile allows %d "
                     "threads per block",
                     name, b.x, b.y, b.z, p.name, p.max_threads_per_block);
  if (d.dyn_smem > uint64_t(p.shared_per_block))
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "kernel '%s': %zu bytes of dynamic shared memory, more than the %lld bytes "
                     "per block of the %s profile",
                     name, d.dyn_smem, (long long)p.shared_per_block, p.name);
  return AKX_SUCCESS;
}
}  // namespace

akx_status run_kernel(const launch_desc &d, void (*fn)(void *), void *closure) {
  const char *name = d.name != nullptr ? d.name : "(unnamed)";
  runtime *rt = current_runtime;
  if (rt == nullptr)
    return akx__fail(AKX_ERROR_INTERNAL,
                     "kernel '%s' was launched on the sim with no sim context current on this "
                     "thread (akx::sim::scoped_context)",
                     name);
  if (rt->launch.running)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "kernel '%s' was launched from inside kernel '%s': the sim has no dynamic "
                     "parallelism",
                     name, rt->launch.name);
  AKX_TRY(check_configuration(*rt, d, name));

  launch_state &L = rt->launch;
  uint32_t threads = d.block.x * d.block.y * d.block.z;
  if (!rt->stacks.reserve(threads) || !reserve_shared(*rt))
    return akx__fail(AKX_ERROR_OUT_OF_MEMORY,
                     "kernel '%s': the sim could not map fiber stacks and shared memory for a "
                     "block of %u threads",
                     name, threads);
  L.name = name;
  L.fn = fn;
  L.closure = closure;
  L.grid = d.grid;
  L.block = d.block;
  L.dyn_smem = d.dyn_smem;
  L.threads = threads;
  L.warps = (threads + 31) / 32;
  L.failed = false;
  L.statics.clear();
  L.static_begin = L.static_end = (d.dyn_smem + 15) & ~size_t(15);
  rt->threads.resize(threads);
  if (rt->warps.size() < L.warps) rt->warps.resize(L.warps);  // warps keep their buffers

  L.running = true;
  begin_launch_counts(*rt);
  uint64_t blocks_run = 0;
  for (uint32_t z = 0; z < d.grid.z && !L.failed; ++z)
    for (uint32_t y = 0; y < d.grid.y && !L.failed; ++y)
      for (uint32_t x = 0; x < d.grid.x && !L.failed; ++x) {
        run_block(*rt, dim3(x, y, z));
        ++blocks_run;
      }
  end_launch_counts(*rt, blocks_run);
  L.running = false;
  lane_now = nullptr;
  return L.failed ? AKX_ERROR_SIM_CHECK : AKX_SUCCESS;
}
}  // namespace akx::sim
