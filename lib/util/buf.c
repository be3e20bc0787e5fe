/* buf.c: growable byte buffers. */
#include "util/buf.h"

#include <stdio.h>
#include <stdlib.h>

#include "util/mem.h"

void sr_buf_grow(SrBuf *b, size_t extra) {
  size_t need = b->len + extra + 1;
  if (need <= b->cap) return;
  size_t cap = b->cap ? b->cap : 64;
  while (cap < need) cap *= 2;
  b->p = sr_xrealloc(b->p, cap);
  /* a printed program of many megabytes: huge pages */
  if (cap >= 8 << 20) sr_mem_huge(b->p, cap);
  b->cap = cap;
}

void sr_buf_free(SrBuf *b) {
  free(b->p);
  b->p = NULL;
  b->len = b->cap = 0;
}

void sr_buf_vprintf(SrBuf *b, const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  char tmp[256];
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  if (n < 0) {
    va_end(ap2);
    return;
  }
  if ((size_t)n < sizeof tmp) {
    sr_buf_putn(b, tmp, (size_t)n);
  } else {
    sr_buf_grow(b, (size_t)n);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap2);
    b->len += (size_t)n;
  }
  va_end(ap2);
}

void sr_buf_printf(SrBuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sr_buf_vprintf(b, fmt, ap);
  va_end(ap);
}

char *sr_buf_steal(SrBuf *b) {
  char *p = b->p ? b->p : sr_xstrdup("");
  b->p = NULL;
  b->len = b->cap = 0;
  return p;
}

void sr_buf_fill(SrBuf *b, int c, size_t n) {
  if (b->cap - b->len <= n) sr_buf_grow(b, n);
  memset(b->p + b->len, c, n);
  b->len += n;
  b->p[b->len] = 0;
}
