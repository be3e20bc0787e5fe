/* test_util.c: jax.test_util's check_grads, check_jvp and check_vjp, as
 * JAX's public_test_util.py has them: the JVP checked against central
 * differences in one direction drawn from np.random.RandomState(0), the
 * VJP through the inner products <t, vjp(ct)> and <jvp(t), ct>, both up to
 * `order` (the derivatives of jvp and of the pullback), compared with
 * np.testing.assert_allclose under the per-dtype gradient tolerances
 * (scaled by the size), its AssertionError carrying 'JVP primal',
 * 'VJP of JVP cotangent projection' and the like.  The host arithmetic is
 * numpy's built-ins, called as the Python does. */
#include <stdlib.h>
#include <string.h>

#include "core/jaxstate.h"
#include "jax/jax.h"
#include "jax/np_host.h"
#include "jax/tree_util.h"
#include "py/objects.h"
#include "util/intern.h"

#define EPS 1e-4

static const char *bcstr(SrBuf *b) { return b->p ? b->p : ""; }
static void breset(SrBuf *b) {
  b->len = 0;
  if (b->p) b->p[0] = 0;
}

static SrVal *callq(SrInterp *I, const char *qn, int n, SrVal **v, int nkw, const char **kw, SrVal **kwv) {
  SrVal *f = sr_lookup_qualname(qn);
  if (!f) return sr_raise(I, "RuntimeError", "internal error: no built-in %s", qn);
  const char *ikw[4];
  for (int i = 0; i < nkw && i < 4; i++) ikw[i] = sr_intern_cstr(kw[i]);
  SrArgs a = {n, v, nkw, ikw, kwv, NULL};
  return sr_call(I, f, &a);
}

static SrVal *call_fn(SrInterp *I, SrVal *f, int n, SrVal **v) {
  SrArgs a = {n, v, 0, NULL, NULL, NULL};
  return sr_call(I, f, &a);
}

static SrVal *call_method(SrInterp *I, SrVal *obj, const char *name, int n, SrVal **v) {
  SrVal *m = sr_getattr(I, obj, name);
  if (!m) return NULL;
  SrVal *r = call_fn(I, m, n, v);
  sr_unref(m);
  return r;
}

static int is_pyscalar(const SrVal *v) {
  return v->kind == SR_V_BOOL || v->kind == SR_V_INT || v->kind == SR_V_FLOAT || v->kind == SR_V_COMPLEX;
}

/* r (stolen) as a leaf like x: a Python scalar for a Python scalar x */
static SrVal *like_leaf(SrInterp *I, SrVal *r, const SrVal *x) {
  if (!r || !is_pyscalar(x)) return r;
  SrVal *s = call_method(I, r, "item", 0, NULL);
  sr_unref(r);
  return s;
}

static SrDtype nd_dtype(SrVal *nd) { return sr_ndarray_array(nd)->type->dtype; }

/* _dtype(x) as an ndarray's dtype object (a new reference) and its code */
static SrVal *dtype_of(SrInterp *I, SrVal *x, SrDtype *dt) {
  SrVal *nd = sr_np_asarray(I, x, -1);
  if (!nd) return NULL;
  if (dt) *dt = nd_dtype(nd);
  SrVal *d = sr_getattr(I, nd, "dtype");
  sr_unref(nd);
  return d;
}

static SrDtype canon(SrInterp *I, SrDtype d) {
  if (I->jax->enable_x64) return d;
  return d == SR_F64 ? SR_F32 : d == SR_C128 ? SR_C64 : d == SR_I64 ? SR_I32 : d == SR_U64 ? SR_U32 : d;
}

/* ---- tolerances: a number, or default_gradient_tolerance with the
   caller's dict over it (a dtype outside both: default_tolerance's) ---- */

typedef struct Tol {
  SrVal *v; /* None, a number or a dict (borrowed) */
} Tol;

