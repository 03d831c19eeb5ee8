/* The scan checker (scan_check.h). */
#include "scan_check.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

tsc_case tsc_case_make(akx_dtype t, akx_op op) {
  tsc_case c;
  memset(&c, 0, sizeof c);
  c.op = op;
  c.src_t = t;
  c.dst_t = AKX_DTYPE_AUTO;
  c.acc = AKX_DTYPE_AUTO;
  c.dim = 0;
  return c;
}

const char *tsc_describe(const tfx_layout *L, const tsc_case *c, char *buf, size_t len) {
  int k = snprintf(buf, len, "%s %s dim %d%s%s shape {", ref_name(c->src_t), ref_op_name(c->op),
                   (int)c->dim, c->exclusive ? " exclusive" : "", c->with_init ? " init" : "");
  for (int32_t d = 0; d < L->ndim && k < (int)len; ++d)
    k += snprintf(buf + k, len - (size_t)k, "%s%lld", d ? ", " : "", (long long)L->shape[d]);
  if (k < (int)len) k += snprintf(buf + k, len - (size_t)k, "} strides {");
  for (int32_t d = 0; d < L->ndim && k < (int)len; ++d)
    k += snprintf(buf + k, len - (size_t)k, "%s%lld", d ? ", " : "", (long long)L->strides[d]);
  if (k < (int)len)
    snprintf(buf + k, len - (size_t)k, "} offset %lld dst %s layout %d bs %d ipt %d",
             (long long)L->offset, ref_name(c->dst_t), c->dst_layout, (int)c->block_size,
             (int)c->items_per_thread);
  return buf;
}

/* A non-trivial init for op in acc: small, so that sums stay exact. */
static ref_val make_init(akx_op op, akx_dtype acc) {
  if (ref_is_bool(acc)) return ref_int(acc, op == AKX_OP_AND ? 1 : 1);
  if (ref_is_complex(acc)) return ref_cplx(acc, op == AKX_OP_MUL ? 1.0L : 3.0L, -1.0L);
  if (ref_is_float(acc)) return ref_real(acc, op == AKX_OP_MUL ? -1.0L : op == AKX_OP_MIN ? 0.5L : 3.0L);
  switch (op) {
    case AKX_OP_MUL: return ref_int(acc, ref_is_sint(acc) ? -1 : 3);
    case AKX_OP_AND: return ref_int(acc, 0x7d);
    case AKX_OP_MIN: return ref_int(acc, 5);
    default: return ref_int(acc, 3);
  }
}

