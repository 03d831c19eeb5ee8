// The prebuilt instances of one source dtype (AKX_SRC_DTYPE) for one backend, as tables: a
// family's entry akx__<backend>_<family>_<dtype> (src/launch/kernel_entries.inc) is a resolver
// that the routing asks once per launch (src/launch/route.c) for the launcher of a combination,
// the family's host launcher of that exact instance behind one cast of the plan, or nullptr where
// this compiler's set (AKX_PREBUILT_FOR: kernels/akx/dtypes.cuh, the prebuilt sets) does not hold
// it. The backend then calls that launcher itself: no ladder of template frames between the
// planner and the tile body (docs/launch_line.md lists the calls). Build-only, included by the
// families' instance files (src/launch/*_instances.inl) after their kernel headers; host code
// alone (NVRTC compiles kernels, a run-time unit instantiates its own: src/jit/instance.h).
#if !defined(__CUDACC_RTC__)
#include "akx/op_list.h"
#include "kernel_entries.h"

#if defined(__CUDACC__)
#define AKX_ENTRY_NAME_3_(family, name) akx__cuda_##family##_##name
#else
#define AKX_ENTRY_NAME_3_(family, name) akx__sim_##family##_##name
#endif
#define AKX_ENTRY_NAME_2_(family, name) AKX_ENTRY_NAME_3_(family, name)
// The resolver of `family` for this file's source dtype.
#define AKX_ENTRY_NAME(family) AKX_ENTRY_NAME_2_(family, AKX_SRC_NAME)
#define AKX_INSTANCES_2_(name) akx_instances_##name
#define AKX_INSTANCES_1_(name) AKX_INSTANCES_2_(name)
// The namespace of the source dtype's tables: a build unit may hold several dtypes' instances,
// this file included once for each (CMakeLists.txt, akx_kernel_instances).
#define AKX_INSTANCES AKX_INSTANCES_1_(AKX_SRC_NAME)

