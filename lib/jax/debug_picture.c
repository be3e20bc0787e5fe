/* debug_picture.c: jax.debug.visualize_array_sharding's picture
 * (debug_picture.h), as JAX draws it (debugging.py: visualize_sharding)
 * with rich 13's Table, Padding and Align, byte for byte:
 *
 * - with colour (use_color and a colour terminal): no box, each block a
 *   cell on a background from matplotlib's tab20b, in the order JAX's
 *   make_color_iter walks it, the label black or white by luminance;
 * - without (no terminal, or use_color=False): rich.box.SQUARE with lines
 *   between the rows, and on a terminal the device ids highlighted as
 *   rich's ReprHighlighter highlights numbers (bold cyan);
 * - in a notebook: rich's HTML (jupyter.py: _render_segments with the
 *   default terminal theme) and, as its text/plain, the 24-bit text.
 *
 * Beyond JAX: rank 0 draws one cell, rank 3 and up one picture per block of
 * the leading dims, and the devices of a block that hold partial values
 * (unreduced axes) are joined by '+' rather than listed as replicas.
 */
#include "jax/debug_picture.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/mesh.h"
#include "util/mem.h"

SrDisplayFn sr_display_fn;
SrImageFn sr_image_fn;
void *sr_display_ctx;

/* ---- styles and the segments rich writes ---- */

typedef struct Style {
  int kind;             /* 0: none, 1: a highlighted number, 2: a coloured cell */
  unsigned char fg[3], bg[3];
} Style;

static const Style NO_STYLE = {0, {0}, {0}};
static const Style NUMBER = {1, {0}, {0}};

static int style_eq(const Style *a, const Style *b) {
  return a->kind == b->kind && (a->kind != 2 || (memcmp(a->fg, b->fg, 3) == 0 && memcmp(a->bg, b->bg, 3) == 0));
}

typedef struct Emit {
  SrBuf *text, *html;
  SrColorSystem cs;
  Style pend; /* the HTML span being gathered (Segment.simplify) */
  SrBuf pbuf;
} Emit;

/* rich's downgrade of a 24-bit colour to 256 (color.py: Color.downgrade). */
static int eight_bit(const unsigned char c[3]) {
  double r = c[0] / 255.0, g = c[1] / 255.0, b = c[2] / 255.0;
  double mx = fmax(r, fmax(g, b)), mn = fmin(r, fmin(g, b)), l = (mx + mn) / 2.0, s = 0;
  if (mx != mn) s = l <= 0.5 ? (mx - mn) / (mx + mn) : (mx - mn) / (2.0 - mx - mn);
  if (s < 0.15) {
    int gray = (int)nearbyint(l * 25.0);
    return gray == 0 ? 16 : gray == 25 ? 231 : 231 + gray;
  }
  int six[3];
  for (int k = 0; k < 3; k++) six[k] = (int)nearbyint(c[k] < 95 ? c[k] / 95.0 : 1 + (c[k] - 95) / 40.0);
  return 16 + 36 * six[0] + 6 * six[1] + six[2];
}

/* ... and to the 16 standard colours (palette.py: Palette.match). */
static int standard(const unsigned char c[3]) {
  static const int pal[16][3] = {{0, 0, 0},     {170, 0, 0},    {0, 170, 0},    {170, 85, 0},
                                 {0, 0, 170},   {170, 0, 170},  {0, 170, 170},  {170, 170, 170},
                                 {85, 85, 85},  {255, 85, 85},  {85, 255, 85},  {255, 255, 85},
                                 {85, 85, 255}, {255, 85, 255}, {85, 255, 255}, {255, 255, 255}};
  int best = 0;
  double bd = 0;
  for (int i = 0; i < 16; i++) {
    int rm = (c[0] + pal[i][0]) / 2, dr = c[0] - pal[i][0], dg = c[1] - pal[i][1], db = c[2] - pal[i][2];
    double d = sqrt((double)((((512 + rm) * dr * dr) >> 8) + 4 * dg * dg + (((767 - rm) * db * db) >> 8)));
    if (i == 0 || d < bd) best = i, bd = d;
  }
  return best;
}

