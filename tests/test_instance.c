/* The kernel families' translation units (src/jit/instance.h), in every build:
 *  - the text is a function of the key alone (two calls, the same bytes; one golden text);
 *  - each family instantiates its kernels, named by their template-ids, and nothing else;
 *  - AUTO accumulators and dsts resolve by the library's rules;
 *  - combinations the rules refuse, and keys that are no combination, fail with a sentence;
 *  - the text compiles with the host compiler (the sim's side of the headers) against the
 *    embedded headers alone (tests/test_nvrtc_families.c compiles it with NVRTC). */
/* mkdtemp is POSIX, outside strict C11. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "akx.h"
#include "src/jit/embedded.h"
#include "src/jit/instance.h"
#include "internal.h"
#include "reference.h"

static akx__instance_key key(int family, akx_dtype src, akx_dtype dst, akx_dtype acc, akx_op op) {
  akx__instance_key k = {family, src, dst, acc, op};
  return k;
}

static akx__instance generate(akx__instance_key k) {
  akx__instance in;
  akx_status s = akx__instance_generate(&k, &in);
  cr_assert_eq(s, AKX_SUCCESS, "%s: %s", akx__family_name(k.family), akx_last_error());
  return in;
}

/* ---- one combination per family: the kernels, in order ------------------------------------- */
typedef struct {
  akx__instance_key key;
  const char *include;
  int n;
  const char *names[5];
} family_case;

static const family_case cases[] = {
    {{AKX__FAMILY_REDUCE_WHOLE, AKX_INT8, AKX_DTYPE_AUTO, AKX_DTYPE_AUTO, AKX_OP_ADD},
     "#include \"akx/reduce_whole.cuh\"\n",
     3,
     {"akx::reduce_whole_contiguous<int8_t, int64_t, ::akx::op_add>",
      "akx::reduce_whole_strided<int8_t, int64_t, ::akx::op_add>",
      "akx::reduce_whole_partials<int64_t, ::akx::op_add>"}},
    {{AKX__FAMILY_REDUCE_DIMS, AKX_FLOAT16, AKX_DTYPE_AUTO, AKX_FLOAT32, AKX_OP_MAX},
     "#include \"akx/reduce_dims.cuh\"\n",
     3,
     {"akx::reduce_dims_rows_kernel<::akx::f16, float, ::akx::op_max>",
      "akx::reduce_dims_tile_kernel<::akx::f16, float, ::akx::op_max>",
      "akx::reduce_dims_finish_kernel<float, ::akx::op_max>"}},
    {{AKX__FAMILY_SCAN, AKX_COMPLEX128, AKX_DTYPE_AUTO, AKX_DTYPE_AUTO, AKX_OP_MUL},
     "#include \"akx/scan.cuh\"\n",
     5,
     {"akx::scan_init<::akx::lookback_header>",
      "akx::scan_tile_kernel<::akx::scan_policy<::akx::c128, ::akx::c128, ::akx::plain_scan<::akx::op_mul, ::akx::c128>>>",
      "akx::scan_tile_kernel<::akx::scan_policy<::akx::c128, ::akx::c128, ::akx::seg_scan<::akx::op_mul, ::akx::c128>>>",
      "akx::scan_columns<::akx::c128, ::akx::c128, ::akx::op_mul, ::akx::c128>",
      "akx::scan_columns_carry<::akx::op_mul, ::akx::c128>"}},
    {{AKX__FAMILY_FINDALL, AKX_BOOL, AKX_DTYPE_AUTO, AKX_DTYPE_AUTO, AKX_OP_ADD},
     "#include \"akx/findall.cuh\"\n",
     2,
     {"akx::scan_init<::akx::lookback_header>", "akx::findall_kernel<bool>"}},
};
#define N_CASES ((int)(sizeof cases / sizeof cases[0]))

