/* Test and bench settings from the environment (README, "Environment variables"): read and
 * validated once, when a context is created, so that a context plans the same way for its
 * whole life and a misspelt value is an error rather than a silent default. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

/* The index of v in names (count entries), or -1. */
static int lookup(const char *v, const char *const *names, int count) {
  for (int i = 0; i < count; ++i)
    if (strcmp(v, names[i]) == 0) return i;
  return -1;
}

static akx_status pick(const char *var, const char *const *names, const int32_t *values, int count,
                       const char *accepted, int32_t fallback, int32_t *out) {
  const char *v = getenv(var);
  *out = fallback;
  if (!v || !*v) return AKX_SUCCESS;
  const int i = lookup(v, names, count);
  if (i < 0)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "%s=\"%s\" is not understood: use %s", var, v,
                     accepted);
  *out = values[i];
  return AKX_SUCCESS;
}

/* A whole number in [lo, hi] from var, else unset; `what` names it in the sentence ("a number
 * of splits"). A sign is refused before strtoull, which would wrap "-1". */
static akx_status number(const char *var, unsigned long long lo, unsigned long long hi, const char *what,
                         unsigned long long unset, unsigned long long *out) {
  const char *v = getenv(var);
  *out = unset;
  if (!v || !*v) return AKX_SUCCESS;
  char *end = NULL;
  errno = 0;
  const unsigned long long n = strtoull(v, &end, 10);
  if (errno || *end || strchr(v, '-') || n < lo || n > hi)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "%s=\"%s\" is not understood: use %s from %llu to %llu", var, v,
                     what, lo, hi);
  *out = n;
  return AKX_SUCCESS;
}

akx_status akx__read_settings(akx__settings *s) {
  static const char *const layouts[] = {"conflict_free", "dense", "odd_stride"};
  static const int32_t layout_values[] = {AKX__SCAN_LAYOUT_CONFLICT_FREE, AKX__SCAN_LAYOUT_DENSE,
                                          AKX__SCAN_LAYOUT_ODD_STRIDE};
  AKX_TRY(pick("AKX_SCAN_LAYOUT", layouts, layout_values, 3, "conflict_free, dense or odd_stride",
               AKX__SCAN_LAYOUT_CONFLICT_FREE, &s->scan_layout));
  static const char *const scan_shapes[] = {"whole", "slices", "columns"};
  static const int32_t scan_values[] = {AKX__SCAN_WHOLE, AKX__SCAN_SLICES, AKX__SCAN_COLUMNS};
  AKX_TRY(pick("AKX_SCAN_SHAPE", scan_shapes, scan_values, 3, "whole, slices or columns", -1,
               &s->scan_shape));
  static const int32_t dims_values[] = {AKX__DIMS_ROWS, AKX__DIMS_WARP_ROWS, AKX__DIMS_PER_THREAD,
                                        AKX__DIMS_TILED, AKX__DIMS_COLUMNS, AKX__DIMS_STRIDED};
  const char *dims_shapes[6];
  for (int i = 0; i < 6; ++i) dims_shapes[i] = akx__reduce_dims_shape_name(dims_values[i]);
  AKX_TRY(pick("AKX_REDUCE_DIMS_SHAPE", dims_shapes, dims_values, 6,
               "rows, warp_rows, per_thread, tiled, columns or strided", -1, &s->dims_shape));
  static const char *const kernels[] = {"prebuilt", "runtime"};
  static const int32_t kernel_values[] = {AKX__KERNELS_PREBUILT, AKX__KERNELS_RUNTIME};
  AKX_TRY(pick("AKX_KERNELS", kernels, kernel_values, 2, "prebuilt or runtime", AKX__KERNELS_PREBUILT,
               &s->kernels));
  unsigned long long n;
  AKX_TRY(number("AKX_REDUCE_DIMS_SPLITS", 1, 65535, "a number of splits", 0, &n));
  s->dims_splits = (int32_t)n;
  /* The look-back epoch a context starts from (kernels/akx/lookback.cuh): tests start it near
   * the wrap of its 32 bits. */
  AKX_TRY(number("AKX_LOOKBACK_EPOCH", 0, UINT32_MAX, "a number", 0, &n));
  s->lookback_epoch = (uint32_t)n;
  AKX_TRY(number("AKX_PDL", 0, 1, "0 or 1", 1, &n));
  s->pdl = (int32_t)n;
  AKX_TRY(number("AKX_ONE_LAUNCH", 0, 1, "0 or 1", 1, &n));
  s->one_launch = (int32_t)n;
  return AKX_SUCCESS;
}

const char *akx__reduce_dims_shape_name(int shape) {
  switch (shape) {
    case AKX__DIMS_ROWS: return "rows";
    case AKX__DIMS_WARP_ROWS: return "warp_rows";
    case AKX__DIMS_PER_THREAD: return "per_thread";
    case AKX__DIMS_TILED: return "tiled";
    case AKX__DIMS_COLUMNS: return "columns";
    case AKX__DIMS_STRIDED: return "strided";
    case AKX__DIMS_WHOLE: return "whole";
    case AKX__DIMS_NONE: return "none";
    case AKX__DIMS_PIECES: return "pieces";
  }
  return "?";
}

int akx__context_pdl(const akx_context *ctx) { return ctx->settings.pdl && ctx->info.cc_major >= 9; }

int akx__prebuilt_serves(const akx_context *ctx, int in_set) {
  return in_set && ctx->prebuilt_runs && ctx->settings.kernels == AKX__KERNELS_PREBUILT;
}
