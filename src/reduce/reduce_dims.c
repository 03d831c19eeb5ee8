/* akx_reduce_dims: Julia's mapreducedim! (docs/reduce_dims_shapes.md).
 *
 * The ladder: validate -> canonicalise -> select a shape (one function, columns_shape) ->
 * workspace -> launch through the backend -> check. Its steps serve akx_reduce_dims_piece
 * too (src/reduce/reduce_dims_piece.c, through reduce_dims.h).
 *
 * Canonical form (PyTorch's way, folded to few dims before choosing a kernel): size-1 dims
 * dropped; reduced dims flipped to positive source strides (every op is commutative),
 * sorted by stride, merged where contiguous; kept dims flipped so the source stride is
 * >= 0 (dst's flips with it), sorted by source stride, merged where contiguous in both
 * arrays. Then:
 *   - contiguous reduction: the innermost reduced dim has stride 1 (reduced elements are
 *     adjacent in memory): a block or a warp per output, 16-byte loads;
 *   - strided reduction into outputs contiguous in the source (the innermost kept dim has
 *     stride 1): per-thread, tiled or columns, by AK's rules;
 *   - anything else: the general strided kernel (slower, never wrong);
 *   - one output: the whole-array path (docs/reduce_whole.md).
 * Test settings (read once per context, src/core/settings.c): AKX_REDUCE_DIMS_SHAPE=rows|warp_rows|per_thread|tiled|columns|strided forces a
 * shape where it can take the input (rows and warp_rows need a contiguous reduction; the
 * others take any layout); AKX_REDUCE_DIMS_SPLITS=N forces N splits of each output's
 * reduction (any shape but the whole-array one). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "reduce_dims.h"
#include "launch/route.h"
#include "jit/user_op.h"
#include "reduce_whole.h"

/* ---- the thresholds (AK's _columns_shape; sources in docs/reduce_dims_shapes.md) ------------- */
/* One thread per output when a row of outputs is at least this many bytes ... */
#define AKX__PER_THREAD_ROW_BYTES (64 * 1024)
/* ... or the reduction is shorter than this. */
#define AKX__PER_THREAD_MAX_LEN 32
/* Outputs per block of the tiled kernel (AK's: 8), widened to one 32-byte sector for
 * 1- and 2-byte sources (a 16-byte row of bfloat16 outputs costs a full DRAM sector). */
#define AKX__TILED_OUTPUTS 8
#define AKX__SECTOR_BYTES 32
/* Outputs per block of the columns kernel (AK's: 32; a warp reads a row of them). */
#define AKX__COLUMNS_OUTPUTS 32
/* Four independent loads per thread before a split is worth its share (reduce_whole's
 * Little's-law figure). */
#define AKX__LOADS_PER_THREAD 4
/* gridDim.y's limit. */
#define AKX__MAX_SPLITS 65535
/* The single-pass shapes (per-thread, tiled) split an output's reduction only while the
 * partials' traffic (written once, read once, accumulator-sized) stays under 1/8 of the source
 * bytes per output: a split moves up to 1.125x the minimum, and below half a wave the bytes in
 * flight are what it buys (Little's law, src/sim/model.c): 32768x32 float32 (dims=2), a thread
 * per output with 16 of its 32 loads in flight, 2 MiB of the 6.2 MiB the h200 profile needs,
 * modelled 4.26 us (1.17x its copy) one pass and 3.33 us (0.92x) in two splits, moving 1.12x
 * the bytes; at 1/20 (bytes <= 1.05x) it could not split. A long reduction into few outputs
 * (3072x2048, dims=2: 0.48 waves one pass) splits as before. */
#define AKX__PARTIAL_BYTES_SHARE 8

/* ---- validation ------------------------------------------------------------------------------ */

