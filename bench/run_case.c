/* One case of akx-bench: the akx calls under test, run on the sim once per layout pass,
 * counted and checked, or on CUDA checked and then timed beside their CUB peer and a device
 * copy (bench_cuda.cu); its rows kept for the plot and the summary, and written out. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akx_bench.h"
#include "internal.h" /* akx__context_reread_settings */
#include "bench_no_neutral.h"

record records[MAX_RECORDS];
int nrecords;

/* ---- the akx calls under test ------------------------------------------------------------ */

static akx_status run_scan(akx_context *ctx, void *p) {
  op_arg *a = p;
  akx_status s;
  if (a->kind == OP_SCAN_NO_NEUTRAL) {
    s = akx_bench_no_neutral_scan(ctx, a->dst.data, a->src.data, a->rows, a->cols, a->dim);
    if (s != AKX_SUCCESS) snprintf(a->err, sizeof a->err, "%s", akx_bench_no_neutral_error());
    return s;
  }
  akx_scan_opts so = akx_scan_opts_default();
  s = akx_scan(ctx, &a->dst, &a->src, AKX_OP_ADD, a->dim < 0 ? 0 : a->dim, &so);
  if (s != AKX_SUCCESS) snprintf(a->err, sizeof a->err, "%s", akx_last_error());
  return s;
}

static akx_status run_findall(akx_context *ctx, void *p) {
  op_arg *a = p;
  akx_status s = akx_findall(ctx, &a->src, &a->dst, &a->count);
  if (s != AKX_SUCCESS) snprintf(a->err, sizeof a->err, "%s", akx_last_error());
  return s;
}

static akx_status run_mapreduce_host(akx_context *ctx, void *p) {
  op_arg *a = p;
  akx_status s = akx_mapreduce(ctx, &a->src, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &a->host_result_f,
                               AKX_HOST);
  if (s != AKX_SUCCESS) snprintf(a->err, sizeof a->err, "%s", akx_last_error());
  else a->host_result = a->host_result_f;
  return s;
}

static akx_status run_reduce_dims(akx_context *ctx, void *p) {
  op_arg *a = p;
  akx_status s = akx_reduce_dims(ctx, &a->dst, &a->src, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL);
  if (s == AKX_SUCCESS && a->kind == OP_REDUCE_DIMS_COPY) {
    s = akx_memcpy(ctx, &a->host_result_f, a->dst.data, sizeof(float), AKX_COPY_DEVICE_TO_HOST);
    a->host_result = a->host_result_f;
  }
  if (s != AKX_SUCCESS) snprintf(a->err, sizeof a->err, "%s", akx_last_error());
  return s;
}

static akx_status run_segmented(akx_context *ctx, void *p) {
  op_arg *a = p;
  akx_status s;
  if (a->kind == OP_SEGMENTED_REDUCE)
    s = akx_segmented_reduce(ctx, &a->dst, &a->src, &a->offsets, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL);
  else if (a->kind == OP_REDUCE_BY_KEY)
    s = akx_reduce_by_key(ctx, &a->keys_out, &a->dst, &a->keys, &a->src, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &a->runs);
  else
    s = akx_scan_by_key(ctx, &a->dst, &a->keys, &a->src, AKX_OP_ADD, NULL);
  if (s != AKX_SUCCESS) snprintf(a->err, sizeof a->err, "%s", akx_last_error());
  return s;
}

static akx_status run_select(akx_context *ctx, void *p) {
  op_arg *a = p;
  akx_status s = a->kind == OP_PARTITION_FLAGGED ? akx_partition_flagged(ctx, &a->dst, &a->src, &a->flags, &a->count, AKX_HOST)
                                                 : akx_select_flagged(ctx, &a->dst, &a->src, &a->flags, &a->count, AKX_HOST);
  if (s != AKX_SUCCESS) snprintf(a->err, sizeof a->err, "%s", akx_last_error());
  return s;
}

static akx_bench_enqueue_fn op_fn(op_kind k) {
  switch (k) {
    case OP_SELECT_FLAGGED:
    case OP_PARTITION_FLAGGED: return run_select;
    case OP_SEGMENTED_REDUCE:
    case OP_REDUCE_BY_KEY:
    case OP_SCAN_BY_KEY: return run_segmented;
    case OP_SCAN:
    case OP_SCAN_NO_NEUTRAL: return run_scan;
    case OP_FINDALL: return run_findall;
    case OP_MAPREDUCE_HOST: return run_mapreduce_host;
    default: return run_reduce_dims;
  }
}

/* ---- one case ---------------------------------------------------------------------------- */

static void fill_record(record *r, const bench_case *c, const op_arg *a, int v) {
  memset(r, 0, sizeof *r);
  snprintf(r->suite, sizeof r->suite, "%s", c->p->suite->name);
  snprintf(r->name, sizeof r->name, "%s", c->name);
  snprintf(r->dtype, sizeof r->dtype, "%s", akx_dtype_name(a->src.dtype));
  r->shape[0] = 0;
  for (int d = 0; d < a->src.ndim; ++d) {
    size_t len = strlen(r->shape);
    snprintf(r->shape + len, sizeof r->shape - len, "%s%" PRId64, d ? "x" : "", a->src.shape[d]);
  }
  snprintf(r->variant, sizeof r->variant, "%s", c->variant[v]);
  snprintf(r->series, sizeof r->series, "%s", c->series[v]);
  r->elements = a->n;
  r->bytes_min = c->bytes_min;
}

