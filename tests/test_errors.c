/* Bad input (include/akx.h's contract): each gets its documented status, a sentence in
 * akx_last_error() that names the argument at fault, and nothing is written (the result or
 * dst keeps a sentinel) or launched (the sim's launch counter does not move). */
#include <criterion/criterion.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akx_sim.h"
#include "fixture.h"
#include "reference.h"

#define SENT 0xC3u

typedef struct {
  akx_context *ctx;
  float *data;      /* 1000 float32 on the device */
  int64_t n;
  void *dres;       /* a device result / dst buffer, 64 bytes */
} env;

static env setup(void) {
  env e;
  e.ctx = tfx_open();
  e.n = 1000;
  float *h = tfx_xmalloc(1000 * 4);
  for (int i = 0; i < 1000; i++) h[i] = (float)(i % 17) - 8;
  e.data = tfx_upload(e.ctx, h, 1000 * 4);
  free(h);
  e.dres = tfx_alloc(e.ctx, 64);
  return e;
}

static void teardown(env *e) {
  tfx_free(e->ctx, e->dres);
  tfx_free(e->ctx, e->data);
  tfx_close(e->ctx);
}

static uint64_t launches(akx_context *ctx) {
  if (!ctx || !tfx_is_sim(ctx)) return 0;
  akx_sim_kernel_counters total;
  memset(&total, 0, sizeof total);
  if (akx_sim_counters_get(ctx, &total, NULL, 0, NULL) != AKX_SUCCESS) return 0;
  return total.launches;
}

/* case-insensitive: does the sentence contain any of the NULL-terminated words? */
static int names_any(const char *s, va_list ap) {
  char low[1024];
  size_t i = 0;
  for (; s[i] && i + 1 < sizeof low; i++) low[i] = (char)tolower((unsigned char)s[i]);
  low[i] = '\0';
  const char *w;
  while ((w = va_arg(ap, const char *)) != NULL)
    if (strstr(low, w)) return 1;
  return 0;
}

/* A refused call's status, and a sentence that names one of the arguments listed in `ap`. */
static void expect_status_and_sentence(akx_status s, akx_status want, const char *what, va_list ap) {
  const char *err = akx_last_error();
  char errcopy[1024];
  snprintf(errcopy, sizeof errcopy, "%s", err ? err : "(null)");
  cr_expect_eq(s, want, "%s: %s, expected %s (\"%s\")", what, akx_status_string(s),
               akx_status_string(want), errcopy);
  cr_expect(err && err[0], "%s: akx_last_error() is empty", what);
  cr_expect(err && names_any(err, ap), "%s: the sentence does not name the argument: \"%s\"",
            what, errcopy);
}

/* Calls akx_mapreduce with a sentinel-filled result (host or device) and checks status,
 * sentence (one of the words ...), nothing written, nothing launched. The result pointer
 * used is `result` when given (even NULL through use_null), else a fresh buffer. */
static void mr_expect(env *e, akx_context *ctx, const akx_array *src, akx_map m, akx_op op,
                      const akx_reduce_opts *o, akx_where where, int null_result,
                      akx_status want, const char *what, ...) {
  unsigned char host[64], before[64];
  memset(before, SENT, sizeof before);
  memcpy(host, before, sizeof host);
  tfx_to_device(e->ctx, e->dres, before, sizeof before);
  void *res = null_result ? NULL : (where == AKX_DEVICE ? e->dres : (void *)host);
  uint64_t l0 = launches(e->ctx);
  akx_status s = akx_mapreduce(ctx, src, m, op, o, res, where);
  va_list ap;
  va_start(ap, what);
  expect_status_and_sentence(s, want, what, ap);
  va_end(ap);
  cr_expect(memcmp(host, before, sizeof host) == 0, "%s: the host result was written", what);
  unsigned char dev[64];
  akx_synchronize(e->ctx);
  tfx_to_host(e->ctx, dev, e->dres, sizeof dev);
  cr_expect(memcmp(dev, before, sizeof dev) == 0, "%s: the device result was written", what);
  cr_expect_eq(launches(e->ctx), l0, "%s: a kernel was launched", what);
}

