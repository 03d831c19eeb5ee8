// The sim's checks: each failure is AKX_ERROR_SIM_CHECK with a sentence naming the check,
// the kernel, the block, the thread and the source line; correct kernels pass them.
#include <stdio.h>
#include <stdlib.h>

#include "sim_probe.hpp"

using akx::FULL_MASK;

// The sentences name the thread that finds the error first, which depends on the order the
// threads run in: these tests run in thread order whatever AKX_SIM_SCHEDULE says.
static void in_order(void) { unsetenv("AKX_SIM_SCHEDULE"); }
TestSuite(sim_checks, .init = in_order);

// ---- shared-memory races --------------------------------------------------------------------

// Each thread writes its word, then reads its neighbour's ((t + 1) % n), ordered by `sync`:
// 0 nothing, 1 __syncthreads, 2 __syncwarp (orders lanes of a warp only); 3 a shuffle and 4 a
// ballot of the whole warp, which order nothing (CUDA promises no memory ordering for them).
// The words are written once before a barrier first, so that a read that comes before its
// neighbour's write is a race, not a read of uninitialised memory (initcheck).
static const int neighbour_store_line = __LINE__ + 6;
static const int neighbour_load_line = __LINE__ + 11;
AKX_GLOBAL void neighbour_probe(int sync, float *out) {
  AKX_SHARED(float, words, 1024);
  words.st(threadIdx.x, -1.0f);
  __syncthreads();
  words.st(threadIdx.x, float(threadIdx.x));
  if (sync == 1) __syncthreads();
  if (sync == 2) __syncwarp();
  if (sync == 3) (void)__shfl_sync(FULL_MASK, 0, 0);
  if (sync == 4) (void)__ballot_sync(FULL_MASK, 1);
  unsigned next = (threadIdx.x + 1) % blockDim.x;
  akx::gst(out + blockIdx.x * blockDim.x + threadIdx.x, words.ld(next));
}

static akx_status run_neighbour(sim_context &sim, int sync, unsigned threads) {
  float *out = sim.alloc<float>(2 * threads);
  akx_status s = AKX_LAUNCH("neighbour_probe", neighbour_probe, 2, threads, 0, NULL, sync, out);
  if (s == AKX_SUCCESS)
    for (unsigned t = 0; t < 2 * threads; ++t)
      cr_expect_eq(out[t], float((t % threads + 1) % threads));
  return s;
}

Test(sim_checks, race_without_barrier) {
  sim_context sim;
  char store_at[64], load_at[64];
  snprintf(store_at, sizeof store_at, "test_sim_checks.cpp:%d", neighbour_store_line);
  snprintf(load_at, sizeof load_at, "test_sim_checks.cpp:%d", neighbour_load_line);
  // Thread 63 completes the first barrier, runs first and reads word 0 before thread 0
  // writes it again: the write finds the read.
  expect_sim_check(run_neighbour(sim, 0, 64), "race", "neighbour_probe", "block (0,0,0)",
                   "thread (0,0,0)", store_at, load_at, "thread (63,0,0)");
}

Test(sim_checks, syncthreads_orders_the_block) {
  sim_context sim;
  expect_success(run_neighbour(sim, 1, 64));
  expect_success(run_neighbour(sim, 1, 1024));
}

Test(sim_checks, syncwarp_orders_one_warp) {
  sim_context sim;
  expect_success(run_neighbour(sim, 2, 32));
}

Test(sim_checks, syncwarp_does_not_order_two_warps) {
  sim_context sim;
  expect_sim_check(run_neighbour(sim, 2, 64), "race", "thread (31,0,0)", "thread (32,0,0)");
}

// Lane 31 completes the first barrier and reaches the shuffle (or ballot) first; lane 30
// completes it and goes on: it reads word 31, which lane 31 wrote before the collective.
// Only __syncwarp (syncwarp_orders_one_warp, the fixed twin) orders the two.
Test(sim_checks, shuffles_and_votes_do_not_order_shared_memory) {
  sim_context sim;
  expect_sim_check(run_neighbour(sim, 3, 32), "shared-memory race", "thread (30,0,0)",
                   "which thread (31,0,0) wrote", "no barrier or __syncwarp");
  expect_sim_check(run_neighbour(sim, 4, 32), "shared-memory race", "thread (30,0,0)",
                   "which thread (31,0,0) wrote");
}

