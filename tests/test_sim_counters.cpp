// The sim's counters on probe kernels whose answers are known (include/akx_sim.h has the
// definitions): bank wavefronts per shared request, sectors per global request, request
// grouping per warp and site, launch figures, the per-site table and the API's errors.
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "backend.h"
#include "sim_probe.hpp"

// ---- shared memory: wavefronts per request ----------------------------------------------------

// Lane i loads element i * stride of a shared array of T (T of 4, 8 or 16 bytes), written
// first (reading unwritten shared memory fails the initcheck; the stores are another site).
template <class T>
AKX_GLOBAL void shared_load_probe(int stride, T *out) {
  AKX_SHARED(T, words, 32 * 32);
  for (int i = int(threadIdx.x); i < 32 * 32; i += int(blockDim.x)) words.st(i, T{});
  __syncthreads();
  akx::gst(out + threadIdx.x, words.ld(threadIdx.x * stride));
}

template <class T>
AKX_GLOBAL void shared_store_probe(int stride) {
  AKX_SHARED(T, words, 32 * 32);
  words.st(threadIdx.x * stride, T{});
}

template <class T>
static akx_sim_kernel_counters run_shared_probe(int stride) {
  sim_context sim;
  T *out = sim.alloc<T>(32);
  expect_success(AKX_LAUNCH("load", shared_load_probe<T>, 1, 32, 0, NULL, stride, out));
  expect_success(AKX_LAUNCH("store", shared_store_probe<T>, 1, 32, 0, NULL, stride));
  akx_sim_kernel_counters k = sim.kernel("load");
  k.shared_store = sim.kernel("store").shared_store;
  return k;
}

static void expect_traffic(const akx_sim_traffic &t, uint64_t requests, uint64_t units,
                           uint64_t ideal, uint64_t bytes, const char *what) {
  cr_expect_eq(t.requests, requests, "%s: %llu requests, expected %llu", what,
               (unsigned long long)t.requests, (unsigned long long)requests);
  cr_expect_eq(t.units, units, "%s: %llu units, expected %llu", what, (unsigned long long)t.units,
               (unsigned long long)units);
  cr_expect_eq(t.ideal, ideal, "%s: %llu ideal, expected %llu", what, (unsigned long long)t.ideal,
               (unsigned long long)ideal);
  cr_expect_eq(t.bytes, bytes, "%s: %llu bytes, expected %llu", what, (unsigned long long)t.bytes,
               (unsigned long long)bytes);
}

using float4v = akx::vec<float, 4>;

Test(sim_counters, shared_conflict_free_4_8_16_bytes) {
  akx_sim_kernel_counters k4 = run_shared_probe<float>(1);
  expect_traffic(k4.shared_load, 1, 1, 1, 128, "4-byte load");
  expect_traffic(k4.shared_store, 1, 1, 1, 128, "4-byte store");
  akx_sim_kernel_counters k8 = run_shared_probe<double>(1);
  expect_traffic(k8.shared_load, 1, 2, 2, 256, "8-byte load");
  expect_traffic(k8.shared_store, 1, 2, 2, 256, "8-byte store");
  akx_sim_kernel_counters k16 = run_shared_probe<float4v>(1);
  expect_traffic(k16.shared_load, 1, 4, 4, 512, "16-byte load");
  expect_traffic(k16.shared_store, 1, 4, 4, 512, "16-byte store");
}

Test(sim_counters, shared_two_way_conflict) {
  akx_sim_kernel_counters k = run_shared_probe<float>(2);  // stride 2 words
  expect_traffic(k.shared_load, 1, 2, 1, 128, "stride-2 load");
  expect_traffic(k.shared_store, 1, 2, 1, 128, "stride-2 store");
}

Test(sim_counters, shared_broadcast) {
  sim_context sim;
  float *out = sim.alloc<float>(32);
  expect_success(AKX_LAUNCH("broadcast", shared_load_probe<float>, 1, 32, 0, NULL, 0, out));
  expect_traffic(sim.kernel("broadcast").shared_load, 1, 1, 1, 128, "one word");
}

