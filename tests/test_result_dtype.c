/* akx_mapreduce_result_dtype: the dtype akx_mapreduce writes, so that a caller sizes its
 * result (an int32 sum writes 8 bytes). For every source dtype, map and op, the query agrees
 * with the call: the same status, and on success the call writes exactly
 * akx_dtype_size(dtype) bytes of a host result and nothing past them. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include "fixture.h"

static akx_context *ctx;
static void setup(void) { ctx = tfx_open(); }
static void teardown(void) { tfx_close(ctx); }
TestSuite(result_dtype, .init = setup, .fini = teardown);

Test(result_dtype, named_cases) {
  static const struct {
    akx_dtype src;
    akx_map map;
    akx_op op;
    akx_dtype acc, want;
  } cases[] = {
      {AKX_INT32, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_DTYPE_AUTO, AKX_INT64},
      {AKX_UINT8, AKX_MAP_IDENTITY, AKX_OP_MUL, AKX_DTYPE_AUTO, AKX_UINT64},
      {AKX_INT32, AKX_MAP_IDENTITY, AKX_OP_MAX, AKX_DTYPE_AUTO, AKX_INT32},
      {AKX_FLOAT16, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_DTYPE_AUTO, AKX_FLOAT32},
      {AKX_FLOAT32, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_FLOAT64, AKX_FLOAT64},
      {AKX_COMPLEX64, AKX_MAP_ABS, AKX_OP_MAX, AKX_DTYPE_AUTO, AKX_FLOAT32},
      {AKX_FLOAT64, AKX_MAP_NONZERO, AKX_OP_ADD, AKX_DTYPE_AUTO, AKX_INT64},
      {AKX_FLOAT64, AKX_MAP_NONZERO, AKX_OP_OR, AKX_DTYPE_AUTO, AKX_BOOL},
      {AKX_BOOL, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_DTYPE_AUTO, AKX_INT64},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    const akx_array src = akx_vector(NULL, cases[i].src, 3); /* descriptor only: data is not read */
    akx_reduce_opts o = akx_reduce_opts_default();
    o.acc = cases[i].acc;
    akx_dtype got = (akx_dtype)99;
    cr_assert_eq(akx_mapreduce_result_dtype(&src, cases[i].map, cases[i].op, &o, &got), AKX_SUCCESS,
                 "case %zu: %s", i, akx_last_error());
    cr_assert_eq(got, cases[i].want, "case %zu: %s, expected %s", i, akx_dtype_name(got),
                 akx_dtype_name(cases[i].want));
  }
}

Test(result_dtype, refusals_match_the_call_and_write_nothing) {
  float *buf = tfx_alloc(ctx, 64);
  const akx_array f32 = akx_vector(buf, AKX_FLOAT32, 4);
  akx_array bad = f32;
  bad.ndim = 9;
  akx_reduce_opts o = akx_reduce_opts_default();
  o.acc = AKX_INT8; /* not an accumulator of float32 */
  const struct {
    const akx_array *src;
    akx_map map;
    akx_op op;
    const akx_reduce_opts *opts;
    const char *names;
  } rows[] = {
      {NULL, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, "src"},
      {&bad, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, "ndim"},
      {&f32, (akx_map)9, AKX_OP_ADD, NULL, "map"},
      {&f32, AKX_MAP_IDENTITY, (akx_op)77, NULL, "op"},
      {&f32, AKX_MAP_IDENTITY, AKX_OP_XOR, NULL, "XOR"},
      {&f32, AKX_MAP_IDENTITY, AKX_OP_ADD, &o, "opts->acc"},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i) {
    akx_dtype got = (akx_dtype)99;
    const akx_status q = akx_mapreduce_result_dtype(rows[i].src, rows[i].map, rows[i].op, rows[i].opts, &got);
    char qs[1024];
    snprintf(qs, sizeof qs, "%s", akx_last_error());
    double r = 0;
    const akx_status c = akx_mapreduce(ctx, rows[i].src, rows[i].map, rows[i].op, rows[i].opts, &r, AKX_HOST);
    cr_assert_neq(q, AKX_SUCCESS, "row %zu accepted", i);
    cr_assert_eq(q, c, "row %zu: query %d, call %d", i, (int)q, (int)c);
    cr_assert_str_eq(qs, akx_last_error(), "row %zu: the same sentence", i);
    cr_assert(strstr(qs, rows[i].names), "row %zu: \"%s\" names %s", i, qs, rows[i].names);
    cr_assert_eq((int)got, 99, "row %zu: dtype written on failure", i);
  }
  akx_dtype got;
  cr_assert_eq(akx_mapreduce_result_dtype(&f32, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, NULL), AKX_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(akx_last_error(), "dtype"), "%s", akx_last_error());
  /* an empty MIN without init: refused by both */
  const akx_array empty = akx_vector(buf, AKX_FLOAT32, 0);
  cr_assert_eq(akx_mapreduce_result_dtype(&empty, AKX_MAP_IDENTITY, AKX_OP_MIN, NULL, &got), AKX_ERROR_INVALID_ARGUMENT);
  tfx_free(ctx, buf);
}

/* Every (src, map, op) with the AUTO accumulator: the call writes exactly the query's size. */
Test(result_dtype, the_call_writes_that_many_bytes) {
  int checked = 0;
  for (int t = AKX_BOOL; t <= AKX_COMPLEX128; ++t) {
    const size_t sz = akx_dtype_size((akx_dtype)t);
    unsigned char host[64];
    memset(host, 0, sizeof host);
    host[0] = 1; /* a nonzero first element of every dtype (little-endian) */
    void *dev = tfx_upload(ctx, host, 4 * sz);
    const akx_array src = akx_vector(dev, (akx_dtype)t, 4);
    for (int m = 0; m < AKX_MAP_COUNT; ++m)
      for (int op = 0; op < AKX_OP_COUNT; ++op) {
        akx_dtype got = (akx_dtype)99;
        const akx_status q = akx_mapreduce_result_dtype(&src, (akx_map)m, (akx_op)op, NULL, &got);
        unsigned char res[64];
        memset(res, 0xA5, sizeof res);
        const akx_status c = akx_mapreduce(ctx, &src, (akx_map)m, (akx_op)op, NULL, res, AKX_HOST);
        cr_assert_eq(q, c, "%s map %d op %d: query %d, call %d (%s)", akx_dtype_name((akx_dtype)t), m, op,
                     (int)q, (int)c, akx_last_error());
        if (q != AKX_SUCCESS) continue;
        /* ARGMIN/ARGMAX write {int64_t index; value} (16 bytes), no dtype. */
        const size_t n = got == AKX_DTYPE_AUTO ? 16 : akx_dtype_size(got);
        cr_assert(n > 0 && n <= 16);
        for (size_t b = n; b < sizeof res; ++b)
          cr_assert_eq(res[b], 0xA5, "%s map %d op %d: byte %zu written past the %zu of %s",
                       akx_dtype_name((akx_dtype)t), m, op, b, n, akx_dtype_name(got));
        ++checked;
      }
    tfx_free(ctx, dev);
  }
  cr_assert_gt(checked, 100);
}
