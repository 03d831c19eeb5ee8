/* Where the sim writes while it compiles and loads a run-time kernel (src/jit/sim_module.h):
 * - with the disk cache off, in $TMPDIR: the compiler runs there (its own temporary files too),
 *   and nothing is left there after a compile that works or one that fails;
 * - with the disk cache on, in the cache's directory: $TMPDIR stays empty and the cache holds
 *   only its files afterwards;
 * - a $TMPDIR that does not exist is passed over for /tmp, and kernels still compile;
 * - the precompiled prelude (src/jit/sim_module.cpp): built once per machine as a build aid of
 *   the kernel cache, every later unit compiled from it; a compiler that cannot precompile still
 *   compiles (the prelude is not tried again in the process); a corrupt prelude file is built
 *   again.
 * The compiler is a wrapper script (AKX_SIM_CXX) that notes its directory and $TMPDIR, then runs
 * the real one. Each test runs in its own process (Criterion), so the sim reads AKX_SIM_CXX,
 * TMPDIR and AKX_CACHE_DIR afresh. */
#define _XOPEN_SOURCE 700 /* mkdtemp, setenv, popen */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tree.h"
#include "akx.h"
#include "src/jit/cache.h"

static char root[64], tmpdir[128], cache[128], note[160];

/* root/ holds the wrapper, its notes, a fresh TMPDIR and a fresh cache directory. */
static void setup(void) {
  strcpy(root, "/tmp/akx-sim-scratch-XXXXXX");
  cr_assert(mkdtemp(root), "mkdtemp");
  snprintf(tmpdir, sizeof tmpdir, "%s/tmp", root);
  snprintf(cache, sizeof cache, "%s/cache", root);
  snprintf(note, sizeof note, "%s/compiler-notes", root);
  cr_assert_eq(mkdir(tmpdir, 0700), 0);
  cr_assert_eq(mkdir(cache, 0700), 0);
  char wrapper[160];
  snprintf(wrapper, sizeof wrapper, "%s/cxx", root);
  FILE *f = fopen(wrapper, "w");
  cr_assert(f);
  fprintf(f, "#!/bin/sh\nif [ \"$1\" != --version ]; then echo \"$PWD $TMPDIR\" >> '%s'; fi\nexec '%s' \"$@\"\n", note,
          AKX_TEST_CXX);
  fclose(f);
  chmod(wrapper, 0700);
  setenv("AKX_SIM_CXX", wrapper, 1);
  setenv("TMPDIR", tmpdir, 1);
}
static void teardown(void) { tfx_remove_tree(root); }
TestSuite(sim_scratch, .init = setup, .fini = teardown, .timeout = 300);

/* A source no other test compiles (so no cache has it, nor an earlier call), correct or
 * broken. */
static akx_status create_op(int broken) {
  static int calls;
  char source[256];
  snprintf(source, sizeof source,
           "AKX_HD double scratch_add(double a, double b) { return a + b%s; }\n"
           "AKX_HD double scratch_zero() { return 0.0; } // %s %d %d\n",
           broken ? " +* " : "", root, (int)getpid(), calls++);
  const akx_user_op_desc d = {source, "double", "scratch_add", "scratch_zero", NULL, NULL};
  akx_context *ctx = NULL;
  cr_assert_eq(akx_context_create(&ctx, AKX_BACKEND_AUTO, 0), AKX_SUCCESS, "%s", akx_last_error());
  if (akx_context_backend(ctx) != AKX_BACKEND_SIM) {
    akx_context_destroy(ctx);
    cr_skip("the sim's compiler");
  }
  akx_op op;
  akx_status st = akx_user_op_create(ctx, &d, &op);
  if (st == AKX_SUCCESS) {
    /* A call too: the kernels' unit is compiled and loaded. */
    enum { N = 100 };
    double host[N], got = -1;
    for (int k = 0; k < N; ++k) host[k] = k;
    void *dev = NULL;
    cr_assert_eq(akx_malloc(ctx, &dev, sizeof host), AKX_SUCCESS);
    cr_assert_eq(akx_memcpy(ctx, dev, host, sizeof host, AKX_COPY_HOST_TO_DEVICE), AKX_SUCCESS);
    const akx_array v = akx_vector(dev, AKX_FLOAT64, N);
    st = akx_mapreduce(ctx, &v, AKX_MAP_IDENTITY, op, NULL, &got, AKX_HOST);
    cr_assert_eq(st, AKX_SUCCESS, "%s", akx_last_error());
    cr_assert_eq(got, N * (N - 1) / 2.0);
    akx_free(ctx, dev);
  }
  akx_context_destroy(ctx);
  return st;
}

