/* Internal error reporting: every failing path sets the thread-local sentence that
 * akx_last_error() returns and returns its status, in one expression. */
#ifndef AKX_ERROR_H
#define AKX_ERROR_H
#include "akx.h"
#include "akx/fail.h" /* akx__fail, AKX_TRY */
#ifdef __cplusplus
extern "C" {
#endif


/* The calling thread's sentence, kept and put back: a call that succeeds after an internal
 * attempt failed (akx_context_create's CUDA probe) leaves akx_last_error() as it found it. */
typedef struct { char text[1024]; } akx__error_saved;
void akx__error_save(akx__error_saved *saved);
void akx__error_restore(const akx__error_saved *saved);


#ifdef __cplusplus
}
#endif
#endif