namespace {
namespace AKX_INSTANCES {
using Src = akx::dtype_t<AKX_SRC_DTYPE>;

// The tables are indexed by the enums' values: the lists run in their order.
#define AKX_X_(E, O, N) static_assert(E == __COUNTER__ - op_counter_base_ - 1, "op list order");
constexpr int op_counter_base_ = __COUNTER__;
AKX_OP_LIST(AKX_X_)
#undef AKX_X_
constexpr int op_count_ = __COUNTER__ - op_counter_base_ - 1;

// Whether a family prebuilds its kind's AUTO accumulators alone: the family list's prebuilt
// column (src/core/families.h, akx__family_auto_acc_only), read at compile time.
constexpr bool auto_acc_only(int family) {
  switch (family) {
#define AKX_X_(ID, name, Plan, header, file, launcher, kind, prebuilt, finish) \
  case AKX__FAMILY_##ID: return AKX__PREBUILT_##prebuilt == AKX__PREBUILT_AUTO_ACC;
    AKX_FAMILY_LIST(AKX_X_)
#undef AKX_X_
  }
  return false;
}

// The tests' plugin (AKX_PREBUILT_TEST_SET) holds the combinations of its list alone
// (tests/sim_test_kernels/used.h: what the suite calls, recorded from a run of it), not every
// combination of the tests' set: each instance of the plugin costs the README's build a share of
// its compile (every accumulator the rules allow was 331 reduce_dims instances, of which the
// suite called 60), and a combination outside the list compiles at run time on first use, as
// outside the set (src/jit/test_kernels.c). Elsewhere every combination of the set is built.
// dst < 0: a reduction's instance, which serves every dst.
#if !defined(__CUDACC__) && defined(AKX_PREBUILT_TEST_SET)
#include "tests/sim_test_kernels/used.h"
// The list as bits, built once a unit: [family][source][accumulator], bit op for a reduction,
// 7 + op for a scan into the accumulator's dtype, 14 + op into the source's. A search of the
// list's rows in every instance's test cost the host compiler a quarter of a second a unit.
struct listed_table {
  uint32_t bits[AKX__FAMILY_COUNT][AKX_DTYPE_COUNT][AKX_DTYPE_COUNT] = {};
};
consteval listed_table listed_build() {
  struct row { int family, src, dst, acc, op; };
  constexpr row rows[] = {
#define AKX_X_(F, S, D, A, O) row{AKX__FAMILY_##F, S, D, A, O},
      AKX_TEST_KERNELS_USED(AKX_X_)
#undef AKX_X_
  };
  listed_table t;
  for (const row &r : rows)
    t.bits[r.family][r.src][r.acc] |= 1u << (r.dst < 0 ? r.op : r.dst == r.acc ? 7 + r.op : 14 + r.op);
  return t;
}
constexpr listed_table listed_bits = listed_build();
consteval bool listed(int family, int src, int dst, int acc, int op) {
  return listed_bits.bits[family][src][acc] >> (dst < 0 ? op : dst == acc ? 7 + op : 14 + op) & 1u;
}
#else
constexpr bool listed(int, int, int, int, int) { return true; }
#endif
// A launcher as the tables hold it: the plan's own type restored, then the family's launcher of
// the instance (akx::scan_launch<S, D, A, O>, ...), the next call of the launch line.
template <class Plan, akx_status (*F)(const Plan &, void *)>
akx_status erased(const void *plan, void *stream) {
  return F(*static_cast<const Plan *>(plan), stream);
}

// ---- scans: [accumulator][op][dst] ----------------------------------------------------------
// F::template instance<S, D, A, O>() is the family's erased launcher of that instance; AutoOnly:
// the family prebuilds the AUTO accumulator alone (auto_acc_only).
// dst: slot 0 stores to the accumulator's dtype, slot 1 to the source's (akx::scan_prebuilt).
template <class F, int Family, bool AutoOnly, class Acc, class Op, int Slot>
constexpr akx__launcher scan_instance() {
  constexpr akx_dtype dst = Slot == 0 ? akx::dtype_v<Acc> : akx::dtype_v<Src>;
  if constexpr (akx::scan_prebuilt(akx::dtype_v<Src>, akx::dtype_v<Acc>, Op::id, akx::dtype_v<Acc>, AKX_PREBUILT_FOR) &&
                (!AutoOnly || akx::dtype_v<Acc> == akx::auto_acc(akx::dtype_v<Src>, Op::id)) &&
                listed(Family, akx::dtype_v<Src>, dst, akx::dtype_v<Acc>, Op::id)) {
    if constexpr (Slot == 0) return F::template instance<Src, Acc, Acc, Op>();
    else if constexpr (!akx::is_same<Src, Acc>::value) return F::template instance<Src, Src, Acc, Op>();
    else return nullptr;
  } else {
    return nullptr;
  }
}
template <class F, int Family, bool AutoOnly, class Acc>
struct scan_row {
#define AKX_X_(E, O, N) {scan_instance<F, Family, AutoOnly, Acc, O, 0>(), scan_instance<F, Family, AutoOnly, Acc, O, 1>()},
  static constexpr akx__launcher ops[op_count_][2] = {AKX_OP_LIST(AKX_X_)};
#undef AKX_X_
};
template <class F, int Family>
akx__launcher scan_resolve(const akx__combination *c) {
  constexpr bool AutoOnly = auto_acc_only(Family);
#define AKX_X_(D, T, N, S) scan_row<F, Family, AutoOnly, T>::ops,
  static constexpr const akx__launcher (*rows[])[2] = {AKX_DTYPE_LIST(AKX_X_)};
#undef AKX_X_
  if ((uint32_t)c->acc >= AKX_DTYPE_COUNT || (uint32_t)c->op >= (uint32_t)op_count_) return nullptr;
  const int slot = c->dst == c->acc ? 0 : c->dst == (int32_t)akx::dtype_v<Src> ? 1 : -1;
  return slot < 0 ? nullptr : rows[c->acc][c->op][slot];
}

// ---- reductions: [accumulator][op], the map checked at the lookup ----------------------------
// An instance serves every map (kernels/akx/ops.cuh, visit_map); one is compiled where some map
// puts (source, accumulator, op) in the set, and a lookup with a map that does not is refused,
// as the set says (akx::reduce_prebuilt).
template <bool AutoOnly>
constexpr bool reduce_in_set(akx_map m, akx_dtype acc, akx_op op) {
  return akx::reduce_prebuilt(akx::dtype_v<Src>, m, acc, op, AKX_PREBUILT_FOR) &&
         (!AutoOnly || akx::auto_acc(akx::map_result(akx::dtype_v<Src>, m), op) == acc);
}
template <bool AutoOnly>
constexpr bool reduce_in_set_any_map(akx_dtype acc, akx_op op) {
  for (int m = 0; m < AKX_MAP_COUNT; ++m)
    if (reduce_in_set<AutoOnly>((akx_map)m, acc, op)) return true;
  return false;
}
template <class F, int Family, bool AutoOnly, class Acc, class Op>
constexpr akx__launcher reduce_instance() {
  if constexpr (reduce_in_set_any_map<AutoOnly>(akx::dtype_v<Acc>, Op::id) &&
                listed(Family, akx::dtype_v<Src>, -1, akx::dtype_v<Acc>, Op::id))
    return F::template instance<Src, Acc, Op>();
  else return nullptr;
}
template <class F, int Family, bool AutoOnly, class Acc>
struct reduce_row {
#define AKX_X_(E, O, N) reduce_instance<F, Family, AutoOnly, Acc, O>(),
  static constexpr akx__launcher ops[op_count_] = {AKX_OP_LIST(AKX_X_)};
#undef AKX_X_
};
template <class F, int Family>
akx__launcher reduce_resolve(const akx__combination *c) {
  constexpr bool AutoOnly = auto_acc_only(Family);
#define AKX_X_(D, T, N, S) reduce_row<F, Family, AutoOnly, T>::ops,
  static constexpr const akx__launcher *rows[] = {AKX_DTYPE_LIST(AKX_X_)};
#undef AKX_X_
  if ((uint32_t)c->acc >= AKX_DTYPE_COUNT || (uint32_t)c->op >= (uint32_t)op_count_ ||
      (uint32_t)c->map >= AKX_MAP_COUNT || !reduce_in_set<AutoOnly>((akx_map)c->map, (akx_dtype)c->acc, (akx_op)c->op))
    return nullptr;
  return rows[c->acc][c->op];
}
}  // namespace AKX_INSTANCES
}  // namespace
#endif  // !__CUDACC_RTC__
