/* scipy_stats.c: jax.scipy.stats (jax/_src/scipy/stats/NAME.py): the
 * distributions' logpdf, pdf, cdf, ... as functions of the modules
 * jax.scipy.stats.norm, .multivariate_normal, .uniform, .expon, .laplace,
 * .logistic, .cauchy, .bernoulli, .poisson, .gamma, .beta, .t, .chi2,
 * .geom, .pareto, .gumbel_r, .gumbel_l, .binom, .nbinom, .betabinom,
 * .gennorm, .vonmises, .wrapcauchy, .dirichlet, .multinomial and
 * .truncnorm.
 *
 * None but betabinom.logpmf and truncnorm's functions (not its pdf) is
 * jitted in JAX, and those are jits here.  Each promotes its arguments
 * (promote_args_inexact under the name JAX gives it, "norm.logpdf") and
 * writes the formula with lax operations, jnp.where and
 * jax.scipy.special, and so does each here, operation for operation, with
 * nn.h's scope: the values, dtypes, weak types and jaxprs follow JAX's.  A
 * function calling another (pdf is
 * lax.exp(logpdf(...))) calls it as JAX does, promotion and all.
 *
 * _lax_const(x, v) of an array x is np.array(v, x.dtype), a constant that
 * is not weakly typed (lax.div(x, _lax_const(x, -2)) is strong even for a
 * weak x); of a Python scalar it is a Python scalar of x's type.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jax/jax.h"
#include "jax/nn.h"
#include "jax/numpy.h"
#include "jax/np_host.h"
#include "core/jaxstate.h"
#include "py/ast.h"
#include "py/objects.h"

#define SCOPE(I) SrNnScope s_ = {(I), {0}, 0}, *s = &s_
#define C1(q, x) sr_nn_call1(s, q, x)
#define C2(q, x, y) sr_nn_call2(s, q, x, y)
#define C3(q, x, y, z) sr_nn_call3(s, q, x, y, z)
#define L1(op, x) sr_nn_call1(s, "jax.lax." op, x)
#define L2(op, x, y) sr_nn_call2(s, "jax.lax." op, x, y)
#define OP(op, x, y) sr_nn_op(s, SR_OP_##op, x, y)
#define FL(d) sr_nn_float(s, d)
#define INT(i) sr_nn_int(s, i)
#define KEEP(v) sr_nn_keep(s, v)
#define SP(name) "jax.scipy.special." name
#define WHERE(c, a, b) C3("jax.numpy.where", c, a, b)

static const SrType *ty(SrInterp *I, SrVal *x) { return x ? sr_value_type(I, x) : NULL; }

/* -x (jnp.negative for an array) */
static SrVal *neg(SrNnScope *s, SrVal *x) { return x ? KEEP(sr_unop(s->I, SR_OP_NEG, x)) : NULL; }

/* _lax_const(x, v) of a promoted x (an array in JAX, though a weak
   scalar may be held here as a Python float): np.array(v, x.dtype) */
static SrVal *cst(SrNnScope *s, SrVal *x, double v) {
  const SrType *t = ty(s->I, x);
  return t ? sr_nn_typed_scalar(s, v, t->dtype) : NULL;
}

/* _lax_const(x, v) of an argument as given: a Python scalar of x's type
   for a Python scalar */
static SrVal *cst_arg(SrNnScope *s, SrVal *x, double v) {
  if (!x) return NULL;
  if (x->kind == SR_V_FLOAT) return FL(v);
  if (x->kind == SR_V_INT) return INT((int64_t)v);
  if (x->kind == SR_V_BOOL) return KEEP(sr_bool(v != 0));
  return cst(s, x, v);
}

/* check_arraylike(name, *args) */
static int arraylike(SrInterp *I, const char *name, int n, SrVal **args) {
  for (int i = 0; i < n; i++) {
    SrVal *v = args[i];
    if (v->kind == SR_V_INT || v->kind == SR_V_FLOAT || v->kind == SR_V_BOOL || v->kind == SR_V_COMPLEX ||
        sr_array_of(v) || sr_is_ndarray(v))
      continue;
    sr_raise(I, "TypeError", "%s requires ndarray or scalar arguments, got <class '%s'> at position %d.", name,
             sr_val_kind_name(v), i);
    return -1;
  }
  return 0;
}

/* promote_args_inexact(name, *p): replaces p[0..n) */
static int promote(SrNnScope *s, const char *name, int n, SrVal **p) {
  for (int i = 0; i < n; i++)
    if (!p[i]) return -1;
  if (arraylike(s->I, name, n, p) < 0) return -1;
  return sr_nn_promote_inexact(s, n, p, name);
}

#define PROMOTE(name, n)                                                                                              \
  do {                                                                                                                 \
    if (promote(s, name, n, p) < 0) return NULL;                                                                       \
  } while (0)

/* (x - loc) / scale, lax.div(lax.sub(x, loc), scale) */
static SrVal *standardize(SrNnScope *s, SrVal *x, SrVal *loc, SrVal *scale) {
  return L2("div", L2("sub", x, loc), scale);
}

static SrVal *jselect(SrNnScope *s, int n, SrVal **conds, SrVal **vals) {
  for (int i = 0; i < n; i++)
    if (!conds[i] || !vals[i]) return NULL;
  SrVal *ci[8], *vi[8];
  for (int i = 0; i < n; i++) {
    ci[i] = sr_ref(conds[i]);
    vi[i] = sr_ref(vals[i]);
  }
  SrVal *v[2] = {KEEP(sr_tuple(NULL, n, ci)), KEEP(sr_tuple(NULL, n, vi))};
  return sr_nn_call(s, "jax.numpy.select", 2, v, 0, NULL, NULL);
}

typedef SrVal *(*StatFn)(SrNnScope *s, SrVal **p);

/* ---- norm ---- */

static SrVal *norm_logpdf(SrNnScope *s, SrVal **p) {
  PROMOTE("norm.logpdf", 3);
  SrVal *x = p[0], *loc = p[1], *scale = p[2];
  SrVal *ss = L1("square", scale);
  SrVal *lognorm = L1("log", L2("mul", cst(s, x, 2 * M_PI), ss));
  SrVal *quad = L2("div", L1("square", L2("sub", x, loc)), ss);
  return L2("div", L2("add", lognorm, quad), cst(s, x, -2));
}

static SrVal *norm_pdf(SrNnScope *s, SrVal **p) { return L1("exp", norm_logpdf(s, p)); }

static SrVal *norm_cdf(SrNnScope *s, SrVal **p) {
  PROMOTE("norm.cdf", 3);
  return C1(SP("ndtr"), standardize(s, p[0], p[1], p[2]));
}

static SrVal *norm_logcdf(SrNnScope *s, SrVal **p) {
  PROMOTE("norm.logcdf", 3);
  return C1(SP("log_ndtr"), standardize(s, p[0], p[1], p[2]));
}

/* jnp.asarray(special.ndtri(q) * scale + loc, float) */
static SrVal *norm_ppf(SrNnScope *s, SrVal **p) {
  SrVal *r = OP(ADD, OP(MUL, C1(SP("ndtri"), p[0]), p[2]), p[1]);
  return r ? KEEP(sr_lax_convert(s->I, r, s->I->jax->enable_x64 ? SR_F64 : SR_F32, 0, NULL)) : NULL;
}

/* logcdf(-x, -loc, scale) */
static SrVal *norm_logsf(SrNnScope *s, SrVal **p) {
  PROMOTE("norm.logsf", 3);
  SrVal *q[3] = {neg(s, p[0]), neg(s, p[1]), p[2]};
  return norm_logcdf(s, q);
}

static SrVal *norm_sf(SrNnScope *s, SrVal **p) {
  PROMOTE("norm.sf", 3);
  SrVal *q[3] = {neg(s, p[0]), neg(s, p[1]), p[2]};
  return norm_cdf(s, q);
}

/* ppf(lax.sub(_lax_const(q, 1), q), loc, scale) */
static SrVal *norm_isf(SrNnScope *s, SrVal **p) {
  SrVal *q[3] = {L2("sub", cst_arg(s, p[0], 1), p[0]), p[1], p[2]};
  return q[0] ? norm_ppf(s, q) : NULL;
}

/* ---- uniform ---- */

/* x > loc + scale or x < loc */
static SrVal *outside(SrNnScope *s, SrVal *x, SrVal *loc, SrVal *scale) {
  return C2("jax.numpy.logical_or", L2("gt", x, L2("add", loc, scale)), L2("lt", x, loc));
}

static SrVal *uniform_logpdf(SrNnScope *s, SrVal **p) {
  PROMOTE("uniform.logpdf", 3);
  SrVal *lp = L1("neg", L1("log", p[2]));
  return lp ? WHERE(outside(s, p[0], p[1], p[2]), FL(-INFINITY), lp) : NULL;
}

static SrVal *uniform_pdf(SrNnScope *s, SrVal **p) { return L1("exp", uniform_logpdf(s, p)); }

static SrVal *uniform_cdf(SrNnScope *s, SrVal **p) {
  PROMOTE("uniform.cdf", 3);
  SrVal *x = p[0], *loc = p[1], *scale = p[2];
  SrDtype dt = ty(s->I, x)->dtype;
  SrVal *zero = sr_nn_typed_scalar(s, 0, dt), *one = sr_nn_typed_scalar(s, 1, dt);
  SrVal *conds[3] = {L2("lt", x, loc), L2("gt", x, L2("add", loc, scale)), NULL};
  conds[2] = OP(BITAND, L2("ge", x, loc), L2("le", x, L2("add", loc, scale)));
  SrVal *vals[3] = {zero, one, standardize(s, x, loc, scale)};
  return jselect(s, 3, conds, vals);
}

/* jnp.isnan(q) | (q < 0) | (q > 1) */
static SrVal *bad_q(SrNnScope *s, SrVal *q) {
  return OP(BITOR, OP(BITOR, C1("jax.numpy.isnan", q), OP(LT, q, INT(0))), OP(GT, q, INT(1)));
}

static SrVal *uniform_ppf(SrNnScope *s, SrVal **p) {
  PROMOTE("uniform.ppf", 3);
  SrVal *q = p[0];
  SrVal *c = bad_q(s, q);
  return c ? WHERE(c, FL(NAN), L2("add", p[1], L2("mul", p[2], q))) : NULL;
}

/* ---- expon ---- */

static SrVal *expon_logpdf(SrNnScope *s, SrVal **p) {
  PROMOTE("expon.logpdf", 3);
  SrVal *x = p[0], *loc = p[1], *scale = p[2];
  SrVal *ls = L1("log", scale);
  SrVal *lin = standardize(s, x, loc, scale);
  SrVal *lp = L1("neg", L2("add", lin, ls));
  return lp ? WHERE(L2("lt", x, loc), FL(-INFINITY), lp) : NULL;
}

static SrVal *expon_pdf(SrNnScope *s, SrVal **p) { return L1("exp", expon_logpdf(s, p)); }

static SrVal *expon_cdf(SrNnScope *s, SrVal **p) {
  PROMOTE("expon.cdf", 3);
  SrVal *x = p[0], *loc = p[1];
  SrVal *nsx = L2("div", L2("sub", loc, x), p[2]);
  SrVal *c = L2("lt", x, loc);
  SrVal *z = c ? C1("jax.numpy.zeros_like", nsx) : NULL;
  return z ? WHERE(c, z, L1("neg", L1("expm1", nsx))) : NULL;
}

