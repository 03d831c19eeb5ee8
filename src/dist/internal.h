/* libakx_dist's inside: the communicator, the engine table behind it (MPI, NCCL), the record
 * every call agrees on before any kernel runs, and the partials' exchange. Host code over the
 * public libakx API only (include/akx.h and include/akx_layer.h). */
#ifndef AKX_DIST_INTERNAL_H
#define AKX_DIST_INTERNAL_H
#include <stddef.h>
#include <stdint.h>
#include "akx_layer.h" /* akx_set_last_error, akx_*_piece, akx_context_run */
#include "akx_dist.h"

/* What an engine does: gather `bytes` from every rank into recv (size * bytes, rank order).
 * allgather_host takes host buffers and returns when recv is filled (the agreement record);
 * allgather takes the partials' buffers, device memory when device_partials is set (enqueued
 * on the context's stream), host memory otherwise. */
typedef struct akx__dist_engine {
  const char *name;
  int device_partials;
  akx_status (*allgather_host)(akx_comm *c, const void *send, void *recv, size_t bytes);
  akx_status (*allgather)(akx_comm *c, const void *send, void *recv, size_t bytes);
  void (*destroy)(akx_comm *c);
} akx__dist_engine;

/* A device buffer the communicator keeps and grows (its calls reuse it, so that the NCCL path
 * never frees memory that queued work may still use, except when it grows). */
typedef struct {
  void *ptr;
  size_t bytes;
} akx__dist_buffer;

struct akx_comm {
  akx_context *ctx;
  const akx__dist_engine *engine;
  void *handle; /* the engine's: an MPI_Comm (duplicated, heap) or an ncclComm_t */
  int rank, size;
  akx__dist_buffer partials; /* this rank's partial, then all ranks' */
  akx__dist_buffer temp;     /* scan_all's extended lines */
  void *records;             /* the last agreement's records, records_bytes */
  size_t records_bytes;
  void *host;                /* host staging, host_bytes */
  size_t host_bytes;
  akx_comm_counters_t counters;
};

#define AKX_DIST_TRY(expr)                              \
  do {                                                  \
    const akx_status akx_dist_s_ = (expr);              \
    if (akx_dist_s_ != AKX_SUCCESS) return akx_dist_s_; \
  } while (0)

