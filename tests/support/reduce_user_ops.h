/* The user ops the piece tests reduce with (tests/test_mapreduce_piece.c,
 * tests/test_reduce_dims_piece.c). */
#ifndef AKX_TEST_REDUCE_USER_OPS_H
#define AKX_TEST_REDUCE_USER_OPS_H

/* A sum of each element weighted by its position, plus the position, so that a piece numbering
 * its elements from 0, or running its rows on without the other pieces' between, comes out
 * wrong. In double: exact for small integers. */
static const char WEIGHTED_SRC[] =
    "AKX_HD double w_add(double a, double b) { return a + b; }\n"
    "AKX_HD double w_zero() { return 0.0; }\n"
    "template <class S> AKX_HD double w_map(S x, int64_t i) {\n"
    "  return (double)x * (double)(i % 5 + 1) + (double)i;\n"
    "}\n";
/* The host's value of one element x at position i. */
static inline double weighted_term(double x, int64_t i) { return x * (double)(i % 5 + 1) + (double)i; }


/* The range {lo, hi} of the elements: no identity, so that an empty piece's partial holds no
 * value, which the combine must skip; r_width stores hi - lo into a dtype. */
static const char RANGE_SRC[] =
    "struct Range { double lo, hi; };\n"
    "AKX_HD Range r_join(Range a, Range b) {\n"
    "  Range r; r.lo = a.lo < b.lo ? a.lo : b.lo; r.hi = a.hi > b.hi ? a.hi : b.hi; return r;\n"
    "}\n"
    "template <class S> AKX_HD Range r_map(S x, int64_t) { Range r; r.lo = r.hi = (double)x; return r; }\n"
    "template <class D> AKX_HD D r_width(Range r) { return (D)(r.hi - r.lo); }\n";

#endif
