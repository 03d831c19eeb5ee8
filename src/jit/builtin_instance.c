/* Built-in combinations compiled at run time (src/jit/builtin_instance.h). */
#include "builtin_instance.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "entries.h"
#include "internal.h"
#include "sim_module.h"

/* The fields the family's kind keys (akx__kind_of), the others AKX_DTYPE_AUTO (an op: 0). An id
 * that is no family keeps every field: the instance generator refuses it by name. */
static void keyed(int family, int32_t *dst, int32_t *acc, int32_t *op) {
  const akx__kind_row *k = akx__kind_of(family);
  if (k->rules == 0) return;
  if (!(k->keys & AKX__FIELD_DST)) *dst = AKX_DTYPE_AUTO;
  if (!(k->keys & AKX__FIELD_ACC)) *acc = AKX_DTYPE_AUTO;
  if (!(k->keys & AKX__FIELD_OP)) *op = 0;
}

akx__entry_key akx__builtin_entry_key(int32_t target, int family, int32_t src, int32_t dst, int32_t acc, int32_t op) {
  akx__entry_key k = {target, family, src, dst, acc, op};
  /* A user op's unit: the op's own accumulator, and dst in either form (akx__user_op_form). */
  if (op >= AKX_USER_OP_FIRST) k.acc = AKX_DTYPE_AUTO;
  else keyed(family, &k.dst, &k.acc, &k.op);
  return k;
}

/* The entry that launches the combination: the family's host launcher (the family list's
 * launcher, kernels/akx/), after the kernels the one instance generator instantiates
 * (src/jit/instance.h). Shared by the user ops' units (src/jit/user_op.c). */
akx_status akx__unit_with_entry(int family, const akx__instance *in, const char *entry_body, char **text) {
  static const char *const plans[AKX__FAMILY_COUNT] = {
#define AKX_PLAN_(ID, name, Plan, header, file, launcher, kind, prebuilt, finish) #Plan,
      AKX_FAMILY_LIST(AKX_PLAN_)
#undef AKX_PLAN_
  };
  if (family < 0 || family >= AKX__FAMILY_COUNT || !in->launcher)
    return akx__fail(AKX_ERROR_INTERNAL, "a run-time entry of kernel family %d", family);
  const char *head = "AKX_MODULE_EXPORT akx_status akx_unit_entry(const void *plan, void *stream) {\n  const ";
  const size_t len = strlen(in->source) + strlen(head) + strlen(plans[family]) * 2 + strlen(entry_body) +
                     strlen(in->launcher) + 128;
  char *t = malloc(len);
  if (!t) return akx__fail(AKX_ERROR_OUT_OF_MEMORY, "out of host memory");
  snprintf(t, len, "%s%s%s *p = static_cast<const %s *>(plan);\n%s  return ::%s(*p, stream);\n}\n", in->source,
           head, plans[family], plans[family], entry_body, in->launcher);
  *text = t;
  return AKX_SUCCESS;
}

akx__instance_key akx__builtin_instance_key(int family, int32_t src, int32_t dst, int32_t acc, int32_t op) {
  akx__instance_key key = {family, src, dst, acc, op};
  keyed(family, &key.dst, &key.acc, &key.op);
  return key;
}

akx_status akx__builtin_unit_text(int family, akx_dtype src, akx_dtype dst, akx_dtype acc, akx_op op, char **text) {
  const akx__instance_key key = akx__builtin_instance_key(family, src, dst, acc, op);
  akx__instance in;
  AKX_TRY(akx__instance_generate(&key, &in));
  const akx_status s = akx__unit_with_entry(family, &in, "", text);
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
           akx_dtype_name(acc), akx__op_name(op), akx__kind_of(family)->keys & AKX__FIELD_DST ? akx_dtype_name(dst) : "any");
  void *dl = NULL;
  const akx_status s = akx__sim_module_open(ctx->be->module_runtime(), name, text, NULL, &dl);
  free(text);
  AKX_TRY(s);
  void *e = NULL;
  AKX_TRY(akx__sim_module_symbol(dl, name, "akx_unit_entry", &e));
  *entry = akx__entry_put(&key, e);
  return AKX_SUCCESS;
}
