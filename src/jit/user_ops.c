/* User operators on a context (include/akx.h, akx_user_op_create) and the library's ARGMIN and
 * ARGMAX, which are user ops the library writes, one per source dtype, created on a context at
 * their first use (src/jit/user_op.h). */
#include <ctype.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "jit/cache.h"
#include "jit/compile_log.h"
#include "jit/user_op.h"

/* Op values are unique in the process, so a value from another context is told apart. */
static atomic_int next_op = AKX_USER_OP_FIRST;

static _Thread_local char *failed_log;

void akx__user_op_log_set(const char *log) {
  free(failed_log);
  failed_log = log && *log ? strdup(log) : NULL;
}

const char *akx_last_compile_log(void) { return failed_log ? failed_log : ""; }

void akx_kernel_cache_counters(akx_kernel_cache_counters_t *out) {
  if (!out) return;
  akx__jit_counters c;
  akx__jit_cache_counters(&c);
  out->compiles = c.compiles;
  out->memory_hits = c.memory_hits;
  out->disk_hits = c.disk_hits;
}

/* ---- descriptors -------------------------------------------------------------------------- */
static int is_identifier(const char *s) {
  if (!s || !(isalpha((unsigned char)*s) || *s == '_')) return 0;
  for (; *s; ++s)
    if (!(isalnum((unsigned char)*s) || *s == '_')) return 0;
  return 1;
}

/* A type's spelling: names, ::, <>, commas, spaces and digits; nothing that ends a declaration. */
static int is_type_text(const char *s) {
  if (!s || !*s) return 0;
  for (; *s; ++s)
    if (!(isalnum((unsigned char)*s) || strchr("_:<>, *&", *s))) return 0;
  return 1;
}

static akx_status check_desc(const akx_user_op_desc *d) {
  if (!d) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "desc is NULL");
  if (!d->source) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "desc->source is NULL");
  if (!d->acc_type) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "desc->acc_type is NULL");
  if (!is_type_text(d->acc_type))
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "desc->acc_type is \"%.64s\": a C++ type name is expected (letters, digits, _, ::, <>, "
                     "commas)", d->acc_type);
  if (!d->combine) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "desc->combine is NULL");
  const char *const names[4] = {d->combine, d->identity, d->map, d->store};
  const char *const fields[4] = {"combine", "identity", "map", "store"};
  for (int k = 0; k < 4; ++k)
    if (names[k] && !is_identifier(names[k]))
      return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                       "desc->%s is \"%.64s\": the name of a function in desc->source is expected (a C++ "
                       "identifier)", fields[k], names[k]);
  return AKX_SUCCESS;
}

static void free_op(akx__user_op *op) {
  if (!op) return;
  free((char *)op->desc.source);
  free((char *)op->desc.acc_type);
  free((char *)op->desc.combine);
  free((char *)op->desc.identity);
  free((char *)op->desc.map);
  free((char *)op->desc.store);
  free(op);
}

static char *dup_or_null(const char *s, int *oom) {
  if (!s) return NULL;
  char *c = strdup(s);
  if (!c) *oom = 1;
  return c;
}

static akx_status new_op(const akx_user_op_desc *d, akx__user_op **out) {
  akx__user_op *op = calloc(1, sizeof *op);
  if (!op) return akx__fail(AKX_ERROR_OUT_OF_MEMORY, "out of host memory");
  int oom = 0;
  op->desc.source = dup_or_null(d->source, &oom);
  op->desc.acc_type = dup_or_null(d->acc_type, &oom);
  op->desc.combine = dup_or_null(d->combine, &oom);
  op->desc.identity = dup_or_null(d->identity, &oom);
  op->desc.map = dup_or_null(d->map, &oom);
  op->desc.store = dup_or_null(d->store, &oom);
  op->arg_of = -1;
  op->arg_src = -1;
  if (oom) {
    free_op(op);
    return akx__fail(AKX_ERROR_OUT_OF_MEMORY, "out of host memory");
  }
  *out = op;
  return AKX_SUCCESS;
}

static akx_status add_op(akx_context *ctx, akx__user_op *op) {
  if (ctx->n_user_ops == ctx->cap_user_ops) {
    const size_t cap = ctx->cap_user_ops ? 2 * ctx->cap_user_ops : 8;
    akx__user_op **v = realloc(ctx->user_ops, cap * sizeof *v);
    if (!v) return akx__fail(AKX_ERROR_OUT_OF_MEMORY, "out of host memory");
    ctx->user_ops = v;
    ctx->cap_user_ops = cap;
  }
  op->id = (akx_op)atomic_fetch_add(&next_op, 1);
  ctx->user_ops[ctx->n_user_ops++] = op;
  return AKX_SUCCESS;
}

