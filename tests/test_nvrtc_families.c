/* Every kernel family compiled at run time by NVRTC (src/jit/nvrtc.h) from the translation
 * unit src/jit/instance.h writes, with nothing but the embedded headers (src/jit/embedded.h):
 * no include directory of a toolkit or of the tree. Built only with the CUDA backend
 * (tests/CMakeLists.txt), where an NVRTC that cannot be loaded FAILS the tests, as in
 * tests/test_nvrtc.c. No GPU is needed.
 *
 * For each combination below (a spread over the dtypes and ops: float32 sums, int8 into its AUTO
 * int64, complex128 MUL, bool OR and uint8 MAX, findall of bool and complex128, the flagged
 * selections of the 8-byte width; the 16-bit
 * float sources and the widest user-op units are test_nvrtc_resources', which checks the same
 * image and names beside ptxas's report, each unit compiled once):
 *  - an sm_90 cubin: an ELF for EM_CUDA (190) whose string tables hold every kernel's lowered name;
 *  - for the first combination of each family, compute_80 PTX: ".target sm_80" and an ".entry"
 *    of every kernel, under the same names. The kernels' only code that depends on the
 *    architecture is the programmatic dependent launch (kernels/akx/device.cuh, sm_90+), the
 *    same for every dtype, and a name is lowered from the instance, not the architecture: PTX
 *    of every combination took 14 s of the file's 50 on a 2-core machine for nothing more;
 * compiled as the library's kernels are (-std=c++17, -DNDEBUG, and nvrtc.c's exact-arithmetic
 * flags), and once without -DNDEBUG (the debug builds' bounded polls: printf and trap).
 * The time of each compile is printed (not asserted), for bench/RESULTS.md. */
/* clock_gettime is POSIX, outside strict C11. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "akx.h"
#include "elf_strtab.h"
#include "src/jit/embedded.h"
#include "src/jit/instance.h"
#include "src/jit/nvrtc.h"
#include "src/jit/user_op.h"

/* Fails (never skips) when NVRTC does not load: see the opening comment. */
static void require_nvrtc(void) {
  akx_status s = akx__nvrtc_available();
  cr_assert_eq(s, AKX_SUCCESS, "NVRTC must load in a CUDA build: %s", akx_last_error());
}

static double seconds_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The instance's request: every embedded file as a header, the instance's kernels as name
 * expressions. The arrays live in *names and *texts (freed by the caller). */
static akx__nvrtc_request request_for(const akx__instance *in, const char ***names, const char ***texts,
                                      const char *const *options, int n_options, int arch, int want_ptx) {
  *names = malloc((size_t)akx__embedded_file_count * sizeof **names);
  *texts = malloc((size_t)akx__embedded_file_count * sizeof **texts);
  cr_assert(*names && *texts);
  for (int i = 0; i < akx__embedded_file_count; i++) {
    (*names)[i] = akx__embedded_files[i].name;
    (*texts)[i] = akx__embedded_files[i].text;
  }
  akx__nvrtc_request rq = {0};
  rq.source = in->source;
  rq.name = "akx_instance.cu";
  rq.n_headers = akx__embedded_file_count;
  rq.header_sources = *texts;
  rq.header_names = *names;
  rq.n_options = n_options;
  rq.options = options;
  rq.n_names = in->n_kernels;
  rq.name_expressions = (const char *const *)in->name_expressions;
  rq.arch = arch;
  rq.want_ptx = want_ptx;
  return rq;
}

