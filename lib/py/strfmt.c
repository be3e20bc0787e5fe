/* strfmt.c: printf-style string formatting, `'%5.2f' % x`, with
 * CPython's rules and messages (Objects/unicodeobject.c,
 * PyUnicode_Format).  Floats go through format()'s own code (sr_format),
 * so that they print as Python's format specs print them. */
#include "py/strfmt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "py/objects.h"
#include "text/print_val.h"
#include "util/intern.h"
#include "util/pyfmt.h"

/* the length of s in code points */
static size_t utf8_len(const char *s, size_t n) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++) k += ((unsigned char)s[i] & 0xC0) != 0x80;
  return k;
}

/* the bytes of the first k code points of s */
static size_t utf8_prefix(const char *s, size_t n, size_t k) {
  size_t i = 0;
  for (size_t seen = 0; i < n; i++) {
    if (((unsigned char)s[i] & 0xC0) != 0x80 && seen++ == k) break;
  }
  return i;
}

static void pad_text(SrBuf *out, const char *s, size_t n, int64_t width, int left) {
  size_t len = utf8_len(s, n);
  size_t pad = width > 0 && (uint64_t)width > len ? (size_t)width - len : 0;
  if (!left) sr_buf_fill(out, ' ', pad);
  sr_buf_putn(out, s, n);
  if (left) sr_buf_fill(out, ' ', pad);
}

