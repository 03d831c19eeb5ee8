/* libakx: GPU scans and reductions from C.
 *
 * All functions are C11; no CUDA header is needed to include this file.
 * Every entry point validates all of its arguments before it launches anything:
 * on error it returns a status, writes nothing (output parameters included), and
 * akx_last_error() names the argument and the value at fault.
 *
 * Threads: every call on a context is safe from any thread. A context serialises its calls
 * (a lock around its stream, workspace and launches), so two threads sharing one context
 * take turns; threads that want to run at once use a context each.
 *
 * Stream capture (CUDA graphs): the asynchronous calls (akx_mapreduce with AKX_DEVICE,
 * akx_reduce_dims, akx_scan, akx_findall_where, akx_reduce_by_key_where and the selections
 * with AKX_DEVICE;
 * akx_context_run of include/akx_layer.h) may be captured with
 * cudaStreamBeginCapture on the context's stream once the workspace is large enough (a
 * caller-owned one sized with the *_workspace_size queries, or the cached one grown by a call
 * of the same shapes before the capture) and the call's kernels were launched once on the
 * device before it (their first launch sets their attributes: a driver call a capture cannot
 * hold; run the same call once outside the capture). What a capture cannot hold is refused with
 * AKX_ERROR_UNSUPPORTED, the context left as it was (a first launch inside the capture may come
 * after the call's earlier kernels were enqueued: end the capture then): growing the
 * cached workspace (it allocates, synchronizes and frees), a host result (akx_mapreduce with
 * AKX_HOST, akx_findall's count, akx::reduce), akx_synchronize, akx_memcpy,
 * akx_context_set_stream and akx_context_set_workspace. Every replay of a graph writes the
 * workspace it was captured with, as the context's later calls do: replay it in order with them
 * (on the context's stream). A cached workspace a capture used is never freed before
 * akx_context_destroy (a later growth sets it aside), so a graph stays valid while its context
 * lives (with a caller-owned workspace: while that buffer does). Destroy a context after its
 * graphs' last replay, and not while its stream captures.
 *
 * Arrays are described by akx_array: `data` is the address of element (0,...,0),
 * `shape` and `strides` are in elements (any sign; 0 is allowed in sources).
 * Julia callers pass their arrays with their own (column-major) strides:
 * dimension d of the descriptor is Julia's `dims = d + 1`.
 *
 * This header is the whole API of a program that calls libakx from C, C++ or Julia. The
 * machinery of libraries built on libakx (libakx_dist: calls on one piece of a longer array,
 * kernels of one's own on a context) is in include/akx_layer.h, which includes this one;
 * include/akx.cuh adds templates over a user functor. One libakx.so exports both headers'
 * functions.
 */
#ifndef AKX_H
#define AKX_H

/* NVRTC, which compiles the kernel headers at run time, has no C library: there the kernels'
 * standard-library shim defines size_t and the fixed-width types (kernels/akx/std.cuh). */
#if defined(__CUDACC_RTC__)
#include "akx/std.cuh"
#else
#include <stddef.h>
#include <stdint.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this header: the one place it is written (CMake reads it from here for
 * the project's version, the shared library's file name and pkg-config). The shared
 * library's SONAME is libakx.so.AKX_VERSION_MAJOR: within one major version a newer
 * libakx.so runs programs built against an older header (README, "Versioning and ABI"). */
#define AKX_VERSION_MAJOR 0
#define AKX_VERSION_MINOR 1
#define AKX_VERSION_PATCH 0
/* MAJOR * 10000 + MINOR * 100 + PATCH, for #if comparisons. */
#define AKX_VERSION (AKX_VERSION_MAJOR * 10000 + AKX_VERSION_MINOR * 100 + AKX_VERSION_PATCH)

#define AKX_MAX_DIMS 8
#define AKX_DIM_ALL (-1)

/* Status codes. Values are pinned: they are part of the ABI. */
typedef enum {
  AKX_SUCCESS = 0,
  AKX_ERROR_INVALID_ARGUMENT,    /* an argument is malformed (null, out of range, inconsistent) */
  AKX_ERROR_UNSUPPORTED,         /* a valid request this library does not do (op on a dtype, ...) */
  AKX_ERROR_OUT_OF_MEMORY,       /* a device or host allocation failed */
  AKX_ERROR_WORKSPACE_TOO_SMALL, /* the caller-owned workspace is smaller than the call needs */
  AKX_ERROR_OUTPUT_TOO_SMALL,    /* an output (e.g. findall's indices) cannot hold the result */
  AKX_ERROR_NO_DEVICE,           /* CUDA was asked for and no usable device exists */
  AKX_ERROR_DEVICE,              /* the CUDA runtime reported an error */
  AKX_ERROR_SIM_CHECK,           /* the sim caught a race, an out-of-bounds or a divergent barrier */
  AKX_ERROR_INTERNAL             /* a bug in libakx */
} akx_status;

