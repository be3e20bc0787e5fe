/* buf.h: a growable byte buffer, always NUL-terminated. */
#ifndef SR_UTIL_BUF_H
#define SR_UTIL_BUF_H

#include <stdarg.h>
#include <stddef.h>
#include <string.h>

typedef struct SrBuf {
  char *p;
  size_t len, cap;
} SrBuf;

#define SR_BUF_INIT {0, 0, 0}

void sr_buf_grow(SrBuf *b, size_t extra);
void sr_buf_free(SrBuf *b);
void sr_buf_printf(SrBuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void sr_buf_vprintf(SrBuf *b, const char *fmt, va_list ap);
/* Returns the malloc'ed string and leaves b empty. */
char *sr_buf_steal(SrBuf *b);
/* Appends n copies of c. */
void sr_buf_fill(SrBuf *b, int c, size_t n);

static inline void sr_buf_putn(SrBuf *b, const char *s, size_t n) {
  if (b->cap - b->len <= n) sr_buf_grow(b, n);
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = 0;
}

static inline void sr_buf_puts(SrBuf *b, const char *s) {
  sr_buf_putn(b, s, strlen(s));
}

static inline void sr_buf_putc(SrBuf *b, int c) {
  if (b->cap - b->len <= 1) sr_buf_grow(b, 1);
  b->p[b->len++] = (char)c;
  b->p[b->len] = 0;
}

static inline void sr_buf_reset(SrBuf *b) {
  b->len = 0;
  if (b->p) b->p[0] = 0;
}

/* The contents as a C string; "" for a buffer never written. */
static inline const char *sr_buf_str(const SrBuf *b) { return b->p ? b->p : ""; }

#endif
