/* Host reference for libakx reductions: see reference.h. Nothing here calls libakx. */
#include "reference.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- dtypes ---------------------------------------------------------------------------- */

static const struct {
  akx_dtype t;
  size_t size;
  const char *name;
} k_types[] = {
    {AKX_BOOL, 1, "bool"},         {AKX_INT8, 1, "int8"},       {AKX_UINT8, 1, "uint8"},
    {AKX_INT16, 2, "int16"},       {AKX_UINT16, 2, "uint16"},   {AKX_INT32, 4, "int32"},
    {AKX_UINT32, 4, "uint32"},     {AKX_INT64, 8, "int64"},     {AKX_UINT64, 8, "uint64"},
    {AKX_FLOAT16, 2, "float16"},   {AKX_BFLOAT16, 2, "bfloat16"}, {AKX_FLOAT32, 4, "float32"},
    {AKX_FLOAT64, 8, "float64"},   {AKX_COMPLEX64, 8, "complex64"},
    {AKX_COMPLEX128, 16, "complex128"},
};

static int valid_dtype(akx_dtype t) { return (int)t >= 0 && (int)t < 15; }

size_t ref_size(akx_dtype t) { return valid_dtype(t) ? k_types[t].size : 0; }

const char *ref_name(akx_dtype t) {
  if (t == AKX_DTYPE_AUTO) return "auto";
  return valid_dtype(t) ? k_types[t].name : "invalid";
}

const char *ref_op_name(akx_op op) {
  static const char *n[] = {"ADD", "MUL", "MIN", "MAX", "AND", "OR", "XOR"};
  return ((int)op >= 0 && (int)op < 7) ? n[op] : "op?";
}

const char *ref_map_name(akx_map m) {
  static const char *n[] = {"IDENTITY", "ABS", "SQUARE", "NONZERO"};
  return ((int)m >= 0 && (int)m < 4) ? n[m] : "map?";
}

int ref_is_bool(akx_dtype t) { return t == AKX_BOOL; }
int ref_is_sint(akx_dtype t) {
  return t == AKX_INT8 || t == AKX_INT16 || t == AKX_INT32 || t == AKX_INT64;
}
int ref_is_uint(akx_dtype t) {
  return t == AKX_UINT8 || t == AKX_UINT16 || t == AKX_UINT32 || t == AKX_UINT64;
}
int ref_is_int(akx_dtype t) { return ref_is_sint(t) || ref_is_uint(t); }
int ref_is_float(akx_dtype t) {
  return t == AKX_FLOAT16 || t == AKX_BFLOAT16 || t == AKX_FLOAT32 || t == AKX_FLOAT64;
}
int ref_is_complex(akx_dtype t) { return t == AKX_COMPLEX64 || t == AKX_COMPLEX128; }
int ref_bits(akx_dtype t) { return ref_is_bool(t) ? 8 : (int)ref_size(t) * 8; }

akx_dtype ref_component(akx_dtype t) {
  if (t == AKX_COMPLEX64) return AKX_FLOAT32;
  if (t == AKX_COMPLEX128) return AKX_FLOAT64;
  return t;
}

int ref_precision(akx_dtype t) {
  switch (ref_component(t)) {
    case AKX_FLOAT16: return 11;
    case AKX_BFLOAT16: return 8;
    case AKX_FLOAT32: return 24;
    case AKX_FLOAT64: return 53;
    default: return 64;
  }
}
int ref_emin(akx_dtype t) {
  switch (ref_component(t)) {
    case AKX_FLOAT16: return -14;
    case AKX_FLOAT64: return -1022;
    default: return -126;
  }
}
int ref_emax(akx_dtype t) {
  switch (ref_component(t)) {
    case AKX_FLOAT16: return 15;
    case AKX_FLOAT64: return 1023;
    default: return 127;
  }
}

/* ---- float16 / bfloat16 ------------------------------------------------------------------ */

/* Encode x into a 16-bit binary format with p bits of precision (implicit bit included)
 * and ebits exponent bits, rounding once to nearest, ties to even. x / q below only scales
 * by a power of two, exact in long double for every value these formats can reach;
 * nearbyintl rounds to nearest even in the default rounding mode. */
static uint16_t small_from_ld(long double x, int p, int ebits) {
  const int bias = (1 << (ebits - 1)) - 1;
  const int emin = 1 - bias, emax = bias;
  const uint16_t sign = signbit(x) ? 0x8000u : 0u;
  const uint16_t expmask = (uint16_t)(((1u << ebits) - 1u) << (p - 1));
  if (isnan(x)) return (uint16_t)(sign | expmask | (1u << (p - 2)));
  long double a = fabsl(x);
  if (isinf(a)) return (uint16_t)(sign | expmask);
  if (a == 0) return sign;
  int e = ilogbl(a);
  if (e < emin) e = emin;
  long double q = ldexpl(1.0L, e - (p - 1));
  long double m = nearbyintl(a / q);
  if (m >= ldexpl(1.0L, p)) { /* rounded up to the next binade */
    m = ldexpl(1.0L, p - 1);
    e += 1;
  }
  if (e > emax) return (uint16_t)(sign | expmask);
  if (m < ldexpl(1.0L, p - 1)) return (uint16_t)(sign | (uint16_t)m); /* subnormal (e == emin) */
  return (uint16_t)(sign | (uint16_t)((unsigned)(e + bias) << (p - 1)) |
                    (uint16_t)(m - ldexpl(1.0L, p - 1)));
}

/* The same rounding from a double's bits with integer arithmetic (the fast path: every
 * value the tests generate is a double). */
