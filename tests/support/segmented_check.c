/* The segmented and keyed family's checker (segmented_check.h). */
#include "segmented_check.h"
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "views.h"

#define GUARD 4     /* elements before and after every output view */
#define POISON 0xA5 /* an output's bytes before the call */

tsg_case tsg_case_make(akx_dtype src_t, akx_op op) {
  tsg_case c;
  memset(&c, 0, sizeof c);
  c.src_t = src_t;
  c.dst_t = AKX_DTYPE_AUTO;
  c.acc = AKX_DTYPE_AUTO;
  c.off_t = AKX_INT64;
  c.key_t = AKX_INT32;
  c.map = AKX_MAP_IDENTITY;
  c.op = op;
  c.src_step = c.dst_step = c.off_step = c.key_step = 1;
  c.cap_keys = c.cap_vals = -1;
  return c;
}

const char *tsg_describe(const tsg_case *c, const tsg_offsets *o, char *buf, size_t len) {
  snprintf(buf, len,
           "%s %s map %s acc %s -> %s%s%s%s%s; %s (nseg %lld, n %lld); offsets %s step %lld, keys %s "
           "step %lld, src step %lld, dst step %lld, caps %lld/%lld, bs %d ipt %d",
           ref_name(c->src_t), ref_op_name(c->op), ref_map_name(c->map), ref_name(c->acc),
           c->in_place ? "in place" : ref_name(c->dst_t), c->with_init ? " init" : "",
           c->fold ? " fold" : "", c->exclusive ? " exclusive" : "",
           c->check == TSG_CHECK_GUARDS_ONLY ? " (guards only)" : "", o->name, (long long)o->nseg,
           (long long)o->n, ref_name(c->off_t), (long long)c->off_step, ref_name(c->key_t),
           (long long)c->key_step, (long long)c->src_step, (long long)c->dst_step,
           (long long)c->cap_keys, (long long)c->cap_vals, (int)c->block_size,
           (int)c->items_per_thread);
  return buf;
}

/* ---- layouts ---------------------------------------------------------------------------------- */

static int64_t step_of(int64_t s) { return s ? s : 1; }

tfx_layout tsg_layout(int64_t count, int64_t step, int64_t guard) {
  tfx_layout L;
  memset(&L, 0, sizeof L);
  step = step_of(step);
  const int64_t mag = step < 0 ? -step : step;
  const int64_t span = count > 0 ? (count - 1) * mag + 1 : 0;
  L.ndim = 1;
  L.shape[0] = count;
  L.strides[0] = step;
  L.parent_n = 2 * guard + span;
  if (L.parent_n < 1) L.parent_n = 1;
  L.offset = guard + (step < 0 && count > 0 ? (count - 1) * mag : 0);
  return L;
}

int tsg_in_view(const tfx_layout *L, int64_t k) {
  const int64_t d = k - L->offset, s = L->strides[0];
  if (d % s != 0) return 0;
  const int64_t i = d / s;
  return i >= 0 && i < L->shape[0];
}

/* Parent index of view element i. */
static int64_t at(const tfx_layout *L, int64_t i) { return L->offset + i * L->strides[0]; }

static size_t parent_bytes(const tfx_layout *L, akx_dtype t) { return (size_t)L->parent_n * ref_size(t); }

tsg_dev_offsets tsg_upload_offsets(akx_context *ctx, const tsg_offsets *o, akx_dtype off_t,
                                   int64_t off_step, tsg_offsets *seen) {
  tsg_dev_offsets d;
  d.L = tsg_layout(o->nseg + 1, off_step, 2);
  d.host_parent = tfx_xmalloc(parent_bytes(&d.L, off_t));
  /* Outside the view: entries a wrong stride would read (past n, negative). */
  for (int64_t k = 0; k < d.L.parent_n; ++k) ref_store_at(d.host_parent, k, ref_int(off_t, k % 2 ? -77 : o->n + 1000));
  if (seen) *seen = tsg_given(o->n, o->nseg, o->off, o->name);
  for (int64_t s = 0; s <= o->nseg; ++s) {
    const ref_val v = ref_int(off_t, o->off[s]); /* int32: the entry as the kernels see it */
    ref_store_at(d.host_parent, at(&d.L, s), v);
    if (seen) seen->off[s] = (int64_t)v.i;
  }
  d.dev_base = tfx_upload(ctx, d.host_parent, parent_bytes(&d.L, off_t));
  d.dev = tvw_view(d.dev_base, off_t, &d.L);
  return d;
}