typedef enum {
  AKX_BOOL, AKX_INT8, AKX_UINT8, AKX_INT16, AKX_UINT16, AKX_INT32, AKX_UINT32,
  AKX_INT64, AKX_UINT64, AKX_FLOAT16, AKX_BFLOAT16, AKX_FLOAT32, AKX_FLOAT64,
  AKX_COMPLEX64, AKX_COMPLEX128, AKX_DTYPE_AUTO = -1
} akx_dtype;
#define AKX_DTYPE_COUNT 15

/* AND, OR, XOR are bitwise on integers, logical on bool, refused on floats and complex.
 * MIN and MAX propagate NaN and are refused on complex. Integer overflow wraps.
 * ADD and MUL are refused on a bool accumulator (the AUTO accumulator of bool is int64).
 * ARGMIN and ARGMAX (reductions only, with AKX_MAP_IDENTITY; refused on complex and in scans)
 * find the position of the smallest / largest element as numpy's argmin/argmax and Julia's
 * findmin/findmax do: ties go to the first position, a NaN wins (the first NaN). Positions
 * are those a user op's map sees (akx_user_op_desc's `i`). akx_mapreduce writes an
 * akx_arg_result_t-shaped struct: {int64_t index; T value;} with T src's C type, padded to 8
 * bytes (akx_user_op_info gives its size); akx_reduce_dims writes the int64 position into an
 * int64 dst, or the value into a dst of src's dtype.
 * Values from AKX_USER_OP_FIRST up are user operators (akx_user_op_create). */
typedef enum { AKX_OP_ADD, AKX_OP_MUL, AKX_OP_MIN, AKX_OP_MAX,
               AKX_OP_AND, AKX_OP_OR, AKX_OP_XOR, AKX_OP_ARGMIN, AKX_OP_ARGMAX } akx_op;
#define AKX_OP_COUNT 9
#define AKX_USER_OP_FIRST 1024

/* Maps applied to each source element before it is combined:
 * IDENTITY: x converted to the accumulator;
 * ABS:      |x| (the modulus, a real number, for complex);
 * SQUARE:   x*x for real x, |x|^2 (a real number) for complex;
 * NONZERO:  a bool, x != 0 (tested on the source value, before any conversion).
 * `count` is NONZERO + ADD; `any` / `all` are NONZERO with OR / AND into bool. */
typedef enum { AKX_MAP_IDENTITY, AKX_MAP_ABS, AKX_MAP_SQUARE, AKX_MAP_NONZERO } akx_map;
#define AKX_MAP_COUNT 4

typedef enum { AKX_BACKEND_AUTO, AKX_BACKEND_CUDA, AKX_BACKEND_SIM } akx_backend;
typedef enum { AKX_HOST, AKX_DEVICE } akx_where;
typedef enum { AKX_COPY_HOST_TO_DEVICE, AKX_COPY_DEVICE_TO_HOST,
               AKX_COPY_DEVICE_TO_DEVICE } akx_copy_kind;

typedef struct {
  void *data;                     /* address of element (0, ..., 0) */
  akx_dtype dtype;
  int32_t ndim;                   /* 0..AKX_MAX_DIMS; 0 is a scalar (one element) */
  int64_t shape[AKX_MAX_DIMS];    /* >= 0; the nonzero ones multiply within int64 (as numpy) */
  int64_t strides[AKX_MAX_DIMS];  /* in elements, any sign but INT64_MIN; 0 only in sources;
                                     an output's elements must not share memory */
} akx_array;

/* Options of a reduction.
 * init: host pointer to one value of the accumulator dtype, combined once into the result
 *       (NULL: none). acc: accumulator dtype, AKX_DTYPE_AUTO picks it from the map's result
 *       type R: bool and integers narrower than 64 bits widen to (u)int64 for ADD and MUL,
 *       float16 and bfloat16 widen to float32, otherwise R. An explicit acc must be the
 *       AUTO one, R itself, or a wide type of R's kind: int64 or float64 for bool and signed
 *       integers, uint64 or float64 for unsigned integers (and int64 for those narrower than
 *       64 bits, PyTorch's promotion), float32 or float64 for floats, complex128 for complex
 *       (AKX_ERROR_UNSUPPORTED otherwise). The AUTO accumulators of ADD, MIN and MAX over
 *       int32, int64, float32 and float64 sources are prebuilt, on both backends; the others
 *       are compiled at run time on first use, once per machine with the disk cache
 *       (docs/runtime_kernels.md).
 * fold: combine with the previous value of the destination instead of overwriting it.
 * block_size, items_per_thread, target_blocks: tuning overrides, 0 = the tuning table;
 *       block_size a multiple of 32 in 32..256 (the kernels' launch bounds). */