static uint16_t small_from_double(double x, int p, int ebits) {
  const int bias = (1 << (ebits - 1)) - 1;
  const int emin = 1 - bias, emax = bias;
  uint64_t b;
  memcpy(&b, &x, 8);
  const uint16_t sign = (b >> 63) ? 0x8000u : 0u;
  const uint16_t expmask = (uint16_t)(((1u << ebits) - 1u) << (p - 1));
  const int E = (int)((b >> 52) & 0x7FFu);
  const uint64_t M = b & ((UINT64_C(1) << 52) - 1u);
  if (E == 0x7FF) return M ? (uint16_t)(sign | expmask | (1u << (p - 2))) : (uint16_t)(sign | expmask);
  if (E == 0) return sign; /* zero, or a double subnormal: far below these formats' range */
  int e = E - 1023;
  const uint64_t sig = (UINT64_C(1) << 52) | M;
  int shift = 52 - (p - 1) + (e < emin ? emin - e : 0);
  if (shift >= 64) return sign;
  uint64_t q = sig >> shift;
  const uint64_t rem = sig & ((UINT64_C(1) << shift) - 1u), half = UINT64_C(1) << (shift - 1);
  if (rem > half || (rem == half && (q & 1u))) q++;
  if (e < emin) return (uint16_t)(sign | (uint16_t)q); /* subnormal (q = 2^(p-1): min normal) */
  if (q == (UINT64_C(1) << p)) {
    q >>= 1;
    e++;
  }
  if (e > emax) return (uint16_t)(sign | expmask);
  return (uint16_t)(sign | (uint16_t)((unsigned)(e + bias) << (p - 1)) |
                    (uint16_t)(q - (UINT64_C(1) << (p - 1))));
}

static long double small_to_ld(uint16_t h, int p, int ebits) {
  const int bias = (1 << (ebits - 1)) - 1;
  const unsigned ef = (h >> (p - 1)) & ((1u << ebits) - 1u);
  const unsigned mf = h & ((1u << (p - 1)) - 1u);
  const long double s = (h & 0x8000u) ? -1.0L : 1.0L;
  if (ef == (1u << ebits) - 1u) return mf ? copysignl(NAN, s) : s * (long double)INFINITY;
  if (ef == 0) return s * ldexpl((long double)mf, 1 - bias - (p - 1));
  return s * ldexpl((long double)(mf + (1u << (p - 1))), (int)ef - bias - (p - 1));
}

/* A long double that a double holds exactly takes the integer path; others (sums of the
 * reference) the long double path. Both round once to nearest even. */
static int is_double(long double x) { return isnan(x) || (long double)(double)x == x; }
uint16_t ref_f16_from_ld(long double x) {
  return is_double(x) ? small_from_double((double)x, 11, 5) : small_from_ld(x, 11, 5);
}
uint16_t ref_bf16_from_ld(long double x) {
  return is_double(x) ? small_from_double((double)x, 8, 8) : small_from_ld(x, 8, 8);
}
uint16_t ref_f16_from_ld_slow(long double x) { return small_from_ld(x, 11, 5); }
uint16_t ref_bf16_from_ld_slow(long double x) { return small_from_ld(x, 8, 8); }

/* decoding through tables built on first use */
static long double k_f16[65536], k_bf16[65536];
static int k_tables_ready;
static void build_tables(void) {
  for (uint32_t h = 0; h < 65536u; h++) {
    k_f16[h] = small_to_ld((uint16_t)h, 11, 5);
    k_bf16[h] = small_to_ld((uint16_t)h, 8, 8);
  }
  k_tables_ready = 1;
}
long double ref_f16_to_ld(uint16_t h) {
  if (!k_tables_ready) build_tables();
  return k_f16[h];
}
long double ref_bf16_to_ld(uint16_t h) {
  if (!k_tables_ready) build_tables();
  return k_bf16[h];
}

long double ref_round(long double x, akx_dtype t) {
  switch (ref_component(t)) {
    case AKX_FLOAT16: return ref_f16_to_ld(ref_f16_from_ld(x));
    case AKX_BFLOAT16: return ref_bf16_to_ld(ref_bf16_from_ld(x));
    case AKX_FLOAT32: { volatile float f = (float)x; return f; }
    case AKX_FLOAT64: { volatile double d = (double)x; return d; }
    default: return x;
  }
}

/* ---- values ------------------------------------------------------------------------------ */

static uint64_t wrap(uint64_t x, akx_dtype t) {
  if (ref_is_bool(t)) return x != 0;
  int w = ref_bits(t);
  if (w >= 64) return x;
  uint64_t mask = (UINT64_C(1) << w) - 1u;
  x &= mask;
  if (ref_is_sint(t) && (x >> (w - 1)) & 1u) x |= ~mask;
  return x;
}

static ref_val mk(akx_dtype t) {
  ref_val v;
  memset(&v, 0, sizeof v);
  v.t = t;
  return v;
}

ref_val ref_int(akx_dtype t, int64_t x) {
  if (ref_is_float(t) || ref_is_complex(t)) return ref_real(t, (long double)x);
  ref_val v = mk(t);
  v.i = wrap((uint64_t)x, t);
  return v;
}

ref_val ref_uint(akx_dtype t, uint64_t x) {
  if (ref_is_float(t) || ref_is_complex(t)) return ref_real(t, (long double)x);
  ref_val v = mk(t);
  v.i = wrap(x, t);
  return v;
}

ref_val ref_real(akx_dtype t, long double x) {
  if (!ref_is_float(t) && !ref_is_complex(t)) {
    ref_val r = mk(AKX_FLOAT64);
    r.re = x;
    return ref_convert(r, t);
  }
  ref_val v = mk(t);
  v.re = ref_round(x, t);
  return v;
}

ref_val ref_cplx(akx_dtype t, long double re, long double im) {
  ref_val v = mk(t);
  v.re = ref_round(re, t);
  v.im = ref_is_complex(t) ? ref_round(im, t) : 0;
  return v;
}

ref_val ref_nan(akx_dtype t) { return ref_cplx(t, NAN, ref_is_complex(t) ? NAN : 0); }

