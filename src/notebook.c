/* notebook.c: --notebook (see notebook.h).
 *
 * A MyST notebook is markdown in which each ```{code-cell} fence (or
 * ~~~, of three or more) holds a code cell; the cell's options come first,
 * as `:tags: [raises-exception]` lines or a `---` YAML block.  The
 * outputs are written after each cell as a MyST code-block of class
 * cell-output, which a later run replaces.
 */
#include "config.h"

#include "notebook.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cell.h"
#include "util/buf.h"
#include "util/diag.h"
#include "util/mem.h"

typedef struct Cell {
  int code;            /* a code cell, else a markdown cell */
  size_t start, end;   /* markdown: its text; code: its opening fence line
                          to the end of its closing fence line */
  size_t src, src_end; /* code: its source */
  uint32_t line0;      /* the line number of its source's first line */
  char *tags[8];       /* its tags */
  int ntags;
  int raises;          /* tagged raises-exception */
  int ran;
  SrCellOut o;
} Cell;

typedef struct Doc {
  const char *text;
  size_t len;
  size_t body;         /* after the front matter */
  Cell *cells;
  int n, cap;
} Doc;

static Cell *add_cell(Doc *d) {
  if (d->n == d->cap) {
    d->cap = d->cap ? 2 * d->cap : 32;
    d->cells = sr_xrealloc(d->cells, (size_t)d->cap * sizeof *d->cells);
  }
  Cell *c = &d->cells[d->n++];
  memset(c, 0, sizeof *c);
  SrCellOut init = SR_CELL_OUT_INIT;
  c->o = init;
  return c;
}

static size_t line_end(const Doc *d, size_t i) {
  const char *nl = memchr(d->text + i, '\n', d->len - i);
  return nl ? (size_t)(nl - d->text) : d->len;
}
static size_t next_line(const Doc *d, size_t i) {
  size_t e = line_end(d, i);
  return e < d->len ? e + 1 : d->len;
}
static int is_blank(const Doc *d, size_t i) {
  size_t e = line_end(d, i);
  for (; i < e; i++)
    if (d->text[i] != ' ' && d->text[i] != '\t' && d->text[i] != '\r') return 0;
  return 1;
}

/* The fence a line opens: its length (3 or more ` or ~), with *info at
   what follows; 0 when it is no fence. */
static size_t fence_at(const Doc *d, size_t i, const char **info) {
  if (i >= d->len || (d->text[i] != '`' && d->text[i] != '~')) return 0;
  char ch = d->text[i];
  size_t n = 0;
  while (i + n < d->len && d->text[i + n] == ch) n++;
  if (n < 3) return 0;
  *info = d->text + i + n;
  return n;
}

/* Does the line at i close a fence of n chars ch? */
static int closes(const Doc *d, size_t i, char ch, size_t n) {
  size_t k = 0;
  while (i + k < d->len && d->text[i + k] == ch) k++;
  if (k < n) return 0;
  return is_blank(d, i + k);
}

static int starts(const char *s, const char *end, const char *word) {
  size_t n = strlen(word);
  return (size_t)(end - s) >= n && memcmp(s, word, n) == 0;
}

/* The tags of "[a, b]" or "a" (the rest of a line), into c. */
static void parse_tags(Cell *c, const char *s, const char *end) {
  while (s < end && (*s == ' ' || *s == '[')) s++;
  while (s < end && c->ntags < 8) {
    while (s < end && (*s == ' ' || *s == ',' || *s == '"' || *s == '\'' || *s == '-')) s++;
    const char *w = s;
    while (s < end && *s != ',' && *s != ']' && *s != '"' && *s != '\'' && *s != ' ' && *s != '\r') s++;
    if (s == w) break;
    c->tags[c->ntags] = sr_xmalloc((size_t)(s - w) + 1);
    memcpy(c->tags[c->ntags], w, (size_t)(s - w));
    c->tags[c->ntags][s - w] = 0;
    if (strcmp(c->tags[c->ntags], "raises-exception") == 0) c->raises = 1;
    c->ntags++;
    while (s < end && (*s == '"' || *s == '\'' || *s == ' ')) s++;
    if (s < end && *s == ']') break;
  }
}

/* A cell's options: `:key: value` lines (a colon command has no second
   colon after its word) or a `---` YAML block, then one blank line.
   Returns where its source begins. */