typedef struct {
  const void *init;
  akx_dtype acc;
  int32_t fold;
  int32_t block_size, items_per_thread, target_blocks;
} akx_reduce_opts;

typedef struct {
  const void *init;
  akx_dtype acc;
  int32_t exclusive;
  int32_t block_size, items_per_thread;
} akx_scan_opts;

typedef struct akx_context akx_context;

/* The functions are the library's host code. NVRTC compiles device code alone and refuses a
 * host function's declaration, so a run-time compile of the kernel headers sees the types and
 * constants above (and akx_context_info_t) only. */
#if !defined(__CUDACC_RTC__)
/* ---- version ------------------------------------------------------------------------- */

/* The version of the library that is running, "MAJOR.MINOR.PATCH" (a static string), which
 * may be newer than the header a program was built with (compare with AKX_VERSION_*). */
const char *akx_version(void);

/* ---- status, dtypes, arrays ------------------------------------------------------- */

/* The name of a status, e.g. "AKX_ERROR_INVALID_ARGUMENT"; "unknown status" outside the enum. */
const char *akx_status_string(akx_status s);
/* The sentence of the most recent failure on the calling thread: which argument, which
 * value, what was expected ("" before any failure). Like errno, successful calls leave it
 * unchanged, so read it right after the call that failed. Thread-local. */
const char *akx_last_error(void);
/* Size in bytes of one element (bool: 1); 0 for an invalid dtype. */
size_t akx_dtype_size(akx_dtype t);
/* "float32", "complex128", ...; "invalid" for an invalid dtype, "auto" for AKX_DTYPE_AUTO. */
const char *akx_dtype_name(akx_dtype t);
/* A contiguous vector of n elements (stride 1). */
akx_array akx_vector(void *data, akx_dtype t, int64_t n);
/* A contiguous row-major (C order) array: the last dimension has stride 1. A NULL shape
 * with ndim > 0 gives a descriptor every entry point refuses (shape[0] = -1). */
akx_array akx_array_c(void *data, akx_dtype t, int32_t ndim, const int64_t *shape);
/* A contiguous column-major (Fortran/Julia order) array: the first dimension has stride 1. */
akx_array akx_array_f(void *data, akx_dtype t, int32_t ndim, const int64_t *shape);
/* acc = AKX_DTYPE_AUTO, everything else 0 / NULL. */
akx_reduce_opts akx_reduce_opts_default(void);
akx_scan_opts akx_scan_opts_default(void);

/* ---- context ------------------------------------------------------------------------ */

/* backend AUTO: the environment variable AKX_BACKEND ("cuda" or "sim") if set, else CUDA
 * when a usable device exists, else the sim. `device` is the CUDA device ordinal (0 for
 * the sim). The sim's device profile is chosen by AKX_SIM_DEVICE ("h200", "rtx5080").
 * *ctx is written on success only. */
akx_status akx_context_create(akx_context **ctx, akx_backend backend, int device);
/* Synchronizes, frees the cached workspace and those set aside for graphs (never a caller's:
 * that buffer is free to serve another context from then on), frees the context. NULL is a
 * no-op. */
void akx_context_destroy(akx_context *ctx);
/* A cudaStream_t as void* (NULL: the legacy default stream). The context first
 * synchronizes its current stream, so the workspace is never used by two streams at once:
 * refused while that stream captures a graph (set the stream before cudaStreamBeginCapture;
 * the legacy stream counts as capturing while another stream captures).
 * The sim accepts only NULL. */
akx_status akx_context_set_stream(akx_context *ctx, void *stream);
/* Hand the context a caller-owned device buffer as its workspace: from then on no call
 * allocates; a call needing more than `bytes` fails with AKX_ERROR_WORKSPACE_TOO_SMALL.
 * The buffer is zeroed on the context's stream (one memset), and the context keeps state
 * there from one call to the next (the scans' tile status, the reductions' tickets: its calls
 * then need no reset launch, docs/one_launch.md): leave the buffer's bytes alone while it is
 * set.
 * ptr NULL and bytes 0 return to the context's own cached, growing buffer.
 * A buffer serves one context at a time: a range that overlaps the caller workspace of
 * another live context is refused (AKX_ERROR_INVALID_ARGUMENT, naming that range) until that
 * context hands it back (ptr NULL) or is destroyed. Synchronizes first: refused while the
 * stream captures a graph. */
