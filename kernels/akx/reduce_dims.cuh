// Reductions along dims (Julia's mapreducedim!, docs/reduce_dims_shapes.md). The host
// (src/reduce/reduce_dims.c) canonicalises the problem to
//   outputs: kept dims (kshape, src strides ksrc, dst strides kdst), innermost last;
//   reduction: reduced dims (rshape, rstride), innermost last;
// and picks one of two kernel bodies, each launched under the names of the shapes it serves:
//
//   rows body (contiguous reductions: the innermost reduced dim has stride 1):
//     G threads per output, G = blockDim.x ("reduce_dims_rows", a block per output) or 32
//     ("reduce_dims_warp_rows", a warp per output); 16-byte vector loads, four in flight.
//   tile body (strided reductions, and the general fallback):
//     a block covers a tile of W consecutive outputs (flat output index, so a tile may take
//     runs of contiguous outputs at the offsets of the other kept dims) with bd / W threads
//     per output stepping down the reduction:
//       W = blockDim.x   one thread per output      "reduce_dims_per_thread"
//       W = 8 (or one 32-byte sector of outputs)    "reduce_dims_tiled"
//       W = 32 (or fewer outputs than 32)           "reduce_dims_columns"
//       W = 32 over outputs contiguous in no dim    "reduce_dims_strided"
//     Threads of one output combine through shared memory, then one thread per output.
//   Either body may split the reduction over gridDim.y blocks; each then parks a partial per
//   output in the workspace (partials[output * splits + split], accumulator type), and a fixed
//   tree of one or two levels finishes them (finish_groups, finish_outputs): in the same launch, the last of a
//   column's splits to park its partials (with many splits: the last of each group of splits
//   folds the group, the last group's block the column; tickets that those blocks put back to
//   0), or, when the tickets may hold anything, a second launch ("reduce_dims_columns_finish")
//   with the same code, so both give the same bits.
//   The pieces of a reduction split across devices (akx_reduce_dims_piece) each store a bare
//   partial per output; a third kernel ("reduce_dims_pieces") folds the gathered ones in piece
//   order, a thread per output, for ops whose partials are no dtype (user ops, ARGMIN/ARGMAX:
//   a built-in op's are an array akx_reduce_dims itself reduces).
// Every store to dst goes through the finishing step (kernels/akx/finish.cuh): init once, fold,
// conversion of the accumulator at the very end. Indices are zero-based, 64-bit.
// The map is a runtime argument (kernels/akx/ops.cuh, map_value), as in every reduction.
#pragma once
#include "akx/block_limits.h"
#include "akx/block_reduce.cuh"
#include "akx/divide.cuh"
#include "akx/finish.cuh"
#include "akx/dtypes.cuh"
#if !defined(__CUDACC_RTC__)
#include "akx/fail.h"  // the launchers' refusals
#endif

