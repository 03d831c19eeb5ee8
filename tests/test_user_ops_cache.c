/* The run-time kernel cache behind user ops, through the public API (akx_user_op_create,
 * akx_kernel_cache_counters):
 * - the same desc created again in a new context compiles nothing (memory hits);
 * - a new process finds the files on disk (disk hits, no compile);
 * - truncated files are compiled again, and the results are still right;
 * - a directory others can write is not used (nothing written there), results still right;
 * - a relative AKX_CACHE_DIR stays the directory of the first use after a chdir: an open
 *   directory of the same name under the new working directory is never read;
 * - two threads creating the same op at once compile it once; so do two processes (a lock file
 *   beside each file being built, gone once it is written).
 * Each test points AKX_CACHE_DIR at a fresh mkdtemp directory before any context exists. "A
 * new process" is a fork() of a test process that has not touched libakx (Criterion runs each
 * test in its own process): the child starts with an empty memory cache and reports back
 * through a pipe. */
#define _XOPEN_SOURCE 700 /* mkdtemp, nftw, pthread_barrier_t */
#include <criterion/criterion.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tree.h"
#include "akx.h"
#include "akx_layer.h"

TestSuite(user_ops_cache, .timeout = 600);

/* ---- the workload: one user op, created and used, checked ------------------------------------ */

static const char SOURCE[] =
    "AKX_HD double c_add(double a, double b) { return a + b; }\n"
    "AKX_HD double c_zero() { return 0.0; }\n"
    "template <class S> AKX_HD double c_map(S x, int64_t) { return (double)x * (double)x + 1.0; }\n";

/* The op's source: SOURCE, or SOURCE and a comment (another key, another set of files). */
static const char *op_source = SOURCE;
static const char OTHER_SOURCE[] =
    "AKX_HD double c_add(double a, double b) { return a + b; }\n"
    "AKX_HD double c_zero() { return 0.0; }\n"
    "template <class S> AKX_HD double c_map(S x, int64_t) { return (double)x * (double)x + 1.0; }\n"
    "// the same op in other words\n";

static akx_user_op_desc desc(void) {
  const akx_user_op_desc d = {op_source, "double", "c_add", "c_zero", "c_map", NULL};
  return d;
}

typedef struct {
  int ok;
  char msg[512];
  akx_kernel_cache_counters_t before, after;
} report;

static int fail(report *r, const char *what, akx_status st) {
  r->ok = 0;
  snprintf(r->msg, sizeof r->msg, "%s: %s (%s)", what, akx_status_string(st), akx_last_error());
  return 0;
}

/* Creates the op on ctx and sums x*x + 1 over 1000 float64 values (exact in double) through
 * akx_mapreduce; 1 when the sum is right, else 0 and a sentence in r. */
static int create_and_use(akx_context *ctx, report *r) {
  enum { N = 1000 };
  double host[N], want = 0;
  for (int k = 0; k < N; ++k) host[k] = (double)(k % 61 - 30) / 4.0, want += host[k] * host[k] + 1;
  akx_op op;
  const akx_user_op_desc d = desc();
  akx_status st = akx_user_op_create(ctx, &d, &op);
  if (st != AKX_SUCCESS) return fail(r, "akx_user_op_create", st);
  void *dev = NULL;
  if ((st = akx_malloc(ctx, &dev, sizeof host)) != AKX_SUCCESS) return fail(r, "akx_malloc", st);
  if ((st = akx_memcpy(ctx, dev, host, sizeof host, AKX_COPY_HOST_TO_DEVICE)) != AKX_SUCCESS)
    return fail(r, "akx_memcpy", st);
  const akx_array v = akx_vector(dev, AKX_FLOAT64, N);
  double got = -1;
  st = akx_mapreduce(ctx, &v, AKX_MAP_IDENTITY, op, NULL, &got, AKX_HOST);
  akx_free(ctx, dev);
  if (st != AKX_SUCCESS) return fail(r, "akx_mapreduce", st);
  if (got != want) {
    r->ok = 0;
    snprintf(r->msg, sizeof r->msg, "sum(x*x + 1) = %.17g, want %.17g", got, want);
    return 0;
  }
  return 1;
}

