/* scipy_special_more.c: the functions of jax.scipy.special that issue 15
 * found missing (jax/_src/scipy/special.py, third_party/scipy/betaln.py,
 * lax/special.py's ndtr): gammainc, gammaincc, betaln, beta, gamma,
 * gammasgn, loggamma, ndtr, i0, i0e, i1, i1e, factorial, comb, poch (a
 * custom_jvp), rel_entr, kl_div, softmax, log_softmax, multigammaln,
 * boxcox and boxcox1p.  None is jitted in JAX but gammasgn; each promotes
 * its arguments to an inexact dtype (promote_args_inexact).  Complex
 * inputs are not supported here.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jax/jax.h"
#include "jax/math_api.h"
#include "jax/nn.h"
#include "py/ast.h"
#include "py/objects.h"
#include "util/intern.h"

#define SCOPE(I) SrNnScope s_ = {(I), {0}, 0}, *s = &s_
#define C1(q, x) sr_nn_call1(s, q, x)
#define C2(q, x, y) sr_nn_call2(s, q, x, y)
#define C3(q, x, y, z) sr_nn_call3(s, q, x, y, z)
#define OP(op, x, y) sr_nn_op(s, SR_OP_##op, x, y)
#define FL(d) sr_nn_float(s, d)
#define IN(i) sr_nn_int(s, i)
#define KEEP(v) sr_nn_keep(s, v)
#define DONE(v) sr_nn_done(s, v)

static const SrType *ty(SrInterp *I, SrVal *x) { return x ? sr_value_type(I, x) : NULL; }

static int no_complex(SrNnScope *s, SrVal *x, const char *name) {
  const SrType *t = ty(s->I, x);
  if (t && sr_dtype_kind(t->dtype) == SR_DK_COMPLEX) {
    sr_raise(s->I, "ValueError", "%s does not support complex-valued inputs.", name);
    return -1;
  }
  return 0;
}

/* lax._const(x, v) */
static SrVal *cst(SrNnScope *s, SrVal *x, double v) {
  const SrType *t = ty(s->I, x);
  return t ? sr_nn_typed_scalar(s, v, t->dtype) : NULL;
}

static SrVal *where3(SrNnScope *s, SrVal *c, SrVal *x, SrVal *y) { return C3("jax.numpy.where", c, x, y); }

static SrVal *tuple2s(SrNnScope *s, SrVal *a, SrVal *b) {
  if (!a || !b) return NULL;
  SrVal *items[2] = {sr_ref(a), sr_ref(b)};
  return KEEP(sr_tuple(NULL, 2, items));
}

/* ---- promote, then one lax function ---- */

static SrVal *un(SrInterp *I, SrArgs *a, const char *name, const char *q, int scale_exp) {
  SrVal *p[1];
  if (sr_args_parse(I, a, name, "x", p) < 0) return NULL;
  SCOPE(I);
  if (sr_nn_promote_inexact(s, 1, p, name) < 0 || no_complex(s, p[0], name) < 0) return DONE(NULL);
  SrVal *r = C1(q, p[0]);
  /* i0, i1: lax.mul(lax.exp(lax.abs(x)), lax.bessel_i?e(x)) */
  if (scale_exp && r) r = C2("jax.lax.mul", C1("jax.lax.exp", C1("jax.lax.abs", p[0])), r);
  return DONE(r);
}

static SrVal *sp_i0e(SrInterp *I, SrArgs *a) { return un(I, a, "i0e", "jax.lax.bessel_i0e", 0); }
static SrVal *sp_i1e(SrInterp *I, SrArgs *a) { return un(I, a, "i1e", "jax.lax.bessel_i1e", 0); }
static SrVal *sp_i0(SrInterp *I, SrArgs *a) { return un(I, a, "i0", "jax.lax.bessel_i0e", 1); }
static SrVal *sp_i1(SrInterp *I, SrArgs *a) { return un(I, a, "i1", "jax.lax.bessel_i1e", 1); }

static SrVal *bin(SrInterp *I, SrArgs *a, const char *name, const char *spec, const char *q) {
  SrVal *p[2];
  if (sr_args_parse(I, a, name, spec, p) < 0) return NULL;
  SCOPE(I);
  if (sr_nn_promote_inexact(s, 2, p, name) < 0 || no_complex(s, p[0], name) < 0) return DONE(NULL);
  return DONE(C2(q, p[0], p[1]));
}

static SrVal *sp_gammainc(SrInterp *I, SrArgs *a) { return bin(I, a, "gammainc", "a, x", "jax.lax.igamma"); }
static SrVal *sp_gammaincc(SrInterp *I, SrArgs *a) { return bin(I, a, "gammaincc", "a, x", "jax.lax.igammac"); }

/* betainc: promote_args_inexact, lax.betainc */
static SrVal *sp_betainc(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "betainc", "a, b, x", p) < 0) return NULL;
  SCOPE(I);
  if (sr_nn_promote_inexact(s, 3, p, "betainc") < 0 || no_complex(s, p[2], "betainc") < 0) return DONE(NULL);
  return DONE(C3("jax.lax.betainc", p[0], p[1], p[2]));
}

/* ---- betaln (third_party/scipy/betaln.py), beta ---- */

/* algdiv(a, b): log(gamma(a)) / log(gamma(a + b)) for b >= 8 (its
   temporaries in a scope of its own; the result kept in the caller's) */
