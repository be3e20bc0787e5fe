/* numpy_linalg.c: jax.numpy.trace, diagonal, diag, nan_to_num and inner
 * (numpy/lax_numpy.py), binding what JAX's bind, in the jits JAX's
 * jit-decorated functions are.  Registered by sr_jnp_linalg_init (jax.h). */
#include <stdlib.h>
#include <string.h>

#include "jax/jax.h"
#include "jax/lax.h"
#include "jax/numpy.h"
#include "py/objects.h"
#include "util/intern.h"

static const SrType *vtype(SrInterp *I, SrVal *v) { return sr_value_type(I, v); }
static SrVal *arr(SrInterp *I, SrVal *v) { return sr_jnp_asarray(I, v, -1); }
static int given(SrVal *v) { return v && v->kind != SR_V_NONE; }

/* the jax.numpy function QUALNAME called with N positional arguments and
   the keyword arguments KW/KWV */
static SrVal *callq(SrInterp *I, const char *qualname, int n, SrVal **v, int nkw, const char **kw, SrVal **kwv) {
  SrVal *f = sr_lookup_qualname(qualname);
  if (!f) return sr_raise(I, "RuntimeError", "internal error: no built-in %s", qualname);
  SrArgs a = {n, v, nkw, kw, kwv, NULL};
  return sr_call(I, f, &a);
}

/* moveaxis(x, (a1, a2), (-2, -1)): one transpose, none for the identity */
static SrVal *axes_last(SrInterp *I, SrVal *x, int64_t a1, int64_t a2) {
  const SrType *t = vtype(I, x);
  int64_t perm[SR_MAX_RANK];
  int k = 0;
  for (int i = 0; i < t->ndim; i++)
    if (i != a1 && i != a2) perm[k++] = i;
  perm[k++] = a1;
  perm[k++] = a2;
  return sr_lax_transpose(I, x, perm, t->ndim);
}

/* the static params of jit trace / diagonal */
typedef struct {
  int64_t offset, axis1, axis2;
  int dtype;
} DiagParams;

/* the body of jit trace(a, offset): where(eye(n1, n2, k=offset,
   dtype=bool), a, zeros_like(a)) summed over the last two axes */
static SrVal *trace_body(SrInterp *I, SrArgs *a) {
  DiagParams *dp = sr_current_builtin(I)->data;
  const SrType *t = vtype(I, a->v[0]);
  SrVal *x = axes_last(I, a->v[0], dp->axis1, dp->axis2);
  if (!x) return NULL;
  SrVal *ev[2] = {sr_int(NULL, t->dims[dp->axis1].size), sr_int(NULL, t->dims[dp->axis2].size)};
  const char *ekw[2] = {sr_intern_cstr("k"), sr_intern_cstr("dtype")};
  SrVal *ekv[2] = {a->v[1], sr_dtype_val(NULL, SR_BOOL)};
  SrVal *mask = callq(I, "jax.numpy.eye", 2, ev, 2, ekw, ekv);
  SrVal *z = mask ? callq(I, "jax.numpy.zeros_like", 1, &x, 0, NULL, NULL) : NULL;
  SrVal *wv[3] = {mask, x, z};
  SrVal *w = z ? callq(I, "jax.numpy.where", 3, wv, 0, NULL, NULL) : NULL;
  SrVal *ax[2] = {sr_int(NULL, -2), sr_int(NULL, -1)};
  const char *skw[2] = {sr_intern_cstr("axis"), sr_intern_cstr("dtype")};
  SrVal *skv[2] = {sr_tuple(NULL, 2, ax), dp->dtype >= 0 ? sr_dtype_val(NULL, (SrDtype)dp->dtype) : sr_none()};
  SrVal *r = w ? callq(I, "jax.numpy.sum", 1, &w, 2, skw, skv) : NULL;
  SrVal *tmp[] = {x, ev[0], ev[1], ekv[1], mask, z, w, skv[0], skv[1]};
  for (size_t i = 0; i < sizeof tmp / sizeof *tmp; i++) sr_unref(tmp[i]);
  return r;
}

/* canonical axis1/axis2 of A's rank into DP, JAX's errors */
static int diag_axes(SrInterp *I, SrVal *p1, SrVal *p2, int nd, DiagParams *dp) {
  int64_t a1 = 0, a2 = 1;
  if ((p1 && sr_as_int(I, p1, "axis1", &a1) < 0) || (p2 && sr_as_int(I, p2, "axis2", &a2) < 0)) return -1;
  if (sr_api_axis(I, a1, nd, &dp->axis1) < 0 || sr_api_axis(I, a2, nd, &dp->axis2) < 0) return -1;
  if (dp->axis1 == dp->axis2) {
    sr_raise(I, "ValueError", "axis1 and axis2 can not be same. axis1=%lld and axis2=%lld", (long long)a1,
             (long long)a2);
    return -1;
  }
  return 0;
}