Test(sim_counters, shared_stride_16_words_8_bytes) {
  akx_sim_kernel_counters k = run_shared_probe<double>(8);  // 8 doubles = 16 words apart
  expect_traffic(k.shared_load, 1, 16, 2, 256, "stride-16-word 8-byte load");
}

// ---- global memory: sectors per request ----------------------------------------------------------

static const int global_load_line = __LINE__ + 2;
AKX_GLOBAL void global_load_probe(const float *x, float *out, int stride, int offset) {
  akx::gst(out + blockIdx.x * blockDim.x + threadIdx.x, akx::gld(x + threadIdx.x * stride + offset));
}

static akx_sim_kernel_counters run_global_probe(int stride, int offset) {
  sim_context sim;
  float *x = sim.alloc<float>(32 * 32 + 1);
  float *out = sim.alloc<float>(32);
  expect_success(AKX_LAUNCH("global", global_load_probe, 1, 32, 0, NULL, (const float *)x, out,
                            stride, offset));
  return sim.kernel("global");
}

Test(sim_counters, global_coalesced) {
  akx_sim_kernel_counters k = run_global_probe(1, 0);
  expect_traffic(k.global_load, 1, 4, 4, 128, "coalesced load");
  expect_traffic(k.global_store, 1, 4, 4, 128, "coalesced store");
}

Test(sim_counters, global_misaligned_by_one_element) {
  expect_traffic(run_global_probe(1, 1).global_load, 1, 5, 5, 128, "misaligned load");
}

Test(sim_counters, global_scattered) {
  expect_traffic(run_global_probe(32, 0).global_load, 1, 32, 32, 128, "one line per lane");
  expect_traffic(run_global_probe(8, 0).global_load, 1, 32, 8, 128, "one sector per lane");
}

AKX_GLOBAL void vector_probe(const float *x, float4v *out) {
  akx::gst(out + threadIdx.x, akx::gld_vec<float, 4>(x + 4 * threadIdx.x));
}

Test(sim_counters, global_vector_loads) {
  sim_context sim;
  float *x = sim.alloc<float>(128);
  float4v *out = sim.alloc<float4v>(32);
  expect_success(AKX_LAUNCH("vector", vector_probe, 1, 32, 0, NULL, (const float *)x, out));
  akx_sim_kernel_counters k = sim.kernel("vector");
  expect_traffic(k.global_load, 1, 16, 16, 512, "16-byte loads");
  expect_traffic(k.global_store, 1, 16, 16, 512, "16-byte stores");
}

// A struct of two doubles (as the library's complex128) is aligned to 8: a GPU moves it in two
// 8-byte instructions, each a request that uses half of every sector it touches.
struct two_doubles {
  double re, im;
};

AKX_GLOBAL void two_doubles_probe(const two_doubles *x) {
  AKX_SHARED(two_doubles, tile, 32);
  tile.st(threadIdx.x, akx::gld(x + threadIdx.x));
}

Test(sim_counters, structs_move_in_instructions_of_their_alignment) {
  sim_context sim;
  two_doubles *x = sim.alloc<two_doubles>(32);
  expect_success(AKX_LAUNCH("two_doubles", two_doubles_probe, 1, 32, 0, NULL,
                            (const two_doubles *)x));
  akx_sim_kernel_counters k = sim.kernel("two_doubles");
  expect_traffic(k.global_load, 2, 32, 16, 512, "16-byte structs aligned to 8 (global)");
  expect_traffic(k.shared_store, 2, 8, 4, 512, "16-byte structs aligned to 8 (shared)");
}

// ---- request grouping ---------------------------------------------------------------------------

// The first `active` lanes of each warp load one coalesced row per iteration.
AKX_GLOBAL void loop_probe(const float *x, float *out, int iterations, unsigned active) {
  float acc = 0.0f;
  unsigned lane = threadIdx.x % 32;
  if (lane < active)
    for (int k = 0; k < iterations; ++k) acc += akx::gld(x + k * 32 + lane);
  akx::gst(out + threadIdx.x, acc);
}

