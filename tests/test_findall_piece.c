/* akx_findall_piece: a 6x7x5 array cut into pieces along each dim, in C and Fortran order (each
 * piece in the whole's order), gives in each piece the whole array's positions of the piece's
 * nonzero elements, sorted, against a host reference: the elements' memory-order positions in
 * the whole array; 1, 2, 3 and 5 uneven pieces with empty ones; float32 with NaN and -0.0,
 * int8. A piece over the whole array with no move is akx_findall. Bad input writes nothing. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "akx.h"
#include "akx_layer.h"
#include "fixture.h"
#include "pieces.h"

static akx_context *ctx;
static void setup(void) { ctx = tfx_open(); }
static void teardown(void) { tfx_close(ctx); }
TestSuite(findall_piece, .init = setup, .fini = teardown, .timeout = 120);

static const int64_t W[3] = {6, 7, 5};
#define WN (6 * 7 * 5)
#define POISON (-77)

/* The whole's memory order, outermost first: C (0, 1, 2) or Fortran (2, 1, 0). */
static void order_of(int fortran, int *order) {
  for (int k = 0; k < 3; ++k) order[k] = fortran ? 2 - k : k;
}
static int64_t position(const int64_t *idx, const int64_t *shape, const int *order) {
  int64_t p = 0;
  for (int k = 0; k < 3; ++k) p = p * shape[order[k]] + idx[order[k]];
  return p;
}

/* Every dim of a piece in order: ext along d, W elsewhere; its first index along d `start`. */
static void run_cut(akx_dtype t, const void *g, int fortran, int d, const int64_t *ext, int K, const char *what) {
  int order[3];
  order_of(fortran, order);
  const size_t es = akx_dtype_size(t);
  int64_t start = 0;
  for (int k = 0; k < K; ++k) {
    int64_t shape[3] = {W[0], W[1], W[2]};
    shape[d] = ext[k];
    const int64_t n = shape[0] * shape[1] * shape[2];
    /* The piece in the whole's order, and the host's positions of its nonzero elements. */
    unsigned char *h = tfx_xmalloc((size_t)(n + 1) * es);
    int64_t *want = tfx_xmalloc((size_t)(n + 1) * 8), nz = 0;
    for (int64_t p = 0; p < n; ++p) {
      int64_t idx[3], r = p;
      for (int j = 2; j >= 0; --j) idx[order[j]] = r % shape[order[j]], r /= shape[order[j]];
      int64_t gidx[3] = {idx[0], idx[1], idx[2]};
      gidx[d] += start;
      const unsigned char *x = (const unsigned char *)g + (size_t)((gidx[0] * W[1] + gidx[1]) * W[2] + gidx[2]) * es;
      memcpy(h + (size_t)p * es, x, es);
      const int nonzero = t == AKX_FLOAT32 ? (*(const float *)x != 0 || isnan(*(const float *)x)) : *x != 0;
      if (nonzero) want[nz++] = position(gidx, W, order);
    }
    void *dev = tfx_upload(ctx, h, (size_t)(n + 1) * es);
    const akx_array src = fortran ? akx_array_f(dev, t, 3, shape) : akx_array_c(dev, t, 3, shape);
    /* Where the piece's positions sit: the dims inside d (in the order) one run of ext * inner,
     * the other pieces' between. */
    int64_t inner = 1;
    int inside = 0;
    for (int j = 0; j < 3; ++j) {
      if (order[j] == d) inside = 1;
      else if (inside) inner *= W[order[j]];
    }
    const akx_findall_piece_t at = {start * inner, ext[k] * inner, (W[d] - ext[k]) * inner};
    int64_t *back = tfx_xmalloc((size_t)(n + 2) * 8);
    for (int64_t i = 0; i < n + 2; ++i) back[i] = POISON;
    void *ind = tfx_upload(ctx, back, (size_t)(n + 2) * 8);
    const akx_array indices = akx_vector(ind, AKX_INT64, n + 1);
    int64_t count = -1;
    const akx_status st = akx_findall_piece(ctx, &src, &indices, &count, &at);
    cr_assert_eq(st, AKX_SUCCESS, "%s, piece %d: %s (%s)", what, k, akx_status_string(st), akx_last_error());
    cr_assert_eq(count, nz, "%s, piece %d: count %lld, the host's %lld", what, k, (long long)count, (long long)nz);
    tfx_to_host(ctx, back, ind, (size_t)(n + 2) * 8);
    for (int64_t i = 0; i < nz; ++i)
      cr_assert_eq(back[i], want[i], "%s, piece %d of %d: position %lld is %lld, the host's %lld", what, k, K,
                   (long long)i, (long long)back[i], (long long)want[i]);
    for (int64_t i = nz; i < n + 2; ++i)
      cr_assert_eq(back[i], POISON, "%s, piece %d: slot %lld past the count was written", what, k, (long long)i);
    tfx_free(ctx, ind);
    tfx_free(ctx, dev);
    free(back);
    free(want);
    free(h);
    start += ext[k];
  }
}

