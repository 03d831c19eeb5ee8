/* The scan planner's thresholds (src/scan/scan.c, scan_prepare), a case on each side of each
 * boundary: the columns shape's chunking of the scanned dim (chunks of at least 64 elements;
 * enough chunks that columns x chunks threads fill the device, target_blocks blocks per SM; none
 * once the columns alone do) and the tile count of the tile scans (whole-array, slices) and of
 * findall. The boundaries follow from the device the context reports (akx_context_info) and the
 * tuning table; the comments give the default sim profile's arithmetic (h200: 132 SMs; columns
 * kernel: 256 threads, 8 blocks per SM, so 132 x 8 x 256 = 270336 threads fill it). The plan is
 * observed from outside: the workspace query (chunks x columns partials; a look-back status of
 * `tiles` nodes), and on the sim the launches' counters (grid size; the carry pass). Where the
 * case is cheap on the sim the values are checked against the host reference too. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "akx_sim.h"
#include "scan/scan_plan.h"
#include "scan_check.h"
#include "tuning.h"

static akx_context *ctx;
static void setup(void) { ctx = tfx_open(); }
static void teardown(void) { tfx_close(ctx); }
TestSuite(scan_shapes, .init = setup, .fini = teardown, .timeout = 280);

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t lmin(int64_t a, int64_t b) { return a < b ? a : b; }

static akx_context_info_t info_of(void) {
  akx_context_info_t info;
  cr_assert_eq(akx_context_info(ctx, &info), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_gt(info.sm_count, 0);
  return info;
}

/* A row-major {rows, cols} parent viewed whole. */
static tfx_layout dense2(int64_t rows, int64_t cols) {
  const int64_t pshape[2] = {rows, cols}, start[2] = {0, 0}, step[2] = {1, 1};
  return tfx_layout_sub(2, pshape, start, pshape, step);
}

/* The views of L over no memory (a size query reads shapes and dtypes only). */
static void views_of(const tfx_layout *L, akx_dtype t, akx_array *src, akx_array *dst) {
  memset(src, 0, sizeof *src);
  src->dtype = t;
  src->ndim = L->ndim;
  memcpy(src->shape, L->shape, sizeof src->shape);
  memcpy(src->strides, L->strides, sizeof src->strides);
  *dst = *src;
}

static size_t workspace_of(const tfx_layout *L, akx_dtype t, int32_t dim, int32_t block_size,
                           const char *what) {
  akx_array src, dst;
  views_of(L, t, &src, &dst);
  akx_scan_opts o = akx_scan_opts_default();
  o.block_size = block_size;
  size_t bytes = 1;
  const akx_status s = akx_scan_workspace_size(ctx, &dst, &src, AKX_OP_ADD, dim, &o, &bytes);
  cr_assert_eq(s, AKX_SUCCESS, "%s: akx_scan_workspace_size: %s (%s)", what, akx_status_string(s),
               akx_last_error());
  return bytes;
}

/* The counters of one kernel since the last reset (zero when it did not run). */
static akx_sim_kernel_counters kernel_counters(const char *name) {
  akx_sim_kernel_counters per[16], none;
  memset(&none, 0, sizeof none);
  int32_t count = 0;
  cr_assert_eq(akx_sim_counters_get(ctx, NULL, per, 16, &count), AKX_SUCCESS, "%s", akx_last_error());
  for (int32_t i = 0; i < count && i < 16; ++i)
    if (!strcmp(per[i].kernel, name)) return per[i];
  return none;
}

/* Scans L (float32 ADD along dim) on the device, checks the values against the host reference,
 * and resets the sim's counters first so that they hold this call alone. */
static void run_checked(const tfx_layout *L, int32_t dim, int32_t block_size, int32_t items,
                        const char *what) {
  if (tfx_is_sim(ctx)) cr_assert_eq(akx_sim_counters_reset(ctx), AKX_SUCCESS, "%s", akx_last_error());
  tsc_case c = tsc_case_make(AKX_FLOAT32, AKX_OP_ADD);
  c.dim = dim;
  c.block_size = block_size;
  c.items_per_thread = items;
  char msg[1024];
  cr_assert(tsc_run(ctx, L, &c, 41, msg, sizeof msg), "%s: %s", what, msg);
}

