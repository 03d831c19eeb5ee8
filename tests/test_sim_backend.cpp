// The sim backend's table (src/core/backend.h) and the device profiles: what a context reports,
// its memory, its environment variables and their errors.
#include <stdlib.h>

#include "backend.h"
#include "device_profile.h"
#include "internal.h"
#include "sim_probe.hpp"

Test(sim_backend, default_profile_is_h200) {
  sim_context sim;
  akx_context_info_t info;
  expect_success(akx_context_info(sim.ctx, &info));
  cr_expect_eq(info.backend, AKX_BACKEND_SIM);
  cr_expect_str_eq(info.device_name, "sim:h200");
  cr_expect_str_eq(info.sim_profile, "h200");
  cr_expect_eq(info.sm_count, 132);
  cr_expect_eq(info.cc_major, 9);
  cr_expect_eq(info.cc_minor, 0);
  cr_expect_eq(info.max_threads_per_sm, 2048);
  cr_expect_eq(info.shared_per_block, 232448);
  cr_expect_eq(info.bandwidth_gbs, 4800.0);
  cr_expect_eq(sim.ctx->profile, akx__profile_by_name("h200"));
}

Test(sim_backend, rtx5080_profile) {
  setenv("AKX_SIM_DEVICE", "rtx5080", 1);
  sim_context sim;
  akx_context_info_t info;
  expect_success(akx_context_info(sim.ctx, &info));
  cr_expect_str_eq(info.device_name, "sim:rtx5080");
  cr_expect_eq(info.sm_count, 84);
  cr_expect_eq(info.cc_major, 12);
  cr_expect_eq(info.max_threads_per_sm, 1536);
  cr_expect_eq(info.shared_per_block, 101376);
}

Test(sim_backend, unknown_profile) {
  setenv("AKX_SIM_DEVICE", "a100", 1);
  akx_context *ctx = NULL;
  cr_expect_eq(akx_context_create(&ctx, AKX_BACKEND_SIM, 0), AKX_ERROR_INVALID_ARGUMENT);
  cr_expect(strstr(akx_last_error(), "AKX_SIM_DEVICE") != NULL, "%s", akx_last_error());
  cr_expect(strstr(akx_last_error(), "a100") != NULL, "%s", akx_last_error());
}

Test(sim_backend, bad_environment_values) {
  const char *vars[][2] = {{"AKX_SIM_SCHEDULE", "shuffle"},
                           {"AKX_SIM_SCHEDULE", "random:x"},
                           {"AKX_SIM_COUNTERS", "yes"},
                           {"AKX_SIM_REPORT", "2"}};
  for (const auto &v : vars) {
    setenv(v[0], v[1], 1);
    akx_context *ctx = NULL;
    cr_expect_eq(akx_context_create(&ctx, AKX_BACKEND_SIM, 0), AKX_ERROR_INVALID_ARGUMENT,
                 "%s=%s", v[0], v[1]);
    cr_expect(strstr(akx_last_error(), v[0]) != NULL, "%s", akx_last_error());
    unsetenv(v[0]);
  }
}

Test(sim_backend, profiles) {
  const akx__device_profile *h200 = akx__profile_by_name("h200");
  const akx__device_profile *rtx = akx__profile_by_name("RTX5080");
  cr_assert(h200 != NULL && rtx != NULL);
  cr_expect_str_eq(h200->device_name, "NVIDIA H200");
  cr_expect_eq(h200->bytes_in_flight_per_sm, 49152);
  cr_expect_str_eq(rtx->device_name, "NVIDIA GeForce RTX 5080");
  cr_expect(akx__profile_by_name("v100") == NULL);
  cr_expect(akx__profile_by_name(NULL) == NULL);
  cr_expect_eq(akx__profile_by_cc(9, 0), h200);
  cr_expect_eq(akx__profile_by_cc(10, 0), h200);  // the closest older one
  cr_expect_eq(akx__profile_by_cc(12, 0), rtx);
  cr_expect_eq(akx__profile_by_cc(13, 1), rtx);
  cr_expect_eq(akx__profile_by_cc(7, 5), h200);   // none older: h200
}

