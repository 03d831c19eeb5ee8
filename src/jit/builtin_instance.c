/* Built-in combinations compiled at run time (src/jit/builtin_instance.h). */
#include "builtin_instance.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "entries.h"
#include "internal.h"
#include "sim_module.h"
#include "user_op.h"

int akx__builtin_prebuilt(akx_backend backend, int family, akx_dtype src, akx_dtype dst, akx_dtype acc, akx_op op,
                          akx_map map) {
  switch (family) {
    case AKX__FAMILY_REDUCE_WHOLE:
    case AKX__FAMILY_REDUCE_DIMS: return akx__reduce_prebuilt(src, map, acc, op, backend);
    case AKX__FAMILY_SCAN: return akx__scan_prebuilt(src, acc, op, dst, backend);
    default: return 1;
  }
}

akx__entry_key akx__builtin_entry_key(int32_t target, int family, int32_t src, int32_t dst, int32_t acc, int32_t op) {
  akx__entry_key k = {target, family, src, dst, acc, op};
  if (op >= AKX_USER_OP_FIRST) k.acc = AKX_DTYPE_AUTO; /* the op's own */
  else if (family == AKX__FAMILY_FINDALL) k.dst = k.acc = AKX_DTYPE_AUTO, k.op = 0;
  else if (family != AKX__FAMILY_SCAN) k.dst = AKX_DTYPE_AUTO; /* the reductions take dst at run time */
  return k;
}

/* The entry that launches the combination: the family's host launcher (include/akx/, the family header),
 * after the kernels the one instance generator instantiates (src/jit/instance.h). Shared by
 * the user ops' units (src/jit/user_op.c). */
akx_status akx__unit_with_entry(int family, const char *src_cxx, const char *dst_cxx, const char *acc_cxx,
                                const char *op_cxx, const char *instance_text, const char *entry_body,
                                char **text) {
  const char *plan = family == AKX__FAMILY_REDUCE_WHOLE ? "akx__reduce_whole_plan"
                     : family == AKX__FAMILY_REDUCE_DIMS ? "akx__reduce_dims_plan"
                                                          : "akx__scan_plan";
  char call[768];
  int n;
  if (family == AKX__FAMILY_SCAN)
    n = snprintf(call, sizeof call, "  return ::akx::scan_launch<%s, %s, %s, %s>(*p, stream);\n", src_cxx, dst_cxx,
                 acc_cxx, op_cxx);
  else
    n = snprintf(call, sizeof call, "  return ::akx::%s_launch<%s, %s, %s>(*p, stream);\n",
                 family == AKX__FAMILY_REDUCE_WHOLE ? "reduce_whole" : "reduce_dims", src_cxx, acc_cxx, op_cxx);
  if (n < 0 || (size_t)n >= sizeof call) return akx__fail(AKX_ERROR_INTERNAL, "a run-time entry does not fit");
  const char *head = "#include \"akx/fail.h\"\nAKX_MODULE_EXPORT akx_status akx_unit_entry(const ";
  const size_t len = strlen(instance_text) + strlen(head) + strlen(plan) + strlen(entry_body) + strlen(call) + 64;
  char *t = malloc(len);
  if (!t) return akx__fail(AKX_ERROR_OUT_OF_MEMORY, "out of host memory");
  snprintf(t, len, "%s%s%s *p, void *stream) {\n%s%s}\n", instance_text, head, plan, entry_body, call);
  *text = t;
  return AKX_SUCCESS;
}

akx_status akx__builtin_unit_text(int family, akx_dtype src, akx_dtype dst, akx_dtype acc, akx_op op, char **text) {
  const akx__instance_key key = {family, src, family == AKX__FAMILY_SCAN ? dst : AKX_DTYPE_AUTO, acc, op};
  akx__instance in;
  AKX_TRY(akx__instance_generate(&key, &in));
  const char *D = family == AKX__FAMILY_SCAN ? akx__dtype_cxx_name(in.dst) : "void";
  const akx_status s = akx__unit_with_entry(family, akx__dtype_cxx_name(src), D, akx__dtype_cxx_name(in.acc),
                                            akx__op_cxx_name(op), in.source, "", text);
  akx__instance_free(&in);
  return s;
}