Test(instance, each_family_instantiates_its_kernels) {
  for (int c = 0; c < N_CASES; c++) {
    akx__instance in = generate(cases[c].key);
    const char *family = akx__family_name(cases[c].key.family);
    cr_assert_eq(in.n_kernels, cases[c].n, "%s: %d kernels", family, in.n_kernels);
    cr_assert(strstr(in.source, cases[c].include) != NULL, "%s:\n%s", family, in.source);
    /* Exactly one #include and one instantiation per kernel, in the kernels' order. */
    const char *at = in.source;
    int includes = 0;
    for (const char *p = in.source; (p = strstr(p, "#include")); p++) includes++;
    cr_assert_eq(includes, 1, "%s:\n%s", family, in.source);
    for (int i = 0; i < in.n_kernels; i++) {
      cr_assert_str_eq(in.name_expressions[i], cases[c].names[i], "%s kernel %d", family, i);
      char line[512];
      snprintf(line, sizeof line, "template AKX_GLOBAL decltype(%s) %s;\n", cases[c].names[i],
               cases[c].names[i]);
      const char *found = strstr(at, line);
      cr_assert_not_null(found, "%s: no '%s' after the previous kernel in\n%s", family, line, in.source);
      at = found + strlen(line);
    }
    cr_assert_str_eq(at, "", "%s: text after the last kernel: '%s'", family, at);
    int templates = 0;
    for (const char *p = in.source; (p = strstr(p, "template ")); p++) templates++;
    cr_assert_eq(templates, in.n_kernels, "%s:\n%s", family, in.source);
    akx__instance_free(&in);
    cr_assert_null(in.source);
    cr_assert_null(in.name_expressions);
    akx__instance_free(&in); /* zeroed: nothing happens */
  }
}

/* The text is what a kernel cache hashes: the same key gives the same bytes, and the format is
 * pinned here (a change to it rebuilds every cached kernel, which should be on purpose). */
Test(instance, text_is_a_function_of_the_key) {
  for (int c = 0; c < N_CASES; c++) {
    akx__instance a = generate(cases[c].key), b = generate(cases[c].key);
    cr_assert_str_eq(a.source, b.source);
    for (int i = 0; i < a.n_kernels; i++) cr_assert_str_eq(a.name_expressions[i], b.name_expressions[i]);
    cr_assert_neq(a.source, b.source, "two calls, two buffers");
    akx__instance_free(&a);
    akx__instance_free(&b);
  }
  akx__instance f = generate(key(AKX__FAMILY_FINDALL, AKX_UINT8, AKX_DTYPE_AUTO, AKX_DTYPE_AUTO, AKX_OP_ADD));
  cr_assert_str_eq(f.source,
                   "// The findall kernels of source uint8: generated by libakx (src/jit/instance.c).\n"
                   "#include \"akx/findall.cuh\"\n"
                   "\n"
                   "template AKX_GLOBAL decltype(akx::scan_init<::akx::lookback_header>) "
                   "akx::scan_init<::akx::lookback_header>;\n"
                   "template AKX_GLOBAL decltype(akx::findall_kernel<uint8_t>) "
                   "akx::findall_kernel<uint8_t>;\n");
  /* findall reads no op. */
  akx__instance g = generate(key(AKX__FAMILY_FINDALL, AKX_UINT8, AKX_DTYPE_AUTO, AKX_DTYPE_AUTO, AKX_OP_XOR));
  cr_assert_str_eq(f.source, g.source);
  akx__instance_free(&f);
  akx__instance_free(&g);
  /* Another accumulator, another text. */
  akx__instance x = generate(key(AKX__FAMILY_REDUCE_WHOLE, AKX_FLOAT32, AKX_DTYPE_AUTO, AKX_DTYPE_AUTO, AKX_OP_ADD));
  akx__instance y = generate(key(AKX__FAMILY_REDUCE_WHOLE, AKX_FLOAT32, AKX_DTYPE_AUTO, AKX_FLOAT64, AKX_OP_ADD));
  cr_assert_str_neq(x.source, y.source);
  cr_assert(strstr(y.source, "akx::reduce_whole_partials<double, ::akx::op_add>") != NULL, "%s", y.source);
  akx__instance_free(&x);
  akx__instance_free(&y);
}

