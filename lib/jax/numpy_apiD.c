/* numpy_apiD.c: jax.numpy's append, select, compress and extract
 * (numpy/lax_numpy.py), written with the same calls in the same order as
 * JAX's Python, so their jaxprs are JAX's: append is jit[name=append]
 * (static axis), the others are not jitted.  Registered by
 * sr_jnp_apiD_init (jax.h).
 */
#include <stdlib.h>
#include <string.h>

#include "core/jaxstate.h"
#include "jax/jax.h"
#include "jax/lax.h"
#include "jax/nn.h"
#include "jax/numpy.h"
#include "py/interp.h"
#include "py/objects.h"
#include "text/print_val.h"
#include "util/buf.h"
#include "util/intern.h"

#define NO_AXIS INT64_MIN

static const SrType *vtype(SrInterp *I, SrVal *v) { return sr_value_type(I, v); }

/* a tuple of n borrowed values, kept by the scope */
static SrVal *tup(SrNnScope *s, int n, SrVal **v) {
  for (int i = 0; i < n; i++)
    if (!v[i]) return NULL;
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, n);
  for (int i = 0; i < n; i++) sr_seq_push(NULL, t, sr_ref(v[i]));
  return sr_nn_keep(s, t);
}

/* the body of jit append: concatenate([ravel(arr), ravel(values)], 0), or
   concatenate([arr, values], axis=axis) */
static SrVal *append_body(SrInterp *I, SrArgs *a) {
  int64_t axis = *(int64_t *)sr_current_builtin(I)->data;
  SrNnScope s = {I, {0}, 0};
  SrVal *xs[2] = {a->v[0], a->v[1]};
  if (axis == NO_AXIS) {
    xs[0] = sr_nn_call1(&s, "jax.numpy.ravel", xs[0]);
    xs[1] = sr_nn_call1(&s, "jax.numpy.ravel", xs[1]);
  }
  SrVal *t = tup(&s, 2, xs);
  const char *kw[1] = {"axis"};
  SrVal *kv[1] = {sr_nn_int(&s, axis == NO_AXIS ? 0 : axis)};
  SrVal *r = t ? sr_nn_call(&s, "jax.numpy.concatenate", 1, &t, 1, kw, kv) : NULL;
  return sr_nn_done(&s, r);
}

static SrVal *jnp_append(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "append", "arr, values, axis=", p) < 0) return NULL;
  int64_t *axis = sr_xcalloc(1, sizeof *axis);
  *axis = NO_AXIS;
  if (sr_nn_given(p[2]) && sr_as_int(I, p[2], "axis", axis) < 0) {
    free(axis);
    return NULL;
  }
  SrVal *xs[2] = {sr_jnp_asarray(I, p[0], -1), NULL};
  if (xs[0]) xs[1] = sr_jnp_asarray(I, p[1], -1);
  SrVal *r = xs[1] ? sr_api_jit(I, "append", append_body, axis, 2, xs) : (free(axis), NULL);
  sr_unref(xs[0]);
  sr_unref(xs[1]);
  return r;
}

/* the items of a sequence argument, borrowed; -1 with JAX's error */
static int seq_items(SrInterp *I, SrVal *v, const char *what, SrVal ***items) {
  if (!v || !sr_is_seq(v)) {
    sr_raise(I, "TypeError", "select requires %s to be a sequence of arrays", what);
    return -1;
  }
  *items = v->seq.items;
  return v->seq.n;
}

/* jnp.select(condlist, choicelist, default=0): select_n over the index
   of the first true condition, the default at index 0 */
static SrVal *jnp_select(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "select", "condlist, choicelist, default=", p) < 0) return NULL;
  SrVal **cl, **ch;
  int nc = seq_items(I, p[0], "condlist", &cl);
  int nch = nc < 0 ? -1 : seq_items(I, p[1], "choicelist", &ch);
  if (nch < 0) return NULL;
  if (nc != nch)
    return sr_raise(I, "ValueError", "condlist must have length equal to choicelist (%d vs %d)", nc, nch);
  if (nc == 0) return sr_raise(I, "ValueError", "condlist must be non-empty");
  if (nc + 1 > SR_NN_SCOPE_MAX / 4) return sr_raise(I, "NotImplementedError", "select of more than %d choices", SR_NN_SCOPE_MAX / 4 - 1);
  SrNnScope s = {I, {0}, 0};
  SrVal *conds[SR_NN_SCOPE_MAX / 4], *chs[SR_NN_SCOPE_MAX / 4];
  conds[0] = sr_nn_keep(&s, sr_bool(0));
  chs[0] = sr_nn_keep(&s, sr_jnp_asarray(I, p[2] ? p[2] : sr_nn_int(&s, 0), -1));
  for (int i = 0; i < nc; i++) {
    conds[i + 1] = sr_nn_keep(&s, sr_jnp_asarray(I, cl[i], -1));
    if (!conds[i + 1]) return sr_nn_done(&s, NULL);
  }
  for (int i = 0; i < nc; i++) {
    chs[i + 1] = sr_nn_keep(&s, sr_jnp_asarray(I, ch[i], -1));
    if (!chs[i + 1]) return sr_nn_done(&s, NULL);
  }
  if (!chs[0]) return sr_nn_done(&s, NULL);
  /* promote_dtypes(default, *choicelist): one dtype, ranks kept */
  int weak = 0;
  SrDtype dt = sr_jnp_result_dtype(I, nc + 1, chs, &weak);
  for (int i = 0; i <= nc; i++) {
    const SrType *t = vtype(I, chs[i]);
    if (t->dtype != dt || (t->weak && !weak)) chs[i] = sr_nn_keep(&s, sr_jnp_convert(I, chs[i], dt, weak));
    if (!chs[i]) return sr_nn_done(&s, NULL);
  }
  SrVal *bc = sr_nn_call(&s, "jax.numpy.broadcast_arrays", nc + 1, conds, 0, NULL, NULL);
  SrVal *st = sr_nn_call1(&s, "jax.numpy.stack", bc);
  SrVal *bt = sr_nn_keep(&s, sr_dtype_val(NULL, SR_BOOL));
  SrVal *cb = sr_nn_call2(&s, "jax.numpy.astype", st, bt);
  const char *kw[1] = {"axis"};
  SrVal *kv[1] = {sr_nn_int(&s, 0)};
  SrVal *idx = sr_nn_call(&s, "jax.numpy.argmax", 1, &cb, 1, kw, kv);
  if (!idx) return sr_nn_done(&s, NULL);
  SrVal *all[SR_NN_SCOPE_MAX / 4 + 1];
  all[0] = idx;
  for (int i = 0; i <= nc; i++) all[i + 1] = chs[i];
  SrVal *bs = sr_nn_call(&s, "jax.numpy.broadcast_arrays", nc + 2, all, 0, NULL, NULL);
  if (!bs || !sr_is_seq(bs)) return sr_nn_done(&s, NULL);
  SrVal *r = sr_nn_call(&s, "jax.lax.select_n", bs->seq.n, bs->seq.items, 0, NULL, NULL);
  return sr_nn_done(&s, r);
}

/* x[start:stop] on the leading axis, kept by the scope */
static SrVal *lead_slice(SrNnScope *s, SrVal *x, int64_t start, int64_t stop) {
  if (!x) return NULL;
  /* sr_slice_new takes its three references */
  SrVal *b = start ? sr_int(NULL, start) : sr_none(), *e = stop >= 0 ? sr_int(NULL, stop) : sr_none();
  SrVal *sl = sr_slice_new(b, e, sr_none());
  SrVal *r = sl ? sr_getitem(s->I, x, sl) : NULL;
  sr_unref(sl);
  return sr_nn_keep(s, r);
}

/* compress(condition, a, axis, size, fill_value) of lax_numpy.py; fname
   names the caller in errors */
static SrVal *do_compress(SrInterp *I, SrVal *cond, SrVal *a, SrVal *axis_arg, SrVal *size_arg, SrVal *fill) {
  SrNnScope s = {I, {0}, 0};
  SrVal *c = sr_nn_keep(&s, sr_jnp_asarray(I, cond, -1));
  SrVal *x = c ? sr_nn_keep(&s, sr_jnp_asarray(I, a, -1)) : NULL;
  SrVal *fv = x ? sr_nn_keep(&s, sr_jnp_asarray(I, fill ? fill : sr_nn_int(&s, 0), -1)) : NULL;
  if (!fv) return sr_nn_done(&s, NULL);
  SrVal *bt = sr_nn_keep(&s, sr_dtype_val(NULL, SR_BOOL));
  c = sr_nn_call2(&s, "jax.numpy.astype", c, bt);
  if (!c) return sr_nn_done(&s, NULL);
  if (vtype(I, c)->ndim != 1) {
    sr_raise(I, "ValueError", "condition must be a 1D array");
    return sr_nn_done(&s, NULL);
  }
  int64_t axis = 0;
  if (!sr_nn_given(axis_arg)) {
    x = sr_nn_call1(&s, "jax.numpy.ravel", x);
  } else {
    if (sr_as_int(I, axis_arg, "axis", &axis) < 0) return sr_nn_done(&s, NULL);
    SrVal *mv[3] = {x, axis_arg, sr_nn_int(&s, 0)};
    x = sr_nn_call(&s, "jax.numpy.moveaxis", 3, mv, 0, NULL, NULL);
  }
  if (!x) return sr_nn_done(&s, NULL);
  int64_t n0 = vtype(I, x)->dims[0].size, nc = vtype(I, c)->dims[0].size;
  SrVal *extra = lead_slice(&s, c, n0, -1);
  c = lead_slice(&s, c, 0, n0);
  x = lead_slice(&s, x, 0, vtype(I, c ? c : x)->dims[0].size);
  if (!extra || !c || !x) return sr_nn_done(&s, NULL);
  SrVal *res;
  if (!sr_nn_given(size_arg)) {
    /* concrete_or_error: a traced condition fails in jnp.any / x[c] */
    if (nc > n0) {
      SrVal *any = sr_nn_call1(&s, "jax.numpy.any", extra);
      int t = any ? sr_truthy(I, any) : -1;
      if (t < 0) return sr_nn_done(&s, NULL);
      if (t) {
        sr_raise(I, "ValueError", "condition contains entries that are out of bounds");
        return sr_nn_done(&s, NULL);
      }
    }
    res = sr_nn_keep(&s, sr_getitem(I, x, c));
  } else {
    int64_t size;
    if (sr_as_int(I, size_arg, "size", &size) < 0) return sr_nn_done(&s, NULL);
    if (size < 0 || size > vtype(I, x)->dims[0].size) {
      sr_raise(I, "ValueError",
               "size must be positive and not greater than the size of the array axis; got size=%lld for "
               "a.shape[axis]=%lld",
               (long long)size, (long long)vtype(I, x)->dims[0].size);
      return sr_nn_done(&s, NULL);
    }
    int nd = vtype(I, x)->ndim;
    SrVal *rng = sr_seq(NULL, SR_V_TUPLE, nd - 1);
    for (int i = 1; i < nd; i++) sr_seq_push(NULL, rng, sr_int(NULL, i));
    sr_nn_keep(&s, rng);
    SrVal *mask = sr_nn_call2(&s, "jax.numpy.expand_dims", c, rng);
    SrVal *dtv = sr_nn_keep(&s, sr_dtype_val(NULL, vtype(I, x)->dtype));
    const char *kw[2] = {"dtype", "stable"};
    SrVal *kv[2] = {dtv, NULL};
    SrVal *fa = sr_nn_call(&s, "jax.numpy.array", 1, &fv, 1, kw, kv);
    SrVal *w = sr_nn_call3(&s, "jax.numpy.where", mask, x, fa);
    const char *kw2[2] = {"stable", "descending"};
    SrVal *kv2[2] = {sr_nn_keep(&s, sr_bool(1)), sr_nn_keep(&s, sr_bool(1))};
    SrVal *order = sr_nn_call(&s, "jax.numpy.argsort", 1, &c, 2, kw2, kv2);
    SrVal *taken = w && order ? sr_nn_keep(&s, sr_getitem(I, w, order)) : NULL;
    res = lead_slice(&s, taken, 0, size);
  }
  SrVal *mv[3] = {res, sr_nn_int(&s, 0), sr_nn_int(&s, axis)};
  SrVal *r = sr_nn_call(&s, "jax.numpy.moveaxis", 3, mv, 0, NULL, NULL);
  return sr_nn_done(&s, r);
}