akx_status akx__builtin_entry(const akx_context *ctx, int family, akx_dtype src, akx_dtype dst, akx_dtype acc,
                              akx_op op, void **entry) {
  if (ctx->be->kind != AKX_BACKEND_SIM)
    return akx__fail(AKX_ERROR_INTERNAL, "akx__builtin_entry is the sim's (CUDA: src/cuda/runtime_kernels.cu)");
  const akx__entry_key key = akx__builtin_entry_key(0, family, src, dst, acc, op);
  if ((*entry = akx__entry_find(&key))) return AKX_SUCCESS;
  char *text = NULL;
  AKX_TRY(akx__builtin_unit_text(family, src, dst, acc, op, &text));
  char name[128];
  snprintf(name, sizeof name, "akx_%s_%s_%s_%s_%s", akx__family_name(family), akx_dtype_name(src),
           akx_dtype_name(acc), akx__op_name(op), family == AKX__FAMILY_SCAN ? akx_dtype_name(dst) : "any");
  void *dl = NULL;
  const akx_status s = akx__sim_module_open(name, text, NULL, &dl);
  free(text);
  AKX_TRY(s);
  void *e = NULL;
  AKX_TRY(akx__sim_module_symbol(dl, name, "akx_unit_entry", &e));
  *entry = akx__entry_put(&key, e);
  return AKX_SUCCESS;
}

/* A unit compiled at run time is compiled, and on CUDA loaded into the context
 * (cudaLibraryLoadData), at its first use: work a capture cannot hold (a load may synchronize
 * the context and is not a node of the graph). While the stream captures, a call whose unit is
 * not loaded yet is refused before anything changes; once the same call ran outside the
 * capture, its unit is in the table of run-time entries and the call is captured as any. */
static akx_status refuse_first_use_in_capture(const akx_context *ctx, const akx__entry_key *key) {
  if (akx__entry_find(key)) return AKX_SUCCESS;
  int capturing = 0;
  AKX_TRY(ctx->be->is_capturing(ctx, &capturing));
  if (!capturing) return AKX_SUCCESS;
  return akx__fail(AKX_ERROR_UNSUPPORTED,
                   "the context's stream is capturing a CUDA graph and this call's kernels are "
                   "compiled at run time and not loaded yet (a %s unit: a user op, a combination "
                   "outside the prebuilt set, or AKX_KERNELS=runtime): compiling and loading them "
                   "cannot be captured; make the same call once before capturing",
                   akx__family_name(key->family));
}

akx_status akx__kernels_prepare(const akx_context *ctx, int family, akx_dtype src, akx_dtype dst, akx_dtype acc,
                                int32_t op, akx_map map) {
  const akx_backend b = ctx->be->kind;
  /* The key of the unit a launch will take: the CUDA backend's per architecture, the sim's 0. */
  const int32_t arch = b == AKX_BACKEND_CUDA ? akx__context_arch(ctx) : 0;
  if (op >= AKX_USER_OP_FIRST) {
    akx__user_op *u = akx__user_op_find(ctx, (akx_op)op);
    if (!u) return akx__fail(AKX_ERROR_INTERNAL, "a user op's call lost its op");
    const akx__entry_key key = akx__builtin_entry_key(arch, family, src, dst, AKX_DTYPE_AUTO, op);
    AKX_TRY(refuse_first_use_in_capture(ctx, &key));
    if (b == AKX_BACKEND_CUDA) return akx__cuda_runtime_prepare(ctx, family, src, dst, AKX_DTYPE_AUTO, op);
    void *entry = NULL;
    return akx__user_op_entry(ctx, u, family, src, dst, &entry);
  }
  const int in_set = akx__builtin_prebuilt(b, family, src, dst, acc, (akx_op)op, map);
  if (b == AKX_BACKEND_CUDA) {
    if (akx__prebuilt_serves(ctx, in_set)) return AKX_SUCCESS;
    const akx__entry_key key = akx__builtin_entry_key(arch, family, src, dst, acc, op);
    AKX_TRY(refuse_first_use_in_capture(ctx, &key));
    return akx__cuda_runtime_prepare(ctx, family, src, dst, acc, op);
  }
  /* The sim's prebuilt combinations under AKX_KERNELS=runtime or AKX_PREBUILT=OFF come from
   * its per-family modules (src/jit/sim_module.h), compiled at the launch. */
  if (in_set) return AKX_SUCCESS;
  const akx__entry_key key = akx__builtin_entry_key(0, family, src, dst, acc, op);
  AKX_TRY(refuse_first_use_in_capture(ctx, &key));
  void *entry = NULL;
  return akx__builtin_entry(ctx, family, src, dst, acc, (akx_op)op, &entry);
}
