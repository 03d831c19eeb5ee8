/* Empty arrays with large extents beside the 0. Every family merges neighbouring dims into one
 * (outer size x inner size) where they tile memory without a gap, and multiplies the extents
 * it keeps; found by the fuzzer: an empty scan whose other extents multiply to 2^64 overflowed
 * int64 there (UBSan). Now, as numpy does, validation counts every nonzero extent: such an
 * array is refused with AKX_ERROR_INVALID_ARGUMENT naming it, before anything is written, and
 * an empty array whose nonzero extents fit (2^62) is an empty input for every family: scan and
 * findall write nothing, mapreduce gives init, reduce_dims writes no output. */
#include <criterion/criterion.h>
#include <string.h>
#include "fixture.h"

static akx_context *ctx;
static void setup(void) { ctx = tfx_open(); }
static void teardown(void) { tfx_close(ctx); }
TestSuite(empty_extents, .init = setup, .fini = teardown);

/* shape {0, a, b}: dims 1 and 2 tile memory (strides[1] = b x strides[2]), so every family
 * merges them into one of a x b elements. */
static akx_array empty_3d(akx_dtype dt, void *data, int64_t a, int64_t b) {
  akx_array x;
  memset(&x, 0, sizeof x);
  x.data = data;
  x.dtype = dt;
  x.ndim = 3;
  x.shape[0] = 0;
  x.shape[1] = a;
  x.shape[2] = b;
  x.strides[0] = 1;
  x.strides[1] = b;
  x.strides[2] = 1;
  return x;
}
#define TWO(k) ((int64_t)1 << (k))

static void assert_refused(akx_status st, const char *name, const char *what) {
  cr_assert_eq(st, AKX_ERROR_INVALID_ARGUMENT, "%s: status %d (%s)", what, (int)st, akx_last_error());
  cr_assert(strstr(akx_last_error(), name) && strstr(akx_last_error(), "more elements than int64"),
            "%s: the sentence names %s and the count: %s", what, name, akx_last_error());
}

static const int32_t sentinel[16] = {7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7};
static void assert_untouched(const int32_t *buf, const char *what) {
  int32_t back[16];
  tfx_to_host(ctx, back, buf, sizeof back);
  cr_assert_arr_eq(back, sentinel, sizeof back, "%s wrote memory", what);
}

Test(empty_extents, scan) {
  int32_t *buf = tfx_alloc(ctx, sizeof sentinel);
  tfx_to_device(ctx, buf, sentinel, sizeof sentinel);
  for (int fits = 0; fits < 2; ++fits) {
    const int64_t a = fits ? TWO(31) : TWO(16), b = fits ? TWO(31) : TWO(48);
    const akx_array src = empty_3d(AKX_INT32, buf, a, b), dst = empty_3d(AKX_INT32, buf + 8, a, b);
    for (int32_t dim = -1; dim < 3; ++dim) { /* AKX_DIM_ALL, then each dim */
      size_t ws = 1;
      const akx_status q = akx_scan_workspace_size(ctx, &dst, &src, AKX_OP_ADD, dim, NULL, &ws);
      const akx_status st = akx_scan(ctx, &dst, &src, AKX_OP_ADD, dim, NULL);
      if (!fits) {
        assert_refused(q, "src", "scan_workspace_size");
        assert_refused(st, "src", "scan");
      } else {
        cr_assert_eq(q, AKX_SUCCESS, "dim %d: %s", dim, akx_last_error());
        cr_assert_eq(ws, 0, "dim %d: an empty scan needs no workspace", dim);
        cr_assert_eq(st, AKX_SUCCESS, "dim %d: %s", dim, akx_last_error());
      }
    }
  }
  cr_assert_eq(akx_synchronize(ctx), AKX_SUCCESS);
  assert_untouched(buf, "an empty scan");
  tfx_free(ctx, buf);
}