void tsg_free_offsets(akx_context *ctx, tsg_dev_offsets *d) {
  tfx_free(ctx, d->dev_base);
  free(d->host_parent);
  d->dev_base = d->host_parent = NULL;
}

ref_val tsg_init_value(akx_op op, akx_dtype acc) {
  if (ref_is_bool(acc)) return ref_int(acc, 1);
  if (ref_is_complex(acc)) return ref_cplx(acc, op == AKX_OP_MUL ? 1.0L : 3.0L, -1.0L);
  if (ref_is_float(acc)) return ref_real(acc, op == AKX_OP_MUL ? -1.0L : op == AKX_OP_MIN ? 0.5L : 3.0L);
  switch (op) {
    case AKX_OP_MUL: return ref_int(acc, ref_is_sint(acc) ? -1 : 3);
    case AKX_OP_AND: return ref_int(acc, 0x7d);
    case AKX_OP_MIN: return ref_int(acc, 5);
    default: return ref_int(acc, 3);
  }
}

/* An output parent: POISON everywhere; with `prev`, the view's elements hold previous values. */
static unsigned char *output_parent(const tfx_layout *L, akx_dtype t, int prev, uint64_t seed) {
  unsigned char *p = tfx_xmalloc(parent_bytes(L, t));
  memset(p, POISON, parent_bytes(L, t));
  if (prev)
    for (int64_t i = 0; i < L->shape[0]; ++i) {
      const uint64_t r = ref_rand(seed, (uint64_t)i);
      ref_store_at(p, at(L, i), ref_is_bool(t) ? ref_int(t, (int64_t)(r % 2)) : ref_int(t, (int64_t)(r % 7) - (ref_is_uint(t) ? 0 : 3)));
    }
  return p;
}

/* The parent bytes of element k of a view differ from before? Reports the first that does. */
static int kept(const unsigned char *after, const unsigned char *before, const tfx_layout *L, akx_dtype t,
                int (*may_write)(const tfx_layout *, int64_t, const void *), const void *arg, const char *what,
                const char *desc, char *msg, size_t len) {
  const size_t sz = ref_size(t);
  for (int64_t k = 0; k < L->parent_n; ++k) {
    if (may_write && may_write(L, k, arg)) continue;
    if (memcmp(after + k * (int64_t)sz, before + k * (int64_t)sz, sz) != 0) {
      const int64_t d = k - L->offset;
      snprintf(msg, len, "%s: %s element %lld of its buffer (view offset %lld, %s) was written", desc, what,
               (long long)k, (long long)L->offset,
               tsg_in_view(L, k) ? "an element of the view the call must not write"
                                 : d < 0 || k >= L->parent_n - GUARD ? "a guard outside the view" : "a gap between strided elements");
      return 0;
    }
  }
  return 1;
}

static int view_element(const tfx_layout *L, int64_t k, const void *arg) {
  (void)arg;
  return tsg_in_view(L, k);
}

/* Reads a device parent back. */
static unsigned char *read_back(akx_context *ctx, const void *dev, const tfx_layout *L, akx_dtype t) {
  unsigned char *h = tfx_xmalloc(parent_bytes(L, t));
  tfx_to_host(ctx, h, dev, parent_bytes(L, t));
  return h;
}

/* Inputs keep their bytes. */
static int input_kept(akx_context *ctx, const void *dev, const void *host, const tfx_layout *L, akx_dtype t,
                      const char *what, const char *desc, char *msg, size_t len) {
  unsigned char *h = read_back(ctx, dev, L, t);
  const int ok = memcmp(h, host, parent_bytes(L, t)) == 0;
  if (!ok) snprintf(msg, len, "%s: the call wrote into its input %s", desc, what);
  free(h);
  return ok;
}

static int status_ok(akx_status st, akx_status want, const char *fn, const char *desc, char *msg, size_t len) {
  if (st == want) return 1;
  snprintf(msg, len, "%s: %s returned %s, expected %s: %s", desc, fn, akx_status_string(st),
           akx_status_string(want), akx_last_error());
  return 0;
}

static int synchronized(akx_context *ctx, const char *desc, char *msg, size_t len) {
  const akx_status s = akx_synchronize(ctx);
  if (s == AKX_SUCCESS) return 1;
  snprintf(msg, len, "%s: akx_synchronize after the call: %s: %s", desc, akx_status_string(s), akx_last_error());
  return 0;
}

