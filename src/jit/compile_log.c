/* The thread-local compile log. A log can run to many kilobytes, so it is a heap copy held
 * under a pthread key rather than a fixed _Thread_local buffer: the key's destructor frees it
 * when the thread ends, and threads that never compile pay for one null pointer. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "compile_log.h"

static pthread_once_t log_key_once = PTHREAD_ONCE_INIT;
static pthread_key_t log_key;
static int log_key_ok;

static void make_log_key(void) { log_key_ok = pthread_key_create(&log_key, free) == 0; }

void akx__compile_log_set(const char *log) {
  pthread_once(&log_key_once, make_log_key);
  if (!log_key_ok) return;
  free(pthread_getspecific(log_key));
  char *copy = NULL;
  if (log && *log) {
    size_t n = strlen(log) + 1;
    copy = malloc(n);
    if (copy) memcpy(copy, log, n);
  }
  pthread_setspecific(log_key, copy);
}

const char *akx__compile_log_get(void) {
  pthread_once(&log_key_once, make_log_key);
  const char *log = log_key_ok ? pthread_getspecific(log_key) : NULL;
  return log ? log : "";
}
