/* akx_findall's selection tile: its memory traffic as the sim counts it (deterministic, so
 * asserted), and its positions against a host reference where the tile's own boundaries fall.
 *  - stores: the positions go out in contiguous runs, so each warp request touches its ideal
 *    sectors (8 for 32 int64 slots), not the ~11 of a scatter;
 *  - loads: a contiguous source is read in 16-byte vectors, 512 bytes per warp request;
 *  - positions: every dtype at 0, 1, tile - 1, tile, tile + 1 and several tiles, from an
 *    address on a 16-byte boundary and one element past it (a head and a tail read element by
 *    element), strided sources over several tiles, a capacity ending inside a tile, pieces. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "akx_layer.h" /* akx_findall_piece */
#include "akx_sim.h"
#include "fixture.h"
#include "kernels/akx/plan.h" /* AKX__FINDALL_VECTORS: the tile's size */

static akx_context *ctx;
static void setup(void) { ctx = tfx_open(); }
static void teardown(void) { tfx_close(ctx); }
TestSuite(findall_counters, .init = setup, .fini = teardown, .timeout = 280);

#define POISON 0x7777777777777777LL

/* Elements of one tile: 256 threads x the vectors of 16 bytes per thread. */
static int64_t tile_elements(akx_dtype t) {
  const size_t s = akx_dtype_size(t);
  return 256 * (int64_t)AKX__FINDALL_VECTORS * (int64_t)(16 / s);
}

static int host_nonzero(const unsigned char *p, akx_dtype t) {
  const ref_val v = ref_load(p, t);
  if (ref_is_complex(t)) return v.re != 0 || v.im != 0 || isnan(v.re) || isnan(v.im);
  if (ref_is_float(t)) return v.re != 0 || isnan(v.re);
  if (t == AKX_BOOL) return *p != 0;
  return v.i != 0;
}

/* n elements, each nonzero with probability density/1000. */
static unsigned char *fill(akx_dtype t, int64_t n, int density, uint64_t seed) {
  const size_t sz = akx_dtype_size(t);
  unsigned char *b = tfx_xmalloc((size_t)(n > 0 ? n : 1) * sz);
  memset(b, 0, (size_t)(n > 0 ? n : 1) * sz);
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t r = ref_rand(seed, (uint64_t)i);
    unsigned char *p = b + i * (int64_t)sz;
    if ((int)(r % 1000) >= density) continue;
    if (t == AKX_BOOL) *p = (unsigned char)(1 + (r >> 12) % 3);
    else if (ref_is_complex(t)) ref_store(p, (r >> 12) % 2 ? ref_cplx(t, 0, 1.5L) : ref_cplx(t, -2, 0));
    else if (ref_is_float(t)) ref_store(p, (r >> 12) % 7 == 0 ? ref_nan(t) : ref_real(t, 0.25L));
    else ref_store(p, ref_int(t, (int64_t)(1 + (r >> 12) % 200)));
  }
  return b;
}

/* findall (or, with `at`, findall_piece) of the 1-d view of `count` elements at `offset`
 * elements into the device copy of parent, step `stride`, into `capacity` slots; checks the
 * status, the count, the positions written and the slots past them. */
static void check_view(akx_dtype t, const unsigned char *parent, int64_t parent_n, int64_t offset, int64_t count,
                       int64_t stride, int64_t capacity, const akx_findall_piece_t *at, const char *what) {
  const size_t sz = akx_dtype_size(t);
  void *dev = tfx_upload(ctx, parent, (size_t)(parent_n > 0 ? parent_n : 1) * sz);
  akx_array src = akx_vector((unsigned char *)dev + offset * (int64_t)sz, t, count);
  src.strides[0] = stride;
  int64_t *want = tfx_xmalloc((size_t)(count > 0 ? count : 1) * 8);
  int64_t nz = 0;
  for (int64_t i = 0; i < count; ++i)
    if (host_nonzero(parent + (offset + i * stride) * (int64_t)sz, t))
      want[nz++] = at ? at->position_base + i + (at->position_block ? i / at->position_block * at->position_skip : 0) : i;
  int64_t *back = tfx_xmalloc((size_t)(capacity + 4) * 8);
  for (int64_t i = 0; i < capacity + 4; ++i) back[i] = POISON;
  void *ind = tfx_upload(ctx, back, (size_t)(capacity + 4) * 8);
  const akx_array indices = akx_vector(ind, AKX_INT64, capacity);
  int64_t got = -5;
  const akx_status st = at ? akx_findall_piece(ctx, &src, &indices, &got, at) : akx_findall(ctx, &src, &indices, &got);
  const akx_status want_st = nz > capacity ? AKX_ERROR_OUTPUT_TOO_SMALL : AKX_SUCCESS;
  cr_assert_eq(st, want_st, "%s, %s, n %lld: %s (%s)", what,
               akx_dtype_name(t), (long long)count, akx_status_string(st), akx_last_error());
  cr_assert_eq(got, nz, "%s, %s, n %lld: count %lld, the host's %lld", what, akx_dtype_name(t), (long long)count,
               (long long)got, (long long)nz);
  tfx_to_host(ctx, back, ind, (size_t)(capacity + 4) * 8);
  const int64_t written = nz < capacity ? nz : capacity;
  for (int64_t i = 0; i < written; ++i)
    cr_assert_eq(back[i], want[i], "%s, %s, n %lld: indices[%lld] = %lld, the host's %lld", what, akx_dtype_name(t),
                 (long long)count, (long long)i, (long long)back[i], (long long)want[i]);
  for (int64_t i = written; i < capacity + 4; ++i)
    cr_assert_eq(back[i], POISON, "%s, %s, n %lld: indices[%lld] written past the count", what, akx_dtype_name(t),
                 (long long)count, (long long)i);
  tfx_free(ctx, dev);
  tfx_free(ctx, ind);
  free(want);
  free(back);
}

