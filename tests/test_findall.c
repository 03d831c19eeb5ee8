/* akx_findall against a host reference: empty, all zero, all nonzero, random densities,
 * every source dtype (NaN and negative zero, bools as any byte), strided and N-d sources in
 * memory order, many tiles, and a capacity too small (snprintf-style); the workspace query
 * against the call. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "akx_layer.h" /* akx_set_last_error: a stale sentence before each refusal */
#include "fixture.h"
#include "mem_order.h"

static akx_context *ctx;
static void setup(void) { ctx = tfx_open(); }
static void teardown(void) { tfx_close(ctx); }
TestSuite(findall, .init = setup, .fini = teardown, .timeout = 280);

/* Nonzero as numpy's: any bit of an integer, != 0 for floats (NaN too, -0.0 not), either
 * part of a complex; a bool byte is true when nonzero. */
static int host_nonzero(const unsigned char *p, akx_dtype t) {
  const ref_val v = ref_load(p, t);
  if (ref_is_complex(t)) return v.re != 0 || v.im != 0 || isnan(v.re) || isnan(v.im);
  if (ref_is_float(t)) return v.re != 0 || isnan(v.re);
  if (t == AKX_BOOL) return *p != 0;
  return v.i != 0;
}

/* Where check() asks for the count: AKX_HOST through akx_findall, AKX_DEVICE through
 * akx_findall_where (device memory), and -1 through akx_findall_where with AKX_HOST. */
static int count_where = AKX_HOST;

/* Runs findall over the view (offset, shape, strides over a parent of parent_n) and checks
 * the positions: the linear index over dims ordered by decreasing |stride|. */
