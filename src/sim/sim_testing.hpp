// Launching kernels on a sim context directly, for tests of probe kernels (written with
// kernels/akx/device.cuh exactly as real kernels are) and for the backend's own launchers:
//
//   akx_context *ctx;
//   akx_context_create(&ctx, AKX_BACKEND_SIM, 0);
//   akx::sim::scoped_context guard(ctx);   // AKX_LAUNCH now runs on ctx's runtime
//   akx_status s = AKX_LAUNCH("probe", probe, 1, 32, 0, NULL, arg1, arg2);
#pragma once
#include "akx.h"

namespace akx::sim {
struct runtime;

// Makes ctx's runtime the one the calling thread's launches run on (none when ctx is not a
// sim context: launches then fail), and restores the previous one at the end of the scope.
class scoped_context {
 public:
  explicit scoped_context(const akx_context *ctx);
  ~scoped_context();
  scoped_context(const scoped_context &) = delete;
  scoped_context &operator=(const scoped_context &) = delete;

 private:
  runtime *previous_;
};

// Makes the launches on ctx's runtime in the scope programmatic dependent launches, or not (a
// family's call is one on an sm_90+ profile unless AKX_PDL=0: kernels/akx/device.cuh), and
// restores the previous setting at the end. Nothing when ctx is not a sim context.
class scoped_pdl {
 public:
  scoped_pdl(const akx_context *ctx, bool on);
  ~scoped_pdl();
  scoped_pdl(const scoped_pdl &) = delete;
  scoped_pdl &operator=(const scoped_pdl &) = delete;

 private:
  runtime *rt_;
  bool previous_;
};
}  // namespace akx::sim
