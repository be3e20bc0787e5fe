/* builtins_py.c: Python's built-in functions, as far as the JAX documents
 * use them. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/trace.h"
#include <time.h>

#include "py/class.h"
#include "py/enum.h"
#include "py/introspect.h"
#include "py/modules.h"
#include "py/objects.h"
#include "py/range.h"
#include "py/strfmt.h"
#include "util/intern.h"
#include "util/pyfmt.h"

/* ---- sys.stdout and sys.stderr ----
 *
 * The two streams print() writes to, objects with write() and flush() and
 * nothing more: sys has no other members here.  stdout is the
 * interpreter's output (nothing on a silent rank); stderr is the process's,
 * written only by the rank that prints, after stdout is flushed so that the
 * two stay in order. */

static void stream_repr(SrBuf *out, const SrVal *v) {
  sr_buf_printf(out, "<_io.TextIOWrapper name='<%s>' mode='w' encoding='utf-8'>",
                v->obj.data == (void *)2 ? "stderr" : "stdout");
}

static const SrClass stream_class;

static int stream_fd(const SrVal *v) { return sr_is_obj(v, &stream_class) ? (int)(intptr_t)v->obj.data : 0; }

static void stream_put(SrInterp *I, int fd, const char *s, size_t n) {
  if (fd == 2) {
    if (!I->py->out) return;
    fflush(I->py->out);
    fwrite(s, 1, n, stderr);
    fflush(stderr);
  } else {
    sr_write(I, s, n);
  }
}

static void stream_flush(SrInterp *I, int fd) {
  if (fd == 2) fflush(stderr);
  else if (I->py->out) fflush(I->py->out);
}

static SrVal *m_stream_write(SrInterp *I, SrArgs *a) {
  if (a->nkw) return sr_raise(I, "TypeError", "write() takes no keyword arguments");
  if (a->n != 1) return sr_raise(I, "TypeError", "write() takes exactly one argument (%d given)", a->n);
  SrVal *v = a->v[0];
  if (v->kind != SR_V_STR)
    return sr_raise(I, "TypeError", "write() argument must be str, not %s", sr_val_kind_name(v));
  stream_put(I, stream_fd(a->self), v->str.s, v->str.n);
  int64_t n = 0;
  for (size_t i = 0; i < v->str.n; i++) n += ((unsigned char)v->str.s[i] & 0xC0) != 0x80;
  return sr_int(NULL, n);
}

static SrVal *m_stream_flush(SrInterp *I, SrArgs *a) {
  if (a->n || a->nkw) return sr_raise(I, "TypeError", "flush() takes no arguments (%d given)", a->n + a->nkw);
  stream_flush(I, stream_fd(a->self));
  return sr_none();
}

static SrVal *stream_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  if (strcmp(name, "write") == 0) return sr_bound_method(self, "write", m_stream_write);
  if (strcmp(name, "flush") == 0) return sr_bound_method(self, "flush", m_stream_flush);
  return NULL;
}

static const SrLangOps stream_ops = {.getattr = stream_getattr};
static const SrClass stream_class = {"TextIOWrapper", NULL, stream_repr, NULL, &stream_ops};

/* Calls obj.name(arg) (no argument when arg is NULL); -1 on error. */
static int call_method(SrInterp *I, SrVal *obj, const char *name, SrVal *arg) {
  SrVal *m = sr_getattr(I, obj, name);
  if (!m) return -1;
  SrArgs a = {arg ? 1 : 0, arg ? &arg : NULL, 0, NULL, NULL, NULL};
  SrVal *r = sr_call(I, m, &a);
  sr_unref(m);
  if (!r) return -1;
  sr_unref(r);
  return 0;
}

static SrVal *bi_print(SrInterp *I, SrArgs *a) {
  const char *sep = " ", *end = "\n";
  size_t seplen = 1, endlen = 1;
  SrVal *file = NULL;
  int flush = 0;
  for (int k = 0; k < a->nkw; k++) {
    SrVal *v = a->kwv[k];
    const char *kw = a->kw[k];
    if (strcmp(kw, "sep") == 0 || strcmp(kw, "end") == 0) {
      if (v->kind == SR_V_NONE) continue;
      if (v->kind != SR_V_STR)
        return sr_raise(I, "TypeError", "%s must be None or a string, not %s", kw, sr_val_kind_name(v));
      if (kw[0] == 's') sep = v->str.s, seplen = v->str.n;
      else end = v->str.s, endlen = v->str.n;
    } else if (strcmp(kw, "file") == 0) {
      file = v->kind == SR_V_NONE ? NULL : v;
    } else if (strcmp(kw, "flush") == 0) {
      if ((flush = sr_truthy(I, v)) < 0) return NULL;
    } else {
      return sr_raise(I, "TypeError", "'%s' is an invalid keyword argument for print()", kw);
    }
  }
  int fd = file ? stream_fd(file) : 1;
  if (fd) {
    SrBuf b = SR_BUF_INIT;
    for (int i = 0; i < a->n; i++) {
      if (i) sr_buf_putn(&b, sep, seplen);
      if (sr_to_str(I, &b, a->v[i]) < 0) {
        sr_buf_free(&b);
        return NULL;
      }
    }
    sr_buf_putn(&b, end, endlen);
    stream_put(I, fd, b.p, b.len);
    sr_buf_free(&b);
    if (flush) stream_flush(I, fd);
    return sr_none();
  }
  /* any other object with a write method, as Python: each piece written
     on its own (file.write(str(v)), file.write(sep), ...) */
  SrVal *w = sr_getattr(I, file, "write");
  if (!w) return NULL;
  sr_unref(w);
  for (int i = 0; i <= 2 * a->n; i++) {
    /* odd i: the separator after value i/2 (or, last, the end) */
    SrVal *piece;
    if (i == 2 * a->n) {
      piece = sr_str(NULL, end, endlen);
    } else if (i % 2) {
      piece = sr_str(NULL, sep, seplen);
    } else {
      SrBuf b = SR_BUF_INIT;
      if (sr_to_str(I, &b, a->v[i / 2]) < 0) {
        sr_buf_free(&b);
        return NULL;
      }
      piece = sr_str(NULL, b.p, b.len);
      sr_buf_free(&b);
    }
    int rc = call_method(I, file, "write", piece);
    sr_unref(piece);
    if (rc < 0) return NULL;
  }
  if (flush && call_method(I, file, "flush", NULL) < 0) return NULL;
  return sr_none();
}

