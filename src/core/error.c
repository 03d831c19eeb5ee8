/* The thread-local sentence behind akx_last_error(). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "error.h"
#include "akx_layer.h" /* akx_set_last_error */

static _Thread_local char last_error[1024];

const char *akx_last_error(void) { return last_error; }

akx_status akx_set_last_error(akx_status s, const char *sentence) {
  snprintf(last_error, sizeof last_error, "%s", sentence ? sentence : "");
  return s;
}

akx_status akx__fail(akx_status s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  va_end(ap);
  return s;
}

void akx__error_save(akx__error_saved *saved) { memcpy(saved->text, last_error, sizeof last_error); }
void akx__error_restore(const akx__error_saved *saved) { memcpy(last_error, saved->text, sizeof last_error); }