static SrVal *algdiv(SrNnScope *outer, SrVal *a, SrVal *b) {
  SCOPE(outer->I);
  static const double c0 = 0.833333333333333e-01, c1 = -0.277777777760991e-02, c2 = 0.793650666825390e-03,
                      c3 = -0.595202931351870e-03, c4 = 0.837308034031215e-03, c5 = -0.165322962780713e-02;
  SrVal *h = OP(DIV, a, b);
  SrVal *c = OP(DIV, h, OP(ADD, IN(1), h));
  SrVal *x = OP(DIV, h, OP(ADD, IN(1), h));
  SrVal *d = OP(ADD, b, OP(SUB, a, FL(0.5)));
  SrVal *x2 = OP(MUL, x, x);
  SrVal *s3 = OP(ADD, FL(1.0), OP(ADD, x, x2));
  SrVal *s5 = OP(ADD, FL(1.0), OP(ADD, x, OP(MUL, x2, s3)));
  SrVal *s7 = OP(ADD, FL(1.0), OP(ADD, x, OP(MUL, x2, s5)));
  SrVal *s9 = OP(ADD, FL(1.0), OP(ADD, x, OP(MUL, x2, s7)));
  SrVal *s11 = OP(ADD, FL(1.0), OP(ADD, x, OP(MUL, x2, s9)));
  SrVal *t = OP(POW, OP(DIV, FL(1.0), b), IN(2));
  /* ((((c5 * s11 * t + c4 * s9) * t + c3 * s7) * t + c2 * s5) * t + c1 * s3) * t + c0 */
  SrVal *w1 = OP(ADD, OP(MUL, OP(MUL, FL(c5), s11), t), OP(MUL, FL(c4), s9));
  SrVal *w2 = OP(ADD, OP(MUL, w1, t), OP(MUL, FL(c3), s7));
  SrVal *w3 = OP(ADD, OP(MUL, w2, t), OP(MUL, FL(c2), s5));
  SrVal *w4 = OP(ADD, OP(MUL, w3, t), OP(MUL, FL(c1), s3));
  SrVal *w5 = OP(ADD, OP(MUL, w4, t), FL(c0));
  SrVal *ww = OP(MUL, w5, OP(DIV, c, b));
  SrVal *u = OP(MUL, d, C1("jax.lax.log1p", OP(DIV, a, b)));
  SrVal *v = OP(MUL, a, OP(SUB, C1("jax.lax.log", b), FL(1.0)));
  SrVal *le = OP(LE, u, v);
  return sr_nn_keep(outer, DONE(where3(s, le, OP(SUB, OP(SUB, ww, v), u), OP(SUB, OP(SUB, ww, u), v))));
}

static SrVal *betaln_of(SrNnScope *s, SrVal *a0, SrVal *b0) {
  SrVal *ab[2] = {a0, b0};
  if (sr_nn_promote_inexact(s, 2, ab, "betaln") < 0) return NULL;
  SrVal *a = C2("jax.numpy.minimum", ab[0], ab[1]);
  SrVal *b = a ? C2("jax.numpy.maximum", ab[0], ab[1]) : NULL;
  SrVal *la = b ? C1("jax.lax.lgamma", a) : NULL;
  SrVal *lb = la ? C1("jax.lax.lgamma", b) : NULL;
  SrVal *small = lb ? OP(ADD, la, OP(SUB, lb, C1("jax.lax.lgamma", OP(ADD, a, b)))) : NULL;
  SrVal *large = small ? OP(ADD, C1("jax.lax.lgamma", a), algdiv(s, a, b)) : NULL;
  return large ? where3(s, OP(LT, b, IN(8)), small, large) : NULL;
}

static SrVal *sp_betaln(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "betaln", "a, b", p) < 0) return NULL;
  SCOPE(I);
  if (sr_nn_promote_inexact(s, 2, p, "betaln") < 0) return DONE(NULL);
  return DONE(betaln_of(s, p[0], p[1]));
}

/* ---- gammasgn (@jit), gamma, loggamma ---- */

/* jnp.select(condlist, choicelist, default) for conditions and choices
   of x's shape: stack(broadcast_arrays(False, *condlist)), argmax over
   axis 0, select_n */
static SrVal *select_of(SrNnScope *s, SrVal *x, int n, SrVal **conds, SrVal **choices, SrVal *dflt) {
  SrInterp *I = s->I;
  const SrType *t = ty(I, x);
  if (!t) return NULL;
  int64_t shape[SR_MAX_RANK];
  for (int i = 0; i < t->ndim; i++) shape[i] = t->dims[i].size;
  SrVal *cs[8], *ch[8];
  SrVal *f = KEEP(sr_jnp_asarray(I, KEEP(sr_bool(0)), -1));
  cs[0] = f ? KEEP(sr_lax_broadcast_to(I, f, shape, t->ndim, NULL)) : NULL;
  for (int i = 0; i < n; i++) cs[i + 1] = KEEP(sr_lax_broadcast_to(I, conds[i], shape, t->ndim, NULL));
  for (int i = 0; i <= n; i++)
    if (!cs[i]) return NULL;
  SrVal *items[9];
  for (int i = 0; i <= n; i++) items[i] = sr_ref(cs[i]);
  SrVal *lst = KEEP(sr_tuple(NULL, n + 1, items));
  SrVal *st = C1("jax.numpy.stack", lst);
  const char *kw[1] = {"axis"};
  SrVal *kv[1] = {IN(0)};
  SrVal *idx = st ? sr_nn_call(s, "jax.numpy.argmax", 1, &st, 1, kw, kv) : NULL;
  if (!idx) return NULL;
  SrVal *args[9];
  args[0] = KEEP(sr_lax_broadcast_to(I, idx, shape, t->ndim, NULL));
  ch[0] = dflt;
  for (int i = 0; i < n; i++) ch[i + 1] = choices[i];
  for (int i = 0; i <= n; i++) args[i + 1] = KEEP(sr_lax_broadcast_to(I, ch[i], shape, t->ndim, NULL));
  for (int i = 0; i <= n + 1; i++)
    if (!args[i]) return NULL;
  return sr_nn_call(s, "jax.lax.select_n", n + 2, args, 0, NULL, NULL);
}

static SrVal *gammasgn_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *x = a->v[0];
  if (sr_nn_promote_inexact(s, 1, &x, "gammasgn") < 0 || no_complex(s, x, "gammasgn") < 0) return DONE(NULL);
  SrVal *fl = C1("jax.lax.floor", x);
  SrVal *neg = fl ? OP(LT, x, IN(0)) : NULL;
  SrVal *c1 = neg ? OP(BITOR, OP(BITAND, neg, OP(EQ, x, fl)), C1("jax.numpy.isnan", x)) : NULL;
  SrVal *odd = c1 ? OP(NE, OP(MOD, fl, IN(2)), IN(0)) : NULL;
  SrVal *c2 = odd ? OP(BITOR, OP(BITAND, neg, odd), OP(BITAND, OP(EQ, x, IN(0)), C1("jax.numpy.signbit", x))) : NULL;
  if (!c2) return DONE(NULL);
  SrVal *conds[2] = {c1, c2}, *choices[2] = {cst(s, x, NAN), cst(s, x, -1.0)};
  return DONE(select_of(s, x, 2, conds, choices, cst(s, x, 1.0)));
}

static SrVal *gammasgn_fn(SrInterp *I, SrVal *x) { return sr_api_jit(I, "gammasgn", gammasgn_body, NULL, 1, &x); }

static SrVal *sp_gammasgn(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "gammasgn", "x", p) < 0) return NULL;
  return gammasgn_fn(I, p[0]);
}

