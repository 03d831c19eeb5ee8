/* Whole-array reductions: akx_mapreduce, and the one-element case of akx_reduce_dims.
 * The ladder: validate -> canonicalise -> plan (tuning) -> workspace -> launch -> finish. */
#include <inttypes.h>
#include <string.h>
#include "internal.h"
#include "reduce_whole.h"
#include "tuning.h"
#include "launch/route.h"
#include "jit/user_op.h"

/* Everything akx_mapreduce checks but the context; ctx may be NULL (the result-dtype query)
 * when src_flags does not ask for memory checks. */
static akx_status check_args(const akx_context *ctx, const akx_array *src, akx_map map, akx_op op,
                             const akx_reduce_opts *opts, int src_flags, akx__extent *ext,
                             akx_dtype *acc, akx__user_op **user, int piece) {
  AKX_TRY(akx__check_array(ctx, src, "src", src_flags, ext));
  if ((unsigned)map >= AKX_MAP_COUNT)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "map is %d, which is not an akx_map", (int)map);
  AKX_TRY(akx__check_op(op));
  const int own = akx_op_has_own_accumulator(op);
  AKX_TRY(akx__check_reduce_opts(ctx, opts));
  *user = NULL;
  if (own) {
    /* An op with its own accumulator: a user op, or ARGMIN/ARGMAX (src/jit/user_op.h). */
    *acc = AKX_DTYPE_AUTO;
    const int32_t requested = opts ? (int32_t)opts->acc : AKX_DTYPE_AUTO;
    if (ctx) {
      AKX_TRY(akx__user_op_resolve((akx_context *)ctx, op, src->dtype, map, requested, opts ? opts->fold : 0,
                                   "akx_mapreduce", user));
    } else {
      /* The result-dtype query has no context: the op is checked by the calls that take one. */
      if (map != AKX_MAP_IDENTITY)
        return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "map is %s; op %d applies its own map: pass AKX_MAP_IDENTITY",
                         akx__map_name(map), (int)op);
      if (requested != AKX_DTYPE_AUTO)
        return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "opts->acc is %d; op %d has its own accumulator: pass "
                         "AKX_DTYPE_AUTO", (int)requested, (int)op);
      if ((op == AKX_OP_ARGMIN || op == AKX_OP_ARGMAX) &&
          (src->dtype == AKX_COMPLEX64 || src->dtype == AKX_COMPLEX128))
        return akx__fail(AKX_ERROR_UNSUPPORTED, "op %s is not defined on %s sources: complex numbers have no order",
                         akx__op_name(op), akx_dtype_name(src->dtype));
    }
  } else {
    AKX_TRY(akx__resolve_acc(src->dtype, map, op, opts ? (int32_t)opts->acc : AKX_DTYPE_AUTO, acc));
  }
  /* A piece may be empty: the whole reduction decides. A user op the result-dtype query cannot
   * look up (no context) is judged by the call that can. */
  const int has_identity = *user ? (*user)->info.has_identity : !ctx && (int32_t)op >= AKX_USER_OP_FIRST;
  if (ext->count == 0 && !piece) AKX_TRY(akx__check_empty_result(op, has_identity, opts, "src"));
  return AKX_SUCCESS;
}

akx_status akx__reduce_whole_check(const akx_context *ctx, const akx_array *src, akx_map map,
                                   akx_op op, const akx_reduce_opts *opts, int src_flags,
                                   akx__extent *ext, akx_dtype *acc, akx__user_op **user) {
  AKX_TRY(akx__check_context(ctx));
  return check_args(ctx, src, map, op, opts, src_flags, ext, acc, user, 0);
}

static akx__tuning tuning_for(const akx_context *ctx, size_t acc_size, const akx_reduce_opts *opts) {
  akx__tuning over = {0, 0, 0};
  if (opts) over = (akx__tuning){opts->block_size, opts->items_per_thread, opts->target_blocks};
  return akx__tuning_lookup(AKX__TUNE_REDUCE_WHOLE, ctx->info.cc_major, ctx->info.cc_minor,
                            acc_size, &over);
}

/* The ticket (kernels/akx/reduce_whole.cuh) is the header's first word, among the workspace's
 * tags (src/core/workspace.c, "The regions"); the scratch holds target_blocks partials of
 * acc_size bytes and one slot for a bare host result, whatever n: the size only grows with the
 * options, never shrinks with n. */
static akx__ws_need need_of(const akx__tuning *t, size_t acc_size) {
  const akx__ws_need need = {{1, 0, 0, 0}, AKX__ROUND_UP(((size_t)t->target_blocks + 1) * acc_size, 256), 0, 0};
  return need;
}
static size_t workspace_of(const akx__tuning *t, size_t acc_size) {
  const akx__ws_need need = need_of(t, acc_size);
  return akx__ws_need_bytes(&need);
}

