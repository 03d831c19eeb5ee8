/* Where the sim writes while it compiles and loads a run-time kernel (src/jit/sim_module.h):
 * - with the disk cache off, in $TMPDIR: the compiler runs there (its own temporary files too),
 *   and nothing is left there after a compile that works or one that fails;
 * - with the disk cache on, in the cache's directory: $TMPDIR stays empty and the cache holds
 *   only its files afterwards;
 * - a $TMPDIR that does not exist is passed over for /tmp, and kernels still compile.
 * The compiler is a wrapper script (AKX_SIM_CXX) that notes its directory and $TMPDIR, then runs
 * the real one. Each test runs in its own process (Criterion), so the sim reads AKX_SIM_CXX,
 * TMPDIR and AKX_CACHE_DIR afresh. */
#define _XOPEN_SOURCE 700 /* mkdtemp, setenv */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tree.h"
#include "akx.h"

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

/* A source no other test compiles (so no cache has it), correct or broken. */
static akx_status create_op(int broken) {
  char source[256];
  snprintf(source, sizeof source,
           "AKX_HD double scratch_add(double a, double b) { return a + b%s; }\n"
           "AKX_HD double scratch_zero() { return 0.0; } // %s %d\n",
           broken ? " +* " : "", root, (int)getpid());
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
