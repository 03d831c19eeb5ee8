/* The sim's counters of the scan tiles (deterministic, so asserted): shared wavefronts per
 * request within 1.05x of the ideal for 1-, 2-, 4-, 8- and 16-byte partials with odd and
 * even runs; ideal sectors per request on the striped loads and stores; bytes moved by a
 * whole-array scan = read n + write n + the look-back's status. AK's layouts (runs back to
 * back, and its odd stride: docs/scan_tiles.md) are printed beside, for the record. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "akx_sim.h"
#include "fixture.h"
#include "internal.h" /* akx__context_reread_settings */

static akx_context *ctx;
static void setup(void) { ctx = tfx_open(); }
static void teardown(void) {
  unsetenv("AKX_SCAN_LAYOUT");
  tfx_close(ctx);
}
TestSuite(scan_counters, .init = setup, .fini = teardown, .timeout = 280);

typedef struct {
  double load, store;   /* wavefronts / ideal */
  double gload, gstore; /* sectors / ideal of the tile's own striped accesses */
  uint64_t global_bytes;
} tile_figures;

static akx_sim_kernel_counters kernel(const char *name) {
  akx_sim_kernel_counters per[16];
  int32_t count = 0;
  cr_assert_eq(akx_sim_counters_get(ctx, NULL, per, 16, &count), AKX_SUCCESS);
  for (int32_t i = 0; i < count && i < 16; ++i)
    if (!strcmp(per[i].kernel, name)) return per[i];
  cr_assert_fail("no kernel %s counted", name);
  return per[0];
}

/* Scans n elements of dtype t (op) with the given runs and layout; the tile's figures. */
static tile_figures scan_tile_figures(akx_dtype t, akx_op op, int32_t ipt, const char *layout,
                                      int64_t n) {
  if (layout) setenv("AKX_SCAN_LAYOUT", layout, 1);
  else unsetenv("AKX_SCAN_LAYOUT");
  cr_assert_eq(akx__context_reread_settings(ctx), AKX_SUCCESS, "%s", akx_last_error());
  const size_t sz = akx_dtype_size(t);
  unsigned char *host = tfx_xmalloc((size_t)n * sz);
  ref_fill_plain(host, t, n, 9);
  void *src = tfx_upload(ctx, host, (size_t)n * sz);
  void *dst = tfx_alloc(ctx, (size_t)n * sz);
  akx_array s = akx_vector(src, t, n), d = akx_vector(dst, t, n);
  akx_scan_opts o = akx_scan_opts_default();
  o.acc = t;
  o.block_size = 256;
  o.items_per_thread = ipt;
  cr_assert_eq(akx_sim_counters_reset(ctx), AKX_SUCCESS);
  cr_assert_eq(akx_scan(ctx, &d, &s, op, 0, &o), AKX_SUCCESS, "%s", akx_last_error());
  const akx_sim_kernel_counters k = kernel("scan_tile");
  tile_figures f;
  f.load = (double)k.shared_load.units / (double)k.shared_load.ideal;
  f.store = (double)k.shared_store.units / (double)k.shared_store.ideal;
  f.global_bytes = k.global_load.bytes + k.global_store.bytes;
  /* the striped load and store sites are in scan_tile.cuh (the look-back's in lookback.cuh) */
  akx_sim_site_counters sites[64];
  int32_t ns = 0;
  cr_assert_eq(akx_sim_sites_get(ctx, sites, 64, &ns), AKX_SUCCESS);
  uint64_t gl_u = 0, gl_i = 0, gs_u = 0, gs_i = 0;
  for (int32_t i = 0; i < ns && i < 64; ++i) {
    if (strcmp(sites[i].kernel, "scan_tile") || sites[i].shared) continue;
    if (strcmp(sites[i].file, "scan_tile.cuh")) continue;
    if (sites[i].store) { gs_u += sites[i].traffic.units; gs_i += sites[i].traffic.ideal; }
    else { gl_u += sites[i].traffic.units; gl_i += sites[i].traffic.ideal; }
  }
  f.gload = gl_i ? (double)gl_u / (double)gl_i : 0;
  f.gstore = gs_i ? (double)gs_u / (double)gs_i : 0;
  tfx_free(ctx, src);
  tfx_free(ctx, dst);
  free(host);
  unsetenv("AKX_SCAN_LAYOUT");
  return f;
}