static void check(akx_dtype t, const unsigned char *parent, int64_t parent_n, int64_t offset,
                  int32_t ndim, const int64_t *shape, const int64_t *strides, int64_t capacity) {
  const size_t sz = akx_dtype_size(t);
  void *dev = tfx_upload(ctx, parent, (size_t)(parent_n > 0 ? parent_n : 1) * sz);
  akx_array src;
  memset(&src, 0, sizeof src);
  src.data = (unsigned char *)dev + offset * (int64_t)sz;
  src.dtype = t;
  src.ndim = ndim;
  memcpy(src.shape, shape, sizeof(int64_t) * (size_t)ndim);
  memcpy(src.strides, strides, sizeof(int64_t) * (size_t)ndim);
  /* memory order: dims sorted by |stride| descending (stable) */
  int32_t order[AKX_MAX_DIMS];
  for (int32_t d = 0; d < ndim; ++d) order[d] = d;
  for (int32_t i = 1; i < ndim; ++i)
    for (int32_t j = i; j > 0 && llabs(strides[order[j - 1]]) < llabs(strides[order[j]]); --j) {
      const int32_t tmp = order[j]; order[j] = order[j - 1]; order[j - 1] = tmp;
    }
  int64_t count = 1;
  for (int32_t d = 0; d < ndim; ++d) count *= shape[d];
  int64_t *want = tfx_xmalloc((size_t)(count > 0 ? count : 1) * 8);
  int64_t nz = 0;
  for (int64_t pos = 0; pos < count; ++pos) {
    int64_t r = pos, off = offset;
    for (int32_t k = ndim - 1; k >= 0; --k) {
      const int32_t d = order[k];
      off += (r % shape[d]) * strides[d];
      r /= shape[d];
    }
    if (host_nonzero(parent + off * (int64_t)sz, t)) want[nz++] = pos;
  }
  const int64_t cap_bytes = (capacity + 4) * 8;
  int64_t *poison = tfx_xmalloc((size_t)cap_bytes);
  memset(poison, 0x77, (size_t)cap_bytes);
  int64_t *didx = tfx_upload(ctx, poison, (size_t)cap_bytes);
  akx_array idx = akx_vector(didx, AKX_INT64, capacity);
  int64_t got_count = -5;
  akx_status st;
  if (count_where == AKX_DEVICE) {
    /* The count in device memory (poisoned first): written whatever the capacity, status SUCCESS. */
    int64_t *dcount = tfx_upload(ctx, &got_count, sizeof got_count);
    st = akx_findall_where(ctx, &src, &idx, dcount, AKX_DEVICE);
    tfx_to_host(ctx, &got_count, dcount, sizeof got_count);
    tfx_free(ctx, dcount);
    cr_assert_eq(st, AKX_SUCCESS, "%s (count on the device): %s (%s)", akx_dtype_name(t), akx_status_string(st),
                 akx_last_error());
  } else {
    st = count_where == AKX_HOST ? akx_findall(ctx, &src, &idx, &got_count)
                                 : akx_findall_where(ctx, &src, &idx, &got_count, AKX_HOST);
  }
  /* The status first: a failed call (a sim check, a launch) must read as itself, not as a
   * wrong count. */
  if (count_where == AKX_DEVICE) {
  } else if (nz > capacity)
    cr_assert_eq(st, AKX_ERROR_OUTPUT_TOO_SMALL, "%s: %s (%s)", akx_dtype_name(t),
                 akx_status_string(st), akx_last_error());
  else
    cr_assert_eq(st, AKX_SUCCESS, "%s: %s (%s)", akx_dtype_name(t), akx_status_string(st),
                 akx_last_error());
  cr_assert_eq(got_count, nz, "%s: count %lld, expected %lld", akx_dtype_name(t), (long long)got_count,
               (long long)nz);
  int64_t *got = tfx_xmalloc((size_t)cap_bytes);
  tfx_to_host(ctx, got, didx, (size_t)cap_bytes);
  const int64_t written = nz < capacity ? nz : capacity;
  for (int64_t i = 0; i < written; ++i)
    cr_assert_eq(got[i], want[i], "%s: indices[%lld] = %lld, expected %lld", akx_dtype_name(t),
                 (long long)i, (long long)got[i], (long long)want[i]);
  for (int64_t i = written; i < capacity + 4; ++i)
    cr_assert_eq(got[i], poison[i], "%s: indices[%lld] written past the count", akx_dtype_name(t),
                 (long long)i);
  tfx_free(ctx, dev);
  tfx_free(ctx, didx);
  free(want);
  free(poison);
  free(got);
}

static void check_vector(akx_dtype t, const unsigned char *data, int64_t n, int64_t capacity) {
  const int64_t shape[1] = {n}, strides[1] = {1};
  check(t, data, n, 0, 1, shape, strides, capacity);
}

/* n elements of t, each nonzero with probability density/1000 (a nonzero of its own kind:
 * NaN, -0.0 as zero, a bool byte of 2). */
static unsigned char *fill(akx_dtype t, int64_t n, int density, uint64_t seed) {
  const size_t sz = akx_dtype_size(t);
  unsigned char *b = tfx_xmalloc((size_t)(n > 0 ? n : 1) * sz);
  memset(b, 0, (size_t)(n > 0 ? n : 1) * sz);
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t r = ref_rand(seed, (uint64_t)i);
    unsigned char *p = b + i * (int64_t)sz;
    if ((int)(r % 1000) >= density) {
      if (ref_is_float(t) && (r >> 20) % 4 == 0) ref_store(p, ref_real(t, -0.0L)); /* still zero */
      continue;
    }
    if (t == AKX_BOOL) *p = (unsigned char)(1 + (r >> 12) % 3);
    else if (ref_is_complex(t)) ref_store(p, (r >> 12) % 2 ? ref_cplx(t, 0, 1.5L) : ref_cplx(t, -2, 0));
    else if (ref_is_float(t)) ref_store(p, (r >> 12) % 7 == 0 ? ref_nan(t) : ref_real(t, 0.25L));
    else ref_store(p, ref_int(t, (int64_t)(1 + (r >> 12) % 200)));
  }
  return b;
}