/* promote_args_inexact('expon.sf', ...), as JAX names it */
static SrVal *expon_logsf(SrNnScope *s, SrVal **p) {
  PROMOTE("expon.sf", 3);
  SrVal *x = p[0], *loc = p[1];
  SrVal *nsx = L2("div", L2("sub", loc, x), p[2]);
  SrVal *c = L2("lt", x, loc);
  SrVal *z = c ? C1("jax.numpy.zeros_like", nsx) : NULL;
  return z ? WHERE(c, z, nsx) : NULL;
}

static SrVal *expon_sf(SrNnScope *s, SrVal **p) { return L1("exp", expon_logsf(s, p)); }

static SrVal *expon_logcdf(SrNnScope *s, SrVal **p) { return L1("log1p", L1("neg", expon_sf(s, p))); }

static SrVal *expon_ppf(SrNnScope *s, SrVal **p) {
  PROMOTE("expon.ppf", 3);
  SrVal *q = p[0];
  SrVal *c = bad_q(s, q);
  return c ? WHERE(c, FL(NAN), L2("sub", p[1], L2("mul", p[2], L1("log1p", L1("neg", q))))) : NULL;
}

/* ---- laplace ---- */

static SrVal *laplace_logpdf(SrNnScope *s, SrVal **p) {
  PROMOTE("laplace.logpdf", 3);
  SrVal *x = p[0], *loc = p[1], *scale = p[2];
  SrVal *two = cst(s, x, 2);
  SrVal *lin = L2("div", L1("abs", L2("sub", x, loc)), scale);
  return L1("neg", L2("add", lin, L1("log", L2("mul", two, scale))));
}

static SrVal *laplace_pdf(SrNnScope *s, SrVal **p) { return L1("exp", laplace_logpdf(s, p)); }

static SrVal *laplace_cdf(SrNnScope *s, SrVal **p) {
  PROMOTE("laplace.cdf", 3);
  SrVal *x = p[0];
  SrVal *half = cst(s, x, 0.5), *one = cst(s, x, 1), *zero = cst(s, x, 0);
  SrVal *diff = standardize(s, x, p[1], p[2]);
  SrVal *c = L2("le", diff, zero);
  SrVal *lo = L2("mul", half, L1("exp", diff));
  SrVal *hi = L2("sub", one, L2("mul", half, L1("exp", L1("neg", diff))));
  return C3("jax.lax.select", c, lo, hi);
}

/* ---- logistic ---- */

static SrVal *logistic_logpdf(SrNnScope *s, SrVal **p) {
  PROMOTE("logistic.logpdf", 3);
  SrVal *x = standardize(s, p[0], p[1], p[2]);
  SrVal *two = cst(s, x, 2);
  SrVal *hx = L2("div", x, two);
  SrVal *lae = C2("jax.numpy.logaddexp", hx, L1("neg", hx));
  return L2("sub", L2("mul", L1("neg", two), lae), L1("log", p[2]));
}

static SrVal *logistic_pdf(SrNnScope *s, SrVal **p) { return L1("exp", logistic_logpdf(s, p)); }

static SrVal *logistic_ppf(SrNnScope *s, SrVal **p) {
  PROMOTE("logistic.ppf", 3);
  return L2("add", L2("mul", C1(SP("logit"), p[0]), p[2]), p[1]);
}

static SrVal *logistic_sf(SrNnScope *s, SrVal **p) {
  PROMOTE("logistic.sf", 3);
  return C1(SP("expit"), L1("neg", standardize(s, p[0], p[1], p[2])));
}

static SrVal *logistic_isf(SrNnScope *s, SrVal **p) {
  PROMOTE("logistic.isf", 3);
  return L2("add", L2("mul", L1("neg", C1(SP("logit"), p[0])), p[2]), p[1]);
}

static SrVal *logistic_cdf(SrNnScope *s, SrVal **p) {
  PROMOTE("logistic.cdf", 3);
  return C1(SP("expit"), standardize(s, p[0], p[1], p[2]));
}

/* ---- cauchy ---- */

static SrVal *cauchy_logpdf(SrNnScope *s, SrVal **p) {
  PROMOTE("cauchy.logpdf", 3);
  SrVal *x = p[0], *scale = p[2];
  SrVal *pi = cst(s, x, M_PI);
  SrVal *sx = standardize(s, x, p[1], scale);
  SrVal *nt = L1("log", L2("mul", pi, scale));
  return L1("neg", L2("add", nt, L1("log1p", L2("mul", sx, sx))));
}

static SrVal *cauchy_pdf(SrNnScope *s, SrVal **p) { return L1("exp", cauchy_logpdf(s, p)); }

static SrVal *cauchy_cdf(SrNnScope *s, SrVal **p) {
  PROMOTE("cauchy.cdf", 3);
  SrVal *x = p[0];
  SrVal *pi = cst(s, x, M_PI);
  SrVal *sx = standardize(s, x, p[1], p[2]);
  return L2("add", cst(s, x, 0.5), L2("mul", L2("div", cst(s, x, 1.0), pi), C1("jax.numpy.arctan", sx)));
}

static SrVal *cauchy_logcdf(SrNnScope *s, SrVal **p) { return L1("log", cauchy_cdf(s, p)); }

static SrVal *cauchy_sf(SrNnScope *s, SrVal **p) {
  PROMOTE("cauchy.sf", 3);
  SrVal *q[3] = {neg(s, p[0]), neg(s, p[1]), p[2]};
  return cauchy_cdf(s, q);
}

static SrVal *cauchy_logsf(SrNnScope *s, SrVal **p) {
  PROMOTE("cauchy.logsf", 3);
  SrVal *q[3] = {neg(s, p[0]), neg(s, p[1]), p[2]};
  return cauchy_logcdf(s, q);
}

/* tan(pi q - pi/2) (ppf) or tan(pi/2 - pi q) (isf), * scale + loc */
static SrVal *cauchy_inv(SrNnScope *s, SrVal **p, const char *name, int isf) {
  if (promote(s, name, 3, p) < 0) return NULL;
  SrVal *q = p[0];
  SrVal *pi = cst(s, q, M_PI), *hpi = cst(s, q, M_PI / 2);
  SrVal *pq = L2("mul", pi, q);
  SrVal *u = L1("tan", isf ? L2("sub", hpi, pq) : L2("sub", pq, hpi));
  return L2("add", L2("mul", u, p[2]), p[1]);
}

static SrVal *cauchy_isf(SrNnScope *s, SrVal **p) { return cauchy_inv(s, p, "cauchy.isf", 1); }
static SrVal *cauchy_ppf(SrNnScope *s, SrVal **p) { return cauchy_inv(s, p, "cauchy.ppf", 0); }

/* ---- bernoulli ---- */

static SrVal *bernoulli_logpmf(SrNnScope *s, SrVal **p) {
  PROMOTE("bernoulli.logpmf", 3);
  SrVal *k = p[0], *pr = p[1];
  SrVal *zero = cst(s, k, 0), *one = cst(s, k, 1);
  SrVal *x = L2("sub", k, p[2]);
  SrVal *lp = OP(ADD, C2(SP("xlogy"), x, pr), C2(SP("xlog1py"), L2("sub", one, x), neg(s, pr)));
  SrVal *c = lp ? C2("jax.numpy.logical_or", L2("lt", x, zero), L2("gt", x, one)) : NULL;
  return c ? WHERE(c, FL(-INFINITY), lp) : NULL;
}

static SrVal *bernoulli_pmf(SrNnScope *s, SrVal **p) { return C1("jax.numpy.exp", bernoulli_logpmf(s, p)); }

/* jnp.isnan(k) | jnp.isnan(p) | (p < zero) | (p > one) */
static SrVal *bad_kp(SrNnScope *s, SrVal *k, SrVal *pr, SrVal *zero, SrVal *one) {
  SrVal *c = OP(BITOR, C1("jax.numpy.isnan", k), C1("jax.numpy.isnan", pr));
  c = OP(BITOR, c, OP(LT, pr, zero));
  return OP(BITOR, c, OP(GT, pr, one));
}

static SrVal *bernoulli_cdf(SrNnScope *s, SrVal **p) {
  PROMOTE("bernoulli.cdf", 2);
  SrVal *k = p[0], *pr = p[1];
  SrVal *zero = cst(s, k, 0), *one = cst(s, k, 1);
  SrVal *conds[4] = {bad_kp(s, k, pr, zero, one), L2("lt", k, zero), NULL, L2("ge", k, one)};
  conds[2] = C2("jax.numpy.logical_and", L2("ge", k, zero), L2("lt", k, one));
  SrVal *vals[4] = {FL(NAN), zero, OP(SUB, one, pr), one};
  return jselect(s, 4, conds, vals);
}

static SrVal *bernoulli_ppf(SrNnScope *s, SrVal **p) {
  PROMOTE("bernoulli.ppf", 2);
  SrVal *q = p[0], *pr = p[1];
  SrVal *zero = cst(s, q, 0), *one = cst(s, q, 1);
  SrVal *c = OP(BITOR, C1("jax.numpy.isnan", q), C1("jax.numpy.isnan", pr));
  c = OP(BITOR, OP(BITOR, c, OP(LT, pr, zero)), OP(GT, pr, one));
  c = OP(BITOR, OP(BITOR, c, OP(LT, q, zero)), OP(GT, q, one));
  SrVal *in = c ? WHERE(L2("le", q, OP(SUB, one, pr)), zero, one) : NULL;
  return in ? WHERE(c, FL(NAN), in) : NULL;
}

/* ---- poisson ---- */

static SrVal *poisson_logpmf(SrNnScope *s, SrVal **p) {
  PROMOTE("poisson.logpmf", 3);
  SrVal *k = p[0], *mu = p[1];
  SrVal *zero = cst(s, k, 0);
  SrVal *x = L2("sub", k, p[2]);
  SrVal *lp = OP(SUB, OP(SUB, C2(SP("xlogy"), x, mu), C1(SP("gammaln"), OP(ADD, x, INT(1)))), mu);
  SrVal *c = lp ? C2("jax.numpy.logical_or", L2("lt", x, zero), L2("ne", C1("jax.numpy.round", k), k)) : NULL;
  return c ? WHERE(c, FL(-INFINITY), lp) : NULL;
}

static SrVal *poisson_pmf(SrNnScope *s, SrVal **p) { return C1("jax.numpy.exp", poisson_logpmf(s, p)); }

/* promote_args_inexact('poisson.logpmf', ...), as JAX names it */
static SrVal *poisson_cdf(SrNnScope *s, SrVal **p) {
  PROMOTE("poisson.logpmf", 3);
  SrVal *k = p[0];
  SrVal *zero = cst(s, k, 0);
  SrVal *x = L2("sub", k, p[2]);
  SrVal *pr = C2(SP("gammaincc"), C1("jax.numpy.floor", OP(ADD, INT(1), x)), p[1]);
  return pr ? WHERE(L2("lt", x, zero), zero, pr) : NULL;
}

/* ---- gamma ---- */