akx__user_op *akx__user_op_find(const akx_context *ctx, akx_op op) {
  for (size_t k = 0; k < ctx->n_user_ops; ++k)
    if (ctx->user_ops[k]->id == op) return ctx->user_ops[k];
  return NULL;
}

void akx__user_ops_destroy(akx_context *ctx) {
  for (size_t k = 0; k < ctx->n_user_ops; ++k) free_op(ctx->user_ops[k]);
  free(ctx->user_ops);
  ctx->user_ops = NULL;
  ctx->n_user_ops = ctx->cap_user_ops = 0;
}

/* ---- the public entry points ----------------------------------------------------------------- */
static akx_status create_locked(akx_context *ctx, const akx_user_op_desc *desc, akx_op *out) {
  AKX_TRY(akx__check_context(ctx));
  AKX_TRY(check_desc(desc));
  if (!out) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "op is NULL");
  akx__user_op *op = NULL;
  AKX_TRY(new_op(desc, &op));
  akx__user_op_log_set(NULL);
  akx_status s = akx__user_op_compile(ctx, op);
  if (s != AKX_SUCCESS) akx__user_op_log_set(akx__compile_log_get());
  if (s == AKX_SUCCESS) s = add_op(ctx, op);
  if (s != AKX_SUCCESS) {
    free_op(op);
    return s;
  }
  *out = op->id;
  return AKX_SUCCESS;
}

akx_status akx_user_op_create(akx_context *ctx, const akx_user_op_desc *desc, akx_op *op) {
  return AKX_LOCKED(ctx, create_locked(ctx, desc, op));
}

static akx_status destroy_locked(akx_context *ctx, akx_op op) {
  AKX_TRY(akx__check_context(ctx));
  for (size_t k = 0; k < ctx->n_user_ops; ++k) {
    akx__user_op *u = ctx->user_ops[k];
    if (u->id != op || u->arg_of >= 0) continue;
    free_op(u);
    memmove(ctx->user_ops + k, ctx->user_ops + k + 1, (ctx->n_user_ops - k - 1) * sizeof *ctx->user_ops);
    --ctx->n_user_ops;
    return AKX_SUCCESS;
  }
  return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "op is %d, which is not a live user op of this context", (int)op);
}

akx_status akx_user_op_destroy(akx_context *ctx, akx_op op) { return AKX_LOCKED(ctx, destroy_locked(ctx, op)); }

static akx_status info_locked(const akx_context *ctx, akx_op op, akx_user_op_info_t *info) {
  AKX_TRY(akx__check_context(ctx));
  if (!info) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "info is NULL");
  if (op == AKX_OP_ARGMIN || op == AKX_OP_ARGMAX) {
    info->acc_size = 16;
    info->acc_align = 8;
    info->has_identity = 1;
    return AKX_SUCCESS;
  }
  const akx__user_op *u = (int)op >= AKX_USER_OP_FIRST ? akx__user_op_find(ctx, op) : NULL;
  if (!u || u->arg_of >= 0)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "op is %d, which is neither a live user op of this context "
                     "nor AKX_OP_ARGMIN/AKX_OP_ARGMAX", (int)op);
  *info = u->info;
  return AKX_SUCCESS;
}

akx_status akx_user_op_info(const akx_context *ctx, akx_op op, akx_user_op_info_t *info) {
  return AKX_LOCKED(ctx, info_locked(ctx, op, info));
}

/* ---- ARGMIN and ARGMAX ------------------------------------------------------------------------ */
/* A source dtype's C++ type as a user's source names it (kernels/akx/user_op.cuh). */
static const char *user_type_name(akx_dtype t) {
  switch (t) {
    case AKX_BOOL: return "bool";
    case AKX_INT8: return "int8_t";
    case AKX_UINT8: return "uint8_t";
    case AKX_INT16: return "int16_t";
    case AKX_UINT16: return "uint16_t";
    case AKX_INT32: return "int32_t";
    case AKX_UINT32: return "uint32_t";
    case AKX_INT64: return "int64_t";
    case AKX_UINT64: return "uint64_t";
    case AKX_FLOAT16: return "float16";
    case AKX_BFLOAT16: return "bfloat16";
    case AKX_FLOAT32: return "float";
    case AKX_FLOAT64: return "double";
    default: return NULL;
  }
}

/* ARGMIN/ARGMAX as a user op's functions (the interface of akx_user_op_desc): names for the
 * members of the library's functor, kernels/akx/ops.cuh's akx::arg_op, which holds the rule. */
