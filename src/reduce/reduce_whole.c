/* Whole-array reductions: akx_mapreduce, and the one-element case of akx_reduce_dims.
 * The ladder: validate -> canonicalise -> plan (tuning) -> workspace -> launch -> finish. */
#include <inttypes.h>
#include <string.h>
#include "internal.h"
#include "reduce_whole.h"
#include "tuning.h"

/* Everything akx_mapreduce checks but the context; ctx may be NULL (the result-dtype query)
 * when src_flags does not ask for memory checks. */
static akx_status check_args(const akx_context *ctx, const akx_array *src, akx_map map, akx_op op,
                             const akx_reduce_opts *opts, int src_flags, akx__extent *ext,
                             akx_dtype *acc) {
  AKX_TRY(akx__check_array(ctx, src, "src", src_flags, ext));
  if ((unsigned)map >= AKX_MAP_COUNT)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "map is %d, which is not an akx_map", (int)map);
  if ((unsigned)op >= AKX_OP_COUNT)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "op is %d, which is not an akx_op", (int)op);
  AKX_TRY(akx__check_reduce_opts(ctx, opts));
  AKX_TRY(akx__resolve_acc(src->dtype, map, op, opts ? (int32_t)opts->acc : AKX_DTYPE_AUTO, acc));
  /* With fold the previous value is the answer (Julia's maximum!(r, A; init=false) keeps r):
   * the neutral element the kernel starts from is then only combined with it. */
  if (ext->count == 0 && (op == AKX_OP_MIN || op == AKX_OP_MAX) && !(opts && opts->init) &&
      !(opts && opts->fold))
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "src is empty and op %s has no neutral value to return: pass opts->init "
                     "or opts->fold (numpy refuses the same)",
                     akx__op_name(op));
  return AKX_SUCCESS;
}

akx_status akx__reduce_whole_check(const akx_context *ctx, const akx_array *src, akx_map map,
                                   akx_op op, const akx_reduce_opts *opts, int src_flags,
                                   akx__extent *ext, akx_dtype *acc) {
  AKX_TRY(akx__check_context(ctx));
  return check_args(ctx, src, map, op, opts, src_flags, ext, acc);
}

static akx__tuning tuning_for(const akx_context *ctx, akx_dtype acc, const akx_reduce_opts *opts) {
  akx__tuning over = {0, 0, 0};
  if (opts) over = (akx__tuning){opts->block_size, opts->items_per_thread, opts->target_blocks};
  return akx__tuning_lookup(AKX__FAMILY_REDUCE_WHOLE, ctx->info.cc_major, ctx->info.cc_minor,
                            akx_dtype_size(acc), &over);
}

size_t akx__reduce_whole_workspace(const akx_context *ctx, akx_dtype acc, const akx_reduce_opts *opts) {
  /* target_blocks partials and one slot for a bare host result, whatever n: the size only
   * grows with the options, never shrinks with n. */
  const akx__tuning t = tuning_for(ctx, acc, opts);
  return AKX__ROUND_UP(((size_t)t.target_blocks + 1) * akx_dtype_size(acc), 256);
}

akx_status akx__reduce_whole_run(akx_context *ctx, const akx_array *src, const akx__extent *ext,
                                 akx_map map, akx_op op, const akx_reduce_opts *opts,
                                 akx_dtype acc, const akx__finish *finish, void *host_result) {
  akx__reduce_whole_plan p;
  memset(&p, 0, sizeof p);
  if (ext->count > 0) akx__canonical_source(src, ext, &p.src);
  p.src.dtype = src->dtype;
  p.src.n = ext->count;
  p.map = map;
  p.op = op;
  p.acc = acc;
  const akx__tuning t = tuning_for(ctx, acc, opts);
  p.block_size = t.block_size;
  p.items_per_thread = t.items_per_thread;
  /* A tile is what one block loads per step (include/akx/reduce_whole.cuh): block_size threads
   * of items_per_thread elements, at least one 16-byte vector each. */
  const int64_t vec = 16 / (int64_t)akx_dtype_size(src->dtype);
  const int64_t per_thread = t.items_per_thread > vec ? t.items_per_thread / vec * vec : vec;
  const int64_t tile = (int64_t)t.block_size * (p.src.contiguous ? per_thread : t.items_per_thread);
  const int64_t tiles = ext->count / tile + (ext->count % tile != 0); /* no overflow near INT64_MAX */
  p.blocks = (int32_t)(tiles < 1 ? 1 : tiles > t.target_blocks ? t.target_blocks : tiles);
  p.finish = *finish;
  p.finish.empty = ext->count == 0;

  void *ws;
  AKX_TRY(akx__workspace(ctx, akx__reduce_whole_workspace(ctx, acc, opts), &ws));
  p.partials = ws;
  const size_t acc_size = akx_dtype_size(acc);
  void *slot = (char *)ws + (size_t)p.blocks * acc_size;
  if (host_result) {
    p.finish.bare = 1;
    p.finish.dst = slot;
  }
  AKX_TRY(ctx->be->reduce_whole(ctx, &p));
  if (!host_result) return AKX_SUCCESS;
  _Alignas(16) unsigned char bare[16];
  AKX_TRY(ctx->be->memcpy(ctx, bare, slot, acc_size, AKX_COPY_DEVICE_TO_HOST));
  akx__finish host = p.finish;
  host.bare = 0;
  host.dst = host_result;
  return akx__finish_host(op, acc, bare, &host);
}

