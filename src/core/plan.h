/* Plain structs the host hands to kernel launchers. Kernels never see akx_array or
 * akx_context: src/ flattens what a launch needs into these. Shared by C and C++. */
#ifndef AKX_PLAN_H
#define AKX_PLAN_H
#include <stdint.h>
#include "akx.h"
#ifdef __cplusplus
#define AKX_ALIGNAS(n) alignas(n)
extern "C" {
#else
#define AKX_ALIGNAS(n) _Alignas(n)
#endif

/* The finishing step every reduction pass stores through (seed
 * reduce-whole-array-on-device): bare = store the accumulator as is (a partial, or a host
 * result finished on the host); otherwise apply init, fold into dst's previous value, and
 * convert the accumulator to dst_dtype. */
typedef struct {
  void *dst;
  int32_t dst_dtype; /* akx_dtype */
  int32_t bare;
  int32_t fold;
  int32_t has_init;
  AKX_ALIGNAS(16) unsigned char init[16]; /* one accumulator value */
} akx__finish;

/* A source in canonical form: size-1 dims dropped, negative strides flipped (the base moved
 * to the lowest address: every op here is commutative), dims merged where contiguous,
 * innermost (smallest |stride|) last. contiguous = one dim of stride 1 (or ndim 0). */
typedef struct {
  const void *data;
  int32_t dtype; /* akx_dtype */
  int32_t ndim;
  int64_t n;
  int32_t contiguous;
  int64_t shape[AKX_MAX_DIMS];
  int64_t strides[AKX_MAX_DIMS];
} akx__source;

/* A whole-array reduction (kernels/reduce_whole.cuh). */
typedef struct {
  akx__source src;
  int32_t map, op, acc; /* akx_map, akx_op, akx_dtype */
  int32_t block_size;   /* threads per block of every pass */
  int32_t items_per_thread;
  int32_t blocks;       /* blocks of the first pass, 1..target_blocks; 1 = one launch */
  void *partials;       /* workspace: blocks + 1 accumulators (the last one: a host result) */
  akx__finish finish;   /* applied by the last pass */
} akx__reduce_whole_plan;

#ifdef __cplusplus
}
#endif
#endif