static double default_grad_tol(SrDtype d, int *found) {
  *found = 1;
  switch (d) {
  case SR_F4_E2M1FN: case SR_F8_E8M0FNU: return 1e0;
  case SR_F8_E3M4: case SR_F8_E4M3: case SR_F8_E4M3B11FNUZ: case SR_F8_E4M3FN: case SR_F8_E4M3FNUZ:
  case SR_F8_E5M2: case SR_F8_E5M2FNUZ: return 1e-1;
  case SR_BF16: return 1e-1;
  case SR_F16: return 1e-2;
  case SR_F32: return 2e-3;
  case SR_F64: return 1e-5;
  case SR_C64: return 1e-3;
  case SR_C128: return 1e-5;
  default: *found = 0; return 0;
  }
}

static double default_tol(SrDtype d) {
  switch (d) {
  case SR_F4_E2M1FN: case SR_F8_E8M0FNU: return 1e0;
  case SR_F8_E3M4: case SR_F8_E4M3: case SR_F8_E4M3B11FNUZ: case SR_F8_E4M3FN: case SR_F8_E4M3FNUZ:
  case SR_F8_E5M2: case SR_F8_E5M2FNUZ: return 1e-1;
  case SR_BF16: return 1e-2;
  case SR_F16: return 1e-3;
  case SR_F32: case SR_C64: return 1e-6;
  case SR_F64: case SR_C128: return 1e-15;
  default: return 0;
  }
}

static int tolerance(SrInterp *I, Tol t, SrDtype d, double *out) {
  if (t.v && t.v->kind != SR_V_NONE && t.v->kind != SR_V_DICT) return sr_as_float(I, t.v, "tol", out);
  d = canon(I, d);
  if (t.v && t.v->kind == SR_V_DICT) {
    for (int i = 0; i < t.v->dict.n; i++) {
      SrVal *sh = sr_tuple(NULL, 0, NULL);
      const char *kw[] = {"dtype"};
      SrVal *z = callq(I, "numpy.zeros", 1, &sh, 1, kw, &t.v->dict.keys[i]);
      sr_unref(sh);
      if (!z) return -1;
      SrDtype kd = nd_dtype(z); /* the caller's keys as np.dtype makes them */
      sr_unref(z);
      if (kd == d) return sr_as_float(I, t.v->dict.vals[i], "tol", out);
    }
  }
  int found;
  *out = default_grad_tol(d, &found);
  if (!found) *out = default_tol(d);
  return 0;
}

/* ---- tree arithmetic (tree_map over leaves of xs and ys) ---- */

typedef SrVal *(*LeafFn)(SrInterp *I, SrVal *x, SrVal *y, void *ctx);

static SrVal *tree_map2(SrInterp *I, SrVal *xs, SrVal *ys, LeafFn fn, void *ctx) {
  SrVal *lx = sr_pytree_flatten_any(I, xs);
  if (!lx) return NULL;
  SrVal *ly = ys ? sr_pytree_flatten_any(I, ys) : NULL;
  if (ys && !ly) { sr_unref(lx); return NULL; }
  if (ly && ly->seq.n != lx->seq.n) {
    sr_unref(lx);
    sr_unref(ly);
    return sr_raise(I, "ValueError", "Tree structures do not match");
  }
  SrVal *out = sr_seq(NULL, SR_V_LIST, 0);
  for (int i = 0; i < lx->seq.n; i++) {
    SrVal *r = fn(I, lx->seq.items[i], ly ? ly->seq.items[i] : NULL, ctx);
    if (!r) { sr_unref(lx); sr_unref(ly); sr_unref(out); return NULL; }
    sr_seq_push(NULL, out, r);
  }
  SrVal *t = sr_pytree_unflatten(xs, out);
  sr_unref(lx);
  sr_unref(ly);
  sr_unref(out);
  return t;
}

/* np.array(v, dtype=d), .item() where keep_scalar */
static SrVal *as_dtype(SrInterp *I, SrVal *v, SrVal *d, int item) {
  const char *kw[] = {"dtype"};
  SrVal *r = callq(I, "numpy.array", 1, &v, 1, kw, &d);
  if (r && item) {
    SrVal *s = call_method(I, r, "item", 0, NULL);
    sr_unref(r);
    r = s;
  }
  return r;
}

