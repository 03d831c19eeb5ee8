// Whole-array reduction (docs/reduce_whole.md), as CUB's DeviceReduce, in one launch:
//   pass 1: at most target_blocks blocks stride over tiles of the input, each producing one
//           partial (or, when one block covers the input, the finished result);
//   finish: the last block to park its partial (a ticket it puts back to 0) reduces the
//           partials in index order and stores through the finishing step; or, when the
//           ticket may hold anything (a caller's buffer too small for two families' tags, an
//           interrupted call, a captured one), a second launch does (pass 2), with the same
//           code, so the result is the same bits. The ticket is the workspace header's first
//           word, among its tags (src/core/workspace.c, "The regions").
// Vocabulary (moderngpu's): bd threads per block, L vector loads per thread per tile,
// V elements per 16-byte vector, a tile is bd * L * V elements. Indices are zero-based.
#pragma once
#include "akx/block_limits.h"
#include "akx/block_reduce.cuh"
#include "akx/divide.cuh"
#include "akx/finish.cuh"
#include "akx/dtypes.cuh"

namespace akx {

// Where the 16-byte aligned vectors of a contiguous source start and end.
template <class Src>
struct contiguous_span {
  const Src *src;
  int64_t head;  // scalar elements before the first aligned vector (< V)
  int64_t nvec;  // aligned vectors of V elements
  int64_t tail;  // scalar elements after them (< V)
  int32_t L;     // vector loads per thread per tile
  int32_t map;   // akx_map (kernels/akx/ops.cuh, visit_map)
};
// The kernels' parameters are C structs, whatever the types: a launcher that knows no C++ type
// (a run-time module's, src/cuda/runtime_kernels.cu) passes this same layout.
struct contiguous_span_c {
  const void *src;
  int64_t head, nvec, tail;
  int32_t L, map;
};
static_assert(sizeof(contiguous_span<double>) == sizeof(contiguous_span_c) &&
                  alignof(contiguous_span<double>) == alignof(contiguous_span_c),
              "contiguous_span's layout is its C mirror's");
// The span of a plan's source, as the planner measured it (vec_*: src/reduce/reduce_whole.c,
// plan_vectors). (Pass 1 takes the span, not the plan: with the plan as its parameter ptxas
// spilled 8 to 16 bytes in its float64 and complex128 instances, CUDA 13.0.)
AKX_HD_INLINE contiguous_span_c span_of(const akx__reduce_whole_plan &p) {
  return contiguous_span_c{p.src.data, p.vec_head, p.vec_count, p.vec_tail, p.vec_loads, p.map};
}


// Where a plan's first pass counts its finished blocks: the ticket when the call finishes in
// the same launch, else none (src/reduce/reduce_whole.c: the ticket may hold anything).
AKX_HD_INLINE unsigned long long *ticket_of(const akx__reduce_whole_plan &p) {
  return p.one_launch ? static_cast<unsigned long long *>(p.ticket) : nullptr;
}

// One block reduces `count` partials and stores through the finishing step: thread i folds
// partials i, i + bd, ... in order, then the block reduction. Pass 2's body and the last
// block's of pass 1: one tree for the same block size, so both give the same bits.
template <class Op, class Acc>
AKX_DEVICE void reduce_partials_block(const Acc *partials, int32_t count, const akx__finish &fin,
                                      const smem<Acc> &scratch) {
  Acc acc = Op::template identity<Acc>();
  for (int32_t i = threadIdx.x; i < count; i += blockDim.x) acc = Op::apply(acc, gld(partials + i));
  acc = block_reduce<Op>(acc, scratch);
  if (threadIdx.x == 0) finish_store<Op>(acc, fin);
}

// After the block reduction (the result in thread 0): finishes when the grid is one block,
// else parks the block's partial; with a ticket, the last block to park its partial reduces
// them all. The ticket is taken after the partial is released (stored, then __threadfence,
// then the atomic: kernels/akx/device.cuh's rules), and the last block acquires every
// partial (a fence after the atomic that read the count) before its threads read them after
// a barrier. Blocks are never waited for, so they may run in any order; the last block puts
// the ticket back to 0 for the next call (no block of this launch takes one after it).
template <class Op, class Acc>
AKX_DEVICE void store_block_result(Acc acc, Acc *partials, unsigned long long *ticket,
                                   const akx__finish &fin, const smem<Acc> &scratch,
                                   const smem<int> &last) {
  if (gridDim.x == 1) {
    if (threadIdx.x == 0) finish_store<Op>(acc, fin);
    return;
  }
  if (threadIdx.x == 0) {
    gst(partials + blockIdx.x, acc);
    if (ticket) {
      __threadfence();  // release: the partial before the ticket
      const bool is_last = atomicAdd(ticket, 1ull) + 1 == (unsigned long long)gridDim.x;
      if (is_last) {
        atomicExch(ticket, 0ull);
        __threadfence();  // acquire: every block's partial, released before its ticket
      }
      last.st(0, is_last ? 1 : 0);
    }
  }
  if (!ticket) return;
  __syncthreads();  // thread 0's acquire before every thread's reads; scratch free again
  if (last.ld(0)) reduce_partials_block<Op>(partials, (int32_t)gridDim.x, fin, scratch);
}

// The kernels' declarations (kernels/akx/device.cuh, kernel_info). Launch bounds: the reduction
// families' largest block (kernels/akx/block_limits.h). Loads in flight: the independent global
// loads a thread issues before it uses the first. Registers: the kernel's class (kernel_info.registers), the most ptxas gave any prebuilt
// instance for sm_90 (CUDA 13.0) rounded up to 8; bench/RESULTS.md, "Declared registers".
constexpr kernel_info reduce_whole_contiguous_info{"reduce_whole_contiguous", AKX_MAX_BLOCK_REDUCE, 40, 4, false};
constexpr kernel_info reduce_whole_strided_info{"reduce_whole_strided", AKX_MAX_BLOCK_REDUCE, 40, 1, false};
constexpr kernel_info reduce_whole_partials_info{"reduce_whole_partials", AKX_MAX_BLOCK_REDUCE, 24, 1, false};

// ---- pass 1, contiguous source: 16-byte vector loads, four in flight per thread ------------
template <class Src, class Acc, class Op>
AKX_GLOBAL AKX_LAUNCH_BOUNDS(reduce_whole_contiguous_info.max_threads)
void reduce_whole_contiguous(contiguous_span<Src> a, Acc *partials, unsigned long long *ticket, akx__finish fin) {
  grid_dependency_wait();  // PDL (kernels/akx/device.cuh): before the first global access
  grid_dependents_launch();
  constexpr int V = 16 / (int)sizeof(Src);
  AKX_SHARED(Acc, scratch, 32);
  AKX_SHARED(int, last, 1);
  Acc acc = Op::template identity<Acc>();
  const int bd = (int)blockDim.x, L = a.L;
  const Src *vsrc = a.src + a.head;
  const int64_t tile_vecs = (int64_t)bd * L;
  const int64_t tiles = idiv_up(a.nvec, tile_vecs);
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t first = tile * tile_vecs + threadIdx.x;
    if ((tile + 1) * tile_vecs <= a.nvec) {
      int k = 0;
      // Four independent loads before any use: 64 bytes in flight per thread (Little's law
      // with at most 256 blocks needs them; AK's 64 bytes of accumulator per thread).
      for (; k + 4 <= L; k += 4) {
        const vec<Src, V> x0 = gld_vec<Src, V>(vsrc + (first + (int64_t)(k + 0) * bd) * V);
        const vec<Src, V> x1 = gld_vec<Src, V>(vsrc + (first + (int64_t)(k + 1) * bd) * V);
        const vec<Src, V> x2 = gld_vec<Src, V>(vsrc + (first + (int64_t)(k + 2) * bd) * V);
        const vec<Src, V> x3 = gld_vec<Src, V>(vsrc + (first + (int64_t)(k + 3) * bd) * V);
        acc = combine_vec<Acc, Op>(acc, x0, a.map, a.head + (first + (int64_t)(k + 0) * bd) * V, fin.positions);
        acc = combine_vec<Acc, Op>(acc, x1, a.map, a.head + (first + (int64_t)(k + 1) * bd) * V, fin.positions);
        acc = combine_vec<Acc, Op>(acc, x2, a.map, a.head + (first + (int64_t)(k + 2) * bd) * V, fin.positions);
        acc = combine_vec<Acc, Op>(acc, x3, a.map, a.head + (first + (int64_t)(k + 3) * bd) * V, fin.positions);
      }
      for (; k < L; ++k)
        acc = combine_vec<Acc, Op>(acc, gld_vec<Src, V>(vsrc + (first + (int64_t)k * bd) * V), a.map,
                                   a.head + (first + (int64_t)k * bd) * V, fin.positions);
    } else {
      for (int k = 0; k < L; ++k) {
        const int64_t i = first + (int64_t)k * bd;
        if (i < a.nvec)
          acc = combine_vec<Acc, Op>(acc, gld_vec<Src, V>(vsrc + i * V), a.map, a.head + i * V, fin.positions);
      }
    }
  }
  // Fewer than 2V scalars around the vectors; blockDim.x >= 32 >= 2V covers them.
  if (blockIdx.x == 0) {
    const int64_t t = threadIdx.x;
    if (t < a.head) acc = Op::apply(acc, map_value<Src, Acc, Op>(a.map, gld(a.src + t), op_position<Op>(fin.positions, t)));
    else if (t - a.head < a.tail)
      acc = Op::apply(acc, map_value<Src, Acc, Op>(a.map, gld(vsrc + a.nvec * V + (t - a.head)),
                                                   op_position<Op>(fin.positions, a.nvec * V + t)));
  }
  acc = block_reduce<Op>(acc, scratch);
  store_block_result<Op>(acc, partials, ticket, fin, scratch, last);
}

