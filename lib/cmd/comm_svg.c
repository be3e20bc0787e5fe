/* comm_svg.c: a picture of communication (comm_svg.h). */
#include "cmd/comm_svg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/array.h"
#include "jax/debug_picture.h"
#include "util/diag.h"
#include "util/mem.h"

SrCommFig *sr_comm_fig_static;

int sr_comm_fig_opts(SrInterp *I, const char **arg, size_t *off, SrSrc *src, const char *cmd, SrCommFig *fig) {
  const char *a = *arg;
  for (;;) {
    const char *opt = strncmp(a, "--svg", 5) == 0 && (a[5] == ' ' || !a[5])    ? "--svg"
                      : strncmp(a, "--html", 6) == 0 && (a[6] == ' ' || !a[6]) ? "--html"
                                                                                : NULL;
    if (!opt) break;
    const char *f = a + strlen(opt);
    while (*f == ' ') f++;
    size_t n = strcspn(f, " ");
    if (!n) {
      sr_error(&I->py->diags, SR_E_USAGE, src, *off + (size_t)(a - *arg), ":%s: %s needs a FILE", cmd, opt);
      return -1;
    }
    char *path = sr_xmalloc(n + 1);
    memcpy(path, f, n);
    path[n] = 0;
    if (opt[2] == 's') {
      free((char *)fig->svg);
      fig->svg = path;
    } else {
      free((char *)fig->html);
      fig->html = path;
    }
    a = f + n;
    while (*a == ' ') a++;
  }
  *off += (size_t)(a - *arg);
  *arg = a;
  return 0;
}

/* The mask of the axes named in "('X', 'Y')" on mesh m. */
static SrAxes axes_mask(const SrMesh *m, const char *axes) {
  SrAxes mask = 0;
  for (const char *p = axes; m && p && (p = strchr(p, '\'')) != NULL;) {
    const char *e = strchr(p + 1, '\'');
    if (!e) break;
    for (int i = 0; i < m->n; i++)
      if (strlen(m->names[i]) == (size_t)(e - p - 1) && strncmp(m->names[i], p + 1, (size_t)(e - p - 1)) == 0)
        mask |= 1u << i;
    p = e + 1;
  }
  return mask;
}

static char *dup_or_null(const char *s) { return s ? sr_xstrdup(s) : NULL; }

void sr_comm_fig_add(SrCommFig *fig, const char *kind, const char *axes, SrAxes mask, const char *path,
                     const char *detail, size_t bytes, long count) {
  if (fig->n == fig->cap) {
    fig->cap = fig->cap ? 2 * fig->cap : 8;
    fig->band = sr_xrealloc(fig->band, (size_t)fig->cap * sizeof *fig->band);
  }
  SrCommBand *b = &fig->band[fig->n++];
  b->kind = sr_xstrdup(kind ? kind : "?");
  b->axes = sr_xstrdup(axes ? axes : "");
  b->path = sr_xstrdup(path ? path : "");
  b->detail = dup_or_null(detail);
  b->mask = mask ? mask : axes_mask(fig->mesh, axes);
  b->bytes = bytes;
  b->count = count;
}

void sr_comm_fig_free(SrCommFig *fig) {
  for (int i = 0; i < fig->n; i++) {
    free(fig->band[i].kind);
    free(fig->band[i].axes);
    free(fig->band[i].path);
    free(fig->band[i].detail);
  }
  free(fig->band);
  free((char *)fig->svg);
  free((char *)fig->html);
  free(fig->title);
  memset(fig, 0, sizeof *fig);
}

/* ---- the SVG ---- */

static void esc(SrBuf *out, const char *s) {
  for (; *s; s++) {
    switch (*s) {
    case '&': sr_buf_puts(out, "&amp;"); break;
    case '<': sr_buf_puts(out, "&lt;"); break;
    case '>': sr_buf_puts(out, "&gt;"); break;
    case '"': sr_buf_puts(out, "&quot;"); break;
    case '\'': sr_buf_puts(out, "&apos;"); break;
    default: sr_buf_putc(out, *s);
    }
  }
}

enum { LEFT = 130, COLW = 180, TOP = 138, LANE = 26, MAX_LANES = 64 };

static const char *FWD = "#4e79a7", *BWD = "#f28e2b";

static int backward(const SrCommBand *b) { return strstr(b->path, "transpose(") != NULL; }

static int lane_y(int i) { return TOP + 14 + i * LANE; }