static akx_sim_traffic run_loop_probe(int iterations, unsigned active, unsigned threads) {
  sim_context sim;
  float *x = sim.alloc<float>(size_t(iterations) * 32);
  float *out = sim.alloc<float>(threads);
  for (int i = 0; i < iterations * 32; ++i) x[i] = 1.0f;
  expect_success(AKX_LAUNCH("loop", loop_probe, 1, threads, 0, NULL, (const float *)x, out,
                            iterations, active));
  if (active == 32) cr_expect_eq(out[threads - 1], float(iterations));
  return sim.kernel("loop").global_load;
}

Test(sim_counters, requests_group_the_kth_execution_of_each_lane) {
  expect_traffic(run_loop_probe(5, 32, 32), 5, 20, 20, 5 * 128, "5 full rows");
  expect_traffic(run_loop_probe(5, 16, 32), 5, 10, 10, 5 * 64, "5 half rows");
  expect_traffic(run_loop_probe(5, 32, 64), 10, 40, 40, 10 * 128, "two warps");
}

// Long loops group exactly, in any schedule (the sim keeps a lane's addresses as runs until
// the convergence point).
Test(sim_counters, long_loops) {
  expect_traffic(run_loop_probe(2500, 32, 64), 5000, 20000, 20000, 5000ull * 128, "2500 rows");
  expect_traffic(run_loop_probe(2500, 7, 32), 2500, 2500, 2500, 2500ull * 28, "7 lanes");
}

// Two halves of a warp loop over different sites.
AKX_GLOBAL void split_loop_probe(const float *x, float *out, int iterations) {
  float acc = 0.0f;
  unsigned lane = threadIdx.x % 32;
  if (lane < 16) {
    for (int k = 0; k < iterations; ++k) acc += akx::gld(x + k * 32 + lane);
  } else {
    for (int k = 0; k < iterations; ++k) acc += akx::gld(x + k * 32 + lane);
  }
  akx::gst(out + threadIdx.x, acc);
}

Test(sim_counters, long_divergent_loops) {
  sim_context sim;
  const int iterations = 3000;
  float *x = sim.alloc<float>(iterations * 32);
  float *out = sim.alloc<float>(32);
  expect_success(AKX_LAUNCH("split", split_loop_probe, 1, 32, 0, NULL, (const float *)x, out,
                            iterations));
  expect_traffic(sim.kernel("split").global_load, 2 * iterations, 4 * iterations,
                 4 * iterations, uint64_t(iterations) * 128, "two half-warp loops");
}

// Lane 0 loops alone while two other lanes of its warp meet at a __syncwarp of their own
// (a convergence point of the warp in the middle of lane 0's loop in some schedules): every
// iteration is a request of one lane.
AKX_GLOBAL void lone_loop_probe(const float *x, float *out, int iterations) {
  unsigned lane = threadIdx.x;
  float acc = 0.0f;
  if (lane == 0) {
    for (int k = 0; k < iterations; ++k) acc += akx::gld(x + k);
  } else if (lane < 3) {
    __syncwarp(0x6u);
  }
  akx::gst(out + lane, acc);
}

Test(sim_counters, long_loop_of_one_lane) {
  sim_context sim;
  const int iterations = 3000;
  float *x = sim.alloc<float>(iterations);
  float *out = sim.alloc<float>(32);
  expect_success(AKX_LAUNCH("lone", lone_loop_probe, 1, 32, 0, NULL, (const float *)x, out,
                            iterations));
  expect_traffic(sim.kernel("lone").global_load, iterations, iterations, iterations,
                 4ull * iterations, "one lane");
}

// A convergence point closes requests: with a __syncwarp between two loads of the same site
// (a loop), lanes that reach it at different iterations still group by iteration.
AKX_GLOBAL void converging_probe(const float *x, float *out) {
  float acc = 0.0f;
  for (int k = 0; k < 3; ++k) {
    acc += akx::gld(x + k * 32 + threadIdx.x);
    __syncwarp();
  }
  akx::gst(out + threadIdx.x, acc);
}