/* _preserve_input_types(operator.add / operator.sub / np.conj) */
static SrVal *leaf_arith(SrInterp *I, SrVal *x, SrVal *y, void *ctx) {
  const char *op = ctx;
  SrVal *d = dtype_of(I, x, NULL);
  if (!d) return NULL;
  SrVal *ax = sr_np_asarray(I, x, -1), *ay = y ? sr_np_asarray(I, y, -1) : NULL, *r = NULL;
  if (ax && (!y || ay)) {
    SrVal *v[] = {ax, ay};
    SrVal *t = callq(I, op, y ? 2 : 1, v, 0, NULL, NULL);
    if (t) r = as_dtype(I, t, d, is_pyscalar(x) && (!y || is_pyscalar(y)));
    sr_unref(t);
  }
  sr_unref(ax);
  sr_unref(ay);
  sr_unref(d);
  return r;
}

static SrVal *tree_add(SrInterp *I, SrVal *xs, SrVal *ys) { return tree_map2(I, xs, ys, leaf_arith, "numpy.add"); }
static SrVal *tree_sub(SrInterp *I, SrVal *xs, SrVal *ys) {
  return tree_map2(I, xs, ys, leaf_arith, "numpy.subtract");
}
static SrVal *tree_conj(SrInterp *I, SrVal *xs) { return tree_map2(I, xs, NULL, leaf_arith, "numpy.conj"); }

/* scalar_mul's mul: np.multiply(x, np.array(a, dtype), dtype=dtype) */
static SrVal *leaf_scale(SrInterp *I, SrVal *x, SrVal *y, void *ctx) {
  (void)y;
  SrVal *d = dtype_of(I, x, NULL);
  if (!d) return NULL;
  SrVal *a = sr_float(NULL, *(double *)ctx);
  SrVal *ad = as_dtype(I, a, d, 0), *ax = sr_np_asarray(I, x, -1), *r = NULL;
  sr_unref(a);
  if (ad && ax) {
    SrVal *v[] = {ax, ad};
    const char *kw[] = {"dtype"};
    r = callq(I, "numpy.multiply", 2, v, 1, kw, &d);
    r = like_leaf(I, r, x);
  }
  sr_unref(ad);
  sr_unref(ax);
  sr_unref(d);
  return r;
}

static SrVal *scalar_mul(SrInterp *I, SrVal *xs, double a) { return tree_map2(I, xs, NULL, leaf_scale, &a); }

/* _safe_subtract: inf - inf is 0 */
static SrVal *leaf_safe_sub(SrInterp *I, SrVal *x, SrVal *y, void *ctx) {
  (void)ctx;
  SrVal *d = dtype_of(I, x, NULL);
  if (!d) return NULL;
  SrVal *ax = sr_np_asarray(I, x, -1), *ay = sr_np_asarray(I, y, -1), *r = NULL;
  if (ax && ay) {
    SrVal *v[] = {ax, ay};
    const char *kw[] = {"dtype"};
    SrVal *eq = callq(I, "numpy.equal", 2, v, 0, NULL, NULL);
    SrVal *df = eq ? callq(I, "numpy.subtract", 2, v, 1, kw, &d) : NULL;
    SrVal *zero = sr_int(NULL, 0);
    SrVal *z = df ? as_dtype(I, zero, d, 0) : NULL;
    sr_unref(zero);
    if (z) {
      SrVal *w[] = {eq, z, df};
      r = callq(I, "numpy.where", 3, w, 0, NULL, NULL);
    }
    sr_unref(eq);
    sr_unref(df);
    sr_unref(z);
  }
  sr_unref(ax);
  sr_unref(ay);
  sr_unref(d);
  return r;
}