static SrVal *gamma_logpdf(SrNnScope *s, SrVal **p) {
  PROMOTE("gamma.logpdf", 4);
  SrVal *x = p[0], *a = p[1], *loc = p[2], *scale = p[3];
  SrVal *ok = L2("ge", x, loc);
  SrVal *one = cst(s, x, 1);
  SrVal *y = ok ? WHERE(ok, standardize(s, x, loc, scale), one) : NULL;
  SrVal *llt = L2("sub", C2(SP("xlogy"), L2("sub", a, one), y), y);
  SrVal *st = L2("add", C1(SP("gammaln"), a), L1("log", scale));
  SrVal *lp = L2("sub", llt, st);
  return lp ? WHERE(ok, lp, FL(-INFINITY)) : NULL;
}

static SrVal *gamma_pdf(SrNnScope *s, SrVal **p) { return L1("exp", gamma_logpdf(s, p)); }

static SrVal *gamma_cdf(SrNnScope *s, SrVal **p) {
  PROMOTE("gamma.cdf", 4);
  SrVal *x = p[0];
  SrVal *y = C3("jax.lax.clamp", cst(s, x, 0), standardize(s, x, p[2], p[3]), cst(s, x, INFINITY));
  return C2(SP("gammainc"), p[1], y);
}

static SrVal *gamma_logcdf(SrNnScope *s, SrVal **p) { return L1("log", gamma_cdf(s, p)); }

static SrVal *gamma_sf(SrNnScope *s, SrVal **p) {
  PROMOTE("gamma.sf", 4);
  SrVal *y = standardize(s, p[0], p[2], p[3]);
  SrVal *c = L2("lt", y, cst(s, y, 0));
  SrVal *g = c ? C2(SP("gammaincc"), p[1], y) : NULL;
  return g ? WHERE(c, INT(1), g) : NULL;
}

static SrVal *gamma_logsf(SrNnScope *s, SrVal **p) { return L1("log", gamma_sf(s, p)); }

/* ---- beta ---- */

static SrVal *beta_logpdf(SrNnScope *s, SrVal **p) {
  PROMOTE("beta.logpdf", 5);
  SrVal *x = p[0], *a = p[1], *b = p[2], *loc = p[3], *scale = p[4];
  SrVal *one = cst(s, x, 1), *zero = cst(s, a, 0);
  SrVal *shape_term = L1("neg", C2(SP("betaln"), a, b));
  SrVal *y = standardize(s, x, loc, scale);
  SrVal *llt = L2("add", C2(SP("xlogy"), L2("sub", a, one), y), C2(SP("xlog1py"), L2("sub", b, one), L1("neg", y)));
  SrVal *lp = L2("sub", L2("add", shape_term, llt), L1("log", scale));
  SrVal *r = lp ? WHERE(outside(s, x, loc, scale), FL(-INFINITY), lp) : NULL;
  SrVal *c = r ? C2("jax.numpy.logical_or", C2("jax.numpy.logical_or", L2("le", a, zero), L2("le", b, zero)),
                    L2("le", scale, zero))
               : NULL;
  return c ? WHERE(c, FL(NAN), r) : NULL;
}

static SrVal *beta_pdf(SrNnScope *s, SrVal **p) { return L1("exp", beta_logpdf(s, p)); }

/* lax.clamp(_lax_const(x, 0), lax.div(lax.sub(x, loc), scale), _lax_const(x, 1)) */
static SrVal *unit_clamp(SrNnScope *s, SrVal *x, SrVal *loc, SrVal *scale) {
  return C3("jax.lax.clamp", cst(s, x, 0), standardize(s, x, loc, scale), cst(s, x, 1));
}

static SrVal *beta_cdf(SrNnScope *s, SrVal **p) {
  PROMOTE("beta.cdf", 5);
  return C3(SP("betainc"), p[1], p[2], unit_clamp(s, p[0], p[3], p[4]));
}

static SrVal *beta_logcdf(SrNnScope *s, SrVal **p) { return L1("log", beta_cdf(s, p)); }

static SrVal *beta_sf(SrNnScope *s, SrVal **p) {
  PROMOTE("beta.sf", 5);
  SrVal *c = unit_clamp(s, p[0], p[3], p[4]);
  return C3(SP("betainc"), p[2], p[1], c ? OP(SUB, INT(1), c) : NULL);
}

static SrVal *beta_logsf(SrNnScope *s, SrVal **p) { return L1("log", beta_sf(s, p)); }

/* ---- t ---- */

static SrVal *t_logpdf(SrNnScope *s, SrVal **p) {
  PROMOTE("t.logpdf", 4);
  SrVal *x = p[0], *df = p[1], *scale = p[3];
  SrVal *two = cst(s, x, 2);
  SrVal *sx = standardize(s, x, p[2], scale);
  SrVal *d2 = L2("div", df, two);
  SrVal *d12 = L2("add", d2, cst(s, x, 0.5));
  SrVal *nc = L2("mul", L2("mul", scale, scale), cst(s, x, M_PI));
  SrVal *nt = L2("div", L1("log", L2("mul", nc, df)), two);
  SrVal *norm = L2("sub", L2("add", L1("lgamma", d2), nt), L1("lgamma", d12));
  SrVal *quad = L2("div", L2("mul", sx, sx), df);
  return L1("neg", L2("add", norm, L2("mul", d12, L1("log1p", quad))));
}

static SrVal *t_pdf(SrNnScope *s, SrVal **p) { return L1("exp", t_logpdf(s, p)); }

/* ---- chi2 ---- */

static SrVal *chi2_logpdf(SrNnScope *s, SrVal **p) {
  PROMOTE("chi2.logpdf", 4);
  SrVal *x = p[0], *df = p[1], *loc = p[2], *scale = p[3];
  SrVal *one = cst(s, x, 1), *two = cst(s, x, 2);
  SrVal *y = standardize(s, x, loc, scale);
  SrVal *d2 = L2("div", df, two);
  SrVal *kernel = L2("sub", L2("mul", L2("sub", d2, one), L1("log", y)), L2("div", y, two));
  SrVal *nc = L1("neg", L2("add", L1("lgamma", d2), L2("div", L2("mul", L1("log", two), df), two)));
  SrVal *lp = L2("add", L2("sub", nc, L1("log", scale)), kernel);
  return lp ? WHERE(L2("lt", x, loc), FL(-INFINITY), lp) : NULL;
}

static SrVal *chi2_pdf(SrNnScope *s, SrVal **p) { return L1("exp", chi2_logpdf(s, p)); }

/* gammainc or gammaincc of (df / 2, clamp(0, (x - loc) / (scale * 2), inf)) */
static SrVal *chi2_inc(SrNnScope *s, SrVal **p, const char *name, const char *inc) {
  if (promote(s, name, 4, p) < 0) return NULL;
  SrVal *x = p[0], *scale = p[3];
  SrVal *two = cst(s, scale, 2);
  SrVal *y = C3("jax.lax.clamp", cst(s, x, 0), L2("div", L2("sub", x, p[2]), L2("mul", scale, two)),
                cst(s, x, INFINITY));
  return C2(inc, L2("div", p[1], two), y);
}

static SrVal *chi2_cdf(SrNnScope *s, SrVal **p) { return chi2_inc(s, p, "chi2.cdf", SP("gammainc")); }
static SrVal *chi2_logcdf(SrNnScope *s, SrVal **p) { return L1("log", chi2_cdf(s, p)); }
static SrVal *chi2_sf(SrNnScope *s, SrVal **p) { return chi2_inc(s, p, "chi2.sf", SP("gammaincc")); }
static SrVal *chi2_logsf(SrNnScope *s, SrVal **p) { return L1("log", chi2_sf(s, p)); }

/* ---- geom ---- */

static SrVal *geom_logpmf(SrNnScope *s, SrVal **p) {
  PROMOTE("geom.logpmf", 3);
  SrVal *k = p[0], *pr = p[1];
  SrVal *zero = cst(s, k, 0), *one = cst(s, k, 1);
  SrVal *x = L2("sub", k, p[2]);
  SrVal *lp = OP(ADD, C2(SP("xlog1py"), L2("sub", x, one), neg(s, pr)), L1("log", pr));
  return lp ? WHERE(L2("le", x, zero), FL(-INFINITY), lp) : NULL;
}

static SrVal *geom_pmf(SrNnScope *s, SrVal **p) { return C1("jax.numpy.exp", geom_logpmf(s, p)); }

/* ---- pareto ---- */

static SrVal *pareto_logpdf(SrNnScope *s, SrVal **p) {
  PROMOTE("pareto.logpdf", 4);
  SrVal *x = p[0], *b = p[1], *loc = p[2], *scale = p[3];
  SrVal *one = cst(s, x, 1);
  SrVal *sx = standardize(s, x, loc, scale);
  SrVal *nt = L1("log", L2("div", scale, b));
  SrVal *lp = L1("neg", L2("add", nt, L2("mul", L2("add", b, one), L1("log", sx))));
  return lp ? WHERE(L2("lt", x, L2("add", loc, scale)), FL(-INFINITY), lp) : NULL;
}

static SrVal *pareto_pdf(SrNnScope *s, SrVal **p) { return L1("exp", pareto_logpdf(s, p)); }

static SrVal *pareto_cdf(SrNnScope *s, SrVal **p) {
  PROMOTE("pareto.cdf", 4);
  SrVal *x = p[0], *loc = p[2], *scale = p[3];
  SrVal *one = cst(s, x, 1), *zero = cst(s, x, 0);
  SrVal *sx = standardize(s, x, loc, scale);
  SrVal *c = L2("sub", one, L2("pow", sx, L1("neg", p[1])));
  return c ? WHERE(L2("lt", x, L2("add", loc, scale)), zero, c) : NULL;
}

static SrVal *pareto_logcdf(SrNnScope *s, SrVal **p) {
  PROMOTE("pareto.logcdf", 4);
  SrVal *x = p[0], *loc = p[2], *scale = p[3];
  SrVal *sx = standardize(s, x, loc, scale);
  SrVal *c = L1("log1p", L1("neg", L2("pow", sx, L1("neg", p[1]))));
  return c ? WHERE(L2("lt", x, L2("add", loc, scale)), FL(-INFINITY), c) : NULL;
}

static SrVal *pareto_logsf(SrNnScope *s, SrVal **p) {
  PROMOTE("pareto.logsf", 4);
  SrVal *x = p[0], *loc = p[2], *scale = p[3];
  SrVal *zero = cst(s, x, 0);
  SrVal *sx = standardize(s, x, loc, scale);
  SrVal *c = L1("neg", L2("mul", p[1], L1("log", sx)));
  return c ? WHERE(L2("lt", x, L2("add", loc, scale)), zero, c) : NULL;
}

static SrVal *pareto_sf(SrNnScope *s, SrVal **p) { return L1("exp", pareto_logsf(s, p)); }

static SrVal *pareto_ppf(SrNnScope *s, SrVal **p) {
  PROMOTE("pareto.ppf", 4);
  SrVal *q = p[0], *b = p[1];
  SrVal *one = cst(s, q, 1);
  SrVal *v = L2("add", p[2], L2("mul", p[3], L2("pow", L2("sub", one, q), L1("neg", L2("div", one, b)))));
  SrVal *c = v ? bad_q(s, q) : NULL;
  return c ? WHERE(c, FL(NAN), v) : NULL;
}