/* A host 1-d view of the elements [b, e) of a host view. */
static akx_array sub_view(const akx_array *v, int64_t b, int64_t e) {
  akx_array s = *v;
  s.data = (unsigned char *)v->data + b * v->strides[0] * (int64_t)ref_size(v->dtype);
  s.shape[0] = e - b;
  return s;
}

/* An empty float ADD without init (nor a previous value) is +0.0 (numpy's and Julia's empty sum). */
static int positive_zero(const void *got, akx_dtype t) {
  if (!ref_is_float(t) && !ref_is_complex(t)) return 1;
  const ref_val g = ref_load(got, t);
  return !signbit(g.re) && !(ref_is_complex(t) && signbit(g.im));
}

static void fill_source(void *parent, akx_dtype t, const tfx_layout *L, akx_map m, akx_op op, akx_dtype acc,
                        int64_t total, uint64_t seed, int flags) {
  ref_fill(parent, t, L->parent_n, m, op, acc, total + 1, seed, flags);
}

static void set_result(tsg_result *res, unsigned char *out, const unsigned char *before, size_t bytes, int64_t runs,
                       akx_status st) {
  if (!res) {
    free(out);
    return;
  }
  res->out = out;
  res->out_bytes = bytes;
  res->runs = runs;
  res->status = st;
  res->untouched = memcmp(out, before, bytes) == 0;
}

/* ---- akx_segmented_reduce ----------------------------------------------------------------------- */

int tsg_reduce_run(akx_context *ctx, const tsg_case *c, const tsg_offsets *segs, uint64_t seed,
                   tsg_result *res, char *msg, size_t len) {
  char desc[640];
  tsg_describe(c, segs, desc, sizeof desc);
  const akx_dtype acc = c->acc == AKX_DTYPE_AUTO ? ref_auto_acc(c->src_t, c->map, c->op) : c->acc;
  const akx_dtype dst_t = c->dst_t == AKX_DTYPE_AUTO ? acc : c->dst_t;
  const int64_t n = segs->n, nseg = segs->nseg;
  /* src with guards: values a read outside the view would add */
  const tfx_layout Ls = tsg_layout(n, c->src_step, 3);
  unsigned char *src_parent = tfx_xmalloc(parent_bytes(&Ls, c->src_t));
  fill_source(src_parent, c->src_t, &Ls, c->map, c->op, acc, n, seed, c->fill_flags);
  tvw_pair src = tvw_upload(ctx, c->src_t, src_parent, &Ls);
  tsg_offsets seen;
  tsg_dev_offsets offs = tsg_upload_offsets(ctx, segs, c->off_t, c->off_step, &seen);
  const tfx_layout Ld = tsg_layout(nseg, c->dst_step, GUARD);
  unsigned char *dst_before = output_parent(&Ld, dst_t, c->fold, seed ^ 0x5eed);
  tvw_pair dst = tvw_upload(ctx, dst_t, dst_before, &Ld);

  unsigned char init_bytes[32] = {0};
  const ref_val init = tsg_init_value(c->op, acc);
  ref_store(init_bytes, init);
  akx_reduce_opts o = akx_reduce_opts_default();
  o.acc = c->acc;
  o.init = c->with_init ? init_bytes : NULL;
  o.fold = c->fold;
  o.block_size = c->block_size;
  o.items_per_thread = c->items_per_thread;
  const akx_status st = akx_segmented_reduce(ctx, &dst.dev, &src.dev, &offs.dev, c->map, c->op, &o);
  int ok = status_ok(st, AKX_SUCCESS, "akx_segmented_reduce", desc, msg, len) && synchronized(ctx, desc, msg, len);
  unsigned char *after = read_back(ctx, dst.dev_base, &Ld, dst_t);
  if (ok && c->check == TSG_CHECK_VALUES) {
    const size_t dsz = ref_size(dst_t);
    for (int64_t s = 0; ok && s < nseg; ++s) {
      int64_t b, e;
      tsg_bounds(&seen, s, &b, &e);
      const akx_array seg = sub_view(&src.host, b, e);
      ref_val prev;
      if (c->fold) prev = ref_convert(ref_load(dst_before + at(&Ld, s) * (int64_t)dsz, dst_t), acc);
      ref_expect want = ref_mapreduce(&seg, c->map, c->op, acc, c->with_init ? &init : NULL, c->fold ? &prev : NULL);
      want = ref_expect_convert(&want, dst_t);
      const unsigned char *got = after + at(&Ld, s) * (int64_t)dsz;
      char why[320];
      if (!ref_check(got, &want, why, sizeof why)) {
        snprintf(msg, len, "%s: segment %lld [%lld, %lld): %s", desc, (long long)s, (long long)b, (long long)e, why);
        ok = 0;
      } else if (e == b && c->op == AKX_OP_ADD && !c->with_init && !c->fold && !positive_zero(got, dst_t)) {
        snprintf(msg, len, "%s: empty segment %lld: -0.0, expected +0.0 (an empty sum)", desc, (long long)s);
        ok = 0;
      }
    }
  }
  ok = ok && kept(after, dst_before, &Ld, dst_t, view_element, NULL, "dst", desc, msg, len);
  ok = ok && input_kept(ctx, src.dev_base, src_parent, &Ls, c->src_t, "src", desc, msg, len);
  ok = ok && input_kept(ctx, offs.dev_base, offs.host_parent, &offs.L, c->off_t, "offsets", desc, msg, len);
  set_result(res, after, dst_before, parent_bytes(&Ld, dst_t), 0, st);
  tsg_free(&seen);
  tsg_free_offsets(ctx, &offs);
  tvw_free(ctx, &src);
  tvw_free(ctx, &dst);
  free(src_parent);
  free(dst_before);
  return ok;
}

