/* Collective validation: each rank states its call in a fixed record (its own checks' status
 * and sentence included), one allgather gives every rank all of them, and every rank reaches
 * the same verdict from the same bytes, before any kernel runs. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

int64_t akx__dist_count(const akx_array *a) {
  int64_t n = 1;
  for (int32_t d = 0; d < a->ndim && d < AKX_MAX_DIMS; ++d) n *= a->shape[d] > 0 ? a->shape[d] : 0;
  return n;
}

static void record_init(akx__dist_record *r, int family, const akx_array *dst,
                           const akx_array *src, int32_t split_dim, akx_map map, akx_op op,
                           int32_t dim) {
  memset(r, 0, sizeof *r);
  r->family = family;
  r->op = (int32_t)op;
  r->map = (int32_t)map;
  r->split_dim = split_dim;
  r->dim = dim;
  r->acc = AKX_DTYPE_AUTO;
  r->src_dtype = r->dst_dtype = AKX_DTYPE_AUTO;
  if (src && src->ndim >= 0 && src->ndim <= AKX_MAX_DIMS) {
    r->src_dtype = src->dtype;
    r->ndim = src->ndim;
    memcpy(r->src_shape, src->shape, sizeof r->src_shape);
    r->src_count = akx__dist_count(src);
  }
  if (dst && dst->ndim >= 0 && dst->ndim <= AKX_MAX_DIMS) {
    r->dst_dtype = dst->dtype;
    r->dst_ndim = dst->ndim;
    memcpy(r->dst_shape, dst->shape, sizeof r->dst_shape);
  }
}

akx_status akx__dist_record_fail(akx__dist_record *r, akx_status s, const char *fmt, ...) {
  if (r->status != AKX_SUCCESS) return (akx_status)r->status; /* the first fault is the one named */
  r->status = (int32_t)s;
  if (fmt) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->sentence, sizeof r->sentence, fmt, ap);
    va_end(ap);
  } else {
    snprintf(r->sentence, sizeof r->sentence, "%s", akx_last_error());
  }
  return s;
}

static const char *family_name(int f) {
  static const char *names[] = {"akx_mapreduce_all", "akx_reduce_dims_all", "akx_scan_all",
                                "akx_findall_all"};
  return f >= 0 && f < 4 ? names[f] : "libakx_dist";
}

static void check_common(akx__dist_record *r, const akx_array *src, int32_t split_dim, akx_op op,
                         int allow_all, int family) {
  if (!src) {
    akx__dist_record_fail(r, AKX_ERROR_INVALID_ARGUMENT, "src is NULL");
    return;
  }
  if (src->ndim < 0 || src->ndim > AKX_MAX_DIMS) {
    akx__dist_record_fail(r, AKX_ERROR_INVALID_ARGUMENT, "src->ndim is %d, expected 0..%d",
                          (int)src->ndim, AKX_MAX_DIMS);
    return;
  }
  if (split_dim == AKX_DIM_ALL ? !allow_all : (split_dim < 0 || split_dim >= src->ndim))
    akx__dist_record_fail(r, AKX_ERROR_INVALID_ARGUMENT, "split_dim is %d, expected 0..%d%s",
                          (int)split_dim, (int)src->ndim - 1, allow_all ? " or AKX_DIM_ALL" : "");
  /* The pieces are combined by libakx's own kernels (akx_scan_piece, akx_mapreduce_piece,
   * akx_reduce_dims_piece), whatever the accumulator; ARGMIN and ARGMAX have no scan. */
  const int user = (int32_t)op >= AKX_USER_OP_FIRST;
  const int own = akx_op_has_own_accumulator(op);
  if (user || (own && family != AKX__DIST_SCAN)) return;
  if ((int32_t)op < AKX_OP_ADD || (int32_t)op > AKX_OP_XOR)
    akx__dist_record_fail(r, own ? AKX_ERROR_UNSUPPORTED : AKX_ERROR_INVALID_ARGUMENT,
                          "op is %d: %s combines the built-in ops ADD..XOR and user ops%s", (int)op,
                          family_name(family), family == AKX__DIST_SCAN ? " (ARGMIN and ARGMAX have no scan)"
                                                                      : " and ARGMIN/ARGMAX");
}

void akx__dist_begin(akx__dist_record *r, int family, const akx_array *dst, const akx_array *src,
                     int32_t split_dim, akx_map map, akx_op op, int32_t dim, int allow_all,
                     int needs_dst) {
  record_init(r, family, dst, src, split_dim, map, op, dim);
  check_common(r, src, split_dim, op, allow_all, family);
  if (r->status != AKX_SUCCESS) return;
  if (needs_dst && !dst) akx__dist_record_fail(r, AKX_ERROR_INVALID_ARGUMENT, "dst is NULL");
  else if (needs_dst && dst->data == NULL && akx__dist_count(dst) > 0)
    akx__dist_record_fail(r, AKX_ERROR_INVALID_ARGUMENT, "dst->data is NULL");
  if (src->data == NULL && r->src_count > 0)
    akx__dist_record_fail(r, AKX_ERROR_INVALID_ARGUMENT, "src->data is NULL");
}

