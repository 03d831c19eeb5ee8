/* The bad-input matrix: every public function of akx.h, akx_layer.h and akx_sim.h
 * against malformed arguments, one table row per case.
 *
 * Each row is one call with one thing wrong. The harness (run_row, below the table) checks,
 * for every row, the contract of include/akx.h ("on error it returns a status, writes nothing,
 * and akx_last_error() names the argument and the value at fault"):
 *  - the status is the row's;
 *  - the sentence is new (a different call failed just before, leaving a stale sentence) and
 *    contains every string the row lists (the argument and its bad value);
 *  - nothing written: every output of every row (host out-params, the device result, dst and
 *    indices buffers, and the source itself) holds a poison pattern before the call and the
 *    same bytes after it;
 *  - nothing launched: the sim's launch counter, reset before the call, is still 0.
 * Functions without a status (akx_status_string, akx_dtype_size, ...) are PURE rows: they
 * return their documented value and leave the stale sentence as it was (errno-like).
 *
 * Each row runs in its own process (a Criterion parameterized test) with its own sim context
 * (the fixture bx_setup), so a row that the library wrongly runs cannot disturb the next. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <criterion/parameterized.h>
#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akx.h"
#include "akx_layer.h"
#include "akx_dlpack.h"
#include "akx_sim.h"
#include "fixture.h"
#include "internal.h" /* akx__sim_set_capturing */

/* ---- the table --------------------------------------------------------------------------------
 * X(id, function under test, expected status, strings the sentence must contain...)
 * The strings are matched case-insensitively, all of them; "a|b" accepts either; "=N" is the
 * number N standing alone (not a digit of a longer number or of a pointer); "$BAD" is the
 * pointer the row passes as its bad value (printed with %p); "$N" the number the row computed
 * (a workspace size). PURE: a function without a status (see above); NONE: no string. */
#define INV AKX_ERROR_INVALID_ARGUMENT
#define UNS AKX_ERROR_UNSUPPORTED
#define OOM AKX_ERROR_OUT_OF_MEMORY
#define WS_SHORT AKX_ERROR_WORKSPACE_TOO_SMALL
#define PURE (-1)
#define NONE NULL

