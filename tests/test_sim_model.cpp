// The sim's model of GPU time (src/sim/model.c): DRAM priced by the sectors moved, bytes in
// flight from the kernel's declared loads in flight and its occupancy (registers, shared
// memory with the per-block reserve), the latency of dependent steps between blocks, and
// the footprint reported beside L2. A model, not a measurement: these tests hold it to its
// own formula and to the orderings a GPU shows, not to a GPU's times.
#include <stdlib.h>

#include <algorithm>
#include <vector>

#include "device_profile.h"
#include "sim/model.h"
#include "sim_probe.hpp"

namespace {
const akx__device_profile &h200() {
  const akx__device_profile *p = akx__profile_by_name("h200");
  cr_assert(p != nullptr);
  return *p;
}

bool near(double a, double b) { return a > b * (1 - 1e-9) && a < b * (1 + 1e-9); }

// A launch that reads `sectors` sectors in requests of `per_request` sectors each.
akx__sim_launch_stats reading(uint64_t blocks, uint32_t threads, uint64_t sectors,
                              uint64_t per_request, uint32_t loads_in_flight) {
  akx__sim_launch_stats s{};
  s.blocks = blocks;
  s.threads_per_block = threads;
  s.registers_per_thread = 32;
  s.loads_in_flight = loads_in_flight;
  s.global_sectors = s.load_sectors = sectors;
  s.global_requests = s.load_requests = sectors / per_request;
  return s;
}

// DRAM time of a launch by the model: its time less the launch floor (no shared memory, no
// dependent steps in these).
double dram_us(const akx__sim_launch_stats &s) {
  return akx__sim_model_us(&h200(), &s) - h200().launch_us;
}

// Bytes a launch needs in flight to saturate DRAM on the H200 profile.
double needed() { return double(h200().bytes_in_flight_per_sm) * h200().sm_count; }
}  // namespace

// ---- sectors, not requested bytes ---------------------------------------------------------

// Each lane of 10^7 reads one float32 of a view with stride 8: a warp request asks for 128
// bytes and touches 32 sectors (1024 bytes). The contiguous sum reads 16-byte vectors, 16
// sectors per request, all used. Through the public API on a sim context.
static double model_of_sum(akx_context *ctx, float *data, int64_t n, int64_t stride,
                           akx_sim_kernel_counters *total) {
  akx_array a = akx_vector(data, AKX_FLOAT32, n);
  a.strides[0] = stride;
  float r = 0;
  expect_success(akx_sim_counters_reset(ctx));
  expect_success(akx_mapreduce(ctx, &a, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &r, AKX_HOST));
  cr_expect_eq(r, float(n), "sum of %lld ones (stride %lld): %g", (long long)n,
               (long long)stride, double(r));
  expect_success(akx_sim_counters_get(ctx, total, NULL, 0, NULL));
  return total->model_us;
}

Test(sim_model, stride_8_sum_costs_at_least_4x_the_contiguous_sum) {
  sim_context sim;
  const int64_t n = 10000000, stride = 8;
  float *x = sim.alloc<float>(size_t(n * stride));
  std::fill(x, x + n * stride, 1.0f);
  akx_sim_kernel_counters contiguous, strided;
  double c = model_of_sum(sim.ctx, x, n, 1, &contiguous);
  double s = model_of_sum(sim.ctx, x, n, stride, &strided);
  cr_expect(strided.global_load.units >= uint64_t(n),
            "stride 8: one sector per element, %llu sectors for %lld elements",
            (unsigned long long)strided.global_load.units, (long long)n);
  cr_log_info("model: stride-8 sum of 10^7 %.2f us, contiguous %.2f us (x%.2f)", s, c, s / c);
  cr_expect(s >= 4 * c, "model: stride-8 sum %g us, contiguous %g us (expected at least 4x)", s,
            c);
  // The footprint beside L2 (50 MiB on the H200 profile): 40 MB of contiguous float32 fits,
  // 320 MB of sectors of the strided view does not.
  cr_expect_eq(contiguous.l2_bytes, uint64_t(50) << 20);
  cr_expect(contiguous.fits_l2 == 1 && strided.fits_l2 == 0,
            "fits L2: contiguous %d (%llu bytes), strided %d (%llu bytes)", contiguous.fits_l2,
            (unsigned long long)contiguous.footprint_bytes, strided.fits_l2,
            (unsigned long long)strided.footprint_bytes);
  cr_expect(strided.footprint_bytes >= uint64_t(n) * 32, "strided footprint %llu",
            (unsigned long long)strided.footprint_bytes);
}

