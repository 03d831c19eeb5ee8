/* akx_select_flagged and akx_partition_flagged against numpy's answer, computed on the host:
 * x[mask] for a select (numpy's nonzero of the flags: a float's NaN selects, -0.0 does not, a
 * bool's any nonzero byte), and CUB's partition layout (the flagged in order from dst[0], the
 * others reversed from dst[n - 1]). Every source dtype (items keep their exact bits: NaN
 * payloads, -0.0, bool bytes of 2), every flag dtype, densities 0, 0.1%, 50% and 100%, sizes
 * around the tile's boundaries, views off a 16-byte boundary and strided ones (negative and zero
 * strides, a strided dst), a capacity too small (AKX_HOST: AKX_ERROR_OUTPUT_TOO_SMALL with
 * exactly the capacity written; AKX_DEVICE: SUCCESS, the total on the device), in place, the
 * count in device memory, the workspace query against the call, and the sparse select's traffic:
 * at 0.1% density it reads the flags and at most 1.1 times the sectors of src that hold a
 * flagged item. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "akx.h"
#include "akx_sim.h"
#include "fixture.h"
#include "kernels/akx/select_plan.h" /* AKX__SELECT_VECTORS_OF: the tile's size */

static akx_context *ctx;
static void setup(void) { ctx = tfx_open(); }
static void teardown(void) { tfx_close(ctx); }
TestSuite(select_flagged, .init = setup, .fini = teardown, .timeout = 280);

static const akx_dtype ALL[] = {AKX_BOOL,    AKX_INT8,     AKX_UINT8,   AKX_INT16,   AKX_UINT16,
                                AKX_INT32,   AKX_UINT32,   AKX_INT64,   AKX_UINT64,  AKX_FLOAT16,
                                AKX_BFLOAT16, AKX_FLOAT32, AKX_FLOAT64, AKX_COMPLEX64, AKX_COMPLEX128};
#define N_ALL (int)(sizeof ALL / sizeof ALL[0])

/* Items of one tile: 256 threads x the slots of 16 bytes of values. */
static int64_t tile_items(akx_dtype t) {
  const int64_t sz = (int64_t)akx_dtype_size(t);
  return 256 * (int64_t)AKX__SELECT_VECTORS_OF(sz) * (16 / sz);
}

/* numpy's nonzero of one flag. */
static int flag_set(const unsigned char *p, akx_dtype t) {
  const ref_val v = ref_load(p, t);
  if (ref_is_complex(t)) return v.re != 0 || v.im != 0 || isnan(v.re) || isnan(v.im);
  if (ref_is_float(t)) return v.re != 0 || isnan(v.re);
  if (t == AKX_BOOL) return *p != 0;
  return v.i != 0;
}

/* n random items of t, each byte random (NaNs, -0.0, bool bytes above 1 included): a select
 * moves bits, so any bits do. */
static void fill_bits(unsigned char *b, akx_dtype t, int64_t n, uint64_t seed) {
  const size_t sz = akx_dtype_size(t);
  for (int64_t i = 0; i < n * (int64_t)sz; ++i) b[i] = (unsigned char)(ref_rand(seed, (uint64_t)i) >> 24);
}

/* n flags of t, each set with probability density / 100000 (a set flag of its own kind: 1, 2,
 * NaN, a complex with one part nonzero; a clear one 0 or -0.0). */
static void fill_flags(unsigned char *b, akx_dtype t, int64_t n, int density, uint64_t seed) {
  const size_t sz = akx_dtype_size(t);
  memset(b, 0, (size_t)n * sz);
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t r = ref_rand(seed, (uint64_t)i);
    unsigned char *p = b + i * (int64_t)sz;
    if ((int)(r % 100000) >= density) {
      if (ref_is_float(t) && (r >> 40) % 3 == 0) ref_store(p, ref_real(t, -0.0L));
      if (ref_is_complex(t) && (r >> 40) % 3 == 0) ref_store(p, ref_cplx(t, -0.0L, 0.0L));
      continue;
    }
    if (t == AKX_BOOL) *p = (unsigned char)(1 + (r >> 20) % 3);
    else if (ref_is_complex(t)) ref_store(p, (r >> 20) % 2 ? ref_cplx(t, 0, NAN) : ref_cplx(t, -2, 0));
    else if (ref_is_float(t)) ref_store(p, (r >> 20) % 5 == 0 ? ref_nan(t) : ref_real(t, -0.5L));
    else ref_store(p, ref_int(t, (int64_t)(1 + (r >> 20) % 100)));
  }
}