// 1- and 2-byte elements: threads write neighbouring parts of shared words (no race), then
// read their neighbour's element, after a barrier or not (initialised before a first barrier).
template <class T>
AKX_GLOBAL void small_element_probe(int sync, T *out) {
  AKX_SHARED(T, elements, 256);
  elements.st(threadIdx.x, T(0));
  __syncthreads();
  elements.st(threadIdx.x, T(threadIdx.x));
  if (sync) __syncthreads();
  akx::gst(out + blockIdx.x * blockDim.x + threadIdx.x, elements.ld((threadIdx.x + 1) % blockDim.x));
}

Test(sim_checks, neighbouring_bytes_of_a_word_do_not_race) {
  sim_context sim;
  unsigned char *b = sim.alloc<unsigned char>(512);
  unsigned short *h = sim.alloc<unsigned short>(512);
  expect_success(AKX_LAUNCH("bytes", small_element_probe<unsigned char>, 2, 256, 0, NULL, 1, b));
  expect_success(AKX_LAUNCH("halves", small_element_probe<unsigned short>, 2, 256, 0, NULL, 1, h));
  for (int t = 0; t < 512; ++t) {
    cr_expect_eq(b[t], (t % 256 + 1) % 256);
    cr_expect_eq(h[t], (t % 256 + 1) % 256);
  }
  // Thread 63 completes the barrier and reads element 0 before thread 0 writes it again.
  expect_sim_check(
      AKX_LAUNCH("bytes", small_element_probe<unsigned char>, 1, 64, 0, NULL, 0, b), "race",
      "thread (0,0,0)", "this thread writes the byte at shared offset 0", "thread (63,0,0) read");
  expect_sim_check(
      AKX_LAUNCH("halves", small_element_probe<unsigned short>, 1, 64, 0, NULL, 0, h), "race",
      "thread (0,0,0)", "the byte at shared offset 0", "thread (63,0,0) read");
}

// Lanes 0..15 exchange words under __syncwarp(0xffff); with `cross`, lane 15 reads lane 16's
// word, which no __syncwarp of both orders (the words are initialised before a barrier).
AKX_GLOBAL void half_warp_probe(int cross, float *out) {
  AKX_SHARED(float, words, 32);
  unsigned lane = threadIdx.x;
  words.st(lane, 0.0f);
  __syncthreads();
  words.st(lane, 1.0f);
  if (lane < 16) {
    __syncwarp(0xffffu);
    unsigned other = cross ? lane + 1 : (lane + 1) % 16;
    akx::gst(out + lane, words.ld(other));
  }
}

Test(sim_checks, partial_mask_syncwarp_orders_its_lanes) {
  sim_context sim;
  float *out = sim.alloc<float>(32);
  expect_success(AKX_LAUNCH("half_warp_probe", half_warp_probe, 1, 32, 0, NULL, 0, out));
  expect_sim_check(AKX_LAUNCH("half_warp_probe", half_warp_probe, 1, 32, 0, NULL, 1, out), "race",
                   "thread (16,0,0)");
}

// A word written twice without an ordering collective: write after write.
AKX_GLOBAL void double_write_probe() {
  AKX_SHARED(int, flag, 1);
  flag.st(0, int(threadIdx.x));
}

Test(sim_checks, write_after_write) {
  sim_context sim;
  expect_sim_check(AKX_LAUNCH("double_write_probe", double_write_probe, 1, 2, 0, NULL), "race",
                   "thread (1,0,0)", "this thread writes", "which thread (0,0,0) wrote");
}

