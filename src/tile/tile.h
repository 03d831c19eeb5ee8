/* The tile layer (docs/tile.md): what the planners of tiles share, below them all and above
 * launch, jit and core (tests/test_layers.py, LAYERS). The look-back's host sizing and grant,
 * the scan tiles' tuning, the count-back of the look-back header's count, and the op rules two
 * families' planners both apply (a scan's op and accumulator; a reduction's finish from opts).
 * Callers: src/scan/ (akx_scan, akx_scan_piece, akx_findall) and src/segmented/ (the segmented
 * and keyed calls). */
#ifndef AKX_TILE_H
#define AKX_TILE_H
#include "internal.h"
#include "tuning.h"
#ifdef __cplusplus
extern "C" {
#endif

/* ---- the look-back (kernels/akx/lookback.cuh) ------------------------------------------------- */

/* A look-back over `tiles` tiles with nodes of `node` bytes: its header and flags in the
 * workspace's tags, its nodes in the scratch (src/core/workspace_regions.h); the bytes on a
 * buffer of its own (what the size queries give). */
akx__ws_need akx__lookback_need(int64_t tiles, size_t node);
size_t akx__lookback_bytes(int64_t tiles, size_t node);
/* A look-back call's status (akx__workspace_lookback of `need`: akx__lookback_need's, or
 * with more scratch after the nodes), as the tile plans carry it. */
typedef struct {
  void *status;
  uint32_t epoch;
  int32_t reset_status;
  int64_t reset_flags, nodes_at;
} akx__lookback_plan;
akx_status akx__lookback_take(akx_context *ctx, const akx__ws_need *need, akx__lookback_plan *lp,
                              akx__ws_grant *g);
/* Into a tile plan (the scan's, findall's, the segment tile's). */
#define AKX__LOOKBACK_INTO(plan, lp)        \
  do {                                      \
    (plan).status = (lp).status;            \
    (plan).epoch = (lp).epoch;              \
    (plan).reset_status = (lp).reset_status; \
    (plan).reset_flags = (lp).reset_flags;  \
    (plan).nodes_at = (lp).nodes_at;        \
  } while (0)

/* A tile plan's look-back call, once its kernels are prepared: the grant of
 * akx__lookback_need(plan.tiles, node) carried into the plan (AKX__LOOKBACK_INTO), the launch of
 * `combination` (src/launch/route.h), the grant released. Returns from the calling function on
 * an error (AKX_TRY). The selection tiles' planners (findall, the selections) share it. */
#define AKX__LOOKBACK_LAUNCH(ctx, plan, node, combination)              \
  do {                                                                   \
    akx__ws_grant grant_;                                                \
    akx__lookback_plan lp_;                                              \
    const akx__ws_need need_ = akx__lookback_need((plan).tiles, (node)); \
    AKX_TRY(akx__lookback_take((ctx), &need_, &lp_, &grant_));           \
    AKX__LOOKBACK_INTO(plan, lp_);                                       \
    AKX_TRY(akx__launch((ctx), (combination), &(plan)));                 \
    akx__workspace_lookback_done((ctx), &grant_);                        \
  } while (0)

/* The byte offset of lookback_header::count in the header at a look-back's status
 * (offsetof in src/tile/lookback_header.cpp, of the struct the kernels write). */
extern const size_t akx__lookback_count_offset;
/* The counts the last tile stored in the header at `status` into counts[0..ncounts): 1, the
 * header's count (findall's total, a by-key reduction's runs); 2, count and second_count (a
 * three-way partition's two sides), in one copy. AKX_HOST: host memory, the copy waited for (the
 * caller refused a capturing stream before anything changed); AKX_DEVICE: ncounts int64 of
 * device memory, the copy enqueued on the context's stream behind the launch, no synchronization
 * (a graph capture takes it). Any other where, or ncounts not 1 or 2: AKX_ERROR_INVALID_ARGUMENT,
 * nothing written. */
akx_status akx__tile_count_back(akx_context *ctx, const void *status, int64_t *counts, int ncounts, akx_where where);
/* The checks of a call's count argument (`name`, e.g. "count", "runs") and its where, before
 * anything changes: not NULL; where AKX_HOST or AKX_DEVICE; AKX_DEVICE: ncounts int64 of this
 * context's device memory, 8-byte aligned; AKX_HOST: refused while the stream captures a graph
 * (`call` names the call in the sentence: the count is copied back and waited for). */
akx_status akx__tile_check_counts(const akx_context *ctx, const int64_t *counts, int ncounts, akx_where where,
                                  const char *name, const char *call);
/* Device counts (where = AKX_DEVICE) apart from an array the call reads or writes (a's bytes,
 * its extent ae): the count's store would otherwise land in it. AKX_HOST: nothing to check. */
akx_status akx__tile_counts_apart(const int64_t *counts, int ncounts, akx_where where, const char *name,
                                  const akx_array *a, const akx__extent *ae, const char *aname);
/* The counts of a call that launched nothing (an empty source): zeros, to the host at once or
 * enqueued on the stream to device memory (AKX_DEVICE: the total is written whatever it is). */
akx_status akx__tile_counts_zero(akx_context *ctx, int64_t *counts, int ncounts, akx_where where);

/* ---- the tiles' shared memory ----------------------------------------------------------------- */

/* Bytes b rounded up to 16: where the next AKX_SHARED array of a tile kernel starts (the sim
 * lays them out so, src/sim/checks.cpp; ptxas packs them no looser), for the planners that add
 * up a kernel's static shared memory (src/tile/select_shared.cpp, src/scan/tile_shared.cpp,
 * src/segmented/segment_shared.cpp). */
static inline int64_t akx__align16(int64_t b) { return (b + 15) / 16 * 16; }

/* ---- the selection tile's shared memory (kernels/akx/select_tile.cuh) ----------------------- */

/* A selection tile of block_size threads x `vectors` slots of per_vector items with `sides` (1
 * or 2) selected sides: its staging window's entries (the smaller of the tile's items and
 * akx::select_window_max) of staged_size bytes each into *window, their dynamic shared memory
 * into *dynamic_bytes, the kernel's static part into *static_bytes (unless NULL); or
 * AKX_ERROR_INVALID_ARGUMENT, naming the block size as `block_from` (e.g. "opts->block_size"),
 * when they do not fit a block on the device together (48 KiB without `optin`, the kernel's
 * kernel_info.smem_optin; the opt-in maximum with it). */
akx_status akx__select_tile_shared(const akx_context *ctx, int32_t block_size, int32_t vectors, int32_t per_vector,
                                   int32_t sides, size_t staged_size, int optin, const char *block_from,
                                   int64_t *window, int64_t *dynamic_bytes, int64_t *static_bytes);

/* A selection tile's tiles over n items: vector slots of per_vector items, per_tile slots a tile,
 * slot 0 starting `shift` items before item 0. With shift = per_vector - 1, the most any shift
 * gives: what a workspace query sizes for, reading no address. */
static inline int64_t akx__select_tiles(int64_t n, int64_t shift, int64_t per_vector, int64_t per_tile) {
  return ((n + shift + per_vector - 1) / per_vector + per_tile - 1) / per_tile;
}

/* ---- the tiles' tuning and the ops' rules -------------------------------------------------- */

/* The tile scans' tuning row for partials of this size, with the caller's overrides (the scan
 * tiles', findall's neighbours, and the segment tile's, which caps it further). */
akx__tuning akx__scan_tile_tuning(const akx_context *ctx, size_t partial_size, int32_t block_size,
                                  int32_t items_per_thread);
/* A scan's op over src (user ops resolved by their registry) and its accumulator, with the rule
 * every scan keeps: an exclusive scan of an op without a neutral element (MIN, MAX, a user op
 * without identity) needs opts->init. `call` names the call in a user op's refusals. */
struct akx__user_op;
akx_status akx__scan_resolve_op(akx_context *ctx, akx_dtype src, akx_op op, const akx_scan_opts *opts,
                                const char *call, akx_dtype *acc, struct akx__user_op **user);
/* The finish of a reduction's opts (init, fold) into dst of dst_dtype (akx_mapreduce's,
 * akx_reduce_dims', the segmented and keyed reductions'). */
void akx__reduce_finish_from_opts(akx__finish *f, const akx_reduce_opts *opts, akx_dtype acc,
                                  const struct akx__user_op *user, void *dst, akx_dtype dst_dtype);
#ifdef __cplusplus
}
#endif
#endif
