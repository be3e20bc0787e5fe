/* diag.c: diagnostics with line, column and a caret. */
#include "util/diag.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/mem.h"

SrSrc *sr_src_new(const char *name, const char *text, size_t len, uint32_t line0) {
  SrSrc *s = sr_xcalloc(1, sizeof *s);
  s->name = sr_xstrdup(name);
  s->text = sr_xstrndup(text, len);
  s->len = len;
  s->line0 = line0 ? line0 : 1;
  s->rc = 1;
  size_t n = 1;
  for (size_t i = 0; i < len; i++) n += s->text[i] == '\n';
  s->bol = sr_xmalloc(n * sizeof *s->bol);
  s->bol[s->nbol++] = 0;
  for (size_t i = 0; i < len; i++)
    if (s->text[i] == '\n') s->bol[s->nbol++] = i + 1;
  return s;
}

SrSrc *sr_src_ref(SrSrc *s) {
  if (s) s->rc++;
  return s;
}

void sr_src_unref(SrSrc *s) {
  if (!s || --s->rc > 0) return;
  free(s->name);
  free(s->text);
  free(s->bol);
  free(s);
}

void sr_src_linecol(const SrSrc *s, size_t off, uint32_t *line, uint32_t *col) {
  if (off > s->len) off = s->len;
  size_t lo = 0, hi = s->nbol; /* the last line starting at or before off */
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (s->bol[mid] <= off)
      lo = mid;
    else
      hi = mid;
  }
  *line = s->line0 + (uint32_t)lo;
  *col = (uint32_t)(off - s->bol[lo] + 1);
}

int sr_verror(SrDiags *d, SrErrKind kind, const SrSrc *src, size_t off,
              const char *fmt, va_list ap) {
  if (!d) return -1;
  SrBuf b = SR_BUF_INIT;
  sr_buf_vprintf(&b, fmt, ap);
  SrDiag *g = sr_xcalloc(1, sizeof *g);
  g->kind = kind;
  g->src = sr_src_ref((SrSrc *)src);
  g->off = off;
  g->msg = sr_buf_steal(&b);
  if (d->last)
    d->last->next = g;
  else
    d->first = g;
  d->last = g;
  d->count++;
  return -1;
}

int sr_error(SrDiags *d, SrErrKind kind, const SrSrc *src, size_t off,
             const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sr_verror(d, kind, src, off, fmt, ap);
  va_end(ap);
  return -1;
}

int sr_error_exc(SrDiags *d, SrErrKind kind, const char *exc, const SrSrc *src,
                 size_t off, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sr_verror(d, kind, src, off, fmt, ap);
  va_end(ap);
  if (d && exc) d->last->exc = sr_xstrdup(exc);
  return -1;
}

void sr_diags_locate(SrDiags *d, const SrSrc *src, size_t off) {
  for (SrDiag *g = d->first; g; g = g->next)
    if (!g->src && !g->rendered) {
      g->src = sr_src_ref((SrSrc *)src);
      g->off = off;
    }
}

void sr_diags_move(SrDiags *to, SrDiags *from) {
  if (!from->first) return;
  if (to->last)
    to->last->next = from->first;
  else
    to->first = from->first;
  to->last = from->last;
  to->count += from->count;
  to->incomplete |= from->incomplete;
  from->first = from->last = NULL;
  from->count = 0;
  from->incomplete = 0;
}

void sr_diags_clear(SrDiags *d) {
  SrDiag *g = d->first;
  while (g) {
    SrDiag *n = g->next;
    sr_src_unref(g->src);
    free(g->exc);
    free(g->msg);
    free(g->note);
    free(g);
    g = n;
  }
  d->first = d->last = NULL;
  d->count = 0;
  d->incomplete = 0;
}

SrErrKind sr_diags_kind(const SrDiags *d) { return d->first ? d->first->kind : 0; }

void sr_diag_render_one(const SrDiag *g, SrBuf *out) {
  if (g->exc) sr_buf_puts(out, g->exc);
  if (g->exc && *g->msg) sr_buf_puts(out, ": ");
  sr_buf_puts(out, g->msg);
}

/* The source line holding off, and a caret under it.  Tabs in the line are
   copied into the caret line so that the caret stays aligned. */
void sr_src_render_caret(const SrSrc *s, size_t off, SrBuf *out) {
  if (off > s->len) off = s->len;
  size_t bol = off, eol = off;
  while (bol > 0 && s->text[bol - 1] != '\n') bol--;
  while (eol < s->len && s->text[eol] != '\n') eol++;
  /* an error at the very end of the text points after its last line */
  if (bol == eol && off == s->len && bol > 0) {
    eol = bol - 1;
    bol = eol;
    while (bol > 0 && s->text[bol - 1] != '\n') bol--;
    off = eol;
  }
  sr_buf_puts(out, "    ");
  sr_buf_putn(out, s->text + bol, eol - bol);
  sr_buf_puts(out, "\n    ");
  for (size_t i = bol; i < off; i++) sr_buf_putc(out, s->text[i] == '\t' ? '\t' : ' ');
  sr_buf_puts(out, "^\n");
}

void sr_diags_render(const SrDiags *d, SrBuf *out) {
  for (const SrDiag *g = d->first; g; g = g->next) {
    if (g->note) sr_buf_puts(out, g->note);
    if (g->rendered) {
      sr_buf_puts(out, g->msg);
      if (!out->len || out->p[out->len - 1] != '\n') sr_buf_putc(out, '\n');
    } else if (g->src) {
      uint32_t line, col;
      size_t off = g->off;
      /* past-the-end errors are reported on the last line */
      if (off >= g->src->len && g->src->len > 0) {
        size_t e = g->src->len;
        while (e > 0 && (g->src->text[e - 1] == '\n' || g->src->text[e - 1] == ' ')) e--;
        off = e;
      }
      sr_src_linecol(g->src, off, &line, &col);
      sr_buf_printf(out, "%s:%u:%u: error: ", g->src->name, line, col);
      sr_diag_render_one(g, out);
      sr_buf_putc(out, '\n');
      sr_src_render_caret(g->src, off, out);
    } else {
      sr_buf_puts(out, "error: ");
      sr_diag_render_one(g, out);
      sr_buf_putc(out, '\n');
    }
  }
}
