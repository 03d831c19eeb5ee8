/* The run-time kernel cache (src/jit/cache.h): SHA-256 against the NIST vectors, keys framed
 * part by part, entries found in memory, files found by a "new process" (the cache reset, the
 * environment read again), files that are truncated, altered or carry another key rebuilt and
 * never loaded, directories another user could write or replace (the directory, or one above
 * it) refused with a note, and threads racing for one key building it once. Hostile states
 * met without hanging or loading what another user could have planted: a relative directory
 * and a later chdir, a FIFO, a directory or a link in place of a file or of its lock, a file
 * others could write, a file claiming a huge payload, a peer process stopped while it holds the
 * build lock, a full disk, leftovers of killed processes.
 *
 * The build function is a fake compiler: it counts its calls and makes deterministic text from
 * a source string; the load function strdup's the bytes, so a handle shows which bytes it was
 * loaded from. Each test runs in a fresh directory under /tmp, named by AKX_CACHE_DIR, and puts
 * back every variable it changes. */
#define _XOPEN_SOURCE 700 /* mkdtemp, pthread_barrier_t */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/file.h> /* flock: what a live sim compile holds on its directory */
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "tree.h"
#include "error.h"
#include "jit/cache.h"
#include "jit/entries.h"

enum { HEADER = 88 }; /* the file header's size (src/jit/cache.h) */

/* ---- the fixture: a fresh directory, the environment put back ------------------------------ */

static char tmp[64];
static const char *const vars[] = {"AKX_CACHE_DIR", "XDG_CACHE_HOME", "HOME", "AKX_CACHE_VERBOSE",
                                    "AKX_CACHE_LOCK_WAIT_MS"};
enum { VARS = sizeof vars / sizeof vars[0] };
static char *saved[VARS];

/* The handles the fake load made: the cache does not unload them, the test frees them. */
static pthread_mutex_t handles_lock = PTHREAD_MUTEX_INITIALIZER;
static char *handles[256];
static int handle_count;

static void setup(void) {
  for (int i = 0; i < VARS; ++i) {
    const char *v = getenv(vars[i]);
    saved[i] = v ? strdup(v) : NULL;
  }
  strcpy(tmp, "/tmp/akx-jit-cache-XXXXXX");
  cr_assert(mkdtemp(tmp), "mkdtemp");
  setenv("AKX_CACHE_DIR", tmp, 1);
  unsetenv("AKX_CACHE_VERBOSE");
  unsetenv("AKX_CACHE_LOCK_WAIT_MS");
  akx__jit_cache_reset_for_tests();
}

static void teardown(void) {
  akx__jit_cache_reset_for_tests();
  for (int i = 0; i < handle_count; ++i) free(handles[i]);
  handle_count = 0;
  for (int i = 0; i < VARS; ++i) {
    if (saved[i]) setenv(vars[i], saved[i], 1);
    else unsetenv(vars[i]);
    free(saved[i]);
    saved[i] = NULL;
  }
  tfx_remove_tree(tmp);
}

/* A test's own .init (cr_redirect_stderr below) runs besides these, not instead. */
TestSuite(jit_cache, .init = setup, .fini = teardown, .timeout = 60);

/* ---- the fake compiler ---------------------------------------------------------------------- */

typedef struct {
  const char *source;        /* the bytes repeat it */
  size_t size;               /* bytes a build makes */
  atomic_int builds, loads;
  atomic_int refuse_loads;   /* loads to refuse before accepting */
  akx_status build_status;   /* not AKX_SUCCESS: every build fails with it */
  int build_sleep_ms;
  atomic_int *arrived;       /* set: the build waits until `expected` threads have arrived */
  int expected;
  atomic_int *release;       /* set: the build waits (10 s at most) until it is nonzero */
} program;

