/* The run-time kernel cache (src/jit/cache.h says what it promises): a list of entries under
 * one mutex, and files verified before their bytes reach a load function.
 *
 * The lock is never held while a build, a load or file I/O runs: a compile takes seconds, and
 * other keys must not wait for it. An entry being built stays in the list (state BUILDING) so
 * that callers asking for the same key find it and wait on the condition variable instead of
 * building it again. */
#define _POSIX_C_SOURCE 200809L /* mkstemp, lstat, O_NOFOLLOW, O_CLOEXEC */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cache.h"
#include "embedded.h"
#include "entries.h"
#include "error.h"

enum {
  KIND_MAX = 16,    /* '.' and up to 15 more characters */
  PATH_CAP = 4096,  /* the directory's name and its terminator */
  NAME_ROOM = 1 + 1 + 64 + KIND_MAX + 8, /* what a file's name adds to it: "/.", hex, kind, ".XXXXXX" */
  FILE_PATH_CAP = PATH_CAP + NAME_ROOM,
  NOTE_CAP = PATH_CAP + 256,
  HEADER_SIZE = 88, /* the layout in src/jit/cache.h */
  FORMAT_VERSION = 1
};
static const unsigned char file_magic[8] = {'A', 'K', 'X', 'J', 'I', 'T', '\r', '\n'};

typedef enum { ENTRY_BUILDING, ENTRY_READY, ENTRY_FAILED } entry_state;

typedef struct entry {
  struct entry *next;
  akx__jit_key key;
  char kind[KIND_MAX + 1];
  entry_state state;
  /* Threads waiting on this entry. A failed entry leaves the list at once (the next caller
   * builds afresh) and is freed by whichever of its builder and waiters looks last. */
  int waiters;
  void *handle;
  void *bytes;
  size_t size;
  akx_status status;   /* ENTRY_FAILED: what the builder got, */
  akx__error_saved why; /* and its sentence, for the waiters' akx_last_error() */
} entry;

static struct {
  pthread_mutex_t lock;
  pthread_cond_t settled; /* broadcast when any entry leaves ENTRY_BUILDING */
  entry *entries;
  akx__jit_counters counters;
  int resolved; /* the directory was chosen (and checked) since the start or the last reset */
  int disk_on;
  char dir[PATH_CAP];
  char note[NOTE_CAP];
} cache = {.lock = PTHREAD_MUTEX_INITIALIZER, .settled = PTHREAD_COND_INITIALIZER};

/* ---- keys ---------------------------------------------------------------------------------- */

/* A part's length, 8 bytes little-endian, ahead of its bytes. */
static void add_length(akx__jit_hasher *h, uint64_t n) {
  unsigned char le[8];
  for (int i = 0; i < 8; ++i) le[i] = (unsigned char)(n >> (8 * i));
  akx__sha256_update(&h->sha, le, sizeof le);
}

void akx__jit_key_begin(akx__jit_hasher *h) {
  akx__sha256_init(&h->sha);
  /* The first part names the scheme: a change to how keys are made changes every key. */
  akx__jit_key_add_str(h, "libakx run-time kernel cache key, version 1");
}

void akx__jit_key_add(akx__jit_hasher *h, const void *data, size_t n) {
  add_length(h, n);
  akx__sha256_update(&h->sha, data, n);
}

void akx__jit_key_add_str(akx__jit_hasher *h, const char *s) {
  if (!s) {
    add_length(h, UINT64_MAX); /* no string has that length: NULL differs from every one */
    return;
  }
  akx__jit_key_add(h, s, strlen(s));
}

void akx__jit_key_end(akx__jit_hasher *h, akx__jit_key *key) { akx__sha256_final(&h->sha, key->b); }

void akx__jit_key_hex(const akx__jit_key *key, char hex[65]) {
  static const char digits[] = "0123456789abcdef";
  for (int i = 0; i < 32; ++i) {
    hex[2 * i] = digits[key->b[i] >> 4];
    hex[2 * i + 1] = digits[key->b[i] & 15];
  }
  hex[64] = '\0';
}

void akx__jit_key_add_headers(akx__jit_hasher *h) {
  for (int i = 0; i < akx__embedded_file_count; ++i) {
    akx__jit_key_add_str(h, akx__embedded_files[i].name);
    akx__jit_key_add(h, akx__embedded_files[i].text, akx__embedded_files[i].size);
  }
}

/* ---- the directory ------------------------------------------------------------------------- */

static int verbose(void) {
  const char *v = getenv("AKX_CACHE_VERBOSE");
  return v && *v && strcmp(v, "0") != 0;
}