/* ---- scans ------------------------------------------------------------------------------------- */

typedef struct {
  const tsg_offsets *segs;
  const tfx_layout *Ls; /* in place: src's layout, whose elements the call may write */
} scan_write_arg;

/* A scan may write the elements of its segments (monotone offsets: [off[0], off[nseg]); any
 * other case, every view element). */
static int scan_may_write(const tfx_layout *L, int64_t k, const void *arg) {
  const scan_write_arg *a = arg;
  if (!tsg_in_view(L, k)) return 0;
  if (!a->segs) return 1;
  return tsg_covered(a->segs, (k - L->offset) / L->strides[0]);
}

/* Checks a scan's outputs over segments `segs` (clamped, monotone): out is the dst parent after
 * the call (layout Ld, dtype dst_t), src_host the source's host view. */
static int check_scan_values(const tsg_case *c, const tsg_offsets *segs, const akx_array *src_host,
                             const unsigned char *out, const tfx_layout *Ld, akx_dtype dst_t, akx_dtype acc,
                             const ref_val *init, const char *desc, char *msg, size_t len) {
  const size_t dsz = ref_size(dst_t), ssz = ref_size(src_host->dtype);
  for (int64_t s = 0; s < segs->nseg; ++s) {
    int64_t b, e;
    tsg_bounds(segs, s, &b, &e);
    ref_acc a;
    ref_acc_init(&a, c->op, acc);
    if (init) ref_acc_add(&a, *init);
    for (int64_t i = b; i < e; ++i) {
      const ref_val x = ref_convert(
          ref_load((const unsigned char *)src_host->data + i * src_host->strides[0] * (int64_t)ssz, src_host->dtype), acc);
      ref_expect want;
      if (c->exclusive) want = i == b ? ref_expect_exact(init ? *init : ref_neutral(c->op, acc)) : ref_acc_expect(&a);
      ref_acc_add(&a, x);
      if (!c->exclusive) want = ref_acc_expect(&a);
      want = ref_expect_convert(&want, dst_t);
      const unsigned char *got = out + at(Ld, i) * (int64_t)dsz;
      char why[320];
      if (!ref_check(got, &want, why, sizeof why)) {
        snprintf(msg, len, "%s: segment %lld [%lld, %lld), element %lld: %s", desc, (long long)s, (long long)b,
                 (long long)e, (long long)i, why);
        return 0;
      }
      if (c->exclusive && i == b && !init && c->op == AKX_OP_ADD && !positive_zero(got, dst_t)) {
        snprintf(msg, len, "%s: segment %lld's first exclusive element is -0.0, expected +0.0", desc, (long long)s);
        return 0;
      }
    }
  }
  return 1;
}

