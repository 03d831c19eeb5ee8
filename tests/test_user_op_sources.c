/* What a user op's source may be, and what a refused one reports (akx_user_op_create,
 * include/akx.h):
 * - sources in CUDA's own spelling (__host__ __device__ inline, __forceinline__), with
 *   AKX_HD inline, and plain AKX_HD functions all compile and give the right sum;
 * - two ops that define the same plain functions with other bodies, in one context, each keep
 *   their own;
 * - where libnvrtc loads, the sim refuses what NVRTC refuses (a GPU would): #include
 *   <stdio.h>, a combine calling system(), a map that calls a host function only for some
 *   source types (refused at the first call on those), with NVRTC's first error; the verdict
 *   is kept in the kernel cache, so a second process compiles nothing and is refused the same;
 *   where it does not load, the sim takes them;
 * - a compile error's log is the compiler's whole output with the user's own lines quoted and
 *   numbered, from the host compiler and from NVRTC; an unknown acc_type is reported at
 *   acc_type, not in generated code;
 * - an accumulator aligned to more than 16 bytes is refused, naming its type and alignment.
 * Each test points AKX_CACHE_DIR at a fresh directory before any context exists. */
#define _XOPEN_SOURCE 700 /* mkdtemp, setenv */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tree.h"
#include "akx.h"
#include "jit/cache.h"
#include "jit/compile_log.h"
#include "jit/nvrtc.h"
#include "jit/user_op.h"

static char cache_dir[64];
static akx_context *ctx;

static void setup(void) {
  strcpy(cache_dir, "/tmp/akx-user-op-sources-XXXXXX");
  cr_assert(mkdtemp(cache_dir), "mkdtemp");
  setenv("AKX_CACHE_DIR", cache_dir, 1);
  cr_assert_eq(akx_context_create(&ctx, AKX_BACKEND_AUTO, 0), AKX_SUCCESS, "%s", akx_last_error());
}
static void teardown(void) {
  akx_context_destroy(ctx);
  tfx_remove_tree(cache_dir);
}
TestSuite(user_op_sources, .init = setup, .fini = teardown, .timeout = 600);

static int on_sim(void) { return akx_context_backend(ctx) == AKX_BACKEND_SIM; }
static int nvrtc_loads(void) { return akx__nvrtc_available() == AKX_SUCCESS; }

/* ---- helpers --------------------------------------------------------------------------------- */

enum { N = 1000 };

/* x[k] = (k % 61 - 30) / 4: sums of these and of their squares are exact in double. */
static double value_at(int k) { return (double)(k % 61 - 30) / 4.0; }