Test(instance, auto_resolves_by_the_dtype_rules) {
  struct {
    akx__instance_key key;
    akx_dtype acc, dst;
  } rows[] = {
      /* narrow integers and bool widen to 64 bits for ADD and MUL, 16-bit floats to float32 */
      {{AKX__FAMILY_REDUCE_WHOLE, AKX_INT8, AKX_DTYPE_AUTO, AKX_DTYPE_AUTO, AKX_OP_ADD}, AKX_INT64, AKX_DTYPE_AUTO},
      {{AKX__FAMILY_REDUCE_DIMS, AKX_UINT16, AKX_DTYPE_AUTO, AKX_DTYPE_AUTO, AKX_OP_MUL}, AKX_UINT64, AKX_DTYPE_AUTO},
      {{AKX__FAMILY_REDUCE_DIMS, AKX_BFLOAT16, AKX_DTYPE_AUTO, AKX_DTYPE_AUTO, AKX_OP_MIN}, AKX_FLOAT32, AKX_DTYPE_AUTO},
      {{AKX__FAMILY_REDUCE_WHOLE, AKX_UINT8, AKX_DTYPE_AUTO, AKX_DTYPE_AUTO, AKX_OP_MAX}, AKX_UINT8, AKX_DTYPE_AUTO},
      /* an explicit accumulator some map allows: complex64's modulus in float32 (ABS) */
      {{AKX__FAMILY_REDUCE_WHOLE, AKX_COMPLEX64, AKX_DTYPE_AUTO, AKX_FLOAT32, AKX_OP_MAX}, AKX_FLOAT32, AKX_DTYPE_AUTO},
      /* scans: dst AUTO is the accumulator's dtype; the source's is the other choice */
      {{AKX__FAMILY_SCAN, AKX_INT8, AKX_DTYPE_AUTO, AKX_DTYPE_AUTO, AKX_OP_ADD}, AKX_INT64, AKX_INT64},
      {{AKX__FAMILY_SCAN, AKX_FLOAT16, AKX_FLOAT16, AKX_FLOAT32, AKX_OP_ADD}, AKX_FLOAT32, AKX_FLOAT16},
      {{AKX__FAMILY_SCAN, AKX_BOOL, AKX_DTYPE_AUTO, AKX_DTYPE_AUTO, AKX_OP_OR}, AKX_BOOL, AKX_BOOL},
      {{AKX__FAMILY_SCAN, AKX_INT32, AKX_INT32, AKX_INT32, AKX_OP_ADD}, AKX_INT32, AKX_INT32},
      {{AKX__FAMILY_FINDALL, AKX_COMPLEX64, AKX_DTYPE_AUTO, AKX_DTYPE_AUTO, AKX_OP_ADD}, AKX_DTYPE_AUTO, AKX_DTYPE_AUTO},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    akx__instance in = generate(rows[i].key);
    cr_assert_eq(in.acc, rows[i].acc, "row %zu: acc %s", i, akx_dtype_name(in.acc));
    cr_assert_eq(in.dst, rows[i].dst, "row %zu: dst %s", i, akx_dtype_name(in.dst));
    akx__instance_free(&in);
  }
}

/* ---- refusals ----------------------------------------------------------------------------------- */
typedef struct {
  akx__instance_key key;
  akx_status status;
  const char *says[3]; /* each in the sentence */
} refusal;

