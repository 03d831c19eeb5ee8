/* The run-time kernel cache (src/jit/cache.h says what it promises): a list of entries under
 * one mutex, and files verified before their bytes reach a load function.
 *
 * The lock is never held while a build, a load or file I/O runs: a compile takes seconds, and
 * other keys must not wait for it. An entry being built stays in the list (state BUILDING) so
 * that callers asking for the same key find it and wait on the condition variable instead of
 * building it again. */
#define _GNU_SOURCE /* O_PATH; and the POSIX *at calls, O_NOFOLLOW, O_CLOEXEC, realpath */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "cache.h"
#include "embedded.h"
#include "entries.h"
#include "error.h"

enum {
  KIND_MAX = 16,    /* '.' and up to 15 more characters */
  PATH_CAP = 4096,  /* the directory's name and its terminator */
  NAME_CAP = 64 + KIND_MAX + 1, /* a key's file name: hex, kind, terminator */
  TEMP_CAP = 1 + NAME_CAP + 7,  /* a writer's temporary: ".", the name, ".XXXXXX" */
  NAME_ROOM = 1 + TEMP_CAP + 8, /* what a file adds to the directory's name in a sentence */
  NOTE_CAP = 2 * PATH_CAP + 256, /* two names (the directory, one above it) and the words */
  HEADER_SIZE = 88, /* the layout in src/jit/cache.h */
  FORMAT_VERSION = 1,
  /* How long a process that misses a file waits for another process's build of it (src/jit/
   * cache.h): three times the slowest compile of one unit measured (about 20 s with g++ for the
   * sim; NVRTC up to about 4 s), so that a builder slowed by a loaded node is still waited for,
   * while a stopped or hung one costs each waiter a minute once. Waiting too little costs only
   * a second compile of the same bytes. */
  LOCK_WAIT_DEFAULT_MS = 60 * 1000,
  LOCK_WAIT_MAX_MS = 24 * 3600 * 1000,
  /* The largest payload kept (1 GiB; a family's binary is a few MiB): a file that claims more is
   * refused before anything is read, not read into memory. */
  PAYLOAD_MAX = 1 << 30,
  /* A writer's temporary or a lock file untouched this long belongs to a killed process. */
  LEFTOVER_STALE_S = 3600
};
#ifndef O_PATH
#define O_PATH O_RDONLY /* a directory this user may search but not list is then refused */
#endif
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
  akx__jit_counters aid_counters; /* akx__jit_cache_get_aid's entries */
  int resolved; /* the directory was chosen (and checked) since the start or the last reset */
  /* The directory, opened once checked (-1: no disk cache): every file is opened, renamed and
   * removed relative to it, never by a name built from dir. */
  int dir_fd;
  char dir[PATH_CAP]; /* its absolute name, links resolved: for sentences and callers */
  char note[NOTE_CAP];
  long lock_wait_ms;
  int swept; /* a writer's stale temporaries were looked for in this process */
} cache = {.lock = PTHREAD_MUTEX_INITIALIZER, .settled = PTHREAD_COND_INITIALIZER, .dir_fd = -1};

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

static int trusted_owner(uid_t uid) { return uid == 0 || uid == geteuid(); }

/* Whether another user could replace the directory `up` (at path `at`) holds on the way down
 * to dir, the rules of OpenSSH's safe_path() (misc.c): owned by root or this user, and
 * writable by no one else, unless sticky (as /tmp, mode 1777), where only the owner of an entry
 * (and of the directory) can rename it. What the sticky directory holds is checked in its own
 * turn: every directory on the way must be root's or this user's. 0 (and the note) when so. */
static int check_above(const char *dir, const char *at, const struct stat *up, char *note) {
  if (!trusted_owner(up->st_uid)) {
    snprintf(note, NOTE_CAP, "the disk cache is not used: %s is inside %s, which is owned by uid "
             "%lu, neither root nor this process's user (uid %lu)", dir, at,
             (unsigned long)up->st_uid, (unsigned long)geteuid());
    return 0;
  }
  if ((up->st_mode & (S_IWGRP | S_IWOTH)) && !(up->st_mode & S_ISVTX)) {
    snprintf(note, NOTE_CAP, "the disk cache is not used: %s is inside %s, which is writable by "
             "its group or others (mode %04o): they could put another directory in its place",
             dir, at, (unsigned)(up->st_mode & 07777));
    return 0;
  }
  return 1;
}