#define BAD_INPUT_ROWS(X)                                                                          \
  /* ---- status, dtypes, array helpers ---- */                                                   \
  X(status_string_past_end, akx_status_string, PURE, NONE)   /* 10: one past the last status */  \
  X(status_string_negative, akx_status_string, PURE, NONE)   /* -1 is no status */               \
  X(kernel_cache_counters_null, akx_kernel_cache_counters, PURE, NONE) /* out NULL: a no-op */    \
  X(set_last_error_null, akx_set_last_error, PURE, NONE)     /* NULL sentence: "" */             \
  X(set_last_error_long, akx_set_last_error, PURE, NONE)     /* 2000 bytes: cut to 1023 */       \
  X(own_accumulator_not_an_op, akx_op_has_own_accumulator, PURE, NONE) /* 9..1023, -1: none */   \
  X(memory_order_bad, akx_array_memory_order, PURE, NONE)    /* NULL, ndim 9: nothing written */ \
  X(dtype_size_past_end, akx_dtype_size, PURE, NONE)         /* 15 = AKX_DTYPE_COUNT */          \
  X(dtype_size_auto, akx_dtype_size, PURE, NONE)             /* AUTO is not an element type */   \
  X(dtype_name_past_end, akx_dtype_name, PURE, NONE)         /* 15 = AKX_DTYPE_COUNT */          \
  X(dtype_name_negative, akx_dtype_name, PURE, NONE)         /* -2: below AUTO */                \
  X(vector_negative_n, akx_vector, INV, "src->shape[0]", "=-1")  /* n = -1 */                    \
  X(array_c_ndim_negative, akx_array_c, INV, "src->ndim", "=-1") /* ndim -1 */                   \
  X(array_c_ndim_9, akx_array_c, INV, "src->ndim", "=9")         /* ndim 9 > AKX_MAX_DIMS */     \
  X(array_c_null_shape, akx_array_c, INV, "src->ndim|src->shape") /* ndim 2, shape NULL */       \
  X(array_f_ndim_9, akx_array_f, INV, "src->ndim", "=9")         /* ndim 9 > AKX_MAX_DIMS */     \
  X(array_f_null_shape, akx_array_f, INV, "src->ndim|src->shape") /* ndim 2, shape NULL */       \
  /* ---- contexts ---- */                                                                        \
  X(create_null_out, akx_context_create, INV, "ctx", "NULL")     /* nowhere to put the ctx */    \
  X(create_backend_past_end, akx_context_create, INV, "backend", "=3") /* backend 3 */           \
  X(create_backend_negative, akx_context_create, INV, "backend", "=-1") /* backend -1 */         \
  X(create_device_negative, akx_context_create, INV, "device", "=-1")  /* device -1 */           \
  X(create_sim_device_1, akx_context_create, INV, "device", "=1") /* the sim has device 0 only */ \
  X(destroy_null, akx_context_destroy, PURE, NONE)               /* NULL: documented no-op */    \
  X(set_stream_null_ctx, akx_context_set_stream, INV, "ctx", "NULL")  /* ctx NULL */             \
  X(set_stream_garbage, akx_context_set_stream, INV, "stream", "$BAD") /* 0xdeadbeef on the sim */ \
  X(set_workspace_null_ctx, akx_context_set_workspace, INV, "ctx", "NULL") /* ctx NULL */        \
  X(set_workspace_null_ptr, akx_context_set_workspace, INV, "ptr", "NULL", "=4096") /* NULL, 4096 */ \
  X(set_workspace_zero_bytes, akx_context_set_workspace, INV, "bytes", "=0") /* a buffer of 0 */ \
  X(set_workspace_misaligned, akx_context_set_workspace, INV, "ptr", "$BAD", "aligned") /* +8 */ \
  X(set_workspace_host, akx_context_set_workspace, INV, "ptr", "$BAD", "device memory") /* stack */ \
  X(set_workspace_past_end, akx_context_set_workspace, INV, "ptr", "=1048576") /* 1 MiB of 1 KiB */ \
  X(set_workspace_shared, akx_context_set_workspace, INV, "ptr", "$BAD", "another context")     \
    /* the caller workspace another live context holds */                                       \
  X(set_workspace_capturing, akx_context_set_workspace, UNS, "capturing", "akx_context_set_workspace") \
    /* a valid buffer, the stream capturing a graph (it would synchronize) */                   \
  X(set_stream_capturing, akx_context_set_stream, UNS, "capturing", "akx_context_set_stream")   \
    /* NULL (the sim's only stream) while the current one captures */                           \
  X(synchronize_capturing, akx_synchronize, UNS, "capturing", "akx_synchronize") /* capturing */ \
  X(synchronize_null_ctx, akx_synchronize, INV, "ctx", "NULL")   /* ctx NULL */                  \
  X(backend_null_ctx, akx_context_backend, PURE, NONE)           /* ctx NULL: AUTO */            \
  X(info_null_ctx, akx_context_info, INV, "ctx", "NULL")         /* ctx NULL */                  \
  X(info_null_info, akx_context_info, INV, "info", "NULL")       /* info NULL */                 \
  /* ---- memory ---- */                                                                          \
  X(malloc_null_ctx, akx_malloc, INV, "ctx", "NULL")             /* ctx NULL */                  \
  X(malloc_null_ptr, akx_malloc, INV, "ptr", "NULL")             /* nowhere to put the pointer */ \
  X(malloc_huge, akx_malloc, OOM, "=18446744073709551615")       /* SIZE_MAX bytes */            \
  X(free_null_ctx, akx_free, INV, "ctx", "NULL")                 /* ctx NULL */                  \
  X(free_host_pointer, akx_free, INV, "ptr", "$BAD")             /* a stack address */           \
  X(free_interior, akx_free, INV, "ptr", "$BAD")                 /* 4 bytes into an allocation */ \
  X(free_twice, akx_free, INV, "ptr", "$BAD")                    /* already freed */             \
  X(memcpy_null_ctx, akx_memcpy, INV, "ctx", "NULL")             /* ctx NULL */                  \
  X(memcpy_kind_past_end, akx_memcpy, INV, "kind", "=3")         /* copy kind 3 */               \
  X(memcpy_kind_negative, akx_memcpy, INV, "kind", "=-1")        /* copy kind -1 */              \
  X(memcpy_null_dst, akx_memcpy, INV, "dst", "NULL")             /* dst NULL, 8 bytes */         \
  X(memcpy_null_src, akx_memcpy, INV, "src", "NULL")             /* src NULL, 8 bytes */         \
  X(memcpy_src_host, akx_memcpy, INV, "src", "$BAD", "device memory") /* D2H from the stack */   \
  X(memcpy_dst_host, akx_memcpy, INV, "dst", "$BAD", "device memory") /* H2D into host memory */ \
  X(memcpy_past_end, akx_memcpy, INV, "src", "=8192")            /* D2D 8 KiB of a 4 KiB src */  \
  X(memcpy_capturing, akx_memcpy, UNS, "capturing", "akx_memcpy") /* a valid D2H, capturing */   \
  /* ---- akx_mapreduce: pointers ---- */                                                         \
  X(mr_null_ctx, akx_mapreduce, INV, "ctx", "NULL")              /* ctx NULL */                  \
  X(mr_null_src, akx_mapreduce, INV, "src", "NULL")              /* src NULL */                  \
  X(mr_null_result_host, akx_mapreduce, INV, "result", "NULL")   /* result NULL, where HOST */   \
  X(mr_null_result_device, akx_mapreduce, INV, "result", "NULL") /* result NULL, where DEVICE */ \
  X(mr_null_data, akx_mapreduce, INV, "src->data", "NULL")       /* data NULL, 5 elements */     \
  /* ---- akx_mapreduce: ndim, shapes, strides ---- */                                           \
  X(mr_ndim_int32_max, akx_mapreduce, INV, "src->ndim", "=2147483647")  /* ndim INT32_MAX */     \
  X(mr_shape_negative, akx_mapreduce, INV, "src->shape[1]", "=-3")      /* shape {4, -3} */      \
  X(mr_count_overflow_2d, akx_mapreduce, INV, "src", "shape[1]", "=4294967296") /* 2^32 x 2^32 */ \
  X(mr_count_overflow_3d, akx_mapreduce, INV, "src", "shape[2]", "=4194304") /* 2^21 2^21 2^22 */ \
  X(mr_stride_2p62, akx_mapreduce, INV, "src->strides[0]", "=4611686018427387904") /* 2^62 x 3 */ \
  X(mr_stride_half_max, akx_mapreduce, INV, "src->strides[0]", "=4611686018427387903")           \
    /* INT64_MAX/2 x 3 float32: element offsets fit, byte offsets do not */                      \
  X(mr_stride_max_int8, akx_mapreduce, INV, "src->strides[0]", "=9223372036854775807")           \
    /* INT64_MAX x 2 int8: the last byte offset is INT64_MAX, one past it is not */              \
  X(mr_stride_min_int8, akx_mapreduce, INV, "src->strides[0]", "=-9223372036854775808")          \
    /* INT64_MIN x 2 int8: the byte extent is 2^63 + 1 */                                        \
  X(mr_stride_min_shape3, akx_mapreduce, INV, "src->strides[0]", "=-9223372036854775808")        \
    /* INT64_MIN x 3 float32: the element offset itself overflows */                             \
  X(mr_strides_sum, akx_mapreduce, INV, "src->strides", "=2305843009213693952")                  \
    /* {2^61, 2^61} x {3, 3}: each span fits, their sum does not */                              \
  X(mr_strides_opposite_int8, akx_mapreduce, INV, "src->strides", "4611686018427387903")         \
    /* {2^62-1, -(2^62-1)} x {3, 3} int8: each side fits, the extent is 2^64 - 3 bytes */        \
  /* ---- akx_mapreduce: enums, ops, options ---- */                                             \
  X(mr_dtype_past_end, akx_mapreduce, INV, "src->dtype", "=15")  /* dtype 15 */                  \
  X(mr_dtype_auto, akx_mapreduce, INV, "src->dtype", "=-1")      /* AUTO is no element type */   \
  X(mr_map_past_end, akx_mapreduce, INV, "map", "=4")            /* map 4 */                     \
  X(mr_map_negative, akx_mapreduce, INV, "map", "=-1")           /* map -1 */                    \
  X(mr_op_past_end, akx_mapreduce, INV, "op", "=9")              /* op 9 */                      \
  X(mr_op_negative, akx_mapreduce, INV, "op", "=-1")             /* op -1 */                     \
  X(mr_where_past_end, akx_mapreduce, INV, "where", "=2")        /* where 2 */                   \
  X(mr_where_negative, akx_mapreduce, INV, "where", "=-1")       /* where -1 */                  \
  X(mr_xor_float32, akx_mapreduce, UNS, "XOR", "float32")        /* XOR on float32 */            \
  X(mr_and_complex64, akx_mapreduce, UNS, "AND", "complex64")    /* AND on complex64 */          \
  X(mr_min_complex64, akx_mapreduce, UNS, "MIN", "complex64")    /* MIN on complex64 */          \
  X(mr_add_bool_acc, akx_mapreduce, UNS, "ADD", "bool")          /* ADD into a bool accumulator */ \
  X(mr_acc_99, akx_mapreduce, INV, "opts->acc", "=99")           /* acc 99 */                    \
  X(mr_acc_int8_for_float32, akx_mapreduce, UNS, "opts->acc", "int8") /* acc int8, src float32 */ \
  X(mr_block_size_33, akx_mapreduce, INV, "opts->block_size", "=33")    /* not a multiple of 32 */ \
  X(mr_block_size_2048, akx_mapreduce, INV, "opts->block_size", "=2048") /* over the device max */ \
  X(mr_items_negative, akx_mapreduce, INV, "opts->items_per_thread", "=-1") /* -1 */             \
  X(mr_fold_2, akx_mapreduce, INV, "opts->fold", "=2")           /* fold is 0 or 1 */            \
  X(mr_target_blocks_negative, akx_mapreduce, INV, "opts->target_blocks", "=-5") /* -5 */        \
  X(mr_empty_min_no_init, akx_mapreduce, INV, "init", "MIN")     /* empty MIN without init */    \
  /* ---- akx_mapreduce: memory ---- */                                                          \
  X(mr_src_misaligned, akx_mapreduce, INV, "src->data", "$BAD", "aligned") /* float64 at +4 */   \
  X(mr_result_misaligned_device, akx_mapreduce, INV, "result", "not aligned")                    \
    /* float64 device result at +4 bytes, where DEVICE */                                        \
  X(mr_src_host, akx_mapreduce, INV, "src", "$BAD", "device memory") /* a stack array as src */  \
  X(mr_src_past_end, akx_mapreduce, INV, "src", "=4100")         /* 1025 float32 of 1024 */      \
  X(mr_src_before_start, akx_mapreduce, INV, "src", "$BAD")      /* stride -1 leaves the start */ \
  X(mr_result_host_for_device, akx_mapreduce, INV, "result", "$BAD", "device memory")            \
    /* a host result with where DEVICE */                                                        \
  X(mr_result_past_end, akx_mapreduce, INV, "result", "$BAD")    /* device result one past the end */ \
  X(mr_workspace_short_host, akx_mapreduce, WS_SHORT, "workspace", "$N") /* 1 byte short */      \
  X(mr_workspace_short_device, akx_mapreduce, WS_SHORT, "workspace", "$N") /* same, DEVICE */    \
  X(mr_capturing_host, akx_mapreduce, UNS, "capturing", "AKX_DEVICE") /* a host result, capturing */ \
  X(mr_capturing_grow, akx_mapreduce, UNS, "capturing", "workspace", "$N")                       \
    /* a device result, capturing, no workspace yet ($N: the bytes the call needs) */            \
  /* ---- akx_mapreduce_workspace_size ---- */                                                   \
  X(ws_null_ctx, akx_mapreduce_workspace_size, INV, "ctx", "NULL")      /* ctx NULL */           \
  X(ws_null_src, akx_mapreduce_workspace_size, INV, "src", "NULL")      /* src NULL */           \
  X(ws_null_bytes, akx_mapreduce_workspace_size, INV, "bytes", "NULL")  /* bytes NULL */         \
  X(ws_op_past_end, akx_mapreduce_workspace_size, INV, "op", "=9")      /* op 9 */               \
  X(ws_xor_float32, akx_mapreduce_workspace_size, UNS, "XOR", "float32") /* XOR on float32 */    \
  X(ws_ndim_9, akx_mapreduce_workspace_size, INV, "src->ndim", "=9")    /* ndim 9 */             \
  X(ws_fold_2, akx_mapreduce_workspace_size, INV, "opts->fold", "=2")   /* fold 2 */             \
  X(ws_block_size_33, akx_mapreduce_workspace_size, INV, "opts->block_size", "=33") /* 33 */     \
  X(ws_stride_overflow, akx_mapreduce_workspace_size, INV, "src->strides[0]", "=4611686018427387904") \
    /* 2^62 x 3 */                                                                               \
  /* ---- akx_mapreduce_result_dtype (no context: the descriptor, map, op and opts) ---- */      \
  X(rdt_null_src, akx_mapreduce_result_dtype, INV, "src", "NULL")        /* src NULL */          \
  X(rdt_null_dtype, akx_mapreduce_result_dtype, INV, "dtype", "NULL")    /* dtype NULL */        \
  X(rdt_dtype_auto, akx_mapreduce_result_dtype, INV, "src->dtype", "=-1") /* AUTO as a src */    \
  X(rdt_op_past_end, akx_mapreduce_result_dtype, INV, "op", "=9")        /* op 9 */              \
  X(rdt_xor_float32, akx_mapreduce_result_dtype, UNS, "XOR", "float32")  /* XOR on float32 */    \
  X(rdt_acc_int8, akx_mapreduce_result_dtype, UNS, "opts->acc", "int8")  /* float32 into int8 */ \
  X(rdt_empty_min, akx_mapreduce_result_dtype, INV, "MIN", "init")       /* empty, no init */    \
  /* ---- akx_reduce_dims (no workspace-size query of its own exists) ---- */                    \
  X(rd_null_ctx, akx_reduce_dims, INV, "ctx", "NULL")            /* ctx NULL */                  \
  X(rd_null_dst, akx_reduce_dims, INV, "dst", "NULL")            /* dst NULL */                  \
  X(rd_null_src, akx_reduce_dims, INV, "src", "NULL")            /* src NULL */                  \
  X(rd_dst_dtype_99, akx_reduce_dims, INV, "dst->dtype", "=99")  /* dst dtype 99 */              \
  X(rd_dst_dtype_auto, akx_reduce_dims, INV, "dst->dtype", "=-1") /* dst dtype AUTO */           \
  X(rd_dst_ndim_9, akx_reduce_dims, INV, "dst->ndim", "=9")      /* dst ndim 9 */                \
  X(rd_ndim_mismatch, akx_reduce_dims, INV, "dst->ndim", "=1", "=2") /* dst ndim 1, src ndim 2 */ \
  X(rd_dst_shape_7, akx_reduce_dims, INV, "dst->shape[1]", "=7") /* 7 is neither 1 nor 128 */    \
  X(rd_dst_shape_negative, akx_reduce_dims, INV, "dst->shape[0]", "=-1") /* dst shape {-1, 1} */ \
  X(rd_dst_null_data, akx_reduce_dims, INV, "dst->data", "NULL") /* dst data NULL */             \
  X(rd_dst_zero_stride, akx_reduce_dims, INV, "dst->strides[0]", "=0") /* stride 0 in a dst */   \
  X(rd_dst_host, akx_reduce_dims, INV, "dst", "$BAD", "device memory") /* dst on the stack */    \
  X(rd_dst_misaligned, akx_reduce_dims, INV, "dst->data", "aligned") /* float64 dst at +4 */     \
  X(rd_overlap, akx_reduce_dims, INV, "dst", "overlap")          /* dst inside src */            \
  X(rd_src_host, akx_reduce_dims, INV, "src", "$BAD", "device memory") /* src on the stack */    \
  X(rd_src_stride_overflow, akx_reduce_dims, INV, "src->strides[0]", "=4611686018427387904")     \
    /* src 2^62 x 3 */                                                                           \
  X(rd_and_complex64, akx_reduce_dims, UNS, "AND", "complex64")  /* AND on complex64 */          \
  X(rd_op_past_end, akx_reduce_dims, INV, "op", "=9")            /* op 9 */                      \
  X(rd_map_negative, akx_reduce_dims, INV, "map", "=-1")         /* map -1 */                    \
  X(rd_block_size_33, akx_reduce_dims, INV, "opts->block_size", "=33") /* block_size 33 */       \
  X(rd_workspace_short, akx_reduce_dims, WS_SHORT, "workspace", "$N") /* 1 byte short */         \
  X(rd_dims_workspace_short, akx_reduce_dims, WS_SHORT, "workspace", "$N")                       \
    /* dst {8, 1}: 8 outputs split over blocks, partials 1 byte short */                         \
  X(rd_dims_overlap, akx_reduce_dims, INV, "dst", "overlap")     /* dst {8, 1} inside src */     \
  X(rd_dims_dst_shape_3, akx_reduce_dims, INV, "dst->shape[0]", "=3") /* dst {3, 1} of {8, 128} */ \
  X(rd_dst_self_overlap, akx_reduce_dims, INV, "dst->strides[0]", "share") /* {8, 32} strides {16, 1} */ \
  X(rd_dims_ndim_mismatch, akx_reduce_dims, INV, "dst->ndim", "=3", "=2") /* dst {8, 1, 1} */      \
  X(rd_dims_xor_float32, akx_reduce_dims, UNS, "XOR", "float32") /* XOR into dst {8, 1} */       \
  X(rd_capturing_grow, akx_reduce_dims, UNS, "capturing", "workspace") /* dst {1, 1}, no workspace */ \
  /* ---- akx_reduce_dims_workspace_size ---- */                                                 \
  X(rdws_null_ctx, akx_reduce_dims_workspace_size, INV, "ctx", "NULL")     /* ctx NULL */        \
  X(rdws_null_bytes, akx_reduce_dims_workspace_size, INV, "bytes", "NULL") /* bytes NULL */      \
  X(rdws_null_dst, akx_reduce_dims_workspace_size, INV, "dst", "NULL")     /* dst NULL */        \
  X(rdws_dst_shape_7, akx_reduce_dims_workspace_size, INV, "dst->shape[1]", "=7") /* {8, 7} */   \
  X(rdws_xor_float32, akx_reduce_dims_workspace_size, UNS, "XOR", "float32") /* XOR on float32 */ \
  /* ---- akx_scan, akx_scan_workspace_size, akx_findall ---- */                                  \
  X(scan_null_ctx, akx_scan, INV, "ctx", "NULL")                 /* ctx NULL */                  \
  X(scan_dim_9, akx_scan, INV, "dim", "=9")                      /* dim 9 of a 1-d src */        \
  X(scan_dim_minus_2, akx_scan, INV, "dim", "=-2")               /* below AKX_DIM_ALL */         \
  X(scan_null_arrays, akx_scan, INV, "src", "NULL")              /* dst and src NULL */          \
  X(scan_dst_shape, akx_scan, INV, "dst->shape[1]", "=127")      /* {8, 127} into {8, 128} */    \
  X(scan_dst_ndim, akx_scan, INV, "dst->ndim", "=1")             /* 1-d dst, 2-d src */          \
  X(scan_overlap, akx_scan, INV, "dst", "overlaps", "src")       /* dst = src shifted by one */  \
  X(scan_exclusive_max_no_init, akx_scan, INV, "opts->init", "MAX") /* no neutral element */    \
  X(scan_acc_int32, akx_scan, UNS, "opts->acc", "int32")         /* no accumulator of float32 */ \
  X(scan_acc_int64_of_uint64, akx_scan, UNS, "opts->acc", "int64") /* would not hold uint64 */   \
  X(scan_argmax, akx_scan, UNS, "ARGMAX", "reduction")           /* a reduction only */          \
  X(mr_argmax_complex, akx_mapreduce, UNS, "ARGMAX", "complex64") /* no order */                 \
  X(mr_argmax_map_abs, akx_mapreduce, INV, "map", "AKX_MAP_IDENTITY") /* its own map */          \
  X(mr_argmax_acc, akx_mapreduce, INV, "opts->acc", "AKX_DTYPE_AUTO") /* its own accumulator */ \
  X(mr_argmax_empty, akx_mapreduce, INV, "empty", "opts->init")  /* no answer for nothing */     \
  X(rd_argmax_dst_float64, akx_reduce_dims, UNS, "dst->dtype", "float64") /* int64 or src's */   \
  X(mr_user_op_unknown, akx_mapreduce, INV, "op", "user op")     /* never created */             \
  X(uop_null_ctx, akx_user_op_create, INV, "ctx", "NULL")        /* ctx NULL */                  \
  X(uop_null_desc, akx_user_op_create, INV, "desc", "NULL")      /* desc NULL */                 \
  X(uop_null_source, akx_user_op_create, INV, "desc->source", "NULL") /* source NULL */          \
  X(uop_null_acc_type, akx_user_op_create, INV, "desc->acc_type", "NULL") /* acc_type NULL */    \
  X(uop_acc_type_statement, akx_user_op_create, INV, "desc->acc_type", "type name") /* "int;" */ \
  X(uop_null_combine, akx_user_op_create, INV, "desc->combine", "NULL") /* combine NULL */       \
  X(uop_combine_not_a_name, akx_user_op_create, INV, "desc->combine", "identifier") /* "a b" */  \
  X(uop_map_not_a_name, akx_user_op_create, INV, "desc->map", "identifier") /* "m(" */           \
  X(uop_null_op, akx_user_op_create, INV, "op", "NULL")          /* op NULL */                   \
  X(uop_destroy_builtin, akx_user_op_destroy, INV, "op", "=0")   /* AKX_OP_ADD */                \
  X(uopinfo_null_info, akx_user_op_info, INV, "info", "NULL")    /* info NULL */                 \
  X(uopinfo_builtin, akx_user_op_info, INV, "op", "=3")          /* AKX_OP_MAX has no layout */  \
  X(scan_xor_float32, akx_scan, UNS, "XOR", "float32")           /* bit op on floats */          \
  X(scan_items_65, akx_scan, INV, "opts->items_per_thread", "=65") /* above 64 */               \
  X(scan_exclusive_2, akx_scan, INV, "opts->exclusive", "=2")    /* not 0 or 1 */                \
  X(scan_tile_too_big, akx_scan, INV, "items_per_thread", "=232448") /* 256 x 64 complex128 */   \
  X(scan_dim_all_strided, akx_scan, INV, "AKX_DIM_ALL", "contiguous") /* a 2-d column view */   \
  X(scan_dst_self_overlap, akx_scan, INV, "dst->strides[0]", "share") /* {4, 8} strides {2, 1} */ \
  X(scan_capturing_grow, akx_scan, UNS, "capturing", "workspace") /* 64 float32, no workspace */ \
  X(scanws_null_bytes, akx_scan_workspace_size, INV, "bytes", "NULL") /* bytes NULL */          \
  /* ---- akx_scan_piece, akx_mapreduce_piece: the piece, then akx_scan's and akx_mapreduce's ---- */ \
  X(piece_scan_null, akx_scan_piece, INV, "piece", "NULL")       /* piece NULL */                \
  X(piece_scan_no_exchange, akx_scan_piece, INV, "piece->exchange", "NULL") /* exchange NULL */  \
  X(piece_scan_before_neg, akx_scan_piece, INV, "pieces_before", "=-1") /* -1 pieces before */   \
  X(piece_scan_dim_9, akx_scan_piece, INV, "dim", "=9")          /* akx_scan's checks too */     \
  X(piece_mr_null, akx_mapreduce_piece, INV, "piece", "NULL")    /* piece NULL */                \
  X(piece_mr_pieces_0, akx_mapreduce_piece, INV, "piece->pieces", "=0") /* no partial */        \
  X(piece_mr_block_neg, akx_mapreduce_piece, INV, "position", "=-3") /* a negative block */     \
  X(piece_mr_null_result, akx_mapreduce_piece, INV, "result", "NULL") /* akx_mapreduce's checks */ \
  X(piece_rd_no_exchange, akx_reduce_dims_piece, INV, "piece->exchange", "NULL") /* exchange NULL */ \
  X(piece_rd_skip_neg, akx_reduce_dims_piece, INV, "position", "=-1") /* a negative skip */      \
  X(piece_rd_dst_shape_7, akx_reduce_dims_piece, INV, "dst->shape[1]", "=7") /* akx_reduce_dims' checks */ \
  X(piece_rdws_pieces_0, akx_reduce_dims_piece_workspace_size, INV, "pieces", "=0") /* no piece */ \
  X(piece_rdws_null_bytes, akx_reduce_dims_piece_workspace_size, INV, "bytes", "NULL") /* bytes NULL */ \
  X(piece_scanws_before_neg, akx_scan_piece_workspace_size, INV, "pieces_before", "=-2") /* -2 before */ \
  X(piece_scanws_dim_9, akx_scan_piece_workspace_size, INV, "dim", "=9") /* akx_scan's checks */ \
  X(scanws_dim_3, akx_scan_workspace_size, INV, "dim", "=3")     /* dim 3 of a 2-d src */        \
  X(findall_null_ctx, akx_findall, INV, "ctx", "NULL")           /* ctx NULL */                  \
  X(findall_null_count, akx_findall, INV, "count", "NULL")       /* count NULL */                \
  X(findall_piece_null, akx_findall_piece, INV, "piece", "NULL") /* piece NULL */                \
  X(findall_piece_base_neg, akx_findall_piece, INV, "position", "=-8") /* a negative base */    \
  X(findall_null_indices, akx_findall, INV, "indices", "NULL")   /* indices NULL */              \
  X(findall_indices_int32, akx_findall, INV, "indices->dtype", "int32") /* not int64 */         \
  X(findall_indices_2d, akx_findall, INV, "indices->ndim", "=2") /* {8, 8} indices */            \
  X(findall_indices_strided, akx_findall, INV, "indices->strides[0]", "=2") /* every other */   \
  X(findall_indices_in_src, akx_findall, INV, "indices", "overlaps", "src")                     \
    /* 64 indices over bytes 1024..1535 of the 1024 float32 it scans */                          \
  X(findall_capturing, akx_findall, UNS, "capturing", "akx_findall") /* valid, capturing */      \
  X(findall_where_null_ctx, akx_findall_where, INV, "ctx", "NULL")                              \
  X(findall_where_null_count, akx_findall_where, INV, "count", "NULL")  /* AKX_DEVICE */         \
  X(findall_where_bad_where, akx_findall_where, INV, "where", "=7")                              \
  X(findall_where_host_count, akx_findall_where, INV, "count", "$BAD", "device memory")          \
    /* a host count with AKX_DEVICE */                                                           \
  X(findall_where_count_misaligned, akx_findall_where, INV, "count", "$BAD", "aligned")          \
  X(findall_where_count_in_indices, akx_findall_where, INV, "count", "overlaps", "indices")      \
  X(findall_where_capturing_host, akx_findall_where, UNS, "capturing", "akx_findall_where")      \
  X(findall_ws_null_ctx, akx_findall_workspace_size, INV, "ctx", "NULL")     /* ctx NULL */      \
  /* ---- the flagged selections: 64 float32 of src flagged by 64 int8 of src, into ddst ---- */  \
  X(select_null_ctx, akx_select_flagged, INV, "ctx", "NULL")                                     \
  X(select_flags_length, akx_select_flagged, INV, "flags->shape[0]", "=63", "=64")               \
  X(select_dst_dtype, akx_select_flagged, INV, "dst->dtype", "int32", "float32")                 \
  X(select_null_count, akx_select_flagged, INV, "count", "NULL")                                 \
  X(select_dst_in_src, akx_select_flagged, INV, "dst", "overlaps", "src") /* one item on */      \
  X(select_dst_in_flags, akx_select_flagged, INV, "dst", "overlaps", "flags")                    \
  X(select_capturing_host, akx_select_flagged, UNS, "capturing", "akx_select_flagged")           \
  X(partition_null_ctx, akx_partition_flagged, INV, "ctx", "NULL")                               \
  X(partition_dst_length, akx_partition_flagged, INV, "dst->shape[0]", "=32", "=64")             \
  X(partition_in_place, akx_partition_flagged, INV, "dst", "overlaps", "src") /* dst = src */    \
  X(partition_host_count_device, akx_partition_flagged, INV, "count", "$BAD", "device memory")   \
  X(select_ws_null_ctx, akx_select_flagged_workspace_size, INV, "ctx", "NULL")                   \
  X(select_ws_null_bytes, akx_select_flagged_workspace_size, INV, "bytes", "NULL")               \
  X(partition_ws_null_ctx, akx_partition_flagged_workspace_size, INV, "ctx", "NULL")             \
  X(partition_ws_dst_length, akx_partition_flagged_workspace_size, INV, "dst->shape[0]", "=32")  \
  X(findall_ws_null_bytes, akx_findall_workspace_size, INV, "bytes", "NULL") /* bytes NULL */    \
  X(findall_ws_indices_int32, akx_findall_workspace_size, INV, "indices->dtype", "int32")        \
  /* ---- the segmented and keyed family: ctx NULL (the rest: tests/test_segmented_bad_input.c) ---- */ \
  X(seg_reduce_null_ctx, akx_segmented_reduce, INV, "ctx", "NULL")                                 \
  X(seg_reduce_ws_null_ctx, akx_segmented_reduce_workspace_size, INV, "ctx", "NULL")               \
  X(seg_scan_null_ctx, akx_segmented_scan, INV, "ctx", "NULL")                                     \
  X(seg_scan_ws_null_ctx, akx_segmented_scan_workspace_size, INV, "ctx", "NULL")                   \
  X(reduce_by_key_null_ctx, akx_reduce_by_key, INV, "ctx", "NULL")                                 \
  X(reduce_by_key_where_null_ctx, akx_reduce_by_key_where, INV, "ctx", "NULL")                     \
  X(reduce_by_key_where_null_runs, akx_reduce_by_key_where, INV, "runs", "NULL")                   \
  X(reduce_by_key_where_runs_in_keys_out, akx_reduce_by_key_where, INV, "runs", "overlaps", "keys_out") \
  X(reduce_by_key_where_capturing_host, akx_reduce_by_key_where, UNS, "capturing", "akx_reduce_by_key_where") \
  X(scan_by_key_null_ctx, akx_scan_by_key, INV, "ctx", "NULL")                                     \
  /* ---- empty outputs, as Julia and numpy describe them: accepted, nothing written ---- */      \
  X(empty_scan_julia_dst, akx_scan, PURE, NONE)   /* {2, 0, 3} strides {1, 2, 0} both */         \
  X(empty_scan_numpy_dst, akx_scan, PURE, NONE)   /* {2, 0, 3} strides {0, 0, 0} both */         \
  X(empty_rd_julia_dst, akx_reduce_dims, PURE, NONE) /* dst {2, 0, 1} strides {1, 2, 0} */       \
  X(empty_rd_numpy_dst, akx_reduce_dims, PURE, NONE) /* dst {1, 0, 3} strides {0, 0, 0} */       \
  X(empty_findall_indices, akx_findall, PURE, NONE) /* src {4, 0}, indices {0}, zero strides */  \
  X(run_null_ctx, akx_context_run, INV, "ctx", "NULL")           /* ctx NULL */                  \
  X(run_null_fn, akx_context_run, INV, "fn", "NULL")             /* fn NULL */                   \
  X(run_capturing_grow, akx_context_run, UNS, "capturing", "workspace") /* 64 bytes, none yet */ \
  /* ---- the sim's counters ---- */                                                             \
  X(sim_reset_null_ctx, akx_sim_counters_reset, INV, "akx_sim_counters_reset", "ctx", "NULL")    \
    /* ctx NULL */                                                                               \
  X(sim_get_null_ctx, akx_sim_counters_get, INV, "akx_sim_counters_get", "ctx", "NULL") /* NULL */ \
  X(sim_get_capacity_negative, akx_sim_counters_get, INV, "capacity", "=-1") /* capacity -1 */   \
  X(sim_get_null_per_kernel, akx_sim_counters_get, INV, "per_kernel", "=2") /* NULL, capacity 2 */ \
  X(sim_sites_null_ctx, akx_sim_sites_get, INV, "akx_sim_sites_get", "ctx", "NULL") /* NULL */   \
  X(sim_sites_capacity_negative, akx_sim_sites_get, INV, "capacity", "=-3") /* capacity -3 */    \
  X(sim_sites_null_sites, akx_sim_sites_get, INV, "sites", "=4") /* sites NULL, capacity 4 */ \
  /* ---- version, DLPack (include/akx_dlpack.h) ---- */                                         \
  X(version_string, akx_version, PURE, NONE)          /* "MAJOR.MINOR.PATCH" of the macros */    \
  X(dlpack_null_t, akx_array_from_dlpack, INV, "t", "NULL")      /* t NULL */                    \
  X(dlpack_null_out, akx_array_from_dlpack, INV, "out", "NULL")  /* out NULL */                  \
  X(dlpack_float8, akx_array_from_dlpack, UNS, "t->dtype", "float", "=8") /* kDLFloat, 8 bits */ \
  X(dlpack_opaque, akx_array_from_dlpack, UNS, "t->dtype", "opaque") /* kDLOpaqueHandle 64 */    \
  X(dlpack_code_99, akx_array_from_dlpack, UNS, "t->dtype", "=99")   /* no such type code */     \
  X(dlpack_lanes_4, akx_array_from_dlpack, UNS, "t->dtype.lanes", "=4") /* float32 x 4 */        \
  X(dlpack_lanes_0, akx_array_from_dlpack, UNS, "t->dtype.lanes", "=0") /* no lane */            \
  X(dlpack_device_rocm, akx_array_from_dlpack, UNS, "t->device.device_type", "=10", "ROCm")      \
    /* device mismatch: AMD memory */                                                            \
  X(dlpack_device_cuda_host, akx_array_from_dlpack, UNS, "t->device.device_type", "=3")          \
    /* device mismatch: pinned host memory is not CUDA device memory */                          \
  X(dlpack_device_id_negative, akx_array_from_dlpack, INV, "t->device.device_id", "=-1")         \
  X(dlpack_ndim_negative, akx_array_from_dlpack, INV, "t->ndim", "=-1") /* ndim -1 */            \
  X(dlpack_ndim_9, akx_array_from_dlpack, UNS, "t->ndim", "=9")  /* more dims than akx_array */  \
  X(dlpack_null_shape, akx_array_from_dlpack, INV, "t->shape", "NULL") /* ndim 2, shape NULL */  \
  X(dlpack_shape_negative, akx_array_from_dlpack, INV, "t->shape[1]", "=-3") /* {4, -3} */       \
  X(dlpack_null_data, akx_array_from_dlpack, INV, "t->data", "NULL") /* 1024 elements at NULL */ \
  X(dlpack_misaligned, akx_array_from_dlpack, INV, "t->byte_offset", "aligned") /* float32 +2 */ \
  X(dlpack_offset_wraps, akx_array_from_dlpack, INV, "t->byte_offset", "=18446744073709551615")  \
    /* byte_offset UINT64_MAX from a non-NULL data */                                            \
  X(dlpack_stride_overflow, akx_array_from_dlpack, INV, "t->strides[0]", "=4611686018427387904") \
    /* 2^62 x 3 float32 */

