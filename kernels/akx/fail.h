/* How a launcher (host code in the kernel headers) and the library's host code fail: set the
 * calling thread's akx_last_error() sentence and return the status, in one expression. The
 * definition is libakx's (src/core/error.c); this declaration is here so that the kernel
 * headers need nothing from src/ (an install, NVRTC and the sim's run-time compiles see only
 * include/). */
#ifndef AKX_FAIL_H
#define AKX_FAIL_H
#include "akx.h"
#ifdef __cplusplus
extern "C" {
#endif

/* Sets akx_last_error() to the formatted sentence and returns s. */
akx_status akx__fail(akx_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#define AKX_TRY(expr)                     \
  do {                                    \
    akx_status akx_try_s_ = (expr);       \
    if (akx_try_s_ != AKX_SUCCESS) return akx_try_s_; \
  } while (0)

#ifdef __cplusplus
}
#endif
#endif