int tsg_scan_run(akx_context *ctx, const tsg_case *c, const tsg_offsets *segs, uint64_t seed,
                 tsg_result *res, char *msg, size_t len) {
  char desc[640];
  tsg_describe(c, segs, desc, sizeof desc);
  const akx_dtype acc = c->acc == AKX_DTYPE_AUTO ? ref_auto_acc(c->src_t, AKX_MAP_IDENTITY, c->op) : c->acc;
  const akx_dtype dst_t = c->in_place ? c->src_t : c->dst_t == AKX_DTYPE_AUTO ? acc : c->dst_t;
  const int64_t n = segs->n;
  const tfx_layout Ls = tsg_layout(n, c->src_step, GUARD);
  unsigned char *src_parent = tfx_xmalloc(parent_bytes(&Ls, c->src_t));
  fill_source(src_parent, c->src_t, &Ls, AKX_MAP_IDENTITY, c->op, acc, n, seed, c->fill_flags);
  tvw_pair src = tvw_upload(ctx, c->src_t, src_parent, &Ls);
  tsg_offsets seen;
  tsg_dev_offsets offs = tsg_upload_offsets(ctx, segs, c->off_t, c->off_step, &seen);
  const tfx_layout Ld = c->in_place ? Ls : tsg_layout(n, c->dst_step, GUARD);
  unsigned char *dst_before = c->in_place ? src_parent : output_parent(&Ld, dst_t, 0, 0);
  tvw_pair dst = src;
  if (!c->in_place) dst = tvw_upload(ctx, dst_t, dst_before, &Ld);

  unsigned char init_bytes[32] = {0};
  const ref_val init = tsg_init_value(c->op, acc);
  ref_store(init_bytes, init);
  akx_scan_opts o = akx_scan_opts_default();
  o.acc = c->acc;
  o.init = c->with_init ? init_bytes : NULL;
  o.exclusive = c->exclusive;
  o.block_size = c->block_size;
  o.items_per_thread = c->items_per_thread;
  const akx_status st = akx_segmented_scan(ctx, &dst.dev, &src.dev, &offs.dev, c->op, &o);
  int ok = status_ok(st, AKX_SUCCESS, "akx_segmented_scan", desc, msg, len) && synchronized(ctx, desc, msg, len);
  unsigned char *after = read_back(ctx, dst.dev_base, &Ld, dst_t);
  const int monotone = tsg_monotone(&seen);
  if (ok && c->check == TSG_CHECK_VALUES && monotone)
    ok = check_scan_values(c, &seen, &src.host, after, &Ld, dst_t, acc, c->with_init ? &init : NULL, desc, msg, len);
  const scan_write_arg wa = {monotone ? &seen : NULL, &Ls};
  ok = ok && kept(after, dst_before, &Ld, dst_t, scan_may_write, &wa, "dst", desc, msg, len);
  if (!c->in_place) ok = ok && input_kept(ctx, src.dev_base, src_parent, &Ls, c->src_t, "src", desc, msg, len);
  ok = ok && input_kept(ctx, offs.dev_base, offs.host_parent, &offs.L, c->off_t, "offsets", desc, msg, len);
  set_result(res, after, dst_before, parent_bytes(&Ld, dst_t), 0, st);
  tsg_free(&seen);
  tsg_free_offsets(ctx, &offs);
  tvw_free(ctx, &src);
  if (!c->in_place) {
    tvw_free(ctx, &dst);
    free(dst_before);
  }
  free(src_parent);
  return ok;
}

/* ---- by key ------------------------------------------------------------------------------------ */

/* Keys from `runs` in a strided parent (key_step, guards of other keys). */
static unsigned char *keys_parent(const tsg_case *c, const tsg_offsets *runs, const tfx_layout *Lk, uint64_t seed) {
  const size_t ksz = ref_size(c->key_t);
  unsigned char *flat = tfx_xmalloc((size_t)(runs->n > 0 ? runs->n : 1) * ksz);
  tsg_fill_keys(flat, c->key_t, runs, seed);
  unsigned char *p = tfx_xmalloc(parent_bytes(Lk, c->key_t));
  for (int64_t k = 0; k < Lk->parent_n; ++k) ref_store_at(p, k, ref_int(c->key_t, (int64_t)(k % 3)));
  for (int64_t i = 0; i < runs->n; ++i) memcpy(p + at(Lk, i) * (int64_t)ksz, flat + i * (int64_t)ksz, ksz);
  free(flat);
  return p;
}