/* gammasgn(x) * lax.exp(lax.lgamma(x)) */
static SrVal *gamma_of(SrNnScope *s, SrVal *x) {
  if (sr_nn_promote_inexact(s, 1, &x, "gamma") < 0 || no_complex(s, x, "gamma") < 0) return NULL;
  SrVal *sg = KEEP(gammasgn_fn(s->I, x));
  return sg ? OP(MUL, sg, C1("jax.lax.exp", C1("jax.lax.lgamma", x))) : NULL;
}

static SrVal *sp_gamma(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "gamma", "x", p) < 0) return NULL;
  SCOPE(I);
  return DONE(gamma_of(s, p[0]));
}

/* sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b); sign * lax.exp(betaln(a, b)) */
static SrVal *sp_beta(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "beta", "a, b", p) < 0) return NULL;
  SCOPE(I);
  if (sr_nn_promote_inexact(s, 2, p, "beta") < 0 || no_complex(s, p[0], "beta") < 0) return DONE(NULL);
  SrVal *ga = KEEP(gammasgn_fn(I, p[0]));
  SrVal *gb = ga ? KEEP(gammasgn_fn(I, p[1])) : NULL;
  SrVal *ab = gb ? OP(ADD, p[0], p[1]) : NULL;
  SrVal *gab = ab ? KEEP(gammasgn_fn(I, ab)) : NULL;
  SrVal *sign = OP(MUL, OP(MUL, ga, gb), gab);
  return DONE(sign ? OP(MUL, sign, C1("jax.lax.exp", betaln_of(s, p[0], p[1]))) : NULL);
}

static SrVal *sp_loggamma(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "loggamma", "x", p) < 0) return NULL;
  SCOPE(I);
  if (sr_nn_promote_inexact(s, 1, p, "loggamma") < 0) return DONE(NULL);
  SrVal *x = p[0];
  if (no_complex(s, x, "loggamma") < 0) return DONE(NULL);
  SrVal *r = C1("jax.lax.lgamma", x);
  return DONE(r ? where3(s, OP(GT, x, IN(0)), r, FL(NAN)) : NULL);
}

/* ---- ndtr (lax/special.py) ---- */

/* lax.special.ndtr for float32/float64 x */
static SrVal *ndtr_of(SrNnScope *s, SrVal *x) {
  SrInterp *I = s->I;
  SrDtype dt = ty(I, x)->dtype;
  SrVal *hs2 = cst(s, x, 0.5 * (dt == SR_F32 ? (double)(float)sqrt(2.0) : sqrt(2.0)));
  SrVal *w = OP(MUL, x, hs2);
  SrVal *z = w ? KEEP(sr_unop(I, SR_OP_ABS, w)) : NULL;
  SrVal *lt = z ? C2("jax.lax.lt", z, hs2) : NULL;
  SrVal *y1 = lt ? OP(ADD, cst(s, x, 1.0), C1("jax.lax.erf", w)) : NULL;
  SrVal *gt = y1 ? C2("jax.lax.gt", w, cst(s, x, 0.0)) : NULL;
  SrVal *y2 = gt ? OP(SUB, cst(s, x, 2.0), C1("jax.lax.erfc", z)) : NULL;
  SrVal *y3 = y2 ? C1("jax.lax.erfc", z) : NULL;
  SrVal *y = y3 ? C3("jax.lax.select", lt, y1, C3("jax.lax.select", gt, y2, y3)) : NULL;
  return y ? OP(MUL, cst(s, x, 0.5), y) : NULL;
}

static SrVal *sp_ndtr(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "ndtr", "x", p) < 0) return NULL;
  SCOPE(I);
  SrVal *x = KEEP(sr_jnp_asarray(I, p[0], -1));
  if (!x) return DONE(NULL);
  SrDtype dt = ty(I, x)->dtype;
  if (dt != SR_F32 && dt != SR_F64)
    return DONE(sr_raise(I, "TypeError", "x.dtype=%s is not supported, see docstring for supported types.",
                         sr_dtype_name(dt)));
  return DONE(ndtr_of(s, x));
}

/* ---- log_ndtr: a custom_jvp, series_order a nondiff argument (one
   object per order, the order in the functions' data) ---- */

/* _log_ndtr_asymptotic_series */
static SrVal *log_ndtr_series(SrNnScope *s, SrVal *x, int order) {
  SrDtype dt = ty(s->I, x)->dtype;
  if (order <= 0) return sr_nn_typed_scalar(s, 1.0, dt);
  SrVal *x2 = C1("jax.lax.square", x);
  SrVal *even = x2 ? C1("jax.numpy.zeros_like", x) : NULL;
  SrVal *odd = even ? C1("jax.numpy.zeros_like", x) : NULL;
  SrVal *x2n = x2;
  double df = 1;
  for (int n = 1; n <= order && odd; n++) {
    if (n > 1) df *= 2 * n - 1; /* (2n - 1)!! */
    SrVal *y = OP(DIV, sr_nn_typed_scalar(s, df, dt), x2n);
    if (n % 2) odd = OP(ADD, odd, y);
    else even = OP(ADD, even, y);
    x2n = OP(MUL, x2n, x2);
  }
  return odd && even ? OP(SUB, OP(ADD, sr_nn_typed_scalar(s, 1.0, dt), even), odd) : NULL;
}

/* _log_ndtr_lower */
static SrVal *log_ndtr_lower(SrNnScope *s, SrVal *x, int order) {
  SrDtype dt = ty(s->I, x)->dtype;
  SrVal *x2 = C1("jax.lax.square", x);
  SrVal *nx = x2 ? KEEP(sr_unop(s->I, SR_OP_NEG, x)) : NULL;
  SrVal *ls = nx ? OP(SUB, OP(SUB, OP(MUL, sr_nn_typed_scalar(s, -0.5, dt), x2), C1("jax.lax.log", nx)),
                     sr_nn_typed_scalar(s, 0.5 * log(2 * M_PI), dt))
                 : NULL;
  return ls ? OP(ADD, ls, C1("jax.lax.log", log_ndtr_series(s, x, order))) : NULL;
}