akx_status akx__reduce_dims_check(const akx_context *ctx, const akx_array *dst, const akx_array *src,
                                  akx_map map, akx_op op, const akx_reduce_opts *opts, int memory, int piece,
                                  akx__reduce_dims_checked *c) {
  AKX_TRY(akx__check_context(ctx));
  AKX_TRY(akx__check_array(ctx, src, "src", AKX__ARRAY_SOURCE | memory, &c->src_ext));
  if ((unsigned)map >= AKX_MAP_COUNT)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "map is %d, which is not an akx_map", (int)map);
  AKX_TRY(akx__check_op(op));
  const int arg = op == AKX_OP_ARGMIN || op == AKX_OP_ARGMAX;
  const int own = akx_op_has_own_accumulator(op);
  AKX_TRY(akx__check_reduce_opts(ctx, opts));
  c->user = NULL;
  if (own) {
    c->acc = AKX_DTYPE_AUTO;
    AKX_TRY(akx__user_op_resolve((akx_context *)ctx, op, src->dtype, map, opts ? (int32_t)opts->acc : AKX_DTYPE_AUTO,
                                 opts ? opts->fold : 0, "akx_reduce_dims", &c->user));
  } else {
    AKX_TRY(akx__resolve_acc(src->dtype, map, op, opts ? (int32_t)opts->acc : AKX_DTYPE_AUTO, &c->acc));
  }
  AKX_TRY(akx__check_array(ctx, dst, "dst", memory, &c->dst_ext));
  if (arg && dst->dtype != AKX_INT64 && dst->dtype != src->dtype)
    return akx__fail(AKX_ERROR_UNSUPPORTED,
                     "dst->dtype is %s; op %s stores the int64 position, or the value into a dst of src's "
                     "dtype (%s)", akx_dtype_name(dst->dtype), akx__op_name(op), akx_dtype_name(src->dtype));
  if (dst->ndim != src->ndim)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "dst->ndim is %d but src->ndim is %d; they must match",
                     (int)dst->ndim, (int)src->ndim);
  for (int32_t d = 0; d < dst->ndim; ++d) {
    if (dst->shape[d] != 1 && dst->shape[d] != src->shape[d])
      return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                       "dst->shape[%d] is %" PRId64 "; it must be 1 (reduced) or src->shape[%d] = %" PRId64 " (kept)",
                       (int)d, dst->shape[d], (int)d, src->shape[d]);
  }
  if (memory) AKX_TRY(akx__check_disjoint(dst, &c->dst_ext, "dst", src, &c->src_ext, "src"));
  /* Each output reduces src->count / dst->count elements: none when src is empty. */
  if (c->dst_ext.count > 0 && c->src_ext.count == 0 && !piece)
    AKX_TRY(akx__check_empty_result(op, c->user && c->user->info.has_identity, opts, "src along the reduced dims"));
  return AKX_SUCCESS;
}

/* ---- canonical form ---------------------------------------------------------------------------- */

/* keep_order: the reduced dims keep their signs (a user op's map reads positions in memory
 * order); the kept dims flip all the same (each output is its own reduction). dsize: the bytes
 * of a dst element (a piece's bare partials: the accumulator's). */