/* rand_like(rng, x) */
static SrVal *leaf_rand(SrInterp *I, SrVal *x, SrVal *y, void *ctx) {
  (void)y;
  SrVal *rng = ctx;
  SrDtype dt;
  SrVal *d = dtype_of(I, x, &dt);
  if (!d) return NULL;
  SrVal *shape = callq(I, "numpy.shape", 1, &x, 0, NULL, NULL), *r = NULL;
  if (shape) {
    SrVal *z = call_method(I, rng, "randn", shape->seq.n, shape->seq.items);
    r = z ? as_dtype(I, z, d, 0) : NULL;
    sr_unref(z);
    if (r && sr_dtype_is_complex(dt)) {
      SrVal *im = call_method(I, rng, "randn", shape->seq.n, shape->seq.items);
      SrVal *j = sr_complex(NULL, 0, 1);
      SrVal *jd = im ? as_dtype(I, j, d, 0) : NULL;
      sr_unref(j);
      SrVal *v[] = {jd, im};
      SrVal *p = jd ? callq(I, "numpy.multiply", 2, v, 0, NULL, NULL) : NULL;
      SrVal *w[] = {r, p};
      SrVal *s = p ? callq(I, "numpy.add", 2, w, 0, NULL, NULL) : NULL;
      sr_unref(im);
      sr_unref(jd);
      sr_unref(p);
      sr_unref(r);
      r = s;
    }
    r = like_leaf(I, r, x);
    sr_unref(shape);
  }
  sr_unref(d);
  return r;
}

static SrVal *call_star(SrInterp *I, SrVal *f, SrVal *args) {
  SrVal *l = sr_pytree_children(args);
  if (!l) return call_fn(I, f, 1, &args);
  SrVal *r = call_fn(I, f, l->seq.n, l->seq.items);
  sr_unref(l);
  return r;
}

static SrVal *numerical_jvp(SrInterp *I, SrVal *f, SrVal *primals, SrVal *tangents, double eps) {
  SrVal *delta = scalar_mul(I, tangents, eps);
  if (!delta) return NULL;
  SrVal *pp = tree_add(I, primals, delta), *pn = pp ? tree_sub(I, primals, delta) : NULL;
  sr_unref(delta);
  SrVal *fp = pn ? call_star(I, f, pp) : NULL, *fn = fp ? call_star(I, f, pn) : NULL, *r = NULL;
  if (fn) {
    SrVal *df = tree_map2(I, fp, fn, leaf_safe_sub, NULL);
    if (df) r = scalar_mul(I, df, 0.5 / eps);
    sr_unref(df);
  }
  sr_unref(pp);
  sr_unref(pn);
  sr_unref(fp);
  sr_unref(fn);
  return r;
}

/* ---- comparisons ---- */

typedef struct Close {
  Tol atol, rtol;
  const char *msg;
} Close;

static int custom_float(SrDtype d) { return d == SR_BF16 || (d >= SR_F8_E4M3FN && d <= SR_F4_E2M1FN); }