// Broadcast reads of a word written by thread 0 before a barrier, rewritten after another.
AKX_GLOBAL void broadcast_probe(float *out) {
  AKX_SHARED(float, total, 1);
  if (threadIdx.x == 0) total.st(0, 42.0f);
  __syncthreads();
  akx::gst(out + blockIdx.x * blockDim.x + threadIdx.x, total.ld(0));
  __syncthreads();
  if (threadIdx.x == 5) total.st(0, 0.0f);
}

Test(sim_checks, reads_then_write_across_barriers) {
  sim_context sim;
  float *out = sim.alloc<float>(3 * 128);
  expect_success(AKX_LAUNCH("broadcast_probe", broadcast_probe, 3, 128, 0, NULL, out));
  cr_expect_eq(out[3 * 128 - 1], 42.0f);
}

// ---- shared bounds and size ---------------------------------------------------------------------

static const int oob_line = __LINE__ + 5;
AKX_GLOBAL void shared_oob_probe(float *out) {
  AKX_SHARED(float, words, 32);
  words.st(threadIdx.x, 0.0f);
  __syncthreads();
  akx::gst(out + threadIdx.x, words.ld(threadIdx.x + 1));
}

Test(sim_checks, shared_out_of_bounds) {
  sim_context sim;
  float *out = sim.alloc<float>(32);
  char at[64];
  snprintf(at, sizeof at, "test_sim_checks.cpp:%d", oob_line);
  expect_sim_check(AKX_LAUNCH("shared_oob_probe", shared_oob_probe, 1, 32, 0, NULL, out),
                   "shared out of bounds", "thread (31,0,0)", at, "byte offset 128", "'words'",
                   "128 bytes");
}

AKX_GLOBAL void dynamic_probe(float *out, int reach) {
  AKX_SHARED_DYNAMIC(float, words);
  words.st(threadIdx.x, 1.0f);
  __syncthreads();
  akx::gst(out + blockIdx.x * blockDim.x + threadIdx.x, words.ld(threadIdx.x + reach));
}

Test(sim_checks, dynamic_shared_bounds) {
  sim_context sim;
  float *out = sim.alloc<float>(64);
  expect_success(AKX_LAUNCH("dynamic_probe", dynamic_probe, 1, 64, 64 * sizeof(float), NULL, out, 0));
  expect_sim_check(
      AKX_LAUNCH("dynamic_probe", dynamic_probe, 1, 64, 64 * sizeof(float), NULL, out, 1),
      "shared out of bounds", "thread (63,0,0)", "dynamic shared memory");
}

// Shared memory starts with what the SM's last block left (the sim's poison, 0xCD bytes):
// reading it before any thread of the block wrote it is a failure (initcheck), static and
// dynamic alike. `write`: each thread writes its word first (the fixed twin).
static const int poison_line = __LINE__ + 4;
AKX_GLOBAL void poison_probe(unsigned *out, int write) {
  AKX_SHARED(unsigned, words, 32);
  if (write) words.st(threadIdx.x, threadIdx.x);
  akx::gst(out + threadIdx.x, words.ld(threadIdx.x));
}

AKX_GLOBAL void dynamic_poison_probe(unsigned *out, int write) {
  AKX_SHARED_DYNAMIC(unsigned, words);
  if (write) words.st(threadIdx.x, threadIdx.x);
  akx::gst(out + blockIdx.x * blockDim.x + threadIdx.x, words.ld(threadIdx.x));
}

Test(sim_checks, shared_memory_starts_as_poison) {
  sim_context sim;
  unsigned *out = sim.alloc<unsigned>(64);
  char at[64];
  snprintf(at, sizeof at, "test_sim_checks.cpp:%d", poison_line);
  expect_sim_check(AKX_LAUNCH("poison_probe", poison_probe, 1, 32, 0, NULL, out, 0),
                   "shared initcheck", "thread (0,0,0)", at, "shared offset 0", "'words'",
                   "no thread of this block has written");
  expect_success(AKX_LAUNCH("poison_probe", poison_probe, 1, 32, 0, NULL, out, 1));
  cr_expect_eq(out[7], 7u);
  expect_sim_check(AKX_LAUNCH("dynamic_poison_probe", dynamic_poison_probe, 2, 32, 128, NULL,
                              out, 0),
                   "shared initcheck", "dynamic shared memory");
  expect_success(AKX_LAUNCH("dynamic_poison_probe", dynamic_poison_probe, 2, 32, 128, NULL, out, 1));
  cr_expect_eq(out[32 + 9], 9u);
}

