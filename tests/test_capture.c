/* Calls on a stream that is capturing a CUDA graph, and workspaces shared between contexts
 * (include/akx.h, "Stream capture" and akx_context_set_workspace).
 *
 * The sim has no streams; akx__sim_set_capturing (src/core/backend.h) marks a sim context's
 * stream as capturing, and every decision the library takes on cudaStreamIsCapturing is taken
 * the same way on it (the sim's launches still run at once, so values can be checked):
 *  - an asynchronous call whose workspace is already large enough runs, and allocates nothing;
 *  - a call that would have to grow the cached workspace (allocate, synchronize, free) is
 *    refused with AKX_ERROR_UNSUPPORTED and a sentence saying how to size it first; nothing
 *    launched, nothing written, the workspace as it was;
 *  - a host result (akx_mapreduce with AKX_HOST), akx_findall (its count), akx_synchronize,
 *    akx_memcpy, akx_context_set_workspace and akx_context_set_stream are refused;
 *  - a cached workspace a capture used is not freed by a later growth (a graph may replay it),
 *    and a growth that fails (no memory) leaves the workspace as it was.
 * Then the caller-owned workspace of one live context cannot be handed to another. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akx.h"
#include "akx_layer.h"
#include "akx_sim.h"
#include "fixture.h"
#include "internal.h"
#include "backend.h" /* the backend's copy and synchronize: the sim's capture check */

#define POISON 0x5Au

static akx_context *open_sim(void) {
  akx_context *ctx = NULL;
  akx_status s = akx_context_create(&ctx, AKX_BACKEND_SIM, 0);
  cr_assert(s == AKX_SUCCESS && ctx, "akx_context_create(SIM): %s", akx_last_error());
  return ctx;
}

static void capture(akx_context *ctx, int on) {
  cr_assert_eq(akx__sim_set_capturing(ctx, on), AKX_SUCCESS, "%s", akx_last_error());
}

static akx_context_info_t info_of(const akx_context *ctx) {
  akx_context_info_t info;
  cr_assert_eq(akx_context_info(ctx, &info), AKX_SUCCESS, "%s", akx_last_error());
  return info;
}

static uint64_t launches(const akx_context *ctx) {
  akx_sim_kernel_counters total;
  memset(&total, 0, sizeof total);
  cr_assert_eq(akx_sim_counters_get(ctx, &total, NULL, 0, NULL), AKX_SUCCESS, "%s",
               akx_last_error());
  return total.launches;
}

/* A refusal: the status, and a sentence containing each of `says` (case-sensitive). */
static void expect_refused(akx_status s, akx_status want, const char *what,
                           const char *const *says) {
  const char *said = akx_last_error();
  cr_expect_eq(s, want, "%s: %s, expected %s (\"%s\")", what, akx_status_string(s),
               akx_status_string(want), said);
  for (; *says; ++says)
    cr_expect(strstr(said, *says) != NULL, "%s: the sentence lacks \"%s\": \"%s\"", what, *says,
              said);
}
#define EXPECT_REFUSED(s, want, what, ...) \
  expect_refused((s), (want), (what), (const char *const[]){__VA_ARGS__, NULL})

/* n float32 values 1, 2, ..., n mod 7 (small integers: every sum is exact) on the device. */
static float *upload_ramp(akx_context *ctx, int64_t n, float *host) {
  for (int64_t i = 0; i < n; i++) host[i] = (float)(i % 7 + 1);
  return tfx_upload(ctx, host, (size_t)n * sizeof(float));
}

static double sum_of(const float *v, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; i++) s += v[i];
  return s;
}

/* Scans of small tiles (32 elements each): the workspace grows with n (a flag and a node per
 * tile), past the cached buffer's first 4096 bytes from a few thousand elements on. */
static akx_scan_opts small_tiles(void) {
  akx_scan_opts o = akx_scan_opts_default();
  o.block_size = 32;
  o.items_per_thread = 1;
  return o;
}

static size_t scan_ws(akx_context *ctx, const akx_array *v) {
  size_t bytes = 0;
  const akx_scan_opts o = small_tiles();
  cr_assert_eq(akx_scan_workspace_size(ctx, v, v, AKX_OP_ADD, 0, &o, &bytes), AKX_SUCCESS, "%s",
               akx_last_error());
  return bytes;
}

static akx_status scan(akx_context *ctx, const akx_array *dst, const akx_array *src) {
  const akx_scan_opts o = small_tiles();
  return akx_scan(ctx, dst, src, AKX_OP_ADD, 0, &o);
}

