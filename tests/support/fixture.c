/* Test fixtures for libakx: see fixture.h. */
#include "fixture.h"
#include "checked_calls.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>

#define SENTINEL 0xA5u
#define GUARD 16 /* bytes past a result that must stay untouched */

akx_context *tfx_open(void) {
  akx_context *ctx = NULL;
  akx_status s = akx_context_create(&ctx, AKX_BACKEND_AUTO, 0);
  cr_assert(s == AKX_SUCCESS && ctx != NULL, "akx_context_create(AUTO) = %s: %s",
            akx_status_string(s), akx_last_error());
  return ctx;
}

void tfx_close(akx_context *ctx) { akx_context_destroy(ctx); }

int tfx_is_sim(const akx_context *ctx) { return akx_context_backend(ctx) == AKX_BACKEND_SIM; }

const char *tfx_backend_name(const akx_context *ctx) {
  return tfx_is_sim(ctx) ? "sim" : "cuda";
}

void *tfx_xmalloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  cr_assert(p != NULL, "host malloc(%zu) failed", bytes);
  return p;
}

void *tfx_alloc(akx_context *ctx, size_t bytes) {
  void *p = NULL;
  akx_status s = akx_malloc(ctx, &p, bytes);
  cr_assert(s == AKX_SUCCESS && p != NULL, "akx_malloc(%zu) = %s: %s", bytes,
            akx_status_string(s), akx_last_error());
  return p;
}

void tfx_free(akx_context *ctx, void *p) {
  if (!p) return;
  akx_status s = akx_free(ctx, p);
  cr_assert(s == AKX_SUCCESS, "akx_free = %s: %s", akx_status_string(s), akx_last_error());
}

void tfx_to_device(akx_context *ctx, void *dev, const void *host, size_t bytes) {
  if (!bytes) return;
  akx_status s = akx_memcpy(ctx, dev, host, bytes, AKX_COPY_HOST_TO_DEVICE);
  cr_assert(s == AKX_SUCCESS, "akx_memcpy H2D %zu bytes = %s: %s", bytes, akx_status_string(s),
            akx_last_error());
}

void tfx_to_host(akx_context *ctx, void *host, const void *dev, size_t bytes) {
  if (!bytes) return;
  akx_status s = akx_memcpy(ctx, host, dev, bytes, AKX_COPY_DEVICE_TO_HOST);
  cr_assert(s == AKX_SUCCESS, "akx_memcpy D2H %zu bytes = %s: %s", bytes, akx_status_string(s),
            akx_last_error());
}

akx_op tfx_user_op(akx_context *ctx, const akx_user_op_desc *d) {
  akx_op op = (akx_op)-1;
  const akx_status st = akx_user_op_create(ctx, d, &op);
  cr_assert_eq(st, AKX_SUCCESS, "akx_user_op_create(%s) = %s: %s\ncompiler log:\n%s", d->combine,
               akx_status_string(st), akx_last_error(), akx_last_compile_log());
  cr_assert_geq((int)op, AKX_USER_OP_FIRST, "a user op value is >= AKX_USER_OP_FIRST: %d", (int)op);
  return op;
}

/* AKX_TEST_INTERLEAVE=1 (the *_mixed copies in tests/CMakeLists.txt): before each upload,
 * which a test makes before each of its calls, the context runs a call of every family (a
 * scan, a findall, a split dims reduction, a whole-array sum; each checked), so that the
 * test's own calls find the workspace as a program's mix of calls leaves it. */
static void interleave(akx_context *ctx) {
  static int depth; /* the interleaved calls upload too */
  static int on = -1;
  if (on < 0) on = getenv("AKX_TEST_INTERLEAVE") && strcmp(getenv("AKX_TEST_INTERLEAVE"), "1") == 0;
  if (!on || depth) return;
  ++depth;
  static uint64_t seed = 1;
  cr_assert_eq(cc_scan_vector(ctx, 5000, seed++), AKX_SUCCESS, "interleaved scan: %s", akx_last_error());
  cr_assert_eq(cc_findall(ctx, 5000, 30, seed++), AKX_SUCCESS, "interleaved findall: %s", akx_last_error());
  cr_assert_eq(cc_sums_along(ctx, 5, 1000, 1, seed++), AKX_SUCCESS, "interleaved split dims reduction: %s",
               akx_last_error());
  cr_assert_eq(cc_sum(ctx, 9000, 1, AKX_DEVICE, seed++), AKX_SUCCESS, "interleaved sum: %s", akx_last_error());
  --depth;
}

