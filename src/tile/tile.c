/* The tile layer (src/tile/tile.h, docs/tile.md): the look-back's host side, the tile tuning,
 * the count-back, and the op rules the planners of two families share. Moved here from
 * src/scan/scan.c and src/reduce/reduce_whole.c, unchanged, so that src/segmented/ calls no
 * other planner (tests/test_layers.py: the planners are peers). */
#include <string.h>
#include "tile/tile.h"
#include "jit/user_op.h"

/* ---- the look-back ------------------------------------------------------------------------------ */

akx__ws_need akx__lookback_need(int64_t tiles, size_t node) {
  /* kernels/akx/lookback.cuh: the header and a flag per tile in the tags, a node per tile in
   * the scratch. */
  const akx__ws_need need = {{1, tiles, 0, 0}, (size_t)tiles * node, 0, 0};
  return need;
}

size_t akx__lookback_bytes(int64_t tiles, size_t node) {
  const akx__ws_need need = akx__lookback_need(tiles, node);
  return akx__ws_need_bytes(&need);
}

akx_status akx__lookback_take(akx_context *ctx, const akx__ws_need *need, akx__lookback_plan *lp,
                              akx__ws_grant *g) {
  AKX_TRY(akx__workspace_lookback(ctx, need, g));
  lp->status = g->ptr;
  lp->epoch = g->epoch;
  lp->reset_status = !g->trusted;
  lp->reset_flags = g->reset_flags;
  lp->nodes_at = (int64_t)((char *)g->scratch - (char *)g->ptr);
  return AKX_SUCCESS;
}

akx_status akx__tile_count_back(akx_context *ctx, const void *status, int64_t *counts, int ncounts, akx_where where) {
  const char *at = (const char *)status + akx__lookback_count_offset;
  if (ncounts != 1 && ncounts != 2)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "ncounts is %d; the look-back header holds 1 or 2 counts", ncounts);
  const size_t bytes = (size_t)ncounts * sizeof *counts;
  if (where == AKX_HOST) return ctx->be->memcpy(ctx, counts, at, bytes, AKX_COPY_DEVICE_TO_HOST);
  if (where != AKX_DEVICE)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "where is %d; it must be AKX_HOST or AKX_DEVICE", (int)where);
  /* CUDA: enqueued behind the launch that stored the counts, not waited for. The sim's launches
   * and copies run at once and its memcpy waits for nothing (src/sim/backend_sim.cpp,
   * sim_memcpy): its copy is that enqueue. */
  if (ctx->be->kind == AKX_BACKEND_CUDA) return akx__cuda_copy_async(ctx, counts, at, bytes);
  return ctx->be->memcpy(ctx, counts, at, bytes, AKX_COPY_DEVICE_TO_DEVICE);
}

akx_status akx__tile_check_counts(const akx_context *ctx, const int64_t *counts, int ncounts, akx_where where,
                                  const char *name, const char *call) {
  if (!counts) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "%s is NULL", name);
  if ((int)where != AKX_HOST && (int)where != AKX_DEVICE)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "where is %d; it must be AKX_HOST or AKX_DEVICE", (int)where);
  if (where == AKX_DEVICE) {
    /* The copy writes int64: a misaligned address faults on the GPU after the launch ran. */
    if ((uintptr_t)counts % sizeof *counts != 0)
      return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "%s = %p is not aligned to int64 (8 bytes)", name,
                       (const void *)counts);
    if (ctx->be->is_device_range(ctx, counts, (size_t)ncounts * sizeof *counts) == 0)
      return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                       "%s = %p is not %d int64 of this context's device memory, but where is AKX_DEVICE", name,
                       (const void *)counts, ncounts);
    return AKX_SUCCESS;
  }
  return akx__refuse_if_capturing(ctx, call,
                                  "its count comes back to the host (where = AKX_HOST: the call copies it and "
                                  "waits for it)",
                                  "capture it with where = AKX_DEVICE: the count then stays in device memory");
}

akx_status akx__tile_counts_apart(const int64_t *counts, int ncounts, akx_where where, const char *name,
                                  const akx_array *a, const akx__extent *ae, const char *aname) {
  if (where != AKX_DEVICE) return AKX_SUCCESS;
  const akx_array c = akx_vector((void *)counts, AKX_INT64, ncounts);
  const akx__extent ce = {ncounts, 0, ncounts - 1};
  return akx__check_disjoint(&c, &ce, name, a, ae, aname);
}

akx_status akx__tile_counts_zero(akx_context *ctx, int64_t *counts, int ncounts, akx_where where) {
  if (where == AKX_DEVICE) return ctx->be->zero(ctx, counts, (size_t)ncounts * sizeof *counts);
  for (int i = 0; i < ncounts; ++i) counts[i] = 0;
  return AKX_SUCCESS;
}

/* ---- the tuning and the ops' rules ---------------------------------------------------------------- */

akx__tuning akx__scan_tile_tuning(const akx_context *ctx, size_t partial_size, int32_t block_size,
                                  int32_t items_per_thread) {
  const akx__tuning over = {block_size, items_per_thread, 0};
  return akx__tuning_lookup(AKX__TUNE_SCAN_TILE, ctx->info.cc_major, ctx->info.cc_minor,
                            partial_size, &over);
}

akx_status akx__scan_resolve_op(akx_context *ctx, akx_dtype src, akx_op op, const akx_scan_opts *opts,
                                const char *call, akx_dtype *acc, akx__user_op **user) {
  *acc = AKX_DTYPE_AUTO;
  *user = NULL;
  AKX_TRY(akx__user_op_resolve(ctx, op, src, AKX_MAP_IDENTITY, opts ? (int32_t)opts->acc : AKX_DTYPE_AUTO, 0, call,
                               user));
  if (*user) {
    /* dst takes any dtype: the op's store (or D(a)) converts. */
    if (opts && opts->exclusive && !opts->init && !(*user)->info.has_identity)
      return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                       "opts->exclusive with op %d, which has no identity, needs opts->init: nothing "
                       "gives the first output", (int)op);
  } else {
    AKX_TRY(akx__resolve_acc(src, AKX_MAP_IDENTITY, op, opts ? (int32_t)opts->acc : AKX_DTYPE_AUTO, acc));
    /* resolve_acc took every accumulator the reductions take; dst may be any dtype: the store
     * converts once (combinations outside the prebuilt set compile at run time). */
  }
  if (opts && opts->exclusive && !opts->init && (op == AKX_OP_MIN || op == AKX_OP_MAX))
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "opts->exclusive with op %s needs opts->init: %s has no neutral element for "
                     "the first output (as numpy)",
                     akx__op_name(op), akx__op_name(op));
  return AKX_SUCCESS;
}

void akx__reduce_finish_from_opts(akx__finish *f, const akx_reduce_opts *opts, akx_dtype acc,
                                  const akx__user_op *user, void *dst, akx_dtype dst_dtype) {
  memset(f, 0, sizeof *f);
  f->dst = dst;
  f->dst_dtype = dst_dtype;
  f->fold = opts ? opts->fold : 0;
  if (opts && opts->init) {
    f->has_init = 1;
    akx__acc_init(f->init, opts->init, acc, user);
  }
}