static void canonicalise(const akx_array *dst, int64_t dsize, const akx_array *src, int keep_order,
                         akx__reduce_dims_plan *p) {
  const int64_t ssize = (int64_t)akx_dtype_size(src->dtype);
  /* Addresses as integers: a size query passes NULL data, and NULL + offset is undefined. */
  uintptr_t sbase = (uintptr_t)src->data;
  uintptr_t dbase = (uintptr_t)dst->data;
  int32_t nk = 0, nr = 0;
  p->n_out = 1;
  p->len = 1;
  for (int32_t d = 0; d < src->ndim; ++d) {
    const int64_t n = src->shape[d];
    p->n_out *= dst->shape[d];
    if (dst->shape[d] == 1) p->len *= n;
    if (n == 1) continue;
    if (dst->shape[d] == n) { /* kept: flip so the source stride is >= 0 (dst's with it) */
      int64_t ss = src->strides[d], ds = dst->strides[d];
      if (ss < 0 || (ss == 0 && ds < 0)) {
        sbase += (uintptr_t)(n - 1) * (uintptr_t)ss * (uintptr_t)ssize; /* mod 2^64, no UB */
        dbase += (uintptr_t)(n - 1) * (uintptr_t)ds * (uintptr_t)dsize;
        ss = -ss;
        ds = -ds;
      }
      p->kshape[nk] = n; p->ksrc[nk] = ss; p->kdst[nk] = ds; ++nk;
    } else { /* reduced: flip to a positive stride */
      int64_t ss = src->strides[d];
      if (ss < 0 && !keep_order) {
        sbase += (uintptr_t)(n - 1) * (uintptr_t)ss * (uintptr_t)ssize; /* mod 2^64, no UB */
        ss = -ss;
      }
      p->rshape[nr] = n; p->rstride[nr] = ss; ++nr;
    }
  }
  if (p->len == 0) nr = 0;
  /* Largest source stride first (ties: largest |dst stride| first), merged where both arrays
   * step over a dim without a gap; the reduced dims likewise over the source. */
  int64_t *const kept[2] = {p->ksrc, p->kdst};
  nk = akx__fold_dims(nk, p->kshape, kept, 2);
  int64_t *const reduced[1] = {p->rstride};
  nr = akx__fold_dims(nr, p->rshape, reduced, 1);
  p->kdims = nk;
  p->rdims = nr;
  p->src = (const void *)sbase;
  p->finish.dst = (void *)dbase;
  p->src_dtype = src->dtype;
  p->dst_size = (int32_t)dsize;
}

/* ---- the selector -------------------------------------------------------------------------------- */

static int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0); }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* Blocks along each output's reduction so that the grid holds at least the device's
 * resident threads (one full wave) when the outputs alone do not, each split keeping at
 * least `min_per_thread` elements for every thread on an output (PyTorch's Reduce.cuh:
 * split across blocks only when the outputs do not fill the device). */
static int32_t splits_for(int64_t blocks, int32_t bd, int64_t device_threads, int64_t len,
                          int64_t threads_per_output, int64_t min_per_thread) {
  const int64_t threads = blocks * bd;
  if (threads >= device_threads || len == 0) return 1;
  int64_t s = ceil_div(device_threads, threads);
  s = min64(s, max64(1, len / (threads_per_output * min_per_thread)));
  return (int32_t)min64(s, AKX__MAX_SPLITS);
}

static int64_t gcd64(int64_t a, int64_t b) {
  while (b) {
    const int64_t r = a % b;
    a = b;
    b = r;
  }
  return a;
}

/* The tile body's rows a step and a split's share of the reduction (kernels/akx/
 * reduce_dims.cuh, reduce_dims_tile_kernel: tile_rows, split_len). A block puts ny threads on
 * each of its W outputs, ny = block / W, and a split takes ceil(len / splits) elements of each
 * output. Where the tile's rows are adjacent in memory (its W outputs are a whole row of the
 * source and the reduction steps a row: a [len x W] block, e.g. 3x3000000, dims=2), a block's
 * step reads ny * W consecutive elements, a warp 32 of them, and a warp's request starts on a
 * 32-byte sector only where the step and the split's first row do: 85 rows of 3 float32 (1020
 * bytes) moved each request 4 bytes further, 5 sectors for 4 sectors' bytes (the model
 * priced 3x3000000 at 1.20x its copy, bfloat16 3 sectors for 2 at 1.36x; a GPU's L2 may serve
 * a straddled sector twice from one DRAM read, but the requests are still 5). There ny drops to
 * the most rows that span whole sectors (80 of 85, idling 15 of 256 threads) and a split takes
 * a multiple of them; splits are then ceil(len / share), so none is empty. Forced splits
 * (AKX_REDUCE_DIMS_SPLITS) keep their count and the plain share. */
