/* The bad-input matrix of the segmented and keyed family (akx_segmented_reduce,
 * akx_segmented_scan, their workspace-size queries, akx_reduce_by_key, akx_scan_by_key): one
 * table row per call with one thing wrong, as tests/test_bad_input.c's, and the same harness
 * contract (include/akx.h: "on error it returns a status, writes nothing, and akx_last_error()
 * names the argument and the value at fault"):
 *  - the status is the row's (AKX_ERROR_INVALID_ARGUMENT for descriptors, lengths, dims, NULLs
 *    and overlaps; AKX_ERROR_UNSUPPORTED for what the op and dtype rules refuse, and for a
 *    synchronizing call while the stream captures; AKX_ERROR_WORKSPACE_TOO_SMALL);
 *  - the sentence is new (another call failed just before) and contains every string the row
 *    lists (the argument and its bad value);
 *  - nothing written: the outputs (dst, keys_out, values_out: a poisoned device buffer), the host
 *    outputs (*runs, *bytes) and the inputs (src, offsets, keys) keep their bytes;
 *  - nothing launched (the sim's launch counter).
 * Offsets' contents are device data and never refused (tests/test_segmented_reduce.c's garbage
 * offsets); a segmented scan in place (dst the same view as src) is accepted (the last tests). */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <criterion/parameterized.h>
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akx.h"
#include "akx_sim.h"
#include "fixture.h"
#include "internal.h" /* akx__sim_set_capturing */

#define INV AKX_ERROR_INVALID_ARGUMENT
#define UNS AKX_ERROR_UNSUPPORTED
#define WS_SHORT AKX_ERROR_WORKSPACE_TOO_SMALL

/* X(id, function, status, strings the sentence must contain...): matched case-insensitively;
 * "a|b" either; "=N" the number N standing alone; "$BAD" the pointer the row passes as its bad
 * value; "$N" the number the row computed (a workspace size). The world: src 256 float32; 8
 * segments of 32 (offsets int64 or int32, 9 entries); keys 256 int32 in runs of 10; dst 8 (reduce)
 * or 256 (scans) float32; keys_out 256 int32 and values_out 256 float32. */
