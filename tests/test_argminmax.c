/* AKX_OP_ARGMIN and AKX_OP_ARGMAX against a host reference with numpy's semantics (argmin and
 * argmax: ties go to the first position, a NaN wins, the first NaN; positions in memory order,
 * as akx_findall numbers elements), for every real dtype:
 * - akx_mapreduce of vectors of 1, 2, 33, 1000 and 65537 elements whose extreme comes twice and
 *   late, with NaNs, with 64-bit neighbours a double could not tell apart, and of a strided
 *   Fortran-order view; the 16-byte result (the index at offset 0, the value at offset 8 in
 *   src's dtype), to the host and to the device;
 * - akx_reduce_dims along each dim of a 3-d C-order and Fortran-order array, into an int64 dst
 *   (positions along the reduced dim) and into a dst of src's dtype (the values), and over all
 *   dims into one int64 (the memory-order position);
 * - signed zeros tie (the first wins, with its own sign);
 * - refusals: an empty source (numpy raises: no answer without init), complex sources, scans,
 *   and a map other than IDENTITY. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "akx.h"
#include "fixture.h"
#include "mem_order.h"
#include "views.h"

static akx_context *ctx;
static void setup(void) { ctx = tfx_open(); }
static void teardown(void) { tfx_close(ctx); }
TestSuite(argminmax, .init = setup, .fini = teardown, .timeout = 600);

static const akx_dtype REAL[] = {AKX_BOOL,   AKX_INT8,   AKX_UINT8,   AKX_INT16,   AKX_UINT16,
                                 AKX_INT32,  AKX_UINT32, AKX_INT64,   AKX_UINT64,  AKX_FLOAT16,
                                 AKX_BFLOAT16, AKX_FLOAT32, AKX_FLOAT64};
enum { NREAL = sizeof REAL / sizeof REAL[0] };
static const akx_op OPS[2] = {AKX_OP_ARGMIN, AKX_OP_ARGMAX};

static const char *op_name(akx_op op) { return op == AKX_OP_ARGMIN ? "ARGMIN" : "ARGMAX"; }

/* ---- the host reference -------------------------------------------------------------------- */

static int is_nan(const void *p, akx_dtype t) { return ref_is_float(t) && isnan(ref_load(p, t).re); }

/* -1, 0, 1 as a < b, a == b, a > b (neither a NaN): integers exactly, floats as long double
 * (every float16..float64 value is exact there). */
static int compare(const void *a, const void *b, akx_dtype t) {
  const ref_val x = ref_load(a, t), y = ref_load(b, t);
  if (ref_is_float(t)) return (x.re > y.re) - (x.re < y.re);
  if (ref_is_sint(t)) return ((int64_t)x.i > (int64_t)y.i) - ((int64_t)x.i < (int64_t)y.i);
  return (x.i > y.i) - (x.i < y.i); /* unsigned, bool */
}

/* Does the element at p (position i) beat the best so far (bp, position bi; bi < 0: none)? */
static int beats(akx_op op, const void *p, int64_t i, const void *bp, int64_t bi, akx_dtype t) {
  if (bi < 0) return 1;
  const int n = is_nan(p, t), bn = is_nan(bp, t);
  if (n || bn) return n && bn ? i < bi : n;
  const int c = compare(p, bp, t);
  if (c != 0) return op == AKX_OP_ARGMAX ? c > 0 : c < 0;
  return i < bi;
}

/* numpy's argmin/argmax of a whole (host) view, positions in memory order; -1 when empty. */
static int64_t host_arg(akx_op op, const akx_array *v) {
  const int64_t n = tvw_count(v);
  int64_t best = -1, idx[AKX_MAX_DIMS];
  const void *bp = NULL;
  for (int64_t pos = 0; pos < n; ++pos) {
    tmo_index(v->ndim, v->shape, v->strides, pos, idx);
    const void *p = tvw_at(v, idx);
    if (beats(op, p, pos, bp, best, v->dtype)) best = pos, bp = p;
  }
  return best;
}

/* ---- data ----------------------------------------------------------------------------------- */

static void put_int(void *buf, akx_dtype t, int64_t k, int64_t v) { ref_store_at(buf, k, ref_int(t, v)); }