static void rd_expect(env *e, akx_context *ctx, const akx_array *dst, const akx_array *src,
                      akx_map m, akx_op op, const akx_reduce_opts *o, akx_status want,
                      const char *what, ...) {
  unsigned char before[64], dev[64];
  memset(before, SENT, sizeof before);
  tfx_to_device(e->ctx, e->dres, before, sizeof before);
  uint64_t l0 = launches(e->ctx);
  akx_status s = akx_reduce_dims(ctx, dst, src, m, op, o);
  va_list ap;
  va_start(ap, what);
  expect_status_and_sentence(s, want, what, ap);
  va_end(ap);
  akx_synchronize(e->ctx);
  tfx_to_host(e->ctx, dev, e->dres, sizeof dev);
  cr_expect(memcmp(dev, before, sizeof dev) == 0, "%s: dst was written", what);
  cr_expect_eq(launches(e->ctx), l0, "%s: a kernel was launched", what);
}

#define ID AKX_MAP_IDENTITY
#define INV AKX_ERROR_INVALID_ARGUMENT
#define UNS AKX_ERROR_UNSUPPORTED

/* ---- akx_mapreduce --------------------------------------------------------------------------- */

Test(errors, null_pointers) {
  env e = setup();
  akx_array v = akx_vector(e.data, AKX_FLOAT32, e.n);
  mr_expect(&e, NULL, &v, ID, AKX_OP_ADD, NULL, AKX_HOST, 0, INV, "NULL ctx", "ctx", "context",
            NULL);
  mr_expect(&e, e.ctx, NULL, ID, AKX_OP_ADD, NULL, AKX_HOST, 0, INV, "NULL src", "src", NULL);
  mr_expect(&e, e.ctx, &v, ID, AKX_OP_ADD, NULL, AKX_HOST, 1, INV, "NULL result (host)", "result",
            NULL);
  mr_expect(&e, e.ctx, &v, ID, AKX_OP_ADD, NULL, AKX_DEVICE, 1, INV, "NULL result (device)",
            "result", NULL);
  akx_array nd = akx_vector(NULL, AKX_FLOAT32, 5);
  mr_expect(&e, e.ctx, &nd, ID, AKX_OP_ADD, NULL, AKX_HOST, 0, INV, "NULL data, 5 elements",
            "data", "src", NULL);
  int64_t sh[2] = {3, 4};
  akx_array nd2 = akx_array_c(NULL, AKX_INT32, 2, sh);
  mr_expect(&e, e.ctx, &nd2, ID, AKX_OP_ADD, NULL, AKX_HOST, 0, INV, "NULL data, 3x4", "data",
            "src", NULL);
  teardown(&e);
}

Test(errors, ndim_and_shape) {
  env e = setup();
  akx_array v = akx_vector(e.data, AKX_FLOAT32, 10);
  v.ndim = -1;
  mr_expect(&e, e.ctx, &v, ID, AKX_OP_ADD, NULL, AKX_HOST, 0, INV, "ndim -1", "ndim", NULL);
  v.ndim = 9;
  mr_expect(&e, e.ctx, &v, ID, AKX_OP_ADD, NULL, AKX_HOST, 0, INV, "ndim 9", "ndim", NULL);
  v.ndim = INT32_MAX;
  mr_expect(&e, e.ctx, &v, ID, AKX_OP_ADD, NULL, AKX_HOST, 0, INV, "ndim INT32_MAX", "ndim",
            NULL);
  v = akx_vector(e.data, AKX_FLOAT32, -1);
  mr_expect(&e, e.ctx, &v, ID, AKX_OP_ADD, NULL, AKX_HOST, 0, INV, "shape -1", "shape", NULL);
  int64_t sh[3] = {2, -3, 0}; /* negative even when another dim is 0 */
  v = akx_array_c(e.data, AKX_FLOAT32, 3, sh);
  mr_expect(&e, e.ctx, &v, ID, AKX_OP_ADD, NULL, AKX_HOST, 0, INV, "shape {2, -3, 0}", "shape",
            NULL);
  teardown(&e);
}

