/* numpy_apiC.c: jax.numpy's tensordot and vdot
 * (numpy/tensor_contractions.py), binding what JAX's bind.  Registered
 * by sr_jnp_apiC_init (jax.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check/rule.h"
#include "core/jaxstate.h"
#include "core/trace.h"
#include "jax/jax.h"
#include "ad/ops.h"
#include "jax/lax.h"
#include "jax/nn.h"
#include "jax/numpy.h"
#include "py/objects.h"
#include "text/print_val.h"
#include "util/mem.h"
#include "jax/tracers.h"

static const SrType *vtype(SrInterp *I, SrVal *v) { return sr_value_type(I, v); }
static int given(const SrVal *v) { return v && v->kind != SR_V_NONE; }

/* dtypes.to_inexact_dtype */
static SrDtype to_inexact(SrInterp *I, SrDtype d) {
  int k = sr_dtype_kind(d);
  return k == SR_DK_FLOAT || k == SR_DK_COMPLEX ? d : I->jax->enable_x64 ? SR_F64 : SR_F32;
}

static int is_list_or_tuple(const SrVal *v) { return v->kind == SR_V_TUPLE || v->kind == SR_V_LIST; }

/* util.canonicalize_axis: a ValueError, not numpy's AxisError */
static int canon_axis(SrInterp *I, int64_t axis, int nd, int64_t *out) {
  if (axis < -nd || axis >= nd) {
    sr_raise(I, "ValueError", "axis %lld is out of bounds for array of dimension %d", (long long)axis, nd);
    return -1;
  }
  *out = axis < 0 ? axis + nd : axis;
  return 0;
}

/* the axes of one side of tensordot's pair: an int or a list/tuple of ints */
static int side_axes(SrInterp *I, SrVal *v, int nd, int64_t *out, int *n) {
  if (v->kind == SR_V_INT) {
    *n = 1;
    return canon_axis(I, v->i, nd, out);
  }
  *n = v->seq.n;
  for (int i = 0; i < v->seq.n; i++) {
    int64_t ax;
    if (sr_as_int(I, v->seq.items[i], "axes", &ax) < 0 || canon_axis(I, ax, nd, &out[i]) < 0) return -1;
  }
  return 0;
}

/* jnp.tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None,
   out_sharding=None): one dot_general over the contracted axes, converted
   to the result dtype (not a jit) */
static SrVal *jnp_tensordot(SrInterp *I, SrArgs *a) {
  SrVal *p[6];
  if (sr_args_parse(I, a, "tensordot", "a, b, axes=, *, precision=, preferred_element_type=, out_sharding=", p) < 0)
    return NULL;
  SrVal *x = sr_jnp_asarray(I, p[0], -1), *y = x ? sr_jnp_asarray(I, p[1], -1) : NULL, *r = NULL;
  int pt;
  if (!y || sr_dtype_arg(I, p[4], &pt, "tensordot") < 0) goto done;
  const SrType *tx = vtype(I, x), *ty = vtype(I, y);
  SrDtype pref;
  int weak = 0;
  if (pt >= 0) {
    pref = (SrDtype)pt;
  } else {
    SrVal *xs[2] = {x, y};
    pref = sr_jnp_result_dtype(I, 2, xs, &weak);
  }
  int64_t lc[SR_MAX_RANK], rc[SR_MAX_RANK];
  int nl = 0, nr = 0;
  SrVal *axes = p[2];
  if (!axes || axes->kind == SR_V_INT) {
    int64_t k = axes ? axes->i : 2;
    if (k > tx->ndim || k > ty->ndim) {
      SrBuf b1 = SR_BUF_INIT, b2 = SR_BUF_INIT;
      sr_shape_str(&b1, tx);
      sr_shape_str(&b2, ty);
      sr_raise(I, "TypeError", "Number of tensordot axes (axes %lld) exceeds input ranks (%s and %s)", (long long)k,
               sr_buf_str(&b1), sr_buf_str(&b2));
      sr_buf_free(&b1);
      sr_buf_free(&b2);
      goto done;
    }
    for (int64_t i = 0; i < k; i++) {
      lc[nl++] = tx->ndim - k + i;
      rc[nr++] = i;
    }
  } else if (is_list_or_tuple(axes) && axes->seq.n == 2) {
    SrVal *a1 = axes->seq.items[0], *a2 = axes->seq.items[1];
    int ints = a1->kind == SR_V_INT && a2->kind == SR_V_INT;
    int seqs = is_list_or_tuple(a1) && is_list_or_tuple(a2);
    if (!ints && !seqs) {
      SrBuf b1 = SR_BUF_INIT, b2 = SR_BUF_INIT; /* str.format's {}: str() */
      sr_val_str(&b1, a1);
      sr_val_str(&b2, a2);
      sr_raise(I, "TypeError", "tensordot requires both axes lists to be either ints, tuples or lists, got %s and %s",
               sr_buf_str(&b1), sr_buf_str(&b2));
      sr_buf_free(&b1);
      sr_buf_free(&b2);
      goto done;
    }
    if (seqs && a1->seq.n != a2->seq.n) {
      SrBuf b1 = SR_BUF_INIT, b2 = SR_BUF_INIT;
      sr_val_repr(&b1, a1);
      sr_val_repr(&b2, a2);
      sr_raise(I, "TypeError", "tensordot requires axes lists to have equal length, got %s and %s.",
               sr_buf_str(&b1), sr_buf_str(&b2));
      sr_buf_free(&b1);
      sr_buf_free(&b2);
      goto done;
    }
    if ((seqs && (a1->seq.n > SR_MAX_RANK)) || side_axes(I, a1, tx->ndim, lc, &nl) < 0 ||
        side_axes(I, a2, ty->ndim, rc, &nr) < 0)
      goto done;
  } else {
    sr_raise(I, "TypeError",
             "tensordot axes argument must be an int, a pair of ints, or a pair of lists/tuples of ints.");
    goto done;
  }
  SrVal *d = sr_lax_dot_general(I, x, y, lc, nl, rc, nr, NULL, 0, NULL, 0, given(p[3]) ? p[3] : NULL, pref,
                                given(p[5]) ? p[5] : NULL);
  if (d) r = sr_lax_convert(I, d, pref, weak, NULL);
  sr_unref(d);
done:
  sr_unref(x);
  sr_unref(y);
  return r;
}

/* jnp.vdot(a, b, *, precision=None, preferred_element_type=None): an
   inlined jit: dot(conj(a).ravel(), b.ravel()) */
static SrVal *jnp_vdot(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "vdot", "a, b, *, precision=, preferred_element_type=", p) < 0) return NULL;
  SrNnScope s = {I, {0}, 0};
  SrVal *x = sr_nn_keep(&s, sr_jnp_asarray(I, p[0], -1));
  SrVal *y = x ? sr_nn_keep(&s, sr_jnp_asarray(I, p[1], -1)) : NULL;
  if (y && sr_dtype_kind(vtype(I, x)->dtype) == SR_DK_COMPLEX) x = sr_nn_call1(&s, "jax.numpy.conj", x);
  SrVal *xr = y ? sr_nn_call1(&s, "jax.numpy.ravel", x) : NULL;
  SrVal *yr = xr ? sr_nn_call1(&s, "jax.numpy.ravel", y) : NULL;
  SrVal *r = NULL;
  if (yr) {
    const char *kw[] = {"precision", "preferred_element_type"};
    SrVal *kwv[] = {given(p[2]) ? p[2] : NULL, given(p[3]) ? p[3] : NULL};
    SrVal *args[2] = {xr, yr};
    r = sr_nn_call(&s, "jax.numpy.dot", 2, args, 2, kw, kwv);
  }
  return sr_nn_done(&s, r);
}

/* ======================================================================
 * ediff1d, trapezoid (numpy/lax_numpy.py)
 * ====================================================================== */

typedef struct EdiffData {
  int begin, end;
} EdiffData;

static SrVal *ediff1d_body(SrInterp *I, SrArgs *a) {
  EdiffData *d = sr_current_builtin(I)->data;
  SrNnScope s = {I, {0}, 0};
  SrVal *arr = sr_nn_call1(&s, "jax.numpy.ravel", a->v[0]), *r = NULL;
  if (arr) {
    int64_t n = vtype(I, arr)->dims[0].size, lo1 = n > 0 ? 1 : 0, hi0 = n > 0 ? n - 1 : 0;
    int64_t z = 0;
    SrVal *hi = sr_nn_keep(&s, sr_lax_slice(I, arr, &lo1, &n, NULL));
    SrVal *lo = hi ? sr_nn_keep(&s, sr_lax_slice(I, arr, &z, &hi0, NULL)) : NULL;
    r = lo ? sr_nn_keep(&s, sr_lax_binary(I, SR_P_sub, hi, lo)) : NULL;
  }
  SrDtype dt = arr ? vtype(I, arr)->dtype : SR_F32;
  int k = 1;
  for (int side = 0; side < 2 && r; side++) {
    if (!(side ? d->end : d->begin)) continue;
    SrVal *ext = sr_nn_keep(&s, sr_jnp_asarray(I, a->v[k++], -1));
    SrVal *c = ext ? sr_nn_keep(&s, sr_lax_convert(I, ext, dt, 0, NULL)) : NULL;
    SrVal *f = c ? sr_nn_call1(&s, "jax.numpy.ravel", c) : NULL;
    SrVal *two[2] = {side ? r : f, side ? f : r};
    r = f ? sr_nn_keep(&s, sr_lax_concatenate(I, 2, two, 0)) : NULL;
  }
  return sr_nn_done(&s, r);
}