int akx__dist_findall_ref(const akx__dist_record *all, int size) {
  /* The longest shard along split_dim: a rank with extent 1 there has a stride that ties with
   * others' (a Fortran-order 1 x 5 x 6 has strides 1, 1, 5) and orders nothing by it. */
  int ref = -1;
  for (int q = 0; q < size; ++q) {
    if (all[q].src_count == 0) continue;
    const int32_t s = all[q].split_dim;
    if (ref < 0 || (s >= 0 && all[q].src_shape[s] > all[ref].src_shape[s])) ref = q;
  }
  return ref;
}

/* The dims of extent > 1 of r, in r's memory order: what findall's positions depend on (a
 * dims reduction's: its reduced dims'). */
static int order_signature(const akx__dist_record *r, int32_t *out) {
  int n = 0;
  for (int32_t k = 0; k < r->ndim; ++k) {
    const int32_t d = r->order[k];
    if (r->src_shape[d] > 1 && (r->family != AKX__DIST_REDUCE_DIMS || r->dst_shape[d] == 1)) out[n++] = d;
  }
  return n;
}

/* Why record b disagrees with the reference a (rank ra), or NULL. */
static const char *disagreement(const akx__dist_record *a, const akx__dist_record *b, int ra,
                                char *why, size_t len) {
#define FIELD(f, what)                                                                      \
  if (a->f != b->f) {                                                                       \
    snprintf(why, len, "%s is %d but rank %d's is %d", what, (int)b->f, ra, (int)a->f);     \
    return why;                                                                             \
  }
  FIELD(op, "op")
  FIELD(map, "map")
  FIELD(split_dim, "split_dim")
  FIELD(dim, "dim")
  FIELD(exclusive, "opts->exclusive")
  FIELD(fold, "opts->fold")
  FIELD(acc, "the accumulator dtype")
  FIELD(acc_bytes, "the accumulator's size in bytes")
  FIELD(positional, "whether the op reads positions (0/1)")
  if (a->src_dtype != b->src_dtype) {
    snprintf(why, len, "src->dtype is %s but rank %d's is %s", akx_dtype_name((akx_dtype)b->src_dtype),
             ra, akx_dtype_name((akx_dtype)a->src_dtype));
    return why;
  }
  if (a->dst_dtype != b->dst_dtype) {
    snprintf(why, len, "dst->dtype is %s but rank %d's is %s", akx_dtype_name((akx_dtype)b->dst_dtype),
             ra, akx_dtype_name((akx_dtype)a->dst_dtype));
    return why;
  }
  FIELD(has_init, "whether opts->init is given (0/1)")
  if (a->has_init && memcmp(a->init, b->init, sizeof a->init) != 0) {
    snprintf(why, len, "opts->init's value differs from rank %d's (init is combined once, "
             "and must be the same everywhere)", ra);
    return why;
  }
  const int all = b->split_dim == AKX_DIM_ALL;
  if (!all || b->family == AKX__DIST_SCAN) FIELD(ndim, "src->ndim")
  if (!all)
    for (int32_t d = 0; d < b->ndim; ++d)
      if (d != b->split_dim && a->src_shape[d] != b->src_shape[d]) {
        snprintf(why, len, "src->shape[%d] is %" PRId64 " but rank %d's is %" PRId64
                 " (local shapes may differ along split_dim %d only)", (int)d, b->src_shape[d], ra,
                 a->src_shape[d], (int)b->split_dim);
        return why;
      }
  if (b->family == AKX__DIST_REDUCE_DIMS)
    for (int32_t d = 0; d < b->dst_ndim; ++d)
      if (d != b->split_dim && a->dst_shape[d] != b->dst_shape[d]) {
        snprintf(why, len, "dst->shape[%d] is %" PRId64 " but rank %d's is %" PRId64, (int)d,
                 b->dst_shape[d], ra, a->dst_shape[d]);
        return why;
      }
#undef FIELD
  return NULL;
}