// ---- pass 1, any strides: the general path ----------------------------------------------------
// i is the element's position in the canonical order; for a user op the host keeps the
// source's own index order (src/core/canonical.c), so that i is akx_findall's position.
template <class Src, class Acc, class Op>
AKX_GLOBAL AKX_LAUNCH_BOUNDS(reduce_whole_strided_info.max_threads)
void reduce_whole_strided(akx__source s, int32_t map, Acc *partials, unsigned long long *ticket, akx__finish fin) {
  grid_dependency_wait();  // PDL (kernels/akx/device.cuh): before the first global access
  grid_dependents_launch();
  AKX_SHARED(Acc, scratch, 32);
  AKX_SHARED(int, last, 1);
  Acc acc = Op::template identity<Acc>();
  const Src *src = static_cast<const Src *>(s.data);
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < s.n; i += step) {
    // Canonical sources have their smallest stride last: neighbouring threads, neighbouring
    // addresses.
    const int64_t off = mixed_radix_offset(i, s.ndim, s.shape, s.strides);
    acc = Op::apply(acc, map_value<Src, Acc, Op>(map, gld(src + off), op_position<Op>(fin.positions, i)));
  }
  acc = block_reduce<Op>(acc, scratch);
  store_block_result<Op>(acc, partials, ticket, fin, scratch, last);
}

