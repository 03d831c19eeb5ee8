/* The whole-array reduction seen through the sim's counters (docs/reduce_whole.md): on the
 * vectorized path every global request touches the ideal number of sectors, a call is one
 * launch (its last block finishes), and the bytes read are the input plus the partials. Counters are
 * deterministic, so these are exact assertions. */
#include <criterion/criterion.h>
#include <string.h>
#include "akx.h"
#include "akx_sim.h"

static akx_context *open_sim(void) {
  akx_context *ctx = NULL;
  akx_status s = akx_context_create(&ctx, AKX_BACKEND_SIM, 0);
  cr_assert_eq(s, AKX_SUCCESS, "akx_context_create: %s", akx_last_error());
  return ctx;
}

static const akx_sim_kernel_counters *find(const akx_sim_kernel_counters *k, int32_t n, const char *name) {
  for (int32_t i = 0; i < n; ++i)
    if (!strcmp(k[i].kernel, name)) return &k[i];
  return NULL;
}

/* Sums n float32 on the sim with the given tuning; returns the per-kernel counters. */
static int32_t run_sum(akx_context *ctx, int64_t n, int64_t offset, const akx_reduce_opts *o,
                       akx_sim_kernel_counters *total, akx_sim_kernel_counters *k) {
  float *host = malloc((size_t)(n + offset) * sizeof(float));
  for (int64_t i = 0; i < n + offset; ++i) host[i] = (float)(i % 7) - 3.0f;
  void *dev = NULL;
  cr_assert_eq(akx_malloc(ctx, &dev, (size_t)(n + offset) * sizeof(float)), AKX_SUCCESS);
  cr_assert_eq(akx_memcpy(ctx, dev, host, (size_t)(n + offset) * sizeof(float), AKX_COPY_HOST_TO_DEVICE), AKX_SUCCESS);
  akx_array a = akx_vector((float *)dev + offset, AKX_FLOAT32, n);
  /* The workspace is allocated (and zeroed) before counting starts: its first touch is no
   * kernel's. */
  float r = 0;
  cr_assert_eq(akx_mapreduce(ctx, &a, AKX_MAP_IDENTITY, AKX_OP_ADD, o, &r, AKX_HOST), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(akx_sim_counters_reset(ctx), AKX_SUCCESS);
  cr_assert_eq(akx_mapreduce(ctx, &a, AKX_MAP_IDENTITY, AKX_OP_ADD, o, &r, AKX_HOST), AKX_SUCCESS, "%s", akx_last_error());
  double ref = 0;
  for (int64_t i = offset; i < n + offset; ++i) ref += host[i];
  cr_assert_float_eq(r, ref, 1e-3 * (1 + n), "sum of %lld: got %f, expected %f", (long long)n, r, ref);
  int32_t count = 0;
  cr_assert_eq(akx_sim_counters_get(ctx, total, k, 8, &count), AKX_SUCCESS);
  free(host);
  akx_free(ctx, dev);
  return count;
}

Test(reduce_whole_counters, vectorized_first_pass_is_ideal_and_one_launch) {
  akx_context *ctx = open_sim();
  akx_context_info_t info;
  akx_context_info(ctx, &info);
  akx_sim_kernel_counters total, k[8];
  const int64_t n = 1000000;
  const int32_t count = run_sum(ctx, n, 0, NULL, &total, k);
  cr_assert_eq(total.launches, 1, "a whole-array reduction takes one launch, took %llu",
               (unsigned long long)total.launches);
  const akx_sim_kernel_counters *first = find(k, count, "reduce_whole_contiguous");
  cr_assert(first && count == 1, "expected the contiguous first pass alone");
  cr_assert_eq(first->launches, 1);
  /* 16-byte vectors, lanes consecutive: a warp request is 512 bytes = 16 sectors, ideal. */
  cr_assert_eq(first->global_load.units, first->global_load.ideal,
               "first pass: %llu sectors for an ideal of %llu",
               (unsigned long long)first->global_load.units, (unsigned long long)first->global_load.ideal);
  const uint64_t blocks = first->blocks;
  cr_assert_eq(total.global_load.bytes, (uint64_t)n * 4 + blocks * 4,
               "bytes read = input once + the partials (by the last block), got %llu",
               (unsigned long long)total.global_load.bytes);
  /* The sim counts an atomic as a store of its word: each block's ticket, and the last
   * block's putting it back. */
  cr_assert_eq(first->global_store.bytes, blocks * 4 + 4 + (blocks + 1) * 8,
               "one partial per block, one bare result, 8-byte tickets: %llu bytes for %llu blocks",
               (unsigned long long)first->global_store.bytes, (unsigned long long)blocks);
  cr_assert_leq(blocks, 528, "at most target_blocks blocks (h200 row: 528)");
  akx_context_destroy(ctx);
}

Test(reduce_whole_counters, one_launch_from_one_block_to_two) {
  akx_context *ctx = open_sim();
  akx_sim_kernel_counters total, k[8];
  akx_reduce_opts o = akx_reduce_opts_default();
  o.block_size = 256;
  o.items_per_thread = 16; /* a tile of 4096 float32 */
  run_sum(ctx, 4096, 0, &o, &total, k);
  cr_assert_eq(total.launches, 1, "one tile, one launch; took %llu", (unsigned long long)total.launches);
  run_sum(ctx, 4097, 0, &o, &total, k);
  cr_assert_eq(total.launches, 1, "one tile + 1 element (two blocks), one launch; took %llu",
               (unsigned long long)total.launches);
  akx_context_destroy(ctx);
}

Test(reduce_whole_counters, offset_view_adds_only_scalar_head_and_tail) {
  akx_context *ctx = open_sim();
  akx_sim_kernel_counters total, k[8];
  const int64_t n = 100000;
  const int32_t count = run_sum(ctx, n, 1, NULL, &total, k);
  const akx_sim_kernel_counters *first = find(k, count, "reduce_whole_contiguous");
  cr_assert(first, "a view 1 element past a 16-byte boundary still takes the vectorized path");
  /* The input once, and the partials read by the last block. */
  cr_assert_eq(first->global_load.bytes, (uint64_t)n * 4 + first->blocks * 4);
  /* The head (3 elements) and tail (1 element) are one scalar request each; every vector
   * request (and the partials' reads) stays ideal, so the excess over ideal is at most those
   * two requests' sectors. */
  cr_assert_leq(first->global_load.units, first->global_load.ideal + 2,
                "%llu sectors for an ideal of %llu", (unsigned long long)first->global_load.units,
                (unsigned long long)first->global_load.ideal);
  akx_context_destroy(ctx);
}
