/* pyfmt.c: Python's repr of floats and strings. */
#include "util/pyfmt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Shortest round-trip digits by trying each precision in turn: at most 17
   snprintf/strtod pairs, and usually far fewer. */
int sr_shortest_digits(double x, char *buf, int *ndigits) {
  char tmp[40];
  for (int p = 1; p <= 17; p++) {
    snprintf(tmp, sizeof tmp, "%.*e", p - 1, x);
    if (p == 17 || strtod(tmp, NULL) == x) break;
  }
  /* tmp is d.ddddde[+-]XX */
  int n = 0;
  const char *s = tmp;
  while (*s && *s != 'e') {
    if (*s >= '0' && *s <= '9') buf[n++] = *s;
    s++;
  }
  int e = atoi(s + 1);
  while (n > 1 && buf[n - 1] == '0') n--;
  buf[n] = 0;
  *ndigits = n;
  return e + 1;
}

int sr_shortest_digits_f32(float x, char *buf, int *ndigits) {
  char tmp[40];
  for (int p = 1; p <= 9; p++) {
    snprintf(tmp, sizeof tmp, "%.*e", p - 1, (double)x);
    if (p == 9 || strtof(tmp, NULL) == x) break;
  }
  int n = 0;
  const char *s = tmp;
  while (*s && *s != 'e') {
    if (*s >= '0' && *s <= '9') buf[n++] = *s;
    s++;
  }
  int e = atoi(s + 1);
  while (n > 1 && buf[n - 1] == '0') n--;
  buf[n] = 0;
  *ndigits = n;
  return e + 1;
}

void sr_py_float_repr(SrBuf *out, double x) {
  if (isnan(x)) {
    sr_buf_puts(out, "nan");
    return;
  }
  if (isinf(x)) {
    sr_buf_puts(out, x < 0 ? "-inf" : "inf");
    return;
  }
  if (signbit(x)) sr_buf_putc(out, '-');
  x = fabs(x);
  if (x == 0) {
    sr_buf_puts(out, "0.0");
    return;
  }
  char d[24];
  int n;
  int e = sr_shortest_digits(x, d, &n); /* x = 0.d * 10^e */
  int exp10 = e - 1;                    /* exponent of the leading digit */
  if (exp10 < -4 || exp10 >= 16) {
    sr_buf_putc(out, d[0]);
    if (n > 1) {
      sr_buf_putc(out, '.');
      sr_buf_putn(out, d + 1, (size_t)n - 1);
    }
    sr_buf_printf(out, "e%c%02d", exp10 < 0 ? '-' : '+', abs(exp10));
  } else if (e <= 0) {
    sr_buf_puts(out, "0.");
    sr_buf_fill(out, '0', (size_t)-e);
    sr_buf_putn(out, d, (size_t)n);
  } else if (e >= n) {
    sr_buf_putn(out, d, (size_t)n);
    sr_buf_fill(out, '0', (size_t)(e - n));
    sr_buf_puts(out, ".0");
  } else {
    sr_buf_putn(out, d, (size_t)e);
    sr_buf_putc(out, '.');
    sr_buf_putn(out, d + e, (size_t)(n - e));
  }
}

void sr_py_str_repr(SrBuf *out, const char *s, size_t n) {
  int q = '\'';
  if (memchr(s, '\'', n) && !memchr(s, '"', n)) q = '"';
  sr_buf_putc(out, q);
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == q || c == '\\') {
      sr_buf_putc(out, '\\');
      sr_buf_putc(out, c);
    } else if (c == '\n') {
      sr_buf_puts(out, "\\n");
    } else if (c == '\t') {
      sr_buf_puts(out, "\\t");
    } else if (c == '\r') {
      sr_buf_puts(out, "\\r");
    } else if (c < 0x20 || c == 0x7f) {
      sr_buf_printf(out, "\\x%02x", c);
    } else {
      sr_buf_putc(out, c);
    }
  }
  sr_buf_putc(out, q);
}

/* Python formats each part of a complex with repr, dropping a ".0". */
static void complex_part(SrBuf *out, double x) {
  SrBuf t = SR_BUF_INIT;
  sr_py_float_repr(&t, x);
  size_t n = t.len;
  if (n >= 2 && t.p[n - 2] == '.' && t.p[n - 1] == '0') n -= 2;
  sr_buf_putn(out, t.p, n);
  sr_buf_free(&t);
}

void sr_py_complex_str(SrBuf *out, double re, double im) {
  if (re == 0 && !signbit(re)) {
    complex_part(out, im);
    sr_buf_putc(out, 'j');
    return;
  }
  sr_buf_putc(out, '(');
  complex_part(out, re);
  if (!signbit(im) || isnan(im)) sr_buf_putc(out, '+');
  complex_part(out, im);
  sr_buf_puts(out, "j)");
}
