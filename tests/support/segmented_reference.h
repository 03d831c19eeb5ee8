/* The host side of the segmented and keyed family's tests (akx_segmented_reduce,
 * akx_segmented_scan, akx_reduce_by_key, akx_scan_by_key): segment patterns as CSR offsets, the
 * contract's clamping of offsets, runs of equal keys, and generated keys. No libakx function is
 * called here (the values are reference.h's). */
#ifndef AKX_TEST_SEGMENTED_REFERENCE_H
#define AKX_TEST_SEGMENTED_REFERENCE_H
#include <stddef.h>
#include <stdint.h>
#include "akx.h"

/* Offsets of nseg segments over a src of n elements: nseg + 1 entries (host, int64), as a
 * caller would hold them; entries may be anything (garbage patterns below). */
typedef struct {
  int64_t n, nseg;
  int64_t *off; /* nseg + 1 entries (malloc'd) */
  const char *name;
} tsg_offsets;

/* nseg segments of len elements each (n = nseg * len). */
tsg_offsets tsg_uniform(int64_t nseg, int64_t len);
/* nseg segments whose lengths follow a power law: about half empty, most short, a few up to
 * max_len (n is their sum). */
tsg_offsets tsg_power_law(int64_t nseg, int64_t max_len, uint64_t seed);
/* ntiny segments of 0..3 elements, with one of `big` elements among them (at ntiny / 3). */
tsg_offsets tsg_one_big(int64_t big, int64_t ntiny, uint64_t seed);
/* The segment patterns every segmented test file runs (k in 0..TSG_PATTERNS-1): all empty,
 * one segment over src, uniform 1, 31, 32, 33, 1000, 65537, power-law lengths, nseg 0,
 * offsets[0] > 0 and offsets[nseg] < n. Freed by the caller (tsg_free). */
enum { TSG_PATTERNS = 12 };
tsg_offsets tsg_pattern(int k);
/* Offsets given entry by entry (nseg + 1 of them) over n elements. */
tsg_offsets tsg_given(int64_t n, int64_t nseg, const int64_t *entries, const char *name);
void tsg_free(tsg_offsets *o);

/* Segment s as the contract reads the offsets: each entry clamped to [0, n]; empty (begin ==
 * end) when the clamped end is not past the clamped begin. */
void tsg_bounds(const tsg_offsets *o, int64_t s, int64_t *begin, int64_t *end);
/* 1 when the entries never decrease (after clamping): every element of [off[0], off[nseg])
 * then belongs to exactly one segment, and the scans write exactly those. */
int tsg_monotone(const tsg_offsets *o);
/* 1 when element i lies in some segment (clamped bounds). */
int tsg_covered(const tsg_offsets *o, int64_t i);

/* ---- keys ----------------------------------------------------------------------------- */

/* Keys of dtype t (bool or an integer) over `runs` (a tsg_offsets without empty segments: run r
 * is [off[r], off[r+1])), written into a host buffer of runs->n elements (contiguous): each run
 * one key, consecutive runs different keys, the same key coming back in later runs (a run is
 * consecutive equal keys, not a group). int64 keys of neighbouring runs may differ in bit 40
 * only, so that a comparison of 32 bits would merge them; int8 keys are negative too. */
void tsg_fill_keys(void *buf, akx_dtype t, const tsg_offsets *runs, uint64_t seed);
/* The runs of consecutive equal keys of a host view (1-d, any stride), as offsets: nseg is the
 * number of runs; keys compare by value (bool: 0/1). */
tsg_offsets tsg_runs_of(const akx_array *keys);

#endif