#define SEG_ROWS(X)                                                                                  \
  /* ---- akx_segmented_reduce ---- */                                                             \
  X(sr_null_ctx, akx_segmented_reduce, INV, "ctx", "NULL")                                         \
  X(sr_null_dst, akx_segmented_reduce, INV, "dst", "NULL")                                         \
  X(sr_null_src, akx_segmented_reduce, INV, "src", "NULL")                                         \
  X(sr_null_offsets, akx_segmented_reduce, INV, "offsets", "NULL")                                 \
  X(sr_dst_2d, akx_segmented_reduce, INV, "dst", "ndim|dims|1-d", "=2")       /* dst {2, 4} */      \
  X(sr_src_2d, akx_segmented_reduce, INV, "src", "ndim|dims|1-d", "=2")       /* src {8, 32} */     \
  X(sr_src_0d, akx_segmented_reduce, INV, "src", "ndim|dims|1-d", "=0")       /* a scalar */        \
  X(sr_offsets_2d, akx_segmented_reduce, INV, "offsets", "ndim|dims|1-d", "=2") /* {3, 3} */        \
  X(sr_offsets_float32, akx_segmented_reduce, INV, "offsets", "float32")      /* not int32/int64 */ \
  X(sr_offsets_uint32, akx_segmented_reduce, INV, "offsets", "uint32")        /* unsigned */        \
  X(sr_offsets_short, akx_segmented_reduce, INV, "offsets", "=8", "=9")       /* 8 for 8 outputs */ \
  X(sr_offsets_long, akx_segmented_reduce, INV, "offsets", "=10")             /* 10 for 8 */        \
  X(sr_offsets_empty, akx_segmented_reduce, INV, "offsets", "=0")  /* 0 entries, dst of 0: needs 1 */ \
  X(sr_dst_overlaps_src, akx_segmented_reduce, INV, "dst", "overlap", "src")  /* dst inside src */  \
  X(sr_dst_overlaps_offsets, akx_segmented_reduce, INV, "dst", "overlap", "offsets") /* on them */  \
  X(sr_op_past_end, akx_segmented_reduce, INV, "op", "=9")                                         \
  X(sr_map_past_end, akx_segmented_reduce, INV, "map", "=4")                                       \
  X(sr_map_negative, akx_segmented_reduce, INV, "map", "=-1")                                      \
  X(sr_xor_float32, akx_segmented_reduce, UNS, "XOR", "float32")                                   \
  X(sr_acc_int8, akx_segmented_reduce, UNS, "opts->acc", "int8")              /* float32 into int8 */ \
  X(sr_argmax_dst_float64, akx_segmented_reduce, UNS, "dst", "float64")       /* int64 or src's */  \
  X(sr_argmax_map_abs, akx_segmented_reduce, INV, "map", "AKX_MAP_IDENTITY")  /* its own map */     \
  X(sr_user_op_unknown, akx_segmented_reduce, INV, "op", "user op")           /* never created */   \
  X(sr_fold_2, akx_segmented_reduce, INV, "opts->fold", "=2")                                      \
  X(sr_block_size_33, akx_segmented_reduce, INV, "opts->block_size", "=33")                        \
  X(sr_dst_zero_stride, akx_segmented_reduce, INV, "dst->strides[0]", "=0")   /* 8 outputs at one */ \
  X(sr_dst_host, akx_segmented_reduce, INV, "dst", "$BAD", "device memory")   /* on the stack */    \
  X(sr_offsets_host, akx_segmented_reduce, INV, "offsets", "$BAD", "device memory")                \
  X(sr_offsets_past_end, akx_segmented_reduce, INV, "offsets", "past the end") /* 9 of 1 left */    \
  X(sr_dst_misaligned, akx_segmented_reduce, INV, "dst->data", "aligned")     /* float32 at +2 */   \
  X(sr_workspace_short, akx_segmented_reduce, WS_SHORT, "workspace", "$N")    /* 1 byte short */    \
  /* ---- akx_segmented_reduce_workspace_size ---- */                                              \
  X(srws_null_ctx, akx_segmented_reduce_workspace_size, INV, "ctx", "NULL")                        \
  X(srws_null_bytes, akx_segmented_reduce_workspace_size, INV, "bytes", "NULL")                    \
  X(srws_null_offsets, akx_segmented_reduce_workspace_size, INV, "offsets", "NULL")                \
  X(srws_offsets_float32, akx_segmented_reduce_workspace_size, INV, "offsets", "float32")          \
  X(srws_offsets_short, akx_segmented_reduce_workspace_size, INV, "offsets", "=8")                 \
  X(srws_dst_2d, akx_segmented_reduce_workspace_size, INV, "dst", "=2")                            \
  X(srws_xor_float32, akx_segmented_reduce_workspace_size, UNS, "XOR", "float32")                  \
  /* ---- akx_segmented_scan ---- */                                                               \
  X(ss_null_ctx, akx_segmented_scan, INV, "ctx", "NULL")                                           \
  X(ss_null_dst, akx_segmented_scan, INV, "dst", "NULL")                                           \
  X(ss_null_src, akx_segmented_scan, INV, "src", "NULL")                                           \
  X(ss_null_offsets, akx_segmented_scan, INV, "offsets", "NULL")                                   \
  X(ss_dst_length, akx_segmented_scan, INV, "dst", "=255")                    /* 255 of 256 */      \
  X(ss_dst_2d, akx_segmented_scan, INV, "dst", "ndim|dims|1-d", "=2")         /* {16, 16} */        \
  X(ss_src_2d, akx_segmented_scan, INV, "src", "ndim|dims|1-d", "=2")                              \
  X(ss_offsets_2d, akx_segmented_scan, INV, "offsets", "ndim|dims|1-d", "=2")                      \
  X(ss_offsets_int16, akx_segmented_scan, INV, "offsets", "int16")                                 \
  X(ss_offsets_empty, akx_segmented_scan, INV, "offsets", "=0")               /* no entry at all */ \
  X(ss_overlap_shifted, akx_segmented_scan, INV, "dst", "overlap", "src")     /* src + 1 element */ \
  X(ss_overlap_reversed, akx_segmented_scan, INV, "dst", "overlap", "src")    /* src backwards */   \
  X(ss_dst_overlaps_offsets, akx_segmented_scan, INV, "dst", "overlap", "offsets")                 \
  X(ss_exclusive_max_no_init, akx_segmented_scan, INV, "opts->init", "MAX")   /* no neutral */      \
  X(ss_exclusive_min_no_init, akx_segmented_scan, INV, "opts->init", "MIN")                        \
  X(ss_exclusive_2, akx_segmented_scan, INV, "opts->exclusive", "=2")                              \
  X(ss_xor_float32, akx_segmented_scan, UNS, "XOR", "float32")                                     \
  X(ss_argmax, akx_segmented_scan, UNS, "ARGMAX", "reduction")                /* reductions only */ \
  X(ss_op_past_end, akx_segmented_scan, INV, "op", "=9")                                           \
  X(ss_acc_int32, akx_segmented_scan, UNS, "opts->acc", "int32")              /* float32 src */     \
  X(ss_items_65, akx_segmented_scan, INV, "opts->items_per_thread", "=65")                         \
  X(ss_dst_zero_stride, akx_segmented_scan, INV, "dst->strides[0]", "=0")                          \
  X(ss_workspace_short, akx_segmented_scan, WS_SHORT, "workspace", "$N")                           \
  /* ---- akx_segmented_scan_workspace_size ---- */                                                \
  X(ssws_null_ctx, akx_segmented_scan_workspace_size, INV, "ctx", "NULL")                          \
  X(ssws_null_bytes, akx_segmented_scan_workspace_size, INV, "bytes", "NULL")                      \
  X(ssws_offsets_float64, akx_segmented_scan_workspace_size, INV, "offsets", "float64")            \
  X(ssws_dst_length, akx_segmented_scan_workspace_size, INV, "dst", "=255")                        \
  X(ssws_exclusive_max_no_init, akx_segmented_scan_workspace_size, INV, "opts->init", "MAX")       \
  /* ---- akx_reduce_by_key ---- */                                                                \
  X(rbk_null_ctx, akx_reduce_by_key, INV, "ctx", "NULL")                                           \
  X(rbk_null_keys_out, akx_reduce_by_key, INV, "keys_out", "NULL")                                 \
  X(rbk_null_values_out, akx_reduce_by_key, INV, "values_out", "NULL")                             \
  X(rbk_null_keys, akx_reduce_by_key, INV, "keys", "NULL")                                         \
  X(rbk_null_values, akx_reduce_by_key, INV, "values", "NULL")                                     \
  X(rbk_null_runs, akx_reduce_by_key, INV, "runs", "NULL")                                         \
  X(rbk_keys_float32, akx_reduce_by_key, INV, "keys", "float32")              /* bool or integers */ \
  X(rbk_keys_complex64, akx_reduce_by_key, INV, "keys", "complex64")                               \
  X(rbk_keys_out_dtype, akx_reduce_by_key, INV, "keys_out", "int64", "int32") /* not keys' dtype */ \
  X(rbk_values_length, akx_reduce_by_key, INV, "values", "=255", "=256")      /* 255 values */      \
  X(rbk_keys_2d, akx_reduce_by_key, INV, "keys", "ndim|dims|1-d", "=2")                            \
  X(rbk_values_2d, akx_reduce_by_key, INV, "values", "ndim|dims|1-d", "=2")                        \
  X(rbk_keys_out_2d, akx_reduce_by_key, INV, "keys_out", "ndim|dims|1-d", "=2")                    \
  X(rbk_values_out_2d, akx_reduce_by_key, INV, "values_out", "ndim|dims|1-d", "=2")                \
  X(rbk_keys_out_overlaps_keys, akx_reduce_by_key, INV, "keys_out", "overlap", "keys")             \
  X(rbk_values_out_overlaps_values, akx_reduce_by_key, INV, "values_out", "overlap", "values")     \
  X(rbk_outputs_overlap, akx_reduce_by_key, INV, "values_out", "keys_out", "overlap") /* each other */ \
  X(rbk_keys_out_zero_stride, akx_reduce_by_key, INV, "keys_out->strides[0]", "=0")                \
  X(rbk_xor_float32, akx_reduce_by_key, UNS, "XOR", "float32")                                     \
  X(rbk_map_past_end, akx_reduce_by_key, INV, "map", "=4")                                         \
  X(rbk_op_negative, akx_reduce_by_key, INV, "op", "=-1")                                          \
  X(rbk_argmax_values_out_float64, akx_reduce_by_key, UNS, "values_out", "float64")                \
  X(rbk_capturing, akx_reduce_by_key, UNS, "capturing")  /* synchronizes: refused in a capture */   \
  /* ---- akx_scan_by_key ---- */                                                                  \
  X(sbk_null_ctx, akx_scan_by_key, INV, "ctx", "NULL")                                             \
  X(sbk_null_dst, akx_scan_by_key, INV, "dst", "NULL")                                             \
  X(sbk_null_keys, akx_scan_by_key, INV, "keys", "NULL")                                           \
  X(sbk_null_src, akx_scan_by_key, INV, "src", "NULL")                                             \
  X(sbk_keys_float64, akx_scan_by_key, INV, "keys", "float64")                                     \
  X(sbk_keys_length, akx_scan_by_key, INV, "keys", "=255", "=256")            /* 255 keys */        \
  X(sbk_dst_length, akx_scan_by_key, INV, "dst", "=255")                                           \
  X(sbk_keys_2d, akx_scan_by_key, INV, "keys", "ndim|dims|1-d", "=2")                              \
  X(sbk_dst_overlaps_keys, akx_scan_by_key, INV, "dst", "overlap", "keys")                         \
  X(sbk_dst_overlaps_src, akx_scan_by_key, INV, "dst", "overlap", "src")      /* src + 1 element */ \
  X(sbk_exclusive_max_no_init, akx_scan_by_key, INV, "opts->init", "MAX")                          \
  X(sbk_argmin, akx_scan_by_key, UNS, "ARGMIN", "reduction")                                       \
  X(sbk_xor_float32, akx_scan_by_key, UNS, "XOR", "float32")