Test(sim_counters, convergence_points) {
  sim_context sim;
  float *x = sim.alloc<float>(96);
  float *out = sim.alloc<float>(32);
  expect_success(AKX_LAUNCH("converging", converging_probe, 1, 32, 0, NULL, (const float *)x, out));
  expect_traffic(sim.kernel("converging").global_load, 3, 12, 12, 3 * 128, "three rows");
}

// ---- launch figures -----------------------------------------------------------------------------

AKX_GLOBAL void three_barriers_probe() {
  __syncthreads();
  __syncthreads();
  __syncthreads();
}

AKX_GLOBAL void empty_probe() {}

Test(sim_counters, launches_blocks_barriers_waves) {
  sim_context sim;
  expect_success(AKX_LAUNCH("barriers", three_barriers_probe, 5, 100, 0, NULL));
  expect_success(AKX_LAUNCH("barriers", three_barriers_probe, 2, 64, 0, NULL));
  akx_sim_kernel_counters k = sim.kernel("barriers");
  cr_expect_eq(k.launches, 2u);
  cr_expect_eq(k.blocks, 7u);
  cr_expect_eq(k.threads, 628u);
  cr_expect_eq(k.warps, 24u);
  cr_expect_eq(k.barriers, 21u);
  cr_expect_eq(k.last_grid, 2u);
  cr_expect_eq(k.last_block, 64u);
  // h200, 32 registers per thread (the default declaration): 65536 registers per SM hold 16
  // blocks of 100 threads (4 warps of 1024 registers; 2048 threads would allow 20), and 32 of
  // 64 (the SM's block limit), on 132 SMs.
  double waves = 5.0 / (16 * 132) + 2.0 / (32 * 132);
  cr_expect(k.waves > waves * 0.999999 && k.waves < waves * 1.000001, "waves %g, expected %g",
            k.waves, waves);
  cr_expect_eq(k.model_us, 4.0, "two launches of nothing: 2 x launch_us, got %g", k.model_us);

  // 100 KB of shared memory (with the opt-in) per 1024-thread block: 2 blocks per SM, 264
  // blocks = one wave.
  const akx::kernel_info wave{"wave", 1024, 32, 1, true};
  expect_success(AKX_LAUNCH(wave, empty_probe, 264, 1024, 100 << 10, NULL));
  akx_sim_kernel_counters w = sim.kernel("wave");
  cr_expect_eq(w.last_dyn_smem, 100u << 10);
  cr_expect(w.waves > 0.999999 && w.waves < 1.000001, "waves %g", w.waves);

  akx_sim_kernel_counters total;
  int32_t count = 0;
  expect_success(akx_sim_counters_get(sim.ctx, &total, NULL, 0, &count));
  cr_expect_eq(count, 2);
  cr_expect_eq(total.launches, 3u);
  cr_expect_eq(total.kernel[0], '\0');
  expect_success(akx_sim_counters_reset(sim.ctx));
  expect_success(akx_sim_counters_get(sim.ctx, &total, NULL, 0, &count));
  cr_expect_eq(count, 0);
  cr_expect_eq(total.launches, 0u);
}

Test(sim_counters, counting_off_keeps_launch_figures) {
  setenv("AKX_SIM_COUNTERS", "0", 1);
  akx_sim_kernel_counters k = run_global_probe(1, 0);
  cr_expect_eq(k.launches, 1u);
  cr_expect_eq(k.blocks, 1u);
  expect_traffic(k.global_load, 0, 0, 0, 0, "not counted");
}

// A model, not a measurement: it only has to grow with the bytes and know the launch cost.
Test(sim_counters, model_grows_with_traffic) {
  sim_context sim;
  const int rows = 4096;
  float *x = sim.alloc<float>(size_t(rows) * 32);
  float *out = sim.alloc<float>(256);
  expect_success(AKX_LAUNCH("small", loop_probe, 1, 256, 0, NULL, (const float *)x, out, 4, 32u));
  expect_success(AKX_LAUNCH("large", loop_probe, 1, 256, 0, NULL, (const float *)x, out, rows, 32u));
  double small = sim.kernel("small").model_us, large = sim.kernel("large").model_us;
  cr_expect(small > 2.0 && large > small, "model: small %g us, large %g us", small, large);
}