ref_val ref_load(const void *p, akx_dtype t) {
  ref_val v = mk(t);
  const unsigned char *b = (const unsigned char *)p;
  switch (t) {
    case AKX_BOOL: v.i = b[0]; break; /* raw byte: a checked result must be 0 or 1 */
    case AKX_INT8: { int8_t x; memcpy(&x, b, 1); v.i = (uint64_t)(int64_t)x; } break;
    case AKX_UINT8: v.i = b[0]; break;
    case AKX_INT16: { int16_t x; memcpy(&x, b, 2); v.i = (uint64_t)(int64_t)x; } break;
    case AKX_UINT16: { uint16_t x; memcpy(&x, b, 2); v.i = x; } break;
    case AKX_INT32: { int32_t x; memcpy(&x, b, 4); v.i = (uint64_t)(int64_t)x; } break;
    case AKX_UINT32: { uint32_t x; memcpy(&x, b, 4); v.i = x; } break;
    case AKX_INT64:
    case AKX_UINT64: memcpy(&v.i, b, 8); break;
    case AKX_FLOAT16: { uint16_t h; memcpy(&h, b, 2); v.re = ref_f16_to_ld(h); } break;
    case AKX_BFLOAT16: { uint16_t h; memcpy(&h, b, 2); v.re = ref_bf16_to_ld(h); } break;
    case AKX_FLOAT32: { float f; memcpy(&f, b, 4); v.re = f; } break;
    case AKX_FLOAT64: { double d; memcpy(&d, b, 8); v.re = d; } break;
    case AKX_COMPLEX64: {
      float f[2];
      memcpy(f, b, 8);
      v.re = f[0];
      v.im = f[1];
    } break;
    case AKX_COMPLEX128: {
      double d[2];
      memcpy(d, b, 16);
      v.re = d[0];
      v.im = d[1];
    } break;
    default: break;
  }
  return v;
}

ref_val ref_load_at(const void *base, akx_dtype t, int64_t index) {
  return ref_load((const unsigned char *)base + index * (int64_t)ref_size(t), t);
}

void ref_store(void *p, ref_val v) {
  unsigned char *b = (unsigned char *)p;
  switch (v.t) {
    case AKX_BOOL: b[0] = v.i != 0; break;
    case AKX_INT8:
    case AKX_UINT8: b[0] = (unsigned char)v.i; break;
    case AKX_INT16:
    case AKX_UINT16: { uint16_t x = (uint16_t)v.i; memcpy(b, &x, 2); } break;
    case AKX_INT32:
    case AKX_UINT32: { uint32_t x = (uint32_t)v.i; memcpy(b, &x, 4); } break;
    case AKX_INT64:
    case AKX_UINT64: memcpy(b, &v.i, 8); break;
    case AKX_FLOAT16: { uint16_t h = ref_f16_from_ld(v.re); memcpy(b, &h, 2); } break;
    case AKX_BFLOAT16: { uint16_t h = ref_bf16_from_ld(v.re); memcpy(b, &h, 2); } break;
    case AKX_FLOAT32: { float f = (float)v.re; memcpy(b, &f, 4); } break;
    case AKX_FLOAT64: { double d = (double)v.re; memcpy(b, &d, 8); } break;
    case AKX_COMPLEX64: { float f[2] = {(float)v.re, (float)v.im}; memcpy(b, f, 8); } break;
    case AKX_COMPLEX128: { double d[2] = {(double)v.re, (double)v.im}; memcpy(b, d, 16); } break;
    default: break;
  }
}

void ref_store_at(void *base, int64_t index, ref_val v) {
  ref_store((unsigned char *)base + index * (int64_t)ref_size(v.t), v);
}

long double ref_as_ld(ref_val v) {
  if (ref_is_bool(v.t) || ref_is_uint(v.t)) return (long double)v.i;
  if (ref_is_sint(v.t)) return (long double)(int64_t)v.i;
  return v.re;
}

static int nonzero(ref_val v) {
  if (ref_is_bool(v.t) || ref_is_int(v.t)) return v.i != 0;
  if (ref_is_complex(v.t)) return v.re != 0 || v.im != 0; /* NaN != 0 */
  return v.re != 0;
}

/* float -> integer: truncate toward zero, saturate, NaN -> 0 */
static uint64_t float_to_int_bits(long double x, akx_dtype to) {
  if (isnan(x)) return 0;
  int w = ref_bits(to);
  if (ref_is_uint(to)) {
    long double hi = ldexpl(1.0L, w) - 1.0L;
    if (x <= 0) return 0;
    if (x >= hi) return w == 64 ? UINT64_MAX : (UINT64_C(1) << w) - 1u;
    return (uint64_t)truncl(x);
  }
  long double lo = -ldexpl(1.0L, w - 1), hi = ldexpl(1.0L, w - 1) - 1.0L;
  if (x <= lo) return wrap(UINT64_C(1) << (w - 1), to);
  if (x >= hi) return (w == 64) ? (uint64_t)INT64_MAX : (UINT64_C(1) << (w - 1)) - 1u;
  return wrap((uint64_t)(int64_t)truncl(x), to);
}

ref_val ref_convert(ref_val v, akx_dtype to) {
  if (v.t == to) return v;
  ref_val r = mk(to);
  if (ref_is_bool(to)) {
    r.i = (uint64_t)nonzero(v);
    return r;
  }
  int from_intlike = ref_is_bool(v.t) || ref_is_int(v.t);
  if (ref_is_int(to)) {
    if (from_intlike)
      r.i = wrap(ref_is_bool(v.t) ? (uint64_t)(v.i != 0) : v.i, to);
    else
      r.i = float_to_int_bits(v.re, to);
    return r;
  }
  long double x = from_intlike ? (ref_is_bool(v.t) ? (long double)(v.i != 0) : ref_as_ld(v))
                               : v.re;
  r.re = ref_round(x, to);
  if (ref_is_complex(to)) r.im = ref_is_complex(v.t) ? ref_round(v.im, to) : 0;
  return r;
}

const char *ref_format(ref_val v, char *buf, size_t len) {
  if (ref_is_sint(v.t))
    snprintf(buf, len, "%s %lld", ref_name(v.t), (long long)(int64_t)v.i);
  else if (ref_is_uint(v.t) || ref_is_bool(v.t))
    snprintf(buf, len, "%s %llu", ref_name(v.t), (unsigned long long)v.i);
  else if (ref_is_complex(v.t))
    snprintf(buf, len, "%s (%.21Lg, %.21Lg)", ref_name(v.t), v.re, v.im);
  else
    snprintf(buf, len, "%s %.21Lg", ref_name(v.t), v.re);
  return buf;
}

/* ---- maps, ops, accumulators ------------------------------------------------------------- */

akx_dtype ref_map_result(akx_dtype src, akx_map m) {
  switch (m) {
    case AKX_MAP_IDENTITY: return src;
    case AKX_MAP_ABS:
    case AKX_MAP_SQUARE: return ref_component(src);
    case AKX_MAP_NONZERO: return AKX_BOOL;
    default: return src;
  }
}

