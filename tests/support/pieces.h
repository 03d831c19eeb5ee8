/* The cuts of an extent into consecutive pieces that tests/test_scan_piece.c and
 * tests/test_mapreduce_piece.c run, uneven and with empty pieces where a piece is most easily
 * mishandled: first, and in the middle. */
#ifndef AKX_TEST_PIECES_H
#define AKX_TEST_PIECES_H
#include <stdint.h>

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

#endif
