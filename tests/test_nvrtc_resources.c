/* What ptxas makes of the kernels compiled only at run time (outside the library's prebuilt
 * set, so the kernel_resources ctest never sees them in a default build): the widest units
 * of the scan and segmented families (complex128 MUL, float16 and bfloat16 sources, bool, bit
 * ops) and user-op units, each compiled by NVRTC for sm_90 as the library compiles them
 * (-std=c++17 -DNDEBUG and nvrtc.c's exact-arithmetic flags) with ptxas -v. Every unit: an
 * ELF for EM_CUDA holding every kernel's lowered name (test_nvrtc_families' check, which leaves
 * these units to this file: each compiled once). Every function:
 * no spill stores or loads and no stack frame (a frame is a spill or a local array: local memory
 * in the tile's loop); reduce_dims' tile body of the built-in ops (float16 into float64, int16
 * into int64): registers within its declared class; every tile kernel: registers within its launch bounds
 * (AKX_LAUNCH_BOUNDS_MIN(AKX_MAX_BLOCK_SCAN, AKX_MIN_BLOCKS_SCAN_TILE): at most 65536 / (256 x 3)
 * so that 3 blocks of 256 threads stay resident). And the look-back's waits counter
 * (kernels/akx/lookback.cuh) is in no release unit: one 64-bit atomic add fewer per tile kernel
 * in the scan unit's PTX than with AKX_LOOKBACK_COUNT_WAITS=1. Built with the CUDA backend only
 * (tests/CMakeLists.txt), where an NVRTC that cannot be loaded fails the tests; no GPU needed. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akx.h"
#include "elf_strtab.h"
#include "kernels/akx/block_limits.h"
#include "src/jit/embedded.h"
#include "src/jit/instance.h"
#include "src/jit/nvrtc.h"
#include "src/jit/user_op.h"

static void require_nvrtc(void) {
  akx_status s = akx__nvrtc_available();
  cr_assert_eq(s, AKX_SUCCESS, "NVRTC must load in a CUDA build: %s", akx_last_error());
}

static void compile(const akx__instance *in, const char *const *options, int n_options, int arch, int want_ptx,
                    akx__nvrtc_result *res) {
  const char **names = malloc((size_t)akx__embedded_file_count * sizeof *names);
  const char **texts = malloc((size_t)akx__embedded_file_count * sizeof *texts);
  cr_assert(names && texts);
  for (int i = 0; i < akx__embedded_file_count; i++) {
    names[i] = akx__embedded_files[i].name;
    texts[i] = akx__embedded_files[i].text;
  }
  akx__nvrtc_request rq = {0};
  rq.source = in->source;
  rq.name = "akx_instance.cu";
  rq.n_headers = akx__embedded_file_count;
  rq.header_sources = texts;
  rq.header_names = names;
  rq.n_options = n_options;
  rq.options = options;
  rq.n_names = in->n_kernels;
  rq.name_expressions = (const char *const *)in->name_expressions;
  rq.arch = arch;
  rq.want_ptx = want_ptx;
  const akx_status s = akx__nvrtc_compile(&rq, res);
  free(names);
  free(texts);
  cr_assert_eq(s, AKX_SUCCESS, "%s", akx_last_error());
}

static const char *const verbose_options[] = {"-std=c++17", "-DNDEBUG", "--ptxas-options=-v"};

/* The tile kernels' register bound: 3 blocks of AKX_MAX_BLOCK_SCAN threads in 65536 registers. */
/* reduce_dims' tile body (kernels/akx/reduce_dims.cuh): its declared class, the registers the
 * sim's occupancy takes for it (reduce_dims_tiled_info and the three other shapes it serves), for
 * the built-in ops' units: its 2-byte sources keep 32 loads in flight a thread, 48 to 64
 * registers. A user op's accumulator may take more (Welford's three doubles: 76 registers with 4
 * loads in flight, 80 with 16), which the class does not cover. */
#define REDUCE_DIMS_TILE_CLASS 64
static int is_dims_tile_kernel(const char *mangled) { return strstr(mangled, "reduce_dims_tile_kernel") != NULL; }

static int is_tile_kernel(const char *mangled) {
  return strstr(mangled, "scan_tile_kernel") || strstr(mangled, "segmented_reduce_kernel") ||
         strstr(mangled, "segmented_scan_kernel");
}

/* Checks ptxas -v's log of one unit (what: its name in messages): for every "Function
 * properties for F" its stack frame and spills, for every "Compiling entry function 'F'" the
 * "Used R registers" after it. Returns the number of entries seen. */