int tsg_reduce_by_key_run(akx_context *ctx, const tsg_case *c, const tsg_offsets *runs, uint64_t seed,
                          tsg_result *res, char *msg, size_t len) {
  char desc[640];
  tsg_describe(c, runs, desc, sizeof desc);
  const akx_dtype acc = c->acc == AKX_DTYPE_AUTO ? ref_auto_acc(c->src_t, c->map, c->op) : c->acc;
  const akx_dtype out_t = c->dst_t == AKX_DTYPE_AUTO ? acc : c->dst_t;
  const int64_t n = runs->n;
  const tfx_layout Lk = tsg_layout(n, c->key_step, 3), Lv = tsg_layout(n, c->src_step, 3);
  unsigned char *kp = keys_parent(c, runs, &Lk, seed);
  unsigned char *vp = tfx_xmalloc(parent_bytes(&Lv, c->src_t));
  fill_source(vp, c->src_t, &Lv, c->map, c->op, acc, n, seed + 1, c->fill_flags);
  tvw_pair keys = tvw_upload(ctx, c->key_t, kp, &Lk), vals = tvw_upload(ctx, c->src_t, vp, &Lv);
  tsg_offsets truth = tsg_runs_of(&keys.host);
  const int64_t cap_k = c->cap_keys < 0 ? truth.nseg : c->cap_keys, cap_v = c->cap_vals < 0 ? truth.nseg : c->cap_vals;
  const int64_t cap = cap_k < cap_v ? cap_k : cap_v;
  const tfx_layout Lko = tsg_layout(cap_k, c->dst_step, GUARD), Lvo = tsg_layout(cap_v, c->dst_step, GUARD);
  unsigned char *ko_before = output_parent(&Lko, c->key_t, 0, 0), *vo_before = output_parent(&Lvo, out_t, 0, 0);
  tvw_pair ko = tvw_upload(ctx, c->key_t, ko_before, &Lko), vo = tvw_upload(ctx, out_t, vo_before, &Lvo);

  unsigned char init_bytes[32] = {0};
  const ref_val init = tsg_init_value(c->op, acc);
  ref_store(init_bytes, init);
  akx_reduce_opts o = akx_reduce_opts_default();
  o.acc = c->acc;
  o.init = c->with_init ? init_bytes : NULL;
  o.block_size = c->block_size;
  o.items_per_thread = c->items_per_thread;
  int64_t nruns = -12345;
  akx_status st;
  if (c->runs_on_device) {
    int64_t *druns = tfx_upload(ctx, &nruns, sizeof nruns);
    st = akx_reduce_by_key_where(ctx, &ko.dev, &vo.dev, &keys.dev, &vals.dev, c->map, c->op, &o, druns, AKX_DEVICE);
    tfx_to_host(ctx, &nruns, druns, sizeof nruns);
    tfx_free(ctx, druns);
  } else {
    st = akx_reduce_by_key(ctx, &ko.dev, &vo.dev, &keys.dev, &vals.dev, c->map, c->op, &o, &nruns);
  }
  const akx_status want = truth.nseg > cap && !c->runs_on_device ? AKX_ERROR_OUTPUT_TOO_SMALL : AKX_SUCCESS;
  int ok = status_ok(st, want, "akx_reduce_by_key", desc, msg, len) && synchronized(ctx, desc, msg, len);
  if (ok && want != AKX_SUCCESS && !strstr(akx_last_error(), "values_out") && !strstr(akx_last_error(), "keys_out")) {
    snprintf(msg, len, "%s: %lld runs in a capacity of %lld: the sentence names neither output: \"%s\"", desc,
             (long long)truth.nseg, (long long)cap, akx_last_error());
    ok = 0;
  }
  if (ok && nruns != truth.nseg) {
    snprintf(msg, len, "%s: *runs = %lld, expected %lld (snprintf-style: the true count)", desc, (long long)nruns,
             (long long)truth.nseg);
    ok = 0;
  }
  unsigned char *ko_after = read_back(ctx, ko.dev_base, &Lko, c->key_t);
  unsigned char *vo_after = read_back(ctx, vo.dev_base, &Lvo, out_t);
  const int64_t written = truth.nseg < cap ? truth.nseg : cap;
  const size_t ksz = ref_size(c->key_t), osz = ref_size(out_t);
  for (int64_t r = 0; ok && r < written && c->check == TSG_CHECK_VALUES; ++r) {
    const int64_t b = truth.off[r], e = truth.off[r + 1];
    const ref_val want_key = ref_load(kp + at(&Lk, b) * (int64_t)ksz, c->key_t);
    const ref_val got_key = ref_load(ko_after + at(&Lko, r) * (int64_t)ksz, c->key_t);
    if (got_key.i != want_key.i) {
      snprintf(msg, len, "%s: keys_out[%lld] = %lld, expected %lld (run [%lld, %lld))", desc, (long long)r,
               (long long)got_key.i, (long long)want_key.i, (long long)b, (long long)e);
      ok = 0;
      break;
    }
    const akx_array run = sub_view(&vals.host, b, e);
    ref_expect w = ref_mapreduce(&run, c->map, c->op, acc, c->with_init ? &init : NULL, NULL);
    w = ref_expect_convert(&w, out_t);
    char why[320];
    if (!ref_check(vo_after + at(&Lvo, r) * (int64_t)osz, &w, why, sizeof why)) {
      snprintf(msg, len, "%s: values_out[%lld] (run [%lld, %lld)): %s", desc, (long long)r, (long long)b, (long long)e, why);
      ok = 0;
    }
  }
  /* Past the runs written, and around the views: untouched. */
  const int64_t lim = written;
  for (int pass = 0; ok && pass < 2; ++pass) {
    const tfx_layout *L = pass ? &Lvo : &Lko;
    const unsigned char *a = pass ? vo_after : ko_after, *bf = pass ? vo_before : ko_before;
    const size_t sz = pass ? osz : ksz;
    for (int64_t k = 0; k < L->parent_n; ++k) {
      if (tsg_in_view(L, k) && (k - L->offset) / L->strides[0] < lim) continue;
      if (memcmp(a + k * (int64_t)sz, bf + k * (int64_t)sz, sz) != 0) {
        snprintf(msg, len, "%s: %s element %lld of its buffer was written (%s; %lld runs written of %lld)", desc,
                 pass ? "values_out" : "keys_out", (long long)k,
                 tsg_in_view(L, k) ? "past the runs written" : "outside the view", (long long)lim,
                 (long long)truth.nseg);
        ok = 0;
        break;
      }
    }
  }
  ok = ok && input_kept(ctx, keys.dev_base, kp, &Lk, c->key_t, "keys", desc, msg, len);
  ok = ok && input_kept(ctx, vals.dev_base, vp, &Lv, c->src_t, "values", desc, msg, len);
  free(ko_after);
  set_result(res, vo_after, vo_before, parent_bytes(&Lvo, out_t), nruns, st);
  tsg_free(&truth);
  tvw_free(ctx, &keys);
  tvw_free(ctx, &vals);
  tvw_free(ctx, &ko);
  tvw_free(ctx, &vo);
  free(kp);
  free(vp);
  free(ko_before);
  free(vo_before);
  return ok;
}