/* The directory the environment names into dir; 0 (and the note) when there is none. */
static int choose_dir(char *dir, char *note) {
  const char *v = getenv("AKX_CACHE_DIR");
  int n;
  if (v && *v) {
    if (strcmp(v, "off") == 0) {
      snprintf(note, NOTE_CAP, "the disk cache is off (AKX_CACHE_DIR=off)");
      return 0;
    }
    n = snprintf(dir, PATH_CAP, "%s", v);
  } else if ((v = getenv("XDG_CACHE_HOME")) && v[0] == '/') {
    n = snprintf(dir, PATH_CAP, "%s/akx", v);
  } else if ((v = getenv("HOME")) && *v) {
    n = snprintf(dir, PATH_CAP, "%s/.cache/akx", v);
  } else {
    snprintf(note, NOTE_CAP, "the disk cache is not used: none of AKX_CACHE_DIR, an absolute "
                             "XDG_CACHE_HOME or HOME is set");
    return 0;
  }
  /* Every file's path must fit in PATH_MAX (4096 on Linux) too. */
  if (n < 0 || n >= PATH_CAP - NAME_ROOM) {
    snprintf(note, NOTE_CAP, "the disk cache is not used: its directory's name is longer than "
                             "%d bytes", PATH_CAP - NAME_ROOM - 1);
    return 0;
  }
  /* lstat of "link/" would follow the link: the check below must see the name itself. */
  while (n > 1 && dir[n - 1] == '/') dir[--n] = '\0';
  return 1;
}

/* mkdir -p, mode 0700 for what it creates; 0 (and the note) on failure. */
static int make_dirs(char *dir, char *note) {
  for (char *p = dir + 1; *p; ++p) {
    if (*p != '/') continue;
    *p = '\0';
    const int failed = mkdir(dir, 0700) != 0 && errno != EEXIST;
    const int err = errno;
    *p = '/';
    if (failed) {
      snprintf(note, NOTE_CAP, "the disk cache is not used: cannot create %s: %s", dir,
               strerror(err));
      return 0;
    }
  }
  if (mkdir(dir, 0700) == 0) {
    chmod(dir, 0700); /* whatever the umask took away: the owner must be able to write */
  } else if (errno != EEXIST) {
    snprintf(note, NOTE_CAP, "the disk cache is not used: cannot create %s: %s", dir,
             strerror(errno));
    return 0;
  }
  return 1;
}

/* Whether another user could have put files into dir; 0 (and the note) when so. */
static int check_dir(const char *dir, char *note) {
  struct stat st;
  if (lstat(dir, &st) != 0) {
    snprintf(note, NOTE_CAP, "the disk cache is not used: cannot stat %s: %s", dir, strerror(errno));
    return 0;
  }
  if (S_ISLNK(st.st_mode)) {
    snprintf(note, NOTE_CAP, "the disk cache is not used: %s is a symbolic link", dir);
    return 0;
  }
  if (!S_ISDIR(st.st_mode)) {
    snprintf(note, NOTE_CAP, "the disk cache is not used: %s is not a directory", dir);
    return 0;
  }
  if (st.st_uid != geteuid()) {
    snprintf(note, NOTE_CAP, "the disk cache is not used: %s is owned by uid %lu, not by this "
             "process's user (uid %lu)", dir, (unsigned long)st.st_uid, (unsigned long)geteuid());
    return 0;
  }
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    snprintf(note, NOTE_CAP, "the disk cache is not used: %s is writable by its group or others "
             "(mode %04o)", dir, (unsigned)(st.st_mode & 07777));
    return 0;
  }
  return 1;
}

static void resolve_locked(void) {
  if (cache.resolved) return;
  cache.resolved = 1;
  cache.disk_on = 0;
  cache.dir[0] = '\0';
  cache.note[0] = '\0';
  char dir[PATH_CAP];
  if (choose_dir(dir, cache.note) && make_dirs(dir, cache.note) && check_dir(dir, cache.note)) {
    memcpy(cache.dir, dir, sizeof dir);
    cache.disk_on = 1;
  } else if (verbose()) {
    fprintf(stderr, "libakx: %s\n", cache.note);
  }
}

/* ---- files --------------------------------------------------------------------------------- */

