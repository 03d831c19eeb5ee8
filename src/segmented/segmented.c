/* The segmented calls: akx_segmented_reduce, akx_segmented_scan, akx_reduce_by_key,
 * akx_scan_by_key (docs/segmented.md). validate -> plan (the scan tile's tuning, the segment
 * tile's shared memory) -> the look-back's workspace -> one launch of the segment tile
 * (kernels/akx/segment_tile.cuh). Every check runs before anything changes, and the size
 * queries run the calls' own plan, so that the two never disagree. */
#include <inttypes.h>
#include <string.h>
#include "internal.h"
#include "akx/block_limits.h"
#include "jit/user_op.h"
#include "launch/route.h"
#include "segment_shared.h"
#include "tile/tile.h"

/* ---- checks ------------------------------------------------------------------------------------- */

/* offsets: 1-d, int32 or int64, nseg + 1 entries (`nseg_of` names where nseg comes from: dst's
 * length); NULL nseg_of: any number of segments, so at least the one entry (the scans). */
static akx_status check_offsets(const akx_context *ctx, const akx_array *offsets, int64_t nseg, const char *nseg_of,
                                int memory, akx__extent *e) {
  AKX_TRY(akx__check_line(ctx, offsets, "offsets", AKX__ARRAY_SOURCE | memory, e));
  if (offsets->dtype != AKX_INT32 && offsets->dtype != AKX_INT64)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "offsets->dtype is %s; offsets are int32 or int64",
                     akx_dtype_name(offsets->dtype));
  if (!nseg_of && offsets->shape[0] < 1)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "offsets->shape[0] is 0; offsets hold nseg + 1 entries, at least 1");
  if (nseg_of && offsets->shape[0] != nseg + 1)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "offsets->shape[0] is %" PRId64 "; it must be %s + 1 = %" PRId64 " (segment s is "
                     "[offsets[s], offsets[s + 1]))", offsets->shape[0], nseg_of, nseg + 1);
  return AKX_SUCCESS;
}

/* Refuses b meeting a, where both have elements (the calls' overlap rule). */
static akx_status disjoint(const akx_array *a, const akx__extent *ea, const char *na, const akx_array *b,
                           const akx__extent *eb, const char *nb) {
  if (ea->count == 0 || eb->count == 0) return AKX_SUCCESS;
  return akx__check_disjoint(a, ea, na, b, eb, nb);
}

/* The tile's overrides: the scan tiles' block (at most the launch bounds) and at most a word of
 * heads per run, AKX__SEGMENT_TILE_MAX elements a tile (kernels/akx/segmented_plan.h). */
static akx_status check_tile_opts(const akx_context *ctx, int32_t block_size, int32_t items) {
  AKX_TRY(akx__check_block_size(ctx, block_size, AKX_MAX_BLOCK_SCAN, "segmented"));
  AKX_TRY(akx__check_items_per_thread(items, AKX__SEGMENT_RUN_MAX));
  if (block_size > 0 && items > 0 && (int64_t)block_size * items > AKX__SEGMENT_TILE_MAX)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "opts->block_size %d x opts->items_per_thread %d is a tile of %" PRId64 " elements; a "
                     "segment tile holds at most %d", (int)block_size, (int)items, (int64_t)block_size * items,
                     AKX__SEGMENT_TILE_MAX);
  return AKX_SUCCESS;
}

/* The reductions' op, map and accumulator (as akx_reduce_dims takes them), and dst's dtype for
 * ARGMIN/ARGMAX. */
