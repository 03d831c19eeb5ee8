/* The kernel families, registered once. Everything that exists per family is derived from
 * AKX_FAMILY_LIST: the family ids and names, the prebuilt entries of each backend
 * (src/launch/kernel_entries.inc), the launch routing (src/launch/route.h), the instance
 * generator's units (src/jit/instance.c), the CUDA backend's run-time launches
 * (src/cuda/runtime_kernels.cu), the stubs of a build without CUDA (src/nocuda/), and CMake's
 * prebuilt instance files (CMakeLists.txt reads the rows).
 *
 * A row is Y(a, ID, name, Plan, header, file, launcher, kind, prebuilt, finish):
 *   ID      AKX__FAMILY_<ID>, the family's id
 *   name    the family's name: its entries akx__<backend>_<name>_<dtype>, its kernels' unit
 *           and run-time launch (akx__cuda_runtime_<name>), and
 *           akx__<name>_combination(const Plan *), which says what a plan launches
 *   Plan    the plan its launcher takes (kernels/akx/plan.h, or the family's own header)
 *   header  the kernel header a run-time unit includes
 *   file    the build-only instance file of its prebuilt entries in src/launch/, this column's
 *           name followed by _instances (its resolvers over src/launch/instance_table.inl)
 *   launcher the template-id of its host launcher (kernels/akx/), which a run-time unit's
 *           entry calls as launcher(*plan, stream)
 *   kind    what its combination is made of, and so its prebuilt rule, its units' keys and
 *           placeholders and whether it takes user ops: a row of AKX_KIND_LIST
 *           (src/core/kinds.h), read through akx__kind_of
 *   prebuilt ALL: the kind's prebuilt rule; AUTO_ACC: that rule's AUTO accumulators alone
 *           (akx__family_auto_acc_only; its instance file reads the same column: src/launch/instance_table.inl)
 *   finish  STORE: its kernels' last store goes through the plan's akx__finish (its member
 *           `finish`), whose dst dtype the device cannot refuse, so akx__launch checks it
 *           (akx__family_finish); NONE: no finishing store
 * and the family's kernels, each K(name, template-id, user_only), are AKX_<ID>_KERNELS(K):
 * name is the kernel's key (kernel_info's function, else its name: kernels/akx/device.cuh),
 * by which every path finds it; the template-id has placeholders for the combination's C++
 * names ({S} source, {D} dst, {A} accumulator, {O} the op's functor); user_only marks a
 * kernel only a user op's unit holds. */
