/* Runs akx_scan on a view and checks every output against the host reference (a prefix of
 * reference.h's accumulator per element: exact for integers, bounds for floats). */
#ifndef AKX_TEST_SCAN_CHECK_H
#define AKX_TEST_SCAN_CHECK_H
#include "fixture.h"

/* dst: compact C order, compact F order, C order walked backwards, src itself, or a buffer
 * of the parent's size with src's offset and strides. */
enum { TSC_DST_C = 0, TSC_DST_F = 1, TSC_DST_REVERSED = 2, TSC_IN_PLACE = 3, TSC_DST_LIKE_SRC = 4 };

typedef struct {
  akx_op op;
  akx_dtype src_t;
  akx_dtype dst_t;    /* AKX_DTYPE_AUTO: the accumulator's dtype */
  akx_dtype acc;      /* AKX_DTYPE_AUTO or src_t */
  int32_t dim;        /* or AKX_DIM_ALL */
  int exclusive;
  int with_init;      /* a non-trivial init, generated for the accumulator */
  int dst_layout;     /* TSC_DST_* */
  int32_t block_size, items_per_thread;
  int fill_flags;     /* ref_fill flags (REF_FILL_ROUGH: not exact; checked in bounds) */
} tsc_case;

tsc_case tsc_case_make(akx_dtype t, akx_op op);
/* Uploads a generated parent, scans the view L, checks; 1 when all is well, else 0 and a
 * sentence in msg. */
int tsc_run(akx_context *ctx, const tfx_layout *L, const tsc_case *c, uint64_t seed, char *msg,
            size_t len);
/* "float32 ADD dim 0 shape {5} ..." */
const char *tsc_describe(const tfx_layout *L, const tsc_case *c, char *buf, size_t len);

#endif
