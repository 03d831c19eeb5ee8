/* Memory order as include/akx.h defines it for akx_findall, for a user op's map position `i`
 * and for ARGMIN/ARGMAX: the linear index over an array's dims ordered by decreasing |stride|
 * (a tie keeps the lower dim outer, a stable sort), each dim walked in its own index order.
 * Header-only and libakx-free: the host side of the tests that check positions. */
#ifndef AKX_TEST_MEM_ORDER_H
#define AKX_TEST_MEM_ORDER_H
#include <stdint.h>
#include <stdlib.h>
#include "akx.h"

/* order[0] is the outermost dim (largest |stride|), order[n - 1] the innermost, over the n dims
 * listed in dims (NULL: all dims 0..n-1). */
static inline void tmo_order(int32_t n, const int32_t *dims, const int64_t *strides,
                             int32_t *order) {
  for (int32_t k = 0; k < n; ++k) order[k] = dims ? dims[k] : k;
  for (int32_t i = 1; i < n; ++i)
    for (int32_t j = i; j > 0 && llabs(strides[order[j - 1]]) < llabs(strides[order[j]]); --j) {
      const int32_t t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
}

/* The memory-order position of the element at index idx, counting over the n dims listed in
 * dims (NULL: all of them): a reduction along those dims numbers its elements so. */
static inline int64_t tmo_position(int32_t n, const int32_t *dims, const int64_t *shape,
                                   const int64_t *strides, const int64_t *idx) {
  int32_t order[AKX_MAX_DIMS];
  tmo_order(n, dims, strides, order);
  int64_t pos = 0;
  for (int32_t k = 0; k < n; ++k) pos = pos * shape[order[k]] + idx[order[k]];
  return pos;
}

/* The index (idx, ndim entries) of the element at memory-order position pos of a whole array. */
static inline void tmo_index(int32_t ndim, const int64_t *shape, const int64_t *strides,
                             int64_t pos, int64_t *idx) {
  int32_t order[AKX_MAX_DIMS];
  tmo_order(ndim, NULL, strides, order);
  for (int32_t k = ndim - 1; k >= 0; --k) {
    idx[order[k]] = pos % shape[order[k]];
    pos /= shape[order[k]];
  }
}

/* The element offset (from element (0, ..., 0)) of index idx. */
static inline int64_t tmo_offset(int32_t ndim, const int64_t *strides, const int64_t *idx) {
  int64_t off = 0;
  for (int32_t d = 0; d < ndim; ++d) off += idx[d] * strides[d];
  return off;
}

/* Steps idx through shape in C order (the last dim fastest); 0 after the last index. */
static inline int tmo_next(int32_t ndim, const int64_t *shape, int64_t *idx) {
  for (int32_t d = ndim - 1; d >= 0; --d) {
    if (++idx[d] < shape[d]) return 1;
    idx[d] = 0;
  }
  return 0;
}
#endif
