/* Empty outputs as Julia and numpy describe them. An array with a zero extent has no elements,
 * so none of them can share memory, whatever its strides: Julia's strides(zeros(2, 0, 3)) is
 * (1, 2, 0), numpy gives an empty array all-zero strides, and a C-order prefix product gives
 * 0 to the dims before the empty one. Every family accepts such an output, writes nothing,
 * and its size query agrees with it. */
#include <criterion/criterion.h>
#include <string.h>
#include "fixture.h"

static akx_context *ctx;
static void setup(void) { ctx = tfx_open(); }
static void teardown(void) { tfx_close(ctx); }
TestSuite(empty_outputs, .init = setup, .fini = teardown);

enum { JULIA, NUMPY, C_PREFIX, NLAYOUTS };
static const char *layout_name[NLAYOUTS] = {"julia", "numpy", "c_prefix"};

/* strides of an array of this shape as each caller would hand them over */
static akx_array describe(void *data, akx_dtype t, int32_t ndim, const int64_t *shape, int layout) {
  akx_array a;
  memset(&a, 0, sizeof a);
  a.data = data;
  a.dtype = t;
  a.ndim = ndim;
  for (int32_t d = 0; d < ndim; ++d) a.shape[d] = shape[d];
  if (layout == JULIA) {
    int64_t s = 1;
    for (int32_t d = 0; d < ndim; ++d) {
      a.strides[d] = s;
      s *= shape[d];
    }
  } else if (layout == C_PREFIX) {
    int64_t s = 1;
    for (int32_t d = ndim - 1; d >= 0; --d) {
      a.strides[d] = s;
      s *= shape[d];
    }
  } /* NUMPY: all zero */
  return a;
}

#define NSHAPES 6
static const int32_t ndims[NSHAPES] = {3, 2, 2, 3, 1, 4};
static const int64_t shapes[NSHAPES][4] = {{2, 0, 3}, {0, 4}, {4, 0}, {3, 2, 0}, {0}, {5, 1, 0, 7}};

static const int32_t sentinel[32] = {7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
                                     7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7};
static int32_t *fresh(void) {
  int32_t *buf = tfx_alloc(ctx, sizeof sentinel);
  tfx_to_device(ctx, buf, sentinel, sizeof sentinel);
  return buf;
}
static void assert_untouched(const int32_t *buf, const char *what) {
  int32_t back[32];
  tfx_to_host(ctx, back, buf, sizeof back);
  cr_assert_arr_eq(back, sentinel, sizeof back, "%s wrote memory", what);
}

Test(empty_outputs, scan_every_dim_and_layout) {
  int32_t *buf = fresh();
  static const akx_dtype dts[] = {AKX_INT32, AKX_FLOAT32, AKX_FLOAT64, AKX_UINT8};
  for (int k = 0; k < NSHAPES; ++k)
    for (int lay = 0; lay < NLAYOUTS; ++lay)
      for (size_t t = 0; t < sizeof dts / sizeof dts[0]; ++t)
        for (int32_t dim = -1; dim < ndims[k]; ++dim) {
          /* src's layout may differ from dst's: a numpy source into a Julia output */
          const akx_array src = describe(buf, dts[t], ndims[k], shapes[k], (lay + 1) % NLAYOUTS);
          const akx_array dst = describe(buf + 16, dts[t], ndims[k], shapes[k], lay);
          if (dim == AKX_DIM_ALL && lay != (lay + 1) % NLAYOUTS) {
            /* AKX_DIM_ALL wants dst with src's strides: give it them */
            const akx_array same = describe(buf + 16, dts[t], ndims[k], shapes[k], (lay + 1) % NLAYOUTS);
            size_t ws = 99;
            akx_status q = akx_scan_workspace_size(ctx, &same, &src, AKX_OP_ADD, dim, NULL, &ws);
            akx_status st = akx_scan(ctx, &same, &src, AKX_OP_ADD, dim, NULL);
            cr_assert_eq(q, AKX_SUCCESS, "shape %d %s dim %d query: %s", k, layout_name[lay], (int)dim, akx_last_error());
            cr_assert_eq(st, AKX_SUCCESS, "shape %d %s dim %d: %s", k, layout_name[lay], (int)dim, akx_last_error());
            cr_assert_eq(ws, 0, "an empty scan needs no workspace");
          }
          size_t ws = 99;
          const akx_status q = akx_scan_workspace_size(ctx, &dst, &src, AKX_OP_ADD, dim < 0 ? 0 : dim, NULL, &ws);
          const akx_status st = akx_scan(ctx, &dst, &src, AKX_OP_ADD, dim < 0 ? 0 : dim, NULL);
          cr_assert_eq(q, AKX_SUCCESS, "shape %d %s query: %s", k, layout_name[lay], akx_last_error());
          cr_assert_eq(st, AKX_SUCCESS, "shape %d dst %s dim %d %s: %s", k, layout_name[lay], (int)dim,
                       akx_dtype_name(dts[t]), akx_last_error());
          cr_assert_eq(ws, 0, "an empty scan needs no workspace");
          /* in place, the same view */
          cr_assert_eq(akx_scan(ctx, &dst, &dst, AKX_OP_MUL, dim < 0 ? 0 : dim, NULL), AKX_SUCCESS,
                       "in place: %s", akx_last_error());
        }
  assert_untouched(buf, "an empty scan");
  tfx_free(ctx, buf);
}