static void color_codes(SrBuf *b, const unsigned char c[3], int fg, SrColorSystem cs) {
  if (cs == SR_CS_TRUECOLOR) {
    sr_buf_printf(b, "%s;2;%d;%d;%d", fg ? "38" : "48", c[0], c[1], c[2]);
  } else if (cs == SR_CS_256) {
    sr_buf_printf(b, "%s;5;%d", fg ? "38" : "48", eight_bit(c));
  } else {
    int n = standard(c);
    sr_buf_printf(b, "%d", n < 8 ? (fg ? 30 : 40) + n : (fg ? 82 : 92) + n);
  }
}

static void html_escape(SrBuf *b, const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '&') sr_buf_puts(b, "&amp;");
    else if (s[i] == '<') sr_buf_puts(b, "&lt;");
    else if (s[i] == '>') sr_buf_puts(b, "&gt;");
    else sr_buf_putc(b, s[i]);
  }
}

static void html_flush(Emit *e) {
  if (!e->html || !e->pbuf.len) return;
  if (e->pend.kind == 0) {
    html_escape(e->html, e->pbuf.p, e->pbuf.len);
  } else {
    if (e->pend.kind == 1) {
      sr_buf_puts(e->html, "<span style=\"color: #008080; text-decoration-color: #008080; font-weight: bold\">");
    } else {
      const unsigned char *f = e->pend.fg, *g = e->pend.bg;
      sr_buf_printf(e->html,
                    "<span style=\"color: #%02x%02x%02x; text-decoration-color: #%02x%02x%02x; "
                    "background-color: #%02x%02x%02x\">",
                    f[0], f[1], f[2], f[0], f[1], f[2], g[0], g[1], g[2]);
    }
    html_escape(e->html, e->pbuf.p, e->pbuf.len);
    sr_buf_puts(e->html, "</span>");
  }
  sr_buf_reset(&e->pbuf);
}

/* One segment: text in a style. */
static void seg(Emit *e, const Style *st, const char *s, size_t n) {
  if (!n) return;
  if (st->kind == 0 || e->cs == SR_CS_NONE) {
    sr_buf_putn(e->text, s, n);
  } else {
    sr_buf_puts(e->text, "\033[");
    if (st->kind == 1) {
      sr_buf_puts(e->text, "1;36");
    } else {
      color_codes(e->text, st->fg, 1, e->cs);
      sr_buf_putc(e->text, ';');
      color_codes(e->text, st->bg, 0, e->cs);
    }
    sr_buf_putc(e->text, 'm');
    sr_buf_putn(e->text, s, n);
    sr_buf_puts(e->text, "\033[0m");
  }
  if (e->html) {
    if (!style_eq(&e->pend, st)) html_flush(e);
    e->pend = *st;
    sr_buf_putn(&e->pbuf, s, n);
  }
}

static void seg_str(Emit *e, const Style *st, const char *s) { seg(e, st, s, strlen(s)); }

static void spaces(Emit *e, const Style *st, int n) {
  if (n <= 0) return;
  char *s = sr_xmalloc((size_t)n);
  memset(s, ' ', (size_t)n);
  seg(e, st, s, (size_t)n);
  free(s);
}

static void rule(Emit *e, const char *l, const char *mid, const char *r, const int *w, int cols) {
  SrBuf b = SR_BUF_INIT;
  sr_buf_puts(&b, l);
  for (int j = 0; j < cols; j++) {
    for (int k = 0; k < w[j]; k++) sr_buf_puts(&b, "\xe2\x94\x80"); /* ─ */
    sr_buf_puts(&b, j + 1 < cols ? mid : r);
  }
  sr_buf_putc(&b, '\n');
  seg(e, &NO_STYLE, b.p, b.len);
  sr_buf_free(&b);
}

/* ---- the table ---- */