/* ---- the world a row runs in ----------------------------------------------------------------- */

#define SRC_BYTES 4096  /* the device source: 1024 float32 (or 512 float64, 4096 int8, ...) */
#define DOUT_BYTES 1024 /* the device outputs: result | dst | indices */
#define POISON 0x5Au

/* Every host out-parameter a row may pass; poisoned before the row, compared after it. */
typedef struct {
  akx_context *ctx;              /* akx_context_create */
  void *ptr;                     /* akx_malloc */
  size_t bytes;                  /* akx_mapreduce_workspace_size */
  akx_dtype dtype;               /* akx_mapreduce_result_dtype */
  int64_t count;                 /* akx_findall */
  akx_context_info_t info;       /* akx_context_info */
  akx_sim_kernel_counters total, per_kernel[2];
  int32_t kernels;
  akx_sim_site_counters sites[2];
  int32_t nsites;
  akx_array array;               /* akx_array_from_dlpack */
  _Alignas(16) unsigned char result[64]; /* akx_mapreduce, where HOST */
  akx_op op;                     /* akx_user_op_create */
  akx_user_op_info_t uop_info;   /* akx_user_op_info */
  _Alignas(16) unsigned char copy[64];   /* akx_memcpy's host side */
} bx_out;

typedef struct {
  akx_context *ctx;       /* one sim context per test */
  unsigned char *src;     /* device, SRC_BYTES of a fixed pattern: no row may change it */
  unsigned char *dout;    /* device, DOUT_BYTES, poisoned before each row */
  unsigned char *dres;    /* dout + 0: a device result */
  unsigned char *ddst;    /* dout + 256: a dst */
  int64_t *didx;          /* dout + 512: 64 indices */
  akx_array v32;          /* 1024 float32 over src */
  akx_array m2;           /* {8, 128} float32, row-major over src */
  akx_array dst11;        /* {1, 1} float32 at ddst */
  bx_out out;
  void *ws;               /* a caller workspace a row handed to the context */
  akx_context *other;     /* a second sim context a row opened (destroyed by bx_teardown) */
  const void *bad;        /* the pointer the sentence must print ("$BAD") */
  long long bad_n;        /* the number the sentence must print ("$N") */
  char got[256];          /* PURE rows: what the function returned, when wrong */
} bx;

typedef akx_status (*bx_call)(bx *x);

typedef struct {
  const char *id;
  const char *fn;
  bx_call call;
  int want; /* an akx_status, or PURE */
  const char *says[4];
} bx_row;

#define BX_DECLARE(id, fn, want, ...) static akx_status row_##id(bx *x);
BAD_INPUT_ROWS(BX_DECLARE)
#define BX_ENTRY(id, fn, want, ...) {#id, #fn, row_##id, want, {__VA_ARGS__}},
static bx_row rows[] = {BAD_INPUT_ROWS(BX_ENTRY)};
#define N_ROWS (sizeof rows / sizeof rows[0])

static bx g; /* Criterion forks per test: one per row */

static void bx_setup(void) {
  memset(&g, 0, sizeof g);
  unsetenv("AKX_SIM_COUNTERS"); /* counting on: "nothing launched" must mean something */
  akx_status s = akx_context_create(&g.ctx, AKX_BACKEND_SIM, 0);
  cr_assert(s == AKX_SUCCESS && g.ctx, "akx_context_create(SIM) = %s: %s", akx_status_string(s),
            akx_last_error());
  g.src = tfx_alloc(g.ctx, SRC_BYTES);
  unsigned char pattern[SRC_BYTES];
  for (size_t i = 0; i < SRC_BYTES; i++) pattern[i] = (unsigned char)(i * 7u + 1u);
  tfx_to_device(g.ctx, g.src, pattern, SRC_BYTES);
  g.dout = tfx_alloc(g.ctx, DOUT_BYTES);
  g.dres = g.dout;
  g.ddst = g.dout + 256;
  g.didx = (int64_t *)(void *)(g.dout + 512);
  g.v32 = akx_vector(g.src, AKX_FLOAT32, SRC_BYTES / 4);
  const int64_t s2[2] = {8, 128}, s11[2] = {1, 1};
  g.m2 = akx_array_c(g.src, AKX_FLOAT32, 2, s2);
  g.dst11 = akx_array_c(g.ddst, AKX_FLOAT32, 2, s11);
}

static void bx_teardown(void) {
  if (g.other) akx_context_destroy(g.other);
  if (g.ws) {
    (void)akx_context_set_workspace(g.ctx, NULL, 0);
    (void)akx_free(g.ctx, g.ws);
  }
  (void)akx_free(g.ctx, g.dout);
  (void)akx_free(g.ctx, g.src);
  akx_context_destroy(g.ctx);
}

/* ---- the rows -------------------------------------------------------------------------------- */

#if defined(__GNUC__)
#define BX_UNUSED __attribute__((unused))
#else
#define BX_UNUSED
#endif
#define ROW(id) static akx_status row_##id(bx *x BX_UNUSED)
#define ID AKX_MAP_IDENTITY
#define ADD AKX_OP_ADD
/* akx_mapreduce of `src` with everything else valid */
#define MR(src) akx_mapreduce(x->ctx, (src), ID, ADD, NULL, x->out.result, AKX_HOST)
#define MR_OPTS(o) akx_mapreduce(x->ctx, &x->v32, ID, ADD, (o), x->out.result, AKX_HOST)
#define RD(dst, src) akx_reduce_dims(x->ctx, (dst), (src), ID, ADD, NULL)
#define WS(src) akx_mapreduce_workspace_size(x->ctx, (src), ID, ADD, NULL, &x->out.bytes)
#define PURE_OK(cond, ...) \
  ((cond) ? AKX_SUCCESS : (snprintf(x->got, sizeof x->got, __VA_ARGS__), AKX_ERROR_INTERNAL))

static akx_reduce_opts opts(void) { return akx_reduce_opts_default(); }

static akx_array vec(bx *x, akx_dtype t, int64_t n) { return akx_vector(x->src, t, n); }

/* A 1-d or 2-d view of src with its own shape and strides (a float32 or int8 view). */
static akx_array view(bx *x, akx_dtype t, int32_t ndim, const int64_t *shape,
                      const int64_t *strides) {
  akx_array a = akx_array_c(x->src, t, ndim, shape);
  for (int32_t d = 0; d < ndim; d++) a.strides[d] = strides[d];
  return a;
}

