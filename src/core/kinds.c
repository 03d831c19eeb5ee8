/* The kind table's rows (src/core/kinds.h). */
#include "kinds.h"

const akx__kind_row akx__kinds[AKX__KIND_COUNT] = {
    [AKX__KIND_NONE] = {"NONE", "call", 0, 0, (akx__kind_rules)0, AKX__USER_OP_NONE},
#define AKX_KIND_ROW_(KIND, noun, keys, fills, rules, user_op) [AKX__KIND_##KIND] = {#KIND, noun, keys, fills, rules, user_op},
    AKX_KIND_LIST(AKX_KIND_ROW_)
#undef AKX_KIND_ROW_
};
