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

/* Any unit (text after the module prelude, include/akx/sim_module.inl) compiled and loaded
 * once per process through the kernel cache: its dlopen handle. `name` names it in
 * sentences. A compile failure is AKX_ERROR_UNSUPPORTED, or, with `user` (the unit holds a
 * user op's source), AKX_ERROR_INVALID_ARGUMENT with the first error (src/jit/user_op.c's
 * "akx rule" sentences as they are); the whole log: akx__compile_log_get. */
akx_status akx__sim_module_open(const char *name, const char *unit, int user, void **handle);
/* dlsym of an opened module; AKX_ERROR_INTERNAL naming both when absent. */
akx_status akx__sim_module_symbol(void *handle, const char *name, const char *symbol, void **entry);

#ifdef __cplusplus
}
#endif
#endif