/* _assert_numpy_close */
static SrVal *leaf_close(SrInterp *I, SrVal *x, SrVal *y, void *ctx) {
  Close *c = ctx;
  SrVal *a = sr_np_asarray(I, x, -1), *b = a ? sr_np_asarray(I, y, -1) : NULL, *r = NULL;
  if (!b) { sr_unref(a); return NULL; }
  const SrType *ta = sr_ndarray_array(a)->type, *tb = sr_ndarray_array(b)->type;
  int same = ta->ndim == tb->ndim;
  for (int i = 0; same && i < ta->ndim; i++) same = ta->dims[i].size == tb->dims[i].size;
  int64_t na = 1, nb = 1;
  for (int i = 0; i < ta->ndim; i++) na *= ta->dims[i].size;
  for (int i = 0; i < tb->ndim; i++) nb *= tb->dims[i].size;
  double at1, at2, rt1, rt2;
  if (!same) {
    sr_raise(I, "AssertionError", "%s", "");
  } else if (tolerance(I, c->atol, ta->dtype, &at1) == 0 && tolerance(I, c->atol, tb->dtype, &at2) == 0 &&
             tolerance(I, c->rtol, ta->dtype, &rt1) == 0 && tolerance(I, c->rtol, tb->dtype, &rt2) == 0) {
    double atol = (at1 > at2 ? at1 : at2) * (double)na, rtol = (rt1 > rt2 ? rt1 : rt2) * (double)nb;
    SrVal *v[] = {a, b};
    for (int k = 0; k < 2; k++)
      if (custom_float(nd_dtype(v[k]))) {
        SrVal *u = sr_np_asarray(I, v[k], SR_F32);
        if (!u) goto out;
        sr_unref(v[k]);
        v[k] = u;
        if (k) b = u;
        else a = u;
      }
    const char *kw[3];
    SrVal *kwv[3];
    int nkw = 0;
    if (atol != 0) { kw[nkw] = "atol"; kwv[nkw++] = sr_float(NULL, atol); }
    if (rtol != 0) { kw[nkw] = "rtol"; kwv[nkw++] = sr_float(NULL, rtol); }
    kw[nkw] = "err_msg";
    kwv[nkw++] = sr_str(NULL, c->msg, strlen(c->msg));
    r = callq(I, "numpy.testing.assert_allclose", 2, v, nkw, kw, kwv);
    for (int k = 0; k < nkw; k++) sr_unref(kwv[k]);
  }
out:
  sr_unref(a);
  sr_unref(b);
  return r;
}

static int check_close(SrInterp *I, SrVal *xs, SrVal *ys, Tol atol, Tol rtol, const char *msg) {
  Close c = {atol, rtol, msg};
  SrVal *r = tree_map2(I, xs, ys, leaf_close, &c);
  sr_unref(r);
  return r ? 0 : -1;
}

static SrVal *leaf_dtypes_match(SrInterp *I, SrVal *x, SrVal *y, void *ctx) {
  (void)ctx;
  SrDtype a, b;
  SrVal *d1 = dtype_of(I, x, &a);
  if (!d1) return NULL;
  sr_unref(d1);
  SrVal *d2 = dtype_of(I, y, &b);
  if (!d2) return NULL;
  sr_unref(d2);
  if (canon(I, a) != canon(I, b)) return sr_raise(I, "AssertionError", "%s", "");
  return sr_none();
}

static int dtypes_match(SrInterp *I, SrVal *xs, SrVal *ys) {
  SrVal *r = tree_map2(I, xs, ys, leaf_dtypes_match, NULL);
  sr_unref(r);
  return r ? 0 : -1;
}

/* contract: np.real(np.dot(np.conj(x).reshape(-1), y.reshape(-1))) */
static SrVal *leaf_contract(SrInterp *I, SrVal *x, SrVal *y, void *ctx) {
  (void)ctx;
  SrVal *ax = sr_np_asarray(I, x, -1), *ay = ax ? sr_np_asarray(I, y, -1) : NULL, *r = NULL;
  SrVal *cx = ay ? callq(I, "numpy.conj", 1, &ax, 0, NULL, NULL) : NULL;
  SrVal *m1 = sr_int(NULL, -1);
  SrVal *fx = cx ? call_method(I, cx, "reshape", 1, &m1) : NULL;
  SrVal *fy = fx ? call_method(I, ay, "reshape", 1, &m1) : NULL;
  sr_unref(m1);
  if (fy) {
    SrVal *v[] = {fx, fy};
    SrVal *d = callq(I, "numpy.dot", 2, v, 0, NULL, NULL);
    if (d) r = callq(I, "numpy.real", 1, &d, 0, NULL, NULL);
    sr_unref(d);
  }
  sr_unref(ax);
  sr_unref(ay);
  sr_unref(cx);
  sr_unref(fx);
  sr_unref(fy);
  return r;
}

