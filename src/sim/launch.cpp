// run_kernel: a launch on the current sim runtime. The configuration is checked against the
// kernel's declaration (kernel_info: launch bounds, shared-memory opt-in) and the device
// profile as a GPU would check it (an invalid one is AKX_ERROR_INVALID_ARGUMENT, and nothing
// runs); then the blocks run, several resident at once (block.cpp), until the last or the
// first failed check.
#include <algorithm>

#include "backend.h"
#include "error.h"
#include "launch_rules.h"
#include "sim/model.h"
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

scoped_pdl::scoped_pdl(const akx_context *ctx, bool on) : rt_(nullptr), previous_(false) {
  if (ctx == nullptr || ctx->be != &akx__backend_sim) return;
  rt_ = static_cast<runtime *>(ctx->impl);
  previous_ = rt_->pdl;
  rt_->pdl = on;
}

scoped_pdl::~scoped_pdl() {
  if (rt_) rt_->pdl = previous_;
}

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
  if (threads > uint64_t(d.max_threads))
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "kernel '%s': a block of %llu threads is more than its launch bounds "
                     "(__launch_bounds__(%d)) allow",
                     name, (unsigned long long)threads, d.max_threads);
  if (d.dyn_smem > size_t(akx__static_shared_limit) && !d.smem_optin)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "kernel '%s': %zu bytes of dynamic shared memory without the opt-in: above "
                     "%d bytes a kernel must be declared with smem_optin (the CUDA backend then "
                     "sets cudaFuncAttributeMaxDynamicSharedMemorySize)",
                     name, d.dyn_smem, akx__static_shared_limit);
  if (d.dyn_smem > uint64_t(p.shared_per_block))
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "kernel '%s': %zu bytes of dynamic shared memory, more than the %lld bytes "
                     "per block (opt-in maximum) of the %s profile",
                     name, d.dyn_smem, (long long)p.shared_per_block, p.name);
  return AKX_SUCCESS;
}

// A kernel's attributes on a profile, as the CUDA backend's fill takes them from the driver
// (src/cuda/backend_cuda.cu): the opt-in attribute is set once, to the profile's maximum less
// the kernel's static shared memory (what its AKX_SHARED arrays took at its last launch under
// that name, else none yet: the sim allocates them as threads reach them).
struct fill_arg {
  const launch_desc *d;
  const runtime *rt;
};
akx_status fill_attributes(const void *, const void *, void *arg, akx__kernel_attributes *out) {
  const fill_arg &f = *static_cast<const fill_arg *>(arg);
  const akx__device_profile &p = *f.rt->profile;
  auto seen = f.rt->static_bytes_seen.find(f.d->name);
  const int64_t statics = seen != f.rt->static_bytes_seen.end() ? int64_t(seen->second) : 0;
  out->ptx_version = p.cc_major * 10 + p.cc_minor;
  out->static_bytes = statics;
  const int64_t attr = akx__dynamic_smem_attribute(f.d->smem_optin, p.shared_per_block, statics);
  out->max_dynamic = attr >= 0 ? attr : int64_t(akx__static_shared_limit) - statics;
  return AKX_SUCCESS;
}

// A kernel with the opt-in may ask for as much dynamic shared memory as its attribute, which
// is per kernel and device for the whole process (one table for both backends): a launch above
// it fails as the driver's would.
akx_status check_attribute(const runtime &rt, const launch_desc &d, const char *name) {
  if (!d.smem_optin || d.kernel == nullptr) return AKX_SUCCESS;
  fill_arg f{&d, &rt};
  akx__kernel_attributes a;
  AKX_TRY(akx__kernel_attributes_get(d.kernel, rt.profile, fill_attributes, &f, &a));
  return akx__check_dynamic_smem(name, d.smem_optin, d.dyn_smem, &a);
}

// Blocks resident at once: the profile's occupancy (threads, registers, shared memory with
// the static part: what this kernel's AKX_SHARED arrays took at its last launch; registers:
// its declared class, kernel_info.registers) on every SM, capped by
// AKX_SIM_RESIDENT and the grid.
uint32_t resident_blocks(runtime &rt, const launch_desc &d, uint32_t threads, uint64_t grid) {
  auto seen = rt.static_bytes_seen.find(d.name);
  uint64_t statics = seen != rt.static_bytes_seen.end() ? seen->second : 0;
  uint64_t per_sm = akx__sim_resident_blocks_per_sm(rt.profile, threads, d.dyn_smem + statics,
                                                    uint32_t(d.registers));
  uint64_t n = per_sm * uint64_t(rt.profile->sm_count);
  n = std::min<uint64_t>({n, rt.resident_cap, grid});
  return uint32_t(n > 0 ? n : 1);
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
  AKX_TRY(check_attribute(*rt, d, name));

  launch_state &L = rt->launch;
  const uint32_t threads = d.block.x * d.block.y * d.block.z;
  const uint64_t grid = uint64_t(d.grid.x) * d.grid.y * d.grid.z;
  L.name = name;
  L.fn = fn;
  L.closure = closure;
  L.grid = d.grid;
  L.block = d.block;
  L.dyn_smem = d.dyn_smem;
  L.smem_optin = d.smem_optin;
  L.threads = threads;
  L.warps = (threads + 31) / 32;
  L.grid_blocks = grid;
  L.resident = resident_blocks(*rt, d, threads, grid);
  L.registers = uint32_t(d.registers);
  L.loads_in_flight = uint32_t(d.loads_in_flight);
  L.pdl = rt->pdl;
  L.failed = false;
  L.statics.clear();
  L.static_begin = L.static_end = (d.dyn_smem + 15) & ~size_t(15);

  bool mapped = rt->stacks.reserve(size_t(threads) * L.resident);
  while (mapped && rt->slots.size() < L.resident) {
    rt->slots.push_back(std::make_unique<block_state>());
    rt->slots.back()->slot = uint32_t(rt->slots.size() - 1);
  }
  for (uint32_t s = 0; mapped && s < L.resident; ++s) {
    block_state &b = *rt->slots[s];
    b.threads.resize(threads);
    if (b.warps.size() < L.warps) b.warps.resize(L.warps);  // warps keep their buffers
    mapped = reserve_shared(*rt, b);
  }
  if (!mapped)
    return akx__fail(AKX_ERROR_OUT_OF_MEMORY,
                     "kernel '%s': the sim could not map fiber stacks and shared memory for %u "
                     "resident blocks of %u threads (AKX_SIM_RESIDENT lowers the first)",
                     name, L.resident, threads);

  // Blocks are admitted in index order, as a GPU roughly does; in a shuffled order under a
  // random schedule.
  rt->admission.resize(grid);
  for (uint64_t i = 0; i < grid; ++i) rt->admission[i] = i;
  if (rt->random_schedule)
    for (uint64_t i = grid; i > 1; --i) std::swap(rt->admission[i - 1], rt->admission[next_random(*rt) % i]);

  L.running = true;
  begin_launch_counts(*rt);
  order_launch_begin(*rt);
  run_blocks(*rt);
  order_launch_end(*rt);
  rt->static_bytes_seen[name] = L.static_end - L.static_begin;
  end_launch_counts(*rt, rt->admitted);
  L.running = false;
  lane_now = nullptr;
  return L.failed ? AKX_ERROR_SIM_CHECK : AKX_SUCCESS;
}
}  // namespace akx::sim
