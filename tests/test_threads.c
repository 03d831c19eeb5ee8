/* Contexts and host threads: threads hammering one shared context (its calls take turns:
 * stream, workspace and launches are the context's), and threads with a context each (they
 * run at once). Every result is checked exactly (integer sums), so a call that reduced
 * another thread's partials, or a workspace freed under a running kernel, shows. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <stdio.h>
#include "fixture.h"

#define THREADS 4
#define CALLS 40

typedef struct {
  akx_context *shared; /* NULL: the thread opens its own */
  int id;
  int failures;
  char why[256];
} worker;

static void *work(void *arg) {
  worker *w = arg;
  akx_context *ctx = w->shared;
  if (!ctx && akx_context_create(&ctx, AKX_BACKEND_AUTO, 0) != AKX_SUCCESS) {
    snprintf(w->why, sizeof w->why, "context: %s", akx_last_error());
    w->failures++;
    return NULL;
  }
  for (int call = 0; call < CALLS; call++) {
    /* Sizes that differ per thread and call: one block, several passes; growing workspaces
     * (a target_blocks override changes the partials a call needs). Up to 60000: 30 tiles of
     * the default tuning, so 16 blocks loop over two (was 300000: 24 million elements for the
     * same paths). */
    const int64_t n = 1 + (int64_t)((w->id * 7919 + call * 104729) % 60000);
    int32_t *h = malloc((size_t)n * sizeof *h);
    int64_t want = 0;
    for (int64_t i = 0; i < n; i++) want += h[i] = (int32_t)((i * 31 + w->id) % 1000) - 500;
    void *d = NULL;
    akx_status s = akx_malloc(ctx, &d, (size_t)n * sizeof *h);
    if (s == AKX_SUCCESS) s = akx_memcpy(ctx, d, h, (size_t)n * sizeof *h, AKX_COPY_HOST_TO_DEVICE);
    akx_reduce_opts o = akx_reduce_opts_default();
    o.target_blocks = 16 + (call % 5) * 100;
    int64_t got = 0;
    akx_array v = akx_vector(d, AKX_INT32, n);
    if (s == AKX_SUCCESS) s = akx_mapreduce(ctx, &v, AKX_MAP_IDENTITY, AKX_OP_ADD, &o, &got, AKX_HOST);
    if (s != AKX_SUCCESS || got != want) {
      if (!w->failures)
        snprintf(w->why, sizeof w->why, "thread %d call %d n %lld: %s, %lld instead of %lld (%s)",
                 w->id, call, (long long)n, akx_status_string(s), (long long)got,
                 (long long)want, akx_last_error());
      w->failures++;
    }
    akx_free(ctx, d);
    free(h);
  }
  if (!w->shared) akx_context_destroy(ctx);
  return NULL;
}

static void run(int shared) {
  akx_context *ctx = shared ? tfx_open() : NULL;
  pthread_t t[THREADS];
  worker w[THREADS];
  memset(w, 0, sizeof w);
  for (int i = 0; i < THREADS; i++) {
    w[i].shared = ctx;
    w[i].id = i;
    cr_assert_eq(pthread_create(&t[i], NULL, work, &w[i]), 0);
  }
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  for (int i = 0; i < THREADS; i++) cr_expect_eq(w[i].failures, 0, "%s", w[i].why);
  if (ctx) tfx_close(ctx);
}

Test(threads, one_context_shared_by_threads, .timeout = 240) { run(1); }
Test(threads, a_context_per_thread, .timeout = 240) { run(0); }

/* Threads sharing one context, each running another family (a scan, a findall, a split dims
 * reduction, a whole-array sum), so that every call finds the workspace as another family
 * left it: each family's tags must survive the others' calls (docs/workspace.md). Every value
 * checked exactly (small integers). */
typedef struct {
  akx_context *ctx;
  int family;
  int failures;
  char why[256];
} family_worker;