static const refusal refusals[] = {
    {{-1, AKX_FLOAT32, AKX_DTYPE_AUTO, AKX_DTYPE_AUTO, AKX_OP_ADD}, AKX_ERROR_INVALID_ARGUMENT,
     {"family -1", "akx__family"}},
    {{AKX__FAMILY_COUNT, AKX_FLOAT32, AKX_DTYPE_AUTO, AKX_DTYPE_AUTO, AKX_OP_ADD}, AKX_ERROR_INVALID_ARGUMENT,
     {"is not an akx__family"}},
    {{AKX__FAMILY_SCAN, 15, AKX_DTYPE_AUTO, AKX_DTYPE_AUTO, AKX_OP_ADD}, AKX_ERROR_INVALID_ARGUMENT,
     {"scan", "source dtype 15"}},
    {{AKX__FAMILY_REDUCE_WHOLE, AKX_DTYPE_AUTO, AKX_DTYPE_AUTO, AKX_DTYPE_AUTO, AKX_OP_ADD}, AKX_ERROR_INVALID_ARGUMENT,
     {"source dtype -1"}},
    {{AKX__FAMILY_REDUCE_DIMS, AKX_FLOAT32, AKX_DTYPE_AUTO, AKX_DTYPE_AUTO, 7}, AKX_ERROR_INVALID_ARGUMENT,
     {"reduce_dims", "op 7"}},
    {{AKX__FAMILY_REDUCE_DIMS, AKX_FLOAT32, AKX_DTYPE_AUTO, 99, AKX_OP_ADD}, AKX_ERROR_INVALID_ARGUMENT,
     {"accumulator 99"}},
    {{AKX__FAMILY_SCAN, AKX_FLOAT32, -7, AKX_DTYPE_AUTO, AKX_OP_ADD}, AKX_ERROR_INVALID_ARGUMENT,
     {"dst dtype -7"}},
    /* the reductions take dst's dtype at run time, findall has no acc or dst */
    {{AKX__FAMILY_REDUCE_WHOLE, AKX_FLOAT32, AKX_FLOAT64, AKX_DTYPE_AUTO, AKX_OP_ADD}, AKX_ERROR_INVALID_ARGUMENT,
     {"reduce_whole", "at run time", "float64"}},
    {{AKX__FAMILY_FINDALL, AKX_FLOAT32, AKX_DTYPE_AUTO, AKX_INT64, AKX_OP_ADD}, AKX_ERROR_INVALID_ARGUMENT,
     {"findall", "AKX_DTYPE_AUTO", "int64"}},
    /* the dtype rules: an op not defined on the accumulator */
    {{AKX__FAMILY_REDUCE_WHOLE, AKX_FLOAT32, AKX_DTYPE_AUTO, AKX_DTYPE_AUTO, AKX_OP_XOR}, AKX_ERROR_UNSUPPORTED,
     {"XOR", "float32", "bit ops"}},
    {{AKX__FAMILY_REDUCE_DIMS, AKX_COMPLEX128, AKX_DTYPE_AUTO, AKX_DTYPE_AUTO, AKX_OP_MIN}, AKX_ERROR_UNSUPPORTED,
     {"MIN", "complex128", "no order"}},
    {{AKX__FAMILY_REDUCE_WHOLE, AKX_INT8, AKX_DTYPE_AUTO, AKX_BOOL, AKX_OP_ADD}, AKX_ERROR_UNSUPPORTED,
     {"ADD", "bool"}},
    {{AKX__FAMILY_SCAN, AKX_FLOAT64, AKX_DTYPE_AUTO, AKX_FLOAT64, AKX_OP_OR}, AKX_ERROR_UNSUPPORTED,
     {"scan", "OR", "float64"}},
    /* an accumulator no map allows, in a reduction and in a scan (which takes every one the
     * reductions take for the identity map, and any dst) */
    {{AKX__FAMILY_REDUCE_WHOLE, AKX_FLOAT32, AKX_DTYPE_AUTO, AKX_INT32, AKX_OP_ADD}, AKX_ERROR_UNSUPPORTED,
     {"int32", "float32", "akx_reduce_opts"}},
    {{AKX__FAMILY_REDUCE_DIMS, AKX_INT16, AKX_DTYPE_AUTO, AKX_UINT64, AKX_OP_ADD}, AKX_ERROR_UNSUPPORTED,
     {"uint64", "int16"}},
    {{AKX__FAMILY_SCAN, AKX_FLOAT32, AKX_DTYPE_AUTO, AKX_INT32, AKX_OP_ADD}, AKX_ERROR_UNSUPPORTED,
     {"scan", "int32", "float32"}},
    {{AKX__FAMILY_SCAN, AKX_UINT64, AKX_DTYPE_AUTO, AKX_INT64, AKX_OP_ADD}, AKX_ERROR_UNSUPPORTED,
     {"int64", "not an accumulator of uint64"}},
    {{AKX__FAMILY_SCAN, AKX_FLOAT16, AKX_DTYPE_AUTO, AKX_COMPLEX64, AKX_OP_ADD}, AKX_ERROR_UNSUPPORTED,
     {"complex64", "float16"}},
};

Test(instance, refusals_say_why) {
  for (size_t i = 0; i < sizeof refusals / sizeof refusals[0]; i++) {
    const refusal *r = &refusals[i];
    akx__instance in;
    memset(&in, 0x5a, sizeof in);
    akx_status s = akx__instance_generate(&r->key, &in);
    cr_assert_eq(s, r->status, "row %zu: status %s: %s", i, akx_status_string(s), akx_last_error());
    cr_assert_null(in.source, "row %zu: nothing to free on failure", i);
    cr_assert_null(in.name_expressions, "row %zu", i);
    const char *e = akx_last_error();
    for (int w = 0; w < 3 && r->says[w]; w++)
      cr_assert(strstr(e, r->says[w]) != NULL, "row %zu: '%s' is not in '%s'", i, r->says[w], e);
  }
  akx__instance in;
  akx__instance_key k = key(AKX__FAMILY_SCAN, AKX_FLOAT32, AKX_DTYPE_AUTO, AKX_DTYPE_AUTO, AKX_OP_ADD);
  cr_assert_eq(akx__instance_generate(NULL, &in), AKX_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(akx_last_error(), "key") != NULL, "%s", akx_last_error());
  cr_assert_null(in.source);
  cr_assert_eq(akx__instance_generate(&k, NULL), AKX_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(akx_last_error(), "out") != NULL, "%s", akx_last_error());
  cr_assert_str_eq(akx__family_name(AKX__FAMILY_REDUCE_DIMS), "reduce_dims");
  cr_assert_str_eq(akx__family_name(-1), "invalid");
}