Test(sim_model, dram_time_is_sectors_times_32_bytes) {
  // Saturated launches (plenty in flight): time = sectors x 32 B / copy bandwidth, whatever
  // bytes the lanes asked for.
  akx__sim_launch_stats full = reading(1056, 256, 1000000, 16, 16);
  akx__sim_launch_stats sparse = reading(1056, 256, 8000000, 32, 16);
  double bytes = 1000000.0 * 32;
  cr_expect(near(dram_us(full), bytes / (h200().copy_gbs * 1e3)), "full: %g us", dram_us(full));
  cr_expect(near(dram_us(sparse), 8 * dram_us(full)), "8x the sectors: %g us vs %g us",
            dram_us(sparse), dram_us(full));
}

// ---- bytes in flight: Little's law --------------------------------------------------------

Test(sim_model, loads_in_flight_scale_bandwidth_as_littles_law_says) {
  // 132 blocks of 256 threads = 1056 warps of 512-byte requests: 0.54 MB in flight per
  // declared load, far below the 6.5 MB the H200 profile needs; the bytes are 32 MB.
  const double per_load = 1056.0 * 512;
  for (uint32_t loads : {1u, 2u, 4u, 8u}) {
    akx__sim_launch_stats s = reading(132, 256, 1000000, 16, loads);
    double bytes = 32e6, in_flight = per_load * loads;
    double expected = bytes / (h200().copy_gbs * 1e3 * (in_flight / needed()));
    cr_expect(near(dram_us(s), expected), "%u loads in flight: %g us, expected %g us", loads,
              dram_us(s), expected);
  }
  akx__sim_launch_stats one = reading(132, 256, 1000000, 16, 1);
  akx__sim_launch_stats four = reading(132, 256, 1000000, 16, 4);
  cr_expect(near(dram_us(one), 4 * dram_us(four)), "1 vs 4 loads: %g us vs %g us", dram_us(one),
            dram_us(four));
  // Past saturation more loads in flight buy nothing.
  akx__sim_launch_stats many = reading(1056, 256, 1000000, 16, 16);
  akx__sim_launch_stats more = reading(1056, 256, 1000000, 16, 32);
  cr_expect(near(dram_us(many), dram_us(more)) &&
                near(dram_us(many), 32e6 / (h200().copy_gbs * 1e3)),
            "saturated: %g us, %g us", dram_us(many), dram_us(more));
}

// Stores are posted: a warp issues them and goes on, and L2 drains them to DRAM without a
// warp waiting, so Little's law bounds a launch's loads, not its stores. A launch whose loads
// are a fifth of its bytes (findall's shape: one bool read, eight bytes of position written)
// costs the larger of its loads' Little's-law time and all its bytes at the copy bandwidth,
// never all its bytes at its loads' rate in flight.
akx__sim_launch_stats reading_and_storing(uint64_t blocks, uint64_t load_sectors, uint64_t store_sectors,
                                          uint32_t loads_in_flight) {
  akx__sim_launch_stats s = reading(blocks, 256, load_sectors, 16, loads_in_flight);
  s.global_sectors = load_sectors + store_sectors;
  s.global_requests = s.load_requests + store_sectors / 16;
  return s;
}

Test(sim_model, posted_stores_are_not_bound_by_the_loads_in_flight) {
  const double gbs = h200().copy_gbs * 1e3;  // bytes per microsecond
  // 32 blocks x 8 warps x 8 loads x 512 B = 1 MB in flight: all of a 1 MB read at once, then
  // 4 MB of stores. At most one loaded round trip for the loads (needed / copy), and 5 MB at
  // the copy bandwidth is less than that: one round trip in all.
  const uint64_t mb = 1000000 / 32;
  akx__sim_launch_stats small = reading_and_storing(32, mb, 4 * mb, 8);
  const double round_trip = needed() / gbs;
  cr_expect(near(dram_us(small), round_trip), "1 MB read, 4 MB stored: %g us, expected %g us", dram_us(small),
            round_trip);
  // Loads short of saturation, stores plenty: 132 blocks, 1 load of 512 B in flight a thread
  // (0.54 MB), 32 MB read, 96 MB stored. The loads' time: 32 MB at the in-flight rate; all
  // bytes at the copy bandwidth: 128 MB. The larger.
  akx__sim_launch_stats partial = reading_and_storing(132, 1000000, 3000000, 1);
  const double in_flight = 1056.0 * 512, loads_us = 32e6 / (gbs * (in_flight / needed()));
  const double all_us = 128e6 / gbs;
  cr_expect(near(dram_us(partial), loads_us > all_us ? loads_us : all_us), "%g us, loads %g us, all %g us",
            dram_us(partial), loads_us, all_us);
  // Stores only: all bytes at the copy bandwidth, at least one round trip.
  akx__sim_launch_stats stores{};
  stores.blocks = 1056;
  stores.threads_per_block = 256;
  stores.global_sectors = 4000000;
  stores.global_requests = 250000;
  cr_expect(near(dram_us(stores), 128e6 / gbs), "stores only: %g us", dram_us(stores));
  stores.global_sectors = 1000;
  stores.global_requests = 100;
  cr_expect(near(dram_us(stores), round_trip), "a few stores: %g us, one round trip %g us", dram_us(stores),
            round_trip);
}

