// kernels/akx/segment_tile.cuh's segment_search_warp, the search a segment tile makes for its
// first and last segment, on the sim: the first j in [lo0, hi0) whose clamped offset is at or
// past x, against a host lower bound, for non-decreasing offsets of power-law lengths (many
// empty segments, a few huge), int32 and int64, strides 1, 2 and -1, guesses exact, near, far
// and out of range; garbage offsets (any order, negative, past n) end it in [lo0, hi0]. And its
// rounds (one warp request each, one round trip a tile waits for): 1 where the guess is exact,
// at most 2 + ceil(log9(distance)) + 1 otherwise, where one thread's galloping binary search
// took about 2 log2(distance).
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "akx/segment_tile.cuh"
#include "sim_probe.hpp"

namespace {
struct search_args {
  akx__segmented_plan p;
  const int64_t *x, *guess;
  int64_t lo0, hi0;
  int64_t *out;
};

// One warp per query.
AKX_GLOBAL void search_probe(search_args a) {
  const int64_t q = blockIdx.x;
  const int64_t x = akx::gld(a.x + q), guess = akx::gld(a.guess + q);
  const int64_t r = akx::segment_search_warp<8>(a.p, a.lo0, a.hi0, x, guess);
  if (threadIdx.x == 0) akx::gst(a.out + q, r);
}

uint64_t next(uint64_t &s) {
  s = s * 6364136223846793005ull + 1442695040888963407ull;
  return s >> 11;
}

// Offsets of power-law lengths (about 44% empty, some over 10^4), n their total.
std::vector<int64_t> power_law(int64_t nseg, uint64_t seed, int64_t *n) {
  std::vector<int64_t> off((size_t)nseg + 1);
  int64_t at = 0;
  for (int64_t s = 0; s < nseg; ++s) {
    off[(size_t)s] = at;
    const double u = ((double)next(seed) + 1.0) / 9007199254740992.0;
    at += (int64_t)std::min(50000.0, std::floor(0.5 * std::pow(u, -1.2)));
  }
  off[(size_t)nseg] = at;
  *n = at;
  return off;
}

struct query {
  int64_t x, guess;
};

// Runs the queries on offsets `off` (stored as int32 or int64 with `stride`), returns the answers
// and the search's load requests a query (beside its own two loads).
std::vector<int64_t> run(const std::vector<int64_t> &off, int64_t n, int size, int64_t stride, int64_t lo0,
                         int64_t hi0, const std::vector<query> &qs, double *rounds_max, std::vector<int64_t> *rounds) {
  sim_context sim;
  const int64_t count = (int64_t)off.size(), span = (count - 1) * std::abs(stride) + 1;
  unsigned char *buf = sim.alloc<unsigned char>((size_t)(span * size));
  const int64_t first = stride < 0 ? span - 1 : 0;
  for (int64_t j = 0; j < count; ++j) {
    const int64_t at = first + j * stride;
    if (size == 4) {
      const int32_t v = (int32_t)off[(size_t)j];
      memcpy(buf + at * 4, &v, 4);
    } else {
      memcpy(buf + at * 8, &off[(size_t)j], 8);
    }
  }
  const int64_t nq = (int64_t)qs.size();
  int64_t *x = sim.alloc<int64_t>((size_t)nq), *g = sim.alloc<int64_t>((size_t)nq), *out = sim.alloc<int64_t>((size_t)nq);
  for (int64_t q = 0; q < nq; ++q) {
    x[q] = qs[(size_t)q].x;
    g[q] = qs[(size_t)q].guess;
  }
  search_args a{};
  a.p.n = n;
  a.p.offsets = buf + first * size;
  a.p.offsets_stride = stride;
  a.p.offsets_size = size;
  a.p.nseg = count - 1;
  a.x = x;
  a.guess = g;
  a.lo0 = lo0;
  a.hi0 = hi0;
  a.out = out;
  std::vector<int64_t> got((size_t)nq);
  *rounds_max = 0;
  rounds->assign((size_t)nq, 0);
  // One launch a query, so that each one's requests are counted apart.
  for (int64_t q = 0; q < nq; ++q) {
    cr_assert_eq(akx_sim_counters_reset(sim.ctx), AKX_SUCCESS);
    search_args one = a;
    one.x = x + q;
    one.guess = g + q;
    one.out = out + q;
    cr_assert_eq(AKX_LAUNCH("segment_search_probe", search_probe, 1, 32, 0, NULL, one), AKX_SUCCESS, "%s",
                 akx_last_error());
    const akx_sim_kernel_counters k = sim.kernel("segment_search_probe");
    (*rounds)[(size_t)q] = (int64_t)k.global_load.requests - 2;
    *rounds_max = std::max(*rounds_max, (double)(*rounds)[(size_t)q]);
    got[(size_t)q] = out[q];
  }
  return got;
}

int64_t clamped(int64_t v, int64_t n) { return v < 0 ? 0 : v > n ? n : v; }

// The first j in [lo0, hi0) with clamp(off[j]) >= x, hi0 if none (off non-decreasing).
int64_t reference(const std::vector<int64_t> &off, int64_t n, int64_t lo0, int64_t hi0, int64_t x) {
  for (int64_t j = lo0; j < hi0; ++j)
    if (clamped(off[(size_t)j], n) >= x) return j;
  return hi0;
}

// Rounds allowed for an answer `distance` entries from the guess: the guess's round, one
// galloping round (the probes reach 8^8, past any distance here), then the refining rounds,
// each shrinking the bracket 9 times, and one for rounding.
int64_t rounds_allowed(int64_t distance) {
  if (distance == 0) return 1;
  return 2 + (int64_t)std::ceil(std::log((double)distance * 8 + 1) / std::log(9.0)) + 1;
}
}  // namespace

