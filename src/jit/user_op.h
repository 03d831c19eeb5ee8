/* User operators (akx_user_op_desc, include/akx.h) and the library's ARGMIN/ARGMAX, which
 * take the same path: the text of their translation units (src/jit/user_op.c), their
 * registry on a context (src/jit/user_ops.c), and the kernels' entries, compiled on first
 * use through the kernel cache. */
#ifndef AKX_JIT_USER_OP_H
#define AKX_JIT_USER_OP_H
#include <stddef.h>
#include "akx.h"
#include "instance.h"
#ifdef __cplusplus
extern "C" {
#endif

/* The file names a unit's #line directives give the user's text (desc->source from line 1)
 * and the accumulator's type (desc->acc_type alone on line 1), so that a compiler's messages
 * name the user's own lines; the sim's compiler finds files of these names beside the unit
 * (src/jit/sim_module.cpp) and quotes them. */
#define AKX__USER_SOURCE_FILE "user_op.cpp"
#define AKX__USER_ACC_FILE "acc_type"
/* The kernel header every unit of a user op includes (the sim's prelude names it too). */
#define AKX__USER_OP_HEADER "akx/user_op.cuh"

typedef struct akx__user_op {
  akx_op id; /* >= AKX_USER_OP_FIRST */
  akx_user_op_desc desc; /* copies; NULL where the caller's was */
  akx_user_op_info_t info;
  size_t value_size, value_align; /* what the kernels carry: Acc, or Acc with its valid flag */
  size_t valid_offset;            /* of that flag (no identity) */
  int32_t arg_of;  /* AKX_OP_ARGMIN/ARGMAX: the library op this one is for one dtype of; -1 */
  int32_t arg_src; /* its source dtype */
} akx__user_op;

/* The unit akx_user_op_create compiles (the rules' checks and the layout probe), and the
 * unit of one family's kernels for (src, dst) (dst AKX_DTYPE_AUTO: the accumulator). The
 * text starts after the backend's prelude. malloc'd. */
akx_status akx__user_op_probe_text(const akx_user_op_desc *d, char **text);
/* What every unit of the op starts with after the family's header: the user's source in
 * namespace akx_user and its functions' struct, akx_user::fns (the prelude of
 * akx__instance_generate_op, src/jit/instance.h), for every compiler: nvcc, NVRTC, the sim's. */
akx_status akx__user_op_prelude(const akx_user_op_desc *d, char **text);
/* The one instance generator's text of the op's kernels of one family for (src, dst): its
 * prelude, and the op's functor and accumulator in the kernels' place (src/jit/instance.h). The
 * sim's unit (akx__user_op_unit_text) adds its entry; the CUDA backend compiles it as it is. */
akx_status akx__user_op_instance(const akx__user_op *op, int family, akx_dtype src, akx_dtype dst,
                                 akx__instance *in);
akx_status akx__user_op_unit_text(const akx__user_op *op, int family, akx_dtype src, akx_dtype dst,
                                  char **text);

/* Compiles the probe on ctx's backend and fills op's layout. AKX_ERROR_INVALID_ARGUMENT for a
 * source that does not compile or breaks a rule (the first error in akx_last_error(), the log
 * in akx_last_compile_log()), or an accumulator aligned to more than 16 bytes;
 * AKX_ERROR_UNSUPPORTED without a compiler. On the sim, where libnvrtc loads, the source must
 * also compile with NVRTC as a GPU would compile it (src/jit/user_op.c, nvrtc_check; not the
 * library's ARGMIN/ARGMAX). */
akx_status akx__user_op_compile(const akx_context *ctx, akx__user_op *op);

/* The refusal of a user op's unit that did not compile, AKX_ERROR_INVALID_ARGUMENT with one
 * sentence from the compiler's first error line: the accumulator's type when it is at
 * AKX__USER_ACC_FILE, else the rule when it is a rule's failed check ("akx rule: ..."), else
 * the line itself. `compiler` names the compiler in it. */
akx_status akx__user_op_refusal(const char *compiler, const char *first_line);

/* The sim's entry of `family`'s kernels for (src, dst) (dst AKX_DTYPE_AUTO: the accumulator
 * itself, akx_mapreduce's result): the launcher of src/core/backend.h's signature for that
 * family's plan. Compiled on first use; afterwards from the table of run-time entries
 * (src/jit/entries.h). A user's op (not ARGMIN/ARGMAX) is then also compiled with NVRTC, where
 * it loads, for (src, dst) as a GPU would: its map on src, its store into dst. */
akx_status akx__user_op_entry(const akx_context *ctx, akx__user_op *op, int family, akx_dtype src,
                              akx_dtype dst, void **entry);

/* What a backend launches for a plan whose op is a user op: that op's entry for the plan's
 * family, source and dst (the plan's op names it; AKX_ERROR_INTERNAL when ctx has none). */
akx_status akx__user_op_launch_entry(const akx_context *ctx, int32_t op, int family, int32_t src, int32_t dst,
                                     void **entry);

/* ---- the registry (src/jit/user_ops.c) ---- */
/* The live user op `op` of ctx, or NULL. */
akx__user_op *akx__user_op_find(const akx_context *ctx, akx_op op);
/* For an entry point that takes `op`: ARGMIN/ARGMAX resolved to the library's op for src's
 * dtype (created on ctx at first use), a user op checked to be ctx's; *out NULL for the other
 * built-in ops. `call` names the entry point in sentences. Checks map (IDENTITY) and
 * opts->acc (AUTO), and fold against a store. */
akx_status akx__user_op_resolve(akx_context *ctx, akx_op op, akx_dtype src, akx_map map,
                                int32_t requested_acc, int fold, const char *call, akx__user_op **out);
/* Frees every user op of a context (akx_context_destroy). */
void akx__user_ops_destroy(akx_context *ctx);
/* The calling thread's log of its last failed akx_user_op_create. */
void akx__user_op_log_set(const char *log);

#ifdef __cplusplus
}
#endif
#endif