/* status, dtypes, array helpers */
ROW(own_accumulator_not_an_op) {
  const int32_t none[] = {AKX_OP_COUNT, 500, AKX_USER_OP_FIRST - 1, -1};
  for (size_t i = 0; i < sizeof none / sizeof none[0]; i++)
    if (akx_op_has_own_accumulator((akx_op)none[i])) return PURE_OK(0, "op %d has its own accumulator", (int)none[i]);
  return PURE_OK(akx_op_has_own_accumulator(AKX_OP_ARGMAX) && !akx_op_has_own_accumulator(AKX_OP_XOR), "argmax/xor");
}
ROW(memory_order_bad) {
  int32_t order[AKX_MAX_DIMS + 1];
  for (int k = 0; k <= AKX_MAX_DIMS; k++) order[k] = -7;
  akx_array a = akx_vector(NULL, AKX_FLOAT32, 4);
  akx_array_memory_order(NULL, order);
  akx_array_memory_order(&a, NULL);
  a.ndim = AKX_MAX_DIMS + 1;
  akx_array_memory_order(&a, order);
  a.ndim = -1;
  akx_array_memory_order(&a, order);
  for (int k = 0; k <= AKX_MAX_DIMS; k++)
    if (order[k] != -7) return PURE_OK(0, "order[%d] written", k);
  return PURE_OK(1, "");
}
ROW(status_string_past_end) {
  const char *s = akx_status_string((akx_status)10);
  return PURE_OK(s && !strcmp(s, "unknown status"), "\"%s\"", s ? s : "(null)");
}
ROW(kernel_cache_counters_null) {
  akx_kernel_cache_counters(NULL);
  akx_kernel_cache_counters_t c;
  memset(&c, 0xA5, sizeof c);
  akx_kernel_cache_counters(&c);
  return PURE_OK(c.compiles != 0xA5A5A5A5A5A5A5A5ull, "counters not written");
}
/* akx_set_last_error's purpose is to change the sentence: each row checks what it set, then
 * puts the sentence it found back, which the matrix checks as for every PURE row. */
