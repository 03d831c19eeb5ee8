// Scans along a strided dim: one thread per column (an element of the kept dims), walking
// the scanned dim with a sequential carry; neighbouring threads take neighbouring columns,
// so each step is a coalesced request when a kept dim has stride 1. When the columns alone
// cannot fill the device the scanned dim is cut into chunks:
//   scan_columns (reduce)  each (column, chunk) folds its chunk into a carry slot;
//   scan_columns_carry     each column turns its carries into exclusive prefixes, in order;
//   scan_columns (scan)    each (column, chunk) rescans its chunk from its prefix.
// The fold order is fixed by the chunking alone: deterministic.
#pragma once
#include "akx/scan_tile.cuh"

namespace akx {

// Launch bounds: the scan families' largest block (kernels/akx/block_limits.h). Registers: the kernel's class (kernel_info.registers), the most ptxas gave any prebuilt
// instance for sm_90 (CUDA 13.0) rounded up to 8; bench/RESULTS.md, "Declared registers".
constexpr kernel_info scan_columns_info{"scan_columns", AKX_MAX_BLOCK_SCAN, 40, 1, false};
constexpr kernel_info scan_columns_carry_info{"scan_columns_carry", AKX_MAX_BLOCK_SCAN, 32, 1, false};

// columns_scan_carried: from the carry too, in a piece whose sequence began before it
// (akx_scan_piece): none of its outputs is the sequence's head.
enum scan_columns_mode : int32_t { columns_scan = 0, columns_reduce = 1, columns_scan_from_carry = 2,
                                   columns_scan_carried = 3 };

// The column scan takes its result rule (exclusive, init) as a parameter of its own, beside
// the plan: built inside the kernel from the plan, ptxas spilled its float64 MIN/MAX instances
// (CUDA 13.0). A launcher that knows no C++ type lays it out as the C struct it is: two bools,
// then the accumulator at its alignment (scan_result_layout).
AKX_HD_INLINE constexpr size_t scan_result_init_offset(size_t acc_align) { return acc_align > 2 ? acc_align : 2; }
AKX_HD_INLINE constexpr size_t scan_result_size(size_t acc_size, size_t acc_align) {
  return (scan_result_init_offset(acc_align) + acc_size + acc_align - 1) / acc_align * acc_align;
}
static_assert(sizeof(scan_result<plain_scan<op_add, double>>) == scan_result_size(8, 8) &&
                  sizeof(scan_result<plain_scan<op_add, c128>>) == scan_result_size(16, 8) &&
                  sizeof(scan_result<plain_scan<op_add, f16>>) == scan_result_size(2, 2) &&
                  sizeof(scan_result<plain_scan<op_add, bool>>) == scan_result_size(1, 1),
              "scan_result is {bool, bool, Acc at its alignment}");

template <class Src, class Dst, class Op, class Acc>
AKX_GLOBAL AKX_LAUNCH_BOUNDS(scan_columns_info.max_threads)
void scan_columns(akx__scan_plan p, scan_result<plain_scan<Op, Acc>> result, int32_t mode) {
  grid_dependency_wait();  // PDL (kernels/akx/device.cuh): before the first global access
  grid_dependents_launch();
  using S = plain_scan<Op, Acc>;
  const int64_t g = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  const int64_t columns = p.slices;
  if (g >= columns * p.chunks) return;
  const int64_t chunk = idiv(g, columns), c = g - chunk * columns;
  const Src *src = static_cast<const Src *>(p.src) + index_map_offset(p.src_outer, c);
  Dst *dst = static_cast<Dst *>(p.dst) + index_map_offset(p.dst_outer, c);
  Acc *carries = static_cast<Acc *>(p.status);
  const int64_t i_begin = chunk * p.chunk_len;
  const int64_t base = p.index_base;
  const int64_t i_end = p.n - i_begin < p.chunk_len ? p.n : i_begin + p.chunk_len;
  if (mode == columns_reduce) {
    Acc acc = op_load<Op, Acc>(gld_wide(src + i_begin * p.src_step), i_begin + base);
    for (int64_t i = i_begin + 1; i < i_end; ++i)
      acc = Op::apply(acc, op_load<Op, Acc>(gld_wide(src + i * p.src_step), i + base));
    gst(carries + g, acc);
    return;
  }
  Acc running = mode != columns_scan ? gld(carries + g) : S::identity();
  // Only the first element of the whole sequence is its head (an exclusive scan's init there);
  // a carried piece's first element follows the pieces before it. (A flag, not a head index
  // from the plan: compared with a constant, the test leaves the loop's registers as they were,
  // 32 where a loaded index took 40, sm_90.)
  const bool carried = mode == columns_scan_carried;
  for (int64_t i = i_begin; i < i_end; ++i) {
    const Acc after = Op::apply(running, op_load<Op, Acc>(gld_wide(src + i * p.src_step), i + base));
    gst_wide(dst + i * p.dst_step, op_store<Op, Dst>(result(running, after, i == 0 && !carried)));
    running = after;
  }
}

// Carries of one column, chunk by chunk, into exclusive prefixes (chunk 0: the identity). Any
// `chunks` rows: akx_scan_piece also folds its pieces' totals with it (the row after the ones
// folded receives their fold).
template <class Op, class Acc>
AKX_GLOBAL AKX_LAUNCH_BOUNDS(scan_columns_carry_info.max_threads)
void scan_columns_carry(akx__scan_plan p) {
  grid_dependency_wait();  // PDL (kernels/akx/device.cuh): before the first global access
  grid_dependents_launch();
  Acc *carries = static_cast<Acc *>(p.status);
  const int64_t columns = p.slices, chunks = p.chunks;
  const int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= columns) return;
  Acc running = Op::template identity<Acc>();
  for (int64_t k = 0; k < chunks; ++k) {
    const Acc v = gld(carries + k * columns + c);
    gst(carries + k * columns + c, running);
    running = Op::apply(running, v);
  }
}

}  // namespace akx