int tsg_scan_by_key_run(akx_context *ctx, const tsg_case *c, const tsg_offsets *runs, uint64_t seed,
                        tsg_result *res, char *msg, size_t len) {
  char desc[640];
  tsg_describe(c, runs, desc, sizeof desc);
  const akx_dtype acc = c->acc == AKX_DTYPE_AUTO ? ref_auto_acc(c->src_t, AKX_MAP_IDENTITY, c->op) : c->acc;
  const akx_dtype dst_t = c->in_place ? c->src_t : c->dst_t == AKX_DTYPE_AUTO ? acc : c->dst_t;
  const int64_t n = runs->n;
  const tfx_layout Lk = tsg_layout(n, c->key_step, 3), Ls = tsg_layout(n, c->src_step, GUARD);
  unsigned char *kp = keys_parent(c, runs, &Lk, seed);
  unsigned char *sp = tfx_xmalloc(parent_bytes(&Ls, c->src_t));
  fill_source(sp, c->src_t, &Ls, AKX_MAP_IDENTITY, c->op, acc, n, seed + 1, c->fill_flags);
  tvw_pair keys = tvw_upload(ctx, c->key_t, kp, &Lk), src = tvw_upload(ctx, c->src_t, sp, &Ls);
  tsg_offsets truth = tsg_runs_of(&keys.host);
  const tfx_layout Ld = c->in_place ? Ls : tsg_layout(n, c->dst_step, GUARD);
  unsigned char *dst_before = c->in_place ? sp : output_parent(&Ld, dst_t, 0, 0);
  tvw_pair dst = src;
  if (!c->in_place) dst = tvw_upload(ctx, dst_t, dst_before, &Ld);

  unsigned char init_bytes[32] = {0};
  const ref_val init = tsg_init_value(c->op, acc);
  ref_store(init_bytes, init);
  akx_scan_opts o = akx_scan_opts_default();
  o.acc = c->acc;
  o.init = c->with_init ? init_bytes : NULL;
  o.exclusive = c->exclusive;
  o.block_size = c->block_size;
  o.items_per_thread = c->items_per_thread;
  const akx_status st = akx_scan_by_key(ctx, &dst.dev, &keys.dev, &src.dev, c->op, &o);
  int ok = status_ok(st, AKX_SUCCESS, "akx_scan_by_key", desc, msg, len) && synchronized(ctx, desc, msg, len);
  unsigned char *after = read_back(ctx, dst.dev_base, &Ld, dst_t);
  if (ok && c->check == TSG_CHECK_VALUES)
    ok = check_scan_values(c, &truth, &src.host, after, &Ld, dst_t, acc, c->with_init ? &init : NULL, desc, msg, len);
  ok = ok && kept(after, dst_before, &Ld, dst_t, view_element, NULL, "dst", desc, msg, len);
  ok = ok && input_kept(ctx, keys.dev_base, kp, &Lk, c->key_t, "keys", desc, msg, len);
  if (!c->in_place) ok = ok && input_kept(ctx, src.dev_base, sp, &Ls, c->src_t, "src", desc, msg, len);
  set_result(res, after, dst_before, parent_bytes(&Ld, dst_t), truth.nseg, st);
  tsg_free(&truth);
  tvw_free(ctx, &keys);
  tvw_free(ctx, &src);
  if (!c->in_place) {
    tvw_free(ctx, &dst);
    free(dst_before);
  }
  free(kp);
  free(sp);
  return ok;
}