Test(segment_search, power_law_offsets_every_layout_and_guess, .timeout = 300) {
  int64_t n = 0;
  const std::vector<int64_t> off = power_law(4000, 7, &n);
  const int64_t nseg = (int64_t)off.size() - 1;
  uint64_t seed = 11;
  std::vector<query> qs;
  for (int k = 0; k < 60; ++k) {
    const int64_t x = (int64_t)(next(seed) % (uint64_t)(n + 2)) - 1;  // -1 .. n
    const int64_t exact = reference(off, n, 1, nseg + 1, x);
    const int64_t uniform = n > 0 ? (int64_t)((double)x / (double)n * (double)nseg) + 1 : 1;
    const int64_t guesses[] = {exact, exact + 1, exact - 3, uniform, (int64_t)(next(seed) % (uint64_t)(nseg + 1)),
                               -100, nseg + 100};
    qs.push_back({x, guesses[k % 7]});
  }
  for (int size : {4, 8})
    for (int64_t stride : {1, 2, -1}) {
      double rmax;
      std::vector<int64_t> rounds;
      const std::vector<int64_t> got = run(off, n, size, stride, 1, nseg + 1, qs, &rmax, &rounds);
      for (size_t q = 0; q < qs.size(); ++q) {
        const int64_t want = reference(off, n, 1, nseg + 1, qs[q].x);
        cr_assert_eq(got[q], want, "int%d offsets, stride %lld, x %lld, guess %lld: %lld, expected %lld", 8 * size,
                     (long long)stride, (long long)qs[q].x, (long long)qs[q].guess, (long long)got[q],
                     (long long)want);
        const int64_t g = std::min(std::max(qs[q].guess, (int64_t)1), nseg);
        const int64_t allowed = rounds_allowed(std::llabs(want - g));
        cr_expect_leq(rounds[q], allowed, "x %lld, guess %lld, answer %lld: %lld rounds, at most %lld expected",
                      (long long)qs[q].x, (long long)qs[q].guess, (long long)want, (long long)rounds[q],
                      (long long)allowed);
      }
      cr_log_info("int%d stride %lld: at most %.0f rounds a search", 8 * size, (long long)stride, rmax);
    }
}

// Uniform segments, the guess exact (what a tile of uniform segments asks): one round.
Test(segment_search, an_exact_guess_takes_one_round) {
  const int64_t nseg = 1000, len = 37, n = nseg * len;
  std::vector<int64_t> off((size_t)nseg + 1);
  for (int64_t s = 0; s <= nseg; ++s) off[(size_t)s] = s * len;
  std::vector<query> qs;
  for (int64_t x : {(int64_t)0, (int64_t)1, len, 5 * len + 3, n - 1, n}) qs.push_back({x, reference(off, n, 1, nseg + 1, x)});
  double rmax;
  std::vector<int64_t> rounds;
  const std::vector<int64_t> got = run(off, n, 4, 1, 1, nseg + 1, qs, &rmax, &rounds);
  for (size_t q = 0; q < qs.size(); ++q) {
    cr_assert_eq(got[q], qs[q].guess, "x %lld: %lld, expected %lld", (long long)qs[q].x, (long long)got[q],
                 (long long)qs[q].guess);
    cr_expect_eq(rounds[q], 1, "x %lld: %lld rounds", (long long)qs[q].x, (long long)rounds[q]);
  }
}

// Garbage offsets (random values in -n..2n, any order): never outside [lo0, hi0], no access out
// of the offsets (the sim checks every load), and where the probes found a bracket it holds.
Test(segment_search, garbage_offsets_end_in_the_range, .timeout = 300) {
  const int64_t nseg = 3000, n = 100000;
  uint64_t seed = 99;
  std::vector<int64_t> off((size_t)nseg + 1);
  for (auto &v : off) v = (int64_t)(next(seed) % (uint64_t)(3 * n)) - n;
  std::vector<query> qs;
  for (int k = 0; k < 40; ++k)
    qs.push_back({(int64_t)(next(seed) % (uint64_t)(n + 2)) - 1, (int64_t)(next(seed) % (uint64_t)(nseg + 200)) - 100});
  for (int64_t lo0 : {(int64_t)1, (int64_t)700}) {
    double rmax;
    std::vector<int64_t> rounds;
    const std::vector<int64_t> got = run(off, n, 8, 1, lo0, nseg, qs, &rmax, &rounds);
    for (size_t q = 0; q < qs.size(); ++q) {
      cr_assert(got[q] >= lo0 && got[q] <= nseg, "x %lld: %lld outside [%lld, %lld]", (long long)qs[q].x,
                (long long)got[q], (long long)lo0, (long long)nseg);
      if (got[q] < nseg)
        cr_expect_geq(clamped(off[(size_t)got[q]], n), qs[q].x, "x %lld: the answer %lld is below x",
                      (long long)qs[q].x, (long long)got[q]);
      if (got[q] > lo0)
        cr_expect_lt(clamped(off[(size_t)got[q] - 1], n), qs[q].x, "x %lld: the entry before the answer %lld is at or past x",
                     (long long)qs[q].x, (long long)got[q]);
    }
  }
}