static akx_status check_reduce_op(akx_context *ctx, const akx_array *src, const akx_array *dst,
                                  const char *dst_name, akx_map map, akx_op op, const akx_reduce_opts *opts, const char *call, akx_dtype *acc,
                                  akx__user_op **user) {
  if ((unsigned)map >= AKX_MAP_COUNT)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "map is %d, which is not an akx_map", (int)map);
  AKX_TRY(akx__check_op(op));
  AKX_TRY(akx__check_reduce_opts(ctx, opts));
  if (opts) AKX_TRY(check_tile_opts(ctx, opts->block_size, opts->items_per_thread));
  *user = NULL;
  *acc = AKX_DTYPE_AUTO;
  if (akx_op_has_own_accumulator(op))
    AKX_TRY(akx__user_op_resolve(ctx, op, src->dtype, map, opts ? (int32_t)opts->acc : AKX_DTYPE_AUTO,
                                 opts ? opts->fold : 0, call, user));
  else
    AKX_TRY(akx__resolve_acc(src->dtype, map, op, opts ? (int32_t)opts->acc : AKX_DTYPE_AUTO, acc));
  if ((op == AKX_OP_ARGMIN || op == AKX_OP_ARGMAX) && dst->dtype != AKX_INT64 && dst->dtype != src->dtype)
    return akx__fail(AKX_ERROR_UNSUPPORTED,
                     "%s->dtype is %s; op %s stores the int64 position, or the value into a dst of src's dtype (%s)",
                     dst_name, akx_dtype_name(dst->dtype), akx__op_name(op),
                     akx_dtype_name(src->dtype));
  return AKX_SUCCESS;
}

/* The scans' op and accumulator (as akx_scan takes them). */
static akx_status check_scan_op(akx_context *ctx, const akx_array *src, akx_op op, const akx_scan_opts *opts,
                                const char *call, akx_dtype *acc, akx__user_op **user) {
  if (op == AKX_OP_ARGMIN || op == AKX_OP_ARGMAX)
    return akx__fail(AKX_ERROR_UNSUPPORTED, "op is %s, a reduction only: it has no scan", akx__op_name(op));
  AKX_TRY(akx__check_op(op));
  AKX_TRY(akx__check_scan_opts(ctx, opts));
  if (opts) AKX_TRY(check_tile_opts(ctx, opts->block_size, opts->items_per_thread));
  return akx__scan_resolve_op(ctx, src->dtype, op, opts, call, acc, user);
}

/* ---- the plan ----------------------------------------------------------------------------------- */

/* What an empty segment writes (include/akx.h, akx_segmented_reduce). */
static int32_t empty_rule(akx_op op, const akx__user_op *u, const akx_reduce_opts *o, akx_dtype dst) {
  const int init = o && o->init, fold = o && o->fold;
  if ((op == AKX_OP_ARGMIN || op == AKX_OP_ARGMAX) && !init)
    return dst == AKX_INT64 && !fold ? AKX__SEGMENT_EMPTY_MINUS_ONE : AKX__SEGMENT_EMPTY_LEAVE;
  /* A fold stores dst's value o nothing through the accumulator, as every fold does (a float
   * dst of a uint8 MAX comes back converted); the finish takes the identity as that nothing. */
  if (init || fold) return AKX__SEGMENT_EMPTY_VALUE;
  if (u && !u->info.has_identity) return AKX__SEGMENT_EMPTY_LEAVE;
  return AKX__SEGMENT_EMPTY_VALUE;
}

/* The tile (the scan tiles' tuning row for the tile's nodes, at most a word of heads per run and
 * AKX__SEGMENT_TILE_MAX elements), its shared memory, its tiles, and the look-back's need. */
