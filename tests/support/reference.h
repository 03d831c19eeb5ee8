/* A host reference for libakx reductions, independent of the library: its own dtype
 * table, float16/bfloat16 conversions, maps, ops, accumulator rules, and a comparison
 * with a tolerance for floats. Values are computed in long double (64-bit mantissa) and
 * in exact 64-bit integers (unsigned arithmetic, so integer ADD/MUL wrap as the library's
 * do). Only akx.h's enums and akx_array are used; no libakx function is called here.
 *
 * Also: deterministic, non-uniform data generators suited to each dtype, op and map. */
#ifndef AKX_TEST_REFERENCE_H
#define AKX_TEST_REFERENCE_H
#include <stddef.h>
#include <stdint.h>
#include "akx.h"

/* ---- dtypes ------------------------------------------------------------------------ */

size_t ref_size(akx_dtype t);          /* bytes; 0 for anything else */
const char *ref_name(akx_dtype t);     /* "float32", ...; "auto"; "invalid" */
const char *ref_op_name(akx_op op);    /* "ADD", ...; "op?" */
const char *ref_map_name(akx_map m);   /* "IDENTITY", ...; "map?" */
int ref_is_bool(akx_dtype t);
int ref_is_sint(akx_dtype t);          /* int8..int64 */
int ref_is_uint(akx_dtype t);          /* uint8..uint64 */
int ref_is_int(akx_dtype t);           /* signed or unsigned (not bool) */
int ref_is_float(akx_dtype t);         /* float16, bfloat16, float32, float64 */
int ref_is_complex(akx_dtype t);
int ref_bits(akx_dtype t);             /* width of an integer/bool (8..64) */
/* Float formats (a complex type answers for its parts): precision p in bits (with the
 * implicit bit), smallest normal exponent, largest exponent. */
int ref_precision(akx_dtype t);
int ref_emin(akx_dtype t);
int ref_emax(akx_dtype t);
akx_dtype ref_component(akx_dtype t);  /* complex64 -> float32, complex128 -> float64, else t */

/* ---- float16 / bfloat16 (bit-exact round to nearest even, from any long double) --------- */

uint16_t ref_f16_from_ld(long double x);
uint16_t ref_bf16_from_ld(long double x);
/* the general (long double) rounding path, for the reference's own tests */
uint16_t ref_f16_from_ld_slow(long double x);
uint16_t ref_bf16_from_ld_slow(long double x);
long double ref_f16_to_ld(uint16_t h);
long double ref_bf16_to_ld(uint16_t h);
/* Round x to the precision and range of a real float dtype (f16, bf16, f32, f64), once. */
long double ref_round(long double x, akx_dtype t);

/* ---- values ---------------------------------------------------------------------------- */

/* One value of a dtype: integers and bool in `i` (sign-extended for signed types, zero-
 * extended for unsigned, 0/1 for bool); floats in `re`; complex in (re, im). */
typedef struct {
  akx_dtype t;
  uint64_t i;
  long double re, im;
} ref_val;

ref_val ref_load(const void *p, akx_dtype t);
ref_val ref_load_at(const void *base, akx_dtype t, int64_t index);
void ref_store(void *p, ref_val v);                 /* in v.t's representation */
void ref_store_at(void *base, int64_t index, ref_val v);
ref_val ref_int(akx_dtype t, int64_t x);             /* wrapped to t */
ref_val ref_uint(akx_dtype t, uint64_t x);
ref_val ref_real(akx_dtype t, long double x);        /* rounded to t (floats, complex: (x,0)) */
ref_val ref_cplx(akx_dtype t, long double re, long double im);
ref_val ref_nan(akx_dtype t);
/* The value as a long double (ints exactly; complex: the real part). */
long double ref_as_ld(ref_val v);
/* The library's conversion rules, used both into the accumulator and from it into a
 * reduce_dims destination: int -> float rounds to nearest even; float -> int truncates
 * toward zero, saturating, NaN -> 0; anything -> bool: != 0 (complex: either part);
 * complex -> real: the real part; real -> complex: (x, 0); int -> int wraps. */
ref_val ref_convert(ref_val v, akx_dtype to);
/* Prints v into buf ("int8 -128", "float32 1.5", "complex64 (1, -2)", hex bits too). */
const char *ref_format(ref_val v, char *buf, size_t len);

/* ---- maps, ops, accumulators ----------------------------------------------------------- */

