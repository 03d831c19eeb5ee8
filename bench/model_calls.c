/* The sim model's launches and time per call of each family, float32, at the sizes given
 * (default 10^4 10^5 10^6), before and after one launch per call (docs/one_launch.md):
 *   before: every call as before the change: the status reset or the second pass (two
 *           launches: AKX_ONE_LAUNCH=0), plain launches (AKX_PDL=0);
 *   after:  the defaults: the first call on a fresh workspace (zeroed when allocated: one
 *           launch), programmatic dependent launches (the h200 profile is sm_90).
 * Families: a whole-array sum into host memory, an inclusive sum scan, findall of a bool
 * array with every third element true, and a split dims reduction: column sums of n/32 x 32
 * (dims=1), split over blocks. Every call's status is checked; values are the tests' job.
 * Sim only. Usage: akx-model-calls [N...] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "akx.h"
#include "akx_sim.h"
#include "model_counts.h"

enum { SUM, SCAN, FINDALL, DIMS, FAMILIES };
static const char *const names[FAMILIES] = {"whole-array sum", "scan", "findall", "split dims sum"};

typedef struct {
  void *src, *dst, *flags, *idx, *cols;
  long long n;
} buffers;

static akx_status call(akx_context *ctx, int family, const buffers *b) {
  const long long n = b->n;
  akx_array s = akx_vector(b->src, AKX_FLOAT32, n);
  switch (family) {
    case SUM: {
      float r;
      return akx_mapreduce(ctx, &s, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &r, AKX_HOST);
    }
    case SCAN: {
      akx_array d = akx_vector(b->dst, AKX_FLOAT32, n);
      return akx_scan(ctx, &d, &s, AKX_OP_ADD, 0, NULL);
    }
    case FINDALL: {
      akx_array f = akx_vector(b->flags, AKX_BOOL, n), i = akx_vector(b->idx, AKX_INT64, n);
      int64_t count = 0;
      return akx_findall(ctx, &f, &i, &count);
    }
    default: {
      const int64_t sshape[2] = {n / 32, 32}, dshape[2] = {1, 32};
      akx_array s2 = akx_array_c(b->src, AKX_FLOAT32, 2, sshape), d2 = akx_array_c(b->cols, AKX_FLOAT32, 2, dshape);
      return akx_reduce_dims(ctx, &d2, &s2, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL);
    }
  }
}

/* The launches and model time of one call. */
static int measure(akx_context *ctx, int family, const buffers *b, unsigned long long *launches, double *us) {
  akx_sim_counters_reset(ctx);
  return model_counts_after(ctx, call(ctx, family, b), "akx-model-calls", names[family], b->n, launches, us);
}

static akx_context *open_with(const char *pdl, const char *one_launch) {
  setenv("AKX_PDL", pdl, 1);
  setenv("AKX_ONE_LAUNCH", one_launch, 1);
  akx_context *ctx = NULL;
  if (akx_context_create(&ctx, AKX_BACKEND_SIM, 0) != AKX_SUCCESS) {
    fprintf(stderr, "akx-model-calls: %s\n", akx_last_error());
    exit(1);
  }
  return ctx;
}

int main(int argc, char **argv) {
  long long sizes[16] = {10000, 100000, 1000000};
  int count = 3;
  if (argc > 1) {
    count = 0;
    for (int i = 1; i < argc && count < 16; ++i) sizes[count++] = atoll(argv[i]);
  }
  akx_context *plain = open_with("0", "0"), *pdl = open_with("1", "1");
  printf("%-16s %10s | %-22s | %-22s | %s\n", "family", "n", "before: launches, us", "after: launches, us",
         "after / before");
  for (int s = 0; s < count; ++s) {
    buffers b;
    memset(&b, 0, sizeof b);
    b.n = sizes[s];
    const size_t n = (size_t)b.n;
    float *h = malloc(n * sizeof(float));
    unsigned char *f = malloc(n);
    for (size_t i = 0; i < n; ++i) {
      h[i] = (float)(int)(i % 7) - 3.0f;
      f[i] = i % 3 == 0;
    }
    for (int c = 0; c < 2; ++c) {
      akx_context *ctx = c ? pdl : plain;
      buffers *x = &b;
      void *src, *dst, *flags, *idx, *cols;
      akx_malloc(ctx, &src, n * sizeof(float));
      akx_malloc(ctx, &dst, n * sizeof(float));
      akx_malloc(ctx, &flags, n);
      akx_malloc(ctx, &idx, n * sizeof(int64_t));
      akx_malloc(ctx, &cols, 32 * sizeof(float));
      akx_memcpy(ctx, src, h, n * sizeof(float), AKX_COPY_HOST_TO_DEVICE);
      akx_memcpy(ctx, flags, f, n, AKX_COPY_HOST_TO_DEVICE);
      x->src = src, x->dst = dst, x->flags = flags, x->idx = idx, x->cols = cols;
      static unsigned long long l[2][FAMILIES];
      static double us[2][FAMILIES];
      for (int fam = 0; fam < FAMILIES; ++fam) {
        unsigned long long first_l, again_l;
        double first_us, again_us;
        /* A workspace of its own: its first call of the size, then the same call again (the
         * same launches and time: the after column is the first's, checked against it). */
        akx_context_set_workspace(ctx, NULL, 0);
        if (measure(ctx, fam, x, &first_l, &first_us) || measure(ctx, fam, x, &again_l, &again_us)) return 1;
        if (first_l != again_l || first_us != again_us) {
          fprintf(stderr, "akx-model-calls: %s of %lld: the first call took %llu launches, %.2f us; the next %llu, %.2f us\n",
                  names[fam], b.n, first_l, first_us, again_l, again_us);
          return 1;
        }
        l[c][fam] = first_l, us[c][fam] = first_us;
      }
      akx_free(ctx, src);
      akx_free(ctx, dst);
      akx_free(ctx, flags);
      akx_free(ctx, idx);
      akx_free(ctx, cols);
      if (c == 1)
        for (int fam = 0; fam < FAMILIES; ++fam)
          printf("%-16s %10lld | %8llu, %11.2f | %8llu, %11.2f | %.2fx\n", names[fam], b.n, l[0][fam], us[0][fam],
                 l[1][fam], us[1][fam], us[1][fam] / us[0][fam]);
      fflush(stdout);
    }
    free(h);
    free(f);
  }
  akx_context_destroy(plain);
  akx_context_destroy(pdl);
  return 0;
}