/* A vector for op: values from a small set (ties everywhere), the extreme twice and late (2/3
 * of the way and last), the other extreme twice (1/3 and 5/6), for 64-bit integers a neighbour
 * of the extreme earlier on (a double would tie them), and with `nans` two NaNs (3/4 and 7/8). */
static void fill_vector(void *buf, akx_dtype t, int64_t n, akx_op op, int nans) {
  const int sgn = op == AKX_OP_ARGMAX ? 1 : -1;
  for (int64_t k = 0; k < n; ++k) {
    const uint64_t r = ref_rand(3, (uint64_t)k);
    if (t == AKX_BOOL) put_int(buf, t, k, op == AKX_OP_ARGMAX ? 0 : 1);
    else if (ref_is_uint(t)) put_int(buf, t, k, 1 + (int64_t)(r % 20));
    else if (ref_is_sint(t)) put_int(buf, t, k, (int64_t)(r % 21) - 10);
    else ref_store_at(buf, k, ref_real(t, (long double)((int64_t)(r % 21) - 10) * 0.25L));
  }
  if (n == 0) return;
  const int64_t best[2] = {n * 2 / 3, n - 1}, other[2] = {n / 3, n * 5 / 6};
  for (int j = 0; j < 2; ++j) {
    if (t == AKX_BOOL) {
      put_int(buf, t, best[j], op == AKX_OP_ARGMAX ? 1 : 0);
    } else if (ref_is_float(t)) {
      ref_store_at(buf, other[j], ref_real(t, -sgn * 30.0L));
      ref_store_at(buf, best[j], ref_real(t, sgn * 30.0L));
    } else if (ref_is_uint(t)) {
      const uint64_t hi = t == AKX_UINT64 ? (UINT64_C(1) << 63) + 1 : 100;
      ref_store_at(buf, other[j], ref_uint(t, sgn > 0 ? 0 : hi));
      ref_store_at(buf, best[j], ref_uint(t, sgn > 0 ? hi : 0));
    } else {
      const int64_t hi = t == AKX_INT64 ? (INT64_C(1) << 62) + 1 : 100;
      put_int(buf, t, other[j], -sgn * hi);
      put_int(buf, t, best[j], sgn * hi);
    }
  }
  if (n >= 12 && (t == AKX_INT64 || t == AKX_UINT64)) { /* 2^62 (2^63) beside 2^62 + 1 (2^63 + 1) */
    if (t == AKX_INT64) put_int(buf, t, n / 6, sgn * (INT64_C(1) << 62));
    else ref_store_at(buf, n / 6, ref_uint(t, sgn > 0 ? UINT64_C(1) << 63 : 1));
  }
  if (nans && ref_is_float(t)) {
    ref_store_at(buf, n * 3 / 4, ref_nan(t));
    ref_store_at(buf, n * 7 / 8, ref_nan(t));
  }
}

/* An array for reductions along dims: 5 values (bool: 2) so that every line has ties, a NaN in
 * about one element of 17 (floats) so that some lines have one, some two, some none. */
static void fill_lines(void *buf, akx_dtype t, int64_t n) {
  for (int64_t k = 0; k < n; ++k) {
    const uint64_t r = ref_rand(5, (uint64_t)k);
    if (t == AKX_BOOL) put_int(buf, t, k, (int64_t)(r % 2));
    else if (ref_is_float(t)) {
      if (ref_rand(6, (uint64_t)k) % 17 == 0) ref_store_at(buf, k, ref_nan(t));
      else ref_store_at(buf, k, ref_real(t, (long double)((int64_t)(r % 5) - 2)));
    } else put_int(buf, t, k, (int64_t)(r % 5) + (ref_is_uint(t) ? 0 : -2));
  }
}

/* ---- akx_mapreduce -------------------------------------------------------------------------- */

/* The 16-byte result of ARGMIN/ARGMAX of src's view: index at offset 0, value (src's dtype) at
 * offset 8, to the host and to the device; checked against the host reference. */