// ---- per-site table and API errors ------------------------------------------------------------------

Test(sim_counters, sites) {
  sim_context sim;
  float *x = sim.alloc<float>(64);
  float *out = sim.alloc<float>(64);
  expect_success(AKX_LAUNCH("global", global_load_probe, 2, 32, 0, NULL, (const float *)x, out, 1, 0));
  akx_sim_site_counters sites[8];
  int32_t count = 0;
  expect_success(akx_sim_sites_get(sim.ctx, sites, 8, &count));
  cr_assert_eq(count, 2);
  // Sorted by kernel, file, line, column: the store's call starts before the load's.
  const akx_sim_site_counters &store = sites[0], &load = sites[1];
  cr_expect_str_eq(load.kernel, "global");
  cr_expect_str_eq(load.file, "test_sim_counters.cpp");
  cr_expect_eq(load.line, global_load_line);
  cr_expect_eq(load.shared, 0);
  cr_expect_eq(load.store, 0);
  expect_traffic(load.traffic, 2, 8, 8, 256, "the load's site");
  cr_expect_eq(store.store, 1);
  cr_expect(store.column < load.column, "store column %d, load column %d", store.column,
            load.column);
  int32_t only = 0;
  expect_success(akx_sim_sites_get(sim.ctx, NULL, 0, &only));
  cr_expect_eq(only, 2);
}

// ---- atomics: per launch, per site and per address -------------------------------------------

// Every thread adds 1 to one shared total (one address); thread 0 of each block also takes a
// ticket on its block's own word (one address per block) and stores plainly beside it.
static const int atomic_total_line = __LINE__ + 2;
AKX_GLOBAL void atomics_probe(unsigned *total, unsigned *per_block, unsigned *plain) {
  atomicAdd(total, 1u);
  if (threadIdx.x == 0) {
    atomicAdd(per_block + blockIdx.x, 1u);
    akx::gst(plain + blockIdx.x, 1u);
  }
}

Test(sim_counters, atomics_by_launch_site_and_address) {
  sim_context sim;
  const unsigned blocks = 3, threads = 64;
  unsigned *total = sim.alloc<unsigned>(1);
  unsigned *per_block = sim.alloc<unsigned>(blocks);
  unsigned *plain = sim.alloc<unsigned>(blocks);
  for (int launch = 1; launch <= 2; ++launch) {
    expect_success(AKX_LAUNCH("atomics", atomics_probe, blocks, threads, 0, NULL, total, per_block, plain));
    akx_sim_kernel_counters k = sim.kernel("atomics");
    // One atomic per lane that executed one: 192 on the total, 3 tickets.
    cr_expect_eq(k.atomics, uint64_t(launch) * (blocks * threads + blocks), "launch %d: %llu atomics", launch,
                 (unsigned long long)k.atomics);
    // 4 addresses a launch; the chain is the total's 192 in one launch, not summed over two.
    cr_expect_eq(k.atomic_addresses, uint64_t(launch) * (1 + blocks));
    cr_expect_eq(k.atomic_chain, uint64_t(blocks) * threads, "launch %d: chain %llu", launch,
                 (unsigned long long)k.atomic_chain);
  }
  cr_expect_eq(*total, 2 * blocks * threads);
  akx_sim_kernel_counters all;
  expect_success(akx_sim_counters_get(sim.ctx, &all, NULL, 0, NULL));
  cr_expect_eq(all.atomics, 2u * (blocks * threads + blocks));
  cr_expect_eq(all.atomic_chain, uint64_t(blocks) * threads);

  akx_sim_site_counters sites[8];
  int32_t count = 0;
  expect_success(akx_sim_sites_get(sim.ctx, sites, 8, &count));
  cr_assert_eq(count, 3, "sites: %d", count);
  int atomic_rows = 0;
  for (int32_t i = 0; i < count; ++i) {
    const akx_sim_site_counters &r = sites[i];
    if (!r.atomic) {  // the plain store
      cr_expect_eq(r.store, 1);
      cr_expect_eq(r.atomics, 0u);
      cr_expect_eq(r.atomic_chain, 0u);
      continue;
    }
    ++atomic_rows;
    cr_expect_eq(r.store, 1, "an atomic is a store too");
    if (r.line == atomic_total_line) {
      cr_expect_eq(r.atomics, 2u * blocks * threads);
      cr_expect_eq(r.atomic_chain, uint64_t(blocks) * threads);
    } else {  // the tickets: one per block and address
      cr_expect_eq(r.line, atomic_total_line + 2);
      cr_expect_eq(r.atomics, 2u * blocks);
      cr_expect_eq(r.atomic_chain, 1u);
    }
  }
  cr_expect_eq(atomic_rows, 2);
  // A reset forgets them.
  expect_success(akx_sim_counters_reset(sim.ctx));
  expect_success(akx_sim_counters_get(sim.ctx, &all, NULL, 0, NULL));
  cr_expect(all.atomics == 0 && all.atomic_chain == 0 && all.atomic_addresses == 0);
}

