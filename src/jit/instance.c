/* The translation unit of one kernel family for one combination (src/jit/instance.h).
 *
 * A family is its header and its kernels' template-ids, written with placeholders for the
 * combination's C++ names: {S} the source type, {D} the dst type, {A} the accumulator type,
 * {O} the op's functor. The names come from the lists every dispatch is generated from
 * (kernels/akx/dtype_list.h, kernels/akx/op_list.h), never from a second list here.
 *
 * Each kernel is instantiated as
 *   template AKX_GLOBAL decltype(akx::k<...>) akx::k<...>;
 * an explicit instantiation whose declarator takes its function type from the template-id
 * itself: the parameter lists stay written once, beside the kernels, and a kernel's new
 * parameter needs nothing here. (The template-id must not start with "::": after decltype(...)
 * it would continue a nested name.) nvcc, NVRTC and the host compiler take it alike. */
#include "instance.h"
#include "text.h"

#include <stdlib.h>
#include <string.h>

#include "akx/dtype_list.h"
#include "akx/op_list.h"
#include "internal.h"

/* ---- the families (src/core/families.h) --------------------------------------------------- */
typedef struct {
  const char *name;   /* akx__family_name */
  const char *header; /* the #include */
  const char *launcher; /* its host launcher's template-id */
  int n_kernels;
  const char *const *keys;    /* each kernel's key */
  const char *const *kernels; /* template-ids with placeholders */
  const int *user_only;       /* kernels only a user op's unit holds: after all the others */
} family_spec;

#define AKX_KEY_(key, id, user) key,
#define AKX_ID_(key, id, user) id,
#define AKX_USER_(key, id, user) user,
#define AKX_FAMILY_KERNELS_(ID, name, Plan, header, file, launcher, kind, prebuilt, finish)                          \
  static const char *const name##_keys[] = {AKX_##ID##_KERNELS(AKX_KEY_)};                \
  static const char *const name##_kernels[] = {AKX_##ID##_KERNELS(AKX_ID_)};               \
  static const int name##_user_only[] = {AKX_##ID##_KERNELS(AKX_USER_)};
AKX_FAMILY_LIST(AKX_FAMILY_KERNELS_)
#undef AKX_FAMILY_KERNELS_
#undef AKX_USER_
#undef AKX_ID_
#undef AKX_KEY_