static SrVal *log_ndtr_fun(SrInterp *I, SrArgs *a) {
  int order = (int)(intptr_t)sr_current_builtin(I)->data;
  if (a->n != 1) return sr_raise(I, "TypeError", "log_ndtr() takes 1 positional argument");
  SCOPE(I);
  SrVal *x = KEEP(sr_jnp_asarray(I, a->v[0], -1));
  if (!x) return DONE(NULL);
  SrDtype dt = ty(I, x)->dtype;
  if (dt != SR_F32 && dt != SR_F64) return DONE(sr_raise(I, "TypeError", "x.dtype=%s is not supported.", sr_dtype_name(dt)));
  SrVal *lower = sr_nn_typed_scalar(s, dt == SR_F64 ? -20 : -10, dt);
  SrVal *upper = sr_nn_typed_scalar(s, dt == SR_F64 ? 8 : 5, dt);
  SrVal *gtu = C2("jax.lax.gt", x, upper);
  SrVal *nx = gtu ? KEEP(sr_unop(I, SR_OP_NEG, x)) : NULL;
  SrVal *arg = nx ? where3(s, gtu, nx, C2("jax.lax.max", x, lower)) : NULL;
  SrVal *res = arg ? ndtr_of(s, arg) : NULL;
  SrVal *nres = res ? KEEP(sr_unop(I, SR_OP_NEG, res)) : NULL;
  SrVal *gtl = nres ? C2("jax.lax.gt", x, lower) : NULL;
  SrVal *lg = gtl ? C1("jax.lax.log", res) : NULL;
  SrVal *lo = lg ? log_ndtr_lower(s, C2("jax.lax.min", x, lower), order) : NULL;
  SrVal *inner = lo ? where3(s, gtl, lg, lo) : NULL;
  return DONE(inner ? where3(s, gtu, nres, inner) : NULL);
}

static SrVal *log_ndtr_cj[31];

/* _log_ndtr_jvp: ans = log_ndtr(x, series_order);
   t * exp(_norm_logpdf(x) - ans) */
static SrVal *log_ndtr_jvp(SrInterp *I, SrArgs *a) {
  int order = (int)(intptr_t)sr_current_builtin(I)->data;
  if (a->n != 2 || !sr_is_seq(a->v[0]) || !sr_is_seq(a->v[1]) || a->v[0]->seq.n != 1 || a->v[1]->seq.n != 1)
    return sr_raise(I, "TypeError", "_log_ndtr_jvp(series_order, primals, tangents) takes one primal");
  SrVal *x = a->v[0]->seq.items[0], *t = a->v[1]->seq.items[0];
  SCOPE(I);
  SrVal *ans = KEEP(sr_call1(I, log_ndtr_cj[order], x));
  SrVal *lp = ans ? C2("jax.lax.sub", C2("jax.lax.mul", cst(s, x, -0.5), C1("jax.lax.square", x)),
                       cst(s, x, log(sqrt(2 * M_PI))))
                  : NULL;
  SrVal *to = lp ? C2("jax.lax.mul", t, C1("jax.lax.exp", C2("jax.lax.sub", lp, ans))) : NULL;
  return DONE(tuple2s(s, ans, to));
}

static SrVal *log_ndtr_cjv(SrInterp *I, int order) {
  if (log_ndtr_cj[order]) return log_ndtr_cj[order];
  SrVal *cjf = sr_lookup_qualname("jax.custom_jvp");
  if (!cjf) return sr_raise(I, "NotImplementedError", "jax.custom_jvp is not available");
  SrVal *f = sr_builtin_with("log_ndtr", log_ndtr_fun, (void *)(intptr_t)order, NULL);
  SrVal *cj = sr_call1(I, cjf, f);
  sr_unref(f);
  SrVal *d = cj ? sr_getattr(I, cj, "defjvp") : NULL;
  SrVal *rule = d ? sr_builtin_with("_log_ndtr_jvp", log_ndtr_jvp, (void *)(intptr_t)order, NULL) : NULL;
  SrVal *r = rule ? sr_call1(I, d, rule) : NULL;
  sr_unref(rule);
  sr_unref(d);
  if (!r) {
    sr_unref(cj);
    return NULL;
  }
  sr_unref(r);
  return log_ndtr_cj[order] = cj;
}

static SrVal *sp_log_ndtr(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "log_ndtr", "x, series_order=", p) < 0) return NULL;
  int64_t order = 3;
  if (p[1]) {
    if (p[1]->kind != SR_V_INT) return sr_raise(I, "TypeError", "series_order must be a Python integer.");
    order = p[1]->i;
  }
  if (order < 0) return sr_raise(I, "ValueError", "series_order must be non-negative.");
  if (order > 30) return sr_raise(I, "ValueError", "series_order must be <= 30.");
  SrVal *cj = log_ndtr_cjv(I, (int)order);
  return cj ? sr_call1(I, cj, p[0]) : NULL;
}

/* ---- factorial, comb, multigammaln ---- */

/* jnp.where(n < 0, 0, lax.exp(lax.lgamma(n + 1))) */
static SrVal *sp_factorial(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "factorial", "n, exact=", p) < 0) return NULL;
  int exact = 0;
  if (p[1] && (exact = sr_truthy(I, p[1])) < 0) return NULL;
  if (exact) return sr_raise(I, "NotImplementedError", "factorial with exact=True");
  SCOPE(I);
  if (sr_nn_promote_inexact(s, 1, p, "factorial") < 0) return DONE(NULL);
  SrVal *n = p[0];
  SrVal *lt = OP(LT, n, IN(0));
  return DONE(lt ? where3(s, lt, IN(0), C1("jax.lax.exp", C1("jax.lax.lgamma", OP(ADD, n, IN(1))))) : NULL);
}

static SrVal *comb_of(SrNnScope *s, SrVal *N, SrVal *k, int repetition) {
  SrVal *nk[2] = {N, k};
  if (sr_nn_promote_inexact(s, 2, nk, "comb") < 0) return NULL;
  N = nk[0];
  k = nk[1];
  if (repetition) {
    SrVal *cond = OP(BITAND, OP(EQ, k, IN(0)), OP(GE, N, IN(0)));
    SrVal *r = cond ? comb_of(s, OP(SUB, OP(ADD, N, k), IN(1)), k, 0) : NULL;
    return r ? where3(s, cond, FL(1.0), r) : NULL;
  }
  SrVal *cond = OP(BITAND, OP(BITAND, OP(LE, k, N), OP(GE, N, IN(0))), OP(GE, k, IN(0)));
  SrVal *sn = cond ? where3(s, cond, N, FL(0.0)) : NULL;
  SrVal *sk = sn ? where3(s, cond, k, FL(0.0)) : NULL;
  if (!sk) return NULL;
  SrVal *g1 = C1("jax.scipy.special.gammaln", OP(ADD, sn, IN(1)));
  SrVal *g2 = g1 ? C1("jax.scipy.special.gammaln", OP(ADD, sk, IN(1))) : NULL;
  SrVal *g3 = g2 ? C1("jax.scipy.special.gammaln", OP(SUB, OP(ADD, sn, IN(1)), sk)) : NULL;
  SrVal *r = g3 ? C1("jax.lax.exp", OP(SUB, OP(SUB, g1, g2), g3)) : NULL;
  return r ? where3(s, cond, r, FL(0.0)) : NULL;
}