void *tfx_upload(akx_context *ctx, const void *host, size_t bytes) {
  interleave(ctx);
  void *d = tfx_alloc(ctx, bytes ? bytes : 1);
  tfx_to_device(ctx, d, host, bytes);
  return d;
}

const char *tfx_describe(const akx_array *a, char *buf, size_t len) {
  size_t k = (size_t)snprintf(buf, len, "%s shape {", ref_name(a->dtype));
  for (int d = 0; d < a->ndim && d < AKX_MAX_DIMS && k < len; d++)
    k += (size_t)snprintf(buf + k, len - k, "%s%lld", d ? ", " : "", (long long)a->shape[d]);
  if (k < len) k += (size_t)snprintf(buf + k, len - k, "} strides {");
  for (int d = 0; d < a->ndim && d < AKX_MAX_DIMS && k < len; d++)
    k += (size_t)snprintf(buf + k, len - k, "%s%lld", d ? ", " : "", (long long)a->strides[d]);
  if (k < len) snprintf(buf + k, len - k, "} (n %lld)", (long long)ref_count(a));
  return buf;
}

tfx_case tfx_case_make(akx_map m, akx_op op) {
  tfx_case c;
  memset(&c, 0, sizeof c);
  c.map = m;
  c.op = op;
  c.acc = AKX_DTYPE_AUTO;
  c.where = AKX_HOST;
  return c;
}

static akx_reduce_opts opts_of(const tfx_case *c) {
  akx_reduce_opts o = akx_reduce_opts_default();
  o.init = c->init;
  o.acc = c->acc;
  o.fold = c->fold;
  o.block_size = c->block_size;
  o.items_per_thread = c->items_per_thread;
  o.target_blocks = c->target_blocks;
  return o;
}

static const char *describe_case(const akx_array *v, const tfx_case *c, akx_dtype acc,
                                 const akx_context *ctx, char *buf, size_t len) {
  char vb[256];
  snprintf(buf, len,
           "[%s] src %s map %s op %s acc %s (asked %s) init %s fold %d where %s "
           "tuning %d/%d/%d",
           tfx_backend_name(ctx), tfx_describe(v, vb, sizeof vb), ref_map_name(c->map),
           ref_op_name(c->op), (int)acc == (int)REF_UNSUPPORTED ? "unsupported" : ref_name(acc),
           ref_name(c->acc), c->init ? "yes" : "no", c->fold,
           c->where == AKX_HOST ? "host" : "device", c->block_size, c->items_per_thread,
           c->target_blocks);
  return buf;
}

static int untouched(const unsigned char *p, size_t n, const unsigned char *ref) {
  return memcmp(p, ref, n) == 0;
}

/* The status a case must end with: UNSUPPORTED for a refused combination, INVALID_ARGUMENT
 * for an empty MIN/MAX without init or fold (with fold, the previous value is the answer). */
static akx_status expected_status(int supported, int64_t n, const tfx_case *c) {
  if (!supported) return AKX_ERROR_UNSUPPORTED;
  if (n == 0 && (c->op == AKX_OP_MIN || c->op == AKX_OP_MAX) && !c->init && !c->fold)
    return AKX_ERROR_INVALID_ARGUMENT;
  return AKX_SUCCESS;
}

enum { STATUS_WRONG, STATUS_FAILED_AS_EXPECTED, STATUS_SUCCEEDED };

/* Checks the status of a call and of the synchronize after it. An expected failure must
 * leave the output (the `bytes` of `after`) as it was and say why in akx_last_error(). */