akx_status akx__dist_agree(akx_comm *c, akx__dist_record *mine, const akx__dist_record **all) {
  const size_t bytes = sizeof *mine;
  /* Their own buffer: the records stay valid while the call stages partials. */
  if (bytes * (size_t)c->size > c->records_bytes) {
    void *n = realloc(c->records, bytes * (size_t)c->size);
    if (!n) return akx__dist_fail(AKX_ERROR_OUT_OF_MEMORY, "libakx_dist: the agreement's records");
    c->records = n;
    c->records_bytes = bytes * (size_t)c->size;
  }
  void *h = c->records;
  akx_status s;
  c->counters.calls++;
  const double t0 = akx__dist_now();
  s = c->engine->allgather_host(c, mine, h, bytes);
  c->counters.exchange_seconds += akx__dist_now() - t0;
  if (s != AKX_SUCCESS) return s;
  const akx__dist_record *r = h;
  *all = r;
  const char *call = family_name(mine->family);
  for (int q = 0; q < c->size; ++q)
    if (r[q].status != AKX_SUCCESS)
      return akx__dist_fail((akx_status)r[q].status, "%s: rank %d: %s", call, q, r[q].sentence);
  /* The family and the reference rank: rank 0, or for findall's memory order the first rank with
   * elements (an empty rank's strides order nothing). */
  char why[320];
  for (int q = 1; q < c->size; ++q) {
    if (r[q].family != r[0].family)
      return akx__dist_fail(AKX_ERROR_INVALID_ARGUMENT, "%s: rank %d called %s while rank 0 called %s",
                            call, q, family_name(r[q].family), family_name(r[0].family));
    if (disagreement(&r[0], &r[q], 0, why, sizeof why))
      return akx__dist_fail(AKX_ERROR_INVALID_ARGUMENT, "%s: rank %d: %s", call, q, why);
  }
  /* (AKX_DIM_ALL puts whole local arrays one after the other: their orders are their own; a
   * dims reduction that keeps split_dim is local, and numbers its elements as its own.) */
  int local = mine->split_dim == AKX_DIM_ALL;
  if (mine->family == AKX__DIST_REDUCE_DIMS && !local)
    for (int q = 0; q < c->size; ++q) local |= r[q].dst_shape[mine->split_dim] != 1;
  if ((mine->family == AKX__DIST_FINDALL || mine->positional) && !local) {
    /* The global memory order is the reference rank's (akx__dist_findall_ref); every other
     * rank's dims of extent > 1 must come in the same relative order in it. */
    const int ref = akx__dist_findall_ref(r, c->size);
    int32_t sig[AKX_MAX_DIMS];
    for (int q = 0; ref >= 0 && q < c->size; ++q) {
      if (r[q].src_count == 0 || q == ref) continue;
      const int n = order_signature(&r[q], sig);
      int at = 0;
      for (int j = 0; j < n; ++j) {
        while (at < r[ref].ndim && r[ref].order[at] != sig[j]) ++at;
        if (at == r[ref].ndim)
          return akx__dist_fail(AKX_ERROR_INVALID_ARGUMENT,
                                "%s: rank %d: src's strides order its dims unlike rank %d's (dim %d "
                                "comes earlier there), so the global positions have no single "
                                "memory order", call, q, ref, (int)sig[j]);
      }
    }
  }
  return AKX_SUCCESS;
}

size_t akx__dist_resolve_acc(akx__dist_record *me, const akx_array *src, akx_map map, akx_op op,
                             akx_dtype requested, const void *init, akx_dtype *acc, void *identity) {
  if (me->status != AKX_SUCCESS) return 0;
  /* An init stands in for the neutral element this rank's call gets, so that an empty shard
   * under MIN/MAX is not refused here (the global array decides; the pointer is not read). */
  static const unsigned char placeholder[32];
  akx_reduce_opts o = akx_reduce_opts_default();
  o.acc = requested;
  o.init = placeholder;
  const akx_status s = akx_mapreduce_result_dtype(src, map, op, &o, acc);
  if (s != AKX_SUCCESS) {
    akx__dist_record_fail(me, s, NULL);
    return 0;
  }
  if (!akx__dist_identity(op, *acc, identity)) {
    akx__dist_record_fail(me, AKX_ERROR_UNSUPPORTED, "op %d has no neutral element in %s", (int)op,
                          akx_dtype_name(*acc));
    return 0;
  }
  const size_t size = akx_dtype_size(*acc);
  me->acc = *acc;
  me->acc_bytes = (int64_t)size;
  me->has_init = init != NULL;
  if (init) memcpy(me->init, init, size);
  return size;
}

size_t akx__dist_user_acc(akx__dist_record *me, akx_context *ctx, akx_op op, const void *init) {
  if (me->status != AKX_SUCCESS) return 0;
  akx_user_op_info_t info;
  const akx_status s = akx_user_op_info(ctx, op, &info);
  if (s != AKX_SUCCESS) {
    akx__dist_record_fail(me, s, NULL);
    return 0;
  }
  if (info.acc_size > sizeof me->init) {
    akx__dist_record_fail(me, AKX_ERROR_INTERNAL, "op %d's accumulator is %zu bytes, more than the "
                          "32 a user op may have", (int)op, info.acc_size);
    return 0;
  }
  me->acc_bytes = (int64_t)info.acc_size;
  me->has_init = init != NULL;
  if (init) memcpy(me->init, init, info.acc_size);
  return info.acc_size;
}

akx_reduce_opts akx__dist_local_opts(const akx_reduce_opts *given, akx_dtype acc, const void *identity) {
  akx_reduce_opts o = *given;
  o.init = identity;
  o.fold = 0;
  o.acc = acc;
  return o;
}

akx_reduce_opts akx__dist_combine_opts(const akx_reduce_opts *given, akx_dtype acc) {
  akx_reduce_opts o = akx_reduce_opts_default();
  o.init = given->init;
  o.fold = given->fold;
  o.acc = acc;
  return o;
}
