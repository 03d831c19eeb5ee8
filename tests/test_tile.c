/* The tile layer's count-back (src/tile/tile.c, akx__tile_count_back): the count the last tile
 * of a findall stored in the look-back header, read at the header's named offset
 * (src/tile/lookback_header.cpp), to the host and to device memory. The header lies at the
 * start of the caller's workspace buffer (src/core/workspace_regions.h), so a findall on a
 * buffer the test set leaves its count where the test can hand the header to the count-back. */
#include <criterion/criterion.h>
#include <string.h>

#include "internal.h"
#include "backend.h"
#include "tile/tile.h"
#include "fixture.h"

static akx_context *ctx;
static void setup(void) { ctx = tfx_open(); }
static void teardown(void) { tfx_close(ctx); }
TestSuite(tile, .init = setup, .fini = teardown, .timeout = 300);

/* A findall of n uint8 elements, every third one nonzero (n / 3 rounded up of them), on a
 * workspace the test set: the header's start. */
static void *findall_on_own_workspace(int64_t n, int64_t *total) {
  unsigned char *host = tfx_xmalloc((size_t)n);
  for (int64_t i = 0; i < n; ++i) host[i] = i % 3 == 0 ? (unsigned char)(1 + i % 250) : 0;
  void *dsrc = tfx_upload(ctx, host, (size_t)n);
  int64_t *didx = tfx_alloc(ctx, (size_t)n * 8);
  const akx_array src = akx_vector(dsrc, AKX_UINT8, n), idx = akx_vector(didx, AKX_INT64, n);
  size_t ws = 0;
  cr_assert_eq(akx_findall_workspace_size(ctx, &src, &idx, &ws), AKX_SUCCESS, "%s", akx_last_error());
  void *buf = tfx_alloc(ctx, ws);
  cr_assert_eq(akx_context_set_workspace(ctx, buf, ws), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(akx_findall(ctx, &src, &idx, total), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(*total, (n + 2) / 3);
  free(host);
  return buf;
}

Test(tile, count_back_to_host_reads_the_count_the_last_tile_stored) {
  const int64_t sizes[] = {1, 1000, 100003};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
    int64_t total = -1, back = -1;
    void *header = findall_on_own_workspace(sizes[i], &total);
    cr_assert_eq(akx__tile_count_back(ctx, header, &back, 1, AKX_HOST), AKX_SUCCESS, "%s", akx_last_error());
    cr_expect_eq(back, total, "n = %lld: the count-back read %lld, findall's count is %lld",
                 (long long)sizes[i], (long long)back, (long long)total);
    cr_assert_eq(akx_context_set_workspace(ctx, NULL, 0), AKX_SUCCESS, "%s", akx_last_error());
    tfx_free(ctx, header);
  }
}

Test(tile, count_back_to_device_memory_writes_the_count_there) {
  int64_t total = -1, back = -1;
  void *header = findall_on_own_workspace(50000, &total);
  int64_t *dcount = tfx_alloc(ctx, 8);
  const int64_t poison = -7;
  tfx_to_device(ctx, dcount, &poison, 8);
  cr_assert_eq(akx__tile_count_back(ctx, header, dcount, 1, AKX_DEVICE), AKX_SUCCESS, "%s", akx_last_error());
  tfx_to_host(ctx, &back, dcount, 8); /* waits for the stream: the copy was enqueued on it */
  cr_expect_eq(back, total, "the device copy holds %lld, findall's count is %lld", (long long)back,
               (long long)total);
}

/* What AKX_DEVICE is for: a call that stays asynchronous may run inside a graph capture. The
 * sim marks its stream capturing (akx__sim_set_capturing) as CUDA's cudaStreamBeginCapture does;
 * the count-back must neither refuse nor wait. */
Test(tile, count_back_to_device_memory_runs_while_the_stream_captures) {
  if (!tfx_is_sim(ctx)) cr_skip_test("the sim marks a stream capturing; on CUDA, tests/test_capture*");
  int64_t total = -1, back = -1;
  void *header = findall_on_own_workspace(4096, &total);
  int64_t *dcount = tfx_alloc(ctx, 8);
  cr_assert_eq(akx__sim_set_capturing(ctx, 1), AKX_SUCCESS, "%s", akx_last_error());
  const akx_status st = akx__tile_count_back(ctx, header, dcount, 1, AKX_DEVICE);
  cr_assert_eq(akx__sim_set_capturing(ctx, 0), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(st, AKX_SUCCESS, "%s", akx_last_error());
  tfx_to_host(ctx, &back, dcount, 8);
  cr_expect_eq(back, total);
}

Test(tile, count_back_refuses_a_where_that_is_neither) {
  int64_t total = -1, back = -3;
  void *header = findall_on_own_workspace(100, &total);
  cr_assert_eq(akx__tile_count_back(ctx, header, &back, 1, (akx_where)7), AKX_ERROR_INVALID_ARGUMENT);
  cr_expect(strstr(akx_last_error(), "where is 7") != NULL, "%s", akx_last_error());
  cr_expect_eq(back, -3, "a refused count-back wrote %lld", (long long)back);
}

/* Two counts (a three-way partition's sides: kernels/akx/select_tile.cuh stores them in count
 * and second_count): one copy takes both, to the host and to device memory; a third is refused. */
Test(tile, count_back_takes_two_counts_side_by_side) {
  char *header = tfx_alloc(ctx, 64);
  const int64_t planted[2] = {123456789012LL, -5};
  tfx_to_device(ctx, header + akx__lookback_count_offset, planted, sizeof planted);
  int64_t back[3] = {-1, -1, -1};
  cr_assert_eq(akx__tile_count_back(ctx, header, back, 2, AKX_HOST), AKX_SUCCESS, "%s", akx_last_error());
  cr_expect(back[0] == planted[0] && back[1] == planted[1] && back[2] == -1, "read %lld %lld %lld",
            (long long)back[0], (long long)back[1], (long long)back[2]);
  int64_t *dcounts = tfx_alloc(ctx, 16);
  cr_assert_eq(akx__tile_count_back(ctx, header, dcounts, 2, AKX_DEVICE), AKX_SUCCESS, "%s", akx_last_error());
  int64_t dback[2] = {0, 0};
  tfx_to_host(ctx, dback, dcounts, 16);
  cr_expect(dback[0] == planted[0] && dback[1] == planted[1]);
  int64_t untouched = -3;
  cr_assert_eq(akx__tile_count_back(ctx, header, &untouched, 3, AKX_HOST), AKX_ERROR_INVALID_ARGUMENT);
  cr_expect(strstr(akx_last_error(), "ncounts is 3") != NULL, "%s", akx_last_error());
  cr_expect_eq(untouched, -3);
}
