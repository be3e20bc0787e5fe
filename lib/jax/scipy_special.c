/* scipy_special.c: jax.scipy.special (jax/_src/scipy/special.py) and
 * logsumexp (jax/_src/ops/special.py, also jax.nn.logsumexp).
 *
 * None of these is jitted in JAX: each promotes its arguments to an
 * inexact dtype (promote_args_inexact) and binds the lax primitive, and
 * logit, xlogy, xlog1py and _xlogx (under entr) are custom_jvps with
 * JAX's rules, written with nn.h's scope as nn.c's functions are.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jax/jax.h"
#include "jax/nn.h"
#include "py/ast.h"
#include "py/objects.h"

#define SCOPE(I) SrNnScope s_ = {(I), {0}, 0}, *s = &s_
#define C1(q, x) sr_nn_call1(s, q, x)
#define C2(q, x, y) sr_nn_call2(s, q, x, y)
#define C3(q, x, y, z) sr_nn_call3(s, q, x, y, z)
#define OP(op, x, y) sr_nn_op(s, SR_OP_##op, x, y)
#define FL(d) sr_nn_float(s, d)

static int is_complex(SrInterp *I, SrVal *x) {
  const SrType *t = x ? sr_value_type(I, x) : NULL;
  return t && sr_dtype_kind(t->dtype) == SR_DK_COMPLEX;
}

/* lax._const(x, v): v in x's dtype, weakly typed as x is */
static SrVal *lconst(SrNnScope *s, SrVal *x, double v) {
  const SrType *t = x ? sr_value_type(s->I, x) : NULL;
  if (!t) return NULL;
  SrVal *f = FL(v);
  return sr_nn_keep(s, sr_lax_convert(s->I, f, t->dtype, t->weak, NULL));
}

/* ---- the unary functions: promote_args_inexact, then one primitive ---- */

static SrVal *unary(SrInterp *I, SrArgs *a, const char *name, int prim) {
  SrVal *p[1];
  if (sr_args_parse(I, a, name, "x", p) < 0) return NULL;
  SCOPE(I);
  if (sr_nn_promote_inexact(s, 1, p, name) < 0) return sr_nn_done(s, NULL);
  return sr_nn_done(s, sr_nn_keep(s, sr_lax_unary(I, prim, p[0])));
}

static SrVal *sp_erf(SrInterp *I, SrArgs *a) { return unary(I, a, "erf", SR_P_erf); }
static SrVal *sp_erfc(SrInterp *I, SrArgs *a) { return unary(I, a, "erfc", SR_P_erfc); }
static SrVal *sp_erfinv(SrInterp *I, SrArgs *a) { return unary(I, a, "erfinv", SR_P_erf_inv); }
static SrVal *sp_gammaln(SrInterp *I, SrArgs *a) { return unary(I, a, "gammaln", SR_P_lgamma); }
static SrVal *sp_digamma(SrInterp *I, SrArgs *a) { return unary(I, a, "digamma", SR_P_digamma); }

/* jax.lax.lgamma / digamma: the primitive, no promotion */
static SrVal *lax_un(SrInterp *I, SrArgs *a, const char *name, int prim) {
  SrVal *p[1];
  if (sr_args_parse(I, a, name, "x", p) < 0) return NULL;
  SrVal *x = sr_jnp_asarray(I, p[0], -1);
  SrVal *r = x ? sr_lax_unary(I, prim, x) : NULL;
  sr_unref(x);
  return r;
}

static SrVal *lax_lgamma(SrInterp *I, SrArgs *a) { return lax_un(I, a, "lgamma", SR_P_lgamma); }
static SrVal *lax_digamma(SrInterp *I, SrArgs *a) { return lax_un(I, a, "digamma", SR_P_digamma); }
static SrVal *sp_expit(SrInterp *I, SrArgs *a) { return unary(I, a, "expit", SR_P_logistic); }

/* jax.lax.polygamma(m, x) / zeta(x, q): the primitive, no promotion */
static SrVal *lax_bin(SrInterp *I, SrArgs *a, const char *name, const char *spec, int prim) {
  SrVal *p[2];
  if (sr_args_parse(I, a, name, spec, p) < 0) return NULL;
  SrVal *x = sr_jnp_asarray(I, p[0], -1), *y = x ? sr_jnp_asarray(I, p[1], -1) : NULL;
  SrVal *r = y ? sr_lax_binary(I, prim, x, y) : NULL;
  sr_unref(x);
  sr_unref(y);
  return r;
}

