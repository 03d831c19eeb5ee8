/* What a launch calls for a kernel compiled at run time, found again in a few nanoseconds: one
 * process-wide table from a combination to its entry (the sim: the unit's akx_unit_entry; CUDA:
 * the loaded module). Without it every launch of such a combination would generate its unit's
 * text and hash it with the kernel headers to ask the kernel cache (src/jit/cache.h) for what it
 * already holds. The cache keeps the binaries and decides what is compiled; this table only
 * remembers what the cache answered.
 *
 * Built-in combinations and user ops share it: a user op's id is unique in the process
 * (include/akx.h: a destroyed op's value is never given again), so its entries can never be
 * found for another op. Thread-safe; entries live for the process, as the modules they point
 * into stay loaded. */
#ifndef AKX_JIT_ENTRIES_H
#define AKX_JIT_ENTRIES_H
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  int32_t target; /* 0: the sim's host compiler; CUDA: the architecture compiled for (90 for sm_90) */
  int32_t family; /* akx__family (src/jit/instance.h) */
  int32_t src, dst, acc; /* akx_dtype or AKX_DTYPE_AUTO, as the unit was generated */
  int32_t op;     /* a built-in akx_op, or a user op's id */
} akx__entry_key;

/* The entry recorded for *k, or NULL. A hit counts as the kernel cache's memory hit
 * (akx_kernel_cache_counters), which is what it saves. */
void *akx__entry_find(const akx__entry_key *k);
/* Records entry for *k and returns what the table holds for it afterwards: the first entry
 * recorded for a key wins (two threads that compiled the same unit got the same module from the
 * cache). Out of memory, the entry is returned unrecorded: the next launch asks the cache again. */
void *akx__entry_put(const akx__entry_key *k, void *entry);
/* Forgets every entry (akx__jit_cache_reset_for_tests: as in a new process). */
void akx__entry_reset(void);

#ifdef __cplusplus
}
#endif
#endif