akx_status akx_context_set_workspace(akx_context *ctx, void *ptr, size_t bytes);
/* Waits for the context's stream. Refused (AKX_ERROR_UNSUPPORTED) while it captures a graph. */
akx_status akx_synchronize(akx_context *ctx);
akx_backend akx_context_backend(const akx_context *ctx);
#endif /* !__CUDACC_RTC__ */

typedef struct {
  akx_backend backend;        /* CUDA or SIM, never AUTO */
  char device_name[64];       /* the CUDA device name, or "sim:h200" */
  int32_t sm_count;
  int32_t cc_major, cc_minor; /* compute capability (the profile's, on the sim) */
  int32_t max_threads_per_sm;
  int64_t shared_per_block;   /* bytes of shared memory a block may use (opt-in maximum) */
  double bandwidth_gbs;       /* peak DRAM bandwidth, GB/s */
  char sim_profile[16];       /* "h200", "rtx5080"; "" on CUDA */
  int64_t workspace_bytes;    /* size of the workspace now held (cached or caller-owned) */
  int64_t workspace_allocations; /* how many times the context allocated its cached workspace */
} akx_context_info_t;
#if !defined(__CUDACC_RTC__)
akx_status akx_context_info(const akx_context *ctx, akx_context_info_t *info);

/* ---- memory (device memory of the context's backend; host memory on the sim) --------- */

/* *ptr is written on success only (NULL for 0 bytes). */
akx_status akx_malloc(akx_context *ctx, void **ptr, size_t bytes);
akx_status akx_free(akx_context *ctx, void *ptr);
/* Stream-ordered on the context's stream, then synchronized: refused while the stream
 * captures a graph. */
akx_status akx_memcpy(akx_context *ctx, void *dst, const void *src, size_t bytes,
                      akx_copy_kind k);

/* ---- reductions ---------------------------------------------------------------------- */

/* Reduce all elements of `src` to one value of the accumulator dtype.
 * where = AKX_HOST: `result` is host memory; the call synchronizes (refused with
 * AKX_ERROR_UNSUPPORTED while the stream captures a graph).
 * where = AKX_DEVICE: `result` is device memory; the call stays asynchronous on the stream
 * (and may be captured into a graph: see "Stream capture" above).
 * opts->fold combines with the previous value at `result`. opts may be NULL.
 * A float ADD folds from -0.0 (IEEE 754's additive identity: sum([-0.0]) is -0.0, as Julia's),
 * but an empty src without init or fold gives +0.0 (numpy's and Julia's empty sum).
 * An empty src gives init, else the op's neutral element; MIN/MAX of an empty src without
 * init is AKX_ERROR_INVALID_ARGUMENT, unless opts->fold keeps the previous value.
 * A device `result` must be aligned to the accumulator (a complex one: to its parts). */
akx_status akx_mapreduce(akx_context *ctx, const akx_array *src, akx_map map, akx_op op,
                         const akx_reduce_opts *opts, void *result, akx_where where);

/* Bytes of workspace akx_mapreduce needs for this source, accumulator and options. */
akx_status akx_mapreduce_workspace_size(const akx_context *ctx, const akx_array *src,
                                        akx_map map, akx_op op, const akx_reduce_opts *opts,
                                        size_t *bytes);

/* The dtype akx_mapreduce writes for these arguments (its size is what `result` must hold):
 * the accumulator, AUTO resolved as akx_reduce_opts says (an int32 ADD writes an int64, a
 * float16 one a float32). Validates src's descriptor (not its data), map, op and opts as
 * akx_mapreduce does, with the same status and sentence; *dtype is written on success only. */
akx_status akx_mapreduce_result_dtype(const akx_array *src, akx_map map, akx_op op,
                                      const akx_reduce_opts *opts, akx_dtype *dtype);

/* Julia's mapreducedim!: dst has src's ndim, each dim of dst is src's size or 1 (reduced);
 * any subset of dims may be reduced (none: a map and convert copy; all: one output). Any
 * strides in either array (negative too; zero only in src). Each output is init (if any)
 * combined with the reduction of its elements, accumulated in the accumulator dtype and
 * converted to dst's dtype once at the end; opts->fold combines with dst's previous value
 * instead of overwriting it. dst must not overlap src. Stays asynchronous on the stream.
 * A one-element dst takes the whole-array path (as akx_mapreduce). An empty reduction gives
 * init or the op's neutral element (MIN/MAX without init or fold: AKX_ERROR_INVALID_ARGUMENT).
 * opts->block_size overrides the tuning table; items_per_thread and target_blocks apply to
 * the one-element case only. */