/* The entries of dir, one name a line into out ("" when empty). */
static int entries(const char *dir, char *out, size_t cap) {
  DIR *d = opendir(dir);
  cr_assert(d, "opendir %s", dir);
  int n = 0;
  out[0] = '\0';
  for (const struct dirent *e; (e = readdir(d));) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    ++n;
    strncat(out, e->d_name, cap - strlen(out) - 2);
    strcat(out, "\n");
  }
  closedir(d);
  return n;
}

/* Every compile the wrapper ran: in a directory under `under`, with TMPDIR that directory. */
static int compiles_ran_under(const char *under) {
  FILE *f = fopen(note, "r");
  cr_assert(f, "the wrapper compiler ran");
  char pwd[512], tmp[512];
  int n = 0;
  while (fscanf(f, "%511s %511s", pwd, tmp) == 2) {
    cr_assert(strncmp(pwd, under, strlen(under)) == 0 && pwd[strlen(under)] == '/',
              "the compiler ran in %s, not under %s", pwd, under);
    cr_assert_str_eq(tmp, pwd, "the compiler's TMPDIR is its build directory");
    ++n;
  }
  fclose(f);
  return n;
}

Test(sim_scratch, without_the_disk_cache_a_compile_uses_tmpdir_and_leaves_nothing) {
  setenv("AKX_CACHE_DIR", "off", 1);
  cr_assert_eq(create_op(0), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_geq(compiles_ran_under(tmpdir), 2, "the probe and the kernels' unit");
  char left[2048];
  cr_assert_eq(entries(tmpdir, left, sizeof left), 0, "left in TMPDIR after a compile:\n%s", left);
}

Test(sim_scratch, a_failed_compile_leaves_nothing) {
  setenv("AKX_CACHE_DIR", "off", 1);
  cr_assert_eq(create_op(1), AKX_ERROR_INVALID_ARGUMENT, "%s", akx_last_error());
  cr_assert_eq(compiles_ran_under(tmpdir), 1);
  char left[2048];
  cr_assert_eq(entries(tmpdir, left, sizeof left), 0, "left in TMPDIR after a failed compile:\n%s", left);
}

Test(sim_scratch, with_the_disk_cache_a_compile_uses_its_directory) {
  setenv("AKX_CACHE_DIR", cache, 1);
  cr_assert_eq(create_op(0), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(create_op(1), AKX_ERROR_INVALID_ARGUMENT, "%s", akx_last_error());
  cr_assert_geq(compiles_ran_under(cache), 3);
  char left[4096];
  cr_assert_eq(entries(tmpdir, left, sizeof left), 0, "TMPDIR was written:\n%s", left);
  /* Only the cache's own files: 64 hex digits and a kind. */
  const int n = entries(cache, left, sizeof left);
  cr_assert_gt(n, 0);
  for (const char *line = left; *line; line = strchr(line, '\n') + 1)
    cr_assert(strspn(line, "0123456789abcdef") == 64 && line[64] == '.', "not a cache file: %.*s",
              (int)(strchr(line, '\n') - line), line);
}

Test(sim_scratch, a_tmpdir_that_does_not_exist_is_passed_over_for_tmp) {
  setenv("AKX_CACHE_DIR", "off", 1);
  char missing[160];
  snprintf(missing, sizeof missing, "%s/no-such-dir", root);
  setenv("TMPDIR", missing, 1);
  cr_assert_eq(create_op(0), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_geq(compiles_ran_under("/tmp"), 2);
}

/* The compiler behind a wrapper that notes, a line per run: "prelude" (a precompile), "from"
 * (a unit told to include a header whose precompiled file lies beside it), "without" (told to,
 * with no such file) or "plain" (not told to). refuse: PRECOMPILE, the precompile fails, as a
 * compiler without precompiled headers would; FROM, every unit told to include the prelude
 * fails, as clang's units do from a file precompiled in another directory. */
enum refuse { NOTHING, PRECOMPILE, FROM };
static void prelude_wrapper(enum refuse refuse) {
  char wrapper[160];
  snprintf(wrapper, sizeof wrapper, "%s/cxx-prelude", root);
  FILE *f = fopen(wrapper, "w");
  cr_assert(f);
  fprintf(f,
          "#!/bin/sh\n"
          "[ \"$1\" = --version ] && exec '%s' \"$@\"\n"
          "pre=; prev=; header=0\n"
          "for a in \"$@\"; do [ \"$prev\" = -include ] && pre=\"$a\"; [ \"$a\" = c++-header ] && header=1; prev=\"$a\"; done\n"
          "if [ $header = 1 ]; then echo prelude >> '%s'; [ %d = 1 ] && exit 1\n"
          "elif [ -z \"$pre\" ]; then echo plain >> '%s'\n"
          "elif [ -f \"$pre.gch\" ]; then echo from >> '%s'; [ %d = 1 ] && exit 1\n"
          "else echo without >> '%s'; fi\n"
          "exec '%s' \"$@\"\n",
          AKX_TEST_CXX, note, refuse == PRECOMPILE, note, note, refuse == FROM, note, AKX_TEST_CXX);
  fclose(f);
  chmod(wrapper, 0700);
  setenv("AKX_SIM_CXX", wrapper, 1);
}

/* Whether the compiler is clang, whose units compile without the prelude (sim_module.cpp reads
 * its --version the same way). */
static int cxx_is_clang(void) {
  FILE *p = popen("'" AKX_TEST_CXX "' --version", "r");
  cr_assert(p, "popen");
  char line[256] = "";
  const int found = fgets(line, sizeof line, p) && strstr(line, "clang");
  pclose(p);
  return found;
}

/* How many of the wrapper's notes are `what`. */
static int noted(const char *what) {
  FILE *f = fopen(note, "r");
  if (!f) return 0;
  char line[64];
  int n = 0;
  while (fscanf(f, "%63s", line) == 1) n += strcmp(line, what) == 0;
  fclose(f);
  return n;
}

/* The cache's files whose names end in `kind`. */
static int files_of_kind(const char *kind, char *last, size_t cap) {
  DIR *d = opendir(cache);
  cr_assert(d);
  int n = 0;
  for (const struct dirent *e; (e = readdir(d));) {
    const size_t len = strlen(e->d_name), k = strlen(kind);
    if (len > k && strcmp(e->d_name + len - k, kind) == 0) {
      ++n;
      snprintf(last, cap, "%s/%s", cache, e->d_name);
    }
  }
  closedir(d);
  return n;
}

/* NVRTC's checks of a user op (src/jit/user_op.c), kernel-cache compiles where NVRTC loads. */
static int nvrtc_checks(void) {
  char last[512];
  return files_of_kind(".nvchk", last, sizeof last);
}

static int prelude_files(char *last, size_t cap) {
  return files_of_kind(".gch", last, cap);
}

Test(sim_scratch, with_the_disk_cache_units_compile_from_one_precompiled_prelude) {
  setenv("AKX_CACHE_DIR", cache, 1);
  prelude_wrapper(NOTHING);
  cr_assert_eq(create_op(0), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(create_op(0), AKX_SUCCESS, "%s", akx_last_error());
  if (cxx_is_clang()) {
    cr_assert_eq(noted("prelude") + noted("from") + noted("without"), 0, "clang: no prelude");
    cr_assert_eq(noted("plain"), 4);
    return;
  }
  cr_assert_eq(noted("prelude"), 1, "the prelude is precompiled once");
  cr_assert_eq(noted("from"), 4, "both ops' probes and kernels' units compile from it");
  cr_assert_eq(noted("plain") + noted("without"), 0);
  char file[512];
  cr_assert_eq(prelude_files(file, sizeof file), 1, "one precompiled prelude in the cache");
  akx__jit_counters aid, kernels;
  akx__jit_cache_aid_counters(&aid);
  akx__jit_cache_counters(&kernels);
  cr_assert_eq(aid.compiles, 1);
  cr_assert_eq(aid.disk_writes, 1);
  cr_assert_eq(aid.memory_hits, 3);
  cr_assert_eq(kernels.compiles, (uint64_t)(4 + nvrtc_checks()), "the aid is counted with the kernels: %llu compiles",
               (unsigned long long)kernels.compiles);
  /* A new process: the prelude comes from the disk. */
  akx__jit_cache_reset_for_tests();
  cr_assert_eq(create_op(0), AKX_SUCCESS, "%s", akx_last_error());
  akx__jit_cache_aid_counters(&aid);
  cr_assert_eq(aid.compiles, 0);
  cr_assert_eq(aid.disk_hits, 1);
  cr_assert_eq(noted("prelude"), 1);
  cr_assert_eq(noted("from"), 6);
}

Test(sim_scratch, a_compiler_that_cannot_precompile_still_compiles) {
  setenv("AKX_CACHE_DIR", cache, 1);
  prelude_wrapper(PRECOMPILE);
  cr_assert_eq(create_op(0), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(create_op(0), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(create_op(1), AKX_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(akx_last_error(), "precompile") == NULL, "the user's refusal is about the prelude: %s",
            akx_last_error());
  cr_assert_eq(noted("prelude"), cxx_is_clang() ? 0 : 1, "a refused precompile is not tried again in the process");
  cr_assert_eq(noted("plain"), 5);
  cr_assert_eq(noted("from") + noted("without"), 0);
  char file[512];
  cr_assert_eq(prelude_files(file, sizeof file), 0);
  akx__jit_counters aid;
  akx__jit_cache_aid_counters(&aid);
  cr_assert_eq(aid.compiles, (uint64_t)(cxx_is_clang() ? 0 : 1));
  cr_assert_eq(aid.disk_writes, 0);
}

Test(sim_scratch, a_corrupt_precompiled_prelude_is_built_again) {
  if (cxx_is_clang()) cr_skip("clang compiles without the prelude");
  setenv("AKX_CACHE_DIR", cache, 1);
  prelude_wrapper(NOTHING);
  cr_assert_eq(create_op(0), AKX_SUCCESS, "%s", akx_last_error());
  char file[512];
  cr_assert_eq(prelude_files(file, sizeof file), 1);
  /* One byte of the payload, after the 88-byte header (src/jit/cache.h). */
  FILE *f = fopen(file, "r+b");
  cr_assert(f);
  cr_assert_eq(fseek(f, 88 + 4096, SEEK_SET), 0);
  const int c = fgetc(f);
  cr_assert_eq(fseek(f, 88 + 4096, SEEK_SET), 0);
  fputc(c ^ 0x5a, f);
  fclose(f);
  akx__jit_cache_reset_for_tests();
  cr_assert_eq(create_op(0), AKX_SUCCESS, "%s", akx_last_error());
  akx__jit_counters aid;
  akx__jit_cache_aid_counters(&aid);
  cr_assert_eq(aid.disk_rejects, 1);
  cr_assert_eq(aid.compiles, 1);
  cr_assert_eq(noted("prelude"), 2);
  cr_assert_eq(noted("without") + noted("plain"), 0);
}

Test(sim_scratch, a_compiler_whose_units_fail_from_the_prelude_compiles_them_without_it) {
  if (cxx_is_clang()) cr_skip("clang compiles without the prelude");
  setenv("AKX_CACHE_DIR", cache, 1);
  prelude_wrapper(FROM);
  cr_assert_eq(create_op(0), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(create_op(0), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(create_op(1), AKX_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(akx_last_error(), "expected") != NULL, "the user's error, as without the prelude: %s",
            akx_last_error());
  cr_assert_eq(noted("prelude"), 1);
  cr_assert_eq(noted("from"), 1, "the process's later units go without the prelude");
  cr_assert_eq(noted("plain"), 5, "the failed unit again, and the four after it");
}
