/* Segment patterns, clamping and runs of keys (segmented_reference.h). */
#include "segmented_reference.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "reference.h"

static int64_t *entries(int64_t nseg) {
  int64_t *p = malloc((size_t)(nseg + 1) * sizeof *p);
  if (!p) abort();
  return p;
}

tsg_offsets tsg_uniform(int64_t nseg, int64_t len) {
  tsg_offsets o = {nseg * len, nseg, entries(nseg), "uniform"};
  for (int64_t s = 0; s <= nseg; ++s) o.off[s] = s * len;
  return o;
}

tsg_offsets tsg_power_law(int64_t nseg, int64_t max_len, uint64_t seed) {
  tsg_offsets o = {0, nseg, entries(nseg), "power law"};
  o.off[0] = 0;
  for (int64_t s = 0; s < nseg; ++s) {
    const uint64_t r = ref_rand(seed, (uint64_t)s);
    int64_t len = 0;
    if (r % 2) { /* half of them empty; the others' lengths (max_len + 1)^(u^3) - 1 */
      const double u = (double)(r >> 11) / 9007199254740992.0;
      len = (int64_t)pow((double)max_len + 1.0, u * u * u) - 1;
      if (len > max_len) len = max_len;
      if (len < 0) len = 0;
    }
    o.off[s + 1] = o.off[s] + len;
  }
  o.n = o.off[nseg];
  return o;
}

tsg_offsets tsg_one_big(int64_t big, int64_t ntiny, uint64_t seed) {
  const int64_t nseg = ntiny + 1, at = ntiny / 3;
  tsg_offsets o = {0, nseg, entries(nseg), "one big among tiny"};
  o.off[0] = 0;
  for (int64_t s = 0; s < nseg; ++s)
    o.off[s + 1] = o.off[s] + (s == at ? big : (int64_t)(ref_rand(seed, (uint64_t)s) % 4));
  o.n = o.off[nseg];
  return o;
}

tsg_offsets tsg_given(int64_t n, int64_t nseg, const int64_t *e, const char *name) {
  tsg_offsets o = {n, nseg, entries(nseg), name};
  memcpy(o.off, e, (size_t)(nseg + 1) * sizeof *e);
  return o;
}

void tsg_free(tsg_offsets *o) {
  free(o->off);
  o->off = NULL;
}

static int64_t clamp(int64_t x, int64_t n) { return x < 0 ? 0 : x > n ? n : x; }

void tsg_bounds(const tsg_offsets *o, int64_t s, int64_t *begin, int64_t *end) {
  const int64_t b = clamp(o->off[s], o->n), e = clamp(o->off[s + 1], o->n);
  *begin = b;
  *end = e > b ? e : b;
}

int tsg_monotone(const tsg_offsets *o) {
  for (int64_t s = 0; s < o->nseg; ++s)
    if (clamp(o->off[s + 1], o->n) < clamp(o->off[s], o->n)) return 0;
  return 1;
}

int tsg_covered(const tsg_offsets *o, int64_t i) {
  for (int64_t s = 0; s < o->nseg; ++s) {
    int64_t b, e;
    tsg_bounds(o, s, &b, &e);
    if (b <= i && i < e) return 1;
  }
  return 0;
}

/* ---- keys --------------------------------------------------------------------------------- */

static uint64_t key_value(akx_dtype t, int64_t r, uint64_t seed) {
  const uint64_t x = ref_rand(seed, (uint64_t)r);
  switch (t) {
    case AKX_BOOL: return (uint64_t)(r % 2); /* alternate: every run differs from the last */
    case AKX_INT8: return (uint64_t)(int64_t)((int64_t)(x % 7) - 3);
    case AKX_UINT16: return 65535u - x % 5;
    case AKX_INT64: return (x % 3) << 40 | ((x >> 8) % 2); /* neighbours may differ in bit 40 only */
    case AKX_UINT64: return (x % 3) << 63 | ((x >> 8) % 3);
    default: return (uint64_t)(int64_t)((int64_t)(x % 9) - 4);
  }
}

void tsg_fill_keys(void *buf, akx_dtype t, const tsg_offsets *runs, uint64_t seed) {
  uint64_t prev = 0;
  for (int64_t r = 0; r < runs->nseg; ++r) {
    uint64_t k = key_value(t, r, seed);
    ref_val v = ref_uint(t, k);
    if (r > 0 && v.i == ref_uint(t, prev).i) { /* consecutive runs must differ */
      k = t == AKX_INT64 ? k ^ (UINT64_C(1) << 40) : t == AKX_BOOL ? !prev : k ^ 1;
      v = ref_uint(t, k);
    }
    prev = k;
    for (int64_t i = runs->off[r]; i < runs->off[r + 1]; ++i) ref_store_at(buf, i, v);
  }
}

tsg_offsets tsg_runs_of(const akx_array *keys) {
  const int64_t n = keys->shape[0];
  int64_t *e = entries(n); /* at most n runs */
  int64_t runs = 0;
  const size_t sz = ref_size(keys->dtype);
  e[0] = 0;
  for (int64_t i = 1; i < n; ++i) {
    const ref_val a = ref_load((const unsigned char *)keys->data + (i - 1) * keys->strides[0] * (int64_t)sz, keys->dtype);
    const ref_val b = ref_load((const unsigned char *)keys->data + i * keys->strides[0] * (int64_t)sz, keys->dtype);
    if (a.i != b.i) e[++runs] = i;
  }
  if (n > 0) e[++runs] = n;
  tsg_offsets o = {n, runs, e, "runs"};
  return o;
}

tsg_offsets tsg_pattern(int k) {
  switch (k) {
    case 0: { const int64_t e[] = {0, 0, 0, 0, 0, 0, 0}; return tsg_given(10, 6, e, "all empty at 0"); }
    case 1: { const int64_t e[] = {7, 7, 7, 7, 7}; return tsg_given(10, 4, e, "all empty at 7"); }
    case 2: { const int64_t e[] = {0, 5000}; return tsg_given(5000, 1, e, "one segment over src"); }
    case 3: return tsg_uniform(3000, 1);
    case 4: return tsg_uniform(100, 31);
    case 5: return tsg_uniform(100, 32);
    case 6: return tsg_uniform(100, 33);
    case 7: return tsg_uniform(5, 1000);
    case 8: return tsg_power_law(2000, 300, 17);
    case 9: { const int64_t e[] = {17}; return tsg_given(100, 0, e, "no segment"); }
    case 10: { const int64_t e[] = {20, 50, 50, 300, 480}; return tsg_given(500, 4, e, "offsets[0] > 0, offsets[nseg] < n"); }
    default: return tsg_uniform(3, 65537);
  }
}