/* ---- gumbel_r, gumbel_l: nan where scale <= 0 ---- */

static SrVal *scale_ok(SrNnScope *s, SrVal *scale) { return L2("gt", scale, cst(s, scale, 0)); }

static SrVal *gumbel_logpdf(SrNnScope *s, SrVal **p, int right) {
  if (promote(s, right ? "gumbel_r.logpdf" : "gumbel_l.logpdf", 3, p) < 0) return NULL;
  SrVal *scale = p[2];
  SrVal *ok = scale_ok(s, scale);
  SrVal *z = standardize(s, p[0], p[1], scale);
  SrVal *nls = z ? C2(SP("xlogy"), INT(-1), scale) : NULL;
  SrVal *t2 = right ? L1("neg", L2("add", z, L1("exp", L1("neg", z)))) : L2("sub", z, L1("exp", z));
  SrVal *lp = L2("add", nls, t2);
  return lp ? WHERE(ok, lp, FL(NAN)) : NULL;
}

static SrVal *gumbel_r_logpdf(SrNnScope *s, SrVal **p) { return gumbel_logpdf(s, p, 1); }
static SrVal *gumbel_r_pdf(SrNnScope *s, SrVal **p) { return L1("exp", gumbel_logpdf(s, p, 1)); }

static SrVal *gumbel_r_logcdf(SrNnScope *s, SrVal **p) {
  PROMOTE("gumbel_r.logcdf", 3);
  SrVal *ok = scale_ok(s, p[2]);
  SrVal *z = standardize(s, p[0], p[1], p[2]);
  SrVal *lc = L1("neg", L1("exp", L1("neg", z)));
  return lc ? WHERE(ok, lc, FL(NAN)) : NULL;
}

static SrVal *gumbel_r_cdf(SrNnScope *s, SrVal **p) { return L1("exp", gumbel_r_logcdf(s, p)); }

/* lax.bitwise_and(lax.gt(p, 0), lax.lt(p, 1)) */
static SrVal *open_unit(SrNnScope *s, SrVal *q) {
  return L2("bitwise_and", L2("gt", q, cst(s, q, 0)), L2("lt", q, cst(s, q, 1)));
}

static SrVal *gumbel_r_ppf(SrNnScope *s, SrVal **p) {
  PROMOTE("gumbel_r.ppf", 3);
  SrVal *q = p[0];
  SrVal *ok = open_unit(s, q);
  SrVal *t1 = ok ? C2(SP("xlogy"), INT(-1), q) : NULL;
  SrVal *qu = L2("sub", p[1], L2("mul", p[2], L1("log", t1)));
  return qu ? WHERE(ok, qu, FL(NAN)) : NULL;
}

static SrVal *gumbel_r_sf(SrNnScope *s, SrVal **p) {
  PROMOTE("gumbel_r.sf", 3);
  SrVal *x = p[0];
  SrVal *ok = scale_ok(s, p[2]);
  SrVal *nz = L2("div", L2("sub", p[1], x), p[2]);
  SrVal *t1 = L1("exp", L1("neg", L1("exp", nz)));
  SrVal *sf = L2("sub", cst(s, x, 1), t1);
  return sf ? WHERE(ok, sf, FL(NAN)) : NULL;
}

static SrVal *gumbel_r_logsf(SrNnScope *s, SrVal **p) {
  PROMOTE("gumbel_r.logsf", 3);
  SrVal *ok = scale_ok(s, p[2]);
  SrVal *nz = L2("div", L2("sub", p[1], p[0]), p[2]);
  SrVal *ls = C1("jax.nn.log1mexp", L1("exp", nz));
  return ls ? WHERE(ok, ls, FL(NAN)) : NULL;
}

static SrVal *gumbel_l_logpdf(SrNnScope *s, SrVal **p) { return gumbel_logpdf(s, p, 0); }
static SrVal *gumbel_l_pdf(SrNnScope *s, SrVal **p) { return L1("exp", gumbel_logpdf(s, p, 0)); }

static SrVal *gumbel_l_logcdf(SrNnScope *s, SrVal **p) {
  PROMOTE("gumbel_l.logcdf", 3);
  SrVal *ok = scale_ok(s, p[2]);
  SrVal *z = standardize(s, p[0], p[1], p[2]);
  SrVal *nez = L1("neg", L1("exp", z));
  SrVal *lc = L1("log", neg(s, L1("expm1", nez)));
  return lc ? WHERE(ok, lc, FL(NAN)) : NULL;
}

static SrVal *gumbel_l_cdf(SrNnScope *s, SrVal **p) { return L1("exp", gumbel_l_logcdf(s, p)); }

static SrVal *gumbel_l_ppf(SrNnScope *s, SrVal **p) {
  PROMOTE("gumbel_l.ppf", 3);
  SrVal *q = p[0];
  SrVal *ok = open_unit(s, q);
  SrVal *t1 = ok ? C2(SP("xlog1py"), INT(-1), L1("neg", q)) : NULL;
  SrVal *qu = L2("add", p[1], L2("mul", p[2], L1("log", t1)));
  return qu ? WHERE(ok, qu, FL(NAN)) : NULL;
}

static SrVal *gumbel_l_logsf(SrNnScope *s, SrVal **p) {
  PROMOTE("gumbel_l.logsf", 3);
  SrVal *ok = scale_ok(s, p[2]);
  SrVal *z = standardize(s, p[0], p[1], p[2]);
  SrVal *ls = L1("neg", L1("exp", z));
  return ls ? WHERE(ok, ls, FL(NAN)) : NULL;
}

static SrVal *gumbel_l_sf(SrNnScope *s, SrVal **p) { return C1("jax.numpy.exp", gumbel_l_logsf(s, p)); }

/* ---- binom, nbinom ---- */

static SrVal *binom_logpmf(SrNnScope *s, SrVal **p) {
  PROMOTE("binom.logpmf", 4);
  SrVal *k = p[0], *n = p[1], *pr = p[2], *loc = p[3];
  SrVal *y = L2("sub", k, loc);
  SrVal *zero = cst(s, y, 0);
  SrVal *comb = L2("sub", C1(SP("gammaln"), OP(ADD, n, INT(1))),
                   L2("add", C1(SP("gammaln"), OP(ADD, y, INT(1))), C1(SP("gammaln"), OP(ADD, OP(SUB, n, y), INT(1)))));
  SrVal *llt = L2("add", C2(SP("xlogy"), y, pr), C2(SP("xlog1py"), L2("sub", n, y), L1("neg", pr)));
  SrVal *lp = L2("add", comb, llt);
  SrVal *c = lp ? C2("jax.numpy.logical_or", C2("jax.numpy.logical_and", L2("eq", y, zero), L2("eq", n, zero)),
                     L2("eq", llt, zero))
                : NULL;
  lp = c ? WHERE(c, FL(0.0), lp) : NULL;
  SrVal *in = lp ? OP(BITAND, L2("ge", k, loc), L2("lt", k, OP(ADD, OP(ADD, loc, n), INT(1)))) : NULL;
  return in ? WHERE(in, lp, FL(-INFINITY)) : NULL;
}

static SrVal *binom_pmf(SrNnScope *s, SrVal **p) { return L1("exp", binom_logpmf(s, p)); }

static SrVal *nbinom_logpmf(SrNnScope *s, SrVal **p) {
  PROMOTE("nbinom.logpmf", 4);
  SrVal *k = p[0], *n = p[1], *pr = p[2], *loc = p[3];
  SrVal *one = cst(s, k, 1);
  SrVal *y = L2("sub", k, loc);
  SrVal *comb = L2("sub", L2("sub", C1(SP("gammaln"), L2("add", y, n)), C1(SP("gammaln"), n)),
                   C1(SP("gammaln"), L2("add", y, one)));
  SrVal *llt = L2("add", C2(SP("xlogy"), n, pr), C2(SP("xlogy"), y, L2("sub", one, pr)));
  SrVal *lp = L2("add", comb, llt);
  return lp ? WHERE(L2("lt", k, loc), FL(-INFINITY), lp) : NULL;
}

static SrVal *nbinom_pmf(SrNnScope *s, SrVal **p) { return L1("exp", nbinom_logpmf(s, p)); }

/* ---- gennorm ---- */

/* lax.log(0.5 * beta) - lax.lgamma(1 / beta) - lax.abs(x) ** beta */
static SrVal *gennorm_logpdf(SrNnScope *s, SrVal **p) {
  PROMOTE("gennorm.logpdf", 2);
  SrVal *x = p[0], *b = p[1];
  SrVal *a = L1("log", OP(MUL, FL(0.5), b));
  SrVal *g = L1("lgamma", OP(DIV, INT(1), b));
  return OP(SUB, OP(SUB, a, g), OP(POW, L1("abs", x), b));
}

static SrVal *gennorm_pdf(SrNnScope *s, SrVal **p) { return L1("exp", gennorm_logpdf(s, p)); }

/* 0.5 * (1 + lax.sign(x) * lax.igamma(1 / beta, lax.abs(x) ** beta)) */
static SrVal *gennorm_cdf(SrNnScope *s, SrVal **p) {
  PROMOTE("gennorm.cdf", 2);
  SrVal *x = p[0], *b = p[1];
  SrVal *ig = L2("igamma", OP(DIV, INT(1), b), OP(POW, L1("abs", x), b));
  return OP(MUL, FL(0.5), OP(ADD, INT(1), OP(MUL, L1("sign", x), ig)));
}

/* ---- betabinom: logpmf is a jit (named logpmf) ---- */

static SrVal *betabinom_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *p[5] = {a->v[0], a->v[1], a->v[2], a->v[3], a->n > 4 ? a->v[4] : INT(0)};
  if (promote(s, "betabinom.logpmf", 5, p) < 0) return sr_nn_done(s, NULL);
  SrVal *k = p[0], *n = p[1], *al = p[2], *b = p[3], *loc = p[4];
  SrVal *y = L2("sub", L1("floor", k), loc);
  SrVal *one = cst(s, y, 1), *zero = cst(s, y, 0);
  SrVal *combiln = L1("neg", L2("add", L1("log1p", n), C2(SP("betaln"), L2("add", L2("sub", n, y), one),
                                                           L2("add", y, one))));
  SrVal *blns = L2("sub", C2(SP("betaln"), L2("add", y, al), L2("add", L2("sub", n, y), b)), C2(SP("betaln"), al, b));
  SrVal *lp = L2("add", combiln, blns);
  SrVal *c = lp ? C2("jax.numpy.logical_and", L2("eq", y, zero), L2("eq", n, zero)) : NULL;
  lp = c ? WHERE(c, FL(0.0), lp) : NULL;
  SrVal *yc = lp ? C2("jax.numpy.logical_or", C2("jax.numpy.logical_or", L2("lt", y, L1("neg", loc)), L2("gt", y, n)),
                      L2("le", L2("add", y, al), zero))
                 : NULL;
  lp = yc ? WHERE(yc, FL(-INFINITY), lp) : NULL;
  SrVal *nc = lp ? C2("jax.numpy.logical_or", C2("jax.numpy.logical_or", L2("lt", n, zero), L2("le", al, zero)),
                      L2("le", b, zero))
                 : NULL;
  return sr_nn_done(s, nc ? WHERE(nc, FL(NAN), lp) : NULL);
}

