/* The run-time kernel cache: every kernel compiled while the program runs (NVRTC on CUDA, the
 * host C++ compiler on the sim) goes through akx__jit_cache_get, which builds a binary once per
 * process and, across processes, once per machine.
 *
 * Keys. A key is the SHA-256 of everything that makes the binary (source, compiler and its
 * version, options, architecture, libakx's version), fed by the caller part by part between
 * akx__jit_key_begin and akx__jit_key_end. Every part is framed by its length, so ("ab", "c")
 * and ("a", "bc") give different keys; one buffer fed in two calls is two parts and so another
 * key than the same bytes in one call.
 *
 * Memory. Entries live for the process (or until akx__jit_cache_reset_for_tests), one per
 * (key, kind): the loaded handle and the binary's bytes. Thread-safe: while one thread builds
 * a key, others asking for it wait and then share its result. A failed build or load is shared
 * too: every thread waiting on it gets the same status and sentence in its own
 * akx_last_error(); the failed entry is then dropped, so a later call builds again.
 *
 * Disk. A directory, resolved once per process on first use: $AKX_CACHE_DIR, else
 * $XDG_CACHE_HOME/akx (an absolute XDG_CACHE_HOME only, as the XDG base directory
 * specification says), else $HOME/.cache/akx; created with its missing parents, mode 0700.
 * AKX_CACHE_DIR=off turns the disk cache off. Other users must not be able to plant a binary
 * this process would load, so the directory is used only if it is a directory itself (not a
 * symlink), owned by the effective user and not writable by group or others, and if no other
 * user could replace it: every directory above it (links resolved, up to /) is owned by root or
 * the effective user and is not writable by group or others unless sticky (as /tmp), the rules
 * of OpenSSH's safe_path() (misc.c) with the sticky exception. Otherwise the disk cache is
 * skipped for the process and akx__jit_cache_note() says why in one sentence (also printed once
 * to stderr when AKX_CACHE_VERBOSE is set to anything but "" or "0", which then reports every
 * file refused, every write that failed and every lock wait given up too; by default the cache
 * is silent). The directory checked is the directory used: it is opened once checked and every
 * file is opened, renamed and removed relative to that handle, so a relative AKX_CACHE_DIR
 * followed by a chdir, or a rename above the directory, cannot lead the cache elsewhere.
 *
 * One file per (key, kind), named by the key's 64 hex digits and the kind (".cubin", ".so",
 * ".ptx"), written under a unique temporary name in the same directory (".<file>.XXXXXX") and
 * renamed into place, so that a reader sees a whole file or none. Only a regular file of the
 * effective user, writable by no one else, is read (a FIFO, a device, a directory or a symlink
 * in its place is refused without blocking, and so is a file of another user or mode 0666: only
 * what this user wrote into a private directory is trusted); the build that follows replaces
 * it where it can (not a directory). Processes that miss the same file build it one at a time:
 * the first takes a record lock on a file beside it (its name + ".lock", a regular file of the
 * user or no lock at all; removed once the file is written; the lock dies with its process) and
 * the others wait for it, then read the file (MPI ranks of one node asking for one kernel at
 * once compile it once). The wait is bounded: AKX_CACHE_LOCK_WAIT_MS milliseconds (default
 * 60000, three times the slowest compile of one unit measured), after which the waiter builds
 * alone (counted in lock_timeouts) and the rename keeps the file whole. Temporaries and lock
 * files untouched for an hour (left by killed processes) are removed at a process's first
 * write. Each file is an 88-byte header, then the payload (1 GiB at most):
 *   offset  0  8 bytes  magic "AKXJIT\r\n"
 *           8  4 bytes  format version (1), little-endian
 *          12  4 bytes  zero
 *          16  8 bytes  payload size in bytes, little-endian
 *          24 32 bytes  the key
 *          56 32 bytes  SHA-256 of the payload
 * A file whose header, size or checksum does not hold, or which carries another key, is a miss
 * (counted in disk_rejects) and never reaches the load function; the build that follows writes
 * a good file over it. Disk errors are never errors of a call: it builds instead. */
#ifndef AKX_JIT_CACHE_H
#define AKX_JIT_CACHE_H
#include <stddef.h>
#include <stdint.h>
#include "akx.h"
#include "sha256.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef struct { unsigned char b[32]; } akx__jit_key;
typedef struct { akx__sha256 sha; } akx__jit_hasher;

void akx__jit_key_begin(akx__jit_hasher *h);
/* One part of n bytes (data may be NULL when n is 0). */
void akx__jit_key_add(akx__jit_hasher *h, const void *data, size_t n);
/* One part: the string without its terminator, as akx__jit_key_add(h, s, strlen(s)). NULL is
 * a part of its own, unlike "" or any string. */