static void finish_from_opts(akx__finish *f, const akx_reduce_opts *opts, akx_dtype acc,
                             void *dst, akx_dtype dst_dtype) {
  memset(f, 0, sizeof *f);
  f->dst = dst;
  f->dst_dtype = dst_dtype;
  f->fold = opts ? opts->fold : 0;
  if (opts && opts->init) {
    f->has_init = 1;
    memcpy(f->init, opts->init, akx_dtype_size(acc));
  }
}

static akx_status mapreduce_locked(akx_context *ctx, const akx_array *src, akx_map map, akx_op op,
                         const akx_reduce_opts *opts, void *result, akx_where where) {
  akx__extent ext;
  akx_dtype acc;
  AKX_TRY(akx__reduce_whole_check(ctx, src, map, op, opts, AKX__ARRAY_SOURCE | AKX__ARRAY_MEMORY, &ext, &acc));
  if (!result) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "result is NULL");
  if ((int)where != AKX_HOST && (int)where != AKX_DEVICE)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "where is %d; it must be AKX_HOST or AKX_DEVICE", (int)where);
  if (where == AKX_DEVICE) {
    /* The finishing store writes one accumulator there: a misaligned one faults on the GPU
     * (a sticky error) after pass 1 has run. */
    const size_t align = akx__dtype_alignment(acc);
    if ((uintptr_t)result % align != 0)
      return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                       "result = %p is not aligned to its %s accumulator (%zu bytes)", result,
                       akx_dtype_name(acc), align);
    if (ctx->be->is_device_range(ctx, result, akx_dtype_size(acc)) == 0)
      return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                       "result = %p is not device memory of this context, but where is AKX_DEVICE",
                       result);
  }
  if (where == AKX_HOST)
    AKX_TRY(akx__refuse_if_capturing(ctx, "akx_mapreduce",
                                     "a host result (where = AKX_HOST) is copied back and waited "
                                     "for",
                                     "capture it with where = AKX_DEVICE and copy the result "
                                     "after the graph ran"));
  akx__finish f;
  finish_from_opts(&f, opts, acc, result, acc);
  return akx__reduce_whole_run(ctx, src, &ext, map, op, opts, acc, &f,
                               where == AKX_HOST ? result : NULL);
}

akx_status akx_mapreduce_workspace_size(const akx_context *ctx, const akx_array *src, akx_map map,
                                        akx_op op, const akx_reduce_opts *opts, size_t *bytes) {
  akx__extent ext;
  akx_dtype acc;
  /* Shapes and dtypes only (zstd's size queries): src->data need not exist yet. */
  AKX_TRY(akx__reduce_whole_check(ctx, src, map, op, opts, AKX__ARRAY_SOURCE, &ext, &acc));
  if (!bytes) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "bytes is NULL");
  *bytes = akx__reduce_whole_workspace(ctx, acc, opts);
  return AKX_SUCCESS;
}

akx_status akx_mapreduce_result_dtype(const akx_array *src, akx_map map, akx_op op,
                                      const akx_reduce_opts *opts, akx_dtype *dtype) {
  akx__extent ext;
  akx_dtype acc;
  AKX_TRY(check_args(NULL, src, map, op, opts, AKX__ARRAY_SOURCE, &ext, &acc));
  if (!dtype) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "dtype is NULL");
  *dtype = acc;
  return AKX_SUCCESS;
}

akx_status akx__reduce_whole_into(akx_context *ctx, const akx_array *dst, const akx_array *src,
                                  const akx__extent *ext, akx_map map, akx_op op,
                                  const akx_reduce_opts *opts, akx_dtype acc) {
  akx__finish f;
  finish_from_opts(&f, opts, acc, dst->data, dst->dtype);
  return akx__reduce_whole_run(ctx, src, ext, map, op, opts, acc, &f, NULL);
}

akx_status akx_mapreduce(akx_context *ctx, const akx_array *src, akx_map map, akx_op op,
                         const akx_reduce_opts *opts, void *result, akx_where where) {
  return AKX_LOCKED(ctx, mapreduce_locked(ctx, src, map, op, opts, result, where));
}