/* jnp.trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None) */
static SrVal *jnp_trace(SrInterp *I, SrArgs *a) {
  SrVal *p[6];
  if (sr_args_parse(I, a, "trace", "a, offset=, axis1=, axis2=, dtype=, out=", p) < 0) return NULL;
  if (given(p[5])) return sr_raise(I, "NotImplementedError", "The 'out' argument to jnp.trace is not supported.");
  SrVal *x = arr(I, p[0]);
  if (!x) return NULL;
  DiagParams *dp = sr_xcalloc(1, sizeof *dp);
  SrVal *args[2] = {x, p[1] ? sr_ref(p[1]) : sr_int(NULL, 0)};
  SrVal *r = NULL;
  if (diag_axes(I, p[2], p[3], vtype(I, x)->ndim, dp) == 0 && sr_dtype_arg(I, p[4], &dp->dtype, "trace") == 0) {
    r = sr_api_jit(I, "trace", trace_body, dp, 2, args);
    dp = NULL;
  }
  free(dp);
  sr_unref(args[0]);
  sr_unref(args[1]);
  return r;
}

/* jnp.arange(start, stop) */
static SrVal *arange2(SrInterp *I, int64_t start, int64_t stop) {
  SrVal *v[2] = {sr_int(NULL, start), sr_int(NULL, stop)};
  SrVal *r = callq(I, "jax.numpy.arange", 2, v, 0, NULL, NULL);
  sr_unref(v[0]);
  sr_unref(v[1]);
  return r;
}

/* _default_diag: a[..., i, j] (a[..., j, i] for a negative offset) after
   moving axis1 and axis2 last */
static SrVal *diagonal_of(SrInterp *I, SrVal *a, const DiagParams *dp) {
  const SrType *t = vtype(I, a);
  int64_t off = dp->offset, n1 = t->dims[dp->axis1].size, n2 = t->dims[dp->axis2].size;
  int64_t size = n1 + (off < 0 ? off : 0), s2 = n2 - (off > 0 ? off : 0);
  if (s2 < size) size = s2;
  if (size < 0) size = 0;
  int64_t ao = off < 0 ? -off : off;
  SrVal *x = axes_last(I, a, dp->axis1, dp->axis2);
  SrVal *i = x ? arange2(I, 0, size) : NULL, *j = i ? arange2(I, ao, ao + size) : NULL;
  SrVal *r = NULL;
  if (j) {
    SrVal *k[3] = {sr_word(NULL, "Ellipsis", 8), sr_ref(off >= 0 ? i : j), sr_ref(off >= 0 ? j : i)};
    SrVal *key = sr_tuple(NULL, 3, k);
    r = sr_jnp_index_gather(I, x, key);
    sr_unref(key);
  }
  sr_unref(x);
  sr_unref(i);
  sr_unref(j);
  return r;
}

static SrVal *diagonal_body(SrInterp *I, SrArgs *a) {
  return diagonal_of(I, a->v[0], sr_current_builtin(I)->data);
}

/* jnp.diagonal(a, offset=0, axis1=0, axis2=1): jit[name=diagonal] */
static SrVal *jnp_diagonal(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "diagonal", "a, offset=, axis1=, axis2=", p) < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  if (!x) return NULL;
  DiagParams *dp = sr_xcalloc(1, sizeof *dp);
  SrVal *r = NULL;
  if (vtype(I, x)->ndim < 2)
    sr_raise(I, "ValueError", "diagonal requires an array of at least two dimensions.");
  else if ((!p[1] || sr_as_int(I, p[1], "offset", &dp->offset) == 0) &&
           diag_axes(I, p[2], p[3], vtype(I, x)->ndim, dp) == 0) {
    r = sr_api_jit(I, "diagonal", diagonal_body, dp, 1, &x);
    dp = NULL;
  }
  free(dp);
  sr_unref(x);
  return r;
}

/* the body of jit _diag (static k): a 1-D v padded and placed on diagonal
   k by where(eye(n, k=k, dtype=bool), v[:, None], 0); a 2-D v's
   diagonal(v, offset=k) */