// Each thread reads `per_thread` consecutive float4 of its own, thread-major across the
// block: each request is 32 lanes x 16 bytes = 16 sectors.
AKX_GLOBAL void vector_reads_probe(const float *x, float *out, int per_thread) {
  const int64_t base = (int64_t)blockIdx.x * blockDim.x * per_thread + threadIdx.x;
  float acc = 0;
  for (int k = 0; k < per_thread; ++k) {
    akx::vec<float, 4> v = akx::gld_vec<float, 4>(x + 4 * (base + (int64_t)k * blockDim.x));
    acc += v.v[0] + v.v[1] + v.v[2] + v.v[3];
  }
  akx::gst(out + (int64_t)blockIdx.x * blockDim.x + threadIdx.x, acc);
}

Test(sim_model, declared_loads_in_flight_reach_the_model) {
  sim_context sim;
  const int blocks = 4, threads = 256, per_thread = 8;
  float *x = sim.alloc<float>(size_t(blocks) * threads * per_thread * 4);
  float *out = sim.alloc<float>(size_t(blocks) * threads);
  const akx::kernel_info one{"one_in_flight", 1024, 32, 1, false};
  const akx::kernel_info four{"four_in_flight", 1024, 32, 4, false};
  expect_success(AKX_LAUNCH(one, vector_reads_probe, blocks, threads, 0, NULL,
                            (const float *)x, out, per_thread));
  expect_success(AKX_LAUNCH(four, vector_reads_probe, blocks, threads, 0, NULL,
                            (const float *)x, out, per_thread));
  akx_sim_kernel_counters k1 = sim.kernel("one_in_flight"), k4 = sim.kernel("four_in_flight");
  cr_assert_eq(k1.global_load.units, uint64_t(blocks) * threads * per_thread / 2);  // 16 per 32 lanes
  // 32 warps: 16 KB in flight with one load each, 64 KB with four, of ~135 KB moved; both
  // far below saturation, so DRAM time scales as 1/4.
  double d1 = k1.model_us - h200().launch_us, d4 = k4.model_us - h200().launch_us;
  cr_expect(near(d1, 4 * d4), "model DRAM time: %g us with 1 load in flight, %g us with 4", d1,
            d4);
}

// ---- occupancy: registers and shared memory ----------------------------------------------

Test(sim_model, registers_lower_occupancy) {
  const akx__device_profile *p = &h200();
  // 256 threads = 8 warps; 65536 registers per SM, allocated per warp in units of 256.
  cr_expect_eq(akx__sim_resident_blocks_per_sm(p, 256, 0, 32), 8u);   // threads bind first
  cr_expect_eq(akx__sim_resident_blocks_per_sm(p, 256, 0, 40), 6u);   // 1280 per warp
  cr_expect_eq(akx__sim_resident_blocks_per_sm(p, 256, 0, 33), 6u);   // 1056, rounded to 1280
  cr_expect_eq(akx__sim_resident_blocks_per_sm(p, 256, 0, 64), 4u);
  cr_expect_eq(akx__sim_resident_blocks_per_sm(p, 256, 0, 128), 2u);
  cr_expect_eq(akx__sim_resident_blocks_per_sm(p, 256, 0, 255), 1u);
  // And the model: 1056 blocks with 4 loads in flight saturate DRAM at 32 registers (8 blocks
  // per SM, 17 MB in flight); at 128 registers 2 blocks per SM hold 4.3 MB, 2/3 of it.
  akx__sim_launch_stats s = reading(1056, 256, 1000000, 16, 4);
  double at32 = dram_us(s);
  s.registers_per_thread = 128;
  double at128 = dram_us(s);
  double expected = 32e6 / (p->copy_gbs * 1e3 * (264.0 * 8 * 4 * 512 / needed()));
  cr_expect(at128 > at32, "128 registers: %g us, 32 registers: %g us", at128, at32);
  cr_expect(near(at128, expected), "128 registers: %g us, expected %g us", at128, expected);
}

Test(sim_model, shared_memory_counts_the_per_block_reserve) {
  const akx__device_profile *p = &h200();  // 228 KiB per SM, 1 KiB reserved per block
  cr_expect_eq(akx__sim_resident_blocks_per_sm(p, 128, 56 << 10, 32), 4u);  // 4 x 57 KiB
  // 57 KiB + 1 KiB reserve = 58 KiB: 3 fit in 228 KiB (4 would without the reserve).
  cr_expect_eq(akx__sim_resident_blocks_per_sm(p, 128, 57 << 10, 32), 3u);
}

