// libakx for C++ and CUDA code: scans and the whole-array reduction of contiguous device
// arrays, as templates over a user functor, on the same tile kernels as akx_scan
// (kernels/akx/scan_tile.cuh, deterministic look-back, conflict-free tiles). Compile it with
// nvcc (the CUDA backend) or with the host compiler (the sim: link the static library,
// akx::akx_static, whose sim runtime these kernels call into); the context decides where
// it runs (akx_context_run).
//
// A functor F: default-constructible, `T operator()(const T &a, const T &b) const`,
// associative (commutativity is not needed: operand order is kept, a comes first), and
// optionally `static T identity()`, its neutral element. Without one the partials are
// Optional (a value and a valid flag), as AcceleratedKernels.jl does for operators without
// a neutral element, and an exclusive scan needs an init. T: trivially copyable, at most
// 16 bytes (the look-back's nodes: T or Optional<T>, up to 32 bytes).
//
//   struct add_f { float operator()(float a, float b) const { return a + b; } };
//   akx_status s = akx::scan_inclusive(ctx, dst, src, n, add_f{});
#pragma once
#include <type_traits>
#include "akx_layer.h" /* akx_context_run */
#include "akx/scan.cuh"

// src/core/internal.h: AKX_ERROR_UNSUPPORTED while the context's stream captures a CUDA graph.
extern "C" akx_status akx__refuse_if_capturing(const akx_context *ctx, const char *call,
                                               const char *why, const char *instead);
// src/scan/tile_shared.cpp: a tile's shared memory (runs and static scratch) against the
// context's device, the one rule the C API's scans and findall plan with.
extern "C" akx_status akx__scan_tile_shared(const akx_context *ctx, int32_t layout,
                                            int32_t block_size, int32_t items_per_thread,
                                            size_t partial_size, size_t node_size,
                                            int64_t *dynamic_bytes);

namespace akx {

// ---- functor adapters ------------------------------------------------------------------------
template <class F, class = void>
struct has_identity : std::false_type {};
template <class F>
struct has_identity<F, std::void_t<decltype(F::identity())>> : std::true_type {};

// A functor with a neutral element, as an op of kernels/akx/ops.cuh.
template <class F>
struct functor_op {
  template <class U> AKX_HD_INLINE static U identity() { return F::identity(); }
  template <class U> AKX_HD_INLINE static U apply(U a, U b) { return F{}(a, b); }
};

// Optional partials for a functor without one.
template <class T>
struct optional {
  T v;
  uint32_t valid;
};
template <class F, class T>
struct optional_op {
  template <class U> AKX_HD_INLINE static U identity() { return U{T{}, 0u}; }
  template <class U> AKX_HD_INLINE static U apply(U a, U b) {
    if (!a.valid) return b;
    if (!b.valid) return a;
    return U{F{}(a.v, b.v), 1u};
  }
};

template <class F, class T, bool Segmented = false>
struct functor_traits {
  static constexpr bool neutral = has_identity<F>::value;
  using Acc = typename std::conditional<neutral, T, optional<T>>::type;
  using Op = typename std::conditional<neutral, functor_op<F>, optional_op<F, T>>::type;
  using S = typename std::conditional<Segmented, seg_scan<Op, Acc>, plain_scan<Op, Acc>>::type;
  AKX_HD_INLINE static Acc lift(const T &x) {
    if constexpr (neutral) return x;
    else return Acc{x, 1u};
  }
  AKX_HD_INLINE static T lower(const Acc &a) {
    if constexpr (neutral) return a;
    else return a.v;
  }
};

// ---- the tile policy over a contiguous T array (kernels/akx/scan_tile.cuh's interface) ------------
template <class F, class T, bool Reduce, bool Segmented = false>
struct functor_policy {
  using traits = functor_traits<F, T, Segmented>;
  using scan = typename traits::S;
  using Acc = typename traits::Acc;
  const T *src;
  T *dst;
  Acc *result;  // Reduce: the total
  int64_t n, total, d_slice, d_i;
  scan_result<scan> res;

