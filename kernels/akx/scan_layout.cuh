// Where a scan tile keeps element k of thread r's run in shared memory.
//
// A tile is loaded striped (thread t takes elements t, t + bd, ...: coalesced) and scanned
// blocked (thread r walks its run of ipt consecutive elements). The striped phases touch
// consecutive elements; the blocked phases touch element k of 32 runs at once, lane r at
// word (r * run_bytes + k * w) / 4: with runs back to back (AK's unpadded tiles), an even
// run of 4-byte partials puts lanes r and r + 32 / gcd(ipt, 32) in one bank.
//
// AK's padded tiles add one element to even runs (odd stride): conflict-free in the blocked
// phases for w >= 4, but a striped request of 32 elements then spans more than 128 bytes and
// wraps onto the banks it started from (measured in the sim: 1.5-1.9x ideal on the striped
// phases for w >= 4). Instead, for w >= 4 the runs stay back to back and run r's elements are
// rotated by r(r) = ((r mod G) * min(lowbit(ipt), G)) / G, G = 128 / w lanes per phase:
//  - blocked: lane r's element k sits at unit r * ipt + (k + r(r)) mod ipt; within a phase
//    the G lanes hit G distinct units mod G (odd ipt: no rotation needed; ipt = 2^b * o:
//    the rotation walks the 2^b lanes that r * ipt maps to one bank across its 2^b slots);
//  - striped: a request still covers whole runs or one run (ipt odd or a power of two), and a
//    permutation within a run keeps the units it touches: conflict-free.
// For w < 4 a run is padded to an odd number of 4-byte words (9 int8 -> 12 bytes, 8 halves
// -> 20 bytes: docs/scan_tiles.md): lane r's k-th element is in word odd * r + const, 32
// distinct banks; a striped request of 32 elements of <= 2 bytes spans at most 128 bytes
// even with the pads. Left: ipt = 2^b * o with o > 1 and w >= 4 (e.g. 6, 12) rotate the
// blocked phases clean but leave the striped ones at up to 1.9x; ipt = 3 for 2-byte partials
// leaves 1.33x striped. The tuning table picks neither.
//
// Why runs in shared memory and not in registers (CUB's ThreadScan): registers need ipt
// known at compile time, one kernel instance per ipt; libakx takes ipt from the tuning table
// and from the caller at run time, and every instance is compiled twice. The shared-memory
// runs cost one more shared read per element (the run is read to reduce, then to scan).
#pragma once
#include "akx/device.cuh"
#include "akx/plan.h"

namespace akx {
struct scan_layout {
  int32_t ipt;     // elements per run
  int32_t stride;  // elements from one run's start to the next
  int32_t rot_mul; // min(lowbit(ipt), G); 0: no rotation
  int32_t rot_g;   // G: lanes per shared phase for this element size

  AKX_HD_INLINE static scan_layout make(int32_t layout, int32_t ipt, int32_t w) {
    scan_layout l{ipt, ipt, 0, 1};
    if (layout == AKX__SCAN_LAYOUT_DENSE) return l;
    if (layout == AKX__SCAN_LAYOUT_ODD_STRIDE) {  // AK's: pad even runs of > 4-byte partials
      if (w > 4 && ipt % 2 == 0) l.stride = ipt + 1;
      return l;
    }
    if (w < 4) {
      int32_t words = (ipt * w + 3) / 4;
      if (words % 2 == 0) ++words;
      l.stride = words * 4 / w;
      return l;
    }
    const int32_t g = w >= 16 ? 8 : w >= 8 ? 16 : 32;
    const int32_t low = ipt & -ipt;
    l.rot_g = g;
    l.rot_mul = low < g ? low : g;
    if (low == 1) l.rot_mul = 0;  // odd runs: no rotation
    return l;
  }
  // Shared slots of a tile of `threads` runs.
  AKX_HD_INLINE int64_t slots(int32_t threads) const { return (int64_t)threads * stride; }
  AKX_HD_INLINE int64_t pos(int64_t run, int32_t k) const {
    if (rot_mul) {
      int32_t kk = k + (int32_t)(((run & (rot_g - 1)) * rot_mul) / rot_g);
      if (kk >= ipt) kk -= ipt;
      return run * ipt + kk;
    }
    return run * stride + k;
  }
};

// Walks e = t, t + bd, t + 2 bd, ... as (run, k) = divmod(e, ipt) without a division per step.
struct striped_walk {
  int64_t run;
  int32_t k;
  int32_t run_step, k_step, ipt;
  AKX_DEVICE striped_walk(int32_t t, int32_t bd, int32_t ipt_)
      : run(t / ipt_), k(t % ipt_), run_step(bd / ipt_), k_step(bd % ipt_), ipt(ipt_) {}
  AKX_DEVICE void next() {
    run += run_step;
    k += k_step;
    if (k >= ipt) { k -= ipt; ++run; }
  }
};
}  // namespace akx