/* akx_mapreduce of op over the N values as float64, into *got. */
static akx_status mapreduce_values(akx_op op, double *got) {
  double host[N];
  for (int k = 0; k < N; ++k) host[k] = value_at(k);
  void *dev = NULL;
  cr_assert_eq(akx_malloc(ctx, &dev, sizeof host), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(akx_memcpy(ctx, dev, host, sizeof host, AKX_COPY_HOST_TO_DEVICE), AKX_SUCCESS);
  const akx_array v = akx_vector(dev, AKX_FLOAT64, N);
  const akx_status st = akx_mapreduce(ctx, &v, AKX_MAP_IDENTITY, op, NULL, got, AKX_HOST);
  akx_free(ctx, dev);
  return st;
}

static akx_op create_ok(const char *what, const akx_user_op_desc *d) {
  akx_op op = (akx_op)0;
  const akx_status st = akx_user_op_create(ctx, d, &op);
  cr_assert_eq(st, AKX_SUCCESS, "%s: akx_user_op_create = %s: %s\nlog:\n%s", what, akx_status_string(st),
               akx_last_error(), akx_last_compile_log());
  return op;
}

/* Creates d, sums over the values with it and checks the sum against want. */
static void sums_to(const char *what, const akx_user_op_desc *d, double want) {
  const akx_op op = create_ok(what, d);
  double got = -1;
  const akx_status st = mapreduce_values(op, &got);
  cr_assert_eq(st, AKX_SUCCESS, "%s: akx_mapreduce = %s: %s", what, akx_status_string(st), akx_last_error());
  cr_assert_eq(got, want, "%s: %.17g, want %.17g", what, got, want);
  cr_assert_eq(akx_user_op_destroy(ctx, op), AKX_SUCCESS);
}

static double sum_of_squares_plus_one(void) {
  double s = 0;
  for (int k = 0; k < N; ++k) s += value_at(k) * value_at(k) + 1;
  return s;
}

/* ---- spellings that port both ways ------------------------------------------------------------ */

typedef struct {
  const char *what, *source;
} spelling;

static const spelling spellings[] = {
    {"CUDA's own __host__ __device__ inline",
     "__host__ __device__ inline double s_add(double a, double b) { return a + b; }\n"
     "__host__ __device__ inline double s_zero() { return 0.0; }\n"
     "template <class S> __host__ __device__ inline double s_map(S x, int64_t) { return (double)x * (double)x + 1.0; }\n"},
    {"__host__ __device__ __forceinline__",
     "__host__ __device__ __forceinline__ double s_add(double a, double b) { return a + b; }\n"
     "__device__ __host__ double s_zero() { return 0.0; }\n"
     "template <class S> __host__ __device__ double s_map(S x, int64_t) { return (double)x * (double)x + 1.0; }\n"},
    {"AKX_HD inline",
     "AKX_HD inline double s_add(double a, double b) { return a + b; }\n"
     "AKX_HD inline double s_zero() { return 0.0; }\n"
     "template <class S> AKX_HD inline double s_map(S x, int64_t) { return (double)x * (double)x + 1.0; }\n"},
    {"plain AKX_HD, a helper function and a struct with members",
     "struct Sq { double v; AKX_HD Sq(double x) : v(x * x) {} AKX_HD double plus_one() const { return v + 1.0; } };\n"
     "AKX_HD double twice_half(double a) { return (a * 2.0) / 2.0; }\n"
     "AKX_HD double s_add(double a, double b) { return twice_half(a) + b; }\n"
     "AKX_HD double s_zero() { return 0.0; }\n"
     "template <class S> AKX_HD double s_map(S x, int64_t) { return Sq((double)x).plus_one(); }\n"},
};

Test(user_op_sources, every_spelling_of_a_host_device_function_compiles) {
  for (size_t k = 0; k < sizeof spellings / sizeof spellings[0]; ++k) {
    const akx_user_op_desc d = {spellings[k].source, "double", "s_add", "s_zero", "s_map", NULL};
    sums_to(spellings[k].what, &d, sum_of_squares_plus_one());
  }
}

Test(user_op_sources, two_ops_defining_the_same_functions_keep_their_own) {
  /* The same names, plain (not inline) functions, other bodies: a sum and a maximum. */
  static const char sum_src[] =
      "double same_combine(double a, double b) { return a + b; }\n"
      "AKX_HD double same(double a, double b) { return same_combine(a, b); }\n"
      "AKX_HD double same_zero() { return 0.0; }\n";
  static const char max_src[] =
      "double same_combine(double a, double b) { return a > b ? a : b; }\n"
      "AKX_HD double same(double a, double b) { return same_combine(a, b); }\n"
      "AKX_HD double same_zero() { return -1e300; }\n";
  /* same_combine has no execution space: NVRTC refuses it (a host function); without NVRTC
   * the sim takes it. The AKX_HD spelling of the same is checked on every machine. */
  static const char sum_hd[] =
      "AKX_HD double same_combine(double a, double b) { return a + b; }\n"
      "AKX_HD double same(double a, double b) { return same_combine(a, b); }\n"
      "AKX_HD double same_zero() { return 0.0; }\n";
  static const char max_hd[] =
      "AKX_HD double same_combine(double a, double b) { return a > b ? a : b; }\n"
      "AKX_HD double same(double a, double b) { return same_combine(a, b); }\n"
      "AKX_HD double same_zero() { return -1e300; }\n";
  double sum = 0, max = -1e300;
  for (int k = 0; k < N; ++k) sum += value_at(k), max = value_at(k) > max ? value_at(k) : max;
  const char *sums[2] = {sum_hd, sum_src}, *maxes[2] = {max_hd, max_src};
  for (int plain = 0; plain < 2; ++plain) {
    if (plain && nvrtc_loads()) break;
    const akx_user_op_desc ds = {sums[plain], "double", "same", "same_zero", NULL, NULL};
    const akx_user_op_desc dm = {maxes[plain], "double", "same", "same_zero", NULL, NULL};
    const akx_op a = create_ok("the sum", &ds), b = create_ok("the maximum", &dm);
    double got_a = -1, got_b = -1;
    cr_assert_eq(mapreduce_values(a, &got_a), AKX_SUCCESS, "%s", akx_last_error());
    cr_assert_eq(mapreduce_values(b, &got_b), AKX_SUCCESS, "%s", akx_last_error());
    cr_assert_eq(got_a, sum, "the sum's op gave %.17g, want %.17g", got_a, sum);
    cr_assert_eq(got_b, max, "the maximum's op gave %.17g, want %.17g", got_b, max);
  }
}

/* ---- what NVRTC refuses, the sim refuses ------------------------------------------------------ */

typedef struct {
  const char *what, *source, *names; /* names: a word NVRTC's first error holds */
  int at_first_call;                 /* refused by akx_mapreduce on float64, not by create */
} refusal;

static const refusal refusals[] = {
    {"#include <stdio.h>",
     "#include <stdio.h>\n"
     "AKX_HD double r_add(double a, double b) { return a + b; }\n"
     "AKX_HD double r_zero() { return 0.0; }\n",
     "stdio.h", 0},
    {"a combine calling system()",
     "AKX_HD double r_add(double a, double b) { return a + b + (a != a ? system(\"true\") : 0); }\n"
     "AKX_HD double r_zero() { return 0.0; }\n",
     "system", 0},
    {"a function without an execution space",
     "double r_add(double a, double b) { return a + b; }\n"
     "AKX_HD double r_zero() { return 0.0; }\n",
     "host function", 0},
    {"a map calling system() once it is instantiated",
     "AKX_HD double r_add(double a, double b) { return a + b; }\n"
     "AKX_HD double r_zero() { return 0.0; }\n"
     "AKX_HD const char *r_label(double) { return \"true\"; }\n"
     "template <class S> AKX_HD double r_map(S x, int64_t) { return (double)x + (x != x ? system(r_label(x)) : 0); }\n",
     "system", 1},
};

static double sum_of_values(void) {
  double s = 0;
  for (int k = 0; k < N; ++k) s += value_at(k);
  return s;
}

/* The refusal of r on this context: create's, else the first call's; taken, the sum it gives
 * (every op of the table sums the values). */
static akx_status refused_how(const refusal *r, int *by_create) {
  const akx_user_op_desc d = {r->source, "double", "r_add", "r_zero", r->at_first_call ? "r_map" : NULL, NULL};
  akx_op op = (akx_op)0;
  akx_status st = akx_user_op_create(ctx, &d, &op);
  *by_create = st != AKX_SUCCESS;
  if (st != AKX_SUCCESS) return st;
  double got = -1;
  st = mapreduce_values(op, &got);
  if (st == AKX_SUCCESS) cr_assert_eq(got, sum_of_values(), "%s: %.17g, want %.17g", r->what, got, sum_of_values());
  return st;
}

Test(user_op_sources, the_sim_refuses_what_nvrtc_refuses) {
  if (!on_sim() || !nvrtc_loads()) {
    cr_skip("libnvrtc does not load here (or not on the sim): nothing to check against");
    return;
  }
  for (size_t k = 0; k < sizeof refusals / sizeof refusals[0]; ++k) {
    const refusal *r = &refusals[k];
    int by_create = 0;
    const akx_status st = refused_how(r, &by_create);
    cr_assert_eq(st, AKX_ERROR_INVALID_ARGUMENT, "%s: %s (%s)", r->what, akx_status_string(st), akx_last_error());
    cr_assert_eq(by_create, !r->at_first_call, "%s: refused by %s", r->what, by_create ? "create" : "the first call");
    const char *e = akx_last_error();
    cr_assert(strstr(e, "NVRTC") && strstr(e, r->names) && strstr(e, "user_op.cpp("),
              "%s: the sentence names NVRTC, the user's line and \"%s\": %s", r->what, r->names, e);
    cr_assert(strstr(akx_last_compile_log(), "user_op.cpp("), "%s: NVRTC's log is kept: %s", r->what,
              akx_last_compile_log());
  }
}

Test(user_op_sources, without_nvrtc_the_sim_takes_what_its_compiler_takes) {
  /* Every name tried is one that does not load: the check is skipped. */
  setenv("AKX_NVRTC_LIBRARY", "/nonexistent/libnvrtc.so", 1);
  akx__nvrtc_reset_for_tests();
  if (!on_sim()) {
    cr_skip("the sim's rule");
    return;
  }
  cr_assert_neq(akx__nvrtc_available(), AKX_SUCCESS);
  for (size_t k = 0; k < sizeof refusals / sizeof refusals[0]; ++k) {
    int by_create = 0;
    const akx_status st = refused_how(&refusals[k], &by_create);
    cr_assert_eq(st, AKX_SUCCESS, "%s: %s (%s)", refusals[k].what, akx_status_string(st), akx_last_error());
  }
}

/* The directory's files of one kind (".nvchk"). */
static int files_of_kind(const char *kind) {
  char cmd[256];
  snprintf(cmd, sizeof cmd, "ls %s | grep -c '%s$'", cache_dir, kind);
  FILE *p = popen(cmd, "r");
  int n = 0;
  cr_assert(p && fscanf(p, "%d", &n) == 1);
  pclose(p);
  return n;
}

Test(user_op_sources, nvrtcs_verdict_is_kept_for_the_next_process) {
  if (!on_sim() || !nvrtc_loads()) {
    cr_skip("libnvrtc does not load here (or not on the sim)");
    return;
  }
  const refusal *bad = &refusals[1];
  const akx_user_op_desc good = {spellings[0].source, "double", "s_add", "s_zero", "s_map", NULL};
  for (int round = 0; round < 2; ++round) {
    /* Round 1 is a new process as far as the cache goes: memory forgotten, the disk kept. */
    if (round == 1) akx__jit_cache_reset_for_tests();
    akx__jit_counters before, after;
    akx__jit_cache_counters(&before);
    akx_op op;
    cr_assert_eq(akx_user_op_create(ctx, &good, &op), AKX_SUCCESS, "%s", akx_last_error());
    int by_create = 0;
    cr_assert_eq(refused_how(bad, &by_create), AKX_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(akx_last_error(), "system") && strstr(akx_last_compile_log(), "system"),
              "round %d: the kept refusal and its log: %s\n%s", round, akx_last_error(), akx_last_compile_log());
    akx__jit_cache_counters(&after);
    if (round == 0) {
      cr_assert_eq(files_of_kind(".nvchk"), 2, "one verdict on disk per source (a taken one, a refused one)");
    } else {
      cr_assert_eq(after.compiles - before.compiles, 0, "the second process compiled %llu times",
                   (unsigned long long)(after.compiles - before.compiles));
      cr_assert_geq(after.disk_hits - before.disk_hits, 2, "both verdicts came from disk");
    }
  }
}

/* ---- what a compile error reports ------------------------------------------------------------- */

Test(user_op_sources, the_compile_log_quotes_the_users_lines) {
  static const char broken[] =
      "AKX_HD double b_add(double a, double b) { return a + b; }\n"
      "AKX_HD double b_zero() { return 0; }\n"
      "AKX_HD double b_oops(double a) { return a +* ; }\n";
  const akx_user_op_desc d = {broken, "double", "b_add", "b_zero", NULL, NULL};
  akx_op op;
  cr_assert_eq(akx_user_op_create(ctx, &d, &op), AKX_ERROR_INVALID_ARGUMENT);
  const char *log = akx_last_compile_log();
  /* gcc and clang: "user_op.cpp:3:46: error: ...", then the line, then a caret under it. */
  cr_assert(strstr(log, "user_op.cpp:3:") || strstr(log, "user_op.cpp(3)"), "the user's line 3: %s", log);
  cr_assert(strstr(log, "return a +* ;"), "the line quoted: %s", log);
  cr_assert(strstr(log, "^"), "a caret under it: %s", log);
  cr_assert(strstr(akx_last_error(), "user_op.cpp"), "%s", akx_last_error());
}

Test(user_op_sources, an_unknown_acc_type_is_reported_at_acc_type) {
  static const char src[] = "AKX_HD double u_add(double a, double b) { return a + b; }\n";
  const akx_user_op_desc d = {src, "Nope", "u_add", NULL, NULL, NULL};
  akx_op op;
  cr_assert_eq(akx_user_op_create(ctx, &d, &op), AKX_ERROR_INVALID_ARGUMENT);
  const char *e = akx_last_error();
  cr_assert(strncmp(e, "desc->acc_type", 14) == 0 && strstr(e, "Nope") && strstr(e, "acc_type"),
            "the sentence names acc_type and the type: %s", e);
  cr_assert(!strstr(e, "akx_user_op_rules"), "not a line of generated code: %s", e);
  cr_assert(strstr(akx_last_compile_log(), "Nope"), "%s", akx_last_compile_log());
}

/* NVRTC's own output for a unit of a user op (the text every compiler of the op sees), through
 * the sentence akx_user_op_create would give. */
static akx_status nvrtc_refusal_of(const akx_user_op_desc *d) {
  char *text = NULL;
  cr_assert_eq(akx__user_op_prelude(d, &text), AKX_SUCCESS);
  static const char *const options[] = {"-std=c++17"};
  akx__nvrtc_request rq = {0};
  rq.source = text;
  rq.name = "akx_user_op.cu";
  rq.n_options = 1;
  rq.options = options;
  rq.arch = 90;
  rq.want_ptx = 1;
  akx__nvrtc_result r = {0};
  const akx_status st = akx__nvrtc_compile_unit(&rq, &r);
  free(text);
  cr_assert_eq(st, AKX_ERROR_INVALID_ARGUMENT, "NVRTC: %s", akx_last_error());
  char first[1024];
  snprintf(first, sizeof first, "%s", akx_last_error());
  return akx__user_op_refusal("NVRTC", first);
}

Test(user_op_sources, nvrtcs_log_quotes_the_users_lines_and_acc_type) {
  if (!nvrtc_loads()) {
    cr_skip("libnvrtc does not load here");
    return;
  }
  static const char broken[] =
      "AKX_HD double b_add(double a, double b) { return a + b; }\n"
      "AKX_HD double b_oops(double a) { return a +* ; }\n";
  const akx_user_op_desc d = {broken, "double", "b_add", NULL, NULL, NULL};
  nvrtc_refusal_of(&d);
  const char *log = akx__compile_log_get();
  cr_assert(strstr(log, "user_op.cpp(2)") && strstr(log, "return a +* ;"), "line 2, quoted: %s", log);
  cr_assert(strstr(akx_last_error(), "user_op.cpp(2)"), "%s", akx_last_error());

  static const char fine[] = "AKX_HD double u_add(double a, double b) { return a + b; }\n";
  const akx_user_op_desc unknown = {fine, "Nope", "u_add", NULL, NULL, NULL};
  nvrtc_refusal_of(&unknown);
  const char *e = akx_last_error();
  cr_assert(strncmp(e, "desc->acc_type", 14) == 0 && strstr(e, "acc_type(1)") && strstr(e, "Nope"),
            "reported at acc_type: %s", e);
}

/* ---- the accumulator's alignment ---------------------------------------------------------------- */

Test(user_op_sources, an_accumulator_aligned_above_16_is_refused) {
  static const char src[] =
      "struct alignas(32) A32 { double v[4]; };\n"
      "struct alignas(16) A16 { double v[4]; };\n"
      "AKX_HD A32 a32_add(A32 a, A32 b) { for (int k = 0; k < 4; ++k) a.v[k] += b.v[k]; return a; }\n"
      "AKX_HD A16 a16_add(A16 a, A16 b) { for (int k = 0; k < 4; ++k) a.v[k] += b.v[k]; return a; }\n";
  const akx_user_op_desc d32 = {src, "A32", "a32_add", NULL, NULL, NULL};
  akx_op op = (akx_op)-1;
  cr_assert_eq(akx_user_op_create(ctx, &d32, &op), AKX_ERROR_INVALID_ARGUMENT, "%s", akx_last_error());
  cr_assert_eq(op, (akx_op)-1, "op written on failure");
  const char *e = akx_last_error();
  cr_assert(strstr(e, "acc_type") && strstr(e, "A32") && strstr(e, "32") && strstr(e, "16"),
            "the sentence names acc_type, the type and its alignment: %s", e);
  const akx_user_op_desc d16 = {src, "A16", "a16_add", NULL, NULL, NULL};
  const akx_op ok = create_ok("alignas(16)", &d16);
  akx_user_op_info_t info;
  cr_assert_eq(akx_user_op_info(ctx, ok, &info), AKX_SUCCESS);
  cr_assert_eq(info.acc_align, 16);
  cr_assert_eq(info.acc_size, 32);
}

/* ---- the refusal's sentence, from a compiler's first error line --------------------------------- */

Test(user_op_sources, the_refusal_names_acc_type_a_rule_or_the_first_error) {
  static const struct {
    const char *first_line, *starts;
  } rows[] = {
      {"acc_type:1:1: error: 'Nope' does not name a type", "desc->acc_type is not a type desc->source declares (cc): acc_type:1:1"},
      {"acc_type(1): error: identifier \"Nope\" is undefined", "desc->acc_type is not a type desc->source declares (cc): acc_type(1)"},
      {"akx_user_op_rules:12:3: error: static assertion failed: akx rule: identity: source declares no function z()",
       "identity: source declares no function z()"},
      {"akx_user_op_rules(12): error: static assertion failed with \"akx rule: combine: f(Acc a, Acc b) must return Acc (double)\"",
       "combine: f(Acc a, Acc b) must return Acc (double)"},
      {"user_op.cpp:3:46: error: expected primary-expression before ';' token",
       "desc->source does not compile (cc): user_op.cpp:3:46: error: expected"},
      /* A file of the user's named like the accumulator's is not it. */
      {"my_acc_type.h(2): error: x", "desc->source does not compile (cc): my_acc_type.h(2)"},
  };
  for (size_t k = 0; k < sizeof rows / sizeof rows[0]; ++k) {
    cr_assert_eq(akx__user_op_refusal("cc", rows[k].first_line), AKX_ERROR_INVALID_ARGUMENT);
    cr_assert(strncmp(akx_last_error(), rows[k].starts, strlen(rows[k].starts)) == 0, "%s\n-> %s\nwant %s...",
              rows[k].first_line, akx_last_error(), rows[k].starts);
    if (strstr(rows[k].starts, "must return") || strstr(rows[k].starts, "declares no"))
      cr_assert_eq(strlen(akx_last_error()), strlen(rows[k].starts), "the rule alone: %s", akx_last_error());
  }
}
