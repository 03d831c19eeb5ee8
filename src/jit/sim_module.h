/* Kernels the sim compiles at run time (src/jit/sim_module.cpp): a family's translation unit
 * for one source dtype, the same text CMake compiles for the prebuilt kernels
 * (cmake/kernel_instances.in: "#define AKX_SRC_DTYPE ...", then the include of the family's
 * instance file in include/akx/), built by the host compiler (AKX_SIM_CXX, else the one
 * libakx was built with) and loaded with dlopen, through the kernel cache. */
#ifndef AKX_SIM_MODULE_H
#define AKX_SIM_MODULE_H
#include <stdint.h>
#include "akx.h"
#ifdef __cplusplus
extern "C" {
#endif

/* The translation unit of `family` ("reduce_whole", "reduce_dims", "scan", "findall") for one
 * source dtype: malloc'd text. */
akx_status akx__sim_module_source(const char *family, int32_t src_dtype, char **text);

/* The entry akx__sim_<family>_<dtype> (the signature of src/core/backend.h's launchers) of
 * that unit, compiled and loaded once per process. AKX_ERROR_UNSUPPORTED with a sentence
 * when the compiler is missing or fails (its log: akx__compile_log_get). */
akx_status akx__sim_module_entry(const char *family, int32_t src_dtype, void **entry);

#ifdef __cplusplus
}
#endif
#endif