/* jnp.ediff1d(ary, to_end=None, to_begin=None): jit[name=ediff1d], the
   differences of the flattened array, to_begin and to_end around them */
static SrVal *jnp_ediff1d(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "ediff1d", "ary, to_end=, to_begin=", p) < 0) return NULL;
  SrVal *x = sr_jnp_asarray(I, p[0], -1);
  if (!x) return NULL;
  EdiffData *d = sr_xcalloc(1, sizeof *d);
  SrVal *args[3] = {x};
  int n = 1;
  if ((d->begin = given(p[2]))) args[n++] = p[2];
  if ((d->end = given(p[1]))) args[n++] = p[1];
  SrVal *r = sr_api_jit(I, "ediff1d", ediff1d_body, d, n, args);
  sr_unref(x);
  return r;
}

/* x[..., key] for the last axis of an nd-dimensional x */
static SrVal *last_axis(SrNnScope *s, SrVal *x, SrVal *key) {
  if (!x || !key) return NULL;
  int nd = vtype(s->I, x)->ndim;
  SrVal *items[SR_MAX_RANK];
  for (int i = 0; i < nd - 1; i++) items[i] = sr_slice_new(sr_none(), sr_none(), sr_none());
  items[nd - 1] = key;
  SrVal *t = sr_nn_keep(s, sr_tuple(NULL, nd, items));
  return sr_nn_keep(s, sr_getitem(s->I, x, t));
}

static SrVal *int_key(int64_t i) { return sr_int(NULL, i); }
static SrVal *slice_key(SrVal *start, SrVal *stop) { return sr_slice_new(start, stop, sr_none()); }

typedef struct TrapData {
  int64_t axis;
  int has_x;
} TrapData;

/* moveaxis(x, axis, -1) */
static SrVal *to_last(SrNnScope *s, SrVal *x, int64_t axis) {
  if (!x) return NULL;
  SrVal *args[3] = {x, sr_nn_int(s, axis), sr_nn_int(s, -1)};
  return sr_nn_call(s, "jax.numpy.moveaxis", 3, args, 0, NULL, NULL);
}

static SrVal *trapezoid_body(SrInterp *I, SrArgs *a) {
  TrapData *d = sr_current_builtin(I)->data;
  SrNnScope s = {I, {0}, 0};
  SrVal *y = a->v[0], *dx = NULL;
  if (!d->has_x) {
    if (sr_nn_promote_inexact(&s, 1, &y, "trapezoid") < 0) return sr_nn_done(&s, NULL);
    dx = a->v[1]; /* a traced argument: asarray keeps it, weak type and all */
    int dnd = dx ? vtype(I, dx)->ndim : 0, ynd = vtype(I, y)->ndim;
    if (dx && dnd > 0) {
      int64_t dims[SR_MAX_RANK];
      for (int i = 0; i < ynd - dnd; i++) dims[i] = i;
      dx = ynd > dnd ? sr_nn_keep(&s, sr_lax_expand_dims(I, dx, dims, ynd - dnd)) : dx;
      dx = to_last(&s, dx, d->axis);
    }
  } else {
    SrVal *yx[2] = {y, a->v[1]};
    if (sr_nn_promote_inexact(&s, 2, yx, "trapezoid") < 0) return sr_nn_done(&s, NULL);
    y = yx[0];
    if (vtype(I, yx[1])->ndim == 1) {
      dx = sr_nn_call1(&s, "jax.numpy.diff", yx[1]);
    } else {
      const char *kw[] = {"axis"};
      SrVal *kwv[] = {sr_nn_int(&s, d->axis)};
      dx = to_last(&s, sr_nn_call(&s, "jax.numpy.diff", 1, &yx[1], 1, kw, kwv), d->axis);
    }
  }
  y = to_last(&s, y, d->axis);
  SrVal *r = NULL;
  if (!y || !dx) return sr_nn_done(&s, NULL);
  const SrType *dt = vtype(I, dx);
  if (dt->ndim == 0 || dt->dims[dt->ndim - 1].size == 1) {
    SrVal *dxr = dt->ndim == 0 ? dx : last_axis(&s, dx, int_key(0));
    SrVal *sum = sr_nn_call2(&s, "jax.numpy.sum", y, sr_nn_int(&s, -1));
    SrVal *first = last_axis(&s, y, int_key(0)), *last = last_axis(&s, y, int_key(-1));
    SrVal *ends = sr_nn_op(&s, SR_OP_ADD, first, last);
    SrVal *half = sr_nn_op(&s, SR_OP_MUL, sr_nn_float(&s, 0.5), ends);
    r = sr_nn_op(&s, SR_OP_MUL, dxr, sr_nn_op(&s, SR_OP_SUB, sum, half));
  } else {
    SrVal *hi = last_axis(&s, y, slice_key(int_key(1), sr_none()));
    SrVal *lo = last_axis(&s, y, slice_key(sr_none(), int_key(-1)));
    SrVal *pair = sr_nn_op(&s, SR_OP_ADD, hi, lo);
    SrVal *prod = sr_nn_op(&s, SR_OP_MUL, dx, pair);
    SrVal *sum = prod ? sr_nn_call2(&s, "jax.numpy.sum", prod, sr_nn_int(&s, -1)) : NULL;
    r = sr_nn_op(&s, SR_OP_MUL, sr_nn_float(&s, 0.5), sum);
  }
  return sr_nn_done(&s, r);
}

/* jnp.trapezoid(y, x=None, dx=1.0, axis=-1): jit[name=trapezoid] with
   static axis, the trapezoidal rule along axis */
static SrVal *jnp_trapezoid(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "trapezoid", "y, x=, dx=, axis=", p) < 0) return NULL;
  TrapData *d = sr_xcalloc(1, sizeof *d);
  d->axis = -1;
  if (given(p[3]) && sr_as_int(I, p[3], "axis", &d->axis) < 0) {
    free(d);
    return NULL;
  }
  d->has_x = given(p[1]);
  SrVal *dx = p[2] ? sr_ref(p[2]) : sr_float(NULL, 1.0);
  /* x=None is no argument of the jit; dx is one even when x is given */
  SrVal *args[3] = {p[0], d->has_x ? p[1] : dx, dx};
  SrVal *r = sr_api_jit(I, "trapezoid", trapezoid_body, d, d->has_x ? 3 : 2, args);
  sr_unref(dx);
  return r;
}

/* ======================================================================
 * isin, union1d, setdiff1d (numpy/setops.py)
 * ====================================================================== */

static int is_concrete(SrVal *v) {
  SrArrayObj *a = sr_array_of(v);
  return !a || a->kind == SR_AV_CONCRETE;
}

static SrVal *concretization(SrInterp *I, SrVal *v, const char *fname) {
  char ctx[160];
  snprintf(ctx, sizeof ctx, "The error arose in %s()", fname);
  return sr_raise_concretization(I, v, ctx);
}

enum { IN1D_COMPARE_ALL, IN1D_BINARY_SEARCH };

typedef struct In1dData {
  int invert, method;
} In1dData;

/* x[key] for a tuple key of n items (stolen) */
static SrVal *index_by(SrNnScope *s, SrVal *x, int n, SrVal **items) {
  if (!x) {
    for (int i = 0; i < n; i++) sr_unref(items[i]);
    return NULL;
  }
  SrVal *t = sr_nn_keep(s, sr_tuple(NULL, n, items));
  return sr_nn_keep(s, sr_getitem(s->I, x, t));
}

/* jnp.zeros / jnp.ones of shape (n,) and dtype bool */
static SrVal *bools(SrNnScope *s, int one, int64_t n) {
  SrVal *v[2] = {sr_nn_keep(s, sr_int_tuple(&n, 1)), sr_nn_keep(s, sr_dtype_val(NULL, SR_BOOL))};
  return sr_nn_call(s, one ? "jax.numpy.ones" : "jax.numpy.zeros", 2, v, 0, NULL, NULL);
}