static SrVal *diag_body(SrInterp *I, SrArgs *a) {
  int64_t k = *(int64_t *)sr_current_builtin(I)->data;
  SrVal *v = a->v[0];
  const SrType *t = vtype(I, v);
  if (t->ndim == 2) {
    SrVal *fn = sr_lookup_qualname("jax.numpy.diagonal");
    SrVal *off = sr_int(NULL, k);
    const char *kw[1] = {sr_intern_cstr("offset")};
    SrArgs da = {1, &v, 1, kw, &off, NULL};
    SrVal *r = fn ? sr_call(I, fn, &da) : sr_raise(I, "RuntimeError", "internal error: no jax.numpy.diagonal");
    sr_unref(off);
    return r;
  }
  if (t->ndim != 1) return sr_raise(I, "ValueError", "diag input must be 1d or 2d");
  int64_t ak = k < 0 ? -k : k, n = t->dims[0].size + ak;
  SrVal *zf = sr_int(NULL, 0);
  SrVal *zero = sr_lax_full(I, NULL, 0, zf, t->dtype, NULL);
  int64_t cfg[3] = {k < 0 ? -k : 0, k > 0 ? k : 0, 0};
  SrVal *pv = zero ? sr_lax_pad(I, v, zero, cfg, 1) : NULL;
  int64_t one = 1;
  SrVal *col = pv ? sr_lax_expand_dims(I, pv, &one, 1) : NULL;
  SrVal *ev[1] = {sr_int(NULL, n)};
  const char *ekw[2] = {sr_intern_cstr("k"), sr_intern_cstr("dtype")};
  SrVal *ekv[2] = {sr_int(NULL, k), sr_dtype_val(NULL, SR_BOOL)};
  SrVal *mask = col ? callq(I, "jax.numpy.eye", 1, ev, 2, ekw, ekv) : NULL;
  SrVal *zero2 = mask ? sr_lax_full(I, NULL, 0, zf, t->dtype, NULL) : NULL;
  SrVal *wv[3] = {mask, col, zero2};
  SrVal *r = zero2 ? callq(I, "jax.numpy.where", 3, wv, 0, NULL, NULL) : NULL;
  SrVal *tmp[] = {zf, zero, pv, col, ev[0], ekv[0], ekv[1], mask, zero2};
  for (size_t i = 0; i < sizeof tmp / sizeof *tmp; i++) sr_unref(tmp[i]);
  return r;
}

/* jnp.diag(v, k=0) */
static SrVal *jnp_diag(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "diag", "v, k=", p) < 0) return NULL;
  int64_t *k = sr_xcalloc(1, sizeof *k);
  SrVal *x = p[1] && sr_as_int(I, p[1], "k", k) < 0 ? NULL : arr(I, p[0]);
  if (!x) {
    free(k);
    return NULL;
  }
  SrVal *r = sr_api_jit(I, "_diag", diag_body, k, 1, &x);
  sr_unref(x);
  return r;
}

/* finfo(dt).max of the float dtypes nan_to_num's defaults cover; 0 for
   others */
static double float_max(SrDtype dt) {
  switch (dt) {
  case SR_F16: return 65504.0;
  case SR_BF16: return 3.3895313892515355e38;
  case SR_F32: return 3.4028234663852886e38;
  case SR_F64: return 1.7976931348623157e308;
  default: return 0;
  }
}

/* which of nan_to_num's nan, neginf, posinf were given (in that order,
   the order of jit's sorted keyword leaves after x) */
typedef struct {
  int nan, neginf, posinf;
} NanParams;

/* asarray(v, dtype=dt) == where (v a tracer or a Python number) */
static SrVal *where_const(SrInterp *I, SrVal *pred, SrVal *v, SrDtype dt, SrVal *other) {
  SrVal *c = pred ? sr_jnp_asarray(I, v, dt) : NULL;
  SrVal *wv[3] = {pred, c, other};
  SrVal *r = c ? callq(I, "jax.numpy.where", 3, wv, 0, NULL, NULL) : NULL;
  sr_unref(c);
  sr_unref(pred);
  return r;
}

/* the body of jit nan_to_num: where(isnan(x), nan, x), then where(out ==
   inf, posinf, out) and where(out == -inf, neginf, out) */
static SrVal *nan_to_num_body(SrInterp *I, SrArgs *a) {
  NanParams *np = sr_current_builtin(I)->data;
  SrVal *x = a->v[0];
  SrDtype dt = vtype(I, x)->dtype;
  if (!sr_dtype_is_inexact(dt)) return sr_ref(x);
  if (!sr_dtype_is_float(dt) || float_max(dt) == 0)
    return sr_raise(I, "NotImplementedError", "jnp.nan_to_num of %s is not supported", sr_dtype_name(dt));
  int k = 1;
  SrVal *nan = np->nan ? sr_ref(a->v[k++]) : sr_float(NULL, 0.0);
  SrVal *neg = np->neginf ? sr_ref(a->v[k++]) : sr_float(NULL, -float_max(dt));
  SrVal *pos = np->posinf ? sr_ref(a->v[k++]) : sr_float(NULL, float_max(dt));
  SrVal *out = where_const(I, sr_lax_binary(I, SR_P_ne, x, x), nan, dt, x);
  SrVal *inf = sr_float(NULL, 1.0 / 0.0), *ninf = sr_float(NULL, -1.0 / 0.0);
  SrVal *ic = out ? sr_jnp_asarray(I, inf, dt) : NULL;
  SrVal *o2 = ic ? where_const(I, sr_lax_binary(I, SR_P_eq, out, ic), pos, dt, out) : NULL;
  SrVal *nc = o2 ? sr_jnp_asarray(I, ninf, dt) : NULL;
  SrVal *o3 = nc ? where_const(I, sr_lax_binary(I, SR_P_eq, o2, nc), neg, dt, o2) : NULL;
  SrVal *tmp[] = {nan, neg, pos, out, inf, ninf, ic, o2, nc};
  for (size_t i = 0; i < sizeof tmp / sizeof *tmp; i++) sr_unref(tmp[i]);
  return o3;
}

