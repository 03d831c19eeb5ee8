// The site table's slow path: registering a site the cache has not seen.
#include "sim/sites.hpp"

#include <string.h>

namespace akx::sim {

uint32_t site_table::lookup(const site_info &info, const void *key, uint32_t flavor) {
  auto [it, inserted] = ids_.try_emplace({key, flavor}, uint32_t(sites_.size()));
  if (inserted) sites_.push_back(info);
  cache_[slot_of(key, flavor)] = cache_entry{key, flavor, it->second};
  return it->second;
}

const char *file_basename(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash != nullptr ? slash + 1 : path;
}
}  // namespace akx::sim
