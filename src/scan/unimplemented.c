/* Operations whose kernels come in later issues: they validate the context and say so. */
#include "internal.h"

akx_status akx_scan(akx_context *ctx, const akx_array *dst, const akx_array *src, akx_op op,
                    int32_t dim, const akx_scan_opts *opts) {
  AKX_TRY(akx__check_context(ctx));
  return akx__fail(AKX_ERROR_UNSUPPORTED, "akx_scan is not implemented yet");
}

akx_status akx_findall(akx_context *ctx, const akx_array *src, const akx_array *indices,
                       int64_t *count) {
  AKX_TRY(akx__check_context(ctx));
  return akx__fail(AKX_ERROR_UNSUPPORTED, "akx_findall is not implemented yet");
}