size_t akx__reduce_whole_workspace(const akx_context *ctx, akx_dtype acc, const akx__user_op *user,
                                   const akx_reduce_opts *opts) {
  const size_t size = akx__acc_size(acc, user);
  const akx__tuning t = tuning_for(ctx, size, opts);
  return workspace_of(&t, size);
}

/* Whether the call touches the ticket: one block of a nonempty source never does (it finishes
 * alone); more count on it or pass 2 puts it back to 0, as the empty source's pass does. */
static int uses_ticket(const akx__reduce_whole_plan *p) { return p->blocks > 1 || p->src.n == 0; }

/* Launches the plan: in one launch when the ticket is 0 (kernels/akx/reduce_whole.cuh), and
 * notes that the call left it at 0. */
static akx_status launch(akx_context *ctx, akx__reduce_whole_plan *p) {
  AKX_TRY(akx__launch(ctx, akx__reduce_whole_combination(p), p));
  const akx__ws_need header = {{1, 0, 0, 0}, 0, 0, !uses_ticket(p)};
  const akx__ws_grant unused = {0};
  akx__workspace_tickets_done(ctx, &header, &unused);
  return AKX_SUCCESS;
}

/* Pass 1's 16-byte vectors of a contiguous source aligned to its element (the kernel,
 * kernels/akx/reduce_whole.cuh, reads these from its plan): scalars up to the first aligned
 * vector, the vectors, the scalars after them, and the vector loads per thread per tile. */
static void plan_vectors(akx__reduce_whole_plan *p) {
  const size_t size = akx_dtype_size((akx_dtype)p->src.dtype);
  const uintptr_t addr = (uintptr_t)p->src.data;
  p->vectorised = p->src.contiguous && size > 0 && addr % size == 0;
  if (!p->vectorised) return;
  const int64_t V = 16 / (int64_t)size, n = p->src.n;
  p->vec_head = (int64_t)(((16 - addr % 16) % 16) / size);
  if (p->vec_head > n) p->vec_head = n;
  p->vec_count = (n - p->vec_head) / V;
  p->vec_tail = n - p->vec_head - p->vec_count * V;
  p->vec_loads = p->items_per_thread / V > 1 ? (int32_t)(p->items_per_thread / V) : 1;
}

/* The plan of a call (pass 1's blocks and vectors, the finish), its kernels compiled or found,
 * its workspace: the ticket, the partials and, after them, a slot of one accumulator (*slot). */
static akx_status plan_whole(akx_context *ctx, const akx_array *src, const akx__extent *ext,
                             akx_map map, akx_op op, const akx_reduce_opts *opts, akx_dtype acc,
                             const akx__user_op *user, const akx__finish *finish,
                             akx__reduce_whole_plan *pp, void **slot_out) {
  akx__reduce_whole_plan p;
  memset(&p, 0, sizeof p);
  if (ext->count > 0) {
    if (user) akx__canonical_source_ordered(src, ext, &p.src);
    else akx__canonical_source(src, ext, &p.src);
  }
  p.src.dtype = src->dtype;
  p.src.n = ext->count;
  p.map = map;
  p.op = user ? user->id : op;
  p.acc = acc;
  const size_t acc_size = akx__acc_size(acc, user);
  const akx__tuning t = tuning_for(ctx, acc_size, opts);
  p.block_size = t.block_size;
  p.items_per_thread = t.items_per_thread;
  /* A tile is what one block loads per step (kernels/akx/reduce_whole.cuh): block_size threads
   * of items_per_thread elements, at least one 16-byte vector each. */
  const int64_t vec = 16 / (int64_t)akx_dtype_size(src->dtype);
  const int64_t per_thread = t.items_per_thread > vec ? t.items_per_thread / vec * vec : vec;
  const int64_t tile = (int64_t)t.block_size * (p.src.contiguous ? per_thread : t.items_per_thread);
  const int64_t tiles = ext->count / tile + (ext->count % tile != 0); /* no overflow near INT64_MAX */
  p.blocks = (int32_t)(tiles < 1 ? 1 : tiles > t.target_blocks ? t.target_blocks : tiles);
  p.finish = *finish;
  p.finish.empty = ext->count == 0;
  plan_vectors(&p);

  /* Kernels compiled at run time are compiled (or found) before the workspace changes. */
  AKX_TRY(akx__kernels_prepare(ctx, AKX__FAMILY_REDUCE_WHOLE, src->dtype, user ? p.finish.dst_dtype : AKX_DTYPE_AUTO,
                               acc, user ? (int32_t)user->id : (int32_t)op, map));
  akx__ws_need need = need_of(&t, acc_size);
  need.untouched = !uses_ticket(&p);
  akx__ws_grant g;
  AKX_TRY(akx__workspace_tickets(ctx, &need, &g));
  p.one_launch = g.trusted;
  p.ticket = g.ptr;
  p.partials = g.scratch;
  *slot_out = (char *)p.partials + (size_t)p.blocks * acc_size;
  *pp = p;
  return AKX_SUCCESS;
}