/* ---- counters -------------------------------------------------------------------------------- */

typedef struct {
  double store_sectors_per_request, store_over_ideal; /* the positions' stores */
  double load_bytes_per_request;                      /* the source's loads */
} findall_traffic;

/* The tile's own global accesses (kernels/akx/findall.cuh: the source's loads, the positions'
 * stores), the look-back's left out, over one call of n elements of t at density/1000. */
static findall_traffic traffic(akx_dtype t, int64_t n, int density) {
  const size_t sz = akx_dtype_size(t);
  unsigned char *host = fill(t, n, density, 77);
  void *dev = tfx_upload(ctx, host, (size_t)n * sz);
  void *ind = tfx_alloc(ctx, (size_t)n * 8);
  const akx_array src = akx_vector(dev, t, n), indices = akx_vector(ind, AKX_INT64, n);
  int64_t count = 0;
  cr_assert_eq(akx_sim_counters_reset(ctx), AKX_SUCCESS);
  cr_assert_eq(akx_findall(ctx, &src, &indices, &count), AKX_SUCCESS, "%s", akx_last_error());
  akx_sim_site_counters sites[64];
  int32_t ns = 0;
  cr_assert_eq(akx_sim_sites_get(ctx, sites, 64, &ns), AKX_SUCCESS);
  cr_assert_leq(ns, 64);
  uint64_t st_req = 0, st_units = 0, st_ideal = 0, ld_req = 0, ld_bytes = 0;
  for (int32_t i = 0; i < ns; ++i) {
    if (strcmp(sites[i].kernel, "findall_tile") || sites[i].shared || strcmp(sites[i].file, "findall.cuh")) continue;
    if (sites[i].store) {
      st_req += sites[i].traffic.requests;
      st_units += sites[i].traffic.units;
      st_ideal += sites[i].traffic.ideal;
    } else {
      ld_req += sites[i].traffic.requests;
      ld_bytes += sites[i].traffic.bytes;
    }
  }
  cr_assert(st_req > 0 && ld_req > 0, "no store or load of findall.cuh counted");
  findall_traffic f = {(double)st_units / (double)st_req, (double)st_units / (double)st_ideal,
                       (double)ld_bytes / (double)ld_req};
  tfx_free(ctx, dev);
  tfx_free(ctx, ind);
  free(host);
  return f;
}

Test(findall_counters, stores_touch_their_ideal_sectors_and_loads_move_16_bytes_a_lane) {
  const akx_dtype ts[] = {AKX_BOOL, AKX_FLOAT32};
  const int densities[] = {10, 500, 990};
  for (int i = 0; i < 2; ++i)
    for (int d = 0; d < 3; ++d) {
      const int64_t n = 3 * tile_elements(ts[i]) + 1000;
      const findall_traffic f = traffic(ts[i], n, densities[d]);
      /* 32 int64 slots are 8 sectors; runs start on a 32-byte boundary (a partial first
       * request per run and window) */
      cr_expect_leq(f.store_over_ideal, 1.01, "%s at %d/1000: stores %.3f x their ideal sectors",
                    akx_dtype_name(ts[i]), densities[d], f.store_over_ideal);
      cr_expect_leq(f.store_sectors_per_request, 8.0, "%s at %d/1000: %.2f sectors per store request",
                    akx_dtype_name(ts[i]), densities[d], f.store_sectors_per_request);
      if (densities[d] == 500)
        cr_expect_geq(f.store_sectors_per_request, 7.0, "%s: %.2f sectors per store request (runs cut short?)",
                      akx_dtype_name(ts[i]), f.store_sectors_per_request);
      /* 16 bytes a lane, 512 a request; the head and tail element by element (here a tail of
       * 1000 elements) */
      cr_expect_geq(f.load_bytes_per_request, 0.95 * 512, "%s at %d/1000: %.1f bytes per load request",
                    akx_dtype_name(ts[i]), densities[d], f.load_bytes_per_request);
    }
}

