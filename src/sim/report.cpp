// AKX_SIM_REPORT=1: the context's per-kernel counters as a table on stderr, when the
// context is destroyed.
#include <stdio.h>

#include "sim/runtime.hpp"

namespace akx::sim {
namespace {
double per_request(uint64_t units, uint64_t requests) {
  return requests ? double(units) / double(requests) : 0.0;
}

// "requests  units/request  ideal/request" of one kind of traffic.
void print_traffic(const akx_sim_traffic &t) {
  fprintf(stderr, " %10llu %6.2f %6.2f", (unsigned long long)t.requests,
          per_request(t.units, t.requests), per_request(t.ideal, t.requests));
}
}  // namespace

void print_report(const runtime &rt) {
  const akx__device_profile &p = *rt.profile;
  fprintf(stderr,
          "akx sim report, profile %s (%s, %d SMs); model = an estimate from the counters, "
          "not a measurement\n",
          p.name, p.device_name, p.sm_count);
  if (!rt.counting)
    fprintf(stderr, "(AKX_SIM_COUNTERS=0: requests and bytes were not counted)\n");
  fprintf(stderr,
          "%-32s %8s %10s %8s %10s | %-24s | %-24s | %-24s %12s | %-24s %12s | %10s\n",
          "kernel", "launches", "blocks", "waves", "barriers", "shared ld: req wf/r ideal",
          "shared st: req wf/r ideal", "global ld: req sec/r ideal", "bytes read",
          "global st: req sec/r ideal", "bytes written", "model us");
  for (const auto &[name, k] : rt.store.kernels) {
    fprintf(stderr, "%-32s %8llu %10llu %8.2f %10llu |", name.c_str(),
            (unsigned long long)k.launches, (unsigned long long)k.blocks, k.waves,
            (unsigned long long)k.barriers);
    print_traffic(k.shared_load);
    fprintf(stderr, " |");
    print_traffic(k.shared_store);
    fprintf(stderr, " |");
    print_traffic(k.global_load);
    fprintf(stderr, " %12llu |", (unsigned long long)k.global_load.bytes);
    print_traffic(k.global_store);
    fprintf(stderr, " %12llu | %10.2f\n", (unsigned long long)k.global_store.bytes, k.model_us);
  }
}
}  // namespace akx::sim