/* jnp.compress(condition, a, axis=None, *, size=None, fill_value=0, out=None) */
static SrVal *jnp_compress(SrInterp *I, SrArgs *a) {
  SrVal *p[6];
  if (sr_args_parse(I, a, "compress", "condition, a, axis=, *, size=, fill_value=, out=", p) < 0) return NULL;
  if (sr_nn_given(p[5])) return sr_raise(I, "NotImplementedError", "The 'out' argument to jnp.compress is not supported.");
  return do_compress(I, p[0], p[1], p[2], p[3], p[4]);
}

/* jnp.extract(condition, arr, *, size=None, fill_value=0):
   compress(ravel(condition), ravel(arr), size=size, fill_value=fill_value) */
static SrVal *jnp_extract(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "extract", "condition, arr, *, size=, fill_value=", p) < 0) return NULL;
  SrNnScope s = {I, {0}, 0};
  SrVal *c = sr_nn_call1(&s, "jax.numpy.ravel", p[0]);
  SrVal *x = c ? sr_nn_call1(&s, "jax.numpy.ravel", p[1]) : NULL;
  SrVal *r = x ? do_compress(I, c, x, NULL, p[2], p[3]) : NULL;
  sr_nn_done(&s, NULL);
  return r;
}

/* a[(slice(None),) * axis + (last,)], kept by the scope; last is borrowed */
static SrVal *take_axis(SrNnScope *s, SrVal *a, int64_t axis, SrVal *last) {
  if (!a || !last) return NULL;
  SrVal *key = sr_seq(NULL, SR_V_TUPLE, (int)axis + 1);
  for (int64_t i = 0; i < axis; i++) sr_seq_push(NULL, key, sr_slice_new(sr_none(), sr_none(), sr_none()));
  sr_seq_push(NULL, key, sr_ref(last));
  SrVal *r = sr_getitem(s->I, a, key);
  sr_unref(key);
  return sr_nn_keep(s, r);
}

/* slice(start, stop) with None for NO_AXIS, kept by the scope */
static SrVal *slice_of(SrNnScope *s, int64_t start, int64_t stop) {
  return sr_nn_keep(s, sr_slice_new(start == NO_AXIS ? sr_none() : sr_int(NULL, start),
                                    stop == NO_AXIS ? sr_none() : sr_int(NULL, stop), sr_none()));
}

static SrVal *axis_error(SrInterp *I, int64_t axis, int nd) {
  return sr_raise(I, "ValueError", "axis %lld is out of bounds for array of dimension %d", (long long)axis, nd);
}

/* jnp.delete(arr, obj, axis=None, *, assume_unique_indices=False) */
static SrVal *jnp_delete(SrInterp *I, SrArgs *args) {
  SrVal *p[4];
  if (sr_args_parse(I, args, "delete", "arr, obj, axis=, *, assume_unique_indices=", p) < 0) return NULL;
  SrNnScope s = {I, {0}, 0};
  SrVal *a = sr_nn_keep(&s, sr_jnp_asarray(I, p[0], -1));
  if (!a) return sr_nn_done(&s, NULL);
  int64_t axis = 0;
  if (!sr_nn_given(p[2])) {
    a = sr_nn_call1(&s, "jax.numpy.ravel", a);
  } else if (sr_as_int(I, p[2], "axis", &axis) < 0) {
    return sr_nn_done(&s, NULL);
  }
  if (!a) return sr_nn_done(&s, NULL);
  int nd = vtype(I, a)->ndim;
  if (axis < -nd || axis >= nd) return sr_nn_done(&s, axis_error(I, axis, nd));
  if (axis < 0) axis += nd;
  int64_t n = vtype(I, a)->dims[axis].size;
  int unique = p[3] && sr_truthy(I, p[3]) > 0;
  SrVal *obj = p[1];
  /* case 1: a static integer */
  if (obj->kind == SR_V_INT || obj->kind == SR_V_BOOL) {
    int64_t k = obj->i;
    if (k < -n || k >= n) return sr_nn_done(&s, axis_error(I, k, (int)n));
    if (k < 0) k += n;
    SrVal *parts[2] = {take_axis(&s, a, axis, slice_of(&s, 0, k)), take_axis(&s, a, axis, slice_of(&s, k + 1, NO_AXIS))};
    SrVal *t = tup(&s, 2, parts);
    const char *kw[1] = {"axis"};
    SrVal *kv[1] = {sr_nn_int(&s, axis)};
    return sr_nn_done(&s, t ? sr_nn_call(&s, "jax.numpy.concatenate", 1, &t, 1, kw, kv) : NULL);
  }
  /* case 2: a static slice: arange(n)[obj], unique */
  if (sr_is_obj(obj, &sr_slice_class)) {
    SrVal *r = sr_nn_call1(&s, "jax.numpy.arange", sr_nn_int(&s, n));
    obj = r ? sr_nn_keep(&s, sr_getitem(I, r, obj)) : NULL;
    unique = 1;
  }
  SrVal *o = obj ? sr_nn_keep(&s, sr_jnp_asarray(I, obj, -1)) : NULL;
  if (!o) return sr_nn_done(&s, NULL);
  SrDtype odt = vtype(I, o)->dtype;
  if (sr_dtype_is_int(odt) && unique) {
    /* case 3a: unique integer indices, as a gather */
    SrVal *oa = sr_nn_call1(&s, "jax.numpy.ravel", o);
    SrVal *nn = sr_nn_int(&s, n);
    SrVal *neg = sr_nn_op(&s, SR_OP_LT, oa, sr_nn_int(&s, 0));
    SrVal *w = sr_nn_call3(&s, "jax.numpy.where", neg, sr_nn_op(&s, SR_OP_ADD, oa, nn), oa);
    oa = sr_nn_call3(&s, "jax.numpy.clip", w, sr_nn_int(&s, 0), nn);
    oa = sr_nn_call1(&s, "jax.numpy.sort", oa);
    if (!oa) return sr_nn_done(&s, NULL);
    int64_t m = sr_type_numel(vtype(I, oa));
    const char *kw[1] = {"dtype"};
    SrVal *kv[1] = {sr_nn_keep(&s, sr_dtype_val(NULL, vtype(I, oa)->dtype))};
    SrVal *mv = sr_nn_int(&s, m);
    oa = sr_nn_op(&s, SR_OP_SUB, oa, sr_nn_call(&s, "jax.numpy.arange", 1, &mv, 1, kw, kv));
    SrVal *iv = sr_nn_int(&s, n - m);
    SrVal *i = sr_nn_call(&s, "jax.numpy.arange", 1, &iv, 1, kw, kv);
    if (!oa || !i) return sr_nn_done(&s, NULL);
    SrVal *k1 = sr_nn_keep(&s, sr_tuple(NULL, 2, (SrVal *[]){sr_none(), sr_slice_new(sr_none(), sr_none(), sr_none())}));
    SrVal *k2 = sr_nn_keep(&s, sr_tuple(NULL, 2, (SrVal *[]){sr_slice_new(sr_none(), sr_none(), sr_none()), sr_none()}));
    SrVal *ge = sr_nn_op(&s, SR_OP_GE, sr_nn_keep(&s, sr_getitem(I, i, k1)), sr_nn_keep(&s, sr_getitem(I, oa, k2)));
    SrVal *sm = ge ? sr_nn_keep(&s, sr_getattr(I, ge, "sum")) : NULL;
    SrVal *zero = sr_nn_int(&s, 0);
    SrArgs sa = {1, &zero, 1, (const char *[]){sr_intern_cstr("dtype")}, kv, NULL};
    SrVal *cnt = sm ? sr_nn_keep(&s, sr_call(I, sm, &sa)) : NULL;
    i = sr_nn_op(&s, SR_OP_ADD, i, cnt);
    return sr_nn_done(&s, take_axis(&s, a, axis, i));
  }
  /* case 3b: static indices or a static mask, made on the host */
  SrVal *flat = sr_nn_call1(&s, "jax.numpy.ravel", o);
  SrVal *tl = flat ? sr_nn_keep(&s, sr_getattr(I, flat, "tolist")) : NULL;
  SrArgs none = {0, NULL, 0, NULL, NULL, NULL};
  SrVal *list = tl ? sr_nn_keep(&s, sr_call(I, tl, &none)) : NULL;
  if (!list) return sr_nn_done(&s, NULL);
  SrVal *mask = sr_nn_keep(&s, sr_seq(NULL, SR_V_LIST, (int)n));
  if (sr_dtype_is_int(odt)) {
    char *keep = sr_xcalloc(n ? (size_t)n : 1, 1);
    memset(keep, 1, (size_t)n);
    for (int j = 0; j < list->seq.n; j++) {
      int64_t k = list->seq.items[j]->i;
      if (k < -n || k >= n) {
        free(keep);
        sr_raise(I, "IndexError", "index %lld is out of bounds for axis 0 with size %lld", (long long)k, (long long)n);
        return sr_nn_done(&s, NULL);
      }
      keep[k < 0 ? k + n : k] = 0;
    }
    for (int64_t j = 0; j < n; j++) sr_seq_push(NULL, mask, sr_bool(keep[j]));
    free(keep);
  } else if (odt == SR_BOOL) {
    const SrType *ot = vtype(I, o);
    if (ot->ndim != 1 || ot->dims[0].size != n) {
      sr_raise(I, "ValueError", "np.delete(arr, obj): for boolean indices, obj must be one-dimensional with length matching specified axis.");
      return sr_nn_done(&s, NULL);
    }
    for (int j = 0; j < list->seq.n; j++) sr_seq_push(NULL, mask, sr_bool(!list->seq.items[j]->i));
  } else {
    sr_raise(I, "ValueError", "np.delete(arr, obj): got obj.dtype=%s; must be integer or bool.", sr_dtype_name(odt));
    return sr_nn_done(&s, NULL);
  }
  return sr_nn_done(&s, take_axis(&s, a, axis, mask));
}