/* setops._in1d: jit[name=_in1d] with static invert, method, assume_unique */
static SrVal *in1d_body(SrInterp *I, SrArgs *a) {
  In1dData *d = sr_current_builtin(I)->data;
  SrNnScope s = {I, {0}, 0};
  SrVal *xs[2] = {a->v[0], a->v[1]};
  int weak;
  SrDtype dt = sr_jnp_result_dtype(I, 2, xs, &weak);
  for (int i = 0; i < 2; i++) {
    SrVal *c = sr_nn_keep(&s, sr_lax_convert(I, xs[i], dt, weak, NULL));
    xs[i] = c ? sr_nn_call1(&s, "jax.numpy.ravel", c) : NULL;
    if (!xs[i]) return sr_nn_done(&s, NULL);
  }
  int64_t n1 = sr_type_numel(vtype(I, xs[0])), n2 = sr_type_numel(vtype(I, xs[1]));
  if (n1 == 0 || n2 == 0) return sr_nn_done(&s, bools(&s, d->invert, n1));
  SrVal *r = NULL;
  if (d->method == IN1D_COMPARE_ALL) {
    SrVal *k1[2] = {sr_slice_new(sr_none(), sr_none(), sr_none()), sr_none()};
    SrVal *col = index_by(&s, xs[0], 2, k1);
    SrVal *k2[2] = {sr_none(), sr_slice_new(sr_none(), sr_none(), sr_none())};
    SrVal *row = col ? index_by(&s, xs[1], 2, k2) : NULL;
    SrVal *cmp = row ? sr_nn_op(&s, d->invert ? SR_OP_NE : SR_OP_EQ, col, row) : NULL;
    r = cmp ? sr_nn_call2(&s, d->invert ? "jax.numpy.all" : "jax.numpy.any", cmp, sr_nn_int(&s, -1)) : NULL;
  } else {
    SrVal *sorted = sr_nn_call1(&s, "jax.lax.sort", xs[1]);
    SrVal *ind = sorted ? sr_nn_call2(&s, "jax.numpy.searchsorted", sorted, xs[0]) : NULL;
    SrVal *at = ind ? sr_nn_keep(&s, sr_getitem(I, sorted, ind)) : NULL;
    r = at ? sr_nn_op(&s, d->invert ? SR_OP_NE : SR_OP_EQ, xs[0], at) : NULL;
  }
  return sr_nn_done(&s, r);
}

static SrVal *in1d(SrInterp *I, SrVal *x, SrVal *y, int invert, int method) {
  In1dData *d = sr_xcalloc(1, sizeof *d);
  d->invert = invert;
  d->method = method;
  SrVal *args[2] = {x, y};
  return sr_api_jit(I, "_in1d", in1d_body, d, 2, args);
}

/* jnp.isin(element, test_elements, assume_unique=False, invert=False, *,
   method='auto'): _in1d reshaped to element's shape */
static SrVal *jnp_isin(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "isin", "element, test_elements, assume_unique=, invert=, *, method=", p) < 0) return NULL;
  int method;
  if (given(p[4]) && p[4]->kind != SR_V_STR) {
    SrBuf b = SR_BUF_INIT;
    sr_val_repr(&b, p[4]);
    sr_raise(I, "ValueError",
             "method=%s is not implemented; options are 'compare_all', 'binary_search', 'sort', and 'auto'",
             sr_buf_str(&b));
    sr_buf_free(&b);
    return NULL;
  }
  const char *m = given(p[4]) ? sr_as_str(I, p[4], "method") : "auto";
  if (!m) return NULL;
  if (strcmp(m, "auto") == 0 || strcmp(m, "compare_all") == 0) {
    method = IN1D_COMPARE_ALL;
  } else if (strcmp(m, "binary_search") == 0) {
    method = IN1D_BINARY_SEARCH;
  } else if (strcmp(m, "sort") == 0) {
    return sr_raise(I, "NotImplementedError", "jnp.isin(method='sort') is not supported by shardrepl");
  } else {
    return sr_raise(I, "ValueError",
                    "method='%s' is not implemented; options are 'compare_all', 'binary_search', 'sort', and 'auto'",
                    m);
  }
  SrNnScope s = {I, {0}, 0};
  SrVal *x = sr_nn_keep(&s, sr_jnp_asarray(I, p[0], -1));
  SrVal *y = x ? sr_nn_keep(&s, sr_jnp_asarray(I, p[1], -1)) : NULL;
  SrVal *r = y ? sr_nn_keep(&s, in1d(I, x, y, p[3] && sr_val_truthy(p[3]), method)) : NULL;
  if (r) {
    SrVal *v[2] = {r, sr_nn_keep(&s, sr_shape_tuple(vtype(I, x)))};
    r = sr_nn_call(&s, "jax.numpy.reshape", 2, v, 0, NULL, NULL);
  }
  return sr_nn_done(&s, r);
}

/* the size= argument: -1 for None */
static int size_arg(SrInterp *I, SrVal *v, int64_t *size) {
  *size = -1;
  return given(v) ? sr_as_int(I, v, "size", size) : 0;
}

/* jnp.union1d(ar1, ar2, *, size=None, fill_value=None):
   unique(concatenate((ar1, ar2), axis=None), size, fill_value) */
static SrVal *jnp_union1d(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "union1d", "ar1, ar2, *, size=, fill_value=", p) < 0) return NULL;
  int64_t size;
  if (size_arg(I, p[2], &size) < 0) return NULL;
  SrNnScope s = {I, {0}, 0};
  SrVal *x = sr_nn_keep(&s, sr_jnp_asarray(I, p[0], -1));
  SrVal *y = x ? sr_nn_keep(&s, sr_jnp_asarray(I, p[1], -1)) : NULL;
  if (y && size < 0)
    for (int i = 0; i < 2; i++)
      if (!is_concrete(i ? y : x)) return sr_nn_done(&s, concretization(I, i ? y : x, "union1d"));
  /* concatenate(axis=None): of the raveled arrays along axis 0 */
  SrVal *xr = y ? sr_nn_call1(&s, "jax.numpy.ravel", x) : NULL;
  SrVal *yr = xr ? sr_nn_call1(&s, "jax.numpy.ravel", y) : NULL;
  SrVal *cat = NULL;
  if (yr) {
    SrVal *items[2] = {sr_ref(xr), sr_ref(yr)};
    SrVal *t = sr_nn_keep(&s, sr_tuple(NULL, 2, items));
    cat = sr_nn_call1(&s, "jax.numpy.concatenate", t);
  }
  SrVal *r = NULL;
  if (cat) {
    const char *kw[] = {"size", "fill_value"};
    SrVal *kwv[] = {size >= 0 ? sr_nn_int(&s, size) : NULL, given(p[3]) ? p[3] : NULL};
    r = sr_nn_call(&s, "jax.numpy.unique", 1, &cat, 2, kw, kwv);
  }
  return sr_nn_done(&s, r);
}

/* jnp.setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None) */
static SrVal *jnp_setdiff1d(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "setdiff1d", "ar1, ar2, assume_unique=, *, size=, fill_value=", p) < 0) return NULL;
  int64_t size;
  if (size_arg(I, p[3], &size) < 0) return NULL;
  int assume_unique = p[2] && sr_val_truthy(p[2]);
  SrNnScope s = {I, {0}, 0};
  SrVal *x = sr_nn_keep(&s, sr_jnp_asarray(I, p[0], -1));
  SrVal *y = x ? sr_nn_keep(&s, sr_jnp_asarray(I, p[1], -1)) : NULL;
  SrVal *x1 = y ? sr_nn_call1(&s, "jax.numpy.ravel", x) : NULL;
  SrVal *y1 = x1 ? sr_nn_call1(&s, "jax.numpy.ravel", y) : NULL;
  if (!y1) return sr_nn_done(&s, NULL);
  if (size < 0 && !is_concrete(x)) return sr_nn_done(&s, concretization(I, x, "setdiff1d"));
  SrVal *fill = NULL;
  {
    const char *kw[] = {"fill_value", "shape"};
    SrVal *kwv[] = {given(p[4]) ? p[4] : sr_nn_int(&s, 0), sr_nn_keep(&s, sr_int_tuple(NULL, 0))};
    fill = sr_nn_call(&s, "jax.numpy.full_like", 1, &x1, 2, kw, kwv);
  }
  if (!fill) return sr_nn_done(&s, NULL);
  int64_t n1 = sr_type_numel(vtype(I, x1));
  if (n1 == 0) {
    const char *kw[] = {"shape"};
    int64_t n = size < 0 ? 0 : size;
    SrVal *v[2] = {x1, fill}, *kwv[] = {sr_nn_keep(&s, sr_int_tuple(&n, 1))};
    return sr_nn_done(&s, sr_nn_call(&s, "jax.numpy.full_like", 2, v, 1, kw, kwv));
  }
  if (!assume_unique) {
    const char *kw[] = {"size"};
    SrVal *kwv[] = {size > 0 ? sr_nn_int(&s, n1) : size == 0 ? sr_nn_int(&s, 0) : NULL};
    x1 = sr_nn_call(&s, "jax.numpy.unique", 1, &x1, 1, kw, kwv);
  }
  SrVal *mask = x1 ? sr_nn_keep(&s, in1d(I, x1, y1, 1, IN1D_COMPARE_ALL)) : NULL;
  if (!mask) return sr_nn_done(&s, NULL);
  if (size < 0) return sr_nn_done(&s, sr_nn_keep(&s, sr_getitem(I, x1, mask)));
  if (!assume_unique) {
    /* the mask off where unique() padded */
    SrVal *k0 = sr_nn_keep(&s, sr_getindex(I, x1, 0));
    SrVal *eq = k0 ? sr_nn_op(&s, SR_OP_EQ, x1, k0) : NULL;
    SrVal *cnt = eq ? sr_nn_call1(&s, "jax.numpy.sum", eq) : NULL;
    SrVal *nu = cnt ? sr_nn_op(&s, SR_OP_SUB, sr_nn_int(&s, n1 + 1), cnt) : NULL;
    SrVal *ar = nu ? sr_nn_call1(&s, "jax.numpy.arange", sr_nn_int(&s, n1)) : NULL;
    SrVal *lt = ar ? sr_nn_op(&s, SR_OP_LT, ar, nu) : NULL;
    mask = lt ? sr_nn_call3(&s, "jax.numpy.where", lt, mask, sr_bool(0)) : NULL;
  }
  SrVal *ar = mask ? sr_nn_call1(&s, "jax.numpy.arange", sr_nn_int(&s, size)) : NULL;
  SrVal *msum = ar ? sr_nn_call1(&s, "jax.numpy.sum", mask) : NULL;
  SrVal *lt = msum ? sr_nn_op(&s, SR_OP_LT, ar, msum) : NULL;
  SrVal *wh = NULL;
  if (lt) {
    const char *kw[] = {"size"};
    SrVal *kwv[] = {sr_nn_int(&s, size)};
    wh = sr_nn_call(&s, "jax.numpy.where", 1, &mask, 1, kw, kwv);
  }
  SrVal *idx = wh ? sr_nn_keep(&s, sr_getitem(I, x1, wh)) : NULL;
  SrVal *r = idx ? sr_nn_call3(&s, "jax.numpy.where", lt, idx, fill) : NULL;
  return sr_nn_done(&s, r);
}