static SrVal *bi_len(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "len() takes exactly one argument (%d given)", a->n);
  SrVal *v = a->v[0];
  switch (v->kind) {
  case SR_V_STR: {
    /* characters, not bytes: count the bytes that start one */
    int64_t n = 0;
    for (size_t i = 0; i < v->str.n; i++) n += ((unsigned char)v->str.s[i] & 0xC0) != 0x80;
    return sr_int(NULL, n);
  }
  case SR_V_TUPLE:
  case SR_V_LIST:
  case SR_V_SET:
  case SR_V_FROZENSET: return sr_int(NULL, v->seq.n);
  case SR_V_DICT: return sr_int(NULL, v->dict.n);
  case SR_V_SPEC: return sr_int(NULL, v->spec->n);
  default: {
    const SrLangOps *ops = sr_ops(v);
    if (ops && ops->len) {
      int64_t n = ops->len(I, v);
      if (n >= 0) return sr_int(NULL, n);
      if (I->exc) return NULL;
    }
    return sr_raise(I, "TypeError", "object of type '%s' has no len()", sr_val_kind_name(v));
  }
  }
}

/* zip, enumerate and map: iterators, as Python's are, an item at a time
   (an input may be a generator, possibly endless) */
typedef struct ZipState {
  int n;
  SrVal *fn;        /* map's function, or NULL */
  int64_t count;    /* enumerate's next index, when n is 1 and counting */
  int counting;
  SrIter its[];
} ZipState;

static void zip_state_free(void *data) {
  ZipState *z = data;
  for (int i = 0; i < z->n; i++) sr_iter_end(&z->its[i]);
  sr_unref(z->fn);
  free(z);
}

static SrVal *zip_step(SrInterp *I, void *data) {
  ZipState *z = data;
  SrVal *row = sr_seq(NULL, SR_V_TUPLE, z->n + z->counting);
  if (z->counting) sr_seq_push(NULL, row, sr_int(NULL, z->count++));
  for (int i = 0; i < z->n; i++) {
    SrVal *x = sr_iter_next(&z->its[i]);
    if (!x) {
      sr_unref(row);
      return NULL;
    }
    sr_seq_push(NULL, row, x);
  }
  if (!z->fn) return row;
  SrArgs ca = {row->seq.n, row->seq.items, 0, NULL, NULL, NULL};
  SrVal *r = sr_call(I, z->fn, &ca);
  sr_unref(row);
  return r;
}

static SrVal *lazy_zip(SrInterp *I, const char *type, int n, SrVal **inputs, SrVal *fn, int counting, int64_t start) {
  ZipState *z = sr_xcalloc(1, sizeof *z + (size_t)n * sizeof(SrIter));
  for (int i = 0; i < n; i++) {
    if (sr_iter_begin(I, &z->its[i], inputs[i]) < 0) {
      z->n = i;
      zip_state_free(z);
      return NULL;
    }
    z->n = i + 1;
  }
  z->fn = fn ? sr_ref(fn) : NULL;
  z->counting = counting;
  z->count = start;
  return sr_lazy_iter_new(type, zip_step, z, zip_state_free);
}

/* zip(*iterables): an iterator of tuples, as long as its shortest input */
static SrVal *bi_zip(SrInterp *I, SrArgs *a) { return lazy_zip(I, "zip", a->n, a->v, NULL, 0, 0); }

static SrVal *bi_enumerate(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "enumerate", "iterable, start=", p) < 0) return NULL;
  int64_t start = 0;
  if (p[1] && sr_as_int(I, p[1], "start", &start) < 0) return NULL;
  return lazy_zip(I, "enumerate", 1, p, NULL, 1, start);
}

static SrVal *to_seq(SrInterp *I, SrArgs *a, SrValKind kind, const char *name) {
  if (a->n == 0) return sr_seq(NULL, kind, 0);
  if (a->n != 1) return sr_raise(I, "TypeError", "%s expected at most 1 argument, got %d", name, a->n);
  SrVal *it = sr_iterate(I, a->v[0]);
  if (!it) return NULL;
  SrVal *r = sr_seq(NULL, kind, it->seq.n);
  for (int i = 0; i < it->seq.n; i++) {
    SrVal *x = it->seq.items[i];
    if (kind == SR_V_SET || kind == SR_V_FROZENSET) {
      int dup = 0;
      for (int k = 0; k < r->seq.n && !dup; k++) dup = sr_val_equal(r->seq.items[k], x);
      if (dup) continue;
    }
    sr_seq_push(NULL, r, sr_ref(x));
  }
  sr_unref(it);
  return r;
}

static SrVal *bi_list(SrInterp *I, SrArgs *a) { return to_seq(I, a, SR_V_LIST, "list"); }
static SrVal *bi_tuple(SrInterp *I, SrArgs *a) { return to_seq(I, a, SR_V_TUPLE, "tuple"); }
static SrVal *bi_set(SrInterp *I, SrArgs *a) { return to_seq(I, a, SR_V_SET, "set"); }
static SrVal *bi_frozenset(SrInterp *I, SrArgs *a) { return to_seq(I, a, SR_V_FROZENSET, "frozenset"); }

static SrVal *bi_dict(SrInterp *I, SrArgs *a) {
  SrVal *d = sr_dict(NULL);
  if (a->n == 1) {
    SrVal *src = a->v[0];
    SrVal *keys = NULL;
    if (src->kind == SR_V_DICT) {
      for (int i = 0; i < src->dict.n; i++) sr_dict_set(NULL, d, sr_ref(src->dict.keys[i]), sr_ref(src->dict.vals[i]));
    } else if (src->kind == SR_V_OBJ && (keys = sr_getattr(I, src, "keys")) != NULL) {
      /* a mapping (a defaultdict, a Counter...): its keys() and src[k], as CPython's */
      SrArgs none = {0, NULL, 0, NULL, NULL, NULL};
      SrVal *ks = sr_call(I, keys, &none);
      sr_unref(keys);
      SrVal *it = ks ? sr_iterate(I, ks) : NULL;
      sr_unref(ks);
      for (int i = 0; it && i < it->seq.n; i++) {
        SrVal *v = sr_getitem(I, src, it->seq.items[i]);
        if (!v) {
          sr_unref(it);
          it = NULL;
          break;
        }
        sr_dict_set(NULL, d, sr_ref(it->seq.items[i]), v);
      }
      if (!it) {
        sr_unref(d);
        return NULL;
      }
      sr_unref(it);
    } else {
      sr_exc_clear(I);
      SrVal *it = sr_iterate(I, src);
      if (!it) {
        sr_unref(d);
        return NULL;
      }
      for (int i = 0; i < it->seq.n; i++) {
        SrVal *kv = it->seq.items[i];
        if (!sr_is_seq(kv) || kv->seq.n != 2) {
          sr_unref(it);
          sr_unref(d);
          return sr_raise(I, "ValueError", "dictionary update sequence element #%d has the wrong length", i);
        }
        sr_dict_set(NULL, d, sr_ref(kv->seq.items[0]), sr_ref(kv->seq.items[1]));
      }
      sr_unref(it);
    }
  }
  for (int k = 0; k < a->nkw; k++) sr_dict_set(NULL, d, sr_str_cstr(NULL, a->kw[k]), sr_ref(a->kwv[k]));
  return d;
}