static void tile_steps(akx__reduce_dims_plan *p, int64_t size, int align_splits) {
  int64_t ny = p->width > 0 ? p->block_size / p->width : 1;
  const int tile = p->shape != AKX__DIMS_ROWS && p->shape != AKX__DIMS_WARP_ROWS;
  const int adjacent = tile && p->rdims == 1 && p->kdims >= 1 && p->ksrc[p->kdims - 1] == 1 &&
                       p->kshape[p->kdims - 1] == p->width && p->rstride[0] == p->width;
  /* Rows whose bytes are whole sectors: 32 / gcd(32, row bytes). */
  const int64_t whole = adjacent ? AKX__SECTOR_BYTES / gcd64(AKX__SECTOR_BYTES, p->width * size) : 1;
  if (ny >= whole) ny -= ny % whole;
  p->tile_rows = (int32_t)(ny > 0 ? ny : 1);
  int64_t share = p->splits > 1 ? ceil_div(p->len, p->splits) : p->len;
  if (p->splits > 1 && align_splits && whole > 1) {
    share = ceil_div(share, whole) * whole;
    p->splits = (int32_t)ceil_div(p->len, share);
  }
  p->split_len = share;
}

/* The one place a dims kernel is chosen for two outputs or more (AK's _columns_shape, with its
 * rules: docs/reduce_dims_shapes.md; the device is the context's: a GPU's own, or the sim
 * profile's). None and one output: outputs_path, before the canonical form. */
