// The module half of the tests' kernel plugin (src/jit/test_kernels.h): the runtime table it
// calls the sim through, its akx__fail and akx_sim_module_init, once, as every module the sim
// compiles at run time has them (src/jit/sim_module.inl). The instances themselves are the
// library's instance files (src/launch/*_instances.inl) built with the tests' set
// (AKX_PREBUILT_TEST_SET: kernels/akx/dtypes.cuh, the prebuilt sets).
#include "jit/sim_module.inl"