static akx_status size_tiles(const akx_context *ctx, int32_t block_size, int32_t items, size_t acc_size,
                             size_t acc_align, int reduce, int user, akx__segmented_plan *p, akx__ws_need *need) {
  const size_t node = akx__segment_node_size(acc_size, acc_align);
  /* The tuning row of the tile's partials (the runs in shared memory hold accumulators). */
  akx__tuning t = akx__scan_tile_tuning(ctx, acc_size, block_size, items);
  if (t.items_per_thread > AKX__SEGMENT_RUN_MAX) t.items_per_thread = AKX__SEGMENT_RUN_MAX;
  while ((int64_t)t.block_size * t.items_per_thread > AKX__SEGMENT_TILE_MAX) t.items_per_thread /= 2;
  p->block_size = t.block_size;
  p->items_per_thread = t.items_per_thread;
  p->layout = ctx->settings.scan_layout;
  AKX_TRY(akx__segment_shared(ctx, acc_size, node, reduce, user, p));
  const int64_t tile = (int64_t)t.block_size * t.items_per_thread;
  p->tiles = p->n / tile + (p->n % tile != 0);
  /* A segmented reduction writes its segments even with no element (all of them empty). */
  if (reduce && !p->by_keys && p->nseg > 0 && p->tiles == 0) p->tiles = 1;
  if (p->tiles > INT32_MAX)
    return akx__fail(AKX_ERROR_UNSUPPORTED, "src has %" PRId64 " elements: %" PRId64 " tiles of %" PRId64
                     " are more than one grid holds", p->n, p->tiles, tile);
  if (reduce && !p->by_keys) {
    /* The splits' tickets (a word a tile, in the workspace's split tickets) and pieces (two
     * accumulators a tile, in the scratch): kernels/akx/segment_tile.cuh, split_arrive. */
    const akx__ws_need split = {{0, 0, 0, p->tiles}, (size_t)(2 * p->tiles) * acc_size, 0, 0};
    *need = split;
  } else {
    *need = akx__lookback_need(p->tiles, node);
    if (user && p->by_keys) {
      /* The positions' look-back (kernels/akx/segment_tile.cuh, positions_status): a second
       * flag per tile after the values' (tags: epoch-tagged, reset with them) and an int64
       * node per tile after the values' nodes. */
      need->tags.flags += p->tiles;
      need->scratch += (size_t)p->tiles * 8;
    }
  }
  return AKX_SUCCESS;
}

static void set_values(akx__segmented_plan *p, const akx_array *src, const akx__extent *e) {
  p->src = src->data;
  p->src_stride = src->shape[0] > 1 ? src->strides[0] : 1;
  p->n = e->count;
  p->src_dtype = src->dtype;
}
static void set_offsets(akx__segmented_plan *p, const akx_array *offsets) {
  p->offsets = offsets->data;
  p->offsets_stride = offsets->shape[0] > 1 ? offsets->strides[0] : 1;
  p->offsets_size = (int32_t)akx_dtype_size(offsets->dtype);
  p->nseg = offsets->shape[0] - 1;
}
static void set_keys(akx__segmented_plan *p, const akx_array *keys) {
  p->by_keys = 1;
  p->keys = keys->data;
  p->keys_stride = keys->shape[0] > 1 ? keys->strides[0] : 1;
  p->keys_size = (int32_t)akx_dtype_size(keys->dtype);
  p->keys_bool = keys->dtype == AKX_BOOL;
}
static void set_dst(akx__segmented_plan *p, const akx_array *dst) {
  p->dst = dst->data;
  p->dst_stride = dst->shape[0] > 1 ? dst->strides[0] : 1;
  p->dst_dtype = dst->dtype;
  p->dst_size = (int32_t)akx_dtype_size(dst->dtype);
}

/* The reductions' plan: akx_segmented_reduce's (keys NULL) and akx_reduce_by_key's (offsets
 * NULL; dst is values_out). */
