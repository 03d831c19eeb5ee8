// Bank wavefronts and sectors of one warp request.
//
// Shared memory has 32 banks of 4 bytes. The lanes of a w-byte request are served in
// phases: the whole warp for w <= 4, half-warps for w = 8, quarter-warps for w = 16, so that
// a phase asks for at most 128 bytes. A phase costs the largest number of distinct 4-byte
// words in one bank (lanes on the same word get it by broadcast); ideal is one wavefront
// per phase with an active lane.
//
// Global memory moves 32-byte sectors: a request costs the distinct sectors its lanes
// touch; ideal is, per 128-byte line touched, the request's distinct bytes in that line / 32
// rounded up.
#include "sim/request_cost.hpp"

#include <string.h>

namespace akx::sim {
namespace {

// Insertion sort: lanes usually come in address order, which makes this linear.
template <class T>
void sort_small(T *v, int n) {
  for (int i = 1; i < n; ++i) {
    T x = v[i];
    int j = i - 1;
    while (j >= 0 && x < v[j]) {
      v[j + 1] = v[j];
      --j;
    }
    v[j + 1] = x;
  }
}

// Wavefronts of one phase: distinct words per bank, the worst bank.
uint32_t phase_wavefronts(const uint64_t *addr, uint32_t lanes, uint32_t offset,
                          uint32_t width) {
  uint64_t words[32 * 5];  // a misaligned 16-byte lane spans 5 words
  int n = 0;
  for (uint32_t m = lanes; m != 0; m &= m - 1) {
    uint64_t a = addr[__builtin_ctz(m)] + offset;
    for (uint64_t w = a / 4; w <= (a + width - 1) / 4; ++w) words[n++] = w;
  }
  sort_small(words, n);
  uint8_t per_bank[32] = {};
  uint32_t worst = 0;
  for (int i = 0; i < n; ++i) {
    if (i > 0 && words[i] == words[i - 1]) continue;  // broadcast
    uint32_t c = ++per_bank[words[i] % 32];
    if (c > worst) worst = c;
  }
  return worst;
}
}  // namespace

uint32_t instruction_bytes(uint32_t bytes, uint32_t alignment) {
  uint32_t w = alignment != 0 ? (bytes | alignment) : bytes;
  w &= ~w + 1;  // the lowest bit of both
  return w < 16 ? w : 16;
}

request_cost shared_request_cost(const uint64_t *addr, uint32_t mask, uint32_t bytes,
                                 uint32_t width) {
  request_cost cost{};
  if (mask == 0 || bytes == 0) return cost;
  uint32_t lanes_per_phase = width <= 4 ? 32 : 128 / width;
  uint32_t phase_lanes = lanes_per_phase == 32 ? ~0u : (1u << lanes_per_phase) - 1;
  for (uint32_t offset = 0; offset < bytes; offset += width) {
    cost.requests += 1;
    for (uint32_t first = 0; first < 32; first += lanes_per_phase) {
      uint32_t lanes = mask & (phase_lanes << first);
      if (lanes == 0) continue;
      cost.units += phase_wavefronts(addr, lanes, offset, width);
      cost.ideal += 1;
    }
  }
  cost.bytes = uint64_t(__builtin_popcount(mask)) * bytes;
  return cost;
}

request_cost global_request_cost(const uint64_t *addr, uint32_t mask, uint32_t bytes,
                                 uint32_t width) {
  request_cost cost{};
  if (mask == 0 || bytes == 0) return cost;
  uint64_t start[32];
  int n = 0;
  for (uint32_t m = mask; m != 0; m &= m - 1) start[n++] = addr[__builtin_ctz(m)];
  sort_small(start, n);
  for (uint32_t offset = 0; offset < bytes; offset += width) {
    cost.requests += 1;
    uint64_t last_sector = ~0ull;   // the highest sector counted so far
    uint64_t line = ~0ull, line_bytes = 0;
    uint64_t covered_end = 0;       // bytes below this are counted in line_bytes already
    for (int i = 0; i < n; ++i) {
      uint64_t s = start[i] + offset, e = s + width;
      for (uint64_t sec = s / 32; sec <= (e - 1) / 32; ++sec)
        if (last_sector == ~0ull || sec > last_sector) {
          ++cost.units;
          last_sector = sec;
        }
      if (s < covered_end) s = covered_end;  // bytes another lane already brought
      while (s < e) {
        uint64_t l = s / 128, line_end = (l + 1) * 128 < e ? (l + 1) * 128 : e;
        if (l != line) {
          if (line != ~0ull) cost.ideal += (line_bytes + 31) / 32;
          line = l;
          line_bytes = 0;
        }
        line_bytes += line_end - s;
        s = line_end;
      }
      if (e > covered_end) covered_end = e;
    }
    if (line != ~0ull) cost.ideal += (line_bytes + 31) / 32;
  }
  cost.bytes = uint64_t(n) * bytes;
  return cost;
}
}  // namespace akx::sim