// What an earlier block of the same slot wrote does not count for the next: block 0 writes,
// block 1 (admitted into the same slot: one block resident) only reads.
AKX_GLOBAL void earlier_block_probe(unsigned *out, int every_block_writes) {
  AKX_SHARED(unsigned, words, 32);
  if (blockIdx.x == 0 || every_block_writes) words.st(threadIdx.x, threadIdx.x);
  akx::gst(out + blockIdx.x * blockDim.x + threadIdx.x, words.ld(threadIdx.x));
}

Test(sim_checks, initcheck_is_per_block) {
  setenv("AKX_SIM_RESIDENT", "1", 1);
  sim_context sim;
  unsigned *out = sim.alloc<unsigned>(64);
  expect_sim_check(AKX_LAUNCH("earlier_block_probe", earlier_block_probe, 2, 32, 0, NULL, out, 0),
                   "shared initcheck", "block (1,0,0)", "thread (0,0,0)");
  expect_success(AKX_LAUNCH("earlier_block_probe", earlier_block_probe, 2, 32, 0, NULL, out, 1));
  unsetenv("AKX_SIM_RESIDENT");
}

// Bytes written one by one, read as one 8-byte vector: with `skip`, thread 0 leaves byte 7
// of each lane's 8 unwritten (a word split into byte records is checked byte by byte).
AKX_GLOBAL void byte_initcheck_probe(unsigned long long *out, int skip) {
  AKX_SHARED(unsigned char, bytes, 8 * 32);
  if (threadIdx.x == 0)
    for (int i = 0; i < 8 * 32; ++i)
      if (!(skip && i % 8 == 7)) bytes.st(i, (unsigned char)i);
  __syncthreads();
  akx::vec<unsigned char, 8> v = bytes.ld_vec<8>(8 * threadIdx.x);
  unsigned long long w;
  memcpy(&w, &v, sizeof w);
  akx::gst(out + threadIdx.x, w);
}

Test(sim_checks, initcheck_of_bytes) {
  sim_context sim;
  unsigned long long *out = sim.alloc<unsigned long long>(32);
  expect_success(AKX_LAUNCH("byte_initcheck_probe", byte_initcheck_probe, 1, 32, 0, NULL, out, 0));
  cr_expect_eq(out[1], 0x0f0e0d0c0b0a0908ull);
  // Thread 31 completes the barrier and reads first.
  expect_sim_check(AKX_LAUNCH("byte_initcheck_probe", byte_initcheck_probe, 1, 32, 0, NULL, out, 1),
                   "shared initcheck", "thread (31,0,0)", "the byte at shared offset 255");
}

// ---- shared alignment and vector accessors --------------------------------------------------

// Lane i stores and loads 4 floats at element 4 * i + shift: one 16-byte access each, which
// must start at a multiple of 16 bytes.
static const int vec_store_line = __LINE__ + 4;
AKX_GLOBAL void shared_vec_probe(float *out, int shift) {
  AKX_SHARED(float, tile, 4 * 32 + 4);
  akx::vec<float, 4> v{{1.0f, 2.0f, 3.0f, float(threadIdx.x)}};
  tile.st_vec<4>(4 * threadIdx.x + shift, v);
  __syncwarp();
  v = tile.ld_vec<4>(4 * ((threadIdx.x + 1) % 32) + shift);
  akx::gst(out + threadIdx.x, v.v[0] + v.v[1] + v.v[2] + v.v[3]);
}