akx_status akx_reduce_dims(akx_context *ctx, const akx_array *dst, const akx_array *src,
                           akx_map map, akx_op op, const akx_reduce_opts *opts);

/* Bytes of workspace akx_reduce_dims needs for these shapes, dtypes and options on this
 * context's device (data pointers are not read): 0 when no pass needs partials. */
akx_status akx_reduce_dims_workspace_size(const akx_context *ctx, const akx_array *dst,
                                          const akx_array *src, akx_map map, akx_op op,
                                          const akx_reduce_opts *opts, size_t *bytes);

/* Inclusive (default) or exclusive scan of src along dim into dst (numpy's cumsum/cumprod,
 * Julia's accumulate!): dst[..., i, ...] = init o src[..., 0, ...] o ... o src[..., i, ...]
 * (exclusive: up to i - 1; the first is init, or the op's neutral element, +0.0 for a float ADD;
 * float ADD keeps signed zeros, as numpy's cumsum: running values start from -0.0), in the
 * accumulator dtype, converted to dst's dtype at the store. dim: 0..ndim-1, or AKX_DIM_ALL:
 * the whole array in memory order (a 1-d array: its only dim; ndim >= 2: src must be C- or
 * Fortran-contiguous and dst must have src's strides). dst has src's shape; any strides,
 * negative too, and dst and src may have different layouts (not for AKX_DIM_ALL). In place
 * when dst is the same view as src; any other overlap is refused. dst's dtype: any, the
 * accumulator converted once at the store. Accumulator (opts->acc): any that akx_reduce_opts
 * allows for the identity map (AUTO: narrow integers and bool widen to 64 bits for ADD/MUL,
 * float16/bfloat16 to float32). The AUTO accumulator stored to its own dtype or src's is
 * prebuilt (for CUDA: ADD, MIN and MAX of int32, int64, float32 and float64 sources; the
 * sim's build also prebuilds the other ops, sources and src's own); other combinations compile
 * at run time on first use.
 * MIN/MAX have no neutral element (as numpy): an exclusive MIN/MAX scan needs opts->init.
 * Bitwise deterministic run to run (floats included). Stays asynchronous on the stream.
 * opts->block_size / items_per_thread override the tuning table (block_size a multiple of 32
 * in 32..256, the kernels' launch bounds; a tile of block_size x items_per_thread partials,
 * with the tile's static scratch, must fit the shared memory a block may use on the device:
 * akx_context_info's shared_per_block). */
akx_status akx_scan(akx_context *ctx, const akx_array *dst, const akx_array *src,
                    akx_op op, int32_t dim, const akx_scan_opts *opts);

/* Bytes of workspace akx_scan needs for these shapes, dtypes, dim and options on this
 * context's device (data pointers are not read). */
akx_status akx_scan_workspace_size(const akx_context *ctx, const akx_array *dst,
                                   const akx_array *src, akx_op op, int32_t dim,
                                   const akx_scan_opts *opts, size_t *bytes);

/* ---- findall ----------------------------------------------------------------------- */

/* 0-based positions of the nonzero elements of src (any dtype; NaN is nonzero), in memory
 * order: the linear index over src's dims ordered by decreasing |stride| (C order for a
 * row-major array, Julia's linear index for a column-major one), each dim walked in its own
 * index order. indices: a 1-d int64 array with stride 1; its shape[0] is the capacity.
 * snprintf-style: *count (host) is always the total; at most capacity positions are
 * written; a total above the capacity returns AKX_ERROR_OUTPUT_TOO_SMALL (with the first
 * capacity positions written). Synchronizes (the count comes back to the host): refused with
 * AKX_ERROR_UNSUPPORTED while the stream captures a graph. */
akx_status akx_findall(akx_context *ctx, const akx_array *src, const akx_array *indices,
                       int64_t *count);
/* Bytes of workspace akx_findall needs for this source and indices on this context's device
 * (data pointers are not read; 0 when src is empty), for a caller that gives the context its
 * own (akx_context_set_workspace): the plan akx_findall makes, so the two never disagree.
 * Errors as akx_findall's, count aside; bytes NULL is AKX_ERROR_INVALID_ARGUMENT. Not refused
 * while the stream captures a graph: a query enqueues nothing. *bytes is written on success
 * only. */
akx_status akx_findall_workspace_size(const akx_context *ctx, const akx_array *src,
                                      const akx_array *indices, size_t *bytes);
/* akx_findall with the count where the caller wants it. where = AKX_HOST: as akx_findall.
 * where = AKX_DEVICE: count points at one int64 of this context's device memory (8-byte
 * aligned), written on the stream behind the positions: the call stays asynchronous and may be
 * captured in a CUDA graph; at most capacity positions are written and *count receives the
 * total whatever it is (the caller compares it with the capacity; an empty src writes 0). */
