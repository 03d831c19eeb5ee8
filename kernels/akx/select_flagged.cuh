// The flagged selections (akx_select_flagged, akx_partition_flagged): a client of the selection
// tile (kernels/akx/select_tile.cuh, docs/tile.md "Device"), as findall is. Two inputs staged as
// items: the flags, read first, and the values, read only for a slot whose flags select one of its
// items (a select) or for every slot (a partition, whose rejected side moves the others too). So
// a sparse select touches only the 32-byte sectors of src that hold a selected item: at 0.1% of
// items flagged it reads the flags and about one sector per selected item, where CUB's
// DeviceSelect::Flagged reads every value (docs/select.md).
//
// Values are moved, never computed on: the kernels are keyed by the values' width (uint8_t,
// uint16_t, uint32_t, unsigned long long, and a 16-byte pair of doubles for complex128), so that
// every dtype of a width shares one kernel and an item keeps its exact bits. Flags have any dtype
// of akx.h: the kernel reads their width at run time (a uniform branch per slot: a branch per
// tile would compile the whole tile body once per width) and tests their bits against the plan's mask (numpy's nonzero: a float's sign bit
// is masked, so -0.0 is zero and NaN is not; a bool's any nonzero byte).
#pragma once
#include "akx/lookback.cuh"
#include "akx/scan.cuh"
#include "akx/select_plan.h"
#include "akx/select_tile.cuh"

namespace akx {

// The dtypes the flagged kernels are keyed by, one a width (the planner asks for these alone,
// src/select/select.c): a width's every dtype moves as it, bits kept.
AKX_CONSTEXPR bool is_width_dtype(akx_dtype t) {
  return t == AKX_UINT8 || t == AKX_UINT16 || t == AKX_UINT32 || t == AKX_UINT64 || t == AKX_COMPLEX128;
}

// Loads a thread keeps in flight: 4 slots of 16 bytes of values (2 of 1-byte values) and their
// flags, kept in registers from the load to the compaction (16 registers of values). Registers:
// the kernel's class, as findall's (80 keeps 3 blocks of 256 an SM).
constexpr int select_flagged_batch = AKX__SELECT_VECTORS_OF(4);
constexpr kernel_info select_flagged_info{"select_flagged", AKX_MAX_BLOCK_SCAN, 80, select_flagged_batch, false};

// A flag's bits as two words (a 16-byte flag: both; narrower: the low word), and its test.
struct flag_bits {
  unsigned long long lo, hi;
};
AKX_HD_INLINE bool flag_nonzero(const flag_bits &f, const akx__select_plan &p) {
  return ((f.lo & p.flags_mask[0]) | (f.hi & p.flags_mask[1])) != 0;
}
// Flag i of the sequence (memory order: flags + i * stride), FW bytes wide.
template <int FW>
AKX_DEVICE flag_bits flag_at(const akx__select_plan &p, int64_t i) {
  const unsigned char *b = static_cast<const unsigned char *>(p.flags) + i * p.flags_stride * FW;
  flag_bits f{0, 0};
  if constexpr (FW == 1) f.lo = gld(b);
  else if constexpr (FW == 2) f.lo = gld(reinterpret_cast<const uint16_t *>(b));
  else if constexpr (FW == 4) f.lo = gld(reinterpret_cast<const uint32_t *>(b));
  else if constexpr (FW == 8) f.lo = gld(reinterpret_cast<const unsigned long long *>(b));
  else {  // 16 bytes: a complex128 flag, 8-byte aligned at least
    f.lo = gld(reinterpret_cast<const unsigned long long *>(b));
    f.hi = gld(reinterpret_cast<const unsigned long long *>(b) + 1);
  }
  return f;
}

template <class V, bool Partition>
struct flagged_policy {
  static constexpr int per_vector = 16 / (int)sizeof(V);
  static constexpr int vectors = AKX__SELECT_VECTORS_OF(sizeof(V));
  static constexpr int batch = vectors;
  static constexpr int sides = 1;
  static constexpr bool rejects = Partition;
  static constexpr bool keeps_items = true;
  struct Raw {
    vec<V, per_vector> v;
    uint32_t m;  // bit e: the slot's item e is flagged
  };
  using Out = V;
  using Staged = V;
  const akx__select_plan &plan;
  int64_t n, shift, capacity, rejected_capacity;
  int64_t window;
  int32_t flag_size;  // the flags' width in bytes (each slot's branch)

