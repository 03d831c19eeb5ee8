/* One process's stand-in for the exchange of pieces that tests/test_mapreduce_piece.c and
 * tests/test_reduce_dims_piece.c run: the pieces cannot run at once, so each reduction runs
 * twice. Round 1 gathers every piece's partial into one device buffer (the results then see
 * only the pieces so far: ignored); round 2 hands every piece the full buffer, and checks that
 * each piece hands over the same bytes as in round 1. Header-only, over fixture.h. */
#ifndef AKX_TEST_GATHER_H
#define AKX_TEST_GATHER_H
#include <stdlib.h>
#include <string.h>
#include "fixture.h"

typedef struct {
  akx_context *ctx;
  int64_t k, pieces;     /* the piece now running; how many there are */
  int round;             /* 1: gather the partials; 2: hand out the gathered ones */
  void *all;             /* `pieces` blocks of `bytes` (device), zeroed at the first call */
  unsigned char *seen;   /* round 1's partials, on the host */
  size_t bytes;
  int calls;
  /* Round 2 saw another size or another partial: asserted by the caller, since an assert here
   * would leave ctx's lock held. */
  int wrong_size, changed;
  akx_status fail;       /* returned at once when not AKX_SUCCESS */
} tgx_gather;

static inline tgx_gather tgx_make(akx_context *ctx, int64_t pieces) {
  const tgx_gather x = {.ctx = ctx, .pieces = pieces, .round = 1, .fail = AKX_SUCCESS};
  return x;
}

static inline void tgx_free(tgx_gather *x) { tfx_free(x->ctx, x->all), free(x->seen); }

/* The exchange (akx_reduce_exchange); arg: a tgx_gather. */
static inline akx_status tgx_exchange(void *arg, const void *partial, size_t bytes, const void **all) {
  tgx_gather *x = (tgx_gather *)arg;
  akx_context *ctx = x->ctx;
  x->calls++;
  if (x->fail != AKX_SUCCESS) return x->fail;
  const size_t total = (size_t)x->pieces * bytes;
  akx_status st;
  if (!x->all) {
    x->bytes = bytes;
    if (!(x->seen = (unsigned char *)calloc(total, 1))) return AKX_ERROR_OUT_OF_MEMORY;
    if ((st = akx_malloc(ctx, &x->all, total)) != AKX_SUCCESS) return st;
    st = akx_memcpy(ctx, x->all, x->seen, total, AKX_COPY_HOST_TO_DEVICE);
    if (st != AKX_SUCCESS) return st;
  }
  if (bytes != x->bytes) return x->wrong_size = 1, AKX_ERROR_INTERNAL;
  unsigned char *mine = x->seen + (size_t)x->k * bytes;
  if (x->round == 1) {
    st = akx_memcpy(ctx, (char *)x->all + (size_t)x->k * bytes, partial, bytes,
                    AKX_COPY_DEVICE_TO_DEVICE);
    if (st == AKX_SUCCESS) st = akx_memcpy(ctx, mine, partial, bytes, AKX_COPY_DEVICE_TO_HOST);
    if (st != AKX_SUCCESS) return st;
  } else {
    unsigned char *now = (unsigned char *)malloc(bytes);
    if (!now) return AKX_ERROR_OUT_OF_MEMORY;
    st = akx_memcpy(ctx, now, partial, bytes, AKX_COPY_DEVICE_TO_HOST);
    if (st == AKX_SUCCESS && memcmp(now, mine, bytes) != 0) x->changed = 1;
    free(now);
    if (st != AKX_SUCCESS) return st;
  }
  *all = x->all;
  return AKX_SUCCESS;
}

#endif