Test(sim_checks, misaligned_shared_vector) {
  sim_context sim;
  float *out = sim.alloc<float>(32);
  expect_success(AKX_LAUNCH("shared_vec_probe", shared_vec_probe, 1, 32, 0, NULL, out, 0));
  cr_expect_eq(out[3], 10.0f);
  cr_expect_eq(out[31], 6.0f);
  char at[64];
  snprintf(at, sizeof at, "test_sim_checks.cpp:%d", vec_store_line);
  expect_sim_check(AKX_LAUNCH("shared_vec_probe", shared_vec_probe, 1, 32, 0, NULL, out, 2),
                   "misaligned shared access", "thread (0,0,0)", at, "16-byte store",
                   "byte offset 8 of 'tile'", "not aligned to 16 bytes");
}

// A float at a byte offset that is not a multiple of 4 (an smem<float> made from a byte
// tile at offset `shift`): a GPU faults on it.
AKX_GLOBAL void shared_scalar_align_probe(float *out, int shift) {
  AKX_SHARED(unsigned char, raw, 4 * 33);
  const akx::smem<float> floats{reinterpret_cast<float *>(raw.p + shift), raw.bytes - 4};
  floats.st(threadIdx.x, 1.0f);
  __syncwarp();
  akx::gst(out + threadIdx.x, floats.ld(threadIdx.x));
}

Test(sim_checks, misaligned_shared_scalar) {
  sim_context sim;
  float *out = sim.alloc<float>(32);
  expect_success(AKX_LAUNCH("shared_scalar_align_probe", shared_scalar_align_probe, 1, 32, 0,
                            NULL, out, 4));
  cr_expect_eq(out[5], 1.0f);
  expect_sim_check(AKX_LAUNCH("shared_scalar_align_probe", shared_scalar_align_probe, 1, 32, 0,
                              NULL, out, 2),
                   "misaligned shared access", "4-byte store", "not aligned to 4 bytes");
}

// Counters: a warp reading 32 consecutive float4 positions with ld_vec<4> makes one 16-byte
// request (4 quarter-warp phases: 4 wavefronts, 4 ideal); the same data as 4 scalar loads
// per lane is 4 requests.
AKX_GLOBAL void shared_vec_count_probe(float *out, int vector) {
  AKX_SHARED(float, tile, 4 * 32);
  for (int k = 0; k < 4; ++k) tile.st(4 * threadIdx.x + k, float(k));
  __syncwarp();
  float sum = 0.0f;
  if (vector) {
    akx::vec<float, 4> v = tile.ld_vec<4>(4 * threadIdx.x);
    sum = v.v[0] + v.v[1] + v.v[2] + v.v[3];
  } else {
    for (int k = 0; k < 4; ++k) sum += tile.ld(4 * threadIdx.x + k);
  }
  akx::gst(out + threadIdx.x, sum);
}

Test(sim_checks, shared_vector_is_one_request) {
  sim_context sim;
  float *out = sim.alloc<float>(32);
  expect_success(AKX_LAUNCH("vec_loads", shared_vec_count_probe, 1, 32, 0, NULL, out, 1));
  cr_expect_eq(out[9], 6.0f);
  expect_success(AKX_LAUNCH("scalar_loads", shared_vec_count_probe, 1, 32, 0, NULL, out, 0));
  cr_expect_eq(out[9], 6.0f);
  akx_sim_traffic v = sim.kernel("vec_loads").shared_load;
  akx_sim_traffic s = sim.kernel("scalar_loads").shared_load;
  cr_expect_eq(v.requests, 1u, "ld_vec<4>: %llu requests", (unsigned long long)v.requests);
  cr_expect_eq(v.units, 4u, "ld_vec<4>: %llu wavefronts", (unsigned long long)v.units);
  cr_expect_eq(v.ideal, 4u, "ld_vec<4>: %llu ideal", (unsigned long long)v.ideal);
  cr_expect_eq(v.bytes, 512u);
  cr_expect_eq(s.requests, 4u, "4 scalar loads: %llu requests", (unsigned long long)s.requests);
  cr_expect_eq(s.bytes, 512u);
}

AKX_GLOBAL void huge_shared_probe() {
  AKX_SHARED(float, big, 60000);  // 240000 bytes: more than the h200 profile's 232448
  big.st(threadIdx.x, 0.0f);
}