static size_t cell_options(const Doc *d, Cell *c, size_t i, size_t end, uint32_t *line) {
  const char *t = d->text;
  if (i < end && starts(t + i, t + line_end(d, i), "---") && is_blank(d, i + 3)) {
    size_t j = next_line(d, i);
    uint32_t l = *line + 1;
    int tags_list = 0;
    while (j < end && !(starts(t + j, t + line_end(d, j), "---") && is_blank(d, j + 3))) {
      const char *s = t + j, *e = t + line_end(d, j);
      if (starts(s, e, "tags:")) {
        parse_tags(c, s + 5, e);
        tags_list = c->ntags == 0;
      } else if (tags_list && (s < e && (*s == ' ' || *s == '-'))) {
        parse_tags(c, s, e);
      } else {
        tags_list = 0;
      }
      j = next_line(d, j);
      l++;
    }
    if (j >= end) return i; /* not closed: no options */
    *line = l + 1;
    i = next_line(d, j);
  } else {
    int any = 0;
    while (i < end && t[i] == ':') {
      const char *s = t + i + 1, *e = t + line_end(d, i);
      const char *w = s;
      while (w < e && (*w == '-' || *w == '_' || (*w >= 'a' && *w <= 'z') || (*w >= 'A' && *w <= 'Z'))) w++;
      if (w == s || w >= e || *w != ':' || (w + 1 < e && w[1] != ' ')) break;
      if (starts(s, e, "tags:")) parse_tags(c, w + 1, e);
      any = 1;
      i = next_line(d, i);
      ++*line;
    }
    if (!any) return i;
  }
  if (i < end && is_blank(d, i)) {
    i = next_line(d, i);
    ++*line;
  }
  return i;
}

/* An output block of an earlier run at i (after blank lines): where it
   ends, or i. */
static size_t skip_old_output(const Doc *d, size_t i) {
  size_t j = i;
  while (j < d->len && is_blank(d, j) && line_end(d, j) < d->len) j = next_line(d, j);
  const char *info;
  size_t n = fence_at(d, j, &info);
  if (!n || d->text[j] != '`') return i;
  const char *e = d->text + line_end(d, j);
  if (!starts(info, e, "{code-block} text")) return i;
  size_t k = next_line(d, j);
  if (!starts(d->text + k, d->text + line_end(d, k), ":class: cell-output")) return i;
  for (k = next_line(d, k); k < d->len; k = next_line(d, k))
    if (closes(d, k, '`', n)) return next_line(d, k);
  return i;
}

static void parse_doc(Doc *d) {
  const char *t = d->text;
  size_t i = 0;
  uint32_t line = 1;
  if (starts(t, t + d->len, "---") && is_blank(d, 3)) {
    for (size_t j = next_line(d, 0); j < d->len; j = next_line(d, j)) {
      line++;
      if (starts(t + j, t + line_end(d, j), "---") && is_blank(d, j + 3)) {
        i = next_line(d, j);
        line++;
        break;
      }
    }
  }
  d->body = i;
  size_t md = i;
  while (i < d->len) {
    const char *info;
    size_t n = fence_at(d, i, &info);
    const char *e = t + line_end(d, i);
    if (!n) {
      i = next_line(d, i);
      line++;
      continue;
    }
    char ch = t[i];
    int code = starts(info, e, "{code-cell}");
    size_t open = i;
    uint32_t open_line = line;
    i = next_line(d, i);
    line++;
    size_t body = i;
    uint32_t body_line = line;
    while (i < d->len && !closes(d, i, ch, n)) {
      i = next_line(d, i);
      line++;
    }
    size_t close = i;
    i = next_line(d, i);
    line++;
    if (!code) continue;
    (void)open_line;
    if (open > md) {
      Cell *m = add_cell(d);
      m->start = md;
      m->end = open;
    }
    Cell *c = add_cell(d);
    c->code = 1;
    c->start = open;
    c->end = i;
    c->line0 = body_line;
    c->src = cell_options(d, c, body, close, &c->line0);
    c->src_end = close;
    /* the outputs of an earlier run are replaced */
    size_t after = skip_old_output(d, i);
    for (size_t k = i; k < after; k = next_line(d, k)) line++;
    md = i = after;
  }
  if (md < d->len) {
    Cell *m = add_cell(d);
    m->start = md;
    m->end = d->len;
  }
}

/* ---- writing ---- */

static void put_output_md(SrBuf *b, const Cell *c) {
  const SrCellOut *o = &c->o;
  if (!o->out.len && !o->warn.len && !o->result.len && !o->err.len) return;
  /* a fence longer than any run of backticks in the outputs */
  size_t run = 0, longest = 2;
  const SrBuf *parts[4] = {&o->out, &o->warn, &o->result, &o->err};
  for (int k = 0; k < 4; k++)
    for (size_t i = 0; i < parts[k]->len; i++) {
      run = parts[k]->p[i] == '`' ? run + 1 : 0;
      if (run > longest) longest = run;
    }
  SrBuf fence = SR_BUF_INIT;
  sr_buf_fill(&fence, '`', longest + 1);
  sr_buf_printf(b, "\n%s{code-block} text\n:class: cell-output\n\n", sr_buf_str(&fence));
  for (int k = 0; k < 4; k++) {
    sr_buf_putn(b, sr_buf_str(parts[k]), parts[k]->len);
    if (parts[k]->len && parts[k]->p[parts[k]->len - 1] != '\n') sr_buf_putc(b, '\n');
  }
  sr_buf_printf(b, "%s\n", sr_buf_str(&fence));
  sr_buf_free(&fence);
}

