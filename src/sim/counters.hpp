// The sim's counters (include/akx_sim.h): accesses are kept per warp and access site
// between convergence points, grouped into requests and costed at the convergence point, and
// summed per launch, per kernel and per (kernel, site).
#pragma once
#include <stdint.h>

#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "akx_sim.h"

namespace akx::sim {

struct runtime;
struct thread_slot;
struct warp_state;

// One request: the address each lane of `mask` gave.
struct lane_request {
  uint32_t mask;
  uint64_t addr[32];
};

// Consecutive addresses of one lane at one site that step by a constant: a lane looping over
// an array is one run whatever the loop's length.
struct address_run {
  uint64_t start;
  int64_t step;
  uint64_t count;
};

// One warp's accesses at one site since the warp's last convergence point, per lane in
// execution order; request k is the k-th address of each lane.
struct site_window {
  uint32_t epoch = 0;  // the warp window it belongs to; stale when the warp's differs
  uint32_t lanes = 0;  // lanes with runs
  std::vector<address_run> runs[32];
};

// A warp's accesses since its last convergence point, per site id.
struct warp_window {
  uint32_t epoch = 1;
  std::vector<int32_t> slot_of_site;  // site id -> index in slots, -1: none yet
  std::vector<site_window> slots;
  std::vector<uint32_t> active;       // site ids with accesses in this window
};

// Atomics on one address in one launch: in all, and per site id that made them.
struct address_atomics {
  uint64_t count = 0;
  std::vector<std::pair<uint32_t, uint64_t>> by_site;  // (site id, count), few sites an address
};

// The current launch's counts, before they join the totals.
struct launch_counts {
  std::vector<akx_sim_traffic> per_site;  // by site id
  std::vector<uint64_t> atomics_per_site;  // by site id
  std::unordered_map<uint64_t, address_atomics> atomics_per_address;
  uint64_t barriers = 0;
  uint32_t dependent_steps = 0;     // longest release->acquire chain between blocks
  uint64_t dependency_waits = 0, dependents_launches = 0;  // blocks whose thread 0 called them
};

// A site's counts in the store: its traffic and, for an atomic site, its atomics and the
// most it made on one address in one launch.
struct site_counts {
  akx_sim_traffic traffic{};
  uint64_t atomics = 0, atomic_chain = 0;
};

// What a context has counted since it was created or reset.
struct counter_store {
  std::map<std::string, akx_sim_kernel_counters> kernels;
  std::map<std::pair<std::string, uint32_t>, site_counts> sites;  // (kernel, site id)
};

// One lane's access (counting on), kept until the warp's next convergence point.
void count_access(runtime &rt, thread_slot &th, uint32_t site_id, uint64_t addr);
// One lane's global atomic at addr (counting on): counted at once, by site and by address.
void count_atomic(runtime &rt, uint32_t site_id, uint64_t addr);
// A convergence point of the warp: group its accesses into requests and cost them.
void flush_warp(runtime &rt, warp_state &w);
struct block_state;
void flush_block_warps(runtime &rt, block_state &b);
// Before the first block of a launch / after the last one (also after a failed launch:
// what ran is counted).
void begin_launch_counts(runtime &rt);
void end_launch_counts(runtime &rt, uint64_t blocks_run);

void add_traffic(akx_sim_traffic &into, const akx_sim_traffic &t);
// AKX_SIM_REPORT: the per-kernel table, at context destroy.
void print_report(const runtime &rt);
}  // namespace akx::sim
