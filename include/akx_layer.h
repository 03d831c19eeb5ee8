/* libakx for the libraries built on it.
 *
 * Audience: a library layered on libakx, such as libakx_dist (include/akx_dist.h, src/dist/),
 * which splits arrays across devices and runs each rank's shard on libakx. A program that
 * calls libakx from C, C++ or Julia needs include/akx.h alone (this header includes it).
 * Here:
 *  - akx_set_last_error: the layered library's failures read as libakx's own;
 *  - a reduction, a scan and a findall of one piece of a longer array, whose partials, totals
 *    or positions the caller joins with the other pieces' (akx_mapreduce_piece,
 *    akx_reduce_dims_piece, akx_scan_piece, akx_findall_piece), and the pieces' workspace
 *    queries;
 *  - akx_context_run: kernels of one's own on a context's stream, workspace and lock
 *    (include/akx.cuh's templates run through it);
 *  - akx_kernel_cache_counters: what the run-time kernel cache compiled and served, for tests
 *    and tools;
 *  - libakx's own rules where a layered library must agree with them: which ops carry an
 *    accumulator of their own, and the memory order of an array's dims (akx_findall's).
 * akx.h's rules hold here too: every argument is checked before anything runs, a context
 * serialises its calls, failures are an akx_status and an akx_last_error() sentence. These
 * functions are libakx.so's like akx.h's (the same symbols, whichever header declares them).
 */
#ifndef AKX_LAYER_H
#define AKX_LAYER_H
#include "akx.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- failures in libakx's words ----------------------------------------------------------- */

/* Sets the calling thread's akx_last_error() sentence (truncated to 1023 bytes) and returns s:
 * for libraries layered on libakx (libakx_dist, include/akx_dist.h) whose failures read the
 * same way as libakx's own. A NULL sentence sets "". */
akx_status akx_set_last_error(akx_status s, const char *sentence);

/* ---- a reduction in pieces (for libraries that split arrays across devices: libakx_dist) ---- */

/* akx_mapreduce_piece's exchange, called once between its two halves, on the calling thread
 * with ctx's lock held. `partial` (device memory of ctx, `bytes`) holds the piece's partial:
 * the combine of its elements, as the kernels carry it (an op without identity's accumulator
 * with its valid flag; an empty piece's is the identity, or no value). Its kernels are enqueued
 * on ctx's stream: read it in stream order (akx_memcpy on ctx is). Write to *all the device
 * address of every piece's partial, piece->pieces blocks of `bytes` in the order of the pieces
 * (this one's among them); it is read, in stream order, before akx_mapreduce_piece returns. It
 * may call akx_memcpy on ctx, nothing that uses ctx's workspace. A status other than
 * AKX_SUCCESS abandons the call (result unwritten) and is returned. */
typedef akx_status (*akx_reduce_exchange)(void *arg, const void *partial, size_t bytes,
                                          const void **all);

typedef struct {
  /* The position a user op's map (and ARGMIN/ARGMAX) sees for the piece's element at position
   * i (akx_findall's order over src): position_base + i + (i / position_block) * position_skip,
   * position_block 0 for none: the piece as runs of position_block elements with
   * position_skip elements of other pieces between them in the whole array. All >= 0. */
  int64_t position_base, position_block, position_skip;
  int64_t pieces; /* partials the exchange gives (1..2^30) */
  akx_reduce_exchange exchange;
  void *arg;
} akx_reduce_piece_t;

/* akx_mapreduce of src as one piece of a longer array: the result is the reduction of every
 * piece's elements, with opts->init applied once and opts->fold into result, as akx_mapreduce
 * of the whole array gives (up to the order of a float op's combines: the pieces' partials are
 * combined by the same kernels' second pass, in a tree fixed by the number of pieces, so the
 * bits are the same for every caller that passes the same partials). Every op and map
 * akx_mapreduce takes, user ops and ARGMIN/ARGMAX included (their positions: position_*). An
 * empty piece is allowed whatever the op (it contributes nothing); when every piece is empty,
 * call akx_mapreduce on an empty array instead, which knows the empty result's rules. Errors as
 * akx_mapreduce's, checked before anything runs; piece NULL, exchange NULL, pieces outside 1..2^30 or a
 * negative position_* is AKX_ERROR_INVALID_ARGUMENT. Its workspace is akx_mapreduce's
 * (akx_mapreduce_workspace_size of a nonempty src of the same dtype and opts). */