static akx_status reduce_plan(akx_context *ctx, const akx_array *dst, const akx_array *src, const akx__extent *se,
                              const akx_array *offsets, const akx_array *keys, const akx_array *keys_out,
                              akx_map map, akx_op op, const akx_reduce_opts *opts, akx_dtype acc, akx__user_op *u,
                              akx__segmented_plan *p, akx__ws_need *need) {
  memset(p, 0, sizeof *p);
  set_values(p, src, se);
  set_dst(p, dst);
  p->acc = acc;
  p->op = u ? u->id : op;
  p->map = u ? AKX_MAP_IDENTITY : map;
  if (offsets) set_offsets(p, offsets);
  if (keys) {
    set_keys(p, keys);
    p->keys_out = keys_out->data;
    p->keys_out_stride = keys_out->shape[0] > 1 ? keys_out->strides[0] : 1;
    p->capacity = keys_out->shape[0] < dst->shape[0] ? keys_out->shape[0] : dst->shape[0];
  }
  akx__reduce_finish_from_opts(&p->finish, opts, acc, u, dst->data, dst->dtype);
  p->empty_rule = empty_rule(op, u, opts, dst->dtype);
  return size_tiles(ctx, opts ? opts->block_size : 0, opts ? opts->items_per_thread : 0, akx__acc_size(acc, u),
                    akx__acc_align(acc, u), 1, u != NULL, p, need);
}

static akx_status scan_plan(akx_context *ctx, const akx_array *dst, const akx_array *src, const akx__extent *se,
                            const akx_array *offsets, const akx_array *keys, akx_op op, const akx_scan_opts *opts,
                            akx_dtype acc, akx__user_op *u, akx__segmented_plan *p, akx__ws_need *need) {
  memset(p, 0, sizeof *p);
  set_values(p, src, se);
  set_dst(p, dst);
  p->acc = acc;
  p->op = u ? u->id : op;
  p->map = AKX_MAP_IDENTITY;
  if (offsets) set_offsets(p, offsets);
  if (keys) set_keys(p, keys);
  p->exclusive = opts && opts->exclusive;
  if (opts && opts->init) {
    p->finish.has_init = 1;
    akx__acc_init(p->finish.init, opts->init, acc, u);
  }
  return size_tiles(ctx, opts ? opts->block_size : 0, opts ? opts->items_per_thread : 0, akx__acc_size(acc, u),
                    akx__acc_align(acc, u), 0, u != NULL, p, need);
}

/* ---- the launch --------------------------------------------------------------------------------- */

static akx_status run(akx_context *ctx, int family, akx__segmented_plan *p, const akx__ws_need *need) {
  const akx__combination c =
      family == AKX__FAMILY_SEGMENTED_REDUCE ? akx__segmented_reduce_combination(p) : akx__segmented_scan_combination(p);
  /* Kernels compiled at run time are compiled (or found) before the workspace changes. */
  AKX_TRY(akx__kernels_prepare(ctx, family, (akx_dtype)c.src, (akx_dtype)c.dst, (akx_dtype)c.acc, c.op, (akx_map)c.map));
  akx__ws_grant call;
  if (need->tags.splits) { /* a segmented reduction: its split tickets, no look-back */
    AKX_TRY(akx__workspace_splits(ctx, need, &call));
    p->status = call.ptr;
    p->nodes_at = (int64_t)((char *)call.scratch - (char *)call.ptr);
    p->split_count = call.split_count;
    p->split_clear = call.split_clear;
    p->split_words = call.split_words;
    AKX_TRY(akx__launch(ctx, c, p));
    akx__workspace_splits_done(ctx, &call);
    return AKX_SUCCESS;
  }
  akx__lookback_plan lp;
  AKX_TRY(akx__lookback_take(ctx, need, &lp, &call));
  AKX__LOOKBACK_INTO(*p, lp);
  AKX_TRY(akx__launch(ctx, c, p));
  akx__workspace_lookback_done(ctx, &call);
  return AKX_SUCCESS;
}

/* ---- akx_segmented_reduce ------------------------------------------------------------------------ */