akx_status akx_findall_where(akx_context *ctx, const akx_array *src, const akx_array *indices,
                             int64_t *count, akx_where where);

/* ---- selection (docs/select.md) ------------------------------------------------------------- */

/* Where a selection's count goes. AKX_HOST: count is host memory, the call synchronizes, and a
 * total above the output's capacity returns AKX_ERROR_OUTPUT_TOO_SMALL (the first capacity items
 * written, *count the total); refused while the stream captures a graph. AKX_DEVICE: count points
 * at int64 device memory (8-byte aligned), written on the stream: the call stays asynchronous and
 * may be captured in a CUDA graph; at most the capacity is written and the total is written
 * whatever it is. An empty src writes a count of 0. */

/* Keeps src[i] where flags[i] is nonzero (numpy's x[mask.astype(bool)]: a float flag's NaN is
 * nonzero, -0.0 is zero; a bool flag's any nonzero byte), in order, each item's exact bits, into
 * dst[0..count). src: 1-d, any dtype and stride (zero and negative too); flags: 1-d, any dtype
 * and stride, src's length; dst: 1-d of src's dtype, any nonzero stride, its length the capacity.
 * dst may be src itself (the same view: in place); no other overlap of dst with src or flags.
 * Reads only the 32-byte sectors of src that hold a flagged item (sparse flags skip the rest). */
akx_status akx_select_flagged(akx_context *ctx, const akx_array *dst, const akx_array *src,
                              const akx_array *flags, int64_t *count, akx_where where);
/* CUB's flagged partition: the flagged items of src in order from dst[0], the others after them
 * in reverse order from dst[n - 1]; dst holds n items (its length must be src's) and overlaps
 * neither src nor flags. *count: the flagged items (never above n). Arguments as
 * akx_select_flagged's. */
akx_status akx_partition_flagged(akx_context *ctx, const akx_array *dst, const akx_array *src,
                                 const akx_array *flags, int64_t *count, akx_where where);
/* Bytes of workspace each call needs for these arrays on this context's device (data pointers
 * are not read; 0 for an empty src): the plan the call makes, so the two never disagree.
 * Errors as the call's, count and where aside; bytes NULL is AKX_ERROR_INVALID_ARGUMENT. */
akx_status akx_select_flagged_workspace_size(const akx_context *ctx, const akx_array *dst,
                                             const akx_array *src, const akx_array *flags,
                                             size_t *bytes);
akx_status akx_partition_flagged_workspace_size(const akx_context *ctx, const akx_array *dst,
                                                const akx_array *src, const akx_array *flags,
                                                size_t *bytes);

/* ---- segmented and keyed reductions and scans (docs/segmented.md) ----------------------- */

/* Segments are ranges of a 1-d src given by offsets, a 1-d int32 or int64 array of nseg + 1
 * entries (CSR row pointers, any stride): segment s is [offsets[s], offsets[s+1]).
 * Offsets are device data and are not validated (that would take a synchronization): each
 * entry is clamped to [0, n] and a segment whose end is not past its begin is empty, so no
 * kernel reads or writes out of bounds whatever they hold; decreasing offsets give unspecified
 * (but deterministic, in-bounds) results. A user op's map sees the position within the
 * segment (or run), from 0. Every call is bitwise deterministic run to run, floats included. */

/* Reduces each segment: dst[s] = init o map(src[offsets[s]]) o ... o map(src[offsets[s+1]-1]),
 * s in 0..nseg-1, nseg = dst's length (dst 1-d, any dtype: the accumulator converted at the
 * store, as akx_reduce_dims; opts->fold combines with dst's previous value). Ops and
 * accumulators as akx_mapreduce, ARGMIN/ARGMAX included (dst int64: the position within the
 * segment; dst of src's dtype: the value). An empty segment gives init, else the op's neutral
 * element (+0.0 for a float ADD); MIN/MAX without init: the accumulator dtype's greatest /
 * least value (+inf / -inf for floats), converted to dst; ARGMIN/ARGMAX into an int64 dst: -1
 * (into a dst of src's dtype the element is left as it was); a user op without identity and
 * no init leaves dst[s] as it was. dst must not overlap src or offsets. Stays asynchronous. */
akx_status akx_segmented_reduce(akx_context *ctx, const akx_array *dst, const akx_array *src,
                                const akx_array *offsets, akx_map map, akx_op op,
                                const akx_reduce_opts *opts);
/* Bytes of workspace akx_segmented_reduce needs for these shapes, dtypes and options on this
 * context's device (data pointers are not read); the call's checks and errors. */