/* jnp.choose(a, choices, out=None, mode='raise') */
static SrVal *jnp_choose(SrInterp *I, SrArgs *args) {
  SrVal *p[4];
  if (sr_args_parse(I, args, "choose", "a, choices, out=, mode=", p) < 0) return NULL;
  if (sr_nn_given(p[2])) return sr_raise(I, "NotImplementedError", "The 'out' argument to jnp.choose is not supported.");
  const char *mode = "raise";
  if (p[3] && p[3]->kind == SR_V_STR) mode = p[3]->str.s;
  SrNnScope s = {I, {0}, 0};
  SrVal *a = sr_nn_keep(&s, sr_jnp_asarray(I, p[0], -1));
  if (!a) return sr_nn_done(&s, NULL);
  SrVal *all[SR_NN_SCOPE_MAX / 4];
  int n = 0;
  if (sr_is_seq(p[1])) {
    if (p[1]->seq.n + 1 > SR_NN_SCOPE_MAX / 4) {
      sr_raise(I, "NotImplementedError", "choose of more than %d choices", SR_NN_SCOPE_MAX / 4 - 1);
      return sr_nn_done(&s, NULL);
    }
    for (int i = 0; i < p[1]->seq.n; i++) {
      all[1 + n] = sr_nn_keep(&s, sr_jnp_asarray(I, p[1]->seq.items[i], -1));
      if (!all[1 + n++]) return sr_nn_done(&s, NULL);
    }
  } else {
    /* an array: its rows, as *choices iterates it */
    SrVal *c = sr_nn_keep(&s, sr_jnp_asarray(I, p[1], -1));
    if (!c) return sr_nn_done(&s, NULL);
    if (vtype(I, c)->ndim == 0) {
      sr_raise(I, "TypeError", "iteration over a 0-d array");
      return sr_nn_done(&s, NULL);
    }
    int64_t m = vtype(I, c)->dims[0].size;
    if (m + 1 > SR_NN_SCOPE_MAX / 4) {
      sr_raise(I, "NotImplementedError", "choose of more than %d choices", SR_NN_SCOPE_MAX / 4 - 1);
      return sr_nn_done(&s, NULL);
    }
    for (int64_t i = 0; i < m; i++) {
      all[1 + n] = sr_nn_keep(&s, sr_getitem(I, c, sr_nn_int(&s, i)));
      if (!all[1 + n++]) return sr_nn_done(&s, NULL);
    }
  }
  if (!sr_dtype_is_int(vtype(I, a)->dtype)) {
    sr_raise(I, "ValueError", "`a` array must be integer typed");
    return sr_nn_done(&s, NULL);
  }
  SrVal *N = sr_nn_int(&s, n);
  SrVal *arr;
  if (!strcmp(mode, "raise")) {
    SrVal *bad = sr_nn_op(&s, SR_OP_BITOR, sr_nn_op(&s, SR_OP_LT, a, sr_nn_int(&s, 0)), sr_nn_op(&s, SR_OP_GE, a, N));
    SrVal *any = sr_nn_call1(&s, "jax.numpy.any", bad);
    int t = any ? sr_truthy(I, any) : -1;
    if (t < 0) return sr_nn_done(&s, NULL);
    if (t) {
      sr_raise(I, "ValueError", "invalid entry in choice array");
      return sr_nn_done(&s, NULL);
    }
    arr = a;
  } else if (!strcmp(mode, "wrap")) {
    arr = sr_nn_op(&s, SR_OP_MOD, a, N);
  } else if (!strcmp(mode, "clip")) {
    arr = sr_nn_call3(&s, "jax.numpy.clip", a, sr_nn_int(&s, 0), sr_nn_int(&s, n - 1));
  } else {
    SrBuf b = {0};
    sr_val_repr(&b, p[3]);
    sr_raise(I, "ValueError", "mode=%s not understood. Must be 'raise', 'wrap', or 'clip'", b.p ? b.p : "");
    sr_buf_free(&b);
    return sr_nn_done(&s, NULL);
  }
  all[0] = arr;
  SrVal *bs = sr_nn_call(&s, "jax.numpy.broadcast_arrays", n + 1, all, 0, NULL, NULL);
  if (!bs || !sr_is_seq(bs)) return sr_nn_done(&s, NULL);
  arr = bs->seq.items[0];
  SrVal *chl = sr_nn_keep(&s, sr_seq(NULL, SR_V_LIST, n));
  for (int i = 1; i <= n; i++) sr_seq_push(NULL, chl, sr_ref(bs->seq.items[i]));
  SrVal *ch = sr_nn_call1(&s, "jax.numpy.array", chl);
  SrVal *shape = sr_nn_keep(&s, sr_getattr(I, arr, "shape"));
  const char *kw[1] = {"sparse"};
  SrVal *kv[1] = {sr_nn_keep(&s, sr_bool(1))};
  SrVal *ix = shape ? sr_nn_call(&s, "jax.numpy.indices", 1, &shape, 1, kw, kv) : NULL;
  if (!ch || !ix || !sr_is_seq(ix)) return sr_nn_done(&s, NULL);
  SrVal *key = sr_nn_keep(&s, sr_seq(NULL, SR_V_TUPLE, ix->seq.n + 1));
  sr_seq_push(NULL, key, sr_ref(arr));
  for (int i = 0; i < ix->seq.n; i++) sr_seq_push(NULL, key, sr_ref(ix->seq.items[i]));
  return sr_nn_done(&s, sr_nn_keep(&s, sr_getitem(I, ch, key)));
}

/* the function apply_along_axis vmaps: func1d(arr, *args, **kwargs) */
typedef struct {
  SrVal *fn, **v, **kwv;
  const char **kw;
  int n, nkw;
} Partial;

static void partial_free(void *d) {
  Partial *p = d;
  sr_unref(p->fn);
  for (int i = 0; i < p->n; i++) sr_unref(p->v[i]);
  for (int i = 0; i < p->nkw; i++) sr_unref(p->kwv[i]);
  free(p->v);
  free(p->kwv);
  free(p->kw);
  free(p);
}

static SrVal *partial_call(SrInterp *I, SrArgs *a) {
  Partial *p = sr_current_builtin(I)->data;
  SrVal **v = sr_xcalloc((size_t)(a->n + p->n) + 1, sizeof *v);
  for (int i = 0; i < a->n; i++) v[i] = a->v[i];
  for (int i = 0; i < p->n; i++) v[a->n + i] = p->v[i];
  SrArgs ca = {a->n + p->n, v, p->nkw, p->kw, p->kwv, NULL};
  SrVal *r = sr_call(I, p->fn, &ca);
  free(v);
  return r;
}

/* jnp.apply_along_axis(func1d, axis, arr, *args, **kwargs): func1d under
   vmaps over the other axes */
static SrVal *jnp_apply_along_axis(SrInterp *I, SrArgs *a) {
  if (a->n < 3) {
    static const char *names[] = {"'func1d', 'axis', and 'arr'", "'axis' and 'arr'", "'arr'"};
    return sr_raise(I, "TypeError", "apply_along_axis() missing %d required positional argument%s: %s", 3 - a->n,
                    a->n == 2 ? "" : "s", names[a->n]);
  }
  int64_t axis;
  if (sr_as_int(I, a->v[1], "axis", &axis) < 0) return NULL;
  SrVal *x = sr_jnp_asarray(I, a->v[2], -1);
  if (!x) return NULL;
  int nd = vtype(I, x)->ndim;
  if (axis < -nd || axis >= nd) {
    sr_unref(x);
    return axis_error(I, axis, nd);
  }
  if (axis < 0) axis += nd;
  Partial *p = sr_xcalloc(1, sizeof *p);
  p->fn = sr_ref(a->v[0]);
  p->n = a->n - 3;
  p->v = sr_xcalloc((size_t)p->n + 1, sizeof *p->v);
  for (int i = 0; i < p->n; i++) p->v[i] = sr_ref(a->v[3 + i]);
  p->nkw = a->nkw;
  p->kw = sr_xcalloc((size_t)a->nkw + 1, sizeof *p->kw);
  p->kwv = sr_xcalloc((size_t)a->nkw + 1, sizeof *p->kwv);
  for (int i = 0; i < a->nkw; i++) {
    p->kw[i] = a->kw[i];
    p->kwv[i] = sr_ref(a->kwv[i]);
  }
  SrNnScope s = {I, {0}, 0};
  sr_nn_keep(&s, x);
  SrVal *func = sr_nn_keep(&s, sr_builtin_with("<lambda>", partial_call, p, partial_free));
  const char *kw[2] = {"in_axes", "out_axes"};
  for (int64_t i = 1; func && i < nd - axis; i++) {
    SrVal *kv[2] = {sr_nn_int(&s, i), sr_nn_int(&s, -1)};
    func = sr_nn_call(&s, "jax.vmap", 1, &func, 2, kw, kv);
  }
  for (int64_t i = 0; func && i < axis; i++) {
    SrVal *kv[2] = {sr_nn_int(&s, 0), sr_nn_int(&s, 0)};
    func = sr_nn_call(&s, "jax.vmap", 1, &func, 2, kw, kv);
  }
  SrArgs ca = {1, &x, 0, NULL, NULL, NULL};
  return sr_nn_done(&s, func ? sr_nn_keep(&s, sr_call(I, func, &ca)) : NULL);
}

/* promote_dtypes: every args[i] (kept by the scope) to one dtype, ranks
   kept; 0 or -1 */