Test(errors, offsets_overflow) {
  env e = setup();
  akx_array v = akx_vector(e.data, AKX_FLOAT32, 3);
  v.strides[0] = INT64_C(1) << 62; /* 2 * 2^62 overflows */
  mr_expect(&e, e.ctx, &v, ID, AKX_OP_ADD, NULL, AKX_HOST, 0, INV, "stride 2^62 x 3", "stride",
            "shape", "offset", "overflow", NULL);
  v.strides[0] = -(INT64_C(1) << 62);
  mr_expect(&e, e.ctx, &v, ID, AKX_OP_ADD, NULL, AKX_HOST, 0, INV, "stride -2^62 x 3", "stride",
            "shape", "offset", "overflow", NULL);
  int64_t sh[2] = {INT64_C(1) << 32, INT64_C(1) << 32}; /* 2^64 elements */
  v = akx_array_c(e.data, AKX_FLOAT32, 2, sh);
  mr_expect(&e, e.ctx, &v, ID, AKX_OP_ADD, NULL, AKX_HOST, 0, INV, "shape 2^32 x 2^32", "stride",
            "shape", "offset", "overflow", "elements", NULL);
  int64_t sh2[2] = {3, 3};
  v = akx_array_c(e.data, AKX_FLOAT32, 2, sh2);
  v.strides[0] = INT64_C(1) << 61; /* each span 2^62 fits; together 2^63 does not */
  v.strides[1] = INT64_C(1) << 61;
  mr_expect(&e, e.ctx, &v, ID, AKX_OP_ADD, NULL, AKX_HOST, 0, INV, "sum of spans overflows",
            "stride", "shape", "offset", "overflow", NULL);
  akx_array b = akx_vector(e.data, AKX_FLOAT64, 2); /* element offsets fit, bytes do not */
  b.strides[0] = INT64_C(1) << 61;
  mr_expect(&e, e.ctx, &b, ID, AKX_OP_ADD, NULL, AKX_HOST, 0, INV, "byte offsets overflow",
            "stride", "shape", "offset", "overflow", "bytes", NULL);
  teardown(&e);
}

Test(errors, enums_out_of_range) {
  env e = setup();
  akx_array v = akx_vector(e.data, AKX_FLOAT32, 10);
  static const int bad_dtypes[] = {99, 15, -5, -1 /* AUTO is not an element type */};
  for (size_t i = 0; i < sizeof bad_dtypes / sizeof bad_dtypes[0]; i++) {
    akx_array b = v;
    b.dtype = (akx_dtype)bad_dtypes[i];
    char what[64];
    snprintf(what, sizeof what, "dtype %d", bad_dtypes[i]);
    mr_expect(&e, e.ctx, &b, ID, AKX_OP_ADD, NULL, AKX_HOST, 0, INV, what, "dtype", NULL);
  }
  mr_expect(&e, e.ctx, &v, ID, (akx_op)9, NULL, AKX_HOST, 0, INV, "op 9", "op", NULL);
  mr_expect(&e, e.ctx, &v, ID, (akx_op)-1, NULL, AKX_HOST, 0, INV, "op -1", "op", NULL);
  mr_expect(&e, e.ctx, &v, (akx_map)4, AKX_OP_ADD, NULL, AKX_HOST, 0, INV, "map 4", "map", NULL);
  mr_expect(&e, e.ctx, &v, (akx_map)-1, AKX_OP_ADD, NULL, AKX_HOST, 0, INV, "map -1", "map",
            NULL);
  mr_expect(&e, e.ctx, &v, ID, AKX_OP_ADD, NULL, (akx_where)7, 0, INV, "where 7", "where", NULL);
  mr_expect(&e, e.ctx, &v, ID, AKX_OP_ADD, NULL, (akx_where)-1, 0, INV, "where -1", "where",
            NULL);
  akx_reduce_opts o = akx_reduce_opts_default();
  o.acc = (akx_dtype)99;
  mr_expect(&e, e.ctx, &v, ID, AKX_OP_ADD, &o, AKX_HOST, 0, INV, "acc 99", "acc", NULL);
  teardown(&e);
}

Test(errors, op_invalid_for_dtype) {
  env e = setup();
  akx_array v = akx_vector(e.data, AKX_FLOAT32, 10);
  for (int op = AKX_OP_AND; op <= AKX_OP_XOR; op++)
    mr_expect(&e, e.ctx, &v, ID, (akx_op)op, NULL, op % 2 ? AKX_HOST : AKX_DEVICE, 0, UNS,
              ref_op_name((akx_op)op), "op", NULL);
  akx_array c = akx_vector(e.data, AKX_COMPLEX64, 10);
  mr_expect(&e, e.ctx, &c, ID, AKX_OP_MIN, NULL, AKX_HOST, 0, UNS, "MIN on complex64", "op",
            "complex", NULL);
  mr_expect(&e, e.ctx, &c, ID, AKX_OP_MAX, NULL, AKX_DEVICE, 0, UNS, "MAX on complex64", "op",
            "complex", NULL);
  akx_array h = akx_vector(e.data, AKX_FLOAT16, 10);
  mr_expect(&e, e.ctx, &h, AKX_MAP_SQUARE, AKX_OP_OR, NULL, AKX_HOST, 0, UNS, "OR on float16",
            "op", NULL);
  akx_array b = akx_vector(e.data, AKX_BOOL, 10);
  akx_reduce_opts o = akx_reduce_opts_default();
  o.acc = AKX_BOOL;
  mr_expect(&e, e.ctx, &b, ID, AKX_OP_ADD, &o, AKX_HOST, 0, UNS, "ADD into a bool accumulator",
            "op", "acc", "bool", NULL);
  teardown(&e);
}