/* A context, the workload, the counters around both. */
static void run_once(report *r) {
  r->ok = 1;
  r->msg[0] = '\0';
  akx_kernel_cache_counters(&r->before);
  akx_context *ctx = NULL;
  const akx_status st = akx_context_create(&ctx, AKX_BACKEND_AUTO, 0);
  if (st != AKX_SUCCESS) {
    fail(r, "akx_context_create", st);
    return;
  }
  create_and_use(ctx, r);
  akx_context_destroy(ctx);
  akx_kernel_cache_counters(&r->after);
}

/* Runs fn in a child process (a new process for libakx: this one has not used it); returns the
 * child's report. A child that crashes or exits without a report fails the test. */
static report in_child(void (*fn)(report *)) {
  int fd[2];
  cr_assert_eq(pipe(fd), 0);
  const pid_t pid = fork();
  cr_assert_geq(pid, 0, "fork");
  if (pid == 0) {
    close(fd[0]);
    report r;
    memset(&r, 0, sizeof r);
    fn(&r);
    const ssize_t w = write(fd[1], &r, sizeof r);
    _exit(w == (ssize_t)sizeof r ? 0 : 3);
  }
  close(fd[1]);
  report r;
  memset(&r, 0, sizeof r);
  size_t got = 0;
  for (ssize_t k; got < sizeof r && (k = read(fd[0], (char *)&r + got, sizeof r - got)) > 0;) got += (size_t)k;
  close(fd[0]);
  int status = 0;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0 && got == sizeof r,
            "the child died (status 0x%x) or sent no report (%zu bytes)", status, got);
  return r;
}

static uint64_t compiles_in(const report *r) { return r->after.compiles - r->before.compiles; }

/* ---- the directory ------------------------------------------------------------------------------ */

static char dir[64];

static void fresh_cache_dir(void) {
  strcpy(dir, "/tmp/akx-user-op-cache-XXXXXX");
  cr_assert(mkdtemp(dir), "mkdtemp");
  setenv("AKX_CACHE_DIR", dir, 1);
}


static int regular_files;
static int count_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)path, (void)ftw;
  regular_files += flag == FTW_F && S_ISREG(st->st_mode);
  return 0;
}
/* Entries below d other than d itself (files and directories). */
static int entries_below;
static int count_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)path, (void)st, (void)flag;
  entries_below += ftw->level > 0;
  return 0;
}
static int truncate_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)ftw;
  if (flag == FTW_F && S_ISREG(st->st_mode)) {
    cr_assert_eq(truncate(path, st->st_size / 2), 0, "truncate %s", path);
    ++regular_files;
  }
  return 0;
}

/* ---- tests ---------------------------------------------------------------------------------------- */

static void expect_ok(const report *r, const char *what) {
  cr_assert(r->ok, "%s: %s", what, r->msg);
}

Test(user_ops_cache, a_second_context_compiles_nothing) {
  fresh_cache_dir();
  report first, second;
  run_once(&first);
  expect_ok(&first, "first context");
  cr_assert_gt(compiles_in(&first), 0, "a cold cache compiles the op");
  run_once(&second);
  expect_ok(&second, "second context");
  cr_assert_eq(compiles_in(&second), 0, "the same desc in a new context compiled %llu times",
               (unsigned long long)compiles_in(&second));
  cr_assert_gt(second.after.memory_hits, second.before.memory_hits, "served from memory");
  tfx_remove_tree(dir);
}

Test(user_ops_cache, a_new_process_hits_the_disk) {
  fresh_cache_dir();
  const report first = in_child(run_once);
  expect_ok(&first, "the first process");
  cr_assert_gt(compiles_in(&first), 0, "a cold cache compiles the op");
  regular_files = 0;
  nftw(dir, count_one, 16, FTW_PHYS);
  cr_assert_gt(regular_files, 0, "the first process wrote files into %s", dir);
  const report second = in_child(run_once);
  expect_ok(&second, "the second process");
  cr_assert_eq(second.after.compiles, 0, "a new process compiled %llu times",
               (unsigned long long)second.after.compiles);
  cr_assert_gt(second.after.disk_hits, 0, "a new process loaded from disk");
  tfx_remove_tree(dir);
}