int tsc_run(akx_context *ctx, const tfx_layout *L, const tsc_case *c, uint64_t seed, char *msg,
            size_t len) {
  char desc[512];
  tsc_describe(L, c, desc, sizeof desc);
  const akx_dtype acc = c->acc == AKX_DTYPE_AUTO ? ref_auto_acc(c->src_t, AKX_MAP_IDENTITY, c->op) : c->acc;
  const akx_dtype dst_t = c->dst_layout == TSC_IN_PLACE ? c->src_t
                          : c->dst_t == AKX_DTYPE_AUTO ? acc : c->dst_t;
  const size_t ssz = ref_size(c->src_t), dsz = ref_size(dst_t);
  const int64_t count = tfx_layout_count(L);
  int32_t dim = c->dim;
  const int whole_nd = dim == AKX_DIM_ALL && L->ndim >= 2;
  if (dim == AKX_DIM_ALL && L->ndim == 1) dim = 0;
  const int64_t n = whole_nd ? count : L->ndim == 0 ? 1 : L->shape[dim];

  unsigned char *parent = tfx_xmalloc((size_t)(L->parent_n > 0 ? L->parent_n : 1) * ssz);
  ref_fill(parent, c->src_t, L->parent_n, AKX_MAP_IDENTITY, c->op, acc, n + 1, seed, c->fill_flags);
  unsigned char *dev_parent = tfx_upload(ctx,
                                         parent, (size_t)(L->parent_n > 0 ? L->parent_n : 1) * ssz);
  akx_array src;
  memset(&src, 0, sizeof src);
  src.data = dev_parent + L->offset * (int64_t)ssz;
  src.dtype = c->src_t;
  src.ndim = L->ndim;
  memcpy(src.shape, L->shape, sizeof src.shape);
  memcpy(src.strides, L->strides, sizeof src.strides);

  /* dst: a compact buffer in C, F or reversed-C order, or the view itself */
  akx_array dst = src;
  unsigned char *dev_dst = NULL;
  int64_t dst_elems = count > 0 ? count : 1;
  if (c->dst_layout == TSC_DST_LIKE_SRC) dst_elems = L->parent_n > 0 ? L->parent_n : 1;
  if (c->dst_layout != TSC_IN_PLACE) {
    dst.dtype = dst_t;
    int64_t s = 1;
    if (c->dst_layout == TSC_DST_F) {
      for (int32_t d = 0; d < L->ndim; ++d) { dst.strides[d] = s; s *= L->shape[d] > 0 ? L->shape[d] : 1; }
    } else {
      for (int32_t d = L->ndim - 1; d >= 0; --d) { dst.strides[d] = s; s *= L->shape[d] > 0 ? L->shape[d] : 1; }
    }
    unsigned char *garbage = tfx_xmalloc((size_t)dst_elems * dsz);
    memset(garbage, 0xab, (size_t)dst_elems * dsz);
    dev_dst = tfx_upload(ctx, garbage, (size_t)dst_elems * dsz);
    free(garbage);
    dst.data = dev_dst;
    if (c->dst_layout == TSC_DST_LIKE_SRC) {
      memcpy(dst.strides, L->strides, sizeof dst.strides);
      dst.data = dev_dst + L->offset * (int64_t)dsz;
    }
    if (c->dst_layout == TSC_DST_REVERSED) { /* every dim walked backwards */
      int64_t off = 0;
      for (int32_t d = 0; d < L->ndim; ++d) {
        if (L->shape[d] > 0) off += (L->shape[d] - 1) * dst.strides[d];
        dst.strides[d] = -dst.strides[d];
      }
      dst.data = dev_dst + off * (int64_t)dsz;
    }
  }

  ref_val init = make_init(c->op, acc);
  unsigned char init_bytes[16] = {0};
  ref_store(init_bytes, init);
  akx_scan_opts o = akx_scan_opts_default();
  o.acc = c->acc;
  o.exclusive = c->exclusive;
  o.init = c->with_init ? init_bytes : NULL;
  o.block_size = c->block_size;
  o.items_per_thread = c->items_per_thread;
  const akx_status st = akx_scan(ctx, &dst, &src, c->op, c->dim, &o);
  int ok = 1;
  if (st != AKX_SUCCESS) {
    snprintf(msg, len, "%s: akx_scan returned %s: %s", desc, akx_status_string(st), akx_last_error());
    ok = 0;
  }
  /* host mirrors */
  unsigned char *out_parent = NULL, *out_dst = NULL;
  if (ok) {
    if (c->dst_layout == TSC_IN_PLACE) {
      out_parent = tfx_xmalloc((size_t)(L->parent_n > 0 ? L->parent_n : 1) * ssz);
      tfx_to_host(ctx, out_parent, dev_parent, (size_t)(L->parent_n > 0 ? L->parent_n : 1) * ssz);
    } else {
      out_dst = tfx_xmalloc((size_t)dst_elems * dsz);
      tfx_to_host(ctx, out_dst, dev_dst, (size_t)dst_elems * dsz);
    }
  }
  /* AKX_DIM_ALL over N-d: a single dim of size > 1 is walked along its stride */
  int32_t long_dim = -1, long_dims = 0;
  for (int32_t d = 0; d < L->ndim; ++d)
    if (L->shape[d] > 1) { long_dim = d; ++long_dims; }
  if (long_dims != 1) long_dim = -1;
  /* walk: every slice (multi-index with index 0 along dim), then along dim */
  int64_t idx[AKX_MAX_DIMS] = {0};
  const int64_t slices = whole_nd ? 1 : (L->ndim == 0 ? 1 : (L->shape[dim] ? count / L->shape[dim] : 0));
  const int64_t dst_base = (int64_t)((unsigned char *)dst.data - (c->dst_layout == TSC_IN_PLACE ? dev_parent : dev_dst)) / (int64_t)dsz;
  for (int64_t s = 0; ok && s < slices && count > 0; ++s) {
    /* idx = the s-th multi-index over the dims other than dim (C order) */
    int64_t r = s;
    for (int32_t d = L->ndim - 1; d >= 0; --d) {
      if (d == dim && !whole_nd) { idx[d] = 0; continue; }
      idx[d] = r % L->shape[d];
      r /= L->shape[d];
    }
    ref_acc a;
    ref_acc_init(&a, c->op, acc);
    if (c->with_init) ref_acc_add(&a, init);
    for (int64_t i = 0; ok && i < n; ++i) {
      int64_t soff = L->offset, doff = dst_base;
      if (whole_nd && long_dim >= 0) { /* one dim of size > 1: a strided vector */
        soff += i * L->strides[long_dim];
        doff += i * dst.strides[long_dim];
      } else if (whole_nd) { /* memory order of a contiguous src: position i */
        soff += i;
        doff += i;
      } else {
        if (L->ndim) idx[dim] = i;
        for (int32_t d = 0; d < L->ndim; ++d) { soff += idx[d] * L->strides[d]; doff += idx[d] * dst.strides[d]; }
      }
      const ref_val x = ref_convert(ref_load_at(parent, c->src_t, soff), acc);
      ref_expect e;
      if (c->exclusive) {
        if (i == 0) e = ref_expect_exact(c->with_init ? init : ref_neutral(c->op, acc));
        else e = ref_acc_expect(&a);
      }
      ref_acc_add(&a, x);
      if (!c->exclusive) e = ref_acc_expect(&a);
      e = ref_expect_convert(&e, dst_t);
      const unsigned char *got = c->dst_layout == TSC_IN_PLACE ? out_parent + doff * (int64_t)dsz
                                                               : out_dst + doff * (int64_t)dsz;
      char why[256];
      if (!ref_check(got, &e, why, sizeof why)) {
        snprintf(msg, len, "%s: slice %lld element %lld: %s", desc, (long long)s, (long long)i, why);
        ok = 0;
      }
    }
  }
  free(out_parent);
  free(out_dst);
  free(parent);
  tfx_free(ctx, dev_parent);
  if (dev_dst) tfx_free(ctx, dev_dst);
  return ok;
}