static SrVal *inner_prod(SrInterp *I, SrVal *xs, SrVal *ys) {
  SrVal *t = tree_map2(I, xs, ys, leaf_contract, NULL);
  if (!t) return NULL;
  SrVal *l = sr_pytree_flatten_any(I, t);
  sr_unref(t);
  if (!l) return NULL;
  SrVal *acc = l->seq.n ? sr_ref(l->seq.items[0]) : NULL;
  for (int i = 1; acc && i < l->seq.n; i++) {
    SrVal *v[] = {acc, l->seq.items[i]};
    SrVal *s = callq(I, "numpy.add", 2, v, 0, NULL, NULL);
    sr_unref(acc);
    acc = s;
  }
  if (!l->seq.n) sr_raise(I, "TypeError", "reduce() of empty iterable with no initial value");
  sr_unref(l);
  return acc;
}

static SrVal *new_rng(SrInterp *I) {
  SrVal *z = sr_int(NULL, 0);
  SrVal *r = callq(I, "numpy.random.RandomState", 1, &z, 0, NULL, NULL);
  sr_unref(z);
  return r;
}

static const char *sub_msg(SrBuf *b, const char *err, const char *what) {
  breset(b);
  if (*err) sr_buf_printf(b, "%s %s", err, what);
  else sr_buf_puts(b, what);
  return bcstr(b);
}

/* ---- check_jvp / check_vjp ---- */

static int check_jvp(SrInterp *I, SrVal *f, SrVal *f_jvp, SrVal *args, Tol atol, Tol rtol, double eps,
                     const char *err) {
  SrVal *rng = new_rng(I);
  if (!rng) return -1;
  SrVal *tangent = tree_map2(I, args, NULL, leaf_rand, rng);
  sr_unref(rng);
  if (!tangent) return -1;
  SrVal *v[] = {args, tangent};
  SrVal *out = call_fn(I, f_jvp, 2, v), *ch = NULL, *vexp = NULL, *texp = NULL;
  int rc = -1;
  SrBuf b = {0};
  if (!out) goto done;
  ch = sr_pytree_children(out);
  if (!ch || ch->seq.n != 2) {
    sr_raise(I, "ValueError", "not enough values to unpack (expected 2)");
    goto done;
  }
  if (dtypes_match(I, ch->seq.items[0], ch->seq.items[1]) < 0) goto done;
  if (!(vexp = call_star(I, f, args))) goto done;
  if (dtypes_match(I, ch->seq.items[0], vexp) < 0) goto done;
  if (!(texp = numerical_jvp(I, f, args, tangent, eps))) goto done;
  if (check_close(I, ch->seq.items[0], vexp, atol, rtol, sub_msg(&b, err, "primal")) < 0) goto done;
  if (check_close(I, ch->seq.items[1], texp, atol, rtol, sub_msg(&b, err, "tangent")) < 0) goto done;
  rc = 0;
done:
  sr_buf_free(&b);
  sr_unref(tangent);
  sr_unref(out);
  sr_unref(ch);
  sr_unref(vexp);
  sr_unref(texp);
  return rc;
}

