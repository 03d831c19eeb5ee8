/* A growing NUL-terminated text: what the run-time units are written into (src/jit/instance.c,
 * src/jit/user_op.c). An allocation that fails sets `failed` and drops everything after it, so
 * that a writer checks once, at the end. */
#ifndef AKX_JIT_TEXT_H
#define AKX_JIT_TEXT_H
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  char *p; /* NULL until the first write */
  size_t len, cap;
  int failed;
} akx__text;

void akx__text_put_n(akx__text *t, const char *s, size_t n);
void akx__text_put(akx__text *t, const char *s);
/* printf's format; a format error counts as a failure. */
void akx__text_putf(akx__text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#ifdef __cplusplus
}
#endif
#endif