static SrVal *bi_str(SrInterp *I, SrArgs *a) {
  if (a->n == 0) return sr_str(NULL, "", 0);
  SrBuf b = SR_BUF_INIT;
  SrVal *r = sr_to_str(I, &b, a->v[0]) < 0 ? NULL : sr_str(NULL, sr_buf_str(&b), b.len);
  sr_buf_free(&b);
  return r;
}

static SrVal *bi_repr(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "repr() takes exactly one argument");
  SrBuf b = SR_BUF_INIT;
  SrVal *r = sr_to_repr(I, &b, a->v[0]) < 0 ? NULL : sr_str(NULL, sr_buf_str(&b), b.len);
  sr_buf_free(&b);
  return r;
}

/* ascii(x): repr(x) with the non-ASCII characters escaped (\xhh,
   \uhhhh, \Uhhhhhhhh), as CPython's */
static SrVal *bi_ascii(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "ascii() takes exactly one argument (%d given)", a->n);
  SrBuf b = SR_BUF_INIT, o = SR_BUF_INIT;
  if (sr_to_repr(I, &b, a->v[0]) < 0) {
    sr_buf_free(&b);
    return NULL;
  }
  const unsigned char *p = (const unsigned char *)sr_buf_str(&b);
  for (size_t i = 0; i < b.len;) {
    unsigned c = p[i];
    if (c < 0x80) {
      sr_buf_putc(&o, (char)c);
      i++;
      continue;
    }
    int n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
    unsigned cp = c & (n == 4 ? 0x07 : n == 3 ? 0x0F : 0x1F);
    for (int k = 1; k < n && i + (size_t)k < b.len; k++) cp = (cp << 6) | (p[i + (size_t)k] & 0x3F);
    i += (size_t)n;
    if (cp < 0x100) sr_buf_printf(&o, "\\x%02x", cp);
    else if (cp < 0x10000) sr_buf_printf(&o, "\\u%04x", cp);
    else sr_buf_printf(&o, "\\U%08x", cp);
  }
  sr_buf_free(&b);
  SrVal *r = sr_str(NULL, sr_buf_str(&o), o.len);
  sr_buf_free(&o);
  return r;
}

/* bin(x), oct(x), hex(x): the int with its prefix, the sign before it */
static SrVal *int_base(SrInterp *I, SrArgs *a, const char *name, int base) {
  if (a->n != 1) return sr_raise(I, "TypeError", "%s() takes exactly one argument (%d given)", name, a->n);
  int64_t v;
  if (sr_as_index(I, a->v[0], &v) < 0) return NULL;
  uint64_t m = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  char digits[72];
  int n = 0;
  do {
    unsigned d = (unsigned)(m % (uint64_t)base);
    digits[n++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
    m /= (uint64_t)base;
  } while (m);
  SrBuf b = SR_BUF_INIT;
  if (v < 0) sr_buf_putc(&b, '-');
  sr_buf_puts(&b, base == 2 ? "0b" : base == 8 ? "0o" : "0x");
  while (n) sr_buf_putc(&b, digits[--n]);
  SrVal *r = sr_str(NULL, sr_buf_str(&b), b.len);
  sr_buf_free(&b);
  return r;
}

static SrVal *bi_bin(SrInterp *I, SrArgs *a) { return int_base(I, a, "bin", 2); }
static SrVal *bi_oct(SrInterp *I, SrArgs *a) { return int_base(I, a, "oct", 8); }
static SrVal *bi_hex(SrInterp *I, SrArgs *a) { return int_base(I, a, "hex", 16); }

/* id(x): an int unique among the values alive together (the address) */
static SrVal *bi_id(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "id() takes exactly one argument (%d given)", a->n);
  return sr_int(NULL, (int64_t)(intptr_t)a->v[0]);
}

/* filter(function, iterable): the items function finds true (None: the
   true items); lazy over a generator, as Python's is an iterator */
typedef struct FilterState {
  SrVal *fn;
  SrIter it;
} FilterState;

static void filter_free(void *d) {
  FilterState *f = d;
  sr_unref(f->fn);
  sr_iter_end(&f->it);
  free(f);
}

static SrVal *filter_step(SrInterp *I, void *d) {
  FilterState *f = d;
  for (SrVal *x; (x = sr_iter_next(&f->it));) {
    SrVal *c = f->fn->kind == SR_V_NONE ? sr_ref(x) : sr_call1(I, f->fn, x);
    int t = c ? sr_truthy(I, c) : -1;
    sr_unref(c);
    if (t > 0) return x;
    sr_unref(x);
    if (t < 0) return NULL;
    if (sr_poll_interrupt(I)) return NULL;
  }
  return NULL;
}

static SrVal *bi_filter(SrInterp *I, SrArgs *a) {
  if (a->nkw) return sr_raise(I, "TypeError", "filter() takes no keyword arguments");
  if (a->n != 2) return sr_raise(I, "TypeError", "filter expected 2 arguments, got %d", a->n);
  FilterState *f = sr_xcalloc(1, sizeof *f);
  if (sr_iter_begin(I, &f->it, a->v[1]) < 0) {
    free(f);
    return NULL;
  }
  f->fn = sr_ref(a->v[0]);
  return sr_lazy_iter_new("filter", filter_step, f, filter_free);
}

static SrVal *int_overflow(SrInterp *I) {
  return sr_raise(I, "OverflowError", "integer overflow: shardrepl's Python ints are 64-bit");
}

/* int(f): Python's errors for NaN and infinity; past int64, the error of
   shardrepl's 64-bit ints (a C cast would be undefined) */
static SrVal *int_of_float(SrInterp *I, double f) {
  if (isnan(f)) return sr_raise(I, "ValueError", "cannot convert float NaN to integer");
  if (isinf(f)) return sr_raise(I, "OverflowError", "cannot convert float infinity to integer");
  if (f < -9223372036854775808.0 || f >= 9223372036854775808.0) return int_overflow(I);
  return sr_int(NULL, (int64_t)f);
}

/* Tracer/Array.__int__, __float__, __complex__: core.check_scalar_conversion */
static int scalar_conversion(SrInterp *I, const SrVal *v) {
  const SrArrayObj *a = sr_array_of(v);
  if (!a || a->type->ndim == 0) return 0;
  sr_raise(I, "TypeError", "Only scalar arrays can be converted to Python scalars; got arr.ndim=%d", a->type->ndim);
  return -1;
}