static SrVal *sp_comb(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "comb", "N, k, *, repetition=", p) < 0) return NULL;
  int rep = 0;
  if (p[2] && (rep = sr_truthy(I, p[2])) < 0) return NULL;
  SCOPE(I);
  return DONE(comb_of(s, p[0], p[1], rep));
}

static SrVal *sp_multigammaln(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "multigammaln", "a, d", p) < 0) return NULL;
  int64_t d;
  if (p[1]->kind != SR_V_INT && p[1]->kind != SR_V_BOOL) {
    if (sr_array_of(p[1]))
      return sr_raise(I, "ConcretizationTypeError", "Abstract tracer value encountered where concrete value is "
                      "expected: d argument of multigammaln");
  }
  if (sr_as_int(I, p[1], "d argument of multigammaln", &d) < 0) return NULL;
  SCOPE(I);
  SrVal *ad[2] = {p[0], IN(d)};
  if (sr_nn_promote_inexact(s, 2, ad, "multigammaln") < 0) return DONE(NULL);
  SrVal *x = ad[0], *d_ = ad[1];
  SrVal *c = C2("jax.lax.mul", C2("jax.lax.mul", C2("jax.lax.mul", cst(s, x, 0.25), d_), C2("jax.lax.sub", d_, cst(s, x, 1))),
                C1("jax.lax.log", cst(s, x, M_PI)));
  if (!c) return DONE(NULL);
  SrVal *av[2] = {IN(d), KEEP(sr_dtype_val(NULL, ty(I, d_)->dtype))};
  const char *kw[1] = {"dtype"};
  SrVal *ar = sr_nn_call(s, "jax.numpy.arange", 1, av, 1, kw, av + 1);
  SrVal *b = ar ? C2("jax.lax.div", ar, cst(s, x, 2)) : NULL;
  if (!b) return DONE(NULL);
  int nd = ty(I, x)->ndim;
  int64_t axes[SR_MAX_RANK];
  for (int i = 0; i < nd; i++) axes[i] = i;
  SrVal *ea = C2("jax.numpy.expand_dims", x, IN(-1));
  SrVal *eb = ea ? C2("jax.numpy.expand_dims", b, KEEP(sr_int_tuple(axes, nd))) : NULL;
  SrVal *g = eb ? C1("jax.scipy.special.gammaln", OP(SUB, ea, eb)) : NULL;
  const char *kw2[1] = {"axis"};
  SrVal *kv2[1] = {IN(-1)};
  SrVal *res = g ? sr_nn_call(s, "jax.numpy.sum", 1, &g, 1, kw2, kv2) : NULL;
  return DONE(OP(ADD, res, c));
}

/* ---- poch: a custom_jvp with defjvps ---- */

static SrVal *poch_cj;

static SrVal *poch_fun(SrInterp *I, SrArgs *a) {
  if (a->n != 2) return sr_raise(I, "TypeError", "poch() takes 2 positional arguments");
  SCOPE(I);
  SrVal *zm[2] = {a->v[0], a->v[1]};
  if (sr_nn_promote_inexact(s, 2, zm, "poch") < 0) return DONE(NULL);
  SrVal *z = zm[0], *m = zm[1];
  const SrType *t = ty(I, z);
  if (sr_dtype_kind(t->dtype) == SR_DK_COMPLEX)
    return DONE(sr_raise(I, "ValueError", "jnp.poch does not support complex-valued inputs."));
  SrVal *eq = OP(EQ, m, FL(0.0));
  SrVal *one = eq ? sr_nn_typed_scalar(s, 1, t->dtype) : NULL;
  SrVal *gzm = one ? gamma_of(s, OP(ADD, z, m)) : NULL;
  SrVal *gz = gzm ? gamma_of(s, z) : NULL;
  return DONE(gz ? where3(s, eq, one, OP(DIV, gzm, gz)) : NULL);
}

static SrVal *poch_call(SrNnScope *s, SrVal *z, SrVal *m) {
  SrVal *v[2] = {z, m};
  SrArgs ca = {2, v, 0, NULL, NULL, NULL};
  return poch_cj ? KEEP(sr_call(s->I, poch_cj, &ca)) : NULL;
}

/* lambda z_dot, primal_out, z, m: (digamma(z + m) - digamma(z)) * poch(z, m) * z_dot */
static SrVal *poch_jvp_z(SrInterp *I, SrArgs *a) {
  if (a->n != 4) return sr_raise(I, "TypeError", "<lambda>() takes 4 positional arguments");
  SCOPE(I);
  SrVal *z = a->v[2], *m = a->v[3];
  SrVal *dzm = C1("jax.scipy.special.digamma", OP(ADD, z, m));
  SrVal *d = dzm ? OP(SUB, dzm, C1("jax.scipy.special.digamma", z)) : NULL;
  SrVal *pc = d ? poch_call(s, z, m) : NULL;
  return DONE(pc ? OP(MUL, OP(MUL, d, pc), a->v[0]) : NULL);
}

/* lambda m_dot, primal_out, z, m: digamma(z + m) * poch(z, m) * m_dot */
static SrVal *poch_jvp_m(SrInterp *I, SrArgs *a) {
  if (a->n != 4) return sr_raise(I, "TypeError", "<lambda>() takes 4 positional arguments");
  SCOPE(I);
  SrVal *z = a->v[2], *m = a->v[3];
  SrVal *d = C1("jax.scipy.special.digamma", OP(ADD, z, m));
  SrVal *pc = d ? poch_call(s, z, m) : NULL;
  return DONE(pc ? OP(MUL, OP(MUL, d, pc), a->v[0]) : NULL);
}

