/* The scan family's environment hooks (src/scan/scan_plan.h). */
#include <stdlib.h>
#include <string.h>
#include "scan_plan.h"

int32_t akx__scan_layout_override(void) {
  const char *v = getenv("AKX_SCAN_LAYOUT");
  if (!v) return AKX__SCAN_LAYOUT_CONFLICT_FREE;
  if (!strcmp(v, "dense") || !strcmp(v, "unpadded")) return AKX__SCAN_LAYOUT_DENSE;
  if (!strcmp(v, "odd_stride") || !strcmp(v, "seed")) return AKX__SCAN_LAYOUT_ODD_STRIDE;
  return AKX__SCAN_LAYOUT_CONFLICT_FREE;
}

int32_t akx__scan_shape_override(void) {
  const char *v = getenv("AKX_SCAN_SHAPE");
  if (!v) return -1;
  if (!strcmp(v, "whole")) return AKX__SCAN_WHOLE;
  if (!strcmp(v, "slices")) return AKX__SCAN_SLICES;
  if (!strcmp(v, "columns")) return AKX__SCAN_COLUMNS;
  return -1;
}