/* the arguments given (loc, when absent, is the body's default) */
static SrVal *betabinom_logpmf(SrNnScope *s, SrVal **p) {
  int n = p[4] ? 5 : 4;
  return KEEP(sr_api_jit(s->I, "logpmf", betabinom_body, NULL, n, p));
}

static SrVal *betabinom_pmf(SrNnScope *s, SrVal **p) { return L1("exp", betabinom_logpmf(s, p)); }

/* ---- vonmises, wrapcauchy ---- */

static SrVal *vonmises_logpdf(SrNnScope *s, SrVal **p) {
  PROMOTE("vonmises.logpdf", 2);
  SrVal *x = p[0], *kappa = p[1];
  SrVal *zero = cst(s, kappa, 0);
  SrVal *c = L2("gt", kappa, zero);
  SrVal *a = OP(MUL, kappa, OP(SUB, C1("jax.numpy.cos", x), INT(1)));
  SrVal *b = C1("jax.numpy.log", OP(MUL, FL(2 * M_PI), L1("bessel_i0e", kappa)));
  SrVal *v = OP(SUB, a, b);
  return v ? WHERE(c, v, FL(NAN)) : NULL;
}

static SrVal *vonmises_pdf(SrNnScope *s, SrVal **p) { return L1("exp", vonmises_logpdf(s, p)); }

static SrVal *wrapcauchy_logpdf(SrNnScope *s, SrVal **p) {
  PROMOTE("wrapcauchy.logpdf", 2);
  SrVal *x = p[0], *c = p[1];
  SrVal *cok = OP(BITAND, L2("gt", c, cst(s, c, 0)), L2("lt", c, cst(s, c, 1)));
  SrVal *xok = OP(BITAND, L2("ge", x, cst(s, x, 0)), L2("le", x, cst(s, x, 2 * M_PI)));
  SrVal *cc = OP(MUL, c, c);
  SrVal *v = OP(SUB, C1("jax.numpy.log", OP(SUB, INT(1), cc)), C1("jax.numpy.log", FL(2 * M_PI)));
  SrVal *den = OP(SUB, OP(ADD, INT(1), OP(MUL, c, c)), OP(MUL, OP(MUL, INT(2), c), C1("jax.numpy.cos", x)));
  v = OP(SUB, v, C1("jax.numpy.log", den));
  SrVal *in = v && xok ? WHERE(xok, v, FL(-INFINITY)) : NULL;
  return in && cok ? WHERE(cok, in, FL(NAN)) : NULL;
}

static SrVal *wrapcauchy_pdf(SrNnScope *s, SrVal **p) { return L1("exp", wrapcauchy_logpdf(s, p)); }

/* ---- dirichlet, multinomial ---- */

static int promote_dtypes_inexact(SrNnScope *s, int n, SrVal **p);

/* a shape as Python prints a tuple: (3,), (2, 3), () */
static const char *shape_text(const SrType *t, char *buf, size_t cap) {
  size_t k = (size_t)snprintf(buf, cap, "(");
  for (int i = 0; i < t->ndim && k < cap; i++)
    k += (size_t)snprintf(buf + k, cap - k, i ? ", %lld" : "%lld", (long long)t->dims[i].size);
  if (k < cap) snprintf(buf + k, cap - k, t->ndim == 1 ? ",)" : ")");
  return buf;
}

static SrVal *kw1(SrNnScope *s, const char *q, SrVal *x, const char *k, SrVal *v) {
  return x && v ? sr_nn_call(s, q, 1, &x, 1, &k, &v) : NULL;
}

static SrVal *dirichlet_logpdf(SrNnScope *s, SrVal **p) {
  SrInterp *I = s->I;
  if (promote_dtypes_inexact(s, 2, p) < 0) return NULL;
  SrVal *x = p[0], *alpha = p[1];
  const SrType *xt = ty(I, x), *at = ty(I, alpha);
  char b1[96], b2[96];
  if (at->ndim != 1)
    return sr_raise(I, "ValueError", "`alpha` must be one-dimensional; got alpha.shape=%s",
                    shape_text(at, b1, sizeof b1));
  int64_t na = at->dims[0].size;
  if (xt->ndim == 0) return sr_raise(I, "IndexError", "tuple index out of range");
  if (xt->dims[0].size != na && xt->dims[0].size != na - 1)
    return sr_raise(I, "ValueError",
                    "`x` must have either the same number of entries as `alpha` or one entry fewer; got "
                    "x.shape=%s, alpha.shape=%s",
                    shape_text(xt, b1, sizeof b1), shape_text(at, b2, sizeof b2));
  SrVal *one = cst(s, x, 1);
  if (xt->dims[0].size != na) {
    const char *kk[2] = {"axis", "keepdims"};
    SrVal *kv[2] = {INT(0), KEEP(sr_bool(1))};
    SrVal *xs = sr_nn_call(s, "jax.numpy.sum", 1, &x, 2, kk, kv);
    SrVal *last = L2("sub", one, xs);
    if (!last) return NULL;
    SrVal *it[2] = {sr_ref(x), sr_ref(last)};
    x = kw1(s, "jax.numpy.concatenate", KEEP(sr_tuple(NULL, 2, it)), "axis", INT(0));
    if (!x) return NULL;
    xt = ty(I, x);
  }
  SrVal *nt = OP(SUB, C1("jax.numpy.sum", C1(SP("gammaln"), alpha)), C1(SP("gammaln"), C1("jax.numpy.sum", alpha)));
  if (!nt) return NULL;
  if (xt->ndim > 1) {
    int64_t shape[SR_MAX_RANK], bd[1] = {0};
    shape[0] = na;
    for (int i = 1; i < xt->ndim; i++) shape[i] = 1;
    alpha = KEEP(sr_lax_broadcast_in_dim(I, alpha, shape, xt->ndim, bd, 1, NULL));
  }
  SrVal *lp = L2("sub", kw1(s, "jax.numpy.sum", C2(SP("xlogy"), L2("sub", alpha, one), x), "axis", INT(0)), nt);
  /* _is_simplex(x) */
  SrVal *xsum = lp ? kw1(s, "jax.numpy.sum", x, "axis", INT(0)) : NULL;
  SrVal *pos = kw1(s, "jax.numpy.all", OP(GT, x, INT(0)), "axis", INT(0));
  SrVal *simplex = OP(BITAND, pos, OP(LT, C1("jax.numpy.abs", OP(SUB, xsum, INT(1))), FL(1e-06)));
  return simplex ? WHERE(simplex, lp, FL(-INFINITY)) : NULL;
}

static SrVal *dirichlet_pdf(SrNnScope *s, SrVal **p) { return L1("exp", dirichlet_logpdf(s, p)); }

static SrVal *multinomial_logpmf(SrNnScope *s, SrVal **p) {
  SrInterp *I = s->I;
  SrVal *pr = p[2];
  if (promote(s, "multinomial.logpmf", 1, &pr) < 0) return NULL;
  /* promote_args_numeric('multinomial.logpmf', x, n) */
  SrVal *xn[2] = {p[0], p[1]};
  if (arraylike(I, "multinomial.logpmf", 2, xn) < 0) return NULL;
  for (int i = 0; i < 2; i++)
    if (!(xn[i] = KEEP(sr_jnp_asarray(I, xn[i], -1)))) return NULL;
  int weak;
  SrDtype dt = sr_jnp_result_dtype(I, 2, xn, &weak);
  if (dt == SR_BOOL) dt = I->jax->enable_x64 ? SR_I64 : SR_I32;
  for (int i = 0; i < 2; i++)
    if (!(xn[i] = KEEP(sr_lax_convert(I, xn[i], dt, weak, NULL)))) return NULL;
  if (sr_jnp_promote(I, 2, xn, "multinomial.logpmf") < 0) return NULL;
  KEEP(xn[0]);
  KEEP(xn[1]);
  if (!sr_dtype_is_int(ty(I, xn[0])->dtype))
    return sr_raise(I, "ValueError", "x and n must be of integer type; got x.dtype=%s, n.dtype=%s",
                    sr_dtype_name(ty(I, xn[0])->dtype), sr_dtype_name(ty(I, xn[1])->dtype));
  SrDtype pd = ty(I, pr)->dtype;
  SrVal *x = KEEP(sr_lax_convert(I, xn[0], pd, 0, NULL)), *n = x ? KEEP(sr_lax_convert(I, xn[1], pd, 0, NULL)) : NULL;
  SrVal *terms = OP(SUB, C2(SP("xlogy"), x, pr), C1(SP("gammaln"), OP(ADD, x, INT(1))));
  SrVal *lp = OP(ADD, C1(SP("gammaln"), OP(ADD, n, INT(1))), kw1(s, "jax.numpy.sum", terms, "axis", INT(-1)));
  SrVal *c = lp ? C2("jax.numpy.equal", C1("jax.numpy.sum", x), n) : NULL;
  return c ? WHERE(c, lp, FL(-INFINITY)) : NULL;
}

static SrVal *multinomial_pmf(SrNnScope *s, SrVal **p) { return L1("exp", multinomial_logpmf(s, p)); }

/* ---- truncnorm: logpdf, logcdf, logsf, cdf and sf are jits ---- */

/* _log_diff(x, y): logsumexp([x, y], b=[1, -1], axis=0) */
static SrVal *log_diff(SrNnScope *s, SrVal *x, SrVal *y) {
  SrVal *o1 = x && y ? C1("jax.numpy.ones_like", x) : NULL, *o2 = o1 ? neg(s, C1("jax.numpy.ones_like", y)) : NULL;
  if (!o2) return NULL;
  SrVal *xy[2] = {sr_ref(x), sr_ref(y)}, *bb[2] = {sr_ref(o1), sr_ref(o2)};
  SrVal *arr = C1("jax.numpy.array", KEEP(sr_tuple(NULL, 2, xy)));
  SrVal *barr = arr ? C1("jax.numpy.array", KEEP(sr_tuple(NULL, 2, bb))) : NULL;
  if (!barr) return NULL;
  const char *kw[2] = {"b", "axis"};
  SrVal *kv[2] = {barr, INT(0)};
  return sr_nn_call(s, SP("logsumexp"), 1, &arr, 2, kw, kv);
}

/* jnp.broadcast_arrays(*v) in place */
static int bcast(SrNnScope *s, int n, SrVal **v) {
  for (int i = 0; i < n; i++)
    if (!v[i]) return -1;
  SrVal *r = sr_nn_call(s, "jax.numpy.broadcast_arrays", n, v, 0, NULL, NULL);
  if (!r || !sr_is_seq(r) || r->seq.n != n) return -1;
  for (int i = 0; i < n; i++) v[i] = r->seq.items[i];
  return 0;
}

/* _log_gauss_mass(a, b): log(ndtr(b) - ndtr(a)), in a tail by log_ndtr */
static SrVal *log_gauss_mass_in(SrNnScope *s, SrVal *a, SrVal *b);

/* in a scope of its own (it needs many temporaries), kept in outer's */
static SrVal *log_gauss_mass(SrNnScope *outer, SrVal *a, SrVal *b) {
  if (!a || !b) return NULL;
  SCOPE(outer->I);
  return sr_nn_keep(outer, sr_nn_done(s, log_gauss_mass_in(s, a, b)));
}