static int promote(SrNnScope *s, int n, SrVal **args) {
  int weak = 0;
  SrDtype dt = sr_jnp_result_dtype(s->I, n, args, &weak);
  for (int i = 0; i < n; i++) {
    const SrType *t = vtype(s->I, args[i]);
    if (t->dtype != dt || (t->weak && !weak)) args[i] = sr_nn_keep(s, sr_jnp_convert(s->I, args[i], dt, weak));
    if (!args[i]) return -1;
  }
  return 0;
}

/* x.at[key].add(v), kept by the scope */
static SrVal *at_add(SrNnScope *s, SrVal *x, SrVal *key, SrVal *v) {
  if (!x || !key || !v) return NULL;
  SrVal *at = sr_nn_keep(s, sr_getattr(s->I, x, "at"));
  SrVal *ix = at ? sr_nn_keep(s, sr_getitem(s->I, at, key)) : NULL;
  SrVal *add = ix ? sr_nn_keep(s, sr_getattr(s->I, ix, "add")) : NULL;
  SrArgs a = {1, &v, 0, NULL, NULL, NULL};
  return add ? sr_nn_keep(s, sr_call(s->I, add, &a)) : NULL;
}

static int64_t lead(SrInterp *I, SrVal *x) { return vtype(I, x)->ndim ? vtype(I, x)->dims[0].size : 0; }

/* the bodies of jit polyadd and polysub: the shorter added into the tail
   of the longer (polysub: polyadd(a1, -a2)) */
static SrVal *polyadd_of(SrNnScope *s, SrVal *x, SrVal *y) {
  SrVal *v[2] = {x, y};
  if (promote(s, 2, v) < 0) return NULL;
  SrInterp *I = s->I;
  if (!vtype(I, v[0])->ndim || !vtype(I, v[1])->ndim) {
    sr_raise(I, "IndexError", "tuple index out of range");
    return NULL;
  }
  int big = lead(I, v[1]) <= lead(I, v[0]) ? 0 : 1;
  return at_add(s, v[big], slice_of(s, -lead(I, v[1 - big]), NO_AXIS), v[1 - big]);
}

static SrVal *polyadd_body(SrInterp *I, SrArgs *a) {
  SrNnScope s = {I, {0}, 0};
  return sr_nn_done(&s, polyadd_of(&s, a->v[0], a->v[1]));
}

static SrVal *polysub_body(SrInterp *I, SrArgs *a) {
  SrNnScope s = {I, {0}, 0};
  SrVal *v[2] = {a->v[0], a->v[1]};
  if (promote(&s, 2, v) < 0) return sr_nn_done(&s, NULL);
  SrVal *neg = sr_nn_call1(&s, "jax.numpy.negative", v[1]);
  SrVal *r = neg ? sr_nn_keep(&s, sr_api_jit(I, "polyadd", polyadd_body, NULL, 2, (SrVal *[]){v[0], neg})) : NULL;
  return sr_nn_done(&s, r);
}

static SrVal *poly2(SrInterp *I, SrArgs *a, const char *name, SrBuiltinFn body) {
  SrVal *p[2];
  if (sr_args_parse(I, a, name, "a1, a2", p) < 0) return NULL;
  SrVal *xs[2] = {sr_jnp_asarray(I, p[0], -1), NULL};
  if (xs[0]) xs[1] = sr_jnp_asarray(I, p[1], -1);
  SrVal *r = xs[1] ? sr_api_jit(I, name, body, NULL, 2, xs) : NULL;
  sr_unref(xs[0]);
  sr_unref(xs[1]);
  return r;
}

static SrVal *jnp_polyadd(SrInterp *I, SrArgs *a) { return poly2(I, a, "polyadd", polyadd_body); }
static SrVal *jnp_polysub(SrInterp *I, SrArgs *a) { return poly2(I, a, "polysub", polysub_body); }

/* arange(lo, hi, dtype=dt), kept by the scope */
static SrVal *arange_dt(SrNnScope *s, int64_t lo, int64_t hi, SrDtype dt) {
  SrVal *v[2] = {sr_nn_int(s, lo), sr_nn_int(s, hi)};
  const char *kw[1] = {"dtype"};
  SrVal *kv[1] = {sr_nn_keep(s, sr_dtype_val(NULL, dt))};
  return sr_nn_call(s, "jax.numpy.arange", 2, v, 1, kw, kv);
}

/* x[np.newaxis] (row) or x[:, np.newaxis], kept by the scope */
static SrVal *newaxis(SrNnScope *s, SrVal *x, int col) {
  if (!x) return NULL;
  SrVal *key = col ? sr_tuple(NULL, 2, (SrVal *[]){sr_slice_new(sr_none(), sr_none(), sr_none()), sr_none()})
                   : sr_none();
  SrVal *r = sr_getitem(s->I, x, key);
  sr_unref(key);
  return sr_nn_keep(s, r);
}

/* x[::-1], kept by the scope */
static SrVal *reversed(SrNnScope *s, SrVal *x) {
  if (!x) return NULL;
  SrVal *sl = sr_slice_new(sr_none(), sr_none(), sr_int(NULL, -1));
  SrVal *r = sr_getitem(s->I, x, sl);
  sr_unref(sl);
  return sr_nn_keep(s, r);
}

/* x.prod(0) or maximum(1, x).prod(0), kept by the scope */
static SrVal *prod0(SrNnScope *s, SrVal *x) {
  const char *kw[1] = {"axis"};
  SrVal *kv[1] = {sr_nn_int(s, 0)};
  return x ? sr_nn_call(s, "jax.numpy.prod", 1, &x, 1, kw, kv) : NULL;
}

/* the body of jit polyder (static m) */
static SrVal *polyder_body(SrInterp *I, SrArgs *a) {
  int64_t m = *(int64_t *)sr_current_builtin(I)->data;
  SrNnScope s = {I, {0}, 0};
  SrVal *pa = a->v[0];
  if (sr_nn_promote_inexact(&s, 1, &pa, "polyder") < 0) return sr_nn_done(&s, NULL);
  if (m < 0) {
    sr_raise(I, "ValueError", "Order of derivative must be positive");
    return sr_nn_done(&s, NULL);
  }
  if (m == 0) return sr_nn_done(&s, pa);
  SrDtype dt = vtype(I, pa)->dtype;
  SrVal *g = sr_nn_op(&s, SR_OP_SUB, newaxis(&s, arange_dt(&s, m, lead(I, pa), dt), 0),
                      newaxis(&s, arange_dt(&s, 0, m, dt), 1));
  SrVal *coeff = prod0(&s, g);
  SrVal *sl = slice_of(&s, NO_AXIS, -m);
  SrVal *head = sl ? sr_nn_keep(&s, sr_getitem(I, pa, sl)) : NULL;
  return sr_nn_done(&s, sr_nn_op(&s, SR_OP_MUL, head, reversed(&s, coeff)));
}

static int m_arg(SrInterp *I, SrVal *v, int64_t *m) { return v ? sr_as_int(I, v, "m", m) : 0; }

/* jnp.polyder(p, m=1): jit[name=polyder] with static m */
static SrVal *jnp_polyder(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "polyder", "p, m=", p) < 0) return NULL;
  int64_t *m = sr_xcalloc(1, sizeof *m);
  *m = 1;
  SrVal *x = m_arg(I, p[1], m) < 0 ? NULL : sr_jnp_asarray(I, p[0], -1);
  SrVal *r = x ? sr_api_jit(I, "polyder", polyder_body, m, 1, &x) : (free(m), NULL);
  sr_unref(x);
  return r;
}

/* the body of jit polyint (static m; k traced) */
static SrVal *polyint_body(SrInterp *I, SrArgs *a) {
  int64_t m = *(int64_t *)sr_current_builtin(I)->data;
  SrNnScope s = {I, {0}, 0};
  SrVal *v[2] = {a->v[0], a->v[1]};
  if (sr_nn_promote_inexact(&s, 2, v, "polyint") < 0) return sr_nn_done(&s, NULL);
  if (m < 0) {
    sr_raise(I, "ValueError", "Order of integral must be positive (see polyder)");
    return sr_nn_done(&s, NULL);
  }
  SrVal *k = sr_nn_call1(&s, "jax.numpy.atleast_1d", v[1]);
  if (!k) return sr_nn_done(&s, NULL);
  if (lead(I, k) == 1) {
    SrVal *shape = sr_nn_keep(&s, sr_tuple(NULL, 1, (SrVal *[]){sr_int(NULL, m)}));
    k = sr_nn_call2(&s, "jax.numpy.full", shape, sr_nn_keep(&s, sr_getitem(I, k, sr_nn_int(&s, 0))));
    if (!k) return sr_nn_done(&s, NULL);
  }
  if (vtype(I, k)->ndim != 1 || lead(I, k) != m) {
    sr_raise(I, "ValueError", "k must be a scalar or a rank-1 array of length 1 or m.");
    return sr_nn_done(&s, NULL);
  }
  if (m == 0) return sr_nn_done(&s, v[0]);
  SrDtype dt = vtype(I, v[0])->dtype;
  SrVal *g = sr_nn_op(&s, SR_OP_SUB, newaxis(&s, arange_dt(&s, 0, lead(I, v[0]) + m, dt), 0),
                      newaxis(&s, arange_dt(&s, 0, m, dt), 1));
  SrVal *coeff = reversed(&s, prod0(&s, sr_nn_call2(&s, "jax.numpy.maximum", sr_nn_int(&s, 1), g)));
  SrVal *pk[2] = {v[0], k};
  SrVal *cat = sr_nn_call1(&s, "jax.numpy.concatenate", tup(&s, 2, pk));
  return sr_nn_done(&s, sr_nn_call2(&s, "jax.numpy.true_divide", cat, coeff));
}

/* jnp.polyint(p, m=1, k=None): jit[name=polyint] with static m */
static SrVal *jnp_polyint(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "polyint", "p, m=, k=", p) < 0) return NULL;
  int64_t *m = sr_xcalloc(1, sizeof *m);
  *m = 1;
  if (m_arg(I, p[1], m) < 0) return free(m), NULL;
  SrVal *xs[2] = {sr_jnp_asarray(I, p[0], -1), NULL};
  SrVal *zero = sr_int(NULL, 0);
  if (xs[0]) xs[1] = sr_jnp_asarray(I, sr_nn_given(p[2]) ? p[2] : zero, -1);
  sr_unref(zero);
  SrVal *r = xs[1] ? sr_api_jit(I, "polyint", polyint_body, m, 2, xs) : (free(m), NULL);
  sr_unref(xs[0]);
  sr_unref(xs[1]);
  return r;
}