/* jnp.nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
   jit[name=nan_to_num] over x and the numbers given */
static SrVal *jnp_nan_to_num(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "nan_to_num", "x, copy=, nan=, posinf=, neginf=", p) < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  if (!x) return NULL;
  NanParams *np = sr_xcalloc(1, sizeof *np);
  SrVal *args[4] = {x};
  int n = 1;
  if ((np->nan = given(p[2]))) args[n++] = p[2];
  if ((np->neginf = given(p[4]))) args[n++] = p[4];
  if ((np->posinf = given(p[3]))) args[n++] = p[3];
  SrVal *r = sr_api_jit(I, "nan_to_num", nan_to_num_body, np, n, args);
  sr_unref(x);
  return r;
}

/* jnp.inner(a, b, *, precision=None, preferred_element_type=None): an
   inlined jit: a * b for a scalar, else tensordot(a, b, (-1, -1)): a
   dot_general over the last axes, converted to the result dtype */
static SrVal *jnp_inner(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "inner", "a, b, *, precision=, preferred_element_type=", p) < 0) return NULL;
  SrVal *x = arr(I, p[0]), *y = x ? arr(I, p[1]) : NULL, *r = NULL;
  int pt;
  if (!y || sr_dtype_arg(I, p[3], &pt, "inner") < 0) goto done;
  const SrType *tx = vtype(I, x), *ty = vtype(I, y);
  if (tx->ndim == 0 || ty->ndim == 0) {
    SrVal *xy[2] = {sr_ref(x), sr_ref(y)};
    for (int i = 0; i < 2 && pt >= 0; i++) {
      SrVal *c = xy[i] ? sr_lax_convert(I, xy[i], (SrDtype)pt, 0, NULL) : NULL;
      sr_unref(xy[i]);
      xy[i] = c;
    }
    if (xy[0] && xy[1]) r = callq(I, "jax.numpy.multiply", 2, xy, 0, NULL, NULL);
    sr_unref(xy[0]);
    sr_unref(xy[1]);
    goto done;
  }
  SrDtype pref;
  int weak = 0;
  if (pt >= 0) {
    pref = (SrDtype)pt;
  } else {
    SrVal *xs[2] = {x, y};
    pref = sr_jnp_result_dtype(I, 2, xs, &weak);
  }
  int64_t lc = tx->ndim - 1, rc = ty->ndim - 1;
  SrVal *d = sr_lax_dot_general(I, x, y, &lc, 1, &rc, 1, NULL, 0, NULL, 0, given(p[2]) ? p[2] : NULL, pref, NULL);
  if (d) r = sr_lax_convert(I, d, pref, weak, NULL);
  sr_unref(d);
done:
  sr_unref(x);
  sr_unref(y);
  return r;
}

void sr_jnp_linalg_init(void) {
  static const struct {
    const char *names;
    SrBuiltinFn fn;
    const char *doc;
  } defs[] = {
      {"jax.numpy.trace", jnp_trace,
       "trace(a, offset=0, axis1=0, axis2=1, dtype=None): jit[name=trace], sum of diagonal offset"},
      {"jax.numpy.diagonal", jnp_diagonal,
       "diagonal(a, offset=0, axis1=0, axis2=1): jit[name=diagonal], the diagonal by a gather"},
      {"jax.numpy.diag", jnp_diag, "diag(v, k=0): jit[name=_diag], a 1-D v on diagonal k, a 2-D v's diagonal k"},
      {"jax.numpy.nan_to_num", jnp_nan_to_num,
       "nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None): jit[name=nan_to_num], NaN and infinities replaced"},
      {"jax.numpy.inner", jnp_inner,
       "inner(a, b, *, precision=None, preferred_element_type=None): a dot_general over the last axes"},
      {NULL, NULL, NULL},
  };
  for (int i = 0; defs[i].names; i++) sr_def(defs[i].names, defs[i].fn, defs[i].doc);
}
