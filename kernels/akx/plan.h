/* Plain structs the host hands to kernel launchers. Kernels never see akx_array or
 * akx_context: src/ flattens what a launch needs into these. Shared by C and C++. */
#ifndef AKX_PLAN_H
#define AKX_PLAN_H
#include "akx.h" /* int32_t, int64_t */
#ifdef __cplusplus
#define AKX_ALIGNAS(n) alignas(n)
extern "C" {
#else
#define AKX_ALIGNAS(n) _Alignas(n)
#endif

/* Room for one accumulator: a user op's (at most 32 bytes) with its valid flag
 * (kernels/akx/user_op.cuh, user_optional). */
#define AKX__INIT_BYTES 48

/* Where a piece's elements sit among the positions of the whole array (akx_mapreduce_piece,
 * akx_findall_piece; akx_reduce_dims_piece: among each output's reduced elements): the
 * piece's position i is
 * base + i + (i / block) * skip (block 0: no gap). Only a user op's
 * map reads positions (kernels/akx/ops.cuh, op_position). */
typedef struct {
  int64_t base, block, skip;
} akx__positions;

/* The finishing step every reduction pass stores through (docs/reduce_whole.md): bare =
 * store the accumulator as is (a partial, or a host result finished on the host); otherwise
 * apply init, fold into dst's previous value, and convert the accumulator to dst_dtype. */
typedef struct {
  void *dst;
  int32_t dst_dtype; /* akx_dtype */
  int32_t bare;
  int32_t fold;
  int32_t has_init;
  int32_t empty;     /* no element is reduced into an output (kernels/akx/ops.cuh's empty_value) */
  /* where the reduction's positions sit (a piece's; zero: they are its own). Here because
   * every reduction kernel takes its finish by value. */
  akx__positions positions;
  AKX_ALIGNAS(16) unsigned char init[AKX__INIT_BYTES]; /* one accumulator value */
} akx__finish;

/* A source in canonical form: size-1 dims dropped, negative strides flipped (the base moved
 * to the lowest address: every op here is commutative), dims merged where contiguous,
 * innermost (smallest |stride|) last. contiguous = one dim of stride 1 (or ndim 0). */
typedef struct {
  const void *data;
  int32_t dtype; /* akx_dtype */
  int32_t ndim;
  int64_t n;
  int32_t contiguous;
  int64_t shape[AKX_MAX_DIMS];
  int64_t strides[AKX_MAX_DIMS];
} akx__source;

/* A whole-array reduction (kernels/akx/reduce_whole.cuh). */
typedef struct {
  akx__source src;
  int32_t map, op, acc; /* akx_map, akx_op, akx_dtype */
  int32_t block_size;   /* threads per block of every pass */
  int32_t items_per_thread;
  int32_t blocks;       /* blocks of the first pass, 1..target_blocks; 1 = one launch */
  /* Pass 1 over 16-byte vectors (a contiguous source aligned to its element): vec_head
   * scalars before the first aligned vector, vec_count vectors, vec_tail scalars after them,
   * vec_loads vector loads per thread per tile (kernels/akx/reduce_whole.cuh). The planner
   * writes them: the kernel reads them from its parameter, holding no register for them. */
  int32_t vectorised;
  int32_t vec_loads;
  int64_t vec_head, vec_count, vec_tail;
  void *partials;       /* workspace: blocks + 1 accumulators (the last one: a host result) */
  void *ticket;         /* workspace: the count of finished blocks (unsigned long long) */
  int32_t one_launch;   /* the ticket is 0: pass 1's last block finishes (else pass 2) */
  int32_t partials_only; /* pass 2 alone over `blocks` partials the caller gave (akx_mapreduce_piece) */
  akx__finish finish;   /* applied by the last pass */
} akx__reduce_whole_plan;

/* A reduction along dims (kernels/akx/reduce_dims.cuh, src/reduce/reduce_dims.c). The shapes
 * the selector chooses from; the kernels of each carry the name in the comment. */
typedef enum {
  AKX__DIMS_ROWS,       /* a block per output, contiguous reduction ("reduce_dims_rows") */
  AKX__DIMS_WARP_ROWS,  /* a warp per output, short contiguous rows ("reduce_dims_warp_rows") */
  AKX__DIMS_PER_THREAD, /* a thread per output ("reduce_dims_per_thread") */
  AKX__DIMS_TILED,      /* 8 outputs per block, one pass ("reduce_dims_tiled") */
  AKX__DIMS_COLUMNS,    /* 32 outputs per block, split + second pass ("reduce_dims_columns") */
  AKX__DIMS_STRIDED,    /* any layout, the general fallback ("reduce_dims_strided") */
  AKX__DIMS_WHOLE,      /* one output, contiguous source: the whole-array path ("reduce_whole_*") */
  AKX__DIMS_NONE,       /* nothing to launch (no outputs) */
  AKX__DIMS_PIECES      /* the pieces' partials combined, a thread per output ("reduce_dims_pieces") */
} akx__dims_shape;

/* Canonical form: outputs over the kept dims (innermost last, the one with the smallest
 * source stride), the reduction over the reduced dims (innermost last, smallest stride).
 * src is the address of output 0's first element; finish.dst that of output 0. */
typedef struct {
  const void *src;
  int32_t src_dtype, map, op, acc; /* akx_dtype, akx_map, akx_op, akx_dtype */
  int32_t shape;                   /* akx__dims_shape */
  int32_t block_size;
  int32_t width;    /* tile body: outputs per block; rows body: threads per output */
  int32_t tile_rows; /* tile body: threads per output (rows of the tile a step), <= block / width */
  int32_t splits;   /* blocks along each output's reduction (gridDim.y); > 1: a second pass */
  int32_t vec_ok;   /* rows body: every run starts at the same 16-byte phase */
  int32_t dst_size; /* bytes of a dst element */
  int64_t blocks_x;
  int64_t n_out, len; /* outputs; elements per output */
  int64_t split_len;  /* tile body: elements of an output's reduction per split (the last: the rest) */
  int32_t kdims, rdims;
  int64_t kshape[AKX_MAX_DIMS], ksrc[AKX_MAX_DIMS], kdst[AKX_MAX_DIMS];
  int64_t rshape[AKX_MAX_DIMS], rstride[AKX_MAX_DIMS];
  void *partials;     /* workspace: splits * n_out accumulators when splits > 1 (PIECES: the
                         exchange's splits = pieces blocks of n_out, piece-major) */
  /* The finish of a split reduction (kernels/akx/reduce_dims.cuh, finish_groups and finish_outputs): a tree of
   * one or two levels over each output's partials, fixed by the plan, so that one launch and
   * two give the same bits. finish_lanes lanes fold an output's partials (a power of two up to
   * 32: the column's outputs side by side in one block); with groups > 1, the splits come in
   * groups of group_splits consecutive ones, each folded into group_partials[output * groups +
   * group] (the group's last block), then the groups folded in order (the last group's). */
  int32_t finish_lanes;
  int32_t groups, group_splits;
  void *group_partials; /* workspace: groups * n_out accumulators when groups > 1 */
  /* workspace: finished splits per column of blocks, then (groups > 1) finished splits per
   * group of each column, blocks_x * groups of them (unsigned int each) */
  void *tickets;
  int32_t one_launch; /* the tickets are 0: each column's last split finishes it (else pass 2) */
  akx__finish finish; /* dst, dst dtype, init, fold */
} akx__reduce_dims_plan;
/* A split dims reduction's finish keeps this many of a lane's partials in flight, for an
 * accumulator of acc_bytes (kernels/akx/reduce_dims.cuh, fold_partials); the planner sizes its
 * groups with it (src/reduce/reduce_dims.c, finish_tree). 4 for 16-byte
 * accumulators and larger: with 8, the rows kernel of complex sources (the finish is inlined
 * there, under its 64-register bound) spilled (ptxas, sm_90). */
#define AKX__FINISH_LOADS_IN_FLIGHT(acc_bytes) ((acc_bytes) >= 16 ? 4 : 8)

/* Elements of an N-d index space, innermost dim last: offset(i) = sum of the digits of i
 * (mixed radix over shape, innermost varying fastest) times the strides. */
typedef struct {
  int32_t ndim;
  int64_t shape[AKX_MAX_DIMS];
  int64_t strides[AKX_MAX_DIMS];
} akx__index_map;

/* A scan (kernels/akx/scan_tile.cuh, kernels/akx/scan_columns.cuh): `slices` independent sequences of
 * `n` elements. Element i of slice s sits at data + outer(s) + i * step for src and dst alike
 * (each with its own outer map and step). */
typedef struct {
  const void *src;
  void *dst;
  int32_t src_dtype, dst_dtype, acc, op; /* akx_dtype, akx_dtype, akx_dtype, akx_op */
  int64_t n;            /* elements per slice */
  int64_t slices;
  int64_t src_step, dst_step;
  akx__index_map src_outer, dst_outer; /* slice -> element offset of its first element */
  int32_t exclusive;
  int32_t has_init;
  AKX_ALIGNAS(16) unsigned char init[AKX__INIT_BYTES]; /* one accumulator value */
  /* tile kernels */
  int32_t block_size, items_per_thread;
  int32_t layout;       /* akx__scan_layout */
  int64_t tiles;
  int64_t smem_bytes;   /* dynamic shared memory per tile (src/scan/tile_shared.cpp) */
  /* columns kernels: n split into `chunks` of chunk_len (1 chunk: one pass) */
  int64_t chunks, chunk_len;
  int32_t shape;        /* akx__scan_shape */
  void *status;         /* tile kernels: the workspace's start (kernels/akx/lookback.cuh's header,
                           then its flags); columns kernels: the chunk carries */
  uint32_t epoch;       /* tile kernels: the call's epoch (kernels/akx/lookback.cuh) */
  int32_t reset_status; /* tile kernels: the status may hold foreign bytes: reset it first */
  int64_t reset_flags;  /* tile kernels: the flags the reset zeroes (>= tiles) */
  int64_t nodes_at;     /* tile kernels: the nodes' byte offset from status (its scratch) */
  /* columns kernels, a piece of longer sequences (akx_scan_piece, src/scan/scan_piece.c): */
  int64_t index_base;   /* the index along the scanned dim of the piece's first element: a user
                           op's map sees i + index_base */
  int32_t step;         /* akx__scan_step: the whole launch sequence, or one of its passes */
  /* tile kernels, a piece's two launches (AKX__SCAN_STEP_TOTALS, AKX__SCAN_STEP_CARRIED,
   * kernels/akx/scan_carry.cuh): one accumulator per line, in the lines' order: the totals
   * TOTALS stores, the carries CARRIED reads */
  void *line_row;
} akx__scan_plan;

/* What a launch runs (kernels/akx/scan.cuh, scan_launch_with): the shape's whole sequence, or
 * one pass of it (akx_scan_piece runs them one by one, around its exchange). */
typedef enum {
  AKX__SCAN_STEP_ALL = 0,
  AKX__SCAN_STEP_REDUCE = 1, /* each (column, chunk) folds its chunk into its status row */
  AKX__SCAN_STEP_CARRY = 2,  /* `chunks` status rows into exclusive prefixes, per column */
  AKX__SCAN_STEP_SCAN = 3,   /* each (column, chunk) scans from its status row, none of its
                                outputs the head of its sequence (a piece after others) */
  /* a piece's tile launches (shape SLICES, a user op; kernels/akx/scan_carry.cuh): */
  AKX__SCAN_STEP_TOTALS = 4,  /* each line's fold into line_row */
  AKX__SCAN_STEP_CARRIED = 5  /* each line scanned from its carry in line_row */
} akx__scan_step;

/* Which scan kernel runs (src/scan/scan.c chooses). */
typedef enum {
  AKX__SCAN_WHOLE = 0,  /* one sequence, tile scan with look-back ("scan_tile") */
  AKX__SCAN_SLICES = 1, /* contiguous scanned dim, segmented tile scan ("scan_slices") */
  AKX__SCAN_COLUMNS = 2 /* strided scanned dim, a thread per column ("scan_columns") */
} akx__scan_shape;

/* How a tile keeps its runs in shared memory (kernels/akx/scan_layout.cuh). */
typedef enum {
  AKX__SCAN_LAYOUT_CONFLICT_FREE = 0, /* default: rotated runs (>= 4-byte partials), padded
                                         to an odd word count (smaller ones) */
  AKX__SCAN_LAYOUT_DENSE = 1,         /* runs back to back (AK's unpadded tiles) */
  AKX__SCAN_LAYOUT_ODD_STRIDE = 2     /* AK's padded tiles: even runs padded by one element */
} akx__scan_layout;

/* findall (kernels/akx/findall.cuh, kernels/akx/select_tile.cuh): nonzero flags -> tile count
 * -> look-back -> compaction of the positions. 16-byte vectors per thread of a tile (the
 * kernel's compile-time figure, all of them loads in flight, and the planner's tile size: one
 * place): a tile of 256 threads reads 32 KiB, 2 K to 32 K elements (offsets of 16 bits). 16 made
 * ptxas spill the 4-byte instances at the tile kernels' 80-register bound (CUDA 13.0, sm_90). */
#define AKX__FINDALL_VECTORS 8
typedef struct {
  const void *src;
  int32_t src_dtype;
  int32_t vectorised;     /* contiguous, aligned to its element: 16-byte loads (else each
                             element through src_map) */
  int64_t n;
  int64_t shift;          /* vectorised: elements between the 16-byte boundary at or before
                             src and src (the head of the first vector) */
  akx__index_map src_map; /* position (memory order) -> element offset */
  int64_t *indices;
  int64_t capacity;
  int32_t block_size, items_per_thread; /* items: elements per thread of a tile */
  int64_t tiles;
  void *status;           /* the workspace's start (kernels/akx/lookback.cuh's header, the
                             count in it, then the flags) */
  uint32_t epoch;         /* the call's epoch (kernels/akx/lookback.cuh) */
  int32_t reset_status;   /* the status may hold foreign bytes: reset it first */
  int64_t reset_flags;    /* the flags the reset zeroes (>= tiles) */
  int64_t nodes_at;       /* the nodes' byte offset from status (its scratch) */
  akx__positions positions; /* a piece's (akx_findall_piece); zero: the positions are src's */
  int64_t window;         /* the selection tile's staging window: entries (uint16 offsets) */
  int64_t smem_bytes;     /* its dynamic shared memory (akx__select_tile_shared) */
} akx__findall_plan;

#ifdef __cplusplus
}
#endif
#endif
