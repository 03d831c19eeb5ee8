/* libakx_dist: reductions, scans and findall over an array split across ranks, on the
 * caller's own MPI or NCCL communicator. A separate library (libakx_dist.so, pkg-config
 * akx-dist, CMake akx::dist) so that libakx.so does not depend on MPI or NCCL.
 *
 * The global array. Every rank holds a local array (an akx_array on its own context). The
 * global array is the concatenation, in rank order, of the local arrays along split_dim; with
 * split_dim AKX_DIM_ALL, each local array in memory order (akx_findall's order), one after the
 * other. Local shapes may differ along split_dim only; a rank may hold none of it (extent 0).
 * Every call is collective: all ranks of the communicator call it, with the same op, map,
 * dtypes, dims and options. The results are those of the single-process call on the global
 * array, with the rounding note below.
 *
 * Determinism. Only per-rank partials cross ranks (O(P) accumulators per call, never the
 * data): each rank computes its partial with libakx, one allgather gives every rank all P
 * partials, and every rank combines them in rank order with libakx on its device, the same
 * call over the same bytes. The engine's own reductions (MPI_Allreduce, ncclAllReduce) are
 * never used, so the result does not depend on the engine's algorithm or topology. Results are
 * bitwise identical on every rank and from run to run for a given rank count and given local
 * shapes, floats included. Integers (wrapping), bool and MIN/MAX (NaN propagates) give exactly
 * the single-process result. A float ADD or MUL combines in a different tree from the
 * single-process call (per rank, then across ranks), so it may differ from it in rounding (as
 * two single-process calls on differently shaped arrays may).
 *
 * Ops. The built-in ops ADD, MUL, MIN, MAX, AND, OR, XOR with every map and accumulator that
 * the single-process call takes, in every family. User ops (akx_user_op_create: the same op,
 * created in the same order on every rank, so that its value agrees; compared by value and
 * accumulator size) in every family, and AKX_OP_ARGMIN/ARGMAX in the reductions: each rank's
 * shard is a piece of the global array (akx_mapreduce_piece, akx_reduce_dims_piece,
 * akx_scan_piece, akx_layer.h), so that their maps see global positions (akx_mapreduce_all:
 * the global memory order, as akx_findall_all's; akx_reduce_dims_all: the position among each
 * output's reduced elements of the global array, in its memory order; akx_scan_all: the index
 * along the scanned dim of the global array), and the ranks' partials, in the layout the
 * kernels carry, are combined on the device by libakx's own passes (a scan's in rank order:
 * its op need not commute). An empty shard contributes nothing, also for an op without
 * identity.
 *
 * Collective validation. Every rank validates its own arguments as the single-process call
 * would, then one small allgather (a fixed record per rank) agrees on the outcome before any
 * kernel runs: each rank's status, the dtypes, op, map, ndim, split_dim, dim, options, init's
 * value and the extents of the non-split dims. If any rank's arguments are bad, or the ranks
 * disagree, every rank returns the same status (the lowest faulty rank's), writes nothing, and
 * its akx_last_error() names the faulty rank and what was wrong there ("rank 2: ..."). A
 * failure of the engine itself (an MPI or NCCL error) returns AKX_ERROR_DEVICE on the ranks
 * that see it; MPI's default handler aborts the job before that.
 *
 * Engines. MPI (any implementation, not necessarily CUDA-aware): partials are staged through
 * host memory and exchanged with MPI_Allgather: each exchange copies the rank's partials to the
 * host, which waits for the context's stream (MPI reads host memory, so that wait is the
 * engine's own), and every rank's back, also synchronously (the stream is idle by then: that
 * copy waits for nothing but itself); a call synchronizes the context's stream. NCCL: partials
 * are allgathered on the device with ncclAllGather on the context's stream, sent from where the
 * rank's partial lies (no copy); the validation record is small and also moves over NCCL, so
 * each call synchronizes once, for that record, before any kernel runs; the exchange of
 * partials and the combine stay stream-ordered (no copy or synchronize of their own). NCCL
 * needs a CUDA context (the sim is MPI only).
 *
 * Threads: a communicator is used by one thread at a time, and all ranks issue their
 * collective calls in the same order (as MPI and NCCL require). Each rank needs its own thread
 * or process: every call waits on the host for the other ranks' agreement records, so one
 * thread driving several ranks (say the communicators of one ncclCommInitAll, one per device)
 * deadlocks in its first call, which waits for calls that the same thread would make next.
 * akx_comm_create_nccl refuses a second rank of one clique on the thread that created the
 * first (AKX_ERROR_INVALID_ARGUMENT; NCCL names no clique, so two communicators of one size on
 * two devices with two ranks are taken for one): create each rank's akx_comm in the thread that
 * drives it. Never inside an NCCL group (ncclGroupStart/ncclGroupEnd): NCCL defers a group's
 * collectives to ncclGroupEnd, and every call here waits on the host for its agreement record's
 * allgather before it returns, so it would wait for an ncclGroupEnd that only comes after it.
 */