/* ---- the columns shape: chunks along the scanned dim -------------------------------------------- */

typedef struct {
  int64_t want;      /* threads that fill the device: SMs x target_blocks x block size */
  int64_t block;     /* the columns kernel's block size */
} columns_device;

static columns_device columns_device_of(int32_t block_size) {
  const akx_context_info_t info = info_of();
  const akx__tuning over = {block_size, 0, 0};
  const akx__tuning t = akx__tuning_lookup(AKX__TUNE_SCAN_COLUMNS, info.cc_major, info.cc_minor,
                                           akx_dtype_size(AKX_FLOAT32), &over);
  columns_device d = {(int64_t)info.sm_count * t.target_blocks * t.block_size, t.block_size};
  return d;
}

/* The chunks n is cut into for `columns` columns: as many as fill the device
 * (ceil(want / columns); one when the columns alone do), at most n / 64 (each chunk at least 64
 * long), then chunks of equal length ceil(n / chunks), as many as that length needs. */
static int64_t expected_chunks(const columns_device *dev, int64_t n, int64_t columns) {
  int64_t c = columns >= dev->want ? 1 : cdiv(dev->want, columns);
  c = lmin(c, n / 64 > 0 ? n / 64 : 1);
  return cdiv(n, cdiv(n, c));
}

/* Asserts the chunks of a float32 {n, columns} row-major scan along dim 0 (a thread per
 * column: dim 0 is strided, the columns contiguous) through the workspace (chunks x columns
 * partials when there is more than one chunk), and with `run` the values and the launches. */
static void columns_side(int64_t n, int64_t columns, int32_t block_size, int64_t want_chunks, int run) {
  char what[160];
  snprintf(what, sizeof what, "float32 {%lld, %lld} along dim 0, block %d: %lld chunk(s)", (long long)n,
           (long long)columns, (int)block_size, (long long)want_chunks);
  const tfx_layout L = dense2(n, columns);
  const columns_device dev = columns_device_of(block_size);
  cr_assert_eq(expected_chunks(&dev, n, columns), want_chunks, "%s: the rule gives %lld", what,
               (long long)expected_chunks(&dev, n, columns));
  const size_t ws = workspace_of(&L, AKX_FLOAT32, 0, block_size, what);
  const size_t want_ws = want_chunks > 1 ? (size_t)(want_chunks * columns) * 4 : 0;
  cr_expect_eq(ws, want_ws, "%s: workspace %zu bytes, expected %zu", what, ws, want_ws);
  if (!run) return;
  run_checked(&L, 0, block_size, 0, what);
  if (!tfx_is_sim(ctx)) return;
  const akx_sim_kernel_counters k = kernel_counters("scan_columns");
  const akx_sim_kernel_counters carry = kernel_counters("scan_columns_carry");
  cr_expect_eq(k.launches, want_chunks > 1 ? 2u : 1u, "%s: scan_columns launched %llu times", what,
               (unsigned long long)k.launches);
  cr_expect_eq(carry.launches, want_chunks > 1 ? 1u : 0u, "%s: the carry pass launched %llu times", what,
               (unsigned long long)carry.launches);
  cr_expect_eq((int64_t)k.last_grid, cdiv(want_chunks * columns, dev.block), "%s: grid of %u blocks", what,
               k.last_grid);
}

/* Chunks are at least 64 long: 1000 columns want ceil(270336 / 1000) = 271 chunks, but 127
 * elements make one, 128 two (of 64), 191 two (of 96), 192 three. */
Test(scan_shapes, columns_chunks_at_least_64_long) {
  const columns_device dev = columns_device_of(0);
  cr_assert_gt(cdiv(dev.want, 1000), 3, "1000 columns nearly fill the device");
  columns_side(127, 1000, 0, 1, 1);
  columns_side(128, 1000, 0, 2, 1);
  columns_side(191, 1000, 0, 2, 1);
  columns_side(192, 1000, 0, 3, 1);
}

