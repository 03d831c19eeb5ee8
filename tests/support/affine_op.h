/* A user op several tests scan with (tests/test_user_ops.c, tests/test_scan_piece.c): affine maps
 * x -> a*x + b composed left to right, which does not commute and has no identity. */
#ifndef AKX_TEST_AFFINE_OP_H
#define AKX_TEST_AFFINE_OP_H

static const char AFFINE_SRC[] =
    "struct Affine { double a, b; };  // x -> a*x + b\n"
    "// f first, then g: g(f(x)) = g.a*(f.a*x + f.b) + g.b\n"
    "AKX_HD Affine af_then(Affine f, Affine g) {\n"
    "  Affine r; r.a = f.a * g.a; r.b = f.b * g.a + g.b; return r;\n"
    "}\n"
    "template <class S> AKX_HD Affine af_map(S x, int64_t) {\n"
    "  Affine r; r.a = 1.0 + (double)x * 0.01; r.b = (double)x; return r;\n"
    "}\n"
    "template <class D> AKX_HD D af_at_zero(Affine f) { return (D)f.b; }  // the map applied to 0\n";

#endif