static void columns_shape(const akx_context *ctx, akx__reduce_dims_plan *p, int32_t bd, size_t acc_bytes) {
  const int64_t device_threads = (int64_t)ctx->info.sm_count * ctx->info.max_threads_per_sm;
  const int64_t size = (int64_t)akx_dtype_size((akx_dtype)p->src_dtype);
  const int contiguous_reduction = p->rdims >= 1 && p->rstride[p->rdims - 1] == 1;
  const int contiguous_outputs = p->kdims >= 1 && p->ksrc[p->kdims - 1] == 1;
  const int64_t run = contiguous_outputs ? p->kshape[p->kdims - 1] : 0;
  p->block_size = bd;
  p->splits = 1;
  int shape;
  if (contiguous_reduction) {
    /* A warp per output when a block would give each thread less than one 16-byte vector. */
    shape = p->len * size < (int64_t)bd * 16 ? AKX__DIMS_WARP_ROWS : AKX__DIMS_ROWS;
  } else if (contiguous_outputs) {
    const int64_t tiles32 = ceil_div(p->n_out, AKX__COLUMNS_OUTPUTS);
    /* The columns kernel splits (splits_for: only where its 32-output tiles do not fill the
     * device, each split keeping 4 loads a thread): the pass the tiled kernel exists to save. */
    const int columns_split = splits_for(tiles32, bd, device_threads, p->len, bd / AKX__COLUMNS_OUTPUTS,
                                         AKX__LOADS_PER_THREAD) > 1;
    /* One thread per output where a row of outputs is at least 64 KiB or the reduction is
     * shorter than 32 (the seed's rule). Its loads: a reduction shorter than a batch (16 of
     * float32, 32 of bfloat16) comes as one predicated batch, all in flight; one of 32 float32,
     * as 32768x32 (dims=2), in two, and under half a wave it splits (below).
     * The tiled kernel (8 outputs a block, one pass) where there are at least as many outputs
     * as elements per output and 32-output tiles would not fill the device (the seed's rule),
     * so that the columns kernel would split: the seed's reason for it ("avoid the second
     * pass"). Where the columns kernel would not split, for a reduction too short to give 4
     * loads to each of its 8 threads on an output twice (len < 64 with blocks of 256), it is
     * one pass too, and the tiled kernel's 32 threads an output would each have a load or
     * two in flight: 32768x32 float32 (dims=2) forced tiled modelled 13.6 us (h200) and 37.6 us
     * (rtx5080), its 4096 blocks 7.8 waves of one load a thread, forced columns 4.2 and 10.2 us. */
    if (run * size >= AKX__PER_THREAD_ROW_BYTES || p->len < AKX__PER_THREAD_MAX_LEN)
      shape = AKX__DIMS_PER_THREAD;
    else if (p->n_out >= p->len && columns_split)
      shape = AKX__DIMS_TILED;
    else
      shape = AKX__DIMS_COLUMNS;
  } else {
    shape = AKX__DIMS_STRIDED;
  }
  const int forced = ctx->settings.dims_shape;
  if (forced >= 0 && (contiguous_reduction || (forced != AKX__DIMS_ROWS && forced != AKX__DIMS_WARP_ROWS)))
    shape = forced;
  p->shape = shape;
  int64_t per_output = 1; /* threads on one output */
  switch (shape) {
    case AKX__DIMS_ROWS:
    case AKX__DIMS_WARP_ROWS: {
      const int32_t G = shape == AKX__DIMS_ROWS ? bd : 32;
      p->width = G;
      p->blocks_x = ceil_div(p->n_out, bd / G);
      p->splits = splits_for(p->blocks_x, bd, device_threads, p->len, G, 1);
      per_output = G;
      break;
    }
    case AKX__DIMS_PER_THREAD:
    case AKX__DIMS_TILED: {
      const int32_t w = shape == AKX__DIMS_PER_THREAD
                            ? bd : (int32_t)max64(AKX__TILED_OUTPUTS, AKX__SECTOR_BYTES / size);
      p->width = (int32_t)min64(w, bd);
      p->blocks_x = ceil_div(p->n_out, p->width);
      per_output = bd / p->width;
      /* Split only below half a wave: the finishing launch costs more than the last half
       * wave gains (the model: 768x1024x8 float32 dims=2, 0.97 waves, 14.1 us one pass,
       * 18.8 us split in two; 3072x2048 at 0.48 waves: 26.2 us one pass, 18.5 us split). */
      if (p->blocks_x * bd * 2 < device_threads) {
        const int64_t acc_size = (int64_t)acc_bytes;
        const int64_t most = p->len * size / (2 * acc_size * AKX__PARTIAL_BYTES_SHARE);
        p->splits = (int32_t)min64(splits_for(p->blocks_x, bd, device_threads, p->len, per_output,
                                              AKX__LOADS_PER_THREAD),
                                   max64(1, most));
      }
      break;
    }
    default: /* COLUMNS, STRIDED */
      /* The strided fallback takes a thread per output for short reductions, as per_thread. */
      p->width = (int32_t)(shape == AKX__DIMS_STRIDED && p->len < AKX__PER_THREAD_MAX_LEN
                               ? bd : min64(min64(AKX__COLUMNS_OUTPUTS, p->n_out), bd));
      p->blocks_x = ceil_div(p->n_out, p->width);
      per_output = bd / p->width;
      p->splits = splits_for(p->blocks_x, bd, device_threads, p->len, per_output,
                             AKX__LOADS_PER_THREAD);
  }
  const int forced_splits = ctx->settings.dims_splits > 0;
  if (forced_splits) p->splits = ctx->settings.dims_splits;
  (void)per_output;
  tile_steps(p, size, !forced_splits);
}

/* Outputs of one column of blocks (kernels/akx/reduce_dims.cuh, outputs_per_block). */
static int64_t outputs_per_block(const akx__reduce_dims_plan *p) {
  return p->shape == AKX__DIMS_ROWS || p->shape == AKX__DIMS_WARP_ROWS ? p->block_size / p->width : p->width;
}