Test(scan_counters, conflict_free_tiles_every_partial_size_and_parity) {
  if (!tfx_is_sim(ctx)) { cr_skip_test("counters are the sim's"); }
  const struct { akx_dtype t; akx_op op; int32_t odd, even; } cases[] = {
      {AKX_UINT8, AKX_OP_MAX, 7, 32},  {AKX_INT16, AKX_OP_MAX, 9, 16},
      {AKX_FLOAT32, AKX_OP_ADD, 7, 16}, {AKX_FLOAT64, AKX_OP_ADD, 5, 8},
      {AKX_COMPLEX128, AKX_OP_ADD, 3, 4}};
  fprintf(stderr, "%-11s %4s  %-19s %-19s %-19s  sectors ld/st\n", "partial", "ipt",
          "dense ld/st", "seed odd stride", "libakx ld/st");
  for (int i = 0; i < 5; ++i) {
    for (int parity = 0; parity < 2; ++parity) {
      const int32_t ipt = parity ? cases[i].even : cases[i].odd;
      const int64_t n = 3 * 256 * (int64_t)ipt + 101;
      const tile_figures dense = scan_tile_figures(cases[i].t, cases[i].op, ipt, "dense", n);
      const tile_figures seed = scan_tile_figures(cases[i].t, cases[i].op, ipt, "odd_stride", n);
      const tile_figures f = scan_tile_figures(cases[i].t, cases[i].op, ipt, NULL, n);
      fprintf(stderr, "%-11s %4d  %5.2f / %5.2f       %5.2f / %5.2f       %5.2f / %5.2f        %4.2f / %4.2f\n",
              akx_dtype_name(cases[i].t), (int)ipt, dense.load, dense.store, seed.load, seed.store,
              f.load, f.store, f.gload, f.gstore);
      cr_expect_leq(f.load, 1.05, "%s ipt %d: shared loads at %.3fx the ideal wavefronts",
                    akx_dtype_name(cases[i].t), (int)ipt, f.load);
      cr_expect_leq(f.store, 1.05, "%s ipt %d: shared stores at %.3fx the ideal wavefronts",
                    akx_dtype_name(cases[i].t), (int)ipt, f.store);
      cr_expect_leq(f.gload, 1.0, "%s ipt %d: striped loads at %.3fx the ideal sectors",
                    akx_dtype_name(cases[i].t), (int)ipt, f.gload);
      cr_expect_leq(f.gstore, 1.0, "%s ipt %d: striped stores at %.3fx the ideal sectors",
                    akx_dtype_name(cases[i].t), (int)ipt, f.gstore);
    }
  }
}

/* Bytes of a whole-array float32 scan: n read, n written, plus per tile a ticket, a flag and a
 * node written and at most the sum of the tile's base-32 digits (under 32 here) nodes and flags read. */
Test(scan_counters, bytes_moved_whole_array) {
  if (!tfx_is_sim(ctx)) { cr_skip_test("counters are the sim's"); }
  const int64_t n = 200000;
  const tile_figures f = scan_tile_figures(AKX_FLOAT32, AKX_OP_ADD, 16, NULL, n);
  const int64_t tiles = (n + 4095) / 4096;
  const uint64_t data = 2 * (uint64_t)n * 4;
  const uint64_t status_max = (uint64_t)tiles * (8 + 4 + 4 + 32 * (4 + 4));
  fprintf(stderr, "float32 scan of %lld: %llu bytes, data %llu, status <= %llu (%lld tiles)\n",
          (long long)n, (unsigned long long)f.global_bytes, (unsigned long long)data,
          (unsigned long long)status_max, (long long)tiles);
  cr_assert_geq(f.global_bytes, data);
  cr_assert_leq(f.global_bytes, data + status_max);
}