static SrVal *log_gauss_mass_in(SrNnScope *s, SrVal *a, SrVal *b) {
  SrVal *ab[2] = {C1("jax.numpy.array", a), a ? C1("jax.numpy.array", b) : NULL};
  if (bcast(s, 2, ab) < 0) return NULL;
  a = ab[0];
  b = ab[1];
  SrVal *left = OP(LE, b, INT(0)), *right = OP(GT, a, INT(0));
  SrVal *central = right ? KEEP(sr_unop(s->I, SR_OP_INVERT, OP(BITOR, left, right))) : NULL;
  SrVal *at = central ? WHERE(right, neg(s, b), a) : NULL;
  SrVal *bt = at ? WHERE(right, neg(s, a), b) : NULL;
  SrVal *tail = bt ? log_diff(s, C1(SP("log_ndtr"), bt), C1(SP("log_ndtr"), at)) : NULL;
  SrVal *cm = tail ? C1("jax.numpy.log1p", OP(SUB, neg(s, C1(SP("ndtr"), a)), C1(SP("ndtr"), neg(s, b)))) : NULL;
  return cm ? WHERE(central, cm, tail) : NULL;
}

/* the body's arguments: x, a, b and loc=0, scale=1 */
static void tn_args(SrNnScope *s, SrArgs *a, SrVal **p) {
  for (int i = 0; i < 5; i++) p[i] = i < a->n ? a->v[i] : INT(i == 4);
}

static SrVal *tn_logpdf_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *p[5];
  tn_args(s, a, p);
  if (promote(s, "truncnorm.logpdf", 5, p) < 0) return sr_nn_done(s, NULL);
  SrVal *x = p[0], *lo = p[1], *hi = p[2], *loc = p[3], *scale = p[4];
  SrVal *q[3] = {x, loc, scale};
  SrVal *val = L2("sub", norm_logpdf(s, q), log_gauss_mass(s, lo, hi));
  SrVal *xs = val ? standardize(s, x, loc, scale) : NULL;
  SrVal *out = OP(BITOR, OP(LT, xs, lo), OP(GT, xs, hi));
  val = out ? WHERE(out, FL(-INFINITY), val) : NULL;
  return sr_nn_done(s, val ? WHERE(OP(GE, lo, hi), FL(NAN), val) : NULL);
}

static SrVal *tn_logcdf_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *p[5];
  tn_args(s, a, p);
  if (promote(s, "truncnorm.logcdf", 5, p) < 0) return sr_nn_done(s, NULL);
  if (bcast(s, 3, p) < 0) return sr_nn_done(s, NULL);
  SrVal *lo = p[1], *hi = p[2];
  SrVal *x = standardize(s, p[0], p[3], p[4]);
  SrVal *lgm_ab = x ? log_gauss_mass(s, lo, hi) : NULL;
  SrVal *lc = lgm_ab ? OP(SUB, log_gauss_mass(s, lo, x), lgm_ab) : NULL;
  SrVal *ls = lc ? OP(SUB, log_gauss_mass(s, x, hi), lgm_ab) : NULL;
  SrVal *conds[4] = {OP(GE, x, hi), OP(LE, x, lo), OP(GT, lc, FL(-0.1)), OP(GT, x, lo)};
  SrVal *vals[4] = {INT(0), FL(-INFINITY), ls ? C1("jax.numpy.log1p", neg(s, C1("jax.numpy.exp", ls))) : NULL, lc};
  lc = jselect(s, 4, conds, vals);
  return sr_nn_done(s, lc ? WHERE(OP(GE, lo, hi), FL(NAN), lc) : NULL);
}

static int tn_count(SrVal **p) { return p[4] ? 5 : p[3] ? 4 : 3; }

/* a jit named name of body on the arguments given (loc as 0 when only
   scale is) */
static SrVal *tn_jit(SrNnScope *s, const char *name, SrBuiltinFn body, SrVal **p) {
  if (p[4] && !p[3]) p[3] = INT(0);
  return KEEP(sr_api_jit(s->I, name, body, NULL, tn_count(p), p));
}

static SrVal *tn_logsf_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *p[5];
  tn_args(s, a, p);
  if (promote(s, "truncnorm.logsf", 5, p) < 0) return sr_nn_done(s, NULL);
  SrVal *q[5] = {neg(s, p[0]), neg(s, p[2]), neg(s, p[1]), neg(s, p[3]), p[4]};
  for (int i = 0; i < 4; i++)
    if (!q[i]) return sr_nn_done(s, NULL);
  return sr_nn_done(s, tn_jit(s, "logcdf", tn_logcdf_body, q));
}

static SrVal *tn_exp_body(SrInterp *I, SrArgs *a, const char *name, SrBuiltinFn body) {
  SCOPE(I);
  SrVal *p[5] = {0};
  for (int i = 0; i < a->n && i < 5; i++) p[i] = a->v[i];
  return sr_nn_done(s, L1("exp", tn_jit(s, name, body, p)));
}

static SrVal *tn_sf_body(SrInterp *I, SrArgs *a) { return tn_exp_body(I, a, "logsf", tn_logsf_body); }
static SrVal *tn_cdf_body(SrInterp *I, SrArgs *a) { return tn_exp_body(I, a, "logcdf", tn_logcdf_body); }

static SrVal *truncnorm_logpdf(SrNnScope *s, SrVal **p) { return tn_jit(s, "logpdf", tn_logpdf_body, p); }
static SrVal *truncnorm_pdf(SrNnScope *s, SrVal **p) { return L1("exp", truncnorm_logpdf(s, p)); }
static SrVal *truncnorm_logcdf(SrNnScope *s, SrVal **p) { return tn_jit(s, "logcdf", tn_logcdf_body, p); }
static SrVal *truncnorm_logsf(SrNnScope *s, SrVal **p) { return tn_jit(s, "logsf", tn_logsf_body, p); }
static SrVal *truncnorm_cdf(SrNnScope *s, SrVal **p) { return tn_jit(s, "cdf", tn_cdf_body, p); }
static SrVal *truncnorm_sf(SrNnScope *s, SrVal **p) { return tn_jit(s, "sf", tn_sf_body, p); }

/* ---- multivariate_normal ---- */

/* promote_dtypes_inexact(*p): one inexact dtype, no rank promotion */
static int promote_dtypes_inexact(SrNnScope *s, int n, SrVal **p) {
  SrInterp *I = s->I;
  for (int i = 0; i < n; i++)
    if (!(p[i] = KEEP(sr_jnp_asarray(I, p[i], -1)))) return -1;
  int weak;
  SrDtype dt = sr_jnp_result_dtype(I, n, p, &weak);
  if (sr_dtype_is_int(dt) || dt == SR_BOOL) dt = I->jax->enable_x64 ? SR_F64 : SR_F32;
  for (int i = 0; i < n; i++)
    if (!(p[i] = KEEP(sr_lax_convert(I, p[i], dt, weak, NULL)))) return -1;
  return 0;
}

static SrVal *str(SrNnScope *s, const char *c) { return KEEP(sr_str(NULL, c, strlen(c))); }

/* einsum('...i,...i->...', y, y) */
static SrVal *sumsq(SrNnScope *s, SrVal *y) { return C3("jax.numpy.einsum", str(s, "...i,...i->..."), y, y); }

/* partial(lax.linalg.triangular_solve, lower=True, transpose_a=True) */
static SrVal *tri_solve(SrInterp *I, SrArgs *a) {
  if (a->n != 2) return sr_raise(I, "TypeError", "triangular_solve() takes 2 positional arguments");
  SCOPE(I);
  const char *kw[2] = {"lower", "transpose_a"};
  SrVal *kv[2] = {KEEP(sr_bool(1)), KEEP(sr_bool(1))};
  return sr_nn_done(s, sr_nn_call(s, "jax.lax.linalg.triangular_solve", 2, a->v, 2, kw, kv));
}

static SrVal *mvn_logpdf(SrNnScope *s, SrVal **p) {
  SrInterp *I = s->I;
  if (sr_nn_given(p[3]))
    return sr_raise(I, "NotImplementedError", "allow_singular argument of multivariate_normal.logpdf");
  if (promote_dtypes_inexact(s, 3, p) < 0) return NULL;
  SrVal *x = p[0], *mean = p[1], *cov = p[2];
  const SrType *mt = ty(I, mean), *ct = ty(I, cov);
  SrVal *log2pi = C1("jax.numpy.log", FL(2 * M_PI));
  if (mt->ndim == 0) {
    SrVal *a = OP(DIV, OP(MUL, FL(-0.5), C1("jax.numpy.square", OP(SUB, x, mean))), cov);
    return OP(SUB, a, OP(MUL, FL(0.5), OP(ADD, log2pi, C1("jax.numpy.log", cov))));
  }
  int64_t n = mt->dims[mt->ndim - 1].size;
  if (ct->ndim == 0) {
    SrVal *y = OP(SUB, x, mean);
    SrVal *a = OP(DIV, OP(MUL, FL(-0.5), sumsq(s, y)), cov);
    return OP(SUB, a, OP(MUL, FL((double)n / 2), OP(ADD, log2pi, C1("jax.numpy.log", cov))));
  }
  if (ct->ndim < 2 || ct->dims[ct->ndim - 2].size != n || ct->dims[ct->ndim - 1].size != n)
    return sr_raise(I, "ValueError", "multivariate_normal.logpdf got incompatible shapes");
  SrVal *L = C1("jax.lax.linalg.cholesky", cov);
  SrVal *f = L ? KEEP(sr_builtin_with("triangular_solve", tri_solve, NULL, NULL)) : NULL;
  const char *kw[1] = {"signature"};
  SrVal *sig = str(s, "(n,n),(n)->(n)");
  SrVal *vf = f ? sr_nn_call(s, "jax.numpy.vectorize", 1, &f, 1, kw, &sig) : NULL;
  SrVal *d = vf ? OP(SUB, x, mean) : NULL;
  SrVal *ld_args[2] = {L, d};
  SrArgs ca = {2, ld_args, 0, NULL, NULL, NULL};
  SrVal *y = d ? KEEP(sr_call(I, vf, &ca)) : NULL;
  if (!y) return NULL;
  const char *dkw[2] = {"axis1", "axis2"};
  SrVal *dkv[2] = {INT(-1), INT(-2)};
  SrVal *diag = sr_nn_call(s, "jax.numpy.diagonal", 1, &L, 2, dkw, dkv);
  const char *skw[1] = {"axis"};
  SrVal *ax = INT(-1);
  SrVal *lg = C1("jax.numpy.log", diag);
  SrVal *ld = lg ? sr_nn_call(s, "jax.numpy.sum", 1, &lg, 1, skw, &ax) : NULL;
  SrVal *r = OP(SUB, OP(MUL, FL(-0.5), sumsq(s, y)), OP(MUL, FL((double)n / 2), log2pi));
  return OP(SUB, r, ld);
}

static SrVal *mvn_pdf(SrNnScope *s, SrVal **p) { return L1("exp", mvn_logpdf(s, p)); }

/* ---- the table ---- */

typedef struct Stat {
  const char *qual;  /* jax.scipy.stats.norm.logpdf */
  const char *spec;  /* "x, loc=, scale=" */
  const char *dflt;  /* per argument: r required, 0 or 1 the int default, N None */
  StatFn fn;
  const char *doc;
} Stat;

