// The sim's counters: grouping warp requests, summing their costs per launch, kernel and
// site, and the akx_sim_* functions that read them.
//
// Request k of a warp at a site is the k-th execution of the site by each lane since the
// warp's last convergence point (block start, a barrier, a warp collective of the warp,
// block end). Lanes of a block run one after another between rendezvous, so the k-th
// accesses of a warp's lanes meet only at the convergence point: each lane's addresses are
// kept until then, as arithmetic runs (a loop over an array is one run, so a long loop
// costs no memory), and grouped there, whatever order the lanes ran in.
//
// A collective of some of a warp's lanes closes the requests of all its lanes. The lanes
// outside its mask took no part in it, and a GPU would go on grouping their accesses: the
// counts differ only if such lanes access memory while others of their warp meet.
#include <stdio.h>
#include <string.h>

#include <tuple>

#include "backend.h"
#include "error.h"
#include "internal.h"
#include "sim/model.h"
#include "sim/request_cost.hpp"
#include "sim/runtime.hpp"

namespace akx::sim {
namespace {

void cost_request(runtime &rt, uint32_t site_id, const lane_request &r) {
  const site_info &si = rt.sites[site_id];
  request_cost c = si.shared ? shared_request_cost(r.addr, r.mask, si.bytes, si.width)
                             : global_request_cost(r.addr, r.mask, si.bytes, si.width);
  if (rt.counts.per_site.size() <= site_id) rt.counts.per_site.resize(rt.sites.size());
  akx_sim_traffic &t = rt.counts.per_site[site_id];
  t.requests += c.requests;
  t.units += c.units;
  t.ideal += c.ideal;
  t.bytes += c.bytes;
}

// Groups a window's accesses into requests, k-th address of each lane with each other.
void cost_window(runtime &rt, uint32_t site_id, site_window &sw) {
  struct cursor {
    size_t run;
    uint64_t index;  // within the run
  } at[32] = {};
  for (;;) {
    lane_request r;
    r.mask = 0;
    for (uint32_t m = sw.lanes; m != 0; m &= m - 1) {
      uint32_t lane = uint32_t(__builtin_ctz(m));
      const std::vector<address_run> &runs = sw.runs[lane];
      cursor &c = at[lane];
      if (c.run == runs.size()) continue;  // this lane has no k-th access
      const address_run &run = runs[c.run];
      r.addr[lane] = run.start + uint64_t(run.step) * c.index;
      r.mask |= 1u << lane;
      if (++c.index == run.count) c = cursor{c.run + 1, 0};
    }
    if (r.mask == 0) return;
    cost_request(rt, site_id, r);
  }
}
}  // namespace

void count_access(runtime &rt, thread_slot &th, uint32_t site_id, uint64_t addr) {
  warp_window &ww = th.blk->warps[th.warp].window;
  if (ww.slot_of_site.size() <= site_id) ww.slot_of_site.resize(rt.sites.size(), -1);
  if (ww.slot_of_site[site_id] < 0) {
    ww.slot_of_site[site_id] = int32_t(ww.slots.size());
    ww.slots.emplace_back();
  }
  site_window &sw = ww.slots[size_t(ww.slot_of_site[site_id])];
  if (sw.epoch != ww.epoch) {  // the first access at this site since the last convergence
    for (uint32_t m = sw.lanes; m != 0; m &= m - 1) sw.runs[__builtin_ctz(m)].clear();
    sw.epoch = ww.epoch;
    sw.lanes = 0;
    ww.active.push_back(site_id);
  }
  sw.lanes |= 1u << th.lane;
  std::vector<address_run> &runs = sw.runs[th.lane];
  if (!runs.empty()) {
    address_run &last = runs.back();
    if (last.count == 1) {
      last.step = int64_t(addr - last.start);
      last.count = 2;
    } else if (last.start + uint64_t(last.step) * last.count == addr) {
      ++last.count;
    } else {
      runs.push_back(address_run{addr, 0, 1});
    }
  } else {
    runs.push_back(address_run{addr, 0, 1});
  }
}

void count_atomic(runtime &rt, uint32_t site_id, uint64_t addr) {
  launch_counts &c = rt.counts;
  if (c.atomics_per_site.size() <= site_id) c.atomics_per_site.resize(rt.sites.size());
  ++c.atomics_per_site[site_id];
  address_atomics &at = c.atomics_per_address[addr];
  ++at.count;
  for (auto &[id, n] : at.by_site)
    if (id == site_id) {
      ++n;
      return;
    }
  at.by_site.emplace_back(site_id, 1);
}

void flush_warp(runtime &rt, warp_state &w) {
  warp_window &ww = w.window;
  for (uint32_t site_id : ww.active) cost_window(rt, site_id, ww.slots[size_t(ww.slot_of_site[site_id])]);
  ww.active.clear();
  ++ww.epoch;
}

void flush_block_warps(runtime &rt, block_state &b) {
  for (uint32_t i = 0; i < rt.launch.warps; ++i) flush_warp(rt, b.warps[i]);
}

void add_traffic(akx_sim_traffic &into, const akx_sim_traffic &t) {
  into.requests += t.requests;
  into.units += t.units;
  into.ideal += t.ideal;
  into.bytes += t.bytes;
}

void begin_launch_counts(runtime &rt) {
  launch_counts &c = rt.counts;
  c.per_site.assign(rt.sites.size(), akx_sim_traffic{});
  c.atomics_per_site.assign(rt.sites.size(), 0);
  c.atomics_per_address.clear();
  c.barriers = 0;
  c.dependent_steps = 0;
  c.dependency_waits = 0;
  c.dependents_launches = 0;
}

void end_launch_counts(runtime &rt, uint64_t blocks_run) {
  const launch_state &L = rt.launch;
  const launch_counts &c = rt.counts;
  akx_sim_kernel_counters &k = rt.store.kernels[L.name];
  snprintf(k.kernel, sizeof k.kernel, "%s", L.name);
  uint64_t shared_per_block = L.dyn_smem + (L.static_end - L.static_begin);
  uint64_t grid_blocks = uint64_t(L.grid.x) * L.grid.y * L.grid.z;
  uint64_t resident = uint64_t(akx__sim_resident_blocks_per_sm(rt.profile, L.threads,
                                                               shared_per_block,
                                                               L.registers)) *
                      uint64_t(rt.profile->sm_count);
  k.launches += 1;
  k.blocks += blocks_run;
  k.threads += blocks_run * L.threads;
  k.warps += blocks_run * L.warps;
  k.barriers += c.barriers;
  k.waves += double(grid_blocks) / double(resident);
  k.last_grid = L.grid.x;
  k.last_block = L.block.x;
  k.last_dyn_smem = L.dyn_smem;
  k.last_static_smem = L.static_end - L.static_begin;
  k.dependent_steps += c.dependent_steps;
  k.pdl_launches += L.pdl ? 1 : 0;
  k.dependency_waits += c.dependency_waits;
  k.dependents_launches += c.dependents_launches;
  k.l2_bytes = uint64_t(rt.profile->l2_bytes);

  akx__sim_launch_stats stats{};
  stats.blocks = grid_blocks;
  stats.threads_per_block = L.threads;
  stats.shared_bytes_per_block = shared_per_block;
  stats.registers_per_thread = L.registers;
  stats.loads_in_flight = L.loads_in_flight;
  stats.dependent_steps = c.dependent_steps;
  stats.pdl = L.pdl ? 1 : 0;
  // Atomics by address: the longest chain on one address (the model's), and each site's.
  std::map<uint32_t, uint64_t> site_chain;
  for (const auto &[addr, at] : c.atomics_per_address) {
    if (at.count > stats.atomic_chain) stats.atomic_chain = at.count;
    for (const auto &[id, n] : at.by_site)
      if (n > site_chain[id]) site_chain[id] = n;
  }
  k.atomic_addresses += c.atomics_per_address.size();
  if (stats.atomic_chain > k.atomic_chain) k.atomic_chain = stats.atomic_chain;
  for (uint32_t id = 0; id < c.atomics_per_site.size(); ++id) {
    if (c.atomics_per_site[id] == 0) continue;
    k.atomics += c.atomics_per_site[id];
    site_counts &sc = rt.store.sites[{L.name, id}];
    sc.atomics += c.atomics_per_site[id];
    if (site_chain[id] > sc.atomic_chain) sc.atomic_chain = site_chain[id];
  }
  for (uint32_t id = 0; id < c.per_site.size(); ++id) {
    const akx_sim_traffic &t = c.per_site[id];
    if (t.requests == 0) continue;
    const site_info &si = rt.sites[id];
    akx_sim_traffic &into = si.shared ? (si.store ? k.shared_store : k.shared_load)
                                      : (si.store ? k.global_store : k.global_load);
    add_traffic(into, t);
    add_traffic(rt.store.sites[{L.name, id}].traffic, t);
    if (si.shared) {
      stats.shared_wavefronts += t.units;
    } else {
      stats.global_sectors += t.units;
      stats.global_requests += t.requests;
      if (!si.store) {
        stats.load_sectors += t.units;
        stats.load_requests += t.requests;
      }
    }
  }
  // The footprint: bytes of the sectors this launch moved (an upper bound of the distinct
  // bytes it touched); the kernel keeps its largest launch's.
  uint64_t footprint = stats.global_sectors * uint64_t(akx__sim_sector_bytes);
  if (footprint > k.footprint_bytes) k.footprint_bytes = footprint;
  k.fits_l2 = k.footprint_bytes > 0 && k.footprint_bytes <= k.l2_bytes;
  k.model_us += akx__sim_model_us(rt.profile, &stats);
}
}  // namespace akx::sim