static void check_mapreduce(akx_op op, const tvw_pair *p, const char *what) {
  const akx_dtype t = p->host.dtype;
  const size_t sz = ref_size(t);
  const int64_t want = host_arg(op, &p->host);
  unsigned char host[32], dev_back[16];
  memset(host, 0xA5, sizeof host);
  akx_status st = akx_mapreduce(ctx, &p->dev, AKX_MAP_IDENTITY, op, NULL, host, AKX_HOST);
  cr_assert_eq(st, AKX_SUCCESS, "%s %s %s: %s (%s)", op_name(op), ref_name(t), what,
               akx_status_string(st), akx_last_error());
  for (int k = 16; k < 32; ++k)
    cr_assert_eq(host[k], 0xA5, "%s %s %s: byte %d past the 16-byte result written", op_name(op),
                 ref_name(t), what, k);
  int64_t index;
  memcpy(&index, host, 8);
  cr_assert_eq(index, want, "%s %s %s: index %lld, numpy %lld", op_name(op), ref_name(t), what,
               (long long)index, (long long)want);
  int64_t idx[AKX_MAX_DIMS];
  tmo_index(p->host.ndim, p->host.shape, p->host.strides, want, idx);
  const void *elem = tvw_at(&p->host, idx);
  if (is_nan(elem, t))
    cr_assert(is_nan(host + 8, t), "%s %s %s: the value is not the NaN", op_name(op), ref_name(t), what);
  else
    cr_assert(memcmp(host + 8, elem, sz) == 0, "%s %s %s: the value at offset 8 is not element %lld's",
              op_name(op), ref_name(t), what, (long long)want);
  void *dev = tfx_alloc(ctx, 16);
  st = akx_mapreduce(ctx, &p->dev, AKX_MAP_IDENTITY, op, NULL, dev, AKX_DEVICE);
  cr_assert_eq(st, AKX_SUCCESS, "%s %s %s (device result): %s", op_name(op), ref_name(t), what,
               akx_last_error());
  tfx_to_host(ctx, dev_back, dev, 16);
  tfx_free(ctx, dev);
  cr_assert(memcmp(dev_back, host, 8 + sz) == 0, "%s %s %s: the device result differs from the host's",
            op_name(op), ref_name(t), what);
}

Test(argminmax, mapreduce_vectors_every_real_dtype) {
  const int64_t sizes[] = {1, 2, 33, 1000, 65537};
  for (int ti = 0; ti < NREAL; ++ti)
    for (int o = 0; o < 2; ++o)
      for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
        for (int nans = 0; nans <= ref_is_float(REAL[ti]); ++nans) {
          const akx_dtype t = REAL[ti];
          const int64_t n = sizes[s];
          void *host = tfx_xmalloc((size_t)n * ref_size(t));
          fill_vector(host, t, n, OPS[o], nans);
          const tfx_layout L = tfx_layout_vector(n);
          tvw_pair p = tvw_upload(ctx, t, host, &L);
          char what[64];
          snprintf(what, sizeof what, "n %lld%s", (long long)n, nans ? " with NaNs" : "");
          check_mapreduce(OPS[o], &p, what);
          tvw_free(ctx, &p);
          free(host);
        }
}

/* A 7 x 11 x 13 Fortran array seen with dim 1 backwards and every other element of dim 2: the
 * positions are memory order's (dim 2 outer, dim 1 walked backwards, dim 0 inner). */
Test(argminmax, mapreduce_strided_fortran_view) {
  tfx_layout L = tvw_dense(3, (const int64_t[]){7, 11, 13}, 1);
  L.offset = 10 * 7;
  L.strides[1] = -7;
  L.shape[2] = 7;
  L.strides[2] = 2 * 77;
  for (int ti = 0; ti < NREAL; ++ti)
    for (int o = 0; o < 2; ++o) {
      const akx_dtype t = REAL[ti];
      void *host = tfx_xmalloc((size_t)L.parent_n * ref_size(t));
      fill_vector(host, t, L.parent_n, OPS[o], 1);
      tvw_pair p = tvw_upload(ctx, t, host, &L);
      check_mapreduce(OPS[o], &p, "7 x 11 x 7 view, strides {1, -7, 154}");
      tvw_free(ctx, &p);
      free(host);
    }
}