/* A split reduction's finish (kernels/akx/reduce_dims.cuh, finish_groups and finish_outputs):
 * the lanes per output and the groups of its tree, one decision for one launch and two. Lanes: the most (up to a
 * warp) with which one block folds every output of its column side by side: 32 for the rows
 * bodies (a block or a warp per output) and the 8-output tiles, 8 for columns of 32 outputs, 1
 * for a thread per output. A lane then waits for ceil(splits / (lanes * in flight)) rounds of
 * loads, one after another; one level while that is at most AKX__FINISH_ROUNDS. Beyond, two
 * levels: groups of G consecutive splits, G from one round of loads (lanes * in flight) doubled
 * until the groups are no more than G, so that each level takes about sqrt(splits / round)
 * rounds. Two levels cost a second ticket (an atomic's round trip) and the group partials'
 * stores and loads: about two rounds over one level's, hence one level up to three. With one
 * level, a column of 32 outputs split 1000 ways (float32, 8 lanes, 8 in flight) would wait 16
 * rounds of the device's dram_latency_ns (0.6 us on the h200 profile; 1.5 us loaded); two
 * levels of 64-split groups take 1 + 1. */
#define AKX__FINISH_ROUNDS 3
static void finish_tree(akx__reduce_dims_plan *p, size_t acc_bytes) {
  p->groups = 1;
  p->group_splits = p->splits;
  p->finish_lanes = 1;
  if (p->splits <= 1) return;
  const int64_t outs = min64(outputs_per_block(p), p->n_out);
  int32_t q = 32;
  while (q > 1 && (int64_t)q * outs > p->block_size) q >>= 1;
  p->finish_lanes = q;
  const int64_t round = (int64_t)q * AKX__FINISH_LOADS_IN_FLIGHT(acc_bytes);
  if (ceil_div(p->splits, round) <= AKX__FINISH_ROUNDS) return;
  int64_t g = round;
  while (ceil_div(p->splits, g) > g) g *= 2;
  p->group_splits = (int32_t)g;
  p->groups = (int32_t)ceil_div(p->splits, g);
}

akx__tuning akx__reduce_dims_tuning(const akx_context *ctx, size_t acc_size, const akx_reduce_opts *opts) {
  akx__tuning over = {0, 0, 0};
  if (opts) over = (akx__tuning){opts->block_size, opts->items_per_thread, opts->target_blocks};
  return akx__tuning_lookup(AKX__TUNE_REDUCE_DIMS, ctx->info.cc_major, ctx->info.cc_minor,
                            acc_size, &over);
}

/* No output: nothing to launch; one output: the whole-array path (docs/reduce_whole.md: any
 * layout), which canonicalises the source and tunes its own kernels. Decided from dst's count
 * before this path's canonical form and tuning, so that such a call plans once. 1: *p is that
 * plan; 0: two outputs or more, the dims kernels'. */
static int outputs_path(akx__reduce_dims_plan *p, const akx__reduce_dims_checked *c) {
  if (c->dst_ext.count > 1) return 0;
  p->n_out = c->dst_ext.count;
  p->len = p->n_out == 1 ? c->src_ext.count : 0;
  p->shape = p->n_out == 1 ? AKX__DIMS_WHOLE : AKX__DIMS_NONE;
  p->splits = p->groups = p->group_splits = p->finish_lanes = 1;
  return 1;
}

