/* Lookup in the embedded kernel headers (src/jit/embedded.h); the table is generated. */
#include "embedded.h"

#include <string.h>

const akx__embedded_file *akx__embedded_find(const char *name) {
  if (!name) return NULL;
  int lo = 0, hi = akx__embedded_file_count - 1;
  while (lo <= hi) {
    const int mid = lo + (hi - lo) / 2;
    const int c = strcmp(name, akx__embedded_files[mid].name);
    if (c == 0) return &akx__embedded_files[mid];
    if (c < 0) hi = mid - 1;
    else lo = mid + 1;
  }
  return NULL;
}