#define AKX_FAMILY_SPEC_(ID, name, Plan, header, file, launcher, kind, prebuilt, finish)                                     \
  [AKX__FAMILY_##ID] = {#name, header, launcher, (int)(sizeof name##_kernels / sizeof name##_kernels[0]), \
                        name##_keys, name##_kernels, name##_user_only},
static const family_spec families[AKX__FAMILY_COUNT] = {AKX_FAMILY_LIST(AKX_FAMILY_SPEC_)};
#undef AKX_FAMILY_SPEC_

const char *akx__family_name(int family) {
  return family >= 0 && family < AKX__FAMILY_COUNT ? families[family].name : "invalid";
}

/* The kernels a built-in op's unit holds: those before the first user_only one. */
static int builtin_kernels(const family_spec *f) {
  int n = 0;
  while (n < f->n_kernels && !f->user_only[n]) ++n;
  return n;
}

/* ---- C++ names, from the one lists ------------------------------------------------------------ */
/* "int8_t", "::akx::f16", ...: the type column of AKX_DTYPE_LIST as written. */
const char *akx__dtype_cxx_name(akx_dtype t) {
  switch ((int)t) {
#define AKX_X_(D, T, N, S) case D: return #T;
    AKX_DTYPE_LIST(AKX_X_)
#undef AKX_X_
    case AKX_DTYPE_AUTO: break;
  }
  return NULL;
}
/* "::akx::op_add", ...: the functor column of AKX_OP_LIST. */
const char *akx__op_cxx_name(akx_op op) {
  switch ((int)op) {
#define AKX_X_(E, F, N) case E: return #F;
    AKX_OP_LIST(AKX_X_)
#undef AKX_X_
  }
  return NULL;
}


/* The combination's C++ names for the placeholders; NULL where the family has none. */
typedef struct {
  const char *src, *dst, *acc, *op;
} cxx_names;

/* pattern with its placeholders replaced; AKX_ERROR_INTERNAL for a placeholder the family
 * does not fill (a mistake in the tables above). */
static akx_status expand(akx__text *t, const char *pattern, const cxx_names *names) {
  for (const char *c = pattern; *c;) {
    const char *open = strchr(c, '{');
    if (!open) {
      akx__text_put(t, c);
      break;
    }
    akx__text_put_n(t, c, (size_t)(open - c));
    const char *name = NULL;
    if (open[1] && open[2] == '}') {
      switch (open[1]) {
        case 'S': name = names->src; break;
        case 'D': name = names->dst; break;
        case 'A': name = names->acc; break;
        case 'O': name = names->op; break;
        default: break;
      }
    }
    if (!name)
      return akx__fail(AKX_ERROR_INTERNAL, "src/jit/instance.c: the template-id \"%s\" has a "
                       "placeholder its family does not fill", pattern);
    akx__text_put(t, name);
    c = open + 3;
  }
  return AKX_SUCCESS;
}

/* ---- validation ------------------------------------------------------------------------------- */
static int is_dtype(int32_t t) { return t >= 0 && t < AKX_DTYPE_COUNT; }

/* The reductions' accumulator: AUTO resolved for the identity map, an explicit one checked
 * against every map (the kernels take the map at run time). */
static akx_status resolve_reduce_acc(const akx__instance_key *k, const char *family, akx_dtype *acc) {
  const akx_dtype src = (akx_dtype)k->src;
  const akx_op op = (akx_op)k->op;
  if (k->acc == AKX_DTYPE_AUTO) return akx__resolve_acc(src, AKX_MAP_IDENTITY, op, AKX_DTYPE_AUTO, acc);
  const akx_dtype a = (akx_dtype)k->acc;
  if (!akx__op_allowed(a, op))
    return akx__fail(AKX_ERROR_UNSUPPORTED, "no %s kernel for source %s, accumulator %s, op %s: "
                     "op %s is not defined on %s accumulators", family, akx_dtype_name(src),
                     akx_dtype_name(a), akx__op_name(op), akx__op_name(op), akx_dtype_name(a));
  if (!akx__reduce_supported_any_map(src, a, op))
    return akx__fail(AKX_ERROR_UNSUPPORTED, "no %s kernel for source %s, accumulator %s, op %s: "
                     "under no map is %s an accumulator of %s (AUTO, the map's result type, or "
                     "a wide type of its kind: include/akx.h, akx_reduce_opts)", family,
                     akx_dtype_name(src), akx_dtype_name(a), akx__op_name(op), akx_dtype_name(a),
                     akx_dtype_name(src));
  *acc = a;
  return AKX_SUCCESS;
}

/* A scan's accumulator (any the reductions take for the identity map) and dst (AUTO: the
 * accumulator's; else any dtype). */
static akx_status resolve_scan(const akx__instance_key *k, akx_dtype *acc, akx_dtype *dst) {
  const akx_dtype src = (akx_dtype)k->src;
  const akx_op op = (akx_op)k->op;
  akx_dtype a = (akx_dtype)k->acc;
  if (k->acc == AKX_DTYPE_AUTO) AKX_TRY(akx__resolve_acc(src, AKX_MAP_IDENTITY, op, AKX_DTYPE_AUTO, &a));
  if (!akx__op_allowed(a, op))
    return akx__fail(AKX_ERROR_UNSUPPORTED, "no scan kernel for source %s, accumulator %s, op %s: "
                     "op %s is not defined on %s accumulators", akx_dtype_name(src),
                     akx_dtype_name(a), akx__op_name(op), akx__op_name(op), akx_dtype_name(a));
  if (!akx__scan_supported(src, a, op))
    return akx__fail(AKX_ERROR_UNSUPPORTED, "no scan kernel for source %s, accumulator %s, op %s: "
                     "%s is not an accumulator of %s (AUTO, %s itself, or a wide type of its kind: "
                     "include/akx.h, akx_reduce_opts)", akx_dtype_name(src), akx_dtype_name(a),
                     akx__op_name(op), akx_dtype_name(a), akx_dtype_name(src), akx_dtype_name(src));
  /* Any dst: the store converts once. */
  akx_dtype d = k->dst == AKX_DTYPE_AUTO ? a : (akx_dtype)k->dst;
  *acc = a;
  *dst = d;
  return AKX_SUCCESS;
}

static akx_status check_key(const akx__instance_key *k, akx_dtype *acc, akx_dtype *dst) {
  if (k->family < 0 || k->family >= AKX__FAMILY_COUNT)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "kernel family %d is not an akx__family "
                     "(0..%d)", (int)k->family, AKX__FAMILY_COUNT - 1);
  const char *family = families[k->family].name;
  if (!is_dtype(k->src))
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "the %s kernels' source dtype %d is not an "
                     "akx_dtype", family, (int)k->src);
  if (k->acc != AKX_DTYPE_AUTO && !is_dtype(k->acc))
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "the %s kernels' accumulator %d is neither an "
                     "akx_dtype nor AKX_DTYPE_AUTO", family, (int)k->acc);
  if (k->dst != AKX_DTYPE_AUTO && !is_dtype(k->dst))
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "the %s kernels' dst dtype %d is neither an "
                     "akx_dtype nor AKX_DTYPE_AUTO", family, (int)k->dst);
  *acc = AKX_DTYPE_AUTO;
  *dst = AKX_DTYPE_AUTO;
  /* What the family's kind does not key must be AUTO (akx__kind_of), then its dtype rules. */
  const akx__kind_row *kind = akx__kind_of(k->family);
  if (!(kind->keys & AKX__FIELD_DST) && k->dst != AKX_DTYPE_AUTO)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "the %s kernels are compiled for no dst dtype (%s): the "
                     "key's dst must be AKX_DTYPE_AUTO, not %s", family,
                     akx__family_stores_finish(k->family) ? "they take dst's dtype at run time, akx__finish"
                                                          : "they write one dtype of their own",
                     akx_dtype_name((akx_dtype)k->dst));
  if (!(kind->keys & AKX__FIELD_ACC) && k->acc != AKX_DTYPE_AUTO)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "the %s kernels have no accumulator (a %s): the key's acc "
                     "must be AKX_DTYPE_AUTO, not %s", family, kind->noun, akx_dtype_name((akx_dtype)k->acc));
  if ((kind->keys & AKX__FIELD_OP) && (k->op < 0 || k->op > AKX_OP_XOR))
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "the %s kernels' op %d is not an akx_op with a dtype "
                     "accumulator (ARGMIN, ARGMAX and user ops: src/jit/user_op.h)", family, (int)k->op);
  switch (kind->rules) {
    case AKX__RULES_REDUCE: return resolve_reduce_acc(k, family, acc);
    case AKX__RULES_SCAN: return resolve_scan(k, acc, dst);
    case AKX__RULES_SOURCE_ONLY: return AKX_SUCCESS;
  }
  return akx__fail(AKX_ERROR_INTERNAL, "src/core/kinds.h: the %s kernels' kind has no dtype rules", family);
}