typedef struct Cell {
  char text[256];
  int top, bottom, left, right;
  Style st;
} Cell;

/* A label, highlighted (numbers) or in the cell's style. */
static void label(Emit *e, const Cell *c, int hl) {
  if (!hl) {
    seg_str(e, &c->st, c->text);
    return;
  }
  const char *s = c->text;
  while (*s) {
    size_t n = strspn(s, "0123456789");
    if (n) {
      seg(e, &NUMBER, s, n);
    } else {
      n = strcspn(s, "0123456789");
      seg(e, &c->st, s, n);
    }
    s += n;
  }
}

/* rich's Table(show_header=False, padding=0, pad_edge=False) of rows x
   cols cells, each a Padding(Align(label, "center")): boxed (SQUARE, with
   lines) or not. */
static void table(Emit *e, Cell *cells, int rows, int cols, int boxed, int hl) {
  int *w = sr_xcalloc((size_t)cols, sizeof *w);
  for (int j = 0; j < cols; j++)
    for (int i = 0; i < rows; i++) {
      Cell *c = &cells[i * cols + j];
      int cw = c->left + (int)strlen(c->text) + c->right;
      if (cw > w[j]) w[j] = cw;
    }
  const char *bar = "\xe2\x94\x82"; /* │ */
  if (boxed) rule(e, "\xe2\x94\x8c", "\xe2\x94\xac", "\xe2\x94\x90", w, cols);
  for (int i = 0; i < rows; i++) {
    int h = 0;
    for (int j = 0; j < cols; j++) {
      Cell *c = &cells[i * cols + j];
      if (c->top + 1 + c->bottom > h) h = c->top + 1 + c->bottom;
    }
    for (int line = 0; line < h; line++) {
      if (boxed) seg_str(e, &NO_STYLE, bar);
      for (int j = 0; j < cols; j++) {
        Cell *c = &cells[i * cols + j];
        int tl = (int)strlen(c->text);
        if (line == c->top) {
          int excess = w[j] - c->left - c->right - tl;
          spaces(e, &c->st, c->left);
          if (excess > 0) spaces(e, &c->st, excess / 2);
          label(e, c, hl);
          if (excess > 0) spaces(e, &c->st, excess - excess / 2);
          spaces(e, &c->st, c->right);
        } else {
          spaces(e, &c->st, w[j]);
        }
        if (boxed) seg_str(e, &NO_STYLE, bar);
      }
      seg_str(e, &NO_STYLE, "\n");
    }
    if (boxed) {
      if (i + 1 < rows) rule(e, "\xe2\x94\x9c", "\xe2\x94\xbc", "\xe2\x94\xa4", w, cols);
      else rule(e, "\xe2\x94\x94", "\xe2\x94\xb4", "\xe2\x94\x98", w, cols);
    }
  }
  free(w);
}

/* matplotlib's tab20b, as JAX's _canonicalize_color truncates it. */
static const unsigned char TAB20B[20][3] = {
  {57, 59, 121},  {82, 84, 163},  {107, 110, 207}, {156, 158, 222}, {99, 121, 57},
  {140, 162, 82}, {181, 207, 107}, {206, 219, 156}, {140, 109, 49},  {189, 158, 57},
  {231, 186, 82}, {231, 203, 148}, {132, 60, 57},   {173, 73, 74},   {214, 97, 107},
  {231, 150, 156}, {123, 65, 115}, {165, 81, 148},  {206, 109, 189}, {222, 158, 214}};

/* The k-th colour JAX's make_color_iter yields for n cells. */
static void cell_color(Style *st, int n, int k) {
  int idx = 0;
  for (int t = 0; t < k; t++) idx = (idx + n / 2 + (n % 2 == 0)) % n;
  double x = n > 1 ? (idx == n - 1 ? 1.0 : idx * (1.0 / (n - 1))) : 0.0;
  double xa = x * 20;
  int ci = xa >= 20 ? 19 : (int)xa;
  st->kind = 2;
  memcpy(st->bg, TAB20B[ci], 3);
  const unsigned char *c = TAB20B[ci];
  int black = c[0] * 0.299 + c[1] * 0.587 + c[2] * 0.114 > 186;
  memset(st->fg, black ? 0 : 255, 3);
}

