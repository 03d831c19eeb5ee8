/* Built-in combinations compiled at run time (src/jit/builtin_instance.h). */
#include "builtin_instance.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "sim_module.h"

int akx__builtin_prebuilt(int family, akx_dtype src, akx_dtype dst, akx_dtype acc, akx_op op, akx_map map) {
  switch (family) {
    case AKX__FAMILY_REDUCE_WHOLE:
    case AKX__FAMILY_REDUCE_DIMS: return akx__reduce_prebuilt(src, map, acc, op);
    case AKX__FAMILY_SCAN: return akx__scan_prebuilt(src, acc, op, dst);
    default: return 1;
  }
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
  char *text = NULL;
  AKX_TRY(akx__builtin_unit_text(family, src, dst, acc, op, &text));
  char name[128];
  snprintf(name, sizeof name, "akx_%s_%s_%s_%s_%s", akx__family_name(family), akx_dtype_name(src),
           akx_dtype_name(acc), akx__op_name(op), family == AKX__FAMILY_SCAN ? akx_dtype_name(dst) : "any");
  void *dl = NULL;
  const akx_status s = akx__sim_module_open(name, text, 0, &dl);
  free(text);
  AKX_TRY(s);
  return akx__sim_module_symbol(dl, name, "akx_unit_entry", entry);
}

akx_status akx__builtin_prepare(const akx_context *ctx, int family, akx_dtype src, akx_dtype dst, akx_dtype acc,
                                akx_op op, akx_map map) {
  if (akx__builtin_prebuilt(family, src, dst, acc, op, map)) return AKX_SUCCESS;
  /* CUDA compiles the unit at the launch (src/cuda/runtime_kernels.cu). */
  if (ctx->be->kind != AKX_BACKEND_SIM) return AKX_SUCCESS;
  void *entry = NULL;
  return akx__builtin_entry(ctx, family, src, dst, acc, op, &entry);
}