/* jnp.polymul(a1, a2, *, trim_leading_zeros=False): convolve(a1, a2,
   mode='full') of the inexact promotions (trim_zeros(trim='f') first) */
static SrVal *jnp_polymul(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "polymul", "a1, a2, *, trim_leading_zeros=", p) < 0) return NULL;
  SrNnScope s = {I, {0}, 0};
  SrVal *v[2] = {sr_nn_keep(&s, sr_jnp_asarray(I, p[0], -1)), NULL};
  if (v[0]) v[1] = sr_nn_keep(&s, sr_jnp_asarray(I, p[1], -1));
  if (!v[1] || sr_nn_promote_inexact(&s, 2, v, "polymul") < 0) return sr_nn_done(&s, NULL);
  if (p[2] && sr_truthy(I, p[2]) > 0 && (lead(I, v[0]) > 1 || lead(I, v[1]) > 1)) {
    const char *kw[1] = {"trim"};
    SrVal *kv[1] = {sr_nn_keep(&s, sr_str_cstr(NULL, "f"))};
    for (int i = 0; i < 2; i++)
      if (!(v[i] = sr_nn_call(&s, "jax.numpy.trim_zeros", 1, &v[i], 1, kw, kv))) return sr_nn_done(&s, NULL);
  }
  for (int i = 0; i < 2; i++)
    if (lead(I, v[i]) == 0) {
      SrVal *one = sr_nn_int(&s, 1);
      const char *kw[1] = {"dtype"};
      SrVal *kv[1] = {sr_nn_keep(&s, sr_dtype_val(NULL, vtype(I, v[1 - i])->dtype))};
      v[i] = sr_nn_call(&s, "jax.numpy.zeros", 1, &one, 1, kw, kv);
      if (!v[i]) return sr_nn_done(&s, NULL);
    }
  const char *kw[1] = {"mode"};
  SrVal *kv[1] = {sr_nn_keep(&s, sr_str_cstr(NULL, "full"))};
  return sr_nn_done(&s, sr_nn_call(&s, "jax.numpy.convolve", 2, v, 1, kw, kv));
}

/* x.at[key].set(v), kept by the scope */
static SrVal *at_set(SrNnScope *s, SrVal *x, SrVal *key, SrVal *v) {
  if (!x || !key || !v) return NULL;
  SrVal *at = sr_nn_keep(s, sr_getattr(s->I, x, "at"));
  SrVal *ix = at ? sr_nn_keep(s, sr_getitem(s->I, at, key)) : NULL;
  SrVal *set = ix ? sr_nn_keep(s, sr_getattr(s->I, ix, "set")) : NULL;
  SrArgs a = {1, &v, 0, NULL, NULL, NULL};
  return set ? sr_nn_keep(s, sr_call(s->I, set, &a)) : NULL;
}

/* x.reshape(n, m), kept by the scope */
static SrVal *reshape2(SrNnScope *s, SrVal *x, int64_t n, int64_t m) {
  SrVal *shape = sr_nn_keep(s, sr_tuple(NULL, 2, (SrVal *[]){sr_int(NULL, n), sr_int(NULL, m)}));
  return x ? sr_nn_call2(s, "jax.numpy.reshape", x, shape) : NULL;
}

/* jnp.diagflat(v, k=0): zeros(adj * adj).at[fi].set(ravel(v)) */
static SrVal *jnp_diagflat(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "diagflat", "v, k=", p) < 0) return NULL;
  int64_t k = 0;
  if (p[1] && sr_as_int(I, p[1], "k", &k) < 0) return NULL;
  SrNnScope s = {I, {0}, 0};
  SrVal *v = sr_nn_keep(&s, sr_jnp_asarray(I, p[0], -1));
  v = sr_nn_call1(&s, "jax.numpy.ravel", v);
  if (!v) return sr_nn_done(&s, NULL);
  int64_t n = lead(I, v), ak = k < 0 ? -k : k, adj = n + ak;
  SrVal *sz = sr_nn_int(&s, adj * adj);
  const char *kw[1] = {"dtype"};
  SrVal *kv[1] = {sr_nn_keep(&s, sr_dtype_val(NULL, vtype(I, v)->dtype))};
  SrVal *res = sr_nn_call(&s, "jax.numpy.zeros", 1, &sz, 1, kw, kv);
  SrVal *i = sr_nn_call2(&s, "jax.numpy.arange", sr_nn_int(&s, 0), sr_nn_int(&s, adj - ak));
  SrVal *fi;
  if (k >= 0)
    fi = sr_nn_op(&s, SR_OP_ADD, sr_nn_op(&s, SR_OP_ADD, i, sr_nn_int(&s, k)), sr_nn_op(&s, SR_OP_MUL, i, sr_nn_int(&s, adj)));
  else
    fi = sr_nn_op(&s, SR_OP_ADD, i, sr_nn_op(&s, SR_OP_MUL, sr_nn_op(&s, SR_OP_SUB, i, sr_nn_int(&s, k)), sr_nn_int(&s, adj)));
  res = at_set(&s, res, fi, v);
  return sr_nn_done(&s, reshape2(&s, res, adj, adj));
}

typedef struct {
  int64_t n;
  int increasing;
} VanderData;

/* the body of jit vander (static N, increasing) */
static SrVal *vander_body(SrInterp *I, SrArgs *a) {
  VanderData *d = sr_current_builtin(I)->data;
  SrNnScope s = {I, {0}, 0};
  SrVal *x = a->v[0];
  SrVal *io = sr_nn_keep(&s, sr_lax_iota(I, vtype(I, x)->dtype, &d->n, 1, 0, NULL));
  if (io && !d->increasing) {
    SrVal *c = sr_nn_keep(&s, sr_lax_convert(I, sr_nn_int(&s, d->n - 1), vtype(I, x)->dtype, 0, NULL));
    io = c ? sr_nn_keep(&s, sr_lax_binary(I, SR_P_sub, c, io)) : NULL;
  }
  SrVal *xc = newaxis(&s, x, 1); /* x[..., None] of a 1-D x */
  SrVal *ax = sr_nn_keep(&s, sr_tuple(NULL, 1, (SrVal *[]){sr_int(NULL, 0)}));
  SrVal *e = io ? sr_nn_call2(&s, "jax.numpy.expand_dims", io, ax) : NULL;
  return sr_nn_done(&s, xc ? sr_nn_call2(&s, "jax.numpy.power", xc, e) : NULL);
}

/* jnp.vander(x, N=None, increasing=False) */
static SrVal *jnp_vander(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "vander", "x, N=, increasing=", p) < 0) return NULL;
  SrVal *x = sr_jnp_asarray(I, p[0], -1);
  if (!x) return NULL;
  if (vtype(I, x)->ndim != 1) {
    sr_unref(x);
    return sr_raise(I, "ValueError", "x must be a one-dimensional array");
  }
  VanderData *d = sr_xcalloc(1, sizeof *d);
  d->n = lead(I, x);
  d->increasing = p[2] && sr_truthy(I, p[2]) > 0;
  if (sr_nn_given(p[1]) && sr_as_int(I, p[1], "N", &d->n) < 0) {
    sr_unref(x);
    free(d);
    return NULL;
  }
  if (d->n < 0) {
    sr_unref(x);
    free(d);
    return sr_raise(I, "ValueError", "N must be nonnegative");
  }
  SrVal *r = sr_api_jit(I, "vander", vander_body, d, 1, &x);
  sr_unref(x);
  return r;
}

typedef struct {
  int64_t shape[SR_MAX_RANK];
  int nd;
} ShapeData;

/* the shape as a tuple value */
static SrVal *shape_val(const ShapeData *d) {
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, d->nd);
  for (int i = 0; i < d->nd; i++) sr_seq_push(NULL, t, sr_int(NULL, d->shape[i]));
  return t;
}

/* the body of jit resize (static new_shape): tile(ravel(a))[:size] */
static SrVal *resize_body(SrInterp *I, SrArgs *a) {
  ShapeData *d = sr_current_builtin(I)->data;
  SrNnScope s = {I, {0}, 0};
  SrVal *arr = sr_nn_call1(&s, "jax.numpy.ravel", a->v[0]);
  if (!arr) return sr_nn_done(&s, NULL);
  int64_t size = 1, n = sr_type_numel(vtype(I, arr));
  for (int i = 0; i < d->nd; i++) size *= d->shape[i];
  SrVal *shape = sr_nn_keep(&s, shape_val(d));
  if (n == 0 || size == 0) {
    const char *kw[1] = {"shape"};
    return sr_nn_done(&s, sr_nn_call(&s, "jax.numpy.zeros_like", 1, &arr, 1, kw, &shape));
  }
  SrVal *t = sr_nn_call2(&s, "jax.numpy.tile", arr, sr_nn_int(&s, (size + n - 1) / n));
  t = lead_slice(&s, t, 0, size);
  return sr_nn_done(&s, t ? sr_nn_call2(&s, "jax.numpy.reshape", t, shape) : NULL);
}

/* jnp.resize(a, new_shape) */
static SrVal *jnp_resize(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "resize", "a, new_shape", p) < 0) return NULL;
  ShapeData *d = sr_xcalloc(1, sizeof *d);
  if (sr_ints_arg(I, p[1], d->shape, &d->nd, "new_shape") < 0) return free(d), NULL;
  for (int i = 0; i < d->nd; i++)
    if (d->shape[i] < 0) {
      free(d);
      return sr_raise(I, "ValueError", "all elements of `new_shape` must be non-negative");
    }
  SrVal *x = sr_jnp_asarray(I, p[0], -1);
  SrVal *r = x ? sr_api_jit(I, "resize", resize_body, d, 1, &x) : (free(d), NULL);
  sr_unref(x);
  return r;
}

/* jnp.apply_over_axes(func, a, axes) */
static SrVal *jnp_apply_over_axes(SrInterp *I, SrArgs *args) {
  SrVal *p[3];
  if (sr_args_parse(I, args, "apply_over_axes", "func, a, axes", p) < 0) return NULL;
  SrVal *x = sr_jnp_asarray(I, p[1], -1);
  if (!x) return NULL;
  int64_t axes[SR_MAX_RANK * 4];
  int n = 0;
  if (sr_ints_arg(I, p[2], axes, &n, "axes") < 0) return sr_unref(x), NULL;
  for (int i = 0; i < n; i++) {
    SrVal *av[2] = {x, sr_int(NULL, axes[i])};
    SrArgs ca = {2, av, 0, NULL, NULL, NULL};
    SrVal *b = sr_call(I, p[0], &ca);
    sr_unref(av[1]);
    SrVal *bb = b ? sr_jnp_asarray(I, b, -1) : NULL;
    sr_unref(b);
    if (!bb) return sr_unref(x), NULL;
    int bn = vtype(I, bb)->ndim, xn = vtype(I, x)->ndim;
    if (bn == xn - 1) {
      SrVal *ax = sr_int(NULL, axes[i]);
      SrVal *ev[2] = {bb, ax};
      SrArgs ea = {2, ev, 0, NULL, NULL, NULL};
      SrVal *e = sr_call(I, sr_lookup_qualname("jax.numpy.expand_dims"), &ea);
      sr_unref(ax);
      sr_unref(bb);
      bb = e;
    } else if (bn != xn) {
      sr_unref(bb);
      sr_unref(x);
      return sr_raise(I, "ValueError", "function is not returning an array of the correct shape");
    }
    sr_unref(x);
    x = bb;
    if (!x) return NULL;
  }
  return x;
}

