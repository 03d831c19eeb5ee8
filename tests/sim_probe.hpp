// Probe kernels on a sim context: a context, device memory and the counters of one kernel,
// for the tests of the sim itself (tests/test_sim_*.cpp).
#pragma once
#include <criterion/criterion.h>
#include <string.h>

#include <optional>

#include "akx.h"
#include "akx_sim.h"
#include "akx/device.cuh"
#include "sim/sim_testing.hpp"

// A sim context whose runtime AKX_LAUNCH runs on while it lives.
struct sim_context {
  akx_context *ctx = nullptr;

  sim_context() {
    akx_status s = akx_context_create(&ctx, AKX_BACKEND_SIM, 0);
    cr_assert_eq(s, AKX_SUCCESS, "akx_context_create: %s", akx_last_error());
    current_.emplace(ctx);
  }
  ~sim_context() {
    current_.reset();
    akx_context_destroy(ctx);
  }
  sim_context(const sim_context &) = delete;
  sim_context &operator=(const sim_context &) = delete;

  // n elements of device memory, zeroed.
  template <class T>
  T *alloc(size_t n) {
    void *p = nullptr;
    akx_status s = akx_malloc(ctx, &p, n * sizeof(T));
    cr_assert_eq(s, AKX_SUCCESS, "akx_malloc: %s", akx_last_error());
    memset(p, 0, n * sizeof(T));
    return static_cast<T *>(p);
  }

  // The counters of kernel `name` (all zero if it never ran).
  akx_sim_kernel_counters kernel(const char *name) const {
    akx_sim_kernel_counters k[64];
    int32_t count = 0;
    akx_status s = akx_sim_counters_get(ctx, nullptr, k, 64, &count);
    cr_assert_eq(s, AKX_SUCCESS, "akx_sim_counters_get: %s", akx_last_error());
    for (int32_t i = 0; i < count && i < 64; ++i)
      if (strcmp(k[i].kernel, name) == 0) return k[i];
    akx_sim_kernel_counters none;
    memset(&none, 0, sizeof none);
    return none;
  }

 private:
  std::optional<akx::sim::scoped_context> current_;
};

// Asserts that a launch failed its checks with a sentence that holds every one of `parts`.
#define expect_sim_check(status, ...)                                                       \
  do {                                                                                      \
    akx_status s_ = (status);                                                               \
    cr_assert_eq(s_, AKX_ERROR_SIM_CHECK, "expected AKX_ERROR_SIM_CHECK, got %d (%s)",     \
                 (int)s_, akx_last_error());                                                \
    const char *parts_[] = {__VA_ARGS__};                                                   \
    for (const char *part_ : parts_)                                                        \
      cr_assert(strstr(akx_last_error(), part_) != NULL, "'%s' is not in: %s", part_,      \
                akx_last_error());                                                          \
  } while (0)

#define expect_success(status)                                                              \
  do {                                                                                      \
    akx_status s_ = (status);                                                               \
    cr_assert_eq(s_, AKX_SUCCESS, "expected success, got %d: %s", (int)s_, akx_last_error()); \
  } while (0)