Test(findall, empty_all_zero_all_nonzero) {
  unsigned char *z = fill(AKX_FLOAT32, 5000, 0, 1);
  check_vector(AKX_FLOAT32, z, 0, 8);
  check_vector(AKX_FLOAT32, z, 5000, 8);
  free(z);
  unsigned char *all = fill(AKX_INT32, 5000, 1000, 2);
  check_vector(AKX_INT32, all, 5000, 5000);
  free(all);
}

Test(findall, every_dtype_random_densities) {
  const akx_dtype ts[] = {AKX_BOOL,    AKX_INT8,    AKX_UINT8,    AKX_INT16,   AKX_UINT16,
                          AKX_INT32,   AKX_UINT32,  AKX_INT64,    AKX_UINT64,  AKX_FLOAT16,
                          AKX_BFLOAT16, AKX_FLOAT32, AKX_FLOAT64, AKX_COMPLEX64, AKX_COMPLEX128};
  const int densities[] = {1, 50, 500, 999};
  for (int i = 0; i < 15; ++i)
    for (int d = 0; d < 4; ++d) {
      const int64_t n = 4096 * (1 + d) + 37 * i;
      unsigned char *b = fill(ts[i], n, densities[d], (uint64_t)(i * 10 + d));
      check_vector(ts[i], b, n, n);
      free(b);
    }
}

Test(findall, capacity_too_small) {
  unsigned char *b = fill(AKX_UINT8, 20000, 300, 5);
  check_vector(AKX_UINT8, b, 20000, 17);
  check_vector(AKX_UINT8, b, 20000, 0);
  free(b);
}

Test(findall, strided_and_nd_memory_order) {
  const int64_t parent_n = 60 * 50;
  unsigned char *b = fill(AKX_FLOAT64, parent_n, 400, 7);
  /* a row-major {60, 50}, its column-major twin, a step-2 view backwards, a 3-d view */
  const int64_t s2[2] = {60, 50}, c2[2] = {50, 1}, f2[2] = {1, 60};
  check(AKX_FLOAT64, b, parent_n, 0, 2, s2, c2, parent_n);
  check(AKX_FLOAT64, b, parent_n, 0, 2, s2, f2, parent_n);
  const int64_t s1[1] = {1000}, st1[1] = {-3};
  check(AKX_FLOAT64, b, parent_n, 2999, 1, s1, st1, 1000);
  const int64_t s3[3] = {4, 5, 6}, st3[3] = {-600, 2, 60};
  check(AKX_FLOAT64, b, parent_n, 2400, 3, s3, st3, 120);
  free(b);
}

Test(findall, million_bytes) {
  unsigned char *b = fill(AKX_INT8, 1000000, 100, 9);
  check_vector(AKX_INT8, b, 1000000, 1000000);
  free(b);
}

/* akx_findall_workspace_size is the call's own plan: a caller-owned workspace of exactly the
 * size it gives runs the call (right count and positions, the context allocating nothing), one
 * byte less is refused before anything is written, and the size only grows with n. n = 0 needs
 * none: the smallest buffer akx_context_set_workspace takes (1 byte) serves it. */