static akx_dtype auto_acc_of(akx_dtype r, akx_op op) {
  if (r == AKX_FLOAT16 || r == AKX_BFLOAT16) return AKX_FLOAT32;
  if (op == AKX_OP_ADD || op == AKX_OP_MUL) {
    if (r == AKX_BOOL || r == AKX_INT8 || r == AKX_INT16 || r == AKX_INT32) return AKX_INT64;
    if (r == AKX_UINT8 || r == AKX_UINT16 || r == AKX_UINT32) return AKX_UINT64;
  }
  return r;
}

akx_dtype ref_auto_acc(akx_dtype src, akx_map m, akx_op op) {
  return auto_acc_of(ref_map_result(src, m), op);
}

int ref_op_valid(akx_op op, akx_dtype acc) {
  switch (op) {
    case AKX_OP_ADD:
    case AKX_OP_MUL: return !ref_is_bool(acc);
    case AKX_OP_MIN:
    case AKX_OP_MAX: return !ref_is_complex(acc);
    case AKX_OP_AND:
    case AKX_OP_OR:
    case AKX_OP_XOR: return ref_is_bool(acc) || ref_is_int(acc);
    default: return 0;
  }
}

akx_dtype ref_resolve_acc(akx_dtype src, akx_map m, akx_op op, akx_dtype acc) {
  akx_dtype r = ref_map_result(src, m);
  akx_dtype a = auto_acc_of(r, op);
  if (acc != AKX_DTYPE_AUTO && acc != a && acc != r) {
    int wide = 0;
    if (ref_is_bool(r) || ref_is_sint(r)) wide = acc == AKX_INT64 || acc == AKX_FLOAT64;
    else if (ref_is_uint(r)) /* and int64 below 64 bits: PyTorch promotes uint8 sums to int64 */
      wide = acc == AKX_UINT64 || acc == AKX_FLOAT64 || (acc == AKX_INT64 && r != AKX_UINT64);
    else if (ref_is_float(r)) wide = acc == AKX_FLOAT32 || acc == AKX_FLOAT64;
    else if (ref_is_complex(r)) wide = acc == AKX_COMPLEX128;
    if (!wide) return REF_UNSUPPORTED;
  }
  if (acc != AKX_DTYPE_AUTO) a = acc;
  return ref_op_valid(op, a) ? a : REF_UNSUPPORTED;
}

/* a * b rounded once to the float dtype t */
static long double mul_in(akx_dtype t, long double a, long double b) {
  if (ref_component(t) == AKX_FLOAT64) {
    volatile double r = (double)a * (double)b;
    return r;
  }
  return ref_round(a * b, t); /* products of <= 24-bit significands are exact in long double */
}

ref_val ref_map(ref_val x, akx_map m, akx_dtype acc, int *inexact) {
  switch (m) {
    case AKX_MAP_NONZERO: {
      ref_val b = mk(AKX_BOOL);
      b.i = (uint64_t)nonzero(x);
      return ref_convert(b, acc);
    }
    case AKX_MAP_ABS:
    case AKX_MAP_SQUARE:
      if (ref_is_complex(x.t)) {
        long double re = ref_round(x.re, acc), im = ref_round(x.im, acc);
        ref_val r = mk(acc);
        if (re == 0 || im == 0) { /* one part: |x| and x^2 are exact (NaN stays NaN) */
          long double a = (re == 0) ? fabsl(im) : fabsl(re);
          if (isnan(re) || isnan(im)) a = NAN;
          r.re = (m == AKX_MAP_ABS) ? a : mul_in(acc, a, a);
        } else {
          long double s = re * re + im * im;
          r.re = ref_round(m == AKX_MAP_ABS ? sqrtl(s) : s, acc);
          *inexact = 1;
        }
        return r;
      } else {
        ref_val y = ref_convert(x, acc);
        if (m == AKX_MAP_ABS) {
          if (ref_is_sint(acc) && (int64_t)y.i < 0) y.i = wrap(0u - y.i, acc);
          else if (ref_is_float(acc)) y.re = fabsl(y.re);
          return y;
        }
        if (ref_is_int(acc)) y.i = wrap(y.i * y.i, acc);
        else if (ref_is_float(acc)) y.re = mul_in(acc, y.re, y.re);
        return y; /* bool: x * x = x */
      }
    case AKX_MAP_IDENTITY:
    default: return ref_convert(x, acc);
  }
}

ref_val ref_neutral(akx_op op, akx_dtype acc) {
  ref_val v = mk(acc);
  int fl = ref_is_float(acc) || ref_is_complex(acc);
  int w = ref_bits(acc);
  switch (op) {
    case AKX_OP_ADD: break;
    case AKX_OP_MUL:
      if (fl) v.re = 1;
      else v.i = 1;
      break;
    case AKX_OP_MIN:
      if (fl) v.re = INFINITY;
      else if (ref_is_bool(acc)) v.i = 1;
      else if (ref_is_uint(acc)) v.i = wrap(UINT64_MAX, acc);
      else v.i = (w == 64) ? (uint64_t)INT64_MAX : (UINT64_C(1) << (w - 1)) - 1u;
      break;
    case AKX_OP_MAX:
      if (fl) v.re = -INFINITY;
      else if (ref_is_sint(acc)) v.i = wrap(UINT64_C(1) << (w - 1), acc);
      break;
    case AKX_OP_AND: v.i = ref_is_bool(acc) ? 1 : wrap(UINT64_MAX, acc); break;
    default: break;
  }
  return v;
}

void ref_acc_init(ref_acc *a, akx_op op, akx_dtype acc) {
  memset(a, 0, sizeof *a);
  a->acc = acc;
  a->op = op;
  a->v = ref_neutral(op, acc);
  a->mag_prod = 1;
}

/* x = M * 2^E with M an odd integer; returns E, sets *m to M (x finite, nonzero) */
/* x (finite, nonzero) as m x 2^e with m odd. x87's extended format holds the 64-bit significand
 * with its integer bit explicit: read from the bits (frexpl and ldexpl were a fifth of the time
 * of the tests that check long sums); other long doubles go through frexpl. */