Test(errors, unsupported_accumulator) {
  env e = setup();
  struct { akx_dtype t; akx_map m; akx_op op; akx_dtype acc; } bad[] = {
      {AKX_INT32, ID, AKX_OP_ADD, AKX_FLOAT32},     {AKX_FLOAT32, ID, AKX_OP_ADD, AKX_INT32},
      {AKX_INT8, ID, AKX_OP_ADD, AKX_UINT64},       {AKX_INT8, ID, AKX_OP_ADD, AKX_INT16},
      {AKX_UINT64, ID, AKX_OP_MAX, AKX_INT64},      {AKX_FLOAT64, ID, AKX_OP_ADD, AKX_FLOAT16},
      {AKX_FLOAT32, ID, AKX_OP_ADD, AKX_COMPLEX64}, {AKX_COMPLEX64, ID, AKX_OP_ADD, AKX_FLOAT64},
      {AKX_COMPLEX128, ID, AKX_OP_ADD, AKX_COMPLEX64},
      {AKX_COMPLEX64, AKX_MAP_ABS, AKX_OP_ADD, AKX_COMPLEX128},
      {AKX_FLOAT32, AKX_MAP_NONZERO, AKX_OP_ADD, AKX_FLOAT32},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    cr_assert((int)ref_resolve_acc(bad[i].t, bad[i].m, bad[i].op, bad[i].acc) ==
              (int)REF_UNSUPPORTED);
    akx_array v = akx_vector(e.data, bad[i].t, 10);
    akx_reduce_opts o = akx_reduce_opts_default();
    o.acc = bad[i].acc;
    char what[128];
    snprintf(what, sizeof what, "%s %s %s with acc %s", ref_name(bad[i].t),
             ref_map_name(bad[i].m), ref_op_name(bad[i].op), ref_name(bad[i].acc));
    mr_expect(&e, e.ctx, &v, bad[i].m, bad[i].op, &o, i % 2 ? AKX_DEVICE : AKX_HOST, 0, UNS, what,
              "acc", NULL);
  }
  teardown(&e);
}

Test(errors, tuning_overrides) {
  env e = setup();
  akx_array v = akx_vector(e.data, AKX_FLOAT32, e.n);
  static const int bad_bs[] = {100, 2048, 16, 31, -32, 1056};
  for (size_t i = 0; i < sizeof bad_bs / sizeof bad_bs[0]; i++) {
    akx_reduce_opts o = akx_reduce_opts_default();
    o.block_size = bad_bs[i];
    char what[64];
    snprintf(what, sizeof what, "block_size %d", bad_bs[i]);
    mr_expect(&e, e.ctx, &v, ID, AKX_OP_ADD, &o, AKX_HOST, 0, INV, what, "block", NULL);
  }
  akx_reduce_opts o = akx_reduce_opts_default();
  o.items_per_thread = -1;
  mr_expect(&e, e.ctx, &v, ID, AKX_OP_ADD, &o, AKX_HOST, 0, INV, "items_per_thread -1", "item",
            NULL);
  o = akx_reduce_opts_default();
  o.target_blocks = -1;
  mr_expect(&e, e.ctx, &v, ID, AKX_OP_ADD, &o, AKX_HOST, 0, INV, "target_blocks -1", "block",
            NULL);
  /* the good ones pass: 32 up to the reduction kernels' launch bounds (kernels/akx/block_limits.h;
   * tests/test_block_limits.c refuses the sizes above them) */
  o = akx_reduce_opts_default();
  o.block_size = 32;
  float r = 0;
  cr_assert_eq(akx_mapreduce(e.ctx, &v, ID, AKX_OP_ADD, &o, &r, AKX_HOST), AKX_SUCCESS, "%s",
               akx_last_error());
  o.block_size = 256;
  cr_assert_eq(akx_mapreduce(e.ctx, &v, ID, AKX_OP_ADD, &o, &r, AKX_HOST), AKX_SUCCESS, "%s",
               akx_last_error());
  teardown(&e);
}