akx_status akx_segmented_reduce_workspace_size(const akx_context *ctx, const akx_array *dst,
                                               const akx_array *src, const akx_array *offsets,
                                               akx_map map, akx_op op,
                                               const akx_reduce_opts *opts, size_t *bytes);
/* Inclusive (default) or exclusive scan restarting at every segment: for i in segment s,
 * dst[i] = init o src[offsets[s]] o ... o src[i] (exclusive: up to i - 1; the first is init or
 * the neutral element). Elements outside [offsets[0], offsets[nseg]) are not written. dst: 1-d,
 * src's length, any dtype; in place when dst is the same view as src. Ops, accumulators and
 * the rules for exclusive scans as akx_scan. Stays asynchronous. */
akx_status akx_segmented_scan(akx_context *ctx, const akx_array *dst, const akx_array *src,
                              const akx_array *offsets, akx_op op, const akx_scan_opts *opts);
/* Bytes of workspace akx_segmented_scan needs (as akx_segmented_reduce_workspace_size). */
akx_status akx_segmented_scan_workspace_size(const akx_context *ctx, const akx_array *dst,
                                             const akx_array *src, const akx_array *offsets,
                                             akx_op op, const akx_scan_opts *opts,
                                             size_t *bytes);
/* Runs of consecutive equal keys (CUB's ReduceByKey): keys_out[r] is run r's key, values_out[r]
 * the reduction of its values (init o map(v) o ...; empty runs do not exist). keys: 1-d, bool
 * or any integer dtype; values: 1-d, the same length; keys_out: keys' dtype; values_out: any
 * dtype (converted at the store). snprintf-style as akx_findall: *runs (host) is always the
 * number of runs; at most the outputs' capacity (the smaller of their lengths) is written, and
 * more runs than that return AKX_ERROR_OUTPUT_TOO_SMALL with the first capacity runs written.
 * Synchronizes (the count comes back to the host): refused while the stream captures a graph. */
akx_status akx_reduce_by_key(akx_context *ctx, const akx_array *keys_out,
                             const akx_array *values_out, const akx_array *keys,
                             const akx_array *values, akx_map map, akx_op op,
                             const akx_reduce_opts *opts, int64_t *runs);
/* akx_reduce_by_key with the number of runs where the caller wants it: where = AKX_HOST as
 * akx_reduce_by_key; AKX_DEVICE: runs points at one int64 of device memory, written on the
 * stream (asynchronous, capturable), at most the capacity of runs written, the total written
 * whatever it is (as akx_findall_where's count). */
akx_status akx_reduce_by_key_where(akx_context *ctx, const akx_array *keys_out,
                                   const akx_array *values_out, const akx_array *keys,
                                   const akx_array *values, akx_map map, akx_op op,
                                   const akx_reduce_opts *opts, int64_t *runs, akx_where where);
/* A scan restarting at every change of key (CUB's InclusiveScanByKey / ExclusiveScanByKey):
 * dst and src as akx_segmented_scan's, keys as akx_reduce_by_key's. Stays asynchronous. */
akx_status akx_scan_by_key(akx_context *ctx, const akx_array *dst, const akx_array *keys,
                           const akx_array *src, akx_op op, const akx_scan_opts *opts);

/* ---- user operators (compiled at run time) ------------------------------------------ */

