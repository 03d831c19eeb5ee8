/* akx_reduce_dims_piece: a piece of a longer reduction along dims, on the ladder's steps
 * (src/reduce/reduce_dims.h) around the caller's exchange.
 *
 * Pass 1 reduces the piece into a bare partial per output (the kernels' accumulator, positions
 * moved to the whole reduction's), stored after its own workspace in dst's C order, so that
 * pieces of any layout pair their outputs alike; the caller's exchange gathers every piece's,
 * piece-major; the combine folds each output's in piece order with init and fold into dst: a
 * built-in op's partials are an array of its accumulator dtype with the pieces along a reduced
 * dim, which akx_reduce_dims itself reduces; a user op's (ARGMIN/ARGMAX included) are no dtype,
 * and its run-time module's pieces kernel folds them (kernels/akx/reduce_dims.cuh). One output
 * is the whole-array piece (src/reduce/reduce_whole.c). */
#include <inttypes.h>
#include <string.h>
#include "reduce_dims.h"
#include "launch/route.h"
#include "jit/user_op.h"
#include "reduce_whole.h"

typedef struct {
  akx__reduce_dims_checked c;
  akx__reduce_dims_plan pass;    /* n_out > 1: the piece into its bare partials */
  akx__reduce_dims_plan combine; /* a user op's: the pieces kernel */
  akx_array parts, into;         /* a built-in op's: the partials (data: the exchange's) and dst,
                                    the pieces along one dim */
  akx_reduce_opts combine_opts;
  size_t slot_bytes, workspace;
} piece_plan;

/* The partials as an array of `acc` with the pieces along dst's first dim of extent 1, or a new
 * outer dim when dst has none (then dst is seen with that dim too). */
static akx_status pieces_views(const akx_array *dst, akx_dtype acc, akx_op op, int64_t pieces, int64_t n_out,
                                piece_plan *pp) {
  pp->into = *dst;
  int32_t along = -1;
  for (int32_t d = 0; d < dst->ndim && along < 0; ++d)
    if (dst->shape[d] == 1) along = d;
  if (along < 0) {
    if (dst->ndim == AKX_MAX_DIMS)
      return akx__fail(AKX_ERROR_UNSUPPORTED,
                       "dst has %d dims, none of extent 1: no dim is left to combine the pieces of op "
                       "%s along (akx_reduce_dims_piece)", AKX_MAX_DIMS, akx__op_name(op));
    pp->into.ndim = dst->ndim + 1;
    pp->into.shape[0] = 1;
    pp->into.strides[0] = 0;
    for (int32_t d = 0; d < dst->ndim; ++d) {
      pp->into.shape[d + 1] = dst->shape[d];
      pp->into.strides[d + 1] = dst->strides[d];
    }
    along = 0;
  }
  pp->parts = akx_array_c(NULL, acc, pp->into.ndim, pp->into.shape);
  pp->parts.shape[along] = pieces;
  pp->parts.strides[along] = n_out;
  return AKX_SUCCESS;
}

/* Validates the call and plans its three steps, nothing launched; the workspace it takes. */
static akx_status plan_piece(const akx_context *ctx, const akx_array *dst, const akx_array *src, akx_map map,
                             akx_op op, const akx_reduce_opts *opts, int64_t pieces, int memory, piece_plan *pp) {
  memset(pp, 0, sizeof *pp);
  akx__reduce_dims_checked *c = &pp->c;
  AKX_TRY(akx__reduce_dims_check(ctx, dst, src, map, op, opts, memory, 1, c));
  const int64_t n_out = c->dst_ext.count;
  if (n_out == 0) return AKX_SUCCESS;
  if (n_out == 1) {
    pp->workspace = akx__reduce_whole_workspace(ctx, c->acc, c->user, opts);
    return AKX_SUCCESS;
  }
  AKX_TRY(akx__reduce_dims_make_plan(ctx, dst, src, map, op, opts, c, 1, &pp->pass));
  const size_t acc_size = akx__acc_size(c->acc, c->user);
  pp->slot_bytes = (size_t)n_out * acc_size;
  const size_t pass = akx__reduce_dims_workspace(ctx, &pp->pass, c->user, opts);
  pp->workspace = AKX__ROUND_UP(pass, 256) + pp->slot_bytes;
  if (c->user) {
    akx__reduce_dims_plan *q = &pp->combine;
    q->shape = AKX__DIMS_PIECES;
    q->src_dtype = src->dtype;
    q->map = map;
    q->op = c->user->id;
    q->acc = c->acc;
    q->block_size = akx__reduce_dims_tuning(ctx, acc_size, opts).block_size;
    q->width = q->block_size;
    q->n_out = n_out;
    q->blocks_x = n_out / q->block_size + (n_out % q->block_size != 0);
    q->splits = (int32_t)pieces;
    q->groups = 1;
    q->group_splits = q->splits;
    q->finish_lanes = 1;
    for (int32_t d = 0; d < dst->ndim; ++d) /* the outputs in C order, as the pieces stored them */
      if (dst->shape[d] > 1) {
        q->kshape[q->kdims] = dst->shape[d];
        q->kdst[q->kdims++] = dst->strides[d];
      }
    q->dst_size = (int32_t)akx_dtype_size(dst->dtype);
    akx__reduce_finish_from_opts(&q->finish, opts, c->acc, c->user, dst->data, dst->dtype);
    return AKX_SUCCESS;
  }
  AKX_TRY(pieces_views(dst, c->acc, op, pieces, n_out, pp));
  pp->combine_opts = akx_reduce_opts_default();
  pp->combine_opts.acc = c->acc;
  pp->combine_opts.init = opts ? opts->init : NULL;
  pp->combine_opts.fold = opts ? opts->fold : 0;
  akx__reduce_dims_checked cc;
  akx__reduce_dims_plan combine;
  AKX_TRY(akx__reduce_dims_check(ctx, &pp->into, &pp->parts, AKX_MAP_IDENTITY, op, &pp->combine_opts, 0, 0, &cc));
  AKX_TRY(akx__reduce_dims_make_plan(ctx, &pp->into, &pp->parts, AKX_MAP_IDENTITY, op, &pp->combine_opts, &cc, 0, &combine));
  const size_t after = akx__reduce_dims_workspace(ctx, &combine, NULL, &pp->combine_opts);
  if (after > pp->workspace) pp->workspace = after;
  return AKX_SUCCESS;
}

