/* Exact neutral elements of the built-in ops per accumulator dtype. A rank with no element
 * contributes one, so that the gathered partials form a regular array (rank r at r * bytes) that
 * libakx combines in one call, without a host-side compaction; an exact neutral element leaves
 * every other partial's bits as they are (x + -0.0 is x for x = +0.0 too, min(+inf, NaN) is
 * NaN). */
#include <float.h>
#include <math.h>
#include <string.h>
#include "internal.h"

/* float16 and bfloat16 bit patterns (IEEE binary16; the upper half of a binary32). */
enum { F16_ONE = 0x3C00, F16_INF = 0x7C00, BF16_ONE = 0x3F80, BF16_INF = 0x7F80, HALF_SIGN = 0x8000 };

#define PUT(T, v)        \
  do {                   \
    const T v_ = (v);    \
    memcpy(out, &v_, sizeof v_); \
  } while (0)

/* One value of a real dtype: kind 0 zero, 1 one, 2 +largest, 3 -largest (lowest), 4 all ones,
 * 5 negative zero. */
static int put_real(akx_dtype t, int kind, void *out) {
  switch (t) {
  case AKX_BOOL: PUT(uint8_t, (kind == 1 || kind == 2 || kind == 4) ? 1 : 0); return 1;
#define INT_CASE(D, T, MAXV, MINV)                                                          \
  case D:                                                                                   \
    PUT(T, kind == 1 ? (T)1 : kind == 2 ? (T)(MAXV) : kind == 3 ? (T)(MINV) : kind == 4 ? (T)~(T)0 : (T)0); \
    return 1;
    INT_CASE(AKX_INT8, int8_t, INT8_MAX, INT8_MIN)
    INT_CASE(AKX_UINT8, uint8_t, UINT8_MAX, 0)
    INT_CASE(AKX_INT16, int16_t, INT16_MAX, INT16_MIN)
    INT_CASE(AKX_UINT16, uint16_t, UINT16_MAX, 0)
    INT_CASE(AKX_INT32, int32_t, INT32_MAX, INT32_MIN)
    INT_CASE(AKX_UINT32, uint32_t, UINT32_MAX, 0)
    INT_CASE(AKX_INT64, int64_t, INT64_MAX, INT64_MIN)
    INT_CASE(AKX_UINT64, uint64_t, UINT64_MAX, 0)
#undef INT_CASE
  case AKX_FLOAT16:
  case AKX_BFLOAT16: {
    const int f16 = t == AKX_FLOAT16;
    const uint16_t one = f16 ? F16_ONE : BF16_ONE, inf = f16 ? F16_INF : BF16_INF;
    if (kind == 4) return 0;
    PUT(uint16_t, kind == 1 ? one : kind == 2 ? inf : kind == 3 ? (uint16_t)(inf | HALF_SIGN)
                  : kind == 5 ? (uint16_t)HALF_SIGN : (uint16_t)0);
    return 1;
  }
  case AKX_FLOAT32:
    if (kind == 4) return 0;
    PUT(float, kind == 1 ? 1.0f : kind == 2 ? INFINITY : kind == 3 ? -INFINITY : kind == 5 ? -0.0f : 0.0f);
    return 1;
  case AKX_FLOAT64:
    if (kind == 4) return 0;
    PUT(double, kind == 1 ? 1.0 : kind == 2 ? (double)INFINITY : kind == 3 ? -(double)INFINITY
                : kind == 5 ? -0.0 : 0.0);
    return 1;
  default: return 0;
  }
}

int akx__dist_identity(akx_op op, akx_dtype acc, void *out) {
  memset(out, 0, 16);
  if (acc == AKX_COMPLEX64 || acc == AKX_COMPLEX128) {
    const akx_dtype part = acc == AKX_COMPLEX64 ? AKX_FLOAT32 : AKX_FLOAT64;
    const size_t half = akx_dtype_size(part);
    if (op == AKX_OP_ADD) /* (-0.0, -0.0): complex addition adds the parts */
      return put_real(part, 5, out) && put_real(part, 5, (unsigned char *)out + half);
    if (op == AKX_OP_MUL) return put_real(part, 1, out) && put_real(part, 0, (unsigned char *)out + half);
    return 0;
  }
  const int is_float = acc == AKX_FLOAT16 || acc == AKX_BFLOAT16 || acc == AKX_FLOAT32 || acc == AKX_FLOAT64;
  switch (op) {
  case AKX_OP_ADD: return put_real(acc, is_float ? 5 : 0, out);
  case AKX_OP_MUL: return put_real(acc, 1, out);
  case AKX_OP_MIN: return put_real(acc, 2, out);
  case AKX_OP_MAX: return put_real(acc, 3, out);
  case AKX_OP_AND: return put_real(acc, 4, out);
  case AKX_OP_OR:
  case AKX_OP_XOR: return put_real(acc, 0, out);
  default: return 0;
  }
}