Test(errors, not_device_memory) {
  env e = setup();
  if (!tfx_is_sim(e.ctx)) {
    teardown(&e);
    cr_skip_test("the sim checks pointers; CUDA cannot tell host from device memory here");
  }
  float host[100] = {0};
  akx_array v = akx_vector(host, AKX_FLOAT32, 100);
  mr_expect(&e, e.ctx, &v, ID, AKX_OP_ADD, NULL, AKX_HOST, 0, INV, "src in host memory", "src",
            NULL);
  v = akx_vector(e.data, AKX_FLOAT32, e.n + 1); /* one past the allocation */
  mr_expect(&e, e.ctx, &v, ID, AKX_OP_ADD, NULL, AKX_HOST, 0, INV, "src one past the end", "src",
            NULL);
  v = akx_vector(e.data + 5, AKX_FLOAT32, 10);
  v.strides[0] = -1; /* reaches 4 elements before the allocation */
  mr_expect(&e, e.ctx, &v, ID, AKX_OP_ADD, NULL, AKX_HOST, 0, INV, "negative stride before the start",
            "src", NULL);
  v = akx_vector(e.data, AKX_FLOAT32, 10);
  mr_expect(&e, e.ctx, &v, ID, AKX_OP_ADD, NULL, AKX_DEVICE, 1, INV, "device result NULL",
            "result", NULL);
  float hr[4];
  unsigned char before[sizeof hr];
  memset(hr, SENT, sizeof hr);
  memcpy(before, hr, sizeof hr);
  akx_status s = akx_mapreduce(e.ctx, &v, ID, AKX_OP_ADD, NULL, hr, AKX_DEVICE);
  cr_expect_eq(s, INV, "where DEVICE with a host result: %s", akx_status_string(s));
  cr_expect(strstr(akx_last_error(), "result") != NULL, "\"%s\"", akx_last_error());
  cr_expect(memcmp(hr, before, sizeof hr) == 0, "host memory written through AKX_DEVICE");
  /* a freed allocation */
  float *tmp = tfx_alloc(e.ctx, 64);
  tfx_free(e.ctx, tmp);
  v = akx_vector(tmp, AKX_FLOAT32, 16);
  mr_expect(&e, e.ctx, &v, ID, AKX_OP_ADD, NULL, AKX_HOST, 0, INV, "src freed", "src", NULL);
  /* misaligned data */
  v = akx_vector((char *)e.data + 2, AKX_FLOAT32, 10);
  mr_expect(&e, e.ctx, &v, ID, AKX_OP_ADD, NULL, AKX_HOST, 0, INV, "src misaligned", "src",
            "align", NULL);
  teardown(&e);
}

Test(errors, empty_min_max_without_init) {
  env e = setup();
  akx_array v = akx_vector(e.data, AKX_FLOAT32, 0);
  mr_expect(&e, e.ctx, &v, ID, AKX_OP_MIN, NULL, AKX_HOST, 0, INV, "empty MIN", "init", "empty",
            NULL);
  mr_expect(&e, e.ctx, &v, ID, AKX_OP_MAX, NULL, AKX_DEVICE, 0, INV, "empty MAX", "init", "empty",
            NULL);
  int64_t sh[2] = {4, 0};
  akx_array z = akx_array_c(e.data, AKX_INT16, 2, sh);
  mr_expect(&e, e.ctx, &z, ID, AKX_OP_MAX, NULL, AKX_HOST, 0, INV, "empty 4x0 MAX", "init",
            "empty", NULL);
  teardown(&e);
}