static akx_status arg_source(akx_op which, akx_dtype src, char *text, size_t len) {
  char op[96];
  snprintf(op, sizeof op, "::akx::arg_op<%s, %s>", user_type_name(src), which == AKX_OP_ARGMAX ? "true" : "false");
  const int n = snprintf(text, len,
                         "using arg = %s::acc;\n"
                         "AKX_HD arg pick(const arg &a, const arg &b) { return %s::combine(a, b); }\n"
                         "AKX_HD arg worst() { return %s::identity(); }\n"
                         "template <class S> AKX_HD arg at(const S &x, int64_t i) { return %s::at(x, i); }\n"
                         "template <class D> AKX_HD D position_or_value(const arg &a) { return %s::store<D>(a); }\n",
                         op, op, op, op, op);
  if (n < 0 || (size_t)n >= len) return akx__fail(AKX_ERROR_INTERNAL, "the %s source does not fit", akx__op_name(which));
  return AKX_SUCCESS;
}

static akx_status arg_op(akx_context *ctx, akx_op which, akx_dtype src, akx__user_op **out) {
  for (size_t k = 0; k < ctx->n_user_ops; ++k) {
    akx__user_op *u = ctx->user_ops[k];
    if (u->arg_of == (int32_t)which && u->arg_src == (int32_t)src) {
      *out = u;
      return AKX_SUCCESS;
    }
  }
  if (!user_type_name(src))
    return akx__fail(AKX_ERROR_UNSUPPORTED, "op %s is not defined on %s sources: complex numbers have no order",
                     akx__op_name(which), akx_dtype_name(src));
  char source[2048];
  AKX_TRY(arg_source(which, src, source, sizeof source));
  const akx_user_op_desc d = {source, "arg", "pick", "worst", "at", "position_or_value"};
  akx__user_op *op = NULL;
  AKX_TRY(new_op(&d, &op));
  op->arg_of = (int32_t)which;
  op->arg_src = (int32_t)src;
  akx_status s = akx__user_op_compile(ctx, op);
  if (s == AKX_SUCCESS) s = add_op(ctx, op);
  if (s != AKX_SUCCESS) {
    free_op(op);
    return s;
  }
  *out = op;
  return AKX_SUCCESS;
}

akx_status akx__user_op_resolve(akx_context *ctx, akx_op op, akx_dtype src, akx_map map,
                                int32_t requested_acc, int fold, const char *call, akx__user_op **out) {
  *out = NULL;
  const int arg = op == AKX_OP_ARGMIN || op == AKX_OP_ARGMAX;
  if (!arg && (int)op < AKX_USER_OP_FIRST) return AKX_SUCCESS;
  if (map != AKX_MAP_IDENTITY)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "%s: map is %s; op %d %s applies its own map: pass AKX_MAP_IDENTITY", call, akx__map_name(map),
                     (int)op, arg ? "(ARGMIN/ARGMAX)" : "(a user op)");
  if (requested_acc != AKX_DTYPE_AUTO)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "%s: opts->acc is %d; op %d has its own accumulator: pass AKX_DTYPE_AUTO", call,
                     (int)requested_acc, (int)op);
  akx__user_op *u = NULL;
  if (arg) {
    AKX_TRY(arg_op(ctx, op, src, &u));
  } else {
    u = akx__user_op_find(ctx, op);
    if (!u || u->arg_of >= 0)
      return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                       "%s: op is %d, which is neither an akx_op nor a live user op of this context "
                       "(akx_user_op_create)", call, (int)op);
  }
  if (fold && u->desc.store && !arg)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "%s: opts->fold with op %d, which has a store: dst's previous value cannot be read "
                     "back as its accumulator", call, (int)op);
  *out = u;
  return AKX_SUCCESS;
}

/* ---- accumulators of the planners ---------------------------------------------------------- */
size_t akx__acc_size(akx_dtype acc, const akx__user_op *u) { return u ? u->value_size : akx_dtype_size(acc); }
size_t akx__acc_align(akx_dtype acc, const akx__user_op *u) { return u ? u->value_align : akx__dtype_alignment(acc); }

void akx__acc_init(unsigned char *init, const void *value, akx_dtype acc, const akx__user_op *u) {
  if (!u) {
    memcpy(init, value, akx_dtype_size(acc));
    if (acc == AKX_BOOL) init[0] = init[0] != 0; /* any nonzero byte is true */
    return;
  }
  memset(init, 0, AKX__INIT_BYTES);
  memcpy(init, value, u->info.acc_size);
  if (!u->info.has_identity) {
    const uint32_t valid = 1;
    memcpy(init + u->valid_offset, &valid, sizeof valid);
  }
}
