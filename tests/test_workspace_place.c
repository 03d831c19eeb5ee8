/* akx__ws_place (src/core/workspace_regions.h): where a call's bytes go, as a table of buffers,
 * layouts and needs. The decision is pure, so every case is checked on the CPU whatever the
 * backend: as laid out, widened in place, grown, on its own layout, or too small. */
#include <criterion/criterion.h>
#include "workspace_regions.h"

typedef struct {
  const char *what;
  size_t bytes;
  akx__ws_layout now;
  akx__ws_need need;
  int grow;
  akx__ws_placement want;
  akx__ws_layout next;
} place_case;

#define LS(h, f, t, s) ((akx__ws_layout){(h), (f), (t), (s)})
#define L(h, f, t) LS(h, f, t, 0)
#define NEEDS(h, f, t, s, scratch, reserve) ((akx__ws_need){LS(h, f, t, s), (scratch), (reserve), 0})
#define NEED(h, f, t, scratch, reserve) NEEDS(h, f, t, 0, scratch, reserve)

Test(workspace_place, the_table) {
  const place_case cases[] = {
      {"an empty cached buffer grows", 0, L(0, 0, 0), NEED(1, 10, 0, 100, 0), 1, AKX__WS_GROW, L(1, 10, 0)},
      {"a scan on its own flags", 4096, L(1, 10, 0), NEED(1, 10, 0, 100, 0), 1, AKX__WS_AS_LAID, L(1, 10, 0)},
      {"fewer flags: as laid", 4096, L(1, 10, 0), NEED(1, 3, 0, 100, 0), 0, AKX__WS_AS_LAID, L(1, 10, 0)},
      {"a reduction's tickets widen the scan's layout", 4096, L(1, 10, 0), NEED(1, 0, 5, 100, 0), 0, AKX__WS_WIDEN,
       L(1, 10, 5)},
      {"a header-only call on flags: as laid", 4096, L(1, 10, 5), NEED(1, 0, 0, 1000, 0), 0, AKX__WS_AS_LAID,
       L(1, 10, 5)},
      {"scratch only after the tags", 4096, L(1, 10, 5), NEED(0, 0, 0, 3840, 0), 0, AKX__WS_AS_LAID, L(1, 10, 5)},
      {"scratch one byte over beside the tags: a caller's buffer, its own (no tags)", 4096, L(1, 10, 5),
       NEED(0, 0, 0, 3841, 0), 0, AKX__WS_OWN, L(0, 0, 0)},
      {"the same on a cached buffer grows", 4096, L(1, 10, 5), NEED(0, 0, 0, 3841, 0), 1, AKX__WS_GROW, L(1, 10, 5)},
      {"more flags than fit beside the tickets: a caller's buffer, its own", 1024, L(1, 0, 100),
       NEED(1, 150, 0, 256, 0), 0, AKX__WS_OWN, L(1, 150, 0)},
      {"too small for the call alone", 512, L(0, 0, 0), NEED(1, 150, 0, 256, 0), 0, AKX__WS_TOO_SMALL, L(0, 0, 0)},
      {"a reserve a caller's buffer holds", 8192, L(1, 10, 0), NEED(0, 0, 0, 100, 8192), 0, AKX__WS_AS_LAID,
       L(1, 10, 0)},
      {"a reserve a cached buffer holds only beside its tags", 8192, L(1, 10, 0), NEED(0, 0, 0, 100, 8192), 1,
       AKX__WS_GROW, L(1, 10, 0)},
      {"a reserve past a caller's buffer", 8191, L(0, 0, 0), NEED(0, 0, 0, 100, 8192), 0, AKX__WS_TOO_SMALL,
       L(0, 0, 0)},
      {"a segmented reduction's split tickets widen a scan's layout (header implied)", 4096, L(1, 10, 5),
       NEEDS(0, 0, 0, 20, 100, 0), 0, AKX__WS_WIDEN, LS(1, 10, 5, 20)},
      {"fewer split tickets: as laid", 4096, LS(1, 10, 5, 20), NEEDS(0, 0, 0, 7, 100, 0), 0, AKX__WS_AS_LAID,
       LS(1, 10, 5, 20)},
      {"a scan beside the split tickets: as laid", 4096, LS(1, 10, 5, 20), NEED(1, 10, 0, 100, 0), 0,
       AKX__WS_AS_LAID, LS(1, 10, 5, 20)},
      {"split tickets past a caller's buffer beside the flags: its own", 1024, L(1, 150, 0),
       NEEDS(0, 0, 0, 40, 256, 0), 0, AKX__WS_OWN, LS(1, 0, 0, 40)},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    const place_case *c = &cases[i];
    akx__ws_layout next = L(-1, -1, -1);
    const akx__ws_placement got = akx__ws_place(c->bytes, c->now, &c->need, c->grow, &next);
    cr_expect_eq(got, c->want, "%s: placement %d, expected %d", c->what, (int)got, (int)c->want);
    if (got != AKX__WS_TOO_SMALL)
      cr_expect(next.header == c->next.header && next.flags == c->next.flags && next.tickets == c->next.tickets &&
                    next.splits == c->next.splits,
                "%s: layout {%d, %lld, %lld, %lld}, expected {%d, %lld, %lld, %lld}", c->what, (int)next.header,
                (long long)next.flags, (long long)next.tickets, (long long)next.splits, (int)c->next.header,
                (long long)c->next.flags, (long long)c->next.tickets, (long long)c->next.splits);
  }
}

Test(workspace_place, sizes) {
  /* The tags: 64 bytes of header, 4 per flag and ticket, rounded to 256; none without tags. */
  cr_expect_eq(akx__ws_tags_end(L(0, 0, 0)), 0u);
  /* The split tickets are 8-byte atomics: aligned whatever the 4-byte regions before them. */
  for (int f = 0; f < 3; ++f)
    for (int t = 0; t < 3; ++t) {
      cr_expect_eq(akx__ws_splits_at(LS(1, f, t, 5)) % 8, 0u, "flags %d, tickets %d", f, t);
      cr_expect_geq(akx__ws_splits_at(LS(1, f, t, 5)), akx__ws_tickets_at(LS(1, f, t, 5)) + 4 * (size_t)t);
      cr_expect_leq(akx__ws_splits_at(LS(1, f, t, 5)) + 16 * 5, akx__ws_tags_end(LS(1, f, t, 5)));
    }
  cr_expect_eq(akx__ws_tags_end(L(1, 0, 0)), 256u);
  cr_expect_eq(akx__ws_tags_end(L(1, 48, 0)), 256u);
  cr_expect_eq(akx__ws_tags_end(L(1, 49, 0)), 512u);
  cr_expect_eq(akx__ws_tickets_at(L(1, 49, 3)), 64u + 196u);
  const akx__ws_need n = NEED(1, 10, 0, 1000, 0), r = NEED(0, 0, 0, 10, 5000);
  cr_expect_eq(akx__ws_need_bytes(&n), 256u + 1000u, "a call's own bytes: its tags, then its scratch");
  cr_expect_eq(akx__ws_need_bytes(&r), 5000u, "a reserve above the call's own bytes");
}