static void text(SrBuf *out, int x, int y, const char *attrs, const char *s) {
  sr_buf_printf(out, "<text x=\"%d\" y=\"%d\"%s%s>", x, y, *attrs ? " " : "", attrs);
  esc(out, s);
  sr_buf_puts(out, "</text>\n");
}

/* What to call a size: "16 B", "4 KiB" (exact multiples), else bytes. */
static void size_str(char *buf, size_t cap, size_t n) {
  if (n >= 1 << 20 && n % (1 << 20) == 0) snprintf(buf, cap, "%zu MiB", n >> 20);
  else if (n >= 1 << 10 && n % (1 << 10) == 0) snprintf(buf, cap, "%zu KiB", n >> 10);
  else snprintf(buf, cap, "%zu B", n);
}

void sr_comm_svg(const SrCommFig *fig, SrBuf *out) {
  const SrMesh *m = fig->mesh;
  int ndev = m ? sr_mesh_ndev(m) : fig->ndev;
  if (ndev < 1) ndev = 1;
  int lanes = ndev > MAX_LANES ? MAX_LANES : ndev;
  int w = LEFT + (fig->n ? fig->n : 1) * COLW + 20, h = lane_y(lanes - 1) + 28 + (lanes < ndev ? 18 : 0);
  sr_buf_printf(out,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                "font-family=\"DejaVu Sans, Verdana, sans-serif\" font-size=\"12\">\n",
                w, h, w, h);
  sr_buf_puts(out, "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
  text(out, 12, 22, "font-size=\"15\" font-weight=\"bold\"", fig->title ? fig->title : "collectives");
  /* the legend */
  sr_buf_printf(out, "<rect x=\"12\" y=\"34\" width=\"14\" height=\"14\" fill=\"%s\" fill-opacity=\"0.35\" stroke=\"%s\"/>\n", FWD, FWD);
  text(out, 32, 46, "", "forward");
  sr_buf_printf(out, "<rect x=\"100\" y=\"34\" width=\"14\" height=\"14\" fill=\"%s\" fill-opacity=\"0.35\" stroke=\"%s\"/>\n", BWD, BWD);
  text(out, 120, 46, "", "backward (transpose)");
  /* the lanes */
  for (int i = 0; i < lanes; i++) {
    char lab[256];
    int len = snprintf(lab, sizeof lab, "CPU %d", m ? sr_mesh_device(m, i) : i);
    sr_buf_printf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#cccccc\"/>\n", LEFT - 6, lane_y(i), w - 10,
                  lane_y(i));
    text(out, 12, lane_y(i) + 4, "font-weight=\"bold\"", lab);
    if (m && m->n) {
      len = 0;
      for (int a = 0; a < m->n && len < (int)sizeof lab - 40; a++)
        len += snprintf(lab + len, sizeof lab - (size_t)len, "%s%s=%lld", a ? " " : "", m->names[a],
                        (long long)sr_mesh_coord(m, i, a));
      text(out, 62, lane_y(i) + 4, "fill=\"#666666\" font-size=\"10\"", lab);
    }
  }
  if (lanes < ndev) {
    char more[64];
    snprintf(more, sizeof more, "... %d more devices", ndev - lanes);
    text(out, 12, lane_y(lanes - 1) + 26, "fill=\"#666666\"", more);
  }
  if (!fig->n) text(out, LEFT + 10, TOP - 10, "", "no communication");
  /* the collectives */
  int *key = sr_xcalloc((size_t)lanes, sizeof *key), *grp = sr_xcalloc((size_t)lanes, sizeof *grp);
  for (int c = 0; c < fig->n; c++) {
    const SrCommBand *b = &fig->band[c];
    const char *col = backward(b) ? BWD : FWD;
    int x0 = LEFT + c * COLW;
    sr_buf_printf(out, "<g class=\"collective\" data-kind=\"");
    esc(out, b->kind);
    sr_buf_puts(out, "\" data-pass=\"");
    sr_buf_puts(out, backward(b) ? "backward" : "forward");
    sr_buf_puts(out, "\">\n<title>");
    esc(out, b->path);
    if (b->detail) {
      sr_buf_puts(out, ": ");
      esc(out, b->detail);
    }
    sr_buf_puts(out, "</title>\n");
    /* the labels */
    char line[320];
    text(out, x0 + 12, TOP - 76, "font-weight=\"bold\"", b->kind);
    snprintf(line, sizeof line, "over %s", *b->axes ? b->axes : "()");
    text(out, x0 + 12, TOP - 61, "", line);
    if (b->bytes) {
      char sz[48];
      size_str(sz, sizeof sz, b->bytes);
      snprintf(line, sizeof line, "%s/device \xc3\x97 %ld", sz, b->count);
    } else {
      snprintf(line, sizeof line, "\xc3\x97 %ld", b->count);
    }
    text(out, x0 + 12, TOP - 46, "", line);
    snprintf(line, sizeof line, "%s", backward(b) ? "backward" : "forward");
    text(out, x0 + 12, TOP - 31, "", line);
    /* where: the op name, its tail when long (all of it in the title) */
    size_t pl = strlen(b->path);
    snprintf(line, sizeof line, "%s%s", pl > 28 ? "..." : "", pl > 28 ? b->path + pl - 25 : b->path);
    text(out, x0 + 12, TOP - 17, "fill=\"#666666\" font-size=\"10\"", line);
    /* the band across the lanes, a connector per group */
    sr_buf_printf(out,
                  "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"6\" fill=\"%s\" fill-opacity=\"0.18\" "
                  "stroke=\"%s\"/>\n",
                  x0 + 8, lane_y(0) - 12, COLW - 16, lane_y(lanes - 1) - lane_y(0) + 24, col, col);
    int ng = 0;
    for (int i = 0; i < lanes; i++) {
      /* the group: the coordinates off the collective's axes */
      int k = 0;
      for (int a = 0; m && a < m->n; a++)
        if (!(b->mask & (1u << a))) k = k * (int)m->sizes[a] + (int)sr_mesh_coord(m, i, a);
      if (!b->mask) k = 0;
      key[i] = k;
      grp[i] = -1;
      for (int j = 0; j < i; j++)
        if (key[j] == k) grp[i] = grp[j];
      if (grp[i] < 0) grp[i] = ng++;
    }
    for (int g = 0; g < ng; g++) {
      int x = x0 + 20 + (COLW - 40) * (2 * g + 1) / (2 * ng), lo = -1, hi = -1;
      for (int i = 0; i < lanes; i++)
        if (grp[i] == g) {
          if (lo < 0) lo = i;
          hi = i;
        }
      sr_buf_printf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"/>\n", x,
                    lane_y(lo), x, lane_y(hi), col);
      for (int i = 0; i < lanes; i++)
        if (grp[i] == g) sr_buf_printf(out, "<circle cx=\"%d\" cy=\"%d\" r=\"4\" fill=\"%s\"/>\n", x, lane_y(i), col);
    }
    sr_buf_puts(out, "</g>\n");
  }
  free(key);
  free(grp);
  sr_buf_puts(out, "</svg>\n");
}