static void put_utf8(SrBuf *b, uint32_t c) {
  if (c < 0x80) {
    sr_buf_putc(b, (char)c);
  } else if (c < 0x800) {
    sr_buf_putc(b, (char)(0xC0 | (c >> 6)));
    sr_buf_putc(b, (char)(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    sr_buf_putc(b, (char)(0xE0 | (c >> 12)));
    sr_buf_putc(b, (char)(0x80 | ((c >> 6) & 0x3F)));
    sr_buf_putc(b, (char)(0x80 | (c & 0x3F)));
  } else {
    sr_buf_putc(b, (char)(0xF0 | (c >> 18)));
    sr_buf_putc(b, (char)(0x80 | ((c >> 12) & 0x3F)));
    sr_buf_putc(b, (char)(0x80 | ((c >> 6) & 0x3F)));
    sr_buf_putc(b, (char)(0x80 | (c & 0x3F)));
  }
}

typedef struct Spec {
  int left, plus, space, alt, zero;
  int64_t width, prec; /* prec -1: none */
} Spec;

/* %d %i %u %x %X %o of an int: sign, prefix, digits padded to prec, then
   to the width with zeros (the 0 flag) or blanks */
static void format_int(SrBuf *out, int64_t v, char type, const Spec *sp) {
  uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
  char digits[80];
  snprintf(digits, sizeof digits, type == 'x' ? "%llx" : type == 'X' ? "%llX" : type == 'o' ? "%llo" : "%llu",
           (unsigned long long)u);
  char head[8];
  int h = 0;
  if (v < 0) head[h++] = '-';
  else if (sp->plus) head[h++] = '+';
  else if (sp->space) head[h++] = ' ';
  if (sp->alt && type != 'd') {
    head[h++] = '0';
    head[h++] = type == 'o' ? 'o' : type;
  }
  size_t nd = strlen(digits);
  size_t zeros = sp->prec > 0 && (uint64_t)sp->prec > nd ? (size_t)sp->prec - nd : 0;
  size_t len = (size_t)h + zeros + nd;
  size_t pad = sp->width > 0 && (uint64_t)sp->width > len ? (size_t)sp->width - len : 0;
  if (pad && sp->zero && !sp->left) zeros += pad, pad = 0;
  if (!sp->left) sr_buf_fill(out, ' ', pad);
  sr_buf_putn(out, head, (size_t)h);
  sr_buf_fill(out, '0', zeros);
  sr_buf_putn(out, digits, nd);
  if (sp->left) sr_buf_fill(out, ' ', pad);
}

/* an int for %d: ints as they are, floats (and 0-d arrays) truncated */
static int int_for_d(SrInterp *I, SrVal *v, char type, int64_t *out) {
  if (v->kind == SR_V_INT || v->kind == SR_V_BOOL) {
    *out = v->i;
    return 0;
  }
  double f;
  int is_real = v->kind == SR_V_FLOAT || (sr_ops(v) && sr_ops(v)->unop);
  if (type == 'd' && is_real && sr_as_float(I, v, "argument", &f) == 0) {
    if (isnan(f)) return sr_raise(I, "ValueError", "cannot convert float NaN to integer"), -1;
    if (isinf(f)) return sr_raise(I, "OverflowError", "cannot convert float infinity to integer"), -1;
    if (f <= -9223372036854775808.0 || f >= 9223372036854775808.0)
      return sr_raise(I, "OverflowError", "integer overflow: shardrepl's Python ints are 64-bit"), -1;
    *out = (int64_t)f;
    return 0;
  }
  if (type != 'd' && sr_ops(v) && sr_ops(v)->unop && sr_as_int(I, v, "argument", out) == 0) return 0;
  if (I->exc) sr_exc_clear(I);
  if (type == 'd') sr_raise(I, "TypeError", "%%%c format: a real number is required, not %s", type, sr_val_kind_name(v));
  else sr_raise(I, "TypeError", "%%%c format: an integer is required, not %s", type, sr_val_kind_name(v));
  return -1;
}

/* one conversion of v into out; -1 with an exception */
static int convert(SrInterp *I, SrBuf *out, SrVal *v, char c, const Spec *sp) {
  switch (c) {
  case 's':
  case 'r':
  case 'a': {
    SrBuf t = SR_BUF_INIT;
    int rc = c == 's' ? sr_to_str(I, &t, v) : sr_to_repr(I, &t, v);
    if (rc == 0) {
      size_t n = sp->prec >= 0 ? utf8_prefix(t.p ? t.p : "", t.len, (size_t)sp->prec) : t.len;
      pad_text(out, t.p ? t.p : "", n, sp->width, sp->left);
    }
    sr_buf_free(&t);
    return rc < 0 ? -1 : 0;
  }
  case 'c': {
    SrBuf t = SR_BUF_INIT;
    if (v->kind == SR_V_INT || v->kind == SR_V_BOOL) {
      if (v->i < 0 || v->i > 0x10FFFF) return sr_raise(I, "OverflowError", "%%c arg not in range(0x110000)"), -1;
      put_utf8(&t, (uint32_t)v->i);
    } else if (v->kind == SR_V_STR && utf8_len(v->str.s, v->str.n) == 1) {
      sr_buf_putn(&t, v->str.s, v->str.n);
    } else {
      return sr_raise(I, "TypeError", "%%c requires int or char"), -1;
    }
    pad_text(out, t.p, t.len, sp->width, sp->left);
    sr_buf_free(&t);
    return 0;
  }
  case 'd':
  case 'i':
  case 'u':
  case 'x':
  case 'X':
  case 'o': {
    char type = c == 'i' || c == 'u' ? 'd' : c;
    int64_t x;
    if (int_for_d(I, v, type, &x) < 0) return -1;
    format_int(out, x, type, sp);
    return 0;
  }
  case 'e':
  case 'E':
  case 'f':
  case 'F':
  case 'g':
  case 'G': {
    double f;
    int is_real = v->kind == SR_V_INT || v->kind == SR_V_BOOL || v->kind == SR_V_FLOAT || (sr_ops(v) && sr_ops(v)->unop);
    if (!is_real || sr_as_float(I, v, "argument", &f) < 0) {
      if (I->exc) sr_exc_clear(I);
      return sr_raise(I, "TypeError", "must be real number, not %s", sr_val_kind_name(v)), -1;
    }
    char spec[96];
    snprintf(spec, sizeof spec, "%s%s%s%s%lld.%lld%c", sp->left ? "<" : "", sp->plus ? "+" : sp->space ? " " : "",
             sp->alt ? "#" : "", sp->zero && !sp->left && isfinite(f) ? "0" : "", (long long)sp->width,
             (long long)(sp->prec >= 0 ? sp->prec : 6), c);
    SrVal *fv = sr_float(NULL, f);
    SrVal *r = sr_format(I, fv, spec);
    sr_unref(fv);
    if (!r) return -1;
    sr_buf_putn(out, r->str.s, r->str.n);
    sr_unref(r);
    return 0;
  }
  default: return 0;
  }
}

SrVal *sr_str_percent(SrInterp *I, SrVal *fmt, SrVal *args) {
  int tuple = args->kind == SR_V_TUPLE;
  SrVal **items = tuple ? args->seq.items : &args;
  int nitems = tuple ? args->seq.n : 1, next = 0;
  const SrLangOps *ops = sr_ops(args);
  SrVal *mapping = !tuple && args->kind != SR_V_STR && (args->kind == SR_V_DICT || (ops && ops->getitem)) ? args : NULL;
  const char *s = fmt->str.s, *end = s + fmt->str.n;
  SrBuf out = SR_BUF_INIT;
#define FAIL(...)                        \
  do {                                   \
    sr_raise(I, __VA_ARGS__);            \
    sr_buf_free(&out);                   \
    return NULL;                         \
  } while (0)
  while (s < end) {
    const char *pc = memchr(s, '%', (size_t)(end - s));
    if (!pc) {
      sr_buf_putn(&out, s, (size_t)(end - s));
      break;
    }
    sr_buf_putn(&out, s, (size_t)(pc - s));
    s = pc + 1;
    if (s < end && *s == '%') {
      sr_buf_putc(&out, '%');
      s++;
      continue;
    }
    SrVal *v = NULL, *owned = NULL;
    if (s < end && *s == '(') {
      if (!mapping) FAIL("TypeError", "format requires a mapping");
      int depth = 1;
      const char *k = ++s;
      while (s < end && depth) {
        if (*s == '(') depth++;
        else if (*s == ')') depth--;
        s++;
      }
      if (depth) FAIL("ValueError", "incomplete format key");
      SrVal *key = sr_str(NULL, k, (size_t)(s - 1 - k));
      owned = v = sr_getitem(I, mapping, key);
      sr_unref(key);
      if (!v) {
        sr_buf_free(&out);
        return NULL;
      }
    }
    Spec sp = {0, 0, 0, 0, 0, 0, -1};
    for (; s < end; s++) {
      if (*s == '-') sp.left = 1;
      else if (*s == '+') sp.plus = 1;
      else if (*s == ' ') sp.space = 1;
      else if (*s == '#') sp.alt = 1;
      else if (*s == '0') sp.zero = 1;
      else break;
    }
    for (int part = 0; part < 2; part++) {
      int64_t *n = part ? &sp.prec : &sp.width;
      if (part) {
        if (s >= end || *s != '.') break;
        s++;
        *n = 0;
      }
      if (s < end && *s == '*') {
        s++;
        if (next >= nitems) {
          sr_unref(owned);
          FAIL("TypeError", "not enough arguments for format string");
        }
        SrVal *w = items[next++];
        if (w->kind != SR_V_INT && w->kind != SR_V_BOOL) {
          sr_unref(owned);
          FAIL("TypeError", "* wants int");
        }
        if (w->i > INT32_MAX || w->i < INT32_MIN) {
          sr_unref(owned);
          FAIL("OverflowError", "Python int too large to convert to C int");
        }
        *n = w->i;
        if (!part && *n < 0) {
          sp.left = 1;
          *n = -*n;
        }
        if (part && *n < 0) *n = 0;
      } else {
        while (s < end && *s >= '0' && *s <= '9') {
          if (*n > 100000000) {
            sr_unref(owned);
            FAIL("ValueError", "%s too big", part ? "precision" : "width");
          }
          *n = *n * 10 + (*s++ - '0');
        }
      }
    }
    while (s < end && (*s == 'h' || *s == 'l' || *s == 'L')) s++;
    if (s >= end) {
      sr_unref(owned);
      FAIL("ValueError", "incomplete format");
    }
    char c = *s++;
    if (!strchr("sracdiuxXoeEfFgG", c)) {
      sr_unref(owned);
      if ((unsigned char)c < 0x80)
        FAIL("ValueError", "unsupported format character '%c' (0x%x) at index %d", c, (unsigned)c,
             (int)(s - 1 - fmt->str.s));
      FAIL("ValueError", "unsupported format character at index %d", (int)(s - 1 - fmt->str.s));
    }
    if (!v) {
      if (next >= nitems) FAIL("TypeError", "not enough arguments for format string");
      v = items[next++];
    }
    int64_t room = sp.width > sp.prec ? sp.width : sp.prec;
    if (sr_check_mem(I, (uint64_t)(room > 0 ? room : 0), 1) < 0 || convert(I, &out, v, c, &sp) < 0) {
      sr_unref(owned);
      sr_buf_free(&out);
      return NULL;
    }
    sr_unref(owned);
  }
  if (next < nitems && !mapping)
    FAIL("TypeError", "not all arguments converted during string formatting");
#undef FAIL
  SrVal *r = sr_str(NULL, out.p ? out.p : "", out.len);
  sr_buf_free(&out);
  return r;
}

/* ---- str.format ---- */

typedef struct Fmt {
  SrInterp *I;
  SrArgs *a;
  int auto_idx; /* the next automatic field; -1 once numbered by hand */
  int manual;
} Fmt;

/* the argument a field names: its first part ("", "0", "name"), then
   .attr and [key] parts; a new reference or NULL with an exception */
static SrVal *field_value(Fmt *F, const char *s, size_t n) {
  SrInterp *I = F->I;
  size_t e = 0;
  while (e < n && s[e] != '.' && s[e] != '[') e++;
  SrVal *v = NULL;
  int is_num = e > 0;
  for (size_t i = 0; i < e; i++) is_num &= s[i] >= '0' && s[i] <= '9';
  if (e == 0 || is_num) {
    int64_t k;
    if (e == 0) {
      if (F->manual)
        return sr_raise(I, "ValueError", "cannot switch from manual field specification to automatic field numbering");
      F->auto_idx++;
      k = F->auto_idx - 1;
    } else {
      if (F->auto_idx > 0)
        return sr_raise(I, "ValueError", "cannot switch from automatic field numbering to manual field specification");
      F->manual = 1;
      k = 0;
      for (size_t i = 0; i < e && k < 100000000; i++) k = k * 10 + (s[i] - '0');
    }
    if (k >= F->a->n) return sr_raise(I, "IndexError", "Replacement index %lld out of range for positional args tuple", (long long)k);
    v = sr_ref(F->a->v[k]);
  } else {
    const char *name = sr_intern(s, e);
    for (int k = 0; k < F->a->nkw && !v; k++)
      if (F->a->kw[k] == name) v = sr_ref(F->a->kwv[k]);
    if (!v) {
      SrBuf b = SR_BUF_INIT;
      sr_py_str_repr(&b, s, e);
      sr_raise(I, "KeyError", "%s", sr_buf_str(&b));
      sr_buf_free(&b);
      return NULL;
    }
  }
  while (e < n && v) {
    SrVal *next;
    if (s[e] == '.') {
      size_t b = ++e;
      while (e < n && s[e] != '.' && s[e] != '[') e++;
      if (e == b) {
        sr_unref(v);
        return sr_raise(I, "ValueError", "Empty attribute in format string");
      }
      next = sr_getattr(I, v, sr_intern(s + b, e - b));
    } else if (s[e] == '[') {
      size_t b = ++e;
      while (e < n && s[e] != ']') e++;
      if (e >= n || e == b) {
        sr_unref(v);
        return sr_raise(I, "ValueError", e >= n ? "expected '}' before end of string" : "Empty attribute in format string");
      }
      int digits = 1;
      int64_t k = 0;
      for (size_t i = b; i < e; i++) {
        digits &= s[i] >= '0' && s[i] <= '9';
        if (digits && k < 100000000) k = k * 10 + (s[i] - '0');
      }
      SrVal *key = digits ? sr_int(NULL, k) : sr_str(NULL, s + b, e - b);
      next = sr_getitem(I, v, key);
      sr_unref(key);
      e++;
    } else {
      sr_unref(v);
      return sr_raise(I, "ValueError", "Only '.' or '[' may follow ']' in format field specifier");
    }
    sr_unref(v);
    v = next;
  }
  return v;
}

/* Formats s[0..n) into out; depth 1 is inside a format spec, where fields
   nest once.  0, or -1 with an exception. */
static int format_into(Fmt *F, SrBuf *out, const char *s, size_t n, int depth) {
  SrInterp *I = F->I;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (c == '}') {
      if (i + 1 < n && s[i + 1] == '}') {
        sr_buf_putc(out, '}');
        i++;
        continue;
      }
      sr_raise(I, "ValueError", "Single '}' encountered in format string");
      return -1;
    }
    if (c != '{') {
      sr_buf_putc(out, c);
      continue;
    }
    if (i + 1 < n && s[i + 1] == '{') {
      sr_buf_putc(out, '{');
      i++;
      continue;
    }
    if (i + 1 >= n) {
      sr_raise(I, "ValueError", "Single '{' encountered in format string");
      return -1;
    }
    if (depth > 1) {
      sr_raise(I, "ValueError", "Max string recursion exceeded");
      return -1;
    }
    /* the field runs to its matching '}' (a spec may hold {} fields) */
    size_t e = i + 1;
    int nest = 1, in_key = 0;
    for (; e < n; e++) {
      if (in_key) {
        if (s[e] == ']') in_key = 0;
        continue;
      }
      if (s[e] == '[' && nest == 1) in_key = 1;
      else if (s[e] == '{') nest++;
      else if (s[e] == '}' && --nest == 0) break;
    }
    if (e >= n) {
      sr_raise(I, "ValueError", "expected '}' before end of string");
      return -1;
    }
    const char *f = s + i + 1;
    size_t fl = e - i - 1, name_end = 0;
    int in_br = 0;
    while (name_end < fl && (in_br || (f[name_end] != '!' && f[name_end] != ':'))) {
      if (f[name_end] == '[') in_br = 1;
      else if (f[name_end] == ']') in_br = 0;
      name_end++;
    }
    char conv = 0;
    size_t p = name_end;
    if (p < fl && f[p] == '!') {
      if (p + 1 >= fl) {
        sr_raise(I, "ValueError", "end of string while looking for conversion specifier");
        return -1;
      }
      conv = f[p + 1];
      p += 2;
      if (p < fl && f[p] != ':') {
        sr_raise(I, "ValueError", "expected ':' after conversion specifier");
        return -1;
      }
    }
    /* the field's value first, then its spec's fields, as CPython numbers
       automatic fields */
    SrVal *v = field_value(F, f, name_end);
    if (!v) return -1;
    SrBuf spec = SR_BUF_INIT;
    if (p < fl && f[p] == ':' && format_into(F, &spec, f + p + 1, fl - p - 1, depth + 1) < 0) {
      sr_unref(v);
      sr_buf_free(&spec);
      return -1;
    }
    if (conv && conv != 'r' && conv != 's' && conv != 'a') {
      sr_unref(v);
      sr_buf_free(&spec);
      sr_raise(I, "ValueError", "Unknown conversion specifier %c", conv);
      return -1;
    }
    if (conv) {
      SrBuf t = SR_BUF_INIT;
      int rc = conv == 's' ? sr_to_str(I, &t, v) : sr_to_repr(I, &t, v);
      sr_unref(v);
      v = rc < 0 ? NULL : sr_str(NULL, t.p ? t.p : "", t.len);
      sr_buf_free(&t);
    }
    SrVal *r = v ? sr_format(I, v, sr_buf_str(&spec)) : NULL;
    sr_unref(v);
    sr_buf_free(&spec);
    if (!r) return -1;
    sr_buf_putn(out, r->str.s, r->str.n);
    sr_unref(r);
    i = e;
  }
  return 0;
}

SrVal *sr_str_format(SrInterp *I, SrVal *fmt, SrArgs *a) {
  Fmt F = {I, a, 0, 0};
  SrBuf out = SR_BUF_INIT;
  SrVal *r = NULL;
  if (format_into(&F, &out, fmt->str.s, fmt->str.n, 0) == 0) r = sr_str(NULL, out.p ? out.p : "", out.len);
  sr_buf_free(&out);
  return r;
}