Test(argminmax, signed_zeros_tie_first_wins) {
  const akx_dtype floats[4] = {AKX_FLOAT16, AKX_BFLOAT16, AKX_FLOAT32, AKX_FLOAT64};
  for (int f = 0; f < 4; ++f)
    for (int first_negative = 0; first_negative < 2; ++first_negative) {
      const akx_dtype t = floats[f];
      const int64_t n = 300;
      void *host = tfx_xmalloc((size_t)n * ref_size(t));
      for (int64_t k = 0; k < n; ++k) /* -0.0 and +0.0, alternating in runs; the first as asked */
        ref_store_at(host, k, ref_real(t, ((k / 3) % 2 == 0) == first_negative ? -0.0L : 0.0L));
      const tfx_layout L = tfx_layout_vector(n);
      tvw_pair p = tvw_upload(ctx, t, host, &L);
      for (int o = 0; o < 2; ++o) check_mapreduce(OPS[o], &p, first_negative ? "-0.0 first" : "+0.0 first");
      tvw_free(ctx, &p);
      free(host);
    }
}

/* ---- akx_reduce_dims ------------------------------------------------------------------------ */

/* Runs ARGMIN/ARGMAX of src into a fresh C-order dst of dst_t and dst_shape; returns its bytes. */
static unsigned char *reduce(akx_op op, const akx_array *src, akx_dtype dst_t, const int64_t *dst_shape) {
  akx_array dst = tvw_dst(ctx, dst_t, src->ndim, dst_shape, 0xA5);
  const akx_status st = akx_reduce_dims(ctx, &dst, src, AKX_MAP_IDENTITY, op, NULL);
  cr_assert_eq(st, AKX_SUCCESS, "%s %s into %s: %s (%s)", op_name(op), ref_name(src->dtype),
               ref_name(dst_t), akx_status_string(st), akx_last_error());
  const size_t bytes = (size_t)tvw_count(&dst) * ref_size(dst_t);
  unsigned char *out = tfx_xmalloc(bytes);
  tfx_to_host(ctx, out, dst.data, bytes);
  tfx_free(ctx, dst.data);
  return out;
}

/* Along one dim: per output (C order over dst_shape), the position along dim and its element. */
static void host_along(akx_op op, const akx_array *v, int32_t dim, int64_t *best, const void **bp) {
  int64_t dst_shape[AKX_MAX_DIMS], idx[AKX_MAX_DIMS] = {0};
  memcpy(dst_shape, v->shape, sizeof(int64_t) * (size_t)v->ndim);
  dst_shape[dim] = 1;
  int64_t outs = 1;
  for (int32_t d = 0; d < v->ndim; ++d) outs *= dst_shape[d];
  for (int64_t o = 0; o < outs; ++o) best[o] = -1, bp[o] = NULL;
  do {
    int64_t o = 0;
    for (int32_t d = 0; d < v->ndim; ++d) o = o * dst_shape[d] + (d == dim ? 0 : idx[d]);
    const void *p = tvw_at(v, idx);
    if (beats(op, p, idx[dim], bp[o], best[o], v->dtype)) best[o] = idx[dim], bp[o] = p;
  } while (tmo_next(v->ndim, v->shape, idx));
}

/* Each (op, source dtype, dst dtype) is a unit compiled at run time: five dtypes of the
 * kinds (bool, narrow and 64-bit integers, a 2-byte float and float32) keep the suite's
 * compiles near a minute; akx_mapreduce above covers every real dtype. */