akx_status akx_mapreduce_piece(akx_context *ctx, const akx_array *src, akx_map map, akx_op op,
                               const akx_reduce_opts *opts, const akx_reduce_piece_t *piece,
                               void *result, akx_where where);

/* akx_reduce_dims of src as one piece of a longer array, split along reduced dims: every output
 * of dst reduces its elements in every piece. Each piece passes the same dst shape (its own
 * layout) and src extents that may differ along reduced dims only. The piece's partial per
 * output (n_out accumulators in dst's C order, dim 0 slowest, so that pieces in other layouts
 * pair their outputs alike) goes to the exchange, which gives every piece's, piece->pieces
 * blocks of those bytes in the order of the pieces; each output's are combined in that order,
 * with opts->init applied once and opts->fold into dst, as akx_reduce_dims of the whole array
 * gives (up to the order of a float op's combines; the same partials give the same bits).
 * Every op and map akx_reduce_dims takes, user ops and ARGMIN/ARGMAX included: the position a
 * user op's map sees for the piece's element at position i among its output's reduced
 * elements (akx_reduce_dims' rule over this piece) is position_base + i + (i / position_block)
 * * position_skip, as in akx_mapreduce_piece. An empty piece is allowed whatever the op; when
 * every piece is empty, call akx_reduce_dims on an empty array instead. The exchange is not
 * called when dst has no element. Errors as akx_reduce_dims', checked before anything runs;
 * piece NULL, exchange NULL, pieces outside 1..2^30 or a negative position_* is
 * AKX_ERROR_INVALID_ARGUMENT; a built-in op's dst of AKX_MAX_DIMS dims, none of extent 1, is
 * AKX_ERROR_UNSUPPORTED (its pieces are combined along a dim of extent 1). */
akx_status akx_reduce_dims_piece(akx_context *ctx, const akx_array *dst, const akx_array *src,
                                 akx_map map, akx_op op, const akx_reduce_opts *opts,
                                 const akx_reduce_piece_t *piece);
/* Bytes of workspace akx_reduce_dims_piece needs for these shapes, dtypes, options and count
 * of pieces (data pointers need not exist yet), for a caller that gives the context its own
 * (akx_context_set_workspace). Errors as akx_reduce_dims_piece's; bytes NULL is
 * AKX_ERROR_INVALID_ARGUMENT. */
akx_status akx_reduce_dims_piece_workspace_size(const akx_context *ctx, const akx_array *dst,
                                                const akx_array *src, akx_map map, akx_op op,
                                                const akx_reduce_opts *opts, int64_t pieces,
                                                size_t *bytes);

/* ---- a scan in pieces (for libraries that split sequences across devices: libakx_dist) ---- */

/* akx_scan_piece's exchange, called once between its two halves, on the calling thread with
 * ctx's lock held. `totals` (device memory of ctx, `bytes`) holds the piece's total per line:
 * the combine of the line's elements in order, as the kernels carry it (an op without
 * identity's accumulator with its valid flag; a line of an empty piece holds the identity, or
 * no value). The kernels that write it are enqueued on ctx's stream: read it in stream order
 * (akx_memcpy on ctx is). Write to *before the device address of the totals of the
 * piece->pieces_before pieces before this one, one `bytes` block each, in sequence order (NULL
 * when there are none); it is read, in stream order, before akx_scan_piece returns. It may call
 * akx_memcpy on ctx, nothing that uses ctx's workspace. A status other than AKX_SUCCESS
 * abandons the call (dst unwritten) and is returned. */
typedef akx_status (*akx_scan_exchange)(void *arg, const void *totals, size_t bytes,
                                        const void **before);

typedef struct {
  int64_t index_base;    /* the index along dim, in the whole sequence, of the piece's first
                            element: what a user op's map sees is i + index_base (>= 0) */
  int64_t pieces_before; /* pieces before this one in every sequence (>= 0; 0: the first) */
  akx_scan_exchange exchange;
  void *arg;
} akx_scan_piece_t;