/* Leaves a stale sentence in akx_last_error() (a refused call of its own, marked 424242), so
 * that an expected failure must write its own sentence to pass. */
static void stale_sentence(akx_context *ctx) {
  (void)akx_context_set_workspace(ctx, NULL, 424242);
}

/* The words an expected failure's sentence must hold: the source dtype for an unsupported
 * combination (its sentence names the op, the accumulator and the source), "init" for an
 * empty MIN/MAX. */
static const char *expected_words(akx_status want, akx_dtype src) {
  return want == AKX_ERROR_UNSUPPORTED ? akx_dtype_name(src) : "init";
}

static int check_status(const char *what, akx_status s, akx_status sync, akx_status want,
                        const unsigned char *after, const unsigned char *before, size_t bytes,
                        const char *words,
                        const char *output, char *msg, size_t len) {
  if (s != want) {
    snprintf(msg, len, "%s: status %s, expected %s (%s)", what, akx_status_string(s),
             akx_status_string(want), akx_last_error());
    return STATUS_WRONG;
  }
  if (sync != AKX_SUCCESS) {
    snprintf(msg, len, "%s: akx_synchronize = %s (%s)", what, akx_status_string(sync),
             akx_last_error());
    return STATUS_WRONG;
  }
  if (want == AKX_SUCCESS) return STATUS_SUCCEEDED;
  if (!untouched(after, bytes, before)) {
    snprintf(msg, len, "%s: failed with %s but wrote %s", what, akx_status_string(s), output);
    return STATUS_WRONG;
  }
  if (!akx_last_error()[0] || strstr(akx_last_error(), "424242") ||
      !strstr(akx_last_error(), words)) {
    snprintf(msg, len, "%s: failed with %s but akx_last_error() does not say why (\"%s\" not in "
             "\"%s\")", what, akx_status_string(s), words, akx_last_error());
    return STATUS_WRONG;
  }
  return STATUS_FAILED_AS_EXPECTED;
}

int tfx_check_mapreduce(akx_context *ctx, const akx_array *dev_view, const akx_array *host_view,
                        const tfx_case *c, char *msg, size_t len) {
  const akx_dtype src = host_view->dtype;
  const akx_dtype acc = ref_resolve_acc(src, c->map, c->op, c->acc);
  char what[640];
  describe_case(host_view, c, acc, ctx, what, sizeof what);
  const int64_t n = ref_count(host_view);
  const int supported = (int)acc != (int)REF_UNSUPPORTED;
  const size_t asz = supported ? ref_size(acc) : 16;

  /* the result's bytes before the call: the previous value (fold) or a sentinel */
  unsigned char before[16 + GUARD], after[16 + GUARD];
  memset(before, SENTINEL, sizeof before);
  if (c->fold && c->prev && supported) memcpy(before, c->prev, asz);

  void *dres = NULL;
  void *res = before;
  unsigned char host_res[16 + GUARD];
  if (c->where == AKX_DEVICE) {
    dres = tfx_upload(ctx, before, asz + GUARD);
    res = dres;
  } else {
    memcpy(host_res, before, sizeof host_res);
    res = host_res;
  }
  akx_reduce_opts o = opts_of(c);
  stale_sentence(ctx);
  akx_status s = akx_mapreduce(ctx, dev_view, c->map, c->op, &o, res, c->where);
  akx_status sync = akx_synchronize(ctx);
  if (c->where == AKX_DEVICE) {
    tfx_to_host(ctx, after, dres, asz + GUARD);
    tfx_free(ctx, dres);
  } else {
    memcpy(after, host_res, sizeof after);
  }

  switch (check_status(what, s, sync, expected_status(supported, n, c), after, before,
                       asz + GUARD, expected_words(expected_status(supported, n, c), src),
                       "its result", msg, len)) {
    case STATUS_WRONG: return 0;
    case STATUS_FAILED_AS_EXPECTED: return 1;
    default: break;
  }
  if (!untouched(after + asz, GUARD, before + asz)) {
    snprintf(msg, len, "%s: wrote past the %zu-byte %s result", what, asz, ref_name(acc));
    return 0;
  }
  ref_val init, prev;
  if (c->init) init = ref_load(c->init, acc);
  if (c->fold) prev = ref_load(before, acc);
  ref_expect e = ref_mapreduce(host_view, c->map, c->op, acc, c->init ? &init : NULL,
                               c->fold ? &prev : NULL);
  char why[400];
  if (!ref_check(after, &e, why, sizeof why)) {
    snprintf(msg, len, "%s: %s", what, why);
    return 0;
  }
  return 1;
}

