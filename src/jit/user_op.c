/* The translation units of user operators (src/jit/user_op.h), and their compiles.
 *
 * A unit is the kernel headers, the user's source inside namespace akx_user (line 1 of
 * AKX__USER_SOURCE_FILE, so a compiler's message names the user's own line), the accumulator's
 * type alone on line 1 of AKX__USER_ACC_FILE (an unknown type is reported there, not in
 * generated code), then a struct of its functions, akx_user::fns, which
 * kernels/akx/user_op.cuh turns into an op of the kernels. The struct's checks are
 * static_asserts whose message starts "akx rule: ": the compile fails with that sentence
 * (akx__user_op_refusal). The functions are called through members that are templates, so a
 * missing function fails its rule's check alone rather than every call to it.
 *
 * The user's functions keep the linkage the user gave them (AKX_HD is an attribute only): no
 * two units are ever linked together (each is one NVRTC module, or one shared object of the
 * sim's, built with hidden symbols and loaded RTLD_LOCAL), so two ops may define the same
 * plain function. */
#include "user_op.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "cache.h"
#include "compile_log.h"
#include "nvrtc.h"
#include "builtin_instance.h"
#include "sim_module.h"
#include "text.h"

/* ---- text ------------------------------------------------------------------------------------ */
static akx_status done(akx__text *b, char **text) {
  if (b->failed || !b->p) {
    free(b->p);
    return akx__fail(AKX_ERROR_OUT_OF_MEMORY, "out of host memory writing a user op's unit");
  }
  *text = b->p;
  return AKX_SUCCESS;
}

/* The C++ type of a dtype, as the kernels name it; "void" for AKX_DTYPE_AUTO. */
static const char *cxx_type(akx_dtype t) {
  const char *n = akx__dtype_cxx_name(t);
  return n ? n : "void";
}

/* The user's source and akx_user::fns. After the source, each function name also names a
 * fallback template that returns akx_user::missing_: any declaration of the user's is a better
 * match, so the fallback is chosen only when the source declares none, and the rule's check
 * says so in a sentence instead of the compiler's lookup error. */