static SrVal *bi_int(SrInterp *I, SrArgs *a) {
  if (a->n == 0) return sr_int(NULL, 0);
  SrVal *v = a->v[0];
  if (scalar_conversion(I, v) < 0) return NULL;
  if (v->kind == SR_V_FLOAT) return int_of_float(I, v->f);
  if (v->kind == SR_V_STR) {
    char *end;
    char *s = sr_xstrndup(v->str.s, v->str.n);
    errno = 0;
    long long x = strtoll(s, &end, 10);
    int bad = end == s || *end, range = errno == ERANGE;
    free(s);
    if (bad) return sr_raise(I, "ValueError", "invalid literal for int() with base 10: '%.*s'", (int)v->str.n, v->str.s);
    /* strtoll saturates; a value past 64 bits overflows as arithmetic does */
    if (range) return int_overflow(I);
    return sr_int(NULL, x);
  }
  double f;
  if (v->kind != SR_V_INT && v->kind != SR_V_BOOL && v->kind != SR_V_FLOAT && v->kind != SR_V_OBJ)
    return sr_raise(I, "TypeError", "int() argument must be a string, a bytes-like object or a real number, not '%s'",
                    sr_val_kind_name(v));
  const char *saved = I->item_for;
  I->item_for = "int";
  if (v->kind != SR_V_INT && v->kind != SR_V_BOOL && sr_as_float(I, v, "int()", &f) == 0) {
    I->item_for = saved;
    return int_of_float(I, f);
  }
  if (I->exc) {
    I->item_for = saved;
    return NULL;
  }
  int64_t i;
  if (v->kind != SR_V_INT && v->kind != SR_V_BOOL && v->kind != SR_V_OBJ) {
    I->item_for = saved;
    return sr_raise(I, "TypeError", "int() argument must be a string, a bytes-like object or a real number, not '%s'",
                    sr_val_kind_name(v));
  }
  int rc = sr_as_int(I, v, "int() argument", &i);
  I->item_for = saved;
  if (rc < 0) return NULL;
  return sr_int(NULL, i);
}

static SrVal *bi_float(SrInterp *I, SrArgs *a) {
  if (a->n == 0) return sr_float(NULL, 0);
  SrVal *v = a->v[0];
  if (v->kind == SR_V_STR) {
    char *s = sr_xstrndup(v->str.s, v->str.n), *end;
    double x = strtod(s, &end);
    int bad = end == s || *end;
    free(s);
    if (bad) return sr_raise(I, "ValueError", "could not convert string to float: '%.*s'", (int)v->str.n, v->str.s);
    return sr_float(NULL, x);
  }
  double f;
  if (scalar_conversion(I, v) < 0 || sr_as_float(I, v, "float() argument", &f) < 0) return NULL;
  return sr_float(NULL, f);
}

static SrVal *bi_bool(SrInterp *I, SrArgs *a) {
  if (a->n == 0) return sr_bool(0);
  int t = sr_truthy(I, a->v[0]);
  return t < 0 ? NULL : sr_bool(t);
}

static SrVal *bi_abs(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "abs() takes exactly one argument");
  SrVal *v = a->v[0];
  if (v->kind == SR_V_INT || v->kind == SR_V_BOOL) {
    if (v->i == INT64_MIN) return int_overflow(I);
    return sr_int(NULL, v->i < 0 ? -v->i : v->i);
  }
  if (v->kind == SR_V_FLOAT) return sr_float(NULL, fabs(v->f));
  if (v->kind == SR_V_COMPLEX) return sr_float(NULL, hypot(v->c.re, v->c.im));
  /* an object's class says (its __abs__: arrays', jnp.abs) */
  const SrLangOps *ops = sr_ops(v);
  if (ops && ops->unop) {
    SrVal *r = ops->unop(I, SR_OP_ABS, v);
    if (r || I->exc) return r;
  }
  return sr_raise(I, "TypeError", "bad operand type for abs(): '%s'", sr_val_kind_name(v));
}

static SrVal *extremum(SrInterp *I, SrArgs *a, int op, const char *name) {
  SrVal *key = NULL, *dflt = NULL;
  for (int k = 0; k < a->nkw; k++) {
    if (strcmp(a->kw[k], "key") == 0) key = a->kwv[k];
    else if (strcmp(a->kw[k], "default") == 0) dflt = a->kwv[k];
    else return sr_raise(I, "TypeError", "'%s' is an invalid keyword argument for %s()", a->kw[k], name);
  }
  /* one argument: its items, one at a time; several: the arguments */
  if (a->n == 0) return sr_raise(I, "TypeError", "%s expected at least 1 argument, got 0", name);
  SrIter it;
  memset(&it, 0, sizeof it);
  if (a->n == 1 && sr_iter_begin(I, &it, a->v[0]) < 0) return NULL;
  int i = 0;
#define NEXT() (a->n == 1 ? sr_iter_next(&it) : i < a->n ? sr_ref(a->v[i++]) : NULL)
  SrVal *best = NEXT();
  if (!best) {
    sr_iter_end(&it);
    if (a->n == 1 && dflt) return sr_ref(dflt);
    return sr_raise(I, "ValueError", "%s() arg is an empty sequence", name);
  }
  SrVal *bestk = key ? sr_call1(I, key, best) : sr_ref(best);
  for (SrVal *x; bestk && (x = NEXT());) {
    SrVal *k = key ? sr_call1(I, key, x) : sr_ref(x);
    SrVal *c = k ? sr_binop(I, op, k, bestk) : NULL;
    int t = c ? sr_truthy(I, c) : -1;
    sr_unref(c);
    if (t > 0) {
      sr_unref(best);
      best = x;
      sr_unref(bestk);
      bestk = k;
    } else {
      sr_unref(x);
      sr_unref(k);
      if (t < 0) {
        sr_unref(bestk);
        bestk = NULL;
      }
    }
  }
#undef NEXT
  sr_iter_end(&it);
  if (!bestk) {
    sr_unref(best);
    return NULL;
  }
  sr_unref(bestk);
  return best;
}

static SrVal *bi_min(SrInterp *I, SrArgs *a) { return extremum(I, a, SR_OP_LT, "min"); }
static SrVal *bi_max(SrInterp *I, SrArgs *a) { return extremum(I, a, SR_OP_GT, "max"); }

static SrVal *bi_sum(SrInterp *I, SrArgs *a) {
  if (a->n < 1) return sr_raise(I, "TypeError", "sum() takes at least 1 positional argument (0 given)");
  SrIter it;
  if (sr_iter_begin(I, &it, a->v[0]) < 0) return NULL;
  SrVal *acc = a->n > 1 ? sr_ref(a->v[1]) : sr_int(NULL, 0);
  for (SrVal *x; acc && (x = sr_iter_next(&it));) {
    SrVal *r = sr_poll_interrupt(I) ? NULL : sr_binop(I, SR_OP_ADD, acc, x);
    sr_unref(x);
    sr_unref(acc);
    acc = r;
  }
  sr_iter_end(&it);
  return acc;
}

