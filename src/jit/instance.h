/* The translation unit of one kernel family for one combination of dtypes and op: the text a
 * run-time compile starts from (NVRTC on CUDA; the same text serves nvcc and the host compiler
 * of the sim), and the kernels' template-ids, which NVRTC turns into their lowered names
 * (nvrtcAddNameExpression, src/jit/nvrtc.h).
 *
 * The text includes the family's header (kernels/akx/) and explicitly instantiates each of
 * the family's __global__ kernels for the combination, nothing else: every compiler reads it
 * through the headers' own macros (AKX_GLOBAL). It depends on the combination alone, byte for
 * byte, so that its hash can key the kernel cache (src/jit/cache.h). */
#ifndef AKX_JIT_INSTANCE_H
#define AKX_JIT_INSTANCE_H
#include "akx.h"
#include "families.h"
#ifdef __cplusplus
extern "C" {
#endif

/* The kernel families: src/core/families.h. */

/* A dtype's C++ type as the kernels name it ("int8_t", "::akx::f16"), an op's functor
 * ("::akx::op_add"): the columns of the one lists; NULL for anything else. */
const char *akx__dtype_cxx_name(akx_dtype t);
const char *akx__op_cxx_name(akx_op op);

/* One combination. What a family reads is its kind's row (src/core/kinds.h, akx__kind_of):
 *   the fields its kind keys; a field not keyed must be AUTO (an op is not read);
 *   acc and dst by the kind's dtype rules (akx__kind_rules): REDUCE, acc AUTO is the
 *     accumulator of the identity map (akx_reduce_opts' rule), an explicit one must be an
 *     accumulator of (src, op) under some map (the map is the kernels' run-time argument);
 *     SCAN, acc AUTO or src's own (akx_scan_opts' rule), dst AUTO (the accumulator's dtype)
 *     or any.
 * dtypes and ops are ints: whatever a caller holds is checked before use. */
typedef struct {
  int32_t family; /* akx__family */
  int32_t src;    /* akx_dtype */
  int32_t dst;    /* akx_dtype or AKX_DTYPE_AUTO */
  int32_t acc;    /* akx_dtype or AKX_DTYPE_AUTO */
  int32_t op;     /* akx_op */
} akx__instance_key;

typedef struct {
  char *source;            /* the translation unit, NUL-terminated */
  int n_kernels;
  char **name_expressions; /* each kernel's template-id, e.g.
                              "akx::reduce_whole_partials<float, ::akx::op_add>", in the order
                              the source instantiates them */
  const char *const *kernel_keys; /* each kernel's key, in that order (the family list's kernel
                                     names: static strings) */
  char *launcher;          /* the family's host launcher for the combination, e.g.
                              "akx::scan_launch<float, float, float, ::akx::op_add>" */
  akx_dtype acc, dst;      /* the combination resolved: AUTO replaced; AKX_DTYPE_AUTO where the
                              family has none (findall's acc, the reductions' dst) */
} akx__instance;

/* Writes the family's translation unit for *key into *out (zeroed first; freed with
 * akx__instance_free on success, nothing to free on failure). AKX_ERROR_INVALID_ARGUMENT for
 * a NULL argument, a family, dtype or op that is none, or a dst or acc the family does not take;
 * AKX_ERROR_UNSUPPORTED for a combination the library's dtype rules refuse (kernels/akx/dtypes.cuh,
 * the same refusals as akx_mapreduce's and akx_scan's); AKX_ERROR_OUT_OF_MEMORY. Each with a
 * sentence in akx_last_error(). */
akx_status akx__instance_generate(const akx__instance_key *key, akx__instance *out);

/* A user op's half of a unit (src/jit/user_op.h): text placed after the family's header (the
 * op's source and its functions), and the C++ names of its op and accumulator types, which
 * replace the built-in op's functor and the accumulator dtype's type. */
typedef struct {
  const char *prelude;
  const char *op_cxx;  /* e.g. "::akx::user_op<::akx_user::fns, float>" */
  const char *acc_cxx; /* e.g. "::akx::user_op<::akx_user::fns, float>::value" */
} akx__instance_op;

/* akx__instance_generate with a user op: key->op and key->acc are not read (acc: the op's);
 * key->dst is the scan's dst, or for the reductions the dtype the op's store is compiled for
 * (AKX_DTYPE_AUTO: the accumulator itself), which the text does not name beyond op_cxx. */
akx_status akx__instance_generate_op(const akx__instance_key *key, const akx__instance_op *op,
                                     akx__instance *out);

/* Frees what a successful akx__instance_generate wrote and zeroes it; a zeroed one is a no-op. */
void akx__instance_free(akx__instance *inst);

#ifdef __cplusplus
}
#endif
#endif
