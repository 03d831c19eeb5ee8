/* Host-side helpers shared by the operations in src/. */
#ifndef AKX_INTERNAL_H
#define AKX_INTERNAL_H
#include <stddef.h>
#include "akx_layer.h" /* the library defines both headers' functions */
#include "backend.h"
#include "error.h"
#include "akx/plan.h"
#ifdef __cplusplus
extern "C" {
#endif

const char *akx__op_name(akx_op op);

/* ---- accumulators (src/jit/user_ops.c): a dtype's, or a user op's (src/jit/user_op.h) ---- */
struct akx__user_op;
/* Bytes and alignment of one accumulator as the kernels carry it. */
size_t akx__acc_size(akx_dtype acc, const struct akx__user_op *u);
size_t akx__acc_align(akx_dtype acc, const struct akx__user_op *u);
/* opts->init (one host value of the accumulator) into a plan's init bytes. */
void akx__acc_init(unsigned char *init, const void *value, akx_dtype acc, const struct akx__user_op *u);
const char *akx__map_name(akx_map m);
/* "rows", "columns", ...: the names AKX_REDUCE_DIMS_SHAPE takes (src/core/settings.c) */
const char *akx__reduce_dims_shape_name(int shape);

/* ---- validation (src/core/validate.c) ---- */
akx_status akx__check_context(const akx_context *ctx);
/* What validation learns of an array on the way. */
typedef struct {
  int64_t count;       /* number of elements */
  int64_t min_offset;  /* lowest element offset (elements, relative to data) */
  int64_t max_offset;
} akx__extent;
/* A context's lock (struct akx_context::lock), and an entry point's body run holding it:
 * `return AKX_LOCKED(ctx, body(ctx, ...));`. A NULL ctx runs the body unlocked: it fails
 * its context check. */
void akx__lock(const akx_context *ctx);
void akx__unlock(const akx_context *ctx);
akx_status akx__locked_status(const akx_context *ctx, akx_status s, const char *call);
#define AKX_LOCKED(ctx, call) ((ctx) ? (akx__lock(ctx), akx__locked_status((ctx), (call), __func__)) : (call))

/* Refuses a dst whose bytes (first to last element in memory) meet src's. */
akx_status akx__check_disjoint(const akx_array *dst, const akx__extent *dext, const char *dname,
                               const akx_array *src, const akx__extent *sext, const char *sname);
/* The alignment an element of t needs in memory (a complex number: that of its parts). */
size_t akx__dtype_alignment(akx_dtype t);

/* What akx__check_array checks beyond the descriptor itself. */
enum {
  AKX__ARRAY_SOURCE = 1, /* zero strides allowed (a source may repeat elements) */
  AKX__ARRAY_MEMORY = 2  /* data non-NULL, aligned, and device memory of ctx (not for size queries) */
};
/* Checks an array named `name` ("src", "dst"): dtype, ndim, shape, strides, int64 overflow
 * of offsets and bytes, and what `flags` asks. */
akx_status akx__check_array(const akx_context *ctx, const akx_array *a, const char *name,
                            int flags, akx__extent *ext);
/* opts->block_size: 0 (the tuning table) or a multiple of 32 the device allows, at most
 * kernel_max: the launch bounds of the kernels `family` names (kernels/akx/block_limits.h). */
akx_status akx__check_block_size(const akx_context *ctx, int32_t block_size, int32_t kernel_max,
                                 const char *family);
/* opts->items_per_thread: 0 (the tuning table's) or 1..most. */
akx_status akx__check_items_per_thread(int32_t items_per_thread, int32_t most);
/* Checks opts' tuning overrides against the device. */
akx_status akx__check_reduce_opts(const akx_context *ctx, const akx_reduce_opts *opts);
/* A scan's opts (akx_scan's, akx_segmented_scan's, akx_scan_by_key's): the scan tiles' block
 * (kernels/akx/block_limits.h), items per thread, exclusive 0 or 1. */
akx_status akx__check_scan_opts(const akx_context *ctx, const akx_scan_opts *opts);
/* akx__check_array's checks of a 1-d array `name` (any stride; zero only for AKX__ARRAY_SOURCE
 * in flags). */
akx_status akx__check_line(const akx_context *ctx, const akx_array *a, const char *name, int flags,
                           akx__extent *e);
/* keys (akx_scan_by_key's, akx_reduce_by_key's): a line of bool or an integer dtype and n
 * elements, n being `n_of` ("src->shape[0]"); `memory`: AKX__ARRAY_MEMORY or 0. */
akx_status akx__check_keys(const akx_context *ctx, const akx_array *keys, int64_t n, const char *n_of,
                           int memory, akx__extent *e);
/* A piece's positions (akx_mapreduce_piece, akx_reduce_dims_piece, akx_findall_piece): base,
 * block and skip, none negative. */
akx_status akx__check_piece_positions(int64_t base, int64_t block, int64_t skip);
/* The most pieces a reduction in pieces takes: far past any number of devices, and low enough
 * that the kernels folding the pieces' partials count them in 32 bits without overflowing
 * (stepping by up to 256 partials in kernels/akx/reduce_dims.cuh's fold_lanes, by a block in
 * kernels/akx/reduce_whole.cuh's reduce_partials_block). 64-bit counters there cost ptxas up
 * to 8 registers, and unsigned ones spilled. */
#define AKX__MAX_PIECES ((int64_t)1 << 30)

/* ---- dtype rules (src/core/dtype_rules.cpp: the constexpr rules of kernels/akx/dtypes.cuh) ---- */
/* Validates (src dtype, map, op, opts->acc) and resolves the accumulator. */
akx_status akx__resolve_acc(akx_dtype src, akx_map map, akx_op op, int32_t requested,
                            akx_dtype *acc);
/* The host half of the finishing step (kernels/akx/finish.cuh): dst is host memory of the
 * accumulator dtype; fold reads its previous value. */
/* AKX_ERROR_INTERNAL (nothing written) for an accumulator or op the validation refuses. */
/* 1 when a scan of src with this accumulator and op has compiled kernels. */
int akx__scan_supported(akx_dtype src, akx_dtype acc, akx_op op);
/* The prebuilt sets (kernels/akx/dtypes.cuh, akx::prebuilt_for): the library's (both
 * backends), the tests' (the sim's test-only plugin, src/jit/test_kernels.h), and both (the
 * CUDA backend of an AKX_CUDA_PREBUILT_ALL build). */
typedef enum { AKX__SET_LIBRARY = 0, AKX__SET_TESTS = 1, AKX__SET_ALL = 2 } akx__prebuilt_set;
/* What the backend's build prebuilds. */
akx__prebuilt_set akx__backend_prebuilt_set(akx_backend backend);
/* Whether a combination is in the backend's prebuilt set (kernels/akx/dtypes.cuh): else it is
 * compiled at run time (src/jit/builtin_instance.h). */
int akx__scan_prebuilt(akx_dtype src, akx_dtype acc, akx_op op, akx_dtype dst, akx_backend backend);
int akx__reduce_prebuilt(akx_dtype src, akx_map map, akx_dtype acc, akx_op op, akx_backend backend);
/* Whether c's kernels lie in `set`: a user op's never; a family that prebuilds the AUTO
 * accumulator alone (akx__family_auto_acc_only), only that one; a family without accumulator
 * and op (findall), in the library's. */
int akx__combination_prebuilt(const akx__combination *c, akx__prebuilt_set set);
/* 1 when some map makes (src, acc, op) a supported reduction: the reduction kernels are
 * compiled per (source, accumulator, op) and take the map at run time. */
int akx__reduce_supported_any_map(akx_dtype src, akx_dtype acc, akx_op op);
/* 1 when op is defined on accumulators of dtype acc. */
int akx__op_allowed(akx_dtype acc, akx_op op);
/* op and acc as plain integers: the C++ side switches on them, and an out-of-range value in a
 * C++ enum is undefined (clang's UBSan, -fsanitize=enum), where C passes any int. */
akx_status akx__finish_host(int32_t op, int32_t acc, const void *bare, const akx__finish *f);

/* ---- the ops' rules (src/core/validate.c) ---- */
/* AKX_ERROR_INVALID_ARGUMENT for an op that is no akx_op: neither built in nor of its own
 * accumulator (whether a user op's id is live is the user ops' registry's to say). */
akx_status akx__check_op(akx_op op);
/* Whether op has a neutral value to return for an empty reduction: not MIN, MAX (numpy refuses
 * them), ARGMIN, ARGMAX, nor a user op without identity (user_has_identity 0). */
int akx__op_has_neutral(akx_op op, int user_has_identity);
/* For a reduction of nothing (`what`, e.g. "src" or "src along the reduced dims", is empty):
 * AKX_ERROR_INVALID_ARGUMENT unless op has a neutral value, opts->init or opts->fold. */
akx_status akx__check_empty_result(akx_op op, int user_has_identity, const akx_reduce_opts *opts, const char *what);

/* ---- layout (src/core/canonical.c) ---- */
/* a's dims of extent other than 1 in memory order, folded where they tile (akx__fold_dims), each
 * walked in its own index order: the index map of positions in memory order (akx_findall's, a
 * user op's map's). Returns the count of dims written to shape and strides. */
int32_t akx__memory_order_fold(const akx_array *a, int64_t *shape, int64_t *strides);
void akx__canonical_source(const akx_array *a, const akx__extent *ext, akx__source *out);
/* The same without flipping: every dim walked in its own index order, dims ordered by
 * decreasing |stride| and merged where they tile, so that the canonical linear index is the
 * element's position in memory order (akx_findall's). For user ops, whose map sees it. */
void akx__canonical_source_ordered(const akx_array *a, const akx__extent *ext, akx__source *out);
/* Folds nd dims of `narrays` arrays over one shape to as few as the layout allows, in place;
 * returns the new count. Dims are sorted by decreasing |stride| of array 0 (ties: of array
 * 1, ...; stable), the innermost last; then a dim merges into its outer neighbour where, in
 * every array, the outer stride is the inner size times the inner stride. Every family's
 * canonical form goes through it. Sizes multiply without overflow: validation bounds the
 * product of an array's nonzero extents. */
int32_t akx__fold_dims(int32_t nd, int64_t *shape, int64_t *const *strides, int32_t narrays);

/* Reads the environment's settings (src/core/settings.c) into ctx again; nothing changes on
 * failure. For in-tree programs that change a setting between calls on one context (akx-bench's
 * layout passes, tests that force shapes); a user's context keeps those it was created with. */
akx_status akx__context_reread_settings(akx_context *ctx);

/* ---- workspace (src/core/workspace.c) ---- */
/* Scratch of at least `bytes` for this call, after the buffer's tags: the caller's buffer (too
 * small: AKX_ERROR_WORKSPACE_TOO_SMALL) or the context's cache, grown if needed (while the
 * stream captures a graph: AKX_ERROR_UNSUPPORTED instead of growing). */
akx_status akx__workspace(akx_context *ctx, size_t bytes, void **ptr);
/* A call's bytes of the buffer (src/core/workspace.c, "The regions"): the header, its flags
 * and tickets where no other family writes, its scratch after them. */
typedef struct {
  void *ptr;           /* the buffer's start: the 64-byte header */
  uint32_t *flags;     /* the look-back's flags */
  uint32_t *tickets;   /* the split dims reductions' tickets */
  uint64_t *splits;    /* a segmented reduction's split tickets (both halves) */
  uint64_t *split_count, *split_clear; /* akx__workspace_splits: the half the call counts on,
                                        * the half it zeroes for the next call */
  int64_t split_words; /* 8-byte words of each half */
  void *scratch;       /* need.scratch bytes, 256-byte aligned, anything in them */
  uint32_t epoch;      /* a look-back call's epoch */
  int32_t trusted;     /* the tags hold what the call may trust: no reset (look-back), tickets
                        * at 0 (reductions: one launch) */
  int64_t reset_flags; /* a look-back call not trusted: the flags the reset zeroes */
  int64_t known_after; /* what *_done records */
} akx__ws_grant;
/* A scan's or findall's look-back status (need.tags.flags = tiles, header): the call's epoch,
 * whether the reset kernel runs first. akx__workspace_lookback_done once the launch completed:
 * the next call may trust the status. */
akx_status akx__workspace_lookback(akx_context *ctx, const akx__ws_need *need, akx__ws_grant *g);
void akx__workspace_lookback_done(akx_context *ctx, const akx__ws_grant *g);
/* A whole-array reduction's ticket (need.tags.header, no tickets) or a split dims reduction's
 * tickets (need.tags.tickets): trusted when known to be 0 (one launch).
 * akx__workspace_tickets_done after a launch that left them at 0. */
akx_status akx__workspace_tickets(akx_context *ctx, const akx__ws_need *need, akx__ws_grant *g);
void akx__workspace_tickets_done(akx_context *ctx, const akx__ws_need *need, const akx__ws_grant *g);
/* A segmented reduction's split tickets (need.tags.splits = tiles): the half the call counts
 * on, zeroed first unless known to be zero, and the half its tiles zero for the next call.
 * akx__workspace_splits_done once the launch completed. */
akx_status akx__workspace_splits(akx_context *ctx, const akx__ws_need *need, akx__ws_grant *g);
void akx__workspace_splits_done(akx_context *ctx, const akx__ws_grant *g);
/* The sim's watch over the tags (src/core/workspace_check.c): each take records which regions
 * the call owns and what the others hold; the outermost call's end checks every region's
 * invariant (docs/workspace.md, "The invariants") and that no region the call does not own
 * changed. No-ops on CUDA. */
void akx__ws_watch(akx_context *ctx, const akx__ws_need *need);
akx_status akx__ws_watch_end(akx_context *ctx, akx_status s, const char *call);
/* akx_context_set_workspace once the stream is synchronized: ptr NULL returns to the cache.
 * Refuses (nothing changed) a range another live context holds. */
akx_status akx__workspace_set(akx_context *ctx, void *ptr, size_t bytes);
/* The refusal akx__workspace_set would give for [ptr, ptr + bytes), without taking it. */
akx_status akx__workspace_check_shared(const akx_context *ctx, const void *ptr, size_t bytes);
/* The live context whose caller-owned workspace meets [ptr, ptr + bytes), or NULL. */
const akx_context *akx__workspace_holder(const void *ptr, size_t bytes);
/* 1 when ptr is a cached buffer the context retired (a captured graph may still use it). */
int akx__workspace_is_retired(const akx_context *ctx, const void *ptr);
/* Frees the cached and retired buffers and gives back the caller's range (destroy). */
void akx__workspace_destroy(akx_context *ctx);

/* ---- stream capture (src/core/context.c) ---- */
/* AKX_ERROR_UNSUPPORTED while the context's stream captures a CUDA graph, else AKX_SUCCESS:
 * for what would synchronize or copy to the host. The sentence names `call`, says `why` and
 * what to do `instead` (NULL: call it outside the capture). Takes the context's lock
 * (include/akx.cuh calls it too). */
akx_status akx__refuse_if_capturing(const akx_context *ctx, const char *call, const char *why,
                                    const char *instead);

/* "s" unless n is 1: "1 element", "2 elements". */
static inline const char *akx__plural(int64_t n) { return n == 1 ? "" : "s"; }

#define AKX__ROUND_UP(x, a) (((x) + (a) - 1) / (a) * (a))

#ifdef __cplusplus
}
#endif
#endif