akx_dtype ref_map_result(akx_dtype src, akx_map m);   /* R */
akx_dtype ref_auto_acc(akx_dtype src, akx_map m, akx_op op);
/* 1 if `op` is valid on an accumulator of dtype acc. */
int ref_op_valid(akx_op op, akx_dtype acc);
/* The accumulator the library must use for (src, map, op, acc) where acc may be
 * AKX_DTYPE_AUTO, or -100 when the combination is AKX_ERROR_UNSUPPORTED. */
akx_dtype ref_resolve_acc(akx_dtype src, akx_map m, akx_op op, akx_dtype acc);
#define REF_UNSUPPORTED ((akx_dtype)-100)
/* The map of one source value into the accumulator. *inexact is set when the library may
 * legitimately differ in the last bit (the complex modulus, re^2 + im^2). */
ref_val ref_map(ref_val x, akx_map m, akx_dtype acc, int *inexact);
/* The op's neutral element in acc. */
ref_val ref_neutral(akx_op op, akx_dtype acc);

typedef struct {
  akx_dtype acc;
  akx_op op;
  ref_val v;              /* integers: exact; floats: long double */
  int64_t terms;
  int inexact;            /* a term may differ from the library's in its last bit */
  int nan;                /* MIN/MAX saw a NaN */
  /* ADD: sum of |x| per component, smallest exponent of a set bit (exactness) */
  long double mag_re, mag_im;
  int have_exp;
  int min_exp;
  /* MUL: exactness bookkeeping: gave up (a zero, inf or NaN term), sum of log2 of the
   * odd parts of the terms, sums of the positive and of the negative log2 |x| */
  int mul_giveup;
  long double mul_odd_bits, mul_hi, mul_lo;
  long double mag_prod;   /* product of |x| (modulus for complex) */
} ref_acc;

void ref_acc_init(ref_acc *a, akx_op op, akx_dtype acc);
void ref_acc_add(ref_acc *a, ref_val x);  /* x of dtype a->acc */

/* What a result must be: each component within [lo, hi] (NaN when nan[c]); for integers
 * and bool lo = hi = the exact value (long double holds every 64-bit integer). */
typedef struct {
  akx_dtype t;
  long double lo[2], hi[2];
  int nan[2];
} ref_expect;

ref_expect ref_acc_expect(const ref_acc *a);
/* The expectation after the library's final conversion acc -> dst. */
ref_expect ref_expect_convert(const ref_expect *e, akx_dtype dst);
/* An exact expectation of one value. */
ref_expect ref_expect_exact(ref_val v);
/* 1 if the value at `got` (of dtype e->t) meets e. On a mismatch, writes a sentence with
 * both values into msg. */
int ref_check(const void *got, const ref_expect *e, char *msg, size_t len);

/* Reduce a host view (data points into a host mirror of the source) as the library must:
 * map each element into acc, combine with op, plus init and a previous value (both of
 * dtype acc; NULL: none). */
ref_expect ref_mapreduce(const akx_array *host_view, akx_map m, akx_op op, akx_dtype acc,
                         const ref_val *init, const ref_val *prev);
/* One output of Julia's mapreducedim! over a host view: the elements of src at out_index
 * (an index into dst_shape, src's shape with reduced dims 1) along the reduced dims, as
 * ref_mapreduce reduces them. */
ref_expect ref_reduce_dims_at(const akx_array *src, const int64_t *dst_shape,
                              const int64_t *out_index, akx_map m, akx_op op, akx_dtype acc,
                              const ref_val *init, const ref_val *prev);
/* A contiguous vector view (the reference's own, not akx_vector). */
akx_array ref_vector(void *data, akx_dtype t, int64_t n);
/* Number of elements of a view (product of its shape; 1 for ndim 0). */
int64_t ref_count(const akx_array *a);

/* ---- data -------------------------------------------------------------------------------- */

enum {
  REF_FILL_ROUGH = 1,  /* floats: arbitrary real values (sums and products not exact) */
  REF_FILL_NAN = 2,    /* floats: a few NaNs (for MIN/MAX) */
};
uint64_t ref_rand(uint64_t seed, uint64_t i); /* splitmix64 of (seed, i) */
/* Fill n elements of dtype t for a reduction (m, op) in accumulator acc (resolved), for a
 * reduction of about `total` elements (which sets how large ADD values may be so that
 * float sums stay exact in any order). Deterministic in seed; never uniform. */
void ref_fill(void *buf, akx_dtype t, int64_t n, akx_map m, akx_op op, akx_dtype acc,
              int64_t total, uint64_t seed, int flags);
/* Fill with a generic non-uniform pattern (any dtype, op-agnostic; small magnitudes). */
void ref_fill_plain(void *buf, akx_dtype t, int64_t n, uint64_t seed);

#endif