static void put_fns(akx__text *b, const akx_user_op_desc *d) {
  akx__text_putf(b, "#include \"" AKX__USER_OP_HEADER "\"\nnamespace akx_user {\nusing ::akx::float16;\nusing ::akx::bfloat16;\n"
         "using ::akx::complex;\n#line 1 \"" AKX__USER_SOURCE_FILE "\"\n%s\n", d->source);
  akx__text_putf(b, "#line 1 \"akx_user_op_rules\"\nusing akx_acc_type_ =\n#line 1 \"" AKX__USER_ACC_FILE "\"\n%s\n"
         "#line 3 \"akx_user_op_rules\"\n;\n", d->acc_type);
  akx__text_putf(b, "}\nnamespace akx_user_fallback_ {\nstruct missing_ {};\n");
  const char *names[4] = {d->combine, d->identity, d->map, d->store};
  for (int k = 0; k < 4; ++k) {
    int dup = 0;
    for (int j = 0; j < k; ++j) dup |= names[j] && names[k] && strcmp(names[j], names[k]) == 0;
    if (names[k] && !dup) akx__text_putf(b, "template <class... X> AKX_HD missing_ %s(X...);\n", names[k]);
  }
  akx__text_putf(b, "}\nnamespace akx_user {\n");
  for (int k = 0; k < 4; ++k) {
    int dup = 0;
    for (int j = 0; j < k; ++j) dup |= names[j] && names[k] && strcmp(names[j], names[k]) == 0;
    if (names[k] && !dup) akx__text_putf(b, "using ::akx_user_fallback_::%s;\n", names[k]);
  }
  akx__text_putf(b, "struct fns {\n  using acc = ::akx_user::akx_acc_type_;\n  using missing_ = ::akx_user_fallback_::missing_;\n");
  akx__text_putf(b, "  static_assert(sizeof(acc) <= 32, \"akx rule: acc_type (%s) is larger than 32 bytes, the most an "
         "accumulator may be\");\n", d->acc_type);
  akx__text_putf(b, "  static_assert(::akx::is_trivially_copyable<acc>::value, \"akx rule: acc_type (%s) is not trivially "
         "copyable\");\n", d->acc_type);
  akx__text_putf(b, "  using combine_t_ = decltype(%s(::akx::declval<const acc &>(), ::akx::declval<const acc &>()));\n"
         "  static_assert(!::akx::is_same<combine_t_, missing_>::value, \"akx rule: combine: source declares no "
         "function %s(Acc a, Acc b)\");\n"
         "  static_assert(::akx::is_same<combine_t_, missing_>::value || ::akx::is_same<combine_t_, acc>::value, "
         "\"akx rule: combine: %s(Acc a, Acc b) must return Acc (%s)\");\n"
         "  AKX_HD_INLINE static acc akx_combine(const acc &a, const acc &b) { return %s(a, b); }\n",
      d->combine, d->combine, d->combine, d->acc_type, d->combine);
  akx__text_putf(b, "  static constexpr bool has_identity = %s;\n", d->identity ? "true" : "false");
  if (d->identity)
    akx__text_putf(b, "  using identity_t_ = decltype(%s());\n"
           "  static_assert(!::akx::is_same<identity_t_, missing_>::value, \"akx rule: identity: source declares no "
           "function %s()\");\n"
           "  static_assert(::akx::is_same<identity_t_, missing_>::value || ::akx::is_same<identity_t_, acc>::value, "
           "\"akx rule: identity: %s() must return Acc (%s)\");\n"
           "  AKX_HD_INLINE static acc akx_identity() { return %s(); }\n",
        d->identity, d->identity, d->identity, d->acc_type, d->identity);
  if (d->map)
    akx__text_putf(b, "  template <class S> AKX_HD_INLINE static acc akx_map(const S &x, int64_t i) {\n"
           "    static_assert(!::akx::is_same<decltype(%s(x, i)), missing_>::value, \"akx rule: map: source declares "
           "no function %s(S x, int64_t i) for this source type\");\n    return %s(x, i);\n  }\n",
        d->map, d->map, d->map);
  else
    akx__text_putf(b, "  template <class S> AKX_HD_INLINE static acc akx_map(const S &x, int64_t) { return acc(x); }\n");
  if (d->store)
    akx__text_putf(b, "  template <class D> AKX_HD_INLINE static D akx_store(const acc &a) {\n"
           "    static_assert(!::akx::is_same<decltype(%s<D>(a)), missing_>::value, \"akx rule: store: source "
           "declares no function template %s<D>(Acc a)\");\n    return %s<D>(a);\n  }\n",
        d->store, d->store, d->store);
  else
    akx__text_putf(b, "  template <class D> AKX_HD_INLINE static D akx_store(const acc &a) { return D(a); }\n");
  akx__text_putf(b, "};\n}  // namespace akx_user\n");
}

akx_status akx__user_op_probe_text(const akx_user_op_desc *d, char **text) {
  akx__text b = {0};
  put_fns(&b, d);
  /* The rules' checks, instantiated, and the layout the host plans with. */
  akx__text_putf(&b, "using akx_op_t = ::akx::user_op<::akx_user::fns, void>;\n"
          "template struct ::akx::user_op<::akx_user::fns, void>;\n"
          "static_assert(sizeof(akx_op_t::acc) > 0, \"\");\n"
          "AKX_MODULE_EXPORT void akx_user_layout(size_t *out) {\n"
          "  using A = akx_op_t::acc;\n  using V = akx_op_t::value;\n"
          "  out[0] = sizeof(A); out[1] = alignof(A); out[2] = sizeof(V); out[3] = alignof(V);\n"
          "  out[4] = ::akx::user_valid_offset<akx_op_t>();\n"
          "}\n");
  return done(&b, text);
}

akx_status akx__user_op_prelude(const akx_user_op_desc *d, char **text) {
  akx__text fns = {0};
  put_fns(&fns, d);
  return done(&fns, text);
}

akx_status akx__user_op_instance(const akx__user_op *op, int family, akx_dtype src, akx_dtype dst,
                                 akx__instance *in) {
  char *prelude = NULL;
  AKX_TRY(akx__user_op_prelude(&op->desc, &prelude));
  char op_cxx[96], acc_cxx[128];
  snprintf(op_cxx, sizeof op_cxx, "::akx::user_op<::akx_user::fns, %s>", cxx_type(dst));
  snprintf(acc_cxx, sizeof acc_cxx, "%s::value", op_cxx);
  const akx__instance_key key = {family, src, dst, AKX_DTYPE_AUTO, 0};
  const akx__instance_op uop = {prelude, op_cxx, acc_cxx};
  const akx_status s = akx__instance_generate_op(&key, &uop, in);
  free(prelude);
  return s;
}

