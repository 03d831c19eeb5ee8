/* Part of every test executable: points the sim at the tests' kernel plugin
 * (src/jit/test_kernels.h) that this build made, before main, unless the environment names
 * one already (AKX_SIM_TEST_KERNELS= empty: none, every combination outside the library's set
 * compiled at run time). A build without prebuilt kernels (AKX_PREBUILT=OFF) has no plugin. */
#include <stdlib.h>

#if defined(AKX_SIM_TEST_KERNELS_PATH)
__attribute__((constructor)) static void akx_test_kernels_env(void) {
  setenv("AKX_SIM_TEST_KERNELS", AKX_SIM_TEST_KERNELS_PATH, 0);
}
#endif