Test(findall, workspace_query_covers_the_call) {
  const int64_t sizes[] = {0, 1, 2, 4095, 4097, 100003};
  size_t last = 0;
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k) {
    const int64_t n = sizes[k];
    unsigned char *host = fill(AKX_INT16, n, 300, 40 + k);
    int64_t *want = tfx_xmalloc((size_t)(n > 0 ? n : 1) * 8), nz = 0;
    for (int64_t i = 0; i < n; ++i)
      if (host_nonzero(host + i * 2, AKX_INT16)) want[nz++] = i;
    void *dev = tfx_upload(ctx, host, (size_t)(n > 0 ? n : 1) * 2);
    int64_t *didx = tfx_alloc(ctx, (size_t)(n > 0 ? n : 1) * 8);
    const akx_array src = akx_vector(dev, AKX_INT16, n), idx = akx_vector(didx, AKX_INT64, n);
    size_t bytes = 12345;
    cr_assert_eq(akx_findall_workspace_size(ctx, &src, &idx, &bytes), AKX_SUCCESS, "n %lld: %s",
                 (long long)n, akx_last_error());
    if (n == 0) cr_assert_eq(bytes, 0, "an empty src needs no workspace, the query gives %zu", bytes);
    else cr_assert_gt(bytes, 0, "n %lld: the query gives 0 bytes, but findall keeps its count there", (long long)n);
    cr_assert_geq(bytes, last, "n %lld: %zu bytes, fewer than %zu for a smaller n", (long long)n, bytes, last);
    last = bytes;
    akx_context_info_t before, after;
    for (int shortfall = n > 0; shortfall >= 0; --shortfall) {
      const size_t given = bytes - (size_t)shortfall > 0 ? bytes - (size_t)shortfall : 1;
      void *ws = tfx_alloc(ctx, given);
      cr_assert_eq(akx_context_set_workspace(ctx, ws, given), AKX_SUCCESS, "%s", akx_last_error());
      cr_assert_eq(akx_context_info(ctx, &before), AKX_SUCCESS);
      int64_t count = -5;
      const akx_status st = akx_findall(ctx, &src, &idx, &count);
      cr_assert_eq(st, shortfall ? AKX_ERROR_WORKSPACE_TOO_SMALL : AKX_SUCCESS, "n %lld, %zu of %zu bytes: %s (%s)",
                   (long long)n, given, bytes, akx_status_string(st), akx_last_error());
      cr_assert_eq(akx_context_info(ctx, &after), AKX_SUCCESS);
      cr_assert_eq(after.workspace_allocations, before.workspace_allocations,
                   "n %lld: the call allocated a workspace beside the caller's", (long long)n);
      if (shortfall) {
        cr_assert(strstr(akx_last_error(), "workspace"), "the sentence '%s' names no workspace", akx_last_error());
        cr_assert_eq(count, -5, "a refused call wrote *count = %lld", (long long)count);
      } else {
        cr_assert_eq(count, nz, "n %lld: count %lld, expected %lld", (long long)n, (long long)count, (long long)nz);
        int64_t *got = tfx_xmalloc((size_t)(nz > 0 ? nz : 1) * 8);
        if (nz > 0) tfx_to_host(ctx, got, didx, (size_t)nz * 8);
        for (int64_t i = 0; i < nz; ++i)
          cr_assert_eq(got[i], want[i], "n %lld: indices[%lld] = %lld, expected %lld", (long long)n,
                       (long long)i, (long long)got[i], (long long)want[i]);
        free(got);
      }
      cr_assert_eq(akx_context_set_workspace(ctx, NULL, 0), AKX_SUCCESS, "%s", akx_last_error());
      tfx_free(ctx, ws);
    }
    tfx_free(ctx, dev);
    tfx_free(ctx, didx);
    free(host);
    free(want);
  }
}

/* The query's bad arguments: akx_findall's checks (count aside: the query takes none), bytes
 * NULL, each an invalid argument whose sentence names the argument, *bytes unwritten. */