akx_status akx__reduce_dims_make_plan(const akx_context *ctx, const akx_array *dst, const akx_array *src,
                                      akx_map map, akx_op op, const akx_reduce_opts *opts,
                                      const akx__reduce_dims_checked *c, int bare, akx__reduce_dims_plan *p) {
  const akx_dtype acc = c->acc;
  const akx__user_op *user = c->user;
  memset(p, 0, sizeof *p);
  p->map = map;
  p->op = user ? user->id : op;
  p->acc = acc;
  p->src_dtype = src->dtype;
  if (outputs_path(p, c)) return AKX_SUCCESS;
  const size_t acc_size = akx__acc_size(acc, user);
  if (bare) {
    const akx_array slot = akx_array_c(NULL, dst->dtype, dst->ndim, dst->shape);
    canonicalise(&slot, (int64_t)acc_size, src, user != NULL, p);
    p->finish.bare = 1;
    p->finish.dst_dtype = dst->dtype;
  } else {
    canonicalise(dst, (int64_t)akx_dtype_size(dst->dtype), src, user != NULL, p);
    akx__reduce_finish_from_opts(&p->finish, opts, acc, user, p->finish.dst, dst->dtype);
  }
  p->finish.empty = p->len == 0;
  const akx__tuning t = akx__reduce_dims_tuning(ctx, acc_size, opts);
  columns_shape(ctx, p, t.block_size, acc_size);
  finish_tree(p, acc_size);
  if (p->shape == AKX__DIMS_ROWS || p->shape == AKX__DIMS_WARP_ROWS) {
    /* 16-byte loads when every run of an output starts at the same phase. */
    const int64_t size = (int64_t)akx_dtype_size(src->dtype);
    p->vec_ok = (uintptr_t)p->src % (uintptr_t)size == 0;
    for (int32_t d = 0; d + 1 < p->rdims; ++d)
      if (p->rstride[d] * size % 16 != 0) p->vec_ok = 0;
  }
  if (p->blocks_x > INT32_MAX)
    return akx__fail(AKX_ERROR_UNSUPPORTED,
                     "dst has %" PRId64 " outputs: more than a grid of 2^31 - 1 blocks of the %s "
                     "kernel can cover",
                     p->n_out, akx__reduce_dims_shape_name(p->shape));
  return AKX_SUCCESS;
}

/* A split reduction's workspace: a ticket per column of blocks, then (two levels) a ticket
 * per group of each column (kernels/akx/reduce_dims.cuh, finish_column_if_last), then the
 * partials, then the groups' partials. */
static size_t ticket_bytes(const akx__reduce_dims_plan *p) {
  return (size_t)p->blocks_x * (size_t)(1 + (p->groups > 1 ? p->groups : 0)) * sizeof(uint32_t);
}
/* per_output accumulators for each output (the splits', or the groups'), 256-byte aligned. */
static size_t partial_bytes(const akx__reduce_dims_plan *p, int32_t per_output, size_t acc_bytes) {
  return AKX__ROUND_UP((size_t)per_output * (size_t)p->n_out * acc_bytes, 256);
}

/* A split reduction's tickets among the workspace's tags (src/core/workspace.c, "The
 * regions"), its partials in the scratch. */
static akx__ws_need need_of(const akx__reduce_dims_plan *p, const akx__user_op *user) {
  akx__ws_need need = {{0, 0, 0, 0}, 0, 0, 0};
  if (p->splits <= 1) return need;
  const size_t acc_bytes = akx__acc_size((akx_dtype)p->acc, user);
  need.tags.tickets = (int64_t)(ticket_bytes(p) / sizeof(uint32_t));
  need.scratch = partial_bytes(p, p->splits, acc_bytes) + (p->groups > 1 ? partial_bytes(p, p->groups, acc_bytes) : 0);
  return need;
}

size_t akx__reduce_dims_workspace(const akx_context *ctx, const akx__reduce_dims_plan *p,
                                  const akx__user_op *user, const akx_reduce_opts *opts) {
  if (p->shape == AKX__DIMS_WHOLE) return akx__reduce_whole_workspace(ctx, (akx_dtype)p->acc, user, opts);
  const akx__ws_need need = need_of(p, user);
  return akx__ws_need_bytes(&need);
}

akx_status akx__reduce_dims_plan_shape(const akx_context *ctx, const akx_array *dst,
                                       const akx_array *src, akx_map map, akx_op op,
                                       const akx_reduce_opts *opts, akx__reduce_dims_plan *plan) {
  akx__reduce_dims_checked c;
  AKX_TRY(akx__reduce_dims_check(ctx, dst, src, map, op, opts, 0, 0, &c));
  if (!plan) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "plan is NULL");
  return akx__reduce_dims_make_plan(ctx, dst, src, map, op, opts, &c, 0, plan);
}