/* One case: src of t (n items at src_step items apart, from `offset` items into its buffer),
 * flags of ft (flag_step apart), dst of `capacity` items at dst_step apart. */
typedef struct {
  akx_dtype t, ft;
  int64_t n, capacity;
  int density;          /* per 100000 */
  int64_t offset, flag_offset, src_step, flag_step, dst_step;
  int partition, in_place;
  akx_where where;
  uint64_t seed;
} sel_case;

static sel_case sel(akx_dtype t, akx_dtype ft, int64_t n, int density) {
  sel_case c;
  memset(&c, 0, sizeof c);
  c.t = t, c.ft = ft, c.n = n, c.capacity = n, c.density = density;
  c.src_step = c.flag_step = c.dst_step = 1;
  c.where = AKX_HOST;
  c.seed = (uint64_t)(n * 31 + density * 7 + t * 131 + ft * 1031);
  return c;
}

/* A 1-d view of n items at `step` apart starting at base + offset items (a negative step starts
 * at the far end, so that the view stays inside the buffer). */
static akx_array line(void *base, akx_dtype t, int64_t offset, int64_t n, int64_t step) {
  const int64_t first = offset + (step < 0 && n > 0 ? (n - 1) * -step : 0);
  akx_array a = akx_vector((unsigned char *)base + first * (int64_t)akx_dtype_size(t), t, n);
  a.strides[0] = step;
  return a;
}
static int64_t span(int64_t n, int64_t step) { return n > 0 ? (n - 1) * (step < 0 ? -step : step) + 1 : 1; }
static int64_t at(int64_t offset, int64_t n, int64_t step, int64_t i) {
  return offset + (step < 0 ? (n - 1 - i) * -step : i * step);
}

