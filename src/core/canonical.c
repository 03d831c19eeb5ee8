/* Canonical layout of a reduction source (PyTorch's way: fold any N-d view to as few dims
 * as possible before choosing a kernel). Every op here is commutative, so the order in
 * which elements are visited is free: negative strides are flipped and dims sorted. */
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
  /* Insertion sort, largest stride first: the smallest stride ends innermost (last). */
  for (int32_t i = 1; i < nd; ++i) {
    for (int32_t j = i; j > 0 && out->strides[j - 1] < out->strides[j]; --j) {
      int64_t t = out->strides[j]; out->strides[j] = out->strides[j - 1]; out->strides[j - 1] = t;
      t = out->shape[j]; out->shape[j] = out->shape[j - 1]; out->shape[j - 1] = t;
    }
  }
  /* Merge a dim into its inner neighbour where the two tile memory without a gap. */
  for (int32_t d = nd - 1; d > 0; --d) {
    if (akx__mul_is(out->shape[d], out->strides[d], out->strides[d - 1])) {
      out->shape[d - 1] *= out->shape[d];
      out->strides[d - 1] = out->strides[d];
      for (int32_t k = d; k < nd - 1; ++k) {
        out->shape[k] = out->shape[k + 1];
        out->strides[k] = out->strides[k + 1];
      }
      --nd;
    }
  }
  out->ndim = nd;
  out->contiguous = nd == 0 || (nd == 1 && out->strides[0] == 1);
  if (nd == 0) { /* one element (or all dims of size 1) */
    out->ndim = 1;
    out->shape[0] = out->n;
    out->strides[0] = 1;
  }
}