static SrVal *lax_polygamma(SrInterp *I, SrArgs *a) { return lax_bin(I, a, "polygamma", "m, x", SR_P_polygamma); }
static SrVal *lax_zeta(SrInterp *I, SrArgs *a) { return lax_bin(I, a, "zeta", "x, q", SR_P_zeta); }

/* jax.scipy.special.polygamma(n, x): n of an integer dtype,
   promote_args_inexact, lax.polygamma */
static SrVal *sp_polygamma(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "polygamma", "n, x", p) < 0) return NULL;
  SCOPE(I);
  SrVal *n = sr_nn_keep(s, sr_jnp_asarray(I, p[0], -1));
  const SrType *nt = n ? sr_value_type(I, n) : NULL;
  if (!nt) return sr_nn_done(s, NULL);
  if (!sr_dtype_is_int(nt->dtype))
    return sr_nn_done(s, sr_raise(I, "ValueError", "Argument `n` to polygamma must be of integer type. Got dtype %s.",
                                  sr_dtype_name(nt->dtype)));
  if (sr_nn_promote_inexact(s, 2, p, "polygamma") < 0) return sr_nn_done(s, NULL);
  if (sr_dtype_kind(sr_value_type(I, p[1])->dtype) == SR_DK_COMPLEX)
    return sr_nn_done(s, sr_raise(I, "ValueError", "polygamma does not support complex-valued inputs."));
  return sr_nn_done(s, sr_nn_keep(s, sr_lax_binary(I, SR_P_polygamma, p[0], p[1])));
}

/* ---- logit ---- */

/* lax.log(lax.div(x, lax.sub(_lax_const(x, 1), x))) */
static SrVal *logit_fun(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "logit() takes 1 positional argument");
  SCOPE(I);
  SrVal *x = a->v[0];
  if (sr_nn_promote_inexact(s, 1, &x, "logit") < 0) return sr_nn_done(s, NULL);
  return sr_nn_done(s, C1("jax.lax.log", C2("jax.lax.div", x, C2("jax.lax.sub", lconst(s, x, 1), x))));
}

/* lambda g, ans, x: lax.div(g, lax.mul(x, lax.sub(_lax_const(x, 1), x))) */
static SrVal *logit_jvp(SrInterp *I, SrArgs *a) {
  if (a->n != 3) return sr_raise(I, "TypeError", "<lambda>() takes 3 positional arguments");
  SCOPE(I);
  SrVal *g = a->v[0], *x = a->v[2];
  return sr_nn_done(s, C2("jax.lax.div", g, C2("jax.lax.mul", x, C2("jax.lax.sub", lconst(s, x, 1), x))));
}

static SrVal *logit_cj, *xlogy_cj, *xlog1py_cj, *xlogx_cj;

static SrVal *call_cj(SrInterp *I, SrVal *cj, SrArgs *a, const char *name, const char *spec, int n) {
  SrVal *p[2];
  if (!cj || sr_args_parse(I, a, name, spec, p) < 0) return NULL;
  SrArgs ca = {n, p, 0, NULL, NULL, NULL};
  return sr_call(I, cj, &ca);
}

static SrVal *sp_logit(SrInterp *I, SrArgs *a) {
  return call_cj(I, sr_nn_custom_jvp(I, &logit_cj, "logit", logit_fun, "<lambda>", logit_jvp, 1), a, "logit",
                 "x", 1);
}

/* ---- xlogy, xlog1py ---- */

/* jnp.where(x_ok | jnp.isnan(y), lax.mul(x, lax.log(y)), jnp.zeros_like(x)) */
static SrVal *xlog_common(SrInterp *I, SrArgs *a, const char *name, const char *logf) {
  if (a->n != 2) return sr_raise(I, "TypeError", "%s() takes 2 positional arguments", name);
  SCOPE(I);
  SrVal *xy[2] = {a->v[0], a->v[1]};
  if (sr_nn_promote_inexact(s, 2, xy, name) < 0) return sr_nn_done(s, NULL);
  SrVal *x = xy[0], *y = xy[1];
  SrVal *ok = OP(NE, x, FL(0.0));
  SrVal *c = OP(BITOR, ok, C1("jax.numpy.isnan", y));
  SrVal *m = C2("jax.lax.mul", x, C1(logf, y));
  SrVal *z = m ? C1("jax.numpy.zeros_like", x) : NULL;
  return sr_nn_done(s, C3("jax.numpy.where", c, m, z));
}