/* promote_dtypes(x, y) of two raveled arrays, in place (values the scope
   holds); -1 with an exception raised */
static int ravel_promote(SrNnScope *s, SrVal **xs) {
  for (int i = 0; i < 2; i++) {
    xs[i] = sr_nn_keep(s, sr_jnp_asarray(s->I, xs[i], -1));
    xs[i] = xs[i] ? sr_nn_call1(s, "jax.numpy.ravel", xs[i]) : NULL;
    if (!xs[i]) return -1;
  }
  int weak;
  SrDtype dt = sr_jnp_result_dtype(s->I, 2, xs, &weak);
  for (int i = 0; i < 2; i++)
    if (!(xs[i] = sr_nn_keep(s, sr_lax_convert(s->I, xs[i], dt, weak, NULL)))) return -1;
  return 0;
}

static SrVal *concat2(SrNnScope *s, SrVal *x, SrVal *y) {
  if (!x || !y) return NULL;
  SrVal *items[2] = {sr_ref(x), sr_ref(y)};
  return sr_nn_call1(s, "jax.numpy.concatenate", sr_nn_keep(s, sr_tuple(NULL, 2, items)));
}

/* x[1:] and x[:-1] of a 1-d x */
static SrVal *tail1(SrNnScope *s, SrVal *x) { return last_axis(s, x, slice_key(int_key(1), sr_none())); }
static SrVal *init1(SrNnScope *s, SrVal *x) { return last_axis(s, x, slice_key(sr_none(), int_key(-1))); }

/* jnp.setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None) */
static SrVal *jnp_setxor1d(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "setxor1d", "ar1, ar2, assume_unique=, *, size=, fill_value=", p) < 0) return NULL;
  if (given(p[3])) return sr_raise(I, "NotImplementedError", "jnp.setxor1d(size=) is not supported by shardrepl");
  int assume_unique = p[2] && sr_val_truthy(p[2]);
  SrNnScope s = {I, {0}, 0};
  SrVal *xs[2] = {p[0], p[1]};
  if (ravel_promote(&s, xs) < 0) return sr_nn_done(&s, NULL);
  for (int i = 0; i < 2 && !assume_unique; i++)
    if (!(xs[i] = sr_nn_call1(&s, "jax.numpy.unique", xs[i]))) return sr_nn_done(&s, NULL);
  SrVal *aux = concat2(&s, xs[0], xs[1]);
  if (!aux || sr_type_numel(vtype(I, aux)) == 0) return sr_nn_done(&s, aux);
  aux = sr_nn_call1(&s, "jax.numpy.sort", aux);
  SrVal *hi = aux ? tail1(&s, aux) : NULL, *lo = hi ? init1(&s, aux) : NULL;
  SrVal *ne = lo ? sr_nn_op(&s, SR_OP_NE, hi, lo) : NULL;
  SrVal *flag = NULL;
  if (ne) {
    SrVal *t1 = sr_nn_call1(&s, "jax.numpy.ravel", sr_bool(1));
    SrVal *t2 = t1 ? sr_nn_call1(&s, "jax.numpy.ravel", sr_bool(1)) : NULL;
    SrVal *items[3] = {sr_ref(t1), sr_ref(ne), sr_ref(t2)};
    if (t2) flag = sr_nn_call1(&s, "jax.numpy.concatenate", sr_nn_keep(&s, sr_tuple(NULL, 3, items)));
  }
  SrVal *fh = flag ? tail1(&s, flag) : NULL, *fl = fh ? init1(&s, flag) : NULL;
  SrVal *m = fl ? sr_nn_op(&s, SR_OP_BITAND, fh, fl) : NULL;
  return sr_nn_done(&s, m ? sr_nn_keep(&s, sr_getitem(I, aux, m)) : NULL);
}

/* setops._intersect1d_sorted_mask: jit with static return_indices */
static SrVal *intersect_mask_body(SrInterp *I, SrArgs *a) {
  int ri = *(int *)sr_current_builtin(I)->data;
  SrNnScope s = {I, {0}, 0};
  SrVal *arr = concat2(&s, a->v[0], a->v[1]), *aux = NULL, *ind = NULL;
  if (arr && ri) {
    int64_t n = vtype(I, arr)->dims[0].size;
    SrVal *io = sr_nn_keep(&s, sr_lax_iota(I, n > INT32_MAX ? SR_I64 : SR_I32, &n, 1, 0, NULL));
    SrVal *kv = io ? sr_nn_call2(&s, "jax.lax.sort_key_val", arr, io) : NULL;
    if (kv) {
      aux = kv->seq.items[0];
      ind = kv->seq.items[1];
    }
  } else if (arr) {
    aux = sr_nn_call1(&s, "jax.numpy.sort", arr);
  }
  SrVal *hi = aux ? tail1(&s, aux) : NULL, *lo = hi ? init1(&s, aux) : NULL;
  SrVal *mask = lo ? sr_nn_op(&s, SR_OP_EQ, hi, lo) : NULL;
  if (!mask) return sr_nn_done(&s, NULL);
  SrVal *items[3] = {sr_ref(aux), sr_ref(mask), ind ? sr_ref(ind) : NULL};
  return sr_nn_done(&s, sr_nn_keep(&s, sr_tuple(NULL, ri ? 3 : 2, items)));
}

/* jnp.intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *,
   size=None, fill_value=None) */
static SrVal *jnp_intersect1d(SrInterp *I, SrArgs *a) {
  SrVal *p[6];
  if (sr_args_parse(I, a, "intersect1d", "ar1, ar2, assume_unique=, return_indices=, *, size=, fill_value=", p) < 0)
    return NULL;
  if (given(p[4])) return sr_raise(I, "NotImplementedError", "jnp.intersect1d(size=) is not supported by shardrepl");
  int assume_unique = p[2] && sr_val_truthy(p[2]), ri = p[3] && sr_val_truthy(p[3]);
  SrNnScope s = {I, {0}, 0};
  SrVal *xs[2] = {p[0], p[1]}, *inds[2] = {NULL, NULL};
  if (ravel_promote(&s, xs) < 0) return sr_nn_done(&s, NULL);
  for (int i = 0; i < 2 && !assume_unique; i++) {
    if (ri) {
      const char *kw[] = {"return_index"};
      SrVal *kwv[] = {sr_bool(1)};
      SrVal *u = sr_nn_call(&s, "jax.numpy.unique", 1, &xs[i], 1, kw, kwv);
      if (!u) return sr_nn_done(&s, NULL);
      xs[i] = u->seq.items[0];
      inds[i] = u->seq.items[1];
    } else if (!(xs[i] = sr_nn_call1(&s, "jax.numpy.unique", xs[i]))) {
      return sr_nn_done(&s, NULL);
    }
  }
  int *d = sr_xmalloc(sizeof *d);
  *d = ri;
  SrVal *am = sr_nn_keep(&s, sr_api_jit(I, "_intersect1d_sorted_mask", intersect_mask_body, d, 2, xs));
  if (!am) return sr_nn_done(&s, NULL);
  SrVal *aux = am->seq.items[0], *mask = am->seq.items[1];
  SrVal *int1d = sr_nn_keep(&s, sr_getitem(I, init1(&s, aux), mask));
  if (!ri || !int1d) return sr_nn_done(&s, int1d);
  SrVal *srt = am->seq.items[2];
  SrVal *i1 = sr_nn_keep(&s, sr_getitem(I, init1(&s, srt), mask));
  SrVal *i2m = i1 ? sr_nn_keep(&s, sr_getitem(I, tail1(&s, srt), mask)) : NULL;
  SrVal *i2 = i2m ? sr_nn_op(&s, SR_OP_SUB, i2m, sr_nn_int(&s, sr_type_numel(vtype(I, xs[0])))) : NULL;
  if (i2 && !assume_unique) {
    i1 = sr_nn_keep(&s, sr_getitem(I, inds[0], i1));
    i2 = i1 ? sr_nn_keep(&s, sr_getitem(I, inds[1], i2)) : NULL;
  }
  if (!i2) return sr_nn_done(&s, NULL);
  SrVal *items[3] = {sr_ref(int1d), sr_ref(i1), sr_ref(i2)};
  return sr_nn_done(&s, sr_nn_keep(&s, sr_tuple(NULL, 3, items)));
}

