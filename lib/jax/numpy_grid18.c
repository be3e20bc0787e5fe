/* numpy_grid18.c: the index tricks of jax/_src/numpy/index_tricks.py that
 * build arrays -- mgrid, ogrid, r_ and c_ -- objects indexed with slices,
 * written with the same calls in the same order as JAX's Python
 * (arange or linspace per slice, meshgrid, stack, concatenate).
 * Registered by sr_jnp_grid18_init (jax.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jax/jax.h"
#include "jax/lax.h"
#include "jax/nn.h"
#include "jax/numpy.h"
#include "py/interp.h"
#include "py/objects.h"
#include "text/print_val.h"
#include "util/buf.h"

static const SrType *vtype(SrInterp *I, SrVal *v) { return sr_value_type(I, v); }

static int is_none(const SrVal *v) { return !v || v->kind == SR_V_NONE; }

/* _make_1d_grid_from_slice: arange(start or 0, stop, step or 1), or
   linspace(start, stop, int(abs(step))) for an imaginary step */
static SrVal *grid_1d(SrNnScope *s, SrVal *sl) {
  SrInterp *I = s->I;
  SrVal *start = sr_nn_keep(s, sr_getattr(I, sl, "start"));
  SrVal *stop = sr_nn_keep(s, sr_getattr(I, sl, "stop"));
  SrVal *step = sr_nn_keep(s, sr_getattr(I, sl, "step"));
  if (!start || !stop || !step) return NULL;
  if (is_none(start) || (!sr_val_truthy(start) && start->kind != SR_V_OBJ)) start = sr_nn_int(s, 0);
  if (is_none(step) || (!sr_val_truthy(step) && step->kind != SR_V_OBJ)) step = sr_nn_int(s, 1);
  if (step->kind == SR_V_COMPLEX && step->c.im != 0) {
    SrVal *v[3] = {start, stop, sr_nn_int(s, (int64_t)hypot(step->c.re, step->c.im))};
    return sr_nn_call(s, "jax.numpy.linspace", 3, v, 0, NULL, NULL);
  }
  if (step->kind == SR_V_COMPLEX) step = sr_nn_float(s, step->c.re);
  SrVal *v[3] = {start, stop, step};
  return sr_nn_call(s, "jax.numpy.arange", 3, v, 0, NULL, NULL);
}

/* promote_dtypes under 'standard' promotion: each to the result type */
static int promote(SrNnScope *s, int n, SrVal **xs) {
  if (n == 0) return 0;
  SrVal *dt = sr_nn_call(s, "jax.numpy.result_type", n, xs, 0, NULL, NULL);
  if (!dt || dt->kind != SR_V_DTYPE) return -1;
  for (int i = 0; i < n; i++)
    if (!(xs[i] = sr_nn_keep(s, sr_lax_convert(s->I, xs[i], dt->dtype, 0, NULL)))) return -1;
  return 0;
}

/* ---- mgrid, ogrid ---- */

typedef struct Grid {
  const char *name;
  int sparse;
} Grid;

static void grid_repr(SrBuf *out, const SrVal *v) {
  const Grid *g = v->obj.data;
  sr_buf_printf(out, "<jax._src.numpy.index_tricks._%s object at %p>", g->sparse ? "Ogrid" : "Mgrid", v->obj.data);
}

static SrVal *grid_getitem(SrInterp *I, SrVal *self, SrVal *key) {
  const Grid *g = self->obj.data;
  SrNnScope s = {I, {0}, 0};
  if (sr_is_obj(key, &sr_slice_class)) return sr_nn_done(&s, grid_1d(&s, key));
  SrVal *items = sr_nn_keep(&s, sr_iterate(I, key));
  if (!items) return sr_nn_done(&s, NULL);
  int n = items->seq.n;
  if (n > SR_MAX_RANK) return sr_nn_done(&s, sr_raise(I, "ValueError", "too many slices for jnp.%s", g->name));
  SrVal *xs[SR_MAX_RANK];
  for (int i = 0; i < n; i++)
    if (!(xs[i] = grid_1d(&s, items->seq.items[i]))) return sr_nn_done(&s, NULL);
  if (promote(&s, n, xs) < 0) return sr_nn_done(&s, NULL);
  const char *kw[2] = {"indexing", "sparse"};
  SrVal *kv[2] = {sr_nn_keep(&s, sr_str_cstr(NULL, "ij")), sr_bool(g->sparse)};
  SrVal *mesh = sr_nn_call(&s, "jax.numpy.meshgrid", n, xs, 2, kw, kv);
  if (!mesh) return sr_nn_done(&s, NULL);
  SrVal *list = sr_nn_keep(&s, sr_iterate(I, mesh));
  if (!list) return sr_nn_done(&s, NULL);
  if (g->sparse) return sr_nn_done(&s, list);
  if (list->seq.n == 0) return sr_nn_done(&s, sr_nn_call1(&s, "jax.numpy.arange", sr_nn_int(&s, 0)));
  return sr_nn_done(&s, sr_nn_call2(&s, "jax.numpy.stack", list, sr_nn_int(&s, 0)));
}