Test(empty_extents, findall) {
  int32_t *buf = tfx_alloc(ctx, sizeof sentinel);
  tfx_to_device(ctx, buf, sentinel, sizeof sentinel);
  const int64_t capacity = 4;
  const akx_array indices = akx_array_c(buf, AKX_INT64, 1, &capacity);
  int64_t count = -1;
  akx_array src = empty_3d(AKX_UINT8, buf + 8, TWO(16), TWO(48));
  assert_refused(akx_findall(ctx, &src, &indices, &count), "src", "findall");
  src = empty_3d(AKX_UINT8, buf + 8, TWO(31), TWO(31));
  cr_assert_eq(akx_findall(ctx, &src, &indices, &count), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(count, 0);
  assert_untouched(buf, "an empty findall");
  tfx_free(ctx, buf);
}

Test(empty_extents, mapreduce_gives_init) {
  float *buf = tfx_alloc(ctx, 16);
  const float init = 2.5f;
  akx_reduce_opts o;
  memset(&o, 0, sizeof o);
  o.init = &init;
  o.acc = AKX_DTYPE_AUTO;
  float r = -1;
  akx_array src = empty_3d(AKX_FLOAT32, buf, TWO(16), TWO(48));
  assert_refused(akx_mapreduce(ctx, &src, AKX_MAP_IDENTITY, AKX_OP_ADD, &o, &r, AKX_HOST), "src",
                 "mapreduce");
  cr_assert_eq(r, -1.0f, "a refused call wrote its result");
  src = empty_3d(AKX_FLOAT32, buf, TWO(31), TWO(31));
  cr_assert_eq(akx_mapreduce(ctx, &src, AKX_MAP_IDENTITY, AKX_OP_ADD, &o, &r, AKX_HOST),
               AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(r, 2.5f);
  tfx_free(ctx, buf);
}

/* Keeping every dim (no output: dst is empty too), or reducing dims 1 and 2 into {0, 1, 1}
 * (no output, and the reduced dims merge). */
Test(empty_extents, reduce_dims) {
  int32_t *buf = tfx_alloc(ctx, sizeof sentinel);
  tfx_to_device(ctx, buf, sentinel, sizeof sentinel);
  for (int fits = 0; fits < 2; ++fits) {
    const int64_t a = fits ? TWO(31) : TWO(16), b = fits ? TWO(31) : TWO(48);
    const akx_array src = empty_3d(AKX_FLOAT32, buf, a, b);
    for (int reduced = 0; reduced < 2; ++reduced) {
      akx_array dst = empty_3d(AKX_FLOAT32, buf + 8, a, b);
      if (reduced) dst.shape[1] = dst.shape[2] = 1;
      size_t ws = 1;
      const akx_status q =
          akx_reduce_dims_workspace_size(ctx, &dst, &src, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &ws);
      const akx_status st = akx_reduce_dims(ctx, &dst, &src, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL);
      if (!fits) {
        cr_assert_eq(q, AKX_ERROR_INVALID_ARGUMENT, "%s", akx_last_error());
        assert_refused(st, "src", "reduce_dims");
      } else {
        cr_assert_eq(q, AKX_SUCCESS, "reduced %d: %s", reduced, akx_last_error());
        cr_assert_eq(st, AKX_SUCCESS, "reduced %d: %s", reduced, akx_last_error());
      }
    }
  }
  cr_assert_eq(akx_synchronize(ctx), AKX_SUCCESS);
  assert_untouched(buf, "an empty reduce_dims");
  tfx_free(ctx, buf);
}

/* A stride of INT64_MIN has no magnitude in int64 (its negation overflows), and an empty array's
 * strides are otherwise never checked against its extents: the fuzzer found reduce_dims
 * flipping such a reduced dim of an empty source (UBSan). It is refused in every array, empty
 * or not; INT64_MIN + 1 in an empty array is an empty input. */
Test(empty_extents, int64_min_stride) {
  int32_t *buf = tfx_alloc(ctx, 256);
  for (int ok = 0; ok < 2; ++ok) {
    const int64_t s = ok ? INT64_MIN + 1 : INT64_MIN;
    akx_array src = empty_3d(AKX_FLOAT32, buf, 4, 4), dst = empty_3d(AKX_FLOAT32, buf + 8, 4, 4);
    src.strides[1] = s;
    akx_array red = dst;
    red.shape[1] = 1;
    const float init = 1.5f;
    akx_reduce_opts o = akx_reduce_opts_default();
    o.init = &init;
    float r = -1;
    int64_t count = -1;
    const int64_t capacity = 4;
    const akx_array indices = akx_array_c(buf + 32, AKX_INT64, 1, &capacity);
    const akx_status st[4] = {
        akx_reduce_dims(ctx, &red, &src, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL),
        akx_scan(ctx, &dst, &src, AKX_OP_ADD, 1, NULL),
        akx_mapreduce(ctx, &src, AKX_MAP_IDENTITY, AKX_OP_ADD, &o, &r, AKX_HOST),
        akx_findall(ctx, &src, &indices, &count)};
    const char *what[4] = {"reduce_dims", "scan", "mapreduce", "findall"};
    for (int i = 0; i < 4; ++i) {
      if (ok) {
        cr_assert_eq(st[i], AKX_SUCCESS, "%s: %s", what[i], akx_last_error());
      } else {
        cr_assert_eq(st[i], AKX_ERROR_INVALID_ARGUMENT, "%s: status %d", what[i], (int)st[i]);
      }
    }
    if (!ok) {
      cr_assert(strstr(akx_last_error(), "src->strides[1]") != NULL, "%s", akx_last_error());
      cr_assert_eq(r, -1.0f, "a refused mapreduce wrote its result");
    } else {
      cr_assert_eq(r, 1.5f);
      cr_assert_eq(count, 0);
    }
  }
  cr_assert_eq(akx_synchronize(ctx), AKX_SUCCESS);
  tfx_free(ctx, buf);
}