static int floordiv(int a, int b) { return (a >= 0) ? a / b : -((-a + b - 1) / b); }

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* "CPU 0,1": the devices holding a block; those differing only along
   unreduced axes hold partial values, joined by '+'. */
static void block_label(char *out, size_t cap, const SrArray *a, const int *pos, int npos) {
  const SrMesh *m = a->mesh;
  SrAxes un = a->layout->unreduced;
  int *done = sr_xcalloc((size_t)npos + 1, sizeof *done);
  int *ids = sr_xcalloc((size_t)npos + 1, sizeof *ids);
  size_t len = (size_t)snprintf(out, cap, "CPU ");
  int first = 1;
  for (;;) {
    /* the group of the smallest id not yet written */
    int lead = -1;
    for (int k = 0; k < npos; k++)
      if (!done[k] && (lead < 0 || sr_mesh_device(m, pos[k]) < sr_mesh_device(m, pos[lead]))) lead = k;
    if (lead < 0) break;
    int n = 0;
    for (int k = 0; k < npos; k++) {
      int same = !done[k];
      for (int ax = 0; m && same && ax < m->n; ax++)
        if (!(un & (1u << ax)) && sr_mesh_coord(m, pos[k], ax) != sr_mesh_coord(m, pos[lead], ax)) same = 0;
      if (same) {
        done[k] = 1;
        ids[n++] = sr_mesh_device(m, pos[k]);
      }
    }
    qsort(ids, (size_t)n, sizeof *ids, cmp_int);
    for (int k = 0; k < n && len + 12 < cap; k++) {
      len += (size_t)snprintf(out + len, cap - len, "%s%d", first ? "" : k ? "+" : ",", ids[k]);
      first = 0;
    }
  }
  free(done);
  free(ids);
}

/* One 1-D or 2-D picture (d1 < 0: 1-D), of the block fixed[] of the other
   dims (fixed NULL or -1: all). */
static void picture(Emit *e, const SrArray *a, int d0, int d1, const int *fixed, const SrPicOpts *o, int color) {
  const SrType *l = a->layout;
  const SrMesh *m = a->mesh;
  int two = d1 >= 0;
  int64_t s0 = l->ndim ? l->dims[d0].size : 1, s1 = two ? l->dims[d1].size : 1;
  int rows = two ? (int)sr_layout_splits(l, d0) : 1;
  int cols = two ? (int)sr_layout_splits(l, d1) : (l->ndim ? (int)sr_layout_splits(l, d0) : 1);
  Cell *cells = sr_xcalloc((size_t)rows * cols, sizeof *cells);
  int base_height = (int)(10 * o->scale);
  double aspect = (double)(two ? s1 : 1) / (double)(s0 ? s0 : 1);
  int base_width = (int)(base_height * aspect);
  int n = sr_mesh_ndev(m);
  int *pos = sr_xcalloc((size_t)n, sizeof *pos);
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < cols; j++) {
      Cell *c = &cells[i * cols + j];
      int np = 0;
      for (int p = 0; p < n; p++) {
        int ok = 1;
        if (l->ndim) {
          if (two) ok = sr_layout_block_index(l, m, p, d0) == i && sr_layout_block_index(l, m, p, d1) == j;
          else ok = sr_layout_block_index(l, m, p, d0) == j;
        }
        for (int k = 0; k < l->ndim && ok && fixed; k++)
          if (fixed[k] >= 0) ok = sr_layout_block_index(l, m, p, k) == fixed[k];
        if (ok) pos[np++] = p;
      }
      block_label(c->text, sizeof c->text, a, pos, np);
      int len = (int)strlen(c->text);
      double wfrac = 1.0 / cols, hfrac = 1.0 / rows;
      int width = (int)(wfrac * base_width * 2.5);
      int height = two ? (int)(hfrac * base_height) : 1;
      if (width < o->min_width) width = o->min_width;
      if (width > o->max_width) width = o->max_width;
      int lp = floordiv(width - len - 2, 2), rp = lp + (width - len - 2) - 2 * lp;
      int tp = floordiv(height - 2, 2), bp = tp + (height - 2) - 2 * tp;
      if (color) {
        cell_color(&c->st, rows * cols, i * cols + j);
        tp++, bp++, lp++, rp++;
      } else {
        c->st = NO_STYLE;
      }
      c->top = tp < 0 ? 0 : tp;
      c->bottom = bp < 0 ? 0 : bp;
      c->left = lp < 0 ? 0 : lp;
      c->right = rp < 0 ? 0 : rp;
    }
  table(e, cells, rows, cols, !color, !color);
  free(pos);
  free(cells);
}