static void expect_inclusive_sums(const float *host_src, const float *got, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; i++) {
    s += host_src[i];
    if ((double)got[i] != s) {
      cr_expect_fail("scan element %lld: %g, expected %g", (long long)i, (double)got[i], s);
      return;
    }
  }
}

/* The workspace a call on ctx gets now: akx_context_run hands it to its function. */
static akx_status take_ws(void *stream, void *ws, void *arg) {
  (void)stream;
  *(void **)arg = ws;
  return AKX_SUCCESS;
}
static void *workspace_now(akx_context *ctx, size_t bytes) {
  void *ws = NULL;
  cr_assert_eq(akx_context_run(ctx, bytes, take_ws, &ws), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert(ws != NULL);
  return ws;
}

/* ---- asynchronous calls on a workspace already large enough ---------------------------------- */

Test(capture, a_warm_workspace_serves_a_capture_without_allocating) {
  akx_context *ctx = open_sim();
  const int64_t n = 4096;
  float *host = tfx_xmalloc((size_t)n * sizeof(float));
  float *got = tfx_xmalloc((size_t)n * sizeof(float));
  float *src = upload_ramp(ctx, n, host);
  float *dst = tfx_alloc(ctx, (size_t)n * sizeof(float));
  float *res = tfx_alloc(ctx, sizeof(float));
  akx_array vs = akx_vector(src, AKX_FLOAT32, n), vd = akx_vector(dst, AKX_FLOAT32, n);

  /* warm-up: each call once outside the capture */
  cr_assert_eq(akx_mapreduce(ctx, &vs, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, res, AKX_DEVICE),
               AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(scan(ctx, &vd, &vs), AKX_SUCCESS, "%s", akx_last_error());
  const akx_context_info_t before = info_of(ctx);
  cr_assert_gt(before.workspace_allocations, 0);

  const float poison = -1.0f;
  tfx_to_device(ctx, res, &poison, sizeof poison);
  tfx_to_device(ctx, dst, host, (size_t)n * sizeof(float)); /* not yet the scan */
  capture(ctx, 1);
  cr_assert_eq(akx_mapreduce(ctx, &vs, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, res, AKX_DEVICE),
               AKX_SUCCESS, "mapreduce during capture: %s", akx_last_error());
  cr_assert_eq(scan(ctx, &vd, &vs), AKX_SUCCESS, "scan during capture: %s", akx_last_error());
  capture(ctx, 0);

  const akx_context_info_t after = info_of(ctx);
  cr_expect_eq(after.workspace_allocations, before.workspace_allocations,
               "a capture allocated a workspace");
  cr_expect_eq(after.workspace_bytes, before.workspace_bytes);
  float r = 0;
  tfx_to_host(ctx, &r, res, sizeof r);
  cr_expect_eq((double)r, sum_of(host, n), "mapreduce during capture: %g, expected %g", (double)r,
               sum_of(host, n));
  tfx_to_host(ctx, got, dst, (size_t)n * sizeof(float));
  expect_inclusive_sums(host, got, n);
  free(host);
  free(got);
  akx_context_destroy(ctx);
}

Test(capture, a_caller_workspace_large_enough_serves_a_capture) {
  akx_context *ctx = open_sim();
  const int64_t n = 8192;
  float *host = tfx_xmalloc((size_t)n * sizeof(float));
  float *got = tfx_xmalloc((size_t)n * sizeof(float));
  float *src = upload_ramp(ctx, n, host);
  float *dst = tfx_alloc(ctx, (size_t)n * sizeof(float));
  akx_array vs = akx_vector(src, AKX_FLOAT32, n), vd = akx_vector(dst, AKX_FLOAT32, n);
  const size_t need = scan_ws(ctx, &vs);
  void *ws = tfx_alloc(ctx, need);
  cr_assert_eq(akx_context_set_workspace(ctx, ws, need), AKX_SUCCESS, "%s", akx_last_error());

  capture(ctx, 1);
  cr_assert_eq(scan(ctx, &vd, &vs), AKX_SUCCESS, "scan during capture: %s", akx_last_error());
  capture(ctx, 0);
  cr_expect_eq(info_of(ctx).workspace_allocations, 0);
  tfx_to_host(ctx, got, dst, (size_t)n * sizeof(float));
  expect_inclusive_sums(host, got, n);
  cr_assert_eq(akx_context_set_workspace(ctx, NULL, 0), AKX_SUCCESS, "%s", akx_last_error());
  free(host);
  free(got);
  akx_context_destroy(ctx);
}

/* ---- refusals -------------------------------------------------------------------------------- */

Test(capture, growing_the_workspace_is_refused) {
  akx_context *ctx = open_sim();
  const int64_t small = 64, n = 32768; /* 1024 tiles: 8 KiB of flags and nodes */
  float *host = tfx_xmalloc((size_t)n * sizeof(float));
  float *src = upload_ramp(ctx, n, host);
  float *dst = tfx_alloc(ctx, (size_t)n * sizeof(float));
  akx_array vsmall = akx_vector(src, AKX_FLOAT32, small), dsmall = akx_vector(dst, AKX_FLOAT32, small);
  akx_array vs = akx_vector(src, AKX_FLOAT32, n), vd = akx_vector(dst, AKX_FLOAT32, n);

  /* no workspace yet */
  capture(ctx, 1);
  cr_assert_eq(akx_sim_counters_reset(ctx), AKX_SUCCESS);
  EXPECT_REFUSED(scan(ctx, &dsmall, &vsmall), AKX_ERROR_UNSUPPORTED, "scan, no workspace yet",
                 "capturing", "workspace", "akx_context_set_workspace");
  cr_expect_eq(launches(ctx), 0, "the refused call launched");
  capture(ctx, 0);
  cr_expect_eq(info_of(ctx).workspace_bytes, 0);
  cr_expect_eq(info_of(ctx).workspace_allocations, 0);

  /* a workspace too small for this call: the call grows it outside a capture only */
  cr_assert_eq(scan(ctx, &dsmall, &vsmall), AKX_SUCCESS, "%s", akx_last_error());
  const akx_context_info_t before = info_of(ctx);
  cr_assert_lt((size_t)before.workspace_bytes, scan_ws(ctx, &vs),
               "the test needs a call larger than the warm-up's workspace");
  unsigned char *marked = tfx_xmalloc((size_t)n * sizeof(float));
  memset(marked, POISON, (size_t)n * sizeof(float));
  tfx_to_device(ctx, dst, marked, (size_t)n * sizeof(float));
  capture(ctx, 1);
  cr_assert_eq(akx_sim_counters_reset(ctx), AKX_SUCCESS);
  char want[64];
  snprintf(want, sizeof want, "%zu", scan_ws(ctx, &vs));
  EXPECT_REFUSED(scan(ctx, &vd, &vs), AKX_ERROR_UNSUPPORTED, "scan, workspace too small",
                 "capturing", want, "_workspace_size");
  cr_expect_eq(launches(ctx), 0, "the refused call launched");
  /* akx_context_run grows the same workspace, through the same decision */
  EXPECT_REFUSED(akx_context_run(ctx, scan_ws(ctx, &vs), take_ws, &(void *){NULL}),
                 AKX_ERROR_UNSUPPORTED, "akx_context_run, workspace too small", "capturing");
  capture(ctx, 0);
  const akx_context_info_t after = info_of(ctx);
  cr_expect_eq(after.workspace_bytes, before.workspace_bytes, "the refusal changed the workspace");
  cr_expect_eq(after.workspace_allocations, before.workspace_allocations);
  unsigned char *now = tfx_xmalloc((size_t)n * sizeof(float));
  tfx_to_host(ctx, now, dst, (size_t)n * sizeof(float));
  cr_expect(memcmp(now, marked, (size_t)n * sizeof(float)) == 0, "the refused scan wrote dst");

  /* after the capture the same call grows the workspace and runs */
  cr_assert_eq(scan(ctx, &vd, &vs), AKX_SUCCESS, "%s", akx_last_error());
  cr_expect_eq(info_of(ctx).workspace_allocations, before.workspace_allocations + 1);
  free(host);
  free(marked);
  free(now);
  akx_context_destroy(ctx);
}

Test(capture, a_caller_workspace_too_small_is_still_its_own_status) {
  akx_context *ctx = open_sim();
  const int64_t n = 8192;
  float *host = tfx_xmalloc((size_t)n * sizeof(float));
  float *src = upload_ramp(ctx, n, host);
  float *dst = tfx_alloc(ctx, (size_t)n * sizeof(float));
  akx_array vs = akx_vector(src, AKX_FLOAT32, n), vd = akx_vector(dst, AKX_FLOAT32, n);
  void *ws = tfx_alloc(ctx, 256);
  cr_assert_eq(akx_context_set_workspace(ctx, ws, 256), AKX_SUCCESS, "%s", akx_last_error());
  capture(ctx, 1);
  EXPECT_REFUSED(scan(ctx, &vd, &vs), AKX_ERROR_WORKSPACE_TOO_SMALL, "scan, caller workspace",
                 "256");
  capture(ctx, 0);
  cr_assert_eq(akx_context_set_workspace(ctx, NULL, 0), AKX_SUCCESS, "%s", akx_last_error());
  free(host);
  akx_context_destroy(ctx);
}

Test(capture, a_host_result_is_refused) {
  akx_context *ctx = open_sim();
  const int64_t n = 1000;
  float *host = tfx_xmalloc((size_t)n * sizeof(float));
  float *src = upload_ramp(ctx, n, host);
  akx_array vs = akx_vector(src, AKX_FLOAT32, n);
  float r = 0;
  /* warm: the refusal is not about the workspace */
  cr_assert_eq(akx_mapreduce(ctx, &vs, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &r, AKX_HOST),
               AKX_SUCCESS, "%s", akx_last_error());
  const akx_context_info_t before = info_of(ctx);
  r = -1.0f;
  capture(ctx, 1);
  cr_assert_eq(akx_sim_counters_reset(ctx), AKX_SUCCESS);
  EXPECT_REFUSED(akx_mapreduce(ctx, &vs, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &r, AKX_HOST),
                 AKX_ERROR_UNSUPPORTED, "mapreduce AKX_HOST", "capturing", "AKX_HOST",
                 "AKX_DEVICE");
  cr_expect_eq(launches(ctx), 0, "the refused call launched");
  capture(ctx, 0);
  cr_expect_eq((double)r, -1.0, "the refused call wrote the result");
  cr_expect_eq(info_of(ctx).workspace_bytes, before.workspace_bytes);
  /* bad arguments are still named first */
  capture(ctx, 1);
  EXPECT_REFUSED(akx_mapreduce(ctx, &vs, AKX_MAP_IDENTITY, (akx_op)99, NULL, &r, AKX_HOST),
                 AKX_ERROR_INVALID_ARGUMENT, "bad op during capture", "op");
  capture(ctx, 0);
  free(host);
  akx_context_destroy(ctx);
}

Test(capture, findall_is_refused) {
  akx_context *ctx = open_sim();
  const int64_t n = 1000;
  float *host = tfx_xmalloc((size_t)n * sizeof(float));
  float *src = upload_ramp(ctx, n, host);
  int64_t *idx = tfx_alloc(ctx, (size_t)n * sizeof(int64_t));
  akx_array vs = akx_vector(src, AKX_FLOAT32, n), vi = akx_vector(idx, AKX_INT64, n);
  int64_t count = 0;
  cr_assert_eq(akx_findall(ctx, &vs, &vi, &count), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(count, n);
  unsigned char *marked = tfx_xmalloc((size_t)n * sizeof(int64_t));
  memset(marked, POISON, (size_t)n * sizeof(int64_t));
  tfx_to_device(ctx, idx, marked, (size_t)n * sizeof(int64_t));
  count = -7;
  capture(ctx, 1);
  cr_assert_eq(akx_sim_counters_reset(ctx), AKX_SUCCESS);
  EXPECT_REFUSED(akx_findall(ctx, &vs, &vi, &count), AKX_ERROR_UNSUPPORTED, "findall",
                 "capturing", "akx_findall");
  cr_expect_eq(launches(ctx), 0, "the refused call launched");
  capture(ctx, 0);
  cr_expect_eq(count, -7, "the refused call wrote *count");
  unsigned char *now = tfx_xmalloc((size_t)n * sizeof(int64_t));
  tfx_to_host(ctx, now, idx, (size_t)n * sizeof(int64_t));
  cr_expect(memcmp(now, marked, (size_t)n * sizeof(int64_t)) == 0,
            "the refused findall wrote indices");
  free(host);
  free(marked);
  free(now);
  akx_context_destroy(ctx);
}

/* The counts of akx_findall_where, akx_reduce_by_key_where and akx_select_flagged in device
 * memory (AKX_DEVICE): captured once warm, with no host synchronization (the sim's capture check
 * refuses a copy to the host and a synchronization while the stream captures, as CUDA does), the
 * positions, runs, items and totals right once the capture ends; AKX_HOST is refused inside the
 * capture, nothing launched or written. */
Test(capture, device_counts_are_captured) {
  akx_context *ctx = open_sim();
  const int64_t n = 5000;
  int32_t *hk = tfx_xmalloc((size_t)n * sizeof(int32_t));
  float *hv = tfx_xmalloc((size_t)n * sizeof(float));
  int64_t want_nz = 0, want_runs = 0;
  for (int64_t i = 0; i < n; ++i) {
    hk[i] = (int32_t)(i / 7 % 3);           /* runs of 7 */
    hv[i] = (float)(i % 5 == 0 ? 0 : i % 4); /* zeros at i % 5 == 0 and i % 4 == 0 */
    want_nz += hv[i] != 0;
    want_runs += i == 0 || hk[i] != hk[i - 1];
  }
  int32_t *keys = tfx_upload(ctx, hk, (size_t)n * sizeof(int32_t));
  float *vals = tfx_upload(ctx, hv, (size_t)n * sizeof(float));
  int64_t *idx = tfx_alloc(ctx, (size_t)n * sizeof(int64_t));
  int32_t *kout = tfx_alloc(ctx, (size_t)n * sizeof(int32_t));
  float *vout = tfx_alloc(ctx, (size_t)n * sizeof(float));
  int64_t *counts = tfx_alloc(ctx, 3 * sizeof(int64_t));
  int32_t *sel = tfx_alloc(ctx, (size_t)n * sizeof(int32_t));
  akx_array vk = akx_vector(keys, AKX_INT32, n), vv = akx_vector(vals, AKX_FLOAT32, n);
  akx_array vi = akx_vector(idx, AKX_INT64, n), vko = akx_vector(kout, AKX_INT32, n),
            vvo = akx_vector(vout, AKX_FLOAT32, n), vsel = akx_vector(sel, AKX_INT32, n);
  /* warm-up outside the capture */
  cr_assert_eq(akx_select_flagged(ctx, &vsel, &vk, &vv, counts + 2, AKX_DEVICE), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(akx_findall_where(ctx, &vv, &vi, counts, AKX_DEVICE), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(akx_reduce_by_key_where(ctx, &vko, &vvo, &vk, &vv, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, counts + 1,
                                       AKX_DEVICE),
               AKX_SUCCESS, "%s", akx_last_error());
  const int64_t poison[3] = {-9, -9, -9};
  tfx_to_device(ctx, counts, poison, sizeof poison);
  const akx_context_info_t before = info_of(ctx);
  capture(ctx, 1);
  cr_assert_eq(akx_findall_where(ctx, &vv, &vi, counts, AKX_DEVICE), AKX_SUCCESS, "findall_where in a capture: %s",
               akx_last_error());
  cr_assert_eq(akx_reduce_by_key_where(ctx, &vko, &vvo, &vk, &vv, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, counts + 1,
                                       AKX_DEVICE),
               AKX_SUCCESS, "reduce_by_key_where in a capture: %s", akx_last_error());
  cr_assert_eq(akx_select_flagged(ctx, &vsel, &vk, &vv, counts + 2, AKX_DEVICE), AKX_SUCCESS,
               "select_flagged in a capture: %s", akx_last_error());
  int64_t host_count = -4;
  cr_assert_eq(akx_sim_counters_reset(ctx), AKX_SUCCESS);
  EXPECT_REFUSED(akx_findall_where(ctx, &vv, &vi, &host_count, AKX_HOST), AKX_ERROR_UNSUPPORTED, "findall_where HOST",
                 "capturing", "akx_findall_where", "AKX_DEVICE");
  EXPECT_REFUSED(akx_reduce_by_key_where(ctx, &vko, &vvo, &vk, &vv, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &host_count,
                                         AKX_HOST),
                 AKX_ERROR_UNSUPPORTED, "reduce_by_key_where HOST", "capturing", "akx_reduce_by_key_where");
  EXPECT_REFUSED(akx_select_flagged(ctx, &vsel, &vk, &vv, &host_count, AKX_HOST), AKX_ERROR_UNSUPPORTED,
                 "select_flagged HOST", "capturing", "akx_select_flagged");
  cr_expect_eq(launches(ctx), 0, "a refused call launched");
  capture(ctx, 0);
  cr_expect_eq(host_count, -4, "a refused call wrote the host count");
  const akx_context_info_t after = info_of(ctx);
  cr_expect_eq(after.workspace_allocations, before.workspace_allocations, "a capture allocated a workspace");
  int64_t got[3];
  tfx_to_host(ctx, got, counts, sizeof got);
  cr_expect_eq(got[0], want_nz, "findall's count on the device: %lld, expected %lld", (long long)got[0],
               (long long)want_nz);
  cr_expect_eq(got[1], want_runs, "reduce_by_key's runs on the device: %lld, expected %lld", (long long)got[1],
               (long long)want_runs);
  cr_expect_eq(got[2], want_nz, "select_flagged's count on the device: %lld, expected %lld", (long long)got[2],
               (long long)want_nz);
  int32_t *hs = tfx_xmalloc((size_t)n * sizeof(int32_t));
  tfx_to_host(ctx, hs, sel, (size_t)n * sizeof(int32_t));
  for (int64_t i = 0, k = 0; i < n; ++i)
    if (hv[i] != 0) {
      if (hs[k] != hk[i]) {
        cr_expect_fail("select_flagged's dst[%lld] = %d, expected %d", (long long)k, hs[k], hk[i]);
        break;
      }
      ++k;
    }
  free(hs);
  int64_t *hi = tfx_xmalloc((size_t)n * sizeof(int64_t));
  tfx_to_host(ctx, hi, idx, (size_t)n * sizeof(int64_t));
  for (int64_t i = 0, k = 0; i < n; ++i)
    if (hv[i] != 0) {
      if (hi[k] != i) {
        cr_expect_fail("indices[%lld] = %lld, expected %lld", (long long)k, (long long)hi[k], (long long)i);
        break;
      }
      ++k;
    }
  free(hi);
  free(hk);
  free(hv);
  akx_context_destroy(ctx);
}

/* The sim's capture check itself: while the stream captures, the backend refuses a copy to or
 * from the host and a synchronization (what CUDA would refuse, invalidating the capture) and
 * takes a device-to-device copy (enqueued). */
Test(capture, the_sims_capture_check_refuses_waits) {
  akx_context *ctx = open_sim();
  int64_t *d = tfx_alloc(ctx, 2 * sizeof(int64_t));
  int64_t h = 5;
  capture(ctx, 1);
  EXPECT_REFUSED(ctx->be->memcpy(ctx, &h, d, sizeof h, AKX_COPY_DEVICE_TO_HOST), AKX_ERROR_UNSUPPORTED,
                 "a copy to the host", "capture check", "to the host");
  EXPECT_REFUSED(ctx->be->memcpy(ctx, d, &h, sizeof h, AKX_COPY_HOST_TO_DEVICE), AKX_ERROR_UNSUPPORTED,
                 "a copy from the host", "capture check", "from the host");
  EXPECT_REFUSED(ctx->be->synchronize(ctx), AKX_ERROR_UNSUPPORTED, "a synchronization", "capture check",
                 "synchronization");
  cr_expect_eq(ctx->be->memcpy(ctx, d + 1, d, sizeof h, AKX_COPY_DEVICE_TO_DEVICE), AKX_SUCCESS, "%s",
               akx_last_error());
  capture(ctx, 0);
  cr_expect_eq(h, 5, "a refused copy wrote the host");
  cr_expect_eq(ctx->be->synchronize(ctx), AKX_SUCCESS, "%s", akx_last_error());
  akx_context_destroy(ctx);
}

Test(capture, synchronizing_and_copying_are_refused) {
  akx_context *ctx = open_sim();
  float *d = tfx_alloc(ctx, 1024);
  float h[4] = {1, 2, 3, 4}, back[4] = {-1, -1, -1, -1};
  tfx_to_device(ctx, d, h, sizeof h);
  void *ws = tfx_alloc(ctx, 4096);
  capture(ctx, 1);
  EXPECT_REFUSED(akx_synchronize(ctx), AKX_ERROR_UNSUPPORTED, "akx_synchronize", "capturing",
                 "akx_synchronize");
  EXPECT_REFUSED(akx_memcpy(ctx, back, d, sizeof back, AKX_COPY_DEVICE_TO_HOST),
                 AKX_ERROR_UNSUPPORTED, "akx_memcpy", "capturing", "akx_memcpy");
  EXPECT_REFUSED(akx_context_set_workspace(ctx, ws, 4096), AKX_ERROR_UNSUPPORTED,
                 "akx_context_set_workspace", "capturing", "akx_context_set_workspace");
  EXPECT_REFUSED(akx_context_set_stream(ctx, NULL), AKX_ERROR_UNSUPPORTED,
                 "akx_context_set_stream", "capturing", "akx_context_set_stream");
  capture(ctx, 0);
  for (int i = 0; i < 4; i++) cr_expect_eq(back[i], -1.0f, "the refused copy wrote back[%d]", i);
  cr_expect_eq(info_of(ctx).workspace_bytes, 0, "the refused set_workspace took the buffer");
  cr_expect_eq(akx_synchronize(ctx), AKX_SUCCESS, "%s", akx_last_error());
  akx_context_destroy(ctx);
}

/* ---- a workspace a graph may still use ------------------------------------------------------- */

/* The cached workspace after a call of ws0 bytes (captured or not), then a call that needs
 * more: is the first buffer still device memory of the context? */
static int first_buffer_survives_growth(int captured) {
  akx_context *ctx = open_sim();
  void *first = workspace_now(ctx, 64);
  const size_t first_bytes = (size_t)info_of(ctx).workspace_bytes;
  if (captured) capture(ctx, 1);
  cr_assert_eq(workspace_now(ctx, 64), first, "the capture did not get the warm workspace");
  if (captured) capture(ctx, 0);
  void *second = workspace_now(ctx, first_bytes * 4);
  cr_assert_neq(second, first, "the workspace did not grow");
  cr_assert_eq(info_of(ctx).workspace_allocations, 2);
  unsigned char probe[16];
  const akx_status s = akx_memcpy(ctx, probe, first, sizeof probe, AKX_COPY_DEVICE_TO_HOST);
  cr_log_info("captured %d: akx_memcpy from the first workspace: %s (%s)", captured,
              akx_status_string(s), s ? akx_last_error() : "");
  /* the context takes a caller workspace and comes back: a retired buffer stays too */
  if (captured) {
    void *own = tfx_alloc(ctx, 4096);
    cr_assert_eq(akx_context_set_workspace(ctx, own, 4096), AKX_SUCCESS, "%s", akx_last_error());
    cr_assert_eq(akx_context_set_workspace(ctx, NULL, 0), AKX_SUCCESS, "%s", akx_last_error());
    cr_expect_eq(akx_memcpy(ctx, probe, first, sizeof probe, AKX_COPY_DEVICE_TO_HOST),
                 AKX_SUCCESS, "set_workspace freed a workspace a capture used: %s",
                 akx_last_error());
  }
  akx_context_destroy(ctx);
  return s == AKX_SUCCESS;
}

Test(capture, a_workspace_used_by_a_capture_outlives_a_growth) {
  cr_expect(first_buffer_survives_growth(1),
            "a growth after a capture freed the workspace the captured graph writes");
}

/* The control: without a capture the old buffer is freed at the growth (so the check above
 * can tell the two apart). */
Test(capture, a_workspace_no_capture_used_is_freed_at_a_growth) {
  cr_expect(!first_buffer_survives_growth(0), "the old workspace was kept without a capture");
}

/* A failed growth (the allocation of the larger buffer fails) leaves the old workspace.
 * SIZE_MAX bytes: refused by the sim's allocator before any host allocation (as the bad-input
 * row malloc_huge), so the test runs under AddressSanitizer too. */
Test(capture, a_failed_growth_keeps_the_workspace) {
  akx_context *ctx = open_sim();
  void *first = workspace_now(ctx, 64);
  const akx_context_info_t before = info_of(ctx);
  void *ws = NULL;
  akx_status s = akx_context_run(ctx, SIZE_MAX, take_ws, &ws);
  cr_expect_eq(s, AKX_ERROR_OUT_OF_MEMORY, "%s: %s", akx_status_string(s), akx_last_error());
  const akx_context_info_t after = info_of(ctx);
  cr_expect_eq(after.workspace_bytes, before.workspace_bytes, "the failed growth dropped the workspace");
  cr_expect_eq(after.workspace_allocations, before.workspace_allocations);
  cr_expect_eq(workspace_now(ctx, 64), first, "the workspace moved");
  akx_context_destroy(ctx);
}

/* ---- one caller workspace, two contexts ------------------------------------------------------ */

Test(capture, a_caller_workspace_serves_one_context_at_a_time) {
  akx_context *a = open_sim(), *b = open_sim();
  unsigned char *buf = tfx_alloc(a, 8192);
  cr_assert_eq(akx_context_set_workspace(a, buf, 8192), AKX_SUCCESS, "%s", akx_last_error());
  cr_expect_eq(akx__workspace_holder(buf, 8192), a);

  char range[64];
  snprintf(range, sizeof range, "%p", (void *)buf);
  EXPECT_REFUSED(akx_context_set_workspace(b, buf, 8192), AKX_ERROR_INVALID_ARGUMENT,
                 "the same buffer", "ptr", range, "another context");
  EXPECT_REFUSED(akx_context_set_workspace(b, buf + 4096, 4096), AKX_ERROR_INVALID_ARGUMENT,
                 "its second half", "ptr", range, "another context");
  cr_expect_eq(info_of(b).workspace_bytes, 0, "the refused context took the buffer");
  cr_expect_eq(akx__workspace_holder(buf + 4096, 256), a);
  cr_expect_eq(akx__workspace_holder(buf + 8192, 256), NULL, "past the end is not held");

  /* the context that holds it may hand itself a part of it again */
  cr_expect_eq(akx_context_set_workspace(a, buf, 4096), AKX_SUCCESS, "%s", akx_last_error());
  cr_expect_eq(akx__workspace_holder(buf + 4096, 256), NULL, "the part a gave up is still held");

  /* given back: nobody holds it */
  cr_assert_eq(akx_context_set_workspace(a, NULL, 0), AKX_SUCCESS, "%s", akx_last_error());
  cr_expect_eq(akx__workspace_holder(buf, 8192), NULL);
  akx_status s = akx_context_set_workspace(b, buf, 8192);
  cr_expect(s == AKX_ERROR_INVALID_ARGUMENT && strstr(akx_last_error(), "another context") == NULL,
            "after a gave it back, b is refused for another reason (not its memory on the sim): "
            "%s \"%s\"", akx_status_string(s), akx_last_error());

  /* destroyed: nobody holds it */
  cr_assert_eq(akx_context_set_workspace(a, buf, 8192), AKX_SUCCESS, "%s", akx_last_error());
  cr_expect_eq(akx__workspace_holder(buf, 8192), a);
  akx_context_destroy(a);
  cr_expect_eq(akx__workspace_holder(buf, 8192), NULL, "a destroyed context still holds its range");
  akx_context_destroy(b);
}

/* b's own buffer, next to nothing a holds: accepted (only overlaps are refused). */
Test(capture, disjoint_caller_workspaces_are_accepted) {
  akx_context *a = open_sim(), *b = open_sim();
  void *wa = tfx_alloc(a, 4096), *wb = tfx_alloc(b, 4096);
  cr_assert_eq(akx_context_set_workspace(a, wa, 4096), AKX_SUCCESS, "%s", akx_last_error());
  cr_expect_eq(akx_context_set_workspace(b, wb, 4096), AKX_SUCCESS, "%s", akx_last_error());
  cr_expect_eq(akx__workspace_holder(wa, 4096), a);
  cr_expect_eq(akx__workspace_holder(wb, 4096), b);
  akx_context_destroy(b);
  akx_context_destroy(a);
}

/* A kernel compiled at run time is compiled (and on CUDA loaded into the context) at its first
 * use: neither is something a capture can hold, so a call whose kernels are not loaded yet is
 * refused while the stream captures, with a sentence saying to make the call once before
 * capturing; after such a call outside the capture, the same call inside it runs. A user op's
 * kernels are always compiled at run time. */
Test(capture, a_first_use_of_a_run_time_kernel_is_refused) {
  akx_context *ctx = open_sim();
  const akx_user_op_desc d = {"AKX_HD double add2(double a, double b) { return a + b; }\n"
                              "AKX_HD double zero2() { return 0.0; }\n",
                              "double", "add2", "zero2", NULL, NULL};
  const akx_op op = tfx_user_op(ctx, &d);
  const int64_t n = 5000;
  double *h = malloc(n * sizeof *h), *got = malloc(n * sizeof *got);
  for (int64_t i = 0; i < n; i++) h[i] = (double)(i % 9) - 4.0;
  double *src = tfx_upload(ctx, h, n * sizeof *h), *dst = tfx_alloc(ctx, n * sizeof *h);
  const akx_array sv = akx_vector(src, AKX_FLOAT64, n), dv = akx_vector(dst, AKX_FLOAT64, n);
  /* The workspace sized by a built-in scan first, so that only the kernels are missing. */
  cr_assert_eq(akx_scan(ctx, &dv, &sv, AKX_OP_ADD, 0, NULL), AKX_SUCCESS, "%s", akx_last_error());
  tfx_to_host(ctx, got, dst, n * sizeof *got);
  const uint64_t before = launches(ctx);
  capture(ctx, 1);
  cr_assert_eq(akx_scan(ctx, &dv, &sv, op, 0, NULL), AKX_ERROR_UNSUPPORTED, "%s", akx_last_error());
  cr_expect(strstr(akx_last_error(), "capturing") != NULL, "%s", akx_last_error());
  cr_expect(strstr(akx_last_error(), "once before capturing") != NULL, "%s", akx_last_error());
  cr_expect_eq(launches(ctx), before, "nothing launched");
  capture(ctx, 0);
  cr_assert_eq(akx_scan(ctx, &dv, &sv, op, 0, NULL), AKX_SUCCESS, "%s", akx_last_error());
  capture(ctx, 1);
  cr_assert_eq(akx_scan(ctx, &dv, &sv, op, 0, NULL), AKX_SUCCESS, "the kernels are loaded now: %s",
               akx_last_error());
  capture(ctx, 0);
  tfx_to_host(ctx, got, dst, n * sizeof *got);
  double run = 0;
  for (int64_t i = 0; i < n; i++) {
    run += (double)(i % 9) - 4.0;
    cr_assert_eq(got[i], run, "element %lld", (long long)i);
  }
  tfx_free(ctx, dst);
  tfx_free(ctx, src);
  free(h);
  free(got);
  akx_context_destroy(ctx);
}