/* An operator written in C++ source, compiled at run time (NVRTC on CUDA, the host C++
 * compiler on the sim: docs/runtime_kernels.md) into the same kernels as the built-in ops.
 * source: C++ that both nvcc/NVRTC and the host compiler accept. No includes are needed (nor
 *   taken: NVRTC has no system headers): libakx provides AKX_HD, the <stdint.h> types,
 *   akx::float16 and akx::bfloat16 (converting to and from float) and akx::complex<T>
 *   (members re, im): the C++ types of the dtypes that map's S and store's D take. Mark every
 *   function AKX_HD, an attribute only (__host__ __device__ on CUDA, as CUB's
 *   _CCCL_HOST_DEVICE; nothing on the sim): `AKX_HD inline` and CUDA's own spellings
 *   (`__host__ __device__ inline`, `__forceinline__`) compile on both. Functions need not be
 *   inline: each op's kernels are a unit of their own, so two ops may define the same names.
 *   On the sim, where libnvrtc loads (any machine with the CUDA toolkit), the source is also
 *   compiled with NVRTC as a GPU would compile it (at create; and its map and store for each
 *   source and dst dtype at their first call), and what NVRTC refuses (an #include, a host-only
 *   call such as system(), an unmarked function) is refused with NVRTC's first error; its
 *   verdict is kept in the kernel cache. Where libnvrtc does not load, that check is skipped.
 * acc_type: the accumulator's C++ type: "double", or a struct defined in source; trivially
 *   copyable, at most 32 bytes, aligned to at most 16.
 * combine: the name of `Acc combine(Acc a, Acc b)`: associative; a is the earlier operand.
 *   Scans keep operand order (a non-commutative op scans right). Reductions (akx_mapreduce,
 *   akx_reduce_dims) may combine in any order, as CUB's DeviceReduce: their op must also be
 *   commutative. Every call is deterministic all the same: the order depends on the shape
 *   and the device, never on timing.
 * identity: the name of `Acc identity()`, the neutral element; NULL: none (partials then
 *   carry a valid flag, as AcceleratedKernels.jl does for operators without one; an exclusive
 *   scan, and a reduction that may be empty, then need opts->init).
 * map: the name of `Acc map(S x, int64_t i)`, a template over the source's C++ type S, or
 *   overloads; NULL: Acc(x). i is the element's position: in akx_mapreduce, the position in
 *   memory order as akx_findall defines it; in akx_reduce_dims, the position among its
 *   output's reduced elements by the same rule over the reduced dims; in akx_scan, the index
 *   along the scanned dim.
 * store: the name of `D store(Acc a)`, a template over dst's C++ type D; NULL: D(a).
 * The strings are copied: they need not outlive the call. */
typedef struct {
  const char *source;
  const char *acc_type;
  const char *combine;
  const char *identity;
  const char *map;
  const char *store;
} akx_user_op_desc;

/* Compiles desc's source once on ctx's backend and writes a new op value (>=
 * AKX_USER_OP_FIRST) to *op, which akx_mapreduce, akx_reduce_dims and akx_scan accept on this
 * context (with AKX_MAP_IDENTITY: the op's own map applies; opts->acc AUTO) in every shape and
 * layout the built-in ops take:
 *   - opts->init is a host pointer to one Acc;
 *   - opts->fold is refused when the op has a store;
 *   - akx_mapreduce writes one Acc (akx_user_op_info gives its size and alignment);
 *     akx_mapreduce_result_dtype says AKX_DTYPE_AUTO;
 *   - akx_reduce_dims and akx_scan convert with store (or D(a)) into dst's dtype.
 * Kernels for each (family, source dtype, dst dtype) are compiled on first use and cached in
 * memory and on disk (docs/runtime_kernels.md). A compile error is AKX_ERROR_INVALID_ARGUMENT
 * with its first error line in akx_last_error() and the compiler's whole output in
 * akx_last_compile_log(), where the source's lines are quoted and numbered as the caller
 * numbers them (file "user_op.cpp", line 1 the source's first); an acc_type that names no type
 * is reported at acc_type ("acc_type:1", or NVRTC's "acc_type(1)"). A source that breaks a
 * rule the compiler can check (an accumulator over 32 bytes or not trivially copyable, a
 * missing function, a wrong signature) is refused with a sentence naming the rule; an
 * accumulator aligned to more than 16 bytes with one naming acc_type and its alignment. No
 * compiler (the sim's host compiler, or libnvrtc on CUDA): AKX_ERROR_UNSUPPORTED. *op is
 * written on success only. */
akx_status akx_user_op_create(akx_context *ctx, const akx_user_op_desc *desc, akx_op *op);
/* Forgets a user op of ctx (its compiled kernels stay cached); the value is not reused.
 * AKX_ERROR_INVALID_ARGUMENT for a value that is not a live user op of ctx. */
akx_status akx_user_op_destroy(akx_context *ctx, akx_op op);

typedef struct {
  size_t acc_size, acc_align; /* the accumulator akx_mapreduce writes */
  int32_t has_identity;
} akx_user_op_info_t;
/* The layout of a user op's accumulator; also of AKX_OP_ARGMIN and AKX_OP_ARGMAX, whose
 * accumulator depends on the source: acc_size is then that of float64's (16, the largest);
 * akx_mapreduce's result for source dtype T is {int64_t; T} padded to 8 bytes, 16 for every
 * dtype ARGMIN/ARGMAX take. */
akx_status akx_user_op_info(const akx_context *ctx, akx_op op, akx_user_op_info_t *info);

/* The whole compiler log of the calling thread's last failed akx_user_op_create, or of the
 * last call refused because a user op's kernels did not compile ("" when none failed). The
 * host compiler's log or NVRTC's. Thread-local; valid until that thread's next
 * akx_user_op_create. */
const char *akx_last_compile_log(void);
#endif /* !__CUDACC_RTC__ */

#ifdef __cplusplus
}
#endif
#endif /* AKX_H */
