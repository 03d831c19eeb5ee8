/* The kind table (src/core/kinds.h) and what the family list's rows say beside it
 * (src/core/families.h):
 *  - a plan whose kernels store through akx__finish is refused before any launch when its dst
 *    dtype is none, for every family whose kernels have that store, whichever path its
 *    kernels take (src/launch/route.c, check_finish);
 *  - every kind's row is consistent with itself and with the families of that kind, so that a
 *    new kind is one row and a mistake in it fails here rather than at a unit's compile. */
#include <criterion/criterion.h>
#include <string.h>

#include "akx.h"
#include "fixture.h"
#include "internal.h"
#include "jit/builtin_instance.h"
#include "jit/instance.h"
#include "launch/route.h"

/* ---- the finish check ------------------------------------------------------------------------ */
/* A plan of no tiles and no elements: whatever it reaches launches nothing, so that a missing
 * check shows as a success rather than as the kernels' garbage. The accumulator is the AUTO one,
 * prebuilt on every backend's set where the family prebuilds at all. */
static void refused(akx_context *ctx, akx__combination c, const void *plan, const char *family) {
  akx_status s = akx__launch(ctx, c, plan);
  cr_expect_eq(s, AKX_ERROR_INTERNAL, "%s: a finish to dst dtype %d launched (%s)", family, AKX_DTYPE_COUNT,
               akx_last_error());
  cr_expect(strstr(akx_last_error(), family) && strstr(akx_last_error(), "cannot be stored"), "%s: \"%s\"", family,
            akx_last_error());
}

static akx_dtype auto_acc(akx_dtype src) {
  akx_dtype a;
  cr_assert_eq(akx__resolve_acc(src, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_DTYPE_AUTO, &a), AKX_SUCCESS);
  return a;
}

Test(kinds, a_finish_to_no_dtype_is_refused_for_every_family_that_stores_through_one) {
  akx_context *ctx = tfx_open();
  const akx_dtype acc = auto_acc(AKX_FLOAT32);
  akx__finish bad;
  memset(&bad, 0, sizeof bad);
  bad.dst_dtype = AKX_DTYPE_COUNT;

  akx__reduce_whole_plan w;
  memset(&w, 0, sizeof w);
  w.src.dtype = AKX_FLOAT32;
  w.acc = acc;
  w.finish = bad;
  refused(ctx, akx__reduce_whole_combination(&w), &w, "reduce_whole");

  akx__reduce_dims_plan d;
  memset(&d, 0, sizeof d);
  d.src_dtype = AKX_FLOAT32;
  d.acc = acc;
  d.finish = bad;
  refused(ctx, akx__reduce_dims_combination(&d), &d, "reduce_dims");

  /* The segmented plan serves both segmented families; only the reduction stores through its
   * finish (a segmented scan writes dst_dtype, and its finish holds the init alone). */
  akx__segmented_plan g;
  memset(&g, 0, sizeof g);
  g.src_dtype = AKX_FLOAT32;
  g.dst_dtype = AKX_FLOAT32;
  g.acc = acc;
  g.finish = bad;
  refused(ctx, akx__segmented_reduce_combination(&g), &g, "segmented_reduce");
  cr_expect_eq(akx__launch(ctx, akx__segmented_scan_combination(&g), &g), AKX_SUCCESS,
               "a segmented scan of no tiles: %s", akx_last_error());
  tfx_close(ctx);
}

/* ---- the kind table ---------------------------------------------------------------------------- */
#define ALL_FIELDS (AKX__FIELD_SRC | AKX__FIELD_DST | AKX__FIELD_ACC | AKX__FIELD_OP | AKX__FIELD_MAP)
#define PLACEHOLDERS (AKX__FIELD_SRC | AKX__FIELD_DST | AKX__FIELD_ACC | AKX__FIELD_OP)

