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
//   output in the workspace (partials[output * splits + split], accumulator type), and a
//   warp per output finishes them: in the same launch, the last of a column's splits to park
//   its partials (a ticket per column of blocks, which that block puts back to 0), or, when
//   the tickets may hold anything, a second launch ("reduce_dims_columns_finish") with the
//   same code, so both give the same bits.
// Every store to dst goes through the finishing step (include/akx/finish.cuh): init once, fold,
// conversion of the accumulator at the very end. Indices are zero-based, 64-bit.
// The map is a runtime argument (include/akx/ops.cuh, map_value), as in every reduction.
#pragma once
#include "akx/block_limits.h"
#include "akx/block_reduce.cuh"
#include "akx/divide.cuh"
#include "akx/finish.cuh"
#include "akx/kernel_resources.cuh"

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

// One warp finishes output o from its splits' partials, in split order: lane l folds splits
// l, l + 32, ..., then the warp reduction. The second pass's body and a column's last split's:
// one tree, so one launch and two give the same bits. (A thread per output would walk them one
// dependent step at a time: 1000 splits of three outputs took the model 200 us.) Loads come
// in batches of finish_loads_in_flight (include/akx/plan.h: 8, or 4 for 16-byte accumulators)
// before their combines, which still come in split order (the batch changes when a load is
// issued, never the fold): a lane's ceil(splits / 32) loads take ceil(that / batch) round
// trips. 32 outputs of about 1000 splits of float32 took the model 45 us with one in flight,
// 12.8 us with four (8 rounds), 6.9 us with eight (4 rounds).
template <class Acc>
constexpr int finish_loads_in_flight = AKX__FINISH_LOADS_IN_FLIGHT(sizeof(Acc));
template <class Acc, class Op>
AKX_DEVICE void finish_output(const akx__reduce_dims_plan &p, int64_t o, int lane) {
  constexpr int batch = finish_loads_in_flight<Acc>;
  const Acc *partials = static_cast<const Acc *>(p.partials) + o * p.splits;
  Acc v = Op::template identity<Acc>();
  for (int32_t s = lane; s < p.splits; s += 32 * batch) {
    Acc x[batch];
#pragma unroll
    for (int u = 0; u < batch; ++u)
      x[u] = s + 32 * u < p.splits ? gld(partials + s + 32 * u) : Op::template identity<Acc>();
#pragma unroll
    for (int u = 0; u < batch; ++u)
      if (s + 32 * u < p.splits) v = Op::apply(v, x[u]);
  }
  v = warp_reduce<Op>(v);
  if (lane == 0)
    finish_store_at<Op>(v, p.finish, static_cast<char *>(p.finish.dst) + out_dst_offset(p, o) * (int64_t)p.dst_size);
}

// After a split block parked the partials of its `per_block` outputs: with tickets, the last
// of the column's splits to park them finishes the column's outputs, a warp per output. The
// ticket is taken after the partials are released (the block's stores, a barrier, then thread
// 0's __threadfence and atomic: include/akx/device.cuh's rules); the last block acquires every
// split's partials (a fence after the atomic that read the count) before its threads read them
// after a barrier (__syncthreads_or carries thread 0's verdict: no shared word). Splits are
// never waited for; the last block puts the ticket back to 0 for the next call.
template <class Acc, class Op>
AKX_DEVICE void finish_column_if_last(const akx__reduce_dims_plan &p, int64_t per_block) {
  if (p.splits <= 1 || !p.one_launch) return;
  __syncthreads();  // every partial of the block stored
  int is_last = 0;
  if (threadIdx.x == 0) {
    unsigned int *ticket = static_cast<unsigned int *>(p.tickets) + blockIdx.x;
    __threadfence();  // release: the block's partials before its ticket
    is_last = atomicAdd(ticket, 1u) + 1 == gridDim.y;
    if (is_last) {
      atomicExch(ticket, 0u);
      __threadfence();  // acquire: every split's partials, released before its ticket
    }
  }
  if (!__syncthreads_or(is_last)) return;
  const int warps = (int)blockDim.x >> 5, lane = (int)threadIdx.x & 31;
  for (int64_t j = (int)threadIdx.x >> 5; j < per_block; j += warps) {
    const int64_t o = (int64_t)blockIdx.x * per_block + j;
    if (o >= p.n_out) break;  // the whole warp: o grows with j
    finish_output<Acc, Op>(p, o, lane);
  }
}