/* str(v) in an error message (malloc'ed) */
static char *str_of(SrVal *v) {
  SrBuf b = {0};
  sr_val_str(&b, v);
  if (!b.p) return sr_xcalloc(1, 1);
  return b.p;
}

/* jnp.insert(arr, obj, values, axis=None) */
static SrVal *jnp_insert(SrInterp *I, SrArgs *args) {
  SrVal *p[4];
  if (sr_args_parse(I, args, "insert", "arr, obj, values, axis=", p) < 0) return NULL;
  SrNnScope s = {I, {0}, 0};
  int is_slice = sr_is_obj(p[1], &sr_slice_class);
  SrVal *a = sr_nn_keep(&s, sr_jnp_asarray(I, p[0], -1));
  SrVal *vals = a ? sr_nn_keep(&s, sr_jnp_asarray(I, p[2], -1)) : NULL;
  if (!vals) return sr_nn_done(&s, NULL);
  int64_t axis = 0;
  if (!sr_nn_given(p[3]))
    a = sr_nn_call1(&s, "jax.numpy.ravel", a);
  else if (sr_as_int(I, p[3], "axis", &axis) < 0)
    return sr_nn_done(&s, NULL);
  if (!a) return sr_nn_done(&s, NULL);
  int nd = vtype(I, a)->ndim;
  if (axis < -nd || axis >= nd) return sr_nn_done(&s, axis_error(I, axis, nd));
  if (axis < 0) axis += nd;
  int64_t n_input = vtype(I, a)->dims[axis].size;
  SrVal *ind;
  if (is_slice) {
    int64_t st, sp, step, cnt;
    if (sr_slice_indices(I, p[1], n_input, &st, &sp, &step, &cnt) < 0) return sr_nn_done(&s, NULL);
    SrVal *av[3] = {sr_nn_int(&s, st), sr_nn_int(&s, sp), sr_nn_int(&s, step)};
    ind = sr_nn_call(&s, "jax.numpy.arange", 3, av, 0, NULL, NULL);
  } else {
    ind = sr_nn_keep(&s, sr_jnp_asarray(I, p[1], -1));
  }
  if (!ind) return sr_nn_done(&s, NULL);
  if (vtype(I, ind)->ndim > 1) {
    char *o = str_of(p[1]);
    sr_raise(I, "ValueError", "jnp.insert(): obj must be a slice, a one-dimensional array, or a scalar; got %s", o);
    free(o);
    return sr_nn_done(&s, NULL);
  }
  if (!sr_dtype_is_int(vtype(I, ind)->dtype)) {
    if (sr_type_numel(vtype(I, ind)) == 0 && p[1]->kind != SR_V_OBJ) {
      SrVal *it = sr_nn_keep(&s, sr_dtype_val(NULL, I->jax->enable_x64 ? SR_I64 : SR_I32));
      ind = sr_nn_call2(&s, "jax.numpy.astype", ind, it);
      if (!ind) return sr_nn_done(&s, NULL);
    } else {
      char *o = str_of(p[1]);
      sr_raise(I, "ValueError", "jnp.insert(): index array must be integer typed; got %s", o);
      free(o);
      return sr_nn_done(&s, NULL);
    }
  }
  {
    const char *kw[3] = {"ndmin", "dtype", "copy"};
    SrVal *kv[3] = {sr_nn_int(&s, nd), sr_nn_keep(&s, sr_dtype_val(NULL, vtype(I, a)->dtype)), sr_nn_keep(&s, sr_bool(0))};
    vals = sr_nn_call(&s, "jax.numpy.array", 1, &vals, 3, kw, kv);
    if (!vals) return sr_nn_done(&s, NULL);
  }
  if (sr_type_numel(vtype(I, ind)) == 1) {
    SrVal *index = sr_nn_call1(&s, "jax.numpy.ravel", ind);
    index = index ? sr_nn_keep(&s, sr_getitem(I, index, sr_nn_int(&s, 0))) : NULL;
    if (vtype(I, ind)->ndim == 0) {
      SrVal *mv[3] = {vals, sr_nn_int(&s, 0), sr_nn_int(&s, axis)};
      vals = sr_nn_call(&s, "jax.numpy.moveaxis", 3, mv, 0, NULL, NULL);
    }
    if (!vals || !index) return sr_nn_done(&s, NULL);
    ind = sr_nn_call2(&s, "jax.numpy.full", sr_nn_int(&s, vtype(I, vals)->dims[axis].size), index);
    if (!ind) return sr_nn_done(&s, NULL);
  }
  int64_t ni = lead(I, ind), nv = vtype(I, vals)->dims[axis].size;
  if (ni != nv && ni != 1 && nv != 1) {
    sr_raise(I, "ValueError", "Incompatible shapes for broadcasting: shapes=[(%lld,), (%lld,)]", (long long)ni,
             (long long)nv);
    return sr_nn_done(&s, NULL);
  }
  int64_t n_insert = ni == 1 ? nv : ni;
  ShapeData od = {{0}, nd};
  for (int i = 0; i < nd; i++) od.shape[i] = vtype(I, a)->dims[i].size;
  od.shape[axis] += n_insert;
  SrVal *oshape = sr_nn_keep(&s, shape_val(&od));
  const char *skw[1] = {"shape"};
  SrVal *out = sr_nn_call(&s, "jax.numpy.zeros_like", 1, &a, 1, skw, &oshape);
  SrVal *nin = sr_nn_int(&s, n_input);
  SrVal *neg = sr_nn_op(&s, SR_OP_LT, ind, sr_nn_int(&s, 0));
  ind = sr_nn_call3(&s, "jax.numpy.where", neg, sr_nn_op(&s, SR_OP_ADD, ind, nin), ind);
  ind = sr_nn_call3(&s, "jax.numpy.clip", ind, sr_nn_int(&s, 0), nin);
  if (!ind || !out) return sr_nn_done(&s, NULL);
  SrVal *order = sr_nn_call1(&s, "jax.numpy.argsort", ind);
  SrVal *vind = at_add(&s, ind, order, arange_dt(&s, 0, n_insert, vtype(I, ind)->dtype));
  SrVal *tot = sr_nn_int(&s, n_input + n_insert);
  const char *dkw[1] = {"dtype"};
  SrVal *bt = sr_nn_keep(&s, sr_dtype_val(NULL, SR_BOOL));
  SrVal *ones = sr_nn_call(&s, "jax.numpy.ones", 1, &tot, 1, dkw, &bt);
  SrVal *mask = at_set(&s, ones, vind, sr_nn_keep(&s, sr_bool(0)));
  const char *wkw[1] = {"size"};
  SrVal *wr = mask ? sr_nn_call(&s, "jax.numpy.where", 1, &mask, 1, wkw, &nin) : NULL;
  SrVal *aind = wr ? sr_nn_keep(&s, sr_getitem(I, wr, sr_nn_int(&s, 0))) : NULL;
  if (!vind || !aind) return sr_nn_done(&s, NULL);
  SrVal *k1 = sr_nn_keep(&s, sr_seq(NULL, SR_V_TUPLE, (int)axis + 1));
  SrVal *k2 = sr_nn_keep(&s, sr_seq(NULL, SR_V_TUPLE, (int)axis + 1));
  for (int64_t i = 0; i < axis; i++) {
    sr_seq_push(NULL, k1, sr_slice_new(sr_none(), sr_none(), sr_none()));
    sr_seq_push(NULL, k2, sr_slice_new(sr_none(), sr_none(), sr_none()));
  }
  sr_seq_push(NULL, k1, sr_ref(vind));
  sr_seq_push(NULL, k2, sr_ref(aind));
  out = at_set(&s, out, k1, vals);
  return sr_nn_done(&s, at_set(&s, out, k2, a));
}

/* _tile_to_size(arr, size) of a 1-D arr, kept by the scope */
static SrVal *tile_to_size(SrNnScope *s, SrVal *arr, int64_t size) {
  if (!arr) return NULL;
  int64_t n = lead(s->I, arr);
  /* int(np.ceil(size / arr.size)): Python's error for an empty arr */
  if (n == 0 && size > 0) return sr_raise(s->I, "ZeroDivisionError", "division by zero");
  if (n < size) arr = sr_nn_call2(s, "jax.numpy.tile", arr, sr_nn_int(s, (size + n - 1) / n));
  return arr && lead(s->I, arr) > size ? lead_slice(s, arr, 0, size) : arr;
}

/* x.at[key].set(v, mode=mode), kept by the scope (mode NULL: none) */
static SrVal *at_set_mode(SrNnScope *s, SrVal *x, SrVal *key, SrVal *v, const char *mode) {
  if (!x || !key || !v) return NULL;
  SrVal *at = sr_nn_keep(s, sr_getattr(s->I, x, "at"));
  SrVal *ix = at ? sr_nn_keep(s, sr_getitem(s->I, at, key)) : NULL;
  SrVal *set = ix ? sr_nn_keep(s, sr_getattr(s->I, ix, "set")) : NULL;
  SrVal *mv = mode ? sr_nn_keep(s, sr_str_cstr(NULL, mode)) : NULL;
  const char *kw[1] = {sr_intern_cstr("mode")};
  SrArgs a = {1, &v, mode ? 1 : 0, kw, &mv, NULL};
  return set ? sr_nn_keep(s, sr_call(s->I, set, &a)) : NULL;
}

