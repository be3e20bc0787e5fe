/* doc.c: building and formatting docs. */
#include "text/doc.h"

#include <stdlib.h>
#include <string.h>

static SrDoc *node(SrArena *a, int kind) {
  SrDoc *d = sr_arena_alloc(a, sizeof *d);
  d->kind = (uint8_t)kind;
  d->n = 0;
  d->flat = -1;
  return d;
}

SrDoc *sr_doc_text(SrArena *a, const char *s, uint32_t len) {
  SrDoc *d = node(a, SR_DOC_TEXT);
  d->t.s = s;
  d->t.len = len;
  d->flat = len;
  return d;
}

SrDoc *sr_doc_textz(SrArena *a, const char *s) { return sr_doc_text(a, s, (uint32_t)strlen(s)); }

SrDoc *sr_doc_brk(SrArena *a, const char *s) {
  SrDoc *d = sr_doc_textz(a, s);
  d->kind = SR_DOC_BRK;
  return d;
}

/* Flat widths are summed as docs are built (children come first), so
   that a group's fitting test costs nothing. */
SrDoc *sr_doc_group(SrArena *a, SrDoc *c) {
  SrDoc *d = node(a, SR_DOC_GROUP);
  d->child = c;
  d->flat = sr_doc_flat(c);
  return d;
}

SrDoc *sr_doc_nest(SrArena *a, int n, SrDoc *c) {
  SrDoc *d = node(a, SR_DOC_NEST);
  d->n = n;
  d->child = c;
  d->flat = sr_doc_flat(c);
  return d;
}

SrDoc *sr_doc_cat(SrArena *a, int n, SrDoc **kids) {
  SrDoc *d = node(a, SR_DOC_CAT);
  d->n = n;
  d->kids = sr_arena_memdup(a, kids, (size_t)n * sizeof *kids);
  int64_t w = 0;
  for (int i = 0; i < n; i++) w += sr_doc_flat(kids[i]);
  d->flat = w;
  return d;
}

SrDoc *sr_doc_cat2(SrArena *a, SrDoc *x, SrDoc *y) {
  SrDoc *k[2] = {x, y};
  return sr_doc_cat(a, 2, k);
}

SrDoc *sr_doc_cat3(SrArena *a, SrDoc *x, SrDoc *y, SrDoc *z) {
  SrDoc *k[3] = {x, y, z};
  return sr_doc_cat(a, 3, k);
}

int64_t sr_doc_flat(SrDoc *d) {
  if (!d) return 0;
  if (d->flat >= 0) return d->flat;
  int64_t w = 0;
  switch (d->kind) {
  case SR_DOC_CAT:
    for (int i = 0; i < d->n; i++) w += sr_doc_flat(d->kids[i]);
    break;
  case SR_DOC_GROUP:
  case SR_DOC_NEST:
    w = sr_doc_flat(d->child);
    break;
  default:
    w = d->t.len;
  }
  d->flat = w;
  return w;
}

typedef struct SrFmtItem {
  int64_t indent;
  int mode;
  SrDoc *d;
} SrFmtItem;

void sr_fmt_init(SrFmt *f, SrBuf *out, int width) {
  memset(f, 0, sizeof *f);
  f->out = out;
  f->width = width;
}

void sr_fmt_free(SrFmt *f) {
  free(f->stack);
  f->stack = NULL;
  f->cap = 0;
}

void sr_fmt_text(SrFmt *f, const char *s, size_t n) {
  sr_buf_putn(f->out, s, n);
  f->k += (int64_t)n;
}

void sr_fmt_brk(SrFmt *f, const char *s, int64_t indent, int mode) {
  if (mode == SR_MODE_BREAK) {
    sr_buf_putc(f->out, '\n');
    sr_buf_fill(f->out, ' ', (size_t)indent);
    f->k = indent;
  } else {
    sr_fmt_text(f, s, strlen(s));
  }
}

/* Writes d flat at p, which has room for its flat width; returns the end.
   Recursion is as deep as the doc, which is as deep as the jaxprs nest. */
static char *put_flat(char *p, const SrDoc *d) {
  for (;;) {
    if (!d) return p;
    switch (d->kind) {
    case SR_DOC_TEXT:
    case SR_DOC_BRK:
      /* names, brackets and types are short: a loop beats a call */
      if (d->t.len <= 16) {
        for (uint32_t i = 0; i < d->t.len; i++) p[i] = d->t.s[i];
      } else {
        memcpy(p, d->t.s, d->t.len);
      }
      return p + d->t.len;
    case SR_DOC_CAT:
      for (int i = 0; i < d->n; i++) p = put_flat(p, d->kids[i]);
      return p;
    default: /* GROUP, NEST */
      d = d->child;
    }
  }
}

/* A group that fits: everything in it is flat (its groups fit too, being
   narrower), so it is written in one go, without the formatter's stack. */
static void fmt_flat(SrFmt *f, SrDoc *d) {
  size_t w = (size_t)sr_doc_flat(d);
  SrBuf *out = f->out;
  sr_buf_grow(out, w);
  char *end = put_flat(out->p + out->len, d);
  out->len = (size_t)(end - out->p);
  out->p[out->len] = 0;
  f->k += (int64_t)w;
}

void sr_fmt(SrFmt *f, SrDoc *root, int64_t indent, int mode) {
  size_t sp = 0;
  if (!root) return;
#define PUSH(I, M, D)                                                        \
  do {                                                                       \
    if (sp == f->cap) {                                                      \
      f->cap = f->cap ? 2 * f->cap : 64;                                     \
      f->stack = sr_xrealloc(f->stack, f->cap * sizeof *f->stack);           \
    }                                                                        \
    f->stack[sp++] = (SrFmtItem){(I), (M), (D)};                             \
  } while (0)
  PUSH(indent, mode, root);
  while (sp) {
    SrFmtItem it = f->stack[--sp];
    SrDoc *d = it.d;
    if (!d) continue;
    switch (d->kind) {
    case SR_DOC_TEXT:
      sr_fmt_text(f, d->t.s, d->t.len);
      break;
    case SR_DOC_CAT:
      for (int i = d->n - 1; i >= 0; i--) PUSH(it.indent, it.mode, d->kids[i]);
      break;
    case SR_DOC_NEST:
      PUSH(it.indent + d->n, it.mode, d->child);
      break;
    case SR_DOC_BRK:
      if (it.mode == SR_MODE_BREAK) {
        sr_buf_putc(f->out, '\n');
        sr_buf_fill(f->out, ' ', (size_t)it.indent);
        f->k = it.indent;
      } else {
        sr_fmt_text(f, d->t.s, d->t.len);
      }
      break;
    case SR_DOC_GROUP:
      if (sr_doc_flat(d) <= f->width - f->k)
        fmt_flat(f, d);
      else
        PUSH(it.indent, SR_MODE_BREAK, d->child);
      break;
    }
  }
#undef PUSH
}