  // Slices of n elements back to back: element i of slice s at s * n + i.
  AKX_DEVICE Acc load(const slice_cursor &c) const {
    return traits::lift(gld_wide(src + c.slice * n + c.i));
  }
  template <class TT>
  AKX_DEVICE Acc emit(const TT &before, const TT &after, const Acc &, bool head) const {
    return res(before, after, head);
  }
  AKX_DEVICE void store(const slice_cursor &c, const Acc &v, int64_t) const {
    if constexpr (!Reduce) gst_wide(dst + c.slice * n + c.i, traits::lower(v));
  }
  template <class TT>
  AKX_DEVICE void finish(const TT &total_value, bool last, lookback_header *) const {
    if constexpr (Reduce) {
      if (last) gst(result, scan::value(total_value));
    }
  }
};

namespace detail {
template <class F, class T, bool Reduce, bool Segmented>
struct functor_call {
  functor_policy<F, T, Reduce, Segmented> pol;
  int32_t ipt;
  int64_t tiles;
  int64_t smem;  // the runs' dynamic shared memory (akx__scan_tile_shared)
  static akx_status run(void *stream, void *ws, void *arg) {
    using Acc = typename functor_traits<F, T>::Acc;
    using Node = typename functor_traits<F, T, Segmented>::S::T;
    auto *c = static_cast<functor_call *>(arg);
    const scan_layout layout = scan_layout::make(AKX__SCAN_LAYOUT_CONFLICT_FREE, c->ipt, (int32_t)sizeof(Acc));
    const size_t smem = (size_t)c->smem;
    if (Reduce) c->pol.result = reinterpret_cast<Acc *>(ws);
    void *status = static_cast<char *>(ws) + 64;
    // The workspace of akx_context_run holds anything: the status is reset, and the call takes
    // epoch 1 (kernels/akx/lookback.cuh: any epoch but the reset's 0). Its nodes follow its
    // flags (a status on a buffer of its own).
    AKX_TRY((scan_kernels<void, void, void, void>{}.init(status, c->tiles, stream)));
    return AKX_LAUNCH(Segmented ? scan_slices_info : scan_tile_info,
                      (scan_tile_kernel<functor_policy<F, T, Reduce, Segmented>>), dim3((unsigned)c->tiles),
                      dim3(256u), smem, stream, c->pol, status, c->tiles, c->ipt, layout, 1u,
                      (int64_t)lookback_status<Node>::nodes_offset(c->tiles));
  }
};

// Runs one tile pass over slices x n elements (the workspace: a result slot, then the status).
template <class F, class T, bool Reduce, bool Segmented = false>
akx_status functor_tiles(akx_context *ctx, const T *src, T *dst, int64_t n, bool exclusive,
                         const T *init, typename functor_traits<F, T>::Acc *result_host,
                         int64_t slices = 1) {
  using traits = functor_traits<F, T>;
  using Acc = typename traits::Acc;
  using Node = typename functor_traits<F, T, Segmented>::S::T;
  static_assert(sizeof(T) <= 16, "akx.cuh: T of at most 16 bytes");
  static_assert(std::is_trivially_copyable<T>::value, "akx.cuh: T must be trivially copyable");
  if (!ctx) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "ctx is NULL");
  if (n < 0) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "n is %lld; it must be >= 0", (long long)n);
  if (slices < 0)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "slices is %lld; it must be >= 0", (long long)slices);
  if (n > 0 && slices > 0 && (!src || (!Reduce && !dst)))
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "%s is NULL", !src ? "src" : "dst");
  functor_call<F, T, Reduce, Segmented> c{};
  const int32_t ipt = sizeof(Acc) <= 4 ? 16 : sizeof(Acc) <= 8 ? 8 : 4;
  c.ipt = ipt;
  AKX_TRY(akx__scan_tile_shared(ctx, AKX__SCAN_LAYOUT_CONFLICT_FREE, 256, ipt, sizeof(Acc), sizeof(Node),
                                &c.smem));
  const int64_t total = n * slices;
  c.tiles = (total + 256 * (int64_t)ipt - 1) / (256 * (int64_t)ipt);
  c.pol.src = src;
  c.pol.dst = dst;
  c.pol.n = n;
  c.pol.total = total;
  c.pol.d_slice = n > 0 ? 256 / n : 0;
  c.pol.d_i = n > 0 ? 256 % n : 0;
  c.pol.res.exclusive = exclusive;
  c.pol.res.has_init = init != nullptr;
  c.pol.res.init = init ? traits::lift(*init) : traits::S::acc_identity();
  if (total == 0) {
    if (result_host) *result_host = traits::S::acc_identity();
    return AKX_SUCCESS;
  }
  const size_t ws = 64 + (size_t)((64 + c.tiles * 4 + 15) / 16 * 16) + (size_t)c.tiles * sizeof(Node);
  struct capture {
    functor_call<F, T, Reduce, Segmented> *c;
    akx_context *ctx;
    Acc *result_host;
  };
  capture cap{&c, ctx, Reduce ? result_host : nullptr};
  return akx_context_run(ctx, ws, [](void *stream, void *w, void *arg) {
    auto *k = static_cast<capture *>(arg);
    AKX_TRY((functor_call<F, T, Reduce, Segmented>::run(stream, w, k->c)));
    // The result slot is the first bytes of this call's workspace: copied while the context's
    // lock is still held, before another thread's call can reuse, poison or free it.
    if (k->result_host)
      return akx_memcpy(k->ctx, k->result_host, w, sizeof(Acc), AKX_COPY_DEVICE_TO_HOST);
    return AKX_SUCCESS;
  }, &cap);
}
}  // namespace detail