#ifndef AKX_DIST_H
#define AKX_DIST_H
#include "akx.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef struct akx_comm akx_comm;

/* A communicator over the caller's MPI communicator: mpi_comm points to an MPI_Comm (from
 * Julia's MPI.jl: a Ref to comm.val). It is duplicated (MPI_Comm_dup, collective), so the
 * caller's may be freed afterwards and libakx's messages never meet the caller's. ctx does the
 * rank's local work; one rank per context, and ctx must outlive the communicator. *comm is
 * written on success only. AKX_ERROR_UNSUPPORTED when libakx_dist was built without MPI. */
akx_status akx_comm_create_mpi(akx_context *ctx, const void *mpi_comm, akx_comm **comm);

/* A communicator over the caller's ncclComm_t (passed as void *; not duplicated: it must
 * outlive the akx_comm). ctx must be a CUDA context on the communicator's device
 * (ncclCommCuDevice): another device is AKX_ERROR_INVALID_ARGUMENT, the sentence naming both.
 * One rank per thread or process (see "Threads" above): a second rank of one clique created on
 * one thread is AKX_ERROR_INVALID_ARGUMENT, the sentence naming both ranks. Never inside an NCCL
 * group. AKX_ERROR_UNSUPPORTED when libakx_dist was built without NCCL, or for a sim context. */
akx_status akx_comm_create_nccl(akx_context *ctx, void *nccl_comm, akx_comm **comm);

/* Frees the communicator (MPI: its duplicate, collectively), not the context. NULL: no-op. */
void akx_comm_destroy(akx_comm *comm);

/* This rank and the number of ranks. Either pointer may be NULL. */
akx_status akx_comm_rank(const akx_comm *comm, int *rank, int *size);

/* What a communicator has exchanged since it was created (or last reset), for akx-bench and
 * for callers who account for their traffic: bytes this rank sent and received through the
 * engine (agreement records and partials; MPI's host staging copies are not counted again),
 * the exchanges (engine collectives) and their host wall time, staging copies included. */
typedef struct {
  uint64_t calls, exchanges;
  uint64_t bytes_sent, bytes_received;
  double exchange_seconds;
} akx_comm_counters_t;
akx_status akx_comm_counters(const akx_comm *comm, akx_comm_counters_t *out);
akx_status akx_comm_counters_reset(akx_comm *comm);

/* akx_mapreduce over the global array: every rank receives the whole result at `result`
 * (where: AKX_HOST or AKX_DEVICE, each rank its own). opts->init is combined once (as in the
 * single-process call), opts->fold combines with each rank's previous value at result. Each
 * rank reduces its shard with no init; the nonempty ranks' partials are combined in rank order
 * with init (ranks with no element contribute nothing, so a float ADD keeps -0.0 as the single
 * call does). An empty global array gives init, else the neutral element; MIN/MAX of an empty
 * global array without init or fold is AKX_ERROR_INVALID_ARGUMENT on every rank.
 * split_dim: 0..ndim-1 (the non-split extents must agree across ranks) or AKX_DIM_ALL (any
 * local shapes). */
