/* The seeds' measured rows (../shared/seeds: the change descriptions libakx's kernels come from),
 * beside the bench's rows that match them (suite, case, dtype, shape, akx call). Every figure is
 * AcceleratedKernels.jl's kernel after its change, GPU time on an RTX 5080:
 *  - reduce-dims-shapes, "Timings", sum(x; dims=2): the five rows of its RTX 5080 column. The
 *    first four fit the card's 64 MiB L2 and were timed back to back, so their inputs may have
 *    come from L2; the model prices DRAM (docs/sim.md, "Caches");
 *  - reduce-whole-array-on-device, "Numbers", float32 sums, this PR: AK.mapreduce (to the
 *    host) beside akx_mapreduce, mapreducedim! into 1 element (its copy to the host included)
 *    beside akx_reduce_dims + copy;
 *  - scan-padded-tiles: the 10^7-element accumulate! of float32 with an operator without
 *    neutral element after the change (74 us) and the float32 cumsum (49 us); 80 MB, whose
 *    input fits in L2 (the cumsum's 1.6 TB/s is above the card's DRAM peak).
 * Shown on a GPU and on the sim's rtx5080 profile, the seeds' device (seeds_shown): on another
 * GPU the ratio says how that GPU stands against the seed's card. */
#define _POSIX_C_SOURCE 200809L
#include <string.h>

#include "akx_bench.h"

static const seed_row seed_rows[] = {
    {"dims", "sum dims=2", "bfloat16", "768x1024x8", "akx_reduce_dims", 19.6, "reduce-dims-shapes"},
    {"dims", "sum dims=2", "float32", "768x1024x8", "akx_reduce_dims", 33.3, "reduce-dims-shapes"},
    {"dims", "sum dims=2", "float32", "64x4096x32", "akx_reduce_dims", 41.0, "reduce-dims-shapes"},
    {"dims", "sum dims=2", "bfloat16", "3072x2048", "akx_reduce_dims", 16.9, "reduce-dims-shapes"},
    {"dims", "sum dims=2", "float32", "8192x8192", "akx_reduce_dims", 295.0, "reduce-dims-shapes"},
    {"reduce", "sum", "float32", "10000", "akx_mapreduce -> host", 14.8, "reduce-whole-array-on-device"},
    {"reduce", "sum", "float32", "1000000", "akx_mapreduce -> host", 12.1, "reduce-whole-array-on-device"},
    {"reduce", "sum", "float32", "100000000", "akx_mapreduce -> host", 454.6, "reduce-whole-array-on-device"},
    {"reduce", "sum", "float32", "10000", "akx_reduce_dims -> dev + copy", 15.4, "reduce-whole-array-on-device"},
    {"reduce", "sum", "float32", "1000000", "akx_reduce_dims -> dev + copy", 15.6, "reduce-whole-array-on-device"},
    {"reduce", "sum", "float32", "100000000", "akx_reduce_dims -> dev + copy", 458.1, "reduce-whole-array-on-device"},
    {"scan", "no-neutral add", "float32", "10000000", "akx::scan_inclusive (akx.cuh)", 74.0, "scan-padded-tiles"},
    {"scan", "add", "float32", "10000000", "akx_scan", 49.0, "scan-padded-tiles"},
};

int seeds_shown(void) { return !on_sim || strcmp(dev.sim_profile, "rtx5080") == 0; }

const seed_row *seed_for(const record *r) {
  for (size_t i = 0; i < sizeof seed_rows / sizeof seed_rows[0]; ++i) {
    const seed_row *s = &seed_rows[i];
    if (!strcmp(s->suite, r->suite) && !strcmp(s->name, r->name) && !strcmp(s->dtype, r->dtype) &&
        !strcmp(s->shape, r->shape) && !strcmp(s->variant, r->variant))
      return s;
  }
  return NULL;
}

double seed_ratio(const record *r, const seed_row *s) {
  if (!s || r->state != ROW_OK) return 0.0;
  if (on_sim) return r->counted ? r->model_us / s->us : 0.0;
  return r->akx.ran ? r->akx.median_us / s->us : 0.0;
}