Test(sim_checks, static_shared_too_large) {
  sim_context sim;
  expect_sim_check(AKX_LAUNCH("huge_shared_probe", huge_shared_probe, 1, 32, 0, NULL),
                   "shared memory size", "'big'", "49152");
}

// ---- barriers and collectives ---------------------------------------------------------------

AKX_GLOBAL void divergent_barrier_probe() {
  if (threadIdx.x < 16)
    __syncthreads();
  else
    __syncthreads();
}

Test(sim_checks, divergent_barrier) {
  sim_context sim;
  expect_sim_check(AKX_LAUNCH("divergent_barrier_probe", divergent_barrier_probe, 1, 32, 0, NULL),
                   "divergent barrier", "thread (16,0,0)", "__syncthreads");
}

// Lane 0 waits at the block barrier while its warp's other lanes wait for it at __syncwarp.
AKX_GLOBAL void barrier_vs_collective_probe() {
  if (threadIdx.x == 0)
    __syncthreads();
  else
    __syncwarp();
}

Test(sim_checks, collective_waits_for_a_lane_at_a_barrier) {
  sim_context sim;
  expect_sim_check(
      AKX_LAUNCH("barrier_vs_collective_probe", barrier_vs_collective_probe, 1, 32, 0, NULL),
      "deadlock", "thread (1,0,0)", "__syncwarp", "lane 0", "__syncthreads");
}

AKX_GLOBAL void returned_lane_probe() {
  if (threadIdx.x == 5) return;
  __syncwarp();
}

Test(sim_checks, collective_waits_for_a_returned_lane) {
  sim_context sim;
  expect_sim_check(AKX_LAUNCH("returned_lane_probe", returned_lane_probe, 1, 32, 0, NULL),
                   "deadlock", "thread (5,0,0)", "returned", "__syncwarp");
}

AKX_GLOBAL void divergent_collective_probe(int *out) {
  int v = int(threadIdx.x);
  if (threadIdx.x < 16)
    v = __shfl_down_sync(FULL_MASK, v, 1);
  else
    v = __shfl_xor_sync(FULL_MASK, v, 1);
  akx::gst(out + threadIdx.x, v);
}

Test(sim_checks, divergent_collective) {
  sim_context sim;
  int *out = sim.alloc<int>(32);
  expect_sim_check(
      AKX_LAUNCH("divergent_collective_probe", divergent_collective_probe, 1, 32, 0, NULL, out),
      "divergent warp collective", "thread (16,0,0)", "__shfl_xor_sync", "__shfl_down_sync");
}

static const int missing_lane_line = __LINE__ + 3;
AKX_GLOBAL void missing_lane_probe(int *out) {
  int v = int(threadIdx.x);
  akx::gst(out + threadIdx.x, __shfl_sync(0xfffffffeu, v, 1));
}

Test(sim_checks, shuffle_without_the_calling_lane) {
  sim_context sim;
  int *out = sim.alloc<int>(32);
  char at[64];
  snprintf(at, sizeof at, "test_sim_checks.cpp:%d", missing_lane_line);
  expect_sim_check(AKX_LAUNCH("missing_lane_probe", missing_lane_probe, 1, 32, 0, NULL, out),
                   "warp collective mask", "thread (0,0,0)", at, "0xfffffffe",
                   "does not include the calling lane 0");
}

AKX_GLOBAL void idx_outside_mask_probe(int *out) {
  if (threadIdx.x >= 16) return;
  akx::gst(out + threadIdx.x, __shfl_sync(0xffffu, int(threadIdx.x), 20));
}

Test(sim_checks, shuffle_reading_a_lane_outside_the_mask) {
  sim_context sim;
  int *out = sim.alloc<int>(32);
  expect_sim_check(AKX_LAUNCH("idx_outside_mask_probe", idx_outside_mask_probe, 1, 32, 0, NULL, out),
                   "warp collective mask", "reads lane 20", "not in the mask");
}

AKX_GLOBAL void missing_lanes_probe() { __syncwarp(); }