static SrVal *poch_cjv(SrInterp *I) {
  if (poch_cj) return poch_cj;
  SrVal *cjf = sr_lookup_qualname("jax.custom_jvp");
  if (!cjf) return sr_raise(I, "NotImplementedError", "jax.custom_jvp is not available");
  SrVal *f = sr_builtin_with("poch", poch_fun, NULL, NULL);
  SrVal *cj = sr_call1(I, cjf, f);
  sr_unref(f);
  SrVal *d = cj ? sr_getattr(I, cj, "defjvps") : NULL;
  SrVal *r1 = d ? sr_builtin_with("<lambda>", poch_jvp_z, NULL, NULL) : NULL;
  SrVal *r2 = d ? sr_builtin_with("<lambda>", poch_jvp_m, NULL, NULL) : NULL;
  SrVal *rv[2] = {r1, r2};
  SrArgs ca = {2, rv, 0, NULL, NULL, NULL};
  SrVal *r = d ? sr_call(I, d, &ca) : NULL;
  sr_unref(r1);
  sr_unref(r2);
  sr_unref(d);
  if (!r) {
    sr_unref(cj);
    return NULL;
  }
  sr_unref(r);
  return poch_cj = cj;
}

static SrVal *sp_poch(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "poch", "z, m", p) < 0) return NULL;
  SrVal *cj = poch_cjv(I);
  SrArgs ca = {2, p, 0, NULL, NULL, NULL};
  return cj ? sr_call(I, cj, &ca) : NULL;
}

/* ---- rel_entr, kl_div ---- */

static SrVal *rel_entr_of(SrNnScope *s, SrVal *p0, SrVal *q0) {
  SrVal *pq[2] = {p0, q0};
  if (sr_nn_promote_inexact(s, 2, pq, "rel_entr") < 0 || no_complex(s, pq[0], "rel_entr") < 0) return NULL;
  SrVal *p = pq[0], *q = pq[1], *zero = cst(s, p, 0.0);
  SrVal *pg = C2("jax.lax.gt", p, zero);
  SrVal *both = pg ? C2("jax.lax.bitwise_and", pg, C2("jax.lax.gt", q, zero)) : NULL;
  SrVal *pe = both ? C2("jax.lax.eq", p, zero) : NULL;
  SrVal *one0 = pe ? C2("jax.lax.bitwise_and", pe, C2("jax.lax.ge", q, zero)) : NULL;
  SrVal *sp = one0 ? where3(s, both, p, IN(1)) : NULL;
  SrVal *sq = sp ? where3(s, both, q, IN(1)) : NULL;
  SrVal *xl = sq ? KEEP(sr_scipy_xlogx(s->I, sp)) : NULL;
  SrVal *lv = xl ? C2("jax.lax.sub", xl, C2("jax.scipy.special.xlogy", sp, sq)) : NULL;
  SrVal *inner = lv ? where3(s, one0, zero, FL(INFINITY)) : NULL;
  return inner ? where3(s, both, lv, inner) : NULL;
}

static SrVal *sp_rel_entr(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "rel_entr", "p, q", p) < 0) return NULL;
  SCOPE(I);
  return DONE(rel_entr_of(s, p[0], p[1]));
}

/* rel_entr(p, q) - p + q */
static SrVal *sp_kl_div(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "kl_div", "p, q", p) < 0) return NULL;
  SCOPE(I);
  if (sr_nn_promote_inexact(s, 2, p, "kl_div") < 0 || no_complex(s, p[0], "kl_div") < 0) return DONE(NULL);
  SrVal *r = rel_entr_of(s, p[0], p[1]);
  return DONE(OP(ADD, OP(SUB, r, p[0]), p[1]));
}

/* ---- softmax, log_softmax: jax.nn's with axis=None by default ---- */

static SrVal *sp_softmax_common(SrInterp *I, SrArgs *a, const char *name, const char *q) {
  SrVal *p[2];
  if (sr_args_parse(I, a, name, "x, *, axis=", p) < 0) return NULL;
  SCOPE(I);
  const char *kw[1] = {"axis"};
  SrVal *kv[1] = {p[1] ? p[1] : KEEP(sr_none())};
  return DONE(sr_nn_call(s, q, 1, p, 1, kw, kv));
}

static SrVal *sp_softmax(SrInterp *I, SrArgs *a) { return sp_softmax_common(I, a, "softmax", "jax.nn.softmax"); }
static SrVal *sp_log_softmax(SrInterp *I, SrArgs *a) {
  return sp_softmax_common(I, a, "log_softmax", "jax.nn.log_softmax");
}

/* ---- boxcox, boxcox1p ---- */

static SrVal *boxcox(SrInterp *I, SrArgs *a, const char *name, const char *logf) {
  SrVal *p[2];
  if (sr_args_parse(I, a, name, "x, lmbda", p) < 0) return NULL;
  SCOPE(I);
  if (sr_nn_promote_inexact(s, 2, p, name) < 0) return DONE(NULL);
  SrVal *x = p[0], *l = p[1];
  SrVal *z = OP(EQ, l, IN(0));
  SrVal *safe = z ? where3(s, z, C1("jax.numpy.ones_like", l), l) : NULL;
  SrVal *lx = safe ? C1(logf, x) : NULL;
  SrVal *pw = lx ? OP(DIV, C1("jax.numpy.expm1", OP(MUL, safe, lx)), safe) : NULL;
  return DONE(pw ? where3(s, z, lx, pw) : NULL);
}

static SrVal *sp_boxcox(SrInterp *I, SrArgs *a) { return boxcox(I, a, "boxcox", "jax.numpy.log"); }
static SrVal *sp_boxcox1p(SrInterp *I, SrArgs *a) { return boxcox(I, a, "boxcox1p", "jax.numpy.log1p"); }

/* ---- ndtri (_ndtri: cephes' piecewise rational approximations) ---- */

static const double ndtri_p0[] = {-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1, 1.39312609387279679503E1, -1.23916583867381258016E0};
static const double ndtri_q0[] = {1.0, 1.95448858338141759834E0, 4.67627912898881538453E0, 8.63602421390890590575E1, -2.25462687854119370527E2, 2.00260212380060660359E2, -8.20372256168333339912E1, 1.59056225126211695515E1, -1.18331621121330003142E0};
static const double ndtri_p1[] = {4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1, 4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0, -1.40256079171354495875E-1, -3.50424626827848203418E-2, -8.57456785154685413611E-4};
static const double ndtri_q1[] = {1.0, 1.57799883256466749731E1, 4.53907635128879210584E1, 4.13172038254672030440E1, 1.50425385692907503408E1, 2.50464946208309415979E0, -1.42182922854787788574E-1, -3.80806407691578277194E-2, -9.33259480895457427372E-4};
static const double ndtri_p2[] = {3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0, 1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2, 3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9};
static const double ndtri_q2[] = {1.0, 6.02427039364742014255E0, 3.67983563856160859403E0, 1.37702099489081330271E0, 2.16236993594496635890E-1, 1.34204006088543189037E-2, 3.28014464682127739104E-4, 2.89247864745380683936E-6, 6.79019408009981274425E-9};