static SrVal *all_any(SrInterp *I, SrArgs *a, int want_all) {
  if (a->n != 1) return sr_raise(I, "TypeError", "%s() takes exactly one argument", want_all ? "all" : "any");
  SrIter it;
  if (sr_iter_begin(I, &it, a->v[0]) < 0) return NULL;
  int r = want_all;
  for (SrVal *x; (x = sr_iter_next(&it));) {
    int t = sr_poll_interrupt(I) ? -1 : sr_truthy(I, x);
    sr_unref(x);
    if (t < 0) {
      sr_iter_end(&it);
      return NULL;
    }
    if (t != want_all) {
      r = t;
      break;
    }
  }
  sr_iter_end(&it);
  return sr_bool(r);
}

static SrVal *bi_all(SrInterp *I, SrArgs *a) { return all_any(I, a, 1); }
static SrVal *bi_any(SrInterp *I, SrArgs *a) { return all_any(I, a, 0); }

/* keys[x] < keys[y] (reversed: keys[y] < keys[x]); -1 with an exception */
static int sort_less(SrInterp *I, SrVal **keys, int x, int y, int reverse) {
  SrVal *lt = reverse ? sr_binop(I, SR_OP_LT, keys[y], keys[x]) : sr_binop(I, SR_OP_LT, keys[x], keys[y]);
  if (!lt) return -1;
  int t = sr_truthy(I, lt);
  sr_unref(lt);
  return t;
}

/* A stable merge sort of the indices idx[0..n) by their keys, as Python's
   sort is stable (reverse=True too: equal items keep their order). */
static int sort_merge(SrInterp *I, SrVal **keys, int *idx, int *tmp, int n, int reverse) {
  if (n < 2) return 0;
  int h = n / 2;
  if (sort_merge(I, keys, idx, tmp, h, reverse) < 0 || sort_merge(I, keys, idx + h, tmp, n - h, reverse) < 0)
    return -1;
  int i = 0, j = h, k = 0;
  while (i < h && j < n) {
    int lt = sort_less(I, keys, idx[j], idx[i], reverse);
    if (lt < 0) return -1;
    tmp[k++] = lt ? idx[j++] : idx[i++];
  }
  while (i < h) tmp[k++] = idx[i++];
  while (j < n) tmp[k++] = idx[j++];
  memcpy(idx, tmp, (size_t)n * sizeof *idx);
  return 0;
}

static SrVal *bi_sorted(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "sorted", "iterable, *, key=, reverse=", p) < 0) return NULL;
  SrVal *key = p[1] && p[1]->kind != SR_V_NONE ? p[1] : NULL;
  int reverse = p[2] ? sr_truthy(I, p[2]) : 0;
  if (reverse < 0) return NULL;
  SrVal *items = sr_iterate(I, p[0]);
  if (!items) return NULL;
  int n = items->seq.n, failed = 0;
  SrVal **keys = sr_xcalloc((size_t)n + 1, sizeof *keys);
  int *idx = sr_xmalloc(((size_t)n + 1) * sizeof *idx), *tmp = sr_xmalloc(((size_t)n + 1) * sizeof *tmp);
  for (int i = 0; i < n && !failed; i++) {
    idx[i] = i;
    keys[i] = key ? sr_call1(I, key, items->seq.items[i]) : sr_ref(items->seq.items[i]);
    failed = !keys[i];
  }
  if (!failed) failed = sort_merge(I, keys, idx, tmp, n, reverse) < 0;
  SrVal *out = NULL;
  if (!failed) {
    out = sr_seq(NULL, SR_V_LIST, n);
    for (int i = 0; i < n; i++) sr_seq_push(NULL, out, sr_ref(items->seq.items[idx[i]]));
  }
  for (int i = 0; i < n; i++) sr_unref(keys[i]);
  free(keys);
  free(idx);
  free(tmp);
  sr_unref(items);
  return out;
}

static SrVal *bi_reversed(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "reversed() takes exactly one argument");
  if (sr_as_range(a->v[0])) return sr_range_reversed(a->v[0]);
  SrVal *items = sr_iterate(I, a->v[0]);
  if (!items) return NULL;
  for (int i = 0, j = items->seq.n - 1; i < j; i++, j--) {
    SrVal *t = items->seq.items[i];
    items->seq.items[i] = items->seq.items[j];
    items->seq.items[j] = t;
  }
  return items;
}

static SrVal *bi_map(SrInterp *I, SrArgs *a) {
  if (a->n < 2) return sr_raise(I, "TypeError", "map() must have at least two arguments.");
  return lazy_zip(I, "map", a->n - 1, a->v + 1, a->v[0], 0, 0);
}

static SrVal *bi_isinstance(SrInterp *I, SrArgs *a) {
  if (a->n != 2) return sr_raise(I, "TypeError", "isinstance expected 2 arguments, got %d", a->n);
  SrVal *t = a->v[1];
  if (t->kind == SR_V_TUPLE) {
    for (int i = 0; i < t->seq.n; i++) {
      SrArgs b = {2, (SrVal *[]){a->v[0], t->seq.items[i]}, 0, NULL, NULL, NULL};
      SrVal *r = bi_isinstance(I, &b);
      if (!r || r->i) return r;
    }
    return sr_bool(0);
  }
  const SrLangOps *ops = sr_ops(t);
  if (ops && ops->instancecheck) return sr_bool(ops->instancecheck(I, t, a->v[0]));
  if (t->kind == SR_V_DTYPE && I->py->init->dtype_instancecheck)
    return sr_bool(I->py->init->dtype_instancecheck(I, t, a->v[0]));
  int in_enum = sr_enum_isinstance(a->v[0], t);
  if (in_enum >= 0) return sr_bool(in_enum);
  int in_class = sr_class_isinstance(a->v[0], t);
  if (in_class >= 0) return sr_bool(in_class);
  const char *name = sr_builtin_name(t);
  if (name && strncmp(name, "builtins.", 9) == 0) name += 9;
  const char *kn = sr_val_kind_name(a->v[0]);
  if (name && strcmp(name, kn) == 0) return sr_bool(1);
  /* a class the embedding defines by its constructor (jax.sharding.Mesh,
     NamedSharding...): its last dotted name is the values' class name */
  const char *dot = name && strncmp(name, "jax.", 4) == 0 ? strrchr(name, '.') : NULL;
  if (dot && kn[0] >= 'A' && kn[0] <= 'Z' && strcmp(dot + 1, kn) == 0) return sr_bool(1);
  /* numpy's dtype class (np.dtype, jnp.dtype): the dtype objects */
  if (name && a->v[0]->kind == SR_V_DTYPE && (strcmp(name, "numpy.dtype") == 0 || strcmp(name, "jax.numpy.dtype") == 0))
    return sr_bool(1);
  if (name && strcmp(name, "int") == 0 && a->v[0]->kind == SR_V_BOOL) return sr_bool(1);
  const char *et = sr_exception_type_name(t);
  if (et && sr_is_obj(a->v[0], &sr_exception_class)) return sr_bool(sr_exception_is_a(sr_exc_type(a->v[0]), et));
  return sr_bool(0);
}