/* ---- the world a row runs in ------------------------------------------------------------------ */

#define SRC_BYTES 4096  /* 1024 float32, a fixed pattern (src, values) */
#define IN_BYTES 2048   /* offsets int64 at 0, int32 at 128, keys int32 at 256 */
#define DOUT_BYTES 4096 /* dst at 0, keys_out at 1024, values_out at 2048 */
#define POISON 0x5Au
#define N 256
#define NSEG 8

typedef struct {
  int64_t runs;
  size_t bytes;
} sb_out;

typedef struct {
  akx_context *ctx;
  unsigned char *src, *in, *dout;
  akx_array v;          /* 256 float32 over src */
  akx_array off64, off32; /* 9 entries {0, 32, ..., 256} */
  akx_array keys;       /* 256 int32, runs of 10 */
  akx_array dst8, dst256, keys_out, values_out;
  sb_out out;
  void *ws;
  const void *bad;
  long long bad_n;
} sb;

typedef struct {
  const char *id;
  const char *fn;
  akx_status (*call)(sb *x);
  akx_status want;
  const char *says[4];
} sb_row;

#define SB_DECLARE(id, fn, want, ...) static akx_status row_##id(sb *x);
SEG_ROWS(SB_DECLARE)
#define SB_ENTRY(id, fn, want, ...) {#id, #fn, row_##id, want, {__VA_ARGS__}},
static const sb_row rows[] = {SEG_ROWS(SB_ENTRY)};
#define N_ROWS (sizeof rows / sizeof rows[0])

static sb g; /* Criterion forks per test: one per row */

static void sb_setup(void) {
  memset(&g, 0, sizeof g);
  unsetenv("AKX_SIM_COUNTERS"); /* counting on: "nothing launched" must mean something */
  const akx_status s = akx_context_create(&g.ctx, AKX_BACKEND_SIM, 0);
  cr_assert(s == AKX_SUCCESS && g.ctx, "akx_context_create(SIM) = %s: %s", akx_status_string(s), akx_last_error());
  g.src = tfx_alloc(g.ctx, SRC_BYTES);
  g.in = tfx_alloc(g.ctx, IN_BYTES);
  g.dout = tfx_alloc(g.ctx, DOUT_BYTES);
  float pattern[SRC_BYTES / 4];
  for (int i = 0; i < SRC_BYTES / 4; i++) pattern[i] = (float)(i % 13) - 6.0f;
  tfx_to_device(g.ctx, g.src, pattern, SRC_BYTES);
  unsigned char in[IN_BYTES];
  memset(in, 0, sizeof in);
  for (int s = 0; s <= NSEG; s++) {
    const int64_t o64 = s * (N / NSEG);
    const int32_t o32 = (int32_t)o64;
    memcpy(in + 8 * s, &o64, 8);
    memcpy(in + 128 + 4 * s, &o32, 4);
  }
  for (int i = 0; i < N; i++) {
    const int32_t k = i / 10;
    memcpy(in + 256 + 4 * i, &k, 4);
  }
  tfx_to_device(g.ctx, g.in, in, IN_BYTES);
  g.v = akx_vector(g.src, AKX_FLOAT32, N);
  g.off64 = akx_vector(g.in, AKX_INT64, NSEG + 1);
  g.off32 = akx_vector(g.in + 128, AKX_INT32, NSEG + 1);
  g.keys = akx_vector(g.in + 256, AKX_INT32, N);
  g.dst8 = akx_vector(g.dout, AKX_FLOAT32, NSEG);
  g.dst256 = akx_vector(g.dout, AKX_FLOAT32, N);
  g.keys_out = akx_vector(g.dout + 1024, AKX_INT32, N);
  g.values_out = akx_vector(g.dout + 2048, AKX_FLOAT32, N);
}

static void sb_teardown(void) {
  if (g.ws) {
    (void)akx_context_set_workspace(g.ctx, NULL, 0);
    (void)akx_free(g.ctx, g.ws);
  }
  (void)akx_free(g.ctx, g.dout);
  (void)akx_free(g.ctx, g.in);
  (void)akx_free(g.ctx, g.src);
  akx_context_destroy(g.ctx);
}

/* ---- the rows -------------------------------------------------------------------------------- */

#if defined(__GNUC__)
#define SB_UNUSED __attribute__((unused))
#else
#define SB_UNUSED
#endif
#define ROW(id) static akx_status row_##id(sb *x SB_UNUSED)
#define ID AKX_MAP_IDENTITY
#define ADD AKX_OP_ADD
#define SR(dst, src, off) akx_segmented_reduce(x->ctx, (dst), (src), (off), ID, ADD, NULL)
#define SR_OP(map, op, o) akx_segmented_reduce(x->ctx, &x->dst8, &x->v, &x->off64, (map), (op), (o))
#define SRWS(dst, src, off) \
  akx_segmented_reduce_workspace_size(x->ctx, (dst), (src), (off), ID, ADD, NULL, &x->out.bytes)
