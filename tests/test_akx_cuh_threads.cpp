// include/akx.cuh's reduce on a context shared by threads. Its result sits in the context's
// workspace until it is copied to the host; another thread's call on the same context may
// reuse, poison (the sim does, at every call) or free (a growth) that workspace as soon as the
// lock is released, so the copy happens inside the locked region. Here one thread reduces
// while another grows the workspace at every call: every reduction must come back exact.
#include <criterion/criterion.h>
#include <pthread.h>
#include <cstdio>
#include <vector>
#include "akx.cuh"
extern "C" {
#include "fixture.h"
}

namespace {
struct add_i64 {
  AKX_HD long long operator()(long long a, long long b) const { return a + b; }
  AKX_HD static long long identity() { return 0; }
};

struct shared_state {
  akx_context *ctx;
  const long long *src;
  long long n, want;
  int bad, calls;
  char why[256];
};

void *reducer(void *arg) {
  auto *s = static_cast<shared_state *>(arg);
  for (int i = 0; i < s->calls; ++i) {
    long long r = -1;
    const akx_status st = akx::reduce<add_i64>(s->ctx, s->src, s->n, &r);
    if (st != AKX_SUCCESS || r != s->want) {
      if (!s->bad) snprintf(s->why, sizeof s->why, "call %d: status %d, %lld != %lld (%s)", i, (int)st, r, s->want, akx_last_error());
      ++s->bad;
    }
  }
  return nullptr;
}

struct grower {
  akx_context *ctx;
  int calls, bad;
};

void *grow(void *arg) {
  auto *g = static_cast<grower *>(arg);
  for (int i = 0; i < g->calls; ++i) {
    // a scan whose look-back needs more workspace every call: the cached buffer is freed and
    // reallocated each time
    const int64_t n = 1024 * (int64_t)(i + 1);
    void *buf = nullptr;
    if (akx_malloc(g->ctx, &buf, (size_t)n * 4) != AKX_SUCCESS) { ++g->bad; continue; }
    std::vector<int32_t> ones((size_t)n, 1);
    akx_memcpy(g->ctx, buf, ones.data(), (size_t)n * 4, AKX_COPY_HOST_TO_DEVICE);
    akx_scan_opts o = akx_scan_opts_default();
    o.acc = AKX_INT32;
    o.block_size = 32;
    o.items_per_thread = 1;
    const akx_array v = akx_vector(buf, AKX_INT32, n);
    if (akx_scan(g->ctx, &v, &v, AKX_OP_ADD, 0, &o) != AKX_SUCCESS) ++g->bad;
    akx_free(g->ctx, buf);
  }
  return nullptr;
}
}  // namespace

Test(akx_cuh_threads, reduce_result_survives_another_threads_growth, .timeout = 280) {
  akx_context *ctx = tfx_open();
  const long long n = 3000;
  std::vector<long long> h((size_t)n);
  long long want = 0;
  for (long long i = 0; i < n; ++i) want += h[(size_t)i] = (i * 37) % 101 - 50;
  long long *d = static_cast<long long *>(tfx_upload(ctx, h.data(), (size_t)n * sizeof(long long)));
  shared_state s{ctx, d, n, want, 0, 60, ""};
  // 30 growing scans (up to 960 tiles of 32 threads; past the workspace's first 4096 bytes from
  // about the 12th, each grows it): was 60, whose last half cost three quarters of the file's
  // time on the sim for more of the same growth.
  grower g{ctx, 30, 0};
  pthread_t a, b;
  pthread_create(&a, nullptr, reducer, &s);
  pthread_create(&b, nullptr, grow, &g);
  pthread_join(a, nullptr);
  pthread_join(b, nullptr);
  cr_assert_eq(g.bad, 0, "the growing thread's scans failed");
  cr_assert_eq(s.bad, 0, "%d of %d reductions wrong: %s", s.bad, s.calls, s.why);
  akx_context_info_t info;
  cr_assert_eq(akx_context_info(ctx, &info), AKX_SUCCESS);
  cr_assert_gt(info.workspace_allocations, 10, "the workspace grew under the reductions");
  tfx_free(ctx, d);
  tfx_close(ctx);
}
