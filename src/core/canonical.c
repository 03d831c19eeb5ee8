/* Canonical layout of a reduction source (PyTorch's way: fold any N-d view to as few dims
 * as possible before choosing a kernel), and the fold every family's canonical form uses.
 * The built-in ops are commutative, so the order in which elements are visited is free: negative
 * strides are flipped and dims sorted. A user op's map reads positions: its form keeps them. */
#include <stdlib.h>
#include <string.h>
#include "internal.h"

void akx__canonical_source(const akx_array *a, const akx__extent *ext, akx__source *out) {
  memset(out, 0, sizeof *out);
  out->dtype = a->dtype;
  out->n = ext->count;
  const size_t size = akx_dtype_size(a->dtype);
  /* The lowest address: flipping every negative stride starts there. */
  out->data = (const char *)a->data + ext->min_offset * (int64_t)size;
  int32_t nd = 0;
  for (int32_t d = 0; d < a->ndim; ++d) {
    if (a->shape[d] == 1) continue;
    out->shape[nd] = a->shape[d];
    out->strides[nd] = a->strides[d] < 0 ? -a->strides[d] : a->strides[d];
    ++nd;
  }
  int64_t *const strides[1] = {out->strides};
  nd = akx__fold_dims(nd, out->shape, strides, 1);
  out->ndim = nd;
  out->contiguous = nd == 0 || (nd == 1 && out->strides[0] == 1);
  if (nd == 0) { /* one element (or all dims of size 1) */
    out->ndim = 1;
    out->shape[0] = out->n;
    out->strides[0] = 1;
  }
}

void akx__canonical_source_ordered(const akx_array *a, const akx__extent *ext, akx__source *out) {
  memset(out, 0, sizeof *out);
  out->dtype = a->dtype;
  out->n = ext->count;
  out->data = a->data;
  int32_t nd = 0;
  for (int32_t d = 0; d < a->ndim; ++d) {
    if (a->shape[d] == 1) continue;
    out->shape[nd] = a->shape[d];
    out->strides[nd] = a->strides[d];
    ++nd;
  }
  int64_t *const strides[1] = {out->strides};
  nd = akx__fold_dims(nd, out->shape, strides, 1);
  out->ndim = nd;
  out->contiguous = nd == 0 || (nd == 1 && out->strides[0] == 1);
  if (nd == 0) {
    out->ndim = 1;
    out->shape[0] = out->n;
    out->strides[0] = 1;
  }
}

/* a * b == want, without overflowing (huge strides). */
static int mul_is(int64_t a, int64_t b, int64_t want) {
  int64_t p;
  return !__builtin_mul_overflow(a, b, &p) && p == want;
}

/* Is dim a to be ordered before dim b: a larger |stride| in the first array that differs. */
static int outer_than(int64_t *const *strides, int32_t narrays, int32_t a, int32_t b) {
  for (int32_t k = 0; k < narrays; ++k) {
    const int64_t sa = llabs(strides[k][a]), sb = llabs(strides[k][b]);
    if (sa != sb) return sa > sb;
  }
  return 0;
}

static void swap_dims(int64_t *shape, int64_t *const *strides, int32_t narrays, int32_t a, int32_t b) {
  int64_t t = shape[a]; shape[a] = shape[b]; shape[b] = t;
  for (int32_t k = 0; k < narrays; ++k) {
    t = strides[k][a]; strides[k][a] = strides[k][b]; strides[k][b] = t;
  }
}

int32_t akx__fold_dims(int32_t nd, int64_t *shape, int64_t *const *strides, int32_t narrays) {
  for (int32_t i = 1; i < nd; ++i) /* insertion sort: stable */
    for (int32_t j = i; j > 0 && outer_than(strides, narrays, j, j - 1); --j)
      swap_dims(shape, strides, narrays, j, j - 1);
  for (int32_t d = nd - 1; d > 0; --d) {
    int tiles = 1;
    for (int32_t k = 0; k < narrays && tiles; ++k) tiles = mul_is(shape[d], strides[k][d], strides[k][d - 1]);
    if (!tiles) continue;
    shape[d - 1] *= shape[d];
    for (int32_t k = 0; k < narrays; ++k) strides[k][d - 1] = strides[k][d];
    for (int32_t e = d; e < nd - 1; ++e) {
      shape[e] = shape[e + 1];
      for (int32_t k = 0; k < narrays; ++k) strides[k][e] = strides[k][e + 1];
    }
    --nd;
  }
  return nd;
}