akx_status akx__user_op_unit_text(const akx__user_op *op, int family, akx_dtype src, akx_dtype dst,
                                  char **text) {
  akx__instance in;
  AKX_TRY(akx__user_op_instance(op, family, src, dst, &in));
  /* A store-less op folds into a reduction's dst only when its accumulator converts from
   * dst's type: refused here, on the host, before anything launches. */
  char check[640] = "";
  if (akx__kind_of(family)->user_op == AKX__USER_OP_STORE && dst != AKX_DTYPE_AUTO)
    snprintf(check, sizeof check,
             "  if (p->finish.fold && !p->finish.bare && !::akx::user_acc_from<::akx::user_op<::akx_user::fns, "
             "%s>::acc, ::akx::user_type<%s>::type>::value)\n"
             "    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, \"opts->fold: the op's accumulator (%s) cannot be made "
             "from dst's previous value (%s)\");\n",
             cxx_type(dst), cxx_type(dst), op->desc.acc_type, akx_dtype_name(dst));
  const akx_status s = akx__unit_with_entry(family, &in, check, text);
  akx__instance_free(&in);
  return s;
}

/* ---- the sentence of a refused source --------------------------------------------------------- */
akx_status akx__user_op_refusal(const char *compiler, const char *first_line) {
  /* The first error at acc_type (gcc and clang: "acc_type:1:1: error: ...", NVRTC:
   * "acc_type(1): error: ..."): every later one, a rule's check too, follows from it. */
  const char *acc = first_line ? strstr(first_line, AKX__USER_ACC_FILE) : NULL;
  if (acc && (acc == first_line || acc[-1] == ' ') &&
      (acc[strlen(AKX__USER_ACC_FILE)] == ':' || acc[strlen(AKX__USER_ACC_FILE)] == '('))
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "desc->acc_type is not a type desc->source declares (%s): %s",
                     compiler, first_line);
  /* The first error is a rule's failed check: its sentence alone, as the rule wrote it (gcc
   * ends it at the line's end, clang and NVRTC within quotes). A rule that fails after another
   * error may be that error's consequence: the first error is then what is said. */
  const char *rule = first_line ? strstr(first_line, "akx rule: ") : NULL;
  if (rule) {
    rule += 10;
    size_t n = strcspn(rule, "\"\n");
    while (n > 0 && (rule[n - 1] == '\'' || rule[n - 1] == ' ')) --n;
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "%.*s", (int)n, rule);
  }
  return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "desc->source does not compile (%s): %s", compiler,
                   first_line ? first_line : "");
}

/* ---- NVRTC's units ------------------------------------------------------------------------------ */
static const char *const probe_options[] = {"-std=c++17", "-DNDEBUG"};

/* The unit akx_user_op_create compiles on CUDA: the rules' checks, and the layout in the probe
 * kernel's name. */
static akx_status cuda_probe_text(const akx_user_op_desc *d, char **text) {
  akx__text b = {0};
  put_fns(&b, d);
  akx__text_putf(&b, "using akx_op_t = ::akx::user_op<::akx_user::fns, void>;\n"
          "template struct ::akx::user_op<::akx_user::fns, void>;\n"
          "template <size_t A, size_t B, size_t C, size_t D, size_t E> __global__ void akx_layout_probe() {}\n");
  return done(&b, text);
}

/* NVRTC's compile of a user op's unit against the embedded headers, for arch (PTX: no ptxas).
 * On failure: the refusal's sentence and NVRTC's log (akx__compile_log_get). */
static akx_status nvrtc_user_unit(const char *text, int arch, const char *name_expression, akx__nvrtc_result *r) {
  akx__nvrtc_request rq = {0};
  rq.source = text;
  rq.name = "akx_user_op.cu";
  rq.n_options = (int)(sizeof probe_options / sizeof probe_options[0]);
  rq.options = probe_options;
  rq.n_names = name_expression ? 1 : 0;
  rq.name_expressions = name_expression ? &name_expression : NULL;
  rq.arch = arch;
  rq.want_ptx = 1;
  akx_status s = akx__nvrtc_compile_unit(&rq, r);
  if (s == AKX_ERROR_INVALID_ARGUMENT) {
    /* The first error line, less akx__nvrtc_compile's "NVRTC could not compile ... for
     * compute_90: " before it. */
    char first[1024];
    const char *e = akx_last_error(), *line = strstr(e, " for compute_");
    line = line ? strstr(line, ": ") : NULL;
    snprintf(first, sizeof first, "%s", line ? line + 2 : e);
    int major = 0, minor = 0;
    akx__nvrtc_version(&major, &minor);
    char compiler[32];
    snprintf(compiler, sizeof compiler, "NVRTC %d.%d", major, minor);
    s = akx__user_op_refusal(compiler, first);
  }
  return s;
}