static int odd_decompose(long double x, uint64_t *m) {
#if LDBL_MANT_DIG == 64 && LDBL_MAX_EXP == 16384
  unsigned char b[sizeof(long double)];
  memcpy(b, &x, sizeof x);
  uint64_t mant;
  uint16_t se;
  memcpy(&mant, b, 8);
  memcpy(&se, b + 8, 2);
  const int be = se & 0x7fff;
  const int tz = __builtin_ctzll(mant);
  *m = mant >> tz;
  return (be == 0 ? 1 : be) - 16383 - 63 + tz;
#else
  int e;
  long double f = frexpl(fabsl(x), &e); /* [0.5, 1) */
  uint64_t mant = (uint64_t)ldexpl(f, 64);
  int tz = __builtin_ctzll(mant);
  *m = mant >> tz;
  return e - 64 + tz;
#endif
}

static void add_exp(ref_acc *a, long double x) {
  if (x == 0 || !isfinite(x)) return;
  uint64_t m;
  int e = odd_decompose(x, &m);
  if (!a->have_exp || e < a->min_exp) a->min_exp = e;
  a->have_exp = 1;
}

static void mul_track(ref_acc *a, long double x) {
  if (x == 0 || !isfinite(x)) {
    a->mul_giveup = 1;
    return;
  }
  uint64_t m;
  (void)odd_decompose(x, &m);
  long double l2 = log2l(fabsl(x));
  a->mul_odd_bits += log2l((long double)m);
  if (l2 > 0) a->mul_hi += l2;
  if (l2 < 0) a->mul_lo += l2;
}

void ref_acc_add(ref_acc *a, ref_val x) {
  const akx_dtype t = a->acc;
  a->terms++;
  if (ref_is_bool(t) || ref_is_int(t)) {
    uint64_t v = a->v.i, y = x.i;
    int s = ref_is_sint(t);
    switch (a->op) {
      case AKX_OP_ADD: v = v + y; break;
      case AKX_OP_MUL: v = v * y; break;
      case AKX_OP_MIN:
        if (s ? (int64_t)y < (int64_t)v : y < v) v = y;
        break;
      case AKX_OP_MAX:
        if (s ? (int64_t)y > (int64_t)v : y > v) v = y;
        break;
      case AKX_OP_AND: v = v & y; break;
      case AKX_OP_OR: v = v | y; break;
      case AKX_OP_XOR: v = v ^ y; break;
      default: break;
    }
    a->v.i = wrap(v, t);
    return;
  }
  switch (a->op) {
    case AKX_OP_ADD:
      a->v.re += x.re;
      a->v.im += x.im;
      a->mag_re += fabsl(x.re);
      a->mag_im += fabsl(x.im);
      add_exp(a, x.re);
      add_exp(a, x.im);
      break;
    case AKX_OP_MUL:
      if (ref_is_complex(t)) {
        long double re = a->v.re * x.re - a->v.im * x.im;
        long double im = a->v.re * x.im + a->v.im * x.re;
        a->v.re = re;
        a->v.im = im;
        a->mag_prod *= hypotl(x.re, x.im);
        a->inexact = 1;
      } else {
        a->v.re *= x.re;
        a->mag_prod *= fabsl(x.re);
        mul_track(a, x.re);
      }
      break;
    case AKX_OP_MIN:
    case AKX_OP_MAX:
      if (isnan(x.re)) a->nan = 1;
      else if (a->op == AKX_OP_MIN ? x.re < a->v.re : x.re > a->v.re) a->v.re = x.re;
      break;
    default: break;
  }
}

ref_expect ref_expect_exact(ref_val v) {
  ref_expect e;
  memset(&e, 0, sizeof e);
  e.t = v.t;
  if (ref_is_float(v.t) || ref_is_complex(v.t)) {
    e.lo[0] = e.hi[0] = v.re;
    e.lo[1] = e.hi[1] = v.im;
    e.nan[0] = isnan(v.re);
    e.nan[1] = ref_is_complex(v.t) && isnan(v.im);
  } else {
    e.lo[0] = e.hi[0] = ref_as_ld(v);
  }
  return e;
}

ref_expect ref_acc_expect(const ref_acc *a) {
  const akx_dtype t = a->acc;
  ref_expect e = ref_expect_exact(a->v);
  if (!(ref_is_float(t) || ref_is_complex(t))) return e;
  const int p = ref_precision(t);
  const long double eps = ldexpl(1.0L, 1 - p), tiny = ldexpl(1.0L, ref_emin(t));
  const long double n = (long double)a->terms + 2;
  long double tol_re = 0, tol_im = 0;
  switch (a->op) {
    case AKX_OP_MIN:
    case AKX_OP_MAX:
      if (a->nan) {
        e.nan[0] = 1;
        return e;
      }
      if (a->inexact) tol_re = 4 * eps * fabsl(a->v.re) + tiny;
      break;
    case AKX_OP_ADD: {
      long double bound = a->have_exp ? ldexpl(1.0L, p + a->min_exp) : 0;
      int exact = !a->inexact && (!a->have_exp || (a->mag_re <= bound && a->mag_im <= bound &&
                                                   a->min_exp >= ref_emin(t) - (p - 1)));
      if (!exact) {
        tol_re = n * eps * a->mag_re + tiny;
        tol_im = n * eps * a->mag_im + tiny;
      }
    } break;
    case AKX_OP_MUL: {
      /* exact when the odd parts fit p bits together and no subset product leaves the
       * normal range */
      int exact = !a->inexact && !a->mul_giveup && floorl(a->mul_odd_bits) + 1 <= p &&
                  a->mul_hi < ref_emax(t) && a->mul_lo >= ref_emin(t);
      if (!exact) {
        long double rel = (ref_is_complex(t) ? 3 : 1) * n * eps * a->mag_prod + tiny;
        tol_re = tol_im = rel;
      }
    } break;
    default: break;
  }
  e.lo[0] = a->v.re - tol_re;
  e.hi[0] = a->v.re + tol_re;
  e.lo[1] = a->v.im - tol_im;
  e.hi[1] = a->v.im + tol_im;
  /* an exact result must also be representable: round it (a no-op when it is) */
  if (tol_re == 0) e.lo[0] = e.hi[0] = ref_round(a->v.re, t);
  if (tol_im == 0 && ref_is_complex(t)) e.lo[1] = e.hi[1] = ref_round(a->v.im, t);
  /* round the bounds to the accumulator: monotone, so a result in [lo, hi] stays in it,
   * and a value beyond the largest finite one becomes inf as the library's must */
  for (int c = 0; c < (ref_is_complex(t) ? 2 : 1); c++) {
    e.lo[c] = ref_round(e.lo[c], t);
    e.hi[c] = ref_round(e.hi[c], t);
  }
  /* NaN and inf results (a NaN or inf term in a sum or a product) are exact */
  long double comp[2] = {a->v.re, a->v.im};
  for (int c = 0; c < (ref_is_complex(t) ? 2 : 1); c++) {
    if (isnan(comp[c])) e.nan[c] = 1;
    else if (isinf(comp[c])) e.lo[c] = e.hi[c] = comp[c];
  }
  return e;
}