/* akx_scan of src along dim (AKX_DIM_ALL: src in memory order, one line) as one piece of
 * longer sequences: every line of src continues the same line of the pieces before it, as if
 * their elements came first. The result is dst's part of the scan of the whole sequences:
 * opts->init (and an exclusive scan's head) applies at the front of the whole sequence, the
 * pieces before come next, in order, then the piece's own elements, left to right: ops need
 * not commute. The lines are the elements of the kept dims in C order (dim 0 slowest), so that
 * pieces in other layouts pair their lines alike. The piece runs on the column kernels (a
 * thread per line and chunk: kernels/akx/scan_columns.cuh), whatever the layout. Errors as
 * akx_scan's, checked before anything runs; piece NULL, exchange NULL or a negative count is
 * AKX_ERROR_INVALID_ARGUMENT. The exchange is not called when src has no line (an extent of
 * 0 outside dim); it is called when the piece is empty along dim. */
akx_status akx_scan_piece(akx_context *ctx, const akx_array *dst, const akx_array *src,
                          akx_op op, int32_t dim, const akx_scan_opts *opts,
                          const akx_scan_piece_t *piece);
/* Bytes of workspace akx_scan_piece needs for these shapes, dtypes, options and count of pieces
 * before (data pointers need not exist yet), for a caller that gives the context its own
 * (akx_context_set_workspace). Errors as akx_scan_piece's; bytes NULL or a negative
 * pieces_before is AKX_ERROR_INVALID_ARGUMENT. */
akx_status akx_scan_piece_workspace_size(const akx_context *ctx, const akx_array *dst,
                                         const akx_array *src, akx_op op, int32_t dim,
                                         const akx_scan_opts *opts, int64_t pieces_before,
                                         size_t *bytes);

/* ---- a findall in pieces (libakx_dist's akx_findall_all) ---------------------------- */

/* akx_findall of src as one piece of a longer array (for libraries that split arrays across
 * devices: libakx_dist): the positions written are the whole array's, position_base + i +
 * (i / position_block) * position_skip for the piece's position i (position_block 0: no gap),
 * as akx_mapreduce_piece's, moved on the device as they are stored. Errors as akx_findall's;
 * piece NULL or a negative position_* is AKX_ERROR_INVALID_ARGUMENT. */
typedef struct {
  int64_t position_base, position_block, position_skip;
} akx_findall_piece_t;
akx_status akx_findall_piece(akx_context *ctx, const akx_array *src, const akx_array *indices,
                             int64_t *count, const akx_findall_piece_t *piece);

/* ---- kernels of one's own on a context ---------------------------------------------- */

/* Runs fn(stream, workspace, arg) on this context: its stream (a cudaStream_t; NULL on the
 * sim), a device workspace of at least workspace_bytes (the caller's or the context's cache;
 * NULL when 0), the context's lock held and, on the sim, launches attributed to ctx. For
 * kernels written against kernels/akx/device.cuh, as include/akx.cuh's templates are. Returns
 * fn's status. */
akx_status akx_context_run(akx_context *ctx, size_t workspace_bytes,
                           akx_status (*fn)(void *stream, void *workspace, void *arg), void *arg);

/* ---- libakx's rules, for a layered library to agree with ------------------------------ */

/* 1 for AKX_OP_ARGMIN, AKX_OP_ARGMAX and a user op's value (>= AKX_USER_OP_FIRST): an op whose
 * accumulator is its own (akx_user_op_info gives its layout), not a dtype; else 0. */
int akx_op_has_own_accumulator(akx_op op);

/* a's dims in memory order, outermost first, into order[0 .. a->ndim): by decreasing |stride|,
 * ties in index order (the later dim inner, as C order). The order akx_findall's positions
 * count in and every canonical form sorts by. Writes nothing for a NULL argument or an ndim
 * outside 0..AKX_MAX_DIMS. */
void akx_array_memory_order(const akx_array *a, int32_t *order);

/* ---- the run-time kernel cache ------------------------------------------------------ */

/* The process's run-time kernel cache (docs/runtime_kernels.md): compiles run, calls served
 * from memory, entries loaded from disk. For tests and for seeing what a program compiles. */
typedef struct {
  uint64_t compiles, memory_hits, disk_hits;
} akx_kernel_cache_counters_t;
void akx_kernel_cache_counters(akx_kernel_cache_counters_t *out);

#ifdef __cplusplus
}
#endif
#endif /* AKX_LAYER_H */