static int check_vjp(SrInterp *I, SrVal *f, SrVal *f_vjp, SrVal *args, Tol atol, Tol rtol, double eps,
                     const char *err) {
  SrVal *rng = new_rng(I);
  if (!rng) return -1;
  SrVal *out = call_star(I, f_vjp, args), *ch = NULL, *vexp = NULL, *tangent = NULL, *tout = NULL;
  SrVal *ct = NULL, *cct = NULL, *back = NULL, *ctout = NULL, *ip = NULL, *ipe = NULL;
  int rc = -1;
  SrBuf b = {0};
  if (!out) goto done;
  ch = sr_pytree_children(out);
  if (!ch || ch->seq.n != 2) {
    sr_raise(I, "ValueError", "not enough values to unpack (expected 2)");
    goto done;
  }
  if (!(vexp = call_star(I, f, args))) goto done;
  if (check_close(I, ch->seq.items[0], vexp, atol, rtol, sub_msg(&b, err, "primal")) < 0) goto done;
  if (!(tangent = tree_map2(I, args, NULL, leaf_rand, rng))) goto done;
  if (!(tout = numerical_jvp(I, f, args, tangent, eps))) goto done;
  if (!(ct = tree_map2(I, ch->seq.items[0], NULL, leaf_rand, rng))) goto done;
  if (!(cct = tree_conj(I, ct))) goto done;
  if (!(back = call_fn(I, ch->seq.items[1], 1, &cct))) goto done;
  if (!(ctout = tree_conj(I, back))) goto done;
  if (!(ip = inner_prod(I, tangent, ctout))) goto done;
  if (!(ipe = inner_prod(I, tout, ct))) goto done;
  if (check_close(I, ip, ipe, atol, rtol, sub_msg(&b, err, "cotangent projection")) < 0) goto done;
  rc = 0;
done:
  sr_buf_free(&b);
  sr_unref(rng);
  sr_unref(out);
  sr_unref(ch);
  sr_unref(vexp);
  sr_unref(tangent);
  sr_unref(tout);
  sr_unref(ct);
  sr_unref(cct);
  sr_unref(back);
  sr_unref(ctout);
  sr_unref(ip);
  sr_unref(ipe);
  return rc;
}

/* ---- check_grads ---- */

static SrVal *partial_of(SrInterp *I, const char *qn, SrVal *f) {
  SrVal *v[] = {sr_lookup_qualname(qn), f};
  return callq(I, "functools.partial", 2, v, 0, NULL, NULL);
}

/* f_vjp(*args): the pullback of f applied to f's own output */
static SrVal *vjp_of_out_call(SrInterp *I, SrArgs *a) {
  SrVal *f = sr_current_builtin(I)->data;
  SrVal **v = sr_xcalloc((size_t)a->n + 1, sizeof *v);
  v[0] = f;
  for (int i = 0; i < a->n; i++) v[i + 1] = a->v[i];
  SrVal *out = callq(I, "jax.vjp", a->n + 1, v, 0, NULL, NULL);
  free(v);
  if (!out) return NULL;
  SrVal *ch = sr_pytree_children(out), *r = NULL;
  if (ch && ch->seq.n == 2) r = call_fn(I, ch->seq.items[1], 1, &ch->seq.items[0]);
  sr_unref(ch);
  sr_unref(out);
  return r;
}

static void unref_data(void *d) { sr_unref(d); }

typedef struct Grads {
  int fwd, rev;
  Tol atol, rtol;
  double eps;
} Grads;

static int check_grads_rec(SrInterp *I, const Grads *g, SrVal *f, SrVal *args, int64_t order, const char *err) {
  SrBuf m = {0};
  int rc = -1;
  if (g->fwd) {
    if (*err) sr_buf_printf(&m, "JVP of %s", err);
    else sr_buf_puts(&m, "JVP");
    SrVal *fj = partial_of(I, "jax.jvp", f);
    if (!fj || check_jvp(I, f, fj, args, g->atol, g->rtol, g->eps, bcstr(&m)) < 0) {
      sr_unref(fj);
      goto done;
    }
    if (order > 1) {
      SrVal *aa = sr_tuple(NULL, 2, (SrVal *[]){sr_ref(args), sr_ref(args)});
      int r = check_grads_rec(I, g, fj, aa, order - 1, bcstr(&m));
      sr_unref(aa);
      if (r < 0) { sr_unref(fj); goto done; }
    }
    sr_unref(fj);
  }
  if (g->rev) {
    breset(&m);
    if (*err) sr_buf_printf(&m, "VJP of %s", err);
    else sr_buf_puts(&m, "VJP");
    SrVal *fv = partial_of(I, "jax.vjp", f);
    if (!fv || check_vjp(I, f, fv, args, g->atol, g->rtol, g->eps, bcstr(&m)) < 0) {
      sr_unref(fv);
      goto done;
    }
    sr_unref(fv);
    if (order > 1) {
      SrVal *h = sr_builtin_with("f_vjp", vjp_of_out_call, sr_ref(f), unref_data);
      int r = check_grads_rec(I, g, h, args, order - 1, bcstr(&m));
      sr_unref(h);
      if (r < 0) goto done;
    }
  }
  rc = 0;
done:
  sr_buf_free(&m);
  return rc;
}