// ---- pass 2 (and the empty input): one block over the partials --------------------------------
// Run when pass 1 had no ticket (it may have held anything): puts the ticket to 0, so that the
// next call finishes in one launch.
template <class Acc, class Op>
AKX_GLOBAL AKX_LAUNCH_BOUNDS(reduce_whole_partials_info.max_threads)
void reduce_whole_partials(const Acc *partials, int32_t count, akx__finish fin, unsigned long long *ticket) {
  grid_dependency_wait();  // PDL (kernels/akx/device.cuh): before the first global access
  grid_dependents_launch();
  AKX_SHARED(Acc, scratch, 32);
  reduce_partials_block<Op>(partials, count, fin, scratch);
  if (threadIdx.x == 0) gst(ticket, 0ull);
}

// ---- launcher -----------------------------------------------------------------------------------
#if !defined(__CUDACC_RTC__)  // host code: NVRTC compiles the kernels alone
// The family's kernels as its launch sequence calls them (as kernels/akx/scan.cuh's
// scan_kernels: the templates here, or a backend's handles into a run-time module).
template <class Src, class Acc, class Op>
struct reduce_whole_kernels {
  akx_status contiguous(const akx__reduce_whole_plan &p, bool four_loads, void *stream) const {
    // Four loads in flight only when a tile gives a thread four (L >= 4); else one at a time.
    kernel_info info = reduce_whole_contiguous_info;
    if (!four_loads) info.loads_in_flight = 1;
    const contiguous_span_c c = span_of(p);
    contiguous_span<Src> a;
    memcpy(&a, &c, sizeof a);
    return AKX_LAUNCH(info, (reduce_whole_contiguous<Src, Acc, Op>), dim3((unsigned)p.blocks),
                      dim3((unsigned)p.block_size), 0, stream, a, static_cast<Acc *>(p.partials), ticket_of(p),
                      p.finish);
  }
  akx_status strided(const akx__reduce_whole_plan &p, void *stream) const {
    return AKX_LAUNCH((reduce_whole_strided_info), (reduce_whole_strided<Src, Acc, Op>),
                      dim3((unsigned)p.blocks), dim3((unsigned)p.block_size), 0, stream, p.src, (int32_t)p.map,
                      static_cast<Acc *>(p.partials), ticket_of(p), p.finish);
  }
  akx_status partials(const akx__reduce_whole_plan &p, int32_t count, void *stream) const {
    return AKX_LAUNCH((reduce_whole_partials_info), (reduce_whole_partials<Acc, Op>),
                      dim3(1), dim3((unsigned)p.block_size), 0, stream, static_cast<const Acc *>(p.partials), count,
                      p.finish, static_cast<unsigned long long *>(p.ticket));
  }
};

// The one launch sequence of a whole-array reduction, for every set of kernels K.
template <class K>
akx_status reduce_whole_launch_with(const akx__reduce_whole_plan &p, const K &k, void *stream) {
  if (p.partials_only) return k.partials(p, p.blocks, stream);  // the pieces' partials (akx_mapreduce_piece)
  if (p.src.n == 0) return k.partials(p, 0, stream);
  // Pass 1 finishes by itself when it is one block, or with the ticket its last block
  // (store_block_result); else it leaves `blocks` partials for pass 2.
  akx_status s;
  if (p.vectorised) {
    s = k.contiguous(p, p.vec_loads >= 4, stream);
  } else {
    s = k.strided(p, stream);
  }
  if (s != AKX_SUCCESS || p.blocks == 1 || p.one_launch) return s;
  return k.partials(p, p.blocks, stream);
}

template <class Src, class Acc, class Op>
akx_status reduce_whole_launch(const akx__reduce_whole_plan &p, void *stream) {
  return reduce_whole_launch_with(p, reduce_whole_kernels<Src, Acc, Op>{}, stream);
}
#endif

}  // namespace akx
