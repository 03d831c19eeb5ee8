/* The sim model's launches and time per call in a program's mix of calls on one context
 * (docs/workspace.md, "Steady state"): a whole-array sum into host memory, a split dims
 * reduction (n/1000 x 1000 into n/1000 outputs), a columns dims reduction (n/100 x 100 into
 * 100 outputs), a scan, a findall (bool, half set), a sum, a scan; float32 at the sizes given
 * (default 10^4 10^5 10^6). One warm-up round, then `rounds` rounds (default 3): each call's
 * launches and model time, which must be the same in every round after the first (the
 * workspace's steady state; a difference is reported and fails). Sim only.
 * Usage: akx-model-mix [--rounds R] [N...] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "akx.h"
#include "akx_sim.h"
#include "model_counts.h"

enum { SUM, SPLIT_DIMS, COLUMNS_DIMS, SCAN, FINDALL, SUM2, SCAN2, CALLS };
static const char *const names[CALLS] = {"sum", "split dims", "columns dims", "scan", "findall", "sum", "scan"};

typedef struct {
  void *src, *dst, *flags, *idx, *outs;
  long long n;
} buffers;

static akx_status call(akx_context *ctx, int k, const buffers *b) {
  const long long n = b->n;
  akx_array s = akx_vector(b->src, AKX_FLOAT32, n);
  switch (k) {
    case SUM:
    case SUM2: {
      float r;
      return akx_mapreduce(ctx, &s, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &r, AKX_HOST);
    }
    case SPLIT_DIMS:
    case COLUMNS_DIMS: {
      const long long cols = k == SPLIT_DIMS ? 1000 : 100;
      const int64_t sshape[2] = {n / cols, cols};
      const int64_t dshape[2] = {k == SPLIT_DIMS ? n / cols : 1, k == SPLIT_DIMS ? 1 : cols};
      akx_array s2 = akx_array_c(b->src, AKX_FLOAT32, 2, sshape), d2 = akx_array_c(b->outs, AKX_FLOAT32, 2, dshape);
      return akx_reduce_dims(ctx, &d2, &s2, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL);
    }
    case SCAN:
    case SCAN2: {
      akx_array d = akx_vector(b->dst, AKX_FLOAT32, n);
      return akx_scan(ctx, &d, &s, AKX_OP_ADD, 0, NULL);
    }
    default: {
      akx_array f = akx_vector(b->flags, AKX_BOOL, n), i = akx_vector(b->idx, AKX_INT64, n);
      int64_t count = 0;
      return akx_findall(ctx, &f, &i, &count);
    }
  }
}

static int measure(akx_context *ctx, int k, const buffers *b, unsigned long long *launches, double *us) {
  akx_sim_counters_reset(ctx);
  return model_counts_after(ctx, call(ctx, k, b), "akx-model-mix", names[k], b->n, launches, us);
}

int main(int argc, char **argv) {
  long long sizes[16] = {10000, 100000, 1000000};
  int count = 0, rounds = 3;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) rounds = atoi(argv[++i]);
    else if (count < 16) sizes[count++] = atoll(argv[i]);
  }
  if (count == 0) count = 3;
  if (rounds < 1) rounds = 1;
  akx_context *ctx = NULL;
  if (akx_context_create(&ctx, AKX_BACKEND_SIM, 0) != AKX_SUCCESS) {
    fprintf(stderr, "akx-model-mix: %s\n", akx_last_error());
    return 1;
  }
  printf("%-13s %10s | %-9s %9s | %-9s %9s\n", "call", "n", "warm-up", "", "then", "");
  printf("%-13s %10s | %9s %9s | %9s %9s\n", "", "", "launches", "model us", "launches", "model us");
  int failed = 0;
  for (int s = 0; s < count; ++s) {
    buffers b;
    memset(&b, 0, sizeof b);
    b.n = sizes[s];
    const size_t n = (size_t)b.n;
    float *h = malloc(n * sizeof(float));
    unsigned char *f = malloc(n);
    for (size_t i = 0; i < n; ++i) {
      h[i] = (float)(int)(i % 7) - 3.0f;
      f[i] = (unsigned char)((i * 2654435761u) >> 7 & 1); /* half set, scattered */
    }
    akx_malloc(ctx, &b.src, n * sizeof(float));
    akx_malloc(ctx, &b.dst, n * sizeof(float));
    akx_malloc(ctx, &b.flags, n);
    akx_malloc(ctx, &b.idx, n * sizeof(int64_t));
    akx_malloc(ctx, &b.outs, (n / 100 + 100) * sizeof(float));
    akx_memcpy(ctx, b.src, h, n * sizeof(float), AKX_COPY_HOST_TO_DEVICE);
    akx_memcpy(ctx, b.flags, f, n, AKX_COPY_HOST_TO_DEVICE);
    unsigned long long l0[CALLS], l[CALLS];
    double us0[CALLS], us[CALLS];
    for (int k = 0; k < CALLS; ++k)
      if (measure(ctx, k, &b, &l0[k], &us0[k])) return 1;
    for (int r = 0; r < rounds; ++r)
      for (int k = 0; k < CALLS; ++k) {
        unsigned long long lr;
        double ur;
        if (measure(ctx, k, &b, &lr, &ur)) return 1;
        if (r > 0 && (lr != l[k] || ur != us[k])) {
          fprintf(stderr, "akx-model-mix: %s of %lld: round %d took %llu launches, %.2f us; round 1 %llu, %.2f us\n",
                  names[k], b.n, r + 1, lr, ur, l[k], us[k]);
          failed = 1;
        }
        l[k] = lr, us[k] = ur;
      }
    for (int k = 0; k < CALLS; ++k)
      printf("%-13s %10lld | %9llu %9.2f | %9llu %9.2f\n", names[k], b.n, l0[k], us0[k], l[k], us[k]);
    fflush(stdout);
    akx_free(ctx, b.src);
    akx_free(ctx, b.dst);
    akx_free(ctx, b.flags);
    akx_free(ctx, b.idx);
    akx_free(ctx, b.outs);
    free(h);
    free(f);
  }
  akx_context_destroy(ctx);
  return failed;
}
