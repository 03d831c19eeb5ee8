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
     * (a target_blocks override changes the partials a call needs). */
    const int64_t n = 1 + (int64_t)((w->id * 7919 + call * 104729) % 300000);
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
