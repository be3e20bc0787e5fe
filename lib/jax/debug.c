/* debug.c: jax.debug (debug.py): visualize_array_sharding, drawn as JAX
 * draws it (debugging.py: visualize_sharding), on a concrete array. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jax/builtins_exec.h"
#include "jax/jax.h"

#include "exec/eval.h"
#include "exec/exec.h"
#include "exec/kern.h"
#include "exec/layout.h"
#include "exec/npy.h"
#include "exec/prng.h"
#include "jax/lax.h"
#include "core/jaxstate.h"
#include "jax/numpy.h"
#include "jax/layout.h"
#include "jax/random.h"
#include "py/objects.h"
#include "core/trace.h"
#include "check/rule.h"
#include "util/intern.h"
#include "util/mem.h"

/* ---- visualize_array_sharding ---- */

typedef struct Cell {
  char text[256];
  int top, bottom, left, right;
} Cell;

static int floordiv(int a, int b) { return (a >= 0) ? a / b : -((-a + b - 1) / b); }

/* One table as rich prints it with use_color=True (no box; colours are
   the only thing not reproduced): rows x cols cells of padded text. */
static void draw_table(SrBuf *out, Cell *cells, int rows, int cols) {
  int *w = sr_xcalloc((size_t)cols, sizeof *w);
  for (int j = 0; j < cols; j++)
    for (int i = 0; i < rows; i++) {
      Cell *c = &cells[i * cols + j];
      int cw = c->left + (int)strlen(c->text) + c->right;
      if (cw > w[j]) w[j] = cw;
    }
  for (int i = 0; i < rows; i++) {
    int h = 0;
    for (int j = 0; j < cols; j++) {
      Cell *c = &cells[i * cols + j];
      if (c->top + 1 + c->bottom > h) h = c->top + 1 + c->bottom;
    }
    for (int line = 0; line < h; line++) {
      for (int j = 0; j < cols; j++) {
        Cell *c = &cells[i * cols + j];
        int tl = (int)strlen(c->text);
        if (line == c->top) {
          int inner = w[j] - c->left - c->right;
          int lpad = (inner - tl) / 2;
          sr_buf_fill(out, ' ', (size_t)(c->left + lpad));
          sr_buf_puts(out, c->text);
          sr_buf_fill(out, ' ', (size_t)(w[j] - c->left - lpad - tl));
        } else {
          sr_buf_fill(out, ' ', (size_t)w[j]);
        }
      }
      sr_buf_putc(out, '\n');
    }
  }
  free(w);
}

/* jax.debug.visualize_sharding's geometry for one 1-D or 2-D picture. */
static void picture(SrBuf *out, const SrArray *a, int d0, int d1, const int *fixed, double scale, int min_width,
                    int max_width) {
  const SrType *l = a->layout;
  const SrMesh *m = a->mesh;
  int two = d1 >= 0;
  int64_t s0 = l->ndim ? l->dims[d0].size : 1, s1 = two ? l->dims[d1].size : 1;
  int rows = two ? (int)sr_layout_splits(l, d0) : 1;
  int cols = two ? (int)sr_layout_splits(l, d1) : (l->ndim ? (int)sr_layout_splits(l, d0) : 1);
  Cell *cells = sr_xcalloc((size_t)rows * cols, sizeof *cells);
  int base_height = (int)(10 * scale);
  double aspect = (double)(two ? s1 : 1) / (double)(s0 ? s0 : 1);
  int base_width = (int)(base_height * aspect);
  int n = sr_mesh_ndev(m);
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < cols; j++) {
      Cell *c = &cells[i * cols + j];
      int len = snprintf(c->text, sizeof c->text, "CPU ");
      int first = 1;
      /* devices holding block (i, j), in id order */
      int ids[4096], nid = 0;
      for (int p = 0; p < n && nid < 4096; p++) {
        int ok = 1;
        if (l->ndim) {
          if (two) ok = sr_layout_block_index(l, m, p, d0) == i && sr_layout_block_index(l, m, p, d1) == j;
          else ok = sr_layout_block_index(l, m, p, d0) == j;
        }
        for (int k = 0; k < l->ndim && ok && fixed; k++)
          if (fixed[k] >= 0) ok = sr_layout_block_index(l, m, p, k) == fixed[k];
        if (ok) ids[nid++] = m ? sr_mesh_device(m, p) : 0;
      }
      for (int x = 1; x < nid; x++)
        for (int y = x; y > 0 && ids[y - 1] > ids[y]; y--) {
          int t = ids[y];
          ids[y] = ids[y - 1];
          ids[y - 1] = t;
        }
      for (int k = 0; k < nid && len < (int)sizeof c->text - 12; k++) {
        len += snprintf(c->text + len, sizeof c->text - (size_t)len, first ? "%d" : ",%d", ids[k]);
        first = 0;
      }
      double wfrac = 1.0 / cols, hfrac = 1.0 / rows;
      int width = (int)(wfrac * base_width * 2.5);
      int height = two ? (int)(hfrac * base_height) : 1;
      if (width < min_width) width = min_width;
      if (width > max_width) width = max_width;
      int lp = floordiv(width - len - 2, 2), rem = (width - len - 2) - 2 * lp;
      int rp = lp + rem;
      int tp = floordiv(height - 2, 2), trem = (height - 2) - 2 * tp;
      int bp = tp + trem;
      c->top = tp + 1 < 0 ? 0 : tp + 1;
      c->bottom = bp + 1 < 0 ? 0 : bp + 1;
      c->left = lp + 1 < 0 ? 0 : lp + 1;
      c->right = rp + 1 < 0 ? 0 : rp + 1;
    }
  draw_table(out, cells, rows, cols);
  free(cells);
}