static int check_log(const char *log, const char *what, int builtin) {
  const int cap = 65536 / (AKX_MAX_BLOCK_SCAN * AKX_MIN_BLOCKS_SCAN_TILE);
  char entry[512] = "";
  int entries = 0;
  for (const char *line = log; line && *line;) {
    const char *end = strchr(line, '\n');
    const size_t n = end ? (size_t)(end - line) : strlen(line);
    char buf[1024];
    snprintf(buf, sizeof buf, "%.*s", (int)(n < sizeof buf - 1 ? n : sizeof buf - 1), line);
    const char *p;
    unsigned frame, stores, loads, regs;
    if ((p = strstr(buf, "Compiling entry function '")) != NULL) {
      p += strlen("Compiling entry function '");
      const char *q = strchr(p, '\'');
      snprintf(entry, sizeof entry, "%.*s", q ? (int)(q - p) : (int)strlen(p), p);
      ++entries;
    } else if (sscanf(buf, " %u bytes stack frame, %u bytes spill stores, %u bytes spill loads", &frame, &stores,
                      &loads) == 3) {
      cr_expect(frame == 0 && stores == 0 && loads == 0,
                "%s: %s has a %u-byte stack frame, %u bytes of spill stores, %u of spill loads", what, entry, frame,
                stores, loads);
    } else if ((p = strstr(buf, "Used ")) != NULL && sscanf(p, "Used %u registers", &regs) == 1) {
      cr_assert(entry[0], "%s: registers before any entry: %s", what, buf);
      const int bound = is_tile_kernel(entry) ? cap : builtin && is_dims_tile_kernel(entry) ? REDUCE_DIMS_TILE_CLASS : 255;
      cr_expect_leq((int)regs, bound, "%s: %s uses %u registers, over its launch bounds' %d", what, entry, regs,
                    bound);
      fprintf(stderr, "nvrtc_resources: %-44s %3u registers  %s\n", what, regs, entry);
    }
    line = end ? end + 1 : NULL;
  }
  return entries;
}

/* Also what test_nvrtc_families checks of its units, so that no unit is compiled twice: an ELF
 * for EM_CUDA whose string tables hold every kernel's lowered name. */
static void check_unit(const akx__instance *in, const char *what, int builtin) {
  akx__nvrtc_result cubin;
  compile(in, verbose_options, 3, 90, 0, &cubin);
  cr_assert(!cubin.is_ptx && cubin.arch_compiled == 90, "%s", what);
  cr_assert_eq(cubin.n_lowered_names, in->n_kernels, "%s", what);
  char why[1024];
  cr_assert(akx_test_cuda_image_holds(cubin.image, cubin.size, in->n_kernels, cubin.lowered_names,
                                      in->name_expressions, why, sizeof why),
            "%s: %s", what, why);
  cr_assert(cubin.log && strstr(cubin.log, "ptxas info"), "%s: no ptxas -v report in NVRTC's log: %s", what,
            cubin.log ? cubin.log : "(none)");
  const int entries = check_log(cubin.log, what, builtin);
  cr_expect_eq(entries, in->n_kernels, "%s: %d entries in ptxas's report, the unit has %d kernels", what, entries,
               in->n_kernels);
  akx__nvrtc_result_free(&cubin);
}

static void check_builtin(int family, akx_dtype src, akx_dtype dst, akx_dtype acc, akx_op op) {
  const akx__instance_key key = {family, src, dst, acc, op};
  akx__instance in;
  cr_assert_eq(akx__instance_generate(&key, &in), AKX_SUCCESS, "%s", akx_last_error());
  char what[96];
  snprintf(what, sizeof what, "%s %s op %d", akx__family_name(family), akx_dtype_name(src), (int)op);
  check_unit(&in, what, 1);
  akx__instance_free(&in);
}

#define SC AKX__FAMILY_SCAN
#define RD AKX__FAMILY_REDUCE_DIMS
#define SR AKX__FAMILY_SEGMENTED_REDUCE
#define SS AKX__FAMILY_SEGMENTED_SCAN
#define AUTO AKX_DTYPE_AUTO

