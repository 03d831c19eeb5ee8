/* Kernels the sim compiles at run time (src/jit/sim_module.cpp): a unit of one combination
 * (src/jit/builtin_instance.h) or of a user op (src/jit/user_op.h), after the module prelude
 * (src/jit/sim_module.inl), built by the host compiler (AKX_SIM_CXX, else the one libakx was
 * built with) against the embedded kernel headers and loaded with dlopen, through the kernel
 * cache.
 *
 * Where it writes: each compile in a directory of its own (the source, the embedded headers,
 * the object, and the compiler's own temporary files: its TMPDIR points there), each load in
 * one file that is dlopen'ed and removed at once; both in the kernel cache's directory while
 * the disk cache is in use, else in $TMPDIR when that names a directory this process can write
 * and search, else in /tmp (a $TMPDIR that does not is passed over, as GCC passes it over). A
 * load whose directory refuses to map code (a noexec mount) tries the next. Everything is
 * removed on every path, a failed compile's too; only a process killed mid-compile leaves its
 * akx-build.* directory behind, and the kernel cache's next writer removes it once it is older
 * than the lock wait and no live compile holds its flock (src/jit/cache.c, sweep_leftovers). */
#ifndef AKX_SIM_MODULE_H
#define AKX_SIM_MODULE_H
#include <stdint.h>
#include "akx.h"
#ifdef __cplusplus
extern "C" {
#endif

/* Any unit (text after the module prelude, src/jit/sim_module.inl) compiled and loaded
 * once per process through the kernel cache: its dlopen handle. runtime: the sim's runtime
 * table (the sim backend's module_runtime, src/core/backend.h), which the module calls. `name` names it in
 * sentences. A compile failure is AKX_ERROR_UNSUPPORTED, or, with `user` (the unit holds that
 * user op's source), akx__user_op_refusal's (src/jit/user_op.h); the whole log, the user's
 * lines quoted: akx__compile_log_get. */
akx_status akx__sim_module_open(const void *runtime, const char *name, const char *unit, const akx_user_op_desc *user,
                                void **handle);
/* A module built ahead of time (the tests' plugin, src/jit/test_kernels.h) at `path`, dlopen'ed
 * and handed the runtime table as a compiled unit is; AKX_ERROR_UNSUPPORTED with dlerror's
 * sentence when it cannot be. */
akx_status akx__sim_module_load(const void *runtime, const char *name, const char *path, void **handle);
/* dlsym of an opened module; AKX_ERROR_INTERNAL naming both when absent. */
akx_status akx__sim_module_symbol(void *handle, const char *name, const char *symbol, void **entry);

#ifdef __cplusplus
}
#endif
#endif
