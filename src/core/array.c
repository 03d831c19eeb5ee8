/* Array descriptors and option defaults. */
#include <stdint.h>
#include <string.h>
#include "akx.h"

akx_array akx_vector(void *data, akx_dtype t, int64_t n) {
  return akx_array_c(data, t, 1, &n);
}

static akx_array contiguous(void *data, akx_dtype t, int32_t ndim, const int64_t *shape,
                            int row_major) {
  akx_array a;
  memset(&a, 0, sizeof a);
  a.data = data;
  a.dtype = t;
  a.ndim = ndim;
  if (ndim < 0 || ndim > AKX_MAX_DIMS) return a; /* left for validation to refuse */
  if (ndim > 0 && !shape) {
    /* No shape to read: a descriptor validation refuses (shape[0] = -1), never a scalar. */
    a.shape[0] = -1;
    return a;
  }
  int64_t stride = 1;
  for (int32_t i = 0; i < ndim; ++i) {
    const int32_t d = row_major ? ndim - 1 - i : i;
    a.shape[d] = shape[d];
    a.strides[d] = stride;
    /* A product past int64 leaves a stride validation refuses (its extent overflows). */
    if (__builtin_mul_overflow(stride, shape[d] > 0 ? shape[d] : 1, &stride)) stride = INT64_MAX;
  }
  return a;
}

akx_array akx_array_c(void *data, akx_dtype t, int32_t ndim, const int64_t *shape) {
  return contiguous(data, t, ndim, shape, 1);
}

akx_array akx_array_f(void *data, akx_dtype t, int32_t ndim, const int64_t *shape) {
  return contiguous(data, t, ndim, shape, 0);
}

akx_reduce_opts akx_reduce_opts_default(void) {
  akx_reduce_opts o;
  memset(&o, 0, sizeof o);
  o.acc = AKX_DTYPE_AUTO;
  return o;
}

akx_scan_opts akx_scan_opts_default(void) {
  akx_scan_opts o;
  memset(&o, 0, sizeof o);
  o.acc = AKX_DTYPE_AUTO;
  return o;
}
