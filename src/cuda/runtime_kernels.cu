// Kernels compiled at run time on CUDA (docs/runtime_kernels.md): a combination outside the
// prebuilt set, or a user op. The unit is the one instance generator's (src/jit/instance.h),
// compiled by NVRTC for the device's architecture (src/jit/nvrtc.h), kept by the kernel cache
// (src/jit/cache.h) with its kernels' lowered names, loaded with cudaLibraryLoadData, and
// launched through its kernel handles by the same launch sequences as the prebuilt kernels
// (kernels/akx/*.cuh: scan_launch_with, ...). The runtime takes a cudaKernel_t wherever it
// takes a kernel's address (the runtime API header: "assumed to be a cudaKernel_t and used as
// is"), so a handle goes through akx__cuda_prepare_launch and cudaLaunchKernel unchanged.
#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

#include <string>

#include "akx/findall.cuh"
#include "akx/reduce_dims.cuh"
#include "akx/reduce_whole.cuh"
#include "akx/scan.cuh"
#include "api_calls.h"
#include "backend.h"
#include "error.h"
#include "internal.h"
#include "jit/cache.h"
#include "jit/entries.h"
#include "jit/builtin_instance.h"
#include "jit/instance.h"
#include "jit/nvrtc.h"
#include "jit/user_op.h"
#include "families.h"
#include "runtime_module.hpp"