static long double sat_trunc(long double x, akx_dtype to) {
  ref_val r = mk(AKX_FLOAT64);
  r.re = x;
  return ref_as_ld(ref_convert(r, to));
}

ref_expect ref_expect_convert(const ref_expect *e, akx_dtype dst) {
  if (e->t == dst) return *e;
  ref_expect r;
  memset(&r, 0, sizeof r);
  r.t = dst;
  const akx_dtype s = e->t;
  const int s_float = ref_is_float(s) || ref_is_complex(s);
  if (ref_is_bool(dst)) {
    int ncomp = ref_is_complex(s) ? 2 : 1;
    int surely = 0, maybe = 0;
    for (int c = 0; c < ncomp; c++) {
      if (e->nan[c] || e->lo[c] > 0 || e->hi[c] < 0) surely = 1;
      else if (!(e->lo[c] == 0 && e->hi[c] == 0)) maybe = 1;
    }
    r.lo[0] = surely ? 1 : 0;
    r.hi[0] = (surely || maybe) ? 1 : 0;
    return r;
  }
  int ncomp = ref_is_complex(dst) ? 2 : 1;
  for (int c = 0; c < ncomp; c++) {
    long double lo, hi;
    int nan;
    if (c == 1 && !ref_is_complex(s)) {
      lo = hi = 0;
      nan = 0;
    } else {
      lo = e->lo[c];
      hi = e->hi[c];
      nan = e->nan[c];
    }
    if (ref_is_int(dst)) {
      if (!s_float) { /* int -> int: exact, wraps */
        ref_val v = ref_is_sint(s) ? ref_int(s, (int64_t)lo) : ref_uint(s, (uint64_t)lo);
        if (ref_is_bool(s)) v = ref_uint(AKX_UINT8, (uint64_t)lo);
        r.lo[c] = r.hi[c] = ref_as_ld(ref_convert(v, dst));
      } else if (nan) {
        r.lo[c] = r.hi[c] = 0;
      } else {
        r.lo[c] = sat_trunc(lo, dst);
        r.hi[c] = sat_trunc(hi, dst);
      }
    } else { /* float or complex destination */
      if (nan) {
        r.nan[c] = 1;
      } else {
        r.lo[c] = ref_round(lo, dst);
        r.hi[c] = ref_round(hi, dst);
      }
    }
  }
  return r;
}

int ref_check(const void *got, const ref_expect *e, char *msg, size_t len) {
  ref_val g = ref_load(got, e->t);
  char gb[160];
  ref_format(g, gb, sizeof gb);
  if (ref_is_bool(e->t) && g.i > 1) {
    snprintf(msg, len, "got bool byte %llu (not 0 or 1), expected [%.0Lf, %.0Lf]",
             (unsigned long long)g.i, e->lo[0], e->hi[0]);
    return 0;
  }
  int ncomp = ref_is_complex(e->t) ? 2 : 1;
  int ok = 1;
  for (int c = 0; c < ncomp; c++) {
    long double x = c == 0 ? ref_as_ld(g) : g.im;
    if (e->nan[c]) ok = ok && isnan(x);
    else ok = ok && !isnan(x) && e->lo[c] <= x && x <= e->hi[c];
  }
  if (!ok) {
    if (ncomp == 2)
      snprintf(msg, len, "got %s, expected re %s[%.21Lg, %.21Lg] im %s[%.21Lg, %.21Lg]", gb,
               e->nan[0] ? "NaN " : "", e->lo[0], e->hi[0], e->nan[1] ? "NaN " : "", e->lo[1],
               e->hi[1]);
    else if (e->nan[0])
      snprintf(msg, len, "got %s, expected %s NaN", gb, ref_name(e->t));
    else if (e->lo[0] == e->hi[0])
      snprintf(msg, len, "got %s, expected %.21Lg", gb, e->lo[0]);
    else
      snprintf(msg, len, "got %s, expected within [%.21Lg, %.21Lg]", gb, e->lo[0], e->hi[0]);
  }
  return ok;
}

akx_array ref_vector(void *data, akx_dtype t, int64_t n) {
  akx_array a;
  memset(&a, 0, sizeof a);
  a.data = data;
  a.dtype = t;
  a.ndim = 1;
  a.shape[0] = n;
  a.strides[0] = 1;
  return a;
}

int64_t ref_count(const akx_array *a) {
  int64_t n = 1;
  for (int d = 0; d < a->ndim; d++) n *= a->shape[d];
  return n;
}

ref_expect ref_mapreduce(const akx_array *v, akx_map m, akx_op op, akx_dtype acc,
                         const ref_val *init, const ref_val *prev) {
  ref_acc a;
  ref_acc_init(&a, op, acc);
  if (init) ref_acc_add(&a, *init);
  if (prev) ref_acc_add(&a, *prev);
  const int64_t n = ref_count(v);
  const int64_t es = (int64_t)ref_size(v->dtype);
  int64_t idx[AKX_MAX_DIMS] = {0};
  for (int64_t k = 0; k < n; k++) {
    int64_t off = 0;
    for (int d = 0; d < v->ndim; d++) off += idx[d] * v->strides[d];
    ref_val x = ref_load((const unsigned char *)v->data + off * es, v->dtype);
    int inexact = 0;
    ref_val y = ref_map(x, m, acc, &inexact);
    a.inexact |= inexact;
    ref_acc_add(&a, y);
    for (int d = v->ndim - 1; d >= 0; d--) { /* odometer, last dim fastest */
      if (++idx[d] < v->shape[d]) break;
      idx[d] = 0;
    }
  }
  return ref_acc_expect(&a);
}