static akx_status piece_locked(akx_context *ctx, const akx_array *dst, const akx_array *src, akx_map map,
                               akx_op op, const akx_reduce_opts *opts, const akx_reduce_piece_t *piece) {
  AKX_TRY(akx__check_context(ctx));
  AKX_TRY(akx__check_reduce_piece(piece));
  piece_plan pp;
  AKX_TRY(plan_piece(ctx, dst, src, map, op, opts, piece->pieces, AKX__ARRAY_MEMORY, &pp));
  const akx__reduce_dims_checked *c = &pp.c;
  if (c->dst_ext.count == 0) return AKX_SUCCESS; /* every piece has no output: nothing to exchange */
  if (c->dst_ext.count == 1) {
    akx__finish f;
    akx__reduce_finish_from_opts(&f, opts, c->acc, c->user, dst->data, dst->dtype);
    return akx__reduce_whole_piece(ctx, src, &c->src_ext, map, op, opts, c->acc, c->user, piece, &f, NULL);
  }
  pp.pass.finish.positions = (akx__positions){piece->position_base, piece->position_block, piece->position_skip};
  AKX_TRY(akx__reduce_dims_prepare_kernels(ctx, dst, src, map, op, c));
  if (!c->user) /* the combine's too (a user op's pieces kernel is in the unit just prepared) */
    AKX_TRY(akx__kernels_prepare(ctx, AKX__FAMILY_REDUCE_DIMS, c->acc, AKX_DTYPE_AUTO, c->acc, (int32_t)op,
                                 AKX_MAP_IDENTITY));
  void *slot = NULL;
  AKX_TRY(akx__reduce_dims_launch(ctx, &pp.pass, c->user, opts, pp.slot_bytes, pp.workspace, &slot));
  const void *all = NULL;
  AKX_TRY(piece->exchange(piece->arg, slot, pp.slot_bytes, &all));
  if (!all) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "piece->exchange gave no partials");
  if (!c->user) {
    pp.parts.data = (void *)all;
    return akx__reduce_dims_locked(ctx, &pp.into, &pp.parts, AKX_MAP_IDENTITY, op, &pp.combine_opts);
  }
  pp.combine.partials = (void *)all;
  return akx__launch(ctx, akx__reduce_dims_combination(&pp.combine), &pp.combine);
}

akx_status akx_reduce_dims_piece(akx_context *ctx, const akx_array *dst, const akx_array *src, akx_map map,
                                 akx_op op, const akx_reduce_opts *opts, const akx_reduce_piece_t *piece) {
  return AKX_LOCKED(ctx, piece_locked(ctx, dst, src, map, op, opts, piece));
}

akx_status akx_reduce_dims_piece_workspace_size(const akx_context *ctx, const akx_array *dst,
                                                const akx_array *src, akx_map map, akx_op op,
                                                const akx_reduce_opts *opts, int64_t pieces, size_t *bytes) {
  AKX_TRY(akx__check_context(ctx));
  if (pieces < 1 || pieces > AKX__MAX_PIECES)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "pieces is %" PRId64 "; it must be in 1..%" PRId64, pieces,
                     AKX__MAX_PIECES);
  piece_plan pp;
  AKX_TRY(plan_piece(ctx, dst, src, map, op, opts, pieces, 0, &pp));
  if (!bytes) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "bytes is NULL");
  *bytes = pp.workspace;
  return AKX_SUCCESS;
}
