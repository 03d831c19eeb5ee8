/* The sim's test-only kernels (src/jit/test_kernels.h). */
#include "test_kernels.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

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
  if (!launcher)
    return akx__fail(AKX_ERROR_INTERNAL, "the tests' kernels %s hold no %s kernel for source %s, accumulator %d, op %d, "
                     "dst %d: a plugin of another build", path, akx__family_name(c->family),
                     akx_dtype_name((akx_dtype)c->src), (int)c->acc, (int)c->op, (int)c->dst);
  *entry = akx__entry_put(&key, (void *)launcher);
  return AKX_SUCCESS;
}
