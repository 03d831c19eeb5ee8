/* Lookup in the embedded kernel headers (src/jit/embedded.h); the table is generated. */
#include "embedded.h"

#include <stdlib.h>
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

int akx__embedded_arrays(const char ***names, const char ***texts) {
  *names = malloc(sizeof(char *) * (size_t)akx__embedded_file_count);
  *texts = malloc(sizeof(char *) * (size_t)akx__embedded_file_count);
  if (!*names || !*texts) {
    free((void *)*names);
    free((void *)*texts);
    *names = *texts = NULL;
    return 0;
  }
  for (int i = 0; i < akx__embedded_file_count; ++i) {
    (*names)[i] = akx__embedded_files[i].name;
    (*texts)[i] = akx__embedded_files[i].text;
  }
  return 1;
}
