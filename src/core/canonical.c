/* Canonical layout of a reduction source (PyTorch's way: fold any N-d view to as few dims
 * as possible before choosing a kernel), and the fold every family's canonical form uses.
 * The built-in ops are commutative, so the order in which elements are visited is free: negative
 * strides are flipped and dims sorted. A user op's map reads positions: its form keeps them. */
#include <stdlib.h>
#include <string.h>
#include "internal.h"

/* a's dims of extent other than 1, in its own index order: flip takes |stride|. */
static int32_t dims_of(const akx_array *a, int flip, int64_t *shape, int64_t *strides) {
  int32_t nd = 0;
  for (int32_t d = 0; d < a->ndim; ++d) {
    if (a->shape[d] == 1) continue;
    shape[nd] = a->shape[d];
    strides[nd] = flip && a->strides[d] < 0 ? -a->strides[d] : a->strides[d];
    ++nd;
  }
  int64_t *const st[1] = {strides};
  return akx__fold_dims(nd, shape, st, 1);
}

static void fill_source(const akx_array *a, const akx__extent *ext, int flip, akx__source *out) {
  memset(out, 0, sizeof *out);
  out->dtype = a->dtype;
  out->n = ext->count;
  /* Flipped: the lowest address, where walking every flipped stride starts. */
  out->data = flip ? (const char *)a->data + ext->min_offset * (int64_t)akx_dtype_size(a->dtype) : a->data;
  const int32_t nd = dims_of(a, flip, out->shape, out->strides);
  out->ndim = nd;
  out->contiguous = nd == 0 || (nd == 1 && out->strides[0] == 1);
  if (nd == 0) { /* one element (or all dims of size 1) */
    out->ndim = 1;
    out->shape[0] = out->n;
    out->strides[0] = 1;
  }
}

void akx__canonical_source(const akx_array *a, const akx__extent *ext, akx__source *out) { fill_source(a, ext, 1, out); }

void akx__canonical_source_ordered(const akx_array *a, const akx__extent *ext, akx__source *out) {
  fill_source(a, ext, 0, out);
}

int32_t akx__memory_order_fold(const akx_array *a, int64_t *shape, int64_t *strides) {
  return dims_of(a, 0, shape, strides);
}

/* a * b == want, without overflowing (huge strides). */
static int mul_is(int64_t a, int64_t b, int64_t want) {
  int64_t p;
  return !__builtin_mul_overflow(a, b, &p) && p == want;
}

/* The memory order, the one rule of every family's canonical form, findall's positions and
 * libakx_dist's agreement on them: dim a goes outside dim b when its |stride| is larger, in the
 * first of the arrays where the two differ; ties keep their order (a stable sort: the later
 * dim inner, as C order). */
static int outer_than(const int64_t *const *strides, int32_t narrays, int32_t a, int32_t b) {
  for (int32_t k = 0; k < narrays; ++k) {
    const int64_t sa = llabs(strides[k][a]), sb = llabs(strides[k][b]);
    if (sa != sb) return sa > sb;
  }
  return 0;
}

/* order[0..nd) := the dims in memory order, outermost first (insertion sort: stable). */
static void memory_order(int32_t nd, const int64_t *const *strides, int32_t narrays, int32_t *order) {
  for (int32_t i = 0; i < nd; ++i) order[i] = i;
  for (int32_t i = 1; i < nd; ++i)
    for (int32_t j = i; j > 0 && outer_than(strides, narrays, order[j], order[j - 1]); --j) {
      const int32_t t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
}

void akx_array_memory_order(const akx_array *a, int32_t *order) {
  if (!a || !order || a->ndim < 0 || a->ndim > AKX_MAX_DIMS) return;
  const int64_t *const strides[1] = {a->strides};
  memory_order(a->ndim, strides, 1, order);
}

int32_t akx__fold_dims(int32_t nd, int64_t *shape, int64_t *const *strides, int32_t narrays) {
  int32_t order[AKX_MAX_DIMS];
  memory_order(nd, (const int64_t *const *)strides, narrays, order);
  int64_t was[AKX_MAX_DIMS];
  memcpy(was, shape, (size_t)nd * sizeof *shape);
  for (int32_t d = 0; d < nd; ++d) shape[d] = was[order[d]];
  for (int32_t k = 0; k < narrays; ++k) {
    memcpy(was, strides[k], (size_t)nd * sizeof *was);
    for (int32_t d = 0; d < nd; ++d) strides[k][d] = was[order[d]];
  }
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