/* ---- the layout on CUDA ------------------------------------------------------------------------ */
/* On CUDA no host code of the op exists: the layout comes back in the lowered name of a probe
 * kernel whose template arguments are the sizes, "_Z16akx_layout_probeILm8ELm8E...EEvv". */
#define AKX_LAYOUT_PROBE                                                                            \
  "::akx_layout_probe<sizeof(akx_op_t::acc), alignof(akx_op_t::acc), sizeof(akx_op_t::value), "  \
  "alignof(akx_op_t::value), ::akx::user_valid_offset<akx_op_t>()>"

static int parse_layout(const char *lowered, size_t out[5]) {
  int k = 0;
  for (const char *p = strstr(lowered, "ILm"); p && k < 5; p = strstr(p, "Lm")) {
    p += 2;
    char *end = NULL;
    out[k++] = (size_t)strtoull(p, &end, 10);
    if (!end || *end != 'E') return 0;
    p = end;
  }
  return k == 5;
}

/* What the kernel cache's build of an NVRTC compile of a user op's text needs (the layout
 * probe's, the check's). */
typedef struct {
  const char *text;
  int arch;
} nvrtc_job;

static akx_status probe_build(void *arg, void **bytes, size_t *size) {
  const nvrtc_job *job = arg;
  akx__nvrtc_result r = {0};
  AKX_TRY(nvrtc_user_unit(job->text, job->arch, AKX_LAYOUT_PROBE, &r));
  size_t layout[5];
  const int ok = parse_layout(r.lowered_names[0], layout);
  akx__nvrtc_result_free(&r);
  if (!ok) return akx__fail(AKX_ERROR_INTERNAL, "the layout probe's name cannot be read");
  *bytes = malloc(sizeof layout);
  if (!*bytes) return akx__fail(AKX_ERROR_OUT_OF_MEMORY, "out of host memory");
  memcpy(*bytes, layout, sizeof layout);
  *size = sizeof layout;
  return AKX_SUCCESS;
}

static akx_status probe_load(void *arg, const void *bytes, size_t size, void **handle) {
  (void)arg;
  if (size != 5 * sizeof(size_t)) return akx__fail(AKX_ERROR_INTERNAL, "a cached layout probe has %zu bytes", size);
  *handle = (void *)bytes; /* the cache's bytes, valid while the entry lives (src/jit/cache.h) */
  return AKX_SUCCESS;
}

static akx_status cuda_layout(const akx_context *ctx, const akx_user_op_desc *d, size_t out[5]) {
  AKX_TRY(akx__nvrtc_available());
  char *text = NULL;
  AKX_TRY(cuda_probe_text(d, &text));
  const nvrtc_job job = {text, akx__context_arch(ctx)};
  akx__jit_key key;
  akx_status s = akx__nvrtc_unit_key("cuda layout probe", job.arch,
                                     (int)(sizeof probe_options / sizeof probe_options[0]), probe_options, text, &key);
  void *handle = NULL;
  if (s == AKX_SUCCESS) s = akx__jit_cache_get(&key, ".layout", probe_build, probe_load, (void *)&job, &handle);
  free(text);
  AKX_TRY(s);
  memcpy(out, handle, 5 * sizeof(size_t));
  return AKX_SUCCESS;
}

/* ---- the sim's check that a GPU would take the source ------------------------------------------ */
/* Where libnvrtc loads, the sim compiles what a GPU would compile of the op with NVRTC too
 * (the host compiler takes what NVRTC refuses: <stdio.h>, system(), ...): at
 * akx_user_op_create the CUDA probe (the rules, combine, identity), and before the first
 * launch of each (family, src, dst) a kernel that calls the op's map on src and its store into
 * dst. The verdict, refusal or not, is kept in the kernel cache (".nvchk"), so that a source is
 * checked once per machine. Where NVRTC does not load, or fails for a reason of its own (no
 * builtins library, out of memory), nothing is checked. */
static int check_arch(void) {
  int archs[32], n = 0;
  if (akx__nvrtc_supported_archs(archs, 32, &n) != AKX_SUCCESS || n <= 0) return 0;
  if (n > 32) n = 32;
  int best = archs[0];
  for (int k = 0; k < n; ++k)
    if (archs[k] <= 90) best = archs[k];
  return best;
}