static SrVal *xlogy_fun(SrInterp *I, SrArgs *a) { return xlog_common(I, a, "xlogy", "jax.lax.log"); }
static SrVal *xlog1py_fun(SrInterp *I, SrArgs *a) { return xlog_common(I, a, "xlog1py", "jax.lax.log1p"); }

static SrVal *xlogy_cjv(SrInterp *I);
static SrVal *xlog1py_cjv(SrInterp *I);

/* result = f(x, y); (x_dot * lax.log(y) + y_dot * x / y).astype(result.dtype),
   with log1p and 1 + y for xlog1py */
static SrVal *xlog_jvp(SrInterp *I, SrArgs *a, int one_p) {
  if (a->n != 2 || !sr_is_seq(a->v[0]) || !sr_is_seq(a->v[1]) || a->v[0]->seq.n != 2 || a->v[1]->seq.n != 2)
    return sr_raise(I, "TypeError", "the jvp takes (primals, tangents)");
  SrVal *x = a->v[0]->seq.items[0], *y = a->v[0]->seq.items[1];
  SrVal *xd = a->v[1]->seq.items[0], *yd = a->v[1]->seq.items[1];
  SrVal *cj = one_p ? xlog1py_cjv(I) : xlogy_cjv(I);
  if (!cj) return NULL;
  SCOPE(I);
  SrArgs ca = {2, a->v[0]->seq.items, 0, NULL, NULL, NULL};
  SrVal *res = sr_nn_keep(s, sr_call(I, cj, &ca));
  SrVal *t1 = res ? OP(MUL, xd, C1(one_p ? "jax.lax.log1p" : "jax.lax.log", y)) : NULL;
  SrVal *t2 = t1 ? OP(MUL, yd, x) : NULL;
  SrVal *den = !t2 ? NULL : one_p ? OP(ADD, sr_nn_int(s, 1), y) : y;
  SrVal *t = OP(ADD, t1, OP(DIV, t2, den));
  const SrType *rt = res ? sr_value_type(I, res) : NULL;
  if (t && rt) t = sr_nn_keep(s, sr_lax_convert(I, t, rt->dtype, 0, NULL));
  if (!t || !res) return sr_nn_done(s, NULL);
  SrVal *items[2] = {sr_ref(res), sr_ref(t)};
  return sr_nn_done(s, sr_nn_keep(s, sr_tuple(NULL, 2, items)));
}

static SrVal *xlogy_jvp(SrInterp *I, SrArgs *a) { return xlog_jvp(I, a, 0); }
static SrVal *xlog1py_jvp(SrInterp *I, SrArgs *a) { return xlog_jvp(I, a, 1); }

static SrVal *xlogy_cjv(SrInterp *I) {
  return sr_nn_custom_jvp(I, &xlogy_cj, "xlogy", xlogy_fun, "_xlogy_jvp", xlogy_jvp, 0);
}

static SrVal *xlog1py_cjv(SrInterp *I) {
  return sr_nn_custom_jvp(I, &xlog1py_cj, "xlog1py", xlog1py_fun, "_xlog1py_jvp", xlog1py_jvp, 0);
}

static SrVal *sp_xlogy(SrInterp *I, SrArgs *a) { return call_cj(I, xlogy_cjv(I), a, "xlogy", "x, y", 2); }
static SrVal *sp_xlog1py(SrInterp *I, SrArgs *a) { return call_cj(I, xlog1py_cjv(I), a, "xlog1py", "x, y", 2); }

/* ---- entr ---- */

static SrVal *xlogx_cjv(SrInterp *I);

/* _xlogx(x) = xlogy(x, x) */
static SrVal *xlogx_fun(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "_xlogx() takes 1 positional argument");
  SrVal *cj = xlogy_cjv(I);
  SrVal *xx[2] = {a->v[0], a->v[0]};
  SrArgs ca = {2, xx, 0, NULL, NULL, NULL};
  return cj ? sr_call(I, cj, &ca) : NULL;
}

