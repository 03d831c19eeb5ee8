/* What akx_last_error() says and when: a success never writes it (akx_context_create's AUTO
 * probe of CUDA included), sentences read as English for every value they print (plurals,
 * articles, a dtype list without repeats), AKX_DTYPE_AUTO in an array is named as the
 * accumulator-only value it is, and a range past the end of an allocation says by how much. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include "fixture.h"

TestSuite(sentences);

Test(sentences, success_never_writes_last_error) {
  cr_assert_str_eq(akx_last_error(), "", "a fresh thread starts with \"\"");
  unsetenv("AKX_BACKEND");
  akx_context *ctx = NULL;
  cr_assert_eq(akx_context_create(&ctx, AKX_BACKEND_AUTO, 0), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_str_eq(akx_last_error(), "", "AUTO succeeded but left \"%s\"", akx_last_error());
  akx_context_destroy(ctx);
  /* after a failure, a success leaves that failure's sentence as it was (errno-like) */
  cr_assert_eq(akx_context_create(NULL, AKX_BACKEND_SIM, 0), AKX_ERROR_INVALID_ARGUMENT);
  char before[1024];
  snprintf(before, sizeof before, "%s", akx_last_error());
  cr_assert(before[0]);
  ctx = NULL;
  cr_assert_eq(akx_context_create(&ctx, AKX_BACKEND_AUTO, 0), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_str_eq(akx_last_error(), before);
  akx_context_destroy(ctx);
}

Test(sentences, plural_and_articles) {
  akx_context *ctx = tfx_open();
  /* one nonzero element into no room: "1 nonzero element", not "1 ... elements" */
  const int32_t one[3] = {0, 5, 0};
  int32_t *src = tfx_upload(ctx, one, sizeof one);
  int64_t *idx = tfx_alloc(ctx, 8);
  akx_array s = akx_vector(src, AKX_INT32, 3), i = akx_vector(idx, AKX_INT64, 0);
  int64_t count = -1;
  cr_assert_eq(akx_findall(ctx, &s, &i, &count), AKX_ERROR_OUTPUT_TOO_SMALL, "%s", akx_last_error());
  cr_assert(strstr(akx_last_error(), "1 nonzero element ") || strstr(akx_last_error(), "1 nonzero element;") ||
                strstr(akx_last_error(), "1 nonzero element,"),
            "\"%s\"", akx_last_error());
  cr_assert(!strstr(akx_last_error(), "1 nonzero elements"), "\"%s\"", akx_last_error());
  /* a NULL data pointer of a one-element array */
  akx_array null1 = akx_vector(NULL, AKX_INT32, 1);
  int64_t r;
  cr_assert_eq(akx_mapreduce(ctx, &null1, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &r, AKX_HOST),
               AKX_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(akx_last_error(), "1 element") && !strstr(akx_last_error(), "1 elements"), "\"%s\"",
            akx_last_error());
  /* a scan accumulator no reduction takes either (a scan's dst may be any dtype): no "a int" */
  int32_t *d32 = tfx_alloc(ctx, 3 * 8);
  akx_array d = akx_vector(d32, AKX_FLOAT64, 3);
  akx_scan_opts o = akx_scan_opts_default();
  o.acc = AKX_FLOAT32;
  cr_assert_eq(akx_scan(ctx, &d, &s, AKX_OP_ADD, 0, &o), AKX_ERROR_UNSUPPORTED);
  cr_assert(strstr(akx_last_error(), "opts->acc"), "\"%s\"", akx_last_error());
  cr_assert(!strstr(akx_last_error(), "a int") && !strstr(akx_last_error(), "a uint"), "\"%s\"",
            akx_last_error());
  /* an op refused on an accumulator names it without a wrong article */
  const akx_array f = akx_vector(src, AKX_FLOAT32, 3);
  cr_assert_eq(akx_mapreduce(ctx, &f, AKX_MAP_IDENTITY, AKX_OP_AND, NULL, &r, AKX_HOST), AKX_ERROR_UNSUPPORTED);
  cr_assert(strstr(akx_last_error(), "float32"), "\"%s\"", akx_last_error());
  cr_assert(!strstr(akx_last_error(), "a int") && !strstr(akx_last_error(), "a uint"), "\"%s\"",
            akx_last_error());
  tfx_free(ctx, d32);
  tfx_free(ctx, idx);
  tfx_free(ctx, src);
  tfx_close(ctx);
}

Test(sentences, auto_as_an_array_dtype) {
  akx_context *ctx = tfx_open();
  float *buf = tfx_alloc(ctx, 64);
  akx_array a = akx_vector(buf, AKX_FLOAT32, 4);
  a.dtype = AKX_DTYPE_AUTO;
  double r;
  cr_assert_eq(akx_mapreduce(ctx, &a, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &r, AKX_HOST),
               AKX_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(akx_last_error(), "src->dtype") && strstr(akx_last_error(), "AUTO") &&
                strstr(akx_last_error(), "opts->acc"),
            "\"%s\"", akx_last_error());
  akx_array d = akx_vector(buf + 8, AKX_FLOAT32, 4);
  d.dtype = AKX_DTYPE_AUTO;
  a.dtype = AKX_FLOAT32;
  cr_assert_eq(akx_scan(ctx, &d, &a, AKX_OP_ADD, 0, NULL), AKX_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(akx_last_error(), "dst->dtype") && strstr(akx_last_error(), "opts->acc"), "\"%s\"",
            akx_last_error());
  tfx_free(ctx, buf);
  tfx_close(ctx);
}

Test(sentences, range_past_the_end_of_an_allocation) {
  akx_context *ctx = tfx_open();
  if (!tfx_is_sim(ctx)) {
    tfx_close(ctx);
    cr_skip_test("the sim knows its allocations' bounds");
  }
  float *buf = tfx_alloc(ctx, 40); /* 10 float32 */
  akx_array a = akx_vector(buf + 2, AKX_FLOAT32, 11); /* ends 12 bytes past the end */
  double r;
  cr_assert_eq(akx_mapreduce(ctx, &a, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &r, AKX_HOST),
               AKX_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(akx_last_error(), "src") && strstr(akx_last_error(), "12 bytes past the end") &&
                strstr(akx_last_error(), "40-byte"),
            "\"%s\"", akx_last_error());
  tfx_free(ctx, buf);
  tfx_close(ctx);
}