static const SrLangOps grid_ops = {.getitem = grid_getitem};
static const SrClass grid_class = {"_Mgrid", NULL, grid_repr, NULL, &grid_ops};
static const Grid mgrid_data = {"mgrid", 0}, ogrid_data = {"ogrid", 1};

/* ---- r_, c_ ---- */

typedef struct AxisConcat {
  const char *name;
  int axis, ndmin, trans1d;
} AxisConcat;

static void concat_repr(SrBuf *out, const SrVal *v) {
  const AxisConcat *c = v->obj.data;
  sr_buf_printf(out, "<jax._src.numpy.index_tricks.%s object at %p>", c->name[0] == 'r' ? "RClass" : "CClass",
                v->obj.data);
}

/* A directive "axis,ndmin,trans1d" into params (the fourth, matrix, kept):
   int() of each field, as Python parses them */
static int directive(SrInterp *I, const SrVal *d, int64_t params[4]) {
  if (d->str.n == 1 && d->str.s[0] == 'r') return params[3] = 0, 0;
  if (d->str.n == 1 && d->str.s[0] == 'c') return params[3] = 1, 0;
  const char *p = d->str.s, *end = p + d->str.n;
  for (int k = 0; k < 3 && p <= end; k++) {
    const char *q = memchr(p, ',', (size_t)(end - p));
    if (!q) q = end;
    char buf[64];
    size_t n = (size_t)(q - p);
    while (n && (*p == ' ' || *p == '\t')) p++, n--;
    while (n && (p[n - 1] == ' ' || p[n - 1] == '\t')) n--;
    char *e = NULL;
    if (n == 0 || n >= sizeof buf) goto bad;
    memcpy(buf, p, n);
    buf[n] = 0;
    long long v = strtoll(buf, &e, 10);
    if (*e) goto bad;
    params[k] = v;
    p = q + 1;
    if (q == end) break;
  }
  return 0;
bad: {
  SrBuf b = SR_BUF_INIT;
  sr_val_repr(&b, d);
  sr_raise(I, "ValueError", "could not understand directive %s", sr_buf_str(&b));
  sr_buf_free(&b);
  return -1;
}
}

