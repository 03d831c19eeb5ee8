/* Internal error reporting: every failing path sets the thread-local sentence that
 * akx_last_error() returns and returns its status, in one expression. */
#ifndef AKX_ERROR_H
#define AKX_ERROR_H
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

/* The calling thread's sentence, kept and put back: a call that succeeds after an internal
 * attempt failed (akx_context_create's CUDA probe) leaves akx_last_error() as it found it. */
typedef struct { char text[1024]; } akx__error_saved;
void akx__error_save(akx__error_saved *saved);
void akx__error_restore(const akx__error_saved *saved);

#define AKX_TRY(expr)                     \
  do {                                    \
    akx_status akx_try_s_ = (expr);       \
    if (akx_try_s_ != AKX_SUCCESS) return akx_try_s_; \
  } while (0)

#ifdef __cplusplus
}
#endif
#endif