static record *new_record(void) {
  if (nrecords == MAX_RECORDS) {
    fprintf(stderr, "akx-bench: more than %d rows\n", MAX_RECORDS);
    exit(EXIT_USAGE);
  }
  return &records[nrecords++];
}

#ifdef AKX_HAVE_CUDA
/* Runs one variant once, checked; the row's state says how it went. Returns the status. */
static akx_status run_checked(akx_context *ctx, akx_bench_enqueue_fn fn, op_arg *a, record *r) {
  a->err[0] = 0;
  akx_status s = fn(ctx, a);
  if (s == AKX_SUCCESS) s = akx_synchronize(ctx);
  if (s == AKX_ERROR_UNSUPPORTED) {
    r->state = ROW_NA;
    snprintf(r->note, sizeof r->note, "%s", a->err);
  } else if (s != AKX_SUCCESS) {
    r->state = ROW_FAIL;
    snprintf(r->note, sizeof r->note, "%s: %s", akx_status_string(s), a->err[0] ? a->err : akx_last_error());
  } else if (!check_op(ctx, a, r->note, sizeof r->note)) {
    r->state = ROW_FAIL;
    s = AKX_ERROR_INTERNAL;
  }
  return s;
}
#endif

/* Runs a case's variants, checks them, and writes their rows to the table and the files. */
static int run_case(akx_context *ctx, const bench_case *c) {
  int failed = 0;
  int nv = c->arg[1] ? 2 : 1;
  record *rows[2];
  for (int v = 0; v < nv; ++v) {
    rows[v] = new_record();
    fill_record(rows[v], c, c->arg[v], v);
  }
  if (on_sim) {
    for (int v = 0; v < nv; ++v) {
      record *r = rows[v];
      op_arg *a = c->arg[v];
      akx_bench_enqueue_fn fn = op_fn(a->kind);
      r->copy_model_us = model_copy_us(r->bytes_min);
      static const char *const layouts[] = {"dense", "odd_stride", NULL};
      for (int pass = c->scan_layouts && opt.full ? 0 : 2; pass < 3; ++pass) {
        if (pass < 2) setenv("AKX_SCAN_LAYOUT", layouts[pass], 1);
        else unsetenv("AKX_SCAN_LAYOUT");
        /* the context reads its settings once; these passes change one on purpose */
        if (akx__context_reread_settings(ctx) != AKX_SUCCESS) {
          fprintf(stderr, "akx-bench: %s\n", akx_last_error());
          return failed + 1;
        }
        sim_counts counts;
        a->err[0] = 0;
        akx_status s = sim_call(ctx, fn, a, &counts, &r->wall_s);
        if (s == AKX_ERROR_UNSUPPORTED) {
          r->state = ROW_NA;
          snprintf(r->note, sizeof r->note, "%s", a->err[0] ? a->err : akx_last_error());
          break;
        }
        if (s != AKX_SUCCESS) {
          r->state = ROW_FAIL;
          snprintf(r->note, sizeof r->note, "%s: %s", akx_status_string(s), a->err[0] ? a->err : akx_last_error());
          break;
        }
        if (!check_op(ctx, a, r->note, sizeof r->note)) {
          r->state = ROW_FAIL;
          break;
        }
        record_counts(r, &counts);
        write_kernel_rows(r, &counts, pass < 2 ? layouts[pass] : "");
        if (pass == 0) {
          r->have_layouts = 1;
          r->smem_dense = r->smem;
          r->model_dense = r->model_us;
        } else if (pass == 1) {
          r->smem_odd = r->smem;
          r->model_odd = r->model_us;
        }
      }
      failed |= r->state == ROW_FAIL;
    }
  }
#ifdef AKX_HAVE_CUDA
  else {
    akx_bench_enqueue_fn fns[2] = {NULL, NULL};
    for (int v = 0; v < nv; ++v) {
      akx_bench_enqueue_fn fn = op_fn(c->arg[v]->kind);
      if (run_checked(ctx, fn, c->arg[v], rows[v]) == AKX_SUCCESS) fns[v] = fn;
      failed |= rows[v]->state == ROW_FAIL;
    }
    /* The peers run even when akx cannot (their figures are the target); two akx variants
     * share one arg (the reduce suite), so the timing takes the first. */
    if (!opt.once && !failed) {
      akx_bench_cuda_result res;
      char err[512];
      op_arg *arg = c->arg[0];
      if (nv == 2 && !fns[0]) arg = c->arg[1];
      if (akx_bench_cuda_time(ctx, fns, arg, &c->peer, WARMUP_RUNS, opt.runs, &res, err, sizeof err)) {
        for (int v = 0; v < nv; ++v) {
          rows[v]->state = ROW_FAIL;
          snprintf(rows[v]->note, sizeof rows[v]->note, "timing: %s", err);
        }
        failed = 1;
      } else {
        for (int v = 0; v < nv; ++v) {
          rows[v]->akx = (timing){res.akx[v].median_us, res.akx[v].min_us, res.akx[v].ran};
          rows[v]->cub = (timing){res.cub.median_us, res.cub.min_us, res.cub.ran};
          rows[v]->copy = (timing){res.copy.median_us, res.copy.min_us, res.copy.ran};
        }
      }
    }
  }
#endif
  progress_done();
  for (int v = 0; v < nv; ++v) output_row(rows[v]);
  fflush(stdout);
  return failed;
}

int run_and_free(akx_context *ctx, const bench_case *c, buffers *b) {
  int failed = run_case(ctx, c);
  buffers_destroy(ctx, b);
  return failed;
}