Test(nvrtc_resources, widest_builtin_units_do_not_spill, .timeout = 600) {
  require_nvrtc();
  check_builtin(SS, AKX_COMPLEX128, AUTO, AUTO, AKX_OP_MUL);
  check_builtin(SR, AKX_COMPLEX128, AUTO, AUTO, AKX_OP_MUL);
  check_builtin(SC, AKX_COMPLEX128, AUTO, AUTO, AKX_OP_MUL);
  check_builtin(SR, AKX_BFLOAT16, AUTO, AKX_FLOAT32, AKX_OP_MUL);
  check_builtin(SS, AKX_FLOAT16, AKX_FLOAT16, AKX_FLOAT32, AKX_OP_MAX);
  check_builtin(SC, AKX_BFLOAT16, AKX_BFLOAT16, AKX_FLOAT32, AKX_OP_ADD);
  check_builtin(SS, AKX_BOOL, AUTO, AUTO, AKX_OP_AND);
  check_builtin(SR, AKX_UINT64, AUTO, AUTO, AKX_OP_XOR);
  check_builtin(RD, AKX_FLOAT16, AUTO, AKX_FLOAT64, AKX_OP_ADD);
  check_builtin(RD, AKX_INT16, AUTO, AUTO, AKX_OP_ADD);
}

/* Welford's mean and variance: a three-double accumulator, the widest user op the tests use. */
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

static void check_user(const akx_user_op_desc *d, int family, akx_dtype src, akx_dtype dst) {
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
  char what[96];
  snprintf(what, sizeof what, "user op %s %s %s", d->combine, akx__family_name(family), akx_dtype_name(src));
  check_unit(&in, what, 0);
  akx__instance_free(&in);
}

Test(nvrtc_resources, user_op_units_do_not_spill, .timeout = 600) {
  require_nvrtc();
  const akx_user_op_desc welford = {welford_src, "W", "merge", "none", "one", "variance"};
  check_user(&welford, SR, AKX_FLOAT64, AUTO);
  check_user(&welford, SS, AKX_FLOAT16, AKX_FLOAT64);
  check_user(&welford, SC, AKX_BFLOAT16, AKX_FLOAT64);
  check_user(&welford, RD, AKX_BFLOAT16, AKX_FLOAT64);
}

/* 64-bit atomic adds ("atom.<space>.add.u64" or ".s64") in a PTX text. */
static int atomic_adds_u64(const char *ptx) {
  int n = 0;
  for (const char *p = ptx; (p = strstr(p, "atom.")) != NULL; ++p) {
    const char *eol = strchr(p, ';');
    char ins[96];
    snprintf(ins, sizeof ins, "%.*s", eol ? (int)(eol - p < 95 ? eol - p : 95) : 0, p);
    n += strstr(ins, ".add.u64") != NULL || strstr(ins, ".add.s64") != NULL;
  }
  return n;
}

/* The look-back's waits counter is a statistic for the sim's tests: a release GPU unit leaves out
 * its atomic (on the header's line, which every tile's ticket is drawn from); a build that asks
 * for it (AKX_LOOKBACK_COUNT_WAITS=1) has one atomic add more in each tile kernel (before the
 * change: as many with as without). */
Test(nvrtc_resources, release_units_do_not_count_lookback_waits, .timeout = 600) {
  require_nvrtc();
  const akx__instance_key key = {SC, AKX_FLOAT32, AUTO, AUTO, AKX_OP_ADD};
  akx__instance in;
  cr_assert_eq(akx__instance_generate(&key, &in), AKX_SUCCESS, "%s", akx_last_error());
  const char *const release[] = {"-std=c++17", "-DNDEBUG"};
  const char *const counting[] = {"-std=c++17", "-DNDEBUG", "-DAKX_LOOKBACK_COUNT_WAITS=1"};
  akx__nvrtc_result a, b;
  compile(&in, release, 2, 90, 1, &a);
  compile(&in, counting, 3, 90, 1, &b);
  /* One look-back, so one counter, in each tile kernel (the unit's plain and segmented-carry
   * scans). */
  int tiles = 0;
  for (int i = 0; i < in.n_kernels; i++) tiles += strstr(in.name_expressions[i], "scan_tile_kernel") != NULL;
  cr_assert_gt(tiles, 0, "no tile kernel in the scan unit");
  const int plain = atomic_adds_u64(a.image), counted = atomic_adds_u64(b.image);
  cr_expect_eq(counted, plain + tiles, "%d 64-bit atomic adds with the waits counted, %d without, %d tile kernels",
               counted, plain, tiles);
  akx__nvrtc_result_free(&a);
  akx__nvrtc_result_free(&b);
  akx__instance_free(&in);
}
