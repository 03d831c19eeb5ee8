/* akx_mapreduce against the host reference (tests/support/reference.c): every dtype, op and
 * map; sizes 0..300, around one tile, one pass and two passes, 10^6 and 10^7; host and
 * device results; init and fold; empty arrays; NaN; explicit accumulators; offset, strided,
 * negative-stride and broadcast views; float16 sums past 65504; the workspace.
 *
 * The whole file runs again under AKX_SIM_SCHEDULE=random:12345 (tests/CMakeLists.txt). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "reference.h"
#include "tuning.h"

static const akx_op k_ops[] = {AKX_OP_ADD, AKX_OP_MUL, AKX_OP_MIN, AKX_OP_MAX,
                               AKX_OP_AND, AKX_OP_OR,  AKX_OP_XOR};
static const akx_map k_maps[] = {AKX_MAP_IDENTITY, AKX_MAP_ABS, AKX_MAP_SQUARE, AKX_MAP_NONZERO};
#define NOPS 7
#define NMAPS 4
#define NDTYPES 15
#define MSG 2048

/* tile = block_size * items_per_thread with these explicit options: 4096. One pass: the
 * first pass's blocks (target_blocks) each take one tile; beyond it every block loops over
 * several tiles. The boundary and workspace tests take PASS_BLOCKS blocks (PASS: 64 tiles,
 * 262144 elements), not the tuning table's (528 on the h200 profile, 256 on the rtx5080's: 2.2
 * million elements, whose sweeps took a third of the file's time on the sim): the grid is
 * min(tiles, target_blocks) whatever the number, and 64 partials still finish across the last
 * block's warps (more partials than its threads: small_tiles_many_blocks_float64_add). The
 * tuning table's own grid: DEFAULT_PASS (float16_sum_past_65504) and the large_* sizes (10^7:
 * several tiles a block). */
#define TILE 4096
#define PASS_BLOCKS 64
#define PASS ((int64_t)TILE * PASS_BLOCKS)
static int64_t default_pass_size(void) {
  static int64_t pass;
  if (!pass) {
    akx_context *ctx = tfx_open();
    akx_context_info_t info;
    cr_assert_eq(akx_context_info(ctx, &info), AKX_SUCCESS);
    pass = (int64_t)TILE *
           akx__tuning_lookup(AKX__TUNE_REDUCE_WHOLE, info.cc_major, info.cc_minor, 4, NULL)
               .target_blocks;
    tfx_close(ctx);
  }
  return pass;
}
#define DEFAULT_PASS default_pass_size()

static tfx_case tuned(akx_map m, akx_op op) {
  tfx_case c = tfx_case_make(m, op);
  c.block_size = 256;
  c.items_per_thread = 16;
  c.target_blocks = PASS_BLOCKS;
  return c;
}

static int supported(akx_dtype t, akx_map m, akx_op op) {
  return (int)ref_resolve_acc(t, m, op, AKX_DTYPE_AUTO) != (int)REF_UNSUPPORTED;
}

/* ---- every dtype x op x map (AUTO accumulator), a few sizes, host and device ------------- */

/* The largest, 3 * TILE + 5, is three tiles and a part of the default tuning for every dtype
 * (its tiles are at most 256 threads x 16 elements): several blocks and their finish (was
 * 70001, 86% of the elements for no other path). */
static void all_combos(akx_dtype t) {
  static const int64_t sizes[] = {0,   1,   2,   3,    31,   32,   33,   100,
                                  255, 256, 257, 300, 1000, 4095, 4097, 3 * TILE + 5};
  akx_context *ctx = tfx_open();
  tfx_tally tally = {0};
  char msg[MSG];
  for (int o = 0; o < NOPS; o++)
    for (int m = 0; m < NMAPS; m++) {
      if (!supported(t, k_maps[m], k_ops[o])) { /* refused: UNSUPPORTED, nothing written */
        for (int w = 0; w < 2; w++) {
          tfx_case c = tfx_case_make(k_maps[m], k_ops[o]);
          c.where = w ? AKX_DEVICE : AKX_HOST;
          tfx_note(&tally, tfx_vector_case(ctx, t, 5, &c, 1, 0, msg, sizeof msg), "%s", msg);
        }
        continue;
      }
      for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int w = 0; w < 2; w++) {
          tfx_case c = tfx_case_make(k_maps[m], k_ops[o]);
          c.where = w ? AKX_DEVICE : AKX_HOST;
          uint64_t seed = 1000u * (uint64_t)t + 100u * (uint64_t)o + 10u * (uint64_t)m + s;
          tfx_note(&tally, tfx_vector_case(ctx, t, sizes[s], &c, seed, 0, msg, sizeof msg), "%s",
                   msg);
        }
    }
  tfx_done(&tally);
  tfx_close(ctx);
}

Test(mapreduce, small_combos_bool) { all_combos(AKX_BOOL); }
Test(mapreduce, small_combos_int8) { all_combos(AKX_INT8); }
Test(mapreduce, small_combos_uint8) { all_combos(AKX_UINT8); }
Test(mapreduce, small_combos_int16) { all_combos(AKX_INT16); }
Test(mapreduce, small_combos_uint16) { all_combos(AKX_UINT16); }
Test(mapreduce, small_combos_int32) { all_combos(AKX_INT32); }
Test(mapreduce, small_combos_uint32) { all_combos(AKX_UINT32); }
Test(mapreduce, small_combos_int64) { all_combos(AKX_INT64); }
Test(mapreduce, small_combos_uint64) { all_combos(AKX_UINT64); }
Test(mapreduce, small_combos_float16) { all_combos(AKX_FLOAT16); }
Test(mapreduce, small_combos_bfloat16) { all_combos(AKX_BFLOAT16); }
Test(mapreduce, small_combos_float32) { all_combos(AKX_FLOAT32); }
Test(mapreduce, small_combos_float64) { all_combos(AKX_FLOAT64); }
Test(mapreduce, small_combos_complex64) { all_combos(AKX_COMPLEX64); }
Test(mapreduce, small_combos_complex128) { all_combos(AKX_COMPLEX128); }

/* The supported/unsupported split itself, on the documented examples. */
Test(mapreduce, small_unsupported_pairs) {
  akx_context *ctx = tfx_open();
  tfx_tally tally = {0};
  char msg[MSG];
  struct { akx_dtype t; akx_map m; akx_op op; } bad[] = {
      {AKX_FLOAT32, AKX_MAP_IDENTITY, AKX_OP_AND},  {AKX_FLOAT64, AKX_MAP_IDENTITY, AKX_OP_XOR},
      {AKX_FLOAT16, AKX_MAP_ABS, AKX_OP_OR},        {AKX_COMPLEX64, AKX_MAP_IDENTITY, AKX_OP_MIN},
      {AKX_COMPLEX128, AKX_MAP_IDENTITY, AKX_OP_MAX}, {AKX_COMPLEX64, AKX_MAP_IDENTITY, AKX_OP_AND},
      {AKX_COMPLEX64, AKX_MAP_SQUARE, AKX_OP_XOR},  {AKX_BFLOAT16, AKX_MAP_SQUARE, AKX_OP_AND},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    cr_assert(!supported(bad[i].t, bad[i].m, bad[i].op), "the reference agrees");
    for (int w = 0; w < 2; w++) {
      tfx_case c = tfx_case_make(bad[i].m, bad[i].op);
      c.where = w ? AKX_DEVICE : AKX_HOST;
      tfx_note(&tally, tfx_vector_case(ctx, bad[i].t, 10, &c, 3, 0, msg, sizeof msg), "%s", msg);
    }
  }
  /* and their neighbours that are fine */
  cr_assert(supported(AKX_COMPLEX64, AKX_MAP_ABS, AKX_OP_MIN));
  cr_assert(supported(AKX_FLOAT32, AKX_MAP_NONZERO, AKX_OP_AND));
  cr_assert(supported(AKX_BOOL, AKX_MAP_IDENTITY, AKX_OP_ADD));
  tfx_done(&tally);
  tfx_close(ctx);
}

/* ---- every size 0..300 ------------------------------------------------------------------- */

static void every_size(akx_dtype t, akx_map m, akx_op op, akx_where where) {
  akx_context *ctx = tfx_open();
  tfx_tally tally = {0};
  char msg[MSG];
  for (int64_t n = 0; n <= 300; n++) {
    tfx_case c = tfx_case_make(m, op);
    c.where = where;
    tfx_note(&tally, tfx_vector_case(ctx, t, n, &c, 7000u + (uint64_t)n, 0, msg, sizeof msg),
             "%s", msg);
  }
  tfx_done(&tally);
  tfx_close(ctx);
}

Test(mapreduce, small_every_size_float32_add) {
  every_size(AKX_FLOAT32, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_HOST);
}
Test(mapreduce, small_every_size_float32_add_device) {
  every_size(AKX_FLOAT32, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_DEVICE);
}
Test(mapreduce, small_every_size_float64_square_add) {
  every_size(AKX_FLOAT64, AKX_MAP_SQUARE, AKX_OP_ADD, AKX_HOST);
}
Test(mapreduce, small_every_size_int32_add) {
  every_size(AKX_INT32, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_HOST);
}
Test(mapreduce, small_every_size_int8_add_device) {
  every_size(AKX_INT8, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_DEVICE);
}
Test(mapreduce, small_every_size_uint8_mul) {
  every_size(AKX_UINT8, AKX_MAP_IDENTITY, AKX_OP_MUL, AKX_HOST);
}
Test(mapreduce, small_every_size_float16_add) {
  every_size(AKX_FLOAT16, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_HOST);
}
Test(mapreduce, small_every_size_bfloat16_max) {
  every_size(AKX_BFLOAT16, AKX_MAP_IDENTITY, AKX_OP_MAX, AKX_DEVICE);
}
Test(mapreduce, small_every_size_float64_abs_min) {
  every_size(AKX_FLOAT64, AKX_MAP_ABS, AKX_OP_MIN, AKX_HOST);
}
Test(mapreduce, small_every_size_int64_xor) {
  every_size(AKX_INT64, AKX_MAP_IDENTITY, AKX_OP_XOR, AKX_HOST);
}
Test(mapreduce, small_every_size_uint16_and) {
  every_size(AKX_UINT16, AKX_MAP_IDENTITY, AKX_OP_AND, AKX_DEVICE);
}
Test(mapreduce, small_every_size_int16_or) {
  every_size(AKX_INT16, AKX_MAP_IDENTITY, AKX_OP_OR, AKX_HOST);
}
Test(mapreduce, small_every_size_bool_count) {
  every_size(AKX_BOOL, AKX_MAP_NONZERO, AKX_OP_ADD, AKX_HOST);
}
Test(mapreduce, small_every_size_bool_all) {
  every_size(AKX_BOOL, AKX_MAP_IDENTITY, AKX_OP_AND, AKX_DEVICE);
}
Test(mapreduce, small_every_size_complex64_add) {
  every_size(AKX_COMPLEX64, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_HOST);
}
Test(mapreduce, small_every_size_complex128_mul) {
  every_size(AKX_COMPLEX128, AKX_MAP_IDENTITY, AKX_OP_MUL, AKX_DEVICE);
}
Test(mapreduce, small_every_size_float32_any) {
  every_size(AKX_FLOAT32, AKX_MAP_NONZERO, AKX_OP_OR, AKX_HOST);
}
Test(mapreduce, small_every_size_uint64_max) {
  every_size(AKX_UINT64, AKX_MAP_IDENTITY, AKX_OP_MAX, AKX_HOST);
}