int tfx_check_reduce_dims(akx_context *ctx, const akx_array *dev_view,
                          const akx_array *host_view, akx_dtype dst_dtype,
                          const void *dst_prev, const tfx_case *c, char *msg, size_t len) {
  const akx_dtype src = host_view->dtype;
  const akx_dtype acc = ref_resolve_acc(src, c->map, c->op, c->acc);
  char what[700];
  describe_case(host_view, c, acc, ctx, what, sizeof what);
  snprintf(what + strlen(what), sizeof what - strlen(what), " dst %s", ref_name(dst_dtype));
  const int64_t n = ref_count(host_view);
  const int supported = (int)acc != (int)REF_UNSUPPORTED;
  const size_t dsz = ref_size(dst_dtype);

  unsigned char before[16 + GUARD], after[16 + GUARD];
  memset(before, SENTINEL, sizeof before);
  if (c->fold && dst_prev) memcpy(before, dst_prev, dsz);
  void *ddst = tfx_upload(ctx, before, dsz + GUARD);
  akx_array dst;
  memset(&dst, 0, sizeof dst);
  dst.data = ddst;
  dst.dtype = dst_dtype;
  dst.ndim = host_view->ndim;
  for (int d = 0; d < dst.ndim; d++) {
    dst.shape[d] = 1;
    dst.strides[d] = 1;
  }
  akx_reduce_opts o = opts_of(c);
  stale_sentence(ctx);
  akx_status s = akx_reduce_dims(ctx, &dst, dev_view, c->map, c->op, &o);
  akx_status sync = akx_synchronize(ctx);
  tfx_to_host(ctx, after, ddst, dsz + GUARD);
  tfx_free(ctx, ddst);

  switch (check_status(what, s, sync, expected_status(supported, n, c), after, before,
                       dsz + GUARD, expected_words(expected_status(supported, n, c), src),
                       "dst", msg, len)) {
    case STATUS_WRONG: return 0;
    case STATUS_FAILED_AS_EXPECTED: return 1;
    default: break;
  }
  if (!untouched(after + dsz, GUARD, before + dsz)) {
    snprintf(msg, len, "%s: wrote past the %zu-byte dst", what, dsz);
    return 0;
  }
  ref_val init, prev;
  if (c->init) init = ref_load(c->init, acc);
  if (c->fold) prev = ref_convert(ref_load(before, dst_dtype), acc);
  ref_expect e = ref_mapreduce(host_view, c->map, c->op, acc, c->init ? &init : NULL,
                               c->fold ? &prev : NULL);
  ref_expect ed = ref_expect_convert(&e, dst_dtype);
  char why[400];
  if (!ref_check(after, &ed, why, sizeof why)) {
    snprintf(msg, len, "%s: %s", what, why);
    return 0;
  }
  return 1;
}

tfx_layout tfx_layout_vector(int64_t n) {
  tfx_layout L;
  memset(&L, 0, sizeof L);
  L.parent_n = n;
  L.ndim = 1;
  L.shape[0] = n;
  L.strides[0] = 1;
  return L;
}