/* ---- the host compiler ------------------------------------------------------------------------- */
/* The embedded headers written out under dir/include, as a run-time compile of the sim would
 * see them: the tree's include/ is not on the command line. */
static void write_embedded(const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/include", dir);
  cr_assert_eq(mkdir(path, 0700), 0, "mkdir %s", path);
  snprintf(path, sizeof path, "%s/include/akx", dir);
  cr_assert_eq(mkdir(path, 0700), 0, "mkdir %s", path);
  for (int i = 0; i < akx__embedded_file_count; i++) {
    snprintf(path, sizeof path, "%s/include/%s", dir, akx__embedded_files[i].name);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "cannot write %s", path);
    cr_assert_eq(fwrite(akx__embedded_files[i].text, 1, akx__embedded_files[i].size, f),
                 akx__embedded_files[i].size);
    fclose(f);
  }
}

/* About half a second per family with g++ 12: the sim's headers and the instances' bodies, no
 * code generation (-fsyntax-only still instantiates every template). */
Test(instance, text_compiles_with_the_host_compiler, .timeout = 120) {
  char dir[] = "/tmp/akx_test_instance_XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  write_embedded(dir);
  for (int c = 0; c < N_CASES; c++) {
    akx__instance in = generate(cases[c].key);
    char tu[4200], cmd[12000];
    snprintf(tu, sizeof tu, "%s/%s.cpp", dir, akx__family_name(cases[c].key.family));
    FILE *f = fopen(tu, "w");
    cr_assert_not_null(f);
    fputs(in.source, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "'%s' -std=c++20 -fsyntax-only -I'%s/include' '%s' 2>&1",
             AKX_TEST_CXX, dir, tu);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p, "%s", cmd);
    char out[4096] = "";
    size_t got = fread(out, 1, sizeof out - 1, p);
    out[got] = '\0';
    int rc = pclose(p);
    cr_assert_eq(rc, 0, "%s failed:\n%s\n%s", cmd, out, in.source);
    akx__instance_free(&in);
  }
  char rm[4200];
  snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
  cr_assert_eq(system(rm), 0);
}

/* The prebuilt sets (kernels/akx/dtypes.cuh): the library's, which both backends prebuild,
 * holds exactly the AUTO accumulators (tests/support/reference.c's rule) of ADD, MIN and MAX
 * over int32, int64, float32 and float64 sources, for scans stored to the accumulator's dtype
 * or the source's; the tests' (the sim's plugin, src/jit/test_kernels.h) holds every other
 * accumulator a reduction takes and a scan's AUTO or source accumulator, and nothing the
 * library's holds. akx__combination_prebuilt agrees with both for every family. */