/* traceback.format_exc() / print_exc(): the traceback of the exception
   an except block is handling (script.c's sr_tb_format), or
   "NoneType: None" outside one */
static SrVal *bi_format_exc(SrInterp *I, SrArgs *a) {
  if (sr_args_parse(I, a, "format_exc", "limit=, chain=", (SrVal *[2]){0}) < 0) return NULL;
  const char *t = I->py->handled_tb ? I->py->handled_tb : "NoneType: None\n";
  return sr_str_cstr(NULL, t);
}

static SrVal *bi_print_exc(SrInterp *I, SrArgs *a) {
  if (sr_args_parse(I, a, "print_exc", "limit=, file=, chain=", (SrVal *[3]){0}) < 0) return NULL;
  const char *t = I->py->handled_tb ? I->py->handled_tb : "NoneType: None\n";
  fflush(I->py->out ? I->py->out : stdout);
  fputs(t, stderr);
  fflush(stderr);
  return sr_none();
}

/* logging's module-level functions on the root logger as Python leaves
   it unconfigured: basicConfig's handler writes
   "LEVEL:root:message" (msg % args) to stderr for WARNING and above;
   debug and info are below the root's WARNING level and write nothing. */
static SrVal *log_at(SrInterp *I, SrArgs *a, const char *level, int shown) {
  if (a->n < 1) return sr_raise(I, "TypeError", "%s() missing 1 required positional argument: 'msg'", level);
  if (!shown) return sr_none();
  SrBuf b = SR_BUF_INIT;
  sr_buf_printf(&b, "%s:root:", level);
  int rc = 0;
  if (a->n > 1) {
    SrVal *args = sr_seq(NULL, SR_V_TUPLE, a->n - 1);
    for (int i = 1; i < a->n; i++) sr_seq_push(NULL, args, sr_ref(a->v[i]));
    SrVal *m = a->v[0]->kind == SR_V_STR ? sr_str_percent(I, a->v[0], args) : NULL;
    if (a->v[0]->kind != SR_V_STR) sr_raise(I, "TypeError", "not all arguments converted during string formatting");
    sr_unref(args);
    rc = m ? sr_to_str(I, &b, m) : -1;
    sr_unref(m);
  } else {
    rc = sr_to_str(I, &b, a->v[0]);
  }
  if (rc < 0) {
    sr_buf_free(&b);
    return NULL;
  }
  sr_buf_putc(&b, '\n');
  stream_put(I, 2, b.p, b.len);
  sr_buf_free(&b);
  return sr_none();
}
static SrVal *bi_log_debug(SrInterp *I, SrArgs *a) { return log_at(I, a, "DEBUG", 0); }
static SrVal *bi_log_info(SrInterp *I, SrArgs *a) { return log_at(I, a, "INFO", 0); }
static SrVal *bi_log_warning(SrInterp *I, SrArgs *a) { return log_at(I, a, "WARNING", 1); }
static SrVal *bi_log_error(SrInterp *I, SrArgs *a) { return log_at(I, a, "ERROR", 1); }
static SrVal *bi_log_critical(SrInterp *I, SrArgs *a) { return log_at(I, a, "CRITICAL", 1); }

static SrVal *bi_getattr(SrInterp *I, SrArgs *a) {
  if (a->n < 2 || a->n > 3) return sr_raise(I, "TypeError", "getattr expected 2 or 3 arguments");
  const char *name = sr_as_str(I, a->v[1], "attribute name");
  if (!name) return NULL;
  SrVal *r = sr_getattr(I, a->v[0], name);
  if (!r && a->n == 3 && I->exc && strcmp(sr_exc_type(I->exc), "AttributeError") == 0) {
    sr_exc_clear(I);
    return sr_ref(a->v[2]);
  }
  return r;
}

static SrVal *bi_hasattr(SrInterp *I, SrArgs *a) {
  if (a->n != 2) return sr_raise(I, "TypeError", "hasattr expected 2 arguments");
  const char *name = sr_as_str(I, a->v[1], "attribute name");
  if (!name) return NULL;
  SrVal *r = sr_getattr(I, a->v[0], name);
  if (!r) {
    if (I->exc && strcmp(sr_exc_type(I->exc), "AttributeError") != 0) return NULL;
    sr_exc_clear(I);
    return sr_bool(0);
  }
  sr_unref(r);
  return sr_bool(1);
}

static SrVal *bi_setattr(SrInterp *I, SrArgs *a) {
  if (a->n != 3) return sr_raise(I, "TypeError", "setattr expected 3 arguments");
  const char *name = sr_as_str(I, a->v[1], "attribute name");
  if (!name || sr_setattr(I, a->v[0], name, a->v[2]) < 0) return NULL;
  return sr_none();
}

static SrVal *bi_round(SrInterp *I, SrArgs *a) {
  if (a->n < 1 || a->n > 2) return sr_raise(I, "TypeError", "round() takes 1 or 2 arguments");
  double x;
  int64_t nd = 0;
  if (a->n == 2 && a->v[1]->kind != SR_V_NONE && sr_as_int(I, a->v[1], "ndigits", &nd) < 0) return NULL;
  if (a->v[0]->kind == SR_V_INT || a->v[0]->kind == SR_V_BOOL) {
    /* an int stays an int; negative ndigits round to tens, half to even */
    int64_t v = a->v[0]->i;
    if (nd >= 0) return sr_int(NULL, v);
    int64_t m = 1;
    for (int64_t k = 0; k < -nd && m < (int64_t)1e18; k++) m *= 10;
    int64_t q = v / m, r = v % m;
    if (r < 0) q--, r += m;
    if (2 * r > m || (2 * r == m && (q & 1))) q++;
    return sr_int(NULL, q * m);
  }
  if (a->v[0]->kind != SR_V_FLOAT) {
    /* an object's __round__ (arrays': jnp.round) */
    SrVal *m = sr_getattr(I, a->v[0], "__round__");
    if (m) {
      SrArgs ma = {a->n - 1, a->v + 1, 0, NULL, NULL, NULL};
      SrVal *r = sr_call(I, m, &ma);
      sr_unref(m);
      return r;
    }
    if (I->exc && strcmp(sr_exc_type(I->exc), "AttributeError") != 0) return NULL;
    sr_exc_clear(I);
  }
  if (sr_as_float(I, a->v[0], "round()", &x) < 0) return NULL;
  if (a->n == 1 || a->v[1]->kind == SR_V_NONE) return sr_int(NULL, (int64_t)nearbyint(x));
  if (nd >= 0 && nd < 300) {
    /* round the double's exact value, as CPython does: printf rounds
       correctly, half to even */
    char buf[400];
    snprintf(buf, sizeof buf, "%.*f", (int)nd, x);
    return sr_float(NULL, strtod(buf, NULL));
  }
  double m = pow(10, (double)-nd);
  return sr_float(NULL, nearbyint(x / m) * m);
}