/* ---- data -------------------------------------------------------------------------------- */

uint64_t ref_rand(uint64_t seed, uint64_t i) {
  uint64_t z = seed * UINT64_C(0x9E3779B97F4A7C15) + i * UINT64_C(0xD1B54A32D192ED03) +
               UINT64_C(0x632BE59BD9B4E019);
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

/* a few "rare" positions per (seed, n): 0..3 of them (0 for a quarter of the seeds, so that
 * AND / OR / MUL of bool data are not always false / true / 0) */
typedef struct {
  int count;
  int64_t pos[3];
  int64_t which[3];
} rare_set;

static rare_set make_rare(uint64_t seed, int64_t n) {
  rare_set r;
  memset(&r, 0, sizeof r);
  if (n <= 0) return r;
  r.count = (int)(ref_rand(seed, UINT64_MAX) % 4);
  for (int j = 0; j < r.count; j++) {
    r.pos[j] = (int64_t)(ref_rand(seed, UINT64_MAX - 1 - (uint64_t)j) % (uint64_t)n);
    r.which[j] = (int64_t)(ref_rand(seed, UINT64_MAX - 10 - (uint64_t)j) % 64);
  }
  return r;
}

static int rare_at(const rare_set *r, int64_t i) {
  for (int j = 0; j < r->count; j++)
    if (r->pos[j] == i) return j;
  return -1;
}

/* "truthy" pattern: for AND/MIN/MUL mostly true with rare false; OR/MAX the reverse;
 * ADD/XOR half and half */
static int truthy(akx_op op, const rare_set *rs, uint64_t seed, int64_t i) {
  int rare = rare_at(rs, i) >= 0;
  switch (op) {
    case AKX_OP_AND:
    case AKX_OP_MIN:
    case AKX_OP_MUL: return !rare;
    case AKX_OP_OR:
    case AKX_OP_MAX: return rare;
    default: return (int)(ref_rand(seed, (uint64_t)i) >> 63);
  }
}

static uint64_t int_value(akx_dtype t, akx_op op, const rare_set *rs, uint64_t seed, int64_t i) {
  const uint64_t r = ref_rand(seed, (uint64_t)i), r2 = ref_rand(seed ^ 0x5555u, (uint64_t)i);
  const int j = rare_at(rs, i);
  const int w = ref_bits(t);
  switch (op) {
    /* AND: all ones but bit 0 or 1 (so never uniform), rare elements clear another bit;
     * OR: bit 0 or 1, rare elements set another */
    case AKX_OP_AND:
      return j >= 0 ? ~(UINT64_C(1) << (rs->which[j] % w)) : ~(UINT64_C(1) << (r2 & 1));
    case AKX_OP_OR: return j >= 0 ? UINT64_C(1) << (rs->which[j] % w) : UINT64_C(1) << (r2 & 1);
    case AKX_OP_XOR: return r;
    case AKX_OP_MUL:
      if (j >= 0) return 2;
      if ((r2 & 3) == 0) return r | 1u;                                /* any odd value */
      return (uint64_t)((int64_t)(r % 4) * 2 + 1) * ((r >> 62) ? 1u : (uint64_t)-1); /* +-1,3,5,7 */
    case AKX_OP_MIN:
    case AKX_OP_MAX:
      if (j >= 0) return (j & 1) ? (UINT64_C(1) << (w - 1)) : ~(UINT64_C(1) << (w - 1));
      return (r2 & 1) ? r : (uint64_t)((int64_t)(r % 201) - 100);
    case AKX_OP_ADD:
    default:
      switch (r2 % 8) {
        case 0: case 1: case 2: return (uint64_t)((int64_t)(r % 7) - 3);
        case 3: case 4: return (uint64_t)((int64_t)(r % 2001) - 1000);
        case 5: return (r2 & 8) ? (UINT64_C(1) << (w - 1)) : ~(UINT64_C(1) << (w - 1)); /* extremes */
        default: return r;
      }
  }
}

/* The ADD fill's bound K on |k| (values k / 8): sum |k| <= 2^p(acc) over `total` terms (their
 * squares under SQUARE), and k within src's precision. It depends on the call alone: ref_fill
 * computes it once (per element, its ldexpl, floorl and sqrtl were a third of ref_fill). */
static uint64_t add_bound(akx_dtype src, akx_map m, akx_dtype acc, int64_t total) {
  const int pa = ref_precision(acc), ps = ref_precision(src);
  long double budget = ldexpl(1.0L, pa) / (long double)(total + 2);
  if (m == AKX_MAP_SQUARE) budget = sqrtl(budget);
  long double kmax = floorl(budget);
  long double smax = ldexpl(1.0L, ps) - 1;
  if (kmax > smax) kmax = smax;
  if (kmax < 1) kmax = 1;
  return (uint64_t)kmax;
}

/* one real component for a float source; K: add_bound(src, map, acc, total) */
static long double float_value(akx_dtype src, akx_op op, akx_dtype acc,
                               int64_t total, uint64_t K, const rare_set *rs, uint64_t seed, int64_t i,
                               int flags) {
  const uint64_t r = ref_rand(seed, (uint64_t)i), r2 = ref_rand(seed ^ 0xABCDu, (uint64_t)i);
  const int j = rare_at(rs, i);
  const long double sign = (r >> 63) ? -1.0L : 1.0L;
  if ((flags & REF_FILL_NAN) && j >= 0) return NAN;
  if (flags & REF_FILL_ROUGH) {
    long double u = ldexpl((long double)(r >> 11), -53); /* [0, 1) */
    if (op == AKX_OP_MUL) return 1.0L + sign * u * (1.0L / 128);
    return sign * (0.5L + u / 2) * ldexpl(1.0L, (int)(r2 % 17) - 8);
  }
  switch (op) {
    case AKX_OP_MUL: {
      if (j < 0 && (r2 % 16) != 0) return sign; /* +-1 */
      /* rare factors: powers of two and a few 1.5 / 0.75, bounded so products stay exact */
      static const long double f[] = {2.0L, 0.5L, 1.5L, 0.75L, 4.0L, 0.25L};
      int k = (int)((r2 >> 8) % (ref_emax(acc) < 100 ? 2 : 6));
      if (j < 0 && k >= 2 && (r2 >> 20) % 8) k -= 2; /* few 1.5 / 0.75 outside rare spots */
      if (total > 64 && j < 0 && (r2 >> 24) % (uint64_t)(total / 16 + 1)) return sign;
      return sign * f[k];
    }
    case AKX_OP_MIN:
    case AKX_OP_MAX: {
      if (j >= 0) {
        static const long double sp[] = {0.0L, -0.0L, INFINITY, -INFINITY};
        return sp[rs->which[j] % 4];
      }
      int emax = ref_emax(src) < 20 ? 12 : 30;
      long double u = 0.5L + ldexpl((long double)(r >> 11), -54);
      return sign * u * ldexpl(1.0L, (int)(r2 % (uint64_t)(2 * emax + 1)) - emax);
    }
    case AKX_OP_ADD:
    default: {
      /* k / 8 with 0 <= k <= K (add_bound): every partial sum is exact in any order */
      uint64_t k;
      switch (r2 % 4) {
        case 0: k = r % (K < 7 ? K + 1 : 8); break;          /* small */
        case 1: k = K - r % (K / 8 + 1); break;             /* near the top */
        default: k = r % (K + 1); break;                     /* anywhere */
      }
      if ((r2 >> 8) % 64 == 0) return -0.0L;
      return sign * (long double)k / 8;
    }
  }
}

void ref_fill(void *buf, akx_dtype t, int64_t n, akx_map m, akx_op op, akx_dtype acc,
              int64_t total, uint64_t seed, int flags) {
  rare_set rs = make_rare(seed, n);
  if (total < n) total = n;
  /* a float source's component dtype and the accumulator its components are filled for */
  const akx_dtype fsrc = ref_component(t);
  const akx_dtype facc = ref_is_complex(t) ? (ref_is_complex(acc) ? ref_component(acc) : acc)
                         : ref_is_float(acc) ? acc : ref_is_complex(acc) ? ref_component(acc) : t;
  const uint64_t add_k = ref_is_float(fsrc) ? add_bound(fsrc, m, facc, total) : 0;
  for (int64_t i = 0; i < n; i++) {
    ref_val v = mk(t);
    const uint64_t r = ref_rand(seed, (uint64_t)i);
    if (m == AKX_MAP_NONZERO) {
      int tr = truthy(op, &rs, seed, i);
      uint64_t r3 = ref_rand(seed ^ 0x77u, (uint64_t)i);
      if (ref_is_bool(t)) {
        v.i = (uint64_t)tr;
      } else if (ref_is_int(t)) {
        v.i = tr ? wrap(r | (UINT64_C(1) << (r3 % (uint64_t)ref_bits(t))), t) : 0;
      } else {
        long double z = (r3 & 1) ? -0.0L : 0.0L;
        long double nz = (r3 % 32 == 1) ? NAN : (r3 % 64 == 3) ? -INFINITY
                        : ((r >> 63) ? -1.0L : 1.0L) * (1 + (long double)(r % 100)) / 16;
        if (!tr) {
          v.re = z;
          v.im = z;
        } else if (ref_is_complex(t)) {
          switch (r3 % 3) {
            case 0: v.re = nz; v.im = 0; break;
            case 1: v.re = 0; v.im = nz; break;
            default: v.re = nz; v.im = nz; break;
          }
        } else {
          v.re = nz;
        }
      }
    } else if (ref_is_bool(t)) {
      v.i = (uint64_t)truthy(op, &rs, seed, i);
    } else if (ref_is_int(t)) {
      v.i = wrap(int_value(t, op, &rs, seed, i), t);
    } else if (ref_is_complex(t)) {
      if (op == AKX_OP_MUL && !(flags & REF_FILL_ROUGH)) {
        /* units 1, -1, i, -i, with rare (1 + i) / 2 and 2 */
        const int j = rare_at(&rs, i);
        uint64_t q = r % 4;
        v.re = q == 0 ? 1 : q == 1 ? -1 : 0;
        v.im = q == 2 ? 1 : q == 3 ? -1 : 0;
        if (j >= 0) {
          v.re = (j & 1) ? 2.0L : 0.5L;
          v.im = (j & 1) ? 0.0L : 0.5L;
        }
      } else {
        v.re = float_value(fsrc, op, facc, total, add_k, &rs, seed, i, flags);
        v.im = float_value(fsrc, op, facc, total, add_k, &rs, seed ^ 0x1234567u, i, flags & ~REF_FILL_NAN);
      }
      v.re = ref_round(v.re, t);
      v.im = ref_round(v.im, t);
    } else {
      v.re = ref_round(float_value(fsrc, op, facc, total, add_k, &rs, seed, i, flags), t);
    }
    ref_store_at(buf, i, v);
  }
}

void ref_fill_plain(void *buf, akx_dtype t, int64_t n, uint64_t seed) {
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = ref_rand(seed, (uint64_t)i);
    int64_t k = (int64_t)(r % 23) - 11;
    ref_val v;
    if (ref_is_bool(t)) v = ref_uint(t, r >> 63);
    else if (ref_is_int(t)) v = ref_int(t, k);
    else v = ref_cplx(t, (long double)k / 8, (long double)((int64_t)(r >> 40) % 9 - 4) / 4);
    ref_store_at(buf, i, v);
  }
}

/* ---- reductions along dims ---------------------------------------------------------------- */

ref_expect ref_reduce_dims_at(const akx_array *src, const int64_t *dst_shape,
                              const int64_t *out_index, akx_map m, akx_op op, akx_dtype acc,
                              const ref_val *init, const ref_val *prev) {
  akx_array v = *src;
  const int64_t es = (int64_t)ref_size(src->dtype);
  int64_t off = 0;
  for (int d = 0; d < src->ndim; d++) {
    if (dst_shape[d] == 1 && src->shape[d] != 1) continue; /* reduced: the view runs along it */
    off += out_index[d] * src->strides[d];
    v.shape[d] = 1;
  }
  v.data = (unsigned char *)src->data + off * es;
  return ref_mapreduce(&v, m, op, acc, init, prev);
}
