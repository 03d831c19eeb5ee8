/* The sim's test-only kernels: the prebuilt set `tests` (kernels/akx/dtypes.cuh, the prebuilt
 * sets), the combinations of it that the test suite calls (its list:
 * tests/sim_test_kernels/used.h; any other compiles at run time), built ahead of time into
 * a plugin beside the tests (tests/CMakeLists.txt, akx_sim_test_kernels) instead of into
 * libakx.so, which holds the library's set alone. The sim loads it on demand where the
 * environment variable AKX_SIM_TEST_KERNELS names it (the tests' support library sets it), so
 * that the suite never compiles those combinations at run time; without it, they are
 * compiled at run time as any combination outside the library's set. */
#ifndef AKX_JIT_TEST_KERNELS_H
#define AKX_JIT_TEST_KERNELS_H
#include "akx.h"
#include "families.h"
#ifdef __cplusplus
extern "C" {
#endif

/* The entry key target of the plugin's entries in the table of run-time entries
 * (src/jit/entries.h): apart from the units the host compiler builds (target 0), so that
 * AKX_KERNELS=runtime still compiles a combination the plugin served before. */
#define AKX__TEST_KERNELS_TARGET (-1)

/* *entry: the plugin's launcher (an akx__launcher) for c on the sim context ctx, where
 * AKX_SIM_TEST_KERNELS names a plugin, the prebuilt kernels serve (akx__prebuilt_serves: not
 * under AKX_KERNELS=runtime) and c lies in the tests' set; else NULL, with AKX_SUCCESS. The
 * plugin is loaded once per process. A plugin that cannot be loaded is AKX_ERROR_UNSUPPORTED
 * naming AKX_SIM_TEST_KERNELS and the path; one without the family's entry for the source
 * dtype (a plugin of another build) AKX_ERROR_INTERNAL naming both. */
akx_status akx__test_kernels_entry(const akx_context *ctx, const akx__combination *c, void **entry);

#ifdef __cplusplus
}
#endif
#endif