static void run(const sel_case *c) {
  const size_t sz = akx_dtype_size(c->t), fsz = akx_dtype_size(c->ft);
  const int64_t n = c->n;
  const int64_t src_items = c->offset + span(n, c->src_step), flag_items = c->flag_offset + span(n, c->flag_step);
  const int64_t dst_n = c->partition ? n : c->capacity;
  const int64_t dst_items = c->in_place ? src_items : span(dst_n, c->dst_step) + 4;
  unsigned char *hs = tfx_xmalloc((size_t)src_items * sz), *hf = tfx_xmalloc((size_t)flag_items * fsz);
  fill_bits(hs, c->t, src_items, c->seed);
  fill_bits(hf, c->ft, flag_items, c->seed + 1);
  {
    unsigned char *flags = tfx_xmalloc((size_t)n * fsz);
    fill_flags(flags, c->ft, n, c->density, c->seed + 2);
    for (int64_t i = 0; i < n; ++i) memcpy(hf + at(c->flag_offset, n, c->flag_step, i) * (int64_t)fsz, flags + i * (int64_t)fsz, fsz);
    free(flags);
  }
  /* numpy's answer */
  unsigned char *want = tfx_xmalloc((size_t)(n > 0 ? n : 1) * sz);
  int64_t total = 0, rejected = 0;
  for (int64_t i = 0; i < n; ++i)
    if (flag_set(hf + at(c->flag_offset, n, c->flag_step, i) * (int64_t)fsz, c->ft))
      memcpy(want + total++ * (int64_t)sz, hs + at(c->offset, n, c->src_step, i) * (int64_t)sz, sz);
  unsigned char *want_rej = tfx_xmalloc((size_t)(n > 0 ? n : 1) * sz);
  for (int64_t i = 0; i < n; ++i)
    if (!flag_set(hf + at(c->flag_offset, n, c->flag_step, i) * (int64_t)fsz, c->ft))
      memcpy(want_rej + rejected++ * (int64_t)sz, hs + at(c->offset, n, c->src_step, i) * (int64_t)sz, sz);

  void *ds = tfx_upload(ctx, hs, (size_t)src_items * sz), *df = tfx_upload(ctx, hf, (size_t)flag_items * fsz);
  unsigned char *dpoison = tfx_xmalloc((size_t)dst_items * sz);
  memset(dpoison, 0xA5, (size_t)dst_items * sz);
  void *dd = c->in_place ? ds : tfx_upload(ctx, dpoison, (size_t)dst_items * sz);
  akx_array src = line(ds, c->t, c->offset, n, c->src_step), flags = line(df, c->ft, c->flag_offset, n, c->flag_step);
  akx_array dst = c->in_place ? src : line(dd, c->t, 2, dst_n, c->dst_step);
  int64_t count = -3;
  int64_t *dcount = c->where == AKX_DEVICE ? tfx_upload(ctx, &count, sizeof count) : NULL;
  const akx_status st = c->partition ? akx_partition_flagged(ctx, &dst, &src, &flags, dcount ? dcount : &count, c->where)
                                     : akx_select_flagged(ctx, &dst, &src, &flags, dcount ? dcount : &count, c->where);
  if (dcount) {
    tfx_to_host(ctx, &count, dcount, sizeof count);
    tfx_free(ctx, dcount);
  }
  char what[256];
  snprintf(what, sizeof what, "%s of %lld %s flagged by %s (density %d/1e5, steps %lld/%lld/%lld, offsets %lld/%lld, "
           "capacity %lld, %s%s)", c->partition ? "partition" : "select", (long long)n, akx_dtype_name(c->t),
           akx_dtype_name(c->ft), c->density, (long long)c->src_step, (long long)c->flag_step, (long long)c->dst_step,
           (long long)c->offset, (long long)c->flag_offset, (long long)c->capacity,
           c->where == AKX_DEVICE ? "count on the device" : "count on the host", c->in_place ? ", in place" : "");
  const akx_status st_want = !c->partition && c->where == AKX_HOST && total > c->capacity ? AKX_ERROR_OUTPUT_TOO_SMALL
                                                                                       : AKX_SUCCESS;
  cr_assert_eq(st, st_want, "%s: %s (%s), expected %s", what, akx_status_string(st), akx_last_error(),
               akx_status_string(st_want));
  cr_assert_eq(count, total, "%s: count %lld, expected %lld", what, (long long)count, (long long)total);
  unsigned char *got = tfx_xmalloc((size_t)dst_items * sz);
  tfx_to_host(ctx, got, c->in_place ? ds : dd, (size_t)dst_items * sz);
  const int64_t written = c->partition ? total : (total < c->capacity ? total : c->capacity);
  const int64_t dst_off = c->in_place ? c->offset : 2;
  for (int64_t k = 0; k < written; ++k) {
    const unsigned char *g = got + at(dst_off, dst_n, c->in_place ? c->src_step : c->dst_step, k) * (int64_t)sz;
    cr_assert(memcmp(g, want + k * (int64_t)sz, sz) == 0, "%s: dst[%lld] is not the %lld-th flagged item's bits", what,
              (long long)k, (long long)k);
  }
  if (c->partition)
    for (int64_t r = 0; r < rejected; ++r) {
      const unsigned char *g = got + at(dst_off, dst_n, c->dst_step, n - 1 - r) * (int64_t)sz;
      cr_assert(memcmp(g, want_rej + r * (int64_t)sz, sz) == 0, "%s: dst[n - 1 - %lld] is not the %lld-th other item",
                what, (long long)r, (long long)r);
    }
  if (!c->in_place) {
    /* nothing else of dst's buffer written: past the capacity, between strided items, around */
    unsigned char *mark = tfx_xmalloc((size_t)dst_items);
    memset(mark, 0, (size_t)dst_items);
    const int64_t fill = c->partition ? n : written;
    for (int64_t k = 0; k < fill; ++k) mark[at(2, dst_n, c->dst_step, k)] = 1;
    for (int64_t i = 0; i < dst_items; ++i)
      if (!mark[i])
        cr_assert(memcmp(got + i * (int64_t)sz, dpoison + i * (int64_t)sz, sz) == 0, "%s: dst's buffer item %lld written",
                  what, (long long)i);
    free(mark);
    tfx_free(ctx, dd);
  }
  free(got);
  free(dpoison);
  free(want);
  free(want_rej);
  free(hs);
  free(hf);
  tfx_free(ctx, ds);
  tfx_free(ctx, df);
}