namespace akx {

// ---- offsets ----------------------------------------------------------------------------------
// Offset (elements) of index i over n dims (innermost last).
AKX_DEVICE int64_t dims_offset(int64_t i, int32_t n, const int64_t *shape, const int64_t *stride) {
  return mixed_radix_offset(i, n, shape, stride);
}
AKX_DEVICE int64_t out_src_offset(const akx__reduce_dims_plan &p, int64_t o) {
  return p.kdims == 0 ? 0 : dims_offset(o, p.kdims, p.kshape, p.ksrc);
}
AKX_DEVICE int64_t out_dst_offset(const akx__reduce_dims_plan &p, int64_t o) {
  return p.kdims == 0 ? 0 : dims_offset(o, p.kdims, p.kshape, p.kdst);
}

template <class Op, class Acc>
AKX_DEVICE void dims_store(const akx__reduce_dims_plan &p, int64_t o, Acc v) {
  if (p.splits > 1) {
    gst(static_cast<Acc *>(p.partials) + o * (int64_t)gridDim.y + blockIdx.y, v);
    return;
  }
  const size_t dsize = p.dst_size;
  finish_store_at<Op>(v, p.finish, static_cast<char *>(p.finish.dst) + out_dst_offset(p, o) * (int64_t)dsize);
}

// ---- the finish of a split reduction ----------------------------------------------------------
// Outputs of one column of blocks: a block's outputs (the rows body's blockDim / width, the
// tile body's width; src/reduce/reduce_dims.c, outputs_per_block, is the host's copy).
AKX_DEVICE int64_t outputs_per_block(const akx__reduce_dims_plan &p) {
  return p.shape == AKX__DIMS_ROWS || p.shape == AKX__DIMS_WARP_ROWS ? p.block_size / p.width : p.width;
}

// q lanes (a power of two up to 32, aligned in a warp) fold `count` partials at base, in
// order: lane sub folds sub, sub + q, ..., then a shuffle tree of width q; the result is in
// lane sub = 0. Every lane of the warp calls it (the tree's mask names all 32); inactive
// lanes bring the identity. Loads come in batches of finish_loads_in_flight (kernels/akx/plan.h:
// 8, or 4 for 16-byte accumulators) before their combines, which still come in order (the
// batch changes when a load is issued, never the fold): a lane's ceil(count / q) loads take
// ceil(that / batch) round trips. 32 outputs of about 1000 splits of float32 (q = 32, one
// level) took the model 45 us with one in flight, 12.8 us with four, 6.9 us with eight. With
// q = 32 it is the warp tree of kernels/akx/warp_reduce.cuh.
template <class Acc>
constexpr int finish_loads_in_flight = AKX__FINISH_LOADS_IN_FLIGHT(sizeof(Acc));
template <class Acc, class Op, int Q>
AKX_DEVICE Acc fold_lanes(const Acc *base, int32_t count, int64_t step, bool active, int q, int sub) {
  constexpr int batch = finish_loads_in_flight<Acc>;
  const int lanes = Q ? Q : q;
  Acc v = Op::template identity<Acc>();
  if (active) {
    for (int32_t s = sub; s < count; s += lanes * batch) {
      Acc x[batch];
#pragma unroll
      for (int u = 0; u < batch; ++u)
        x[u] = s + lanes * u < count ? gld(base + (s + lanes * u) * step) : Op::template identity<Acc>();
#pragma unroll
      for (int u = 0; u < batch; ++u)
        if (s + lanes * u < count) v = Op::apply(v, x[u]);
    }
  }
#pragma unroll
  for (int off = 16; off > 0; off >>= 1)  // five steps at most, those below lanes taken
    if (off < lanes) v = Op::apply(v, shfl_down(FULL_MASK, v, off, lanes));
  return v;
}
// On CUDA the lane count is a constant (Q): the batch's loads then take their offsets in the
// instruction (Q * u * sizeof(Acc)), where a run-time one needs an address register per load in
// flight, which spilled the rows kernels of 2-byte floats into int64 counts under their 64
// registers (ptxas, sm_90). The sim has no registers to spill and takes q at run time (Q = 0):
// the same loads in the same order, the same bits, and one instance where six made the host
// compiler take 17.6 s over a reduce_dims instance file, 14.4 s with one (float32, g++ -O2).
// count is at most the splits (gridDim.y <= 65535): 32-bit positions. step: accumulators
// from one partial to the next (1 for a split reduction's own, which are consecutive: the
// split finishes pass a literal 1, so that their loads keep their offsets in the instruction).
template <class Acc, class Op>
AKX_DEVICE Acc fold_partials(const Acc *base, int32_t count, int64_t step, bool active, int q, int sub) {
#if defined(__CUDACC__)
  switch (q) {
    case 32: return fold_lanes<Acc, Op, 32>(base, count, step, active, q, sub);
    case 16: return fold_lanes<Acc, Op, 16>(base, count, step, active, q, sub);
    case 8: return fold_lanes<Acc, Op, 8>(base, count, step, active, q, sub);
    case 4: return fold_lanes<Acc, Op, 4>(base, count, step, active, q, sub);
    case 2: return fold_lanes<Acc, Op, 2>(base, count, step, active, q, sub);
    default: return fold_lanes<Acc, Op, 1>(base, count, step, active, q, sub);
  }
#else
  return fold_lanes<Acc, Op, 0>(base, count, step, active, q, sub);
#endif
}

// The levels of a column's finish, each by the whole block (every thread calls it), with
// finish_lanes lanes per (output, group): the planner keeps finish_lanes * outputs_per_block <=
// blockDim, so a column's outputs are folded side by side, in one pass.
// Groups [g_begin, g_end) of each of the column's outputs, each from its group_splits splits,
// into group_partials, as many groups side by side as the block holds.
template <class Acc, class Op>
AKX_DEVICE void finish_groups(const akx__reduce_dims_plan &p, int64_t column, int32_t g_begin, int32_t g_end) {
  const int q = p.finish_lanes, sub = (int)threadIdx.x & (q - 1), slot = (int)threadIdx.x / q;
  const int64_t per_block = outputs_per_block(p), first = column * per_block;
  const int outs = (int)(per_block < p.n_out - first ? per_block : p.n_out - first);
  const int slots = (int)blockDim.x / q, per_pass = slots / outs > 1 ? slots / outs : 1;
  const int gi = slot / outs, j = slot - gi * outs;
  const Acc *partials = static_cast<const Acc *>(p.partials);
  Acc *group_partials = static_cast<Acc *>(p.group_partials);
  for (int32_t g0 = g_begin; g0 < g_end; g0 += per_pass) {  // block-uniform
    const int32_t g = g0 + gi;
    const bool active = gi < per_pass && g < g_end;
    const int64_t o = first + (active ? j : 0);
    const int32_t s0 = (active ? g : g_begin) * p.group_splits;
    const int32_t count = p.splits - s0 < p.group_splits ? p.splits - s0 : p.group_splits;
    const Acc v = fold_partials<Acc, Op>(partials + o * p.splits + s0, count, 1, active, q, sub);
    if (active && sub == 0) gst(group_partials + o * p.groups + g, v);
  }
}
// Each of the column's outputs from its groups' partials (or, with one group, from its
// splits'), stored to dst through the finishing step. One pass and no loop: the finishing
// step is an out-of-line call (kernels/akx/finish.cuh), and a loop's state live across it
// spilled (ptxas, sm_90).
template <class Acc, class Op>
AKX_DEVICE void finish_outputs(const akx__reduce_dims_plan &p, int64_t column) {
  const int q = p.finish_lanes, sub = (int)threadIdx.x & (q - 1), slot = (int)threadIdx.x / q;
  const int64_t per_block = outputs_per_block(p), first = column * per_block;
  const int outs = (int)(per_block < p.n_out - first ? per_block : p.n_out - first);
  const bool active = slot < outs;
  const int64_t o = first + (active ? slot : 0);
  const Acc *base = p.groups > 1 ? static_cast<const Acc *>(p.group_partials) + o * p.groups
                                 : static_cast<const Acc *>(p.partials) + o * p.splits;
  const Acc v = fold_partials<Acc, Op>(base, p.groups > 1 ? p.groups : p.splits, 1, active, q, sub);
  if (active && sub == 0)
    finish_store_at<Op>(v, p.finish, static_cast<char *>(p.finish.dst) + out_dst_offset(p, o) * (int64_t)p.dst_size);
}

// True in every thread of the block that is the last of `arrivals` blocks to take the ticket,
// which it then puts back to 0 for the next call. The block's earlier stores are released
// before the ticket (a barrier, then thread 0's __threadfence and atomic: kernels/akx/device.cuh's
// rules); the last block acquires the others' (a fence after the atomic that read the count)
// before its threads read them after a barrier (__syncthreads_or carries thread 0's verdict: no
// shared word). Nobody waits for anybody.
AKX_DEVICE bool last_to_arrive(unsigned int *ticket, unsigned int arrivals) {
  __syncthreads();  // every store of the block made
  int is_last = 0;
  if (threadIdx.x == 0) {
    __threadfence();  // release: the block's stores before its ticket
    is_last = atomicAdd(ticket, 1u) + 1 == arrivals;
    if (is_last) {
      atomicExch(ticket, 0u);
      __threadfence();  // acquire: every arrival's stores, released before its ticket
    }
  }
  return __syncthreads_or(is_last) != 0;
}

// After a split block parked the partials of its column's outputs, with tickets: one group
// (at most 3 rounds of loads for one lane: src/reduce/reduce_dims.c, finish_tree), the
// column's last split finishes the column; more, the group's last split folds the group, and
// the column's last group to be folded finishes the column from the groups.
template <class Acc, class Op>
AKX_DEVICE void finish_column_if_last(const akx__reduce_dims_plan &p) {
  if (p.splits <= 1 || !p.one_launch) return;
  unsigned int *tickets = static_cast<unsigned int *>(p.tickets);
  const int64_t column = blockIdx.x;
  if (p.groups > 1) {
    const int32_t g = (int32_t)(blockIdx.y / (unsigned)p.group_splits);
    const int32_t left = p.splits - g * p.group_splits;
    const unsigned members = (unsigned)(left < p.group_splits ? left : p.group_splits);
    if (!last_to_arrive(tickets + p.blocks_x + column * p.groups + g, members)) return;
    finish_groups<Acc, Op>(p, column, g, g + 1);
    if (!last_to_arrive(tickets + column, (unsigned)p.groups)) return;
  } else if (!last_to_arrive(tickets + column, gridDim.y)) {
    return;
  }
  finish_outputs<Acc, Op>(p, column);
}

// The kernels' declarations (kernels/akx/device.cuh): four kernels under eight names (the
// function field names the kernel's row in the family list, src/core/families.h). Launch bounds:
// the reduction families' largest block (kernels/akx/block_limits.h). Registers: the kernel's class (kernel_info.registers), the most ptxas gave any prebuilt
// instance for sm_90 (CUDA 13.0) rounded up to 8; bench/RESULTS.md, "Declared registers".
constexpr kernel_info reduce_dims_rows_info{"reduce_dims_rows", AKX_MAX_BLOCK_REDUCE, 72, 4, false, "reduce_dims_rows"};
constexpr kernel_info reduce_dims_warp_rows_info{"reduce_dims_warp_rows", AKX_MAX_BLOCK_REDUCE, 72, 4, false, "reduce_dims_rows"};
constexpr kernel_info reduce_dims_per_thread_info{"reduce_dims_per_thread", AKX_MAX_BLOCK_REDUCE, 64, 4, false, "reduce_dims_tile"};
constexpr kernel_info reduce_dims_tiled_info{"reduce_dims_tiled", AKX_MAX_BLOCK_REDUCE, 64, 4, false, "reduce_dims_tile"};
constexpr kernel_info reduce_dims_columns_info{"reduce_dims_columns", AKX_MAX_BLOCK_REDUCE, 64, 4, false, "reduce_dims_tile"};
constexpr kernel_info reduce_dims_strided_info{"reduce_dims_strided", AKX_MAX_BLOCK_REDUCE, 64, 4, false, "reduce_dims_tile"};
constexpr kernel_info reduce_dims_columns_finish_info{"reduce_dims_columns_finish", AKX_MAX_BLOCK_REDUCE, 48, 8, false, "reduce_dims_finish"};
constexpr kernel_info reduce_dims_pieces_info{"reduce_dims_pieces", AKX_MAX_BLOCK_REDUCE, 32, 8, false, "reduce_dims_pieces"};

// ---- rows body: G threads per output over a contiguous reduction ------------------------------
// The reduction of output o: Q runs (outer reduced dims) of n_in contiguous elements. A run is
// head scalars up to a 16-byte boundary, nvec vectors of V elements, tail scalars; the host
// sets vec_ok when every run has the same head (base and outer strides multiples of 16 bytes,
// kept strides too), else head = n_in and every element is a scalar load (still coalesced).
// Split s of gridDim.y takes its share of the flat vector range and of the flat scalar range.
template <class Src, class Acc, class Op>
AKX_GLOBAL AKX_LAUNCH_BOUNDS(AKX_MAX_BLOCK_REDUCE)
void reduce_dims_rows_kernel(akx__reduce_dims_plan p) {
  grid_dependency_wait();  // PDL (kernels/akx/device.cuh): before the first global access
  grid_dependents_launch();
  constexpr int V = 16 / (int)sizeof(Src);
  AKX_SHARED(Acc, scratch, 32);
  const int G = p.width;  // threads per output: 32 or blockDim.x
  const int g = (int)threadIdx.x % G;
  const int64_t o = (int64_t)blockIdx.x * ((int)blockDim.x / G) + (int)threadIdx.x / G;
  Acc acc = Op::template identity<Acc>();
  if (o < p.n_out) {
    const Src *row = p.len > 0 ? static_cast<const Src *>(p.src) + out_src_offset(p, o) : nullptr;
    const int32_t nq = p.rdims - 1;  // outer reduced dims
    const int64_t n_in = p.rshape[p.rdims - 1];
    const int64_t Q = idiv(p.len, n_in);
    int64_t head = n_in, nvec = 0;
    if (p.vec_ok) {
      const uintptr_t a = (uintptr_t)row;
      head = (int64_t)(((16 - a % 16) % 16) / sizeof(Src));
      if (head > n_in) head = n_in;
      nvec = idiv(n_in - head, V);
    }
    const int64_t scal = n_in - nvec * V;  // head + tail per run
    const int64_t S = (int64_t)gridDim.y, s = (int64_t)blockIdx.y;
    // vectors: flat k over Q * nvec
    {
      const int64_t total = Q * nvec, chunk = idiv_up(total, S);
      const int64_t k0 = s * chunk, k1 = k0 + chunk < total ? k0 + chunk : total;
      const Src *vbase = row + head;
      auto addr = [&](int64_t k) -> const Src * {
        if (Q == 1) return vbase + k * V;
        const int64_t q = idiv(k, nvec), j = k - q * nvec;
        return vbase + dims_offset(q, nq, p.rshape, p.rstride) + j * V;
      };
      // The position of vector k's first element among the output's reduced elements (dead
      // code for the built-in maps, which do not read it).
      auto pos = [&](int64_t k) -> int64_t {
        if (Q == 1) return head + k * V;
        const int64_t q = idiv(k, nvec), j = k - q * nvec;
        return q * n_in + head + j * V;
      };
      int64_t k = k0 + g;
      // Four independent 16-byte loads before any use (Little's law, as reduce_whole).
      for (; k + 3 * (int64_t)G < k1; k += 4 * (int64_t)G) {
        const vec<Src, V> x0 = gld_vec<Src, V>(addr(k));
        const vec<Src, V> x1 = gld_vec<Src, V>(addr(k + G));
        const vec<Src, V> x2 = gld_vec<Src, V>(addr(k + 2 * (int64_t)G));
        const vec<Src, V> x3 = gld_vec<Src, V>(addr(k + 3 * (int64_t)G));
        acc = combine_vec<Acc, Op>(acc, x0, p.map, pos(k), p.finish.positions);
        acc = combine_vec<Acc, Op>(acc, x1, p.map, pos(k + G), p.finish.positions);
        acc = combine_vec<Acc, Op>(acc, x2, p.map, pos(k + 2 * (int64_t)G), p.finish.positions);
        acc = combine_vec<Acc, Op>(acc, x3, p.map, pos(k + 3 * (int64_t)G), p.finish.positions);
      }
      for (; k < k1; k += G)
        acc = combine_vec<Acc, Op>(acc, gld_vec<Src, V>(addr(k)), p.map, pos(k), p.finish.positions);
    }
    // scalars: flat e over Q * (head + tail)
    if (scal > 0) {
      const int64_t total = Q * scal, chunk = idiv_up(total, S);
      const int64_t e0 = s * chunk, e1 = e0 + chunk < total ? e0 + chunk : total;
      for (int64_t e = e0 + g; e < e1; e += G) {
        const int64_t q = Q == 1 ? 0 : idiv(e, scal), i = e - q * scal;
        const int64_t idx = i < head ? i : i + nvec * V;
        const Src *ptr = row + (Q == 1 ? 0 : dims_offset(q, nq, p.rshape, p.rstride)) + idx;
        acc = Op::apply(acc, map_value<Src, Acc, Op>(p.map, gld(ptr), op_position<Op>(p.finish.positions, q * n_in + idx)));
      }
    }
  }
  // One store site per kernel (each instantiates the finishing step's dtype switch).
  acc = G == 32 ? warp_reduce<Op>(acc) : block_reduce<Op>(acc, scratch);
  if (g == 0 && o < p.n_out) dims_store<Op>(p, o, acc);
  finish_column_if_last<Acc, Op>(p);
}

// ---- tile body: W outputs per block, bd / W threads down each output's reduction ------------
// Loads a thread of the tile body keeps in flight down its output's reduction: 64 bytes of
// source, as the seed's whole-array reduction gives each thread 64 bytes of accumulator
// (reduce-whole-array-on-device): 16 of 4-byte sources, 32 of 2-byte ones into accumulators of
// up to 8 bytes (48 to 64 registers, the class's most: test_nvrtc_resources holds NVRTC's units
// to it; a user op's 24-byte accumulator took 80, and keeps 16), 16 of 1-byte ones (32 took 76
// registers), and 4 of 8- and 16-byte ones (with 8, the int64-into-bool instances took an
// 8-byte stack frame; ptxas, sm_90). A warp request of these shapes moves one
// element a lane, 128 bytes of float32 and 64 of bfloat16, so the bytes a launch has in flight
// scale with the loads each thread has: with 4 (before), sum(x; dims=2) of 8192x8192 float32
// had half the bytes in flight that DRAM needs on the rtx5080 profile and a third on the
// h200's (Little's law, src/sim/model.c) and modelled at 1.99x and 1.47x its copy, where the
// seed measured AK's kernel at its copy's bandwidth.
template <class Src, class Acc>
constexpr int tile_loads_in_flight =
    sizeof(Src) >= 8 ? 4 : sizeof(Src) == 1 || (sizeof(Src) == 2 && sizeof(Acc) > 8) ? 16 : 64 / (int)sizeof(Src);

// Thread t serves output x = t % W of the tile on reduction rows y = t / W, y + ny, ...
// (threads with y >= ny idle: bd need not be a multiple of W). Neighbouring lanes take
// neighbouring outputs: where outputs are contiguous in the source (ksrc innermost 1), a warp
// reads whole rows of them, or several rows when W < 32.
template <class Src, class Acc, class Op>
AKX_GLOBAL AKX_LAUNCH_BOUNDS(AKX_MAX_BLOCK_REDUCE)
void reduce_dims_tile_kernel(akx__reduce_dims_plan p) {
  grid_dependency_wait();  // PDL (kernels/akx/device.cuh): before the first global access
  grid_dependents_launch();
  AKX_SHARED(Acc, part, AKX_MAX_BLOCK_REDUCE);  // (bd / W) * W <= bd partials
  // ny = p.tile_rows threads per output, bd / W or fewer (src/reduce/reduce_dims.c,
  // tile_steps: rows that span whole sectors where the tile's rows are adjacent).
  const int W = p.width, ny = p.tile_rows;
  const int t = (int)threadIdx.x, x = t % W, y = t / W;
  const int64_t o = (int64_t)blockIdx.x * W + x;
  Acc acc = Op::template identity<Acc>();
  if (o < p.n_out && y < ny) {
    // An empty reduction may come with a NULL src: no offset from it (undefined), no load.
    const Src *base = p.len > 0 ? static_cast<const Src *>(p.src) + out_src_offset(p, o) : nullptr;
    const int64_t chunk = p.split_len, r0 = (int64_t)blockIdx.y * chunk;
    const int64_t r1 = r0 + chunk < p.len ? r0 + chunk : p.len;
    int64_t r = r0 + y;
    if (p.rdims == 1) {  // one reduced dim (the common case once merged): no division
      const int64_t st = p.rstride[0], step = (int64_t)ny * st;
      const Src *ptr = base + r * st;
      // Batches of B loads in flight (tile_loads_in_flight), combined in order, then the
      // rest (fewer than B) as one batch of predicated loads, combined in order: the same
      // order of combination for any B, and a short reduction's loads (32768x32, dims=2: 32
      // a thread) all in flight where one at a time waited a round trip each. Two bodies,
      // though the second costs nvcc 2 to 6 s a reduce_dims unit: one predicated body for
      // every batch took 76 and 80 registers for float16 into float64 and int16 into int64
      // (the class is 64; test_nvrtc_resources), and loads clamped to a valid address in
      // place of the predicate would make a short tail's missing loads as requests. The trip
      // count from kernels/akx/divide.cuh, loops not unrolled further: the count the compiler
      // derives from a loop's bounds is a 64-bit `/`, a call whose convention spilled the
      // tile kernel of int64 sources into bool accumulators (ptxas, sm_90).
      constexpr int B = tile_loads_in_flight<Src, Acc>;
      const int64_t batches =
          r + (B - 1) * (int64_t)ny < r1 ? idiv(r1 - r - (B - 1) * (int64_t)ny - 1, B * (int64_t)ny) + 1 : 0;
#pragma unroll 1
      for (int64_t k = 0; k < batches; ++k, r += B * (int64_t)ny, ptr += B * step) {
        Src x[B];
#pragma unroll
        for (int j = 0; j < B; ++j) x[j] = gld(ptr + j * step);
#pragma unroll
        for (int j = 0; j < B; ++j)
          acc = Op::apply(acc, map_value<Src, Acc, Op>(p.map, x[j], op_position<Op>(p.finish.positions, r + j * (int64_t)ny)));
      }
      if (r < r1) {
        Src x[B];
#pragma unroll
        for (int j = 0; j < B; ++j)
          if (r + j * (int64_t)ny < r1) x[j] = gld(ptr + j * step);
#pragma unroll
        for (int j = 0; j < B; ++j)
          if (r + j * (int64_t)ny < r1)
            acc = Op::apply(acc, map_value<Src, Acc, Op>(p.map, x[j], op_position<Op>(p.finish.positions, r + j * (int64_t)ny)));
      }
    } else {
      for (; r < r1; r += ny) {
        const Src *ptr = base + (p.rdims == 0 ? 0 : dims_offset(r, p.rdims, p.rshape, p.rstride));
        acc = Op::apply(acc, map_value<Src, Acc, Op>(p.map, gld(ptr), op_position<Op>(p.finish.positions, r)));
      }
    }
  }
  // The ny partials of each output, through shared memory: thread x of the tile then
  // combines its column (consecutive words across the threads: no bank conflict). One
  // store site (each instantiates the finishing step's dtype switch).
  if (ny > 1) {
    if (y < ny) part.st((int64_t)y * W + x, acc);
    __syncthreads();
    if (t < W) {
      acc = part.ld(t);
      for (int yy = 1; yy < ny; ++yy) acc = Op::apply(acc, part.ld((int64_t)yy * W + t));
    }
  }
  const int64_t ot = (int64_t)blockIdx.x * W + t;
  if (t < W && ot < p.n_out) dims_store<Op>(p, ot, acc);
  finish_column_if_last<Acc, Op>(p);
}

// ---- second pass: a block per column of pass 1's blocks, the same finish ------------------------
// Run when pass 1 had no tickets (they may have held anything): puts the column's to 0, so that
// the next call finishes in one launch, then the column's finish as its last block would run it
// (every group, a barrier, the final level): the same tree, the same bits.
template <class Acc, class Op>
AKX_GLOBAL AKX_LAUNCH_BOUNDS(AKX_MAX_BLOCK_REDUCE)
void reduce_dims_finish_kernel(akx__reduce_dims_plan p) {
  grid_dependency_wait();  // PDL (kernels/akx/device.cuh): before the first global access
  grid_dependents_launch();
  const int64_t column = blockIdx.x;
  unsigned int *tickets = static_cast<unsigned int *>(p.tickets);
  if (threadIdx.x == 0) gst(tickets + column, 0u);
  if (p.groups > 1) {
    for (int32_t g = (int32_t)threadIdx.x; g < p.groups; g += (int32_t)blockDim.x)
      gst(tickets + p.blocks_x + column * p.groups + g, 0u);
    finish_groups<Acc, Op>(p, column, 0, p.groups);
    __syncthreads();  // the column's group partials, stored by the block's threads
  }
  finish_outputs<Acc, Op>(p, column);
}

// ---- the pieces' partials ----------------------------------------------------------------------
// Output o's partials sit n_out apart (all[piece * n_out + o]: the exchange gathers each piece's
// n_out as one block), folded in piece order by one thread, so that a warp loads 32 neighbouring
// outputs of one piece (whole sectors), then stored through the finishing step at the output's
// place in dst (the plan's kept dims: dst's, in C order, as the pieces stored them).
template <class Acc, class Op>
AKX_GLOBAL AKX_LAUNCH_BOUNDS(AKX_MAX_BLOCK_REDUCE)
void reduce_dims_pieces_kernel(akx__reduce_dims_plan p) {
  grid_dependency_wait();  // PDL (kernels/akx/device.cuh): before the first global access
  grid_dependents_launch();
  const int64_t o = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  const bool active = o < p.n_out;
  const Acc *base = static_cast<const Acc *>(p.partials) + (active ? o : 0);
  const Acc v = fold_partials<Acc, Op>(base, p.splits, p.n_out, active, 1, 0);
  if (active)
    finish_store_at<Op>(v, p.finish, static_cast<char *>(p.finish.dst) + out_dst_offset(p, o) * (int64_t)p.dst_size);
}

// ---- launcher -----------------------------------------------------------------------------------
#if !defined(__CUDACC_RTC__)  // host code: NVRTC compiles the kernels alone
// The family's kernels as its launch sequence calls them (as kernels/akx/scan.cuh's
// scan_kernels). info: the shape's declaration (its name), which the rows and tile bodies serve.
template <class Src, class Acc, class Op>
struct reduce_dims_kernels {
  akx_status rows(const kernel_info &info, dim3 grid, const akx__reduce_dims_plan &p, void *stream) const {
    return AKX_LAUNCH((info), (reduce_dims_rows_kernel<Src, Acc, Op>), grid,
                      dim3((unsigned)p.block_size), 0, stream, p);
  }
  akx_status tile(const kernel_info &info, dim3 grid, const akx__reduce_dims_plan &p, void *stream) const {
    // A thread's loads: ceil(split_len / tile_rows), all in flight when fewer than a batch.
    const int64_t loads = p.tile_rows > 0 ? idiv_up(p.split_len, (int64_t)p.tile_rows) : 1;
    const int32_t most = (int32_t)(loads < 1 ? 1 : loads < tile_loads_in_flight<Src, Acc> ? loads
                                                                                         : tile_loads_in_flight<Src, Acc>);
    return AKX_LAUNCH((with_loads_in_flight(info, tile_loads_in_flight<Src, Acc>, most)),
                      (reduce_dims_tile_kernel<Src, Acc, Op>), grid,
                      dim3((unsigned)p.block_size), 0, stream, p);
  }
  akx_status finish(dim3 grid, const akx__reduce_dims_plan &p, void *stream) const {
    return AKX_LAUNCH((with_loads_in_flight(reduce_dims_columns_finish_info,
                                            finish_loads_in_flight<Acc>, finish_loads_in_flight<Acc>)),
                      (reduce_dims_finish_kernel<Acc, Op>), grid, dim3((unsigned)p.block_size), 0, stream, p);
  }  // Only for ops without a dtype (the header above): no prebuilt instance compiles it.
  akx_status pieces(dim3 grid, const akx__reduce_dims_plan &p, void *stream) const {
    if constexpr (is_user_op<Op>::value)
      return AKX_LAUNCH((with_loads_in_flight(reduce_dims_pieces_info,
                                              finish_loads_in_flight<Acc>, finish_loads_in_flight<Acc>)),
                        (reduce_dims_pieces_kernel<Acc, Op>), grid, dim3((unsigned)p.block_size), 0, stream, p);
    else
      return akx__fail(AKX_ERROR_INTERNAL, "a built-in op's pieces reach the pieces kernel (akx_reduce_dims "
                       "combines them as an array of their accumulator)");
  }
};

// The one launch sequence of a reduction along dims, for every set of kernels K.
template <class K>
akx_status reduce_dims_launch_with(const akx__reduce_dims_plan &p, const K &k, void *stream) {
  if (p.shape == AKX__DIMS_PIECES) return k.pieces(dim3((unsigned)p.blocks_x), p, stream);
  const dim3 grid((unsigned)p.blocks_x, (unsigned)p.splits);
  akx_status s;
  switch (p.shape) {
    case AKX__DIMS_ROWS:
    case AKX__DIMS_WARP_ROWS:
      s = k.rows(p.shape == AKX__DIMS_ROWS ? reduce_dims_rows_info : reduce_dims_warp_rows_info, grid, p, stream);
      break;
    default:
      s = k.tile(p.shape == AKX__DIMS_PER_THREAD ? reduce_dims_per_thread_info
                 : p.shape == AKX__DIMS_TILED    ? reduce_dims_tiled_info
                 : p.shape == AKX__DIMS_COLUMNS  ? reduce_dims_columns_info
                                                 : reduce_dims_strided_info,
                 grid, p, stream);
  }
  if (s != AKX_SUCCESS || p.splits == 1 || p.one_launch) return s;
  return k.finish(dim3((unsigned)p.blocks_x), p, stream);
}

template <class Src, class Acc, class Op>
akx_status reduce_dims_launch(const akx__reduce_dims_plan &p, void *stream) {
  return reduce_dims_launch_with(p, reduce_dims_kernels<Src, Acc, Op>{}, stream);
}
#endif

}  // namespace akx