/* ======================================================================
 * cross (numpy/lax_numpy.py)
 * ====================================================================== */

typedef struct CrossData {
  int64_t axisa, axisb, axisc;
} CrossData;

/* x[..., i], or zeros_like(like) where x has no component i */
static SrVal *component(SrNnScope *s, SrVal *x, int i, SrVal *like) {
  if (i == 2 && vtype(s->I, x)->dims[vtype(s->I, x)->ndim - 1].size == 2)
    return like ? sr_nn_call1(s, "jax.numpy.zeros_like", like) : NULL;
  return last_axis(s, x, int_key(i));
}

static SrVal *cross_body(SrInterp *I, SrArgs *a) {
  CrossData *d = sr_current_builtin(I)->data;
  SrNnScope s = {I, {0}, 0};
  SrVal *x = to_last(&s, a->v[0], d->axisa);
  SrVal *y = x ? to_last(&s, a->v[1], d->axisb) : NULL;
  if (!y) return sr_nn_done(&s, NULL);
  int64_t nx = vtype(I, x)->ndim ? vtype(I, x)->dims[vtype(I, x)->ndim - 1].size : 0;
  int64_t ny = vtype(I, y)->ndim ? vtype(I, y)->dims[vtype(I, y)->ndim - 1].size : 0;
  if ((nx != 2 && nx != 3) || (ny != 2 && ny != 3))
    return sr_nn_done(&s, sr_raise(I, "ValueError", "Dimension must be either 2 or 3 for cross product"));
  if (nx == 2 && ny == 2) {
    SrVal *x0 = last_axis(&s, x, int_key(0)), *y1 = last_axis(&s, y, int_key(1));
    SrVal *l = sr_nn_op(&s, SR_OP_MUL, x0, y1);
    SrVal *x1 = last_axis(&s, x, int_key(1)), *y0 = last_axis(&s, y, int_key(0));
    SrVal *r = sr_nn_op(&s, SR_OP_MUL, x1, y0);
    return sr_nn_done(&s, sr_nn_op(&s, SR_OP_SUB, l, r));
  }
  SrVal *a0 = component(&s, x, 0, NULL), *a1 = component(&s, x, 1, NULL), *a2 = component(&s, x, 2, a0);
  SrVal *b0 = component(&s, y, 0, NULL), *b1 = component(&s, y, 1, NULL), *b2 = component(&s, y, 2, b0);
  SrVal *c[3];
  SrVal *t1 = sr_nn_op(&s, SR_OP_MUL, a1, b2), *t2 = sr_nn_op(&s, SR_OP_MUL, a2, b1);
  c[0] = sr_nn_op(&s, SR_OP_SUB, t1, t2);
  t1 = sr_nn_op(&s, SR_OP_MUL, a2, b0), t2 = sr_nn_op(&s, SR_OP_MUL, a0, b2);
  c[1] = sr_nn_op(&s, SR_OP_SUB, t1, t2);
  t1 = sr_nn_op(&s, SR_OP_MUL, a0, b1), t2 = sr_nn_op(&s, SR_OP_MUL, a1, b0);
  c[2] = sr_nn_op(&s, SR_OP_SUB, t1, t2);
  if (!c[0] || !c[1] || !c[2]) return sr_nn_done(&s, NULL);
  SrVal *items[3] = {sr_ref(c[0]), sr_ref(c[1]), sr_ref(c[2])};
  SrVal *arr = sr_nn_call1(&s, "jax.numpy.array", sr_nn_keep(&s, sr_tuple(NULL, 3, items)));
  SrVal *r = NULL;
  if (arr) {
    SrVal *args[3] = {arr, sr_nn_int(&s, 0), sr_nn_int(&s, d->axisc)};
    r = sr_nn_call(&s, "jax.numpy.moveaxis", 3, args, 0, NULL, NULL);
  }
  return sr_nn_done(&s, r);
}

/* jnp.cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
   jit[name=cross] with static axes */
static SrVal *jnp_cross(SrInterp *I, SrArgs *a) {
  SrVal *p[6];
  if (sr_args_parse(I, a, "cross", "a, b, axisa=, axisb=, axisc=, axis=", p) < 0) return NULL;
  CrossData *d = sr_xcalloc(1, sizeof *d);
  d->axisa = d->axisb = d->axisc = -1;
  int bad = (given(p[2]) && sr_as_int(I, p[2], "axisa", &d->axisa) < 0) ||
            (given(p[3]) && sr_as_int(I, p[3], "axisb", &d->axisb) < 0) ||
            (given(p[4]) && sr_as_int(I, p[4], "axisc", &d->axisc) < 0);
  if (!bad && given(p[5])) {
    bad = sr_as_int(I, p[5], "axis", &d->axisa) < 0;
    d->axisb = d->axisc = d->axisa;
  }
  SrVal *x = bad ? NULL : sr_jnp_asarray(I, p[0], -1), *y = x ? sr_jnp_asarray(I, p[1], -1) : NULL;
  if (!y) {
    free(d);
    sr_unref(x);
    return NULL;
  }
  SrVal *args[2] = {x, y};
  SrVal *r = sr_api_jit(I, "cross", cross_body, d, 2, args);
  sr_unref(x);
  sr_unref(y);
  return r;
}

/* ======================================================================
 * histogram_bin_edges, histogram (numpy/lax_numpy.py; not jits)
 * ====================================================================== */

static int same_shape(const SrType *a, const SrType *b) {
  if (a->ndim != b->ndim) return 0;
  for (int i = 0; i < a->ndim; i++)
    if (a->dims[i].size != b->dims[i].size) return 0;
  return 1;
}

static SrVal *bin_edges(SrNnScope *s, SrVal *arr, SrVal *bins, SrVal *range) {
  SrInterp *I = s->I;
  if (bins->kind == SR_V_STR)
    return sr_raise(I, "NotImplementedError", "string values for `bins` not implemented.");
  SrDtype dt = to_inexact(I, vtype(I, arr)->dtype);
  SrVal *dtv = sr_nn_keep(s, sr_dtype_val(NULL, dt));
  const char *kwd[] = {"dtype"};
  SrVal *bv = sr_nn_keep(s, sr_jnp_asarray(I, bins, -1));
  if (!bv) return NULL;
  if (vtype(I, bv)->ndim == 1) return sr_nn_call(s, "jax.numpy.asarray", 1, &bv, 1, kwd, &dtv);
  if (!is_concrete(bv)) return sr_raise(I, "ConcretizationTypeError",
      "Abstract tracer value encountered where concrete value is expected: traced array with shape %s\n"
      "bins argument of histogram_bin_edges", sr_type_short(vtype(I, bv)));
  int64_t nb;
  if (sr_as_int(I, bins, "bins", &nb) < 0) return NULL;
  SrVal *rv;
  if (given(range)) {
    rv = sr_nn_call(s, "jax.numpy.asarray", 1, &range, 1, kwd, &dtv);
  } else {
    SrVal *mn = sr_nn_call1(s, "jax.numpy.min", arr), *mx = mn ? sr_nn_call1(s, "jax.numpy.max", arr) : NULL;
    if (!mx) return NULL;
    SrVal *items[2] = {sr_ref(mn), sr_ref(mx)};
    SrVal *l = sr_nn_keep(s, sr_tuple(NULL, 2, items));
    rv = sr_nn_call(s, "jax.numpy.asarray", 1, &l, 1, kwd, &dtv);
  }
  if (!rv) return NULL;
  const SrType *rt = vtype(I, rv);
  if (rt->ndim != 1 || rt->dims[0].size != 2) {
    SrBuf b = SR_BUF_INIT;
    sr_val_repr(&b, rv);
    sr_raise(I, "ValueError", "`range` must be either None or a sequence of scalars, got %s", sr_buf_str(&b));
    sr_buf_free(&b);
    return NULL;
  }
  SrVal *lohi[2];
  for (int i = 0; i < 2; i++) {
    SrVal *ptp = sr_nn_call1(s, "jax.numpy.ptp", rv);
    SrVal *z = ptp ? sr_nn_op(s, SR_OP_EQ, ptp, sr_nn_int(s, 0)) : NULL;
    SrVal *ri = z ? sr_nn_keep(s, sr_getindex(I, rv, i)) : NULL;
    SrVal *sh = ri ? sr_nn_op(s, i ? SR_OP_ADD : SR_OP_SUB, ri, sr_nn_float(s, 0.5)) : NULL;
    lohi[i] = sh ? sr_nn_call3(s, "jax.numpy.where", z, sh, ri) : NULL;
    if (!lohi[i]) return NULL;
  }
  SrVal *args[3] = {lohi[0], lohi[1], sr_nn_int(s, nb + 1)};
  return sr_nn_call(s, "jax.numpy.linspace", 3, args, 1, kwd, &dtv);
}

/* jnp.histogram_bin_edges(a, bins=10, range=None, weights=None) */
static SrVal *jnp_histogram_bin_edges(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "histogram_bin_edges", "a, bins=, range=, weights=", p) < 0) return NULL;
  SrNnScope s = {I, {0}, 0};
  SrVal *bins = p[1] ? p[1] : sr_nn_int(&s, 10);
  SrVal *arr = sr_nn_keep(&s, sr_jnp_asarray(I, p[0], -1));
  return sr_nn_done(&s, arr ? bin_edges(&s, arr, bins, p[2]) : NULL);
}