Test(errors, workspace_too_small) {
  env e = setup();
  akx_array v = akx_vector(e.data, AKX_FLOAT32, e.n);
  size_t need = 0;
  cr_assert_eq(akx_mapreduce_workspace_size(e.ctx, &v, ID, AKX_OP_ADD, NULL, &need), AKX_SUCCESS,
               "%s", akx_last_error());
  cr_assert(need > 0);
  void *ws = tfx_alloc(e.ctx, need);
  cr_assert_eq(akx_context_set_workspace(e.ctx, ws, need - 1), AKX_SUCCESS, "%s",
               akx_last_error());
  mr_expect(&e, e.ctx, &v, ID, AKX_OP_ADD, NULL, AKX_HOST, 0, AKX_ERROR_WORKSPACE_TOO_SMALL,
            "workspace 1 byte short (host)", "workspace", NULL);
  mr_expect(&e, e.ctx, &v, ID, AKX_OP_ADD, NULL, AKX_DEVICE, 0, AKX_ERROR_WORKSPACE_TOO_SMALL,
            "workspace 1 byte short (device)", "workspace", NULL);
  akx_array dst = akx_vector(e.dres, AKX_FLOAT32, 1);
  rd_expect(&e, e.ctx, &dst, &v, ID, AKX_OP_ADD, NULL, AKX_ERROR_WORKSPACE_TOO_SMALL,
            "reduce_dims, workspace 1 byte short", "workspace", NULL);
  cr_assert_eq(akx_context_set_workspace(e.ctx, NULL, 0), AKX_SUCCESS);
  tfx_free(e.ctx, ws);
  teardown(&e);
}

Test(errors, workspace_query_bad_input) {
  env e = setup();
  akx_array v = akx_vector(e.data, AKX_FLOAT32, e.n);
  size_t b = 12345;
  cr_expect_eq(akx_mapreduce_workspace_size(NULL, &v, ID, AKX_OP_ADD, NULL, &b), INV);
  cr_expect_eq(akx_mapreduce_workspace_size(e.ctx, NULL, ID, AKX_OP_ADD, NULL, &b), INV);
  cr_expect_eq(akx_mapreduce_workspace_size(e.ctx, &v, ID, AKX_OP_ADD, NULL, NULL), INV);
  cr_expect_eq(akx_mapreduce_workspace_size(e.ctx, &v, ID, AKX_OP_AND, NULL, &b), UNS);
  cr_expect_eq(akx_mapreduce_workspace_size(e.ctx, &v, ID, (akx_op)9, NULL, &b), INV);
  cr_expect_eq(b, 12345, "the size was written on an error");
  cr_expect_eq(akx_context_set_workspace(NULL, NULL, 0), INV);
  teardown(&e);
}

/* ---- akx_reduce_dims ------------------------------------------------------------------------- */

Test(errors, reduce_dims_bad_input) {
  env e = setup();
  int64_t s2[2] = {10, 100}, s11[2] = {1, 1};
  akx_array src = akx_array_c(e.data, AKX_FLOAT32, 2, s2);
  akx_array dst = akx_array_c(e.dres, AKX_FLOAT32, 2, s11);
  rd_expect(&e, NULL, &dst, &src, ID, AKX_OP_ADD, NULL, INV, "NULL ctx", "ctx", "context", NULL);
  rd_expect(&e, e.ctx, NULL, &src, ID, AKX_OP_ADD, NULL, INV, "NULL dst", "dst", NULL);
  rd_expect(&e, e.ctx, &dst, NULL, ID, AKX_OP_ADD, NULL, INV, "NULL src", "src", NULL);
  akx_array d = dst;
  d.dtype = (akx_dtype)99;
  rd_expect(&e, e.ctx, &d, &src, ID, AKX_OP_ADD, NULL, INV, "dst dtype 99", "dst", "dtype", NULL);
  d = dst;
  d.ndim = 9;
  rd_expect(&e, e.ctx, &d, &src, ID, AKX_OP_ADD, NULL, INV, "dst ndim 9", "ndim", NULL);
  d = dst;
  d.ndim = 1;
  rd_expect(&e, e.ctx, &d, &src, ID, AKX_OP_ADD, NULL, INV, "dst ndim 1, src ndim 2", "ndim",
            NULL);
  d = dst;
  d.shape[1] = -1;
  rd_expect(&e, e.ctx, &d, &src, ID, AKX_OP_ADD, NULL, INV, "dst shape -1", "shape", NULL);
  d = dst;
  d.shape[1] = 7;
  rd_expect(&e, e.ctx, &d, &src, ID, AKX_OP_ADD, NULL, INV, "dst shape 7 for src 100", "dst",
            "shape", NULL);
  d = dst;
  d.data = NULL;
  rd_expect(&e, e.ctx, &d, &src, ID, AKX_OP_ADD, NULL, INV, "dst data NULL", "dst", NULL);
  rd_expect(&e, e.ctx, &dst, &src, ID, AKX_OP_AND, NULL, UNS, "AND on float32", "op", NULL);
  rd_expect(&e, e.ctx, &dst, &src, ID, (akx_op)12, NULL, INV, "op 12", "op", NULL);
  rd_expect(&e, e.ctx, &dst, &src, (akx_map)12, AKX_OP_ADD, NULL, INV, "map 12", "map", NULL);
  akx_reduce_opts o = akx_reduce_opts_default();
  o.block_size = 100;
  rd_expect(&e, e.ctx, &dst, &src, ID, AKX_OP_ADD, &o, INV, "block_size 100", "block", NULL);
  o = akx_reduce_opts_default();
  o.acc = AKX_INT8;
  rd_expect(&e, e.ctx, &dst, &src, ID, AKX_OP_ADD, &o, UNS, "acc int8 for float32", "acc", NULL);
  akx_array empty = akx_array_c(e.data, AKX_FLOAT32, 2, s2);
  empty.shape[0] = 0;
  rd_expect(&e, e.ctx, &dst, &empty, ID, AKX_OP_MIN, NULL, INV, "empty MIN into dst", "init",
            "empty", NULL);
  if (tfx_is_sim(e.ctx)) {
    float host_dst[16];
    d = dst;
    d.data = host_dst;
    rd_expect(&e, e.ctx, &d, &src, ID, AKX_OP_ADD, NULL, INV, "dst in host memory", "dst", NULL);
    float host_src[1000];
    akx_array hs = akx_array_c(host_src, AKX_FLOAT32, 2, s2);
    rd_expect(&e, e.ctx, &dst, &hs, ID, AKX_OP_ADD, NULL, INV, "src in host memory", "src", NULL);
  }
  teardown(&e);
}

