/* debug.c: jax.debug (debug.py): visualize_array_sharding, drawn as JAX
 * draws it (debugging.py: visualize_sharding), on a concrete array; and
 * print and callback (debugging.py: debug_print, debug_callback) on
 * concrete values. */
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
#include "py/strfmt.h"
#include "text/print_val.h"
#include "jax/tree_util.h"
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

/* ---- print and callback ---- */

/* The staged forms (the debug_print / debug_callback primitives under
   jit, scan, shard_map) are not here yet: a traced argument raises. */
static int traced(SrVal *v) {
  SrVal *ch = sr_pytree_children(v);
  if (!ch) {
    SrArrayObj *o = sr_array_of(v);
    return o && o->kind != SR_AV_CONCRETE;
  }
  int t = 0;
  for (int i = 0; i < ch->seq.n && !t; i++) t = traced(ch->seq.items[i]);
  sr_unref(ch);
  return t;
}

static int check_concrete(SrInterp *I, SrArgs *a, int from, const char *what) {
  for (int i = from; i < a->n + a->nkw; i++) {
    SrVal *v = i < a->n ? a->v[i] : a->kwv[i - a->n];
    if (sr_pytree_check_depth(I, v) < 0) return -1;
    if (traced(v)) {
      sr_raise(I, "NotImplementedError", "%s of a traced value (under jit, scan, vmap, grad or shard_map) is not supported yet", what);
      return -1;
    }
  }
  return 0;
}

/* The options of both: ordered=, partitioned= (and print's
   skip_format_check=) are taken out of a's keywords. */
static int is_option(const char *k, int print) {
  return !strcmp(k, "ordered") || !strcmp(k, "partitioned") || (print && !strcmp(k, "skip_format_check"));
}

static void drop_options(SrInterp *I, SrArgs *a, int print, int *skip_check) {
  int m = 0;
  for (int i = 0; i < a->nkw; i++) {
    if (is_option(a->kw[i], print)) {
      if (!strcmp(a->kw[i], "skip_format_check") && skip_check) *skip_check = sr_truthy(I, a->kwv[i]) != 0;
      continue;
    }
    a->kw[m] = a->kw[i];
    a->kwv[m++] = a->kwv[i];
  }
  a->nkw = m;
}

/* _DebugPrintFormatChecker.check_unused_args: the fields of fmt (not
   those nested in a format spec) name positions (auto-numbered when
   empty) and keywords; one given but unused is a ValueError. */
static int check_unused(SrInterp *I, const char *s, size_t n, SrArgs *a) {
  char used[64] = {0};
  char *kwused = a->nkw ? calloc((size_t)a->nkw, 1) : NULL;
  int autonum = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] != '{') continue;
    if (i + 1 < n && s[i + 1] == '{') { i++; continue; }
    size_t b = ++i;
    while (i < n && !strchr(".[!:}", s[i])) i++;
    size_t len = i - b;
    int depth = 1;
    for (; i < n && depth; i++) depth += s[i] == '{' ? 1 : s[i] == '}' ? -1 : 0;
    i--;
    if (len == 0) {
      if (autonum < 64) used[autonum] = 1;
      autonum++;
    } else if (s[b] >= '0' && s[b] <= '9') {
      int k = atoi(s + b);
      if (k < 64) used[k] = 1;
    } else {
      for (int k = 0; k < a->nkw; k++)
        if (strlen(a->kw[k]) == len && !memcmp(a->kw[k], s + b, len)) kwused[k] = 1;
    }
  }
  SrBuf b = SR_BUF_INIT;
  for (int k = 0; k < a->n; k++)
    if (k >= 64 || !used[k]) {
      sr_buf_puts(&b, b.len ? ", " : "[");
      sr_val_repr(&b, a->v[k]);
    }
  int rc = 0;
  if (b.len) {
    sr_buf_puts(&b, "]");
    sr_raise(I, "ValueError", "Unused positional arguments to `jax.debug.print`: %s", b.p);
    rc = -1;
  } else {
    for (int k = 0; k < a->nkw; k++)
      if (!kwused[k]) sr_buf_printf(&b, "%s'%s'", b.len ? ", " : "[", a->kw[k]);
    if (b.len) {
      sr_raise(I, "ValueError", "Unused keyword arguments to `jax.debug.print`: %s]. You may be passing an f-string "
               "(i.e, `f\"{x}\"`) into `jax.debug.print` and instead should pass in a regular string.", b.p);
      rc = -1;
    }
  }
  sr_buf_free(&b);
  free(kwused);
  return rc;
}