// dst[i] = src[0] o ... o src[i] (with init: init o src[0] o ... o src[i]). dst may be src.
template <class F, class T>
akx_status scan_inclusive(akx_context *ctx, T *dst, const T *src, int64_t n, F = F{},
                          const T *init = nullptr) {
  return detail::functor_tiles<F, T, false>(ctx, src, dst, n, false, init, nullptr);
}

// dst[0] = init, dst[i] = init o src[0] o ... o src[i - 1].
template <class F, class T>
akx_status scan_exclusive(akx_context *ctx, T *dst, const T *src, int64_t n, const T &init, F = F{}) {
  return detail::functor_tiles<F, T, false>(ctx, src, dst, n, true, &init, nullptr);
}
// Without init: the functor's neutral element first (a functor without one cannot).
template <class F, class T>
akx_status scan_exclusive(akx_context *ctx, T *dst, const T *src, int64_t n, F = F{}) {
  static_assert(has_identity<F>::value,
                "akx::scan_exclusive without init needs F::identity(): the first output is the "
                "neutral element");
  return detail::functor_tiles<F, T, false>(ctx, src, dst, n, true, nullptr, nullptr);
}

// Each of `slices` slices of n elements back to back (row r at src + r * n: the rows of a
// row-major matrix, Julia's columns) scanned on its own, as scan_inclusive; one pass.
template <class F, class T>
akx_status scan_inclusive_slices(akx_context *ctx, T *dst, const T *src, int64_t n,
                                 int64_t slices, F = F{}, const T *init = nullptr) {
  return detail::functor_tiles<F, T, false, true>(ctx, src, dst, n, false, init, nullptr, slices);
}

// *result (host) = src[0] o ... o src[n - 1], operand order kept. Synchronizes, so it is
// refused (AKX_ERROR_UNSUPPORTED, nothing launched) while the context's stream captures a
// CUDA graph. An empty src gives F::identity(), or AKX_ERROR_INVALID_ARGUMENT for a functor
// without one.
template <class F, class T>
akx_status reduce(akx_context *ctx, const T *src, int64_t n, T *result, F = F{}) {
  using traits = functor_traits<F, T>;
  if (!result) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "result is NULL");
  AKX_TRY(akx__refuse_if_capturing(ctx, "akx::reduce",
                                   "its result is copied back to the host and waited for",
                                   nullptr));
  typename traits::Acc r;
  AKX_TRY((detail::functor_tiles<F, T, true>(ctx, src, nullptr, n, false, nullptr, &r)));
  if constexpr (!traits::neutral) {
    if (!r.valid)
      return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                       "src is empty and the functor has no identity() to return");
  }
  *result = traits::lower(r);
  return AKX_SUCCESS;
}

}  // namespace akx