/* ---- other entry points ---------------------------------------------------------------------- */

Test(errors, other_entry_points_null_context) {
  void *p = NULL;
  cr_expect_eq(akx_malloc(NULL, &p, 16), INV);
  cr_expect(strstr(akx_last_error(), "ctx") != NULL, "\"%s\"", akx_last_error());
  cr_expect_eq(akx_free(NULL, p), INV);
  cr_expect_eq(akx_memcpy(NULL, &p, &p, 1, AKX_COPY_HOST_TO_DEVICE), INV);
  cr_expect_eq(akx_synchronize(NULL), INV);
  cr_expect_eq(akx_context_set_stream(NULL, NULL), INV);
  cr_expect_eq(akx_context_set_workspace(NULL, NULL, 0), INV);
  akx_context_info_t info;
  cr_expect_eq(akx_context_info(NULL, &info), INV);
  akx_context *ctx = tfx_open();
  void *d = tfx_alloc(ctx, 16);
  cr_expect_eq(akx_memcpy(ctx, d, &p, 8, (akx_copy_kind)9), INV, "copy kind 9");
  cr_expect(akx_last_error()[0] != '\0');
  tfx_free(ctx, d);
  tfx_close(ctx);
}

/* A device result must be aligned to the accumulator: a float64 result at a 4-byte offset
 * faulted in the finishing store (a sticky error on CUDA) after pass 1 had launched. */
Test(errors, misaligned_device_result) {
  env e = setup();
  akx_array v = akx_vector(e.data, AKX_FLOAT32, e.n);
  akx_reduce_opts o = akx_reduce_opts_default();
  o.acc = AKX_FLOAT64;
  unsigned char before[64], after[64];
  memset(before, SENT, sizeof before);
  tfx_to_device(e.ctx, e.dres, before, sizeof before);
  uint64_t l0 = launches(e.ctx);
  void *misaligned = (char *)e.dres + 4;
  akx_status s = akx_mapreduce(e.ctx, &v, ID, AKX_OP_ADD, &o, misaligned, AKX_DEVICE);
  cr_expect_eq(s, INV, "%s", akx_last_error());
  char addr[32];
  snprintf(addr, sizeof addr, "%p", misaligned);
  cr_expect(strstr(akx_last_error(), "result") && strstr(akx_last_error(), addr) &&
                strstr(akx_last_error(), "aligned"),
            "the sentence names result, its value and the alignment: %s", akx_last_error());
  tfx_to_host(e.ctx, after, e.dres, sizeof after);
  cr_expect(memcmp(after, before, sizeof after) == 0, "the device result was written");
  cr_expect_eq(launches(e.ctx), l0, "a kernel was launched");
  teardown(&e);
}