static double compile(const akx__instance *in, const char *const *options, int n_options, int arch,
                      int want_ptx, akx__nvrtc_result *res) {
  const char **names, **texts;
  akx__nvrtc_request rq = request_for(in, &names, &texts, options, n_options, arch, want_ptx);
  const double t0 = seconds_now();
  const akx_status s = akx__nvrtc_compile(&rq, res);
  const double t = seconds_now() - t0;
  free(names);
  free(texts);
  cr_assert_eq(s, AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(res->n_lowered_names, in->n_kernels);
  return t;
}

static const char *const release_options[] = {"-std=c++17", "-DNDEBUG"};
#define N_RELEASE_OPTIONS 2

/* ---- the combinations ---------------------------------------------------------------------- */
typedef struct {
  akx__instance_key key;
  int ptx; /* compute_80 PTX too: each family's first combination */
} combination;

#define RW AKX__FAMILY_REDUCE_WHOLE
#define RD AKX__FAMILY_REDUCE_DIMS
#define SC AKX__FAMILY_SCAN
#define FA AKX__FAMILY_FINDALL
#define SR AKX__FAMILY_SEGMENTED_REDUCE
#define SS AKX__FAMILY_SEGMENTED_SCAN
#define SF AKX__FAMILY_SELECT_FLAGGED
#define AUTO AKX_DTYPE_AUTO
/* Each family's first combination with PTX too; then one or two more, so that every source
 * kind the text spells differently (narrow and wide integers, bool, float16, complex128) and
 * every op kind (MUL, MAX, bit ops) compiles at least once: the units differ only in the
 * types they instantiate, and each NVRTC compile is 2 to 3 s of this machine's CPU
 * (test_nvrtc_resources compiles the widest units again, with ptxas's report). */
static combination combinations[] = {
    {{RW, AKX_FLOAT32, AUTO, AUTO, AKX_OP_ADD}, 1},
    {{RW, AKX_COMPLEX128, AUTO, AUTO, AKX_OP_MUL}, 0},
    {{RD, AKX_FLOAT32, AUTO, AUTO, AKX_OP_ADD}, 1},
    {{RD, AKX_UINT8, AUTO, AUTO, AKX_OP_MAX}, 0},
    {{SC, AKX_FLOAT32, AUTO, AUTO, AKX_OP_ADD}, 1},
    {{SC, AKX_INT8, AUTO, AUTO, AKX_OP_ADD}, 0},  /* int64 into int64 */
    {{SC, AKX_BOOL, AUTO, AUTO, AKX_OP_OR}, 0},
    {{FA, AKX_BOOL, AUTO, AUTO, AKX_OP_ADD}, 1},
    {{FA, AKX_COMPLEX128, AUTO, AUTO, AKX_OP_ADD}, 0},
    {{SR, AKX_FLOAT32, AUTO, AUTO, AKX_OP_ADD}, 1},
    {{SS, AKX_FLOAT32, AUTO, AUTO, AKX_OP_ADD}, 1},
    {{SS, AKX_INT8, AUTO, AUTO, AKX_OP_XOR}, 0},
    {{SF, AKX_UINT64, AUTO, AUTO, AKX_OP_ADD}, 1},  /* the 8-byte width's select and partition */
};
#undef RW
#undef RD
#undef SC
#undef FA
#undef SR
#undef SS
#undef SF
#undef AUTO

ParameterizedTestParameters(nvrtc_families, cubin_and_ptx) {
  return cr_make_param_array(combination, combinations, sizeof combinations / sizeof combinations[0]);
}

ParameterizedTest(combination *c, nvrtc_families, cubin_and_ptx, .timeout = 600) {
  require_nvrtc();
  akx__instance in;
  cr_assert_eq(akx__instance_generate(&c->key, &in), AKX_SUCCESS, "%s", akx_last_error());
  /* The combination as the text's first line names it: "The scan kernels of source int8, ...". */
  char what[160];
  const char *colon = strchr(in.source, ':');
  cr_assert(strncmp(in.source, "// The ", 7) == 0 && colon, "%s", in.source);
  snprintf(what, sizeof what, "%.*s", (int)(colon - in.source - 7), in.source + 7);

  /* sm_90: a cubin holding every kernel. */
  akx__nvrtc_result cubin;
  const double t_cubin = compile(&in, release_options, N_RELEASE_OPTIONS, 90, 0, &cubin);
  cr_assert_eq(cubin.is_ptx, 0, "%s", what);
  cr_assert_eq(cubin.arch_compiled, 90, "%s", what);
  char why[1024];
  cr_assert(akx_test_cuda_image_holds(cubin.image, cubin.size, in.n_kernels, cubin.lowered_names,
                                      in.name_expressions, why, sizeof why),
            "%s: %s", what, why);

  if (!c->ptx) {
    fprintf(stderr, "nvrtc_families: %-86s sm_90 cubin %5.2f s\n", what, t_cubin);
    akx__nvrtc_result_free(&cubin);
    akx__instance_free(&in);
    return;
  }
  /* compute_80: PTX with an entry of each kernel, under the same lowered names. */
  akx__nvrtc_result ptx;
  const double t_ptx = compile(&in, release_options, N_RELEASE_OPTIONS, 80, 1, &ptx);
  cr_assert_eq(ptx.is_ptx, 1, "%s", what);
  cr_assert_eq(ptx.arch_compiled, 80, "%s", what);
  const char *text = ptx.image;
  cr_assert_eq(text[ptx.size - 1], '\0', "%s: PTX is NUL-terminated", what);
  cr_assert(strstr(text, ".target sm_80") != NULL, "%s", what);
  for (int i = 0; i < in.n_kernels; i++) {
    cr_assert_str_eq(ptx.lowered_names[i], cubin.lowered_names[i], "%s", what);
    char entry[1024];
    snprintf(entry, sizeof entry, ".entry %s(", ptx.lowered_names[i]);
    cr_assert(strstr(text, entry) != NULL, "%s: no '%s' in the PTX", what, entry);
  }
  fprintf(stderr, "nvrtc_families: %-86s sm_90 cubin %5.2f s, compute_80 PTX %5.2f s\n", what,
          t_cubin, t_ptx);
  akx__nvrtc_result_free(&cubin);
  akx__nvrtc_result_free(&ptx);
  akx__instance_free(&in);
}

/* A kernel's lowered name is nvcc's for the same instance: int64_t is long here as in glibc
 * (kernels/akx/std.cuh), so scan_init<lookback_header>(lookback_header *, uint32_t *, int64_t)
 * ends in "Pjl", and findall's tile kernel<int64_t> (its plan by value) in "IlEEv17akx__findall_plan"
 * (cuobjdump -symbols build/libakx.so lists the same names). */
Test(nvrtc_families, lowered_names_are_nvccs) {
  require_nvrtc();
  akx__instance_key k = {AKX__FAMILY_FINDALL, AKX_INT64, AKX_DTYPE_AUTO, AKX_DTYPE_AUTO, AKX_OP_ADD};
  akx__instance in;
  cr_assert_eq(akx__instance_generate(&k, &in), AKX_SUCCESS, "%s", akx_last_error());
  akx__nvrtc_result ptx;
  compile(&in, release_options, N_RELEASE_OPTIONS, 80, 1, &ptx);
  cr_assert_str_eq(ptx.lowered_names[0], "_ZN3akx9scan_initINS_15lookback_headerEEEvPT_Pjl");
  cr_assert_str_eq(ptx.lowered_names[1], "_ZN3akx14findall_kernelIlEEv17akx__findall_plan");
  akx__nvrtc_result_free(&ptx);
  akx__instance_free(&in);
}

/* Without NDEBUG (the debug preset's kernels) every poll loop is bounded: printf, then trap
 * (kernels/akx/device.cuh, poll_bound). NVRTC has printf built in; the PTX shows both. */
Test(nvrtc_families, debug_polls_compile, .timeout = 600) {
  require_nvrtc();
  akx__instance_key k = {AKX__FAMILY_SCAN, AKX_FLOAT32, AKX_DTYPE_AUTO, AKX_DTYPE_AUTO, AKX_OP_ADD};
  akx__instance in;
  cr_assert_eq(akx__instance_generate(&k, &in), AKX_SUCCESS, "%s", akx_last_error());
  const char *const debug_options[] = {"-std=c++17"};
  akx__nvrtc_result ptx;
  const double t = compile(&in, debug_options, 1, 80, 1, &ptx);
  cr_assert(strstr(ptx.image, "trap;") != NULL, "no trap in the debug build's PTX");
  cr_assert(strstr(ptx.image, "vprintf") != NULL, "no printf in the debug build's PTX");
  fprintf(stderr, "nvrtc_families: scan float32 ADD, debug (no NDEBUG): compute_80 PTX %.2f s\n", t);
  akx__nvrtc_result_free(&ptx);
  akx__instance_free(&in);
}

/* ---- user operators: the same units NVRTC compiles for CUDA ----------------------------------- */
/* Welford's mean and variance (a three-double struct, Chan et al.'s merge, a store) and an affine
 * composition without identity (Optional partials): the families' units of the one instance
 * generator (src/jit/instance.h) with a user op's prelude compile for sm_90 and compute_80.
 * Welford's reduce_dims and segmented_reduce units are test_nvrtc_resources' (the same checks
 * of the image, with ptxas's report). */
static const char welford_src[] =
    "struct W { double n, mean, m2; };\n"
    "AKX_HD W merge(W a, W b) {\n"
    "  const double n = a.n + b.n;\n"
    "  if (n == 0) return a;\n"
    "  const double d = b.mean - a.mean;\n"
    "  return W{n, a.mean + d * (b.n / n), a.m2 + b.m2 + d * d * (a.n * b.n / n)};\n"
    "}\n"
    "AKX_HD W none() { return W{0, 0, 0}; }\n"
    "template <class S> AKX_HD W one(S x, int64_t) { return W{1, (double)x, 0}; }\n"
    "template <class D> AKX_HD D variance(W a) { return D(a.n > 0 ? a.m2 / a.n : 0); }\n";
static const char affine_src[] =
    "struct Aff { double a, b; };\n"
    "AKX_HD Aff then(Aff f, Aff g) { return Aff{f.a * g.a, f.b * g.a + g.b}; }\n"
    "template <class S> AKX_HD Aff at(S x, int64_t i) { return Aff{1.0 + 0.01 * (double)x, (double)i}; }\n"
    "template <class D> AKX_HD D at_zero(Aff f) { return D(f.b); }\n";

/* want_ptx: compute_80 PTX too (once per user op: the architecture does not enter the prelude). */
static void compile_user_unit(const akx_user_op_desc *d, int family, akx_dtype src, akx_dtype dst, int want_ptx) {
  char *prelude = NULL;
  cr_assert_eq(akx__user_op_prelude(d, &prelude), AKX_SUCCESS, "%s", akx_last_error());
  char op_cxx[96], acc_cxx[128];
  snprintf(op_cxx, sizeof op_cxx, "::akx::user_op<::akx_user::fns, %s>",
           dst == AKX_DTYPE_AUTO ? "void" : akx__dtype_cxx_name(dst));
  snprintf(acc_cxx, sizeof acc_cxx, "%s::value", op_cxx);
  const akx__instance_key key = {family, src, dst, AKX_DTYPE_AUTO, 0};
  const akx__instance_op op = {prelude, op_cxx, acc_cxx};
  akx__instance in;
  cr_assert_eq(akx__instance_generate_op(&key, &op, &in), AKX_SUCCESS, "%s", akx_last_error());
  free(prelude);
  akx__nvrtc_result cubin, ptx = {0};
  const double t_cubin = compile(&in, release_options, N_RELEASE_OPTIONS, 90, 0, &cubin);
  const double t_ptx = want_ptx ? compile(&in, release_options, N_RELEASE_OPTIONS, 80, 1, &ptx) : 0;
  cr_assert(!cubin.is_ptx && cubin.arch_compiled == 90);
  char why[1024];
  cr_assert(akx_test_cuda_image_holds(cubin.image, cubin.size, in.n_kernels, cubin.lowered_names,
                                      in.name_expressions, why, sizeof why),
            "%s", why);
  if (want_ptx) cr_assert(ptx.is_ptx && strstr(ptx.image, ".target sm_80") != NULL);
  for (int i = 0; i < in.n_kernels; i++) {
    if (want_ptx) {
      char entry[1024];
      snprintf(entry, sizeof entry, ".entry %s(", ptx.lowered_names[i]);
      cr_assert(strstr(ptx.image, entry) != NULL, "no '%s' in the PTX", entry);
    }
    /* Every kernel but the look-back reset is the op's own instance. */
    if (strstr(in.name_expressions[i], "scan_init") == NULL)
      cr_assert(strstr(cubin.lowered_names[i], "akx_user") != NULL, "%s names no user op", cubin.lowered_names[i]);
  }
  fprintf(stderr, "nvrtc_families: user op %-10s %-12s %s -> %-8s sm_90 cubin %5.2f s, compute_80 PTX %5.2f s\n",
          d->combine, akx__family_name(family), akx_dtype_name(src),
          dst == AKX_DTYPE_AUTO ? "acc" : akx_dtype_name(dst), t_cubin, t_ptx);
  akx__nvrtc_result_free(&cubin);
  if (want_ptx) akx__nvrtc_result_free(&ptx);
  akx__instance_free(&in);
}

Test(nvrtc_families, user_ops_compile, .timeout = 600) {
  require_nvrtc();
  const akx_user_op_desc welford = {welford_src, "W", "merge", "none", "one", "variance"};
  const akx_user_op_desc affine = {affine_src, "Aff", "then", NULL, "at", "at_zero"};
  compile_user_unit(&welford, AKX__FAMILY_REDUCE_WHOLE, AKX_FLOAT32, AKX_DTYPE_AUTO, 1);
  compile_user_unit(&affine, AKX__FAMILY_SCAN, AKX_INT32, AKX_FLOAT64, 1);
  compile_user_unit(&affine, AKX__FAMILY_SEGMENTED_SCAN, AKX_INT32, AKX_FLOAT64, 0);
}