/* every size 0..300 for every op a dtype takes (IDENTITY map), host results */
static void every_size_all_ops(akx_dtype t) {
  akx_context *ctx = tfx_open();
  tfx_tally tally = {0};
  char msg[MSG];
  for (int o = 0; o < NOPS; o++) {
    if (!supported(t, AKX_MAP_IDENTITY, k_ops[o])) continue;
    for (int64_t n = 0; n <= 300; n++) {
      tfx_case c = tfx_case_make(AKX_MAP_IDENTITY, k_ops[o]);
      tfx_note(&tally,
               tfx_vector_case(ctx, t, n, &c, 9000u + 301u * (uint64_t)o + (uint64_t)n, 0, msg,
                               sizeof msg),
               "%s", msg);
    }
  }
  tfx_done(&tally);
  tfx_close(ctx);
}

Test(mapreduce, every_size_all_ops_bool) { every_size_all_ops(AKX_BOOL); }
Test(mapreduce, every_size_all_ops_int8) { every_size_all_ops(AKX_INT8); }
Test(mapreduce, every_size_all_ops_uint8) { every_size_all_ops(AKX_UINT8); }
Test(mapreduce, every_size_all_ops_int16) { every_size_all_ops(AKX_INT16); }
Test(mapreduce, every_size_all_ops_uint16) { every_size_all_ops(AKX_UINT16); }
Test(mapreduce, every_size_all_ops_int32) { every_size_all_ops(AKX_INT32); }
Test(mapreduce, every_size_all_ops_uint32) { every_size_all_ops(AKX_UINT32); }
Test(mapreduce, every_size_all_ops_int64) { every_size_all_ops(AKX_INT64); }
Test(mapreduce, every_size_all_ops_uint64) { every_size_all_ops(AKX_UINT64); }
Test(mapreduce, every_size_all_ops_float16) { every_size_all_ops(AKX_FLOAT16); }
Test(mapreduce, every_size_all_ops_bfloat16) { every_size_all_ops(AKX_BFLOAT16); }
Test(mapreduce, every_size_all_ops_float32) { every_size_all_ops(AKX_FLOAT32); }
Test(mapreduce, every_size_all_ops_float64) { every_size_all_ops(AKX_FLOAT64); }
Test(mapreduce, every_size_all_ops_complex64) { every_size_all_ops(AKX_COMPLEX64); }
Test(mapreduce, every_size_all_ops_complex128) { every_size_all_ops(AKX_COMPLEX128); }

/* ---- tile, pass and grid boundaries -------------------------------------------------------- */

static void sizes_case(akx_dtype t, akx_map m, akx_op op, const int64_t *sizes, int count,
                       int32_t bs, int32_t ipt, int32_t tb, int both_where) {
  akx_context *ctx = tfx_open();
  tfx_tally tally = {0};
  char msg[MSG];
  for (int i = 0; i < count; i++)
    for (int w = 0; w < (both_where ? 2 : 1); w++) {
      tfx_case c = tfx_case_make(m, op);
      c.block_size = bs;
      c.items_per_thread = ipt;
      c.target_blocks = tb;
      c.where = w ? AKX_DEVICE : AKX_HOST;
      tfx_note(&tally,
               tfx_vector_case(ctx, t, sizes[i], &c, 500u + (uint64_t)i, 0, msg, sizeof msg),
               "%s", msg);
    }
  tfx_done(&tally);
  tfx_close(ctx);
}

#define K_TILE_SIZES                                                                       \
  {TILE - 1, TILE,         TILE + 1,         2 * TILE - 1, 2 * TILE,          2 * TILE + 1,     \
   PASS - TILE + 1, PASS - 1, PASS, PASS + 1, 2 * PASS - 1, 2 * PASS, 2 * PASS + 1,            \
   2 * PASS + TILE + 7}
#define NTILE 14
#define K_TILE_SIZES_SHORT {TILE - 1, TILE, TILE + 1, PASS - 1, PASS + 1}

Test(mapreduce, tile_pass_boundaries_float32_add, .timeout = 300) {
  const int64_t k_tile_sizes[] = K_TILE_SIZES;
  sizes_case(AKX_FLOAT32, AKX_MAP_IDENTITY, AKX_OP_ADD, k_tile_sizes, NTILE, 256, 16, PASS_BLOCKS, 1);
}
Test(mapreduce, tile_pass_boundaries_int32_add, .timeout = 300) {
  const int64_t k_tile_sizes[] = K_TILE_SIZES;
  sizes_case(AKX_INT32, AKX_MAP_IDENTITY, AKX_OP_ADD, k_tile_sizes, NTILE, 256, 16, PASS_BLOCKS, 0);
}
Test(mapreduce, tile_pass_boundaries_float64_max, .timeout = 300) {
  const int64_t k_tile_sizes_short[] = K_TILE_SIZES_SHORT;
  sizes_case(AKX_FLOAT64, AKX_MAP_IDENTITY, AKX_OP_MAX, k_tile_sizes_short, 5, 256, 16, PASS_BLOCKS, 0);
}
Test(mapreduce, tile_pass_boundaries_int8_add, .timeout = 300) {
  const int64_t k_tile_sizes_short[] = K_TILE_SIZES_SHORT;
  sizes_case(AKX_INT8, AKX_MAP_IDENTITY, AKX_OP_ADD, k_tile_sizes_short, 5, 256, 16, PASS_BLOCKS, 0);
}
Test(mapreduce, tile_pass_boundaries_float16_add, .timeout = 300) {
  const int64_t k_tile_sizes_short[] = K_TILE_SIZES_SHORT;
  sizes_case(AKX_FLOAT16, AKX_MAP_IDENTITY, AKX_OP_ADD, k_tile_sizes_short, 5, 256, 16, PASS_BLOCKS, 1);
}
Test(mapreduce, tile_pass_boundaries_complex128_add, .timeout = 300) {
  const int64_t k_tile_sizes_short[] = K_TILE_SIZES_SHORT;
  sizes_case(AKX_COMPLEX128, AKX_MAP_IDENTITY, AKX_OP_ADD, k_tile_sizes_short, 5, 256, 16, PASS_BLOCKS, 0);
}
Test(mapreduce, tile_pass_boundaries_uint8_xor, .timeout = 300) {
  const int64_t k_tile_sizes_short[] = K_TILE_SIZES_SHORT;
  sizes_case(AKX_UINT8, AKX_MAP_IDENTITY, AKX_OP_XOR, k_tile_sizes_short, 5, 256, 16, PASS_BLOCKS, 0);
}

/* Small tiles and few blocks make every boundary cheap: block 64 x 4 items = tile 256,
 * 3 blocks = one pass of 768; block 32 x 1, 1 block; blocks of 256 threads (the launch
 * bounds, kernels/akx/block_limits.h) x 1 item. */
static const int64_t k_small_tile_sizes[] = {1,    63,   64,   65,   255,  256,  257,
                                             511,  512,  513,  767,  768,  769,  1535,
                                             1536, 1537, 2303, 2304, 2305, 5000, 77777};
#define NSMALLTILE (int)(sizeof k_small_tile_sizes / sizeof k_small_tile_sizes[0])

Test(mapreduce, small_tiles_striding_float32) {
  sizes_case(AKX_FLOAT32, AKX_MAP_IDENTITY, AKX_OP_ADD, k_small_tile_sizes, NSMALLTILE, 64, 4,
             3, 1);
}
Test(mapreduce, small_tiles_striding_int64_mul) {
  sizes_case(AKX_INT64, AKX_MAP_IDENTITY, AKX_OP_MUL, k_small_tile_sizes, NSMALLTILE, 64, 4, 3,
             1);
}
Test(mapreduce, small_tiles_striding_float16_min) {
  sizes_case(AKX_FLOAT16, AKX_MAP_IDENTITY, AKX_OP_MIN, k_small_tile_sizes, NSMALLTILE, 64, 4, 3,
             0);
}
Test(mapreduce, small_tiles_striding_complex64_add) {
  sizes_case(AKX_COMPLEX64, AKX_MAP_IDENTITY, AKX_OP_ADD, k_small_tile_sizes, NSMALLTILE, 64, 4,
             3, 0);
}
Test(mapreduce, small_tiles_one_block_int16_count) {
  sizes_case(AKX_INT16, AKX_MAP_NONZERO, AKX_OP_ADD, k_small_tile_sizes, NSMALLTILE, 32, 1, 1, 1);
}
Test(mapreduce, small_tiles_wide_blocks_uint32_or) {
  sizes_case(AKX_UINT32, AKX_MAP_IDENTITY, AKX_OP_OR, k_small_tile_sizes, NSMALLTILE, 256, 1,
             0, 0);
}
Test(mapreduce, small_tiles_many_blocks_float64_add) {
  sizes_case(AKX_FLOAT64, AKX_MAP_SQUARE, AKX_OP_ADD, k_small_tile_sizes, NSMALLTILE, 32, 2,
             1000, 0);
}

/* ---- large arrays, default tuning ---------------------------------------------------------- */

static const int64_t k_large[] = {1000000, 10000000};

Test(mapreduce, large_float32_add, .timeout = 300) {
  sizes_case(AKX_FLOAT32, AKX_MAP_IDENTITY, AKX_OP_ADD, k_large, 2, 0, 0, 0, 1);
}
Test(mapreduce, large_int32_add, .timeout = 300) {
  sizes_case(AKX_INT32, AKX_MAP_IDENTITY, AKX_OP_ADD, k_large, 2, 0, 0, 0, 0);
}
Test(mapreduce, large_float64_max, .timeout = 300) {
  sizes_case(AKX_FLOAT64, AKX_MAP_IDENTITY, AKX_OP_MAX, k_large, 1, 0, 0, 0, 0);
}
Test(mapreduce, large_uint8_add, .timeout = 300) {
  sizes_case(AKX_UINT8, AKX_MAP_IDENTITY, AKX_OP_ADD, k_large, 1, 0, 0, 0, 0);
}
Test(mapreduce, large_float16_square_add, .timeout = 300) {
  sizes_case(AKX_FLOAT16, AKX_MAP_SQUARE, AKX_OP_ADD, k_large, 1, 0, 0, 0, 0);
}
Test(mapreduce, large_float32_rough_add, .timeout = 300) {
  /* arbitrary real values: the sum rounds, the reference allows for it */
  akx_context *ctx = tfx_open();
  char msg[MSG];
  tfx_case c = tfx_case_make(AKX_MAP_IDENTITY, AKX_OP_ADD);
  cr_assert(tfx_vector_case(ctx, AKX_FLOAT32, 1000000, &c, 99, REF_FILL_ROUGH, msg, sizeof msg),
            "%s", msg);
  c.op = AKX_OP_MUL;
  cr_assert(tfx_vector_case(ctx, AKX_FLOAT32, 300, &c, 98, REF_FILL_ROUGH, msg, sizeof msg), "%s",
            msg);
  tfx_close(ctx);
}