static void write_md(SrBuf *b, const Doc *d) {
  sr_buf_putn(b, d->text, d->body);
  for (int k = 0; k < d->n; k++) {
    const Cell *c = &d->cells[k];
    sr_buf_putn(b, d->text + c->start, c->end - c->start);
    if (c->code && c->ran) {
      if (c->end > c->start && d->text[c->end - 1] != '\n') sr_buf_putc(b, '\n');
      put_output_md(b, c);
    }
  }
}

static void json_str(SrBuf *b, const char *s, size_t n) {
  sr_buf_putc(b, '"');
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)s[i];
    switch (ch) {
    case '"': sr_buf_puts(b, "\\\""); break;
    case '\\': sr_buf_puts(b, "\\\\"); break;
    case '\n': sr_buf_puts(b, "\\n"); break;
    case '\t': sr_buf_puts(b, "\\t"); break;
    case '\r': sr_buf_puts(b, "\\r"); break;
    default:
      if (ch < 0x20) sr_buf_printf(b, "\\u%04x", ch);
      else sr_buf_putc(b, (char)ch);
    }
  }
  sr_buf_putc(b, '"');
}

/* A text as nbformat's list of lines, each but the last ending in "\n". */
static void json_lines(SrBuf *b, const char *s, size_t n, const char *ind) {
  sr_buf_putc(b, '[');
  size_t i = 0;
  int first = 1;
  while (i < n) {
    const char *nl = memchr(s + i, '\n', n - i);
    size_t e = nl ? (size_t)(nl - s) + 1 : n;
    sr_buf_printf(b, "%s\n%s ", first ? "" : ",", ind);
    json_str(b, s + i, e - i);
    first = 0;
    i = e;
  }
  sr_buf_printf(b, "%s]", first ? "" : "\n   ");
  (void)ind;
}

/* The text trimmed of blank lines at both ends. */
static void trimmed(const char *s, size_t n, const char **ps, size_t *pn) {
  size_t a = 0, e = n;
  while (a < n && (s[a] == '\n' || s[a] == ' ' || s[a] == '\r')) {
    size_t k = a;
    while (k < n && (s[k] == ' ' || s[k] == '\r')) k++;
    if (k < n && s[k] != '\n') break;
    a = k + 1 > n ? n : k + 1;
  }
  while (e > a && (s[e - 1] == '\n' || s[e - 1] == ' ' || s[e - 1] == '\r')) e--;
  *ps = s + a;
  *pn = e - a;
}

