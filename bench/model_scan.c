/* The sim model's time of a float32 inclusive scan of n elements (argv[1], default 10^7) beside a
 * device copy of the same bytes on the h200 profile (docs/scan_tiles.md: the goal is within 1.15x
 * at 10^8). Sim only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "akx.h"
#include "akx_sim.h"
int main(int argc, char **argv) {
  const long long n = argc > 1 ? atoll(argv[1]) : 10000000;
  akx_context *ctx;
  if (akx_context_create(&ctx, AKX_BACKEND_SIM, 0)) return 1;
  void *a, *b;
  akx_malloc(ctx, &a, (size_t)n * 4);
  akx_malloc(ctx, &b, (size_t)n * 4);
  float *h = malloc((size_t)n * 4);
  for (long long i = 0; i < n; ++i) h[i] = (float)(i % 5);
  akx_memcpy(ctx, a, h, (size_t)n * 4, AKX_COPY_HOST_TO_DEVICE);
  akx_array s = akx_vector(a, AKX_FLOAT32, n), d = akx_vector(b, AKX_FLOAT32, n);
  akx_sim_counters_reset(ctx);
  if (akx_scan(ctx, &d, &s, AKX_OP_ADD, 0, NULL)) { printf("%s\n", akx_last_error()); return 1; }
  akx_sim_kernel_counters tot, per[8];
  int32_t k = 0;
  akx_sim_counters_get(ctx, &tot, per, 8, &k);
  for (int i = 0; i < k; ++i)
    printf("%-12s launches %llu grid %u model %.2f us steps %llu gld sect %llu/%llu gst %llu/%llu bytes %llu\n",
           per[i].kernel, (unsigned long long)per[i].launches, per[i].last_grid, per[i].model_us,
           (unsigned long long)per[i].dependent_steps,
           (unsigned long long)per[i].global_load.units, (unsigned long long)per[i].global_load.ideal,
           (unsigned long long)per[i].global_store.units, (unsigned long long)per[i].global_store.ideal,
           (unsigned long long)(per[i].global_load.bytes + per[i].global_store.bytes));
  /* copy of the same bytes: read n, write n at the profile's copy bandwidth + one launch */
  const double copy_us = 2.0 + 2.0 * n * 4 / (4300.0 * 1e3);
  printf("n %lld: scan model %.2f us, copy %.2f us (2 x %lld bytes at 4300 GB/s + 2 us), ratio %.3f\n",
         n, tot.model_us, copy_us, n * 4, tot.model_us / copy_us);
  akx_context_destroy(ctx);
  return 0;
}