static SrVal *bi_callable(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "callable() takes exactly one argument");
  return sr_bool(sr_is_callable(I, a->v[0]));
}

static SrVal *bi_type(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "type() takes 1 argument");
  if (sr_is_obj(a->v[0], &sr_exception_class))
    return sr_lookup_builtin_name(sr_exc_type(a->v[0])) ? sr_ref(sr_lookup_builtin_name(sr_exc_type(a->v[0])))
                                                        : sr_obj(&sr_exctype_class, (void *)sr_intern_cstr(sr_exc_type(a->v[0])));
  return sr_type_of(I, a->v[0]);
}

static SrVal *bi_format(SrInterp *I, SrArgs *a) {
  if (a->n < 1 || a->n > 2) return sr_raise(I, "TypeError", "format() takes 1 or 2 arguments");
  const char *spec = a->n == 2 ? sr_as_str(I, a->v[1], "format spec") : "";
  return spec ? sr_format(I, a->v[0], spec) : NULL;
}

/* slice(stop) / slice(start, stop[, step]): Python's, which a bare name
   finds before jax.lax.slice */
static SrVal *bi_slice(SrInterp *I, SrArgs *a) {
  if (a->nkw) return sr_raise(I, "TypeError", "slice() takes no keyword arguments");
  if (a->n < 1) return sr_raise(I, "TypeError", "slice expected at least 1 argument, got 0");
  if (a->n > 3) return sr_raise(I, "TypeError", "slice expected at most 3 arguments, got %d", a->n);
  if (a->n == 1) return sr_slice_new(sr_none(), sr_ref(a->v[0]), sr_none());
  return sr_slice_new(sr_ref(a->v[0]), sr_ref(a->v[1]), a->n == 3 ? sr_ref(a->v[2]) : sr_none());
}

static SrVal *bi_divmod(SrInterp *I, SrArgs *a) {
  if (a->n != 2) return sr_raise(I, "TypeError", "divmod expected 2 arguments");
  SrVal *q = sr_binop(I, SR_OP_FLOORDIV, a->v[0], a->v[1]);
  if (!q) return NULL;
  SrVal *r = sr_binop(I, SR_OP_MOD, a->v[0], a->v[1]);
  if (!r) {
    sr_unref(q);
    return NULL;
  }
  SrVal *t[2] = {q, r};
  return sr_tuple(NULL, 2, t);
}

/* pow(base, exp[, mod]): with mod, ints only, by squaring (CPython's
   three-argument pow, a negative exponent aside) */
static SrVal *bi_pow(SrInterp *I, SrArgs *a) {
  if (a->n == 3 && a->v[2]->kind != SR_V_NONE) {
    SrVal *b = a->v[0], *e = a->v[1], *m = a->v[2];
    if (b->kind != SR_V_INT || e->kind != SR_V_INT || m->kind != SR_V_INT)
      return sr_raise(I, "TypeError", "pow() 3rd argument not allowed unless all arguments are integers");
    if (m->i == 0) return sr_raise(I, "ValueError", "pow() 3rd argument cannot be 0");
    if (e->i < 0) return sr_raise(I, "ValueError", "pow() with a negative exponent and a modulus is not supported here");
    __int128 mod = m->i < 0 ? -(__int128)m->i : m->i, r = 1 % mod, x = ((b->i % mod) + mod) % mod;
    for (int64_t k = e->i; k; k >>= 1) {
      if (k & 1) r = r * x % mod;
      x = x * x % mod;
    }
    /* the result has the modulus's sign, as Python's % */
    if (m->i < 0 && r) r -= mod;
    return sr_int(NULL, (int64_t)r);
  }
  if (a->n < 2)
    return sr_raise(I, "TypeError", "pow() missing required argument '%s' (pos %d)", a->n ? "exp" : "base", a->n + 1);
  if (a->n > 3) return sr_raise(I, "TypeError", "pow() takes at most 3 arguments (%d given)", a->n);
  return sr_binop(I, SR_OP_POW, a->v[0], a->v[1]);
}

/* A number for complex(): a complex value's parts, or an object's item()
   (a complex array's element, as __complex__), or a real number. */
static int as_complex(SrInterp *I, SrVal *v, double *re, double *im) {
  *im = 0;
  if (scalar_conversion(I, v) < 0) return -1;
  if (v->kind == SR_V_COMPLEX) {
    *re = v->c.re, *im = v->c.im;
    return 0;
  }
  const SrLangOps *ops = sr_ops(v);
  if (ops && ops->unop && v->kind == SR_V_OBJ) {
    const char *saved = I->item_for;
    I->item_for = "complex";
    SrVal *r = ops->unop(I, SR_OP_ITEM, v);
    I->item_for = saved;
    if (r && r->kind == SR_V_COMPLEX) {
      *re = r->c.re, *im = r->c.im;
      sr_unref(r);
      return 0;
    }
    sr_unref(r);
    if (I->exc) return -1;
  }
  return sr_as_float(I, v, "complex() argument", re);
}

static SrVal *bi_complex(SrInterp *I, SrArgs *a) {
  if (a->n == 1 && a->v[0]->kind == SR_V_STR) {
    char *s = sr_xstrndup(a->v[0]->str.s, a->v[0]->str.n), *e;
    const char *q = s[0] == '(' ? s + 1 : s;
    double re = strtod(q, &e), im = 0;
    if (*e == 'j' || *e == 'J') {
      im = re;
      re = 0;
    } else if (*e == '+' || *e == '-') {
      im = strtod(e, &e);
      if (*e != 'j' && *e != 'J') e = NULL;
    }
    int bad = e == NULL || e == q;
    free(s);
    if (bad) return sr_raise(I, "ValueError", "complex() arg is a malformed string");
    return sr_complex(NULL, re, im);
  }
  double re = 0, im = 0;
  if (a->n >= 1 && as_complex(I, a->v[0], &re, &im) < 0) return NULL;
  if (a->n >= 2) {
    double r2, i2;
    if (as_complex(I, a->v[1], &r2, &i2) < 0) return NULL;
    re -= i2;
    im += r2;
  }
  return sr_complex(NULL, re, im);
}