/* Launches p finishing on the device into the slot, then copies `bytes` of it to the host: the
 * host cannot run a user op's combine (nor, for a piece, the pieces' pass 2), so the device
 * finishes, with the host's previous value put in the slot first for fold. */
static akx_status launch_to_host(akx_context *ctx, akx__reduce_whole_plan *p, void *slot,
                                 void *host_result, size_t bytes) {
  p->finish.dst = slot;
  if (p->finish.fold) AKX_TRY(ctx->be->memcpy(ctx, slot, host_result, bytes, AKX_COPY_HOST_TO_DEVICE));
  AKX_TRY(launch(ctx, p));
  return ctx->be->memcpy(ctx, host_result, slot, bytes, AKX_COPY_DEVICE_TO_HOST);
}

akx_status akx__reduce_whole_run(akx_context *ctx, const akx_array *src, const akx__extent *ext,
                                 akx_map map, akx_op op, const akx_reduce_opts *opts,
                                 akx_dtype acc, const akx__user_op *user, const akx__finish *finish,
                                 void *host_result) {
  akx__reduce_whole_plan p;
  void *slot;
  AKX_TRY(plan_whole(ctx, src, ext, map, op, opts, acc, user, finish, &p, &slot));
  const size_t acc_size = akx__acc_size(acc, user);
  /* A user op's accumulator comes back as it is. */
  if (host_result && user) return launch_to_host(ctx, &p, slot, host_result, user->info.acc_size);
  if (host_result) {
    p.finish.bare = 1;
    p.finish.dst = slot;
  }
  AKX_TRY(launch(ctx, &p));
  if (!host_result) return AKX_SUCCESS;
  _Alignas(16) unsigned char bare[16];
  AKX_TRY(ctx->be->memcpy(ctx, bare, slot, acc_size, AKX_COPY_DEVICE_TO_HOST));
  akx__finish host = p.finish;
  host.bare = 0;
  host.dst = host_result;
  return akx__finish_host(op, acc, bare, &host);
}

/* akx_mapreduce's result and where, for acc (or a user op's accumulator). */
static akx_status check_result(akx_context *ctx, akx_dtype acc, const akx__user_op *user, void *result,
                               akx_where where) {
  if (!result) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "result is NULL");
  if ((int)where != AKX_HOST && (int)where != AKX_DEVICE)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "where is %d; it must be AKX_HOST or AKX_DEVICE", (int)where);
  if (where == AKX_DEVICE) {
    /* The finishing store writes one accumulator there: a misaligned one faults on the GPU
     * (a sticky error) after pass 1 has run. */
    const size_t align = user ? user->info.acc_align : akx__dtype_alignment(acc);
    if ((uintptr_t)result % align != 0)
      return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                       "result = %p is not aligned to its %s accumulator (%zu bytes)", result,
                       user ? "op's" : akx_dtype_name(acc), align);
    if (ctx->be->is_device_range(ctx, result, user ? user->info.acc_size : akx_dtype_size(acc)) == 0)
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
  return AKX_SUCCESS;
}

static akx_status mapreduce_locked(akx_context *ctx, const akx_array *src, akx_map map, akx_op op,
                         const akx_reduce_opts *opts, void *result, akx_where where) {
  akx__extent ext;
  akx_dtype acc;
  akx__user_op *user;
  AKX_TRY(akx__reduce_whole_check(ctx, src, map, op, opts, AKX__ARRAY_SOURCE | AKX__ARRAY_MEMORY, &ext, &acc,
                                  &user));
  AKX_TRY(check_result(ctx, acc, user, result, where));
  akx__finish f;
  akx__reduce_finish_from_opts(&f, opts, acc, user, result, acc);
  return akx__reduce_whole_run(ctx, src, &ext, map, op, opts, acc, user, &f,
                               where == AKX_HOST ? result : NULL);
}

akx_status akx_mapreduce_workspace_size(const akx_context *ctx, const akx_array *src, akx_map map,
                                        akx_op op, const akx_reduce_opts *opts, size_t *bytes) {
  akx__extent ext;
  akx_dtype acc;
  akx__user_op *user;
  /* Shapes and dtypes only (zstd's size queries): src->data need not exist yet. */
  AKX_TRY(akx__reduce_whole_check(ctx, src, map, op, opts, AKX__ARRAY_SOURCE, &ext, &acc, &user));
  if (!bytes) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "bytes is NULL");
  *bytes = akx__reduce_whole_workspace(ctx, acc, user, opts);
  return AKX_SUCCESS;
}