static int write_file(SrInterp *I, const char *path, const SrBuf *b) {
  FILE *f = fopen(path, "w");
  if (!f || fwrite(b->p, 1, b->len, f) != b->len) {
    int e = errno;
    if (f) fclose(f);
    const char *type = e == ENOENT ? "FileNotFoundError" : e == EACCES ? "PermissionError" : "OSError";
    sr_raise(I, type, "[Errno %d] %s: '%s'", e, strerror(e), path);
    return -1;
  }
  if (fclose(f) != 0) {
    sr_raise(I, "OSError", "[Errno %d] %s: '%s'", errno, strerror(errno), path);
    return -1;
  }
  char msg[1100];
  int n = snprintf(msg, sizeof msg, "wrote %s\n", path);
  sr_write(I, msg, (size_t)(n < (int)sizeof msg ? n : (int)sizeof msg - 1));
  return 0;
}

int sr_comm_fig_finish(SrInterp *I, SrCommFig *fig) {
  SrBuf svg = SR_BUF_INIT;
  sr_comm_svg(fig, &svg);
  int rc = 0;
  if (fig->svg && write_file(I, fig->svg, &svg) < 0) rc = -1;
  if (rc == 0 && fig->html) {
    SrBuf h = SR_BUF_INIT;
    sr_buf_puts(&h, "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n<title>");
    esc(&h, fig->title ? fig->title : "collectives");
    sr_buf_puts(&h, "</title>\n</head>\n<body>\n");
    sr_buf_putn(&h, svg.p, svg.len);
    sr_buf_puts(&h, "</body>\n</html>\n");
    if (write_file(I, fig->html, &h) < 0) rc = -1;
    sr_buf_free(&h);
  }
  if (rc == 0 && sr_image_fn) sr_image_fn(sr_display_ctx, "image/svg+xml", svg.p, svg.len);
  sr_buf_free(&svg);
  return rc;
}