static void put_le(unsigned char *p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = (unsigned char)(v >> (8 * i));
}
static uint64_t get_le(const unsigned char *p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

static int read_all(int fd, void *buf, size_t n) {
  for (unsigned char *p = buf; n;) {
    const ssize_t got = read(fd, p, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return 0;
    p += got;
    n -= (size_t)got;
  }
  return 1;
}

static int write_all(int fd, const void *buf, size_t n) {
  for (const unsigned char *p = buf; n;) {
    const ssize_t put = write(fd, p, n);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return 0;
    p += put;
    n -= (size_t)put;
  }
  return 1;
}

typedef enum { FILE_MISSING, FILE_GOOD, FILE_BAD } file_result;

/* The verified payload of the file at path, malloc'd; FILE_BAD names what failed in *why. */
static file_result read_file(const char *path, const akx__jit_key *key, void **bytes,
                             size_t *size, const char **why) {
  /* O_NOFOLLOW: a symlink planted in the directory is refused, not followed. */
  const int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    *why = "cannot be opened";
    return errno == ENOENT ? FILE_MISSING : FILE_BAD;
  }
  file_result result = FILE_BAD;
  unsigned char header[HEADER_SIZE], digest[32];
  unsigned char *payload = NULL;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    *why = "is not a regular file";
  } else if (st.st_size < HEADER_SIZE || !read_all(fd, header, sizeof header)) {
    *why = "is shorter than its header";
  } else if (memcmp(header, file_magic, sizeof file_magic) != 0 ||
             get_le(header + 8, 4) != FORMAT_VERSION || get_le(header + 12, 4) != 0) {
    *why = "has another magic or format version";
  } else if (get_le(header + 16, 8) != (uint64_t)st.st_size - HEADER_SIZE) {
    *why = "has another size than its header says (truncated?)";
  } else if (memcmp(header + 24, key->b, 32) != 0) {
    *why = "carries another key";
  } else {
    const size_t n = (size_t)(st.st_size - HEADER_SIZE);
    payload = malloc(n ? n : 1);
    if (!payload) {
      *why = "does not fit in memory";
    } else if (!read_all(fd, payload, n)) {
      *why = "cannot be read";
    } else {
      akx__sha256_of(payload, n, digest);
      if (memcmp(digest, header + 56, 32) != 0) {
        *why = "fails its checksum";
      } else {
        *bytes = payload;
        *size = n;
        payload = NULL;
        result = FILE_GOOD;
      }
    }
  }
  free(payload);
  close(fd);
  return result;
}

/* Writes the file under a temporary name in dir and renames it to path: a reader in another
 * process sees the whole file or the one before. 1 when it is in place. */
static int write_file(const char *dir, const char *path, const akx__jit_key *key, const char *kind,
                      const void *bytes, size_t size) {
  char hex[65], tmp[FILE_PATH_CAP];
  akx__jit_key_hex(key, hex);
  snprintf(tmp, sizeof tmp, "%s/.%s%s.XXXXXX", dir, hex, kind);
  const int fd = mkstemp(tmp); /* mode 0600 */
  if (fd < 0) return 0;
  unsigned char header[HEADER_SIZE] = {0};
  memcpy(header, file_magic, sizeof file_magic);
  put_le(header + 8, FORMAT_VERSION, 4);
  put_le(header + 16, size, 8);
  memcpy(header + 24, key->b, 32);
  akx__sha256_of(bytes, size, header + 56);
  int ok = write_all(fd, header, sizeof header) && write_all(fd, bytes, size);
  ok = close(fd) == 0 && ok;
  ok = ok && rename(tmp, path) == 0;
  if (!ok) {
    const int err = errno; /* the caller reports the failure, not the clean-up's errno */
    unlink(tmp);
    errno = err;
  }
  return ok;
}

/* ---- entries ------------------------------------------------------------------------------- */

static int kind_ok(const char *kind) {
  if (!kind || kind[0] != '.') return 0;
  size_t n = 1;
  for (; kind[n]; ++n) {
    const char c = kind[n];
    const int allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                        (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!allowed || n >= KIND_MAX) return 0;
  }
  return n >= 2;
}

static entry *find_locked(const akx__jit_key *key, const char *kind) {
  for (entry *e = cache.entries; e; e = e->next)
    if (memcmp(e->key.b, key->b, 32) == 0 && strcmp(e->kind, kind) == 0) return e;
  return NULL;
}

static void unlink_locked(entry *gone) {
  for (entry **p = &cache.entries; *p; p = &(*p)->next)
    if (*p == gone) {
      *p = gone->next;
      return;
    }
}

static void count(uint64_t *counter) {
  pthread_mutex_lock(&cache.lock);
  ++*counter;
  pthread_mutex_unlock(&cache.lock);
}

/* The file at path loaded into *handle (FILE_GOOD: its bytes in *bytes), missing, or bad
 * (counted and, verbose, reported: the caller builds it again). */
