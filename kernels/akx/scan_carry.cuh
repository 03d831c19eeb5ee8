// The tile scan of a piece of longer sequences (akx_scan_piece, src/scan/scan_piece.c): the
// third tile policy, beside scan_policy's plain and segmented ones (kernels/akx/scan_tile.cuh),
// for lines too long for the column kernels' carry pass to fold their chunks one by one. Two
// launches of the one tile body, around the caller's exchange, over the piece's lines as one
// segmented sequence (a line is a slice: one line or many):
//   totals   each line's fold, left to right and without init, stored at the line's last
//            element into row[line] (one accumulator per line): what the exchange sends; dst
//            is not written;
//   carried  each line scanned with row[line], the carry of the pieces before it (read from the
//            device, where the carry pass left it after the exchange), as the left operand of
//            every element: element 0 is loaded as carry o x0, so every prefix is
//            carry o x0 o ... o xi, and the result rule puts init in front of that, as the
//            single-process scan and the column kernels' carried pass do. An exclusive output
//            is the prefix before the element; element 0's is the carry itself (with init),
//            stored by the thread that stores element 0. Every element is read and written by
//            its own tile, so dst may be src (the same view).
// A piece's first element is never its sequence's head: a piece with nothing before it has
// the identity as its carry (the carry pass over no rows), as in the column kernels.
#pragma once
#include "akx/scan_tile.cuh"

namespace akx {

// Launch bounds as the other tiles; registers: the class of scan_slices (kernels/akx/scan_tile.cuh),
// the same tile body (a user op's kernel alone, compiled at run time: no prebuilt instance).
constexpr kernel_info scan_carried_info{"scan_carried", AKX_MAX_BLOCK_SCAN, 72, scan_load_batch<float>, true};

enum scan_carry_mode : int32_t { carry_totals = 0, carry_scan = 1 };

// The policy's parameter as a C struct, whatever the types (a launcher that knows no C++ type
// writes it: src/cuda/runtime_kernels.cu). init: one accumulator in its own layout.
struct scan_carry_params {
  const void *src;
  void *dst;
  void *row;
  int64_t n, total, src_step, dst_step;
  int64_t index_base;  // the piece's first element's index along the line: a user map's i
  int64_t d_slice, d_i;  // cursor steps for a stride of bd elements
  akx__index_map src_outer, dst_outer;
  int32_t mode;  // scan_carry_mode
  int32_t exclusive, has_init;
  AKX_ALIGNAS(16) unsigned char init[AKX__INIT_BYTES];

  AKX_HD_INLINE static scan_carry_params from_plan(const akx__scan_plan &p, int32_t mode) {
    scan_carry_params c;
    c.src = p.src;
    c.dst = p.dst;
    c.row = p.line_row;
    c.n = p.n;
    c.total = p.n * p.slices;
    c.src_step = p.src_step;
    c.dst_step = p.dst_step;
    c.index_base = p.index_base;
    c.d_slice = p.block_size / p.n;
    c.d_i = p.block_size % p.n;
    c.src_outer = p.src_outer;
    c.dst_outer = p.dst_outer;
    c.mode = mode;
    c.exclusive = p.exclusive != 0;
    c.has_init = p.has_init != 0;
    memcpy(c.init, p.init, sizeof c.init);
    return c;
  }
};

// S: seg_scan<Op, Acc> (the lines as slices; one line is one slice). The parameters are its
// only data: a kernel's parameter is the C struct's bytes.
template <class Src, class Dst, class S>
struct scan_carry_policy : scan_carry_params {
  using scan = S;
  using Acc = typename S::value_type;
  using Op = typename S::op;

  AKX_DEVICE Acc with_init(const Acc &v) const {
    return has_init ? S::combine(bitcast_<Acc>(init), v) : v;
  }
  AKX_DEVICE Acc element(int64_t slice, int64_t i) const {
    const Src *s = static_cast<const Src *>(src) + index_map_offset(src_outer, slice) + i * src_step;
    return op_load<Op, Acc>(gld_wide(s), i + index_base);
  }
  AKX_DEVICE Acc load(const slice_cursor &k) const {
    const Acc x = element(k.slice, k.i);
    if (mode == carry_scan && k.i == 0) return S::combine(gld(static_cast<const Acc *>(row) + k.slice), x);
    return x;
  }
  AKX_DEVICE void store(const slice_cursor &k, const Acc &v, int64_t) const {
    if (mode == carry_totals) {
      if (k.i == n - 1) gst(static_cast<Acc *>(row) + k.slice, v);
      return;
    }
    Acc out = v;
    if (exclusive && k.i == 0) out = with_init(gld(static_cast<const Acc *>(row) + k.slice));
    gst_wide(static_cast<Dst *>(dst) + index_map_offset(dst_outer, k.slice) + k.i * dst_step,
             op_store<Op, Dst>(out));
  }
  // The totals: the line's fold so far. The scan: init o the prefix through the element
  // (inclusive) or before it (exclusive; element 0's is the store's).
  AKX_DEVICE Acc emit(const typename S::T &before, const typename S::T &after, const Acc &, bool head) const {
    if (mode == carry_totals) return S::value(after);
    if (exclusive) return head ? S::acc_identity() : with_init(S::value(before));
    return with_init(S::value(after));
  }
  AKX_DEVICE void finish(const typename S::T &, bool, lookback_header *) const {}
};
static_assert(sizeof(scan_carry_policy<float, double, seg_scan<op_add, double>>) == sizeof(scan_carry_params),
              "scan_carry_policy's bytes are its parameters'");

}  // namespace akx