/* np.array(c, dtype=dtype): a concrete array of x's dtype */
static SrVal *coef_array(SrNnScope *s, const double *c, int n, SrDtype dt) {
  SrVal *items[16];
  for (int i = 0; i < n; i++) items[i] = sr_float(NULL, c[i]);
  SrVal *t = KEEP(sr_tuple(NULL, n, items));
  return KEEP(sr_jnp_asarray(s->I, t, (int)dt));
}

static SrVal *polyval(SrNnScope *s, const double *c, int n, SrDtype dt, SrVal *x) {
  SrVal *p = coef_array(s, c, n, dt);
  return p && x ? KEEP(sr_jnp_polyval(s->I, p, x, 16)) : NULL;
}

#define NC(a) (int)(sizeof a / sizeof *a)

static SrVal *ndtri_of(SrNnScope *s, SrVal *p) {
  SrInterp *I = s->I;
  const SrType *t = ty(I, p);
  SrDtype dt = t->dtype;
  int64_t sh[SR_MAX_RANK];
  for (int i = 0; i < t->ndim; i++) sh[i] = t->dims[i].size;
  SrVal *shape = KEEP(sr_int_tuple(sh, t->ndim));
#define D(v) sr_nn_typed_scalar(s, (v), dt)
  SrVal *mcp = where3(s, OP(GT, p, D(-expm1(-2.0))), OP(SUB, D(1.0), p), p);
  SrVal *half = mcp ? C2("jax.numpy.full", shape, D(0.5)) : NULL;
  SrVal *san = half ? where3(s, OP(EQ, mcp, D(0.0)), half, mcp) : NULL;
  if (!san) return NULL;
  SrVal *w = OP(SUB, san, D(0.5));
  SrVal *ww = C1("jax.lax.square", w);
  SrVal *pp0 = ww ? polyval(s, ndtri_p0, NC(ndtri_p0), dt, ww) : NULL;
  SrVal *r0 = pp0 ? OP(DIV, pp0, polyval(s, ndtri_q0, NC(ndtri_q0), dt, ww)) : NULL;
  SrVal *xbig = r0 ? OP(ADD, w, OP(MUL, OP(MUL, w, ww), r0)) : NULL;
  xbig = OP(MUL, xbig, D(-sqrt(2.0 * M_PI)));
  SrVal *z = xbig ? C1("jax.lax.sqrt", OP(MUL, D(-2.0), C1("jax.lax.log", san))) : NULL;
  SrVal *first = z ? OP(SUB, z, OP(DIV, C1("jax.lax.log", z), z)) : NULL;
  SrVal *iz1 = first ? OP(DIV, IN(1), z) : NULL;
  SrVal *pp2 = iz1 ? polyval(s, ndtri_p2, NC(ndtri_p2), dt, iz1) : NULL;
  SrVal *iz2 = pp2 ? OP(DIV, IN(1), z) : NULL;
  SrVal *s2 = iz2 ? OP(DIV, OP(DIV, pp2, polyval(s, ndtri_q2, NC(ndtri_q2), dt, iz2)), z) : NULL;
  SrVal *iz3 = s2 ? OP(DIV, IN(1), z) : NULL;
  SrVal *pp1 = iz3 ? polyval(s, ndtri_p1, NC(ndtri_p1), dt, iz3) : NULL;
  SrVal *iz4 = pp1 ? OP(DIV, IN(1), z) : NULL;
  SrVal *s1 = iz4 ? OP(DIV, OP(DIV, pp1, polyval(s, ndtri_q1, NC(ndtri_q1), dt, iz4)), z) : NULL;
  SrVal *xsmall = s1 ? OP(SUB, first, s2) : NULL;
  SrVal *xother = xsmall ? OP(SUB, first, s1) : NULL;
  SrVal *c1 = xother ? OP(GT, san, D(exp(-2.0))) : NULL;
  SrVal *inner = c1 ? where3(s, OP(GE, z, D(8.0)), xsmall, xother) : NULL;
  SrVal *x = inner ? where3(s, c1, xbig, inner) : NULL;
  SrVal *c2 = x ? OP(GT, p, D(1.0 - exp(-2.0))) : NULL;
  x = c2 ? where3(s, c2, x, KEEP(sr_unop(I, SR_OP_NEG, x))) : NULL;
  SrVal *inf = x ? C2("jax.numpy.full", shape, D(INFINITY)) : NULL;
  SrVal *ninf = inf ? KEEP(sr_unop(I, SR_OP_NEG, inf)) : NULL;
  SrVal *c3 = ninf ? OP(EQ, p, D(0.0)) : NULL;
  SrVal *in2 = c3 ? where3(s, OP(EQ, p, D(1.0)), inf, x) : NULL;
  return in2 ? where3(s, c3, ninf, in2) : NULL;
#undef D
}

static SrVal *sp_ndtri(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "ndtri", "p", p) < 0) return NULL;
  SCOPE(I);
  SrVal *x = KEEP(sr_jnp_asarray(I, p[0], -1));
  if (!x) return DONE(NULL);
  SrDtype dt = ty(I, x)->dtype;
  if (dt != SR_F32 && dt != SR_F64)
    return DONE(sr_raise(I, "TypeError", "x.dtype=%s is not supported, see docstring for supported types.",
                         sr_dtype_name(dt)));
  return DONE(ndtri_of(s, x));
}

/* ---- erfcx: _erfcx, a custom_jvp (defjvps) ---- */

static SrVal *erfcx_impl(SrNnScope *s, SrVal *x, int nterms) {
  static const double coeffs[] = {7918.06640625, -1055.7421875, 162.421875, -29.53125, 6.5625, -1.875, .75, -.5, 1.};
  SrDtype dt = ty(s->I, x)->dtype;
  double threshold = sqrt(log(dt == SR_F64 ? 1.7976931348623157e308 : 3.4028234663852886e38));
  SrVal *large = OP(GT, x, cst(s, x, threshold));
  SrVal *safe = large ? C3("jax.lax.select", large, sr_nn_full_like(s, x, FL(1.0)), x) : NULL;
  SrVal *direct = safe ? OP(MUL, C1("jax.lax.exp", C1("jax.lax.square", safe)), C1("jax.lax.erfc", safe)) : NULL;
  SrVal *tt = direct ? OP(DIV, cst(s, x, 1.0), C1("jax.lax.square", x)) : NULL;
  SrVal *pv = tt ? polyval(s, coeffs + 9 - nterms, nterms, dt, tt) : NULL;
  SrVal *asymp = pv ? OP(DIV, pv, OP(MUL, x, cst(s, x, sqrt(M_PI)))) : NULL;
  return asymp ? C3("jax.lax.select", large, asymp, direct) : NULL;
}