static int common_op(akx_op op) { return op == AKX_OP_ADD || op == AKX_OP_MIN || op == AKX_OP_MAX; }
static int common_source(akx_dtype t) {
  return t == AKX_INT32 || t == AKX_INT64 || t == AKX_FLOAT32 || t == AKX_FLOAT64;
}
static int in_set(int family, akx_dtype src, akx_dtype dst, akx_dtype acc, akx_op op, akx_map map, akx__prebuilt_set set) {
  const akx__combination c = {family, src, dst, acc, op, map};
  return akx__combination_prebuilt(&c, set);
}
Test(instance, prebuilt_sets) {
  int library_reduce = 0, tests_reduce = 0, library_scan = 0, tests_scan = 0;
  for (int s = 0; s < AKX_DTYPE_COUNT; ++s)
    for (int a = 0; a < AKX_DTYPE_COUNT; ++a)
      for (int o = 0; o < 7; ++o) {
        const akx_dtype src = (akx_dtype)s, acc = (akx_dtype)a;
        const akx_op op = (akx_op)o;
        for (int m = 0; m < 4; ++m) {
          const akx_map map = (akx_map)m;
          const int cuda = akx__reduce_prebuilt(src, map, acc, op, AKX_BACKEND_CUDA);
          const int sim = akx__reduce_prebuilt(src, map, acc, op, AKX_BACKEND_SIM);
          const akx_dtype want = ref_auto_acc(src, map, op);
          const int expect = common_source(src) && common_op(op) && acc == want && ref_op_valid(op, acc);
          cr_assert_eq(cuda, expect, "reduce %s %d %s into %s: the library's set says %d", ref_name(src), m,
                       akx__op_name(op), ref_name(acc), cuda);
          cr_assert_eq(sim, cuda, "reduce %s %d %s into %s: the sim's set is not CUDA's", ref_name(src), m,
                       akx__op_name(op), ref_name(acc));
          const int lib = in_set(AKX__FAMILY_REDUCE_WHOLE, src, AKX_DTYPE_AUTO, acc, op, map, AKX__SET_LIBRARY);
          const int tests = in_set(AKX__FAMILY_REDUCE_DIMS, src, AKX_DTYPE_AUTO, acc, op, map, AKX__SET_TESTS);
          cr_assert_eq(lib, expect, "reduce %s %d %s into %s: akx__combination_prebuilt", ref_name(src), m,
                       akx__op_name(op), ref_name(acc));
          akx_dtype resolved;
          const int supported = akx__resolve_acc(src, map, op, acc, &resolved) == AKX_SUCCESS && ref_op_valid(op, acc);
          cr_assert_eq(tests, supported && !expect, "reduce %s %d %s into %s: the tests' set says %d",
                       ref_name(src), m, akx__op_name(op), ref_name(acc), tests);
          library_reduce += lib, tests_reduce += tests;
        }
        for (int d = 0; d < AKX_DTYPE_COUNT; ++d) {
          const akx_dtype dst = (akx_dtype)d;
          const int cuda = akx__scan_prebuilt(src, acc, op, dst, AKX_BACKEND_CUDA);
          const int sim = akx__scan_prebuilt(src, acc, op, dst, AKX_BACKEND_SIM);
          const akx_dtype want = ref_auto_acc(src, AKX_MAP_IDENTITY, op);
          const int stored = dst == acc || dst == src;
          const int expect = common_source(src) && common_op(op) && acc == want && ref_op_valid(op, acc) && stored;
          cr_assert_eq(cuda, expect, "scan %s %s acc %s into %s: the library's set says %d", ref_name(src),
                       akx__op_name(op), ref_name(acc), ref_name(dst), cuda);
          cr_assert_eq(sim, cuda, "scan %s %s acc %s into %s: the sim's set is not CUDA's", ref_name(src),
                       akx__op_name(op), ref_name(acc), ref_name(dst));
          const int tests = in_set(AKX__FAMILY_SCAN, src, dst, acc, op, AKX_MAP_IDENTITY, AKX__SET_TESTS);
          const int expect_tests = (acc == want || acc == src) && ref_op_valid(op, acc) && stored && !expect;
          cr_assert_eq(tests, expect_tests, "scan %s %s acc %s into %s: the tests' set says %d", ref_name(src),
                       akx__op_name(op), ref_name(acc), ref_name(dst), tests);
          cr_assert(!(tests && in_set(AKX__FAMILY_SCAN, src, dst, acc, op, AKX_MAP_IDENTITY, AKX__SET_LIBRARY)),
                    "scan %s %s: in both sets", ref_name(src), akx__op_name(op));
          /* The segmented families prebuild the AUTO accumulator alone (akx__family_auto_acc_only). */
          const int seg = in_set(AKX__FAMILY_SEGMENTED_SCAN, src, dst, acc, op, AKX_MAP_IDENTITY, AKX__SET_TESTS);
          cr_assert_eq(seg, expect_tests && acc == want, "segmented scan %s %s acc %s into %s: %d", ref_name(src),
                       akx__op_name(op), ref_name(acc), ref_name(dst), seg);
          library_scan += expect, tests_scan += tests;
        }
      }
  cr_assert_gt(library_reduce, 0);
  cr_assert_gt(tests_reduce, library_reduce, "the tests' set is the larger");
  cr_assert_gt(tests_scan, library_scan);
  /* findall: one kernel per source dtype, the library's. */
  for (int s = 0; s < AKX_DTYPE_COUNT; ++s) {
    cr_assert(in_set(AKX__FAMILY_FINDALL, (akx_dtype)s, AKX_DTYPE_AUTO, AKX_DTYPE_AUTO, 0, 0, AKX__SET_LIBRARY));
    cr_assert(!in_set(AKX__FAMILY_FINDALL, (akx_dtype)s, AKX_DTYPE_AUTO, AKX_DTYPE_AUTO, 0, 0, AKX__SET_TESTS));
  }
}