/* jnp.histogram(a, bins=10, range=None, weights=None, density=None) */
static SrVal *jnp_histogram(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "histogram", "a, bins=, range=, weights=, density=", p) < 0) return NULL;
  SrNnScope s = {I, {0}, 0};
  SrVal *bins = p[1] ? p[1] : sr_nn_int(&s, 10);
  SrVal *x = sr_nn_keep(&s, sr_jnp_asarray(I, p[0], -1)), *w = NULL;
  if (!x) return sr_nn_done(&s, NULL);
  if (!given(p[3])) {
    if (sr_nn_promote_inexact(&s, 1, &x, "histogram") < 0) return sr_nn_done(&s, NULL);
    w = sr_nn_call1(&s, "jax.numpy.ones_like", x);
  } else {
    SrVal *xw[2] = {x, sr_nn_keep(&s, sr_jnp_asarray(I, p[3], -1))};
    if (!xw[1]) return sr_nn_done(&s, NULL);
    if (!same_shape(vtype(I, x), vtype(I, xw[1])))
      return sr_nn_done(&s, sr_raise(I, "ValueError", "weights should have the same shape as a."));
    if (sr_nn_promote_inexact(&s, 2, xw, "histogram") < 0) return sr_nn_done(&s, NULL);
    x = xw[0];
    w = xw[1];
  }
  SrVal *edges = w ? bin_edges(&s, x, bins, p[2]) : NULL;
  if (!edges) return sr_nn_done(&s, NULL);
  int64_t ne = vtype(I, edges)->dims[0].size;
  SrVal *idx;
  {
    const char *kw[] = {"side"};
    SrVal *kwv[] = {sr_nn_keep(&s, sr_str(NULL, "right", 5))};
    SrVal *v[2] = {edges, x};
    idx = sr_nn_call(&s, "jax.numpy.searchsorted", 2, v, 1, kw, kwv);
  }
  SrVal *last = idx ? sr_nn_keep(&s, sr_getindex(I, edges, -1)) : NULL;
  SrVal *eq = last ? sr_nn_op(&s, SR_OP_EQ, x, last) : NULL;
  idx = eq ? sr_nn_call3(&s, "jax.numpy.where", eq, sr_nn_int(&s, ne - 1), idx) : NULL;
  SrVal *counts = NULL;
  if (idx) {
    SrVal *v[2] = {sr_nn_int(&s, ne), sr_nn_keep(&s, sr_dtype_val(NULL, vtype(I, w)->dtype))};
    SrVal *z = sr_nn_call(&s, "jax.numpy.zeros", 2, v, 0, NULL, NULL);
    SrVal *at = z ? sr_nn_keep(&s, sr_getattr(I, z, "at")) : NULL;
    SrVal *ref = at ? sr_nn_keep(&s, sr_getitem(I, at, idx)) : NULL;
    SrVal *add = ref ? sr_nn_keep(&s, sr_getattr(I, ref, "add")) : NULL;
    SrVal *sum = add ? sr_nn_keep(&s, sr_call1(I, add, w)) : NULL;
    counts = sum ? last_axis(&s, sum, slice_key(int_key(1), sr_none())) : NULL;
  }
  if (counts && given(p[4]) && sr_val_truthy(p[4])) {
    SrVal *widths = sr_nn_call1(&s, "jax.numpy.diff", edges);
    SrVal *tot = widths ? sr_nn_call1(&s, "jax.numpy.sum", counts) : NULL;
    SrVal *q = tot ? sr_nn_op(&s, SR_OP_DIV, counts, widths) : NULL;
    counts = q ? sr_nn_op(&s, SR_OP_DIV, q, tot) : NULL;
  }
  if (!counts) return sr_nn_done(&s, NULL);
  SrVal *items[2] = {sr_ref(counts), sr_ref(edges)};
  return sr_nn_done(&s, sr_nn_keep(&s, sr_tuple(NULL, 2, items)));
}

/* ======================================================================
 * cov, corrcoef (numpy/lax_numpy.py)
 * ====================================================================== */

typedef struct CovData {
  int rowvar, bias, has_y, has_f, has_a; /* y, fweights, aweights follow m */
  int64_t ddof; /* -1: None */
  int dtype;    /* -1: None */
} CovData;

/* cov's fweights or aweights checked: abs(w) */
static SrVal *cov_weights(SrNnScope *s, SrVal *w, int64_t nobs, const char *what) {
  SrInterp *I = s->I;
  const SrType *t = vtype(I, w);
  if (t->ndim > 1) return sr_raise(I, "RuntimeError", "cannot handle multidimensional %s", what);
  if (t->ndim == 0 || t->dims[0].size != nobs)
    return sr_raise(I, "RuntimeError", "incompatible numbers of samples and %s", what);
  if (what[0] == 'f' && !sr_dtype_is_int(t->dtype)) return sr_raise(I, "TypeError", "fweights must be integer.");
  return sr_nn_call1(s, "jax.numpy.abs", w);
}

static SrVal *cov_of(SrNnScope *s, CovData *d, SrVal *m, SrVal *y, SrVal *fw, SrVal *aw_in) {
  SrInterp *I = s->I;
  SrVal *args[2] = {m, y};
  if (sr_nn_promote_inexact(s, d->has_y ? 2 : 1, args, "cov") < 0) return NULL;
  m = args[0], y = args[1];
  if (d->has_y && vtype(I, y)->ndim > 2) return sr_raise(I, "ValueError", "y has more than 2 dimensions");
  if (vtype(I, m)->ndim > 2) return sr_raise(I, "ValueError", "m has more than 2 dimensions");
  if (d->dtype >= 0 && sr_dtype_kind((SrDtype)d->dtype) != SR_DK_FLOAT && sr_dtype_kind((SrDtype)d->dtype) != SR_DK_COMPLEX)
    return sr_raise(I, "ValueError", "cov: dtype must be a subclass of float or complex; got dtype=%s",
                    sr_dtype_info((SrDtype)d->dtype)->name);
  SrVal *X = sr_nn_call1(s, "jax.numpy.atleast_2d", m);
  if (X && !d->rowvar && vtype(I, m)->ndim != 1) X = sr_nn_call1(s, "jax.numpy.transpose", X);
  if (!X) return NULL;
  if (vtype(I, X)->dims[0].size == 0) {
    /* array([]).reshape(0, 0) */
    int64_t z[2] = {0, 0};
    return sr_nn_call1(s, "jax.numpy.zeros", sr_nn_keep(s, sr_int_tuple(z, 2)));
  }
  if (d->has_y) {
    SrVal *ya = sr_nn_call1(s, "jax.numpy.atleast_2d", y);
    if (ya && !d->rowvar && vtype(I, ya)->dims[0].size != 1) ya = sr_nn_call1(s, "jax.numpy.transpose", ya);
    X = concat2(s, X, ya);
    if (!X) return NULL;
  }
  int64_t nvar = vtype(I, X)->dims[0].size, nobs = vtype(I, X)->dims[1].size;
  if (nobs == 0) {
    int64_t sh[2] = {nvar, nvar};
    SrVal *v[3] = {sr_nn_keep(s, sr_int_tuple(sh, nvar == 1 ? 0 : 2)), sr_nn_float(s, NAN),
                   sr_nn_keep(s, sr_dtype_val(NULL, vtype(I, X)->dtype))};
    return sr_nn_call(s, "jax.numpy.full", 3, v, 0, NULL, NULL);
  }
  int64_t ddof = d->ddof >= 0 ? d->ddof : d->bias ? 0 : 1;
  SrVal *w = NULL, *aweights = NULL;
  if (fw && !(w = cov_weights(s, fw, nobs, "fweights"))) return NULL;
  if (aw_in) {
    if (!(aweights = cov_weights(s, aw_in, nobs, "aweights"))) return NULL;
    w = w ? sr_nn_op(s, SR_OP_MUL, w, aweights) : aweights;
    if (!w) return NULL;
  }
  if (d->dtype >= 0) {
    X = sr_nn_keep(s, sr_lax_convert(I, X, (SrDtype)d->dtype, 0, NULL));
    if (w && !(w = sr_nn_keep(s, sr_lax_convert(I, w, (SrDtype)d->dtype, 0, NULL)))) return NULL;
  }
  SrVal *aw = NULL;
  if (X) {
    const char *kw[] = {"axis", "weights", "returned"};
    SrVal *kwv[] = {sr_nn_int(s, 1), w ? w : sr_none(), sr_bool(1)};
    aw = sr_nn_call(s, "jax.numpy.average", 1, &X, 3, kw, kwv);
  }
  if (!aw) return NULL;
  SrVal *avg = aw->seq.items[0];
  SrVal *wsum = sr_nn_keep(s, sr_getindex(I, aw->seq.items[1], 0)); /* w_sum[0] */
  if (!wsum) return NULL;
  SrVal *f;
  if (!w) {
    f = sr_nn_int(s, nobs - ddof);
  } else if (ddof == 0) {
    f = wsum;
  } else if (!aweights) {
    f = sr_nn_op(s, SR_OP_SUB, wsum, sr_nn_int(s, ddof));
  } else {
    /* w_sum - ddof * sum(w * aweights) / w_sum */
    SrVal *wa = sr_nn_op(s, SR_OP_MUL, w, aweights);
    SrVal *sm = wa ? sr_nn_call1(s, "jax.numpy.sum", wa) : NULL;
    SrVal *t = sm ? sr_nn_op(s, SR_OP_MUL, sr_nn_int(s, ddof), sm) : NULL;
    SrVal *q = t ? sr_nn_op(s, SR_OP_DIV, t, wsum) : NULL;
    f = q ? sr_nn_op(s, SR_OP_SUB, wsum, q) : NULL;
  }
  if (!f) return NULL;
  SrVal *k[2] = {sr_slice_new(sr_none(), sr_none(), sr_none()), sr_none()};
  SrVal *col = index_by(s, avg, 2, k);
  SrVal *Xc = col ? sr_nn_op(s, SR_OP_SUB, X, col) : NULL;
  SrVal *Xw = Xc;
  if (Xc && w) {
    SrVal *bv[2] = {w, sr_nn_int(s, 2)};
    SrVal *wb = sr_nn_call(s, "jax.lax.broadcast_to_rank", 2, bv, 0, NULL, NULL);
    Xw = wb ? sr_nn_op(s, SR_OP_MUL, Xc, wb) : NULL;
  }
  SrVal *XT = Xw ? sr_nn_call1(s, "jax.numpy.transpose", Xw) : NULL;
  SrVal *XTc = XT ? sr_nn_call1(s, "jax.numpy.conj", XT) : NULL;
  SrVal *dot = XTc ? sr_nn_call2(s, "jax.numpy.dot", Xc, XTc) : NULL;
  SrVal *q = dot ? sr_nn_call2(s, "jax.numpy.true_divide", dot, f) : NULL;
  return q ? sr_nn_call1(s, "jax.numpy.squeeze", q) : NULL;
}