static SrVal *concat_getitem(SrInterp *I, SrVal *self, SrVal *key) {
  const AxisConcat *c = self->obj.data;
  SrNnScope s = {I, {0}, 0};
  SrVal *items;
  if (key->kind == SR_V_TUPLE) {
    items = key;
  } else {
    items = sr_nn_keep(&s, sr_seq(NULL, SR_V_TUPLE, 1));
    sr_seq_push(NULL, items, sr_ref(key));
  }
  int64_t params[4] = {c->axis, c->ndmin, c->trans1d, -1};
  int first = 0;
  if (items->seq.n && items->seq.items[0]->kind == SR_V_STR) {
    if (directive(I, items->seq.items[0], params) < 0) return sr_nn_done(&s, NULL);
    first = 1;
  }
  int64_t axis = params[0], ndmin = params[1], trans1d = params[2], matrix = params[3];
  SrVal *out = sr_nn_keep(&s, sr_seq(NULL, SR_V_TUPLE, items->seq.n));
  for (int i = first; i < items->seq.n; i++) {
    SrVal *item = items->seq.items[i], *obj;
    int item_ndim;
    if (sr_is_obj(item, &sr_slice_class)) {
      obj = grid_1d(&s, item);
      item_ndim = 0;
    } else if (item->kind == SR_V_STR) {
      return sr_nn_done(&s, sr_raise(I, "ValueError", "string directive must be placed at the beginning"));
    } else {
      const char *kw[1] = {"copy"};
      SrVal *kv[1] = {sr_bool(0)};
      obj = sr_nn_call(&s, "jax.numpy.array", 1, &item, 1, kw, kv);
      item_ndim = obj ? vtype(I, obj)->ndim : 0;
    }
    if (!obj) return sr_nn_done(&s, NULL);
    const char *kw[2] = {"copy", "ndmin"};
    SrVal *kv[2] = {sr_bool(0), sr_nn_int(&s, ndmin)};
    obj = sr_nn_call(&s, "jax.numpy.array", 1, &obj, 2, kw, kv);
    if (!obj) return sr_nn_done(&s, NULL);
    if (trans1d != -1 && ndmin - item_ndim > 0) {
      /* the shape's dims rotated left by ndmin - |ndmin + trans1d + 1| % ndmin */
      int64_t lsh = ndmin - llabs(ndmin + trans1d + 1) % ndmin, perm[SR_MAX_RANK];
      SrVal *pt = sr_nn_keep(&s, sr_seq(NULL, SR_V_TUPLE, (int)ndmin));
      for (int64_t k = 0; k < ndmin && k < SR_MAX_RANK; k++) {
        perm[k] = (k + lsh) % ndmin;
        sr_seq_push(NULL, pt, sr_int(NULL, perm[k]));
      }
      obj = sr_nn_call2(&s, "jax.numpy.transpose", obj, pt);
      if (!obj) return sr_nn_done(&s, NULL);
    }
    sr_seq_push(NULL, out, sr_ref(obj));
  }
  const char *kw[1] = {"axis"};
  SrVal *kv[1] = {sr_nn_int(&s, axis)};
  SrVal *res = sr_nn_call(&s, "jax.numpy.concatenate", 1, &out, 1, kw, kv);
  if (res && matrix != -1 && vtype(I, res)->ndim == 1)
    res = sr_nn_call2(&s, "jax.numpy.expand_dims", res, sr_nn_int(&s, matrix));
  return sr_nn_done(&s, res);
}

static int64_t concat_len(SrInterp *I, SrVal *self) {
  (void)I;
  (void)self;
  return 0;
}

static const SrLangOps concat_ops = {.getitem = concat_getitem, .len = concat_len};
static const SrClass concat_class = {"RClass", NULL, concat_repr, NULL, &concat_ops};
static const AxisConcat r_data = {"r_", 0, 1, -1}, c_data = {"c_", -1, 2, 0};

/* numpy's IndexExpression: np.index_exp[k] is k as a tuple, np.s_[k] is k */
static void iexp_repr(SrBuf *out, const SrVal *v) {
  sr_buf_printf(out, "<numpy.lib.index_tricks.IndexExpression object at %p>", v->obj.data);
}

static SrVal *iexp_getitem(SrInterp *I, SrVal *self, SrVal *key) {
  (void)I;
  int maketuple = *(const int *)self->obj.data;
  if (!maketuple || key->kind == SR_V_TUPLE) return sr_ref(key);
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, 1);
  sr_seq_push(NULL, t, sr_ref(key));
  return t;
}

static const SrLangOps iexp_ops = {.getitem = iexp_getitem};
static const SrClass iexp_class = {"IndexExpression", NULL, iexp_repr, NULL, &iexp_ops};
static const int iexp_tuple = 1, iexp_plain = 0;

void sr_jnp_grid18_init(void) {
  sr_register("numpy.index_exp", sr_obj(&iexp_class, (void *)&iexp_tuple));
  sr_register("numpy.s_", sr_obj(&iexp_class, (void *)&iexp_plain));
  sr_register("jax.numpy.mgrid", sr_obj(&grid_class, (void *)&mgrid_data));
  sr_register("jax.numpy.ogrid", sr_obj(&grid_class, (void *)&ogrid_data));
  sr_register("jax.numpy.r_", sr_obj(&concat_class, (void *)&r_data));
  sr_register("jax.numpy.c_", sr_obj(&concat_class, (void *)&c_data));
}