Test(findall, workspace_query_bad_arguments) {
  void *dev = tfx_alloc(ctx, 64 * 4);
  int64_t *didx = tfx_alloc(ctx, 64 * 8);
  const int64_t shape2[2] = {8, 8};
  const akx_array src = akx_vector(dev, AKX_FLOAT32, 64), idx = akx_vector(didx, AKX_INT64, 64);
  const akx_array idx32 = akx_vector(didx, AKX_INT32, 64), idx2d = akx_array_c(didx, AKX_INT64, 2, shape2);
  akx_array src9 = src, idx_every_other = akx_vector(didx, AKX_INT64, 32);
  src9.ndim = 9;
  idx_every_other.strides[0] = 2;
  const struct {
    int with_ctx;
    const akx_array *src, *indices;
    int null_bytes;
    const char *name, *value; /* what the sentence must name */
  } rows[] = {
      {0, &src, &idx, 0, "ctx", "NULL"},
      {0, NULL, &idx, 0, "ctx", "NULL"}, /* ctx first, as akx_findall */
      {1, NULL, &idx, 0, "src", "NULL"},
      {1, &src9, &idx, 0, "src->ndim", "9"},
      {1, &src, NULL, 0, "indices", "NULL"},
      {1, &src, &idx32, 0, "indices->dtype", "int32"},
      {1, &src, &idx2d, 0, "indices->ndim", "2"},
      {1, &src, &idx_every_other, 0, "indices->strides[0]", "2"},
      {1, &src, &idx, 1, "bytes", "NULL"},
  };
  for (size_t r = 0; r < sizeof rows / sizeof rows[0]; ++r) {
    size_t bytes = 777;
    akx_set_last_error(AKX_SUCCESS, "stale");
    const akx_status st = akx_findall_workspace_size(rows[r].with_ctx ? ctx : NULL, rows[r].src, rows[r].indices,
                                                     rows[r].null_bytes ? NULL : &bytes);
    cr_assert_eq(st, AKX_ERROR_INVALID_ARGUMENT, "row %zu (%s): %s (%s)", r, rows[r].name, akx_status_string(st),
                 akx_last_error());
    cr_assert(strstr(akx_last_error(), rows[r].name) && strstr(akx_last_error(), rows[r].value),
              "row %zu: the sentence '%s' does not name %s = %s", r, akx_last_error(), rows[r].name, rows[r].value);
    cr_assert_eq(bytes, 777, "row %zu: a refused query wrote *bytes = %zu", r, bytes);
  }
  tfx_free(ctx, dev);
  tfx_free(ctx, didx);
}

/* akx_array_memory_order (akx_layer.h) is the order the positions above count in: the test's
 * own reference (tests/support/mem_order.h) over C, Fortran, permuted, negative, tied and
 * broadcast (stride 0) layouts. */
Test(findall, memory_order_is_the_public_rule) {
  static const struct {
    int32_t ndim;
    int64_t shape[4], strides[4];
  } cases[] = {
      {0, {0}, {0}},
      {1, {7}, {-3}},
      {3, {2, 3, 4}, {12, 4, 1}},
      {3, {2, 3, 4}, {1, 2, 6}},
      {3, {2, 3, 4}, {4, -8, 1}},
      {3, {5, 1, 6}, {1, 1, 5}}, /* a tie: the later dim inner */
      {4, {2, 2, 2, 2}, {0, 4, 0, 1}},
      {4, {3, 4, 5, 6}, {-30, 1, 6, -120}},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    akx_array a;
    memset(&a, 0, sizeof a);
    a.dtype = AKX_FLOAT32;
    a.ndim = cases[c].ndim;
    memcpy(a.shape, cases[c].shape, sizeof cases[c].shape);
    memcpy(a.strides, cases[c].strides, sizeof cases[c].strides);
    int32_t got[AKX_MAX_DIMS], want[AKX_MAX_DIMS];
    akx_array_memory_order(&a, got);
    tmo_order(a.ndim, NULL, a.strides, want);
    for (int32_t k = 0; k < a.ndim; k++)
      cr_assert_eq(got[k], want[k], "case %zu: order[%d] is %d, expected %d", c, (int)k, (int)got[k], (int)want[k]);
  }
}

/* ---- akx_findall_where -------------------------------------------------------------------- */

/* Every dtype and density with the count in device memory and through akx_findall_where's
 * AKX_HOST: the same positions and totals as akx_findall; a capacity too small writes exactly
 * the capacity (the poison after it kept) and the total still reaches the device. */