static akx_status segmented_reduce_prepare(const akx_context *cctx, const akx_array *dst, const akx_array *src,
                                           const akx_array *offsets, akx_map map, akx_op op,
                                           const akx_reduce_opts *opts, int memory, akx__segmented_plan *p,
                                           akx__ws_need *need) {
  akx_context *ctx = (akx_context *)cctx;
  const int mem = memory ? AKX__ARRAY_MEMORY : 0;
  akx__extent se, de, oe;
  AKX_TRY(akx__check_context(ctx));
  AKX_TRY(akx__check_line(ctx, src, "src", AKX__ARRAY_SOURCE | mem, &se));
  AKX_TRY(akx__check_line(ctx, dst, "dst", mem, &de));
  AKX_TRY(check_offsets(ctx, offsets, dst->shape[0], "dst->shape[0]", mem, &oe));
  akx_dtype acc;
  akx__user_op *u;
  AKX_TRY(check_reduce_op(ctx, src, dst, "dst", map, op, opts, "akx_segmented_reduce", &acc, &u));
  if (memory) {
    AKX_TRY(disjoint(dst, &de, "dst", src, &se, "src"));
    AKX_TRY(disjoint(dst, &de, "dst", offsets, &oe, "offsets"));
  }
  return reduce_plan(ctx, dst, src, &se, offsets, NULL, NULL, map, op, opts, acc, u, p, need);
}

static akx_status segmented_reduce_locked(akx_context *ctx, const akx_array *dst, const akx_array *src,
                                          const akx_array *offsets, akx_map map, akx_op op,
                                          const akx_reduce_opts *opts) {
  akx__segmented_plan p;
  akx__ws_need need;
  AKX_TRY(segmented_reduce_prepare(ctx, dst, src, offsets, map, op, opts, 1, &p, &need));
  if (p.nseg == 0) return AKX_SUCCESS;
  return run(ctx, AKX__FAMILY_SEGMENTED_REDUCE, &p, &need);
}

akx_status akx_segmented_reduce(akx_context *ctx, const akx_array *dst, const akx_array *src,
                                const akx_array *offsets, akx_map map, akx_op op, const akx_reduce_opts *opts) {
  return AKX_LOCKED(ctx, segmented_reduce_locked(ctx, dst, src, offsets, map, op, opts));
}

akx_status akx_segmented_reduce_workspace_size(const akx_context *ctx, const akx_array *dst, const akx_array *src,
                                               const akx_array *offsets, akx_map map, akx_op op,
                                               const akx_reduce_opts *opts, size_t *bytes) {
  akx__segmented_plan p;
  akx__ws_need need;
  AKX_TRY(segmented_reduce_prepare(ctx, dst, src, offsets, map, op, opts, 0, &p, &need));
  if (!bytes) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "bytes is NULL");
  *bytes = p.nseg == 0 || p.tiles == 0 ? 0 : akx__ws_need_bytes(&need);
  return AKX_SUCCESS;
}

/* ---- akx_segmented_scan and akx_scan_by_key ------------------------------------------------------ */

/* dst and src: 1-d, one length; in place only as the same view. */
static akx_status check_scan_arrays(const akx_context *ctx, const akx_array *dst, const akx_array *src, int mem,
                                    akx__extent *de, akx__extent *se) {
  AKX_TRY(akx__check_line(ctx, src, "src", AKX__ARRAY_SOURCE | mem, se));
  AKX_TRY(akx__check_line(ctx, dst, "dst", mem, de));
  if (dst->shape[0] != src->shape[0])
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "dst->shape[0] is %" PRId64 " but src->shape[0] is %" PRId64 "; a scan keeps the length",
                     dst->shape[0], src->shape[0]);
  const int same_view = mem && dst->data == src->data && dst->dtype == src->dtype &&
                        (dst->shape[0] <= 1 || dst->strides[0] == src->strides[0]);
  if (mem && !same_view) AKX_TRY(disjoint(dst, de, "dst", src, se, "src"));
  return AKX_SUCCESS;
}