/* ---- positions ------------------------------------------------------------------------------- */

static const akx_dtype every_dtype[] = {AKX_BOOL,     AKX_INT8,    AKX_UINT8,   AKX_INT16,    AKX_UINT16,
                                        AKX_INT32,    AKX_UINT32,  AKX_INT64,   AKX_UINT64,   AKX_FLOAT16,
                                        AKX_BFLOAT16, AKX_FLOAT32, AKX_FLOAT64, AKX_COMPLEX64, AKX_COMPLEX128};

Test(findall_counters, every_dtype_at_the_tile_boundaries) {
  for (int i = 0; i < 15; ++i) {
    const akx_dtype t = every_dtype[i];
    const int64_t tile = tile_elements(t);
    const int64_t sizes[] = {0, 1, tile - 1, tile, tile + 1, 3 * tile + 5};
    const int64_t parent_n = 3 * tile + 7;
    unsigned char *b = fill(t, parent_n, 500, (uint64_t)i);
    for (int k = 0; k < 6; ++k) {
      /* from the allocation's start (a 16-byte boundary), and one element past it: a head read
       * element by element (but complex128's element is the whole vector) */
      check_view(t, b, parent_n, 0, sizes[k], 1, sizes[k], NULL, "aligned");
      if (k >= 3) check_view(t, b, parent_n, 1, sizes[k], 1, sizes[k], NULL, "one element in");
    }
    free(b);
  }
}

/* A tile with more selected elements than the shared window compacts in rounds; a capacity
 * that ends inside a tile and inside a round writes exactly that many. */
Test(findall_counters, dense_tiles_and_capacities_inside_them) {
  const int64_t tile = tile_elements(AKX_BOOL), n = 3 * tile + 100;
  unsigned char *b = fill(AKX_BOOL, n, 999, 3);
  check_view(AKX_BOOL, b, n, 0, n, 1, n, NULL, "99% set");
  check_view(AKX_BOOL, b, n, 0, n, 1, tile + 9000, NULL, "capacity inside the second tile");
  check_view(AKX_BOOL, b, n, 3, n - 3, 1, 5, NULL, "capacity 5");
  check_view(AKX_BOOL, b, n, 0, n, 1, 0, NULL, "capacity 0");
  free(b);
  unsigned char *f = fill(AKX_FLOAT32, n, 10, 4);
  check_view(AKX_FLOAT32, f, n, 0, n, 1, 100, NULL, "1% set, capacity 100");
  free(f);
}

Test(findall_counters, strided_sources_over_several_tiles) {
  const int64_t tile = tile_elements(AKX_FLOAT32), count = 2 * tile + 77;
  unsigned char *f = fill(AKX_FLOAT32, 3 * count + 3, 300, 5);
  check_view(AKX_FLOAT32, f, 3 * count + 3, 1, count, 3, count, NULL, "step 3");
  check_view(AKX_FLOAT32, f, 3 * count + 3, 3 * count + 1, count, -3, count, NULL, "step -3");
  free(f);
  const int64_t btile = tile_elements(AKX_BOOL);
  unsigned char *b = fill(AKX_BOOL, 2 * btile + 10, 500, 6);
  check_view(AKX_BOOL, b, 2 * btile + 10, 0, btile + 5, 2, btile + 5, NULL, "bool step 2");
  free(b);
}

Test(findall_counters, pieces_over_several_tiles) {
  const int64_t tile = tile_elements(AKX_INT16), n = 2 * tile + 333;
  unsigned char *h = fill(AKX_INT16, n + 1, 400, 8);
  const akx_findall_piece_t gaps = {1000, 700, 300}, plain = {123456789, 0, 0};
  check_view(AKX_INT16, h, n + 1, 0, n, 1, n, &gaps, "piece with gaps");
  check_view(AKX_INT16, h, n + 1, 1, n, 1, n, &plain, "piece one element in");
  free(h);
}