/* The rules for the directory itself (named dir): a directory, this user's, writable by no one
 * else; 0 (and the note) when it breaks one. */
static int check_own(const char *dir, const struct stat *st, char *note) {
  if (S_ISLNK(st->st_mode)) {
    snprintf(note, NOTE_CAP, "the disk cache is not used: %s is a symbolic link", dir);
    return 0;
  }
  if (!S_ISDIR(st->st_mode)) {
    snprintf(note, NOTE_CAP, "the disk cache is not used: %s is not a directory", dir);
    return 0;
  }
  if (st->st_uid != geteuid()) {
    snprintf(note, NOTE_CAP, "the disk cache is not used: %s is owned by uid %lu, not by this "
             "process's user (uid %lu)", dir, (unsigned long)st->st_uid, (unsigned long)geteuid());
    return 0;
  }
  if (st->st_mode & (S_IWGRP | S_IWOTH)) {
    snprintf(note, NOTE_CAP, "the disk cache is not used: %s is writable by its group or others "
             "(mode %04o)", dir, (unsigned)(st->st_mode & 07777));
    return 0;
  }
  return 1;
}

/* The directory dir opened (O_PATH: a directory this user may search but not list is fine),
 * having checked it and every directory above it; its absolute name, links resolved, in canon.
 * Every later file operation is relative to the descriptor, so neither a chdir (dir may be
 * relative) nor a rename above it can lead the cache elsewhere. The walk down from / opens each
 * component relative to the one above with O_NOFOLLOW, so what is checked is what is opened.
 * -1 (and the note) when the disk cache must not be used. */