Test(argminmax, reduce_dims_each_dim_c_and_fortran) {
  const int64_t shape[3] = {7, 33, 20}, n = 7 * 33 * 20;
  static const akx_dtype kinds[] = {AKX_BOOL, AKX_INT8, AKX_UINT64, AKX_BFLOAT16, AKX_FLOAT32};
  for (size_t ti = 0; ti < sizeof kinds / sizeof kinds[0]; ++ti) {
    const akx_dtype t = kinds[ti];
    const size_t sz = ref_size(t);
    void *host = tfx_xmalloc((size_t)n * sz);
    fill_lines(host, t, n);
    for (int fortran = 0; fortran < 2; ++fortran) {
      const tfx_layout L = tvw_dense(3, shape, fortran);
      tvw_pair p = tvw_upload(ctx, t, host, &L);
      for (int o = 0; o < 2; ++o) {
        const akx_op op = OPS[o];
        for (int32_t dim = 0; dim < 3; ++dim) {
          int64_t dst_shape[3] = {shape[0], shape[1], shape[2]};
          dst_shape[dim] = 1;
          const int64_t outs = n / shape[dim];
          int64_t *best = tfx_xmalloc((size_t)outs * 8);
          const void **bp = tfx_xmalloc((size_t)outs * sizeof *bp);
          host_along(op, &p.host, dim, best, bp);
          int64_t *pos = (int64_t *)reduce(op, &p.dev, AKX_INT64, dst_shape);
          for (int64_t k = 0; k < outs; ++k)
            cr_assert_eq(pos[k], best[k], "%s %s %s order dim %d, output %lld: position %lld, numpy %lld",
                         op_name(op), ref_name(t), fortran ? "Fortran" : "C", dim, (long long)k,
                         (long long)pos[k], (long long)best[k]);
          free(pos);
          if (t != AKX_INT64) { /* an int64 dst is the position's: int64's values have no dst */
            unsigned char *val = reduce(op, &p.dev, t, dst_shape);
            for (int64_t k = 0; k < outs; ++k)
              cr_assert(is_nan(bp[k], t) ? is_nan(val + k * sz, t) : memcmp(val + k * sz, bp[k], sz) == 0,
                        "%s %s %s order dim %d, output %lld: the value is not the element at %lld",
                        op_name(op), ref_name(t), fortran ? "Fortran" : "C", dim, (long long)k,
                        (long long)best[k]);
            free(val);
          }
          free(best), free(bp);
        }
        /* Every dim reduced: one position, in memory order (akx_mapreduce's). */
        const int64_t one[3] = {1, 1, 1};
        int64_t *pos = (int64_t *)reduce(op, &p.dev, AKX_INT64, one);
        const int64_t want = host_arg(op, &p.host);
        cr_assert_eq(*pos, want, "%s %s %s order, all dims: %lld, memory order %lld", op_name(op),
                     ref_name(t), fortran ? "Fortran" : "C", (long long)*pos, (long long)want);
        free(pos);
      }
      tvw_free(ctx, &p);
    }
    free(host);
  }
}

/* ---- refusals ----------------------------------------------------------------------------------- */

static void expect_refused(akx_status st, akx_status want, const char *what) {
  if (want == AKX_SUCCESS) /* any failure: include/akx.h says "refused", not which status */
    cr_assert(st == AKX_ERROR_UNSUPPORTED || st == AKX_ERROR_INVALID_ARGUMENT, "%s: %s (%s)", what,
              akx_status_string(st), akx_last_error());
  else
    cr_assert_eq(st, want, "%s: %s, want %s (%s)", what, akx_status_string(st), akx_status_string(want),
                 akx_last_error());
  cr_assert(akx_last_error()[0] != '\0', "%s: no sentence", what);
}

static void mapreduce_refused(const akx_array *src, akx_map map, akx_op op, akx_status want,
                              const char *what) {
  unsigned char result[32];
  memset(result, 0xA5, sizeof result);
  expect_refused(akx_mapreduce(ctx, src, map, op, NULL, result, AKX_HOST), want, what);
  for (size_t k = 0; k < sizeof result; ++k) cr_assert_eq(result[k], 0xA5, "%s: result written", what);
}