/* has_placeholders: the first item string.Formatter().parse gives has a
   field, i.e. the first brace of fmt opens one. */
static int has_placeholders(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (s[i] == '{' || s[i] == '}') return s[i] == '{' && !(i + 1 < n && s[i + 1] == '{');
  return 0;
}

/* The two-call form, f(ordered=...) with no positional argument: the
   second call's function (its data: skip_format_check), or the TypeError
   of one given other keywords. */
static SrVal *second_call(SrInterp *I, SrArgs *a, const char *who, SrBuiltinFn fn, int print) {
  SrBuf b = SR_BUF_INIT;
  int skip = 0;
  for (int i = 0; i < a->nkw; i++) {
    if (is_option(a->kw[i], print)) {
      if (!strcmp(a->kw[i], "skip_format_check") && (skip = sr_truthy(I, a->kwv[i])) < 0) {
        sr_buf_free(&b);
        return NULL;
      }
      continue;
    }
    sr_buf_printf(&b, "%s'%s': ", b.len ? ", " : "{", a->kw[i]);
    sr_val_repr(&b, a->kwv[i]);
  }
  if (b.len) {
    sr_buf_puts(&b, "}");
    sr_raise(I, "TypeError", "%s received unexpected arguments in the two-call form: args=() kwargs=%s", who, b.p);
    sr_buf_free(&b);
    return NULL;
  }
  int *data = sr_xmalloc(sizeof *data);
  *data = skip;
  return sr_builtin_with(print ? "_debug_print" : "_debug_callback", fn, data, free);
}

static SrVal *do_print(SrInterp *I, SrArgs *args, int strip, int skip);

static SrVal *bi_print2(SrInterp *I, SrArgs *args) {
  if (args->n == 0) return sr_raise(I, "TypeError", "_debug_print() missing 1 required positional argument: 'fmt'");
  return do_print(I, args, 0, *(int *)sr_current_builtin(I)->data);
}

static SrVal *bi_print(SrInterp *I, SrArgs *args) {
  if (args->n == 0) return second_call(I, args, "debug_print", bi_print2, 1);
  return do_print(I, args, 1, 0);
}

static SrVal *do_print(SrInterp *I, SrArgs *args, int strip, int skip) {
  SrArgs a = *args;
  const char **kw = a.nkw ? sr_xmalloc(sizeof *kw * (size_t)a.nkw) : NULL;
  SrVal **kwv = a.nkw ? sr_xmalloc(sizeof *kwv * (size_t)a.nkw) : NULL;
  if (a.nkw) {
    memcpy(kw, a.kw, sizeof *kw * (size_t)a.nkw);
    memcpy(kwv, a.kwv, sizeof *kwv * (size_t)a.nkw);
  }
  a.kw = kw;
  a.kwv = kwv;
  if (strip) drop_options(I, &a, 1, &skip);
  SrVal *r = NULL;
  SrVal *fmt = a.v[0];
  if (fmt->kind != SR_V_STR) {
    sr_raise(I, "TypeError", "debug_print() argument 'fmt' must be str");
    goto out;
  }
  if (check_concrete(I, &a, 1, "jax.debug.print") < 0) goto out;
  SrArgs fa = a;
  fa.v++;
  fa.n--;
  fa.self = NULL;
  if (!skip && check_unused(I, fmt->str.s, fmt->str.n, &fa) < 0) goto out;
  SrBuf b = SR_BUF_INIT;
  if (has_placeholders(fmt->str.s, fmt->str.n)) {
    SrVal *msg = sr_str_format(I, fmt, &fa);
    if (!msg) goto out;
    sr_buf_putn(&b, msg->str.s, msg->str.n);
    sr_unref(msg);
  } else {
    sr_buf_putn(&b, fmt->str.s, fmt->str.n);
    for (int i = 0; i < fa.n; i++) {
      sr_buf_puts(&b, " ");
      sr_val_str(&b, fa.v[i]);
    }
  }
  sr_buf_puts(&b, "\n");
  sr_write(I, b.p, b.len);
  sr_buf_free(&b);
  r = sr_none();
out:
  free(kw);
  free(kwv);
  return r;
}