static int open_checked_dir(const char *dir, char *canon, char *note) {
  struct stat named;
  if (lstat(dir, &named) != 0) {
    snprintf(note, NOTE_CAP, "the disk cache is not used: cannot stat %s: %s", dir, strerror(errno));
    return -1;
  }
  if (!check_own(dir, &named, note)) return -1;
  char real[PATH_MAX];
  if (!realpath(dir, real)) {
    snprintf(note, NOTE_CAP, "the disk cache is not used: cannot resolve %s: %s", dir,
             strerror(errno));
    return -1;
  }
  if (strlen(real) >= (size_t)(PATH_CAP - NAME_ROOM)) {
    snprintf(note, NOTE_CAP, "the disk cache is not used: %s's absolute name is longer than %d "
             "bytes", dir, PATH_CAP - NAME_ROOM - 1);
    return -1;
  }
  int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  struct stat up;
  if (fd < 0 || fstat(fd, &up) != 0) {
    snprintf(note, NOTE_CAP, "the disk cache is not used: cannot open /: %s", strerror(errno));
    if (fd >= 0) close(fd);
    return -1;
  }
  char at[PATH_MAX] = "/";
  size_t at_len = 1;
  for (const char *part = real + 1; *part;) {
    const size_t n = strcspn(part, "/");
    char name[NAME_MAX + 1];
    if (n > NAME_MAX) break; /* realpath gave it: cannot happen */
    memcpy(name, part, n);
    name[n] = '\0';
    if (!check_above(dir, at, &up, note)) {
      close(fd);
      return -1;
    }
    const int next = openat(fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    const int err = errno;
    close(fd);
    fd = next;
    at_len += (size_t)snprintf(at + at_len, sizeof at - at_len, "%s%s", at_len > 1 ? "/" : "", name);
    if (fd < 0 || fstat(fd, &up) != 0) {
      snprintf(note, NOTE_CAP, "the disk cache is not used: cannot open %s: %s", at,
               strerror(fd < 0 ? err : errno));
      if (fd >= 0) close(fd);
      return -1;
    }
    part += n;
    while (*part == '/') ++part;
  }
  /* What the walk reached must be what was named, checked above by its name. */
  if (up.st_dev != named.st_dev || up.st_ino != named.st_ino) {
    snprintf(note, NOTE_CAP, "the disk cache is not used: %s changed while it was checked", dir);
    close(fd);
    return -1;
  }
  if (!check_own(dir, &up, note)) {
    close(fd);
    return -1;
  }
  memcpy(canon, real, strlen(real) + 1);
  return fd;
}

/* AKX_CACHE_LOCK_WAIT_MS, or the default when it is unset or not a count of milliseconds. */
static long lock_wait_from_env(void) {
  const char *v = getenv("AKX_CACHE_LOCK_WAIT_MS");
  if (!v || !*v) return LOCK_WAIT_DEFAULT_MS;
  char *end = NULL;
  errno = 0;
  const long ms = strtol(v, &end, 10);
  if (errno || *end || ms < 0) {
    if (verbose())
      fprintf(stderr, "libakx: AKX_CACHE_LOCK_WAIT_MS=%s is not a count of milliseconds: the "
              "default, %d, holds\n", v, LOCK_WAIT_DEFAULT_MS);
    return LOCK_WAIT_DEFAULT_MS;
  }
  return ms < LOCK_WAIT_MAX_MS ? ms : LOCK_WAIT_MAX_MS;
}

static void resolve_locked(void) {
  if (cache.resolved) return;
  cache.resolved = 1;
  cache.dir_fd = -1;
  cache.swept = 0;
  cache.dir[0] = '\0';
  cache.note[0] = '\0';
  cache.lock_wait_ms = lock_wait_from_env();
  char dir[PATH_CAP];
  if (choose_dir(dir, cache.note) && make_dirs(dir, cache.note) &&
      (cache.dir_fd = open_checked_dir(dir, cache.dir, cache.note)) >= 0)
    return;
  cache.dir[0] = '\0';
  if (verbose()) fprintf(stderr, "libakx: %s\n", cache.note);
}

/* ---- files --------------------------------------------------------------------------------- */

/* A key's file in the directory: "<64 hex digits><kind>". Beside it while it is built, the lock
 * "<file>.lock", and the writer's temporary ".<file>.XXXXXX" (six letters or digits). */
static void file_name(const akx__jit_key *key, const char *kind, char name[NAME_CAP]) {
  char hex[65];
  akx__jit_key_hex(key, hex);
  snprintf(name, NAME_CAP, "%s%s", hex, kind);
}

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

/* Why a file the cache opens (a key's file, its lock) must not be used, or NULL. Only a regular
 * file: a FIFO would hang a read, a device is not ours to read. Only this user's, writable by
 * no one else: in a directory only this user can write, another's file, or one others may
 * write through a hard link elsewhere, was put there before the directory was private. */
static const char *refused(const struct stat *st) {
  if (S_ISLNK(st->st_mode)) return "is a symbolic link";
  if (!S_ISREG(st->st_mode)) return "is not a regular file";
  if (st->st_uid != geteuid()) return "is another user's";
  if (st->st_mode & (S_IWGRP | S_IWOTH)) return "is writable by its group or others";
  return NULL;
}

/* name in the directory dfd, opened with flags (O_CREAT: mode 0600) when refused() allows it;
 * -1 with *why (and errno ENOENT when it does not exist) otherwise. O_NOFOLLOW: a link is not
 * followed; O_NONBLOCK: a FIFO swapped in after a look would not hang the open (cleared once
 * the descriptor is known to be a regular file's). */
static int open_plain(int dfd, const char *name, int flags, const char **why) {
  struct stat st;
  /* A look first, so that what is not a regular file (a device) is never opened at all. */
  if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if ((*why = refused(&st))) {
      errno = EPERM;
      return -1;
    }
  } else if (errno != ENOENT || !(flags & O_CREAT)) {
    *why = "cannot be examined";
    return -1;
  }
  const int fd = openat(dfd, name, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
  if (fd < 0) {
    *why = errno == ELOOP ? "is a symbolic link" : "cannot be opened";
    return -1;
  }
  const int fl = fcntl(fd, F_GETFL);
  if (fstat(fd, &st) != 0 || (*why = refused(&st)) || fl < 0 ||
      fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
    if (!*why) *why = "cannot be examined";
    close(fd);
    errno = EPERM;
    return -1;
  }
  return fd;
}

typedef enum { FILE_MISSING, FILE_GOOD, FILE_BAD } file_result;

/* The verified payload of the file name in dfd, malloc'd; FILE_BAD names what failed in *why. */
static file_result read_file(int dfd, const char *name, const akx__jit_key *key, void **bytes,
                             size_t *size, const char **why) {
  const int fd = open_plain(dfd, name, O_RDONLY, why);
  if (fd < 0) return errno == ENOENT ? FILE_MISSING : FILE_BAD;
  file_result result = FILE_BAD;
  unsigned char header[HEADER_SIZE], digest[32];
  unsigned char *payload = NULL;
  struct stat st;
  if (fstat(fd, &st) != 0) {
    *why = "cannot be examined";
  } else if (st.st_size < HEADER_SIZE || !read_all(fd, header, sizeof header)) {
    *why = "is shorter than its header";
  } else if (memcmp(header, file_magic, sizeof file_magic) != 0 ||
             get_le(header + 8, 4) != FORMAT_VERSION || get_le(header + 12, 4) != 0) {
    *why = "has another magic or format version";
  } else if (get_le(header + 16, 8) != (uint64_t)st.st_size - HEADER_SIZE) {
    *why = "has another size than its header says (truncated?)";
  } else if (memcmp(header + 24, key->b, 32) != 0) {
    *why = "carries another key";
  } else if (st.st_size - HEADER_SIZE > PAYLOAD_MAX) {
    *why = "is larger than any binary the cache keeps";
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

/* Whether s, n bytes, is a key's file name: 64 lowercase hex digits, then a kind. */
static int is_file_name(const char *s, size_t n) {
  if (n < 64 + 2 || n > 64 + KIND_MAX) return 0;
  for (size_t i = 0; i < 64; ++i)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
  char kind[KIND_MAX + 1];
  memcpy(kind, s + 64, n - 64);
  kind[n - 64] = '\0';
  return kind_ok(kind);
}

/* Whether d_name is what a writer or a builder leaves beside a key's file while at work: the
 * temporary ".<file>.XXXXXX" or the lock "<file>.lock". */
static int is_leftover(const char *d_name) {
  const size_t n = strlen(d_name);
  if (n > 8 && d_name[0] == '.' && d_name[n - 7] == '.') {
    for (size_t i = n - 6; i < n; ++i)
      if (!isalnum((unsigned char)d_name[i])) return 0;
    return is_file_name(d_name + 1, n - 8);
  }
  return n > 5 && strcmp(d_name + n - 5, ".lock") == 0 && is_file_name(d_name, n - 5);
}

/* Whether d_name is a sim compile's private directory (src/jit/sim_module.cpp, make_build_dir:
 * "akx-build." and mkdtemp's six letters or digits). */
static int is_build_dir_name(const char *d_name) {
  if (strncmp(d_name, "akx-build.", 10) != 0 || strlen(d_name) != 16) return 0;
  for (int i = 10; i < 16; ++i)
    if (!isalnum((unsigned char)d_name[i])) return 0;
  return 1;
}

/* Removes name, a directory in dfd, and what it holds, without following a symbolic link
 * (each level opened with O_NOFOLLOW, entries removed relative to it) and at most `depth`
 * levels down (a compile makes one). Whatever cannot be opened or removed is left: a sweep
 * never fails the call. */
static void remove_tree_at(int dfd, const char *name, int depth) {
  const int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
  if (!d) {
    if (fd >= 0) close(fd);
    return;
  }
  for (struct dirent *e; (e = readdir(d));) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    struct stat st;
    if (fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      if (depth > 0) remove_tree_at(fd, e->d_name, depth - 1);
    } else {
      unlinkat(fd, e->d_name, 0);
    }
  }
  closedir(d);
  unlinkat(dfd, name, AT_REMOVEDIR);
}

/* A sim compile's directory left by a killed process: ours, a directory (not a link), untouched
 * for longer than the lock wait (a live compile writes its source and headers into it as it
 * starts and holds its lock for no longer than a waiter waits), and not locked: a live builder
 * holds a shared flock on its directory for the whole compile (src/jit/sim_module.cpp), which
 * the kernel drops when the process dies however it dies, so a compile slower than the wait is
 * not taken for a dead one. */
static int is_dead_build_dir(int dfd, const char *name, time_t stale) {
  struct stat st;
  if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
      st.st_mtime >= stale)
    return 0;
  const int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return 0; /* no permission to read it: nothing this process may remove anyway */
  const int free_of_builders = flock(fd, LOCK_EX | LOCK_NB) == 0;
  close(fd); /* drops the lock, if taken */
  return free_of_builders;
}

/* Removes what processes killed at work left behind: a writer's temporary (held for the time
 * of one write, well under a second) or a lock file (touched when taken; a builder holds it for
 * one compile, seconds) untouched for an hour is dead; a sim compile's akx-build.* directory
 * (a compile killed with SIGKILL cannot remove its own) untouched for longer than the lock wait
 * and locked by no builder (is_dead_build_dir). Once per process, at its first write, with no
 * lock of its own held: a directory's listing then costs nothing next to the compile that came
 * before. */
static void sweep_leftovers(int dfd, long lock_wait_ms) {
  const int list_fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = list_fd >= 0 ? fdopendir(list_fd) : NULL;
  if (!d) {
    if (list_fd >= 0) close(list_fd);
    return;
  }
  const time_t now = time(NULL), stale = now - LEFTOVER_STALE_S;
  const time_t stale_build = now - (time_t)(lock_wait_ms / 1000) - 1;
  for (struct dirent *e; (e = readdir(d));) {
    struct stat st;
    if (is_leftover(e->d_name) && fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISREG(st.st_mode) && st.st_mtime < stale)
      unlinkat(dfd, e->d_name, 0);
    else if (is_build_dir_name(e->d_name) && is_dead_build_dir(dfd, e->d_name, stale_build))
      remove_tree_at(dfd, e->d_name, 4);
  }
  closedir(d);
}

/* A new temporary beside name in dfd, its name in tmp; -1 when none can be made. Six letters or
 * digits from the clock, the process and a counter, tried again on a clash, as mkstemp does. */
static int create_temporary(int dfd, const char *name, char tmp[TEMP_CAP]) {
  static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  static atomic_uint_fast64_t counter;
  for (int attempt = 0; attempt < 100; ++attempt) {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    uint64_t x = (uint64_t)now.tv_nsec ^ ((uint64_t)now.tv_sec << 30) ^ ((uint64_t)getpid() << 20) ^
                 (atomic_fetch_add(&counter, 1) * 0x9E3779B97F4A7C15u);
    x ^= x >> 31, x *= 0xBF58476D1CE4E5B9u, x ^= x >> 29; /* splitmix64's mixing */
    char suffix[7];
    for (int i = 0; i < 6; ++i, x /= 62) suffix[i] = digits[x % 62];
    suffix[6] = '\0';
    snprintf(tmp, TEMP_CAP, ".%s.%s", name, suffix);
    const int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;
}

/* Writes the file under a temporary name in dfd and renames it to name: a reader in another
 * process sees the whole file or the one before. 1 when it is in place. */
static int write_file(int dfd, const char *name, const akx__jit_key *key, const void *bytes,
                      size_t size) {
  if (size > PAYLOAD_MAX) { /* a read would refuse it */
    errno = EFBIG;
    return 0;
  }
  char tmp[TEMP_CAP];
  const int fd = create_temporary(dfd, name, tmp);
  if (fd < 0) return 0;
  unsigned char header[HEADER_SIZE] = {0};
  memcpy(header, file_magic, sizeof file_magic);
  put_le(header + 8, FORMAT_VERSION, 4);
  put_le(header + 16, size, 8);
  memcpy(header + 24, key->b, 32);
  akx__sha256_of(bytes, size, header + 56);
  int ok = write_all(fd, header, sizeof header) && write_all(fd, bytes, size);
  ok = close(fd) == 0 && ok;
  ok = ok && renameat(dfd, tmp, dfd, name) == 0;
  if (!ok) {
    const int err = errno; /* the caller reports the failure, not the clean-up's errno */
    unlinkat(dfd, tmp, 0);
    errno = err;
  }
  return ok;
}

/* ---- entries ------------------------------------------------------------------------------- */

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

/* The file name in dfd loaded into *handle (FILE_GOOD: its bytes in *bytes), missing, or bad
 * (counted and, verbose, reported: the caller builds it again). dir names dfd in sentences. */
static file_result from_disk(int dfd, const char *dir, const char *name, const akx__jit_key *key,
                             akx__jit_load_fn load, void *arg, void **bytes, size_t *size,
                             void **handle, akx__jit_counters *c) {
  void *b = NULL;
  size_t n = 0;
  const char *why = NULL;
  file_result r = read_file(dfd, name, key, &b, &n, &why);
  if (r == FILE_GOOD) {
    /* A refused file is not the call's failure: the build's outcome is what it reports. */
    akx__error_saved before;
    akx__error_save(&before);
    if (load(arg, b, n, handle) == AKX_SUCCESS) {
      count(&c->disk_hits);
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
    count(&c->disk_rejects);
    if (verbose()) fprintf(stderr, "libakx: the cache file %s/%s %s: building it again\n", dir, name, why);
  }
  return r;
}

static void sleep_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&t, &t) != 0 && errno == EINTR) {
  }
}