// The kernels' declarations (include/akx/device.cuh): three kernels under seven names (the
// function field names the kernel in include/akx/kernel_resources.inc). Launch bounds: the
// reduction families' largest block (include/akx/block_limits.h). Registers: each launch takes
// its instance's from include/akx/kernel_resources.inc (resourced); the declared figures are
// the float32 sum's there (CUDA 13.0, sm_90).
constexpr kernel_info reduce_dims_rows_info{"reduce_dims_rows", AKX_MAX_BLOCK_REDUCE, 40, 4, false, "reduce_dims_rows"};
constexpr kernel_info reduce_dims_warp_rows_info{"reduce_dims_warp_rows", AKX_MAX_BLOCK_REDUCE, 40, 4, false, "reduce_dims_rows"};
constexpr kernel_info reduce_dims_per_thread_info{"reduce_dims_per_thread", AKX_MAX_BLOCK_REDUCE, 40, 4, false, "reduce_dims_tile"};
constexpr kernel_info reduce_dims_tiled_info{"reduce_dims_tiled", AKX_MAX_BLOCK_REDUCE, 40, 4, false, "reduce_dims_tile"};
constexpr kernel_info reduce_dims_columns_info{"reduce_dims_columns", AKX_MAX_BLOCK_REDUCE, 40, 4, false, "reduce_dims_tile"};
constexpr kernel_info reduce_dims_strided_info{"reduce_dims_strided", AKX_MAX_BLOCK_REDUCE, 40, 4, false, "reduce_dims_tile"};
constexpr kernel_info reduce_dims_columns_finish_info{"reduce_dims_columns_finish", AKX_MAX_BLOCK_REDUCE, 32, 8, false, "reduce_dims_finish"};

// ---- rows body: G threads per output over a contiguous reduction ------------------------------
// The reduction of output o: Q runs (outer reduced dims) of n_in contiguous elements. A run is
// head scalars up to a 16-byte boundary, nvec vectors of V elements, tail scalars; the host
// sets vec_ok when every run has the same head (base and outer strides multiples of 16 bytes,
// kept strides too), else head = n_in and every element is a scalar load (still coalesced).
// Split s of gridDim.y takes its share of the flat vector range and of the flat scalar range.
template <class Src, class Acc, class Op>
AKX_GLOBAL AKX_LAUNCH_BOUNDS(AKX_MAX_BLOCK_REDUCE)
void reduce_dims_rows_kernel(akx__reduce_dims_plan p) {
  grid_dependency_wait();  // PDL (include/akx/device.cuh): before the first global access
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
        acc = combine_vec<Acc, Op>(acc, x0, p.map, pos(k));
        acc = combine_vec<Acc, Op>(acc, x1, p.map, pos(k + G));
        acc = combine_vec<Acc, Op>(acc, x2, p.map, pos(k + 2 * (int64_t)G));
        acc = combine_vec<Acc, Op>(acc, x3, p.map, pos(k + 3 * (int64_t)G));
      }
      for (; k < k1; k += G) acc = combine_vec<Acc, Op>(acc, gld_vec<Src, V>(addr(k)), p.map, pos(k));
    }
    // scalars: flat e over Q * (head + tail)
    if (scal > 0) {
      const int64_t total = Q * scal, chunk = idiv_up(total, S);
      const int64_t e0 = s * chunk, e1 = e0 + chunk < total ? e0 + chunk : total;
      for (int64_t e = e0 + g; e < e1; e += G) {
        const int64_t q = Q == 1 ? 0 : idiv(e, scal), i = e - q * scal;
        const int64_t idx = i < head ? i : i + nvec * V;
        const Src *ptr = row + (Q == 1 ? 0 : dims_offset(q, nq, p.rshape, p.rstride)) + idx;
        acc = Op::apply(acc, map_value<Src, Acc, Op>(p.map, gld(ptr), q * n_in + idx));
      }
    }
  }
  // One store site per kernel (each instantiates the finishing step's dtype switch).
  acc = G == 32 ? warp_reduce<Op>(acc) : block_reduce<Op>(acc, scratch);
  if (g == 0 && o < p.n_out) dims_store<Op>(p, o, acc);
  finish_column_if_last<Acc, Op>(p, (int)blockDim.x / G);
}