void sr_sharding_picture(SrBuf *text, SrBuf *html, const SrArray *a, const SrPicOpts *o) {
  Emit e = {text, html, o->cs, NO_STYLE, SR_BUF_INIT};
  int color = o->use_color && o->cs != SR_CS_NONE;
  const SrType *l = a->layout;
  if (html)
    sr_buf_puts(html, "<pre style=\"white-space:pre;overflow-x:auto;line-height:normal;font-family:Menlo,"
                      "'DejaVu Sans Mono',consolas,'Courier New',monospace\">");
  if (l->ndim <= 2) {
    picture(&e, a, 0, l->ndim == 2 ? 1 : -1, NULL, o, color);
  } else {
    /* beyond JAX: one picture of the last two dims per block of the others */
    int nd = l->ndim, fixed[SR_MAX_RANK];
    int64_t total = 1;
    for (int k = 0; k < nd - 2; k++) total *= sr_layout_splits(l, k);
    for (int64_t idx = 0; idx < total; idx++) {
      int64_t r = idx;
      for (int k = nd - 3; k >= 0; k--) {
        int64_t s = sr_layout_splits(l, k);
        fixed[k] = (int)(r % s);
        r /= s;
      }
      fixed[nd - 2] = fixed[nd - 1] = -1;
      SrBuf h = SR_BUF_INIT;
      sr_buf_puts(&h, "[");
      for (int k = 0; k < nd - 2; k++) {
        int64_t per = l->dims[k].size / sr_layout_splits(l, k);
        if (sr_layout_splits(l, k) == 1) sr_buf_printf(&h, "%s:", k ? ", " : "");
        else sr_buf_printf(&h, "%s%lld:%lld", k ? ", " : "", (long long)(fixed[k] * per), (long long)((fixed[k] + 1) * per));
      }
      sr_buf_puts(&h, ", :, :]\n");
      seg(&e, &NO_STYLE, h.p, h.len);
      sr_buf_free(&h);
      picture(&e, a, nd - 2, nd - 1, fixed, o, color);
    }
  }
  if (a->mesh && (l->unreduced || l->reduced)) {
    SrBuf ax = SR_BUF_INIT, line = SR_BUF_INIT;
    if (l->unreduced) {
      sr_axes_tuple_str(&ax, a->mesh, l->unreduced);
      sr_buf_printf(&line, "unreduced over %s (%s): each device holds a partial value ('+' joins a block's partial values)\n",
                    ax.p, sr_ukind_name(l->ukind));
    }
    if (l->reduced) {
      sr_buf_reset(&ax);
      sr_axes_tuple_str(&ax, a->mesh, l->reduced);
      sr_buf_printf(&line, "reduced over %s\n", ax.p);
    }
    seg(&e, &NO_STYLE, line.p, line.len);
    sr_buf_free(&ax);
    sr_buf_free(&line);
  }
  html_flush(&e);
  if (html) sr_buf_puts(html, "</pre>\n");
  sr_buf_free(&e.pbuf);
}