static void sleep_ms(int ms) {
  struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

static void program_bytes(const program *p, char *out) {
  const size_t n = strlen(p->source);
  for (size_t i = 0; i < p->size; ++i) out[i] = p->source[i % n];
}

static akx_status fake_build(void *arg, void **bytes, size_t *size) {
  program *p = arg;
  atomic_fetch_add(&p->builds, 1);
  if (p->arrived)
    while (atomic_load(p->arrived) < p->expected) sleep_ms(1);
  if (p->release)
    for (int i = 0; i < 10000 && !atomic_load(p->release); ++i) sleep_ms(1);
  if (p->build_sleep_ms) sleep_ms(p->build_sleep_ms);
  if (p->build_status != AKX_SUCCESS)
    return akx__fail(p->build_status, "fake compiler: %s does not compile", p->source);
  char *b = malloc(p->size ? p->size : 1);
  program_bytes(p, b);
  *bytes = b;
  *size = p->size;
  return AKX_SUCCESS;
}

static akx_status fake_load(void *arg, const void *bytes, size_t size, void **handle) {
  program *p = arg;
  atomic_fetch_add(&p->loads, 1);
  if (atomic_load(&p->refuse_loads) > 0) {
    atomic_fetch_sub(&p->refuse_loads, 1);
    return akx__fail(AKX_ERROR_DEVICE, "fake loader: refused");
  }
  char *h = strndup(bytes, size);
  pthread_mutex_lock(&handles_lock);
  handles[handle_count++] = h;
  pthread_mutex_unlock(&handles_lock);
  *handle = h;
  return AKX_SUCCESS;
}

static program make_program(const char *source, size_t size) {
  program p = {.source = source, .size = size, .build_status = AKX_SUCCESS};
  return p;
}

static akx__jit_key key_of(const char *source) {
  akx__jit_hasher h;
  akx__jit_key k;
  akx__jit_key_begin(&h);
  akx__jit_key_add_str(&h, "test_jit_cache");
  akx__jit_key_add_str(&h, source);
  akx__jit_key_end(&h, &k);
  return k;
}

/* Gets (key of p's source, kind), checks that the handle holds p's bytes, returns it. */
static void *get_checked(program *p, const char *kind) {
  const akx__jit_key k = key_of(p->source);
  void *handle = NULL;
  cr_assert_eq(akx__jit_cache_get(&k, kind, fake_build, fake_load, p, &handle), AKX_SUCCESS, "%s",
               akx_last_error());
  char *want = malloc(p->size + 1);
  program_bytes(p, want);
  want[p->size] = '\0';
  cr_assert_str_eq(handle, want);
  free(want);
  return handle;
}

static void expect_counters(uint64_t compiles, uint64_t memory_hits, uint64_t disk_hits,
                            uint64_t disk_writes, uint64_t disk_rejects) {
  akx__jit_counters c;
  akx__jit_cache_counters(&c);
  cr_assert(c.compiles == compiles && c.memory_hits == memory_hits && c.disk_hits == disk_hits &&
                c.disk_writes == disk_writes && c.disk_rejects == disk_rejects,
            "counters (compiles, memory_hits, disk_hits, disk_writes, disk_rejects): got (%llu, "
            "%llu, %llu, %llu, %llu), want (%llu, %llu, %llu, %llu, %llu)",
            (unsigned long long)c.compiles, (unsigned long long)c.memory_hits,
            (unsigned long long)c.disk_hits, (unsigned long long)c.disk_writes,
            (unsigned long long)c.disk_rejects, (unsigned long long)compiles,
            (unsigned long long)memory_hits, (unsigned long long)disk_hits,
            (unsigned long long)disk_writes, (unsigned long long)disk_rejects);
}

/* The file of (source's key, kind) in dir. */
static void file_of(const char *dir, const char *source, const char *kind, char *path, size_t cap) {
  const akx__jit_key k = key_of(source);
  char hex[65];
  akx__jit_key_hex(&k, hex);
  const int n = snprintf(path, cap, "%s/%s%s", dir, hex, kind);
  cr_assert(n > 0 && (size_t)n < cap, "the path of %s in %s does not fit %zu bytes", kind, dir, cap);
}

/* Entries of dir other than "." and "..". */
static int entries_in(const char *dir) {
  DIR *d = opendir(dir);
  cr_assert(d, "opendir %s", dir);
  int n = 0;
  for (struct dirent *e; (e = readdir(d));)
    n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
  closedir(d);
  return n;
}

static long file_size(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* ---- SHA-256 ---------------------------------------------------------------------------------- */

static void hex_of(const unsigned char d[32], char out[65]) {
  for (int i = 0; i < 32; ++i) snprintf(out + 2 * i, 3, "%02x", d[i]);
}

Test(jit_cache, sha256_matches_the_nist_vectors) {
  static const struct {
    const char *text; /* NULL: one million 'a' */
    const char *digest;
  } vectors[] = {
      {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
      {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlm"
       "nopqrsmnopqrstnopqrstu",
       "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
      /* 55 and 64 bytes: the padding's edges (the length fits in the block; a block exactly) */
      {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
       "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
      {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
       "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
      {NULL, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
  };
  char *million = malloc(1000000);
  memset(million, 'a', 1000000);
  for (size_t v = 0; v < sizeof vectors / sizeof vectors[0]; ++v) {
    const char *text = vectors[v].text ? vectors[v].text : million;
    const size_t n = vectors[v].text ? strlen(text) : 1000000;
    unsigned char d[32];
    char got[65];
    akx__sha256_of(text, n, d);
    hex_of(d, got);
    cr_assert_str_eq(got, vectors[v].digest, "%zu bytes in one update", n);
    /* The same bytes in uneven pieces (1, 2, ..., 67 bytes, again and again). */
    akx__sha256 s;
    akx__sha256_init(&s);
    for (size_t at = 0, piece = 1; at < n; at += piece, piece = piece % 67 + 1)
      akx__sha256_update(&s, text + at, piece < n - at ? piece : n - at);
    akx__sha256_final(&s, d);
    hex_of(d, got);
    cr_assert_str_eq(got, vectors[v].digest, "%zu bytes in pieces", n);
  }
  free(million);
}

/* ---- keys ---------------------------------------------------------------------------------- */

static akx__jit_key key_of_parts(const char *a, const char *b) {
  akx__jit_hasher h;
  akx__jit_key k;
  akx__jit_key_begin(&h);
  akx__jit_key_add_str(&h, a);
  akx__jit_key_add_str(&h, b);
  akx__jit_key_end(&h, &k);
  return k;
}

Test(jit_cache, key_parts_cannot_run_together) {
  const akx__jit_key ab_c = key_of_parts("ab", "c"), a_bc = key_of_parts("a", "bc");
  const akx__jit_key again = key_of_parts("ab", "c");
  cr_assert(memcmp(ab_c.b, a_bc.b, 32) != 0);
  cr_assert(memcmp(ab_c.b, again.b, 32) == 0, "the same parts make the same key");
  const akx__jit_key null_part = key_of_parts(NULL, "c"), empty_part = key_of_parts("", "c");
  cr_assert(memcmp(null_part.b, empty_part.b, 32) != 0, "NULL and \"\" are different parts");

  akx__jit_hasher h;
  akx__jit_key bytes_key;
  akx__jit_key_begin(&h);
  akx__jit_key_add(&h, "ab", 2);
  akx__jit_key_add(&h, "c", 1);
  akx__jit_key_end(&h, &bytes_key);
  cr_assert(memcmp(bytes_key.b, ab_c.b, 32) == 0, "add_str(s) is add(s, strlen(s))");

  char hex[65];
  akx__jit_key_hex(&ab_c, hex);
  cr_assert_eq(strlen(hex), 64);
  for (int i = 0; i < 32; ++i) {
    unsigned byte = 0;
    cr_assert_eq(sscanf(hex + 2 * i, "%2x", &byte), 1);
    cr_assert_eq(byte, ab_c.b[i], "hex digit pair %d", i);
  }
  cr_assert_eq(strspn(hex, "0123456789abcdef"), 64, "lowercase hex: %s", hex);
}

/* ---- memory and disk ----------------------------------------------------------------------- */

Test(jit_cache, second_get_is_a_memory_hit) {
  program p = make_program("kernel-a;", 1000);
  void *first = get_checked(&p, ".so");
  void *second = get_checked(&p, ".so");
  cr_assert_eq(first, second, "the same handle");
  cr_assert_eq(atomic_load(&p.builds), 1);
  cr_assert_eq(atomic_load(&p.loads), 1);
  expect_counters(1, 1, 0, 1, 0);
  const akx__jit_key k = key_of(p.source);
  const void *bytes = NULL;
  size_t size = 0;
  cr_assert_eq(akx__jit_cache_bytes(&k, ".so", &bytes, &size), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(size, 1000);
  cr_assert(memcmp(bytes, first, size) == 0, "the entry keeps the binary's bytes");
  cr_assert_eq(akx__jit_cache_bytes(&k, ".ptx", &bytes, &size), AKX_ERROR_INVALID_ARGUMENT);
  cr_assert_str_eq(akx__jit_cache_note(), "");
  cr_assert_str_eq(akx__jit_cache_dir(), tmp);
}

Test(jit_cache, a_new_process_finds_the_file) {
  program p = make_program("kernel-b;", 1000);
  get_checked(&p, ".cubin");
  expect_counters(1, 0, 0, 1, 0);

  char path[4096];
  file_of(tmp, p.source, ".cubin", path, sizeof path);
  cr_assert_eq(file_size(path), HEADER + 1000, "%s", path);
  cr_assert_eq(entries_in(tmp), 1, "no temporary file is left behind");
  FILE *f = fopen(path, "rb");
  unsigned char file[HEADER + 1000];
  cr_assert_eq(fread(file, 1, sizeof file, f), sizeof file);
  fclose(f);
  cr_assert(memcmp(file, "AKXJIT\r\n", 8) == 0, "magic");
  cr_assert_eq(file[8], 1, "format version 1");
  cr_assert_eq(file[16] | file[17] << 8, 1000, "payload size");
  const akx__jit_key k = key_of(p.source);
  cr_assert(memcmp(file + 24, k.b, 32) == 0, "the key");
  unsigned char digest[32];
  akx__sha256_of(file + HEADER, 1000, digest);
  cr_assert(memcmp(file + 56, digest, 32) == 0, "the payload's SHA-256");
  char want[1000];
  program_bytes(&p, want);
  cr_assert(memcmp(file + HEADER, want, 1000) == 0, "the payload is the binary");

  akx__jit_cache_reset_for_tests();
  get_checked(&p, ".cubin");
  cr_assert_eq(atomic_load(&p.builds), 1, "the second process does not build");
  cr_assert_eq(atomic_load(&p.loads), 2);
  expect_counters(0, 0, 1, 0, 0);
  get_checked(&p, ".cubin");
  expect_counters(0, 1, 1, 0, 0);
}

Test(jit_cache, kinds_are_separate_entries_and_files) {
  program p = make_program("kernel-c;", 100);
  get_checked(&p, ".so");
  get_checked(&p, ".ptx");
  cr_assert_eq(atomic_load(&p.builds), 2);
  expect_counters(2, 0, 0, 2, 0);
  char so[4096], ptx[4096];
  file_of(tmp, p.source, ".so", so, sizeof so);
  file_of(tmp, p.source, ".ptx", ptx, sizeof ptx);
  cr_assert_eq(file_size(so), HEADER + 100);
  cr_assert_eq(file_size(ptx), HEADER + 100);
}

Test(jit_cache, empty_and_large_binaries_round_trip) {
  program empty = make_program("e", 0), large = make_program("0123456789abcdef!", 3 << 20);
  get_checked(&empty, ".so");
  get_checked(&large, ".so");
  akx__jit_cache_reset_for_tests();
  get_checked(&empty, ".so");
  get_checked(&large, ".so");
  cr_assert_eq(atomic_load(&empty.builds) + atomic_load(&large.builds), 2);
  expect_counters(0, 0, 2, 0, 0);
}

/* ---- files that must not be loaded --------------------------------------------------------- */

Test(jit_cache, a_truncated_file_is_rebuilt) {
  program p = make_program("kernel-d;", 1000);
  get_checked(&p, ".so");
  char path[4096];
  file_of(tmp, p.source, ".so", path, sizeof path);
  static const long lengths[] = {0, 10, HEADER - 1, HEADER, HEADER + 500, HEADER + 999};
  for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; ++i) {
    cr_assert_eq(truncate(path, lengths[i]), 0);
    akx__jit_cache_reset_for_tests();
    const int loads_before = atomic_load(&p.loads);
    get_checked(&p, ".so");
    cr_assert_eq(atomic_load(&p.builds), 2 + (int)i, "truncated to %ld bytes: rebuilt", lengths[i]);
    cr_assert_eq(atomic_load(&p.loads), loads_before + 1, "the truncated bytes never loaded");
    expect_counters(1, 0, 0, 1, 1);
    cr_assert_eq(file_size(path), HEADER + 1000, "the rebuild wrote a whole file again");
  }
}

Test(jit_cache, a_file_claiming_a_huge_payload_is_refused_unread) {
  program p = make_program("kernel-huge;", 100);
  get_checked(&p, ".so");
  char path[4096];
  file_of(tmp, p.source, ".so", path, sizeof path);
  /* 4 GiB of holes after a header whose size field says so: reading it would take seconds. */
  const long long huge = 4LL << 30;
  FILE *f = fopen(path, "r+b");
  cr_assert(f);
  unsigned char le[8];
  for (int i = 0; i < 8; ++i) le[i] = (unsigned char)(huge >> (8 * i));
  fseek(f, 16, SEEK_SET);
  fwrite(le, 1, 8, f);
  fclose(f);
  cr_assert_eq(truncate(path, HEADER + huge), 0);
  akx__jit_cache_reset_for_tests();
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  get_checked(&p, ".so");
  clock_gettime(CLOCK_MONOTONIC, &t1);
  const double seconds = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
  cr_assert_lt(seconds, 2.0, "refused after %.2f s (reading it all takes about a minute)", seconds);
  expect_counters(1, 0, 0, 1, 1);
  cr_assert_eq(file_size(path), HEADER + 100);
}

Test(jit_cache, an_altered_byte_is_rebuilt) {
  program p = make_program("kernel-e;", 1000);
  get_checked(&p, ".so");
  char path[4096];
  file_of(tmp, p.source, ".so", path, sizeof path);
  /* magic, version, the zero word, size, key, checksum, payload (first, middle, last) */
  static const long offsets[] = {0, 8, 12, 16, 24, 56, HEADER, HEADER + 500, HEADER + 999};
  for (size_t i = 0; i < sizeof offsets / sizeof offsets[0]; ++i) {
    FILE *f = fopen(path, "r+b");
    cr_assert(f);
    fseek(f, offsets[i], SEEK_SET);
    const int c = fgetc(f);
    fseek(f, offsets[i], SEEK_SET);
    fputc(c ^ 0x01, f);
    fclose(f);
    akx__jit_cache_reset_for_tests();
    const int loads_before = atomic_load(&p.loads);
    get_checked(&p, ".so");
    cr_assert_eq(atomic_load(&p.builds), 2 + (int)i, "byte %ld flipped: rebuilt", offsets[i]);
    cr_assert_eq(atomic_load(&p.loads), loads_before + 1, "the altered bytes never loaded");
    expect_counters(1, 0, 0, 1, 1);
  }
}

Test(jit_cache, a_file_with_another_key_is_rebuilt) {
  program mine = make_program("kernel-mine;", 200), theirs = make_program("kernel-theirs;", 200);
  get_checked(&theirs, ".so");
  char from[4096], to[4096];
  file_of(tmp, theirs.source, ".so", from, sizeof from);
  file_of(tmp, mine.source, ".so", to, sizeof to);
  cr_assert_eq(rename(from, to), 0);
  akx__jit_cache_reset_for_tests();
  get_checked(&mine, ".so"); /* checks the handle holds mine's bytes, not theirs */
  cr_assert_eq(atomic_load(&mine.builds), 1);
  expect_counters(1, 0, 0, 1, 1);
}

Test(jit_cache, a_symlink_in_the_directory_is_not_followed) {
  /* The link leads to a good file of the very key, kept outside the directory: only the link
   * itself makes it a planted file. */
  program p = make_program("kernel-f;", 200);
  get_checked(&p, ".so");
  char path[4096], outside[4096];
  file_of(tmp, p.source, ".so", path, sizeof path);
  snprintf(outside, sizeof outside, "%s/outside", tmp);
  cr_assert_eq(mkdir(outside, 0700), 0);
  char moved[4096];
  file_of(outside, p.source, ".so", moved, sizeof moved);
  cr_assert_eq(rename(path, moved), 0);
  cr_assert_eq(symlink(moved, path), 0);
  akx__jit_cache_reset_for_tests();
  get_checked(&p, ".so");
  cr_assert_eq(atomic_load(&p.builds), 2, "the link was not followed");
  expect_counters(1, 0, 0, 1, 1);
  struct stat st;
  cr_assert_eq(lstat(path, &st), 0);
  cr_assert(S_ISREG(st.st_mode), "the store replaced the link with a file");
}

Test(jit_cache, disk_bytes_the_load_refuses_are_rebuilt) {
  program p = make_program("kernel-g;", 300);
  get_checked(&p, ".so");
  akx__jit_cache_reset_for_tests();
  atomic_store(&p.refuse_loads, 1);
  get_checked(&p, ".so");
  cr_assert_eq(atomic_load(&p.builds), 2);
  cr_assert_eq(atomic_load(&p.loads), 3, "first load, refused load of the file, load of the build");
  expect_counters(1, 0, 0, 1, 1);
  cr_assert_str_eq(akx_last_error(), "", "the refused load's sentence does not outlive the call");
}

/* ---- failures ------------------------------------------------------------------------------ */

Test(jit_cache, a_failed_build_is_reported_and_tried_again) {
  program p = make_program("broken;", 100);
  p.build_status = AKX_ERROR_UNSUPPORTED;
  const akx__jit_key k = key_of(p.source);
  void *handle = (void *)&p;
  cr_assert_eq(akx__jit_cache_get(&k, ".so", fake_build, fake_load, &p, &handle),
               AKX_ERROR_UNSUPPORTED);
  cr_assert_null(handle);
  cr_assert_str_eq(akx_last_error(), "fake compiler: broken; does not compile");
  cr_assert_eq(atomic_load(&p.loads), 0);
  expect_counters(1, 0, 0, 0, 0);
  cr_assert_eq(entries_in(tmp), 0, "nothing stored");
  cr_assert_eq(akx__jit_cache_get(&k, ".so", fake_build, fake_load, &p, &handle),
               AKX_ERROR_UNSUPPORTED);
  cr_assert_eq(atomic_load(&p.builds), 2, "a failure is not cached");
  p.build_status = AKX_SUCCESS;
  get_checked(&p, ".so");
  expect_counters(3, 0, 0, 1, 0);
}

Test(jit_cache, a_failed_load_of_a_build_is_reported) {
  program p = make_program("kernel-h;", 100);
  atomic_store(&p.refuse_loads, 1);
  const akx__jit_key k = key_of(p.source);
  void *handle = NULL;
  cr_assert_eq(akx__jit_cache_get(&k, ".so", fake_build, fake_load, &p, &handle), AKX_ERROR_DEVICE);
  cr_assert_str_eq(akx_last_error(), "fake loader: refused");
  cr_assert_null(handle);
  cr_assert_eq(entries_in(tmp), 0, "bytes no load accepted are not stored");
  expect_counters(1, 0, 0, 0, 0);
}

Test(jit_cache, bad_arguments_are_refused) {
  program p = make_program("kernel-i;", 10);
  const akx__jit_key k = key_of(p.source);
  void *handle = NULL;
  cr_assert_eq(akx__jit_cache_get(&k, ".so", fake_build, fake_load, &p, NULL),
               AKX_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(akx__jit_cache_get(NULL, ".so", fake_build, fake_load, &p, &handle),
               AKX_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(akx_last_error(), "key"), "%s", akx_last_error());
  cr_assert_eq(akx__jit_cache_get(&k, ".so", NULL, fake_load, &p, &handle),
               AKX_ERROR_INVALID_ARGUMENT);
  static const char *const kinds[] = {NULL, "", "so", ".", "./so", ".s/o", ".so.1",
                                      ".abcdefghijklmnop" /* 16 after the '.' */};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; ++i) {
    cr_assert_eq(akx__jit_cache_get(&k, kinds[i], fake_build, fake_load, &p, &handle),
                 AKX_ERROR_INVALID_ARGUMENT, "kind %s", kinds[i] ? kinds[i] : "NULL");
    cr_assert(strstr(akx_last_error(), "kind"), "%s", akx_last_error());
  }
  cr_assert_eq(atomic_load(&p.builds), 0);
  get_checked(&p, ".abcdefghijklmno"); /* 15: the longest kind */
}

/* ---- the directory ------------------------------------------------------------------------- */

Test(jit_cache, off_writes_no_files) {
  setenv("AKX_CACHE_DIR", "off", 1);
  setenv("XDG_CACHE_HOME", tmp, 1);
  setenv("HOME", tmp, 1);
  akx__jit_cache_reset_for_tests();
  program p = make_program("kernel-j;", 100);
  void *first = get_checked(&p, ".so");
  cr_assert_eq(get_checked(&p, ".so"), first, "memory still caches");
  expect_counters(1, 1, 0, 0, 0);
  cr_assert_eq(entries_in(tmp), 0);
  cr_assert(strstr(akx__jit_cache_note(), "AKX_CACHE_DIR=off"), "%s", akx__jit_cache_note());
  cr_assert_str_eq(akx__jit_cache_dir(), "");
}

Test(jit_cache, the_directory_falls_back_to_xdg_then_home) {
  char xdg[128], home[128], want[160];
  snprintf(xdg, sizeof xdg, "%s/xdg", tmp);
  snprintf(home, sizeof home, "%s/home", tmp);
  cr_assert_eq(mkdir(xdg, 0700), 0);
  cr_assert_eq(mkdir(home, 0700), 0);
  unsetenv("AKX_CACHE_DIR");
  setenv("XDG_CACHE_HOME", xdg, 1);
  setenv("HOME", home, 1);
  akx__jit_cache_reset_for_tests();
  snprintf(want, sizeof want, "%s/akx", xdg);
  cr_assert_str_eq(akx__jit_cache_dir(), want);
  program p = make_program("kernel-k;", 100);
  get_checked(&p, ".so");
  cr_assert_eq(entries_in(want), 1);

  setenv("XDG_CACHE_HOME", "relative/cache", 1); /* not absolute: ignored, as XDG says */
  akx__jit_cache_reset_for_tests();
  snprintf(want, sizeof want, "%s/.cache/akx", home);
  cr_assert_str_eq(akx__jit_cache_dir(), want);
  struct stat st;
  cr_assert_eq(stat(want, &st), 0);
  cr_assert_eq(st.st_mode & 07777, 0700, "mode %o", (unsigned)(st.st_mode & 07777));
  get_checked(&p, ".so");
  cr_assert_eq(entries_in(want), 1);

  unsetenv("XDG_CACHE_HOME");
  unsetenv("HOME");
  akx__jit_cache_reset_for_tests();
  cr_assert_str_eq(akx__jit_cache_dir(), "");
  cr_assert(strstr(akx__jit_cache_note(), "HOME"), "%s", akx__jit_cache_note());
  get_checked(&p, ".so");
  cr_assert_eq(atomic_load(&p.builds), 3);
}

Test(jit_cache, missing_parents_are_made_private) {
  char dir[160], want[160];
  snprintf(dir, sizeof dir, "%s/a/b/c//", tmp);
  snprintf(want, sizeof want, "%s/a/b/c", tmp);
  setenv("AKX_CACHE_DIR", dir, 1);
  akx__jit_cache_reset_for_tests();
  program p = make_program("kernel-l;", 100);
  get_checked(&p, ".so");
  cr_assert_str_eq(akx__jit_cache_dir(), want, "trailing slashes dropped");
  cr_assert_eq(entries_in(want), 1);
  static const char *const made[] = {"a", "a/b", "a/b/c"};
  for (int i = 0; i < 3; ++i) {
    char path[200];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", tmp, made[i]);
    cr_assert_eq(stat(path, &st), 0, "%s", path);
    cr_assert_eq(st.st_mode & 07777, 0700, "%s: mode %o", path, (unsigned)(st.st_mode & 07777));
  }
}

/* Points AKX_CACHE_DIR at dir, builds once, and checks the disk cache was skipped with a note
 * that contains `says`. */
static void expect_skipped(const char *dir, const char *says) {
  setenv("AKX_CACHE_DIR", dir, 1);
  akx__jit_cache_reset_for_tests();
  program p = make_program("kernel-m;", 100);
  get_checked(&p, ".so");
  get_checked(&p, ".so");
  expect_counters(1, 1, 0, 0, 0);
  const char *note = akx__jit_cache_note();
  cr_assert(strstr(note, dir) && strstr(note, says), "note \"%s\" should name %s and say \"%s\"",
            note, dir, says);
  cr_assert_str_eq(akx__jit_cache_dir(), "");
}

Test(jit_cache, a_directory_others_can_write_is_not_used) {
  static const struct { mode_t mode; const char *shows; } modes[] = {{0777, "0777"}, {0770, "0770"},
                                                                      {0702, "0702"}};
  for (int i = 0; i < 3; ++i) {
    char dir[128];
    snprintf(dir, sizeof dir, "%s/open%d", tmp, i);
    cr_assert_eq(mkdir(dir, 0700), 0);
    cr_assert_eq(chmod(dir, modes[i].mode), 0);
    expect_skipped(dir, "writable by its group or others");
    cr_assert(strstr(akx__jit_cache_note(), modes[i].shows), "%s", akx__jit_cache_note());
    cr_assert_eq(entries_in(dir), 0, "nothing written into %s", dir);
  }
}

Test(jit_cache, a_symlinked_directory_is_not_used) {
  char real[128], link[128];
  snprintf(real, sizeof real, "%s/real", tmp);
  snprintf(link, sizeof link, "%s/link", tmp);
  cr_assert_eq(mkdir(real, 0700), 0);
  cr_assert_eq(symlink(real, link), 0);
  expect_skipped(link, "symbolic link");
  cr_assert_eq(entries_in(real), 0);
}

Test(jit_cache, a_file_in_place_of_the_directory_is_not_used) {
  char file[128];
  snprintf(file, sizeof file, "%s/plain-file", tmp);
  fclose(fopen(file, "w"));
  expect_skipped(file, "not a directory");
}

Test(jit_cache, a_directory_of_another_user_is_not_used) {
  if (geteuid() != 0) cr_skip("only root can give a directory to another user (uid 65534)");
  char dir[128];
  snprintf(dir, sizeof dir, "%s/theirs", tmp);
  cr_assert_eq(mkdir(dir, 0700), 0);
  cr_assert_eq(chown(dir, 65534, 65534), 0);
  expect_skipped(dir, "owned by uid 65534");
  cr_assert_eq(entries_in(dir), 0);
}

Test(jit_cache, the_note_is_quiet_by_default, .init = cr_redirect_stderr) {
  char dir[128];
  snprintf(dir, sizeof dir, "%s/open", tmp);
  cr_assert_eq(mkdir(dir, 0777), 0);
  cr_assert_eq(chmod(dir, 0777), 0);
  expect_skipped(dir, "writable");
  fflush(stderr);
  cr_assert_stderr_eq_str("");
}

Test(jit_cache, the_note_is_printed_once_when_verbose, .init = cr_redirect_stderr) {
  char dir[128];
  snprintf(dir, sizeof dir, "%s/open", tmp);
  cr_assert_eq(mkdir(dir, 0777), 0);
  cr_assert_eq(chmod(dir, 0777), 0);
  setenv("AKX_CACHE_VERBOSE", "1", 1);
  expect_skipped(dir, "writable");
  program p = make_program("kernel-n;", 100);
  get_checked(&p, ".so");
  char want[4400];
  snprintf(want, sizeof want, "libakx: %s\n", akx__jit_cache_note());
  fflush(stderr);
  cr_assert_stderr_eq_str(want);
}

/* ---- hostile directory states ---------------------------------------------------------------- */

/* The bytes a program of `source` and `size` makes, under source's key, in dir/<key>.so: a good
 * file of that key holding other bytes than the program the test then asks for. */
static void plant_good_file(const char *dir, const char *source, size_t size) {
  char made[160], from[4096], to[4096];
  snprintf(made, sizeof made, "%s/planting", tmp);
  setenv("AKX_CACHE_DIR", made, 1);
  akx__jit_cache_reset_for_tests();
  program planted = make_program(source, size);
  get_checked(&planted, ".so");
  file_of(made, source, ".so", from, sizeof from);
  file_of(dir, source, ".so", to, sizeof to);
  cr_assert_eq(rename(from, to), 0, "%s -> %s", from, to);
  akx__jit_cache_reset_for_tests();
}

Test(jit_cache, a_relative_directory_is_resolved_once) {
  char a[128], b[128], open_cache[160], want[160];
  snprintf(a, sizeof a, "%s/a", tmp);
  snprintf(b, sizeof b, "%s/b", tmp);
  snprintf(open_cache, sizeof open_cache, "%s/cache", b);
  snprintf(want, sizeof want, "%s/cache", a);
  cr_assert_eq(mkdir(a, 0700), 0);
  cr_assert_eq(mkdir(b, 0700), 0);
  cr_assert_eq(mkdir(open_cache, 0777), 0);
  cr_assert_eq(chmod(open_cache, 0777), 0);
  /* b/cache: a directory anyone could write, holding a good file of q's key with other bytes */
  plant_good_file(open_cache, "kernel-q;", 50);

  cr_assert_eq(chdir(a), 0);
  setenv("AKX_CACHE_DIR", "cache", 1);
  akx__jit_cache_reset_for_tests();
  program p = make_program("kernel-p;", 100), q = make_program("kernel-q;", 100);
  get_checked(&p, ".so");
  cr_assert_str_eq(akx__jit_cache_dir(), want, "the directory is named absolutely");
  /* A chdir after the first use must not lead the cache into b/cache, which was never checked. */
  cr_assert_eq(chdir(b), 0);
  get_checked(&q, ".so"); /* q's 100 bytes, not the 50 planted in b/cache */
  cr_assert_eq(atomic_load(&q.builds), 1);
  expect_counters(2, 0, 0, 2, 0);
  cr_assert_str_eq(akx__jit_cache_dir(), want);
  cr_assert_eq(entries_in(want), 2, "both files in a/cache");
  cr_assert_eq(entries_in(open_cache), 1, "b/cache untouched");
  cr_assert_eq(chdir("/"), 0);
}

Test(jit_cache, a_directory_swapped_after_the_first_use_is_not_followed) {
  char dir[128], moved[128], open[128];
  snprintf(dir, sizeof dir, "%s/cache", tmp);
  snprintf(moved, sizeof moved, "%s/moved", tmp);
  snprintf(open, sizeof open, "%s/open", tmp);
  cr_assert_eq(mkdir(open, 0777), 0);
  cr_assert_eq(chmod(open, 0777), 0);
  plant_good_file(open, "kernel-swapped;", 50);
  setenv("AKX_CACHE_DIR", dir, 1);
  akx__jit_cache_reset_for_tests();
  program p = make_program("kernel-before-swap;", 100), q = make_program("kernel-swapped;", 100);
  get_checked(&p, ".so");
  /* The checked directory renamed away, a link to one anyone could write in its place. */
  cr_assert_eq(rename(dir, moved), 0);
  cr_assert_eq(symlink(open, dir), 0);
  get_checked(&q, ".so"); /* q's 100 bytes, not the 50 planted */
  expect_counters(2, 0, 0, 2, 0);
  cr_assert_eq(entries_in(moved), 2, "both files in the directory checked, wherever it is now");
  cr_assert_eq(entries_in(open), 1, "the open directory untouched");
}

Test(jit_cache, a_fifo_in_place_of_a_file_or_its_lock_does_not_hang) {
  program p = make_program("kernel-fifo;", 100), q = make_program("kernel-fifo-lock;", 100);
  char path[4096], other[4096], lock[4200];
  file_of(tmp, p.source, ".so", path, sizeof path);
  file_of(tmp, q.source, ".so", other, sizeof other);
  snprintf(lock, sizeof lock, "%s.lock", other);
  cr_assert_eq(mkfifo(path, 0600), 0);
  cr_assert_eq(mkfifo(lock, 0600), 0);
  get_checked(&p, ".so");
  expect_counters(1, 0, 0, 1, 1);
  struct stat st;
  cr_assert_eq(lstat(path, &st), 0);
  cr_assert(S_ISREG(st.st_mode) && st.st_size == HEADER + 100, "the store replaced the fifo");
  get_checked(&q, ".so");
  expect_counters(2, 0, 0, 2, 1); /* a lock file that is no file is not used, and no reject */
  cr_assert_eq(file_size(other), HEADER + 100);
  akx__jit_cache_reset_for_tests();
  get_checked(&p, ".so");
  get_checked(&q, ".so");
  expect_counters(0, 0, 2, 0, 0);
}

Test(jit_cache, a_directory_or_a_link_in_place_of_a_file_or_its_lock_is_not_used) {
  program p = make_program("kernel-dir;", 100), q = make_program("kernel-linked-lock;", 100);
  char path[4096], other[4096], lock[4200], outside[160];
  file_of(tmp, p.source, ".so", path, sizeof path);
  file_of(tmp, q.source, ".so", other, sizeof other);
  snprintf(lock, sizeof lock, "%s.lock", other);
  snprintf(outside, sizeof outside, "%s/outside", tmp);
  cr_assert_eq(mkdir(path, 0700), 0);
  cr_assert_eq(symlink(outside, lock), 0); /* dangling: following it would create outside */
  for (int process = 0; process < 2; ++process) {
    akx__jit_cache_reset_for_tests();
    get_checked(&p, ".so");
    get_checked(&q, ".so");
    /* The directory stays (a file cannot replace it): p is built in every process. */
    if (process == 0) expect_counters(2, 0, 0, 1, 1);
    else expect_counters(1, 0, 1, 0, 1);
  }
  struct stat st;
  cr_assert_eq(lstat(path, &st), 0);
  cr_assert(S_ISDIR(st.st_mode));
  cr_assert_eq(lstat(outside, &st), -1, "the lock's link was not followed");
  cr_assert_eq(file_size(other), HEADER + 100);
}

Test(jit_cache, a_file_others_could_have_written_is_rebuilt) {
  program p = make_program("kernel-shared;", 100);
  get_checked(&p, ".so");
  char path[4096];
  file_of(tmp, p.source, ".so", path, sizeof path);
  static const mode_t modes[] = {0666, 0620, 0602};
  for (int i = 0; i < 3; ++i) {
    cr_assert_eq(chmod(path, modes[i]), 0);
    akx__jit_cache_reset_for_tests();
    get_checked(&p, ".so");
    expect_counters(1, 0, 0, 1, 1);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_mode & 07777, 0600, "the rebuild replaced the mode %04o file", (unsigned)modes[i]);
  }
  if (geteuid() == 0) { /* only root can give a file to another user */
    cr_assert_eq(chown(path, 65534, 65534), 0);
    akx__jit_cache_reset_for_tests();
    get_checked(&p, ".so");
    expect_counters(1, 0, 0, 1, 1);
  }
  cr_assert_eq(atomic_load(&p.builds), geteuid() == 0 ? 5 : 4);
}

/* A peer process holding the build lock of p's file and then stopped (as under a debugger). */
static pid_t stopped_lock_holder(const char *lock) {
  int ready[2];
  cr_assert_eq(pipe(ready), 0);
  const pid_t pid = fork();
  cr_assert_geq(pid, 0, "fork");
  if (pid == 0) {
    /* Killed with this process, whatever way it ends (a stopped orphan would hold the lock and
     * the test runner's output pipe). */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1) _exit(3);
    const int fd = open(lock, O_RDWR | O_CREAT, 0600);
    struct flock l = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    const char ok = fd >= 0 && fcntl(fd, F_SETLK, &l) == 0;
    if (write(ready[1], &ok, 1) != 1) _exit(3);
    raise(SIGSTOP);
    _exit(0);
  }
  close(ready[1]);
  char ok = 0;
  cr_assert_eq(read(ready[0], &ok, 1), 1);
  close(ready[0]);
  cr_assert(ok, "the peer took the lock");
  int status = 0;
  cr_assert_eq(waitpid(pid, &status, WUNTRACED), pid);
  cr_assert(WIFSTOPPED(status), "the peer is stopped");
  return pid;
}

static double seconds_since(const struct timespec *t0) {
  struct timespec t1;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  return (double)(t1.tv_sec - t0->tv_sec) + (t1.tv_nsec - t0->tv_nsec) * 1e-9;
}

Test(jit_cache, a_stopped_builder_is_waited_for_a_bounded_time) {
  setenv("AKX_CACHE_LOCK_WAIT_MS", "300", 1);
  akx__jit_cache_reset_for_tests();
  program p = make_program("kernel-stopped-peer;", 100);
  char path[4096], lock[4200];
  file_of(tmp, p.source, ".so", path, sizeof path);
  snprintf(lock, sizeof lock, "%s.lock", path);
  const pid_t peer = stopped_lock_holder(lock);
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  get_checked(&p, ".so");
  const double waited = seconds_since(&t0);
  kill(peer, SIGKILL);
  waitpid(peer, NULL, 0);
  unsetenv("AKX_CACHE_LOCK_WAIT_MS");
  cr_assert(waited >= 0.29 && waited < 5.0, "waited %.2f s for a bound of 0.3 s", waited);
  cr_assert_eq(atomic_load(&p.builds), 1, "built alone once the wait ran out");
  expect_counters(1, 0, 0, 1, 0);
  akx__jit_counters c;
  akx__jit_cache_counters(&c);
  cr_assert_eq(c.lock_timeouts, 1, "the wait that ran out is counted");
  cr_assert_eq(file_size(path), HEADER + 100, "the file is written whole all the same");
}

/* The peer builds p itself, slowly; the caller waits for it and then reads its file. */
Test(jit_cache, a_builder_that_finishes_in_time_is_waited_for) {
  program p = make_program("kernel-slow-peer;", 100);
  const pid_t pid = fork();
  cr_assert_geq(pid, 0, "fork");
  if (pid == 0) {
    /* A new process: its own memory cache, and a build that takes 400 ms under the lock. */
    akx__jit_cache_reset_for_tests();
    p.build_sleep_ms = 400;
    const akx__jit_key k = key_of(p.source);
    void *handle = NULL;
    _exit(akx__jit_cache_get(&k, ".so", fake_build, fake_load, &p, &handle) == AKX_SUCCESS ? 0 : 1);
  }
  /* Wait until the peer holds the lock: F_GETLK on the lock file shows its pid. */
  char path[4096], lock[4200];
  file_of(tmp, p.source, ".so", path, sizeof path);
  snprintf(lock, sizeof lock, "%s.lock", path);
  for (int i = 0;; ++i) {
    cr_assert_lt(i, 5000, "the peer never took the lock");
    const int fd = open(lock, O_RDONLY | O_NOFOLLOW);
    if (fd >= 0) {
      struct flock l = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
      const int held = fcntl(fd, F_GETLK, &l) == 0 && l.l_type != F_UNLCK && l.l_pid == pid;
      close(fd);
      if (held) break;
    }
    sleep_ms(1);
  }
  get_checked(&p, ".so");
  int status = 0;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the peer built p");
  cr_assert_eq(atomic_load(&p.builds), 0, "this process waited and read the peer's file");
  expect_counters(0, 0, 1, 0, 0);
  akx__jit_counters c;
  akx__jit_cache_counters(&c);
  cr_assert_eq(c.lock_timeouts, 0);
}

Test(jit_cache, a_full_disk_writes_nothing_and_still_builds) {
  /* A file size limit makes every write past it fail (EFBIG), as a full disk would (ENOSPC). */
  signal(SIGXFSZ, SIG_IGN);
  struct rlimit old, small;
  cr_assert_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
  small = old;
  small.rlim_cur = HEADER + 10;
  cr_assert_eq(setrlimit(RLIMIT_FSIZE, &small), 0);
  program p = make_program("kernel-full-disk;", 1000);
  get_checked(&p, ".so");
  get_checked(&p, ".so");
  expect_counters(1, 1, 0, 0, 0);
  cr_assert_eq(entries_in(tmp), 0, "no temporary or lock file left behind");
  cr_assert_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
  akx__jit_cache_reset_for_tests();
  get_checked(&p, ".so");
  expect_counters(1, 0, 0, 1, 0);
}

Test(jit_cache, leftovers_of_killed_processes_are_swept) {
  program p = make_program("kernel-leftovers;", 100);
  const akx__jit_key k = key_of(p.source), other = key_of("kernel-another;");
  char hex[65], other_hex[65];
  akx__jit_key_hex(&k, hex);
  akx__jit_key_hex(&other, other_hex);
  enum { MADE = 6 };
  char made[MADE][4200];
  snprintf(made[0], sizeof made[0], "%s/.%s.so.a1B2c3", tmp, hex);         /* old temporary */
  snprintf(made[1], sizeof made[1], "%s/%s.cubin.lock", tmp, other_hex);   /* old lock */
  snprintf(made[2], sizeof made[2], "%s/.%s.so.d4E5f6", tmp, hex);         /* young temporary */
  snprintf(made[3], sizeof made[3], "%s/%s.ptx.lock", tmp, other_hex);     /* young lock */
  snprintf(made[4], sizeof made[4], "%s/notes.txt", tmp);                 /* not the cache's: */
  snprintf(made[5], sizeof made[5], "%s/.%s.so.lock", tmp, other_hex);     /* old, but no name */
  for (int i = 0; i < MADE; ++i) {
    FILE *f = fopen(made[i], "w");
    cr_assert(f, "%s", made[i]);
    fputs("half a file", f);
    fclose(f);
  }
  /* Left two days ago (by a killed writer or builder), or just now (maybe by a live one). */
  const struct timespec two_days_ago[2] = {{time(NULL) - 2 * 86400, 0}, {time(NULL) - 2 * 86400, 0}};
  for (int i = 0; i < MADE; ++i)
    if (i != 2 && i != 3) cr_assert_eq(utimensat(AT_FDCWD, made[i], two_days_ago, 0), 0);
  get_checked(&p, ".so");
  expect_counters(1, 0, 0, 1, 0);
  cr_assert_eq(file_size(made[0]), -1, "the old temporary is gone");
  cr_assert_eq(file_size(made[1]), -1, "the old lock file is gone");
  for (int i = 2; i < MADE; ++i) cr_assert_eq(file_size(made[i]), 11, "%s is kept", made[i]);
  cr_assert_eq(entries_in(tmp), 5, "the new file and the four kept");
}

/* Makes dir/name, a directory, with a file and a directory holding a file inside. */
static void make_build_dir_at(const char *dir, const char *name, char *path, size_t cap) {
  snprintf(path, cap, "%s/%s", dir, name);
  cr_assert_eq(mkdir(path, 0700), 0, "mkdir %s", path);
  char inner[4400];
  snprintf(inner, sizeof inner, "%s/unit.cpp", path);
  FILE *f = fopen(inner, "w");
  cr_assert(f, "%s", inner);
  fputs("half a unit", f);
  fclose(f);
  snprintf(inner, sizeof inner, "%s/include", path);
  cr_assert_eq(mkdir(inner, 0700), 0);
  snprintf(inner, sizeof inner, "%s/include/akx.cuh", path);
  f = fopen(inner, "w");
  cr_assert(f, "%s", inner);
  fclose(f);
}

static void age(const char *path, int flags) {
  const struct timespec two_days_ago[2] = {{time(NULL) - 2 * 86400, 0}, {time(NULL) - 2 * 86400, 0}};
  cr_assert_eq(utimensat(AT_FDCWD, path, two_days_ago, flags), 0, "utimensat %s", path);
}

/* A sim compile's private directory (src/jit/sim_module.cpp: akx-build.XXXXXX in the cache's
 * directory) outlives a builder killed with SIGKILL; the next writer removes it once it is older
 * than the lock wait and no live builder holds its flock (src/jit/cache.c, sweep_leftovers). A
 * live builder's (old but locked by a child process) and a young one are kept, and so are what
 * only looks like one: a file of that name, a symlink to a directory (not followed: its target
 * keeps its file), a directory this user may not read; none of them fails the call. Then the
 * builder is killed, and the next process's writer removes its directory. */
Test(jit_cache, build_directories_of_killed_builders_are_removed) {
  char dead[4200], live[4200], young[4200], locked_out[4200], file[4200], link[4200], outside[4200],
      outside_file[4400], dead_inner[4400];
  make_build_dir_at(tmp, "akx-build.Dead01", dead, sizeof dead);
  make_build_dir_at(tmp, "akx-build.Live01", live, sizeof live);
  make_build_dir_at(tmp, "akx-build.Young1", young, sizeof young);
  make_build_dir_at(tmp, "akx-build.NoPerm", locked_out, sizeof locked_out);
  snprintf(dead_inner, sizeof dead_inner, "%s/include", dead);
  age(dead_inner, 0);
  snprintf(file, sizeof file, "%s/akx-build.File01", tmp);
  FILE *f = fopen(file, "w");
  cr_assert(f);
  fclose(f);
  snprintf(outside, sizeof outside, "%s-outside", tmp);
  cr_assert_eq(mkdir(outside, 0700), 0);
  snprintf(outside_file, sizeof outside_file, "%s/keep.txt", outside);
  f = fopen(outside_file, "w");
  cr_assert(f);
  fclose(f);
  age(outside, 0);
  snprintf(link, sizeof link, "%s/akx-build.Link01", tmp);
  cr_assert_eq(symlink(outside, link), 0);
  /* A live builder: a process that holds a shared flock on its directory, as a compile does. */
  int ready[2];
  cr_assert_eq(pipe(ready), 0);
  const pid_t builder = fork();
  cr_assert(builder >= 0);
  if (builder == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* gone with the test, should an assertion end it first */
    const int fd = open(live, O_RDONLY | O_DIRECTORY);
    if (fd < 0 || flock(fd, LOCK_SH) != 0) _exit(1);
    if (write(ready[1], "x", 1) != 1) _exit(1);
    for (;;) pause();
  }
  char x;
  cr_assert_eq(read(ready[0], &x, 1), 1, "the builder holds its lock");
  close(ready[0]);
  close(ready[1]);
  const char *const old[] = {dead, live, locked_out, file};
  for (int i = 0; i < 4; ++i) age(old[i], 0);
  age(link, AT_SYMLINK_NOFOLLOW);
  cr_assert_eq(chmod(locked_out, 0), 0);
  /* root reads it all the same: then it is one more dead builder's directory. */
  const int readable = access(locked_out, R_OK | X_OK) == 0;

  program p = make_program("kernel-build-dirs;", 100);
  get_checked(&p, ".so");
  expect_counters(1, 0, 0, 1, 0);
  struct stat st;
  cr_expect_neq(lstat(dead, &st), 0, "the dead builder's directory is gone");
  cr_expect_eq(stat(live, &st), 0, "the live builder's directory is kept");
  cr_expect_eq(stat(young, &st), 0, "a young directory is kept");
  if (readable) cr_expect_neq(lstat(locked_out, &st), 0, "an old directory root may read is gone");
  else cr_expect_eq(lstat(locked_out, &st), 0, "a directory this user may not read is kept");
  cr_expect_eq(file_size(file), 0, "a file named like a build directory is kept");
  cr_expect(lstat(link, &st) == 0 && S_ISLNK(st.st_mode), "the symlink is kept");
  cr_expect_eq(file_size(outside_file), 0, "the symlink's target is not followed");

  /* The builder killed mid-compile: the next process's first writer removes its directory. */
  kill(builder, SIGKILL);
  waitpid(builder, NULL, 0);
  akx__jit_cache_reset_for_tests();
  program q = make_program("kernel-build-dirs-2;", 100);
  get_checked(&q, ".so");
  cr_expect_neq(lstat(live, &st), 0, "the killed builder's directory is gone");
  cr_expect_eq(stat(young, &st), 0, "a young directory is still kept");
  if (!readable) cr_assert_eq(chmod(locked_out, 0700), 0);
  tfx_remove_tree(outside);
}

Test(jit_cache, a_directory_inside_one_others_can_write_is_not_used) {
  char open[128], group[128], sticky[128], dir[200];
  snprintf(open, sizeof open, "%s/open", tmp);
  snprintf(group, sizeof group, "%s/group", tmp);
  snprintf(sticky, sizeof sticky, "%s/sticky", tmp);
  static const struct { const char *name; mode_t mode; } made[] = {
      {"open", 0777}, {"group", 0770}, {"group/private", 0700}, {"sticky", 01777}};
  for (int i = 0; i < 4; ++i) {
    char path[200];
    snprintf(path, sizeof path, "%s/%s", tmp, made[i].name);
    cr_assert_eq(mkdir(path, 0700), 0);
    cr_assert_eq(chmod(path, made[i].mode), 0);
  }
  /* The parent others can write (they could rename the cache away and put their own there). */
  snprintf(dir, sizeof dir, "%s/cache", open);
  expect_skipped(dir, "writable by its group or others");
  cr_assert(strstr(akx__jit_cache_note(), "0777"), "%s", akx__jit_cache_note());
  cr_assert_eq(entries_in(dir), 0);
  /* Two levels up. */
  snprintf(dir, sizeof dir, "%s/private/cache", group);
  expect_skipped(dir, "writable by its group or others");
  cr_assert(strstr(akx__jit_cache_note(), "0770"), "%s", akx__jit_cache_note());
  /* A link to the open directory: the name checked is where it leads. */
  char link[128];
  snprintf(link, sizeof link, "%s/to-open", tmp);
  cr_assert_eq(symlink(open, link), 0);
  snprintf(dir, sizeof dir, "%s/cache", link);
  expect_skipped(dir, "writable by its group or others");
  cr_assert(strstr(akx__jit_cache_note(), open), "%s", akx__jit_cache_note());
  /* A sticky directory (as /tmp): others cannot rename what is ours in it. */
  snprintf(dir, sizeof dir, "%s/cache", sticky);
  setenv("AKX_CACHE_DIR", dir, 1);
  akx__jit_cache_reset_for_tests();
  program p = make_program("kernel-in-sticky;", 100);
  get_checked(&p, ".so");
  cr_assert_str_eq(akx__jit_cache_note(), "");
  cr_assert_str_eq(akx__jit_cache_dir(), dir);
  cr_assert_eq(entries_in(dir), 1);
}

Test(jit_cache, a_directory_inside_one_of_another_user_is_not_used) {
  if (geteuid() != 0) cr_skip("only root can give a directory to another user (uid 65534)");
  char theirs[128], sticky[128], dir[200];
  snprintf(theirs, sizeof theirs, "%s/theirs", tmp);
  snprintf(sticky, sizeof sticky, "%s/their-sticky", tmp);
  cr_assert_eq(mkdir(theirs, 0755), 0);
  cr_assert_eq(chown(theirs, 65534, 65534), 0);
  cr_assert_eq(mkdir(sticky, 0700), 0);
  cr_assert_eq(chown(sticky, 65534, 65534), 0);
  cr_assert_eq(chmod(sticky, 01777), 0);
  /* Made here, as the user would have made it: only the parent is another user's. */
  snprintf(dir, sizeof dir, "%s/cache", theirs);
  cr_assert_eq(mkdir(dir, 0700), 0);
  expect_skipped(dir, "owned by uid 65534");
  /* A sticky directory's owner may still rename what others keep in it. */
  snprintf(dir, sizeof dir, "%s/cache", sticky);
  expect_skipped(dir, "owned by uid 65534");
  /* A sticky directory holding another user's directory on the way down. */
  char their_sub[128];
  snprintf(their_sub, sizeof their_sub, "%s/sticky", tmp);
  cr_assert_eq(mkdir(their_sub, 0700), 0);
  cr_assert_eq(chmod(their_sub, 01777), 0);
  snprintf(their_sub, sizeof their_sub, "%s/sticky/sub", tmp);
  cr_assert_eq(mkdir(their_sub, 0755), 0);
  cr_assert_eq(chown(their_sub, 65534, 65534), 0);
  snprintf(dir, sizeof dir, "%s/cache", their_sub);
  cr_assert_eq(mkdir(dir, 0700), 0);
  expect_skipped(dir, "owned by uid 65534");
}

/* ---- threads ------------------------------------------------------------------------------- */

enum { RACERS = 8 };

typedef struct {
  program *p;
  pthread_barrier_t *start;
  atomic_int *arrived;
  akx_status status;
  void *handle;
  char error[256];
} racer;

static void *race(void *arg) {
  racer *r = arg;
  const akx__jit_key k = key_of(r->p->source);
  pthread_barrier_wait(r->start);
  atomic_fetch_add(r->arrived, 1);
  r->status = akx__jit_cache_get(&k, ".so", fake_build, fake_load, r->p, &r->handle);
  snprintf(r->error, sizeof r->error, "%s", r->status == AKX_SUCCESS ? "" : akx_last_error());
  return NULL;
}

/* RACERS threads ask for one key at once; the build waits until every thread has arrived (and
 * 50 ms more), so that all of them find the entry being built. */
static void run_race(program *p, racer *racers) {
  pthread_barrier_t start;
  atomic_int arrived = 0;
  pthread_barrier_init(&start, NULL, RACERS);
  p->arrived = &arrived;
  p->expected = RACERS;
  p->build_sleep_ms = 50;
  pthread_t threads[RACERS];
  for (int i = 0; i < RACERS; ++i) {
    racers[i] = (racer){.p = p, .start = &start, .arrived = &arrived};
    cr_assert_eq(pthread_create(&threads[i], NULL, race, &racers[i]), 0);
  }
  for (int i = 0; i < RACERS; ++i) pthread_join(threads[i], NULL);
  pthread_barrier_destroy(&start);
  p->arrived = NULL;
}

Test(jit_cache, racing_threads_build_once) {
  program p = make_program("kernel-race;", 5000);
  racer racers[RACERS];
  run_race(&p, racers);
  cr_assert_eq(atomic_load(&p.builds), 1);
  cr_assert_eq(atomic_load(&p.loads), 1);
  for (int i = 0; i < RACERS; ++i) {
    cr_assert_eq(racers[i].status, AKX_SUCCESS, "thread %d: %s", i, racers[i].error);
    cr_assert_eq(racers[i].handle, racers[0].handle, "thread %d has the one handle", i);
  }
  expect_counters(1, RACERS - 1, 0, 1, 0);
  cr_assert_eq(entries_in(tmp), 1);
}

Test(jit_cache, racing_threads_share_a_failure) {
  program p = make_program("kernel-broken-race;", 100);
  p.build_status = AKX_ERROR_UNSUPPORTED;
  racer racers[RACERS];
  run_race(&p, racers);
  cr_assert_eq(atomic_load(&p.builds), 1, "the waiters get the builder's failure, not a build");
  for (int i = 0; i < RACERS; ++i) {
    cr_assert_eq(racers[i].status, AKX_ERROR_UNSUPPORTED, "thread %d", i);
    cr_assert_null(racers[i].handle);
    cr_assert_str_eq(racers[i].error, "fake compiler: kernel-broken-race; does not compile",
                     "thread %d's own akx_last_error()", i);
  }
  expect_counters(1, 0, 0, 0, 0); /* a shared failure is no memory hit */
  p.build_status = AKX_SUCCESS;
  get_checked(&p, ".so");
  cr_assert_eq(atomic_load(&p.builds), 2, "after the failure, a new call builds");
}

typedef struct {
  program *p;
  akx_status status;
} builder;

static void *build_slow(void *arg) {
  builder *b = arg;
  const akx__jit_key k = key_of(b->p->source);
  void *handle = NULL;
  b->status = akx__jit_cache_get(&k, ".so", fake_build, fake_load, b->p, &handle);
  return NULL;
}

Test(jit_cache, one_build_does_not_hold_up_another_key) {
  atomic_int release = 0;
  program slow = make_program("kernel-slow;", 100), quick = make_program("kernel-quick;", 100);
  slow.release = &release;
  builder b = {&slow, AKX_ERROR_INTERNAL};
  pthread_t t;
  cr_assert_eq(pthread_create(&t, NULL, build_slow, &b), 0);
  while (atomic_load(&slow.builds) == 0) sleep_ms(1);
  /* slow's build waits (10 s at most) for this call to finish: a lock held across builds
   * would make this call wait those 10 s. */
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  get_checked(&quick, ".so");
  clock_gettime(CLOCK_MONOTONIC, &t1);
  atomic_store(&release, 1);
  pthread_join(t, NULL);
  const double seconds = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
  cr_assert_lt(seconds, 5.0, "the other key's get took %.1f s", seconds);
  cr_assert_eq(b.status, AKX_SUCCESS);
  cr_assert_eq(atomic_load(&slow.loads), 1);
  expect_counters(2, 0, 0, 2, 0);
}

/* ---- the table of run-time entries (src/jit/entries.h) --------------------------------------- */

static akx__entry_key ekey(int32_t target, int32_t family, int32_t src, int32_t dst, int32_t acc, int32_t op) {
  akx__entry_key k = {target, family, src, dst, acc, op};
  return k;
}

/* Each field of the key tells entries apart; the first entry recorded for a key is kept; a
 * table grown well past its first size finds every entry again; a hit is a memory hit; a reset
 * forgets everything, as a new process would. */
Test(jit_entries, keys_first_entry_growth_hits_and_reset, .init = setup, .fini = teardown) {
  static char marks[600];
  const akx__entry_key base = ekey(0, 2, 11, 12, 12, 0);
  cr_assert_null(akx__entry_find(&base), "an empty table finds nothing");
  cr_assert_eq(akx__entry_put(&base, &marks[0]), &marks[0]);
  cr_assert_eq(akx__entry_put(&base, &marks[1]), &marks[0], "the first entry recorded for a key wins");
  /* A key that differs from base in one field only is another entry. */
  const akx__entry_key one_off[6] = {ekey(90, 2, 11, 12, 12, 0), ekey(0, 1, 11, 12, 12, 0), ekey(0, 2, 12, 12, 12, 0),
                                     ekey(0, 2, 11, -1, 12, 0),  ekey(0, 2, 11, 12, 7, 0),  ekey(0, 2, 11, 12, 12, 1024)};
  for (int i = 0; i < 6; ++i) {
    cr_assert_null(akx__entry_find(&one_off[i]), "field %d", i);
    cr_assert_eq(akx__entry_put(&one_off[i], &marks[2 + i]), &marks[2 + i]);
  }
  /* 500 more: the table doubles several times past its first 64 slots. */
  for (int i = 0; i < 500; ++i) {
    const akx__entry_key k = ekey(80 + i % 7, i % 4, i % 15, i / 60, -1, 1024 + i);
    cr_assert_eq(akx__entry_put(&k, &marks[100 + i]), &marks[100 + i]);
  }
  akx__jit_counters before, after;
  akx__jit_cache_counters(&before);
  cr_assert_eq(akx__entry_find(&base), &marks[0]);
  for (int i = 0; i < 6; ++i) cr_assert_eq(akx__entry_find(&one_off[i]), &marks[2 + i], "field %d", i);
  for (int i = 0; i < 500; ++i) {
    const akx__entry_key k = ekey(80 + i % 7, i % 4, i % 15, i / 60, -1, 1024 + i);
    cr_assert_eq(akx__entry_find(&k), &marks[100 + i], "entry %d after growth", i);
  }
  akx__jit_cache_counters(&after);
  cr_assert_eq(after.memory_hits - before.memory_hits, 507, "every hit counted: %llu",
               (unsigned long long)(after.memory_hits - before.memory_hits));
  cr_assert_eq(after.compiles, before.compiles);
  akx__jit_cache_reset_for_tests();
  cr_assert_null(akx__entry_find(&base), "a reset forgets the entries");
  cr_assert_null(akx__entry_put(&base, NULL), "NULL is no entry");
  cr_assert_null(akx__entry_find(&base));
}