static long ms_since(const struct timespec *t0) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long)(t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* Processes that miss the same file build it one at a time: the first takes a lock file beside
 * it (name + ".lock", a POSIX record lock, released when the builder exits, whatever way) and
 * the others wait, then find the file (MPI ranks of one node, or test processes, asking for one
 * kernel at once would otherwise each compile it). The wait is bounded (wait_ms): a builder
 * stopped under a debugger, or whose compile hangs, must not stop every process asking for its
 * key; one that gives up builds alone, and the rename keeps the file whole whoever writes it
 * last. Polled (F_SETLK, naps growing to 50 ms) rather than F_SETLKW, which only a signal could
 * cut short. -1 where no lock can be had (*timed_out set when the wait ran out): build anyway. */
static int take_build_lock(int dfd, const char *dir, const char *lock_name, long wait_ms,
                           int *timed_out) {
  const char *why = NULL;
  const int fd = open_plain(dfd, lock_name, O_RDWR | O_CREAT, &why);
  if (fd < 0) {
    if (verbose())
      fprintf(stderr, "libakx: the lock file %s/%s %s: building without it\n", dir, lock_name, why);
    return -1;
  }
  struct flock l;
  memset(&l, 0, sizeof l);
  l.l_type = F_WRLCK;
  l.l_whence = SEEK_SET;
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (long nap = 1;;) {
    if (fcntl(fd, F_SETLK, &l) == 0) {
      futimens(fd, NULL); /* a lock file in use is young: the sweep leaves it alone */
      return fd;
    }
    if (errno == EINTR) continue;
    const int held_by_another = errno == EACCES || errno == EAGAIN; /* else no locks here */
    const long waited = ms_since(&t0);
    if (!held_by_another || waited >= wait_ms) {
      *timed_out = held_by_another;
      close(fd);
      return -1;
    }
    sleep_ms(nap < wait_ms - waited ? nap : wait_ms - waited);
    if (nap < 50) nap *= 2;
  }
}

static void release_build_lock(int dfd, int fd, const char *lock_name) {
  if (fd < 0) return;
  /* The next process to miss makes its own lock file; a waiter on this one re-reads. Only this
   * lock's file goes: another process may have made a new one under the name meanwhile. */
  struct stat held, named;
  if (fstat(fd, &held) == 0 && fstatat(dfd, lock_name, &named, AT_SYMLINK_NOFOLLOW) == 0 &&
      held.st_dev == named.st_dev && held.st_ino == named.st_ino)
    unlinkat(dfd, lock_name, 0);
  close(fd);
}

/* Where an entry's file lives: the directory (dfd, -1: no disk cache; dir its name in
 * sentences), the file's name, how long to wait for another process's build of it. */
typedef struct {
  int dfd;
  char dir[PATH_CAP];
  char name[NAME_CAP];
  long lock_wait_ms;
} disk_place;

/* The entry's bytes and handle: from the file, else built. Runs without the lock. */
static akx_status produce(const disk_place *at, const akx__jit_key *key, akx__jit_build_fn build,
                          akx__jit_load_fn load, void *arg, void **bytes, size_t *size,
                          void **handle, akx__jit_counters *c) {
  char lock_name[NAME_CAP + 8];
  int lock_fd = -1;
  const int disk = at->dfd >= 0;
  if (disk) {
    snprintf(lock_name, sizeof lock_name, "%s.lock", at->name);
    file_result r = from_disk(at->dfd, at->dir, at->name, key, load, arg, bytes, size, handle, c);
    if (r == FILE_MISSING) {
      int timed_out = 0;
      lock_fd = take_build_lock(at->dfd, at->dir, lock_name, at->lock_wait_ms, &timed_out);
      if (lock_fd >= 0) {
        r = from_disk(at->dfd, at->dir, at->name, key, load, arg, bytes, size, handle, c); /* built while this one waited? */
      } else if (timed_out) {
        count(&c->lock_timeouts);
        if (verbose())
          fprintf(stderr, "libakx: another process has held the lock on %s/%s for %ld ms: "
                  "building it here too\n", at->dir, at->name, at->lock_wait_ms);
      }
    }
    if (r == FILE_GOOD) {
      release_build_lock(at->dfd, lock_fd, lock_name);
      return AKX_SUCCESS;
    }
  }
  void *b = NULL;
  size_t n = 0;
  count(&c->compiles);
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
    if (disk) release_build_lock(at->dfd, lock_fd, lock_name);
    return s;
  }
  /* Stored once loaded: a file on disk is always one a load accepted. */
  if (disk) {
    const int written = write_file(at->dfd, at->name, key, b, n);
    if (!written && verbose())
      fprintf(stderr, "libakx: the cache file %s/%s could not be written: %s\n", at->dir,
              at->name, strerror(errno));
    release_build_lock(at->dfd, lock_fd, lock_name);
    if (written) {
      pthread_mutex_lock(&cache.lock);
      c->disk_writes++;
      const int sweep = !cache.swept;
      cache.swept = 1;
      pthread_mutex_unlock(&cache.lock);
      if (sweep) sweep_leftovers(at->dfd, at->lock_wait_ms);
    }
  }
  *bytes = b;
  *size = n;
  return AKX_SUCCESS;
}

