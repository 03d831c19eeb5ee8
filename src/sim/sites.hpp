// Access sites: the source locations of shared and global accesses, as small ids that the
// racecheck shadow and the counters store. A site is one std::source_location (one call
// expression in one function: each template instantiation is its own site, as each is its
// own code on a GPU) used with one flavour (shared or global, load, store or atomic, access
// bytes).
#pragma once
#include <stdint.h>

#include <map>
#include <utility>
#include <vector>

#include "sim/device_model.hpp"

namespace akx::sim {

// libstdc++'s source_location is one pointer to a static record per location (file, line,
// column, function); that pointer is the identity of the location.
static_assert(sizeof(site) == sizeof(const void *), "source_location is one pointer");
inline const void *site_key(const site &s) {
  const void *key;
  __builtin_memcpy(&key, &s, sizeof key);
  return key;
}
inline bool same_site(const site &a, const site &b) { return site_key(a) == site_key(b); }

struct site_info {
  site where;
  bool shared;     // shared memory (else global)
  bool store;      // store or atomic (else load)
  bool atomic;     // a global read-modify-write (store is true too)
  uint32_t bytes;  // bytes a lane moves per execution
  uint32_t width;  // bytes a lane moves per instruction (see instruction_bytes)
};

class site_table {
 public:
  // The id of `s` used with this flavour; the first use registers it. Hot: one cache probe.
  uint32_t id(const site &s, bool shared, bool store, uint32_t bytes, uint32_t width,
             bool atomic = false) {
    const void *key = site_key(s);
    uint32_t flavor = (bytes << 8) | (width << 3) | (uint32_t(atomic) << 2) |
                      (uint32_t(shared) << 1) | uint32_t(store);
    cache_entry &e = cache_[slot_of(key, flavor)];
    if (e.key == key && e.flavor == flavor) return e.id;
    return lookup(site_info{s, shared, store, atomic, bytes, width}, key, flavor);
  }
  const site_info &operator[](uint32_t id) const { return sites_[id]; }
  uint32_t size() const { return uint32_t(sites_.size()); }

 private:
  static constexpr uint32_t cache_slots = 1024;
  static uint32_t slot_of(const void *key, uint32_t flavor) {
    uint64_t h = (uint64_t(uintptr_t(key)) >> 3) ^ (uint64_t(flavor) * 0x9E3779B97F4A7C15ull);
    return uint32_t(h ^ (h >> 29)) & (cache_slots - 1);
  }
  uint32_t lookup(const site_info &info, const void *key, uint32_t flavor);

  struct cache_entry {
    const void *key = nullptr;
    uint32_t flavor = 0;
    uint32_t id = 0;
  };
  cache_entry cache_[cache_slots];
  std::map<std::pair<const void *, uint32_t>, uint32_t> ids_;
  std::vector<site_info> sites_;
};

// "reduce_whole.cuh" of "/work/main/kernels/akx/reduce_whole.cuh": messages and tables name
// files by their last component.
const char *file_basename(const char *path);
}  // namespace akx::sim