static const int DENSITIES[] = {0, 100, 50000, 100000};

Test(select_flagged, every_dtype_and_density) {
  for (int i = 0; i < N_ALL; ++i)
    for (int d = 0; d < 4; ++d) {
      const int64_t n = tile_items(ALL[i]) * 2 + 3 + 17 * i;
      sel_case c = sel(ALL[i], i % 2 ? AKX_BOOL : AKX_UINT8, n, DENSITIES[d]);
      run(&c);
      c.partition = 1;
      run(&c);
    }
}

Test(select_flagged, every_flag_dtype) {
  for (int i = 0; i < N_ALL; ++i) {
    const akx_dtype vals[] = {AKX_INT8, AKX_FLOAT32, AKX_COMPLEX128};
    for (int v = 0; v < 3; ++v) {
      sel_case c = sel(vals[v], ALL[i], 3000 + 101 * i, 30000);
      run(&c);
      c.partition = 1;
      run(&c);
    }
  }
}

/* 0, 1, a tile less one, a tile, a tile and one, several tiles; from a 16-byte boundary and one
 * item past it (the head and tail slots read item by item), with flags off the values' slot
 * boundary too (every slot item by item). */
Test(select_flagged, tile_boundaries_and_alignment) {
  const akx_dtype ts[] = {AKX_INT8, AKX_FLOAT16, AKX_INT32, AKX_FLOAT64, AKX_COMPLEX128};
  for (int i = 0; i < 5; ++i) {
    const int64_t T = tile_items(ts[i]);
    const int64_t ns[] = {0, 1, T - 1, T, T + 1, 3 * T + 5};
    for (int k = 0; k < 6; ++k)
      for (int a = 0; a < 3; ++a) {
        sel_case c = sel(ts[i], a == 2 ? AKX_INT16 : AKX_BOOL, ns[k], 50000);
        c.offset = a >= 1;
        c.flag_offset = a == 2 ? 3 : c.offset;
        run(&c);
        c.partition = 1;
        run(&c);
      }
  }
}

Test(select_flagged, strides_negative_zero_and_strided_dst) {
  const akx_dtype ts[] = {AKX_UINT8, AKX_BFLOAT16, AKX_FLOAT32, AKX_INT64, AKX_COMPLEX64, AKX_COMPLEX128};
  for (int i = 0; i < 6; ++i) {
    const int64_t steps[][3] = {{-1, 1, 1}, {2, -3, 1}, {1, 1, -2}, {0, 1, 3}, {-2, -1, -1}};
    for (int s = 0; s < 5; ++s) {
      sel_case c = sel(ts[i], AKX_FLOAT32, 5000 + 13 * i, 40000);
      c.src_step = steps[s][0], c.flag_step = steps[s][1], c.dst_step = steps[s][2];
      run(&c);
      c.partition = 1;
      run(&c);
    }
  }
}

/* snprintf-style: the first capacity items written (the rest of dst untouched), the total
 * counted; to the host AKX_ERROR_OUTPUT_TOO_SMALL, to the device SUCCESS. */
Test(select_flagged, capacity_too_small_and_device_counts) {
  const akx_dtype ts[] = {AKX_INT8, AKX_FLOAT32, AKX_FLOAT64};
  for (int i = 0; i < 3; ++i) {
    const int64_t n = 3 * tile_items(ts[i]) + 7;
    const int64_t caps[] = {0, 1, 100, n / 3};
    for (int k = 0; k < 4; ++k)
      for (int w = 0; w < 2; ++w) {
        sel_case c = sel(ts[i], AKX_BOOL, n, 60000);
        c.capacity = caps[k];
        c.where = w ? AKX_DEVICE : AKX_HOST;
        run(&c);
      }
    sel_case c = sel(ts[i], AKX_BOOL, n, 60000);
    c.where = AKX_DEVICE;
    c.partition = 1;
    run(&c);
    c.n = 0;
    run(&c);
  }
}