/* The verdict: "" (taken), or the refusal's sentence, a NUL, and NVRTC's log. */
static akx_status check_build(void *arg, void **bytes, size_t *size) {
  const nvrtc_job *job = arg;
  akx__nvrtc_result r = {0};
  const akx_status s = nvrtc_user_unit(job->text, job->arch, NULL, &r);
  if (s == AKX_SUCCESS) {
    akx__nvrtc_result_free(&r);
    *bytes = calloc(1, 1);
    *size = 1;
    return *bytes ? AKX_SUCCESS : akx__fail(AKX_ERROR_OUT_OF_MEMORY, "out of host memory");
  }
  if (s != AKX_ERROR_INVALID_ARGUMENT) return s;
  const char *sentence = akx_last_error(), *log = akx__compile_log_get();
  const size_t a = strlen(sentence), b = strlen(log);
  char *v = malloc(a + b + 2);
  if (!v) return akx__fail(AKX_ERROR_OUT_OF_MEMORY, "out of host memory");
  memcpy(v, sentence, a + 1);
  memcpy(v + a + 1, log, b + 1);
  *bytes = v;
  *size = a + b + 2;
  return AKX_SUCCESS;
}

static akx_status check_load(void *arg, const void *bytes, size_t size, void **handle) {
  (void)arg;
  const char *v = bytes;
  if (size == 0 || v[size - 1] != '\0' || (size > 1 && !memchr(v, '\0', size - 1)))
    return akx__fail(AKX_ERROR_INTERNAL, "a cached NVRTC verdict of %zu bytes is not one", size);
  /* The cache's bytes, valid while the entry lives (src/jit/cache.h): a copy of its own would
   * be lost when the tests drop the entries (akx__jit_cache_reset_for_tests). */
  *handle = (void *)bytes;
  return AKX_SUCCESS;
}

/* AKX_SUCCESS when NVRTC takes `text` or cannot say; the refusal otherwise, its log then the
 * calling thread's compile log. `what`, when not "", is put before the sentence. */
static akx_status nvrtc_check(const char *text, const char *what) {
  if (akx__nvrtc_available() != AKX_SUCCESS) return AKX_SUCCESS;
  const nvrtc_job job = {text, check_arch()};
  if (job.arch == 0) return AKX_SUCCESS;
  akx__jit_key key;
  void *handle = NULL;
  if (akx__nvrtc_unit_key("user op check", job.arch, (int)(sizeof probe_options / sizeof probe_options[0]),
                          probe_options, text, &key) != AKX_SUCCESS ||
      akx__jit_cache_get(&key, ".nvchk", check_build, check_load, (void *)&job, &handle) != AKX_SUCCESS)
    return AKX_SUCCESS;
  const char *verdict = handle;
  if (!*verdict) return AKX_SUCCESS;
  akx__compile_log_set(verdict + strlen(verdict) + 1);
  return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "%s%s (what a GPU would refuse)", what, verdict);
}

/* The check's kernel for (src, dst): the op's map on a src element, combine, and its store
 * into dst (dst AUTO: the accumulator is what is stored). */
static akx_status check_text(const akx__user_op *op, akx_dtype src, akx_dtype dst, char **text) {
  akx__text b = {0};
  put_fns(&b, &op->desc);
  const char *S = cxx_type(src), *D = dst == AKX_DTYPE_AUTO ? "void" : cxx_type(dst);
  akx__text_putf(&b, "using akx_op_t = ::akx::user_op<::akx_user::fns, %s>;\n"
          "__global__ void akx_user_op_check(const %s *x, akx_op_t::value *a, %s *y) {\n"
          "  using V = akx_op_t::value;\n"
          "  V v = akx_op_t::apply(akx_op_t::load<V>(x[0], 0), akx_op_t::load<V>(x[1], 1));\n"
          "  *a = v;\n", D, S, dst == AKX_DTYPE_AUTO ? "void" : D);
  if (dst != AKX_DTYPE_AUTO) akx__text_putf(&b, "  y[0] = akx_op_t::store<%s>(v);\n", D);
  akx__text_putf(&b, "}\n");
  return done(&b, text);
}