#define SS(dst, src, off) akx_segmented_scan(x->ctx, (dst), (src), (off), ADD, NULL)
#define SS_OP(op, o) akx_segmented_scan(x->ctx, &x->dst256, &x->v, &x->off64, (op), (o))
#define SSWS(dst, src, off, op, o) akx_segmented_scan_workspace_size(x->ctx, (dst), (src), (off), (op), (o), &x->out.bytes)
#define RBK(ko, vo, k, v) akx_reduce_by_key(x->ctx, (ko), (vo), (k), (v), ID, ADD, NULL, &x->out.runs)
#define RBK_OP(map, op) akx_reduce_by_key(x->ctx, &x->keys_out, &x->values_out, &x->keys, &x->v, (map), (op), NULL, &x->out.runs)
#define SBK(d, k, s) akx_scan_by_key(x->ctx, (d), (k), (s), ADD, NULL)
#define SBK_OP(op, o) akx_scan_by_key(x->ctx, &x->dst256, &x->keys, &x->v, (op), (o))

/* A 2-d view of a's first elements. */
static akx_array two_d(const akx_array *a, int64_t rows_, int64_t cols) {
  const int64_t shape[2] = {rows_, cols};
  return akx_array_c(a->data, a->dtype, 2, shape);
}
static akx_array retyped(const akx_array *a, akx_dtype t) {
  akx_array r = *a;
  r.dtype = t;
  return r;
}
static akx_array shortened(const akx_array *a, int64_t n) {
  akx_array r = *a;
  r.shape[0] = n;
  return r;
}
static akx_scan_opts scan_opts(void) { return akx_scan_opts_default(); }
static akx_reduce_opts reduce_opts(void) { return akx_reduce_opts_default(); }

/* A caller's workspace one byte smaller than `need`; $N is its size. */
static void workspace_one_short(sb *x, size_t need) {
  cr_assert(need > 1, "the query says %zu bytes: no shortfall to test", need);
  x->ws = tfx_alloc(x->ctx, need);
  cr_assert_eq(akx_context_set_workspace(x->ctx, x->ws, need - 1), AKX_SUCCESS, "%s", akx_last_error());
  x->bad_n = (long long)(need - 1);
}

/* akx_segmented_reduce */
ROW(sr_null_ctx) { return akx_segmented_reduce(NULL, &x->dst8, &x->v, &x->off64, ID, ADD, NULL); }
ROW(sr_null_dst) { return SR(NULL, &x->v, &x->off64); }
ROW(sr_null_src) { return SR(&x->dst8, NULL, &x->off64); }
ROW(sr_null_offsets) { return SR(&x->dst8, &x->v, NULL); }
ROW(sr_dst_2d) {
  const akx_array d = two_d(&x->dst8, 2, 4);
  return SR(&d, &x->v, &x->off64);
}
ROW(sr_src_2d) {
  const akx_array s = two_d(&x->v, 8, 32);
  return SR(&x->dst8, &s, &x->off64);
}
ROW(sr_src_0d) {
  akx_array s = x->v;
  s.ndim = 0;
  return SR(&x->dst8, &s, &x->off64);
}
ROW(sr_offsets_2d) {
  const akx_array o = two_d(&x->off64, 3, 3);
  return SR(&x->dst8, &x->v, &o);
}
ROW(sr_offsets_float32) {
  const akx_array o = retyped(&x->off32, AKX_FLOAT32);
  return SR(&x->dst8, &x->v, &o);
}
ROW(sr_offsets_uint32) {
  const akx_array o = retyped(&x->off32, AKX_UINT32);
  return SR(&x->dst8, &x->v, &o);
}
ROW(sr_offsets_short) {
  const akx_array o = shortened(&x->off64, NSEG);
  return SR(&x->dst8, &x->v, &o);
}
ROW(sr_offsets_long) {
  const akx_array o = shortened(&x->off64, NSEG + 2);
  return SR(&x->dst8, &x->v, &o);
}
ROW(sr_offsets_empty) {
  const akx_array o = shortened(&x->off64, 0), d = shortened(&x->dst8, 0);
  return SR(&d, &x->v, &o);
}
ROW(sr_dst_overlaps_src) {
  akx_array d = x->dst8;
  d.data = x->src + 64;
  return SR(&d, &x->v, &x->off64);
}
ROW(sr_dst_overlaps_offsets) {
  akx_array d = x->dst8;
  d.data = x->in + 16;
  return SR(&d, &x->v, &x->off64);
}
ROW(sr_op_past_end) { return SR_OP(ID, (akx_op)9, NULL); }
ROW(sr_map_past_end) { return SR_OP((akx_map)4, ADD, NULL); }
ROW(sr_map_negative) { return SR_OP((akx_map)-1, ADD, NULL); }
ROW(sr_xor_float32) { return SR_OP(ID, AKX_OP_XOR, NULL); }
ROW(sr_acc_int8) {
  akx_reduce_opts o = reduce_opts();
  o.acc = AKX_INT8;
  return SR_OP(ID, ADD, &o);
}
ROW(sr_argmax_dst_float64) {
  const akx_array d = akx_vector(x->dout, AKX_FLOAT64, NSEG);
  return akx_segmented_reduce(x->ctx, &d, &x->v, &x->off64, ID, AKX_OP_ARGMAX, NULL);
}
ROW(sr_argmax_map_abs) {
  const akx_array d = akx_vector(x->dout, AKX_INT64, NSEG);
  return akx_segmented_reduce(x->ctx, &d, &x->v, &x->off64, AKX_MAP_ABS, AKX_OP_ARGMAX, NULL);
}
ROW(sr_user_op_unknown) { return SR_OP(ID, (akx_op)(AKX_USER_OP_FIRST + 77), NULL); }
ROW(sr_fold_2) {
  akx_reduce_opts o = reduce_opts();
  o.fold = 2;
  return SR_OP(ID, ADD, &o);
}
ROW(sr_block_size_33) {
  akx_reduce_opts o = reduce_opts();
  o.block_size = 33;
  return SR_OP(ID, ADD, &o);
}
ROW(sr_dst_zero_stride) {
  akx_array d = x->dst8;
  d.strides[0] = 0;
  return SR(&d, &x->v, &x->off64);
}
ROW(sr_dst_host) {
  static float host[NSEG];
  akx_array d = x->dst8;
  d.data = host;
  x->bad = host;
  return SR(&d, &x->v, &x->off64);
}
ROW(sr_offsets_host) {
  static int64_t host[NSEG + 1];
  akx_array o = x->off64;
  o.data = host;
  x->bad = host;
  return SR(&x->dst8, &x->v, &o);
}
ROW(sr_offsets_past_end) {
  akx_array o = x->off64;
  o.data = x->in + IN_BYTES - 8; /* the last entry of the buffer, and 8 past it */
  return SR(&x->dst8, &x->v, &o);
}
ROW(sr_dst_misaligned) {
  akx_array d = x->dst8;
  d.data = x->dout + 2;
  return SR(&d, &x->v, &x->off64);
}
ROW(sr_workspace_short) {
  size_t need = 0;
  cr_assert_eq(SRWS(&x->dst8, &x->v, &x->off64), AKX_SUCCESS, "%s", akx_last_error());
  need = x->out.bytes;
  memset(&x->out.bytes, POISON, sizeof x->out.bytes);
  workspace_one_short(x, need);
  return SR(&x->dst8, &x->v, &x->off64);
}