Test(sim_checks, mask_naming_lanes_that_do_not_exist) {
  sim_context sim;
  expect_sim_check(AKX_LAUNCH("missing_lanes_probe", missing_lanes_probe, 1, 48, 0, NULL),
                   "warp collective mask", "thread (32,0,0)", "do not exist");
}

// ---- global memory ----------------------------------------------------------------------------

static const int misaligned_line = __LINE__ + 2;
AKX_GLOBAL void vector_load_probe(const float *x, float *out, int offset) {
  akx::vec<float, 4> v = akx::gld_vec<float, 4>(x + 4 * threadIdx.x + offset);
  akx::gst(out + threadIdx.x, v.v[0] + v.v[1] + v.v[2] + v.v[3]);
}

Test(sim_checks, misaligned_vector_load) {
  sim_context sim;
  float *x = sim.alloc<float>(4 * 32 + 4);
  float *out = sim.alloc<float>(32);
  expect_success(AKX_LAUNCH("vector_load_probe", vector_load_probe, 1, 32, 0, NULL,
                            (const float *)x, out, 0));
  char at[64];
  snprintf(at, sizeof at, "test_sim_checks.cpp:%d", misaligned_line);
  expect_sim_check(AKX_LAUNCH("vector_load_probe", vector_load_probe, 1, 32, 0, NULL,
                              (const float *)x, out, 1),
                   "misaligned global access", "thread (0,0,0)", at, "16-byte load",
                   "not aligned to 16 bytes");
}

// A 16-byte struct aligned to 8 (the library's complex128) may start 8 bytes into a
// 16-byte boundary: it is not a vector.
struct two_doubles {
  double re, im;
};
AKX_GLOBAL void two_doubles_probe(const two_doubles *x, double *out) {
  two_doubles v = akx::gld(x + threadIdx.x);
  akx::gst(out + threadIdx.x, v.re + v.im);
}

Test(sim_checks, structs_need_only_their_own_alignment) {
  sim_context sim;
  char *bytes = sim.alloc<char>(16 * 33);
  double *out = sim.alloc<double>(32);
  expect_success(AKX_LAUNCH("two_doubles_probe", two_doubles_probe, 1, 32, 0, NULL,
                            (const two_doubles *)(bytes + 8), out));
  expect_sim_check(AKX_LAUNCH("two_doubles_probe", two_doubles_probe, 1, 32, 0, NULL,
                              (const two_doubles *)(bytes + 4), out),
                   "misaligned global access", "16-byte load", "not aligned to 8 bytes");
}

AKX_GLOBAL void global_read_probe(const float *x, float *out, int n) {
  akx::gst(out + threadIdx.x, akx::gld(x + threadIdx.x + n - int(blockDim.x) + 1));
}

Test(sim_checks, global_access_past_an_allocation) {
  sim_context sim;
  float *x = sim.alloc<float>(100);
  float *out = sim.alloc<float>(32);
  expect_sim_check(AKX_LAUNCH("global_read_probe", global_read_probe, 1, 32, 0, NULL,
                              (const float *)x, out, 100),
                   "global out of bounds", "thread (31,0,0)", "4-byte load");
}

Test(sim_checks, global_access_outside_every_allocation) {
  sim_context sim;
  float host[64] = {0};
  float *out = sim.alloc<float>(32);
  expect_sim_check(AKX_LAUNCH("global_read_probe", global_read_probe, 1, 32, 0, NULL,
                              (const float *)host, out, 32),
                   "global out of bounds", "thread (0,0,0)", "outside every akx_malloc allocation");
}

// ---- launches ---------------------------------------------------------------------------------

AKX_GLOBAL void empty_probe() {}