static int has_mode(SrInterp *I, SrVal *modes, const char *name, int *out) {
  if (modes->kind == SR_V_STR) { /* `in` of a str: a substring */
    *out = strstr(modes->str.s, name) != NULL;
    return 0;
  }
  SrVal *l = callq(I, "builtins.list", 1, &modes, 0, NULL, NULL);
  if (!l) return -1;
  *out = 0;
  for (int i = 0; i < l->seq.n; i++)
    if (l->seq.items[i]->kind == SR_V_STR && strcmp(l->seq.items[i]->str.s, name) == 0) *out = 1;
  sr_unref(l);
  return 0;
}

static int get_eps(SrInterp *I, SrVal *v, double *eps) {
  *eps = EPS;
  if (!v || !sr_val_truthy(v)) return 0;
  return sr_as_float(I, v, "eps", eps);
}

static SrVal *tu_check_grads(SrInterp *I, SrArgs *a) {
  SrVal *p[7];
  if (sr_args_parse(I, a, "check_grads", "f, args, order, modes=, atol=, rtol=, eps=", p) < 0) return NULL;
  Grads g = {1, 1, {p[4]}, {p[5]}, EPS};
  int64_t order;
  if (sr_as_index(I, p[2], &order) < 0) return NULL;
  if (p[3] && (has_mode(I, p[3], "fwd", &g.fwd) < 0 || has_mode(I, p[3], "rev", &g.rev) < 0)) return NULL;
  if (get_eps(I, p[6], &g.eps) < 0) return NULL;
  SrVal *args = callq(I, "builtins.tuple", 1, &p[1], 0, NULL, NULL);
  if (!args) return NULL;
  int r = check_grads_rec(I, &g, p[0], args, order, "");
  sr_unref(args);
  return r < 0 ? NULL : sr_none();
}

static SrVal *tu_check_one(SrInterp *I, SrArgs *a, int jvp) {
  SrVal *p[7];
  if (sr_args_parse(I, a, jvp ? "check_jvp" : "check_vjp", "f, f_jvp, args, atol=, rtol=, eps=, err_msg=", p) < 0)
    return NULL;
  double eps;
  if (get_eps(I, p[5], &eps) < 0) return NULL;
  const char *err = p[6] ? sr_as_str(I, p[6], "err_msg") : "";
  if (!err) return NULL;
  Tol at = {p[3]}, rt = {p[4]};
  int r = jvp ? check_jvp(I, p[0], p[1], p[2], at, rt, eps, err) : check_vjp(I, p[0], p[1], p[2], at, rt, eps, err);
  return r < 0 ? NULL : sr_none();
}

static SrVal *tu_check_jvp(SrInterp *I, SrArgs *a) { return tu_check_one(I, a, 1); }
static SrVal *tu_check_vjp(SrInterp *I, SrArgs *a) { return tu_check_one(I, a, 0); }

void sr_test_util_init(void) {
  sr_def("jax.test_util.check_grads", tu_check_grads,
         "check_grads(f, args, order, modes=('fwd', 'rev'), atol=None, rtol=None, eps=None): jvp and vjp up to "
         "order checked against finite differences (AssertionError on a mismatch)");
  sr_def("jax.test_util.check_jvp", tu_check_jvp,
         "check_jvp(f, f_jvp, args, atol=None, rtol=None, eps=1e-4, err_msg=''): a JVP against central "
         "differences in one random direction");
  sr_def("jax.test_util.check_vjp", tu_check_vjp,
         "check_vjp(f, f_vjp, args, atol=None, rtol=None, eps=1e-4, err_msg=''): a VJP against finite "
         "differences by the inner products of one random tangent and cotangent");
}
