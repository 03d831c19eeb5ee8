/* The kernel headers as libakx holds them: include/akx.h, every file of kernels/akx/ and the
 * sim's module prelude (src/jit/sim_module.inl), as their text at build time
 * (cmake/embed.cmake), so that a run-time compile (NVRTC, the sim's host compiler) needs
 * neither the source tree nor an install. Names are those an #include gives them ("akx.h",
 * "akx/device.cuh", "sim_module.inl"). */
#ifndef AKX_EMBEDDED_H
#define AKX_EMBEDDED_H
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  const char *name; /* "akx.h", "akx/scan_tile.cuh", ... */
  const char *text; /* NUL-terminated */
  size_t size;      /* bytes, without the NUL */
} akx__embedded_file;

/* Sorted by name (strcmp). */
extern const akx__embedded_file akx__embedded_files[];
extern const int akx__embedded_file_count;

/* The file of that name, or NULL. */
const akx__embedded_file *akx__embedded_find(const char *name);

/* Every file's name and text as arrays, in table order, for a compiler that takes headers as
 * strings (NVRTC): malloc'd, freed by the caller; 0 when out of memory. */
int akx__embedded_arrays(const char ***names, const char ***texts);

#ifdef __cplusplus
}
#endif
#endif