/* ---- rigs ---------------------------------------------------------------------------------------- */

tsg_rig tsg_rig_make(akx_context *ctx, akx_dtype src_t, const void *src_flat, const tsg_offsets *o,
                     akx_dtype off_t, akx_dtype dst_t, int64_t dst_len) {
  tsg_rig r;
  memset(&r, 0, sizeof r);
  const tfx_layout Ls = tfx_layout_vector(o->n);
  r.src = tvw_upload(ctx, src_t, src_flat, &Ls);
  r.offs = tsg_upload_offsets(ctx, o, off_t, 1, &r.seen);
  r.Ld = tsg_layout(dst_len, 1, GUARD);
  r.dst_t = dst_t;
  r.dst_before = output_parent(&r.Ld, dst_t, 0, 0);
  r.dst = tvw_upload(ctx, dst_t, r.dst_before, &r.Ld);
  return r;
}

unsigned char *tsg_rig_read(akx_context *ctx, const tsg_rig *r) { return read_back(ctx, r->dst.dev_base, &r->Ld, r->dst_t); }

const unsigned char *tsg_rig_at(const tsg_rig *r, const unsigned char *parent, int64_t i) {
  return parent + at(&r->Ld, i) * (int64_t)ref_size(r->dst_t);
}

int tsg_rig_guards_kept(const tsg_rig *r, const unsigned char *after) {
  char msg[8];
  return kept(after, r->dst_before, &r->Ld, r->dst_t, view_element, NULL, "dst", "", msg, sizeof msg);
}

int tsg_rig_untouched(const tsg_rig *r, const unsigned char *after, int64_t i) {
  const size_t sz = ref_size(r->dst_t);
  return memcmp(after + at(&r->Ld, i) * (int64_t)sz, r->dst_before + at(&r->Ld, i) * (int64_t)sz, sz) == 0;
}

void tsg_rig_free(akx_context *ctx, tsg_rig *r) {
  tvw_free(ctx, &r->src);
  tvw_free(ctx, &r->dst);
  tsg_free_offsets(ctx, &r->offs);
  tsg_free(&r->seen);
  free(r->dst_before);
}

void tsg_assert_same_bits(akx_context *ctx, tsg_runner run, tsg_case c, int schedule_base) {
  tsg_offsets pats[2] = {tsg_power_law(3000, 3000, 77), tsg_one_big(1 << 18, 100, 78)};
  c.fill_flags = REF_FILL_ROUGH;
  for (int p = 0; p < 2; ++p) {
    tsg_result first, again;
    char msg[1536];
    cr_assert(run(ctx, &c, &pats[p], 99, &first, msg, sizeof msg), "%s", msg);
    for (int k = 0; k < 3; ++k) {
      akx_context *use = ctx;
      if (k > 0) {
        char sched[32];
        snprintf(sched, sizeof sched, "random:%d", schedule_base + k);
        setenv("AKX_SIM_SCHEDULE", sched, 1);
        use = tfx_open();
      }
      cr_assert(run(use, &c, &pats[p], 99, &again, msg, sizeof msg), "%s", msg);
      cr_assert(memcmp(first.out, again.out, first.out_bytes) == 0, "%s: call %d gave other bits than the first",
                pats[p].name, k);
      free(again.out);
      if (k > 0) {
        tfx_close(use);
        unsetenv("AKX_SIM_SCHEDULE");
      }
    }
    free(first.out);
    tsg_free(&pats[p]);
  }
}