Test(findall, where_every_dtype_both_sides) {
  const akx_dtype ts[] = {AKX_BOOL,    AKX_INT8,    AKX_UINT8,    AKX_INT16,   AKX_UINT16,
                          AKX_INT32,   AKX_UINT32,  AKX_INT64,    AKX_UINT64,  AKX_FLOAT16,
                          AKX_BFLOAT16, AKX_FLOAT32, AKX_FLOAT64, AKX_COMPLEX64, AKX_COMPLEX128};
  const int wheres[] = {AKX_DEVICE, -1};
  for (int w = 0; w < 2; ++w) {
    count_where = wheres[w];
    for (int i = 0; i < 15; ++i) {
      const int64_t n = 3000 + 61 * i;
      unsigned char *b = fill(ts[i], n, i % 2 ? 500 : 20, (uint64_t)(700 + i));
      check_vector(ts[i], b, n, n);
      check_vector(ts[i], b, n, 7);
      check_vector(ts[i], b, n, 0);
      free(b);
    }
  }
  count_where = AKX_HOST;
}

/* An empty source still writes its total (0) to the device; strided and N-d views keep
 * akx_findall's memory order. */
Test(findall, where_device_empty_and_strided) {
  count_where = AKX_DEVICE;
  unsigned char *b = fill(AKX_FLOAT64, 4000, 300, 9);
  check_vector(AKX_FLOAT64, b, 0, 4);
  const int64_t shape[2] = {30, 40}, strides[2] = {-1, 60};
  check(AKX_FLOAT64, b, 4000, 29, 2, shape, strides, 1200);
  const int64_t shape1[1] = {1000}, strides1[1] = {-3};
  check(AKX_FLOAT64, b, 4000, 3999, 1, shape1, strides1, 500);
  free(b);
  count_where = AKX_HOST;
}

/* The count's own refusals, each before anything is written: NULL, a where out of range, a
 * host pointer or a misaligned one for AKX_DEVICE, a device count inside indices or src. */
Test(findall, where_bad_counts) {
  const int64_t n = 100;
  unsigned char *b = fill(AKX_INT32, n, 500, 3);
  void *dsrc = tfx_upload(ctx, b, (size_t)n * 4);
  int64_t *didx = tfx_alloc(ctx, (size_t)(n + 2) * 8);
  akx_array src = akx_vector(dsrc, AKX_INT32, n), idx = akx_vector(didx, AKX_INT64, n);
  int64_t host_count = -3;
  struct {
    int64_t *count;
    int where;
    const char *says;
  } rows[] = {
      {NULL, AKX_DEVICE, "count is NULL"},
      {&host_count, 7, "where is 7"},
      {&host_count, AKX_DEVICE, "not 1 int64 of this context's device memory"},
      {(int64_t *)((char *)didx + (n + 1) * 8 - 4), AKX_DEVICE, "not aligned"},
      {didx + 3, AKX_DEVICE, "overlaps indices"},
      {(int64_t *)dsrc + 2, AKX_DEVICE, "overlaps src"},
  };
  for (size_t r = 0; r < sizeof rows / sizeof rows[0]; ++r) {
    akx_set_last_error(AKX_ERROR_INTERNAL, "stale");
    const akx_status st = akx_findall_where(ctx, &src, &idx, rows[r].count, (akx_where)rows[r].where);
    cr_expect_eq(st, AKX_ERROR_INVALID_ARGUMENT, "row %zu: %s", r, akx_status_string(st));
    cr_expect(strstr(akx_last_error(), rows[r].says) != NULL, "row %zu: \"%s\" does not say \"%s\"", r,
              akx_last_error(), rows[r].says);
  }
  cr_expect_eq(host_count, -3, "a refused call wrote the host count");
  tfx_free(ctx, dsrc);
  tfx_free(ctx, didx);
  free(b);
}