static SrVal *bi_visualize(SrInterp *I, SrArgs *args) {
  SrVal *p[5];
  if (sr_args_parse(I, args, "visualize_array_sharding", "arr, *, use_color=, scale=, min_width=, max_width=", p) < 0)
    return NULL;
  SrArrayObj *o = sr_array_of(p[0]);
  if (!o || o->kind != SR_AV_CONCRETE) return sr_raise(I, "TypeError", "visualize_array_sharding needs a concrete array");
  double scale = 1;
  int64_t minw = 9, maxw = 80;
  if (p[2] && sr_as_float(I, p[2], "scale", &scale) < 0) return NULL;
  if (p[3] && sr_as_int(I, p[3], "min_width", &minw) < 0) return NULL;
  if (p[4] && sr_as_int(I, p[4], "max_width", &maxw) < 0) return NULL;
  SrArray *a = o->data;
  const SrType *l = a->layout;
  SrBuf b = SR_BUF_INIT;
  if (l->ndim <= 2) {
    picture(&b, a, 0, l->ndim == 2 ? 1 : -1, NULL, scale, (int)minw, (int)maxw);
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
      sr_buf_puts(&b, "[");
      for (int k = 0; k < nd - 2; k++) {
        int64_t per = l->dims[k].size / sr_layout_splits(l, k);
        if (sr_layout_splits(l, k) == 1) sr_buf_printf(&b, "%s:", k ? ", " : "");
        else sr_buf_printf(&b, "%s%lld:%lld", k ? ", " : "", (long long)(fixed[k] * per), (long long)((fixed[k] + 1) * per));
      }
      sr_buf_puts(&b, ", :, :]\n");
      picture(&b, a, nd - 2, nd - 1, fixed, scale, (int)minw, (int)maxw);
    }
  }
  if (a->mesh && (l->unreduced || l->reduced)) {
    SrBuf ax = SR_BUF_INIT;
    if (l->unreduced) {
      sr_axes_tuple_str(&ax, a->mesh, l->unreduced);
      sr_buf_printf(&b, "unreduced over %s (%s): each device holds a partial value\n", ax.p, sr_ukind_name(l->ukind));
    }
    if (l->reduced) {
      sr_buf_reset(&ax);
      sr_axes_tuple_str(&ax, a->mesh, l->reduced);
      sr_buf_printf(&b, "reduced over %s\n", ax.p);
    }
    sr_buf_free(&ax);
  }
  sr_write(I, b.p, b.len);
  sr_buf_free(&b);
  return sr_none();
}

/* ---- registration ---- */

void sr_debug_init(void) {
  sr_def("jax.debug.visualize_array_sharding", bi_visualize,
         "visualize_array_sharding(x): which device holds which block of x, as JAX draws it");
}