/* akx_segmented_reduce_workspace_size */
ROW(srws_null_ctx) {
  return akx_segmented_reduce_workspace_size(NULL, &x->dst8, &x->v, &x->off64, ID, ADD, NULL, &x->out.bytes);
}
ROW(srws_null_bytes) {
  return akx_segmented_reduce_workspace_size(x->ctx, &x->dst8, &x->v, &x->off64, ID, ADD, NULL, NULL);
}
ROW(srws_null_offsets) { return SRWS(&x->dst8, &x->v, NULL); }
ROW(srws_offsets_float32) {
  const akx_array o = retyped(&x->off32, AKX_FLOAT32);
  return SRWS(&x->dst8, &x->v, &o);
}
ROW(srws_offsets_short) {
  const akx_array o = shortened(&x->off64, NSEG);
  return SRWS(&x->dst8, &x->v, &o);
}
ROW(srws_dst_2d) {
  const akx_array d = two_d(&x->dst8, 2, 4);
  return SRWS(&d, &x->v, &x->off64);
}
ROW(srws_xor_float32) {
  return akx_segmented_reduce_workspace_size(x->ctx, &x->dst8, &x->v, &x->off64, ID, AKX_OP_XOR, NULL, &x->out.bytes);
}

/* akx_segmented_scan */
ROW(ss_null_ctx) { return akx_segmented_scan(NULL, &x->dst256, &x->v, &x->off64, ADD, NULL); }
ROW(ss_null_dst) { return SS(NULL, &x->v, &x->off64); }
ROW(ss_null_src) { return SS(&x->dst256, NULL, &x->off64); }
ROW(ss_null_offsets) { return SS(&x->dst256, &x->v, NULL); }
ROW(ss_dst_length) {
  const akx_array d = shortened(&x->dst256, N - 1);
  return SS(&d, &x->v, &x->off64);
}
ROW(ss_dst_2d) {
  const akx_array d = two_d(&x->dst256, 16, 16);
  return SS(&d, &x->v, &x->off64);
}
ROW(ss_src_2d) {
  const akx_array s = two_d(&x->v, 16, 16);
  return SS(&x->dst256, &s, &x->off64);
}
ROW(ss_offsets_2d) {
  const akx_array o = two_d(&x->off64, 3, 3);
  return SS(&x->dst256, &x->v, &o);
}
ROW(ss_offsets_int16) {
  const akx_array o = retyped(&x->off32, AKX_INT16);
  return SS(&x->dst256, &x->v, &o);
}
ROW(ss_offsets_empty) {
  const akx_array o = shortened(&x->off64, 0);
  return SS(&x->dst256, &x->v, &o);
}
ROW(ss_overlap_shifted) {
  akx_array d = x->v;
  d.data = x->src + 4;
  return SS(&d, &x->v, &x->off64);
}
ROW(ss_overlap_reversed) { /* src's own elements, walked backwards: not the same view */
  akx_array d = x->v;
  d.data = x->src + 4 * (N - 1);
  d.strides[0] = -1;
  return SS(&d, &x->v, &x->off64);
}
ROW(ss_dst_overlaps_offsets) {
  akx_array d = x->dst256;
  d.data = x->in;
  return SS(&d, &x->v, &x->off64);
}
ROW(ss_exclusive_max_no_init) {
  akx_scan_opts o = scan_opts();
  o.exclusive = 1;
  return SS_OP(AKX_OP_MAX, &o);
}
ROW(ss_exclusive_min_no_init) {
  akx_scan_opts o = scan_opts();
  o.exclusive = 1;
  return SS_OP(AKX_OP_MIN, &o);
}
ROW(ss_exclusive_2) {
  akx_scan_opts o = scan_opts();
  o.exclusive = 2;
  return SS_OP(ADD, &o);
}
ROW(ss_xor_float32) { return SS_OP(AKX_OP_XOR, NULL); }
ROW(ss_argmax) { return SS_OP(AKX_OP_ARGMAX, NULL); }
ROW(ss_op_past_end) { return SS_OP((akx_op)9, NULL); }
ROW(ss_acc_int32) {
  akx_scan_opts o = scan_opts();
  o.acc = AKX_INT32;
  return SS_OP(ADD, &o);
}
ROW(ss_items_65) {
  akx_scan_opts o = scan_opts();
  o.items_per_thread = 65;
  return SS_OP(ADD, &o);
}
ROW(ss_dst_zero_stride) {
  akx_array d = x->dst256;
  d.strides[0] = 0;
  return SS(&d, &x->v, &x->off64);
}
ROW(ss_workspace_short) {
  cr_assert_eq(SSWS(&x->dst256, &x->v, &x->off64, ADD, NULL), AKX_SUCCESS, "%s", akx_last_error());
  const size_t need = x->out.bytes;
  memset(&x->out.bytes, POISON, sizeof x->out.bytes);
  workspace_one_short(x, need);
  return SS(&x->dst256, &x->v, &x->off64);
}