Test(kinds, every_row_is_consistent_with_itself) {
  const akx__kind_row *none = &akx__kinds[AKX__KIND_NONE];
  cr_expect(none->keys == 0 && none->fills == 0 && none->rules == 0 && none->user_op == AKX__USER_OP_NONE,
            "the NONE row keys, fills or takes something");
  for (int i = AKX__KIND_NONE + 1; i < AKX__KIND_COUNT; i++) {
    const akx__kind_row *k = &akx__kinds[i];
    cr_assert(k->name && k->noun && k->noun[0], "kind %d has no row", i);
    for (int j = AKX__KIND_NONE + 1; j < i; j++)
      cr_expect(strcmp(akx__kinds[j].name, k->name) != 0, "two rows of kind %s", k->name);
    cr_expect((k->keys & ~ALL_FIELDS) == 0 && (k->fills & ~PLACEHOLDERS) == 0, "%s: a bit that is no field", k->name);
    cr_expect(k->keys & AKX__FIELD_SRC, "%s: its kernels are not selected by their source dtype", k->name);
    /* a unit names nothing its key does not hold: the key is what makes two texts differ */
    cr_expect((k->fills & ~k->keys) == 0, "%s: fills a placeholder it does not key (fills %#x, keys %#x)", k->name,
              k->fills, k->keys);
    /* ... and the key holds nothing the text does not name, but the map (a run-time argument) */
    cr_expect((k->keys & ~AKX__FIELD_MAP) == k->fills, "%s: keys a field its unit does not fill", k->name);
    switch (k->rules) {
      case AKX__RULES_REDUCE:
        /* an accumulator for an op under a map; dst through the finish, at run time */
        cr_expect((k->keys & (AKX__FIELD_ACC | AKX__FIELD_OP | AKX__FIELD_MAP)) ==
                      (AKX__FIELD_ACC | AKX__FIELD_OP | AKX__FIELD_MAP) && !(k->keys & AKX__FIELD_DST),
                  "%s: the reductions' rules read src, map, acc and op, never dst", k->name);
        break;
      case AKX__RULES_SCAN:
        cr_expect((k->keys & (AKX__FIELD_DST | AKX__FIELD_ACC | AKX__FIELD_OP)) ==
                      (AKX__FIELD_DST | AKX__FIELD_ACC | AKX__FIELD_OP) && !(k->keys & AKX__FIELD_MAP),
                  "%s: the scans' rules read src, dst, acc and op, never a map", k->name);
        break;
      case AKX__RULES_SOURCE_ONLY:
        cr_expect(k->keys == AKX__FIELD_SRC, "%s: prebuilt for every source, keyed by more", k->name);
        break;
      default: cr_expect(0, "%s: rules %d are none", k->name, (int)k->rules);
    }
    switch (k->user_op) {
      case AKX__USER_OP_NONE: break;
      case AKX__USER_OP_STORE:
      case AKX__USER_OP_DST:
        /* a user op's unit replaces {A} and {O} with the op's types */
        cr_expect((k->fills & (AKX__FIELD_ACC | AKX__FIELD_OP)) == (AKX__FIELD_ACC | AKX__FIELD_OP),
                  "%s: takes user ops and has no op or accumulator to put them in", k->name);
        cr_expect(!(k->keys & AKX__FIELD_DST) == (k->user_op == AKX__USER_OP_STORE),
                  "%s: a user op's dst is its store's dtype exactly where the built-in ops' is not keyed", k->name);
        break;
      default: cr_expect(0, "%s: user-op form %d is none", k->name, (int)k->user_op);
    }
  }
}

/* ---- the families against their kinds ---------------------------------------------------------- */
typedef struct {
  int id;
  const char *name, *launcher;
  int auto_acc_only, stores;
  int n;
  const char *ids[8];
  int user_only[8];
} family_row;