Test(user_ops_cache, truncated_files_are_compiled_again) {
  fresh_cache_dir();
  const report first = in_child(run_once);
  expect_ok(&first, "the first process");
  regular_files = 0;
  nftw(dir, truncate_one, 16, FTW_PHYS);
  cr_assert_gt(regular_files, 0, "no file to truncate in %s", dir);
  const report second = in_child(run_once);
  expect_ok(&second, "after truncation"); /* right results: nothing truncated was loaded */
  cr_assert_gt(second.after.compiles, 0, "the truncated files were compiled again");
  tfx_remove_tree(dir);
}

Test(user_ops_cache, a_directory_others_can_write_is_not_used) {
  fresh_cache_dir();
  cr_assert_eq(chmod(dir, 0777), 0);
  report r;
  run_once(&r);
  expect_ok(&r, "with an open cache directory");
  entries_below = 0;
  nftw(dir, count_entry, 16, FTW_PHYS);
  cr_assert_eq(entries_below, 0, "%d entries written into the 0777 directory %s", entries_below, dir);
  tfx_remove_tree(dir);
}

/* The other op, made by a process whose cache directory is dir/b/cache. */
static void plant_other_op(report *r) {
  char planted[128];
  snprintf(planted, sizeof planted, "%s/b/cache", dir);
  setenv("AKX_CACHE_DIR", planted, 1);
  op_source = OTHER_SOURCE;
  run_once(r);
}

/* In dir/a with AKX_CACHE_DIR=cache: the op (the first use resolves the directory), then a
 * chdir to dir/b, then the other op; r counts the other op alone. */
static void relative_dir_then_chdir(report *r) {
  char a[128], b[128];
  snprintf(a, sizeof a, "%s/a", dir);
  snprintf(b, sizeof b, "%s/b", dir);
  report first;
  if (chdir(a) != 0) {
    snprintf(r->msg, sizeof r->msg, "chdir %s failed", a);
    return;
  }
  setenv("AKX_CACHE_DIR", "cache", 1);
  run_once(&first);
  if (!first.ok || chdir(b) != 0) {
    snprintf(r->msg, sizeof r->msg, "the first op in %.100s: %.300s", a, first.ok ? "chdir failed" : first.msg);
    return;
  }
  op_source = OTHER_SOURCE;
  run_once(r);
}

Test(user_ops_cache, a_chdir_after_the_first_use_does_not_move_a_relative_directory) {
  fresh_cache_dir();
  char path[128];
  snprintf(path, sizeof path, "%s/a", dir);
  cr_assert_eq(mkdir(path, 0700), 0);
  snprintf(path, sizeof path, "%s/b", dir);
  cr_assert_eq(mkdir(path, 0700), 0);
  const report planting = in_child(plant_other_op);
  expect_ok(&planting, "the planting process");
  /* dir/b/cache now holds the other op's files, in a directory anyone could have written. */
  snprintf(path, sizeof path, "%s/b/cache", dir);
  cr_assert_eq(chmod(path, 0777), 0);
  const report moved = in_child(relative_dir_then_chdir);
  expect_ok(&moved, "after the chdir");
  cr_assert_eq(moved.after.disk_hits - moved.before.disk_hits, 0,
               "%llu files loaded from %s, which was never checked",
               (unsigned long long)(moved.after.disk_hits - moved.before.disk_hits), path);
  cr_assert_gt(compiles_in(&moved), 0, "the other op was compiled into dir/a/cache");
  snprintf(path, sizeof path, "%s/a/cache", dir);
  regular_files = 0;
  nftw(path, count_one, 16, FTW_PHYS);
  cr_assert_gt(regular_files, 0, "both ops' files in %s", path);
  tfx_remove_tree(dir);
}

/* ---- threads -------------------------------------------------------------------------------------- */

typedef struct {
  pthread_barrier_t *start;
  report r;
} racer;

static void *race(void *arg) {
  racer *t = arg;
  t->r.ok = 1;
  akx_context *ctx = NULL;
  const akx_status st = akx_context_create(&ctx, AKX_BACKEND_AUTO, 0);
  pthread_barrier_wait(t->start); /* both contexts exist: the creates start together */
  if (st != AKX_SUCCESS) {
    fail(&t->r, "akx_context_create", st);
    return NULL;
  }
  create_and_use(ctx, &t->r);
  akx_context_destroy(ctx);
  return NULL;
}