static SrVal *cov_body(SrInterp *I, SrArgs *a) {
  SrNnScope s = {I, {0}, 0};
  CovData *d = sr_current_builtin(I)->data;
  int k = 1;
  SrVal *y = d->has_y ? a->v[k++] : NULL;
  SrVal *f = d->has_f ? a->v[k++] : NULL;
  SrVal *w = d->has_a ? a->v[k++] : NULL;
  return sr_nn_done(&s, cov_of(&s, d, a->v[0], y, f, w));
}

static SrVal *corrcoef_body(SrInterp *I, SrArgs *a) {
  SrNnScope s = {I, {0}, 0};
  CovData *d = sr_current_builtin(I)->data;
  CovData *cd = sr_xmalloc(sizeof *cd);
  *cd = *d;
  SrVal *c = sr_nn_keep(&s, sr_api_jit(I, "cov", cov_body, cd, d->has_y ? 2 : 1, a->v));
  if (!c) return sr_nn_done(&s, NULL);
  if (vtype(I, c)->ndim == 0) return sr_nn_done(&s, sr_nn_call2(&s, "jax.numpy.divide", c, c));
  SrVal *dg = sr_nn_call1(&s, "jax.numpy.diag", c);
  SrVal *re = dg ? sr_nn_call1(&s, "jax.numpy.real", dg) : NULL;
  SrVal *sd = re ? sr_nn_call1(&s, "jax.numpy.sqrt", re) : NULL;
  sd = sd ? sr_nn_keep(&s, sr_lax_convert(I, sd, vtype(I, c)->dtype, 0, NULL)) : NULL;
  SrVal *k1[2] = {sr_slice_new(sr_none(), sr_none(), sr_none()), sr_none()};
  SrVal *col = sd ? index_by(&s, sd, 2, k1) : (sr_unref(k1[0]), NULL);
  SrVal *c1 = col ? sr_nn_op(&s, SR_OP_DIV, c, col) : NULL;
  SrVal *k2[2] = {sr_none(), sr_slice_new(sr_none(), sr_none(), sr_none())};
  SrVal *row = c1 ? index_by(&s, sd, 2, k2) : (sr_unref(k2[1]), NULL);
  SrVal *c2 = row ? sr_nn_op(&s, SR_OP_DIV, c1, row) : NULL;
  SrVal *rp = c2 ? sr_nn_call1(&s, "jax.numpy.real", c2) : NULL;
  return sr_nn_done(&s, rp ? sr_nn_call3(&s, "jax.numpy.clip", rp, sr_nn_int(&s, -1), sr_nn_int(&s, 1)) : NULL);
}

static SrVal *cov_api(SrInterp *I, SrArgs *a, int corr) {
  SrVal *p[8];
  const char *fname = corr ? "corrcoef" : "cov";
  if (sr_args_parse(I, a, fname, corr ? "x, y=, rowvar=, dtype=" : "m, y=, rowvar=, bias=, ddof=, fweights=, aweights=, dtype=",
                    p) < 0)
    return NULL;
  SrVal *dtype = corr ? p[3] : p[7];
  CovData *d = sr_xcalloc(1, sizeof *d);
  d->has_f = !corr && given(p[5]);
  d->has_a = !corr && given(p[6]);
  d->rowvar = !p[2] || sr_val_truthy(p[2]);
  d->bias = !corr && p[3] && sr_val_truthy(p[3]);
  d->has_y = given(p[1]);
  d->ddof = -1;
  if ((!corr && given(p[4]) && sr_as_int(I, p[4], "ddof", &d->ddof) < 0) || sr_dtype_arg(I, dtype, &d->dtype, fname) < 0) {
    free(d);
    return NULL;
  }
  if (corr && d->dtype >= 0 && sr_dtype_kind((SrDtype)d->dtype) != SR_DK_FLOAT &&
      sr_dtype_kind((SrDtype)d->dtype) != SR_DK_COMPLEX) {
    sr_raise(I, "ValueError", "corrcoef: dtype must be a subclass of float or complex; got dtype=%s",
             sr_dtype_info((SrDtype)d->dtype)->name);
    free(d);
    return NULL;
  }
  SrVal *x = sr_jnp_asarray(I, p[0], -1), *y = x && d->has_y ? sr_jnp_asarray(I, p[1], -1) : NULL;
  if (!x || (d->has_y && !y)) {
    sr_unref(x);
    free(d);
    return NULL;
  }
  SrVal *args[4] = {x, y, NULL, NULL};
  int n = d->has_y ? 2 : 1, ok = 1;
  if (d->has_f) ok = (args[n++] = sr_jnp_asarray(I, p[5], -1)) != NULL;
  if (ok && d->has_a) ok = (args[n++] = sr_jnp_asarray(I, p[6], -1)) != NULL;
  SrVal *r = ok ? sr_api_jit(I, fname, corr ? corrcoef_body : cov_body, d, n, args) : (free(d), NULL);
  for (int i = 0; i < n; i++) sr_unref(args[i]);
  return r;
}

static SrVal *jnp_cov(SrInterp *I, SrArgs *a) { return cov_api(I, a, 0); }
static SrVal *jnp_corrcoef(SrInterp *I, SrArgs *a) { return cov_api(I, a, 1); }

/* ======================================================================
 * matvec, vecmat, vecdot: jnp.vectorize with a signature (vectorize.py):
 * the batch dims of size 1 squeezed, one vmap a batch dim (in_axes None
 * where an argument's is 1), the dims no argument has expanded after
 * ====================================================================== */

static SrVal *vectorize2(SrNnScope *s, SrVal *fn, SrVal **args, const int *ncore) {
  SrInterp *I = s->I;
  int64_t nc[2][SR_MAX_RANK];
  int nn[2], nb = 0;
  for (int i = 0; i < 2; i++) {
    const SrType *t = vtype(I, args[i]);
    if (t->ndim < ncore[i])
      return sr_raise(I, "ValueError", "input with shape %s does not have enough dimensions for all core dimensions %s",
                      sr_type_short(t), i == 0 ? "of the first argument" : "of the second argument");
    nn[i] = t->ndim - ncore[i];
    for (int k = 0; k < nn[i]; k++) nc[i][k] = t->dims[k].size;
    if (nn[i] > nb) nb = nn[i];
  }
  int64_t bshape[SR_MAX_RANK], filled[2][SR_MAX_RANK];
  for (int k = 0; k < nb; k++) bshape[k] = 1;
  for (int i = 0; i < 2; i++)
    for (int k = 0; k < nb; k++) {
      int j = k - (nb - nn[i]);
      filled[i][k] = j < 0 ? 1 : nc[i][j];
      if (filled[i][k] != 1) {
        if (bshape[k] != 1 && bshape[k] != filled[i][k]) return sr_raise(I, "ValueError", "incompatible shapes for broadcasting");
        bshape[k] = filled[i][k];
      }
    }
  SrVal *sq[2];
  for (int i = 0; i < 2; i++) {
    int64_t ax[SR_MAX_RANK];
    int n = 0;
    for (int k = 0; k < nn[i]; k++)
      if (nc[i][k] == 1) ax[n++] = k;
    if (n == 0) {
      sq[i] = args[i];
      continue;
    }
    SrVal *v[2] = {args[i], sr_nn_keep(s, sr_int_tuple(ax, n))};
    const char *kw[] = {"axis"};
    if (!(sq[i] = sr_nn_call(s, "jax.numpy.squeeze", 1, v, 1, kw, &v[1]))) return NULL;
  }
  SrVal *f = fn, *vmap = sr_lookup_qualname("jax.vmap");
  int64_t expand[SR_MAX_RANK];
  int ne = 0;
  for (int negdim = 0; negdim < nb; negdim++) {
    int k = nb - 1 - negdim;
    if (filled[0][k] == 1 && filled[1][k] == 1) {
      expand[ne++] = k;
      continue;
    }
    SrVal *ia[2] = {filled[0][k] == 1 ? sr_none() : sr_int(NULL, 0), filled[1][k] == 1 ? sr_none() : sr_int(NULL, 0)};
    SrVal *inax = sr_nn_keep(s, sr_tuple(NULL, 2, ia));
    SrVal *v[2] = {f, inax};
    SrArgs va = {2, v, 0, NULL, NULL, NULL};
    if (!(f = sr_nn_keep(s, sr_call(I, vmap, &va)))) return NULL;
  }
  SrArgs ca = {2, sq, 0, NULL, NULL, NULL};
  SrVal *r = sr_nn_keep(s, sr_call(I, f, &ca));
  if (!r || ne == 0) return r;
  /* dims_to_expand were collected from the last; expand_dims sorts them */
  SrVal *v[2] = {r, sr_nn_keep(s, sr_int_tuple(expand, ne))};
  return sr_nn_call(s, "jax.numpy.expand_dims", 2, v, 0, NULL, NULL);
}