/* dst the same view as src: every flagged item still lands where numpy puts it. */
Test(select_flagged, in_place) {
  const akx_dtype ts[] = {AKX_INT8, AKX_UINT16, AKX_FLOAT32, AKX_FLOAT64, AKX_COMPLEX128};
  for (int i = 0; i < 5; ++i)
    for (int d = 0; d < 4; ++d) {
      sel_case c = sel(ts[i], AKX_UINT8, 5 * tile_items(ts[i]) + 11, DENSITIES[d]);
      c.in_place = 1;
      run(&c);
      c.src_step = -2;
      run(&c);
    }
}

/* The query's size serves the call: a caller workspace of exactly that many bytes takes the call
 * without a growth of the context's own. */
Test(select_flagged, workspace_query_serves_the_call) {
  const int64_t n = 200000;
  unsigned char *h = tfx_xmalloc((size_t)n * 4);
  fill_bits(h, AKX_FLOAT32, n, 5);
  void *ds = tfx_upload(ctx, h, (size_t)n * 4), *dd = tfx_alloc(ctx, (size_t)n * 4);
  unsigned char *hf = tfx_xmalloc((size_t)n);
  fill_flags(hf, AKX_BOOL, n, 50000, 6);
  void *df = tfx_upload(ctx, hf, (size_t)n);
  akx_array s = akx_vector(ds, AKX_FLOAT32, n), f = akx_vector(df, AKX_BOOL, n), d = akx_vector(dd, AKX_FLOAT32, n);
  for (int part = 0; part < 2; ++part) {
    size_t bytes = 0;
    cr_assert_eq(part ? akx_partition_flagged_workspace_size(ctx, &d, &s, &f, &bytes)
                      : akx_select_flagged_workspace_size(ctx, &d, &s, &f, &bytes),
                 AKX_SUCCESS, "%s", akx_last_error());
    cr_assert_gt(bytes, 0);
    void *ws = tfx_alloc(ctx, bytes);
    cr_assert_eq(akx_context_set_workspace(ctx, ws, bytes), AKX_SUCCESS, "%s", akx_last_error());
    int64_t count = 0;
    cr_assert_eq(part ? akx_partition_flagged(ctx, &d, &s, &f, &count, AKX_HOST)
                      : akx_select_flagged(ctx, &d, &s, &f, &count, AKX_HOST),
                 AKX_SUCCESS, "with the queried %zu bytes: %s", bytes, akx_last_error());
    cr_assert_eq(akx_context_set_workspace(ctx, NULL, 0), AKX_SUCCESS, "%s", akx_last_error());
    tfx_free(ctx, ws);
  }
  size_t none = 7;
  akx_array e = akx_vector(ds, AKX_FLOAT32, 0), ef = akx_vector(df, AKX_BOOL, 0);
  cr_assert_eq(akx_select_flagged_workspace_size(ctx, &e, &e, &ef, &none), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(none, 0);
  free(h);
  free(hf);
  tfx_free(ctx, ds);
  tfx_free(ctx, dd);
  tfx_free(ctx, df);
}

/* Sparse flags skip the payload: at 0.1% density the select's data loads read the flags and at
 * most 1.1 times the 32-byte sectors of src that hold a flagged item; at 100% density each
 * sector of src and of the flags once, and dst's stores each of its sectors once. The
 * look-back's own reads (its flags and nodes, polls included) are held apart, to 24 sectors a
 * tile. */
Test(select_flagged, sparse_flags_read_only_the_selected_sectors) {
  if (!tfx_is_sim(ctx)) return;
  const akx_dtype ts[] = {AKX_INT8, AKX_FLOAT32, AKX_FLOAT64};
  for (int i = 0; i < 3; ++i)
    for (int dense = 0; dense < 2; ++dense) {
      const size_t sz = akx_dtype_size(ts[i]);
      const int64_t n = 1 << 20;
      unsigned char *h = tfx_xmalloc((size_t)n * sz), *hf = tfx_xmalloc((size_t)n);
      fill_bits(h, ts[i], n, 9);
      fill_flags(hf, AKX_BOOL, n, dense ? 100000 : 100, 10);
      int64_t want = 0, sectors = 0, last = -1;
      for (int64_t k = 0; k < n; ++k)
        if (hf[k]) {
          ++want;
          const int64_t s = k * (int64_t)sz / 32;
          if (s != last) ++sectors, last = s;
        }
      void *ds = tfx_upload(ctx, h, (size_t)n * sz), *df = tfx_upload(ctx, hf, (size_t)n), *dd = tfx_alloc(ctx, (size_t)n * sz);
      akx_array s = akx_vector(ds, ts[i], n), f = akx_vector(df, AKX_BOOL, n), d = akx_vector(dd, ts[i], n);
      int64_t count = 0;
      cr_assert_eq(akx_select_flagged(ctx, &d, &s, &f, &count, AKX_HOST), AKX_SUCCESS, "%s", akx_last_error()); /* warm */
      cr_assert_eq(akx_sim_counters_reset(ctx), AKX_SUCCESS);
      cr_assert_eq(akx_select_flagged(ctx, &d, &s, &f, &count, AKX_HOST), AKX_SUCCESS, "%s", akx_last_error());
      cr_assert_eq(count, want);
      akx_sim_kernel_counters total, per[4];
      int32_t nk = 0;
      cr_assert_eq(akx_sim_counters_get(ctx, &total, per, 4, &nk), AKX_SUCCESS, "%s", akx_last_error());
      const akx_sim_kernel_counters *k = NULL;
      for (int32_t j = 0; j < nk; ++j)
        if (strcmp(per[j].kernel, "select_flagged") == 0) k = &per[j];
      cr_assert(k != NULL, "no select_flagged kernel counted");
      const int64_t tiles = (int64_t)k->blocks;
      /* the data's loads (the policy's, kernels/akx/select_flagged.cuh, and the vector loads of
       * kernels/akx/device.cuh it calls) apart from the look-back's (kernels/akx/lookback.cuh) */
      akx_sim_site_counters sites[64];
      int32_t ns = 0;
      cr_assert_eq(akx_sim_sites_get(ctx, sites, 64, &ns), AKX_SUCCESS, "%s", akx_last_error());
      double data = 0, lookback = 0, other = 0;
      for (int32_t j = 0; j < ns && j < 64; ++j) {
        if (strcmp(sites[j].kernel, "select_flagged") != 0 || sites[j].shared || sites[j].store) continue;
        const double u = (double)sites[j].traffic.units;
        if (strcmp(sites[j].file, "select_flagged.cuh") == 0 || strcmp(sites[j].file, "device.cuh") == 0) data += u;
        else if (strcmp(sites[j].file, "lookback.cuh") == 0) lookback += u;
        else other += u, cr_log_info("%s:%d: %.0f sectors", sites[j].file, (int)sites[j].line, u);
      }
      const double flag_sectors = (double)n / 32;
      const double bound = flag_sectors + (dense ? (double)n * (double)sz / 32 : 1.1 * (double)sectors);
      cr_expect(data <= bound, "%s at %s: the data's loads read %.0f sectors, more than the flags' %.0f + %s %lld",
                akx_dtype_name(ts[i]), dense ? "100%" : "0.1%", data, flag_sectors,
                dense ? "src's" : "1.1 x the selected sectors,", (long long)(dense ? n * (int64_t)sz / 32 : sectors));
      cr_expect(lookback + other <= 24.0 * (double)tiles, "%s at %s: the look-back read %.0f sectors and the rest %.0f "
                "over %lld tiles, more than 24 a tile", akx_dtype_name(ts[i]), dense ? "100%" : "0.1%", lookback,
                other, (long long)tiles);
      cr_log_info("%s at %s: data %.0f sectors (flags %.0f, selected %lld), look-back %.0f, other %.0f, %lld tiles",
                  akx_dtype_name(ts[i]), dense ? "100%" : "0.1%", data, flag_sectors, (long long)sectors, lookback,
                  other, (long long)tiles);
      if (dense)
        cr_expect((double)k->global_store.units <= (double)n * (double)sz / 32 * 1.02 + 4.0 * (double)tiles,
                  "%s at 100%%: %llu sectors stored for %.0f of dst", akx_dtype_name(ts[i]),
                  (unsigned long long)k->global_store.units, (double)n * (double)sz / 32);
      free(h);
      free(hf);
      tfx_free(ctx, ds);
      tfx_free(ctx, df);
      tfx_free(ctx, dd);
    }
}
