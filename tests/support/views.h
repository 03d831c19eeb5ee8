/* Views over a host parent and its device copy, for tests that walk the elements themselves
 * (user ops, ARGMIN/ARGMAX): the same offset, shape and strides over both buffers, so that the
 * host reference reads the very elements the call reads. Header-only, over fixture.h. */
#ifndef AKX_TEST_VIEWS_H
#define AKX_TEST_VIEWS_H
#include <string.h>
#include "fixture.h"
#include "mem_order.h"

typedef struct {
  akx_array host, dev; /* the same view over the host parent and over its device copy */
  void *dev_base;      /* the device parent (to free) */
} tvw_pair;

/* A whole contiguous array of `shape`: C order (the last dim has stride 1) or Fortran order
 * (the first dim has stride 1). */
static inline tfx_layout tvw_dense(int32_t nd, const int64_t *shape, int fortran) {
  tfx_layout L;
  memset(&L, 0, sizeof L);
  L.ndim = nd;
  int64_t s = 1;
  for (int32_t k = 0; k < nd; ++k) {
    const int32_t d = fortran ? k : nd - 1 - k;
    L.shape[d] = shape[d];
    L.strides[d] = s;
    s *= shape[d] > 0 ? shape[d] : 1;
  }
  L.parent_n = 1;
  for (int32_t d = 0; d < nd; ++d) L.parent_n *= shape[d];
  return L;
}

static inline akx_array tvw_view(void *base, akx_dtype t, const tfx_layout *L) {
  akx_array a;
  memset(&a, 0, sizeof a);
  a.data = (unsigned char *)base + L->offset * (int64_t)ref_size(t);
  a.dtype = t;
  a.ndim = L->ndim;
  for (int32_t d = 0; d < L->ndim; ++d) {
    a.shape[d] = L->shape[d];
    a.strides[d] = L->strides[d];
  }
  return a;
}

/* Uploads L->parent_n elements of host_parent; the host view points into host_parent. */
static inline tvw_pair tvw_upload(akx_context *ctx, akx_dtype t, const void *host_parent,
                                  const tfx_layout *L) {
  tvw_pair p;
  p.dev_base = tfx_upload(ctx, host_parent, (size_t)L->parent_n * ref_size(t));
  p.host = tvw_view((void *)host_parent, t, L);
  p.dev = tvw_view(p.dev_base, t, L);
  return p;
}

static inline void tvw_free(akx_context *ctx, tvw_pair *p) {
  tfx_free(ctx, p->dev_base);
  p->dev_base = NULL;
}

/* The host address of element idx of a (host) view. */
static inline const void *tvw_at(const akx_array *a, const int64_t *idx) {
  return (const unsigned char *)a->data +
         tmo_offset(a->ndim, a->strides, idx) * (int64_t)ref_size(a->dtype);
}

/* C-order strides of a contiguous array of `shape` (a dst the tests read back linearly). */
static inline void tvw_c_strides(int32_t nd, const int64_t *shape, int64_t *strides) {
  int64_t s = 1;
  for (int32_t d = nd - 1; d >= 0; --d) {
    strides[d] = s;
    s *= shape[d] > 0 ? shape[d] : 1;
  }
}

/* A C-order device array of `shape`, its bytes set to `poison` (the call must overwrite them). */
static inline akx_array tvw_dst(akx_context *ctx, akx_dtype t, int32_t nd, const int64_t *shape,
                                unsigned char poison) {
  akx_array a;
  memset(&a, 0, sizeof a);
  a.dtype = t;
  a.ndim = nd;
  int64_t n = 1;
  for (int32_t d = 0; d < nd; ++d) {
    a.shape[d] = shape[d];
    n *= shape[d];
  }
  tvw_c_strides(nd, shape, a.strides);
  const size_t bytes = (size_t)n * ref_size(t);
  unsigned char *fill = tfx_xmalloc(bytes);
  memset(fill, poison, bytes);
  a.data = tfx_upload(ctx, fill, bytes);
  free(fill);
  return a;
}

static inline int64_t tvw_count(const akx_array *a) {
  int64_t n = 1;
  for (int32_t d = 0; d < a->ndim; ++d) n *= a->shape[d];
  return n;
}
#endif