/* debug_callback_impl's device_put: the Python scalars among v's leaves
   become (weakly typed) arrays, the others (strings: _split_callback_args's
   static arguments) stay; a new reference. */
static SrVal *as_arrays(SrInterp *I, SrVal *v) {
  SrVal *ch = sr_pytree_children(v);
  if (!ch) {
    SrVal *asarray = sr_lookup_qualname("jax.numpy.asarray");
    if (v->kind < SR_V_BOOL || v->kind > SR_V_COMPLEX || !asarray) return sr_ref(v);
    return sr_call1(I, asarray, v);
  }
  for (int i = 0; i < ch->seq.n; i++) {
    SrVal *x = as_arrays(I, ch->seq.items[i]);
    if (!x) {
      sr_unref(ch);
      return NULL;
    }
    sr_unref(ch->seq.items[i]);
    ch->seq.items[i] = x;
  }
  SrVal *r = sr_pytree_rebuild(v, ch);
  sr_unref(ch);
  return r;
}

static SrVal *do_callback(SrInterp *I, SrArgs *args, int strip);

static SrVal *bi_callback2(SrInterp *I, SrArgs *args) {
  if (args->n == 0) return sr_raise(I, "TypeError", "_debug_callback() missing 1 required positional argument: 'callback'");
  return do_callback(I, args, 0);
}

static SrVal *bi_callback(SrInterp *I, SrArgs *args) {
  if (args->n == 0) return second_call(I, args, "debug_callback", bi_callback2, 0);
  return do_callback(I, args, 1);
}

static SrVal *do_callback(SrInterp *I, SrArgs *args, int strip) {
  SrArgs a = *args;
  if (!sr_is_callable(I, a.v[0]))
    return sr_raise(I, "TypeError", "first argument to jax.debug.callback must be callable, but got an object of type <class '%s'>",
                    sr_val_kind_name(a.v[0]));
  const char **kw = a.nkw ? sr_xmalloc(sizeof *kw * (size_t)a.nkw) : NULL;
  SrVal **kwv = a.nkw ? sr_xmalloc(sizeof *kwv * (size_t)a.nkw) : NULL;
  if (a.nkw) {
    memcpy(kw, a.kw, sizeof *kw * (size_t)a.nkw);
    memcpy(kwv, a.kwv, sizeof *kwv * (size_t)a.nkw);
  }
  a.kw = kw;
  a.kwv = kwv;
  if (strip) drop_options(I, &a, 0, NULL);
  SrVal *r = NULL;
  if (check_concrete(I, &a, 1, "jax.debug.callback") == 0) {
    SrArgs ca = a;
    ca.v++;
    ca.n--;
    ca.self = NULL;
    SrVal **vals = sr_xcalloc((size_t)(ca.n + ca.nkw) + 1, sizeof *vals);
    int ok = 1;
    for (int i = 0; i < ca.n + ca.nkw && ok; i++)
      ok = (vals[i] = as_arrays(I, i < ca.n ? ca.v[i] : ca.kwv[i - ca.n])) != NULL;
    if (ok) {
      ca.v = vals;
      ca.kwv = vals + ca.n;
      SrVal *res = sr_call(I, a.v[0], &ca);
      if (res) {
        sr_unref(res);
        r = sr_none();
      }
    }
    for (int i = 0; i < ca.n + ca.nkw; i++) sr_unref(vals[i]);
    free(vals);
  }
  free(kw);
  free(kwv);
  return r;
}

/* ---- registration ---- */

void sr_debug_init(void) {
  sr_def("jax.debug.visualize_array_sharding", bi_visualize,
         "visualize_array_sharding(x): which device holds which block of x, as JAX draws it");
  sr_def("jax.debug.print", bi_print,
         "print(fmt, *args, ordered=False, **kwargs): prints fmt.format(*args, **kwargs) (concrete values only, for now)");
  sr_def("jax.debug.callback", bi_callback,
         "callback(fn, *args, ordered=False, **kwargs): calls fn(*args, **kwargs) (concrete values only, for now)");
}