/* jnp.fill_diagonal(a, val, wrap=False, *, inplace=True) */
static SrVal *jnp_fill_diagonal(SrInterp *I, SrArgs *args) {
  SrVal *p[4];
  if (sr_args_parse(I, args, "fill_diagonal", "a, val, wrap=, *, inplace=", p) < 0) return NULL;
  if (!p[3] || sr_truthy(I, p[3]) > 0)
    return sr_raise(I, "NotImplementedError", "JAX arrays are immutable, must use inplace=False");
  if (p[2] && sr_truthy(I, p[2]) > 0)
    return sr_raise(I, "NotImplementedError", "wrap=True is not implemented, must use wrap=False");
  SrNnScope s = {I, {0}, 0};
  SrVal *a = sr_nn_keep(&s, sr_jnp_asarray(I, p[0], -1));
  SrVal *val = a ? sr_nn_keep(&s, sr_jnp_asarray(I, p[1], -1)) : NULL;
  if (!val) return sr_nn_done(&s, NULL);
  const SrType *t = vtype(I, a);
  if (t->ndim < 2) {
    sr_raise(I, "ValueError", "array must be at least 2-d");
    return sr_nn_done(&s, NULL);
  }
  int64_t n = t->dims[0].size;
  for (int i = 1; i < t->ndim; i++) {
    if (t->ndim > 2 && t->dims[i].size != t->dims[0].size) {
      sr_raise(I, "ValueError", "All dimensions of input must be of equal length");
      return sr_nn_done(&s, NULL);
    }
    if (t->dims[i].size < n) n = t->dims[i].size;
  }
  SrVal *idx = sr_nn_call2(&s, "jax.numpy.diag_indices", sr_nn_int(&s, n), sr_nn_int(&s, t->ndim));
  if (vtype(I, val)->ndim) val = tile_to_size(&s, sr_nn_call1(&s, "jax.numpy.ravel", val), n);
  return sr_nn_done(&s, at_set_mode(&s, a, idx, val, NULL));
}

static SrVal *inplace_error(SrInterp *I, const char *name) {
  return sr_raise(I, "ValueError",
                  "jax.numpy.%s cannot modify arrays in-place, because JAX arrays are immutable. Pass inplace=False "
                  "to instead return an updated array.",
                  name);
}

/* jnp.place(arr, mask, vals, *, inplace=True) */
static SrVal *jnp_place(SrInterp *I, SrArgs *args) {
  SrVal *p[4];
  if (sr_args_parse(I, args, "place", "arr, mask, vals, *, inplace=", p) < 0) return NULL;
  SrNnScope s = {I, {0}, 0};
  SrVal *data = sr_nn_keep(&s, sr_jnp_asarray(I, p[0], -1));
  SrVal *mask = data ? sr_nn_keep(&s, sr_jnp_asarray(I, p[1], -1)) : NULL;
  SrVal *vals = mask ? sr_nn_keep(&s, sr_jnp_asarray(I, p[2], -1)) : NULL;
  vals = sr_nn_call1(&s, "jax.numpy.ravel", vals);
  if (!vals) return sr_nn_done(&s, NULL);
  if (!p[3] || sr_truthy(I, p[3]) > 0) return sr_nn_done(&s, inplace_error(I, "place"));
  int64_t nd = sr_type_numel(vtype(I, data)), nm = sr_type_numel(vtype(I, mask));
  if (nd != nm) {
    sr_raise(I, "ValueError", "place: arr and mask must be the same size");
    return sr_nn_done(&s, NULL);
  }
  if (!lead(I, vals)) {
    sr_raise(I, "ValueError", "Cannot place values from an empty array");
    return sr_nn_done(&s, NULL);
  }
  if (!nd) return sr_nn_done(&s, data);
  SrVal *mr = sr_nn_call1(&s, "jax.numpy.ravel", mask);
  const char *kw[2] = {"size", "fill_value"};
  SrVal *kv[2] = {sr_nn_int(&s, nm), sr_nn_int(&s, nm)};
  SrVal *w = mr ? sr_nn_call(&s, "jax.numpy.where", 1, &mr, 2, kw, kv) : NULL;
  SrVal *ind = w ? sr_nn_keep(&s, sr_getitem(I, w, sr_nn_int(&s, 0))) : NULL;
  vals = ind ? tile_to_size(&s, vals, lead(I, ind)) : NULL;
  SrVal *r = at_set_mode(&s, sr_nn_call1(&s, "jax.numpy.ravel", data), ind, vals, "drop");
  SrVal *shape = sr_nn_keep(&s, sr_getattr(I, data, "shape"));
  return sr_nn_done(&s, r && shape ? sr_nn_call2(&s, "jax.numpy.reshape", r, shape) : NULL);
}

/* jnp.put(a, ind, v, mode=None, *, inplace=True) */
static SrVal *jnp_put(SrInterp *I, SrArgs *args) {
  SrVal *p[5];
  if (sr_args_parse(I, args, "put", "a, ind, v, mode=, *, inplace=", p) < 0) return NULL;
  if (!p[4] || sr_truthy(I, p[4]) > 0) return inplace_error(I, "put");
  SrNnScope s = {I, {0}, 0};
  SrVal *arr = sr_nn_keep(&s, sr_jnp_asarray(I, p[0], -1));
  SrVal *ind = arr ? sr_nn_keep(&s, sr_jnp_asarray(I, p[1], -1)) : NULL;
  SrVal *v = ind ? sr_nn_keep(&s, sr_jnp_asarray(I, p[2], -1)) : NULL;
  ind = sr_nn_call1(&s, "jax.numpy.ravel", v ? ind : NULL);
  v = sr_nn_call1(&s, "jax.numpy.ravel", ind ? v : NULL);
  if (!v) return sr_nn_done(&s, NULL);
  int64_t n = sr_type_numel(vtype(I, arr));
  if (!n || !lead(I, ind) || !lead(I, v)) return sr_nn_done(&s, arr);
  v = tile_to_size(&s, v, lead(I, ind));
  const char *smode;
  if (!sr_nn_given(p[3])) {
    smode = "drop";
  } else if (p[3]->kind == SR_V_STR && !strcmp(p[3]->str.s, "clip")) {
    ind = sr_nn_call3(&s, "jax.numpy.clip", ind, sr_nn_int(&s, 0), sr_nn_int(&s, n - 1));
    smode = "promise_in_bounds";
  } else if (p[3]->kind == SR_V_STR && !strcmp(p[3]->str.s, "wrap")) {
    ind = sr_nn_op(&s, SR_OP_MOD, ind, sr_nn_int(&s, n));
    smode = "promise_in_bounds";
  } else if (p[3]->kind == SR_V_STR && !strcmp(p[3]->str.s, "raise")) {
    sr_raise(I, "NotImplementedError", "The 'raise' mode to jnp.put is not supported.");
    return sr_nn_done(&s, NULL);
  } else {
    SrBuf b = {0};
    sr_val_repr(&b, p[3]);
    sr_raise(I, "ValueError", "mode should be one of 'wrap' or 'clip'; got mode=%s", b.p ? b.p : "");
    sr_buf_free(&b);
    return sr_nn_done(&s, NULL);
  }
  SrVal *shape = sr_nn_keep(&s, sr_getattr(I, arr, "shape"));
  SrVal *ui = ind && shape ? sr_nn_call2(&s, "jax.numpy.unravel_index", ind, shape) : NULL;
  return sr_nn_done(&s, at_set_mode(&s, arr, ui, v, smode));
}

/* an int of a concrete 0-d array or a number (int(x)); -1 with an error */
static int int_of(SrInterp *I, SrVal *v, int64_t *out) {
  SrVal *fn = sr_lookup_qualname("builtins.int");
  SrVal *r = v && fn ? sr_call1(I, fn, v) : NULL;
  if (!r) return -1;
  int rc = sr_as_int(I, r, "int", out);
  sr_unref(r);
  return rc;
}

/* jnp.trim_zeros(filt, trim='fb', axis=None): concrete only */
static SrVal *jnp_trim_zeros(SrInterp *I, SrArgs *args) {
  SrVal *p[3];
  if (sr_args_parse(I, args, "trim_zeros", "filt, trim=, axis=", p) < 0) return NULL;
  const char *trim = p[1] && p[1]->kind == SR_V_STR ? p[1]->str.s : "fb";
  int f = strchr(trim, 'f') || strchr(trim, 'F'), b = strchr(trim, 'b') || strchr(trim, 'B');
  SrNnScope s = {I, {0}, 0};
  SrVal *x = sr_nn_keep(&s, sr_jnp_asarray(I, p[0], -1));
  if (!x) return sr_nn_done(&s, NULL);
  int nd = vtype(I, x)->ndim;
  int64_t axes[SR_MAX_RANK];
  int na = 0;
  if (sr_nn_axes(I, sr_nn_given(p[2]) ? p[2] : NULL, nd, axes, &na) < 0) return sr_nn_done(&s, NULL);
  if (!na || (!f && !b)) return sr_nn_done(&s, x);
  SrVal *key = sr_nn_keep(&s, sr_seq(NULL, SR_V_TUPLE, nd));
  for (int ax = 0; ax < nd; ax++) {
    int in = 0;
    for (int j = 0; j < na; j++) in |= axes[j] == ax;
    if (!in) {
      sr_seq_push(NULL, key, sr_slice_new(sr_none(), sr_none(), sr_none()));
      continue;
    }
    SrVal *others = sr_nn_keep(&s, sr_seq(NULL, SR_V_LIST, nd));
    for (int i = 0; i < nd; i++)
      if (i != ax) sr_seq_push(NULL, others, sr_int(NULL, i));
    const char *kw[1] = {"axis"};
    SrVal *mask = sr_nn_call(&s, "jax.numpy.any", 1, &x, 1, kw, &others);
    SrVal *any = sr_nn_call1(&s, "jax.numpy.any", mask);
    int t = any ? sr_truthy(I, any) : -1;
    if (t < 0) return sr_nn_done(&s, NULL);
    if (!t) {
      sr_seq_push(NULL, key, sr_slice_new(sr_int(NULL, 0), sr_int(NULL, 0), sr_none()));
      continue;
    }
    int64_t start = 0, stop = 0;
    if (f && int_of(I, sr_nn_call1(&s, "jax.numpy.argmax", mask), &start) < 0) return sr_nn_done(&s, NULL);
    if (b && int_of(I, sr_nn_call1(&s, "jax.numpy.argmax", reversed(&s, mask)), &stop) < 0)
      return sr_nn_done(&s, NULL);
    sr_seq_push(NULL, key,
                sr_slice_new(f ? sr_int(NULL, start) : sr_none(),
                             b ? sr_int(NULL, vtype(I, x)->dims[ax].size - stop) : sr_none(), sr_none()));
  }
  return sr_nn_done(&s, sr_nn_keep(&s, sr_getitem(I, x, key)));
}

/* a branch of piecewise: f(x, *args, **kw).astype(dtype), or
   array(v, dtype=dtype) for a constant */
typedef struct {
  Partial *call; /* NULL for a constant */
  SrVal *v;
  SrDtype dt;
} Branch;