/* ---- init, fold, empty ------------------------------------------------------------------- */

/* init values of the accumulator: a plain one and one that dominates (MIN/MAX) */
static void make_init(akx_dtype acc, akx_op op, int which, uint64_t seed, unsigned char *out) {
  memset(out, 0, 16);
  if (which == 0) {
    ref_fill_plain(out, acc, 1, seed);
    return;
  }
  ref_val v;
  int fl = ref_is_float(acc) || ref_is_complex(acc);
  if (op == AKX_OP_MIN) v = fl ? ref_real(acc, -INFINITY) : ref_neutral(AKX_OP_MAX, acc);
  else if (op == AKX_OP_MAX) v = fl ? ref_real(acc, INFINITY) : ref_neutral(AKX_OP_MIN, acc);
  else if (op == AKX_OP_AND) v = ref_int(acc, 0x5A);
  else if (op == AKX_OP_OR) v = ref_is_bool(acc) ? ref_uint(acc, 1) : ref_int(acc, 0x3C);
  else if (op == AKX_OP_MUL) v = fl ? ref_cplx(acc, -0.5L, 0) : ref_int(acc, -3);
  else v = fl ? ref_cplx(acc, 12.375L, -2) : ref_int(acc, 12345);
  ref_store(out, v);
}

static void init_fold(akx_dtype t) {
  static const int64_t sizes[] = {0, 1, 300, 5000};
  akx_context *ctx = tfx_open();
  tfx_tally tally = {0};
  char msg[MSG];
  for (int o = 0; o < NOPS; o++)
    for (int m = 0; m < NMAPS; m++) {
      if (!supported(t, k_maps[m], k_ops[o])) continue;
      akx_dtype acc = ref_resolve_acc(t, k_maps[m], k_ops[o], AKX_DTYPE_AUTO);
      for (int s = 0; s < 4; s++)
        for (int variant = 0; variant < 4; variant++) {
          /* 0: init, 1: dominating init, 2: fold, 3: fold + init */
          unsigned char init[16], prev[16];
          make_init(acc, k_ops[o], variant == 1, 31u * (uint64_t)s + (uint64_t)o, init);
          ref_fill_plain(prev, acc, 1, 77u + (uint64_t)s);
          int minmax = k_ops[o] == AKX_OP_MIN || k_ops[o] == AKX_OP_MAX;
          if (variant == 2 && sizes[s] == 0 && minmax) continue; /* empty MIN/MAX needs init */
          for (int w = 0; w < 2; w++) {
            tfx_case c = tfx_case_make(k_maps[m], k_ops[o]);
            c.where = w ? AKX_DEVICE : AKX_HOST;
            c.init = (variant == 2) ? NULL : init;
            c.fold = variant >= 2;
            c.prev = c.fold ? prev : NULL;
            tfx_note(&tally,
                     tfx_vector_case(ctx, t, sizes[s], &c, 900u + (uint64_t)s, 0, msg,
                                     sizeof msg),
                     "%s", msg);
          }
        }
    }
  tfx_done(&tally);
  tfx_close(ctx);
}

Test(mapreduce, init_fold_bool) { init_fold(AKX_BOOL); }
Test(mapreduce, init_fold_int8) { init_fold(AKX_INT8); }
Test(mapreduce, init_fold_uint16) { init_fold(AKX_UINT16); }
Test(mapreduce, init_fold_int32) { init_fold(AKX_INT32); }
Test(mapreduce, init_fold_uint64) { init_fold(AKX_UINT64); }
Test(mapreduce, init_fold_float16) { init_fold(AKX_FLOAT16); }
Test(mapreduce, init_fold_bfloat16) { init_fold(AKX_BFLOAT16); }
Test(mapreduce, init_fold_float32) { init_fold(AKX_FLOAT32); }
Test(mapreduce, init_fold_float64) { init_fold(AKX_FLOAT64); }
Test(mapreduce, init_fold_complex64) { init_fold(AKX_COMPLEX64); }
Test(mapreduce, init_fold_complex128) { init_fold(AKX_COMPLEX128); }

/* Specific values, so that a wrong rule shows plainly. */
Test(mapreduce, small_init_fold_values) {
  akx_context *ctx = tfx_open();
  float x[5] = {1.5f, -2.0f, 4.25f, 0.125f, 3.0f}; /* sum 6.875, min -2, max 4.25 */
  float *d = tfx_upload(ctx, x, sizeof x);
  akx_array v = akx_vector(d, AKX_FLOAT32, 5);
  akx_reduce_opts o = akx_reduce_opts_default();
  float r = 99.0f, init = 10.0f;
  cr_assert_eq(akx_mapreduce(ctx, &v, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &r, AKX_HOST),
               AKX_SUCCESS, "%s", akx_last_error());
  cr_assert(r == 6.875f, "sum: got %g, expected 6.875", r);
  o.init = &init;
  cr_assert_eq(akx_mapreduce(ctx, &v, AKX_MAP_IDENTITY, AKX_OP_ADD, &o, &r, AKX_HOST),
               AKX_SUCCESS, "%s", akx_last_error());
  cr_assert(r == 16.875f, "init 10: got %g, expected 16.875", r);
  o.fold = 1; /* r = 16.875 + (10 + 6.875) */
  cr_assert_eq(akx_mapreduce(ctx, &v, AKX_MAP_IDENTITY, AKX_OP_ADD, &o, &r, AKX_HOST),
               AKX_SUCCESS, "%s", akx_last_error());
  cr_assert(r == 33.75f, "fold: got %g, expected 33.75", r);
  o.init = NULL;
  r = 1.0f; /* r = min(1, -2) */
  cr_assert_eq(akx_mapreduce(ctx, &v, AKX_MAP_IDENTITY, AKX_OP_MIN, &o, &r, AKX_HOST),
               AKX_SUCCESS, "%s", akx_last_error());
  cr_assert(r == -2.0f, "fold MIN: got %g, expected -2", r);
  r = -5.0f;
  cr_assert_eq(akx_mapreduce(ctx, &v, AKX_MAP_IDENTITY, AKX_OP_MIN, &o, &r, AKX_HOST),
               AKX_SUCCESS, "%s", akx_last_error());
  cr_assert(r == -5.0f, "fold MIN keeps a smaller previous value: got %g", r);
  /* device result, fold */
  float *dr = tfx_upload(ctx, &(float){100.0f}, sizeof(float));
  o.fold = 1;
  cr_assert_eq(akx_mapreduce(ctx, &v, AKX_MAP_IDENTITY, AKX_OP_MAX, &o, dr, AKX_DEVICE),
               AKX_SUCCESS, "%s", akx_last_error());
  tfx_to_host(ctx, &r, dr, sizeof r);
  cr_assert(r == 100.0f, "device fold MAX: got %g, expected 100", r);
  o.fold = 0;
  cr_assert_eq(akx_mapreduce(ctx, &v, AKX_MAP_IDENTITY, AKX_OP_MAX, &o, dr, AKX_DEVICE),
               AKX_SUCCESS, "%s", akx_last_error());
  tfx_to_host(ctx, &r, dr, sizeof r);
  cr_assert(r == 4.25f, "device overwrite MAX: got %g, expected 4.25", r);
  tfx_free(ctx, dr);
  tfx_free(ctx, d);
  tfx_close(ctx);
}

/* Empty sources: the neutral element, or init; MIN/MAX without init are refused. */
Test(mapreduce, small_empty) {
  akx_context *ctx = tfx_open();
  tfx_tally tally = {0};
  char msg[MSG];
  static const tfx_layout shapes[] = {
      {.parent_n = 0, .ndim = 1, .shape = {0}, .strides = {1}},
      {.parent_n = 0, .ndim = 2, .shape = {0, 5}, .strides = {5, 1}},
      {.parent_n = 0, .ndim = 2, .shape = {7, 0}, .strides = {1, 7}},
      {.parent_n = 0, .ndim = 3, .shape = {3, 0, 2}, .strides = {0, 2, -1}},
  };
  for (int t = 0; t < NDTYPES; t++)
    for (int o = 0; o < NOPS; o++)
      for (int m = 0; m < NMAPS; m++) {
        if (!supported((akx_dtype)t, k_maps[m], k_ops[o])) continue;
        akx_dtype acc = ref_resolve_acc((akx_dtype)t, k_maps[m], k_ops[o], AKX_DTYPE_AUTO);
        for (int l = 0; l < 4; l++)
          for (int with_init = 0; with_init < 2; with_init++) {
            unsigned char init[16];
            make_init(acc, k_ops[o], 0, (uint64_t)(t * 7 + o), init);
            tfx_case c = tfx_case_make(k_maps[m], k_ops[o]);
            c.init = with_init ? init : NULL;
            c.where = (l & 1) ? AKX_DEVICE : AKX_HOST;
            tfx_note(&tally,
                     tfx_fill_run(ctx, (akx_dtype)t, &shapes[l], &c, 1, 0, AKX_DTYPE_AUTO, NULL,
                                  msg, sizeof msg),
                     "%s", msg);
          }
      }
  tfx_done(&tally);
  tfx_close(ctx);
}

