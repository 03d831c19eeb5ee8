/* What akx-model-calls and akx-model-mix read of one call on the sim: its launches and the
 * model's time (akx_sim_counters_get, reset before the call). */
#ifndef AKX_BENCH_MODEL_COUNTS_H
#define AKX_BENCH_MODEL_COUNTS_H
#include <stdio.h>
#include "akx.h"
#include "akx_sim.h"

/* The launches and model microseconds since the last akx_sim_counters_reset on ctx; 1 (with a
 * line on stderr naming `what`) when the call before it failed. */
static inline int model_counts_after(akx_context *ctx, akx_status call, const char *tool, const char *what,
                                     long long n, unsigned long long *launches, double *us) {
  if (call != AKX_SUCCESS) {
    fprintf(stderr, "%s: %s of %lld: %s\n", tool, what, n, akx_last_error());
    return 1;
  }
  akx_sim_kernel_counters t;
  int32_t count = 0;
  akx_sim_counters_get(ctx, &t, NULL, 0, &count);
  *launches = (unsigned long long)t.launches;
  *us = t.model_us;
  return 0;
}
#endif
