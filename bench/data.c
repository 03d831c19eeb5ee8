/* akx-bench's data: the input of a case (random nonzero integers, exact in every dtype), its
 * buffers on the host and the device, and the check of each akx result against the host. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akx_bench.h"

/* ---- input data and host references ------------------------------------------------------ */

static uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

/* Random nonzero integers in -8..-1, 1..8 (splitmix64 of the index and a per-case seed): a
 * lost or repeated element shows, and every partial sum of up to 10^8 of them (a random walk,
 * ~5 sqrt(n)) stays far below 2^24, so float32, bfloat16-into-float32 and float64 results in
 * any order are exact and the checks demand equality. */
static int value_at(uint64_t seed, int64_t i) {
  int v = (int)(mix((uint64_t)i * 0x9e3779b97f4a7c15u + seed) % 16);
  return v < 8 ? v - 8 : v - 7;
}

static uint16_t bf16_from_float(float f) { /* round to nearest even; no NaNs here */
  uint32_t u;
  memcpy(&u, &f, 4);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

static double bf16_to_double(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static void store_value(void *p, akx_dtype t, int64_t i, double v) {
  switch (t) {
    case AKX_FLOAT32: ((float *)p)[i] = (float)v; break;
    case AKX_FLOAT64: ((double *)p)[i] = v; break;
    case AKX_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
    case AKX_BFLOAT16: ((uint16_t *)p)[i] = bf16_from_float((float)v); break;
    case AKX_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    default: break;
  }
}

static double load_value(const void *p, akx_dtype t, int64_t i) {
  switch (t) {
    case AKX_FLOAT32: return ((const float *)p)[i];
    case AKX_FLOAT64: return ((const double *)p)[i];
    case AKX_INT32: return ((const int32_t *)p)[i];
    case AKX_BFLOAT16: return bf16_to_double(((const uint16_t *)p)[i]);
    case AKX_BOOL: return ((const uint8_t *)p)[i];
    default: return NAN;
  }
}

/* What a result of exact value v reads as in dtype t (bfloat16 rounds once, from float32). */
static double as_dtype(double v, akx_dtype t) {
  return t == AKX_BFLOAT16 ? bf16_to_double(bf16_from_float((float)v)) : t == AKX_FLOAT32 ? (float)v : v;
}

/* ---- checks against the host ------------------------------------------------------------- */

int64_t product(int nd, const int64_t *shape) {
  int64_t n = 1;
  for (int d = 0; d < nd; ++d) n *= shape[d];
  return n;
}

/* 1 when the result matches the host reference; else 0 with a sentence in why. */
/* The segmented suite's calls (float32 ADD) against sums on the host, in double: a segment's or
 * run's sum within 1e-5 of its magnitude (the kernel's fold is float32, in tile order). */
static int check_segmented(akx_context *ctx, op_arg *a, char *why, size_t why_size) {
  const int scan = a->kind == OP_SCAN_BY_KEY;
  const int64_t out_n = scan ? a->n : a->dst.shape[0];
  float *got = malloc((size_t)(out_n > 0 ? out_n : 1) * sizeof(float));
  int32_t *keys_got = a->kind == OP_REDUCE_BY_KEY ? malloc((size_t)(out_n > 0 ? out_n : 1) * 4) : NULL;
  int ok = got && (a->kind != OP_REDUCE_BY_KEY || keys_got);
  if (!ok) snprintf(why, why_size, "no host memory for the check");
  if (ok && akx_memcpy(ctx, got, a->dst.data, (size_t)out_n * 4, AKX_COPY_DEVICE_TO_HOST) != AKX_SUCCESS) {
    snprintf(why, why_size, "copying the result back: %s", akx_last_error());
    ok = 0;
  }
  if (ok && keys_got && akx_memcpy(ctx, keys_got, a->keys_out.data, (size_t)out_n * 4, AKX_COPY_DEVICE_TO_HOST)) {
    snprintf(why, why_size, "copying the keys back: %s", akx_last_error());
    ok = 0;
  }
  const float *x = a->host_src;
  int64_t out = 0;
  double run = 0, mag = 0;
  for (int64_t i = 0; ok && i < a->n; ++i) {
    const int head = a->kind == OP_SEGMENTED_REDUCE ? 0 : i == 0 || a->host_keys[i] != a->host_keys[i - 1];
    if (head) run = mag = 0;
    run += x[i];
    mag += fabs(x[i]);
    const int end = a->kind == OP_SEGMENTED_REDUCE ? 0 : i + 1 == a->n || a->host_keys[i + 1] != a->host_keys[i];
    const int64_t at = scan ? i : out;
    if ((scan || end) && fabs(got[at] - run) > 1e-5 * mag + 1e-6) {
      snprintf(why, why_size, "output %" PRId64 " is %.9g, expected %.9g", at, got[at], run);
      ok = 0;
    }
    if (end && keys_got && keys_got[out] != a->host_keys[i]) {
      snprintf(why, why_size, "key %" PRId64 " is %d, expected %d", out, keys_got[out], a->host_keys[i]);
      ok = 0;
    }
    out += end;
  }
  if (ok && a->kind == OP_REDUCE_BY_KEY && a->runs != out) {
    snprintf(why, why_size, "runs is %" PRId64 ", expected %" PRId64, a->runs, out);
    ok = 0;
  }
  for (int64_t s = 0; ok && a->kind == OP_SEGMENTED_REDUCE && s < out_n; ++s) {
    double sum = 0, m = 0;
    for (int64_t i = a->host_offsets[s]; i < a->host_offsets[s + 1]; ++i) sum += x[i], m += fabs(x[i]);
    if (fabs(got[s] - sum) > 1e-5 * m + 1e-6) {
      snprintf(why, why_size, "segment %" PRId64 " is %.9g, expected %.9g", s, got[s], sum);
      ok = 0;
    }
  }
  free(got);
  free(keys_got);
  return ok;
}

/* A flagged select (the flagged items in order) or partition (then the others reversed from the
 * end), bit for bit, and the count. */
static int check_select(akx_context *ctx, op_arg *a, char *why, size_t why_size) {
  const size_t esize = akx_dtype_size(a->src.dtype);
  unsigned char *got = malloc((size_t)a->n * esize + 1);
  if (!got) {
    snprintf(why, why_size, "no host memory for the check");
    return 0;
  }
  int ok = akx_memcpy(ctx, got, a->dst.data, (size_t)a->n * esize, AKX_COPY_DEVICE_TO_HOST) == AKX_SUCCESS;
  if (!ok) snprintf(why, why_size, "copying the result back: %s", akx_last_error());
  int64_t k = 0, r = 0;
  const unsigned char *src = a->host_src;
  for (int64_t i = 0; ok && i < a->n; ++i) {
    const int64_t at = a->host_flags[i] ? k++ : a->kind == OP_PARTITION_FLAGGED ? a->n - 1 - r++ : -1;
    if (at >= 0 && memcmp(got + at * (int64_t)esize, src + i * (int64_t)esize, esize) != 0) {
      snprintf(why, why_size, "dst[%" PRId64 "] is not item %" PRId64 "'s bits", at, i);
      ok = 0;
    }
  }
  if (ok && k != a->count) {
    snprintf(why, why_size, "count is %" PRId64 ", expected %" PRId64, a->count, k);
    ok = 0;
  }
  free(got);
  return ok;
}

int check_op(akx_context *ctx, op_arg *a, char *why, size_t why_size) {
  if (a->kind == OP_MAPREDUCE_HOST || a->kind == OP_REDUCE_DIMS_COPY) {
    double ref = 0;
    for (int64_t i = 0; i < a->n; ++i) ref += load_value(a->host_src, a->src.dtype, i);
    if (a->host_result == ref) return 1;
    snprintf(why, why_size, "sum is %.17g, expected %.17g", a->host_result, ref);
    return 0;
  }
  if (a->kind == OP_SEGMENTED_REDUCE || a->kind == OP_REDUCE_BY_KEY || a->kind == OP_SCAN_BY_KEY)
    return check_segmented(ctx, a, why, why_size);
  if (a->kind == OP_SELECT_FLAGGED || a->kind == OP_PARTITION_FLAGGED) return check_select(ctx, a, why, why_size);
  int64_t out_n = a->kind == OP_FINDALL ? a->n : product(a->dst.ndim, a->dst.shape);
  size_t esize = akx_dtype_size(a->dst.dtype);
  void *got = malloc((size_t)out_n * esize + 1);
  if (!got) {
    snprintf(why, why_size, "no host memory for the check");
    return 0;
  }
  akx_status s = akx_memcpy(ctx, got, a->dst.data, (size_t)out_n * esize, AKX_COPY_DEVICE_TO_HOST);
  int ok = s == AKX_SUCCESS;
  if (!ok) snprintf(why, why_size, "copying the result back: %s", akx_last_error());
  if (ok && (a->kind == OP_SCAN || a->kind == OP_SCAN_NO_NEUTRAL)) {
    /* whole: one running sum; dims=1: a running sum per column of `rows` elements */
    int64_t seg = a->dim < 0 ? a->n : a->rows;
    double run = 0;
    for (int64_t i = 0; i < a->n && ok; ++i) {
      if (i % seg == 0) run = 0;
      run += load_value(a->host_src, a->src.dtype, i);
      double g = load_value(got, a->dst.dtype, i);
      if (g != as_dtype(run, a->dst.dtype)) {
        snprintf(why, why_size, "element %" PRId64 " is %.17g, expected %.17g", i, g, run);
        ok = 0;
      }
    }
  } else if (ok && a->kind == OP_FINDALL) {
    int64_t k = 0;
    for (int64_t i = 0; i < a->n && ok; ++i) {
      if (load_value(a->host_src, a->src.dtype, i) == 0) continue;
      if (k >= a->count || ((const int64_t *)got)[k] != i) {
        snprintf(why, why_size, "index %" PRId64 " is %" PRId64 ", expected %" PRId64, k,
                 k < a->count ? ((const int64_t *)got)[k] : -1, i);
        ok = 0;
      }
      ++k;
    }
    if (ok && k != a->count) {
      snprintf(why, why_size, "count is %" PRId64 ", expected %" PRId64, a->count, k);
      ok = 0;
    }
  } else if (ok) { /* OP_REDUCE_DIMS: column-major, dst's dim is 1 where reduced */
    double *ref = calloc((size_t)out_n, sizeof(double));
    int nd = a->src.ndim;
    int64_t idx[AKX_MAX_DIMS] = {0};
    for (int64_t i = 0; ref && i < a->n; ++i) {
      int64_t o = 0, stride = 1;
      for (int d = 0; d < nd; ++d) {
        if (a->dst.shape[d] != 1) o += idx[d] * stride;
        stride *= a->dst.shape[d];
      }
      ref[o] += load_value(a->host_src, a->src.dtype, i);
      for (int d = 0; d < nd && ++idx[d] == a->src.shape[d]; ++d) idx[d] = 0;
    }
    for (int64_t o = 0; ref && o < out_n && ok; ++o) {
      double g = load_value(got, a->dst.dtype, o), want = as_dtype(ref[o], a->dst.dtype);
      if (g != want) {
        snprintf(why, why_size, "output %" PRId64 " is %.17g, expected %.17g", o, g, want);
        ok = 0;
      }
    }
    if (!ref) {
      snprintf(why, why_size, "no host memory for the check");
      ok = 0;
    }
    free(ref);
  }
  free(got);
  return ok;
}

/* ---- device buffers ---------------------------------------------------------------------- */

void buffers_destroy(akx_context *ctx, buffers *b) {
  if (b->src) akx_free(ctx, b->src);
  if (b->dst) akx_free(ctx, b->dst);
  free(b->host);
}

/* The case's input on the host and the device; on failure nothing is held. */
akx_status buffers_create(akx_context *ctx, buffers *b, akx_dtype t, int64_t n,
                          size_t dst_bytes, uint64_t seed) {
  *b = (buffers){.src_bytes = (size_t)n * akx_dtype_size(t), .dst_bytes = dst_bytes};
  b->host = malloc(b->src_bytes);
  if (!b->host) return AKX_ERROR_OUT_OF_MEMORY;
  for (int64_t i = 0; i < n; ++i)
    store_value(b->host, t, i, t == AKX_BOOL ? (double)(mix((uint64_t)i + seed) & 1) : value_at(seed, i));
  akx_status s = akx_malloc(ctx, &b->src, b->src_bytes);
  if (s == AKX_SUCCESS) s = akx_malloc(ctx, &b->dst, dst_bytes);
  if (s == AKX_SUCCESS) s = akx_memcpy(ctx, b->src, b->host, b->src_bytes, AKX_COPY_HOST_TO_DEVICE);
  if (s != AKX_SUCCESS) {
    fprintf(stderr, "akx-bench: input of %" PRId64 " %s: %s: %s\n", n, akx_dtype_name(t),
            akx_status_string(s), akx_last_error());
    buffers_destroy(ctx, b);
  }
  return s;
}

uint64_t bench_rand(uint64_t seed, uint64_t i) { return mix(i * 0x9e3779b97f4a7c15u + seed + 1); }

akx_status buffers_select(akx_context *ctx, buffers *b, akx_dtype t, int64_t n, int permille, uint64_t seed) {
  for (int64_t i = 0; i < n; ++i)
    if ((int)(mix((uint64_t)i * 0x9e3779b97f4a7c15u + seed + 1) % 1000) >= permille) store_value(b->host, t, i, 0);
    else store_value(b->host, t, i, t == AKX_BOOL ? 1 : value_at(seed, i));
  return akx_memcpy(ctx, b->src, b->host, (size_t)n * akx_dtype_size(t), AKX_COPY_HOST_TO_DEVICE);
}

void use_buffers(op_arg *a, const buffers *b) {
  a->src.data = b->src;
  a->dst.data = b->dst;
  a->host_src = b->host;
}