// ---- dependent steps ----------------------------------------------------------------------

Test(sim_model, latency_grows_with_dependent_steps) {
  akx__sim_launch_stats s = reading(132, 256, 1000, 16, 1);
  double base = akx__sim_model_us(&h200(), &s);
  for (uint32_t steps : {1u, 10u, 100u}) {
    s.dependent_steps = steps;
    double t = akx__sim_model_us(&h200(), &s);
    cr_expect(near(t - base, steps * h200().dram_latency_ns * 1e-3),
              "%u steps: %g us over %g us", steps, t, base);
  }
}

// Block after block: each takes a ticket, waits for its predecessor's flag (acquire), then
// releases its own. The chain is blocks - 1 steps long.
AKX_GLOBAL void chain_probe(unsigned *ticket, unsigned *flags) {
  const unsigned t = atomicAdd(ticket, 1u);
  if (t > 0)
    while (akx::ld_acquire(flags + t - 1) == 0u) {
    }
  akx::st_release(flags + t, 1u);
}

Test(sim_model, a_chain_of_blocks_pays_its_latency) {
  sim_context sim;
  unsigned *ticket = sim.alloc<unsigned>(1);
  unsigned *flags = sim.alloc<unsigned>(16);
  expect_success(AKX_LAUNCH("chain", chain_probe, 16, 1, 0, NULL, ticket, flags));
  akx_sim_kernel_counters k = sim.kernel("chain");
  cr_expect_eq(k.dependent_steps, 15u, "dependent steps %llu", (unsigned long long)k.dependent_steps);
  double floor = h200().launch_us + 15 * h200().dram_latency_ns * 1e-3;
  cr_expect(k.model_us >= floor, "model %g us, at least %g us", k.model_us, floor);
}

// ---- atomics on one address -------------------------------------------------------------------

// L2 performs the atomics on one address one after another (l2_atomic_ns each), beside the
// launch's DRAM traffic and its atomics on other addresses: the longest chain is a floor of the
// launch's busy time, not added to it.
Test(sim_model, a_same_address_chain_is_priced_beside_dram) {
  const double ns = h200().l2_atomic_ns;
  cr_assert(ns > 0, "the profile prices an atomic");
  akx__sim_launch_stats s = reading(1056, 256, 1000000, 16, 16);  // 32 MB, saturated
  const double dram = dram_us(s);
  s.atomic_chain = 1000;  // well below the DRAM time: hidden
  cr_expect(near(dram_us(s), dram), "1000 atomics on one address: %g us, DRAM %g us", dram_us(s), dram);
  s.atomic_chain = 100000000;  // 10^8 on one address: the chain is the time
  cr_expect(near(dram_us(s), 1e8 * ns * 1e-3), "10^8 atomics on one address: %g us", dram_us(s));
}

// Every thread of 64 blocks x 256 adds to one word, or each to its own word: the same atomics,
// the same sectors; the first is one chain of 16384, the second 16384 chains of one.
AKX_GLOBAL void add_probe(unsigned *words, unsigned spread) {
  atomicAdd(words + (spread ? blockIdx.x * blockDim.x + threadIdx.x : 0u), 1u);
}

Test(sim_model, atomics_on_one_address_cost_their_chain) {
  sim_context sim;
  const unsigned blocks = 64, threads = 256, n = blocks * threads;
  unsigned *words = sim.alloc<unsigned>(n);
  expect_success(AKX_LAUNCH("one_word", add_probe, blocks, threads, 0, NULL, words, 0u));
  expect_success(AKX_LAUNCH("own_words", add_probe, blocks, threads, 0, NULL, words, 1u));
  akx_sim_kernel_counters one = sim.kernel("one_word"), own = sim.kernel("own_words");
  cr_expect_eq(words[0], n + 1);
  cr_expect(one.atomics == n && own.atomics == n, "atomics %llu, %llu", (unsigned long long)one.atomics,
            (unsigned long long)own.atomics);
  cr_expect(one.atomic_chain == n && own.atomic_chain == 1, "chains %llu, %llu",
            (unsigned long long)one.atomic_chain, (unsigned long long)own.atomic_chain);
  const double chain_us = n * h200().l2_atomic_ns * 1e-3;
  cr_log_info("model: %u atomics on one word %.2f us, on their own words %.2f us", n, one.model_us, own.model_us);
  cr_expect(one.model_us >= chain_us + h200().launch_us - h200().pdl_overlap_us,
            "one word: %g us, the chain alone %g us", one.model_us, chain_us);
  cr_expect(own.model_us < one.model_us, "own words %g us, one word %g us", own.model_us, one.model_us);
}