Test(sim_backend, memory) {
  sim_context sim;
  void *a = NULL, *b = NULL;
  expect_success(akx_malloc(sim.ctx, &a, 1000));
  expect_success(akx_malloc(sim.ctx, &b, 0));
  cr_expect_eq(uintptr_t(a) % 256, 0u);
  const akx__backend *be = sim.ctx->be;
  cr_expect_eq(be->is_device_range(sim.ctx, a, 1000), 1);
  cr_expect_eq(be->is_device_range(sim.ctx, (char *)a + 999, 1), 1);
  cr_expect_eq(be->is_device_range(sim.ctx, (char *)a + 999, 2), 0);
  int on_stack = 0;
  cr_expect_eq(be->is_device_range(sim.ctx, &on_stack, sizeof on_stack), 0);

  // New device memory is poison, as read back through akx_memcpy: not the zeros a fresh
  // host page would show, which would hide a kernel reading what nobody wrote.
  unsigned char back[1000];
  memset(back, 0, sizeof back);
  expect_success(akx_memcpy(sim.ctx, back, a, 1000, AKX_COPY_DEVICE_TO_HOST));
  for (int i = 0; i < 1000; ++i) cr_assert_eq(back[i], 0xCDu, "byte %d is 0x%02x", i, back[i]);

  char host[1000];
  for (int i = 0; i < 1000; ++i) host[i] = char(i);
  expect_success(akx_memcpy(sim.ctx, a, host, 1000, AKX_COPY_HOST_TO_DEVICE));
  cr_expect_eq(((char *)a)[999], char(999));

  // The backend's own sentences (akx_free may check its arguments before it gets here).
  cr_expect_eq(be->free(sim.ctx, (char *)a + 8), AKX_ERROR_INVALID_ARGUMENT);
  cr_expect(strstr(akx_last_error(), "8 bytes into the allocation") != NULL, "%s",
            akx_last_error());
  cr_expect_eq(be->free(sim.ctx, &on_stack), AKX_ERROR_INVALID_ARGUMENT);
  cr_expect(strstr(akx_last_error(), "not an allocation of this sim context") != NULL, "%s",
            akx_last_error());
  expect_success(akx_free(sim.ctx, a));
  cr_expect_eq(be->is_device_range(sim.ctx, a, 1), 0);
  cr_expect_eq(be->free(sim.ctx, a), AKX_ERROR_INVALID_ARGUMENT);  // twice
  expect_success(akx_free(sim.ctx, b));
}

Test(sim_backend, streams_and_synchronize) {
  sim_context sim;
  const akx__backend *be = sim.ctx->be;
  expect_success(be->set_stream(sim.ctx, NULL));
  int not_a_stream;
  cr_expect_eq(be->set_stream(sim.ctx, &not_a_stream), AKX_ERROR_INVALID_ARGUMENT);
  cr_expect(strstr(akx_last_error(), "no streams") != NULL, "%s", akx_last_error());
  expect_success(be->synchronize(sim.ctx));
}

// Every call's workspace starts as poison on the sim, the cached one and a caller's alike: a
// kernel must reset its own status words, never trust zeros or the last call's flags.
Test(sim_backend, workspace_is_poisoned_at_every_call) {
  sim_context sim;
  for (int caller_owned = 0; caller_owned < 2; ++caller_owned) {
    if (caller_owned) {
      void *mine = NULL;
      expect_success(akx_malloc(sim.ctx, &mine, 4096));
      expect_success(akx_context_set_workspace(sim.ctx, mine, 4096));
    }
    for (int call = 0; call < 2; ++call) {
      void *ws = NULL;
      expect_success(akx__workspace(sim.ctx, 256, &ws));
      for (int i = 0; i < 256; ++i)
        cr_assert_eq(((unsigned char *)ws)[i], 0xCDu, "caller-owned %d, call %d, byte %d",
                     caller_owned, call, i);
      memset(ws, 0, 256);  // what a kernel of this call leaves behind
    }
  }
}