namespace {
using akx::cuda_runtime::cuda_module;
using akx::cuda_runtime::handles;
using akx::cuda_runtime::max_kernels;


// The cached bytes put the image after the kernels' names, at whatever offset their lengths
// make; a cubin is an ELF file, whose headers the driver reads in place as 8-byte words (and
// PTX is text, but the driver takes either through one pointer). An image at an offset that is
// not a multiple of image_alignment is copied to an aligned buffer first.
constexpr size_t image_alignment = 64;
bool image_needs_copy(const void *image) { return reinterpret_cast<uintptr_t>(image) % image_alignment != 0; }

struct module_job {
  const akx__instance *in;
  int arch;
};

// The cached bytes: "AKXM", the kernel count, each lowered name (length, bytes), then the image.
void put_u32(std::string &b, uint32_t v) { b.append(reinterpret_cast<const char *>(&v), 4); }

#if defined(NDEBUG)
const char *const unit_options[] = {"-std=c++17", "-DNDEBUG"};
#else
const char *const unit_options[] = {"-std=c++17"};
#endif

akx_status build(void *arg, void **bytes, size_t *size) {
  const auto *job = static_cast<const module_job *>(arg);
  akx__nvrtc_request rq = {};
  rq.source = job->in->source;
  rq.name = "akx_instance.cu";
  rq.n_options = (int)(sizeof unit_options / sizeof unit_options[0]);
  rq.options = unit_options;
  rq.n_names = job->in->n_kernels;
  rq.name_expressions = job->in->name_expressions;
  rq.arch = job->arch;
  akx__nvrtc_result r = {};
  AKX_TRY(akx__nvrtc_compile_unit(&rq, &r));
  std::string b("AKXM", 4);
  put_u32(b, (uint32_t)r.n_lowered_names);
  for (int i = 0; i < r.n_lowered_names; ++i) {
    put_u32(b, (uint32_t)strlen(r.lowered_names[i]));
    b.append(r.lowered_names[i]);
  }
  b.append(static_cast<const char *>(r.image), r.size);
  akx__nvrtc_result_free(&r);
  *bytes = malloc(b.size());
  if (!*bytes) return akx__fail(AKX_ERROR_OUT_OF_MEMORY, "out of host memory");
  memcpy(*bytes, b.data(), b.size());
  *size = b.size();
  return AKX_SUCCESS;
}

akx_status load(void *arg, const void *bytes, size_t size, void **handle) {
  const akx__instance *in = static_cast<const module_job *>(arg)->in;
  const char *p = static_cast<const char *>(bytes), *end = p + size;
  auto u32 = [&](uint32_t *v) {
    if (end - p < 4) return false;
    memcpy(v, p, 4);
    p += 4;
    return true;
  };
  uint32_t n = 0;
  if (size < 8 || memcmp(p, "AKXM", 4) != 0 || (p += 4, !u32(&n)) || n == 0 || n > (uint32_t)max_kernels)
    return akx__fail(AKX_ERROR_INTERNAL, "a run-time CUDA module's bytes are not a module");
  std::string lowered[max_kernels];
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t len = 0;
    if (!u32(&len) || (size_t)(end - p) < len) return akx__fail(AKX_ERROR_INTERNAL, "a run-time CUDA module is cut short");
    lowered[i].assign(p, len);
    p += len;
  }
  auto *m = static_cast<cuda_module *>(calloc(1, sizeof(cuda_module)));
  if (!m) return akx__fail(AKX_ERROR_OUT_OF_MEMORY, "out of host memory");
  const void *image = p;
  if (image_needs_copy(image)) {
    const size_t bytes = static_cast<size_t>(end - p);
    m->image_copy = aligned_alloc(image_alignment, (bytes + image_alignment - 1) / image_alignment * image_alignment);
    if (!m->image_copy) {
      free(m);
      return akx__fail(AKX_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    memcpy(m->image_copy, p, bytes);
    image = m->image_copy;
  }
  akx__cuda_api_calls_add(1);
  cudaError_t e = cudaLibraryLoadData(&m->lib, image, nullptr, nullptr, 0, nullptr, nullptr, 0);
  if (e != cudaSuccess) {
    akx__cuda_api_calls_add(1);
    (void)cudaGetLastError();
    free(m->image_copy);
    free(m);
    return akx__fail(AKX_ERROR_DEVICE, "cudaLibraryLoadData of a run-time module failed: %s (%s)",
                     cudaGetErrorString(e), cudaGetErrorName(e));
  }
  if (n != (uint32_t)in->n_kernels) {
    (void)cudaLibraryUnload(m->lib);
    free(m->image_copy);
    free(m);
    return akx__fail(AKX_ERROR_INTERNAL, "a run-time CUDA module has %u kernels, its unit %d", n, in->n_kernels);
  }
  m->n = (int)n;
  for (uint32_t i = 0; i < n; ++i) m->keys[i] = in->kernel_keys[i];
  for (uint32_t i = 0; i < n; ++i) {
    akx__cuda_api_calls_add(1);
    e = cudaLibraryGetKernel(&m->kernels[i], m->lib, lowered[i].c_str());
    if (e != cudaSuccess) {
      akx__cuda_api_calls_add(2);
      (void)cudaGetLastError();
      (void)cudaLibraryUnload(m->lib);
      free(m->image_copy);
      free(m);
      return akx__fail(AKX_ERROR_DEVICE, "cudaLibraryGetKernel(%s) failed: %s", lowered[i].c_str(),
                       cudaGetErrorString(e));
    }
  }
  *handle = m;
  return AKX_SUCCESS;
}

akx_status module_for(const akx_context *ctx, const akx__instance &in, const cuda_module **out) {
  AKX_TRY(akx__nvrtc_available());
  const int arch = akx__context_arch(ctx);
  akx__jit_key key;
  AKX_TRY(akx__nvrtc_unit_key("cuda module", arch, (int)(sizeof unit_options / sizeof unit_options[0]), unit_options,
                              in.source, &key));
  module_job job{&in, arch};
  void *handle = nullptr;
  AKX_TRY(akx__jit_cache_get(&key, ".cumod", build, load, &job, &handle));
  *out = static_cast<const cuda_module *>(handle);
  return AKX_SUCCESS;
}

// The unit a plan needs: a built-in combination's, or its user op's.
akx_status unit_for(const akx_context *ctx, int family, int32_t src, int32_t dst, int32_t acc, int32_t op,
                    akx__instance *in) {
  if (akx__kind_of(family)->user_op == AKX__USER_OP_NONE || op < AKX_USER_OP_FIRST) {
    const akx__instance_key key = akx__builtin_instance_key(family, src, dst, acc, op);
    return akx__instance_generate(&key, in);
  }
  const akx__user_op *u = akx__user_op_find(ctx, (akx_op)op);
  if (!u) return akx__fail(AKX_ERROR_INTERNAL, "a plan names op %d, which is no user op of its context", (int)op);
  return akx__user_op_instance(u, family, (akx_dtype)src, (akx_dtype)dst, in);
}

// The families' kernel sets over a module (their kernels found by key, each key checked at
// compile time against the family list's: in_family).
using akx::cuda_runtime::in_family;
static_assert(in_family<AKX__FAMILY_REDUCE_WHOLE>(akx::reduce_whole_contiguous_info) &&
                  in_family<AKX__FAMILY_REDUCE_WHOLE>(akx::reduce_whole_strided_info) &&
                  in_family<AKX__FAMILY_REDUCE_WHOLE>(akx::reduce_whole_partials_info),
              "reduce_whole's run-time launches ask for a kernel its family list does not hold");
static_assert(in_family<AKX__FAMILY_REDUCE_DIMS>(akx::reduce_dims_rows_info) &&
                  in_family<AKX__FAMILY_REDUCE_DIMS>(akx::reduce_dims_warp_rows_info) &&
                  in_family<AKX__FAMILY_REDUCE_DIMS>(akx::reduce_dims_per_thread_info) &&
                  in_family<AKX__FAMILY_REDUCE_DIMS>(akx::reduce_dims_tiled_info) &&
                  in_family<AKX__FAMILY_REDUCE_DIMS>(akx::reduce_dims_columns_info) &&
                  in_family<AKX__FAMILY_REDUCE_DIMS>(akx::reduce_dims_strided_info) &&
                  in_family<AKX__FAMILY_REDUCE_DIMS>(akx::reduce_dims_columns_finish_info) &&
                  in_family<AKX__FAMILY_REDUCE_DIMS>(akx::reduce_dims_pieces_info),
              "reduce_dims's run-time launches ask for a kernel its family list does not hold");
static_assert(in_family<AKX__FAMILY_SCAN>(akx::scan_init_info) && in_family<AKX__FAMILY_SCAN>(akx::scan_tile_info) &&
                  in_family<AKX__FAMILY_SCAN>(akx::scan_slices_info) &&
                  in_family<AKX__FAMILY_SCAN>(akx::scan_columns_info) &&
                  in_family<AKX__FAMILY_SCAN>(akx::scan_columns_carry_info) &&
                  in_family<AKX__FAMILY_SCAN>(akx::scan_carried_info),
              "scan's run-time launches ask for a kernel its family list does not hold");
static_assert(in_family<AKX__FAMILY_FINDALL>(akx::scan_init_info) && in_family<AKX__FAMILY_FINDALL>(akx::findall_info),
              "findall's run-time launches ask for a kernel its family list does not hold");
static_assert(!in_family<AKX__FAMILY_FINDALL>(akx::scan_tile_info), "the check cannot fail");
struct reduce_whole_handles : handles {
  akx_status contiguous(const akx__reduce_whole_plan &p, bool, void *s) const {
    const akx::contiguous_span_c a = akx::span_of(p);
    return go(akx::reduce_whole_contiguous_info, dim3((unsigned)p.blocks), dim3((unsigned)p.block_size), 0, s, a,
              p.partials, akx::ticket_of(p), p.finish);
  }
  akx_status strided(const akx__reduce_whole_plan &p, void *s) const {
    return go(akx::reduce_whole_strided_info, dim3((unsigned)p.blocks), dim3((unsigned)p.block_size), 0, s, p.src,
              (int32_t)p.map, p.partials, akx::ticket_of(p), p.finish);
  }
  akx_status partials(const akx__reduce_whole_plan &p, int32_t count, void *s) const {
    return go(akx::reduce_whole_partials_info, dim3(1), dim3((unsigned)p.block_size), 0, s, p.partials, count,
              p.finish, static_cast<unsigned long long *>(p.ticket));
  }
};
struct reduce_dims_handles : handles {
  akx_status rows(const akx::kernel_info &info, dim3 grid, const akx__reduce_dims_plan &p, void *s) const {
    return go(info, grid, dim3((unsigned)p.block_size), 0, s, p);
  }
  akx_status tile(const akx::kernel_info &info, dim3 grid, const akx__reduce_dims_plan &p, void *s) const {
    return go(info, grid, dim3((unsigned)p.block_size), 0, s, p);
  }
  akx_status finish(dim3 grid, const akx__reduce_dims_plan &p, void *s) const {
    return go(akx::reduce_dims_columns_finish_info, grid, dim3((unsigned)p.block_size), 0, s, p);
  }
  akx_status pieces(dim3 grid, const akx__reduce_dims_plan &p, void *s) const {
    return go(akx::reduce_dims_pieces_info, grid, dim3((unsigned)p.block_size), 0, s, p);
  }
};
struct scan_handles : handles {
  akx_status init(void *status, int64_t tiles, void *s) const {
    const auto st = akx::lookback_status<akx::lookback_header>::at(status, 0);
    return go(akx::scan_init_info, dim3(akx::scan_init_blocks(tiles)), dim3(256), 0, s, st.head, st.flags, tiles);
  }
  akx_status tile(bool segmented, const akx__scan_plan &p, void *s) const {
    // scan_policy<Src, Dst, S>'s bytes (kernels/akx/scan.cuh, scan_policy_layout).
    const akx::scan_policy_layout l = akx::scan_policy_layout::of(acc_size, acc_align);
    struct alignas(16) policy_bytes {
      unsigned char b[512];
    } pol = {};
    if (l.size > sizeof pol.b) return akx__fail(AKX_ERROR_INTERNAL, "a scan policy of %zu bytes", l.size);
    const akx::scan_policy_head head{p.src, p.dst, p.n, p.n * p.slices, p.src_step, p.dst_step, p.src_outer, p.dst_outer};
    memcpy(pol.b, &head, sizeof head);
    pol.b[l.result] = p.exclusive != 0;
    pol.b[l.result + 1] = p.has_init != 0;
    memcpy(pol.b + l.result + akx::scan_result_init_offset(acc_align), p.init, acc_size);
    const int64_t steps[2] = {p.block_size / p.n, p.block_size % p.n};
    memcpy(pol.b + l.steps, steps, sizeof steps);
    const akx::scan_layout layout = akx::scan_layout::make(p.layout, p.items_per_thread, (int32_t)acc_size);
    return go(segmented ? akx::scan_slices_info : akx::scan_tile_info, dim3((unsigned)p.tiles),
              dim3((unsigned)p.block_size), (size_t)p.smem_bytes, s, pol, p.status, p.tiles, p.items_per_thread, layout,
              p.epoch, p.nodes_at);
  }
  size_t acc_size, acc_align;  // the kernels' accumulator: scan_columns' result layout
  // scan_carry_policy<Src, Dst, S>'s bytes are scan_carry_params' (kernels/akx/scan_carry.cuh).
  akx_status carried(const akx__scan_plan &p, int32_t mode, void *s) const {
    const akx::scan_carry_params pol = akx::scan_carry_params::from_plan(p, mode);
    const akx::scan_layout layout = akx::scan_layout::make(p.layout, p.items_per_thread, (int32_t)acc_size);
    return go(akx::scan_carried_info, dim3((unsigned)p.tiles), dim3((unsigned)p.block_size), (size_t)p.smem_bytes, s,
              pol, p.status, p.tiles, p.items_per_thread, layout, p.epoch, p.nodes_at);
  }
  akx_status columns(dim3 grid, dim3 block, const akx__scan_plan &p, int32_t mode, void *s) const {
    struct alignas(16) result_bytes {
      unsigned char b[64];
    } r = {};
    const size_t at = akx::scan_result_init_offset(acc_align);
    if (at + acc_size > sizeof r.b) return akx__fail(AKX_ERROR_INTERNAL, "a scan accumulator of %zu bytes", acc_size);
    r.b[0] = p.exclusive != 0;
    r.b[1] = p.has_init != 0;
    memcpy(r.b + at, p.init, acc_size);
    return go(akx::scan_columns_info, grid, block, 0, s, p, r, mode);
  }
  akx_status carry(dim3 grid, dim3 block, const akx__scan_plan &p, void *s) const {
    return go(akx::scan_columns_carry_info, grid, block, 0, s, p);
  }
};

struct findall_handles : handles {
  akx_status init(void *status, int64_t tiles, void *s) const { return scan_handles{{m}, 0, 1}.init(status, tiles, s); }
  akx_status tile(const akx__findall_plan &p, void *s) const {
    return go(akx::findall_info, dim3((unsigned)p.tiles), dim3((unsigned)p.block_size), (size_t)p.smem_bytes, s, p);
  }
};

// The loaded module of a combination for the context's architecture: from the table of
// run-time entries after its first use, so that a launch neither generates nor hashes its unit.
akx_status module_of(const akx_context *ctx, const akx__combination &c, const cuda_module **m) {
  const int32_t arch = akx__context_arch(ctx);
  const akx__entry_key key = akx__builtin_entry_key(arch, c.family, c.src, c.dst, c.acc, c.op);
  if ((*m = static_cast<const cuda_module *>(akx__entry_find(&key)))) return AKX_SUCCESS;
  akx__instance in;
  AKX_TRY(unit_for(ctx, c.family, c.src, c.dst, c.acc, c.op, &in));
  const akx_status s = module_for(ctx, in, m);
  akx__instance_free(&in);
  AKX_TRY(s);
  *m = static_cast<const cuda_module *>(akx__entry_put(&key, const_cast<cuda_module *>(*m)));
  return AKX_SUCCESS;
}

}  // namespace

// Each family's launch through a module: its launch sequence (kernels/akx/, *_launch_with) over
// the module's kernels. The family list (src/core/families.h) names them
// akx__cuda_runtime_<name>; a family's own file in src/cuda/ may define its own.
#define AKX_RUNTIME_DECL_(ID, name, Plan, header, file, launcher, kind, prebuilt, finish) \
  extern "C" akx_status akx__cuda_runtime_##name(const akx_context *ctx, const void *module, const void *plan);
AKX_FAMILY_LIST(AKX_RUNTIME_DECL_)
#undef AKX_RUNTIME_DECL_

extern "C" akx_status akx__cuda_runtime_reduce_whole(const akx_context *ctx, const void *m, const void *plan) {
  const auto &p = *static_cast<const akx__reduce_whole_plan *>(plan);
  return akx::reduce_whole_launch_with(p, reduce_whole_handles{{static_cast<const cuda_module *>(m)}}, ctx->stream);
}
extern "C" akx_status akx__cuda_runtime_reduce_dims(const akx_context *ctx, const void *m, const void *plan) {
  const auto &p = *static_cast<const akx__reduce_dims_plan *>(plan);
  return akx::reduce_dims_launch_with(p, reduce_dims_handles{{static_cast<const cuda_module *>(m)}}, ctx->stream);
}
extern "C" akx_status akx__cuda_runtime_scan(const akx_context *ctx, const void *m, const void *plan) {
  const auto &p = *static_cast<const akx__scan_plan *>(plan);
  const akx__user_op *u = p.op >= AKX_USER_OP_FIRST ? akx__user_op_find(ctx, (akx_op)p.op) : nullptr;
  const size_t size = u ? u->value_size : akx_dtype_size((akx_dtype)p.acc);
  const size_t align = u ? u->value_align : akx__dtype_alignment((akx_dtype)p.acc);
  const scan_handles k{{static_cast<const cuda_module *>(m)}, size, align};
  return akx::scan_launch_with(p, k, ctx->stream);
}
extern "C" akx_status akx__cuda_runtime_findall(const akx_context *ctx, const void *m, const void *plan) {
  const auto &p = *static_cast<const akx__findall_plan *>(plan);
  return akx::findall_launch_with(p, findall_handles{{static_cast<const cuda_module *>(m)}}, ctx->stream);
}

// src/cuda/backend_cuda.cu: fn(arg) with the context's device current, the caller's after.
extern "C" akx_status akx__cuda_on_context_device(const akx_context *ctx, akx_status (*fn)(void *), void *arg);

// The unit is compiled and loaded with the context's device current (route.c asks for it
// before the launch's own device scope): NVRTC and cudaLibraryLoadData on the thread's current
// device would create that device's primary context, a device the context never uses.
extern "C" akx_status akx__cuda_runtime_unit(const akx_context *ctx, const akx__combination *c, void **module) {
  struct job {
    const akx_context *ctx;
    const akx__combination *c;
    const cuda_module *m;
  } j{ctx, c, nullptr};
  AKX_TRY(akx__cuda_on_context_device(ctx, [](void *arg) {
    auto *jj = static_cast<job *>(arg);
    return module_of(jj->ctx, *jj->c, &jj->m);
  }, &j));
  *module = const_cast<cuda_module *>(j.m);
  return AKX_SUCCESS;
}

extern "C" akx_status akx__cuda_runtime_launch(const akx_context *ctx, int family, const void *module, const void *plan) {
  using launch = akx_status (*)(const akx_context *, const void *, const void *);
  static const launch by_family[AKX__FAMILY_COUNT] = {
#define AKX_RUNTIME_ITEM_(ID, name, Plan, header, file, launcher, kind, prebuilt, finish) akx__cuda_runtime_##name,
      AKX_FAMILY_LIST(AKX_RUNTIME_ITEM_)
#undef AKX_RUNTIME_ITEM_
  };
  if ((unsigned)family >= AKX__FAMILY_COUNT) return akx__fail(AKX_ERROR_INTERNAL, "kernel family %d is none", family);
  return by_family[family](ctx, module, plan);
}