void akx__jit_key_add_str(akx__jit_hasher *h, const char *s);
void akx__jit_key_end(akx__jit_hasher *h, akx__jit_key *key);
/* Every embedded kernel header's name and bytes (src/jit/embedded.h), as parts: what a unit
 * that includes them depends on. */
void akx__jit_key_add_headers(akx__jit_hasher *h);
/* The key as 64 lowercase hex digits and a terminator: the stem of its file's name. */
void akx__jit_key_hex(const akx__jit_key *key, char hex[65]);

/* build: the binary for the key, in *bytes (malloc'd; the cache owns and frees it) and *size.
 * load: the binary's bytes made usable (a module, a dlopen handle) in *handle; the bytes are
 * the cache's and stay valid while the entry lives. Both report failure as the library does
 * (akx__fail, src/core/error.h). They run without the cache's lock held, and may run on any
 * thread that calls akx__jit_cache_get. */
typedef akx_status (*akx__jit_build_fn)(void *arg, void **bytes, size_t *size);
typedef akx_status (*akx__jit_load_fn)(void *arg, const void *bytes, size_t size, void **handle);

/* The handle for (key, kind): from memory; else from a verified file, loaded; else built,
 * written to disk (best effort) and loaded. Disk bytes the load refuses are counted in
 * disk_rejects and built again. kind: the file suffix, '.' then 1 to 15 letters, digits, '_'
 * or '-'. Returns AKX_SUCCESS, AKX_ERROR_INVALID_ARGUMENT (a NULL pointer, a malformed kind),
 * AKX_ERROR_OUT_OF_MEMORY, or whatever build or load returned (their sentence kept). */
akx_status akx__jit_cache_get(const akx__jit_key *key, const char *kind, akx__jit_build_fn build,
                              akx__jit_load_fn load, void *arg, void **handle);
/* akx__jit_cache_get for a build aid: a file that makes kernels' builds faster but is no
 * kernel (the sim's precompiled prelude, src/jit/sim_module.cpp). The same files, checks and
 * locks; counted apart (akx__jit_cache_aid_counters), so that the kernels' counters say what
 * was compiled whether or not an aid was built on the way. */
akx_status akx__jit_cache_get_aid(const akx__jit_key *key, const char *kind, akx__jit_build_fn build,
                                  akx__jit_load_fn load, void *arg, void **handle);
/* The bytes of a loaded entry (valid while it lives), AKX_ERROR_INVALID_ARGUMENT when
 * (key, kind) has no loaded entry in memory. */
akx_status akx__jit_cache_bytes(const akx__jit_key *key, const char *kind, const void **bytes,
                                size_t *size);

typedef struct {
  uint64_t compiles;     /* build functions run */
  uint64_t memory_hits;  /* calls answered from memory, waits on another thread's build included */
  uint64_t disk_hits;    /* entries loaded from a verified file */
  uint64_t disk_writes;  /* files written and renamed into place */
  uint64_t disk_rejects; /* files refused: corrupt, truncated, foreign, not a regular file of
                          * this user's, or refused by the load */
  uint64_t lock_timeouts; /* waits for another process's build of a file given up */
} akx__jit_counters;
void akx__jit_cache_counters(akx__jit_counters *out);
/* The same counts for the build aids (akx__jit_cache_get_aid) alone. */
void akx__jit_cache_aid_counters(akx__jit_counters *out);
/* Counts one memory hit answered outside akx__jit_cache_get: a launch that found its loaded
 * kernels in the table of run-time entries (src/jit/entries.h) without asking the cache. */
void akx__jit_cache_count_memory_hit(void);

/* Why the disk cache is not used in this process ("" while it is). Resolves the directory if no
 * call has yet; the text stays valid until the next akx__jit_cache_reset_for_tests. */
const char *akx__jit_cache_note(void);
/* The directory in use, the one checked, by its absolute name with links resolved ("" when the
 * disk cache is off or skipped); resolves as the note does. No other user can rename what is
 * on the way to it, so the name keeps leading there; a file made in it by name must still be
 * created exclusively (O_EXCL) and not followed (O_NOFOLLOW). */
const char *akx__jit_cache_dir(void);

/* For tests: drops every entry (their bytes freed; the handles are the load function's and are
 * not unloaded), zeroes the counters and reads the environment again at the next use, as a new
 * process would, and forgets the table of run-time entries (src/jit/entries.h). No
 * akx__jit_cache_get may be running. */
void akx__jit_cache_reset_for_tests(void);

#ifdef __cplusplus
}
#endif
#endif
