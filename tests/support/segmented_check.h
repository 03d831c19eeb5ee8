/* Runs one call of the segmented and keyed family on generated data and checks it against the
 * host reference (reference.h's accumulators over each segment or run, segmented_reference.h's
 * clamping and runs):
 *  - every output value (exact for integers, bounds for floats);
 *  - every element the call must not write keeps its bytes: guard elements before and after
 *    each output view, the gaps of a strided one, a scan's elements outside every segment,
 *    outputs past a by-key call's runs, and the inputs (src, offsets, keys, values);
 *  - an empty segment's float ADD without init is +0.0 (its sign bit checked).
 * Built-in ops; user ops and ARGMIN/ARGMAX have their own references in the test files. */
#ifndef AKX_TEST_SEGMENTED_CHECK_H
#define AKX_TEST_SEGMENTED_CHECK_H
#include "fixture.h"
#include "segmented_reference.h"
#include "views.h"
#include "kernels/akx/dtype_list.h"

/* Every dtype, from the one list the library's dispatch is generated from. */
#define TSG_DTYPE_ENUM(e, cpp, name, size) e,
static const akx_dtype tsg_all_dtypes[] = {AKX_DTYPE_LIST(TSG_DTYPE_ENUM)};
#define TSG_N_DTYPES (int)(sizeof tsg_all_dtypes / sizeof tsg_all_dtypes[0])

enum { TSG_CHECK_VALUES = 0, TSG_CHECK_GUARDS_ONLY = 1 };

typedef struct {
  akx_dtype src_t;     /* src (segmented calls), values (by key) */
  akx_dtype dst_t;     /* AKX_DTYPE_AUTO: the accumulator's dtype */
  akx_dtype acc;       /* opts->acc: AKX_DTYPE_AUTO or explicit */
  akx_dtype off_t;     /* offsets: AKX_INT32 or AKX_INT64 */
  akx_dtype key_t;     /* keys (by key) */
  akx_map map;         /* reductions */
  akx_op op;
  int with_init;       /* a small init, generated for the accumulator */
  int fold;            /* segmented reduce: dst holds previous values to combine with */
  int exclusive;       /* scans */
  int in_place;        /* scans: dst is src's own view */
  int64_t src_step, dst_step, off_step, key_step; /* strides (0 means 1); negative allowed */
  int64_t cap_keys, cap_vals; /* reduce_by_key: the outputs' lengths (-1: the number of runs) */
  int runs_on_device;  /* reduce_by_key: through akx_reduce_by_key_where, *runs in device memory
                          (status SUCCESS whatever the capacity) */
  int check;           /* TSG_CHECK_* */
  int fill_flags;      /* ref_fill flags */
  int32_t block_size, items_per_thread;
} tsg_case;

tsg_case tsg_case_make(akx_dtype src_t, akx_op op);
/* "float32 ADD map IDENTITY -> auto offsets int64 (power law, nseg 40, n 812) ..." */
const char *tsg_describe(const tsg_case *c, const tsg_offsets *o, char *buf, size_t len);

/* What a run gives back besides its verdict: the output parent's bytes after the call (for
 * comparisons between calls: determinism), owned by the caller (free()), and the by-key count. */
typedef struct {
  unsigned char *out;  /* dst (reduce_by_key: values_out) parent bytes, or NULL */
  size_t out_bytes;
  int64_t runs;
  akx_status status;
  int untouched; /* every byte of the output's buffer as before the call (a refused call's duty) */
} tsg_result;

/* Each uploads generated data, makes the call, checks; 1 when all is well, else 0 and a
 * sentence in msg. res may be NULL. For the by-key calls, `segs` are the runs the keys are
 * generated from (no empty segment). */
int tsg_reduce_run(akx_context *ctx, const tsg_case *c, const tsg_offsets *segs, uint64_t seed,
                   tsg_result *res, char *msg, size_t len);
int tsg_scan_run(akx_context *ctx, const tsg_case *c, const tsg_offsets *segs, uint64_t seed,
                 tsg_result *res, char *msg, size_t len);
/* One of the runners above. */
typedef int (*tsg_runner)(akx_context *ctx, const tsg_case *c, const tsg_offsets *segs, uint64_t seed,
                          tsg_result *r, char *msg, size_t msg_size);
/* Bitwise determinism of a float call (c: its case, values REF_FILL_ROUGH so that the order
 * shows in the bits) over power-law segments and one 2^18 segment split over blocks: the same
 * bits from every call, on ctx and on three contexts under shuffled schedules (random:base+k). */
void tsg_assert_same_bits(akx_context *ctx, tsg_runner run, tsg_case c, int schedule_base);

int tsg_reduce_by_key_run(akx_context *ctx, const tsg_case *c, const tsg_offsets *runs,
                          uint64_t seed, tsg_result *res, char *msg, size_t len);
int tsg_scan_by_key_run(akx_context *ctx, const tsg_case *c, const tsg_offsets *runs,
                        uint64_t seed, tsg_result *res, char *msg, size_t len);

/* ---- pieces the test files use for their own references ---------------------------------- */

/* A 1-d layout of count elements with step `step` (any sign) inside a parent with `guard`
 * elements before and after (fixture.h's tfx_layout; tvw_upload gives its device copy). */
tfx_layout tsg_layout(int64_t count, int64_t step, int64_t guard);
/* 1 when parent element k is one of the view's elements. */
int tsg_in_view(const tfx_layout *L, int64_t k);
/* The offsets as a device view of off_t with step off_step (the entries cast to off_t: what the
 * kernels read, into *seen when not NULL, to free with tsg_free). Free with tvw_free. */
typedef struct {
  tfx_layout L;
  void *host_parent; /* free() */
  void *dev_base;
  akx_array dev;
} tsg_dev_offsets;
tsg_dev_offsets tsg_upload_offsets(akx_context *ctx, const tsg_offsets *o, akx_dtype off_t,
                                   int64_t off_step, tsg_offsets *seen);
void tsg_free_offsets(akx_context *ctx, tsg_dev_offsets *d);
/* A small init for op in acc (exact sums and products stay exact). */
ref_val tsg_init_value(akx_op op, akx_dtype acc);

/* A call's buffers for tests with references of their own (user ops, ARGMIN/ARGMAX): src
 * contiguous (n elements of src_t from a host array), offsets (int32 or int64, step 1), dst of
 * dst_len elements of dst_t (step 1) with guards, its bytes POISON before the call. */
typedef struct {
  tvw_pair src;
  tsg_dev_offsets offs;
  tsg_offsets seen;          /* the offsets as the kernels read them */
  tfx_layout Ld;
  akx_dtype dst_t;
  unsigned char *dst_before; /* host copy of dst's parent before the call */
  tvw_pair dst;
} tsg_rig;
tsg_rig tsg_rig_make(akx_context *ctx, akx_dtype src_t, const void *src_flat, const tsg_offsets *o,
                     akx_dtype off_t, akx_dtype dst_t, int64_t dst_len);
/* dst's parent after the call (free()); tsg_rig_at: element i of dst in it. */
unsigned char *tsg_rig_read(akx_context *ctx, const tsg_rig *r);
const unsigned char *tsg_rig_at(const tsg_rig *r, const unsigned char *parent, int64_t i);
/* 1 when dst's guards (outside the view) kept their bytes. */
int tsg_rig_guards_kept(const tsg_rig *r, const unsigned char *after);
/* 1 when dst element i kept its POISON bytes. */
int tsg_rig_untouched(const tsg_rig *r, const unsigned char *after, int64_t i);
void tsg_rig_free(akx_context *ctx, tsg_rig *r);

#endif