static void write_ipynb(SrBuf *b, const Doc *d) {
  sr_buf_puts(b, "{\n \"cells\": [");
  int first = 1, count = 0;
  for (int k = 0; k < d->n; k++) {
    const Cell *c = &d->cells[k];
    const char *s;
    size_t n;
    if (!c->code) {
      trimmed(d->text + c->start, c->end - c->start, &s, &n);
      if (!n) continue;
      sr_buf_printf(b, "%s\n  {\n   \"cell_type\": \"markdown\",\n   \"metadata\": {},\n   \"source\": ", first ? "" : ",");
      json_lines(b, s, n, "   ");
      sr_buf_puts(b, "\n  }");
      first = 0;
      continue;
    }
    trimmed(d->text + c->src, c->src_end - c->src, &s, &n);
    sr_buf_printf(b, "%s\n  {\n   \"cell_type\": \"code\",\n", first ? "" : ",");
    first = 0;
    if (c->ran) sr_buf_printf(b, "   \"execution_count\": %d,\n", ++count);
    else sr_buf_puts(b, "   \"execution_count\": null,\n");
    sr_buf_puts(b, "   \"metadata\": {");
    if (c->ntags) {
      sr_buf_puts(b, "\"tags\": [");
      for (int t = 0; t < c->ntags; t++) {
        if (t) sr_buf_puts(b, ", ");
        json_str(b, c->tags[t], strlen(c->tags[t]));
      }
      sr_buf_puts(b, "]");
    }
    sr_buf_puts(b, "},\n   \"outputs\": [");
    int fo = 1;
    const SrCellOut *o = &c->o;
    if (o->out.len) {
      sr_buf_printf(b, "\n    {\n     \"name\": \"stdout\",\n     \"output_type\": \"stream\",\n     \"text\": ");
      json_lines(b, o->out.p, o->out.len, "     ");
      sr_buf_puts(b, "\n    }");
      fo = 0;
    }
    if (o->warn.len) {
      sr_buf_printf(b, "%s\n    {\n     \"name\": \"stderr\",\n     \"output_type\": \"stream\",\n     \"text\": ", fo ? "" : ",");
      json_lines(b, o->warn.p, o->warn.len, "     ");
      sr_buf_puts(b, "\n    }");
      fo = 0;
    }
    if (o->result.len) {
      size_t rn = o->result.len;
      if (o->result.p[rn - 1] == '\n') rn--;
      sr_buf_printf(b, "%s\n    {\n     \"data\": {\n      \"text/plain\": ", fo ? "" : ",");
      json_lines(b, o->result.p, rn, "      ");
      sr_buf_printf(b, "\n     },\n     \"execution_count\": %d,\n     \"metadata\": {},\n     \"output_type\": \"execute_result\"\n    }", count);
      fo = 0;
    }
    if (o->failed) {
      sr_buf_printf(b, "%s\n    {\n     \"ename\": ", fo ? "" : ",");
      json_str(b, o->ename, strlen(o->ename));
      sr_buf_puts(b, ",\n     \"evalue\": ");
      json_str(b, o->evalue, strlen(o->evalue));
      sr_buf_puts(b, ",\n     \"output_type\": \"error\",\n     \"traceback\": [");
      size_t i = 0, en = o->err.len;
      const char *es = sr_buf_str(&o->err);
      int ft = 1;
      while (i < en) {
        const char *nl = memchr(es + i, '\n', en - i);
        size_t e = nl ? (size_t)(nl - es) : en;
        sr_buf_printf(b, "%s\n      ", ft ? "" : ",");
        json_str(b, es + i, e - i);
        ft = 0;
        i = e + 1;
      }
      sr_buf_puts(b, "\n     ]\n    }");
      fo = 0;
    }
    sr_buf_printf(b, "%s],\n   \"source\": ", fo ? "" : "\n   ");
    json_lines(b, s, n, "   ");
    sr_buf_puts(b, "\n  }");
  }
  sr_buf_puts(b, "\n ],\n \"metadata\": {\n"
                 "  \"kernelspec\": {\n   \"display_name\": \"shardrepl\",\n   \"language\": \"python\",\n   \"name\": \"shardrepl\"\n  },\n"
                 "  \"language_info\": {\n   \"file_extension\": \".py\",\n   \"mimetype\": \"text/x-python\",\n   \"name\": \"python\"\n  }\n"
                 " },\n \"nbformat\": 4,\n \"nbformat_minor\": 4\n}\n");
}

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

int sr_notebook_run(SrInterp *I, const char *path, const char *out) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "shardrepl: cannot open '%s': %s\n", path, strerror(errno));
    return -1;
  }
  SrBuf text = SR_BUF_INIT;
  char chunk[65536];
  size_t k;
  while ((k = fread(chunk, 1, sizeof chunk, f)) > 0) sr_buf_putn(&text, chunk, k);
  fclose(f);
  Doc d = {sr_buf_str(&text), text.len, 0, NULL, 0, 0};
  parse_doc(&d);
  int status = 0;
  for (int i = 0; i < d.n && !I->py->quit; i++) {
    Cell *c = &d.cells[i];
    if (!c->code) continue;
    SrSrc *src = sr_src_new(path, d.text + c->src, c->src_end - c->src, c->line0);
    sr_cell_run(I, src, &c->o);
    sr_src_unref(src);
    c->ran = 1;
    if (c->o.failed && !c->raises) {
      /* nbconvert's CellExecutionError: the run stops here */
      if (!I->py->first_error) I->py->first_error = c->o.kind;
      fflush(stdout);
      fputs(sr_buf_str(&c->o.err), stderr);
      status = c->o.kind ? c->o.kind : SR_E_RUNTIME;
      break;
    }
  }
  SrBuf b = SR_BUF_INIT;
  if (out && ends_with(out, ".ipynb")) write_ipynb(&b, &d);
  else write_md(&b, &d);
  int rc = status;
  if (!out || strcmp(out, "-") == 0) {
    fwrite(sr_buf_str(&b), 1, b.len, stdout);
    fflush(stdout);
  } else {
    FILE *o = fopen(out, "wb");
    if (!o || fwrite(sr_buf_str(&b), 1, b.len, o) != b.len || fclose(o) != 0) {
      fprintf(stderr, "shardrepl: cannot write '%s': %s\n", out, strerror(errno));
      rc = -1;
    }
  }
  sr_buf_free(&b);
  for (int i = 0; i < d.n; i++) {
    sr_cell_out_free(&d.cells[i].o);
    for (int t = 0; t < d.cells[i].ntags; t++) free(d.cells[i].tags[t]);
  }
  free(d.cells);
  sr_buf_free(&text);
  return rc;
}