/* ---- the translation unit --------------------------------------------------------------------- */
void akx__instance_free(akx__instance *inst) {
  if (!inst) return;
  free(inst->source);
  if (inst->name_expressions)
    for (int i = 0; i < inst->n_kernels; i++) free(inst->name_expressions[i]);
  free(inst->name_expressions);
  free(inst->launcher);
  memset(inst, 0, sizeof *inst);
}

static akx_status generate(const akx__instance_key *key, const akx__instance_op *uop, akx__instance *out);

akx_status akx__instance_generate(const akx__instance_key *key, akx__instance *out) {
  return generate(key, NULL, out);
}

akx_status akx__instance_generate_op(const akx__instance_key *key, const akx__instance_op *op,
                                     akx__instance *out) {
  if (!op || !op->prelude || !op->op_cxx || !op->acc_cxx) {
    if (out) memset(out, 0, sizeof *out);
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "akx__instance_generate_op: op or one of its texts is NULL");
  }
  return generate(key, op, out);
}

/* A user op's key: a family that takes an op, a source dtype, and a dst that is a dtype or
 * AKX_DTYPE_AUTO (the accumulator itself, for the reductions). */
static akx_status check_op_key(const akx__instance_key *k, akx_dtype *acc, akx_dtype *dst) {
  const akx__kind_row *kind = akx__kind_of(k->family);
  if (kind->user_op == AKX__USER_OP_NONE)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "kernel family %d takes no user op", (int)k->family);
  if (!is_dtype(k->src))
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "the %s kernels' source dtype %d is not an akx_dtype",
                     families[k->family].name, (int)k->src);
  if (k->dst != AKX_DTYPE_AUTO && !is_dtype(k->dst))
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "the %s kernels' dst dtype %d is not an akx_dtype",
                     families[k->family].name, (int)k->dst);
  if (kind->user_op == AKX__USER_OP_DST && k->dst == AKX_DTYPE_AUTO)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "a user op's %s needs a dst dtype", kind->noun);
  *acc = AKX_DTYPE_AUTO;
  *dst = (akx_dtype)k->dst;
  return AKX_SUCCESS;
}