// ---- include/akx_sim.h -------------------------------------------------------------------------

using akx::sim::runtime;

namespace {
// The sim runtime of ctx into *rt; a status and a sentence when ctx is not a sim context.
akx_status sim_runtime_of(const akx_context *ctx, const char *function, runtime **rt) {
  if (ctx == nullptr) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "%s: ctx is NULL", function);
  if (ctx->be != &akx__backend_sim)
    return akx__fail(AKX_ERROR_UNSUPPORTED,
                     "%s: ctx is not a sim context; counters exist on the sim backend only",
                     function);
  *rt = static_cast<runtime *>(ctx->impl);
  return AKX_SUCCESS;
}
}  // namespace

static akx_status sim_counters_reset_locked(akx_context *ctx) {
  runtime *rt = nullptr;
  AKX_TRY(sim_runtime_of(ctx, "akx_sim_counters_reset", &rt));
  rt->store = akx::sim::counter_store{};
  return AKX_SUCCESS;
}

static akx_status sim_counters_get_locked(const akx_context *ctx, akx_sim_kernel_counters *total,
                                           akx_sim_kernel_counters *per_kernel,
                                           int32_t capacity, int32_t *count) {
  runtime *rt = nullptr;
  AKX_TRY(sim_runtime_of(ctx, "akx_sim_counters_get", &rt));
  if (capacity < 0)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "akx_sim_counters_get: capacity is %d, expected >= 0", (int)capacity);
  if (capacity > 0 && per_kernel == nullptr)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "akx_sim_counters_get: per_kernel is NULL with capacity %d", (int)capacity);
  akx_sim_kernel_counters sum{};
  int32_t n = 0;
  for (const auto &[name, k] : rt->store.kernels) {
    if (n < capacity) per_kernel[n] = k;
    ++n;
    sum.launches += k.launches;
    sum.blocks += k.blocks;
    sum.threads += k.threads;
    sum.barriers += k.barriers;
    sum.warps += k.warps;
    sum.waves += k.waves;
    akx::sim::add_traffic(sum.shared_load, k.shared_load);
    akx::sim::add_traffic(sum.shared_store, k.shared_store);
    akx::sim::add_traffic(sum.global_load, k.global_load);
    akx::sim::add_traffic(sum.global_store, k.global_store);
    sum.model_us += k.model_us;
    sum.footprint_bytes += k.footprint_bytes;
    sum.dependent_steps += k.dependent_steps;
    sum.pdl_launches += k.pdl_launches;
    sum.dependency_waits += k.dependency_waits;
    sum.dependents_launches += k.dependents_launches;
    sum.atomics += k.atomics;
    sum.atomic_addresses += k.atomic_addresses;
    if (k.atomic_chain > sum.atomic_chain) sum.atomic_chain = k.atomic_chain;
  }
  sum.l2_bytes = uint64_t(rt->profile->l2_bytes);
  sum.fits_l2 = sum.footprint_bytes > 0 && sum.footprint_bytes <= sum.l2_bytes;
  if (total != nullptr) *total = sum;
  if (count != nullptr) *count = n;
  return AKX_SUCCESS;
}