Test(findall_piece, positions_are_the_whole_arrays) {
  float *f = tfx_xmalloc(WN * sizeof(float));
  int8_t *b = tfx_xmalloc(WN);
  for (int64_t i = 0; i < WN; ++i) {
    const uint64_t r = ref_rand(5, (uint64_t)i);
    f[i] = r % 7 == 0 ? NAN : r % 3 == 0 ? (r % 2 ? -0.0f : 0.0f) : (float)(r % 11) - 5.0f;
    b[i] = (int8_t)(r % 4 == 0 ? 0 : (int)(r % 256) - 128);
  }
  for (int fortran = 0; fortran < 2; ++fortran)
    for (int d = 0; d < 3; ++d)
      for (int sp = 0; sp < SPLITS; ++sp) {
        int64_t ext[5];
        const int K = split(W[d], sp, ext);
        char what[160];
        snprintf(what, sizeof what, "float32, %s order, cut along %d into %d", fortran ? "Fortran" : "C", d, K);
        run_cut(AKX_FLOAT32, f, fortran, d, ext, K, what);
        snprintf(what, sizeof what, "int8, %s order, cut along %d into %d", fortran ? "Fortran" : "C", d, K);
        run_cut(AKX_INT8, b, fortran, d, ext, K, what);
      }
  free(f);
  free(b);
}

Test(findall_piece, bad_input_writes_nothing) {
  int64_t h[8] = {1, 0, 2, 3, 0, 4, 5, 6}, back[8];
  void *s = tfx_upload(ctx, h, sizeof h);
  int64_t poison[8];
  for (int i = 0; i < 8; ++i) poison[i] = POISON;
  void *ind = tfx_upload(ctx, poison, sizeof poison);
  const akx_array src = akx_vector(s, AKX_INT64, 8), indices = akx_vector(ind, AKX_INT64, 8);
  int64_t count = -5;
  const akx_findall_piece_t neg = {0, 4, -1};
  akx_status st = akx_findall_piece(ctx, &src, &indices, &count, NULL);
  cr_assert_eq(st, AKX_ERROR_INVALID_ARGUMENT, "piece NULL: %s", akx_status_string(st));
  cr_assert(strstr(akx_last_error(), "piece"), "piece NULL: %s", akx_last_error());
  st = akx_findall_piece(ctx, &src, &indices, &count, &neg);
  cr_assert_eq(st, AKX_ERROR_INVALID_ARGUMENT, "a negative skip: %s", akx_status_string(st));
  cr_assert(strstr(akx_last_error(), "position"), "a negative skip: %s", akx_last_error());
  cr_assert_eq(count, -5, "count was written");
  tfx_to_host(ctx, back, ind, sizeof back);
  for (int i = 0; i < 8; ++i) cr_assert_eq(back[i], POISON, "indices[%d] was written", i);
  tfx_free(ctx, ind);
  tfx_free(ctx, s);
}