static akx_status segmented_scan_prepare(const akx_context *cctx, const akx_array *dst, const akx_array *src,
                                         const akx_array *offsets, const akx_array *keys, akx_op op,
                                         const akx_scan_opts *opts, int memory, akx__segmented_plan *p,
                                         akx__ws_need *need) {
  akx_context *ctx = (akx_context *)cctx;
  const int mem = memory ? AKX__ARRAY_MEMORY : 0;
  akx__extent se, de, xe;
  AKX_TRY(akx__check_context(ctx));
  AKX_TRY(check_scan_arrays(ctx, dst, src, mem, &de, &se));
  if (keys) AKX_TRY(akx__check_keys(ctx, keys, src->shape[0], "src->shape[0]", mem, &xe));
  else AKX_TRY(check_offsets(ctx, offsets, 0, NULL, mem, &xe));
  akx_dtype acc;
  akx__user_op *u;
  AKX_TRY(check_scan_op(ctx, src, op, opts, keys ? "akx_scan_by_key" : "akx_segmented_scan", &acc, &u));
  if (memory) AKX_TRY(disjoint(dst, &de, "dst", keys ? keys : offsets, &xe, keys ? "keys" : "offsets"));
  return scan_plan(ctx, dst, src, &se, keys ? NULL : offsets, keys, op, opts, acc, u, p, need);
}

static akx_status segmented_scan_locked(akx_context *ctx, const akx_array *dst, const akx_array *src,
                                        const akx_array *offsets, const akx_array *keys, akx_op op,
                                        const akx_scan_opts *opts) {
  akx__segmented_plan p;
  akx__ws_need need;
  AKX_TRY(segmented_scan_prepare(ctx, dst, src, offsets, keys, op, opts, 1, &p, &need));
  if (p.n == 0 || (!keys && p.nseg == 0)) return AKX_SUCCESS;
  return run(ctx, AKX__FAMILY_SEGMENTED_SCAN, &p, &need);
}

akx_status akx_segmented_scan(akx_context *ctx, const akx_array *dst, const akx_array *src,
                              const akx_array *offsets, akx_op op, const akx_scan_opts *opts) {
  if (!offsets) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "offsets is NULL");
  return AKX_LOCKED(ctx, segmented_scan_locked(ctx, dst, src, offsets, NULL, op, opts));
}

akx_status akx_segmented_scan_workspace_size(const akx_context *ctx, const akx_array *dst, const akx_array *src,
                                             const akx_array *offsets, akx_op op, const akx_scan_opts *opts,
                                             size_t *bytes) {
  if (!offsets) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "offsets is NULL");
  akx__segmented_plan p;
  akx__ws_need need;
  AKX_TRY(segmented_scan_prepare(ctx, dst, src, offsets, NULL, op, opts, 0, &p, &need));
  if (!bytes) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "bytes is NULL");
  *bytes = p.n == 0 || p.nseg == 0 ? 0 : akx__ws_need_bytes(&need);
  return AKX_SUCCESS;
}

akx_status akx_scan_by_key(akx_context *ctx, const akx_array *dst, const akx_array *keys, const akx_array *src,
                           akx_op op, const akx_scan_opts *opts) {
  if (!keys) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "keys is NULL");
  return AKX_LOCKED(ctx, segmented_scan_locked(ctx, dst, src, NULL, keys, op, opts));
}

/* ---- akx_reduce_by_key --------------------------------------------------------------------------- */