static void two_threads(report *r) {
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, 2);
  racer t[2];
  memset(t, 0, sizeof t);
  pthread_t th[2];
  r->ok = 1;
  akx_kernel_cache_counters(&r->before);
  for (int i = 0; i < 2; ++i) {
    t[i].start = &start;
    pthread_create(&th[i], NULL, race, &t[i]);
  }
  for (int i = 0; i < 2; ++i) pthread_join(th[i], NULL);
  akx_kernel_cache_counters(&r->after);
  pthread_barrier_destroy(&start);
  for (int i = 0; i < 2; ++i)
    if (!t[i].r.ok) {
      r->ok = 0;
      snprintf(r->msg, sizeof r->msg, "thread %d: %.490s", i, t[i].r.msg);
    }
}

/* What one create and call compile, alone, in a fresh process and directory; then a fresh
 * directory for what follows. */
static uint64_t compiles_alone(void) {
  fresh_cache_dir();
  const report alone = in_child(run_once);
  expect_ok(&alone, "alone");
  tfx_remove_tree(dir);
  fresh_cache_dir();
  return compiles_in(&alone);
}

Test(user_ops_cache, two_threads_creating_one_op_compile_once) {
  const uint64_t alone = compiles_alone();
  const report both = in_child(two_threads);
  expect_ok(&both, "two threads");
  cr_assert_eq(compiles_in(&both), alone, "two threads compiled %llu times, one thread alone %llu",
               (unsigned long long)compiles_in(&both), (unsigned long long)alone);
  tfx_remove_tree(dir);
}

/* Two processes starting at once on an empty directory (MPI ranks of one node asking for the
 * same kernels): each kernel is compiled by one of them, the other waits for its file. Both
 * children are released together by closing the pipe they block on. */
Test(user_ops_cache, two_processes_at_once_compile_once) {
  const uint64_t alone = compiles_alone();
  int go[2], out[2][2];
  pid_t pid[2];
  cr_assert_eq(pipe(go), 0);
  for (int k = 0; k < 2; ++k) {
    cr_assert_eq(pipe(out[k]), 0);
    pid[k] = fork();
    cr_assert_geq(pid[k], 0, "fork");
    if (pid[k] == 0) {
      close(go[1]);
      close(out[k][0]);
      char c;
      while (read(go[0], &c, 1) > 0) {
      }
      report r;
      memset(&r, 0, sizeof r);
      run_once(&r);
      _exit(write(out[k][1], &r, sizeof r) == (ssize_t)sizeof r ? 0 : 3);
    }
    close(out[k][1]);
  }
  close(go[0]);
  close(go[1]); /* both start */
  report r[2];
  for (int k = 0; k < 2; ++k) {
    memset(&r[k], 0, sizeof r[k]);
    size_t got = 0;
    for (ssize_t n; got < sizeof r[k] && (n = read(out[k][0], (char *)&r[k] + got, sizeof r[k] - got)) > 0;)
      got += (size_t)n;
    close(out[k][0]);
    int status = 0;
    cr_assert_eq(waitpid(pid[k], &status, 0), pid[k]);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0 && got == sizeof r[k],
              "process %d died (status 0x%x) or sent no report", k, status);
    expect_ok(&r[k], k ? "the second process" : "the first process");
  }
  cr_assert_eq(compiles_in(&r[0]) + compiles_in(&r[1]), alone, "two processes compiled %llu + %llu times, one alone %llu",
               (unsigned long long)compiles_in(&r[0]), (unsigned long long)compiles_in(&r[1]), (unsigned long long)alone);
  entries_below = 0;
  nftw(dir, count_entry, 16, FTW_PHYS);
  regular_files = 0;
  nftw(dir, count_one, 16, FTW_PHYS);
  cr_assert_eq(entries_below, regular_files, "%d entries in %s, %d of them cache files: a lock file "
               "or a directory was left", entries_below, dir, regular_files);
  tfx_remove_tree(dir);
}
