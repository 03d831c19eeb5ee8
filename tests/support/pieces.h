/* The cuts of an extent into consecutive pieces that tests/test_scan_piece.c,
 * tests/test_mapreduce_piece.c and tests/test_reduce_dims_piece.c run, uneven and with empty pieces where a piece is most easily
 * mishandled: first, and in the middle. */
#ifndef AKX_TEST_PIECES_H
#define AKX_TEST_PIECES_H
#include <stdint.h>
#include "fixture.h"

/* The extents along a dim of n, into ext (5 at most): one piece; two; three, the first empty;
 * five, an empty one in the middle. Returns the number of pieces. */
static int split(int64_t n, int which, int64_t *ext) {
  switch (which) {
  case 0: ext[0] = n; return 1;
  case 1: ext[0] = n / 3 + 1, ext[1] = n - ext[0]; return 2;
  case 2: ext[0] = 0, ext[1] = n / 2, ext[2] = n - n / 2; return 3;
  default:
    ext[0] = 1, ext[1] = n / 3, ext[2] = 0, ext[3] = n / 4, ext[4] = n - 1 - n / 3 - n / 4;
    return 5;
  }
}
#define SPLITS 4

/* n values to cut: integers in [-1000, 1000] as t (int64, int32, float64); float32 sevenths in
 * (0, 143) (sums that round), or with eighths set, eighths in [-1.25, 1.25] (slopes of affine
 * maps that stay near 1 over thousands of elements). */
static inline void *piece_values(akx_dtype t, int64_t n, uint64_t seed, int eighths) {
  void *g = tfx_xmalloc((size_t)n * ref_size(t));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = (int64_t)(ref_rand(seed, (uint64_t)i) % 2001) - 1000;
    if (t == AKX_INT64) ((int64_t *)g)[i] = v;
    else if (t == AKX_INT32) ((int32_t *)g)[i] = (int32_t)v;
    else if (t == AKX_FLOAT64) ((double *)g)[i] = (double)v;
    else ((float *)g)[i] = eighths ? (float)(v % 11) / 8.0f : (float)(v + 1001) / 7.0f;
  }
  return g;
}

#endif