// ---- tile body: W outputs per block, bd / W threads down each output's reduction ------------
// Thread t serves output x = t % W of the tile on reduction rows y = t / W, y + ny, ...
// (threads with y >= ny idle: bd need not be a multiple of W). Neighbouring lanes take
// neighbouring outputs: where outputs are contiguous in the source (ksrc innermost 1), a warp
// reads whole rows of them, or several rows when W < 32.
template <class Src, class Acc, class Op>
AKX_GLOBAL AKX_LAUNCH_BOUNDS(AKX_MAX_BLOCK_REDUCE)
void reduce_dims_tile_kernel(akx__reduce_dims_plan p) {
  grid_dependency_wait();  // PDL (include/akx/device.cuh): before the first global access
  grid_dependents_launch();
  AKX_SHARED(Acc, part, AKX_MAX_BLOCK_REDUCE);  // (bd / W) * W <= bd partials
  const int W = p.width, bd = (int)blockDim.x, ny = bd / W;
  const int t = (int)threadIdx.x, x = t % W, y = t / W;
  const int64_t o = (int64_t)blockIdx.x * W + x;
  Acc acc = Op::template identity<Acc>();
  if (o < p.n_out && y < ny) {
    // An empty reduction may come with a NULL src: no offset from it (undefined), no load.
    const Src *base = p.len > 0 ? static_cast<const Src *>(p.src) + out_src_offset(p, o) : nullptr;
    const int64_t S = (int64_t)gridDim.y, s = (int64_t)blockIdx.y;
    const int64_t chunk = idiv_up(p.len, S);
    const int64_t r0 = s * chunk, r1 = r0 + chunk < p.len ? r0 + chunk : p.len;
    int64_t r = r0 + y;
    if (p.rdims == 1) {  // one reduced dim (the common case once merged): no division
      const int64_t st = p.rstride[0], step = (int64_t)ny * st;
      const Src *ptr = base + r * st;
      for (; r + 3 * (int64_t)ny < r1; r += 4 * (int64_t)ny, ptr += 4 * step) {
        const Src x0 = gld(ptr), x1 = gld(ptr + step), x2 = gld(ptr + 2 * step), x3 = gld(ptr + 3 * step);
        acc = Op::apply(acc, map_value<Src, Acc, Op>(p.map, x0, r));
        acc = Op::apply(acc, map_value<Src, Acc, Op>(p.map, x1, r + ny));
        acc = Op::apply(acc, map_value<Src, Acc, Op>(p.map, x2, r + 2 * (int64_t)ny));
        acc = Op::apply(acc, map_value<Src, Acc, Op>(p.map, x3, r + 3 * (int64_t)ny));
      }
      for (; r < r1; r += ny, ptr += step) acc = Op::apply(acc, map_value<Src, Acc, Op>(p.map, gld(ptr), r));
    } else {
      for (; r < r1; r += ny) {
        const Src *ptr = base + (p.rdims == 0 ? 0 : dims_offset(r, p.rdims, p.rshape, p.rstride));
        acc = Op::apply(acc, map_value<Src, Acc, Op>(p.map, gld(ptr), r));
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
  finish_column_if_last<Acc, Op>(p, W);
}

// ---- second pass: a warp per output over the splits' partials ---------------------------------
// partials[output * splits + split]: a warp reads one output's partials in consecutive words.
// Run when pass 1 had no tickets (they may have held anything): puts them to 0 (a thread per
// column of pass 1's blocks; there are no more columns than outputs), so that the next call
// finishes in one launch.
template <class Acc, class Op>
AKX_GLOBAL AKX_LAUNCH_BOUNDS(AKX_MAX_BLOCK_REDUCE)
void reduce_dims_finish_kernel(akx__reduce_dims_plan p) {
  grid_dependency_wait();  // PDL (include/akx/device.cuh): before the first global access
  grid_dependents_launch();
  const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (t < p.blocks_x) gst(static_cast<unsigned int *>(p.tickets) + t, 0u);
  const int lane = (int)threadIdx.x & 31;
  const int64_t o = (int64_t)blockIdx.x * ((int)blockDim.x >> 5) + ((int)threadIdx.x >> 5);
  if (o >= p.n_out) return;  // the whole warp
  finish_output<Acc, Op>(p, o, lane);
}

// ---- launcher -----------------------------------------------------------------------------------
#if !defined(__CUDACC_RTC__)  // host code: NVRTC compiles the kernels alone
// The family's kernels as its launch sequence calls them (as include/akx/scan.cuh's
// scan_kernels). info: the shape's declaration (its name), which the rows and tile bodies serve.
template <class Src, class Acc, class Op>
struct reduce_dims_kernels {
  akx_status rows(const kernel_info &info, dim3 grid, const akx__reduce_dims_plan &p, void *stream) const {
    return AKX_LAUNCH((resourced<Src, void, Acc, Op>(info)), (reduce_dims_rows_kernel<Src, Acc, Op>), grid,
                      dim3((unsigned)p.block_size), 0, stream, p);
  }
  akx_status tile(const kernel_info &info, dim3 grid, const akx__reduce_dims_plan &p, void *stream) const {
    return AKX_LAUNCH((resourced<Src, void, Acc, Op>(info)), (reduce_dims_tile_kernel<Src, Acc, Op>), grid,
                      dim3((unsigned)p.block_size), 0, stream, p);
  }
  akx_status finish(dim3 grid, const akx__reduce_dims_plan &p, void *stream) const {
    return AKX_LAUNCH((with_loads_in_flight(resourced<void, void, Acc, Op>(reduce_dims_columns_finish_info),
                                            finish_loads_in_flight<Acc>, finish_loads_in_flight<Acc>)),
                      (reduce_dims_finish_kernel<Acc, Op>), grid, dim3((unsigned)p.block_size), 0, stream, p);
  }
};

// The one launch sequence of a reduction along dims, for every set of kernels K.
template <class K>
akx_status reduce_dims_launch_with(const akx__reduce_dims_plan &p, const K &k, void *stream) {
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
  const int64_t warps = p.block_size / 32, fb = (p.n_out + warps - 1) / warps;
  return k.finish(dim3((unsigned)fb), p, stream);
}

template <class Src, class Acc, class Op>
akx_status reduce_dims_launch(const akx__reduce_dims_plan &p, void *stream) {
  return reduce_dims_launch_with(p, reduce_dims_kernels<Src, Acc, Op>{}, stream);
}
#endif

}  // namespace akx
