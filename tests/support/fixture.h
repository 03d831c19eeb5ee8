/* Test fixtures for libakx: a context per test (Criterion forks a process per test, so a
 * context is never created in a global constructor), device memory helpers, and one
 * routine that runs akx_mapreduce / akx_reduce_dims on a view and checks the result
 * against the host reference (reference.h). */
#ifndef AKX_TEST_FIXTURE_H
#define AKX_TEST_FIXTURE_H
#include <stddef.h>
#include <stdint.h>
#include "akx.h"
#include "reference.h"

/* A context with AKX_BACKEND_AUTO (AKX_BACKEND=cuda|sim picks one); asserts success. */
akx_context *tfx_open(void);
void tfx_close(akx_context *ctx);
int tfx_is_sim(const akx_context *ctx);
const char *tfx_backend_name(const akx_context *ctx);

/* Host memory that asserts. */
void *tfx_xmalloc(size_t bytes);
/* Device memory (akx_malloc) that asserts. */
void *tfx_alloc(akx_context *ctx, size_t bytes);
void tfx_free(akx_context *ctx, void *p);
void tfx_to_device(akx_context *ctx, void *dev, const void *host, size_t bytes);
void tfx_to_host(akx_context *ctx, void *host, const void *dev, size_t bytes);
void *tfx_upload(akx_context *ctx, const void *host, size_t bytes); /* alloc + copy */
/* A user op created on ctx; a failure shows the sentence and the compiler's log. */
akx_op tfx_user_op(akx_context *ctx, const akx_user_op_desc *d);

/* "float32 shape {3, 4} strides {4, 1}" */
const char *tfx_describe(const akx_array *a, char *buf, size_t len);

/* One reduction to run and check. */
typedef struct {
  akx_map map;
  akx_op op;
  akx_dtype acc;            /* AKX_DTYPE_AUTO or explicit */
  const void *init;         /* host, one value of the resolved accumulator, or NULL */
  int fold;                 /* combine with the previous value at the destination */
  const void *prev;         /* mapreduce fold: the previous value (resolved acc bytes) */
  akx_where where;          /* mapreduce only */
  int32_t block_size, items_per_thread, target_blocks;
} tfx_case;

tfx_case tfx_case_make(akx_map m, akx_op op);

/* Runs akx_mapreduce(dev_view) and checks status and value against the reference over
 * host_view (same layout over a host mirror). Expects AKX_ERROR_UNSUPPORTED (and an
 * untouched result) when the combination is not supported, AKX_ERROR_INVALID_ARGUMENT
 * for an empty MIN/MAX without init or fold. Checks that no byte past the accumulator is
 * written. Returns 1 when all is well; else 0 and a sentence in msg. */
int tfx_check_mapreduce(akx_context *ctx, const akx_array *dev_view, const akx_array *host_view,
                        const tfx_case *c, char *msg, size_t len);

/* Same for akx_reduce_dims into a one-element dst of dtype dst_dtype (ndim = src's,
 * every dim 1). With c->fold, dst_prev (host, one dst value) is its previous value;
 * without, dst is pre-filled with garbage that must be overwritten. */
int tfx_check_reduce_dims(akx_context *ctx, const akx_array *dev_view,
                          const akx_array *host_view, akx_dtype dst_dtype,
                          const void *dst_prev, const tfx_case *c, char *msg, size_t len);

/* A source layout over a parent buffer of parent_n elements: the view starts `offset`
 * elements into it, with its own shape and strides (any sign, zero allowed). */
typedef struct {
  int64_t parent_n, offset;
  int32_t ndim;
  int64_t shape[AKX_MAX_DIMS], strides[AKX_MAX_DIMS];
} tfx_layout;

tfx_layout tfx_layout_vector(int64_t n);
/* Row-major parent of shape `pshape`; the view keeps dims `shape` at `start` with steps
 * `step` (negative allowed) in each dim. */
tfx_layout tfx_layout_sub(int32_t ndim, const int64_t *pshape, const int64_t *start,
                          const int64_t *shape, const int64_t *step);
int64_t tfx_layout_count(const tfx_layout *L);

/* Uploads host_parent (L->parent_n elements of t) to an exact-size device buffer, runs the
 * case on the view (akx_mapreduce when dst is AKX_DTYPE_AUTO, else akx_reduce_dims into a
 * one-element dst of that dtype, dst_prev its previous value for a fold), checks, frees. */
int tfx_run(akx_context *ctx, akx_dtype t, const void *host_parent, const tfx_layout *L,
            const tfx_case *c, akx_dtype dst, const void *dst_prev, char *msg, size_t len);
/* Generates the parent for the case (ref_fill: suited to the op, map and accumulator, sized
 * for the view's element count), then tfx_run. */
int tfx_fill_run(akx_context *ctx, akx_dtype t, const tfx_layout *L, const tfx_case *c,
                 uint64_t seed, int fill_flags, akx_dtype dst, const void *dst_prev, char *msg,
                 size_t len);
/* tfx_fill_run of a vector of n elements into akx_mapreduce. */
int tfx_vector_case(akx_context *ctx, akx_dtype t, int64_t n, const tfx_case *c, uint64_t seed,
                    int fill_flags, char *msg, size_t len);

/* Counting failures inside a loop: logs each (up to a limit) and fails the test at the end. */
typedef struct {
  int failures;
  int checks;
} tfx_tally;
void tfx_note(tfx_tally *t, int ok, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void tfx_done(tfx_tally *t); /* asserts no failure and at least one check */

#endif
