/* The sim's test-only kernels (src/jit/test_kernels.h). */
#include "test_kernels.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "builtin_instance.h"
#include "entries.h"
#include "internal.h"
#include "sim_module.h"

/* The plugin's entries as src/launch/kernel_entries.h types them (akx__resolver, akx__launcher):
 * a layer below launch, spelled again here. */
typedef akx_status (*launcher_fn)(const void *plan, void *stream);
typedef launcher_fn (*resolver_fn)(const akx__combination *c);

static pthread_mutex_t plugin_lock = PTHREAD_MUTEX_INITIALIZER;
static void *plugin;  /* the dlopen handle, once loaded; loaded once per process, never closed */

static akx_status load_plugin(const akx_context *ctx, const char *path, void **handle) {
  pthread_mutex_lock(&plugin_lock);
  akx_status s = AKX_SUCCESS;
  if (!plugin) {
    s = akx__sim_module_load(ctx->be->module_runtime(), "the tests' kernels (AKX_SIM_TEST_KERNELS)", path, &plugin);
    if (s != AKX_SUCCESS) plugin = NULL;
  }
  *handle = plugin;
  pthread_mutex_unlock(&plugin_lock);
  return s;
}

/* AKX_SIM_TEST_KERNELS_RECORD names a file: each combination the plugin serves is appended to
 * it as "family src dst acc op" (names; "-" for a field the combination leaves unset), one
 * line a write (O_APPEND: several test processes at once), once per process (the entry table
 * keeps it after): the source of tests/sim_test_kernels/used.h, the plugin's list
 * (tests/sim_test_kernels/record_used.py). */
static const char *dtype_field(int32_t d) { return d < 0 ? "-" : akx_dtype_name((akx_dtype)d); }
static void record(const akx__combination *c) {
  const char *path = getenv("AKX_SIM_TEST_KERNELS_RECORD");
  if (!path || !*path) return;
  char line[128];
  const int n = snprintf(line, sizeof line, "%s %s %s %s %s\n", akx__family_name(c->family), dtype_field(c->src),
                         dtype_field(c->dst), dtype_field(c->acc), akx__op_name((akx_op)c->op));
  if (n <= 0 || n >= (int)sizeof line) return;
  const int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  if (write(fd, line, (size_t)n) != n) { /* a record is a hint: a short write loses one line */
  }
  close(fd);
}

akx_status akx__test_kernels_entry(const akx_context *ctx, const akx__combination *c, void **entry) {
  *entry = NULL;
  const char *path = getenv("AKX_SIM_TEST_KERNELS");
  if (!path || !*path || ctx->be->kind != AKX_BACKEND_SIM) return AKX_SUCCESS;
  if (!akx__prebuilt_serves(ctx, akx__combination_prebuilt(c, AKX__SET_TESTS))) return AKX_SUCCESS;
  const akx__entry_key key =
      akx__builtin_entry_key(AKX__TEST_KERNELS_TARGET, c->family, c->src, c->dst, c->acc, c->op);
  if ((*entry = akx__entry_find(&key))) return AKX_SUCCESS;
  void *dl = NULL;
  AKX_TRY(load_plugin(ctx, path, &dl));
  /* The family's resolver of the source dtype, as libakx names its own
   * (src/launch/kernel_entries.inc): the plugin is the same instance files built with the
   * tests' set, so it holds c (the host's rule said so) or disagrees with this libakx. */
  char symbol[96];
  snprintf(symbol, sizeof symbol, "akx__sim_%s_%s", akx__family_name(c->family), akx_dtype_name((akx_dtype)c->src));
  void *r = NULL;
  AKX_TRY(akx__sim_module_symbol(dl, path, symbol, &r));
  const launcher_fn launcher = ((resolver_fn)r)(c);
  /* The plugin holds the combinations the suite calls (tests/sim_test_kernels/used.h), not
   * every one of the tests' set: any other compiles at run time, as outside the set. */
  if (!launcher) return AKX_SUCCESS;
  record(c);
  *entry = akx__entry_put(&key, (void *)launcher);
  return AKX_SUCCESS;
}
