// findall: 0-based positions (memory order) of the nonzero elements, in one pass over the
// source: a client of the selection tile of kernels/akx/select_tile.cuh (its policy contract,
// docs/tile.md "Device"), one input, the predicate "nonzero", the element's position as what is
// stored, no rejected side. The tile's last tile stores the total in the header for the host
// (snprintf-style: the count is the total even when the capacity is smaller; at most capacity
// positions are written). A piece of a longer array (akx_findall_piece) stores its positions
// moved to the whole array's.
#pragma once
#include "akx/scan.cuh"
#include "akx/select_tile.cuh"

namespace akx {

// The loads a thread keeps in flight: 8 vectors of 16 bytes (the model's bytes in flight,
// kernels/akx/select_tile.cuh's batch) in every tile of a contiguous source but the head and
// tail tiles, which load a slot at a time (as every tile of a strided source: a slot's
// elements, up to 16 scalar loads, in flight). Registers: the kernel's class, the most ptxas gave any
// instance for sm_90 rounded up to 8 (CUDA 13.0: the 1-byte sources', 73 since the tile cuts each
// slot to [0, n) itself and ranks one or two sides; 72 before). 80 keeps 3 blocks of 256 an SM.
constexpr int findall_batch = 8;
constexpr kernel_info findall_info{"findall_tile", AKX_MAX_BLOCK_SCAN, 80, findall_batch, false};

template <class Src>
struct findall_policy {
  // A bool is any byte, nonzero true: its vectors are read as bytes (16 in 4 registers).
  using Item = typename conditional<is_same<Src, bool>::value, unsigned char, Src>::type;
  static constexpr int per_vector = 16 / (int)sizeof(Src);
  using Raw = vec<Item, per_vector>;
  using Out = long long;
  using Staged = uint16_t;  // an element's offset in its tile
  static constexpr int sides = 1;          // the nonzero elements' positions
  static constexpr bool rejects = false;   // and nothing of the others
  static constexpr int vectors = AKX__FINDALL_VECTORS;
  static constexpr int batch = vectors < findall_batch ? vectors : findall_batch;
  static_assert(AKX_MAX_BLOCK_SCAN * vectors * per_vector <= 65536, "a tile's offsets fit 16 bits");
  // The kernel's parameter, read where used (a copy of its index map would be a local array).
  const akx__findall_plan &plan;
  int64_t n, shift, capacity;
  int64_t window;  // the staging window's entries (the plan's: src/tile/select_shared.cpp)

  // Whether the `elements` from `position` are all in the source and read in vectors.
  AKX_DEVICE bool whole(int64_t position, int64_t elements) const {
    return plan.vectorised && position >= 0 && position + elements <= n;
  }
  // Vector slot k of a whole tile: one 16-byte load.
  AKX_DEVICE Raw load_whole(int64_t k) const {
    return gld_vec<Item, per_vector>(static_cast<const Item *>(plan.src) + (k * per_vector - shift));
  }
  // Any vector slot: one 16-byte load where it is whole, else element by element (the head and
  // tail of a vectorised source; every slot of a strided one), zeros outside [0, n).
  AKX_DEVICE Raw load(int64_t k) const {
    const Item *items = static_cast<const Item *>(plan.src);
    const int64_t first = k * per_vector - shift;
    if (plan.vectorised && first >= 0 && first + per_vector <= n) return gld_vec<Item, per_vector>(items + first);
    Raw x{};
#pragma unroll
    for (int e = 0; e < per_vector; ++e) {
      const int64_t i = first + e;
      if (i >= 0 && i < n)
        x.v[e] = gld_wide(items + (plan.vectorised ? i : mixed_radix_offset(i, plan.src_map.ndim, plan.src_map.shape,
                                                                               plan.src_map.strides)));
    }
    return x;
  }
  // Bit e: element e of the slot is nonzero (numpy's: NaN is, -0.0 is not; either part of a
  // complex; any nonzero byte of a bool).
  AKX_DEVICE static uint32_t selected(const Raw &x) {
    uint32_t m = 0;
#pragma unroll
    for (int e = 0; e < per_vector; ++e) {
      bool nz;
      if constexpr (is_cplx_v<Item>) nz = widen(x.v[e].re) != 0 || widen(x.v[e].im) != 0;
      else nz = widen(x.v[e]) != 0;
      if (nz) m |= 1u << e;
    }
    return m;
  }
  AKX_DEVICE void store(int64_t slot, Staged offset, int64_t tile_position) const {
    const int64_t position = tile_position + offset;
    const akx__positions &at = plan.positions;  // where the positions sit in a whole array
    gst(reinterpret_cast<long long *>(plan.indices) + slot,
        (long long)(at.base + position + (at.block > 0 ? idiv(position, at.block) * at.skip : 0)));
  }
};

// The tile kernel: the plan by value (src/cuda/runtime_kernels.cu passes the same bytes), the
// staging window's p.smem_bytes of dynamic shared memory.
template <class Src>
AKX_GLOBAL AKX_LAUNCH_BOUNDS_MIN(AKX_MAX_BLOCK_SCAN, AKX_MIN_BLOCKS_SCAN_TILE)
void findall_kernel(akx__findall_plan p) {
  grid_dependency_wait();  // PDL (kernels/akx/device.cuh): before the first global access
  grid_dependents_launch();
  // The look-back status: the one place the kernel says where it lies.
  const lookback_status<select_counts<1>> st = lookback_status<select_counts<1>>::at(p.status, p.nodes_at);
  select_tile_body(findall_policy<Src>{p, p.n, p.shift, p.capacity, p.window}, st, p.tiles, p.epoch);
}

#if !defined(__CUDACC_RTC__)  // host code: NVRTC compiles the kernels alone
// findall's kernels as its launch sequence calls them (as kernels/akx/scan.cuh's scan_kernels).
template <class Src>
struct findall_kernels {
  akx_status init(void *status, int64_t tiles, void *stream) const {
    return scan_kernels<void, void, void, void>{}.init(status, tiles, stream);
  }
  akx_status tile(const akx__findall_plan &p, void *stream) const {
    return AKX_LAUNCH((findall_info), (findall_kernel<Src>), dim3((unsigned)p.tiles),
                      dim3((unsigned)p.block_size), (size_t)p.smem_bytes, stream, p);
  }
};

template <class K>
akx_status findall_launch_with(const akx__findall_plan &p, const K &k, void *stream) {
  if (p.n == 0) return AKX_SUCCESS;
  // The status is reset only when it may hold foreign bytes (kernels/akx/lookback.cuh).
  if (p.reset_status) AKX_TRY(k.init(p.status, p.reset_flags, stream));
  return k.tile(p, stream);
}

template <class Src>
akx_status findall_launch(const akx__findall_plan &p, void *stream) {
  return findall_launch_with(p, findall_kernels<Src>{}, stream);
}
#endif

}  // namespace akx
