// The CUDA backend's run-time modules as a family's run-time launch sees them
// (src/cuda/runtime_kernels.cu loads them): a module's kernels found by key, launched through
// the prebuilt path's checks. A family's akx__cuda_runtime_<name> (the family list,
// src/core/families.h) builds its kernel set on `handles`.
#pragma once
#include <cuda_runtime.h>
#include <string.h>

#include "akx/device.cuh"
#include "api_calls.h"
#include "backend.h"
#include "families.h"

namespace akx::cuda_runtime {

constexpr int max_kernels = 8;

// The family list's kernel keys (src/core/families.h), for the compile-time check that every
// kernel a family's run-time launch asks for is one its units hold (in_family).
constexpr bool same_key(const char *a, const char *b) {
  while (*a && *a == *b) ++a, ++b;
  return *a == *b;
}
template <int Family>
struct family_keys;
#define AKX_KEY_(key, id, user_only) key,
#define AKX_FAMILY_KEYS_(ID, name, Plan, header, file, launcher, kind, prebuilt, finish) \
  template <>                                                          \
  struct family_keys<AKX__FAMILY_##ID> {                              \
    static constexpr const char *keys[] = {AKX_##ID##_KERNELS(AKX_KEY_)}; \
  };
AKX_FAMILY_LIST(AKX_FAMILY_KEYS_)
#undef AKX_FAMILY_KEYS_
#undef AKX_KEY_
// Whether info's key (its function, else its name) is one of Family's kernels.
template <int Family>
constexpr bool in_family(const akx::kernel_info &info) {
  const char *key = info.function ? info.function : info.name;
  for (const char *k : family_keys<Family>::keys)
    if (same_key(k, key)) return true;
  return false;
}

// A loaded unit: its library and its kernels, each with its key (the family list's kernel
// names, src/core/families.h), by which a launch finds it.
struct cuda_module {
  cudaLibrary_t lib;
  int n;
  cudaKernel_t kernels[max_kernels];
  const char *keys[max_kernels];
  void *image_copy;  // the image, where the cached bytes held it unaligned (kept with the library)
};

// Launches the module's kernel of info's key (its function, else its name: the family list's
// kernel names, src/core/families.h): the prebuilt path's checks (akx__cuda_prepare_launch:
// launch bounds, the shared-memory opt-in), then cudaLaunchKernelExC with the arguments' addresses.
struct handles {
  const cuda_module *m;
  template <class... A>
  akx_status go(const akx::kernel_info &info, dim3 grid, dim3 block, size_t smem, void *stream,
                const A &...args) const {
    const char *key = info.function ? info.function : info.name;
    int kid = 0;
    while (kid < m->n && strcmp(m->keys[kid], key) != 0) ++kid;
    // A built-in op's unit holds fewer kernels than a user op's (user_only in the family list).
    if (kid == m->n) return akx__fail(AKX_ERROR_INTERNAL, "%s (kernel %s) is not in this run-time module", info.name, key);
    const void *k = reinterpret_cast<const void *>(m->kernels[kid]);
    int pdl = 0;
    AKX_TRY(akx__cuda_prepare_launch(k, info.name, info.max_threads, info.smem_optin, block.x * block.y * block.z, smem,
                                     &pdl));
    void *argv[] = {const_cast<void *>(static_cast<const void *>(&args))...};
    // Programmatic stream serialization as the prebuilt launches, decided by this unit's
    // image: a unit NVRTC compiled below compute_90 has no griddepcontrol.wait.
    const akx::launch_config c(grid, block, smem, static_cast<cudaStream_t>(stream), pdl);
    return akx::launch_status(info.name, cudaLaunchKernelExC(&c.config, k, argv));
  }
};

}  // namespace akx::cuda_runtime