static void *work_family(void *arg) {
  family_worker *w = arg;
  akx_context *ctx = w->ctx;
  for (int call = 0; call < 12 && !w->failures; call++) {
    const int64_t n = 20000 + (int64_t)((w->family * 7919 + call * 104729) % 60000);
    int32_t *h = malloc((size_t)n * sizeof *h);
    int64_t *got = malloc((size_t)n * sizeof *got);
    for (int64_t i = 0; i < n; i++) h[i] = (int32_t)((i * 31 + call) % 7) - 3;
    void *src = NULL, *dst = NULL;
    akx_status s = akx_malloc(ctx, &src, (size_t)n * sizeof *h);
    if (s == AKX_SUCCESS) s = akx_malloc(ctx, &dst, (size_t)n * sizeof(int64_t));
    if (s == AKX_SUCCESS) s = akx_memcpy(ctx, src, h, (size_t)n * sizeof *h, AKX_COPY_HOST_TO_DEVICE);
    const akx_array v = akx_vector(src, AKX_INT32, n);
    int64_t bad = -1, want = 0, value = 0;
    if (s == AKX_SUCCESS && w->family == 0) { /* an int64 scan of the int32 source */
      const akx_array d = akx_vector(dst, AKX_INT64, n);
      s = akx_scan(ctx, &d, &v, AKX_OP_ADD, 0, NULL);
      if (s == AKX_SUCCESS) s = akx_memcpy(ctx, got, dst, (size_t)n * sizeof *got, AKX_COPY_DEVICE_TO_HOST);
      for (int64_t i = 0; i < n && s == AKX_SUCCESS && bad < 0; i++)
        if (got[i] != (want += h[i])) bad = i, value = got[i];
    } else if (s == AKX_SUCCESS && w->family == 1) { /* findall */
      int64_t count = -1, k = 0;
      const akx_array ix = akx_vector(dst, AKX_INT64, n);
      s = akx_findall(ctx, &v, &ix, &count);
      if (s == AKX_SUCCESS) s = akx_memcpy(ctx, got, dst, (size_t)count * sizeof *got, AKX_COPY_DEVICE_TO_HOST);
      for (int64_t i = 0; i < n && s == AKX_SUCCESS && bad < 0; i++) {
        if (h[i] == 0) continue;
        if (k >= count || got[k] != i) bad = i, value = k < count ? got[k] : -1;
        ++k;
      }
      for (int64_t i = 0; i < n; i++) want += h[i] != 0;
      if (s == AKX_SUCCESS && bad < 0 && count != want) bad = n, value = count;
    } else if (s == AKX_SUCCESS && w->family == 2) { /* sums of n/1000 rows of 1000: split */
      const int64_t rows = n / 1000, sshape[2] = {rows, 1000}, dshape[2] = {rows, 1};
      const akx_array m = akx_array_c(src, AKX_INT32, 2, sshape), d = akx_array_c(dst, AKX_INT64, 2, dshape);
      s = akx_reduce_dims(ctx, &d, &m, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL);
      if (s == AKX_SUCCESS) s = akx_memcpy(ctx, got, dst, (size_t)rows * sizeof *got, AKX_COPY_DEVICE_TO_HOST);
      for (int64_t r = 0; r < rows && s == AKX_SUCCESS && bad < 0; r++) {
        want = 0;
        for (int64_t j = 0; j < 1000; j++) want += h[r * 1000 + j];
        if (got[r] != want) bad = r, value = got[r];
      }
    } else if (s == AKX_SUCCESS) { /* a whole-array sum over several blocks */
      for (int64_t i = 0; i < n; i++) want += h[i];
      s = akx_mapreduce(ctx, &v, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &value, AKX_HOST);
      if (s == AKX_SUCCESS && value != want) bad = 0;
    }
    if (s != AKX_SUCCESS || bad >= 0) {
      snprintf(w->why, sizeof w->why, "family %d call %d n %lld: %s, at %lld: %lld (%s)", w->family, call,
               (long long)n, akx_status_string(s), (long long)bad, (long long)value, akx_last_error());
      w->failures++;
    }
    akx_free(ctx, src);
    akx_free(ctx, dst);
    free(h);
    free(got);
  }
  return NULL;
}

