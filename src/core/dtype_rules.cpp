// The host's view of the dtype rules: the accumulator a call resolves to, from the constexpr
// rules of kernels/akx/dtypes.cuh, so validation and kernel instantiation cannot disagree.
#include "internal.h"
#include "families.h"
#include "akx/dtypes.cuh"

extern "C" {
// `requested` is the caller's opts->acc as an int: any value can arrive from C, and an
// out-of-range value held in the enum type is undefined behaviour in C++.
akx_status akx__resolve_acc(akx_dtype src, akx_map map, akx_op op, int32_t requested_value,
                            akx_dtype *acc) {
  const akx_dtype r = akx::map_result(src, map);
  akx_dtype a = akx::auto_acc(r, op);
  if (requested_value != AKX_DTYPE_AUTO) {
    if (requested_value < 0 || requested_value >= AKX_DTYPE_COUNT)
      return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                       "opts->acc is %d, which is neither an akx_dtype nor AKX_DTYPE_AUTO",
                       (int)requested_value);
    const akx_dtype requested = (akx_dtype)requested_value;
    if (!akx::acc_allowed(r, op, requested))
      return akx__fail(AKX_ERROR_UNSUPPORTED,
                       "opts->acc %s is not an accumulator for map %s of %s with op %s: use AUTO "
                       "(%s), %s itself, or a wide type of its kind",
                       akx_dtype_name(requested), akx__map_name(map), akx_dtype_name(src),
                       akx__op_name(op), akx_dtype_name(a), akx_dtype_name(r));
    a = requested;
  }
  if (!akx::op_allowed(a, op))
    return akx__fail(AKX_ERROR_UNSUPPORTED, "op %s is not defined on %s accumulators (source %s, map %s)%s",
                     akx__op_name(op), akx_dtype_name(a), akx_dtype_name(src), akx__map_name(map),
                     akx::is_complex(a) ? ": complex numbers have no order"
                     : akx::is_float(a) ? ": bit ops need integers or bool"
                     : akx::is_bool(a) ? ": a bool accumulator cannot count (use AUTO: int64)" : "");
  *acc = a;
  return AKX_SUCCESS;
}

int akx__scan_supported(akx_dtype src, akx_dtype acc, akx_op op) {
  return akx::scan_supported(src, acc, op);
}

static akx::prebuilt_for set_of(int set) {
  return set == AKX__SET_TESTS ? akx::prebuilt_for_tests
         : set == AKX__SET_ALL ? akx::prebuilt_for_all
                                    : akx::prebuilt_for_library;
}

akx__prebuilt_set akx__backend_prebuilt_set(akx_backend b) {
#if defined(AKX_CUDA_PREBUILT_ALL) && AKX_CUDA_PREBUILT_ALL
  if (b == AKX_BACKEND_CUDA) return AKX__SET_ALL;
#endif
  (void)b;
  return AKX__SET_LIBRARY;
}

int akx__scan_prebuilt(akx_dtype src, akx_dtype acc, akx_op op, akx_dtype dst, akx_backend backend) {
  return akx::scan_prebuilt(src, acc, op, dst, set_of(akx__backend_prebuilt_set(backend)));
}

int akx__reduce_prebuilt(akx_dtype src, akx_map map, akx_dtype acc, akx_op op, akx_backend backend) {
  return akx::reduce_prebuilt(src, map, acc, op, set_of(akx__backend_prebuilt_set(backend)));
}

int akx__combination_prebuilt(const akx__combination *c, akx__prebuilt_set set) {
  if (c->op >= AKX_USER_OP_FIRST) return 0;
  const akx__kind_row *k = akx__kind_of(c->family);
  /* A field the kind does not key is not read: the map's, the identity map. */
  const akx_map m = k->keys & AKX__FIELD_MAP ? (akx_map)c->map : AKX_MAP_IDENTITY;
  if (akx__family_auto_acc_only(c->family)) {
    /* The AUTO accumulator of the map's result. */
    akx_dtype a;
    if (akx__resolve_acc((akx_dtype)c->src, m, (akx_op)c->op, AKX_DTYPE_AUTO, &a) != AKX_SUCCESS || (int32_t)a != c->acc)
      return 0;
  }
  const akx::prebuilt_for b = set_of(set);
  switch (k->rules) {
    case AKX__RULES_REDUCE:
      return akx::reduce_prebuilt((akx_dtype)c->src, m, (akx_dtype)c->acc, (akx_op)c->op, b);
    case AKX__RULES_SCAN:
      return akx::scan_prebuilt((akx_dtype)c->src, (akx_dtype)c->acc, (akx_op)c->op, (akx_dtype)c->dst, b);
    case AKX__RULES_SOURCE_ONLY: return akx::source_only_prebuilt(b);
  }
  return 0;
}

int akx__reduce_supported_any_map(akx_dtype src, akx_dtype acc, akx_op op) {
  return akx::reduce_supported_any_map(src, acc, op);
}

int akx__op_allowed(akx_dtype acc, akx_op op) { return akx::op_allowed(acc, op); }
}