/* Where the device, not the length, limits the chunks: C = ceil(want / 1000) (h200: 271); n = 64 C
 * makes C chunks of 64, n = 64 C - 1 fewer, and n = 64 C + 64 still no more than C (the plan only:
 * 17 million elements). */
Test(scan_shapes, columns_chunks_fill_the_device) {
  const columns_device dev = columns_device_of(0);
  const int64_t C = cdiv(dev.want, 1000);
  columns_side(64 * C - 1, 1000, 0, expected_chunks(&dev, 64 * C - 1, 1000), 0);
  cr_assert_lt(expected_chunks(&dev, 64 * C - 1, 1000), C);
  columns_side(64 * C, 1000, 0, C, 0);
  columns_side(64 * C + 64, 1000, 0, expected_chunks(&dev, 64 * C + 64, 1000), 0);
  cr_assert_leq(expected_chunks(&dev, 64 * C + 64, 1000), C);
}

/* No chunks once the columns alone fill the device: want - 1 columns of 128 take two chunks,
 * want columns one (h200: 270336; the plan only, 35 million elements). With 32-thread blocks
 * the device is filled by 8 times fewer columns (132 x 8 x 32 = 33792): the same boundary, and
 * the chunked side (4.3 million elements through the carry pass) is run. */
Test(scan_shapes, columns_unchunked_once_columns_fill, .timeout = 280) {
  const columns_device dev = columns_device_of(0);
  columns_side(128, dev.want - 1, 0, 2, 0);
  columns_side(128, dev.want, 0, 1, 0);
  const columns_device dev32 = columns_device_of(32);
  cr_assert_eq(dev32.block, 32);
  columns_side(128, dev32.want - 1, 32, 2, 1);
  columns_side(128, dev32.want, 32, 1, 0);
}

/* ---- the tile scans: tiles of block x items elements ------------------------------------------------ */

/* The tile scans' tuning row for partials of `node` bytes, with the caller's overrides. */
static int64_t tile_of(size_t node, int32_t block_size, int32_t items) {
  const akx_context_info_t info = info_of();
  const akx__tuning over = {block_size, items, 0};
  const akx__tuning t = akx__tuning_lookup(AKX__TUNE_SCAN_TILE, info.cc_major, info.cc_minor, node, &over);
  return (int64_t)t.block_size * t.items_per_thread;
}

/* Asserts a tile scan's tile count through the workspace (the look-back's status of `tiles`
 * nodes) and, run on the sim, the grid of the tile kernel. */
static void tiles_side(const tfx_layout *L, int32_t dim, const char *kernel, size_t node,
                       int32_t block_size, int32_t items, int64_t want_tiles) {
  char what[160], b[256];
  akx_array src, dst;
  views_of(L, AKX_FLOAT32, &src, &dst);
  snprintf(what, sizeof what, "%s dim %d (%s, block %d x %d items): %lld tile(s)",
           tfx_describe(&src, b, sizeof b), (int)dim, kernel, (int)block_size, (int)items,
           (long long)want_tiles);
  akx_scan_opts o = akx_scan_opts_default();
  o.block_size = block_size;
  o.items_per_thread = items;
  size_t ws = 0;
  const akx_status s = akx_scan_workspace_size(ctx, &dst, &src, AKX_OP_ADD, dim, &o, &ws);
  cr_assert_eq(s, AKX_SUCCESS, "%s: %s (%s)", what, akx_status_string(s), akx_last_error());
  cr_expect_eq(ws, akx__lookback_bytes(want_tiles, node), "%s: workspace %zu bytes, expected %zu", what, ws,
               akx__lookback_bytes(want_tiles, node));
  run_checked(L, dim, block_size, items, what);
  if (!tfx_is_sim(ctx)) return;
  const akx_sim_kernel_counters k = kernel_counters(kernel);
  cr_expect_eq(k.launches, 1u, "%s: %s launched %llu times", what, kernel, (unsigned long long)k.launches);
  cr_expect_eq((int64_t)k.last_grid, want_tiles, "%s: grid of %u blocks", what, k.last_grid);
}