#define NORM_ARGS "x, loc=, scale=", "r01"
#define Q_ARGS "q, loc=, scale=", "r01"

static const Stat stats[] = {
    {"jax.scipy.stats.norm.logpdf", NORM_ARGS, norm_logpdf, "logpdf(x, loc=0, scale=1): the normal log density"},
    {"jax.scipy.stats.norm.pdf", NORM_ARGS, norm_pdf, "pdf(x, loc=0, scale=1): the normal density"},
    {"jax.scipy.stats.norm.cdf", NORM_ARGS, norm_cdf, "cdf(x, loc=0, scale=1): the normal cdf, ndtr"},
    {"jax.scipy.stats.norm.logcdf", NORM_ARGS, norm_logcdf, "logcdf(x, loc=0, scale=1): log_ndtr((x - loc) / scale)"},
    {"jax.scipy.stats.norm.sf", NORM_ARGS, norm_sf, "sf(x, loc=0, scale=1): 1 - cdf, as cdf(-x, -loc, scale)"},
    {"jax.scipy.stats.norm.logsf", NORM_ARGS, norm_logsf, "logsf(x, loc=0, scale=1): logcdf(-x, -loc, scale)"},
    {"jax.scipy.stats.norm.ppf", Q_ARGS, norm_ppf, "ppf(q, loc=0, scale=1): the inverse cdf, ndtri(q) * scale + loc"},
    {"jax.scipy.stats.norm.isf", Q_ARGS, norm_isf, "isf(q, loc=0, scale=1): the inverse sf, ppf(1 - q, loc, scale)"},
    {"jax.scipy.stats.multivariate_normal.logpdf", "x, mean, cov, allow_singular=", "rrrN", mvn_logpdf,
     "logpdf(x, mean, cov, allow_singular=None): the multivariate normal log density (Cholesky of cov)"},
    {"jax.scipy.stats.multivariate_normal.pdf", "x, mean, cov", "rrr", mvn_pdf,
     "pdf(x, mean, cov): the multivariate normal density"},
    {"jax.scipy.stats.uniform.logpdf", NORM_ARGS, uniform_logpdf,
     "logpdf(x, loc=0, scale=1): -log(scale) on [loc, loc + scale], -inf outside"},
    {"jax.scipy.stats.uniform.pdf", NORM_ARGS, uniform_pdf, "pdf(x, loc=0, scale=1): the uniform density"},
    {"jax.scipy.stats.uniform.cdf", NORM_ARGS, uniform_cdf, "cdf(x, loc=0, scale=1): the uniform cdf"},
    {"jax.scipy.stats.uniform.ppf", Q_ARGS, uniform_ppf, "ppf(q, loc=0, scale=1): loc + scale * q, nan outside [0, 1]"},
    {"jax.scipy.stats.expon.logpdf", NORM_ARGS, expon_logpdf, "logpdf(x, loc=0, scale=1): the exponential log density"},
    {"jax.scipy.stats.expon.pdf", NORM_ARGS, expon_pdf, "pdf(x, loc=0, scale=1): the exponential density"},
    {"jax.scipy.stats.expon.cdf", NORM_ARGS, expon_cdf, "cdf(x, loc=0, scale=1): the exponential cdf"},
    {"jax.scipy.stats.expon.logcdf", NORM_ARGS, expon_logcdf, "logcdf(x, loc=0, scale=1): log1p(-sf(x))"},
    {"jax.scipy.stats.expon.sf", NORM_ARGS, expon_sf, "sf(x, loc=0, scale=1): exp(logsf(x))"},
    {"jax.scipy.stats.expon.logsf", NORM_ARGS, expon_logsf, "logsf(x, loc=0, scale=1): -(x - loc) / scale, 0 below loc"},
    {"jax.scipy.stats.expon.ppf", Q_ARGS, expon_ppf, "ppf(q, loc=0, scale=1): loc - scale * log1p(-q)"},
    {"jax.scipy.stats.laplace.logpdf", NORM_ARGS, laplace_logpdf, "logpdf(x, loc=0, scale=1): the Laplace log density"},
    {"jax.scipy.stats.laplace.pdf", NORM_ARGS, laplace_pdf, "pdf(x, loc=0, scale=1): the Laplace density"},
    {"jax.scipy.stats.laplace.cdf", NORM_ARGS, laplace_cdf, "cdf(x, loc=0, scale=1): the Laplace cdf"},
    {"jax.scipy.stats.logistic.logpdf", NORM_ARGS, logistic_logpdf, "logpdf(x, loc=0, scale=1): the logistic log density"},
    {"jax.scipy.stats.logistic.pdf", NORM_ARGS, logistic_pdf, "pdf(x, loc=0, scale=1): the logistic density"},
    {"jax.scipy.stats.logistic.cdf", NORM_ARGS, logistic_cdf, "cdf(x, loc=0, scale=1): expit((x - loc) / scale)"},
    {"jax.scipy.stats.logistic.sf", NORM_ARGS, logistic_sf, "sf(x, loc=0, scale=1): expit(-(x - loc) / scale)"},
    {"jax.scipy.stats.logistic.ppf", NORM_ARGS, logistic_ppf, "ppf(x, loc=0, scale=1): logit(x) * scale + loc"},
    {"jax.scipy.stats.logistic.isf", NORM_ARGS, logistic_isf, "isf(x, loc=0, scale=1): -logit(x) * scale + loc"},
    {"jax.scipy.stats.cauchy.logpdf", NORM_ARGS, cauchy_logpdf, "logpdf(x, loc=0, scale=1): the Cauchy log density"},
    {"jax.scipy.stats.cauchy.pdf", NORM_ARGS, cauchy_pdf, "pdf(x, loc=0, scale=1): the Cauchy density"},
    {"jax.scipy.stats.cauchy.cdf", NORM_ARGS, cauchy_cdf, "cdf(x, loc=0, scale=1): 1/2 + arctan((x - loc) / scale) / pi"},
    {"jax.scipy.stats.cauchy.logcdf", NORM_ARGS, cauchy_logcdf, "logcdf(x, loc=0, scale=1): log(cdf(x))"},
    {"jax.scipy.stats.cauchy.sf", NORM_ARGS, cauchy_sf, "sf(x, loc=0, scale=1): cdf(-x, -loc, scale)"},
    {"jax.scipy.stats.cauchy.logsf", NORM_ARGS, cauchy_logsf, "logsf(x, loc=0, scale=1): logcdf(-x, -loc, scale)"},
    {"jax.scipy.stats.cauchy.ppf", Q_ARGS, cauchy_ppf, "ppf(q, loc=0, scale=1): tan(pi q - pi/2) * scale + loc"},
    {"jax.scipy.stats.cauchy.isf", Q_ARGS, cauchy_isf, "isf(q, loc=0, scale=1): tan(pi/2 - pi q) * scale + loc"},
    {"jax.scipy.stats.bernoulli.logpmf", "k, p, loc=", "rr0", bernoulli_logpmf,
     "logpmf(k, p, loc=0): xlogy(k, p) + xlog1py(1 - k, -p), -inf off {0, 1}"},
    {"jax.scipy.stats.bernoulli.pmf", "k, p, loc=", "rr0", bernoulli_pmf, "pmf(k, p, loc=0): exp(logpmf)"},
    {"jax.scipy.stats.bernoulli.cdf", "k, p", "rr", bernoulli_cdf, "cdf(k, p): 0, 1 - p or 1, nan for a bad p"},
    {"jax.scipy.stats.bernoulli.ppf", "q, p", "rr", bernoulli_ppf, "ppf(q, p): 0 where q <= 1 - p, else 1"},
    {"jax.scipy.stats.poisson.logpmf", "k, mu, loc=", "rr0", poisson_logpmf,
     "logpmf(k, mu, loc=0): xlogy(k, mu) - gammaln(k + 1) - mu, -inf off the integers >= 0"},
    {"jax.scipy.stats.poisson.pmf", "k, mu, loc=", "rr0", poisson_pmf, "pmf(k, mu, loc=0): exp(logpmf)"},
    {"jax.scipy.stats.poisson.cdf", "k, mu, loc=", "rr0", poisson_cdf, "cdf(k, mu, loc=0): gammaincc(floor(k + 1), mu)"},
    {"jax.scipy.stats.gamma.logpdf", "x, a, loc=, scale=", "rr01", gamma_logpdf,
     "logpdf(x, a, loc=0, scale=1): the gamma log density of shape a"},
    {"jax.scipy.stats.gamma.pdf", "x, a, loc=, scale=", "rr01", gamma_pdf, "pdf(x, a, loc=0, scale=1): the gamma density"},
    {"jax.scipy.stats.gamma.cdf", "x, a, loc=, scale=", "rr01", gamma_cdf,
     "cdf(x, a, loc=0, scale=1): gammainc(a, (x - loc) / scale)"},
    {"jax.scipy.stats.gamma.logcdf", "x, a, loc=, scale=", "rr01", gamma_logcdf, "logcdf(x, a, loc=0, scale=1): log(cdf)"},
    {"jax.scipy.stats.gamma.sf", "x, a, loc=, scale=", "rr01", gamma_sf,
     "sf(x, a, loc=0, scale=1): gammaincc(a, (x - loc) / scale)"},
    {"jax.scipy.stats.gamma.logsf", "x, a, loc=, scale=", "rr01", gamma_logsf, "logsf(x, a, loc=0, scale=1): log(sf)"},
    {"jax.scipy.stats.beta.logpdf", "x, a, b, loc=, scale=", "rrr01", beta_logpdf,
     "logpdf(x, a, b, loc=0, scale=1): the beta log density, nan for a, b or scale <= 0"},
    {"jax.scipy.stats.beta.pdf", "x, a, b, loc=, scale=", "rrr01", beta_pdf, "pdf(x, a, b, loc=0, scale=1): the beta density"},
    {"jax.scipy.stats.beta.cdf", "x, a, b, loc=, scale=", "rrr01", beta_cdf,
     "cdf(x, a, b, loc=0, scale=1): betainc(a, b, (x - loc) / scale clamped to [0, 1])"},
    {"jax.scipy.stats.beta.logcdf", "x, a, b, loc=, scale=", "rrr01", beta_logcdf, "logcdf(x, a, b, loc=0, scale=1): log(cdf)"},
    {"jax.scipy.stats.beta.sf", "x, a, b, loc=, scale=", "rrr01", beta_sf, "sf(x, a, b, loc=0, scale=1): betainc(b, a, 1 - y)"},
    {"jax.scipy.stats.beta.logsf", "x, a, b, loc=, scale=", "rrr01", beta_logsf, "logsf(x, a, b, loc=0, scale=1): log(sf)"},
    {"jax.scipy.stats.t.logpdf", "x, df, loc=, scale=", "rr01", t_logpdf,
     "logpdf(x, df, loc=0, scale=1): Student's t log density"},
    {"jax.scipy.stats.t.pdf", "x, df, loc=, scale=", "rr01", t_pdf, "pdf(x, df, loc=0, scale=1): Student's t density"},
    {"jax.scipy.stats.chi2.logpdf", "x, df, loc=, scale=", "rr01", chi2_logpdf,
     "logpdf(x, df, loc=0, scale=1): the chi-squared log density"},
    {"jax.scipy.stats.chi2.pdf", "x, df, loc=, scale=", "rr01", chi2_pdf, "pdf(x, df, loc=0, scale=1): the chi-squared density"},
    {"jax.scipy.stats.chi2.cdf", "x, df, loc=, scale=", "rr01", chi2_cdf,
     "cdf(x, df, loc=0, scale=1): gammainc(df / 2, (x - loc) / (2 scale))"},
    {"jax.scipy.stats.chi2.logcdf", "x, df, loc=, scale=", "rr01", chi2_logcdf, "logcdf(x, df, loc=0, scale=1): log(cdf)"},
    {"jax.scipy.stats.chi2.sf", "x, df, loc=, scale=", "rr01", chi2_sf,
     "sf(x, df, loc=0, scale=1): gammaincc(df / 2, (x - loc) / (2 scale))"},
    {"jax.scipy.stats.chi2.logsf", "x, df, loc=, scale=", "rr01", chi2_logsf, "logsf(x, df, loc=0, scale=1): log(sf)"},
    {"jax.scipy.stats.geom.logpmf", "k, p, loc=", "rr0", geom_logpmf,
     "logpmf(k, p, loc=0): xlog1py(k - 1, -p) + log(p), -inf for k <= 0"},
    {"jax.scipy.stats.geom.pmf", "k, p, loc=", "rr0", geom_pmf, "pmf(k, p, loc=0): exp(logpmf)"},
    {"jax.scipy.stats.pareto.logpdf", "x, b, loc=, scale=", "rr01", pareto_logpdf,
     "logpdf(x, b, loc=0, scale=1): the Pareto log density"},
    {"jax.scipy.stats.pareto.pdf", "x, b, loc=, scale=", "rr01", pareto_pdf, "pdf(x, b, loc=0, scale=1): the Pareto density"},
    {"jax.scipy.stats.pareto.cdf", "x, b, loc=, scale=", "rr01", pareto_cdf, "cdf(x, b, loc=0, scale=1): 1 - y ** -b"},
    {"jax.scipy.stats.pareto.logcdf", "x, b, loc=, scale=", "rr01", pareto_logcdf,
     "logcdf(x, b, loc=0, scale=1): log1p(-y ** -b)"},
    {"jax.scipy.stats.pareto.sf", "x, b, loc=, scale=", "rr01", pareto_sf, "sf(x, b, loc=0, scale=1): y ** -b"},
    {"jax.scipy.stats.pareto.logsf", "x, b, loc=, scale=", "rr01", pareto_logsf, "logsf(x, b, loc=0, scale=1): -b log(y)"},
    {"jax.scipy.stats.pareto.ppf", "q, b, loc=, scale=", "rr01", pareto_ppf,
     "ppf(q, b, loc=0, scale=1): loc + scale (1 - q) ** (-1 / b)"},
    {"jax.scipy.stats.gumbel_r.logpdf", NORM_ARGS, gumbel_r_logpdf, "logpdf(x, loc=0, scale=1): -log(scale) - (z + exp(-z))"},
    {"jax.scipy.stats.gumbel_r.pdf", NORM_ARGS, gumbel_r_pdf, "pdf(x, loc=0, scale=1): the right-skewed Gumbel density"},
    {"jax.scipy.stats.gumbel_r.logcdf", NORM_ARGS, gumbel_r_logcdf, "logcdf(x, loc=0, scale=1): -exp(-z)"},
    {"jax.scipy.stats.gumbel_r.cdf", NORM_ARGS, gumbel_r_cdf, "cdf(x, loc=0, scale=1): exp(-exp(-z))"},
    {"jax.scipy.stats.gumbel_r.ppf", "p, loc=, scale=", "r01", gumbel_r_ppf, "ppf(p, loc=0, scale=1): loc - scale log(-log(p))"},
    {"jax.scipy.stats.gumbel_r.sf", NORM_ARGS, gumbel_r_sf, "sf(x, loc=0, scale=1): 1 - exp(-exp(-z))"},
    {"jax.scipy.stats.gumbel_r.logsf", NORM_ARGS, gumbel_r_logsf, "logsf(x, loc=0, scale=1): log1mexp(exp(-z))"},
    {"jax.scipy.stats.gumbel_l.logpdf", NORM_ARGS, gumbel_l_logpdf, "logpdf(x, loc=0, scale=1): -log(scale) + z - exp(z)"},
    {"jax.scipy.stats.gumbel_l.pdf", NORM_ARGS, gumbel_l_pdf, "pdf(x, loc=0, scale=1): the left-skewed Gumbel density"},
    {"jax.scipy.stats.gumbel_l.logcdf", NORM_ARGS, gumbel_l_logcdf, "logcdf(x, loc=0, scale=1): log(-expm1(-exp(z)))"},
    {"jax.scipy.stats.gumbel_l.cdf", NORM_ARGS, gumbel_l_cdf, "cdf(x, loc=0, scale=1): 1 - exp(-exp(z))"},
    {"jax.scipy.stats.gumbel_l.ppf", "p, loc=, scale=", "r01", gumbel_l_ppf, "ppf(p, loc=0, scale=1): loc + scale log(-log1p(-p))"},
    {"jax.scipy.stats.gumbel_l.sf", NORM_ARGS, gumbel_l_sf, "sf(x, loc=0, scale=1): exp(-exp(z))"},
    {"jax.scipy.stats.gumbel_l.logsf", NORM_ARGS, gumbel_l_logsf, "logsf(x, loc=0, scale=1): -exp(z)"},
    {"jax.scipy.stats.binom.logpmf", "k, n, p, loc=", "rrr0", binom_logpmf,
     "logpmf(k, n, p, loc=0): the binomial log pmf, -inf off [loc, loc + n]"},
    {"jax.scipy.stats.binom.pmf", "k, n, p, loc=", "rrr0", binom_pmf, "pmf(k, n, p, loc=0): exp(logpmf)"},
    {"jax.scipy.stats.nbinom.logpmf", "k, n, p, loc=", "rrr0", nbinom_logpmf,
     "logpmf(k, n, p, loc=0): the negative binomial log pmf"},
    {"jax.scipy.stats.nbinom.pmf", "k, n, p, loc=", "rrr0", nbinom_pmf, "pmf(k, n, p, loc=0): exp(logpmf)"},
    {"jax.scipy.stats.gennorm.logpdf", "x, beta", "rr", gennorm_logpdf,
     "logpdf(x, beta): log(beta / 2) - lgamma(1 / beta) - |x| ** beta"},
    {"jax.scipy.stats.gennorm.pdf", "x, beta", "rr", gennorm_pdf, "pdf(x, beta): the generalized normal density"},
    {"jax.scipy.stats.gennorm.cdf", "x, beta", "rr", gennorm_cdf,
     "cdf(x, beta): (1 + sign(x) igamma(1 / beta, |x| ** beta)) / 2"},
    {"jax.scipy.stats.betabinom.logpmf", "k, n, a, b, loc=", "rrrrN", betabinom_logpmf,
     "logpmf(k, n, a, b, loc=0): the beta-binomial log pmf, a jit"},
    {"jax.scipy.stats.betabinom.pmf", "k, n, a, b, loc=", "rrrrN", betabinom_pmf, "pmf(k, n, a, b, loc=0): exp(logpmf)"},
    {"jax.scipy.stats.vonmises.logpdf", "x, kappa", "rr", vonmises_logpdf,
     "logpdf(x, kappa): kappa (cos x - 1) - log(2 pi i0e(kappa)), nan for kappa <= 0"},
    {"jax.scipy.stats.vonmises.pdf", "x, kappa", "rr", vonmises_pdf, "pdf(x, kappa): the von Mises density"},
    {"jax.scipy.stats.wrapcauchy.logpdf", "x, c", "rr", wrapcauchy_logpdf,
     "logpdf(x, c): the wrapped Cauchy log density on [0, 2 pi], nan unless 0 < c < 1"},
    {"jax.scipy.stats.wrapcauchy.pdf", "x, c", "rr", wrapcauchy_pdf, "pdf(x, c): the wrapped Cauchy density"},
    {"jax.scipy.stats.dirichlet.logpdf", "x, alpha", "rr", dirichlet_logpdf,
     "logpdf(x, alpha): the Dirichlet log density over axis 0, -inf off the simplex"},
    {"jax.scipy.stats.dirichlet.pdf", "x, alpha", "rr", dirichlet_pdf, "pdf(x, alpha): the Dirichlet density"},
    {"jax.scipy.stats.multinomial.logpmf", "x, n, p", "rrr", multinomial_logpmf,
     "logpmf(x, n, p): the multinomial log pmf of integer counts x, -inf unless sum(x) == n"},
    {"jax.scipy.stats.multinomial.pmf", "x, n, p", "rrr", multinomial_pmf, "pmf(x, n, p): exp(logpmf)"},
    {"jax.scipy.stats.truncnorm.logpdf", "x, a, b, loc=, scale=", "rrrNN", truncnorm_logpdf,
     "logpdf(x, a, b, loc=0, scale=1): the normal log density truncated to [a, b] (standardized), a jit"},
    {"jax.scipy.stats.truncnorm.pdf", "x, a, b, loc=, scale=", "rrrNN", truncnorm_pdf,
     "pdf(x, a, b, loc=0, scale=1): exp(logpdf)"},
    {"jax.scipy.stats.truncnorm.logcdf", "x, a, b, loc=, scale=", "rrrNN", truncnorm_logcdf,
     "logcdf(x, a, b, loc=0, scale=1): the truncated normal log cdf, a jit"},
    {"jax.scipy.stats.truncnorm.cdf", "x, a, b, loc=, scale=", "rrrNN", truncnorm_cdf,
     "cdf(x, a, b, loc=0, scale=1): exp(logcdf), a jit"},
    {"jax.scipy.stats.truncnorm.logsf", "x, a, b, loc=, scale=", "rrrNN", truncnorm_logsf,
     "logsf(x, a, b, loc=0, scale=1): logcdf(-x, -b, -a, -loc, scale), a jit"},
    {"jax.scipy.stats.truncnorm.sf", "x, a, b, loc=, scale=", "rrrNN", truncnorm_sf,
     "sf(x, a, b, loc=0, scale=1): exp(logsf), a jit"},
};

/* the builtin of each entry: its arguments parsed under the function's
   own name (logpdf), the defaults filled in, then its StatFn */
static SrVal *stat_call(SrInterp *I, SrArgs *a) {
  const Stat *st = sr_current_builtin(I)->data;
  const char *name = strrchr(st->qual, '.') + 1;
  SrVal *p[8] = {0};
  if (sr_args_parse(I, a, name, st->spec, p) < 0) return NULL;
  SCOPE(I);
  for (int i = 0; st->dflt[i]; i++)
    if (!p[i] && st->dflt[i] != 'N') p[i] = INT(st->dflt[i] == '1');
  return sr_nn_done(s, st->fn(s, p));
}

void sr_scipy_stats_init(void) {
  for (size_t i = 0; i < sizeof stats / sizeof stats[0]; i++) {
    const Stat *st = &stats[i];
    SrVal *v = sr_builtin_with(st->qual, stat_call, (void *)st, NULL);
    ((SrBuiltin *)v->obj.data)->doc = st->doc;
    sr_register(st->qual, v);
  }
}