/* akx__jit_cache_get with the counters it counts in (the kernels' or the build aids'). */
static akx_status get(const akx__jit_key *key, const char *kind, akx__jit_build_fn build,
                      akx__jit_load_fn load, void *arg, void **handle, akx__jit_counters *c) {
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
      c->memory_hits++;
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
  disk_place *at = malloc(sizeof *at); /* 4 KiB of name: not on a caller's (fiber's) stack */
  if (!at) {
    unlink_locked(e);
    free(e);
    pthread_mutex_unlock(&cache.lock);
    return akx__fail(AKX_ERROR_OUT_OF_MEMORY, "the kernel cache cannot allocate an entry");
  }
  at->dfd = cache.dir_fd;
  at->lock_wait_ms = cache.lock_wait_ms;
  if (at->dfd >= 0) {
    memcpy(at->dir, cache.dir, sizeof at->dir);
    file_name(key, kind, at->name);
  }
  pthread_mutex_unlock(&cache.lock);

  void *bytes = NULL, *h = NULL;
  size_t size = 0;
  const akx_status s = produce(at, key, build, load, arg, &bytes, &size, &h, c);
  free(at);

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

akx_status akx__jit_cache_get(const akx__jit_key *key, const char *kind, akx__jit_build_fn build,
                              akx__jit_load_fn load, void *arg, void **handle) {
  return get(key, kind, build, load, arg, handle, &cache.counters);
}

akx_status akx__jit_cache_get_aid(const akx__jit_key *key, const char *kind, akx__jit_build_fn build,
                                  akx__jit_load_fn load, void *arg, void **handle) {
  return get(key, kind, build, load, arg, handle, &cache.aid_counters);
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

void akx__jit_cache_aid_counters(akx__jit_counters *out) {
  pthread_mutex_lock(&cache.lock);
  *out = cache.aid_counters;
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
  memset(&cache.aid_counters, 0, sizeof cache.aid_counters);
  cache.resolved = 0;
  if (cache.dir_fd >= 0) close(cache.dir_fd);
  cache.dir_fd = -1;
  cache.dir[0] = '\0';
  cache.note[0] = '\0';
  pthread_mutex_unlock(&cache.lock);
}
