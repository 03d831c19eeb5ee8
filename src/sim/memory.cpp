// Device memory of a sim context: host allocations aligned as cudaMalloc's (256 bytes),
// filled with poison, registered so that kernels' global accesses and the host's range checks can be held
// against them.
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "sim/runtime.hpp"

namespace akx::sim {

akx_status allocate_device(runtime &rt, void **ptr, size_t bytes) {
  constexpr size_t alignment = 256;
  size_t rounded = bytes == 0 ? alignment : (bytes + alignment - 1) / alignment * alignment;
  void *p = rounded >= bytes ? aligned_alloc(alignment, rounded) : nullptr;
  if (p == nullptr)
    return akx__fail(AKX_ERROR_OUT_OF_MEMORY,
                     "the sim could not allocate %zu bytes of host memory for akx_malloc",
                     bytes);
  // cudaMalloc'd memory holds whatever was there before; zeros would hide a kernel that
  // reads what nobody wrote. Above 1 GiB only the first and last MiB are poisoned: filling
  // it all would cost seconds and the whole size in resident host memory (a test of 64-bit
  // offsets reads a few bytes of a 4.5 GB allocation).
  constexpr size_t whole = size_t(1) << 30, edge = size_t(1) << 20;
  if (rounded <= whole) {
    memset(p, akx__sim_poison_byte, rounded);
  } else {
    memset(p, akx__sim_poison_byte, edge);
    memset(static_cast<char *>(p) + rounded - edge, akx__sim_poison_byte, edge);
  }
  rt.allocations.emplace(uintptr_t(p), bytes);
  *ptr = p;
  return AKX_SUCCESS;
}

akx_status free_device(runtime &rt, void *ptr) {
  if (ptr == nullptr) return AKX_SUCCESS;  // as cudaFree(NULL)
  auto it = rt.allocations.find(uintptr_t(ptr));
  if (it == rt.allocations.end()) {
    auto inside = find_allocation(rt, uintptr_t(ptr), 1);
    if (inside != rt.allocations.end())
      return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                       "akx_free: ptr %p points %zu bytes into the allocation at %p of this "
                       "sim context, not at its start",
                       ptr, size_t(uintptr_t(ptr) - inside->first), (void *)inside->first);
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "akx_free: ptr %p is not an allocation of this sim context (akx_malloc)",
                     ptr);
  }
  rt.allocations.erase(it);
  rt.hit_lo[0] = rt.hit_hi[0] = rt.hit_lo[1] = rt.hit_hi[1] = 0;
  free(ptr);
  return AKX_SUCCESS;
}

void free_all_device(runtime &rt) {
  for (const auto &[p, bytes] : rt.allocations) free(reinterpret_cast<void *>(p));
  rt.allocations.clear();
}

std::map<uintptr_t, size_t>::const_iterator find_allocation(const runtime &rt, uintptr_t a,
                                                            size_t bytes) {
  auto it = rt.allocations.upper_bound(a);
  if (it == rt.allocations.begin()) return rt.allocations.end();
  --it;
  if (a + bytes < a || a + bytes > it->first + it->second) return rt.allocations.end();
  return it;
}
}  // namespace akx::sim