akx_status akx_mapreduce_result_dtype(const akx_array *src, akx_map map, akx_op op,
                                      const akx_reduce_opts *opts, akx_dtype *dtype) {
  akx__extent ext;
  akx_dtype acc;
  akx__user_op *user;
  AKX_TRY(check_args(NULL, src, map, op, opts, AKX__ARRAY_SOURCE, &ext, &acc, &user, 0));
  if (!dtype) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "dtype is NULL");
  *dtype = acc;
  return AKX_SUCCESS;
}

akx_status akx__reduce_whole_into(akx_context *ctx, const akx_array *dst, const akx_array *src,
                                  const akx__extent *ext, akx_map map, akx_op op,
                                  const akx_reduce_opts *opts, akx_dtype acc, const akx__user_op *user) {
  akx__finish f;
  akx__reduce_finish_from_opts(&f, opts, acc, user, dst->data, dst->dtype);
  return akx__reduce_whole_run(ctx, src, ext, map, op, opts, acc, user, &f, NULL);
}

akx_status akx_mapreduce(akx_context *ctx, const akx_array *src, akx_map map, akx_op op,
                         const akx_reduce_opts *opts, void *result, akx_where where) {
  return AKX_LOCKED(ctx, mapreduce_locked(ctx, src, map, op, opts, result, where));
}

/* ---- a piece of a longer array ---------------------------------------------------------------
 * Pass 1 over the piece stores its partial bare (the kernels' accumulator, positions moved to
 * the whole array's) into the workspace's slot; the caller's exchange gathers every piece's;
 * pass 2 alone over them (the same code as a call's own second pass) applies init and fold. */
akx_status akx__check_reduce_piece(const akx_reduce_piece_t *piece) {
  if (!piece) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "piece is NULL");
  if (!piece->exchange) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "piece->exchange is NULL");
  if (piece->pieces < 1 || piece->pieces > AKX__MAX_PIECES)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "piece->pieces is %" PRId64 "; it must be in 1..%" PRId64,
                     piece->pieces, AKX__MAX_PIECES);
  return akx__check_piece_positions(piece->position_base, piece->position_block, piece->position_skip);
}

akx_status akx__reduce_whole_piece(akx_context *ctx, const akx_array *src, const akx__extent *ext,
                                   akx_map map, akx_op op, const akx_reduce_opts *opts, akx_dtype acc,
                                   const akx__user_op *user, const akx_reduce_piece_t *piece,
                                   const akx__finish *f, void *host_result) {
  akx__finish bare = *f;
  bare.bare = 1;
  bare.fold = 0;
  bare.has_init = 0;
  bare.positions = (akx__positions){piece->position_base, piece->position_block, piece->position_skip};
  akx__reduce_whole_plan p;
  void *slot;
  AKX_TRY(plan_whole(ctx, src, ext, map, op, opts, acc, user, &bare, &p, &slot));
  p.finish.dst = slot;
  AKX_TRY(launch(ctx, &p));
  const size_t acc_size = akx__acc_size(acc, user);
  const void *all = NULL;
  AKX_TRY(piece->exchange(piece->arg, slot, acc_size, &all));
  if (!all) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "piece->exchange gave no partials");

  /* Pass 2 over the pieces' partials. */
  p.partials_only = 1;
  p.partials = (void *)all;
  p.blocks = (int32_t)piece->pieces;
  p.finish = *f;
  p.finish.empty = 0;
  if (host_result)
    return launch_to_host(ctx, &p, slot, host_result, user ? user->info.acc_size : akx_dtype_size(acc));
  return launch(ctx, &p);
}

static akx_status piece_locked(akx_context *ctx, const akx_array *src, akx_map map, akx_op op,
                               const akx_reduce_opts *opts, const akx_reduce_piece_t *piece,
                               void *result, akx_where where) {
  AKX_TRY(akx__check_reduce_piece(piece));
  akx__extent ext;
  akx_dtype acc;
  akx__user_op *user;
  AKX_TRY(akx__check_context(ctx));
  AKX_TRY(check_args(ctx, src, map, op, opts, AKX__ARRAY_SOURCE | AKX__ARRAY_MEMORY, &ext, &acc, &user, 1));
  AKX_TRY(check_result(ctx, acc, user, result, where));
  akx__finish f;
  akx__reduce_finish_from_opts(&f, opts, acc, user, result, acc);
  return akx__reduce_whole_piece(ctx, src, &ext, map, op, opts, acc, user, piece, &f,
                                 where == AKX_HOST ? result : NULL);
}

akx_status akx_mapreduce_piece(akx_context *ctx, const akx_array *src, akx_map map, akx_op op,
                               const akx_reduce_opts *opts, const akx_reduce_piece_t *piece,
                               void *result, akx_where where) {
  return AKX_LOCKED(ctx, piece_locked(ctx, src, map, op, opts, piece, result, where));
}