Test(threads, one_context_shared_by_threads_of_every_family, .timeout = 240) {
  akx_context *ctx = tfx_open();
  family_worker w[4];
  pthread_t t[4];
  memset(w, 0, sizeof w);
  for (int i = 0; i < 4; i++) {
    w[i].ctx = ctx;
    w[i].family = i;
    cr_assert_eq(pthread_create(&t[i], NULL, work_family, &w[i]), 0);
  }
  for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
  for (int i = 0; i < 4; i++) cr_expect_eq(w[i].failures, 0, "%s", w[i].why);
  tfx_close(ctx);
}

/* Two contexts on two threads run the same scan kernel (float64) with tiles over 48 KiB of
 * different sizes (256 x 24 and 256 x 64 items: 48 and 128 KiB of runs, plus scratch). The
 * dynamic shared memory attribute belongs to the kernel for the whole process: set per launch
 * to the launch's own size, one thread's setting would undo the other's and a launch fail
 * (the sim holds the attribute as a GPU does: src/sim/launch.cpp, check_attribute). */
typedef struct {
  int32_t items;
  int failures;
  char why[256];
} big_tile_worker;

static void *scan_big_tiles(void *arg) {
  big_tile_worker *w = arg;
  akx_context *ctx = NULL;
  if (akx_context_create(&ctx, AKX_BACKEND_AUTO, 0) != AKX_SUCCESS) {
    snprintf(w->why, sizeof w->why, "context: %s", akx_last_error());
    w->failures++;
    return NULL;
  }
  for (int call = 0; call < 12 && !w->failures; call++) {
    const int64_t n = 256 * (int64_t)w->items * (1 + call % 3) + 17 * call;
    double *h = malloc((size_t)n * sizeof *h), *got = malloc((size_t)n * sizeof *got);
    for (int64_t i = 0; i < n; i++) h[i] = (double)((i + call) % 7) - 3.0;
    void *src = NULL, *dst = NULL;
    akx_status s = akx_malloc(ctx, &src, (size_t)n * sizeof *h);
    if (s == AKX_SUCCESS) s = akx_malloc(ctx, &dst, (size_t)n * sizeof *h);
    if (s == AKX_SUCCESS) s = akx_memcpy(ctx, src, h, (size_t)n * sizeof *h, AKX_COPY_HOST_TO_DEVICE);
    akx_scan_opts o = akx_scan_opts_default();
    o.block_size = 256;
    o.items_per_thread = w->items;
    const akx_array sv = akx_vector(src, AKX_FLOAT64, n), dv = akx_vector(dst, AKX_FLOAT64, n);
    if (s == AKX_SUCCESS) s = akx_scan(ctx, &dv, &sv, AKX_OP_ADD, 0, &o);
    if (s == AKX_SUCCESS) s = akx_memcpy(ctx, got, dst, (size_t)n * sizeof *got, AKX_COPY_DEVICE_TO_HOST);
    double run = 0;
    for (int64_t i = 0; i < n && s == AKX_SUCCESS; i++) {
      run += h[i]; /* small integers: exact */
      if (got[i] != run) {
        snprintf(w->why, sizeof w->why, "items %d call %d: element %lld is %g, expected %g", (int)w->items, call,
                 (long long)i, got[i], run);
        w->failures++;
        break;
      }
    }
    if (s != AKX_SUCCESS) {
      snprintf(w->why, sizeof w->why, "items %d call %d: %s (%s)", (int)w->items, call, akx_status_string(s),
               akx_last_error());
      w->failures++;
    }
    akx_free(ctx, src);
    akx_free(ctx, dst);
    free(h);
    free(got);
  }
  akx_context_destroy(ctx);
  return NULL;
}

Test(threads, two_contexts_with_tiles_past_48_kib_of_one_kernel, .timeout = 240) {
  /* The smaller tile first, alone: an attribute set to the first launch's own size would then
   * refuse every larger tile, whichever thread runs when. */
  big_tile_worker first = {.items = 24};
  scan_big_tiles(&first);
  cr_assert_eq(first.failures, 0, "%s", first.why);
  big_tile_worker w[2] = {{.items = 24}, {.items = 64}};
  pthread_t t[2];
  for (int i = 0; i < 2; i++) cr_assert_eq(pthread_create(&t[i], NULL, scan_big_tiles, &w[i]), 0);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  for (int i = 0; i < 2; i++) cr_expect_eq(w[i].failures, 0, "%s", w[i].why);
}
