// Run heads: where a sequence of keys starts a run (a key that differs from the one before it,
// or the sequence's first element), for every tile that finds runs (the by-key reductions and
// scans of kernels/akx/segment_tile.cuh today; a selection's "unique" or run-length tile, whose
// selected elements are the heads, tomorrow: docs/tile.md, "Device"). Three pieces, each a
// tile's step and none tied to one plan:
//   - the key staging: a tile's keys loaded striped (coalesced, a batch of loads in flight) into
//     shared memory in a scan_layout of 8-byte slots (kernels/akx/scan_layout.cuh), each key
//     widened to a word, a bool's nonzero byte one key (key_stager);
//   - the head test over a thread's run of staged keys (run_head_bits, run_head);
//   - the predecessor across tiles: the last key of the tile before, read from global memory
//     by one thread (run_key_before), so that a tile finds its first head without waiting for
//     the tile before it (and the key after the tile, run_key_after, for a run's end).
// The keys come from any struct with the fields keys (the first key), keys_stride (in keys),
// keys_size (1, 2, 4, 8 bytes) and keys_bool (nonzero: a bool's keys, any nonzero byte one key):
// kernels/akx/segmented_plan.h's akx__segmented_plan is one. A template parameter, not a copy of
// the fields: the kernels read their plan where they use it (a kernel parameter, no registers).
#pragma once
#include "akx/scan_layout.cuh"

namespace akx {

// Key i as a word: its bytes (a bool: nonzero is one key).
template <class Keys>
AKX_DEVICE unsigned long long run_key(const Keys &p, int64_t i) {
  const unsigned char *b = static_cast<const unsigned char *>(p.keys) + i * p.keys_stride * (int64_t)p.keys_size;
  switch (p.keys_size) {
    case 1: {
      const unsigned char v = gld(b);
      return p.keys_bool ? (unsigned long long)(v != 0) : (unsigned long long)v;
    }
    case 2: return gld(reinterpret_cast<const uint16_t *>(b));
    case 4: return gld(reinterpret_cast<const uint32_t *>(b));
    default: return gld(reinterpret_cast<const unsigned long long *>(b));
  }
}

// The predecessor across tiles: the key before the tile starting at `base` (0 for the first
// tile, whose element 0 is a head whatever it holds). One load by one thread: the tile before
// need not have run (tiles find their heads in any order, before the look-back).
template <class Keys>
AKX_DEVICE unsigned long long run_key_before(const Keys &p, int64_t base) {
  return base > 0 ? run_key(p, base - 1) : 0;
}
// The key after the tile's `valid` elements from `base` (0 past the sequence's n): whether the
// tile's last element ends its run.
template <class Keys>
AKX_DEVICE unsigned long long run_key_after(const Keys &p, int64_t base, int64_t valid, int64_t n) {
  return base + valid < n ? run_key(p, base + valid) : 0;
}

// The head test: the element at `position` of the sequence starts a run.
AKX_HD_INLINE bool run_head(int64_t position, unsigned long long key, unsigned long long prev) {
  return position == 0 || key != prev;
}

// Stages the tile's keys (striped, a batch of loads in flight) in kbuf's 8-byte layout, the
// keys read as K (their width; a bool normalised). Called as stage(K{}) for the keys' width,
// one branch per tile (the loads' batch unrolled per width).
template <int Batch, class Keys>
struct key_stager {
  const Keys &p;
  const smem<unsigned long long> &kbuf;
  scan_layout klayout;
  int64_t base, valid;
  int32_t tid, bd, ipt;
  // 8-byte keys half as many at once: 16 of them held 32 registers, and ptxas spilled the
  // by-key kernels of 4-byte accumulators at the tiles' 80-register bound (CUDA 13.0, sm_90).
  template <class K>
  AKX_DEVICE void operator()(K) const {
    constexpr int B = sizeof(K) >= 8 && Batch > 8 ? 8 : Batch;
    const K *keys = static_cast<const K *>(p.keys);
    const bool normalise = p.keys_bool != 0;
    striped_walk w(tid, bd, ipt);
    for (int32_t j0 = 0; j0 < ipt; j0 += B) {
      K k[B];
#pragma unroll
      for (int u = 0; u < B; ++u) {
        const int64_t e = (int64_t)(j0 + u) * bd + tid;
        k[u] = 0;
        if (j0 + u < ipt && e < valid) k[u] = gld(keys + (base + e) * p.keys_stride);
      }
#pragma unroll
      for (int u = 0; u < B; ++u) {
        if (j0 + u < ipt) {
          kbuf.st(klayout.pos(w.run, w.k), normalise ? (unsigned long long)(k[u] != 0) : (unsigned long long)k[u]);
          w.next();
        }
      }
    }
  }
};

// The head bits of run `run` of the staged keys (its `ipt` keys at klayout.pos(run, 0..)):
// bit k where the key at sequence position first + k is a head, for the run's first `count`
// keys (those in the sequence). `prev`: the key before the run (the run before's last staged
// key; for the tile's first run, run_key_before's).
AKX_DEVICE uint32_t run_head_bits(const smem<unsigned long long> &kbuf, const scan_layout &klayout, int64_t run,
                                  int32_t ipt, int64_t first, int64_t count, unsigned long long prev) {
  uint32_t heads = 0;
  for (int32_t k = 0; k < ipt && k < count; ++k) {
    const unsigned long long key = kbuf.ld(klayout.pos(run, k));
    if (run_head(first + k, key, prev)) heads |= 1u << k;
    prev = key;
  }
  return heads;
}

}  // namespace akx