  AKX_DEVICE bool whole(int64_t position, int64_t items) const {
    return plan.vectorised && position >= 0 && position + items <= n;
  }
  // The slot's flags as bits (items outside [0, n) read nothing: the tile drops them).
  template <int FW>
  AKX_DEVICE uint32_t flags_of(int64_t first) const {
    uint32_t m = 0;
    if (plan.vectorised && first >= 0 && first + per_vector <= n) {
      // Whole: the slot's flags are per_vector x FW contiguous bytes, aligned to their size
      // (or to 16): as wide loads.
      constexpr int bytes = per_vector * FW, word = bytes < 16 ? bytes : 16;
      const unsigned char *b = static_cast<const unsigned char *>(plan.flags) + first * FW;
      if constexpr (word == 16) {
#pragma unroll
        for (int q = 0; q < bytes / 16; ++q) {
          const vec<unsigned long long, 2> w = gld_vec<unsigned long long, 2>(
              reinterpret_cast<const unsigned long long *>(b) + 2 * q);
          // 16 bytes hold 16 / FW flags
#pragma unroll
          for (int e = 0; e < 16 / FW; ++e) {
            flag_bits f{0, 0};
            if constexpr (FW == 16) f = flag_bits{w.v[0], w.v[1]};
            else {
              const unsigned long long wv = w.v[e * FW / 8];
              f.lo = FW == 8 ? wv : (wv >> (8 * (e * FW % 8))) & ((1ull << (8 * FW)) - 1);
            }
            if (flag_nonzero(f, plan)) m |= 1u << (q * (16 / FW) + e);
          }
        }
      } else {
        unsigned long long wv;
        if constexpr (word == 8) wv = gld(reinterpret_cast<const unsigned long long *>(b));
        else if constexpr (word == 4) wv = gld(reinterpret_cast<const uint32_t *>(b));
        else if constexpr (word == 2) wv = gld(reinterpret_cast<const uint16_t *>(b));
        else wv = gld(b);
#pragma unroll
        for (int e = 0; e < per_vector; ++e) {
          const flag_bits f{FW == 8 ? wv : (wv >> (8 * e * FW)) & ((1ull << (8 * FW)) - 1), 0};
          if (flag_nonzero(f, plan)) m |= 1u << e;
        }
      }
      return m;
    }
#pragma unroll
    for (int e = 0; e < per_vector; ++e) {
      const int64_t i = first + e;
      if (i >= 0 && i < n && flag_nonzero(flag_at<FW>(plan, i), plan)) m |= 1u << e;
    }
    return m;
  }
  AKX_DEVICE uint32_t flags_mask_of(int64_t first) const {
    switch (flag_size) {
      case 1: return flags_of<1>(first);
      case 2: return flags_of<2>(first);
      case 4: return flags_of<4>(first);
      case 8: return flags_of<8>(first);
      default: return flags_of<16>(first);
    }
  }
  // The slot's values, where they are needed: a select's only where a flag selects an item.
  AKX_DEVICE vec<V, per_vector> values_of(int64_t first, uint32_t m) const {
    vec<V, per_vector> x{};
    if (!Partition && m == 0) return x;  // the sparse case: this slot's sectors stay unread
    const V *src = static_cast<const V *>(plan.src);
    if (plan.vectorised && first >= 0 && first + per_vector <= n) return gld_vec<V, per_vector>(src + first);
#pragma unroll
    for (int e = 0; e < per_vector; ++e) {
      const int64_t i = first + e;
      if (i >= 0 && i < n && (Partition || (m >> e & 1u))) x.v[e] = gld_wide(src + i * plan.src_stride);
    }
    return x;
  }
  // A slot: its flags first (as bits), then the values they call for.
  AKX_DEVICE Raw load_whole(int64_t k) const { return load(k); }
  AKX_DEVICE Raw load(int64_t k) const {
    const int64_t first = k * per_vector - shift;
    const uint32_t m = flags_mask_of(first);
    return Raw{values_of(first, m), m};
  }
  AKX_DEVICE static uint32_t selected(const Raw &x) { return x.m; }
  AKX_DEVICE static V item(const Raw &x, int e) { return x.v.v[e]; }
  AKX_DEVICE void store(int64_t slot, V v, int64_t) const {
    gst_wide(static_cast<V *>(plan.dst) + slot * plan.dst_stride, v);
  }
  AKX_DEVICE void store_rejected(int64_t slot, V v, int64_t) const {
    gst_wide(static_cast<V *>(plan.dst) + (n - 1 - slot) * plan.dst_stride, v);
  }
};

// The tile kernels, one per side layout: the plan by value (src/cuda/runtime_kernels.cu passes
// the same bytes), the staging window's p.smem_bytes of dynamic shared memory.
template <class V, bool Partition>
AKX_DEVICE void select_flagged_body(const akx__select_plan &p) {
  grid_dependency_wait();  // PDL (kernels/akx/device.cuh): before the first global access
  grid_dependents_launch();
  const lookback_status<select_counts<1>> st = lookback_status<select_counts<1>>::at(p.status, p.nodes_at);
  const int64_t rejected = Partition ? p.n : 0;
  select_tile_body(flagged_policy<V, Partition>{p, p.n, p.shift, p.capacity, rejected, p.window, p.flags_size}, st,
                   p.tiles, p.epoch);
}
template <class V>
AKX_GLOBAL AKX_LAUNCH_BOUNDS_MIN(AKX_MAX_BLOCK_SCAN, AKX_MIN_BLOCKS_SCAN_TILE)
void select_flagged_kernel(akx__select_plan p) {
  select_flagged_body<V, false>(p);
}
template <class V>
AKX_GLOBAL AKX_LAUNCH_BOUNDS_MIN(AKX_MAX_BLOCK_SCAN, AKX_MIN_BLOCKS_SCAN_TILE)
void partition_flagged_kernel(akx__select_plan p) {
  select_flagged_body<V, true>(p);
}
constexpr kernel_info partition_flagged_info{"partition_flagged", AKX_MAX_BLOCK_SCAN, 80, select_flagged_batch, false};

#if !defined(__CUDACC_RTC__)  // host code: NVRTC compiles the kernels alone
// The flagged selections' kernels as their launch sequence calls them (as findall's).
template <class V>
struct select_flagged_kernels {
  akx_status init(void *status, int64_t tiles, void *stream) const {
    return scan_kernels<void, void, void, void>{}.init(status, tiles, stream);
  }
  akx_status tile(const akx__select_plan &p, void *stream) const {
    if (p.mode == AKX__SELECT_PARTITION)
      return AKX_LAUNCH((partition_flagged_info), (partition_flagged_kernel<V>), dim3((unsigned)p.tiles),
                        dim3((unsigned)p.block_size), (size_t)p.smem_bytes, stream, p);
    return AKX_LAUNCH((select_flagged_info), (select_flagged_kernel<V>), dim3((unsigned)p.tiles),
                      dim3((unsigned)p.block_size), (size_t)p.smem_bytes, stream, p);
  }
};

template <class K>
akx_status select_flagged_launch_with(const akx__select_plan &p, const K &k, void *stream) {
  if (p.n == 0) return AKX_SUCCESS;
  // The status is reset only when it may hold foreign bytes (kernels/akx/lookback.cuh).
  if (p.reset_status) AKX_TRY(k.init(p.status, p.reset_flags, stream));
  return k.tile(p, stream);
}

template <class V>
akx_status select_flagged_launch(const akx__select_plan &p, void *stream) {
  return select_flagged_launch_with(p, select_flagged_kernels<V>{}, stream);
}
#endif

}  // namespace akx