Test(empty_outputs, reduce_dims_every_subset_and_layout) {
  int32_t *buf = fresh();
  for (int k = 0; k < NSHAPES; ++k)
    for (int lay = 0; lay < NLAYOUTS; ++lay)
      for (unsigned mask = 0; mask < (1u << ndims[k]); ++mask) {
        int64_t dshape[4];
        int has_zero = 0;
        for (int32_t d = 0; d < ndims[k]; ++d) {
          dshape[d] = (mask >> d & 1) ? 1 : shapes[k][d];
          has_zero |= dshape[d] == 0;
        }
        if (!has_zero) continue; /* a nonempty dst of an empty src: init, tested elsewhere */
        const akx_array src = describe(buf, AKX_FLOAT32, ndims[k], shapes[k], (lay + 2) % NLAYOUTS);
        const akx_array dst = describe(buf + 16, AKX_FLOAT64, ndims[k], dshape, lay);
        size_t ws = 99;
        const akx_status q = akx_reduce_dims_workspace_size(ctx, &dst, &src, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &ws);
        cr_assert_eq(q, AKX_SUCCESS, "shape %d %s mask %u query: %s", k, layout_name[lay], mask, akx_last_error());
        cr_assert_eq(ws, 0, "no outputs need no workspace");
        /* MIN of an empty source has no neutral element, but there is no output to give one */
        for (akx_op op = AKX_OP_ADD; op <= AKX_OP_MAX; ++op) {
          const akx_status st = akx_reduce_dims(ctx, &dst, &src, AKX_MAP_IDENTITY, op, NULL);
          cr_assert_eq(st, AKX_SUCCESS, "shape %d dst %s mask %u op %d: %s", k, layout_name[lay], mask,
                       (int)op, akx_last_error());
        }
      }
  assert_untouched(buf, "an empty reduce_dims");
  tfx_free(ctx, buf);
}

Test(empty_outputs, findall_and_mapreduce) {
  int32_t *buf = fresh();
  for (int k = 0; k < NSHAPES; ++k)
    for (int lay = 0; lay < NLAYOUTS; ++lay) {
      const akx_array src = describe(buf, AKX_INT32, ndims[k], shapes[k], lay);
      const int64_t zero = 0;
      const akx_array idx = describe(buf + 16, AKX_INT64, 1, &zero, lay);
      int64_t count = -1;
      cr_assert_eq(akx_findall(ctx, &src, &idx, &count), AKX_SUCCESS, "findall shape %d %s: %s", k,
                   layout_name[lay], akx_last_error());
      cr_assert_eq(count, 0);
      int64_t sum = -1;
      cr_assert_eq(akx_mapreduce(ctx, &src, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &sum, AKX_HOST), AKX_SUCCESS,
                   "mapreduce shape %d %s: %s", k, layout_name[lay], akx_last_error());
      cr_assert_eq(sum, 0);
    }
  assert_untouched(buf, "an empty findall");
  tfx_free(ctx, buf);
}

/* What stays refused: a nonempty output whose elements share memory. */
Test(empty_outputs, nonempty_overlap_still_refused) {
  int32_t *buf = fresh();
  const int64_t shape[2] = {2, 3};
  akx_array src = describe(buf, AKX_INT32, 2, shape, C_PREFIX);
  akx_array dst = describe(buf + 16, AKX_INT32, 2, shape, C_PREFIX);
  dst.strides[0] = 0;
  cr_assert_eq(akx_scan(ctx, &dst, &src, AKX_OP_ADD, 1, NULL), AKX_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(akx_last_error(), "dst->strides[0]"), "%s", akx_last_error());
  assert_untouched(buf, "a refused scan");
  tfx_free(ctx, buf);
}