Test(mapreduce, small_empty_values) {
  akx_context *ctx = tfx_open();
  akx_array v = akx_vector(NULL, AKX_INT32, 0); /* NULL data is fine when there is nothing */
  int64_t r = 77;
  cr_assert_eq(akx_mapreduce(ctx, &v, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &r, AKX_HOST),
               AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(r, 0, "empty ADD: got %lld", (long long)r);
  r = 77;
  cr_assert_eq(akx_mapreduce(ctx, &v, AKX_MAP_IDENTITY, AKX_OP_MUL, NULL, &r, AKX_HOST),
               AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(r, 1, "empty MUL: got %lld", (long long)r);
  int32_t r32 = 77;
  cr_assert_eq(akx_mapreduce(ctx, &v, AKX_MAP_IDENTITY, AKX_OP_AND, NULL, &r32, AKX_HOST),
               AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(r32, -1, "empty AND: got %d", r32);
  r32 = 77;
  cr_assert_eq(akx_mapreduce(ctx, &v, AKX_MAP_IDENTITY, AKX_OP_MAX, NULL, &r32, AKX_HOST),
               AKX_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(r32, 77, "nothing written");
  cr_assert(akx_last_error()[0] != '\0');
  int32_t init = -4;
  akx_reduce_opts o = akx_reduce_opts_default();
  o.init = &init;
  cr_assert_eq(akx_mapreduce(ctx, &v, AKX_MAP_IDENTITY, AKX_OP_MAX, &o, &r32, AKX_HOST),
               AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(r32, -4, "empty MAX with init: got %d", r32);
  akx_array b = akx_vector(NULL, AKX_BOOL, 0);
  unsigned char rb = 7;
  cr_assert_eq(akx_mapreduce(ctx, &b, AKX_MAP_IDENTITY, AKX_OP_AND, NULL, &rb, AKX_HOST),
               AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(rb, 1, "empty all() is true: got %d", rb);
  rb = 7;
  cr_assert_eq(akx_mapreduce(ctx, &b, AKX_MAP_IDENTITY, AKX_OP_OR, NULL, &rb, AKX_HOST),
               AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(rb, 0, "empty any() is false: got %d", rb);
  tfx_close(ctx);
}

/* ---- NaN ------------------------------------------------------------------------------------- */

Test(mapreduce, small_nan_propagation) {
  static const akx_dtype types[] = {AKX_FLOAT16, AKX_BFLOAT16, AKX_FLOAT32, AKX_FLOAT64};
  /* Up to three tiles and a part (3 * TILE + 5): blocks of the first pass meet NaNs in their
   * own tiles and in a partial one, and the finish folds several partials (was 70001: 17
   * tiles, the same paths). */
  static const int64_t sizes[] = {1, 2, 33, 300, 4097, 3 * TILE + 5};
  akx_context *ctx = tfx_open();
  tfx_tally tally = {0};
  char msg[MSG];
  for (int ti = 0; ti < 4; ti++)
    for (int o = 2; o <= 3; o++)
      for (int m = 0; m < 3; m++)
        for (int s = 0; s < 6; s++) {
          const int64_t n = sizes[s];
          const akx_dtype t = types[ti];
          akx_dtype acc = ref_resolve_acc(t, k_maps[m], k_ops[o], AKX_DTYPE_AUTO);
          unsigned char *h = tfx_xmalloc((size_t)n * ref_size(t));
          /* NaN at the first, the last, the middle, and a tile boundary in turn */
          int64_t where_nan[4] = {0, n - 1, n / 2, n > TILE ? TILE : n - 1};
          for (int k = 0; k < 4; k++) {
            ref_fill(h, t, n, k_maps[m], k_ops[o], acc, n, 40u + (uint64_t)(s * 4 + k), 0);
            ref_store_at(h, where_nan[k], ref_nan(t));
            tfx_layout L = tfx_layout_vector(n);
            tfx_case c = tfx_case_make(k_maps[m], k_ops[o]);
            c.where = (k & 1) ? AKX_DEVICE : AKX_HOST;
            if (k == 3) { /* with an init that would otherwise win */
              static unsigned char init[16];
              ref_store(init, ref_real(acc, k_ops[o] == AKX_OP_MIN ? -INFINITY : INFINITY));
              c.init = init;
            }
            tfx_note(&tally, tfx_run(ctx, t, h, &L, &c, AKX_DTYPE_AUTO, NULL, msg, sizeof msg),
                     "NaN at %lld: %s", (long long)where_nan[k], msg);
          }
          /* and with the generator's own sprinkling of NaNs, with the tuned tile */
          tfx_case c = tuned(k_maps[m], k_ops[o]);
          tfx_note(&tally,
                   tfx_vector_case(ctx, t, n, &c, 60u + (uint64_t)s, REF_FILL_NAN, msg,
                                   sizeof msg),
                   "%s", msg);
          free(h);
        }
  tfx_done(&tally);
  tfx_close(ctx);
}

Test(mapreduce, small_nan_values) {
  akx_context *ctx = tfx_open();
  float x[6] = {1.0f, -INFINITY, NAN, 7.0f, INFINITY, -0.0f};
  float *d = tfx_upload(ctx, x, sizeof x);
  float r = 0;
  for (int o = AKX_OP_MIN; o <= AKX_OP_MAX; o++) {
    for (int64_t n = 3; n <= 6; n++) {
      akx_array v = akx_vector(d, AKX_FLOAT32, n);
      r = 0;
      cr_assert_eq(akx_mapreduce(ctx, &v, AKX_MAP_IDENTITY, (akx_op)o, NULL, &r, AKX_HOST),
                   AKX_SUCCESS, "%s", akx_last_error());
      cr_assert(isnan(r), "%s of [1, -inf, NaN, ...] (n %lld): got %g, expected NaN",
                ref_op_name((akx_op)o), (long long)n, r);
    }
    akx_array v = akx_vector(d, AKX_FLOAT32, 2);
    cr_assert_eq(akx_mapreduce(ctx, &v, AKX_MAP_IDENTITY, (akx_op)o, NULL, &r, AKX_HOST),
                 AKX_SUCCESS);
    cr_assert(r == (o == AKX_OP_MIN ? -INFINITY : 1.0f), "%s of [1, -inf]: %g",
              ref_op_name((akx_op)o), r);
  }
  /* NaN is nonzero: count = 5 (-0 is zero) */
  akx_array v = akx_vector(d, AKX_FLOAT32, 6);
  int64_t cnt = 0;
  cr_assert_eq(akx_mapreduce(ctx, &v, AKX_MAP_NONZERO, AKX_OP_ADD, NULL, &cnt, AKX_HOST),
               AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(cnt, 5, "count of [1, -inf, NaN, 7, inf, -0]: got %lld, expected 5",
               (long long)cnt);
  tfx_free(ctx, d);
  tfx_close(ctx);
}

/* ---- explicit accumulators --------------------------------------------------------------- */

/* every (map, op, acc) for one source dtype: supported ones checked against the reference,
 * the others AKX_ERROR_UNSUPPORTED with nothing written */
static void explicit_accs(akx_dtype t) {
  akx_context *ctx = tfx_open();
  tfx_tally tally = {0};
  char msg[MSG];
  int valid = 0;
  for (int o = 0; o < NOPS; o++)
    for (int m = 0; m < NMAPS; m++)
      for (int a = 0; a < NDTYPES; a++) {
        tfx_case c = tfx_case_make(k_maps[m], k_ops[o]);
        c.acc = (akx_dtype)a;
        int ok = (int)ref_resolve_acc(t, k_maps[m], k_ops[o], (akx_dtype)a) != (int)REF_UNSUPPORTED;
        valid += ok;
        int64_t n = ok ? 257 : 3;
        c.where = (a + o) % 2 ? AKX_DEVICE : AKX_HOST;
        tfx_note(&tally,
                 tfx_vector_case(ctx, t, n, &c, 3000u + (uint64_t)(o * 100 + m * 20 + a), 0, msg,
                                 sizeof msg),
                 "%s", msg);
      }
  cr_assert(valid > 0);
  tfx_done(&tally);
  tfx_close(ctx);
}

Test(mapreduce, explicit_acc_bool) { explicit_accs(AKX_BOOL); }
Test(mapreduce, explicit_acc_int8) { explicit_accs(AKX_INT8); }
Test(mapreduce, explicit_acc_uint8) { explicit_accs(AKX_UINT8); }
Test(mapreduce, explicit_acc_int16) { explicit_accs(AKX_INT16); }
Test(mapreduce, explicit_acc_uint16) { explicit_accs(AKX_UINT16); }
Test(mapreduce, explicit_acc_int32) { explicit_accs(AKX_INT32); }
Test(mapreduce, explicit_acc_uint32) { explicit_accs(AKX_UINT32); }
Test(mapreduce, explicit_acc_int64) { explicit_accs(AKX_INT64); }
Test(mapreduce, explicit_acc_uint64) { explicit_accs(AKX_UINT64); }
Test(mapreduce, explicit_acc_float16) { explicit_accs(AKX_FLOAT16); }
Test(mapreduce, explicit_acc_bfloat16) { explicit_accs(AKX_BFLOAT16); }
Test(mapreduce, explicit_acc_float32) { explicit_accs(AKX_FLOAT32); }
Test(mapreduce, explicit_acc_float64) { explicit_accs(AKX_FLOAT64); }
Test(mapreduce, explicit_acc_complex64) { explicit_accs(AKX_COMPLEX64); }
Test(mapreduce, explicit_acc_complex128) { explicit_accs(AKX_COMPLEX128); }

Test(mapreduce, small_explicit_acc_values) {
  akx_context *ctx = tfx_open();
  akx_reduce_opts o = akx_reduce_opts_default();
  /* float32 data, float64 accumulator: 1e8 + 1 - 1e8 is 1 in float64 (0 in float32) */
  float xf[3] = {1e8f, 1.0f, -1e8f};
  float *df = tfx_upload(ctx, xf, sizeof xf);
  akx_array vf = akx_vector(df, AKX_FLOAT32, 3);
  double r64 = 0;
  o.acc = AKX_FLOAT64;
  cr_assert_eq(akx_mapreduce(ctx, &vf, AKX_MAP_IDENTITY, AKX_OP_ADD, &o, &r64, AKX_HOST),
               AKX_SUCCESS, "%s", akx_last_error());
  cr_assert(r64 == 1.0, "float32 summed in float64: got %.17g, expected 1", r64);
  /* int8: AUTO widens ADD to int64; an int8 accumulator wraps */
  int8_t xi[4] = {100, 100, 100, -128};
  int8_t *di = tfx_upload(ctx, xi, sizeof xi);
  akx_array vi = akx_vector(di, AKX_INT8, 4);
  int64_t s64 = 0;
  cr_assert_eq(akx_mapreduce(ctx, &vi, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &s64, AKX_HOST),
               AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(s64, 172, "int8 sum in int64: got %lld", (long long)s64);
  o.acc = AKX_INT64;
  s64 = 0;
  cr_assert_eq(akx_mapreduce(ctx, &vi, AKX_MAP_ABS, AKX_OP_ADD, &o, &s64, AKX_HOST), AKX_SUCCESS,
               "%s", akx_last_error());
  cr_assert_eq(s64, 428, "sum |int8| in int64 (|-128| = 128): got %lld", (long long)s64);
  o.acc = AKX_INT8;
  int8_t s8 = 0;
  cr_assert_eq(akx_mapreduce(ctx, &vi, AKX_MAP_IDENTITY, AKX_OP_ADD, &o, &s8, AKX_HOST),
               AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(s8, (int8_t)172, "int8 sum in int8 wraps: got %d", s8);
  cr_assert_eq(akx_mapreduce(ctx, &vi, AKX_MAP_ABS, AKX_OP_MAX, &o, &s8, AKX_HOST), AKX_SUCCESS,
               "%s", akx_last_error());
  cr_assert_eq(s8, 100, "max |int8| in int8 (|-128| wraps to -128): got %d", s8);
  o.acc = AKX_INT64;
  cr_assert_eq(akx_mapreduce(ctx, &vi, AKX_MAP_ABS, AKX_OP_MAX, &o, &s64, AKX_HOST), AKX_SUCCESS,
               "%s", akx_last_error());
  cr_assert_eq(s64, 128, "max |int8| in int64: got %lld", (long long)s64);
  o.acc = AKX_INT8;
  cr_assert_eq(akx_mapreduce(ctx, &vi, AKX_MAP_SQUARE, AKX_OP_XOR, &o, &s8, AKX_HOST),
               AKX_SUCCESS, "%s", akx_last_error());
  /* 100^2 = 10000 = 0x2710 -> 0x10 in int8, three times; (-128)^2 = 16384 -> 0 */
  cr_assert_eq(s8, 0x10, "xor of squares in int8: got %d", s8);
  /* count = NONZERO + ADD, any/all = NONZERO + OR/AND in bool */
  double xd[6] = {0.0, -0.0, 2.5, NAN, -1.0, 0.0};
  double *dd = tfx_upload(ctx, xd, sizeof xd);
  akx_array vd = akx_vector(dd, AKX_FLOAT64, 6);
  o = akx_reduce_opts_default();
  s64 = -1;
  cr_assert_eq(akx_mapreduce(ctx, &vd, AKX_MAP_NONZERO, AKX_OP_ADD, &o, &s64, AKX_HOST),
               AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(s64, 3, "count: got %lld, expected 3", (long long)s64);
  o.acc = AKX_BOOL;
  unsigned char b = 9;
  cr_assert_eq(akx_mapreduce(ctx, &vd, AKX_MAP_NONZERO, AKX_OP_OR, &o, &b, AKX_HOST), AKX_SUCCESS,
               "%s", akx_last_error());
  cr_assert_eq(b, 1, "any: got %d", b);
  cr_assert_eq(akx_mapreduce(ctx, &vd, AKX_MAP_NONZERO, AKX_OP_AND, &o, &b, AKX_HOST),
               AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(b, 0, "all: got %d", b);
  akx_array vd2 = akx_vector(dd + 2, AKX_FLOAT64, 3); /* 2.5, NaN, -1 */
  cr_assert_eq(akx_mapreduce(ctx, &vd2, AKX_MAP_NONZERO, AKX_OP_AND, &o, &b, AKX_HOST),
               AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(b, 1, "all of [2.5, NaN, -1]: got %d", b);
  b = 9;
  cr_assert_eq(akx_mapreduce(ctx, &vd, AKX_MAP_NONZERO, AKX_OP_ADD, &o, &b, AKX_HOST),
               AKX_ERROR_UNSUPPORTED, "count into a bool accumulator is refused");
  cr_assert_eq(b, 9, "nothing written");
  o.acc = AKX_FLOAT64;
  double cd = 0;
  cr_assert_eq(akx_mapreduce(ctx, &vd, AKX_MAP_NONZERO, AKX_OP_ADD, &o, &cd, AKX_HOST),
               AKX_SUCCESS, "%s", akx_last_error());
  cr_assert(cd == 3.0, "count in float64: got %g", cd);
  /* complex64 summed in complex128 */
  float xc[4] = {1e8f, 1.0f, -1e8f, 2.0f}; /* (1e8, 1) + (-1e8, 2) */
  float *dc = tfx_upload(ctx, xc, sizeof xc);
  akx_array vc = akx_vector(dc, AKX_COMPLEX64, 2);
  double rc[2] = {0, 0};
  o.acc = AKX_COMPLEX128;
  cr_assert_eq(akx_mapreduce(ctx, &vc, AKX_MAP_IDENTITY, AKX_OP_ADD, &o, rc, AKX_HOST),
               AKX_SUCCESS, "%s", akx_last_error());
  cr_assert(rc[0] == 0.0 && rc[1] == 3.0, "complex128 sum: (%g, %g)", rc[0], rc[1]);
  o.acc = AKX_DTYPE_AUTO;
  float r32 = 0;
  cr_assert_eq(akx_mapreduce(ctx, &vc, AKX_MAP_ABS, AKX_OP_MAX, &o, &r32, AKX_HOST), AKX_SUCCESS,
               "%s", akx_last_error());
  cr_assert(fabsf(r32 - 1e8f) <= 16.0f, "max |complex64|: %g", r32);
  tfx_free(ctx, dc);
  tfx_free(ctx, dd);
  tfx_free(ctx, di);
  tfx_free(ctx, df);
  tfx_close(ctx);
}

/* ---- offset views ---------------------------------------------------------------------------- */

Test(mapreduce, offset_views) {
  static const akx_dtype types[] = {AKX_INT8,    AKX_UINT8,   AKX_INT16,   AKX_FLOAT16,
                                    AKX_BFLOAT16, AKX_FLOAT32, AKX_INT32,   AKX_UINT32,
                                    AKX_FLOAT64, AKX_INT64,   AKX_COMPLEX64, AKX_COMPLEX128};
  static const int64_t sizes[] = {1, 2, 3, 5, 7, 8, 15, 16, 17, 31, 33, 40, 255, 4097, 100003};
  akx_context *ctx = tfx_open();
  tfx_tally tally = {0};
  char msg[MSG];
  for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
    const akx_dtype t = types[ti];
    const int64_t per16 = 16 / (int64_t)ref_size(t) ? 16 / (int64_t)ref_size(t) : 1;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
      for (int64_t off = 1; off <= per16; off++) { /* off 1: one element past the boundary */
        if (off > 1 && sizes[s] > 300) continue;
        tfx_layout L = tfx_layout_vector(sizes[s]);
        L.parent_n = sizes[s] + per16 + 1;
        L.offset = off;
        akx_op op = (s % 2) ? AKX_OP_ADD : (ref_is_complex(t) ? AKX_OP_MUL : AKX_OP_MAX);
        tfx_case c = tfx_case_make(AKX_MAP_IDENTITY, op);
        c.where = (off % 2) ? AKX_HOST : AKX_DEVICE;
        if (s % 3 == 0) {
          c.block_size = 256;
          c.items_per_thread = 16;
        }
        tfx_note(&tally,
                 tfx_fill_run(ctx, t, &L, &c, 11u + (uint64_t)s, 0, AKX_DTYPE_AUTO, NULL, msg,
                              sizeof msg),
                 "offset %lld elements: %s", (long long)off, msg);
      }
  }
  tfx_done(&tally);
  tfx_close(ctx);
}

Test(mapreduce, offset_allocation_alignment) {
  /* the base of an allocation is at a 16-byte boundary (so offset views above are offset) */
  akx_context *ctx = tfx_open();
  for (size_t b = 1; b < 100000; b = b * 3 + 1) {
    void *p = tfx_alloc(ctx, b);
    cr_assert((uintptr_t)p % 16 == 0, "akx_malloc(%zu) = %p is not 16-byte aligned", b, p);
    tfx_free(ctx, p);
  }
  tfx_close(ctx);
}

/* A complex number is a pair of its reals and aligned as one (the library accepts complex128
 * data at 8 bytes, complex64 at 4): half an element past a 16-byte boundary defeats whole-
 * element and 16-byte loads. */
static void complex_half_offset(akx_dtype t) {
  akx_context *ctx = tfx_open();
  tfx_tally tally = {0};
  char msg[MSG];
  const size_t es = ref_size(t), half = es / 2;
  static const int64_t sizes[] = {1, 2, 3, 17, 300, 4097, 70001};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    const int64_t n = sizes[s];
    unsigned char *h = tfx_xmalloc((size_t)n * es + es);
    ref_fill(h + half, t, n, AKX_MAP_IDENTITY, AKX_OP_ADD, t, n, 5, 0);
    unsigned char *d = tfx_upload(ctx, h, (size_t)n * es + es);
    akx_array hv = akx_vector(h + half, t, n), dv = akx_vector(d + half, t, n);
    for (int w = 0; w < 2; w++) {
      tfx_case c = tfx_case_make(AKX_MAP_IDENTITY, AKX_OP_ADD);
      c.where = w ? AKX_DEVICE : AKX_HOST;
      tfx_note(&tally, tfx_check_mapreduce(ctx, &dv, &hv, &c, msg, sizeof msg), "%zu bytes in: %s",
               half, msg);
      c.map = AKX_MAP_SQUARE;
      tfx_note(&tally, tfx_check_mapreduce(ctx, &dv, &hv, &c, msg, sizeof msg), "%zu bytes in: %s",
               half, msg);
    }
    tfx_free(ctx, d);
    free(h);
  }
  tfx_done(&tally);
  tfx_close(ctx);
}

Test(mapreduce, offset_complex128_half_element) { complex_half_offset(AKX_COMPLEX128); }
Test(mapreduce, offset_complex64_half_element) { complex_half_offset(AKX_COMPLEX64); }

/* ---- strided, negative-stride and broadcast sources -------------------------------------- */

typedef struct {
  const char *name;
  tfx_layout L;
} named_layout;

static int make_layouts(named_layout *out, int big) {
  int k = 0;
  {
    int64_t ps[2] = {37, 50}, st[2] = {2, 3}, sh[2] = {30, 40}, sp[2] = {1, 1};
    out[k++] = (named_layout){"2-d rows with gaps", tfx_layout_sub(2, ps, st, sh, sp)};
  }
  {
    named_layout t = out[0];
    t.name = "2-d transposed";
    int64_t s0 = t.L.shape[0], t0 = t.L.strides[0];
    t.L.shape[0] = t.L.shape[1];
    t.L.strides[0] = t.L.strides[1];
    t.L.shape[1] = s0;
    t.L.strides[1] = t0;
    out[k++] = t;
  }
  {
    int64_t ps[3] = {7, 11, 13}, st[3] = {1, 2, 1}, sh[3] = {5, 4, 6}, sp[3] = {1, 2, 2};
    out[k++] = (named_layout){"3-d every other", tfx_layout_sub(3, ps, st, sh, sp)};
  }
  {
    int64_t ps[3] = {7, 11, 13}, st[3] = {6, 10, 12}, sh[3] = {6, 5, 13}, sp[3] = {-1, -2, -1};
    out[k++] = (named_layout){"3-d all negative", tfx_layout_sub(3, ps, st, sh, sp)};
  }
  {
    int64_t ps[1] = {3001}, st[1] = {0}, sh[1] = {1000}, sp[1] = {3};
    out[k++] = (named_layout){"1-d stride 3", tfx_layout_sub(1, ps, st, sh, sp)};
  }
  {
    int64_t ps[1] = {1000}, st[1] = {999}, sh[1] = {1000}, sp[1] = {-1};
    out[k++] = (named_layout){"1-d reversed", tfx_layout_sub(1, ps, st, sh, sp)};
  }
  {
    int64_t ps[2] = {37, 50}, st[2] = {36, 3}, sh[2] = {30, 40}, sp[2] = {-1, 1};
    out[k++] = (named_layout){"2-d negative rows", tfx_layout_sub(2, ps, st, sh, sp)};
  }
  {
    int64_t ps[2] = {37, 50}, st[2] = {2, 45}, sh[2] = {30, 40}, sp[2] = {1, -1};
    out[k++] = (named_layout){"2-d negative columns", tfx_layout_sub(2, ps, st, sh, sp)};
  }
  {
    tfx_layout L = tfx_layout_vector(1000);
    L.parent_n = 3;
    L.offset = 1;
    L.strides[0] = 0;
    out[k++] = (named_layout){"broadcast element x1000", L};
  }
  {
    tfx_layout L;
    memset(&L, 0, sizeof L);
    L.parent_n = 300;
    L.ndim = 2;
    L.shape[0] = 7;
    L.shape[1] = 300;
    L.strides[0] = 0;
    L.strides[1] = 1;
    out[k++] = (named_layout){"broadcast row x7", L};
  }
  {
    tfx_layout L;
    memset(&L, 0, sizeof L);
    L.parent_n = 300;
    L.ndim = 3;
    L.shape[0] = 300;
    L.shape[1] = 5;
    L.shape[2] = 2;
    L.strides[0] = 1;
    L.strides[1] = 0;
    L.strides[2] = 0;
    out[k++] = (named_layout){"broadcast column x10", L};
  }
  {
    tfx_layout L;
    memset(&L, 0, sizeof L);
    L.parent_n = 5;
    L.offset = 3;
    L.ndim = 0;
    out[k++] = (named_layout){"0-d scalar", L};
  }
  {
    int64_t ps[4] = {3, 4, 5, 6}, st[4] = {0, 0, 0, 0}, sh[4] = {3, 4, 5, 6}, sp[4] = {1, 1, 1, 1};
    tfx_layout L = tfx_layout_sub(4, ps, st, sh, sp);
    /* contiguous in memory, described backwards: strides of a column-major view */
    out[k++] = (named_layout){"4-d contiguous", L};
  }
  {
    int64_t ps[2] = {64, 100}, st[2] = {0, 0}, sh[2] = {64, 99}, sp[2] = {1, 1};
    out[k++] = (named_layout){"2-d one-element gaps", tfx_layout_sub(2, ps, st, sh, sp)};
  }
  if (big) { /* 40000 elements: 10 tiles of the default general path, 157 of the small one
              * (v == 2 in strided()): several blocks, each over several tiles (was 1000x1000) */
    int64_t ps[2] = {224, 230}, st[2] = {1, 3}, sh[2] = {200, 200}, sp[2] = {1, 1};
    out[k++] = (named_layout){"2-d 200x200 in 224x230", tfx_layout_sub(2, ps, st, sh, sp)};
    int64_t ps2[2] = {230, 224}, st2[2] = {229, 1}, sh2[2] = {200, 200}, sp2[2] = {-1, 1};
    tfx_layout T = tfx_layout_sub(2, ps2, st2, sh2, sp2);
    int64_t a = T.shape[0], b = T.strides[0];
    T.shape[0] = T.shape[1];
    T.strides[0] = T.strides[1];
    T.shape[1] = a;
    T.strides[1] = b;
    out[k++] = (named_layout){"2-d 200x200 transposed, negative", T};
  }
  return k;
}

static void strided(akx_dtype t, akx_map m, akx_op op, int big) {
  named_layout ls[20];
  int nl = make_layouts(ls, big);
  akx_context *ctx = tfx_open();
  tfx_tally tally = {0};
  char msg[MSG];
  for (int i = 0; i < nl; i++)
    for (int v = 0; v < 3; v++) {
      tfx_case c = tfx_case_make(m, op);
      c.where = v == 1 ? AKX_DEVICE : AKX_HOST;
      if (v == 2) { /* small tiles and few blocks: the general path's striding */
        c.block_size = 64;
        c.items_per_thread = 4;
        c.target_blocks = 3;
      }
      tfx_note(&tally,
               tfx_fill_run(ctx, t, &ls[i].L, &c, 800u + (uint64_t)i, 0, AKX_DTYPE_AUTO, NULL,
                            msg, sizeof msg),
               "%s: %s", ls[i].name, msg);
    }
  tfx_done(&tally);
  tfx_close(ctx);
}

Test(mapreduce, strided_float32_add) { strided(AKX_FLOAT32, AKX_MAP_IDENTITY, AKX_OP_ADD, 1); }
Test(mapreduce, strided_int32_add) { strided(AKX_INT32, AKX_MAP_IDENTITY, AKX_OP_ADD, 1); }
Test(mapreduce, strided_int16_mul) { strided(AKX_INT16, AKX_MAP_IDENTITY, AKX_OP_MUL, 0); }
Test(mapreduce, strided_float64_max) { strided(AKX_FLOAT64, AKX_MAP_ABS, AKX_OP_MAX, 0); }
Test(mapreduce, strided_float16_min) { strided(AKX_FLOAT16, AKX_MAP_IDENTITY, AKX_OP_MIN, 0); }
Test(mapreduce, strided_complex64_add) { strided(AKX_COMPLEX64, AKX_MAP_IDENTITY, AKX_OP_ADD, 0); }
Test(mapreduce, strided_complex128_abs) { strided(AKX_COMPLEX128, AKX_MAP_SQUARE, AKX_OP_ADD, 0); }
Test(mapreduce, strided_uint8_xor) { strided(AKX_UINT8, AKX_MAP_IDENTITY, AKX_OP_XOR, 0); }
Test(mapreduce, strided_bool_count) { strided(AKX_BOOL, AKX_MAP_NONZERO, AKX_OP_ADD, 0); }
Test(mapreduce, strided_bfloat16_any) { strided(AKX_BFLOAT16, AKX_MAP_NONZERO, AKX_OP_OR, 0); }

Test(mapreduce, small_broadcast_values) {
  akx_context *ctx = tfx_open();
  int32_t x[2] = {3, -7};
  int32_t *d = tfx_upload(ctx, x, sizeof x);
  akx_array v = akx_vector(d + 1, AKX_INT32, 1000);
  v.strides[0] = 0;
  int64_t r = 0;
  cr_assert_eq(akx_mapreduce(ctx, &v, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &r, AKX_HOST),
               AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(r, -7000, "-7 broadcast 1000 times: got %lld", (long long)r);
  int64_t shape[3] = {10, 20, 30};
  akx_array b = akx_array_c(d, AKX_INT32, 3, shape);
  b.strides[0] = b.strides[1] = b.strides[2] = 0;
  cr_assert_eq(akx_mapreduce(ctx, &b, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &r, AKX_HOST),
               AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(r, 18000, "3 broadcast over 10x20x30: got %lld", (long long)r);
  cr_assert_eq(akx_mapreduce(ctx, &b, AKX_MAP_IDENTITY, AKX_OP_MUL, NULL, &r, AKX_HOST),
               AKX_SUCCESS, "%s", akx_last_error());
  uint64_t p = 1;
  for (int i = 0; i < 6000; i++) p *= 3u;
  cr_assert_eq((uint64_t)r, p, "3^6000 mod 2^64: got %llu, expected %llu", (unsigned long long)r,
               (unsigned long long)p);
  /* reversed vector: same sum as forward */
  int32_t y[5] = {1, 20, 300, 4000, 50000};
  int32_t *dy = tfx_upload(ctx, y, sizeof y);
  akx_array rv = akx_vector(dy + 4, AKX_INT32, 5);
  rv.strides[0] = -1;
  cr_assert_eq(akx_mapreduce(ctx, &rv, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &r, AKX_HOST),
               AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(r, 54321, "reversed: got %lld", (long long)r);
  rv.shape[0] = 3; /* 50000, 4000, 300 */
  cr_assert_eq(akx_mapreduce(ctx, &rv, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &r, AKX_HOST),
               AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(r, 54300, "reversed first 3: got %lld", (long long)r);
  tfx_free(ctx, dy);
  tfx_free(ctx, d);
  tfx_close(ctx);
}

/* ---- float16 past 65504 ---------------------------------------------------------------------- */

Test(mapreduce, float16_sum_past_65504) {
  akx_context *ctx = tfx_open();
  const int64_t sizes[] = {100, 1000, 4097, DEFAULT_PASS + 1};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    const int64_t n = sizes[s];
    uint16_t *h = tfx_xmalloc((size_t)n * 2);
    long double want = 0;
    /* integers lo..hi (exact in float16): the sum passes 65504 and stays below 2^24 */
    const int64_t lo = (70000 + n - 1) / n, hi = 16777215 / n < 2048 ? 16777215 / n : 2048;
    for (int64_t i = 0; i < n; i++) {
      long double v = (long double)(lo + (int64_t)(ref_rand(4, (uint64_t)i) % (uint64_t)(hi - lo + 1)));
      h[i] = ref_f16_from_ld(v);
      want += ref_f16_to_ld(h[i]);
    }
    cr_assert(want > 65504 && want < 16777216.0L);
    uint16_t *d = tfx_upload(ctx, h, (size_t)n * 2);
    akx_array v = akx_vector(d, AKX_FLOAT16, n);
    for (int w = 0; w < 2; w++) {
      float r = 0;
      float *dr = NULL;
      if (w) dr = tfx_alloc(ctx, sizeof(float));
      akx_status st = akx_mapreduce(ctx, &v, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, w ? (void *)dr : &r,
                                    w ? AKX_DEVICE : AKX_HOST);
      cr_assert_eq(st, AKX_SUCCESS, "%s", akx_last_error());
      if (w) {
        tfx_to_host(ctx, &r, dr, sizeof r);
        tfx_free(ctx, dr);
      }
      cr_assert((long double)r == want, "float16 x %lld summed in float32 (%s): got %.9g, expected %.9Lg",
                (long long)n, w ? "device" : "host", r, want);
    }
    /* bfloat16 too */
    for (int64_t i = 0; i < n; i++) h[i] = ref_bf16_from_ld(ref_f16_to_ld(h[i]));
    long double wb = 0;
    for (int64_t i = 0; i < n; i++) wb += ref_bf16_to_ld(h[i]);
    tfx_to_device(ctx, d, h, (size_t)n * 2);
    v.dtype = AKX_BFLOAT16;
    float rb = 0;
    cr_assert_eq(akx_mapreduce(ctx, &v, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &rb, AKX_HOST),
                 AKX_SUCCESS, "%s", akx_last_error());
    cr_assert((long double)rb == wb, "bfloat16 x %lld: got %.9g, expected %.9Lg", (long long)n, rb,
              wb);
    tfx_free(ctx, d);
    free(h);
  }
  tfx_close(ctx);
}

/* ---- workspace ------------------------------------------------------------------------------- */

static size_t ws_query_view(akx_context *ctx, const akx_array *v, akx_map m, akx_op op,
                            const akx_reduce_opts *o) {
  size_t bytes = 0;
  akx_status s = akx_mapreduce_workspace_size(ctx, v, m, op, o, &bytes);
  char vb[256];
  cr_assert_eq(s, AKX_SUCCESS, "akx_mapreduce_workspace_size(%s) = %s: %s",
               tfx_describe(v, vb, sizeof vb), akx_status_string(s), akx_last_error());
  return bytes;
}

/* the workspace a call on a real n-element vector of dtype t needs */
static size_t ws_query(akx_context *ctx, akx_dtype t, int64_t n, akx_map m, akx_op op,
                       const akx_reduce_opts *o) {
  void *d = tfx_alloc(ctx, (size_t)(n > 0 ? n : 1) * ref_size(t));
  akx_array v = akx_vector(d, t, n);
  size_t bytes = ws_query_view(ctx, &v, m, op, o);
  tfx_free(ctx, d);
  return bytes;
}

Test(mapreduce, workspace_size_grows) {
  akx_context *ctx = tfx_open();
  /* The explicit options' pass and the tuning table's (the sizes in increasing order). */
  const int64_t ns[] = {0,        1,           2,                100,          4095,
                        4096,     4097,        100000,           PASS - 1,     PASS,
                        PASS + 1, 2 * PASS + 1, DEFAULT_PASS - 1, DEFAULT_PASS, DEFAULT_PASS + 1,
                        2 * DEFAULT_PASS + 1};
  static const akx_dtype types[] = {AKX_INT8, AKX_FLOAT16, AKX_FLOAT32, AKX_FLOAT64,
                                    AKX_COMPLEX128};
  for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
    void *d = tfx_alloc(ctx, (size_t)(2 * PASS + 1) * ref_size(types[ti])); /* the query reads shapes only */
    for (int tuned_opts = 0; tuned_opts < 2; tuned_opts++) {
      akx_reduce_opts o = akx_reduce_opts_default();
      if (tuned_opts) {
        o.block_size = 256;
        o.items_per_thread = 16;
        o.target_blocks = PASS_BLOCKS;
      }
      size_t prev = 0;
      for (size_t i = 0; i < sizeof ns / sizeof ns[0] + 2; i++) {
        akx_array v = akx_vector(d, types[ti], 0);
        if (i < sizeof ns / sizeof ns[0]) {
          v.shape[0] = ns[i];
        } else { /* larger n through a broadcast view */
          v.shape[0] = i == sizeof ns / sizeof ns[0] ? 10000000 : INT64_C(1) << 33;
          v.strides[0] = 0;
        }
        size_t b = ws_query_view(ctx, &v, AKX_MAP_IDENTITY, AKX_OP_ADD, &o);
        if (v.shape[0] > 0)
          cr_assert(b > 0, "%s n %lld: workspace size 0", ref_name(types[ti]),
                    (long long)v.shape[0]);
        cr_assert(b >= prev, "%s n %lld: workspace size %zu < %zu for a smaller n",
                  ref_name(types[ti]), (long long)v.shape[0], b, prev);
        prev = b;
      }
      /* two passes need room for partials of the accumulator */
      akx_dtype acc = ref_auto_acc(types[ti], AKX_MAP_IDENTITY, AKX_OP_ADD);
      o.target_blocks = 7;
      akx_array v = akx_vector(d, types[ti], 2 * PASS + 1);
      size_t b = ws_query_view(ctx, &v, AKX_MAP_IDENTITY, AKX_OP_ADD, &o);
      cr_assert(b >= 2 * ref_size(acc), "%s: %zu bytes for 7 blocks", ref_name(types[ti]), b);
    }
    tfx_free(ctx, d);
  }
  /* NULL opts is fine */
  cr_assert(ws_query(ctx, AKX_FLOAT32, 1000, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL) > 0);
  tfx_close(ctx);
}

/* The size query needs only shapes and dtypes (as zstd's do), so a caller can size the
 * workspace before it has the data. */
Test(mapreduce, workspace_query_needs_only_shapes) {
  akx_context *ctx = tfx_open();
  akx_array v = akx_vector((void *)(uintptr_t)4096, AKX_FLOAT32, 1000000);
  size_t b = 0;
  akx_status s = akx_mapreduce_workspace_size(ctx, &v, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &b);
  cr_assert_eq(s, AKX_SUCCESS, "query on a view whose data is not allocated yet: %s (%s)",
               akx_status_string(s), akx_last_error());
  cr_assert(b > 0);
  tfx_close(ctx);
}

static akx_context_info_t info_of(akx_context *ctx) {
  akx_context_info_t info;
  memset(&info, 0, sizeof info);
  cr_assert_eq(akx_context_info(ctx, &info), AKX_SUCCESS, "%s", akx_last_error());
  return info;
}

Test(mapreduce, workspace_caller_buffer_no_allocation, .timeout = 300) {
  akx_context *ctx = tfx_open();
  char msg[MSG];
  akx_reduce_opts o = akx_reduce_opts_default();
  o.block_size = 256;
  o.items_per_thread = 16;
  o.target_blocks = PASS_BLOCKS;
  const int64_t nmax = 2 * PASS + 1;
  size_t need = ws_query(ctx, AKX_FLOAT32, nmax, AKX_MAP_IDENTITY, AKX_OP_ADD, &o);
  void *ws = tfx_alloc(ctx, need);
  cr_assert_eq(akx_context_set_workspace(ctx, ws, need), AKX_SUCCESS, "%s", akx_last_error());
  akx_context_info_t before = info_of(ctx);
  cr_assert_eq(before.workspace_bytes, (int64_t)need, "info.workspace_bytes %lld, expected %zu",
               (long long)before.workspace_bytes, need);
  const int64_t sizes[] = {1, 300, TILE + 1, nmax, PASS, nmax};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
    for (int w = 0; w < 2; w++) {
      tfx_case c = tuned(AKX_MAP_IDENTITY, AKX_OP_ADD);
      c.where = w ? AKX_DEVICE : AKX_HOST;
      cr_assert(tfx_vector_case(ctx, AKX_FLOAT32, sizes[i], &c, 17u + i, 0, msg, sizeof msg),
                "with a caller workspace: %s", msg);
      akx_context_info_t now = info_of(ctx);
      cr_assert_eq(now.workspace_allocations, before.workspace_allocations,
                   "a call allocated a workspace (%lld -> %lld) with a caller buffer of %zu bytes",
                   (long long)before.workspace_allocations, (long long)now.workspace_allocations,
                   need);
      cr_assert_eq(now.workspace_bytes, (int64_t)need);
    }
  /* back to the context's own buffer */
  cr_assert_eq(akx_context_set_workspace(ctx, NULL, 0), AKX_SUCCESS, "%s", akx_last_error());
  tfx_case c = tuned(AKX_MAP_IDENTITY, AKX_OP_ADD);
  cr_assert(tfx_vector_case(ctx, AKX_FLOAT32, nmax, &c, 5, 0, msg, sizeof msg), "%s", msg);
  tfx_free(ctx, ws);
  tfx_close(ctx);
}

Test(mapreduce, workspace_cached_reused) {
  akx_context *ctx = tfx_open();
  char msg[MSG];
  tfx_case c = tfx_case_make(AKX_MAP_IDENTITY, AKX_OP_ADD);
  /* 50000 float64: 25 blocks of the default tuning (tiles of 2048), partials in the workspace
   * (was 500000: the same path, ten times the elements) */
  cr_assert(tfx_vector_case(ctx, AKX_FLOAT64, 50000, &c, 1, 0, msg, sizeof msg), "%s", msg);
  akx_context_info_t first = info_of(ctx);
  for (int i = 0; i < 4; i++) {
    c.where = i % 2 ? AKX_DEVICE : AKX_HOST;
    cr_assert(tfx_vector_case(ctx, AKX_FLOAT64, 50000 - i * 1000, &c, 2u + (uint64_t)i, 0, msg,
                              sizeof msg),
              "%s", msg);
  }
  akx_context_info_t later = info_of(ctx);
  cr_assert(first.workspace_allocations >= 1, "a two-pass call ran without any workspace?");
  cr_assert_eq(later.workspace_allocations, first.workspace_allocations,
               "the cached workspace was reallocated for same-size calls (%lld -> %lld)",
               (long long)first.workspace_allocations, (long long)later.workspace_allocations);
  /* a call that needs more grows it once (so the counter does count) */
  c.target_blocks = 60000;
  c.block_size = 32;
  c.items_per_thread = 1;
  cr_assert(tfx_vector_case(ctx, AKX_COMPLEX128, 200000, &c, 9, 0, msg, sizeof msg), "%s", msg);
  akx_context_info_t grown = info_of(ctx);
  cr_assert_eq(grown.workspace_allocations, later.workspace_allocations + 1,
               "60000 complex128 partials: allocations %lld -> %lld",
               (long long)later.workspace_allocations, (long long)grown.workspace_allocations);
  cr_assert(grown.workspace_bytes >= 60001 * 16, "workspace_bytes %lld",
            (long long)grown.workspace_bytes);
  tfx_close(ctx);
}

static void too_small(int64_t n, akx_where where) {
  akx_context *ctx = tfx_open();
  akx_reduce_opts o = akx_reduce_opts_default();
  o.block_size = 256;
  o.items_per_thread = 16;
  o.target_blocks = PASS_BLOCKS;
  size_t need = ws_query(ctx, AKX_FLOAT32, n, AKX_MAP_IDENTITY, AKX_OP_ADD, &o);
  cr_assert(need > 0);
  float *h = tfx_xmalloc((size_t)n * 4);
  ref_fill(h, AKX_FLOAT32, n, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_FLOAT32, n, 1, 0);
  float *d = tfx_upload(ctx, h, (size_t)n * 4);
  akx_array v = akx_vector(d, AKX_FLOAT32, n);
  void *ws = tfx_alloc(ctx, need);
  float sentinel = -12345.5f, r = sentinel;
  float *dr = tfx_upload(ctx, &sentinel, sizeof sentinel);
  void *res = where == AKX_HOST ? (void *)&r : (void *)dr;
  cr_assert_eq(akx_context_set_workspace(ctx, ws, need - 1), AKX_SUCCESS, "%s", akx_last_error());
  akx_status s = akx_mapreduce(ctx, &v, AKX_MAP_IDENTITY, AKX_OP_ADD, &o, res, where);
  cr_assert_eq(s, AKX_ERROR_WORKSPACE_TOO_SMALL,
               "n %lld: a workspace of %zu bytes (1 short) gave %s (%s)", (long long)n, need - 1,
               akx_status_string(s), akx_last_error());
  cr_assert(strstr(akx_last_error(), "workspace") != NULL, "the sentence names the workspace: %s",
            akx_last_error());
  cr_assert_eq(akx_synchronize(ctx), AKX_SUCCESS);
  if (where == AKX_DEVICE) tfx_to_host(ctx, &r, dr, sizeof r);
  cr_assert(r == sentinel, "the result was written (%g)", r);
  /* the exact size works */
  cr_assert_eq(akx_context_set_workspace(ctx, ws, need), AKX_SUCCESS, "%s", akx_last_error());
  s = akx_mapreduce(ctx, &v, AKX_MAP_IDENTITY, AKX_OP_ADD, &o, res, where);
  cr_assert_eq(s, AKX_SUCCESS, "with exactly %zu bytes: %s (%s)", need, akx_status_string(s),
               akx_last_error());
  cr_assert_eq(akx_synchronize(ctx), AKX_SUCCESS);
  if (where == AKX_DEVICE) tfx_to_host(ctx, &r, dr, sizeof r);
  akx_array hv = akx_vector(h, AKX_FLOAT32, n);
  ref_expect e = ref_mapreduce(&hv, AKX_MAP_IDENTITY, AKX_OP_ADD, AKX_FLOAT32, NULL, NULL);
  char why[512];
  cr_assert(ref_check(&r, &e, why, sizeof why), "n %lld: %s", (long long)n, why);
  cr_assert_eq(akx_context_set_workspace(ctx, NULL, 0), AKX_SUCCESS);
  tfx_free(ctx, dr);
  tfx_free(ctx, ws);
  tfx_free(ctx, d);
  free(h);
  tfx_close(ctx);
}

Test(mapreduce, workspace_one_byte_short_two_passes) { too_small(PASS + 1, AKX_HOST); }
Test(mapreduce, workspace_one_byte_short_two_passes_device) { too_small(PASS + 1, AKX_DEVICE); }
Test(mapreduce, workspace_one_byte_short_one_tile) { too_small(TILE + 1, AKX_HOST); }
Test(mapreduce, workspace_one_byte_short_small) { too_small(100, AKX_HOST); }

/* ---- the review's defects: each test failed before its fix ------------------------------ */

/* An empty MIN/MAX has no neutral value to return, but with fold the previous value is the
 * answer (Julia's maximum!(r, A; init=false) keeps r): host and device results, and a
 * one-element dst of akx_reduce_dims. */
Test(mapreduce, empty_min_max_with_fold_keeps_the_previous_value) {
  akx_context *ctx = tfx_open();
  float *d = tfx_alloc(ctx, 64);
  float *dr = tfx_alloc(ctx, sizeof(float));
  akx_array v = akx_vector(d, AKX_FLOAT32, 0);
  akx_reduce_opts o = akx_reduce_opts_default();
  o.fold = 1;
  for (int op = AKX_OP_MIN; op <= AKX_OP_MAX; op++) {
    float r = 3.5f;
    akx_status s = akx_mapreduce(ctx, &v, AKX_MAP_IDENTITY, (akx_op)op, &o, &r, AKX_HOST);
    cr_assert_eq(s, AKX_SUCCESS, "op %d, host: %s", op, akx_last_error());
    cr_expect_eq(r, 3.5f, "op %d, host: %g", op, r);
    float prev = -7.25f;
    tfx_to_device(ctx, dr, &prev, sizeof prev);
    s = akx_mapreduce(ctx, &v, AKX_MAP_IDENTITY, (akx_op)op, &o, dr, AKX_DEVICE);
    cr_assert_eq(s, AKX_SUCCESS, "op %d, device: %s", op, akx_last_error());
    tfx_to_host(ctx, &r, dr, sizeof r);
    cr_expect_eq(r, -7.25f, "op %d, device: %g", op, r);
    int64_t one = 1;
    akx_array dst = akx_array_c(dr, AKX_FLOAT32, 1, &one);
    prev = 11.0f;
    tfx_to_device(ctx, dr, &prev, sizeof prev);
    s = akx_reduce_dims(ctx, &dst, &v, AKX_MAP_IDENTITY, (akx_op)op, &o);
    cr_assert_eq(s, AKX_SUCCESS, "op %d, reduce_dims: %s", op, akx_last_error());
    tfx_to_host(ctx, &r, dr, sizeof r);
    cr_expect_eq(r, 11.0f, "op %d, reduce_dims: %g", op, r);
  }
  tfx_free(ctx, dr);
  tfx_free(ctx, d);
  tfx_close(ctx);
}

/* A bool is any byte; nonzero is true (numpy and Julia read a Bool byte the same way when
 * it comes from reinterpreted memory). 2 & 1 must not be false. */
Test(mapreduce, bool_bytes_other_than_one_are_true) {
  akx_context *ctx = tfx_open();
  static const unsigned char all_true[] = {2, 1, 3, 255, 128, 1, 64, 2, 2, 9};
  static const unsigned char one_false[] = {2, 4, 0, 8, 1};
  unsigned char *d = tfx_upload(ctx, all_true, sizeof all_true);
  unsigned char *z = tfx_upload(ctx, one_false, sizeof one_false);
  struct {
    akx_op op;
    akx_map map;
    const unsigned char *data;
    int64_t n;
    long long want;
  } rows[] = {
      {AKX_OP_AND, AKX_MAP_IDENTITY, d, 10, 1}, {AKX_OP_OR, AKX_MAP_IDENTITY, d, 10, 1},
      {AKX_OP_XOR, AKX_MAP_IDENTITY, d, 10, 0}, {AKX_OP_XOR, AKX_MAP_IDENTITY, d, 9, 1},
      {AKX_OP_MIN, AKX_MAP_IDENTITY, d, 10, 1}, {AKX_OP_MAX, AKX_MAP_IDENTITY, d, 10, 1},
      {AKX_OP_ADD, AKX_MAP_IDENTITY, d, 10, 10}, {AKX_OP_ADD, AKX_MAP_NONZERO, d, 10, 10},
      {AKX_OP_MUL, AKX_MAP_IDENTITY, d, 10, 1},  {AKX_OP_AND, AKX_MAP_IDENTITY, z, 5, 0},
      {AKX_OP_ADD, AKX_MAP_IDENTITY, z, 5, 4},   {AKX_OP_MIN, AKX_MAP_IDENTITY, z, 5, 0},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    akx_array v = akx_vector((void *)rows[i].data, AKX_BOOL, rows[i].n);
    for (int w = 0; w < 2; w++) {
      unsigned char res[8];
      memset(res, 0, sizeof res);
      void *dres = tfx_alloc(ctx, 8);
      akx_status s = akx_mapreduce(ctx, &v, rows[i].map, rows[i].op, NULL, w ? dres : res,
                                   w ? AKX_DEVICE : AKX_HOST);
      cr_assert_eq(s, AKX_SUCCESS, "row %zu: %s", i, akx_last_error());
      if (w) tfx_to_host(ctx, res, dres, 8);
      tfx_free(ctx, dres);
      /* ADD and MUL of bool accumulate in int64; the bit ops and MIN/MAX stay bool. */
      long long got;
      if (rows[i].op == AKX_OP_ADD || rows[i].op == AKX_OP_MUL) {
        int64_t x;
        memcpy(&x, res, sizeof x);
        got = x;
      } else {
        got = res[0];
      }
      cr_expect_eq(got, rows[i].want, "row %zu (op %d, %s result): %lld, expected %lld", i,
                   (int)rows[i].op, w ? "device" : "host", got, rows[i].want);
    }
  }
  tfx_free(ctx, z);
  tfx_free(ctx, d);
  tfx_close(ctx);
}

/* Exact where the data allows it: complex components from Pythagorean triples have integer
 * moduli, so ABS and SQUARE sums are integers a float accumulator holds exactly (below 2^24
 * for complex64) and any dropped or doubled element shows, where a tolerance would hide it. */
Test(mapreduce, complex_abs_and_square_are_exact) {
  static const int triples[][3] = {{3, 4, 5}, {5, 12, 13}, {8, 15, 17}, {7, 24, 25}, {20, 21, 29}};
  static const int64_t sizes[] = {1, 2, 31, 33, 255, 4097, 70001};
  akx_context *ctx = tfx_open();
  for (int wide = 0; wide < 2; wide++)
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
      const int64_t n = sizes[si];
      const size_t esz = wide ? 16 : 8;
      unsigned char *h = tfx_xmalloc((size_t)n * esz);
      double abs_sum = 0, square_sum = 0;
      for (int64_t i = 0; i < n; i++) {
        const int *t = triples[i % 5];
        const double re = (i & 1) ? -t[0] : t[0], im = (i & 2) ? -t[1] : t[1];
        abs_sum += t[2];
        square_sum += (double)t[2] * t[2];
        if (wide) {
          memcpy(h + i * esz, &re, 8);
          memcpy(h + i * esz + 8, &im, 8);
        } else {
          const float fr = (float)re, fi = (float)im;
          memcpy(h + i * esz, &fr, 4);
          memcpy(h + i * esz + 4, &fi, 4);
        }
      }
      void *d = tfx_upload(ctx, h, (size_t)n * esz);
      akx_array v = akx_vector(d, wide ? AKX_COMPLEX128 : AKX_COMPLEX64, n);
      for (int m = 0; m < 2; m++) {
        /* Every partial sum of a total below 2^24 (2^53) is an exact float32 (float64). */
        if ((m ? square_sum : abs_sum) >= (wide ? 9007199254740992.0 : 16777216.0)) continue;
        unsigned char r[16];
        akx_status s = akx_mapreduce(ctx, &v, m ? AKX_MAP_SQUARE : AKX_MAP_ABS, AKX_OP_ADD, NULL, r,
                                     AKX_HOST);
        cr_assert_eq(s, AKX_SUCCESS, "%s", akx_last_error());
        double got;
        if (wide) {
          memcpy(&got, r, 8);
        } else {
          float f;
          memcpy(&f, r, 4);
          got = f;
        }
        const double want = m ? square_sum : abs_sum;
        cr_expect_eq(got, want, "%s %s of %lld: %.17g, expected %.17g exactly",
                     wide ? "complex128" : "complex64", m ? "SQUARE" : "ABS", (long long)n, got,
                     want);
      }
      tfx_free(ctx, d);
      free(h);
    }
  tfx_close(ctx);
}
