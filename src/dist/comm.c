/* The communicator: creation over an engine, its buffers, the partials' exchange, counters. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "internal.h"

akx_status akx__dist_fail(akx_status s, const char *fmt, ...) {
  char text[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  return akx_set_last_error(s, text);
}

double akx__dist_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

akx_status akx__dist_grow(akx_comm *c, akx__dist_buffer *b, size_t bytes) {
  if (bytes <= b->bytes) return AKX_SUCCESS;
  /* Doubling keeps a sweep of growing calls at O(log) reallocations. */
  size_t want = b->bytes ? b->bytes : 256;
  while (want < bytes) want *= 2;
  void *p = NULL;
  akx_status s = akx_malloc(c->ctx, &p, want);
  if (s != AKX_SUCCESS) return s;
  if (b->ptr) akx_free(c->ctx, b->ptr);
  b->ptr = p;
  b->bytes = want;
  return AKX_SUCCESS;
}

akx_status akx__dist_host(akx_comm *c, size_t bytes, void **p) {
  if (bytes > c->host_bytes) {
    void *n = realloc(c->host, bytes);
    if (!n) return akx__dist_fail(AKX_ERROR_OUT_OF_MEMORY, "libakx_dist: %zu bytes of host staging", bytes);
    c->host = n;
    c->host_bytes = bytes;
  }
  *p = c->host;
  return AKX_SUCCESS;
}

akx_status akx__dist_comm_new(akx_context *ctx, const akx__dist_engine *e, void *handle, int rank,
                              int size, akx_comm **out) {
  akx_comm *c = calloc(1, sizeof *c);
  if (!c) return akx__dist_fail(AKX_ERROR_OUT_OF_MEMORY, "libakx_dist: the communicator");
  c->ctx = ctx;
  c->engine = e;
  c->handle = handle;
  c->rank = rank;
  c->size = size;
  *out = c;
  return AKX_SUCCESS;
}

void akx_comm_destroy(akx_comm *comm) {
  if (!comm) return;
  /* Queued work (NCCL path) may still read the buffers. */
  akx_synchronize(comm->ctx);
  if (comm->partials.ptr) akx_free(comm->ctx, comm->partials.ptr);
  if (comm->temp.ptr) akx_free(comm->ctx, comm->temp.ptr);
  free(comm->host);
  free(comm->records);
  if (comm->engine->destroy) comm->engine->destroy(comm);
  free(comm);
}

akx_status akx_comm_rank(const akx_comm *comm, int *rank, int *size) {
  if (!comm) return akx__dist_fail(AKX_ERROR_INVALID_ARGUMENT, "akx_comm_rank: comm is NULL");
  if (rank) *rank = comm->rank;
  if (size) *size = comm->size;
  return AKX_SUCCESS;
}

akx_status akx_comm_counters(const akx_comm *comm, akx_comm_counters_t *out) {
  if (!comm) return akx__dist_fail(AKX_ERROR_INVALID_ARGUMENT, "akx_comm_counters: comm is NULL");
  if (!out) return akx__dist_fail(AKX_ERROR_INVALID_ARGUMENT, "akx_comm_counters: out is NULL");
  *out = comm->counters;
  return AKX_SUCCESS;
}

akx_status akx_comm_counters_reset(akx_comm *comm) {
  if (!comm) return akx__dist_fail(AKX_ERROR_INVALID_ARGUMENT, "akx_comm_counters_reset: comm is NULL");
  memset(&comm->counters, 0, sizeof comm->counters);
  return AKX_SUCCESS;
}

/* ---- the partials' exchange ---------------------------------------------------------------- */
/* One buffer: this rank's slot first, then the size gathered slots, each rounded to 256 bytes
 * so that every slot is aligned for any accumulator. */
static size_t round256(size_t n) { return (n + 255) & ~(size_t)255; }

akx_status akx__dist_partials_local(akx_comm *c, size_t bytes, void **local) {
  const size_t slot = round256(bytes ? bytes : 1);
  akx_status s = akx__dist_grow(c, &c->partials, slot + (size_t)c->size * slot);
  if (s != AKX_SUCCESS) return s;
  *local = c->partials.ptr;
  return AKX_SUCCESS;
}

akx_status akx__dist_partials_exchange(akx_comm *c, const void *send, size_t bytes, void **all) {
  const size_t slot = round256(bytes ? bytes : 1);
  AKX_DIST_TRY(akx__dist_grow(c, &c->partials, slot + (size_t)c->size * slot));
  unsigned char *gathered = (unsigned char *)c->partials.ptr + slot;
  const double t0 = akx__dist_now();
  akx_status s;
  if (c->engine->device_partials) {
    /* Enqueued on the stream, read from where the partial is: no copy, no wait. */
    s = c->engine->allgather(c, send, gathered, bytes);
  } else {
    /* Through the host: the copy there waits for the partial (MPI reads host memory); the stream
     * is then idle, so the copy back waits for nothing but itself. */
    void *h = NULL;
    s = akx__dist_host(c, bytes * (size_t)(c->size + 1), &h);
    unsigned char *hsend = h, *hrecv = hsend ? hsend + bytes : NULL;
    if (s == AKX_SUCCESS && bytes)
      s = akx_memcpy(c->ctx, hsend, send, bytes, AKX_COPY_DEVICE_TO_HOST);
    if (s == AKX_SUCCESS) s = c->engine->allgather(c, hsend, hrecv, bytes);
    if (s == AKX_SUCCESS && bytes)
      s = akx_memcpy(c->ctx, gathered, hrecv, bytes * (size_t)c->size, AKX_COPY_HOST_TO_DEVICE);
  }
  c->counters.exchange_seconds += akx__dist_now() - t0;
  if (s != AKX_SUCCESS) return s;
  /* The gathered partials lie packed (rank r at r * bytes), as the combine's views expect. */
  *all = gathered;
  return AKX_SUCCESS;
}

akx_status akx__dist_exchange(void *comm, const void *local, size_t bytes, const void **all) {
  /* The piece's partial is sent from where libakx left it (its workspace): copying it into the
   * communicator's slot first would cost a synchronizing akx_memcpy. */
  void *gathered;
  AKX_DIST_TRY(akx__dist_partials_exchange(comm, local, bytes, &gathered));
  *all = gathered;
  return AKX_SUCCESS;
}