static SrVal *erfcx_fun(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "_erfcx() takes 1 positional argument");
  SCOPE(I);
  SrVal *x = a->v[0];
  SrDtype dt = ty(I, x)->dtype;
  if (dt == SR_F64) return DONE(erfcx_impl(s, x, 9));
  if (dt == SR_F32) return DONE(erfcx_impl(s, x, 5));
  SrVal *r = erfcx_impl(s, KEEP(sr_lax_convert(I, x, SR_F32, 0, NULL)), 5);
  return DONE(r ? KEEP(sr_lax_convert(I, r, dt, 0, NULL)) : NULL);
}

/* lambda g, ans, x: g * (2 * x * ans - _lax_const(x, 2. / np.sqrt(np.pi))) */
static SrVal *erfcx_jvp(SrInterp *I, SrArgs *a) {
  if (a->n != 3) return sr_raise(I, "TypeError", "<lambda>() takes 3 positional arguments");
  SCOPE(I);
  SrVal *g = a->v[0], *ans = a->v[1], *x = a->v[2];
  SrVal *d = OP(SUB, OP(MUL, OP(MUL, IN(2), x), ans), cst(s, x, 2.0 / sqrt(M_PI)));
  return DONE(OP(MUL, g, d));
}

static SrVal *erfcx_cj;

static SrVal *sp_erfcx(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "erfcx", "x", p) < 0) return NULL;
  SCOPE(I);
  if (sr_nn_promote_inexact(s, 1, p, "erfcx") < 0) return DONE(NULL);
  if (sr_dtype_kind(ty(I, p[0])->dtype) == SR_DK_COMPLEX)
    return DONE(sr_raise(I, "NotImplementedError", "erfcx of complex values is not supported here"));
  SrVal *cj = sr_nn_custom_jvp(I, &erfcx_cj, "_erfcx", erfcx_fun, "<lambda>", erfcx_jvp, 1);
  return DONE(cj ? KEEP(sr_call1(I, cj, p[0])) : NULL);
}

void sr_scipy_special_more_init(void) {
  static const struct {
    const char *names;
    SrBuiltinFn fn;
    const char *doc;
  } defs[] = {
      {"jax.scipy.special.gammainc", sp_gammainc, "gammainc(a, x): the regularized lower incomplete gamma P(a, x)"},
      {"jax.scipy.special.gammaincc", sp_gammaincc, "gammaincc(a, x): the regularized upper incomplete gamma Q(a, x)"},
      {"jax.scipy.special.betainc", sp_betainc, "betainc(a, b, x): the regularized incomplete beta function"},
      {"jax.scipy.special.betaln", sp_betaln, "betaln(a, b): log|B(a, b)|"},
      {"jax.scipy.special.beta", sp_beta, "beta(a, b): the beta function B(a, b)"},
      {"jax.scipy.special.gamma", sp_gamma, "gamma(x): the gamma function, gammasgn(x) * exp(lgamma(x))"},
      {"jax.scipy.special.gammasgn", sp_gammasgn, "gammasgn(x): the sign of the gamma function (a jit)"},
      {"jax.scipy.special.loggamma", sp_loggamma, "loggamma(x): log(gamma(x)) for real x > 0, NaN elsewhere"},
      {"jax.scipy.special.ndtr", sp_ndtr, "ndtr(x): the standard normal CDF"},
      {"jax.scipy.special.log_ndtr", sp_log_ndtr,
       "log_ndtr(x, series_order=3): log(ndtr(x)), an asymptotic series far below 0 (a custom_jvp)"},
      {"jax.scipy.special.ndtri", sp_ndtri, "ndtri(p): the inverse of ndtr (cephes' rational approximations)"},
      {"jax.scipy.special.erfcx", sp_erfcx, "erfcx(x): exp(x**2) * erfc(x), a custom_jvp"},
      {"jax.scipy.special.i0", sp_i0, "i0(x): the modified Bessel function of order 0"},
      {"jax.scipy.special.i0e", sp_i0e, "i0e(x): exp(-|x|) i0(x)"},
      {"jax.scipy.special.i1", sp_i1, "i1(x): the modified Bessel function of order 1"},
      {"jax.scipy.special.i1e", sp_i1e, "i1e(x): exp(-|x|) i1(x)"},
      {"jax.scipy.special.factorial", sp_factorial, "factorial(n, exact=False): exp(lgamma(n + 1)), 0 for n < 0"},
      {"jax.scipy.special.comb", sp_comb, "comb(N, k, *, repetition=False): N choose k through gammaln"},
      {"jax.scipy.special.poch", sp_poch, "poch(z, m): the Pochhammer symbol gamma(z + m) / gamma(z), a custom_jvp"},
      {"jax.scipy.special.rel_entr", sp_rel_entr, "rel_entr(p, q): p log(p / q), 0 at p == 0, inf where undefined"},
      {"jax.scipy.special.kl_div", sp_kl_div, "kl_div(p, q): rel_entr(p, q) - p + q"},
      {"jax.scipy.special.softmax", sp_softmax, "softmax(x, /, *, axis=None): jax.nn.softmax over axis (all: None)"},
      {"jax.scipy.special.log_softmax", sp_log_softmax,
       "log_softmax(x, /, *, axis=None): jax.nn.log_softmax over axis (all: None)"},
      {"jax.scipy.special.multigammaln", sp_multigammaln, "multigammaln(a, d): the log of the multivariate gamma function"},
      {"jax.scipy.special.boxcox", sp_boxcox, "boxcox(x, lmbda): (x**lmbda - 1) / lmbda, log(x) at lmbda == 0"},
      {"jax.scipy.special.boxcox1p", sp_boxcox1p, "boxcox1p(x, lmbda): boxcox(1 + x, lmbda)"},
  };
  for (size_t i = 0; i < sizeof defs / sizeof *defs; i++) sr_def(defs[i].names, defs[i].fn, defs[i].doc);
}