static SrVal *matvec_body(SrInterp *I, SrArgs *a) {
  SrNnScope s = {I, {0}, 0};
  int ncore[2] = {2, 1};
  return sr_nn_done(&s, vectorize2(&s, sr_lookup_qualname("jax.numpy.matmul"), a->v, ncore));
}

static SrVal *vecmat_body(SrInterp *I, SrArgs *a) {
  SrNnScope s = {I, {0}, 0};
  int ncore[2] = {1, 2};
  SrVal *v[2] = {sr_nn_call1(&s, "jax.numpy.conj", a->v[0]), a->v[1]};
  return sr_nn_done(&s, v[0] ? vectorize2(&s, sr_lookup_qualname("jax.numpy.matmul"), v, ncore) : NULL);
}

static SrVal *mv_api(SrInterp *I, SrArgs *a, int vm) {
  SrVal *p[2];
  if (sr_args_parse(I, a, vm ? "vecmat" : "matvec", "x1, x2", p) < 0) return NULL;
  SrVal *x = sr_jnp_asarray(I, p[0], -1), *y = x ? sr_jnp_asarray(I, p[1], -1) : NULL;
  SrVal *args[2] = {x, y};
  SrVal *r = y ? sr_api_jit(I, vm ? "vecmat" : "matvec", vm ? vecmat_body : matvec_body, NULL, 2, args) : NULL;
  sr_unref(x);
  sr_unref(y);
  return r;
}

static SrVal *jnp_matvec(SrInterp *I, SrArgs *a) { return mv_api(I, a, 0); }
static SrVal *jnp_vecmat(SrInterp *I, SrArgs *a) { return mv_api(I, a, 1); }

typedef struct VdotKw {
  SrVal *precision, *pref;
} VdotKw;

static void vdot_kw_free(void *p) {
  VdotKw *k = p;
  sr_unref(k->precision);
  sr_unref(k->pref);
  free(k);
}

/* partial(vdot, precision=, preferred_element_type=) */
static SrVal *vdot_partial(SrInterp *I, SrArgs *a) {
  VdotKw *k = sr_current_builtin(I)->data;
  SrNnScope s = {I, {0}, 0};
  const char *kw[] = {"precision", "preferred_element_type"};
  SrVal *kwv[] = {k->precision, k->pref};
  return sr_nn_done(&s, sr_nn_call(&s, "jax.numpy.vdot", a->n, a->v, 2, kw, kwv));
}

/* jnp.vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
   vectorize(partial(vdot, ...), signature='(n),(n)->()') over the axis moved last (not a jit) */
static SrVal *jnp_vecdot(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "vecdot", "x1, x2, *, axis=, precision=, preferred_element_type=", p) < 0) return NULL;
  int64_t axis = -1;
  if (given(p[2]) && sr_as_int(I, p[2], "axis", &axis) < 0) return NULL;
  SrNnScope s = {I, {0}, 0};
  SrVal *x = sr_nn_keep(&s, sr_jnp_asarray(I, p[0], -1));
  SrVal *y = x ? sr_nn_keep(&s, sr_jnp_asarray(I, p[1], -1)) : NULL;
  if (!y) return sr_nn_done(&s, NULL);
  const SrType *tx = vtype(I, x), *ty = vtype(I, y);
  int64_t ax = axis < 0 ? axis + tx->ndim : axis, ay = axis < 0 ? axis + ty->ndim : axis;
  if (ax < 0 || ax >= tx->ndim || ay < 0 || ay >= ty->ndim)
    return sr_nn_done(&s, sr_raise(I, "IndexError", "tuple index out of range"));
  if (tx->dims[ax].size != ty->dims[ay].size) {
    SrBuf b1 = SR_BUF_INIT, b2 = SR_BUF_INIT;
    sr_shape_str(&b1, tx);
    sr_shape_str(&b2, ty);
    sr_raise(I, "ValueError", "axes must match; got shapes %s and %s with axis=%lld", sr_buf_str(&b1), sr_buf_str(&b2),
             (long long)axis);
    sr_buf_free(&b1);
    sr_buf_free(&b2);
    return sr_nn_done(&s, NULL);
  }
  SrVal *v[2] = {to_last(&s, x, axis), NULL};
  v[1] = v[0] ? to_last(&s, y, axis) : NULL;
  if (!v[1]) return sr_nn_done(&s, NULL);
  VdotKw *k = sr_xcalloc(1, sizeof *k);
  k->precision = given(p[3]) ? sr_ref(p[3]) : NULL;
  k->pref = given(p[4]) ? sr_ref(p[4]) : NULL;
  SrVal *fn = sr_nn_keep(&s, sr_builtin_with("vdot", vdot_partial, k, vdot_kw_free));
  int ncore[2] = {1, 1};
  return sr_nn_done(&s, vectorize2(&s, fn, v, ncore));
}

void sr_jnp_apiC_init(void) {
  static const struct {
    const char *name;
    SrBuiltinFn fn;
    const char *doc;
  } fns[] = {
      {"jax.numpy.tensordot jax.numpy.linalg.tensordot", jnp_tensordot,
       "tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None, out_sharding=None): a dot_general over the axes axes names"},
      {"jax.numpy.vdot", jnp_vdot,
       "vdot(a, b, *, precision=None, preferred_element_type=None): the dot product of conj(a) and b, flattened"},
      {"jax.numpy.ediff1d", jnp_ediff1d,
       "ediff1d(ary, to_end=None, to_begin=None): the differences of consecutive elements of the flattened array"},
      {"jax.numpy.trapezoid", jnp_trapezoid,
       "trapezoid(y, x=None, dx=1.0, axis=-1): the integral of y along axis by the trapezoidal rule"},
      {"jax.numpy.isin", jnp_isin,
       "isin(element, test_elements, assume_unique=False, invert=False, *, method='auto'): whether each element is in test_elements"},
      {"jax.numpy.union1d", jnp_union1d,
       "union1d(ar1, ar2, *, size=None, fill_value=None): the sorted unique values of both arrays"},
      {"jax.numpy.setdiff1d", jnp_setdiff1d,
       "setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None): the unique values of ar1 not in ar2"},
      {"jax.numpy.setxor1d", jnp_setxor1d,
       "setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None): the sorted values in exactly one of the arrays"},
      {"jax.numpy.intersect1d", jnp_intersect1d,
       "intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None, fill_value=None): the sorted values in both arrays"},
      {"jax.numpy.cross", jnp_cross,
       "cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None): the cross product of 3-vectors (or 2-vectors)"},
      {"jax.numpy.histogram_bin_edges", jnp_histogram_bin_edges,
       "histogram_bin_edges(a, bins=10, range=None, weights=None): the edges of histogram's bins"},
      {"jax.numpy.histogram", jnp_histogram,
       "histogram(a, bins=10, range=None, weights=None, density=None): the counts in each bin and the bin edges"},
      {"jax.numpy.cov", jnp_cov,
       "cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, dtype=None): the covariance matrix"},
      {"jax.numpy.corrcoef", jnp_corrcoef,
       "corrcoef(x, y=None, rowvar=True, dtype=None): the Pearson correlation coefficients"},
      {"jax.numpy.matvec", jnp_matvec, "matvec(x1, x2, /): the batched matrix-vector product"},
      {"jax.numpy.vecmat", jnp_vecmat, "vecmat(x1, x2, /): the batched conjugate vector-matrix product"},
      {"jax.numpy.vecdot jax.numpy.linalg.vecdot", jnp_vecdot,
       "vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None): the conjugate dot products along axis, batched"},
  };
  for (size_t i = 0; i < sizeof fns / sizeof *fns; i++) sr_def(fns[i].name, fns[i].fn, fns[i].doc);
}