akx_status akx_reduce_dims_workspace_size(const akx_context *ctx, const akx_array *dst,
                                          const akx_array *src, akx_map map, akx_op op,
                                          const akx_reduce_opts *opts, size_t *bytes) {
  akx__reduce_dims_checked c;
  akx__reduce_dims_plan p;
  /* Shapes and dtypes only (zstd's size queries): the data pointers need not exist yet. */
  AKX_TRY(akx__reduce_dims_check(ctx, dst, src, map, op, opts, 0, 0, &c));
  if (!bytes) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "bytes is NULL");
  AKX_TRY(akx__reduce_dims_make_plan(ctx, dst, src, map, op, opts, &c, 0, &p));
  *bytes = akx__reduce_dims_workspace(ctx, &p, c.user, opts);
  return AKX_SUCCESS;
}

akx_status akx__reduce_dims_prepare_kernels(akx_context *ctx, const akx_array *dst, const akx_array *src,
                                            akx_map map, akx_op op, const akx__reduce_dims_checked *c) {
  return akx__kernels_prepare(ctx, AKX__FAMILY_REDUCE_DIMS, src->dtype, c->user ? dst->dtype : AKX_DTYPE_AUTO, c->acc,
                              c->user ? (int32_t)c->user->id : (int32_t)op, map);
}

/* A split runs in one launch when the tickets are 0 (a completed split call of as many tickets
 * or more left them so); else pass 2 puts them to 0 for the next call. */
akx_status akx__reduce_dims_launch(akx_context *ctx, akx__reduce_dims_plan *p, const akx__user_op *user,
                                   const akx_reduce_opts *opts, size_t slot_bytes, size_t reserve, void **slot) {
  (void)opts;
  akx__ws_need need = need_of(p, user);
  const size_t slot_at = slot_bytes ? AKX__ROUND_UP(need.scratch, 256) : need.scratch;
  need.scratch = slot_at + slot_bytes;
  need.reserve = reserve;
  akx__ws_grant g;
  AKX_TRY(akx__workspace_tickets(ctx, &need, &g));
  char *const scratch = g.scratch;
  if (p->splits > 1) {
    p->one_launch = g.trusted;
    p->tickets = g.tickets;
    p->partials = scratch;
    if (p->groups > 1) p->group_partials = scratch + partial_bytes(p, p->splits, akx__acc_size((akx_dtype)p->acc, user));
  }
  if (slot_bytes) {
    *slot = scratch + slot_at;
    p->finish.dst = (void *)((uintptr_t)*slot + (uintptr_t)p->finish.dst);
  }
  AKX_TRY(akx__launch(ctx, akx__reduce_dims_combination(p), p));
  akx__workspace_tickets_done(ctx, &need, &g);
  return AKX_SUCCESS;
}

akx_status akx__reduce_dims_locked(akx_context *ctx, const akx_array *dst, const akx_array *src,
                                   akx_map map, akx_op op, const akx_reduce_opts *opts) {
  akx__reduce_dims_checked c;
  akx__reduce_dims_plan p;
  AKX_TRY(akx__reduce_dims_check(ctx, dst, src, map, op, opts, AKX__ARRAY_MEMORY, 0, &c));
  AKX_TRY(akx__reduce_dims_make_plan(ctx, dst, src, map, op, opts, &c, 0, &p));
  switch (p.shape) {
    case AKX__DIMS_NONE: return AKX_SUCCESS; /* nothing kept, nothing to write */
    case AKX__DIMS_WHOLE: return akx__reduce_whole_into(ctx, dst, src, &c.src_ext, map, op, opts, c.acc, c.user);
    default: break;
  }
  AKX_TRY(akx__reduce_dims_prepare_kernels(ctx, dst, src, map, op, &c));
  return akx__reduce_dims_launch(ctx, &p, c.user, opts, 0, 0, NULL);
}

akx_status akx_reduce_dims(akx_context *ctx, const akx_array *dst, const akx_array *src,
                           akx_map map, akx_op op, const akx_reduce_opts *opts) {
  return AKX_LOCKED(ctx, akx__reduce_dims_locked(ctx, dst, src, map, op, opts));
}