static akx_status generate(const akx__instance_key *key, const akx__instance_op *uop, akx__instance *out) {
  if (!out) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "akx__instance_generate: out is NULL");
  memset(out, 0, sizeof *out);
  if (!key) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "akx__instance_generate: key is NULL");
  akx_dtype acc, dst;
  AKX_TRY(uop ? check_op_key(key, &acc, &dst) : check_key(key, &acc, &dst));
  const family_spec *f = &families[key->family];
  cxx_names names = {
      akx__dtype_cxx_name((akx_dtype)key->src), dst == AKX_DTYPE_AUTO ? NULL : akx__dtype_cxx_name(dst),
      acc == AKX_DTYPE_AUTO ? NULL : akx__dtype_cxx_name(acc),
      akx__kind_of(key->family)->fills & AKX__FIELD_OP ? akx__op_cxx_name((akx_op)key->op) : NULL};
  if (uop) {
    names.acc = uop->acc_cxx;
    names.op = uop->op_cxx;
  }

  akx__instance r = {0};
  r.acc = acc;
  r.dst = dst;
  r.n_kernels = uop ? f->n_kernels : builtin_kernels(f);
  r.kernel_keys = f->keys;
  r.name_expressions = calloc((size_t)r.n_kernels, sizeof *r.name_expressions);
  akx__text src = {0};
  akx_status s = r.name_expressions ? AKX_SUCCESS : AKX_ERROR_OUT_OF_MEMORY;

  /* The opening comment names the combination by the public names (akx_dtype_name): the text
   * is still a function of the key alone. */
  akx__text_put(&src, "// The ");
  akx__text_put(&src, f->name);
  akx__text_put(&src, " kernels of source ");
  akx__text_put(&src, akx_dtype_name((akx_dtype)key->src));
  if (dst != AKX_DTYPE_AUTO) {
    akx__text_put(&src, ", dst ");
    akx__text_put(&src, akx_dtype_name(dst));
  }
  if (acc != AKX_DTYPE_AUTO) {
    akx__text_put(&src, ", accumulator ");
    akx__text_put(&src, akx_dtype_name(acc));
  }
  if (names.op) {
    akx__text_put(&src, ", op ");
    akx__text_put(&src, uop ? "(a user op)" : akx__op_name((akx_op)key->op));
  }
  akx__text_put(&src, ": generated by libakx (src/jit/instance.c).\n#include \"");
  akx__text_put(&src, f->header);
  akx__text_put(&src, "\"\n");
  if (uop) akx__text_put(&src, uop->prelude);
  akx__text_put(&src, "\n");
  for (int i = 0; s == AKX_SUCCESS && i < r.n_kernels; i++) {
    akx__text id = {0};
    s = expand(&id, f->kernels[i], &names);
    if (s == AKX_SUCCESS && id.failed) s = AKX_ERROR_OUT_OF_MEMORY;
    if (s == AKX_SUCCESS) {
      akx__text_put(&src, "template AKX_GLOBAL decltype(");
      akx__text_put(&src, id.p);
      akx__text_put(&src, ") ");
      akx__text_put(&src, id.p);
      akx__text_put(&src, ";\n");
      r.name_expressions[i] = id.p;
    } else {
      free(id.p);
    }
  }
  if (s == AKX_SUCCESS) {
    akx__text launcher = {0};
    s = expand(&launcher, f->launcher, &names);
    if (s == AKX_SUCCESS && launcher.failed) s = AKX_ERROR_OUT_OF_MEMORY;
    r.launcher = launcher.p;
  }
  if (s == AKX_SUCCESS && src.failed) s = AKX_ERROR_OUT_OF_MEMORY;
  r.source = src.p;
  if (s != AKX_SUCCESS) {
    akx__instance_free(&r);
    if (s == AKX_ERROR_OUT_OF_MEMORY)
      return akx__fail(s, "no memory for the %s kernels' translation unit", f->name);
    return s;
  }
  *out = r;
  return AKX_SUCCESS;
}