Test(argminmax, an_empty_source_has_no_answer) {
  unsigned char byte = 0;
  for (int ti = 0; ti < NREAL; ++ti)
    for (int o = 0; o < 2; ++o) {
      const akx_array v = akx_vector(tfx_upload(ctx, &byte, 1), REAL[ti], 0);
      char what[64];
      snprintf(what, sizeof what, "%s of an empty %s", op_name(OPS[o]), ref_name(REAL[ti]));
      mapreduce_refused(&v, AKX_MAP_IDENTITY, OPS[o], AKX_ERROR_INVALID_ARGUMENT, what);
      tfx_free(ctx, v.data);
    }
  /* Along an empty dim, into outputs that exist. */
  float host[1] = {0};
  akx_array src = akx_array_c(tfx_upload(ctx, host, sizeof host), AKX_FLOAT32, 2, (const int64_t[]){3, 0});
  akx_array dst = tvw_dst(ctx, AKX_INT64, 2, (const int64_t[]){3, 1}, 0xA5);
  expect_refused(akx_reduce_dims(ctx, &dst, &src, AKX_MAP_IDENTITY, AKX_OP_ARGMAX, NULL),
                 AKX_ERROR_INVALID_ARGUMENT, "ARGMAX along an empty dim");
  unsigned char back[24];
  tfx_to_host(ctx, back, dst.data, sizeof back);
  for (size_t k = 0; k < sizeof back; ++k) cr_assert_eq(back[k], 0xA5, "empty dim: dst written");
  tfx_free(ctx, dst.data);
  tfx_free(ctx, src.data);
}

Test(argminmax, complex_scans_and_maps_are_refused) {
  float host[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  void *dev = tfx_upload(ctx, host, sizeof host);
  const akx_array c64 = akx_vector(dev, AKX_COMPLEX64, 4), c128 = akx_vector(dev, AKX_COMPLEX128, 2),
                  f32 = akx_vector(dev, AKX_FLOAT32, 8);
  for (int o = 0; o < 2; ++o) {
    mapreduce_refused(&c64, AKX_MAP_IDENTITY, OPS[o], AKX_SUCCESS, "complex64 source");
    mapreduce_refused(&c128, AKX_MAP_IDENTITY, OPS[o], AKX_SUCCESS, "complex128 source");
    mapreduce_refused(&f32, AKX_MAP_ABS, OPS[o], AKX_SUCCESS, "map ABS");
    mapreduce_refused(&f32, AKX_MAP_SQUARE, OPS[o], AKX_SUCCESS, "map SQUARE");
    akx_array dst = tvw_dst(ctx, AKX_FLOAT32, 1, (const int64_t[]){8}, 0xA5);
    expect_refused(akx_scan(ctx, &dst, &f32, OPS[o], 0, NULL), AKX_SUCCESS, "a scan");
    akx_array idst = tvw_dst(ctx, AKX_INT64, 1, (const int64_t[]){8}, 0xA5);
    expect_refused(akx_scan(ctx, &idst, &f32, OPS[o], 0, NULL), AKX_SUCCESS, "a scan into int64");
    unsigned char back[64];
    tfx_to_host(ctx, back, dst.data, 32);
    tfx_to_host(ctx, back + 32, idst.data, 32);
    for (int k = 0; k < 64; ++k) cr_assert_eq(back[k], 0xA5, "a refused scan wrote dst");
    tfx_free(ctx, dst.data), tfx_free(ctx, idst.data);
    const int64_t one = 1;
    akx_array r = tvw_dst(ctx, AKX_INT64, 1, &one, 0xA5);
    expect_refused(akx_reduce_dims(ctx, &r, &c64, AKX_MAP_IDENTITY, OPS[o], NULL), AKX_SUCCESS,
                   "reduce_dims of complex64");
    expect_refused(akx_reduce_dims(ctx, &r, &f32, AKX_MAP_ABS, OPS[o], NULL), AKX_SUCCESS,
                   "reduce_dims with map ABS");
    tfx_to_host(ctx, back, r.data, 8);
    for (int k = 0; k < 8; ++k) cr_assert_eq(back[k], 0xA5, "a refused reduce_dims wrote dst");
    tfx_free(ctx, r.data);
  }
  tfx_free(ctx, dev);
}

Test(argminmax, info_gives_the_result_layout) {
  for (int o = 0; o < 2; ++o) {
    akx_user_op_info_t info;
    memset(&info, 0, sizeof info);
    cr_assert_eq(akx_user_op_info(ctx, OPS[o], &info), AKX_SUCCESS, "%s", akx_last_error());
    cr_assert(info.acc_size == 16 && info.acc_align == 8, "%s: size %zu align %zu, want 16 and 8",
              op_name(OPS[o]), info.acc_size, info.acc_align);
  }
}