static akx_status reduce_by_key_locked(akx_context *ctx, const akx_array *keys_out, const akx_array *values_out,
                                       const akx_array *keys, const akx_array *values, akx_map map, akx_op op,
                                       const akx_reduce_opts *opts, int64_t *runs, akx_where where,
                                       const char *call) {
  const int mem = AKX__ARRAY_MEMORY;
  akx__extent ke, ve, koe, voe;
  AKX_TRY(akx__check_context(ctx));
  AKX_TRY(akx__check_line(ctx, values, "values", AKX__ARRAY_SOURCE | mem, &ve));
  AKX_TRY(akx__check_keys(ctx, keys, values->shape[0], "values->shape[0]", mem, &ke));
  AKX_TRY(akx__check_line(ctx, keys_out, "keys_out", mem, &koe));
  if (keys_out->dtype != keys->dtype)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "keys_out->dtype is %s but keys->dtype is %s; they must match",
                     akx_dtype_name(keys_out->dtype), akx_dtype_name(keys->dtype));
  AKX_TRY(akx__check_line(ctx, values_out, "values_out", mem, &voe));
  akx_dtype acc;
  akx__user_op *u;
  AKX_TRY(check_reduce_op(ctx, values, values_out, "values_out", map, op, opts, call, &acc, &u));
  if (!runs) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "runs is NULL");
  AKX_TRY(disjoint(keys_out, &koe, "keys_out", keys, &ke, "keys"));
  AKX_TRY(disjoint(keys_out, &koe, "keys_out", values, &ve, "values"));
  AKX_TRY(disjoint(values_out, &voe, "values_out", keys, &ke, "keys"));
  AKX_TRY(disjoint(values_out, &voe, "values_out", values, &ve, "values"));
  AKX_TRY(disjoint(values_out, &voe, "values_out", keys_out, &koe, "keys_out"));
  AKX_TRY(akx__tile_check_counts(ctx, runs, 1, where, "runs", call));
  AKX_TRY(akx__tile_counts_apart(runs, 1, where, "runs", keys_out, &koe, "keys_out"));
  AKX_TRY(akx__tile_counts_apart(runs, 1, where, "runs", values_out, &voe, "values_out"));
  AKX_TRY(akx__tile_counts_apart(runs, 1, where, "runs", keys, &ke, "keys"));
  AKX_TRY(akx__tile_counts_apart(runs, 1, where, "runs", values, &ve, "values"));
  akx__segmented_plan p;
  akx__ws_need need;
  AKX_TRY(reduce_plan(ctx, values_out, values, &ve, NULL, keys, keys_out, map, op, opts, acc, u, &p, &need));
  if (p.n == 0) return akx__tile_counts_zero(ctx, runs, 1, where);
  int64_t total = 0;
  AKX_TRY(run(ctx, AKX__FAMILY_SEGMENTED_REDUCE, &p, &need));
  /* The runs: the look-back header's count, stored by the last tile; to device memory it stays
   * on the stream, and the capacity's check is the caller's (at most capacity runs written). */
  if (where == AKX_DEVICE) return akx__tile_count_back(ctx, p.status, runs, 1, AKX_DEVICE);
  AKX_TRY(akx__tile_count_back(ctx, p.status, &total, 1, AKX_HOST));
  *runs = total;
  if (total > p.capacity)
    return akx__fail(AKX_ERROR_OUTPUT_TOO_SMALL,
                     "keys has %" PRId64 " run%s but the outputs hold %" PRId64 " (the smaller of keys_out's and "
                     "values_out's lengths); the first %" PRId64 " were written (*runs is the total)",
                     total, akx__plural(total), p.capacity, p.capacity);
  return AKX_SUCCESS;
}

akx_status akx_reduce_by_key(akx_context *ctx, const akx_array *keys_out, const akx_array *values_out,
                             const akx_array *keys, const akx_array *values, akx_map map, akx_op op,
                             const akx_reduce_opts *opts, int64_t *runs) {
  return AKX_LOCKED(ctx, reduce_by_key_locked(ctx, keys_out, values_out, keys, values, map, op, opts, runs,
                                              AKX_HOST, "akx_reduce_by_key"));
}

akx_status akx_reduce_by_key_where(akx_context *ctx, const akx_array *keys_out, const akx_array *values_out,
                                   const akx_array *keys, const akx_array *values, akx_map map, akx_op op,
                                   const akx_reduce_opts *opts, int64_t *runs, akx_where where) {
  return AKX_LOCKED(ctx, reduce_by_key_locked(ctx, keys_out, values_out, keys, values, map, op, opts, runs, where,
                                              "akx_reduce_by_key_where"));
}