static akx_status sim_sites_get_locked(const akx_context *ctx, akx_sim_site_counters *sites,
                                        int32_t capacity, int32_t *count) {
  runtime *rt = nullptr;
  AKX_TRY(sim_runtime_of(ctx, "akx_sim_sites_get", &rt));
  if (capacity < 0)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "akx_sim_sites_get: capacity is %d, expected >= 0", (int)capacity);
  if (capacity > 0 && sites == nullptr)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "akx_sim_sites_get: sites is NULL with capacity %d", (int)capacity);
  // Sites of one source line in several template instances (or translation units) are one
  // row: the table speaks of source lines.
  // An atomic site's chain is the largest of its instances' (one address, one launch).
  using row_key = std::tuple<std::string, std::string, uint32_t, uint32_t, int, int, int>;
  std::map<row_key, akx::sim::site_counts> rows;
  for (const auto &[key, sc] : rt->store.sites) {
    const akx::sim::site_info &si = rt->sites[key.second];
    row_key rk{key.first, akx::sim::file_basename(si.where.file_name()), si.where.line(),
               si.where.column(), si.shared, si.store, si.atomic};
    akx::sim::site_counts &row = rows[rk];
    akx::sim::add_traffic(row.traffic, sc.traffic);
    row.atomics += sc.atomics;
    if (sc.atomic_chain > row.atomic_chain) row.atomic_chain = sc.atomic_chain;
  }
  int32_t n = 0;
  for (const auto &[rk, row] : rows) {
    if (n < capacity) {
      akx_sim_site_counters &out = sites[n];
      memset(&out, 0, sizeof out);
      snprintf(out.kernel, sizeof out.kernel, "%s", std::get<0>(rk).c_str());
      snprintf(out.file, sizeof out.file, "%s", std::get<1>(rk).c_str());
      out.line = int32_t(std::get<2>(rk));
      out.column = int32_t(std::get<3>(rk));
      out.shared = std::get<4>(rk);
      out.store = std::get<5>(rk);
      out.atomic = std::get<6>(rk);
      out.traffic = row.traffic;
      out.atomics = row.atomics;
      out.atomic_chain = row.atomic_chain;
    }
    ++n;
  }
  if (count != nullptr) *count = n;
  return AKX_SUCCESS;
}

extern "C" akx_status akx_sim_counters_reset(akx_context *ctx) {
  return AKX_LOCKED(ctx, sim_counters_reset_locked(ctx));
}

extern "C" akx_status akx_sim_counters_get(const akx_context *ctx, akx_sim_kernel_counters *total,
                                           akx_sim_kernel_counters *per_kernel,
                                           int32_t capacity, int32_t *count) {
  return AKX_LOCKED(ctx, sim_counters_get_locked(ctx, total, per_kernel, capacity, count));
}

extern "C" akx_status akx_sim_sites_get(const akx_context *ctx, akx_sim_site_counters *sites,
                                        int32_t capacity, int32_t *count) {
  return AKX_LOCKED(ctx, sim_sites_get_locked(ctx, sites, capacity, count));
}