akx_status akx_mapreduce_all(akx_comm *comm, const akx_array *src, int32_t split_dim,
                             akx_map map, akx_op op, const akx_reduce_opts *opts,
                             void *result, akx_where where);

/* akx_reduce_dims over the global array. dst has src's ndim, each dim src's extent or 1.
 * split_dim (0..ndim-1) kept: each rank's dst is its own slice (dst's extent along split_dim
 * equal to its local src's on every rank); the call is local after the agreement.
 * split_dim reduced (dst's extent along split_dim 1 on every rank, which wins when each rank
 * holds one slice): every rank receives the whole dst. Each rank reduces its shard into a
 * partial per output (akx_reduce_dims_piece: the kernels' accumulator, dst's outputs in C order,
 * whatever each rank's layouts), which are allgathered and combined in rank order with init
 * and fold, converted to dst's dtype once. A user op's map and ARGMIN/ARGMAX see global
 * positions among each output's reduced elements: every rank must order its reduced dims of
 * extent > 1 alike in memory (as akx_mapreduce_all's dims), else AKX_ERROR_INVALID_ARGUMENT on
 * every rank. */
akx_status akx_reduce_dims_all(akx_comm *comm, const akx_array *dst, const akx_array *src,
                               int32_t split_dim, akx_map map, akx_op op,
                               const akx_reduce_opts *opts);

/* akx_scan over the global array: each rank receives its own slice of the global scan in dst
 * (dst has its local src's shape). dim other than split_dim: local (each slice scans alone).
 * dim == split_dim, or AKX_DIM_ALL (then split_dim must be AKX_DIM_ALL too: the global array
 * is the local arrays one after the other in memory order): each rank reduces its shard to
 * totals (one per line along dim), the totals are allgathered, and rank r's carry is init
 * combined with the totals of the nonempty ranks before r, in rank order; the carry is the left
 * operand of every value of r's slice, as the elements before it are in the single-process
 * scan. Inclusive and exclusive (opts->exclusive); an exclusive MIN/MAX scan needs
 * opts->init, as akx_scan does. In place when dst is src. A user op along split_dim runs as
 * akx_scan_piece on every rank (the column kernels; the carry goes in on the device, no copy of
 * the shard), its totals allgathered. */
akx_status akx_scan_all(akx_comm *comm, const akx_array *dst, const akx_array *src,
                        int32_t split_dim, akx_op op, int32_t dim, const akx_scan_opts *opts);

/* akx_findall over the global array: each rank receives, in indices, the global positions of
 * its own nonzero elements, in increasing order; *count (host) is this rank's count and
 * *total (host) the global count. A position is the element's memory-order position in the
 * global array: over the dims in the order akx_findall gives the local array of the rank with the
 * longest shard along split_dim (decreasing |stride|, ties keep the lower dim outer), with the
 * global extent along split_dim; every other rank with elements must order its dims of extent
 * > 1 the same way (else AKX_ERROR_INVALID_ARGUMENT everywhere; not with AKX_DIM_ALL, where
 * each local array keeps its own memory order and the layouts of the ranks may differ). The rank's positions are
 * rewritten on the host (a copy of its own positions there and back). AKX_DIM_ALL: the rank's position offset by the element counts of the ranks
 * before it. snprintf-style as akx_findall: when any rank's count exceeds its capacity, every
 * rank returns AKX_ERROR_OUTPUT_TOO_SMALL (the sentence names the rank), with *count and *total
 * written and each rank's first capacity positions stored. Synchronizes. */
akx_status akx_findall_all(akx_comm *comm, const akx_array *src, int32_t split_dim,
                           const akx_array *indices, int64_t *count, int64_t *total);

#ifdef __cplusplus
}
#endif
#endif /* AKX_DIST_H */