/* _xlogx(x), x_dot * (lax.log(x) + 1) */
static SrVal *xlogx_jvp(SrInterp *I, SrArgs *a) {
  if (a->n != 2 || !sr_is_seq(a->v[0]) || !sr_is_seq(a->v[1]) || a->v[0]->seq.n != 1 || a->v[1]->seq.n != 1)
    return sr_raise(I, "TypeError", "the jvp takes (primals, tangents)");
  SrVal *x = a->v[0]->seq.items[0], *xd = a->v[1]->seq.items[0];
  SrVal *cj = xlogx_cjv(I);
  if (!cj) return NULL;
  SCOPE(I);
  SrVal *res = sr_nn_keep(s, sr_call1(I, cj, x));
  SrVal *t = OP(MUL, xd, OP(ADD, C1("jax.lax.log", x), sr_nn_int(s, 1)));
  if (!t || !res) return sr_nn_done(s, NULL);
  SrVal *items[2] = {sr_ref(res), sr_ref(t)};
  return sr_nn_done(s, sr_nn_keep(s, sr_tuple(NULL, 2, items)));
}

static SrVal *xlogx_cjv(SrInterp *I) {
  return sr_nn_custom_jvp(I, &xlogx_cj, "_xlogx", xlogx_fun, "_xlogx_jvp", xlogx_jvp, 0);
}

SrVal *sr_scipy_xlogx(SrInterp *I, SrVal *x) {
  SrVal *cj = xlogx_cjv(I);
  return cj ? sr_call1(I, cj, x) : NULL;
}

/* lax.select(lax.lt(x, _lax_const(x, 0)), lax.full_like(x, -np.inf), lax.neg(_xlogx(x))) */
static SrVal *sp_entr(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "entr", "x", p) < 0) return NULL;
  SCOPE(I);
  if (sr_nn_promote_inexact(s, 1, p, "entr") < 0) return sr_nn_done(s, NULL);
  SrVal *x = p[0];
  if (is_complex(I, x)) return sr_nn_done(s, sr_raise(I, "ValueError", "entr does not support complex-valued inputs."));
  SrVal *cj = xlogx_cjv(I);
  SrVal *lt = cj ? C2("jax.lax.lt", x, lconst(s, x, 0)) : NULL;
  SrVal *ninf = lt ? sr_nn_full_like(s, x, FL(-INFINITY)) : NULL;
  SrVal *xl = ninf ? sr_nn_keep(s, sr_call1(I, cj, x)) : NULL;
  return sr_nn_done(s, C3("jax.lax.select", lt, ninf, C1("jax.lax.neg", xl)));
}

/* ---- logsumexp ---- */

static SrVal *sp_logsumexp(SrInterp *I, SrArgs *a) {
  SrVal *p[6];
  if (sr_args_parse(I, a, "logsumexp", "a, axis=, b=, keepdims=, return_sign=, where=", p) < 0) return NULL;
  int keepdims = 0, return_sign = 0;
  if (p[3] && (keepdims = sr_truthy(I, p[3])) < 0) return NULL;
  if (p[4] && (return_sign = sr_truthy(I, p[4])) < 0) return NULL;
  SCOPE(I);
  SrVal *x = p[0], *b = sr_nn_given(p[2]) ? p[2] : NULL, *where = sr_nn_given(p[5]) ? p[5] : NULL;
  if (where) x = C3("jax.numpy.where", where, x, sr_nn_int(s, 0));
  if (!x) return sr_nn_done(s, NULL);
  if (b) {
    SrVal *ab[2] = {x, b};
    if (sr_nn_promote_inexact(s, 2, ab, "logsumexp") < 0) return sr_nn_done(s, NULL);
    x = ab[0];
    b = ab[1];
    x = C3("jax.numpy.where", OP(NE, b, sr_nn_int(s, 0)), x, FL(-INFINITY));
  } else if (sr_nn_promote_inexact(s, 1, &x, "logsumexp") < 0)
    return sr_nn_done(s, NULL);
  if (!x) return sr_nn_done(s, NULL);
  const SrType *t = sr_value_type(I, x);
  int64_t ax[SR_MAX_RANK];
  int n;
  if (sr_nn_axes(I, p[1], t->ndim, ax, &n) < 0) return sr_nn_done(s, NULL);
  SrVal *axes = sr_nn_keep(s, sr_int_tuple(ax, n));
  int cplx = is_complex(I, x);
  SrVal *re = cplx ? C1("jax.numpy.real", x) : x;
  SrVal *amax = sr_nn_reduce(s, SR_P_reduce_max, re, axes, where, FL(-INFINITY), keepdims);
  SrVal *fin = C1("jax.numpy.isfinite", amax);
  SrVal *zero = fin ? sr_nn_full_like(s, amax, sr_nn_int(s, 0)) : NULL;
  amax = C1("jax.lax.stop_gradient", C3("jax.lax.select", fin, amax, zero));
  SrVal *amax_d = amax;
  if (amax && !keepdims) {
    for (int i = 0; i < n; i++)
      for (int j = i + 1; j < n; j++)
        if (ax[j] < ax[i]) {
          int64_t tmp = ax[i];
          ax[i] = ax[j];
          ax[j] = tmp;
        }
    amax_d = sr_nn_keep(s, sr_lax_expand_dims(I, amax, ax, n));
  }
  if (amax_d && cplx) amax_d = sr_nn_keep(s, sr_lax_convert(I, amax_d, t->dtype, 0, NULL));
  SrVal *exp_a = C1("jax.lax.exp", C2("jax.lax.sub", x, amax_d));
  if (b) exp_a = C2("jax.lax.mul", exp_a, b);
  SrVal *sumexp = sr_nn_reduce(s, SR_P_reduce_sum, exp_a, axes, where, NULL, keepdims);
  SrVal *sign = C1("jax.lax.sign", sumexp);
  if (return_sign || !cplx) sumexp = C1("jax.lax.abs", sumexp);
  SrVal *am = amax;
  if (am && sumexp && sr_value_type(I, sumexp)->dtype != sr_value_type(I, am)->dtype)
    am = sr_nn_keep(s, sr_lax_convert(I, am, sr_value_type(I, sumexp)->dtype, 0, NULL));
  SrVal *out = C2("jax.lax.add", C1("jax.lax.log", sumexp), am);
  if (!out || !sign) return sr_nn_done(s, NULL);
  if (return_sign) {
    SrVal *items[2] = {sr_ref(out), sr_ref(sign)};
    return sr_nn_done(s, sr_nn_keep(s, sr_tuple(NULL, 2, items)));
  }
  if (b && !cplx) {
    SrVal *nan = sr_nn_typed_scalar(s, NAN, sr_value_type(I, out)->dtype);
    out = C3("jax.numpy.where", OP(LT, sign, sr_nn_int(s, 0)), nan, out);
  }
  return sr_nn_done(s, out);
}