Test(sim_checks, invalid_launch_configurations) {
  sim_context sim;
  cr_expect_eq(AKX_LAUNCH("empty_probe", empty_probe, 1, 2048, 0, NULL), AKX_ERROR_INVALID_ARGUMENT);
  cr_expect(strstr(akx_last_error(), "block (2048,1,1)") != NULL, "%s", akx_last_error());
  cr_expect_eq(AKX_LAUNCH("empty_probe", empty_probe, 0, 32, 0, NULL), AKX_ERROR_INVALID_ARGUMENT);
  cr_expect(strstr(akx_last_error(), "grid (0,1,1)") != NULL, "%s", akx_last_error());
  cr_expect_eq(AKX_LAUNCH("empty_probe", empty_probe, 1, 32, 300000, NULL),
               AKX_ERROR_INVALID_ARGUMENT);
  cr_expect(strstr(akx_last_error(), "300000 bytes of dynamic shared memory") != NULL, "%s",
            akx_last_error());
  cr_expect_eq(AKX_LAUNCH("empty_probe", empty_probe, dim3(2, 2, 2), dim3(8, 8, 16), 0, NULL),
               AKX_SUCCESS, "%s", akx_last_error());
}

// After a failed launch the next one runs normally (fibers and shadow start afresh).
Test(sim_checks, launch_after_a_failure) {
  sim_context sim;
  expect_sim_check(run_neighbour(sim, 0, 64), "race");
  expect_success(run_neighbour(sim, 1, 64));
  float *out = sim.alloc<float>(3 * 64);
  expect_success(AKX_LAUNCH("dynamic_probe", dynamic_probe, 3, 64, 256, NULL, out, 0));
}

Test(sim_checks, launch_without_a_current_context) {
  cr_expect_eq(AKX_LAUNCH("empty_probe", empty_probe, 1, 32, 0, NULL), AKX_ERROR_INTERNAL);
  cr_expect(strstr(akx_last_error(), "no sim context") != NULL, "%s", akx_last_error());
}

// ---- programmatic dependent launch ----------------------------------------------------------

// Copies in to out; `wait`: 0 never waits for the kernel before it, 1 waits first, 2 waits
// after its load (a misplaced wait: the load may read what that kernel has not written yet).
static const int early_load_line = __LINE__ + 5;
AKX_GLOBAL void dependent_probe(int wait, const float *in, float *out) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (wait == 1) akx::grid_dependency_wait();
  akx::grid_dependents_launch();
  const float v = akx::gld(in + i);
  if (wait == 2) akx::grid_dependency_wait();
  akx::gst(out + i, v);
}

Test(sim_checks, dependent_launch_accesses_global_memory_only_after_its_wait) {
  sim_context sim;
  float *in = sim.alloc<float>(128), *out = sim.alloc<float>(128);
  // A plain launch: the kernel before it has ended, nothing to wait for.
  expect_success(AKX_LAUNCH("dependent_probe", dependent_probe, 2, 64, 0, NULL, 0, in, out));
  {
    akx::sim::scoped_pdl pdl(sim.ctx, true);
    expect_success(AKX_LAUNCH("dependent_probe", dependent_probe, 2, 64, 0, NULL, 1, in, out));
    for (int wait = 0; wait <= 2; wait += 2) {
      expect_sim_check(AKX_LAUNCH("dependent_probe", dependent_probe, 2, 64, 0, NULL, wait, in, out),
                       "global access before the grid dependency wait");
      char line[32];
      snprintf(line, sizeof line, ":%d", early_load_line);
      cr_expect(strstr(akx_last_error(), line) != NULL, "wait %d: the report names line %d: %s", wait,
                early_load_line, akx_last_error());
    }
  }
  expect_success(AKX_LAUNCH("dependent_probe", dependent_probe, 2, 64, 0, NULL, 0, in, out));
  // Counted: one launch of the four that ran to their end was PDL, every block of each waited
  // (or did not) and let the next kernel launch.
  akx_sim_kernel_counters k;
  int32_t count = 0;
  cr_assert_eq(akx_sim_counters_get(sim.ctx, &k, NULL, 0, &count), AKX_SUCCESS);
  cr_expect_geq(k.pdl_launches, 1u, "%llu PDL launches", (unsigned long long)k.pdl_launches);
  cr_expect_geq(k.dependency_waits, 2u, "%llu blocks waited", (unsigned long long)k.dependency_waits);
}