#define KERNEL_ID_(key, id, user) id,
#define KERNEL_USER_(key, id, user) user,
#define FAMILY_ROW_(ID, name, Plan, header, file, launcher, kind, prebuilt, finish)                        \
  {AKX__FAMILY_##ID, #name, launcher, AKX__PREBUILT_##prebuilt, AKX__STORES_##finish,                    \
   (int)(sizeof((const char *[]){AKX_##ID##_KERNELS(KERNEL_ID_)}) / sizeof(const char *)),               \
   {AKX_##ID##_KERNELS(KERNEL_ID_)}, {AKX_##ID##_KERNELS(KERNEL_USER_)}},
static const family_row rows[] = {AKX_FAMILY_LIST(FAMILY_ROW_)};

/* The placeholders a template-id names, as field bits; -1 for one that is none. */
static int placeholders(const char *id) {
  int bits = 0;
  for (const char *c = strchr(id, '{'); c; c = strchr(c + 1, '{')) {
    if (c[1] == 0 || c[2] != '}') return -1;
    switch (c[1]) {
      case 'S': bits |= AKX__FIELD_SRC; break;
      case 'D': bits |= AKX__FIELD_DST; break;
      case 'A': bits |= AKX__FIELD_ACC; break;
      case 'O': bits |= AKX__FIELD_OP; break;
      default: return -1;
    }
  }
  return bits;
}

Test(kinds, every_family_names_what_its_kind_fills) {
  cr_assert_eq(sizeof rows / sizeof rows[0], AKX__FAMILY_COUNT);
  for (int f = 0; f < AKX__FAMILY_COUNT; f++) {
    const family_row *r = &rows[f];
    const akx__kind_row *k = akx__kind_of(r->id);
    cr_assert(k != &akx__kinds[AKX__KIND_NONE], "%s has no kind", r->name);
    /* the launcher takes the whole combination the unit is made for */
    cr_expect_eq(placeholders(r->launcher), (int)k->fills, "%s: launcher %s, a %s's unit fills %#x", r->name,
                 r->launcher, k->name, k->fills);
    for (int i = 0; i < r->n; i++) {
      const int p = placeholders(r->ids[i]);
      cr_expect(p >= 0 && (p & ~(int)k->fills) == 0, "%s: %s names a placeholder a %s's unit does not fill",
                r->name, r->ids[i], k->name);
      cr_expect(!r->user_only[i] || k->user_op != AKX__USER_OP_NONE, "%s: %s is a user op's and a %s takes none",
                r->name, r->ids[i], k->name);
    }
    /* a user op's reduction checks its fold against the finish (src/jit/user_op.c) */
    if (k->user_op == AKX__USER_OP_STORE)
      cr_expect(r->stores, "%s: a %s whose kernels store through no finish", r->name, k->name);
    if (r->stores)
      cr_expect(!(k->keys & AKX__FIELD_DST), "%s: stores through a finish (dst at run time) and keys dst", r->name);
    if (r->auto_acc_only)
      cr_expect(k->keys & AKX__FIELD_ACC, "%s: prebuilds the AUTO accumulators of a kind without one", r->name);
    cr_expect_eq(akx__family_auto_acc_only(r->id), r->auto_acc_only);
    cr_expect_eq(akx__family_stores_finish(r->id), r->stores);
  }
}

/* A unit's keys hold what the kind keys and nothing else, and its text names the op exactly
 * where the kind fills {O}: two combinations that differ only in a field not keyed share one
 * unit, one the kind keys does not. */
Test(kinds, a_units_key_is_what_its_kind_keys) {
  for (int f = 0; f < AKX__FAMILY_COUNT; f++) {
    const akx__kind_row *k = akx__kind_of(f);
    const akx__entry_key e = akx__builtin_entry_key(0, f, AKX_FLOAT32, AKX_FLOAT32, AKX_FLOAT32, AKX_OP_ADD);
    cr_expect_eq(e.dst, k->keys & AKX__FIELD_DST ? AKX_FLOAT32 : AKX_DTYPE_AUTO, "%s: dst", akx__family_name(f));
    cr_expect_eq(e.acc, k->keys & AKX__FIELD_ACC ? AKX_FLOAT32 : AKX_DTYPE_AUTO, "%s: acc", akx__family_name(f));
    cr_expect_eq(e.op, k->keys & AKX__FIELD_OP ? AKX_OP_ADD : 0, "%s: op", akx__family_name(f));
    const akx__instance_key ik = akx__builtin_instance_key(f, AKX_FLOAT32, AKX_FLOAT32, AKX_FLOAT32, AKX_OP_MAX);
    cr_expect(ik.dst == e.dst && ik.acc == e.acc, "%s: the instance key and the entry key differ", akx__family_name(f));
    akx__instance in;
    cr_assert_eq(akx__instance_generate(&ik, &in), AKX_SUCCESS, "%s: %s", akx__family_name(f), akx_last_error());
    cr_expect_eq(strstr(in.source, "::akx::op_max") != NULL, (k->fills & AKX__FIELD_OP) != 0,
                 "%s: the op's functor named where the kind fills no {O}, or not where it does", akx__family_name(f));
    akx__instance_free(&in);
  }
  /* an id that is no family: the NONE row, which keys nothing and takes no user op */
  cr_expect(akx__kind_of(AKX__FAMILY_COUNT) == &akx__kinds[AKX__KIND_NONE] &&
            akx__kind_of(-1) == &akx__kinds[AKX__KIND_NONE]);
}
