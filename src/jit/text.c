/* src/jit/text.h's growing text. */
#include "text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for n more bytes and the terminator; 0 when the text has failed. */
static int reserve(akx__text *t, size_t n) {
  if (t->failed) return 0;
  if (t->len + n + 1 <= t->cap) return 1;
  size_t cap = t->cap ? t->cap : 256;
  while (t->len + n + 1 > cap) cap *= 2;
  char *p = realloc(t->p, cap);
  if (!p) {
    t->failed = 1;
    return 0;
  }
  t->p = p;
  t->cap = cap;
  return 1;
}

void akx__text_put_n(akx__text *t, const char *s, size_t n) {
  if (!reserve(t, n)) return;
  memcpy(t->p + t->len, s, n);
  t->len += n;
  t->p[t->len] = '\0';
}

void akx__text_put(akx__text *t, const char *s) { akx__text_put_n(t, s, strlen(s)); }

void akx__text_putf(akx__text *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  va_list aq;
  va_copy(aq, ap);
  const int k = vsnprintf(NULL, 0, fmt, aq);
  va_end(aq);
  if (k < 0) t->failed = 1;
  if (k >= 0 && reserve(t, (size_t)k)) {
    vsnprintf(t->p + t->len, t->cap - t->len, fmt, ap);
    t->len += (size_t)k;
  }
  va_end(ap);
}
