/* The kinds of kernel family, registered once: what a family's combination is made of, and so
 * which fields key its run-time unit, which placeholders the unit fills, which dtype rules
 * prebuild it and whether (and how) it takes a user op. A family names its kind in its row of
 * AKX_FAMILY_LIST (src/core/families.h); everything that depends on the kind reads the row here
 * (akx__kind_of) instead of asking which kind it is, so that a new kind is one row and a new
 * family of an existing kind is one row of the family list. tests/test_kinds.c walks the rows.
 *
 * A row is X(KIND, noun, keys, fills, rules, user_op):
 *   KIND     AKX__KIND_<KIND>, the family list's kind column
 *   noun     what one call of the kind does, as a sentence says it ("a user op's scan")
 *   keys     the combination fields (AKX__FIELD_*) that select its kernels; its unit's key is
 *            these less AKX__FIELD_MAP (a map is the kernels' run-time argument: akx__entry_key
 *            has none; the dtype rules read it, and an AUTO accumulator resolves under it). A
 *            field not keyed is AKX_DTYPE_AUTO in the unit's key (an op: 0)
 *   fills    the placeholders of the family's template-ids its unit fills, as the same bits:
 *            {S} SRC, {D} DST, {A} ACC, {O} OP (src/jit/instance.c, expand)
 *   rules    the dtype rules of its accumulator and its prebuilt set (akx__kind_rules)
 *   user_op  whether a user op's unit is made for it, and its form (akx__user_op_form) */
#ifndef AKX_KINDS_H
#define AKX_KINDS_H
#ifdef __cplusplus
extern "C" {
#endif

/* A combination's fields (akx__combination, src/core/families.h), as bits. */
enum {
  AKX__FIELD_SRC = 1,
  AKX__FIELD_DST = 2,
  AKX__FIELD_ACC = 4,
  AKX__FIELD_OP = 8,
  AKX__FIELD_MAP = 16
};

/* The dtype rules a kind's kernels follow (kernels/akx/dtypes.cuh):
 *   REDUCE       akx_reduce_opts' accumulator, checked against every map; prebuilt by
 *                akx__reduce_prebuilt
 *   SCAN         akx_scan_opts' accumulator, dst any dtype (AUTO: the accumulator's);
 *                prebuilt by akx__scan_prebuilt
 *   SOURCE_ONLY  no accumulator, dst or op: every source dtype is prebuilt */
typedef enum { AKX__RULES_REDUCE = 1, AKX__RULES_SCAN, AKX__RULES_SOURCE_ONLY } akx__kind_rules;

/* A user op's unit (src/jit/user_op.c):
 *   NONE   the kind takes no user op
 *   STORE  the key's dst is the dtype the op's store is compiled for (AKX_DTYPE_AUTO: the
 *          accumulator itself), and the unit's entry refuses a fold into a dst its accumulator
 *          cannot be made from (the kernels take dst's dtype at run time: akx__finish)
 *   DST    the key's dst is the dtype the kernels write, which a user op's unit must name */
typedef enum { AKX__USER_OP_NONE, AKX__USER_OP_STORE, AKX__USER_OP_DST } akx__user_op_form;

#define AKX_KIND_LIST(X)                                                                              \
  X(REDUCE, "reduction", AKX__FIELD_SRC | AKX__FIELD_ACC | AKX__FIELD_OP | AKX__FIELD_MAP,            \
    AKX__FIELD_SRC | AKX__FIELD_ACC | AKX__FIELD_OP, AKX__RULES_REDUCE, AKX__USER_OP_STORE)            \
  X(SCAN, "scan", AKX__FIELD_SRC | AKX__FIELD_DST | AKX__FIELD_ACC | AKX__FIELD_OP,                   \
    AKX__FIELD_SRC | AKX__FIELD_DST | AKX__FIELD_ACC | AKX__FIELD_OP, AKX__RULES_SCAN, AKX__USER_OP_DST) \
  X(PLAIN, "selection", AKX__FIELD_SRC, AKX__FIELD_SRC, AKX__RULES_SOURCE_ONLY, AKX__USER_OP_NONE)

/* AKX__KIND_NONE: no family's (an id that is no family). */
typedef enum {
  AKX__KIND_NONE,
#define AKX_KIND_ID_(KIND, noun, keys, fills, rules, user_op) AKX__KIND_##KIND,
  AKX_KIND_LIST(AKX_KIND_ID_)
#undef AKX_KIND_ID_
  AKX__KIND_COUNT
} akx__family_kind_t;

typedef struct {
  const char *name; /* the row's KIND: "REDUCE", ... */
  const char *noun;
  unsigned keys, fills;
  akx__kind_rules rules;
  akx__user_op_form user_op;
} akx__kind_row;

/* The rows, indexed by akx__family_kind_t from AKX__KIND_NONE + 1 (src/core/kinds.c). */
extern const akx__kind_row akx__kinds[AKX__KIND_COUNT];

#ifdef __cplusplus
}
#endif
#endif