static file_result from_disk(const char *path, const akx__jit_key *key, akx__jit_load_fn load, void *arg,
                             void **bytes, size_t *size, void **handle) {
  void *b = NULL;
  size_t n = 0;
  const char *why = NULL;
  file_result r = read_file(path, key, &b, &n, &why);
  if (r == FILE_GOOD) {
    /* A refused file is not the call's failure: the build's outcome is what it reports. */
    akx__error_saved before;
    akx__error_save(&before);
    if (load(arg, b, n, handle) == AKX_SUCCESS) {
      count(&cache.counters.disk_hits);
      *bytes = b;
      *size = n;
      return FILE_GOOD;
    }
    akx__error_restore(&before);
    free(b);
    *handle = NULL;
    why = "holds bytes the load function refused";
    r = FILE_BAD;
  }
  if (r == FILE_BAD) {
    count(&cache.counters.disk_rejects);
    if (verbose()) fprintf(stderr, "libakx: the cache file %s %s: building it again\n", path, why);
  }
  return r;
}

/* Processes that miss the same file build it one at a time: the first takes a lock file beside
 * it (path + ".lock", a POSIX record lock, released when the builder exits, whatever way) and
 * the others wait, then find the file (MPI ranks of one node, or test processes, asking for one
 * kernel at once would otherwise each compile it). -1 where no lock can be had: build anyway. */
static int take_build_lock(const char *path, char *lock_path, size_t cap) {
  if ((size_t)snprintf(lock_path, cap, "%s.lock", path) >= cap) return -1;
  const int fd = open(lock_path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  struct flock l;
  memset(&l, 0, sizeof l);
  l.l_type = F_WRLCK;
  l.l_whence = SEEK_SET;
  int rc;
  while ((rc = fcntl(fd, F_SETLKW, &l)) != 0 && errno == EINTR) {
  }
  if (rc != 0) {
    close(fd);
    return -1;
  }
  return fd;
}
static void release_build_lock(int fd, const char *lock_path) {
  if (fd < 0) return;
  unlink(lock_path); /* the next process to miss makes its own; a waiter on this one re-reads */
  close(fd);
}

/* The entry's bytes and handle: from the file at path (NULL: no disk cache), else built. Runs
 * without the lock. */
static akx_status produce(const char *dir, const char *path, const akx__jit_key *key,
                          const char *kind, akx__jit_build_fn build, akx__jit_load_fn load,
                          void *arg, void **bytes, size_t *size, void **handle) {
  char lock_path[FILE_PATH_CAP + 8];
  int lock_fd = -1;
  if (path) {
    file_result r = from_disk(path, key, load, arg, bytes, size, handle);
    if (r == FILE_MISSING && (lock_fd = take_build_lock(path, lock_path, sizeof lock_path)) >= 0)
      r = from_disk(path, key, load, arg, bytes, size, handle); /* built while this one waited? */
    if (r == FILE_GOOD) {
      release_build_lock(lock_fd, lock_path);
      return AKX_SUCCESS;
    }
  }
  void *b = NULL;
  size_t n = 0;
  count(&cache.counters.compiles);
  akx_status s = build(arg, &b, &n);
  if (s == AKX_SUCCESS && !b && n)
    s = akx__fail(AKX_ERROR_INTERNAL, "the kernel cache's build function returned no bytes "
                  "for a binary of %zu bytes", n);
  if (s == AKX_SUCCESS) {
    s = load(arg, b, n, handle);
    if (s != AKX_SUCCESS) *handle = NULL;
  }
  if (s != AKX_SUCCESS) {
    free(b);
    release_build_lock(lock_fd, lock_path);
    return s;
  }
  /* Stored once loaded: a file on disk is always one a load accepted. */
  if (path) {
    if (write_file(dir, path, key, kind, b, n))
      count(&cache.counters.disk_writes);
    else if (verbose())
      fprintf(stderr, "libakx: the cache file %s could not be written: %s\n", path, strerror(errno));
  }
  release_build_lock(lock_fd, lock_path);
  *bytes = b;
  *size = n;
  return AKX_SUCCESS;
}

akx_status akx__jit_cache_get(const akx__jit_key *key, const char *kind, akx__jit_build_fn build,
                              akx__jit_load_fn load, void *arg, void **handle) {
  if (!handle) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "akx__jit_cache_get: handle is NULL");
  *handle = NULL;
  if (!key || !build || !load)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "akx__jit_cache_get: %s is NULL",
                     !key ? "key" : !build ? "build" : "load");
  if (!kind_ok(kind))
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "akx__jit_cache_get: kind \"%s\" is not a file "
                     "suffix ('.' then 1 to 15 letters, digits, '_' or '-')", kind ? kind : "(null)");

  pthread_mutex_lock(&cache.lock);
  resolve_locked();
  entry *e = find_locked(key, kind);
  if (e) {
    e->waiters++;
    while (e->state == ENTRY_BUILDING) pthread_cond_wait(&cache.settled, &cache.lock);
    e->waiters--;
    if (e->state == ENTRY_READY) {
      cache.counters.memory_hits++;
      *handle = e->handle;
      pthread_mutex_unlock(&cache.lock);
      return AKX_SUCCESS;
    }
    const akx_status s = e->status; /* ENTRY_FAILED, out of the list already */
    akx__error_restore(&e->why);
    if (e->waiters == 0) free(e);
    pthread_mutex_unlock(&cache.lock);
    return s;
  }
  e = calloc(1, sizeof *e);
  if (!e) {
    pthread_mutex_unlock(&cache.lock);
    return akx__fail(AKX_ERROR_OUT_OF_MEMORY, "the kernel cache cannot allocate an entry");
  }
  e->key = *key;
  strcpy(e->kind, kind);
  e->state = ENTRY_BUILDING;
  e->next = cache.entries;
  cache.entries = e;
  char dir[PATH_CAP] = "", path[FILE_PATH_CAP] = "";
  const int disk_on = cache.disk_on;
  if (disk_on) {
    char hex[65];
    akx__jit_key_hex(key, hex);
    memcpy(dir, cache.dir, sizeof dir);
    snprintf(path, sizeof path, "%s/%s%s", dir, hex, kind);
  }
  pthread_mutex_unlock(&cache.lock);

  void *bytes = NULL, *h = NULL;
  size_t size = 0;
  const akx_status s = produce(dir, disk_on ? path : NULL, key, kind, build, load, arg, &bytes,
                               &size, &h);

  pthread_mutex_lock(&cache.lock);
  if (s == AKX_SUCCESS) {
    e->handle = h;
    e->bytes = bytes;
    e->size = size;
    e->state = ENTRY_READY;
  } else {
    e->status = s;
    akx__error_save(&e->why);
    e->state = ENTRY_FAILED;
    unlink_locked(e);
    if (e->waiters == 0) free(e);
  }
  pthread_cond_broadcast(&cache.settled);
  pthread_mutex_unlock(&cache.lock);
  *handle = h;
  return s;
}

