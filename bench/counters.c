/* akx-bench on the sim: one call run counted, its counters summed into a row, and the model's
 * time of a device copy of the same bytes (the sim's counterpart of CUDA's copy column). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "akx_bench.h"
#include "sim/model.h" /* akx__sim_model_us: the model's time of a device copy */

static double per_request(const akx_sim_traffic *t, uint64_t units) {
  return t->requests ? (double)units / (double)t->requests : 0.0;
}

static akx_sim_traffic traffic_sum(akx_sim_traffic a, akx_sim_traffic b) {
  return (akx_sim_traffic){a.requests + b.requests, a.units + b.units, a.ideal + b.ideal,
                           a.bytes + b.bytes};
}

/* One call on the sim, counted: its status; the counters into c, the wall time into *wall. */
akx_status sim_call(akx_context *ctx, akx_bench_enqueue_fn fn, op_arg *a, sim_counts *c,
                    double *wall) {
  akx_status s = akx_sim_counters_reset(ctx);
  double t0 = now_seconds();
  if (s == AKX_SUCCESS) s = fn(ctx, a);
  if (s == AKX_SUCCESS) s = akx_synchronize(ctx);
  *wall = now_seconds() - t0;
  if (s == AKX_SUCCESS) {
    s = akx_sim_counters_get(ctx, &c->total, c->k, MAX_KERNELS, &c->count);
    if (c->count > MAX_KERNELS) c->count = MAX_KERNELS;
  }
  return s;
}

void record_counts(record *r, const sim_counts *c) {
  const akx_sim_kernel_counters *t = &c->total;
  akx_sim_traffic shared = traffic_sum(t->shared_load, t->shared_store);
  r->kernels[0] = 0;
  uint64_t most = 0;
  for (int32_t i = 0; i < c->count; ++i) {
    size_t len = strlen(r->kernels);
    snprintf(r->kernels + len, sizeof r->kernels - len, "%s%s", i ? "+" : "", c->k[i].kernel);
    uint64_t moved = c->k[i].global_load.bytes + c->k[i].global_store.bytes;
    if (i == 0 || moved > most) {
      most = moved;
      snprintf(r->grid, sizeof r->grid, "%ux%u", c->k[i].last_grid, c->k[i].last_block);
    }
  }
  if (!c->count) snprintf(r->grid, sizeof r->grid, "-");
  r->waves = t->waves;
  r->gld = per_request(&t->global_load, t->global_load.units);
  r->gld_ideal = per_request(&t->global_load, t->global_load.ideal);
  r->smem = per_request(&shared, shared.units);
  r->smem_ideal = per_request(&shared, shared.ideal);
  r->bytes_moved = (double)(t->global_load.bytes + t->global_store.bytes);
  r->model_us = t->model_us;
  r->fits_l2 = t->fits_l2;
  r->counted = t->global_load.bytes > 0;
}

/* The model's time of a device-to-device copy reading and writing `bytes` in all (half each
 * way), as a copy kernel would launch on the context's profile: 16-byte loads (512 bytes per
 * warp request), 4 in flight per thread, enough 256-thread blocks to fill the device. It is
 * what the model charges a kernel that only streams these bytes: the sim's counterpart of the
 * copy column on CUDA. */
double model_copy_us(double bytes) {
  return akx__sim_model_copy_us(akx__profile_by_name(dev.sim_profile), bytes);
}