static akx_status never_opens(akx_context *, int) { return AKX_ERROR_NO_DEVICE; }

Test(sim_counters, api_errors) {
  akx_sim_kernel_counters k;
  cr_expect_eq(akx_sim_counters_get(NULL, &k, NULL, 0, NULL), AKX_ERROR_INVALID_ARGUMENT);
  cr_expect(strstr(akx_last_error(), "ctx is NULL") != NULL, "%s", akx_last_error());
  cr_expect_eq(akx_sim_counters_reset(NULL), AKX_ERROR_INVALID_ARGUMENT);

  akx__backend other;
  memset(&other, 0, sizeof other);
  other.kind = AKX_BACKEND_CUDA;
  other.open = never_opens;
  akx_context not_sim;
  memset(&not_sim, 0, sizeof not_sim);
  not_sim.be = &other;
  cr_expect_eq(akx_sim_counters_get(&not_sim, &k, NULL, 0, NULL), AKX_ERROR_UNSUPPORTED);
  cr_expect(strstr(akx_last_error(), "sim backend only") != NULL, "%s", akx_last_error());
  cr_expect_eq(akx_sim_counters_reset(&not_sim), AKX_ERROR_UNSUPPORTED);
  cr_expect_eq(akx_sim_sites_get(&not_sim, NULL, 0, NULL), AKX_ERROR_UNSUPPORTED);

  sim_context sim;
  cr_expect_eq(akx_sim_counters_get(sim.ctx, NULL, NULL, -1, NULL), AKX_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(akx_sim_counters_get(sim.ctx, NULL, NULL, 4, NULL), AKX_ERROR_INVALID_ARGUMENT);
  cr_expect(strstr(akx_last_error(), "per_kernel is NULL") != NULL, "%s", akx_last_error());
  cr_expect_eq(akx_sim_sites_get(sim.ctx, NULL, 3, NULL), AKX_ERROR_INVALID_ARGUMENT);
}

Test(sim_counters, report_at_destroy) {
  setenv("AKX_SIM_REPORT", "1", 1);
  char path[] = "/tmp/akx_sim_report_XXXXXX";
  int fd = mkstemp(path);
  cr_assert(fd >= 0);
  fflush(stderr);
  int saved = dup(2);
  dup2(fd, 2);
  run_global_probe(1, 0);  // destroys its context: prints the table
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  char text[8192] = {0};
  ssize_t n = pread(fd, text, sizeof text - 1, 0);
  close(fd);
  unlink(path);
  cr_assert(n > 0, "nothing printed");
  cr_expect(strstr(text, "global") != NULL, "%s", text);
  cr_expect(strstr(text, "model") != NULL, "%s", text);
  cr_expect(strstr(text, "h200") != NULL, "%s", text);
}