akx_status akx__jit_cache_bytes(const akx__jit_key *key, const char *kind, const void **bytes,
                                size_t *size) {
  if (!key || !kind || !bytes || !size)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "akx__jit_cache_bytes: a pointer is NULL");
  pthread_mutex_lock(&cache.lock);
  const entry *e = find_locked(key, kind);
  const int ready = e && e->state == ENTRY_READY;
  if (ready) {
    *bytes = e->bytes;
    *size = e->size;
  }
  pthread_mutex_unlock(&cache.lock);
  if (!ready)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "akx__jit_cache_bytes: no loaded %s entry for "
                     "that key", kind);
  return AKX_SUCCESS;
}

void akx__jit_cache_counters(akx__jit_counters *out) {
  pthread_mutex_lock(&cache.lock);
  *out = cache.counters;
  pthread_mutex_unlock(&cache.lock);
}

const char *akx__jit_cache_note(void) {
  pthread_mutex_lock(&cache.lock);
  resolve_locked();
  pthread_mutex_unlock(&cache.lock);
  return cache.note;
}

const char *akx__jit_cache_dir(void) {
  pthread_mutex_lock(&cache.lock);
  resolve_locked();
  pthread_mutex_unlock(&cache.lock);
  return cache.dir;
}

void akx__jit_cache_count_memory_hit(void) {
  pthread_mutex_lock(&cache.lock);
  cache.counters.memory_hits++;
  pthread_mutex_unlock(&cache.lock);
}

void akx__jit_cache_reset_for_tests(void) {
  akx__entry_reset();
  pthread_mutex_lock(&cache.lock);
  for (entry *e = cache.entries, *next; e; e = next) {
    next = e->next;
    free(e->bytes);
    free(e);
  }
  cache.entries = NULL;
  memset(&cache.counters, 0, sizeof cache.counters);
  cache.resolved = 0;
  cache.disk_on = 0;
  cache.dir[0] = '\0';
  cache.note[0] = '\0';
  pthread_mutex_unlock(&cache.lock);
}