/* A whole-array float32 scan: tiles of 256 x 16 = 4096 (4-byte partials); 4096 elements are one
 * tile, 4097 two, 8192 two, 8193 three. With a 64 x 3 tile of the caller's: 192 one, 193 two. */
Test(scan_shapes, whole_array_tile_count) {
  const int64_t tile = tile_of(4, 0, 0);
  for (int64_t n = tile; n <= 2 * tile + 1; n += n % tile == 0 ? 1 : tile - 1) {
    const tfx_layout L = tfx_layout_vector(n);
    tiles_side(&L, 0, "scan_tile", 4, 0, 0, cdiv(n, tile));
  }
  const int64_t small = tile_of(4, 64, 3);
  cr_assert_eq(small, 192);
  for (int64_t n = small; n <= small + 1; n++) {
    const tfx_layout L = tfx_layout_vector(n);
    tiles_side(&L, 0, "scan_tile", 4, 64, 3, n == small ? 1 : 2);
  }
}

/* Slices along a contiguous dim: the tiles cover every slice back to back, with 8-byte partials
 * (a float32 and its slice's flag) in tiles of 256 x 8 = 2048: {8, 256} is one tile, {3, 683}
 * (2049 elements) two. */
Test(scan_shapes, slices_tile_count) {
  const size_t node = 8; /* ROUND_UP(4-byte acc + 4-byte flag, 4) */
  const int64_t tile = tile_of(node, 0, 0);
  cr_assert_eq(tile, 2048, "the cases below are sized for a 2048-element tile");
  tfx_layout L = dense2(8, 256);
  tiles_side(&L, 1, "scan_slices", node, 0, 0, 1);
  L = dense2(3, 683);
  tiles_side(&L, 1, "scan_slices", node, 0, 0, 2);
}

/* findall: its selection tile (kernels/akx/select_tile.cuh: 256 threads x AKX__FINDALL_VECTORS
 * 16-byte vectors, 16 int8 elements each, on an aligned source): a tile of nonzero elements is
 * one tile, one more two; every position comes back (status first, then the count). */
Test(scan_shapes, findall_tile_count) {
  const int64_t tile = 256 * (int64_t)AKX__FINDALL_VECTORS * 16;
  for (int64_t n = tile; n <= tile + 1; n++) {
    unsigned char *h = tfx_xmalloc((size_t)n);
    memset(h, 1, (size_t)n);
    void *d = tfx_upload(ctx, h, (size_t)n);
    int64_t *idx = tfx_alloc(ctx, (size_t)n * 8);
    const akx_array src = akx_vector(d, AKX_INT8, n), iv = akx_vector(idx, AKX_INT64, n);
    if (tfx_is_sim(ctx)) cr_assert_eq(akx_sim_counters_reset(ctx), AKX_SUCCESS);
    int64_t count = -1;
    const akx_status s = akx_findall(ctx, &src, &iv, &count);
    cr_assert_eq(s, AKX_SUCCESS, "n %lld: %s (%s)", (long long)n, akx_status_string(s), akx_last_error());
    cr_assert_eq(count, n, "n %lld: count %lld", (long long)n, (long long)count);
    int64_t *got = tfx_xmalloc((size_t)n * 8);
    tfx_to_host(ctx, got, idx, (size_t)n * 8);
    for (int64_t i = 0; i < n; i++)
      cr_assert_eq(got[i], i, "n %lld: indices[%lld] = %lld", (long long)n, (long long)i, (long long)got[i]);
    if (tfx_is_sim(ctx)) {
      const akx_sim_kernel_counters k = kernel_counters("findall_tile");
      cr_expect_eq((int64_t)k.last_grid, cdiv(n, tile), "n %lld: grid of %u blocks", (long long)n, k.last_grid);
    }
    free(got);
    free(h);
    tfx_free(ctx, idx);
    tfx_free(ctx, d);
  }
}