/* akx_segmented_scan_workspace_size */
ROW(ssws_null_ctx) {
  return akx_segmented_scan_workspace_size(NULL, &x->dst256, &x->v, &x->off64, ADD, NULL, &x->out.bytes);
}
ROW(ssws_null_bytes) { return akx_segmented_scan_workspace_size(x->ctx, &x->dst256, &x->v, &x->off64, ADD, NULL, NULL); }
ROW(ssws_offsets_float64) {
  const akx_array o = retyped(&x->off64, AKX_FLOAT64);
  return SSWS(&x->dst256, &x->v, &o, ADD, NULL);
}
ROW(ssws_dst_length) {
  const akx_array d = shortened(&x->dst256, N - 1);
  return SSWS(&d, &x->v, &x->off64, ADD, NULL);
}
ROW(ssws_exclusive_max_no_init) {
  akx_scan_opts o = scan_opts();
  o.exclusive = 1;
  return SSWS(&x->dst256, &x->v, &x->off64, AKX_OP_MAX, &o);
}

/* akx_reduce_by_key */
ROW(rbk_null_ctx) {
  return akx_reduce_by_key(NULL, &x->keys_out, &x->values_out, &x->keys, &x->v, ID, ADD, NULL, &x->out.runs);
}
ROW(rbk_null_keys_out) { return RBK(NULL, &x->values_out, &x->keys, &x->v); }
ROW(rbk_null_values_out) { return RBK(&x->keys_out, NULL, &x->keys, &x->v); }
ROW(rbk_null_keys) { return RBK(&x->keys_out, &x->values_out, NULL, &x->v); }
ROW(rbk_null_values) { return RBK(&x->keys_out, &x->values_out, &x->keys, NULL); }
ROW(rbk_null_runs) {
  return akx_reduce_by_key(x->ctx, &x->keys_out, &x->values_out, &x->keys, &x->v, ID, ADD, NULL, NULL);
}
ROW(rbk_keys_float32) {
  const akx_array k = retyped(&x->keys, AKX_FLOAT32), ko = retyped(&x->keys_out, AKX_FLOAT32);
  return RBK(&ko, &x->values_out, &k, &x->v);
}
ROW(rbk_keys_complex64) {
  akx_array k = retyped(&x->keys, AKX_COMPLEX64), ko = retyped(&x->keys_out, AKX_COMPLEX64);
  k.shape[0] = ko.shape[0] = N / 2;
  const akx_array v = shortened(&x->v, N / 2);
  return RBK(&ko, &x->values_out, &k, &v);
}
ROW(rbk_keys_out_dtype) {
  const akx_array ko = akx_vector(x->dout + 1024, AKX_INT64, N / 2);
  return RBK(&ko, &x->values_out, &x->keys, &x->v);
}
ROW(rbk_values_length) {
  const akx_array v = shortened(&x->v, N - 1);
  return RBK(&x->keys_out, &x->values_out, &x->keys, &v);
}
ROW(rbk_keys_2d) {
  const akx_array k = two_d(&x->keys, 16, 16);
  return RBK(&x->keys_out, &x->values_out, &k, &x->v);
}
ROW(rbk_values_2d) {
  const akx_array v = two_d(&x->v, 16, 16);
  return RBK(&x->keys_out, &x->values_out, &x->keys, &v);
}
ROW(rbk_keys_out_2d) {
  const akx_array ko = two_d(&x->keys_out, 16, 16);
  return RBK(&ko, &x->values_out, &x->keys, &x->v);
}
ROW(rbk_values_out_2d) {
  const akx_array vo = two_d(&x->values_out, 16, 16);
  return RBK(&x->keys_out, &vo, &x->keys, &x->v);
}
ROW(rbk_keys_out_overlaps_keys) {
  akx_array ko = x->keys_out;
  ko.data = x->in + 256 + 40;
  ko.shape[0] = 64;
  return RBK(&ko, &x->values_out, &x->keys, &x->v);
}
ROW(rbk_values_out_overlaps_values) {
  akx_array vo = x->values_out;
  vo.data = x->src + 400;
  vo.shape[0] = 64;
  return RBK(&x->keys_out, &vo, &x->keys, &x->v);
}
ROW(rbk_outputs_overlap) {
  akx_array vo = x->values_out;
  vo.data = x->dout + 1024 + 512; /* inside keys_out */
  return RBK(&x->keys_out, &vo, &x->keys, &x->v);
}
ROW(rbk_keys_out_zero_stride) {
  akx_array ko = x->keys_out;
  ko.strides[0] = 0;
  return RBK(&ko, &x->values_out, &x->keys, &x->v);
}
ROW(rbk_xor_float32) { return RBK_OP(ID, AKX_OP_XOR); }
ROW(rbk_map_past_end) { return RBK_OP((akx_map)4, ADD); }
ROW(rbk_op_negative) { return RBK_OP(ID, (akx_op)-1); }
ROW(rbk_argmax_values_out_float64) {
  const akx_array vo = akx_vector(x->dout + 2048, AKX_FLOAT64, 64);
  return akx_reduce_by_key(x->ctx, &x->keys_out, &vo, &x->keys, &x->v, ID, AKX_OP_ARGMAX, NULL, &x->out.runs);
}
ROW(rbk_capturing) {
  cr_assert_eq(akx__sim_set_capturing(x->ctx, 1), AKX_SUCCESS, "%s", akx_last_error());
  const akx_status s = RBK(&x->keys_out, &x->values_out, &x->keys, &x->v);
  char said[1024];
  snprintf(said, sizeof said, "%s", akx_last_error());
  cr_assert_eq(akx__sim_set_capturing(x->ctx, 0), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_str_eq(akx_last_error(), said, "ending the capture changed the sentence");
  return s;
}

/* akx_scan_by_key */
ROW(sbk_null_ctx) { return akx_scan_by_key(NULL, &x->dst256, &x->keys, &x->v, ADD, NULL); }
ROW(sbk_null_dst) { return SBK(NULL, &x->keys, &x->v); }
ROW(sbk_null_keys) { return SBK(&x->dst256, NULL, &x->v); }
ROW(sbk_null_src) { return SBK(&x->dst256, &x->keys, NULL); }
ROW(sbk_keys_float64) {
  akx_array k = retyped(&x->keys, AKX_FLOAT64);
  k.shape[0] = N; /* 2 KiB of the in buffer from byte 256: within it */
  k.data = x->in;
  return SBK(&x->dst256, &k, &x->v);
}
ROW(sbk_keys_length) {
  const akx_array k = shortened(&x->keys, N - 1);
  return SBK(&x->dst256, &k, &x->v);
}
ROW(sbk_dst_length) {
  const akx_array d = shortened(&x->dst256, N - 1);
  return SBK(&d, &x->keys, &x->v);
}
ROW(sbk_keys_2d) {
  const akx_array k = two_d(&x->keys, 16, 16);
  return SBK(&x->dst256, &k, &x->v);
}
ROW(sbk_dst_overlaps_keys) {
  akx_array d = x->dst256;
  d.data = x->in + 256;
  return SBK(&d, &x->keys, &x->v);
}
ROW(sbk_dst_overlaps_src) {
  akx_array d = x->v;
  d.data = x->src + 4;
  return SBK(&d, &x->keys, &x->v);
}
ROW(sbk_exclusive_max_no_init) {
  akx_scan_opts o = scan_opts();
  o.exclusive = 1;
  return SBK_OP(AKX_OP_MAX, &o);
}
ROW(sbk_argmin) { return SBK_OP(AKX_OP_ARGMIN, NULL); }
ROW(sbk_xor_float32) { return SBK_OP(AKX_OP_XOR, NULL); }

/* ---- the harness (tests/test_bad_input.c's rules) ----------------------------------------------- */

static void lower(const char *s, char *out, size_t len) {
  size_t i = 0;
  for (; s[i] && i + 1 < len; i++) out[i] = (char)tolower((unsigned char)s[i]);
  out[i] = '\0';
}

/* `num` in s, not part of a longer number, a pointer or an identifier. */
static int has_number(const char *s, const char *num) {
  const size_t n = strlen(num);
  for (const char *p = strstr(s, num); p; p = strstr(p + 1, num)) {
    const char before = p == s ? ' ' : p[-1], after = p[n];
    if (isalnum((unsigned char)before) || before == '-' || before == '.' || before == '_') continue;
    if (isalnum((unsigned char)after) || after == '.' || after == '_') continue;
    return 1;
  }
  return 0;
}

static int says_one(const char *sentence, const char *alt, size_t len, const sb *x) {
  char want[128], buf[128];
  snprintf(want, sizeof want, "%.*s", (int)len, alt);
  if (!strcmp(want, "$BAD")) {
    snprintf(buf, sizeof buf, "%p", x->bad);
    lower(buf, want, sizeof want);
    return strstr(sentence, want) != NULL;
  }
  if (!strcmp(want, "$N")) {
    snprintf(want, sizeof want, "%lld", x->bad_n);
    return has_number(sentence, want);
  }
  if (want[0] == '=') return has_number(sentence, want + 1);
  lower(want, buf, sizeof buf);
  return strstr(sentence, buf) != NULL;
}

static int says(const char *sentence, const char *spec, const sb *x) {
  char low[1024];
  lower(sentence, low, sizeof low);
  for (const char *alt = spec;;) {
    const char *bar = strchr(alt, '|');
    const size_t len = bar ? (size_t)(bar - alt) : strlen(alt);
    if (says_one(low, alt, len, x)) return 1;
    if (!bar) return 0;
    alt = bar + 1;
  }
}

static uint64_t launches(akx_context *ctx) {
  akx_sim_kernel_counters total;
  memset(&total, 0, sizeof total);
  cr_assert_eq(akx_sim_counters_get(ctx, &total, NULL, 0, NULL), AKX_SUCCESS, "%s", akx_last_error());
  return total.launches;
}

static void run_row(const sb_row *r) {
  sb *x = &g;
  static unsigned char dout_before[DOUT_BYTES], dout_after[DOUT_BYTES];
  static unsigned char src_before[SRC_BYTES], src_after[SRC_BYTES], in_before[IN_BYTES], in_after[IN_BYTES];
  memset(&x->out, POISON, sizeof x->out);
  sb_out host_before;
  memcpy(&host_before, &x->out, sizeof host_before);
  memset(dout_before, POISON, sizeof dout_before);
  tfx_to_device(x->ctx, x->dout, dout_before, DOUT_BYTES);
  tfx_to_host(x->ctx, src_before, x->src, SRC_BYTES);
  tfx_to_host(x->ctx, in_before, x->in, IN_BYTES);

  /* a stale sentence: another call's failure just before */
  const akx_status stale_status = akx_memcpy(x->ctx, x->dout, x->src, 8, (akx_copy_kind)4242);
  cr_assert_eq(stale_status, AKX_ERROR_INVALID_ARGUMENT, "[%s] the stale call: %s", r->id, akx_status_string(stale_status));
  char stale[1024];
  snprintf(stale, sizeof stale, "%s", akx_last_error());
  cr_assert_eq(akx_sim_counters_reset(x->ctx), AKX_SUCCESS, "%s", akx_last_error());

  const akx_status s = r->call(x);
  char said[1024];
  snprintf(said, sizeof said, "%s", akx_last_error());
  cr_log_info("[%s] %s: %s \"%s\"", r->id, r->fn, akx_status_string(s), said);
  cr_expect_eq(s, r->want, "[%s] %s: %s, expected %s (\"%s\")", r->id, r->fn, akx_status_string(s),
               akx_status_string(r->want), said);
  cr_expect(strcmp(said, stale) != 0, "[%s] %s left the stale sentence \"%s\"", r->id, r->fn, said);
  for (int i = 0; i < 4 && r->says[i]; i++)
    cr_expect(says(said, r->says[i], x), "[%s] %s: the sentence lacks \"%s\": \"%s\"", r->id, r->fn, r->says[i], said);

  const uint64_t l = launches(x->ctx);
  cr_expect_eq(l, 0, "[%s] %s launched %llu kernel(s)", r->id, r->fn, (unsigned long long)l);

  (void)akx_synchronize(x->ctx);
  cr_expect(memcmp(&x->out, &host_before, sizeof host_before) == 0, "[%s] %s wrote a host output (*runs or *bytes)",
            r->id, r->fn);
  tfx_to_host(x->ctx, dout_after, x->dout, DOUT_BYTES);
  for (size_t i = 0; i < DOUT_BYTES; i++)
    if (dout_after[i] != dout_before[i]) {
      cr_expect_fail("[%s] %s wrote output byte %zu (dst 0..1023, keys_out 1024..2047, values_out 2048..3071)", r->id,
                     r->fn, i);
      break;
    }
  tfx_to_host(x->ctx, src_after, x->src, SRC_BYTES);
  tfx_to_host(x->ctx, in_after, x->in, IN_BYTES);
  cr_expect(memcmp(src_after, src_before, SRC_BYTES) == 0, "[%s] %s wrote into src", r->id, r->fn);
  cr_expect(memcmp(in_after, in_before, IN_BYTES) == 0, "[%s] %s wrote into the offsets or keys", r->id, r->fn);
}

typedef struct {
  size_t index;
} sb_param;

ParameterizedTestParameters(segmented_bad_input, row) {
  static sb_param params[N_ROWS];
  for (size_t i = 0; i < N_ROWS; i++) params[i].index = i;
  return cr_make_param_array(sb_param, params, N_ROWS);
}

ParameterizedTest(sb_param *p, segmented_bad_input, row, .init = sb_setup, .fini = sb_teardown, .timeout = 120) {
  cr_assert_lt(p->index, N_ROWS);
  run_row(&rows[p->index]);
}

/* Every function of the family has rows, and the ids are unique. */
Test(segmented_bad_input, matrix, .timeout = 120) {
  static const char *const family[] = {"akx_segmented_reduce", "akx_segmented_reduce_workspace_size",
                                       "akx_segmented_scan", "akx_segmented_scan_workspace_size", "akx_reduce_by_key",
                                       "akx_scan_by_key"};
  for (size_t f = 0; f < sizeof family / sizeof family[0]; f++) {
    int n = 0;
    for (size_t i = 0; i < N_ROWS; i++) n += !strcmp(rows[i].fn, family[f]);
    cr_expect_geq(n, 5, "%s has %d rows", family[f], n);
  }
  for (size_t i = 0; i < N_ROWS; i++)
    for (size_t j = 0; j < i; j++) cr_expect_str_neq(rows[i].id, rows[j].id, "two rows are called %s", rows[i].id);
}

/* ---- what is accepted: the checks above can fail ------------------------------------------------- */

/* Valid calls of each function through the same world launch and write, so "nothing launched"
 * and "nothing written" mean something; a segmented scan in place (dst the same view as src) is
 * accepted and right; an offsets entry that decreases or leaves [0, n] is not refused (device
 * data). */
Test(segmented_bad_input, valid_calls_are_seen, .init = sb_setup, .fini = sb_teardown, .timeout = 120) {
  sb *x = &g;
  unsigned char poison[DOUT_BYTES], after[DOUT_BYTES];
  memset(poison, POISON, sizeof poison);
  for (int f = 0; f < 4; f++) {
    tfx_to_device(x->ctx, x->dout, poison, DOUT_BYTES);
    cr_assert_eq(akx_sim_counters_reset(x->ctx), AKX_SUCCESS);
    akx_status s;
    int64_t runs = -1;
    switch (f) {
      case 0: s = SR(&x->dst8, &x->v, &x->off32); break;
      case 1: s = SS(&x->dst256, &x->v, &x->off64); break;
      case 2: s = akx_reduce_by_key(x->ctx, &x->keys_out, &x->values_out, &x->keys, &x->v, ID, ADD, NULL, &runs); break;
      default: s = SBK(&x->dst256, &x->keys, &x->v); break;
    }
    cr_assert_eq(s, AKX_SUCCESS, "call %d: %s (%s)", f, akx_status_string(s), akx_last_error());
    cr_expect_gt(launches(x->ctx), 0, "valid call %d launched nothing", f);
    if (f == 2) cr_expect_eq(runs, (N + 9) / 10, "reduce_by_key: %lld runs of 10 in %d keys", (long long)runs, N);
    tfx_to_host(x->ctx, after, x->dout, DOUT_BYTES);
    cr_expect(memcmp(after, poison, DOUT_BYTES) != 0, "valid call %d wrote nothing", f);
  }
}

Test(segmented_bad_input, segmented_scan_in_place_is_accepted, .init = sb_setup, .fini = sb_teardown, .timeout = 120) {
  sb *x = &g;
  float before[N], got[N];
  tfx_to_host(x->ctx, before, x->src, sizeof before);
  akx_scan_opts o = akx_scan_opts_default();
  o.exclusive = 1;
  const akx_status s = akx_segmented_scan(x->ctx, &x->v, &x->v, &x->off32, ADD, &o);
  cr_assert_eq(s, AKX_SUCCESS, "in place: %s (%s)", akx_status_string(s), akx_last_error());
  tfx_to_host(x->ctx, got, x->src, sizeof got);
  for (int seg = 0; seg < NSEG; seg++) {
    float run = 0;
    for (int i = seg * (N / NSEG); i < (seg + 1) * (N / NSEG); i++) {
      cr_assert_eq(got[i], run, "in place, exclusive: element %d is %g, expected %g", i, got[i], run);
      run += before[i];
    }
  }
  /* The scan by key in place too (dst and src the same view: akx_scan's rule). */
  tfx_to_device(x->ctx, x->src, before, sizeof before);
  const akx_status s2 = akx_scan_by_key(x->ctx, &x->v, &x->keys, &x->v, ADD, NULL);
  cr_assert_eq(s2, AKX_SUCCESS, "scan_by_key in place: %s (%s)", akx_status_string(s2), akx_last_error());
  tfx_to_host(x->ctx, got, x->src, sizeof got);
  float run = 0;
  for (int i = 0; i < N; i++) {
    if (i % 10 == 0) run = 0;
    run += before[i];
    cr_assert_eq(got[i], run, "scan_by_key in place: element %d is %g, expected %g", i, got[i], run);
  }
}

/* Offsets are device data: entries out of order or out of range are not refused up front (the
 * kernels clamp them; tests/test_segmented_reduce.c checks what comes out). */
Test(segmented_bad_input, offsets_contents_are_never_refused, .init = sb_setup, .fini = sb_teardown, .timeout = 120) {
  sb *x = &g;
  const int64_t garbage[NSEG + 1] = {300, -5, 100, 50, INT64_MAX, INT64_MIN, 7, 7, 1};
  tfx_to_device(x->ctx, x->in, garbage, sizeof garbage);
  akx_status s = SR(&x->dst8, &x->v, &x->off64);
  cr_assert_eq(s, AKX_SUCCESS, "segmented reduce over garbage offsets: %s (%s)", akx_status_string(s), akx_last_error());
  s = SS(&x->dst256, &x->v, &x->off64);
  cr_assert_eq(s, AKX_SUCCESS, "segmented scan over garbage offsets: %s (%s)", akx_status_string(s), akx_last_error());
  cr_assert_eq(akx_synchronize(x->ctx), AKX_SUCCESS, "%s", akx_last_error());
}