static void branch_free(void *d) {
  Branch *b = d;
  if (b->call) partial_free(b->call);
  sr_unref(b->v);
  free(b);
}

static SrVal *branch_call(SrInterp *I, SrArgs *a) {
  Branch *b = sr_current_builtin(I)->data;
  SrNnScope s = {I, {0}, 0};
  SrVal *dtv = sr_nn_keep(&s, sr_dtype_val(NULL, b->dt));
  if (!b->call) {
    const char *kw[1] = {"dtype"};
    return sr_nn_done(&s, sr_nn_call(&s, "jax.numpy.array", 1, &b->v, 1, kw, &dtv));
  }
  Partial *p = b->call;
  SrVal **v = sr_xcalloc((size_t)(a->n + p->n) + 1, sizeof *v);
  for (int i = 0; i < a->n; i++) v[i] = a->v[i];
  for (int i = 0; i < p->n; i++) v[a->n + i] = p->v[i];
  SrArgs ca = {a->n + p->n, v, p->nkw, p->kw, p->kwv, NULL};
  SrVal *r = sr_nn_keep(&s, sr_call(I, p->fn, &ca));
  free(v);
  return sr_nn_done(&s, sr_nn_call2(&s, "jax.numpy.astype", r, dtv));
}

/* the scalar function piecewise vmaps: lax.switch(i, branches, x) */
static SrVal *switch_call(SrInterp *I, SrArgs *a) {
  SrVal *branches = sr_current_builtin(I)->data;
  SrVal *v[3] = {a->v[0], branches, a->v[1]};
  SrArgs ca = {3, v, 0, NULL, NULL, NULL};
  SrVal *fn = sr_lookup_qualname("jax.lax.switch");
  return fn ? sr_call(I, fn, &ca) : sr_raise(I, "NotImplementedError", "jax.lax.switch is not available");
}

/* jnp.piecewise(x, condlist, funclist, *args, **kw) */
static SrVal *jnp_piecewise(SrInterp *I, SrArgs *a) {
  if (a->n < 3) {
    static const char *names[] = {"'x', 'condlist', and 'funclist'", "'condlist' and 'funclist'", "'funclist'"};
    return sr_raise(I, "TypeError", "piecewise() missing %d required positional argument%s: %s", 3 - a->n,
                    a->n == 2 ? "" : "s", names[a->n]);
  }
  SrNnScope s = {I, {0}, 0};
  SrVal *x = sr_nn_keep(&s, sr_jnp_asarray(I, a->v[0], -1));
  if (!x) return sr_nn_done(&s, NULL);
  SrVal *funcs = a->v[2];
  if (!sr_is_seq(funcs)) {
    sr_raise(I, "TypeError", "piecewise: funclist must be a sequence");
    return sr_nn_done(&s, NULL);
  }
  const char *kw[1] = {"dtype"};
  SrVal *bt = sr_nn_keep(&s, sr_dtype_val(NULL, SR_BOOL));
  SrVal *cond = sr_nn_call(&s, "jax.numpy.asarray", 1, &a->v[1], 1, kw, &bt);
  if (!cond) return sr_nn_done(&s, NULL);
  int64_t nc = sr_is_seq(a->v[1]) ? a->v[1]->seq.n : lead(I, cond);
  int nf = funcs->seq.n;
  if (nf != nc + 1 && nf != nc) {
    sr_raise(I, "ValueError", "with %lld condition(s), either %lld or %lld functions are expected; got %d",
             (long long)nc, (long long)nc, (long long)nc + 1, nf);
    return sr_nn_done(&s, NULL);
  }
  /* the default first: funclist[-1:] + funclist[:-1], or [0] + funclist */
  SrVal *list = sr_nn_keep(&s, sr_seq(NULL, SR_V_LIST, (int)nc + 1));
  SrDtype dt = vtype(I, x)->dtype;
  for (int64_t i = 0; i <= nc; i++) {
    SrVal *f = nf == nc + 1 ? funcs->seq.items[(i + nc) % (nc + 1)] : i ? funcs->seq.items[i - 1] : NULL;
    Branch *b = sr_xcalloc(1, sizeof *b);
    b->dt = dt;
    if (f && sr_is_callable(I, f)) {
      Partial *p = sr_xcalloc(1, sizeof *p);
      p->fn = sr_ref(f);
      p->n = a->n - 3;
      p->v = sr_xcalloc((size_t)p->n + 1, sizeof *p->v);
      for (int j = 0; j < p->n; j++) p->v[j] = sr_ref(a->v[3 + j]);
      p->nkw = a->nkw;
      p->kw = sr_xcalloc((size_t)a->nkw + 1, sizeof *p->kw);
      p->kwv = sr_xcalloc((size_t)a->nkw + 1, sizeof *p->kwv);
      for (int j = 0; j < a->nkw; j++) {
        p->kw[j] = a->kw[j];
        p->kwv[j] = sr_ref(a->kwv[j]);
      }
      b->call = p;
    } else {
      b->v = f ? sr_ref(f) : sr_int(NULL, 0);
    }
    sr_seq_push(NULL, list, sr_builtin_with("<lambda>", branch_call, b, branch_free));
  }
  /* indices = argmax(cumsum(concatenate([zeros_like(condlist[:1]), condlist], 0), 0), 0) */
  SrVal *head = sr_nn_call1(&s, "jax.numpy.zeros_like", lead_slice(&s, cond, 0, 1));
  SrVal *hc[2] = {head, cond};
  const char *akw[1] = {"axis"};
  SrVal *zero = sr_nn_int(&s, 0);
  SrVal *cat = sr_nn_call(&s, "jax.numpy.concatenate", 1, (SrVal *[]){tup(&s, 2, hc)}, 1, akw, &zero);
  SrVal *cs = cat ? sr_nn_call(&s, "jax.numpy.cumsum", 1, &cat, 1, akw, &zero) : NULL;
  SrVal *idx = cs ? sr_nn_call(&s, "jax.numpy.argmax", 1, &cs, 1, akw, &zero) : NULL;
  /* vectorize(switch, excluded=(1,))(indices, funclist, x): switch on the
     broadcast scalars under one vmap a dimension */
  SrVal *ix[2] = {idx, x};
  SrVal *bs = idx ? sr_nn_call(&s, "jax.numpy.broadcast_arrays", 2, ix, 0, NULL, NULL) : NULL;
  if (!bs || !sr_is_seq(bs)) return sr_nn_done(&s, NULL);
  SrVal *func = sr_nn_keep(&s, sr_builtin_with("switch", switch_call, sr_ref(list), sr_nn_unref_data));
  int nd = vtype(I, bs->seq.items[0])->ndim;
  for (int i = 0; func && i < nd; i++) func = sr_nn_call1(&s, "jax.vmap", func);
  SrArgs ca = {2, bs->seq.items, 0, NULL, NULL, NULL};
  return sr_nn_done(&s, func ? sr_nn_keep(&s, sr_call(I, func, &ca)) : NULL);
}

void sr_jnp_apiD_init(void) {
  static const struct {
    const char *names;
    SrBuiltinFn fn;
    const char *doc;
  } defs[] = {
      {"jax.numpy.append", jnp_append, "append(arr, values, axis=None): jit[name=append], concatenate([arr, values])"},
      {"jax.numpy.select", jnp_select, "select(condlist, choicelist, default=0): select_n at the first true condition"},
      {"jax.numpy.compress", jnp_compress,
       "compress(condition, a, axis=None, *, size=None, fill_value=0): the slices of a where condition"},
      {"jax.numpy.extract", jnp_extract,
       "extract(condition, arr, *, size=None, fill_value=0): the elements of arr where condition"},
      {"jax.numpy.delete", jnp_delete,
       "delete(arr, obj, axis=None, *, assume_unique_indices=False): arr without the entries obj names"},
      {"jax.numpy.choose", jnp_choose, "choose(a, choices, out=None, mode='raise'): choices[a[i]][i], broadcast"},
      {"jax.numpy.apply_along_axis", jnp_apply_along_axis,
       "apply_along_axis(func1d, axis, arr, *args, **kwargs): func1d on the 1-D slices along axis (vmap)"},
      {"jax.numpy.polyadd", jnp_polyadd, "polyadd(a1, a2): jit[name=polyadd], the sum of two polynomials"},
      {"jax.numpy.polysub", jnp_polysub, "polysub(a1, a2): jit[name=polysub], polyadd(a1, -a2)"},
      {"jax.numpy.polyder", jnp_polyder, "polyder(p, m=1): jit[name=polyder], the m-th derivative of a polynomial"},
      {"jax.numpy.polyint", jnp_polyint, "polyint(p, m=1, k=None): jit[name=polyint], the m-th integral (constants k)"},
      {"jax.numpy.polymul", jnp_polymul, "polymul(a1, a2): convolve(a1, a2, mode='full'), the product of polynomials"},
      {"jax.numpy.diagflat", jnp_diagflat, "diagflat(v, k=0): a 2-D array with ravel(v) on diagonal k"},
      {"jax.numpy.vander", jnp_vander, "vander(x, N=None, increasing=False): jit[name=vander], the Vandermonde matrix"},
      {"jax.numpy.resize", jnp_resize, "resize(a, new_shape): jit[name=resize], ravel(a) repeated to new_shape"},
      {"jax.numpy.apply_over_axes", jnp_apply_over_axes,
       "apply_over_axes(func, a, axes): func(a, axis) for each axis, its rank kept"},
      {"jax.numpy.insert", jnp_insert, "insert(arr, obj, values, axis=None): arr with values inserted before obj"},
      {"jax.numpy.fill_diagonal", jnp_fill_diagonal,
       "fill_diagonal(a, val, wrap=False, *, inplace=True): a copy of a with val on the diagonal (inplace=False)"},
      {"jax.numpy.place", jnp_place, "place(arr, mask, vals, *, inplace=True): arr with vals where mask (inplace=False)"},
      {"jax.numpy.put", jnp_put, "put(a, ind, v, mode=None, *, inplace=True): a with v at the flat indices ind (inplace=False)"},
      {"jax.numpy.trim_zeros", jnp_trim_zeros,
       "trim_zeros(filt, trim='fb', axis=None): filt without its leading/trailing zeros (concrete)"},
      {"jax.numpy.piecewise", jnp_piecewise,
       "piecewise(x, condlist, funclist, *args, **kw): funclist[i](x) where condlist[i] (lax.switch under vmap)"},
      {NULL, NULL, NULL},
  };
  for (int i = 0; defs[i].names; i++) sr_def(defs[i].names, defs[i].fn, defs[i].doc);
}