ROW(set_last_error_null) {
  char found[1024];
  snprintf(found, sizeof found, "%s", akx_last_error());
  const akx_status s = akx_set_last_error(AKX_ERROR_INTERNAL, NULL);
  const int ok = s == AKX_ERROR_INTERNAL && !strcmp(akx_last_error(), "");
  (void)akx_set_last_error(AKX_SUCCESS, found);
  return PURE_OK(ok, "status %d, or the sentence was not emptied", (int)s);
}
ROW(set_last_error_long) {
  char found[1024], long_sentence[2001];
  snprintf(found, sizeof found, "%s", akx_last_error());
  memset(long_sentence, 'x', 2000);
  long_sentence[2000] = '\0';
  const akx_status s = akx_set_last_error(AKX_ERROR_DEVICE, long_sentence);
  const size_t n = strlen(akx_last_error());
  const int ok = s == AKX_ERROR_DEVICE && n == 1023 && akx_last_error()[0] == 'x';
  (void)akx_set_last_error(AKX_SUCCESS, found);
  return PURE_OK(ok, "status %d, %zu bytes", (int)s, n);
}
ROW(status_string_negative) {
  const char *s = akx_status_string((akx_status)-1);
  return PURE_OK(s && !strcmp(s, "unknown status"), "\"%s\"", s ? s : "(null)");
}
ROW(dtype_size_past_end) {
  size_t n = akx_dtype_size((akx_dtype)AKX_DTYPE_COUNT);
  return PURE_OK(n == 0, "%zu", n);
}
ROW(dtype_size_auto) {
  size_t n = akx_dtype_size(AKX_DTYPE_AUTO);
  return PURE_OK(n == 0, "%zu", n);
}
ROW(dtype_name_past_end) {
  const char *s = akx_dtype_name((akx_dtype)AKX_DTYPE_COUNT);
  return PURE_OK(s && !strcmp(s, "invalid"), "\"%s\"", s ? s : "(null)");
}
ROW(dtype_name_negative) {
  const char *s = akx_dtype_name((akx_dtype)-2);
  return PURE_OK(s && !strcmp(s, "invalid"), "\"%s\"", s ? s : "(null)");
}
ROW(vector_negative_n) {
  akx_array v = akx_vector(x->src, AKX_FLOAT32, -1);
  return MR(&v);
}
ROW(array_c_ndim_negative) {
  const int64_t s[1] = {4};
  akx_array v = akx_array_c(x->src, AKX_FLOAT32, -1, s);
  return MR(&v);
}
ROW(array_c_ndim_9) {
  const int64_t s[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  akx_array v = akx_array_c(x->src, AKX_FLOAT32, 9, s);
  return MR(&v);
}
ROW(array_c_null_shape) {
  akx_array v = akx_array_c(x->src, AKX_FLOAT32, 2, NULL);
  return MR(&v);
}
ROW(array_f_ndim_9) {
  const int64_t s[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  akx_array v = akx_array_f(x->src, AKX_FLOAT32, 9, s);
  return MR(&v);
}
ROW(array_f_null_shape) {
  akx_array v = akx_array_f(x->src, AKX_FLOAT32, 2, NULL);
  return MR(&v);
}

/* contexts */
ROW(create_null_out) { return akx_context_create(NULL, AKX_BACKEND_SIM, 0); }
ROW(create_backend_past_end) {
  return akx_context_create(&x->out.ctx, (akx_backend)3, 0);
}
ROW(create_backend_negative) {
  return akx_context_create(&x->out.ctx, (akx_backend)-1, 0);
}
ROW(create_device_negative) { return akx_context_create(&x->out.ctx, AKX_BACKEND_SIM, -1); }
ROW(create_sim_device_1) { return akx_context_create(&x->out.ctx, AKX_BACKEND_SIM, 1); }
ROW(destroy_null) {
  akx_context_destroy(NULL);
  return AKX_SUCCESS;
}
ROW(set_stream_null_ctx) { return akx_context_set_stream(NULL, NULL); }
ROW(set_stream_garbage) {
  x->bad = (void *)(uintptr_t)0xdeadbeef;
  return akx_context_set_stream(x->ctx, (void *)(uintptr_t)0xdeadbeef);
}
ROW(set_workspace_null_ctx) { return akx_context_set_workspace(NULL, x->ddst, 256); }
ROW(set_workspace_null_ptr) { return akx_context_set_workspace(x->ctx, NULL, 4096); }
ROW(set_workspace_zero_bytes) { return akx_context_set_workspace(x->ctx, x->dout, 0); }
ROW(set_workspace_misaligned) {
  x->bad = x->dout + 8;
  return akx_context_set_workspace(x->ctx, x->dout + 8, 256);
}
ROW(set_workspace_host) {
  static _Alignas(256) unsigned char host[512];
  x->bad = host;
  return akx_context_set_workspace(x->ctx, host, sizeof host);
}
ROW(set_workspace_past_end) { return akx_context_set_workspace(x->ctx, x->dout, 1 << 20); }
/* Another live sim context holding a caller workspace of 4096 bytes of its own memory. */
static void *held_by_other(bx *x) {
  cr_assert_eq(akx_context_create(&x->other, AKX_BACKEND_SIM, 0), AKX_SUCCESS, "%s",
               akx_last_error());
  void *buf = tfx_alloc(x->other, 4096);
  cr_assert_eq(akx_context_set_workspace(x->other, buf, 4096), AKX_SUCCESS, "%s",
               akx_last_error());
  return buf;
}
ROW(set_workspace_shared) {
  void *buf = held_by_other(x);
  x->bad = buf;
  return akx_context_set_workspace(x->ctx, buf, 4096);
}
/* The row's call made while x->ctx's stream captures a graph (akx__sim_set_capturing), the
 * capture ended before the harness reads the outputs back. */
static void capture_on(bx *x) {
  cr_assert_eq(akx__sim_set_capturing(x->ctx, 1), AKX_SUCCESS, "%s", akx_last_error());
}
static akx_status capture_off(bx *x, akx_status s) {
  char said[1024];
  snprintf(said, sizeof said, "%s", akx_last_error());
  cr_assert_eq(akx__sim_set_capturing(x->ctx, 0), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_str_eq(akx_last_error(), said, "ending the capture changed the sentence");
  return s;
}
#define CAPTURING(call) (capture_on(x), capture_off(x, (call)))
ROW(set_workspace_capturing) {
  return CAPTURING(akx_context_set_workspace(x->ctx, x->dout, 256));
}
ROW(set_stream_capturing) { return CAPTURING(akx_context_set_stream(x->ctx, NULL)); }
ROW(synchronize_capturing) { return CAPTURING(akx_synchronize(x->ctx)); }
ROW(synchronize_null_ctx) { return akx_synchronize(NULL); }
ROW(backend_null_ctx) {
  akx_backend b = akx_context_backend(NULL);
  return PURE_OK(b == AKX_BACKEND_AUTO, "%d", (int)b);
}
ROW(info_null_ctx) { return akx_context_info(NULL, &x->out.info); }
ROW(info_null_info) { return akx_context_info(x->ctx, NULL); }

/* memory */
ROW(malloc_null_ctx) { return akx_malloc(NULL, &x->out.ptr, 16); }
ROW(malloc_null_ptr) { return akx_malloc(x->ctx, NULL, 16); }
ROW(malloc_huge) { return akx_malloc(x->ctx, &x->out.ptr, SIZE_MAX); }
ROW(free_null_ctx) { return akx_free(NULL, x->ddst); }
ROW(free_host_pointer) {
  int local[4];
  x->bad = local;
  return akx_free(x->ctx, local);
}
ROW(free_interior) {
  x->bad = x->src + 4;
  return akx_free(x->ctx, x->src + 4);
}
ROW(free_twice) {
  void *p = tfx_alloc(x->ctx, 64);
  tfx_free(x->ctx, p);
  x->bad = p;
  return akx_free(x->ctx, p);
}
ROW(memcpy_null_ctx) {
  return akx_memcpy(NULL, x->out.copy, x->src, 8, AKX_COPY_DEVICE_TO_HOST);
}
ROW(memcpy_kind_past_end) {
  return akx_memcpy(x->ctx, x->ddst, x->src, 8, (akx_copy_kind)3);
}
ROW(memcpy_kind_negative) {
  return akx_memcpy(x->ctx, x->ddst, x->src, 8, (akx_copy_kind)-1);
}
ROW(memcpy_null_dst) { return akx_memcpy(x->ctx, NULL, x->src, 8, AKX_COPY_DEVICE_TO_HOST); }
ROW(memcpy_null_src) { return akx_memcpy(x->ctx, x->out.copy, NULL, 8, AKX_COPY_DEVICE_TO_HOST); }
ROW(memcpy_src_host) {
  unsigned char local[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  x->bad = local;
  return akx_memcpy(x->ctx, x->out.copy, local, 8, AKX_COPY_DEVICE_TO_HOST);
}
ROW(memcpy_dst_host) {
  static const unsigned char host[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  x->bad = x->out.copy;
  return akx_memcpy(x->ctx, x->out.copy, host, 8, AKX_COPY_HOST_TO_DEVICE);
}
ROW(memcpy_capturing) {
  return CAPTURING(akx_memcpy(x->ctx, x->out.copy, x->src, 8, AKX_COPY_DEVICE_TO_HOST));
}
ROW(memcpy_past_end) {
  return akx_memcpy(x->ctx, x->ddst, x->src, 2 * SRC_BYTES, AKX_COPY_DEVICE_TO_DEVICE);
}

/* akx_mapreduce: pointers */
ROW(mr_null_ctx) { return akx_mapreduce(NULL, &x->v32, ID, ADD, NULL, x->out.result, AKX_HOST); }
ROW(mr_null_src) { return MR(NULL); }
ROW(mr_null_result_host) { return akx_mapreduce(x->ctx, &x->v32, ID, ADD, NULL, NULL, AKX_HOST); }
ROW(mr_null_result_device) {
  return akx_mapreduce(x->ctx, &x->v32, ID, ADD, NULL, NULL, AKX_DEVICE);
}
ROW(mr_null_data) {
  akx_array v = akx_vector(NULL, AKX_FLOAT32, 5);
  return MR(&v);
}

/* akx_mapreduce: ndim, shapes, strides */
ROW(mr_ndim_int32_max) {
  akx_array v = x->v32;
  v.ndim = INT32_MAX;
  return MR(&v);
}
ROW(mr_shape_negative) {
  const int64_t s[2] = {4, -3};
  akx_array v = akx_array_c(x->src, AKX_FLOAT32, 2, s);
  return MR(&v);
}
ROW(mr_count_overflow_2d) {
  const int64_t s[2] = {INT64_C(1) << 32, INT64_C(1) << 32};
  akx_array v = akx_array_c(x->src, AKX_FLOAT32, 2, s);
  return MR(&v);
}
ROW(mr_count_overflow_3d) {
  const int64_t s[3] = {INT64_C(1) << 21, INT64_C(1) << 21, INT64_C(1) << 22};
  akx_array v = akx_array_c(x->src, AKX_FLOAT32, 3, s);
  return MR(&v);
}
ROW(mr_stride_2p62) {
  const int64_t n[1] = {3}, s[1] = {INT64_C(1) << 62};
  akx_array v = view(x, AKX_FLOAT32, 1, n, s);
  return MR(&v);
}
ROW(mr_stride_half_max) {
  const int64_t n[1] = {3}, s[1] = {INT64_MAX / 2};
  akx_array v = view(x, AKX_FLOAT32, 1, n, s);
  return MR(&v);
}
ROW(mr_stride_max_int8) {
  const int64_t n[1] = {2}, s[1] = {INT64_MAX};
  akx_array v = view(x, AKX_INT8, 1, n, s);
  return MR(&v);
}
ROW(mr_stride_min_int8) {
  const int64_t n[1] = {2}, s[1] = {INT64_MIN};
  akx_array v = view(x, AKX_INT8, 1, n, s);
  return MR(&v);
}
ROW(mr_stride_min_shape3) {
  const int64_t n[1] = {3}, s[1] = {INT64_MIN};
  akx_array v = view(x, AKX_FLOAT32, 1, n, s);
  return MR(&v);
}
ROW(mr_strides_sum) {
  const int64_t n[2] = {3, 3}, s[2] = {INT64_C(1) << 61, INT64_C(1) << 61};
  akx_array v = view(x, AKX_FLOAT32, 2, n, s);
  return MR(&v);
}
ROW(mr_strides_opposite_int8) {
  const int64_t n[2] = {3, 3}, s[2] = {(INT64_C(1) << 62) - 1, -((INT64_C(1) << 62) - 1)};
  akx_array v = view(x, AKX_INT8, 2, n, s);
  return MR(&v);
}

/* akx_mapreduce: enums, ops, options */
ROW(mr_dtype_past_end) {
  akx_array v = x->v32;
  v.dtype = (akx_dtype)AKX_DTYPE_COUNT;
  return MR(&v);
}
ROW(mr_dtype_auto) {
  akx_array v = x->v32;
  v.dtype = AKX_DTYPE_AUTO;
  return MR(&v);
}
ROW(mr_map_past_end) {
  return akx_mapreduce(x->ctx, &x->v32, (akx_map)4, ADD, NULL, x->out.result, AKX_HOST);
}
ROW(mr_map_negative) {
  return akx_mapreduce(x->ctx, &x->v32, (akx_map)-1, ADD, NULL, x->out.result, AKX_HOST);
}
ROW(mr_op_past_end) {
  return akx_mapreduce(x->ctx, &x->v32, ID, (akx_op)AKX_OP_COUNT, NULL, x->out.result, AKX_HOST);
}
ROW(mr_op_negative) {
  return akx_mapreduce(x->ctx, &x->v32, ID, (akx_op)-1, NULL, x->out.result, AKX_HOST);
}
ROW(mr_where_past_end) {
  return akx_mapreduce(x->ctx, &x->v32, ID, ADD, NULL, x->dres, (akx_where)2);
}
ROW(mr_where_negative) {
  return akx_mapreduce(x->ctx, &x->v32, ID, ADD, NULL, x->out.result, (akx_where)-1);
}
ROW(mr_xor_float32) {
  return akx_mapreduce(x->ctx, &x->v32, ID, AKX_OP_XOR, NULL, x->out.result, AKX_HOST);
}
ROW(mr_and_complex64) {
  akx_array v = vec(x, AKX_COMPLEX64, SRC_BYTES / 8);
  return akx_mapreduce(x->ctx, &v, ID, AKX_OP_AND, NULL, x->out.result, AKX_HOST);
}
ROW(mr_min_complex64) {
  akx_array v = vec(x, AKX_COMPLEX64, SRC_BYTES / 8);
  return akx_mapreduce(x->ctx, &v, ID, AKX_OP_MIN, NULL, x->dres, AKX_DEVICE);
}
ROW(mr_add_bool_acc) {
  akx_array v = vec(x, AKX_BOOL, SRC_BYTES);
  akx_reduce_opts o = opts();
  o.acc = AKX_BOOL;
  return akx_mapreduce(x->ctx, &v, ID, ADD, &o, x->out.result, AKX_HOST);
}
ROW(mr_acc_99) {
  akx_reduce_opts o = opts();
  o.acc = (akx_dtype)99;
  return MR_OPTS(&o);
}
ROW(mr_acc_int8_for_float32) {
  akx_reduce_opts o = opts();
  o.acc = AKX_INT8;
  return MR_OPTS(&o);
}
ROW(mr_block_size_33) {
  akx_reduce_opts o = opts();
  o.block_size = 33;
  return MR_OPTS(&o);
}
ROW(mr_block_size_2048) {
  akx_reduce_opts o = opts();
  o.block_size = 2048;
  return MR_OPTS(&o);
}
ROW(mr_items_negative) {
  akx_reduce_opts o = opts();
  o.items_per_thread = -1;
  return MR_OPTS(&o);
}
ROW(mr_fold_2) {
  akx_reduce_opts o = opts();
  o.fold = 2;
  return MR_OPTS(&o);
}
ROW(mr_target_blocks_negative) {
  akx_reduce_opts o = opts();
  o.target_blocks = -5;
  return MR_OPTS(&o);
}
ROW(mr_empty_min_no_init) {
  akx_array v = vec(x, AKX_FLOAT32, 0);
  return akx_mapreduce(x->ctx, &v, ID, AKX_OP_MIN, NULL, x->out.result, AKX_HOST);
}

/* akx_mapreduce: memory */
ROW(mr_src_misaligned) {
  akx_array v = akx_vector(x->src + 4, AKX_FLOAT64, 16);
  x->bad = x->src + 4;
  return MR(&v);
}
ROW(mr_result_misaligned_device) {
  akx_array v = vec(x, AKX_FLOAT64, 16); /* acc float64: an 8-byte result */
  return akx_mapreduce(x->ctx, &v, ID, ADD, NULL, x->dres + 4, AKX_DEVICE);
}
ROW(mr_src_host) {
  float host[64] = {0};
  akx_array v = akx_vector(host, AKX_FLOAT32, 64);
  x->bad = host;
  return MR(&v);
}
ROW(mr_src_past_end) {
  akx_array v = vec(x, AKX_FLOAT32, SRC_BYTES / 4 + 1);
  x->bad_n = SRC_BYTES + 4;
  return MR(&v);
}
ROW(mr_src_before_start) {
  akx_array v = akx_vector(x->src + 5 * 4, AKX_FLOAT32, 10);
  v.strides[0] = -1; /* elements 5, 4, ..., -4 */
  x->bad = (const void *)((uintptr_t)x->src - 4 * 4);
  return MR(&v);
}
ROW(mr_result_host_for_device) {
  x->bad = x->out.result;
  return akx_mapreduce(x->ctx, &x->v32, ID, ADD, NULL, x->out.result, AKX_DEVICE);
}
ROW(mr_result_past_end) {
  x->bad = x->dout + DOUT_BYTES; /* a float32 result just past the allocation */
  return akx_mapreduce(x->ctx, &x->v32, ID, ADD, NULL, x->dout + DOUT_BYTES, AKX_DEVICE);
}
/* A caller workspace one byte smaller than the query says `src` needs. */
static void workspace_one_short(bx *x, const akx_array *src) {
  size_t need = 0;
  cr_assert_eq(akx_mapreduce_workspace_size(x->ctx, src, ID, ADD, NULL, &need), AKX_SUCCESS,
               "%s", akx_last_error());
  cr_assert(need > 1, "the query says %zu bytes", need);
  x->ws = tfx_alloc(x->ctx, need);
  cr_assert_eq(akx_context_set_workspace(x->ctx, x->ws, need - 1), AKX_SUCCESS, "%s",
               akx_last_error());
  x->bad_n = (long long)(need - 1);
}
ROW(mr_workspace_short_host) {
  workspace_one_short(x, &x->v32);
  return MR(&x->v32);
}
ROW(mr_capturing_host) { return CAPTURING(MR(&x->v32)); }
ROW(mr_capturing_grow) {
  size_t need = 0;
  cr_assert_eq(akx_mapreduce_workspace_size(x->ctx, &x->v32, ID, ADD, NULL, &need), AKX_SUCCESS,
               "%s", akx_last_error());
  x->bad_n = (long long)need;
  return CAPTURING(akx_mapreduce(x->ctx, &x->v32, ID, ADD, NULL, x->dres, AKX_DEVICE));
}
ROW(mr_workspace_short_device) {
  workspace_one_short(x, &x->v32);
  return akx_mapreduce(x->ctx, &x->v32, ID, ADD, NULL, x->dres, AKX_DEVICE);
}

/* akx_mapreduce_workspace_size */
ROW(ws_null_ctx) {
  return akx_mapreduce_workspace_size(NULL, &x->v32, ID, ADD, NULL, &x->out.bytes);
}
ROW(ws_null_src) { return WS(NULL); }
ROW(ws_null_bytes) { return akx_mapreduce_workspace_size(x->ctx, &x->v32, ID, ADD, NULL, NULL); }
ROW(ws_op_past_end) {
  return akx_mapreduce_workspace_size(x->ctx, &x->v32, ID, (akx_op)AKX_OP_COUNT, NULL, &x->out.bytes);
}
ROW(ws_xor_float32) {
  return akx_mapreduce_workspace_size(x->ctx, &x->v32, ID, AKX_OP_XOR, NULL, &x->out.bytes);
}
ROW(ws_ndim_9) {
  akx_array v = x->v32;
  v.ndim = 9;
  return WS(&v);
}
ROW(ws_fold_2) {
  akx_reduce_opts o = opts();
  o.fold = 2;
  return akx_mapreduce_workspace_size(x->ctx, &x->v32, ID, ADD, &o, &x->out.bytes);
}
ROW(ws_block_size_33) {
  akx_reduce_opts o = opts();
  o.block_size = 33;
  return akx_mapreduce_workspace_size(x->ctx, &x->v32, ID, ADD, &o, &x->out.bytes);
}
ROW(ws_stride_overflow) {
  const int64_t n[1] = {3}, s[1] = {INT64_C(1) << 62};
  akx_array v = view(x, AKX_FLOAT32, 1, n, s);
  return WS(&v);
}

/* akx_mapreduce_result_dtype */
#define RDT(src, op, o) akx_mapreduce_result_dtype((src), ID, (op), (o), &x->out.dtype)
ROW(rdt_null_src) { return RDT(NULL, ADD, NULL); }
ROW(rdt_null_dtype) { return akx_mapreduce_result_dtype(&x->v32, ID, ADD, NULL, NULL); }
ROW(rdt_dtype_auto) {
  akx_array v = x->v32;
  v.dtype = AKX_DTYPE_AUTO;
  return RDT(&v, ADD, NULL);
}
ROW(rdt_op_past_end) { return RDT(&x->v32, (akx_op)AKX_OP_COUNT, NULL); }
ROW(rdt_xor_float32) { return RDT(&x->v32, AKX_OP_XOR, NULL); }
ROW(rdt_acc_int8) {
  akx_reduce_opts o = opts();
  o.acc = AKX_INT8;
  return RDT(&x->v32, ADD, &o);
}
ROW(rdt_empty_min) {
  const akx_array v = vec(x, AKX_FLOAT32, 0);
  return RDT(&v, AKX_OP_MIN, NULL);
}
#undef RDT

/* akx_reduce_dims: src {8, 128} float32, dst {1, 1} float32 unless the row says otherwise */
ROW(rd_capturing_grow) { return CAPTURING(RD(&x->dst11, &x->m2)); }
ROW(rd_null_ctx) { return akx_reduce_dims(NULL, &x->dst11, &x->m2, ID, ADD, NULL); }
ROW(rd_null_dst) { return RD(NULL, &x->m2); }
ROW(rd_null_src) { return RD(&x->dst11, NULL); }
ROW(rd_dst_dtype_99) {
  akx_array d = x->dst11;
  d.dtype = (akx_dtype)99;
  return RD(&d, &x->m2);
}
ROW(rd_dst_dtype_auto) {
  akx_array d = x->dst11;
  d.dtype = AKX_DTYPE_AUTO;
  return RD(&d, &x->m2);
}
ROW(rd_dst_ndim_9) {
  akx_array d = x->dst11;
  d.ndim = 9;
  return RD(&d, &x->m2);
}
ROW(rd_ndim_mismatch) {
  akx_array d = akx_vector(x->ddst, AKX_FLOAT32, 1);
  return RD(&d, &x->m2);
}
ROW(rd_dst_shape_7) {
  akx_array d = x->dst11;
  d.shape[1] = 7;
  return RD(&d, &x->m2);
}
ROW(rd_dst_shape_negative) {
  akx_array d = x->dst11;
  d.shape[0] = -1;
  return RD(&d, &x->m2);
}
ROW(rd_dst_null_data) {
  akx_array d = x->dst11;
  d.data = NULL;
  return RD(&d, &x->m2);
}
ROW(rd_dst_zero_stride) {
  const int64_t s[2] = {8, 1};
  akx_array d = akx_array_c(x->ddst, AKX_FLOAT32, 2, s);
  d.strides[0] = 0;
  return RD(&d, &x->m2);
}
ROW(rd_dst_host) {
  float host[4] = {0};
  akx_array d = x->dst11;
  d.data = host;
  x->bad = host;
  return RD(&d, &x->m2);
}
ROW(rd_dst_misaligned) {
  akx_array d = x->dst11;
  d.data = x->ddst + 4;
  d.dtype = AKX_FLOAT64;
  return RD(&d, &x->m2);
}
ROW(rd_overlap) {
  akx_array d = x->dst11;
  d.data = x->src + 400; /* element 100 of the source */
  return RD(&d, &x->m2);
}
ROW(rd_src_host) {
  float host[8 * 128] = {0};
  const int64_t s[2] = {8, 128};
  akx_array v = akx_array_c(host, AKX_FLOAT32, 2, s);
  x->bad = host;
  return RD(&x->dst11, &v);
}
ROW(rd_src_stride_overflow) {
  const int64_t n[2] = {3, 1}, s[2] = {INT64_C(1) << 62, 1};
  akx_array v = view(x, AKX_FLOAT32, 2, n, s);
  return RD(&x->dst11, &v);
}
ROW(rd_and_complex64) {
  const int64_t s[2] = {8, 64};
  akx_array v = akx_array_c(x->src, AKX_COMPLEX64, 2, s);
  akx_array d = x->dst11;
  d.dtype = AKX_COMPLEX64;
  return akx_reduce_dims(x->ctx, &d, &v, ID, AKX_OP_AND, NULL);
}
ROW(rd_op_past_end) { return akx_reduce_dims(x->ctx, &x->dst11, &x->m2, ID, (akx_op)AKX_OP_COUNT, NULL); }
ROW(rd_map_negative) {
  return akx_reduce_dims(x->ctx, &x->dst11, &x->m2, (akx_map)-1, ADD, NULL);
}
ROW(rd_block_size_33) {
  akx_reduce_opts o = opts();
  o.block_size = 33;
  return akx_reduce_dims(x->ctx, &x->dst11, &x->m2, ID, ADD, &o);
}
ROW(rd_workspace_short) {
  workspace_one_short(x, &x->m2); /* reduce_dims has no query: mapreduce's, same src */
  return RD(&x->dst11, &x->m2);
}
static akx_array dst81(bx *x) {
  const int64_t s[2] = {8, 1};
  return akx_array_c(x->ddst, AKX_FLOAT32, 2, s);
}
ROW(rd_dims_workspace_short) {
  akx_array d = dst81(x);
  size_t need = 0;
  cr_assert_eq(akx_reduce_dims_workspace_size(x->ctx, &d, &x->m2, ID, ADD, NULL, &need), AKX_SUCCESS,
               "%s", akx_last_error());
  cr_assert(need > 1, "the query says %zu bytes", need);
  x->ws = tfx_alloc(x->ctx, need);
  cr_assert_eq(akx_context_set_workspace(x->ctx, x->ws, need - 1), AKX_SUCCESS, "%s", akx_last_error());
  x->bad_n = (long long)(need - 1);
  return RD(&d, &x->m2);
}
ROW(rd_dims_overlap) {
  akx_array d = dst81(x);
  d.data = x->src + 400;
  return RD(&d, &x->m2);
}
ROW(rd_dst_self_overlap) { /* no dim reduced: a map + convert copy into outputs that alias */
  akx_array s = x->m2;
  s.shape[1] = 32;
  akx_array d = s;
  d.data = x->dout;
  d.strides[0] = 16; /* row r starts 16 elements after row r - 1, and is 32 long */
  return RD(&d, &s);
}
ROW(rd_dims_dst_shape_3) {
  akx_array d = dst81(x);
  d.shape[0] = 3;
  return RD(&d, &x->m2);
}
ROW(rd_dims_ndim_mismatch) {
  const int64_t s[3] = {8, 1, 1};
  akx_array d = akx_array_c(x->ddst, AKX_FLOAT32, 3, s);
  return RD(&d, &x->m2);
}
ROW(rd_dims_xor_float32) {
  akx_array d = dst81(x);
  return akx_reduce_dims(x->ctx, &d, &x->m2, ID, AKX_OP_XOR, NULL);
}

/* akx_reduce_dims_workspace_size: src {8, 128}, dst {8, 1} unless the row says otherwise */
ROW(rdws_null_ctx) {
  akx_array d = dst81(x);
  return akx_reduce_dims_workspace_size(NULL, &d, &x->m2, ID, ADD, NULL, &x->out.bytes);
}
ROW(rdws_null_bytes) {
  akx_array d = dst81(x);
  return akx_reduce_dims_workspace_size(x->ctx, &d, &x->m2, ID, ADD, NULL, NULL);
}
ROW(rdws_null_dst) {
  return akx_reduce_dims_workspace_size(x->ctx, NULL, &x->m2, ID, ADD, NULL, &x->out.bytes);
}
ROW(rdws_dst_shape_7) {
  akx_array d = dst81(x);
  d.shape[1] = 7;
  d.strides[0] = 7; /* a layout of its own, so that the shape is what is wrong */
  return akx_reduce_dims_workspace_size(x->ctx, &d, &x->m2, ID, ADD, NULL, &x->out.bytes);
}
ROW(rdws_xor_float32) {
  akx_array d = dst81(x);
  return akx_reduce_dims_workspace_size(x->ctx, &d, &x->m2, ID, AKX_OP_XOR, NULL, &x->out.bytes);
}

/* akx_scan, akx_scan_workspace_size, akx_findall */
static akx_array dst64(bx *x) { return akx_vector(x->ddst, AKX_FLOAT32, 64); }
ROW(scan_capturing_grow) {
  akx_array src = vec(x, AKX_FLOAT32, 64), dst = akx_vector(x->ddst, AKX_FLOAT32, 64);
  return CAPTURING(akx_scan(x->ctx, &dst, &src, ADD, 0, NULL));
}
ROW(scan_null_ctx) {
  akx_array d = dst64(x), s = vec(x, AKX_FLOAT32, 64);
  return akx_scan(NULL, &d, &s, ADD, 0, NULL);
}
ROW(scan_dim_9) {
  akx_array d = dst64(x), s = vec(x, AKX_FLOAT32, 64);
  return akx_scan(x->ctx, &d, &s, ADD, 9, NULL);
}
ROW(scan_dim_minus_2) {
  akx_array d = dst64(x), s = vec(x, AKX_FLOAT32, 64);
  return akx_scan(x->ctx, &d, &s, ADD, -2, NULL);
}
ROW(scan_null_arrays) { return akx_scan(x->ctx, NULL, NULL, ADD, 0, NULL); }
ROW(scan_dst_shape) {
  const int64_t shape[2] = {8, 127};
  akx_array d = akx_array_c(x->ddst, AKX_FLOAT32, 2, shape);
  d.data = x->dout; /* 8 x 127 float32 do not fit at ddst: the whole output buffer */
  akx_array s = x->m2;
  s.shape[0] = 1; /* {1, 128}: 512 bytes of src */
  d.shape[0] = 1;
  return akx_scan(x->ctx, &d, &s, ADD, 1, NULL);
}
ROW(scan_dst_ndim) {
  akx_array d = dst64(x);
  const int64_t shape[2] = {8, 8};
  akx_array s = akx_array_c(x->src, AKX_FLOAT32, 2, shape);
  return akx_scan(x->ctx, &d, &s, ADD, 0, NULL);
}
ROW(scan_overlap) {
  akx_array s = vec(x, AKX_FLOAT32, 64), d = s;
  d.data = x->src + 4;
  return akx_scan(x->ctx, &d, &s, ADD, 0, NULL);
}
ROW(scan_exclusive_max_no_init) {
  akx_array d = dst64(x), s = vec(x, AKX_FLOAT32, 64);
  akx_scan_opts o = akx_scan_opts_default();
  o.exclusive = 1;
  return akx_scan(x->ctx, &d, &s, AKX_OP_MAX, 0, &o);
}
ROW(scan_acc_int32) {
  akx_array d = dst64(x), s = vec(x, AKX_FLOAT32, 64);
  akx_scan_opts o = akx_scan_opts_default();
  o.acc = AKX_INT32;
  return akx_scan(x->ctx, &d, &s, ADD, 0, &o);
}
ROW(scan_acc_int64_of_uint64) {
  akx_array d = akx_vector(x->ddst, AKX_INT64, 16), s = vec(x, AKX_UINT64, 16);
  akx_scan_opts o = akx_scan_opts_default();
  o.acc = AKX_INT64;
  return akx_scan(x->ctx, &d, &s, ADD, 0, &o);
}
ROW(scan_argmax) {
  akx_array d = akx_vector(x->ddst, AKX_INT64, 16), s = vec(x, AKX_FLOAT32, 16);
  return akx_scan(x->ctx, &d, &s, AKX_OP_ARGMAX, 0, NULL);
}
ROW(mr_argmax_complex) {
  akx_array s = vec(x, AKX_COMPLEX64, 16);
  return akx_mapreduce(x->ctx, &s, ID, AKX_OP_ARGMAX, NULL, x->out.result, AKX_HOST);
}
ROW(mr_argmax_map_abs) {
  return akx_mapreduce(x->ctx, &x->v32, AKX_MAP_ABS, AKX_OP_ARGMAX, NULL, x->out.result, AKX_HOST);
}
ROW(mr_argmax_acc) {
  akx_reduce_opts o = akx_reduce_opts_default();
  o.acc = AKX_FLOAT64;
  return akx_mapreduce(x->ctx, &x->v32, ID, AKX_OP_ARGMAX, &o, x->out.result, AKX_HOST);
}
ROW(mr_argmax_empty) {
  akx_array s = vec(x, AKX_FLOAT32, 0);
  return akx_mapreduce(x->ctx, &s, ID, AKX_OP_ARGMAX, NULL, x->out.result, AKX_HOST);
}
ROW(rd_argmax_dst_float64) {
  const int64_t s11[2] = {1, 1};
  akx_array d = akx_array_c(x->ddst, AKX_FLOAT64, 2, s11);
  return akx_reduce_dims(x->ctx, &d, &x->m2, ID, AKX_OP_ARGMAX, NULL);
}
ROW(mr_user_op_unknown) {
  return akx_mapreduce(x->ctx, &x->v32, ID, (akx_op)(AKX_USER_OP_FIRST + 1000000), NULL, x->out.result, AKX_HOST);
}
/* A valid user op's description; the rows break one field each. */
static akx_user_op_desc uop_desc(void) {
  akx_user_op_desc d = {"AKX_HD double add(double a, double b) { return a + b; }\n", "double", "add", NULL, NULL,
                        NULL};
  return d;
}
ROW(uop_null_ctx) {
  const akx_user_op_desc d = uop_desc();
  return akx_user_op_create(NULL, &d, &x->out.op);
}
ROW(uop_null_desc) { return akx_user_op_create(x->ctx, NULL, &x->out.op); }
ROW(uop_null_source) {
  akx_user_op_desc d = uop_desc();
  d.source = NULL;
  return akx_user_op_create(x->ctx, &d, &x->out.op);
}
ROW(uop_null_acc_type) {
  akx_user_op_desc d = uop_desc();
  d.acc_type = NULL;
  return akx_user_op_create(x->ctx, &d, &x->out.op);
}
ROW(uop_acc_type_statement) {
  akx_user_op_desc d = uop_desc();
  d.acc_type = "int; int";
  return akx_user_op_create(x->ctx, &d, &x->out.op);
}
ROW(uop_null_combine) {
  akx_user_op_desc d = uop_desc();
  d.combine = NULL;
  return akx_user_op_create(x->ctx, &d, &x->out.op);
}
ROW(uop_combine_not_a_name) {
  akx_user_op_desc d = uop_desc();
  d.combine = "a b";
  return akx_user_op_create(x->ctx, &d, &x->out.op);
}
ROW(uop_map_not_a_name) {
  akx_user_op_desc d = uop_desc();
  d.map = "m(";
  return akx_user_op_create(x->ctx, &d, &x->out.op);
}
ROW(uop_null_op) {
  const akx_user_op_desc d = uop_desc();
  return akx_user_op_create(x->ctx, &d, NULL);
}
ROW(uop_destroy_builtin) { return akx_user_op_destroy(x->ctx, AKX_OP_ADD); }
ROW(uopinfo_null_info) { return akx_user_op_info(x->ctx, AKX_OP_ARGMAX, NULL); }
ROW(uopinfo_builtin) { return akx_user_op_info(x->ctx, AKX_OP_MAX, &x->out.uop_info); }
ROW(scan_xor_float32) {
  akx_array d = dst64(x), s = vec(x, AKX_FLOAT32, 64);
  return akx_scan(x->ctx, &d, &s, AKX_OP_XOR, 0, NULL);
}
ROW(scan_items_65) {
  akx_array d = dst64(x), s = vec(x, AKX_FLOAT32, 64);
  akx_scan_opts o = akx_scan_opts_default();
  o.items_per_thread = 65;
  return akx_scan(x->ctx, &d, &s, ADD, 0, &o);
}
ROW(scan_exclusive_2) {
  akx_array d = dst64(x), s = vec(x, AKX_FLOAT32, 64);
  akx_scan_opts o = akx_scan_opts_default();
  o.exclusive = 2;
  return akx_scan(x->ctx, &d, &s, ADD, 0, &o);
}
ROW(scan_tile_too_big) {
  /* 256 x 64 x 16 bytes of runs: more than the h200's 232448 bytes per block */
  akx_array d = akx_vector(x->ddst, AKX_COMPLEX128, 16), s = vec(x, AKX_COMPLEX128, 16);
  akx_scan_opts o = akx_scan_opts_default();
  o.block_size = 256;
  o.items_per_thread = 64;
  return akx_scan(x->ctx, &d, &s, ADD, 0, &o);
}
ROW(scan_dim_all_strided) {
  akx_array s = x->m2; /* {8, 128} -> columns 0..31: a {8, 32} view with row stride 128 */
  s.shape[1] = 32;
  akx_array d = s;
  d.data = x->ddst;
  d.strides[0] = 32;
  d.shape[0] = 2; /* {2, 32}: fits the 256 bytes at ddst */
  s.shape[0] = 2;
  d.strides[0] = 128; /* dst must take src's strides for AKX_DIM_ALL... */
  d.data = x->dout;   /* ...which spans 2 x 128 float32 = 1 KiB: the whole output buffer */
  return akx_scan(x->ctx, &d, &s, ADD, AKX_DIM_ALL, NULL);
}
ROW(scan_dst_self_overlap) {
  const int64_t shape[2] = {4, 8};
  akx_array s = akx_array_c(x->src, AKX_FLOAT32, 2, shape), d = akx_array_c(x->ddst, AKX_FLOAT32, 2, shape);
  d.strides[0] = 2; /* rows overlap: row r starts 2 elements after row r - 1 */
  return akx_scan(x->ctx, &d, &s, ADD, 1, NULL);
}
/* akx_scan_piece, akx_mapreduce_piece: an exchange that must never run (a row that reached it
 * would have launched, which the harness sees) */
static akx_status never_scan(void *arg, const void *t, size_t b, const void **before) {
  (void)arg, (void)t, (void)b, (void)before;
  return AKX_ERROR_INTERNAL;
}
static akx_status never_reduce(void *arg, const void *t, size_t b, const void **all) {
  (void)arg, (void)t, (void)b, (void)all;
  return AKX_ERROR_INTERNAL;
}
ROW(piece_scan_null) {
  akx_array d = dst64(x), s = vec(x, AKX_FLOAT32, 64);
  return akx_scan_piece(x->ctx, &d, &s, ADD, 0, NULL, NULL);
}
ROW(piece_scan_no_exchange) {
  akx_array d = dst64(x), s = vec(x, AKX_FLOAT32, 64);
  const akx_scan_piece_t p = {0, 1, NULL, NULL};
  return akx_scan_piece(x->ctx, &d, &s, ADD, 0, NULL, &p);
}
ROW(piece_scan_before_neg) {
  akx_array d = dst64(x), s = vec(x, AKX_FLOAT32, 64);
  const akx_scan_piece_t p = {0, -1, never_scan, NULL};
  return akx_scan_piece(x->ctx, &d, &s, ADD, 0, NULL, &p);
}
ROW(piece_scan_dim_9) {
  akx_array d = dst64(x), s = vec(x, AKX_FLOAT32, 64);
  const akx_scan_piece_t p = {0, 1, never_scan, NULL};
  return akx_scan_piece(x->ctx, &d, &s, ADD, 9, NULL, &p);
}
ROW(piece_mr_null) { return akx_mapreduce_piece(x->ctx, &x->v32, ID, ADD, NULL, NULL, x->out.result, AKX_HOST); }
ROW(piece_mr_pieces_0) {
  const akx_reduce_piece_t p = {0, 0, 0, 0, never_reduce, NULL};
  return akx_mapreduce_piece(x->ctx, &x->v32, ID, ADD, NULL, &p, x->out.result, AKX_HOST);
}
ROW(piece_mr_block_neg) {
  const akx_reduce_piece_t p = {0, -3, 0, 2, never_reduce, NULL};
  return akx_mapreduce_piece(x->ctx, &x->v32, ID, ADD, NULL, &p, x->out.result, AKX_HOST);
}
ROW(piece_mr_null_result) {
  const akx_reduce_piece_t p = {0, 0, 0, 2, never_reduce, NULL};
  return akx_mapreduce_piece(x->ctx, &x->v32, ID, ADD, NULL, &p, NULL, AKX_HOST);
}
/* akx_reduce_dims_piece: src {8, 128}, dst {8, 1} */
ROW(piece_rd_no_exchange) {
  akx_array d = dst81(x);
  const akx_reduce_piece_t p = {0, 0, 0, 2, NULL, NULL};
  return akx_reduce_dims_piece(x->ctx, &d, &x->m2, ID, ADD, NULL, &p);
}
ROW(piece_rd_skip_neg) {
  akx_array d = dst81(x);
  const akx_reduce_piece_t p = {0, 4, -1, 2, never_reduce, NULL};
  return akx_reduce_dims_piece(x->ctx, &d, &x->m2, ID, ADD, NULL, &p);
}
ROW(piece_rd_dst_shape_7) {
  akx_array d = dst81(x);
  d.shape[1] = 7;
  d.strides[0] = 7;
  const akx_reduce_piece_t p = {0, 0, 0, 2, never_reduce, NULL};
  return akx_reduce_dims_piece(x->ctx, &d, &x->m2, ID, ADD, NULL, &p);
}
ROW(piece_rdws_pieces_0) {
  akx_array d = dst81(x);
  return akx_reduce_dims_piece_workspace_size(x->ctx, &d, &x->m2, ID, ADD, NULL, 0, &x->out.bytes);
}
ROW(piece_rdws_null_bytes) {
  akx_array d = dst81(x);
  return akx_reduce_dims_piece_workspace_size(x->ctx, &d, &x->m2, ID, ADD, NULL, 2, NULL);
}
ROW(piece_scanws_before_neg) {
  akx_array d = dst64(x), s = vec(x, AKX_FLOAT32, 64);
  return akx_scan_piece_workspace_size(x->ctx, &d, &s, ADD, 0, NULL, -2, &x->out.bytes);
}
ROW(piece_scanws_dim_9) {
  akx_array d = dst64(x), s = vec(x, AKX_FLOAT32, 64);
  return akx_scan_piece_workspace_size(x->ctx, &d, &s, ADD, 9, NULL, 1, &x->out.bytes);
}
ROW(scanws_null_bytes) {
  akx_array d = dst64(x), s = vec(x, AKX_FLOAT32, 64);
  return akx_scan_workspace_size(x->ctx, &d, &s, ADD, 0, NULL, NULL);
}
ROW(scanws_dim_3) {
  const int64_t shape[2] = {8, 8};
  akx_array s = akx_array_c(x->src, AKX_FLOAT32, 2, shape), d = s;
  d.data = x->ddst;
  return akx_scan_workspace_size(x->ctx, &d, &s, ADD, 3, NULL, &x->out.bytes);
}
ROW(findall_capturing) {
  akx_array idx = akx_vector(x->didx, AKX_INT64, 64);
  return CAPTURING(akx_findall(x->ctx, &x->v32, &idx, &x->out.count));
}
ROW(findall_where_null_ctx) {
  akx_array idx = akx_vector(x->didx, AKX_INT64, 64);
  return akx_findall_where(NULL, &x->v32, &idx, (int64_t *)(void *)x->dres, AKX_DEVICE);
}
ROW(findall_where_null_count) {
  akx_array idx = akx_vector(x->didx, AKX_INT64, 64);
  return akx_findall_where(x->ctx, &x->v32, &idx, NULL, AKX_DEVICE);
}
ROW(findall_where_bad_where) {
  akx_array idx = akx_vector(x->didx, AKX_INT64, 64);
  return akx_findall_where(x->ctx, &x->v32, &idx, &x->out.count, (akx_where)7);
}
ROW(findall_where_host_count) {
  akx_array idx = akx_vector(x->didx, AKX_INT64, 64);
  x->bad = &x->out.count;
  return akx_findall_where(x->ctx, &x->v32, &idx, &x->out.count, AKX_DEVICE);
}
ROW(findall_where_count_misaligned) {
  akx_array idx = akx_vector(x->didx, AKX_INT64, 64);
  x->bad = x->dres + 4;
  return akx_findall_where(x->ctx, &x->v32, &idx, (int64_t *)(void *)(x->dres + 4), AKX_DEVICE);
}
ROW(findall_where_count_in_indices) {
  akx_array idx = akx_vector(x->didx, AKX_INT64, 64);
  return akx_findall_where(x->ctx, &x->v32, &idx, x->didx + 5, AKX_DEVICE);
}
ROW(findall_where_capturing_host) {
  akx_array idx = akx_vector(x->didx, AKX_INT64, 64);
  return CAPTURING(akx_findall_where(x->ctx, &x->v32, &idx, &x->out.count, AKX_HOST));
}
/* the flagged selections: src's first 64 float32, flagged by the int8 bytes at src + 2048 */
static akx_array sel_src(bx *x) { return akx_vector(x->src, AKX_FLOAT32, 64); }
static akx_array sel_flags(bx *x, int64_t n) { return akx_vector(x->src + 2048, AKX_INT8, n); }
static akx_array sel_dst(bx *x, int64_t n) { return akx_vector(x->ddst, AKX_FLOAT32, n); }
ROW(select_null_ctx) {
  akx_array d = sel_dst(x, 64), s = sel_src(x), f = sel_flags(x, 64);
  return akx_select_flagged(NULL, &d, &s, &f, &x->out.count, AKX_HOST);
}
ROW(select_flags_length) {
  akx_array d = sel_dst(x, 64), s = sel_src(x), f = sel_flags(x, 63);
  return akx_select_flagged(x->ctx, &d, &s, &f, &x->out.count, AKX_HOST);
}
ROW(select_dst_dtype) {
  akx_array d = akx_vector(x->ddst, AKX_INT32, 64), s = sel_src(x), f = sel_flags(x, 64);
  return akx_select_flagged(x->ctx, &d, &s, &f, &x->out.count, AKX_HOST);
}
ROW(select_null_count) {
  akx_array d = sel_dst(x, 64), s = sel_src(x), f = sel_flags(x, 64);
  return akx_select_flagged(x->ctx, &d, &s, &f, NULL, AKX_HOST);
}
ROW(select_dst_in_src) { /* not the same view: one item on */
  akx_array d = akx_vector(x->src + 4, AKX_FLOAT32, 64), s = sel_src(x), f = sel_flags(x, 64);
  return akx_select_flagged(x->ctx, &d, &s, &f, &x->out.count, AKX_HOST);
}
ROW(select_dst_in_flags) {
  akx_array d = akx_vector(x->src + 2048, AKX_FLOAT32, 64), s = sel_src(x), f = sel_flags(x, 64);
  return akx_select_flagged(x->ctx, &d, &s, &f, &x->out.count, AKX_HOST);
}
ROW(select_capturing_host) {
  akx_array d = sel_dst(x, 64), s = sel_src(x), f = sel_flags(x, 64);
  return CAPTURING(akx_select_flagged(x->ctx, &d, &s, &f, &x->out.count, AKX_HOST));
}
ROW(partition_null_ctx) {
  akx_array d = sel_dst(x, 64), s = sel_src(x), f = sel_flags(x, 64);
  return akx_partition_flagged(NULL, &d, &s, &f, &x->out.count, AKX_HOST);
}
ROW(partition_dst_length) {
  akx_array d = sel_dst(x, 32), s = sel_src(x), f = sel_flags(x, 64);
  return akx_partition_flagged(x->ctx, &d, &s, &f, &x->out.count, AKX_HOST);
}
ROW(partition_in_place) {
  akx_array s = sel_src(x), f = sel_flags(x, 64);
  return akx_partition_flagged(x->ctx, &s, &s, &f, &x->out.count, AKX_HOST);
}
ROW(partition_host_count_device) {
  akx_array d = sel_dst(x, 64), s = sel_src(x), f = sel_flags(x, 64);
  x->bad = &x->out.count;
  return akx_partition_flagged(x->ctx, &d, &s, &f, &x->out.count, AKX_DEVICE);
}
ROW(select_ws_null_ctx) {
  akx_array d = sel_dst(x, 64), s = sel_src(x), f = sel_flags(x, 64);
  return akx_select_flagged_workspace_size(NULL, &d, &s, &f, &x->out.bytes);
}
ROW(select_ws_null_bytes) {
  akx_array d = sel_dst(x, 64), s = sel_src(x), f = sel_flags(x, 64);
  return akx_select_flagged_workspace_size(x->ctx, &d, &s, &f, NULL);
}
ROW(partition_ws_null_ctx) {
  akx_array d = sel_dst(x, 64), s = sel_src(x), f = sel_flags(x, 64);
  return akx_partition_flagged_workspace_size(NULL, &d, &s, &f, &x->out.bytes);
}
ROW(partition_ws_dst_length) {
  akx_array d = sel_dst(x, 32), s = sel_src(x), f = sel_flags(x, 64);
  return akx_partition_flagged_workspace_size(x->ctx, &d, &s, &f, &x->out.bytes);
}
ROW(findall_ws_null_ctx) {
  akx_array idx = akx_vector(x->didx, AKX_INT64, 64);
  return akx_findall_workspace_size(NULL, &x->v32, &idx, &x->out.bytes);
}
ROW(findall_ws_null_bytes) {
  akx_array idx = akx_vector(x->didx, AKX_INT64, 64);
  return akx_findall_workspace_size(x->ctx, &x->v32, &idx, NULL);
}
ROW(findall_ws_indices_int32) {
  akx_array idx = akx_vector(x->didx, AKX_INT32, 64);
  return akx_findall_workspace_size(x->ctx, &x->v32, &idx, &x->out.bytes);
}
/* the segmented and keyed family: 8 segments of 128 float32 (offsets int64 over src's pattern:
 * never read, ctx comes first), keys int32 */
static akx_array seg_offsets(bx *x) { return akx_vector(x->src, AKX_INT64, 9); }
ROW(seg_reduce_null_ctx) {
  akx_array d = akx_vector(x->ddst, AKX_FLOAT32, 8), o = seg_offsets(x);
  return akx_segmented_reduce(NULL, &d, &x->v32, &o, ID, ADD, NULL);
}
ROW(seg_reduce_ws_null_ctx) {
  akx_array d = akx_vector(x->ddst, AKX_FLOAT32, 8), o = seg_offsets(x);
  return akx_segmented_reduce_workspace_size(NULL, &d, &x->v32, &o, ID, ADD, NULL, &x->out.bytes);
}
ROW(seg_scan_null_ctx) {
  akx_array d = akx_vector(x->ddst, AKX_FLOAT32, 64), s = vec(x, AKX_FLOAT32, 64), o = seg_offsets(x);
  return akx_segmented_scan(NULL, &d, &s, &o, ADD, NULL);
}
ROW(seg_scan_ws_null_ctx) {
  akx_array d = akx_vector(x->ddst, AKX_FLOAT32, 64), s = vec(x, AKX_FLOAT32, 64), o = seg_offsets(x);
  return akx_segmented_scan_workspace_size(NULL, &d, &s, &o, ADD, NULL, &x->out.bytes);
}
ROW(reduce_by_key_null_ctx) {
  akx_array ko = akx_vector(x->didx, AKX_INT32, 32), vo = akx_vector(x->ddst, AKX_FLOAT32, 32);
  akx_array k = vec(x, AKX_INT32, 512), v = akx_vector(x->src + 2048, AKX_FLOAT32, 512);
  return akx_reduce_by_key(NULL, &ko, &vo, &k, &v, ID, ADD, NULL, &x->out.count);
}
ROW(reduce_by_key_where_null_ctx) {
  akx_array ko = akx_vector(x->didx, AKX_INT32, 32), vo = akx_vector(x->ddst, AKX_FLOAT32, 32);
  akx_array k = vec(x, AKX_INT32, 512), v = akx_vector(x->src + 2048, AKX_FLOAT32, 512);
  return akx_reduce_by_key_where(NULL, &ko, &vo, &k, &v, ID, ADD, NULL, (int64_t *)(void *)x->dres, AKX_DEVICE);
}
ROW(reduce_by_key_where_null_runs) {
  akx_array ko = akx_vector(x->didx, AKX_INT32, 32), vo = akx_vector(x->ddst, AKX_FLOAT32, 32);
  akx_array k = vec(x, AKX_INT32, 512), v = akx_vector(x->src + 2048, AKX_FLOAT32, 512);
  return akx_reduce_by_key_where(x->ctx, &ko, &vo, &k, &v, ID, ADD, NULL, NULL, AKX_DEVICE);
}
ROW(reduce_by_key_where_runs_in_keys_out) {
  akx_array ko = akx_vector(x->didx, AKX_INT32, 32), vo = akx_vector(x->ddst, AKX_FLOAT32, 32);
  akx_array k = vec(x, AKX_INT32, 512), v = akx_vector(x->src + 2048, AKX_FLOAT32, 512);
  return akx_reduce_by_key_where(x->ctx, &ko, &vo, &k, &v, ID, ADD, NULL, x->didx + 2, AKX_DEVICE);
}
ROW(reduce_by_key_where_capturing_host) {
  akx_array ko = akx_vector(x->didx, AKX_INT32, 32), vo = akx_vector(x->ddst, AKX_FLOAT32, 32);
  akx_array k = vec(x, AKX_INT32, 512), v = akx_vector(x->src + 2048, AKX_FLOAT32, 512);
  return CAPTURING(akx_reduce_by_key_where(x->ctx, &ko, &vo, &k, &v, ID, ADD, NULL, &x->out.count, AKX_HOST));
}
ROW(scan_by_key_null_ctx) {
  akx_array d = akx_vector(x->ddst, AKX_FLOAT32, 64), k = vec(x, AKX_INT32, 64),
            s = akx_vector(x->src + 2048, AKX_FLOAT32, 64);
  return akx_scan_by_key(NULL, &d, &k, &s, ADD, NULL);
}
ROW(findall_null_ctx) {
  akx_array idx = akx_vector(x->didx, AKX_INT64, 64);
  return akx_findall(NULL, &x->v32, &idx, &x->out.count);
}
ROW(findall_null_count) {
  akx_array idx = akx_vector(x->didx, AKX_INT64, 64);
  return akx_findall(x->ctx, &x->v32, &idx, NULL);
}
ROW(findall_piece_null) {
  akx_array idx = akx_vector(x->didx, AKX_INT64, 64);
  return akx_findall_piece(x->ctx, &x->v32, &idx, &x->out.count, NULL);
}
ROW(findall_piece_base_neg) {
  akx_array idx = akx_vector(x->didx, AKX_INT64, 64);
  const akx_findall_piece_t p = {-8, 0, 0};
  return akx_findall_piece(x->ctx, &x->v32, &idx, &x->out.count, &p);
}
ROW(findall_null_indices) { return akx_findall(x->ctx, &x->v32, NULL, &x->out.count); }
ROW(findall_indices_int32) {
  akx_array idx = akx_vector(x->didx, AKX_INT32, 64);
  return akx_findall(x->ctx, &x->v32, &idx, &x->out.count);
}
ROW(findall_indices_2d) {
  const int64_t shape[2] = {8, 8};
  akx_array idx = akx_array_c(x->didx, AKX_INT64, 2, shape);
  return akx_findall(x->ctx, &x->v32, &idx, &x->out.count);
}
ROW(findall_indices_strided) {
  akx_array idx = akx_vector(x->didx, AKX_INT64, 32);
  idx.strides[0] = 2;
  return akx_findall(x->ctx, &x->v32, &idx, &x->out.count);
}
ROW(findall_indices_in_src) { /* every element of src is nonzero: all 64 would be written */
  akx_array idx = akx_vector(x->src + 1024, AKX_INT64, 64);
  return akx_findall(x->ctx, &x->v32, &idx, &x->out.count);
}

/* Empty outputs: a zero extent, the strides Julia (prefix products: stride 0 after the empty
 * dim) or numpy (all 0) give it. dst sits at ddst, whose poison must survive. */
static akx_array empty_view(void *data, akx_dtype t, int32_t ndim, const int64_t *shape, int julia) {
  akx_array a = akx_array_c(data, t, ndim, shape);
  int64_t st = 1;
  for (int32_t d = 0; d < ndim; d++) {
    a.strides[d] = julia ? st : 0;
    st *= shape[d];
  }
  return a;
}
static akx_status empty_scan(bx *x, int julia) {
  const int64_t shape[3] = {2, 0, 3};
  const akx_array s = empty_view(x->src, AKX_FLOAT32, 3, shape, julia);
  const akx_array d = empty_view(x->ddst, AKX_FLOAT32, 3, shape, julia);
  akx_status st = AKX_SUCCESS;
  for (int32_t dim = 0; dim < 3 && st == AKX_SUCCESS; dim++) st = akx_scan(x->ctx, &d, &s, ADD, dim, NULL);
  return PURE_OK(st == AKX_SUCCESS, "akx_scan: %s (%s)", akx_status_string(st), akx_last_error());
}
ROW(empty_scan_julia_dst) { return empty_scan(x, 1); }
ROW(empty_scan_numpy_dst) { return empty_scan(x, 0); }
static akx_status empty_rd(bx *x, int julia) {
  const int64_t shape[3] = {2, 0, 3}, dshape[3] = {julia ? 2 : 1, 0, julia ? 1 : 3};
  const akx_array s = empty_view(x->src, AKX_FLOAT32, 3, shape, julia);
  const akx_array d = empty_view(x->ddst, AKX_FLOAT32, 3, dshape, julia);
  const akx_status st = akx_reduce_dims(x->ctx, &d, &s, ID, AKX_OP_MAX, NULL);
  return PURE_OK(st == AKX_SUCCESS, "akx_reduce_dims: %s (%s)", akx_status_string(st), akx_last_error());
}
ROW(empty_rd_julia_dst) { return empty_rd(x, 1); }
ROW(empty_rd_numpy_dst) { return empty_rd(x, 0); }
ROW(empty_findall_indices) {
  const int64_t shape[2] = {4, 0}, none[1] = {0};
  const akx_array s = empty_view(x->src, AKX_FLOAT32, 2, shape, 0);
  const akx_array idx = empty_view(x->didx, AKX_INT64, 1, none, 0);
  int64_t count = -1;
  const akx_status st = akx_findall(x->ctx, &s, &idx, &count);
  return PURE_OK(st == AKX_SUCCESS && count == 0, "akx_findall: %s, count %lld (%s)", akx_status_string(st),
                 (long long)count, akx_last_error());
}

static akx_status run_nothing(void *stream, void *ws, void *arg) {
  (void)stream, (void)ws, (void)arg;
  return AKX_SUCCESS;
}
ROW(run_null_ctx) { return akx_context_run(NULL, 0, run_nothing, NULL); }
ROW(run_null_fn) { return akx_context_run(x->ctx, 64, NULL, NULL); }
ROW(run_capturing_grow) { return CAPTURING(akx_context_run(x->ctx, 64, run_nothing, NULL)); }

/* the sim's counters */
ROW(sim_reset_null_ctx) { return akx_sim_counters_reset(NULL); }
ROW(sim_get_null_ctx) {
  return akx_sim_counters_get(NULL, &x->out.total, x->out.per_kernel, 2, &x->out.kernels);
}
ROW(sim_get_capacity_negative) {
  return akx_sim_counters_get(x->ctx, &x->out.total, x->out.per_kernel, -1, &x->out.kernels);
}
ROW(sim_get_null_per_kernel) {
  return akx_sim_counters_get(x->ctx, &x->out.total, NULL, 2, &x->out.kernels);
}
ROW(sim_sites_null_ctx) { return akx_sim_sites_get(NULL, x->out.sites, 2, &x->out.nsites); }
ROW(sim_sites_capacity_negative) {
  return akx_sim_sites_get(x->ctx, x->out.sites, -3, &x->out.nsites);
}
ROW(sim_sites_null_sites) { return akx_sim_sites_get(x->ctx, NULL, 4, &x->out.nsites); }

/* version, DLPack: a valid 1-d float32 tensor over src (kDLCPU, the sim's memory), one field
 * wrong per row */
ROW(version_string) {
  char want[32];
  snprintf(want, sizeof want, "%d.%d.%d", AKX_VERSION_MAJOR, AKX_VERSION_MINOR, AKX_VERSION_PATCH);
  const char *v = akx_version();
  return PURE_OK(v && !strcmp(v, want), "\"%s\" (the macros say %s)", v ? v : "(null)", want);
}
typedef struct {
  DLTensor t;
  int64_t shape[AKX_MAX_DIMS + 1], strides[AKX_MAX_DIMS + 1];
} bx_dl;
static void dl_valid(bx *x, bx_dl *d) {
  memset(d, 0, sizeof *d);
  d->t.data = x->src;
  d->t.device.device_type = kDLCPU;
  d->t.ndim = 1;
  d->t.dtype.code = kDLFloat;
  d->t.dtype.bits = 32;
  d->t.dtype.lanes = 1;
  d->shape[0] = SRC_BYTES / 4;
  d->t.shape = d->shape; /* into *d: the tensor and its arrays stay together */
  d->t.strides = NULL;
}
/* A row converting the valid tensor after `change` (statements on d, the bx_dl). */
#define DL_ROW(id, change)                              \
  ROW(id) {                                             \
    bx_dl d;                                            \
    dl_valid(x, &d);                                    \
    change;                                             \
    return akx_array_from_dlpack(&d.t, &x->out.array); \
  }
ROW(dlpack_null_t) { return akx_array_from_dlpack(NULL, &x->out.array); }
ROW(dlpack_null_out) {
  bx_dl d;
  dl_valid(x, &d);
  return akx_array_from_dlpack(&d.t, NULL);
}
DL_ROW(dlpack_float8, d.t.dtype.bits = 8)
DL_ROW(dlpack_opaque, d.t.dtype.code = 3 /* kDLOpaqueHandle */; d.t.dtype.bits = 64)
DL_ROW(dlpack_code_99, d.t.dtype.code = 99)
DL_ROW(dlpack_lanes_4, d.t.dtype.lanes = 4)
DL_ROW(dlpack_lanes_0, d.t.dtype.lanes = 0)
DL_ROW(dlpack_device_rocm, d.t.device.device_type = (DLDeviceType)10 /* kDLROCM */)
DL_ROW(dlpack_device_cuda_host, d.t.device.device_type = kDLCUDAHost)
DL_ROW(dlpack_device_id_negative, d.t.device.device_id = -1)
DL_ROW(dlpack_ndim_negative, d.t.ndim = -1)
DL_ROW(dlpack_ndim_9, d.t.ndim = 9; for (int i = 0; i < 9; i++) d.shape[i] = 1)
DL_ROW(dlpack_null_shape, d.t.ndim = 2; d.t.shape = NULL)
DL_ROW(dlpack_shape_negative, d.t.ndim = 2; d.shape[0] = 4; d.shape[1] = -3)
DL_ROW(dlpack_null_data, d.t.data = NULL)
DL_ROW(dlpack_misaligned, d.t.byte_offset = 2; d.shape[0] = 16)
DL_ROW(dlpack_offset_wraps, d.t.byte_offset = UINT64_MAX)
DL_ROW(dlpack_stride_overflow, d.shape[0] = 3; d.strides[0] = INT64_C(1) << 62;
       d.t.strides = d.strides)

/* ---- the harness ----------------------------------------------------------------------------- */

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

/* One alternative of a row's string against the lower-cased sentence. */
static int says_one(const char *sentence, const char *alt, size_t len, const bx *x) {
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

static int says(const char *sentence, const char *spec, const bx *x) {
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

/* Leaves a known sentence in akx_last_error() by making another function fail. */
static void make_stale(bx *x, const bx_row *r, char *stale, size_t len) {
  akx_status s;
  if (!strcmp(r->fn, "akx_memcpy"))
    s = akx_context_set_workspace(x->ctx, NULL, 4242);
  else
    s = akx_memcpy(x->ctx, x->ddst, x->src, 8, (akx_copy_kind)4242);
  cr_assert_eq(s, AKX_ERROR_INVALID_ARGUMENT, "[%s] the stale call: %s", r->id,
               akx_status_string(s));
  snprintf(stale, len, "%s", akx_last_error());
  cr_assert(strstr(stale, "4242") != NULL, "[%s] the stale sentence: \"%s\"", r->id, stale);
}

static uint64_t launches(akx_context *ctx) {
  akx_sim_kernel_counters total;
  memset(&total, 0, sizeof total);
  akx_status s = akx_sim_counters_get(ctx, &total, NULL, 0, NULL);
  cr_assert_eq(s, AKX_SUCCESS, "akx_sim_counters_get: %s", akx_last_error());
  return total.launches;
}

/* The name of the bx_out field at byte `at`. */
static const char *out_field(size_t at) {
#define BX_FIELD(f) {#f, offsetof(bx_out, f), sizeof(((bx_out *)0)->f)}
  static const struct {
    const char *name;
    size_t at, size;
  } fields[] = {BX_FIELD(ctx),   BX_FIELD(ptr),        BX_FIELD(bytes),   BX_FIELD(count),
                BX_FIELD(info),  BX_FIELD(total),      BX_FIELD(per_kernel), BX_FIELD(kernels),
                BX_FIELD(sites), BX_FIELD(nsites),     BX_FIELD(result),  BX_FIELD(copy),
                BX_FIELD(array), BX_FIELD(dtype)};
#undef BX_FIELD
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
    if (at >= fields[i].at && at < fields[i].at + fields[i].size) return fields[i].name;
  return "(padding)";
}

static void run_row(const bx_row *r) {
  bx *x = &g;
  /* poison every output: host out-params, the device outputs; keep the source's bytes */
  static unsigned char dev_before[DOUT_BYTES], dev_after[DOUT_BYTES];
  static unsigned char src_before[SRC_BYTES], src_after[SRC_BYTES];
  static bx_out host_before;
  memset(&x->out, POISON, sizeof x->out);
  memcpy(&host_before, &x->out, sizeof host_before);
  memset(dev_before, POISON, sizeof dev_before);
  tfx_to_device(x->ctx, x->dout, dev_before, DOUT_BYTES);
  tfx_to_host(x->ctx, src_before, x->src, SRC_BYTES);

  char stale[1024];
  make_stale(x, r, stale, sizeof stale);
  cr_assert_eq(akx_sim_counters_reset(x->ctx), AKX_SUCCESS, "%s", akx_last_error());

  const akx_status s = r->call(x);
  char said[1024];
  snprintf(said, sizeof said, "%s", akx_last_error());

  cr_log_info("[%s] %s: %s \"%s\"", r->id, r->fn, akx_status_string(s), said);
  if (r->want == PURE) {
    cr_expect_eq(s, AKX_SUCCESS, "[%s] %s returned %s, not its documented value", r->id, r->fn,
                 x->got);
    cr_expect_str_eq(said, stale, "[%s] %s changed akx_last_error() to \"%s\"", r->id, r->fn,
                     said);
  } else {
    cr_expect_eq(s, (akx_status)r->want, "[%s] %s: %s, expected %s (\"%s\")", r->id, r->fn,
                 akx_status_string(s), akx_status_string((akx_status)r->want), said);
    cr_expect(strcmp(said, stale) != 0, "[%s] %s left the stale sentence \"%s\"", r->id, r->fn,
              said);
    for (int i = 0; i < 4 && r->says[i]; i++)
      cr_expect(says(said, r->says[i], x), "[%s] %s: the sentence lacks \"%s\": \"%s\"", r->id,
                r->fn, r->says[i], said);
  }

  /* nothing launched */
  const uint64_t l = launches(x->ctx);
  cr_expect_eq(l, 0, "[%s] %s launched %llu kernel(s)", r->id, r->fn, (unsigned long long)l);

  /* nothing written */
  (void)akx_synchronize(x->ctx);
  for (size_t i = 0; i < sizeof x->out; i++) {
    if (((unsigned char *)&x->out)[i] != ((unsigned char *)&host_before)[i]) {
      cr_expect_fail("[%s] %s wrote its host output %s (byte %zu of bx_out)", r->id, r->fn,
                     out_field(i), i);
      break;
    }
  }
  tfx_to_host(x->ctx, dev_after, x->dout, DOUT_BYTES);
  for (size_t i = 0; i < DOUT_BYTES; i++) {
    if (dev_after[i] != dev_before[i]) {
      cr_expect_fail("[%s] %s wrote device output byte %zu (result 0..255, dst 256..511, "
                     "indices 512..1023)", r->id, r->fn, i);
      break;
    }
  }
  tfx_to_host(x->ctx, src_after, x->src, SRC_BYTES);
  cr_expect(memcmp(src_after, src_before, SRC_BYTES) == 0, "[%s] %s wrote into the source",
            r->id, r->fn);
}

/* Criterion runs each parameter in a freshly started copy of this program (another address
 * space), so the parameter is the row's index, never a pointer into the table. */
typedef struct {
  size_t index;
} bx_param;

ParameterizedTestParameters(bad_input, row) {
  static bx_param params[N_ROWS];
  for (size_t i = 0; i < N_ROWS; i++) params[i].index = i;
  return cr_make_param_array(bx_param, params, N_ROWS);
}

ParameterizedTest(bx_param *p, bad_input, row, .init = bx_setup, .fini = bx_teardown) {
  cr_assert_lt(p->index, N_ROWS);
  run_row(&rows[p->index]);
}

/* ---- the table itself ------------------------------------------------------------------------ */

/* The public functions of include/akx.h, akx_layer.h, akx_sim.h and akx_dlpack.h that take
 * arguments (and akx_version, which takes none but has its row): read from
 * the headers (next to this file's directory) when they can be found, else this list. */
static const char *const known_functions[] = {
    "akx_status_string", "akx_dtype_size", "akx_dtype_name", "akx_vector", "akx_array_c",
    "akx_array_f", "akx_context_create", "akx_context_destroy", "akx_context_set_stream",
    "akx_context_set_workspace", "akx_synchronize", "akx_context_backend", "akx_context_info",
    "akx_malloc", "akx_free", "akx_memcpy", "akx_mapreduce", "akx_mapreduce_workspace_size", "akx_mapreduce_result_dtype",
    "akx_reduce_dims", "akx_reduce_dims_workspace_size", "akx_scan", "akx_scan_workspace_size", "akx_findall", "akx_findall_workspace_size", "akx_context_run", "akx_op_has_own_accumulator", "akx_array_memory_order", "akx_sim_counters_reset",
    "akx_sim_counters_get", "akx_sim_sites_get", "akx_version", "akx_array_from_dlpack"};

static int has_row_for(const char *fn) {
  for (size_t i = 0; i < N_ROWS; i++)
    if (!strcmp(rows[i].fn, fn)) return 1;
  return 0;
}

/* Declarations at the start of a line: "type name(args": every akx_ name followed by '(' whose
 * argument list is not (void). Returns the number found. */
static int check_header(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  char line[512];
  int found = 0;
  while (fgets(line, sizeof line, f)) {
    if (strchr(" \t/*#}", line[0]) || line[0] == '\n') continue;
    for (const char *p = strstr(line, "akx_"); p; p = strstr(p + 1, "akx_")) {
      size_t n = 0;
      while (isalnum((unsigned char)p[n]) || p[n] == '_') n++;
      if (p[n] != '(') continue;
      if (!strncmp(p + n, "(void)", 6)) break; /* no argument to get wrong */
      char name[128];
      snprintf(name, sizeof name, "%.*s", (int)n, p);
      found++;
      cr_expect(has_row_for(name), "%s (declared in %s) has no row in the bad-input matrix", name,
                path);
      break;
    }
  }
  fclose(f);
  return found;
}

Test(bad_input, matrix) {
  cr_log_info("bad-input matrix: %zu rows", N_ROWS);
  cr_assert_geq(N_ROWS, 60, "only %zu rows", N_ROWS);
  for (size_t i = 0; i < N_ROWS; i++) {
    for (size_t j = 0; j < i; j++)
      cr_expect_str_neq(rows[i].id, rows[j].id, "two rows are called %s", rows[i].id);
    cr_expect(rows[i].want == PURE || rows[i].says[0] != NULL,
              "[%s] a failing row must say what the sentence names", rows[i].id);
  }
  for (size_t i = 0; i < sizeof known_functions / sizeof known_functions[0]; i++)
    cr_expect(has_row_for(known_functions[i]), "%s has no row", known_functions[i]);
  /* the headers, so that a function added later cannot go without rows */
  /* AKX_SOURCE_DIR (tests/CMakeLists.txt): __FILE__ is relative to the build directory, and
   * the test runs from another one, where a relative path finds no header. */
  char root[1024];
  snprintf(root, sizeof root, "%s/tests/test_bad_input.c", AKX_SOURCE_DIR);
  char *tests = strstr(root, "tests/test_bad_input.c");
  static const char *const headers[] = {"include/akx.h", "include/akx_layer.h", "include/akx_sim.h",
                                        "include/akx_dlpack.h"};
  for (size_t i = 0; i < sizeof headers / sizeof headers[0]; i++) {
    snprintf(tests, sizeof root - (size_t)(tests - root), "%s", headers[i]);
    int n = check_header(root);
    cr_expect(n > 0, "%s: %s", root, n < 0 ? "cannot open it" : "no function declaration found");
    cr_log_info("%s: %d functions with arguments", root, n);
  }
}

/* The checks mean something: a valid call through the same fixture launches a kernel and
 * writes its result, so "nothing launched" and "nothing written" can fail. */
Test(bad_input, valid_call_is_seen, .init = bx_setup, .fini = bx_teardown) {
  bx *x = &g;
  cr_assert_eq(akx_sim_counters_reset(x->ctx), AKX_SUCCESS);
  memset(x->out.result, POISON, sizeof x->out.result);
  cr_assert_eq(MR(&x->v32), AKX_SUCCESS, "%s", akx_last_error());
  cr_expect_gt(launches(x->ctx), 0, "a valid akx_mapreduce launched nothing on the sim");
  unsigned char poison[4];
  memset(poison, POISON, sizeof poison);
  cr_expect(memcmp(x->out.result, poison, 4) != 0, "a valid akx_mapreduce wrote no result");
}