/* ---- compiles ------------------------------------------------------------------------------- */
akx_status akx__user_op_compile(const akx_context *ctx, akx__user_op *op) {
  size_t out[5] = {0};
  if (ctx->be->kind == AKX_BACKEND_CUDA) {
    /* NVRTC for the device: the rules' checks and the layout (no host code of the op runs). */
    AKX_TRY(cuda_layout(ctx, &op->desc, out));
  } else {
    char *text = NULL;
    AKX_TRY(akx__user_op_probe_text(&op->desc, &text));
    void *dl = NULL;
    const akx_status s = akx__sim_module_open(ctx->be->module_runtime(), "akx_user_op", text, &op->desc, &dl);
    free(text);
    AKX_TRY(s);
    void *fn = NULL;
    AKX_TRY(akx__sim_module_symbol(dl, "akx_user_op", "akx_user_layout", &fn));
    ((void (*)(size_t *))fn)(out);
    /* The library's own ops (ARGMIN/ARGMAX) are not checked: their source is not a user's. */
    if (op->arg_of < 0) {
      AKX_TRY(cuda_probe_text(&op->desc, &text));
      const akx_status c = nvrtc_check(text, "");
      free(text);
      AKX_TRY(c);
    }
  }
  /* Nodes, shared arrays and the workspace are 16-byte aligned (kernels/akx/scan_layout.cuh,
   * the planners' carving): an accumulator aligned to more would be misplaced. */
  if (out[1] > 16)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "desc->acc_type (%s) is aligned to %zu bytes; an accumulator may be aligned to 16 at most",
                     op->desc.acc_type, out[1]);
  op->info.acc_size = out[0];
  op->info.acc_align = out[1];
  op->value_size = out[2];
  op->value_align = out[3];
  op->valid_offset = out[4];
  op->info.has_identity = op->desc.identity != NULL;
  return AKX_SUCCESS;
}

akx_status akx__user_op_entry(const akx_context *ctx, akx__user_op *op, int family, akx_dtype src,
                              akx_dtype dst, void **entry) {
  if (ctx->be->kind != AKX_BACKEND_SIM)
    return akx__fail(AKX_ERROR_INTERNAL, "akx__user_op_entry is the sim's (CUDA: src/cuda/runtime_kernels.cu)");
  if (family < 0 || family >= AKX__FAMILY_COUNT || (unsigned)src >= AKX_DTYPE_COUNT ||
      (dst != AKX_DTYPE_AUTO && (unsigned)dst >= AKX_DTYPE_COUNT))
    return akx__fail(AKX_ERROR_INTERNAL, "user op %d: no kernels for family %d, src %d, dst %d", (int)op->id,
                     family, (int)src, (int)dst);
  const akx__entry_key key = akx__builtin_entry_key(0, family, src, dst, AKX_DTYPE_AUTO, op->id);
  if ((*entry = akx__entry_find(&key))) return AKX_SUCCESS;
  char *text = NULL;
  AKX_TRY(akx__user_op_unit_text(op, family, src, dst, &text));
  char name[96];
  snprintf(name, sizeof name, "akx_user_op_%d_%s_%s_%s", (int)op->id, akx__family_name(family),
           akx_dtype_name(src), dst == AKX_DTYPE_AUTO ? "acc" : akx_dtype_name(dst));
  void *dl = NULL;
  akx_status s = akx__sim_module_open(ctx->be->module_runtime(), name, text, &op->desc, &dl);
  free(text);
  if (s == AKX_SUCCESS && op->arg_of < 0) {
    s = check_text(op, src, dst, &text);
    if (s == AKX_SUCCESS) {
      char what[160];
      snprintf(what, sizeof what, "user op %d on %s sources%s%s: ", (int)op->id, akx_dtype_name(src),
               dst == AKX_DTYPE_AUTO ? "" : " into ", dst == AKX_DTYPE_AUTO ? "" : akx_dtype_name(dst));
      s = nvrtc_check(text, what);
      free(text);
    }
  }
  if (s != AKX_SUCCESS) {
    akx__user_op_log_set(akx__compile_log_get());
    return s;
  }
  void *e = NULL;
  AKX_TRY(akx__sim_module_symbol(dl, name, "akx_unit_entry", &e));
  *entry = akx__entry_put(&key, e);
  return AKX_SUCCESS;
}

akx_status akx__user_op_launch_entry(const akx_context *ctx, int32_t op, int family, int32_t src, int32_t dst,
                                     void **entry) {
  akx__user_op *u = akx__user_op_find(ctx, (akx_op)op);
  if (!u) return akx__fail(AKX_ERROR_INTERNAL, "a plan names op %d, which is no user op of its context", (int)op);
  return akx__user_op_entry(ctx, u, family, (akx_dtype)src, (akx_dtype)dst, entry);
}