/* ---- registration ---- */

void sr_scipy_special_init(void) {
  sr_def("jax.scipy.special.logsumexp jax.nn.logsumexp", sp_logsumexp,
         "logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None): log(sum(b * exp(a)))");
  sr_def("jax.scipy.special.erf", sp_erf, "erf(x): the error function, lax.erf (jax.scipy.special)");
  sr_def("jax.scipy.special.erfc", sp_erfc, "erfc(x): 1 - erf(x), lax.erfc (jax.scipy.special)");
  sr_def("jax.scipy.special.erfinv", sp_erfinv, "erfinv(x): the inverse of erf, lax.erf_inv (jax.scipy.special)");
  sr_def("jax.scipy.special.gammaln", sp_gammaln, "gammaln(x): log|Gamma(x)|, lax.lgamma (jax.scipy.special)");
  sr_def("jax.scipy.special.digamma", sp_digamma, "digamma(x): d/dx log Gamma(x), lax.digamma (jax.scipy.special)");
  sr_def("jax.lax.lgamma", lax_lgamma, "lgamma(x): log|Gamma(x)| elementwise (the lgamma primitive)");
  sr_def("jax.lax.digamma", lax_digamma, "digamma(x): the digamma function elementwise (the digamma primitive)");
  sr_def("jax.lax.polygamma", lax_polygamma, "polygamma(m, x): the m-th derivative of digamma (the polygamma primitive)");
  sr_def("jax.lax.zeta", lax_zeta, "zeta(x, q): the Hurwitz zeta function elementwise (the zeta primitive)");
  sr_def("jax.scipy.special.polygamma", sp_polygamma,
         "polygamma(n, x): the n-th derivative of digamma, n an integer, lax.polygamma (jax.scipy.special)");
  sr_def("jax.scipy.special.expit", sp_expit, "expit(x): 1 / (1 + exp(-x)), lax.logistic (jax.scipy.special)");
  sr_def("jax.scipy.special.logit", sp_logit, "logit(x): log(x / (1 - x)), a custom_jvp (jax.scipy.special)");
  sr_def("jax.scipy.special.xlogy", sp_xlogy, "xlogy(x, y): x * log(y), 0 where x == 0, a custom_jvp (jax.scipy.special)");
  sr_def("jax.scipy.special.xlog1py", sp_xlog1py,
         "xlog1py(x, y): x * log1p(y), 0 where x == 0, a custom_jvp (jax.scipy.special)");
  sr_def("jax.scipy.special.entr", sp_entr, "entr(x): -x * log(x), -inf for x < 0 (jax.scipy.special)");
}