/* ---- comm.c ---- */
akx_status akx__dist_fail(akx_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
akx_status akx__dist_grow(akx_comm *c, akx__dist_buffer *b, size_t bytes);
akx_status akx__dist_host(akx_comm *c, size_t bytes, void **p);
/* A new communicator over an engine (its handle filled by the caller afterwards). */
akx_status akx__dist_comm_new(akx_context *ctx, const akx__dist_engine *e, void *handle, int rank,
                              int size, akx_comm **out);
double akx__dist_now(void);

/* The partials' exchange. akx__dist_partials_local gives a device slot of `bytes` this rank
 * may write its partial to; akx__dist_partials_exchange then gathers every rank's `bytes` at
 * send (device memory of the context: that slot, or wherever the partial is) into one device
 * array of size * bytes, rank order (*all; the slot is not overwritten). MPI stages through
 * host memory (a copy there, which synchronizes, and one back); NCCL stays on the stream (no
 * copy, no synchronize). */
akx_status akx__dist_partials_local(akx_comm *c, size_t bytes, void **local);
akx_status akx__dist_partials_exchange(akx_comm *c, const void *send, size_t bytes, void **all);

/* ---- nccl_device.c ---- */
/* Whether an NCCL communicator on CUDA device comm_device (ncclCommCuDevice) may serve a context
 * on ctx_device (ctx_name: its akx_context_info device_name, may be "" or NULL): AKX_SUCCESS
 * when they are one device, else AKX_ERROR_INVALID_ARGUMENT with the sentence, naming both, in
 * why (cap bytes). Every rank drives its own device from its own thread or process: a context
 * on another device than its communicator is a rank wired to the wrong peer. */
akx_status akx__dist_nccl_device_check(int comm_device, int ctx_device, const char *ctx_name, char *why,
                                       size_t cap);
/* akx_comm_create_nccl's check: the context's device, as current_device (cudaGetDevice, run by
 * akx_context_run: it writes an int at arg) finds it inside the context's akx_context_run,
 * against comm_device by akx__dist_nccl_device_check. akx_context_run's own failure is
 * returned with why left empty (its sentence in akx_last_error). */
akx_status akx__dist_nccl_context_check(akx_context *ctx, int comm_device,
                                        akx_status (*current_device)(void *, void *, void *), char *why,
                                        size_t cap);

/* One thread, one rank of a clique (include/akx_dist.h, "Threads"): a thread that drives two
 * ranks of one NCCL clique hangs in its first call. NCCL names no clique, so a rank is known by
 * its communicator's size, its rank and its device: two of one size on two devices with two ranks
 * are taken for one clique (one clique never has two ranks on one device: NCCL refuses that). */
typedef struct {
  uint64_t thread;   /* akx__dist_thread_id of the thread that created it */
  const void *owner; /* the akx_comm */
  int size, rank, device;
} akx__dist_nccl_rank;
/* Whether `mine` may join the n ranks held: AKX_SUCCESS, else AKX_ERROR_INVALID_ARGUMENT with the
 * sentence (both ranks, both devices, what to do) in why (cap bytes). A pure function. */
akx_status akx__dist_nccl_thread_check(const akx__dist_nccl_rank *held, int n, const akx__dist_nccl_rank *mine,
                                       char *why, size_t cap);
/* This thread's number, from 1, never reused in the process (a pthread_t may be). */
uint64_t akx__dist_thread_id(void);
/* The process's table: akx_comm_create_nccl claims its rank for the calling thread (refused as
 * akx__dist_nccl_thread_check says, or AKX_ERROR_OUT_OF_MEMORY), akx_comm_destroy releases it
 * (owner: the akx_comm; releasing one never claimed does nothing). */
akx_status akx__dist_nccl_claim(const void *owner, int size, int rank, int device, char *why, size_t cap);
void akx__dist_nccl_release(const void *owner);

/* ---- identity.c ---- */
/* The exact neutral element of a built-in op in accumulator dtype acc (float ADD: -0.0; MIN:
 * +inf or the type's largest value; MAX: -inf or the smallest), at most 16 bytes written to
 * out. 0 for op/acc pairs without one (none that the reductions accept). */
int akx__dist_identity(akx_op op, akx_dtype acc, void *out);

/* ---- agree.c: collective validation ---- */
enum { AKX__DIST_MAPREDUCE, AKX__DIST_REDUCE_DIMS, AKX__DIST_SCAN, AKX__DIST_FINDALL };

/* What each rank states about its call; exchanged whole (fixed layout), compared in agree. */
typedef struct {
  int32_t status;
  int32_t family, op, map, split_dim, dim, exclusive, fold, has_init;
  int32_t src_dtype, dst_dtype, acc, ndim, dst_ndim;
  int64_t src_shape[AKX_MAX_DIMS], dst_shape[AKX_MAX_DIMS];
  int64_t src_count;      /* local elements */
  int64_t capacity;       /* findall: indices' capacity */
  int32_t order[AKX_MAX_DIMS]; /* findall and `positional`: dims outermost first */
  int32_t positional;     /* mapreduce with a user op or ARGMIN/ARGMAX: its map reads positions,
                             global ones in the reference rank's memory order (as findall's) */
  int64_t acc_bytes;      /* the accumulator's bytes (a user op's: akx_user_op_info) */
  unsigned char init[32]; /* a user op's accumulator is at most 32 bytes */
  char sentence[256];
} akx__dist_record;

/* Marks r failed with status s and akx_last_error()'s sentence (after a libakx call) or fmt. */
akx_status akx__dist_record_fail(akx__dist_record *r, akx_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Exchanges the records (*all: size records, the comm's host staging) and decides: the lowest
 * faulty rank's status, or a disagreement with rank 0 (or the first rank with elements, for
 * findall's order) as AKX_ERROR_INVALID_ARGUMENT, every rank the same; the sentence names the
 * rank. */
akx_status akx__dist_agree(akx_comm *c, akx__dist_record *mine, const akx__dist_record **all);
/* akx_mapreduce_all's two calls for a built-in op: the rank's own over its shard (the op's
 * neutral element as init, so that an empty shard gives it; no fold; the caller's tuning), and
 * the combine over the gathered partials (the caller's init and fold, applied once, as in the
 * single-process call). */
akx_reduce_opts akx__dist_local_opts(const akx_reduce_opts *given, akx_dtype acc, const void *identity);
akx_reduce_opts akx__dist_combine_opts(const akx_reduce_opts *given, akx_dtype acc);
/* The record of the call's arguments (pointers may be NULL: those fields stay 0), then the
 * checks every family starts with: src, a split_dim in range
 * (AKX_DIM_ALL allowed when allow_all), an op the family combines (the built-in ops ADD..XOR
 * and user ops; the reductions also ARGMIN/ARGMAX), src's data (NULL only when empty) and,
 * with needs_dst, dst and its data. Marks r failed. */
void akx__dist_begin(akx__dist_record *r, int family, const akx_array *dst, const akx_array *src,
                     int32_t split_dim, akx_map map, akx_op op, int32_t dim, int allow_all,
                     int needs_dst);
/* The accumulator of (src, map, op, requested acc) as libakx resolves it, its neutral element
 * (16 bytes at identity) and init's bytes into me; its size, or 0 with me marked failed.
 * Built-in ops ADD..XOR only: a user op's accumulator is akx__dist_user_acc's. */
size_t akx__dist_resolve_acc(akx__dist_record *me, const akx_array *src, akx_map map, akx_op op,
                             akx_dtype requested, const void *init, akx_dtype *acc, void *identity);
/* A user op of ctx, or ARGMIN/ARGMAX (the reductions take them): its accumulator's size and
 * init's bytes into me (acc stays AKX_DTYPE_AUTO: the op's own type); 0 with me marked failed. */
size_t akx__dist_user_acc(akx__dist_record *me, akx_context *ctx, akx_op op, const void *init);
/* The exchange akx_scan_piece, akx_mapreduce_piece and akx_reduce_dims_piece call back (their
 * callbacks' type; comm: the akx_comm): this rank's `bytes` at `local` (device memory) gathered
 * from every rank into one device array (*all: size blocks, rank order; a scan's pieces before
 * this rank are its first blocks). */
akx_status akx__dist_exchange(void *comm, const void *local, size_t bytes, const void **all);
/* The rank whose memory order the global positions follow: the one with the longest shard along
 * split_dim, the lowest such (-1: every shard empty). */
int akx__dist_findall_ref(const akx__dist_record *all, int size);
/* ---- positions.c ---- */
/* Where this rank's shard sits among the global array's positions (akx_mapreduce_all and
 * akx_findall_all: over every dim; akx_reduce_dims_all, reduced_only: over the reduced dims, of
 * dst extent 1, among each output's elements), as a piece's position_base, _block and _skip:
 * the dims in the reference rank's memory order (akx__dist_findall_ref; the agreement checked
 * every rank's against it), split_dim's run of this rank's extent among the global one, the
 * dims outside it repeating that run with the other ranks' elements between. AKX_DIM_ALL: the
 * elements of the ranks before, one after the other (no gap). */
void akx__dist_positions(const akx_comm *comm, const akx__dist_record *all, int32_t split_dim, int reduced_only,
                         int64_t *base, int64_t *block, int64_t *skip);
/* Elements of a (0 for an empty one), and whether `a` with count > 0 has NULL data. */
int64_t akx__dist_count(const akx_array *a);

#endif