tfx_layout tfx_layout_sub(int32_t ndim, const int64_t *pshape, const int64_t *start,
                          const int64_t *shape, const int64_t *step) {
  tfx_layout L;
  memset(&L, 0, sizeof L);
  int64_t pstride[AKX_MAX_DIMS];
  int64_t n = 1;
  for (int d = ndim - 1; d >= 0; d--) {
    pstride[d] = n;
    n *= pshape[d];
  }
  L.parent_n = n;
  L.ndim = ndim;
  for (int d = 0; d < ndim; d++) {
    L.offset += start[d] * pstride[d];
    L.shape[d] = shape[d];
    L.strides[d] = step[d] * pstride[d];
    /* stays inside the parent */
    int64_t last = start[d] + (shape[d] > 0 ? (shape[d] - 1) * step[d] : 0);
    cr_assert(start[d] >= 0 && start[d] < pshape[d] && last >= 0 && last < pshape[d],
              "tfx_layout_sub: dim %d leaves the parent", d);
  }
  return L;
}

int64_t tfx_layout_count(const tfx_layout *L) {
  int64_t n = 1;
  for (int d = 0; d < L->ndim; d++) n *= L->shape[d];
  return n;
}

static akx_array view_of(akx_dtype t, void *base, const tfx_layout *L) {
  akx_array a;
  memset(&a, 0, sizeof a);
  a.data = (unsigned char *)base + L->offset * (int64_t)ref_size(t);
  a.dtype = t;
  a.ndim = L->ndim;
  for (int d = 0; d < L->ndim; d++) {
    a.shape[d] = L->shape[d];
    a.strides[d] = L->strides[d];
  }
  return a;
}

int tfx_run(akx_context *ctx, akx_dtype t, const void *host_parent, const tfx_layout *L,
            const tfx_case *c, akx_dtype dst, const void *dst_prev, char *msg, size_t len) {
  const size_t bytes = (size_t)L->parent_n * ref_size(t);
  void *d = tfx_upload(ctx, host_parent, bytes);
  akx_array hv = view_of(t, (void *)host_parent, L), dv = view_of(t, d, L);
  int ok = dst == AKX_DTYPE_AUTO
               ? tfx_check_mapreduce(ctx, &dv, &hv, c, msg, len)
               : tfx_check_reduce_dims(ctx, &dv, &hv, dst, dst_prev, c, msg, len);
  tfx_free(ctx, d);
  return ok;
}

int tfx_fill_run(akx_context *ctx, akx_dtype t, const tfx_layout *L, const tfx_case *c,
                 uint64_t seed, int fill_flags, akx_dtype dst, const void *dst_prev, char *msg,
                 size_t len) {
  akx_dtype acc = ref_resolve_acc(t, c->map, c->op, c->acc);
  if ((int)acc == (int)REF_UNSUPPORTED) acc = ref_auto_acc(t, c->map, c->op);
  if ((int)acc == (int)REF_UNSUPPORTED || (int)acc < 0) acc = t;
  int64_t total = tfx_layout_count(L);
  if (total < L->parent_n) total = L->parent_n;
  void *h = tfx_xmalloc((size_t)L->parent_n * ref_size(t));
  ref_fill(h, t, L->parent_n, c->map, c->op, acc, total, seed, fill_flags);
  int ok = tfx_run(ctx, t, h, L, c, dst, dst_prev, msg, len);
  free(h);
  return ok;
}

int tfx_vector_case(akx_context *ctx, akx_dtype t, int64_t n, const tfx_case *c, uint64_t seed,
                    int fill_flags, char *msg, size_t len) {
  tfx_layout L = tfx_layout_vector(n);
  return tfx_fill_run(ctx, t, &L, c, seed, fill_flags, AKX_DTYPE_AUTO, NULL, msg, len);
}

void tfx_note(tfx_tally *t, int ok, const char *fmt, ...) {
  t->checks++;
  if (ok) return;
  t->failures++;
  if (t->failures <= 12) {
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    cr_expect_fail("%s", buf);
  } else if (t->failures == 13) {
    cr_log_error("more failures follow; only the first 12 are printed");
  }
}

void tfx_done(tfx_tally *t) {
  cr_assert(t->checks > 0, "no check ran");
  cr_assert(t->failures == 0, "%d of %d checks failed", t->failures, t->checks);
}