static SrVal *m_conjugate(SrInterp *I, SrArgs *a) {
  (void)I;
  SrVal *v = a->self;
  if (v->kind == SR_V_COMPLEX) return sr_complex(NULL, v->c.re, -v->c.im);
  return sr_ref(v);
}

/* ---- the time module: clocks for timing a script ---- */

static SrVal *clock_seconds(SrInterp *I, SrArgs *a, const char *name, clockid_t id) {
  if (a->nkw) return sr_raise(I, "TypeError", "time.%s() takes no keyword arguments", name);
  if (a->n) return sr_raise(I, "TypeError", "time.%s() takes no arguments (%d given)", name, a->n);
  struct timespec t;
  clock_gettime(id, &t);
  return sr_float(NULL, (double)t.tv_sec + (double)t.tv_nsec * 1e-9);
}

static SrVal *bi_perf_counter(SrInterp *I, SrArgs *a) {
  return clock_seconds(I, a, "perf_counter", CLOCK_MONOTONIC);
}

static SrVal *bi_process_time(SrInterp *I, SrArgs *a) {
  return clock_seconds(I, a, "process_time", CLOCK_PROCESS_CPUTIME_ID);
}

static SrVal *number_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  if (strcmp(name, "conjugate") == 0) return sr_bound_method(self, name, m_conjugate);
  return NULL;
}

void sr_builtins_py_init(void) {
  sr_input_init();
  sr_def("builtins.complex", bi_complex, "complex(real=0, imag=0) or complex(string)");
  sr_kind_getattr_set(SR_V_COMPLEX, number_getattr);
  sr_def("builtins.print", bi_print, "print(*values, sep=' ', end='\\n', file=None, flush=False): writes the values' str()");
  sr_def("traceback.format_exc", bi_format_exc,
         "traceback.format_exc(): the traceback of the exception being handled, as a string");
  sr_def("traceback.print_exc", bi_print_exc, "traceback.print_exc(): prints the traceback of the exception being handled to stderr");
  sr_def("logging.warning", bi_log_warning, "logging.warning(msg, *args): writes WARNING:root:msg % args to stderr");
  sr_def("logging.error", bi_log_error, "logging.error(msg, *args): writes ERROR:root:msg % args to stderr");
  sr_def("logging.critical", bi_log_critical, "logging.critical(msg, *args): writes CRITICAL:root:msg % args to stderr");
  sr_def("logging.info", bi_log_info, "logging.info(msg, *args): below the root logger's WARNING level, writes nothing");
  sr_def("logging.debug", bi_log_debug, "logging.debug(msg, *args): below the root logger's WARNING level, writes nothing");
  sr_register("sys.stdout", sr_obj(&stream_class, (void *)1));
  sr_register("sys.stderr", sr_obj(&stream_class, (void *)2));
  sr_def("builtins.len", bi_len, "len(x): the number of items in x");
  sr_range_init();
  sr_def("builtins.zip", bi_zip, "zip(*iterables): tuples of the items at each position");
  sr_def("builtins.enumerate", bi_enumerate, "enumerate(iterable, start=0)");
  sr_def("builtins.list", bi_list, "list(iterable)");
  sr_def("builtins.tuple", bi_tuple, "tuple(iterable)");
  sr_def("builtins.set", bi_set, "set(iterable)");
  sr_def("builtins.frozenset", bi_frozenset, "frozenset(iterable)");
  sr_def("builtins.dict", bi_dict, "dict(mapping or pairs, **kwargs)");
  sr_def("builtins.str", bi_str, "str(x): x's text");
  sr_def("builtins.repr", bi_repr, "repr(x): x's representation");
  sr_def("builtins.ascii", bi_ascii, "ascii(x): repr(x) with non-ASCII characters escaped");
  sr_def("builtins.bin", bi_bin, "bin(x): an int in binary, '0b101'");
  sr_def("builtins.oct", bi_oct, "oct(x): an int in octal, '0o17'");
  sr_def("builtins.hex", bi_hex, "hex(x): an int in hexadecimal, '0xff'");
  sr_def("builtins.id", bi_id, "id(x): an int identifying x while it lives");
  sr_def("builtins.filter", bi_filter, "filter(function, iterable): the items function finds true (None: the true items)");
  sr_def("builtins.int", bi_int, "int(x)");
  sr_def("builtins.float", bi_float, "float(x)");
  sr_def("builtins.bool", bi_bool, "bool(x)");
  sr_def("builtins.abs", bi_abs, "abs(x)");
  sr_def("builtins.min", bi_min, "min(iterable) / min(a, b, ...)");
  sr_def("builtins.max", bi_max, "max(iterable) / max(a, b, ...)");
  sr_def("builtins.sum", bi_sum, "sum(iterable, start=0)");
  sr_def("builtins.all", bi_all, "all(iterable)");
  sr_def("builtins.any", bi_any, "any(iterable)");
  sr_def("builtins.sorted", bi_sorted, "sorted(iterable, reverse=False)");
  sr_def("builtins.reversed", bi_reversed, "reversed(sequence)");
  sr_def("builtins.map", bi_map, "map(function, *iterables)");
  sr_def("builtins.isinstance", bi_isinstance, "isinstance(x, type)");
  sr_def("builtins.getattr", bi_getattr, "getattr(x, name[, default])");
  sr_def("builtins.hasattr", bi_hasattr, "hasattr(x, name)");
  sr_def("builtins.setattr", bi_setattr, "setattr(x, name, value)");
  sr_def("builtins.round", bi_round, "round(x[, ndigits])");
  sr_def("builtins.callable", bi_callable, "callable(x)");
  sr_def("builtins.type", bi_type, "type(x)");
  sr_def("builtins.format", bi_format, "format(value, spec)");
  sr_def("builtins.divmod", bi_divmod, "divmod(a, b)");
  sr_def("builtins.slice", bi_slice, "slice(stop) / slice(start, stop[, step]): a slice object, as x[start:stop:step] makes");
  sr_def("builtins.pow", bi_pow, "pow(base, exp, mod=None)");
  sr_def("time.perf_counter", bi_perf_counter,
         "time.perf_counter(): seconds on a monotonic clock, for timing (each MPI rank reads its own)");
  sr_def("time.process_time", bi_process_time,
         "time.process_time(): CPU seconds of this process, all its threads");
  sr_re_init();
  sr_class_init();
  sr_modules_init();
  sr_py_introspect_init();
  sr_enum_init();
}