#ifndef AKX_FAMILIES_H
#define AKX_FAMILIES_H
#include <stdint.h>
#include "akx.h"
#include "akx/plan.h"
#include "akx/segmented_plan.h"
#include "akx/select_plan.h"
#include "kinds.h"
#ifdef __cplusplus
extern "C" {
#endif

#define AKX_FAMILY_LIST_WITH(Y, a)                                                                \
  Y(a, REDUCE_WHOLE, reduce_whole, akx__reduce_whole_plan, "akx/reduce_whole.cuh", reduce_whole, \
    "akx::reduce_whole_launch<{S}, {A}, {O}>", REDUCE, ALL, STORE)                                \
  Y(a, REDUCE_DIMS, reduce_dims, akx__reduce_dims_plan, "akx/reduce_dims.cuh", reduce_dims,       \
    "akx::reduce_dims_launch<{S}, {A}, {O}>", REDUCE, ALL, STORE)                                 \
  Y(a, SCAN, scan, akx__scan_plan, "akx/scan.cuh", scan, "akx::scan_launch<{S}, {D}, {A}, {O}>",  \
    SCAN, ALL, NONE)                                                                              \
  Y(a, FINDALL, findall, akx__findall_plan, "akx/findall.cuh", scan, "akx::findall_launch<{S}>",  \
    PLAIN, ALL, NONE)                                                                             \
  Y(a, SEGMENTED_REDUCE, segmented_reduce, akx__segmented_plan, "akx/segment_tile.cuh", segmented, \
    "akx::segmented_reduce_launch<{S}, {A}, {O}>", REDUCE, AUTO_ACC, STORE)                       \
  Y(a, SEGMENTED_SCAN, segmented_scan, akx__segmented_plan, "akx/segment_tile.cuh", segmented,    \
    "akx::segmented_scan_launch<{S}, {D}, {A}, {O}>", SCAN, AUTO_ACC, NONE)                       \
  Y(a, SELECT_FLAGGED, select_flagged, akx__select_plan, "akx/select_flagged.cuh", select,        \
    "akx::select_flagged_launch<{S}>", PLAIN, ALL, NONE)
/* The rows as X(ID, name, Plan, header, file, launcher, kind, prebuilt, finish);
 * AKX_FAMILY_LIST_WITH(Y, a) passes `a` first, so that a list over another list (every
 * family's entry of every dtype) needs no second spelling of either. */
#define AKX_FAMILY_LIST(X) AKX_FAMILY_LIST_WITH(AKX_FAMILY_ROW_, X)
#define AKX_FAMILY_ROW_(X, ID, name, Plan, header, file, launcher, kind, prebuilt, finish) \
  X(ID, name, Plan, header, file, launcher, kind, prebuilt, finish)

/* kernels/akx/reduce_whole.cuh: pass 1 over a contiguous or a strided source, pass 2. */
#define AKX_REDUCE_WHOLE_KERNELS(K)                                                   \
  K("reduce_whole_contiguous", "akx::reduce_whole_contiguous<{S}, {A}, {O}>", 0)      \
  K("reduce_whole_strided", "akx::reduce_whole_strided<{S}, {A}, {O}>", 0)            \
  K("reduce_whole_partials", "akx::reduce_whole_partials<{A}, {O}>", 0)
/* kernels/akx/reduce_dims.cuh: the rows and tile bodies, the second pass over the splits, and
 * for a user op the pieces' combine (a built-in op's pieces are an array of a dtype, which the
 * others reduce). */
#define AKX_REDUCE_DIMS_KERNELS(K)                                                    \
  K("reduce_dims_rows", "akx::reduce_dims_rows_kernel<{S}, {A}, {O}>", 0)             \
  K("reduce_dims_tile", "akx::reduce_dims_tile_kernel<{S}, {A}, {O}>", 0)             \
  K("reduce_dims_finish", "akx::reduce_dims_finish_kernel<{A}, {O}>", 0)              \
  K("reduce_dims_pieces", "akx::reduce_dims_pieces_kernel<{A}, {O}>", 1)
/* kernels/akx/scan.cuh: the look-back reset, the whole-array and slice tiles, the column scan
 * and its carries (what akx::scan_launch launches); for a user op, a piece's tile launches
 * (kernels/akx/scan_carry.cuh). */
#define AKX_SCAN_KERNELS(K)                                                                                   \
  K("scan_init", "akx::scan_init<::akx::lookback_header>", 0)                                                 \
  K("scan_tile", "akx::scan_tile_kernel<::akx::scan_policy<{S}, {D}, ::akx::plain_scan<{O}, {A}>>>", 0)      \
  K("scan_slices", "akx::scan_tile_kernel<::akx::scan_policy<{S}, {D}, ::akx::seg_scan<{O}, {A}>>>", 0)      \
  K("scan_columns", "akx::scan_columns<{S}, {D}, {O}, {A}>", 0)                                               \
  K("scan_columns_carry", "akx::scan_columns_carry<{O}, {A}>", 0)                                             \
  K("scan_carried", "akx::scan_tile_kernel<::akx::scan_carry_policy<{S}, {D}, ::akx::seg_scan<{O}, {A}>>>", 1)
/* kernels/akx/findall.cuh: the look-back reset and the selection tile (akx::findall_launch). */
#define AKX_FINDALL_KERNELS(K)                          \
  K("scan_init", "akx::scan_init<::akx::lookback_header>", 0) \
  K("findall_tile", "akx::findall_kernel<{S}>", 0)
/* kernels/akx/segment_tile.cuh: the look-back reset and the segment tile, its heads from offsets
 * or from keys (akx::segmented_reduce_launch, akx::segmented_scan_launch). */
#define AKX_SEGMENTED_REDUCE_KERNELS(K)                                                  \
  K("scan_init", "akx::scan_init<::akx::lookback_header>", 0)                           \
  K("segmented_reduce", "akx::segmented_reduce_kernel<{S}, {A}, {O}, false>", 0)        \
  K("reduce_by_key", "akx::segmented_reduce_kernel<{S}, {A}, {O}, true>", 0)
#define AKX_SEGMENTED_SCAN_KERNELS(K)                                                    \
  K("scan_init", "akx::scan_init<::akx::lookback_header>", 0)                           \
  K("segmented_scan", "akx::segmented_scan_kernel<{S}, {D}, {A}, {O}, false>", 0)       \
  K("scan_by_key", "akx::segmented_scan_kernel<{S}, {D}, {A}, {O}, true>", 0)

/* kernels/akx/select_flagged.cuh: the look-back reset and the selection tile of flagged items,
 * without and with the rejected side (akx::select_flagged_launch); {S} the values' width dtype. */
#define AKX_SELECT_FLAGGED_KERNELS(K)                           \
  K("scan_init", "akx::scan_init<::akx::lookback_header>", 0)  \
  K("select_flagged", "akx::select_flagged_kernel<{S}>", 0)    \
  K("partition_flagged", "akx::partition_flagged_kernel<{S}>", 0)

typedef enum {
#define AKX_FAMILY_ID_(ID, name, Plan, header, file, launcher, kind, prebuilt, finish) AKX__FAMILY_##ID,
  AKX_FAMILY_LIST(AKX_FAMILY_ID_)
#undef AKX_FAMILY_ID_
  AKX__FAMILY_COUNT
} akx__family;

/* What a launch needs to find its kernels: the family and the combination its unit is
 * instantiated for. dtypes, ops and maps as ints; a field the family's kind does not key
 * (akx__kind_row's keys) is not read, whatever it holds (each akx__<name>_combination below
 * fills what its plan has); op: a built-in akx_op or a user op's id. */
typedef struct {
  int32_t family, src, dst, acc, op, map;
} akx__combination;

/* The family's name (the family list's name column); "invalid" for anything else. */
const char *akx__family_name(int family);

/* The family's kind (the family list's kind column); AKX__KIND_NONE for an id that is no
 * family. */
static inline akx__family_kind_t akx__family_kind(int family) {
  switch (family) {
#define AKX_FAMILY_KIND_(ID, name, Plan, header, file, launcher, kind, prebuilt, finish) \
  case AKX__FAMILY_##ID: return AKX__KIND_##kind;
    AKX_FAMILY_LIST(AKX_FAMILY_KIND_)
#undef AKX_FAMILY_KIND_
  }
  return AKX__KIND_NONE;
}
/* The family's row of the kind table (src/core/kinds.h): for an id that is no family, the
 * NONE row (no field keyed, no rules, no user op). */
static inline const akx__kind_row *akx__kind_of(int family) { return &akx__kinds[akx__family_kind(family)]; }

/* Whether the family prebuilds its kind's AUTO accumulators alone (the family list's prebuilt
 * column: AUTO_ACC where an explicit accumulator's kernels are the largest units of the build
 * and compile at run time on first use instead). src/launch/route.c asks this before the
 * kind's rule, and the family's instance file reads the same column at compile time
 * (src/launch/instance_table.inl, auto_acc_only). */
#define AKX__PREBUILT_ALL 0
#define AKX__PREBUILT_AUTO_ACC 1
static inline int akx__family_auto_acc_only(int family) {
  switch (family) {
#define AKX_FAMILY_AUTO_(ID, name, Plan, header, file, launcher, kind, prebuilt, finish) \
  case AKX__FAMILY_##ID: return AKX__PREBUILT_##prebuilt;
    AKX_FAMILY_LIST(AKX_FAMILY_AUTO_)
#undef AKX_FAMILY_AUTO_
  }
  return 0;
}

/* The finish a plan of the family stores through (the family list's finish column), NULL where
 * its kernels have none or the id is no family. */
#define AKX__FINISH_STORE(Plan, plan) (&((const Plan *)(plan))->finish)
#define AKX__FINISH_NONE(Plan, plan) ((const akx__finish *)0)
static inline const akx__finish *akx__family_finish(int family, const void *plan) {
  switch (family) {
#define AKX_FAMILY_FINISH_(ID, name, Plan, header, file, launcher, kind, prebuilt, finish) \
  case AKX__FAMILY_##ID: return AKX__FINISH_##finish(Plan, plan);
    AKX_FAMILY_LIST(AKX_FAMILY_FINISH_)
#undef AKX_FAMILY_FINISH_
  }
  return 0;
}
/* Whether the family's kernels store through a finish (the same column). */
#define AKX__STORES_STORE 1
#define AKX__STORES_NONE 0
static inline int akx__family_stores_finish(int family) {
  switch (family) {
#define AKX_FAMILY_STORES_(ID, name, Plan, header, file, launcher, kind, prebuilt, finish) \
  case AKX__FAMILY_##ID: return AKX__STORES_##finish;
    AKX_FAMILY_LIST(AKX_FAMILY_STORES_)
#undef AKX_FAMILY_STORES_
  }
  return 0;
}

static inline akx__combination akx__reduce_whole_combination(const akx__reduce_whole_plan *p) {
  const akx__combination c = {AKX__FAMILY_REDUCE_WHOLE, p->src.dtype, p->finish.dst_dtype, p->acc, p->op, p->map};
  return c;
}
static inline akx__combination akx__reduce_dims_combination(const akx__reduce_dims_plan *p) {
  const akx__combination c = {AKX__FAMILY_REDUCE_DIMS, p->src_dtype, p->finish.dst_dtype, p->acc, p->op, p->map};
  return c;
}
static inline akx__combination akx__scan_combination(const akx__scan_plan *p) {
  const akx__combination c = {AKX__FAMILY_SCAN, p->src_dtype, p->dst_dtype, p->acc, p->op, 0};
  return c;
}
static inline akx__combination akx__findall_combination(const akx__findall_plan *p) {
  const akx__combination c = {AKX__FAMILY_FINDALL, p->src_dtype, -1, -1, 0, 0};
  return c;
}
static inline akx__combination akx__segmented_reduce_combination(const akx__segmented_plan *p) {
  const akx__combination c = {AKX__FAMILY_SEGMENTED_REDUCE, p->src_dtype, p->finish.dst_dtype, p->acc, p->op, p->map};
  return c;
}
static inline akx__combination akx__segmented_scan_combination(const akx__segmented_plan *p) {
  const akx__combination c = {AKX__FAMILY_SEGMENTED_SCAN, p->src_dtype, p->dst_dtype, p->acc, p->op, 0};
  return c;
}
static inline akx__combination akx__select_flagged_combination(const akx__select_plan *p) {
  const akx__combination c = {AKX__FAMILY_SELECT_FLAGGED, p->src_dtype, -1, -1, 0, 0};
  return c;
}

#ifdef __cplusplus
}
#endif
#endif
