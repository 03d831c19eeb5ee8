#include "lookback_model.h"

int tlb_lookback_terms(uint64_t t, uint64_t terms[TLB_MAX_TERMS], int *low) {
  int digits = 0;
  for (uint64_t x = t; x; x >>= 5) ++digits;
  int m = 0;
  for (int j = digits - 1; j >= 0; --j) {
    const uint64_t d = (t >> (5 * j)) & 31u, above = (t >> (5 * (j + 1))) << (5 * (j + 1));
    for (uint64_t k = 0; k < d; ++k) terms[m++] = above + ((k + 1) << (5 * j)) - 1;
  }
  int level = 0;
  while (((t >> (5 * level)) & 31u) == 31u) ++level;
  *low = 31 * level;
  return m;
}
