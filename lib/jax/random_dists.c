/* random_dists.c: jax.random's samplers that transform uniform and
 * normal draws (issue 15): cauchy, lognormal, pareto, rayleigh, wald,
 * geometric, triangular, weibull_min, maxwell and double_sided_maxwell,
 * and key_impl.  Each is written as jax/_src/random/core.py writes it: the
 * same checks, then a jit of the same name (_cauchy, _pareto, ...; the
 * ones JAX marks inline=True run inline) over the same lax and jnp
 * calls, so the printed jaxprs are JAX's and, since uniform and normal
 * are JAX's bit for bit, so are the samples up to the last-ulp rounding
 * of the transcendental functions.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/jaxstate.h"
#include "jax/jax.h"
#include "jax/nn.h"
#include "jax/numpy.h"
#include "jax/random.h"
#include "py/ast.h"
#include "py/objects.h"
#include "text/print_val.h"

#define SCOPE(I) SrNnScope s_ = {(I), {0}, 0}, *s = &s_
#define OP(op, x, y) sr_nn_op(s, SR_OP_##op, x, y)
#define KEEP(v) sr_nn_keep(s, (v))

/* A sampler's static arguments: the result's shape and dtype. */
typedef struct Static {
  int64_t shape[SR_MAX_RANK];
  int nd;
  SrDtype dt;
  int log_space; /* _gamma's */
} Static;

static const Static *static_args(SrInterp *I) { return sr_current_builtin(I)->data; }

/* lax.f(x), lax.f(x, y) on values the scope holds */
static SrVal *lax1(SrNnScope *s, int prim, SrVal *x) { return x ? KEEP(sr_lax_unary(s->I, prim, x)) : NULL; }
static SrVal *lax2(SrNnScope *s, int prim, SrVal *x, SrVal *y) {
  return x && y ? KEEP(sr_lax_binary(s->I, prim, x, y)) : NULL;
}

/* lax._const(x, v): a scalar of x's dtype (x's type known to be dt) */
static SrVal *cnst(SrNnScope *s, SrDtype dt, double v) { return sr_nn_typed_scalar(s, v, dt); }

static SrVal *shape_val(SrNnScope *s, const Static *st) { return KEEP(sr_int_tuple(st->shape, st->nd)); }

/* jax.random.uniform / normal(key, shape, dtype [, minval, maxval]) */
static SrVal *uniform(SrNnScope *s, SrVal *key, const Static *st, SrVal *mn, SrVal *mx) {
  SrVal *v[5] = {key, shape_val(s, st), KEEP(sr_dtype_val(NULL, st->dt)), mn ? mn : sr_nn_float(s, 0.0),
                 mx ? mx : sr_nn_float(s, 1.0)};
  return sr_nn_call(s, "jax.random.uniform", 5, v, 0, NULL, NULL);
}

static SrVal *normal(SrNnScope *s, SrVal *key, const Static *st) {
  SrVal *v[3] = {key, shape_val(s, st), KEEP(sr_dtype_val(NULL, st->dt))};
  return sr_nn_call(s, "jax.random.normal", 3, v, 0, NULL, NULL);
}

/* x.astype(dt) / lax.convert_element_type(x, dt) */
static SrVal *convert(SrNnScope *s, SrVal *x, SrDtype dt) {
  SrVal *a = x ? KEEP(sr_jnp_asarray(s->I, x, -1)) : NULL;
  return a ? KEEP(sr_lax_convert(s->I, x->kind == SR_V_FLOAT || x->kind == SR_V_INT ? x : a, dt, 0, NULL)) : NULL;
}

/* jnp.broadcast_to(x, shape) */
static SrVal *bcast(SrNnScope *s, SrVal *x, const Static *st) {
  return x ? sr_nn_call2(s, "jax.numpy.broadcast_to", x, shape_val(s, st)) : NULL;
}

/* k1, k2 = _split(key) */
static int split2(SrNnScope *s, SrVal *key, SrVal **k1, SrVal **k2) {
  SrVal *ks = sr_nn_call1(s, "jax.random.split", key);
  SrVal *t = ks ? sr_nn_call1(s, "builtins.tuple", ks) : NULL;
  if (!t) return -1;
  *k1 = t->seq.items[0];
  *k2 = t->seq.items[1];
  return 0;
}

/* ---- the samplers' bodies ---- */

/* _cauchy(key): tan(pi * (uniform(key, minval=eps, maxval=1.) - 0.5)) */
static SrVal *cauchy_body(SrInterp *I, SrArgs *a) {
  const Static *st = static_args(I);
  SCOPE(I);
  double eps = st->dt == SR_F64 ? 0x1p-52 : st->dt == SR_F16 ? 0x1p-10 : st->dt == SR_BF16 ? 0x1p-7 : 0x1p-23;
  SrVal *u = uniform(s, a->v[0], st, cnst(s, st->dt, eps), NULL);
  SrVal *t = lax2(s, SR_P_mul, cnst(s, st->dt, M_PI), lax2(s, SR_P_sub, u, cnst(s, st->dt, 0.5)));
  return sr_nn_done(s, t ? KEEP(sr_lax_unary(I, SR_P_tan, t)) : NULL);
}

/* _lognormal(key, sigma): exp(normal(key, shape, dtype) * sigma) */
static SrVal *lognormal_body(SrInterp *I, SrArgs *a) {
  const Static *st = static_args(I);
  SCOPE(I);
  SrVal *sigma = convert(s, a->v[1], st->dt);
  SrVal *x = sigma ? OP(MUL, normal(s, a->v[0], st), sigma) : NULL;
  return sr_nn_done(s, x ? KEEP(sr_lax_unary(I, SR_P_exp, x)) : NULL);
}

/* _pareto(key, b): exp(exponential(key, shape, dtype) / b) */
static SrVal *pareto_body(SrInterp *I, SrArgs *a) {
  const Static *st = static_args(I);
  SCOPE(I);
  SrVal *b = convert(s, a->v[1], st->dt);
  SrVal *v[3] = {a->v[0], shape_val(s, st), KEEP(sr_dtype_val(NULL, st->dt))};
  SrVal *e = b ? sr_nn_call(s, "jax.random.exponential", 3, v, 0, NULL, NULL) : NULL;
  SrVal *q = OP(DIV, e, b);
  return sr_nn_done(s, q ? KEEP(sr_lax_unary(I, SR_P_exp, q)) : NULL);
}

/* _rayleigh(key, scale): scale * sqrt(log(uniform) * -2) */
static SrVal *rayleigh_body(SrInterp *I, SrArgs *a) {
  const Static *st = static_args(I);
  SCOPE(I);
  SrVal *u = uniform(s, a->v[0], st, NULL, NULL);
  SrVal *scale = u ? bcast(s, convert(s, a->v[1], st->dt), st) : NULL;
  SrVal *sq = lax1(s, SR_P_sqrt, lax2(s, SR_P_mul, lax1(s, SR_P_log, scale ? u : NULL), cnst(s, st->dt, -2)));
  return sr_nn_done(s, sq ? KEEP(sr_lax_binary(I, SR_P_mul, scale, sq)) : NULL);
}

static SrVal *ipow(SrNnScope *s, SrVal *x, int y) {
  return x ? KEEP(sr_bindv(s->I, SR_P_integer_pow, 1, &x, "y", sr_int(NULL, y), NULL)) : NULL;
}

/* _wald(key, mean): the inverse Gaussian by Michael, Schucany and Haas,
   one normal and one uniform draw */
static SrVal *wald_body(SrInterp *I, SrArgs *a) {
  const Static *st = static_args(I);
  SCOPE(I);
  SrVal *k1, *k2;
  if (split2(s, a->v[0], &k1, &k2) < 0) return sr_nn_done(s, NULL);
  SrVal *mean = bcast(s, convert(s, a->v[1], st->dt), st);
  SrVal *v = mean ? normal(s, k1, st) : NULL;
  SrVal *z = v ? uniform(s, k2, st, NULL, NULL) : NULL;
  SrVal *y = ipow(s, z ? v : NULL, 2);
  SrVal *y_sq = ipow(s, y, 2);
  SrVal *mean_sq = ipow(s, y_sq ? mean : NULL, 2);
  SrVal *two = sr_nn_int(s, 2);
  SrVal *sqrt_term = lax1(s, SR_P_sqrt, OP(ADD, OP(MUL, OP(MUL, sr_nn_int(s, 4), mean), y), OP(MUL, mean_sq, y_sq)));
  SrVal *x = OP(SUB, OP(ADD, mean, OP(DIV, OP(MUL, mean_sq, y), two)), OP(MUL, OP(DIV, mean, two), sqrt_term));
  SrVal *c = lax2(s, SR_P_le, z, OP(DIV, mean, OP(ADD, mean, x)));
  SrVal *w = c ? OP(DIV, mean_sq, x) : NULL;
  return sr_nn_done(s, w ? KEEP(sr_lax_select(I, c, x, w)) : NULL);
}

/* _geometric(key, p): floor(log(u) / log1p(-p)) + 1, as dtype */
static SrVal *geometric_body(SrInterp *I, SrArgs *a) {
  const Static *st = static_args(I);
  SCOPE(I);
  SrVal *p = a->v[1];
  if (sr_nn_promote_inexact(s, 1, &p, "geometric") < 0) return sr_nn_done(s, NULL);
  const SrType *pt = sr_value_type(I, p);
  Static ust = *st;
  ust.dt = pt->dtype;
  SrVal *u = uniform(s, a->v[0], &ust, NULL, NULL);
  SrVal *z = OP(EQ, u, sr_nn_int(s, 0));
  u = z ? sr_nn_call3(s, "jax.numpy.where", z, sr_nn_int(s, 1), u) : NULL;
  SrVal *log_u = lax1(s, SR_P_log, u);
  SrVal *l1p = bcast(s, lax1(s, SR_P_log1p, lax1(s, SR_P_neg, log_u ? p : NULL)), st);
  SrVal *g = OP(ADD, lax1(s, SR_P_floor, lax2(s, SR_P_div, log_u, l1p)), sr_nn_int(s, 1));
  return sr_nn_done(s, g ? KEEP(sr_lax_convert(I, g, st->dt, 0, NULL)) : NULL);
}

/* _triangular(key, left, mode, right) (inline) */
static SrVal *triangular_body(SrInterp *I, SrArgs *a) {
  const Static *st = static_args(I);
  SCOPE(I);
  SrVal *left = bcast(s, convert(s, a->v[1], st->dt), st);
  SrVal *right = left ? bcast(s, convert(s, a->v[3], st->dt), st) : NULL;
  SrVal *mode = right ? bcast(s, convert(s, a->v[2], st->dt), st) : NULL;
  SrVal *fc = OP(DIV, OP(SUB, mode, left), OP(SUB, right, left));
  SrVal *u = fc ? uniform(s, a->v[0], st, NULL, NULL) : NULL;
  SrVal *out1 = OP(ADD, left, lax1(s, SR_P_sqrt, OP(MUL, OP(MUL, u, OP(SUB, right, left)), OP(SUB, mode, left))));
  SrVal *out2 = OP(SUB, right, lax1(s, SR_P_sqrt, OP(MUL, OP(MUL, OP(SUB, sr_nn_int(s, 1), u), OP(SUB, right, left)),
                                                  OP(SUB, right, mode))));
  SrVal *c = out2 ? OP(LT, u, fc) : NULL;
  return sr_nn_done(s, c ? KEEP(sr_lax_select(I, c, out1, out2)) : NULL);
}

/* _weibull_min(key, scale, concentration):
   jnp.power(-jnp.log1p(-uniform), 1.0 / concentration) * scale */
static SrVal *weibull_body(SrInterp *I, SrArgs *a) {
  const Static *st = static_args(I);
  SCOPE(I);
  SrVal *u = uniform(s, a->v[0], st, sr_nn_int(s, 0), sr_nn_int(s, 1));
  SrVal *l = u ? sr_nn_call1(s, "jax.numpy.log1p", KEEP(sr_unop(I, SR_OP_NEG, u))) : NULL;
  SrVal *nl = l ? KEEP(sr_unop(I, SR_OP_NEG, l)) : NULL;
  SrVal *pw = nl ? sr_nn_call2(s, "jax.numpy.power", nl, OP(DIV, sr_nn_float(s, 1.0), a->v[2])) : NULL;
  return sr_nn_done(s, pw ? OP(MUL, pw, a->v[1]) : NULL);
}

/* _maxwell(key): jnp.linalg.norm(normal(key, shape + (3,), dtype), axis=-1) */
static SrVal *maxwell_body(SrInterp *I, SrArgs *a) {
  const Static *st = static_args(I);
  SCOPE(I);
  Static n3 = *st;
  n3.shape[n3.nd++] = 3;
  SrVal *x = normal(s, a->v[0], &n3);
  const char *kw[] = {"axis"};
  SrVal *kv[] = {sr_nn_int(s, -1)};
  SrVal *r = x ? sr_nn_call(s, "jax.numpy.linalg.norm", 1, &x, 1, kw, kv) : NULL;
  return sr_nn_done(s, r);
}

static SrVal *sample_jit(SrInterp *I, const char *name, SrBuiltinFn fn, const Static *st, int n, SrVal **args,
                         int inline_) {
  Static *d = sr_xcalloc(1, sizeof *d);
  *d = *st;
  if (!inline_) return sr_api_jit(I, name, fn, d, n, args);
  SrVal *b = sr_builtin_with(name, fn, d, free);
  SrArgs a = {n, args, 0, NULL, NULL, NULL};
  SrVal *r = sr_call(I, b, &a);
  sr_unref(b);
  return r;
}

static int shape_types(SrInterp *I, const char *name, SrVal *shape, int n, const SrType **ts, Static *st);

/* _double_sided_maxwell(key, loc, scale): a Maxwell draw of shape
   shape + the parameters' shape, given a Rademacher sign */
static SrVal *dsmaxwell_body(SrInterp *I, SrArgs *a) {
  const Static *st = static_args(I);
  SCOPE(I);
  const SrType *lt = sr_value_type(I, a->v[1]), *sct = lt ? sr_value_type(I, a->v[2]) : NULL;
  if (!sct) return sr_nn_done(s, NULL);
  /* params_shapes = lax.broadcast_shapes(np.shape(loc), np.shape(scale)) */
  const SrType *pts[2] = {lt, sct};
  Static ps = *st;
  if (shape_types(I, "double_sided_maxwell", NULL, 2, pts, &ps) < 0) return sr_nn_done(s, NULL);
  Static sh = *st;
  /* if not shape: shape = params_shapes; then shape + params_shapes */
  if (!st->nd) {
    memcpy(sh.shape, ps.shape, (size_t)ps.nd * sizeof *ps.shape);
    sh.nd = ps.nd;
  }
  if (sh.nd + ps.nd > SR_MAX_RANK) return sr_nn_done(s, sr_raise(I, "ValueError", "too many dimensions"));
  memcpy(sh.shape + sh.nd, ps.shape, (size_t)ps.nd * sizeof *ps.shape);
  sh.nd += ps.nd;
  SrVal *k1, *k2;
  if (split2(s, a->v[0], &k1, &k2) < 0) return sr_nn_done(s, NULL);
  SrVal *mx = KEEP(sample_jit(I, "_maxwell", maxwell_body, &sh, 1, &k1, 0));
  SrVal *v[3] = {k2, shape_val(s, &sh), KEEP(sr_dtype_val(NULL, sh.dt))};
  SrVal *sign = mx ? sr_nn_call(s, "jax.random.rademacher", 3, v, 0, NULL, NULL) : NULL;
  SrVal *r = OP(ADD, OP(MUL, OP(MUL, sign, mx), a->v[2]), a->v[1]);
  return sr_nn_done(s, r);
}

/* ---- gamma and the samplers built on it ---- */

static SrVal *dtype_val(SrNnScope *s, SrDtype dt) { return KEEP(sr_dtype_val(NULL, dt)); }

/* _gamma(key, a): random_gamma[log_space] of key and a, a converted to
   dtype and broadcast to shape */
static SrVal *gamma_body(SrInterp *I, SrArgs *a) {
  const Static *st = static_args(I);
  SCOPE(I);
  SrVal *x = convert(s, a->v[1], st->dt);
  const SrType *t = x ? sr_value_type(I, x) : NULL;
  if (!t) return sr_nn_done(s, NULL);
  int same = t->ndim == st->nd;
  for (int i = 0; same && i < st->nd; i++) same = t->dims[i].size == st->shape[i];
  if (!same) x = bcast(s, x, st);
  SrVal *in[2] = {a->v[0], x};
  return sr_nn_done(s, x ? KEEP(sr_bindv(I, SR_P_random_gamma, 2, in, "log_space", sr_bool(st->log_space), NULL))
                         : NULL);
}

/* jax.random.loggamma / gamma(key, a, shape, dtype) from a body */
static SrVal *call_gamma(SrNnScope *s, const char *fn, SrVal *key, SrVal *a, const Static *st) {
  SrVal *v[4] = {key, a, shape_val(s, st), dtype_val(s, st->dt)};
  return sr_nn_call(s, fn, 4, v, 0, NULL, NULL);
}

/* _beta(key, a, b): gamma_a / (gamma_a + gamma_b) from two log-space
   draws scaled by their maximum */
static SrVal *beta_body(SrInterp *I, SrArgs *a) {
  const Static *st = static_args(I);
  SCOPE(I);
  SrVal *x = convert(s, a->v[1], st->dt), *y = x ? convert(s, a->v[2], st->dt) : NULL;
  SrVal *ka, *kb;
  if (!y || split2(s, a->v[0], &ka, &kb) < 0) return sr_nn_done(s, NULL);
  x = bcast(s, x, st);
  y = x ? bcast(s, y, st) : NULL;
  SrVal *lga = y ? call_gamma(s, "jax.random.loggamma", ka, x, st) : NULL;
  SrVal *lgb = lga ? call_gamma(s, "jax.random.loggamma", kb, y, st) : NULL;
  SrVal *lmax = lax2(s, SR_P_max, lga, lgb);
  SrVal *ga = lmax ? sr_nn_call1(s, "jax.numpy.exp", OP(SUB, lga, lmax)) : NULL;
  SrVal *gb = ga ? sr_nn_call1(s, "jax.numpy.exp", OP(SUB, lgb, lmax)) : NULL;
  return sr_nn_done(s, gb ? OP(DIV, ga, OP(ADD, ga, gb)) : NULL);
}

/* _dirichlet(key, alpha): softmax of log-space gamma draws of shape
   shape + alpha.shape[-1:] */
static SrVal *dirichlet_body(SrInterp *I, SrArgs *a) {
  const Static *st = static_args(I);
  SCOPE(I);
  SrVal *alpha = convert(s, a->v[1], st->dt);
  const SrType *t = alpha ? sr_value_type(I, alpha) : NULL;
  if (!t) return sr_nn_done(s, NULL);
  Static full = *st;
  full.shape[full.nd++] = t->dims[t->ndim - 1].size;
  SrVal *lg = call_gamma(s, "jax.random.loggamma", a->v[0], alpha, &full);
  SrVal *v[2] = {lg, sr_nn_int(s, -1)};
  return sr_nn_done(s, lg ? sr_nn_call(s, "jax.nn.softmax", 2, v, 0, NULL, NULL) : NULL);
}

/* _chisquare(key, df): 2 exp(loggamma(key, df / 2)) */
static SrVal *chisquare_body(SrInterp *I, SrArgs *a) {
  const Static *st = static_args(I);
  SCOPE(I);
  SrVal *df = convert(s, a->v[1], st->dt);
  SrVal *two = cnst(s, st->dt, 2.0);
  SrVal *half = lax2(s, SR_P_div, df, two);
  SrVal *lg = half ? call_gamma(s, "jax.random.loggamma", a->v[0], half, st) : NULL;
  SrVal *e = lg ? sr_nn_call1(s, "jax.numpy.exp", lg) : NULL;
  return sr_nn_done(s, e ? KEEP(sr_lax_binary(I, SR_P_mul, e, two)) : NULL);
}

/* _t(key, df): normal * sqrt((df / 2) / gamma(df / 2)) */
static SrVal *t_body(SrInterp *I, SrArgs *a) {
  const Static *st = static_args(I);
  SCOPE(I);
  SrVal *df = convert(s, a->v[1], st->dt);
  SrVal *kn, *kg;
  if (!df || split2(s, a->v[0], &kn, &kg) < 0) return sr_nn_done(s, NULL);
  SrVal *n = normal(s, kn, st);
  SrVal *half = n ? lax2(s, SR_P_div, df, cnst(s, st->dt, 2.0)) : NULL;
  SrVal *g = half ? call_gamma(s, "jax.random.gamma", kg, half, st) : NULL;
  SrVal *r = g ? sr_nn_call1(s, "jax.numpy.sqrt", OP(DIV, half, g)) : NULL;
  return sr_nn_done(s, r ? OP(MUL, n, r) : NULL);
}

/* _f(key, dfnum, dfden): (chisquare(dfnum) / dfnum) / (chisquare(dfden) / dfden) */
static SrVal *f_body(SrInterp *I, SrArgs *a) {
  const Static *st = static_args(I);
  SCOPE(I);
  SrVal *dfden = convert(s, a->v[2], st->dt), *dfnum = dfden ? convert(s, a->v[1], st->dt) : NULL;
  SrVal *kd, *kn;
  if (!dfnum || split2(s, a->v[0], &kd, &kn) < 0) return sr_nn_done(s, NULL);
  SrVal *cn = call_gamma(s, "jax.random.chisquare", kn, dfnum, st);
  SrVal *cd = cn ? call_gamma(s, "jax.random.chisquare", kd, dfden, st) : NULL;
  SrVal *num = lax2(s, SR_P_div, cn, dfnum), *den = lax2(s, SR_P_div, cd, dfden);
  return sr_nn_done(s, num && den ? KEEP(sr_lax_binary(I, SR_P_div, num, den)) : NULL);
}

/* ---- the checks the public functions make ---- */

/* dtype=None: float; must be a float dtype (integer for geometric) */
static int sampler_dtype(SrInterp *I, SrVal *v, const char *name, int want_int, SrDtype *dt) {
  int d;
  if (sr_dtype_arg_fn(I, v, &d, name, "") < 0) return -1;
  int x64 = I->jax->enable_x64;
  *dt = d >= 0 ? (SrDtype)d : want_int ? (x64 ? SR_I64 : SR_I32) : (x64 ? SR_F64 : SR_F32);
  if (want_int ? !sr_dtype_is_int(*dt) : !sr_dtype_is_float(*dt)) {
    sr_raise(I, "ValueError", "dtype argument to `%s` must be %s dtype, got %s", name,
             want_int ? "an int" : strcmp(name, "lognormal") == 0 ? "a float or complex" : "a float",
             sr_dtype_name(*dt));
    return -1;
  }
  return 0;
}

/* _check_broadcast_shapes(name, shape, *params): shape None gives the
   parameters' broadcast shape; a given shape must be what broadcasting
   it with them gives. */
static int shape_types(SrInterp *I, const char *name, SrVal *shape, int n, const SrType **ts, Static *st) {
  int64_t out[SR_MAX_RANK];
  int on = 0, given = sr_nn_given(shape);
  if (given) {
    if (sr_shape_arg(I, shape, st->shape, &st->nd, "shape") < 0) return -1;
    memcpy(out, st->shape, (size_t)st->nd * sizeof *out);
    on = st->nd;
  }
  for (int k = 0; k < n; k++) {
    const SrType *t = ts[k];
    int m = on > t->ndim ? on : t->ndim;
    int64_t r[SR_MAX_RANK];
    for (int i = 0; i < m; i++) {
      int64_t x = i - (m - on) >= 0 ? out[i - (m - on)] : 1;
      int64_t y = i - (m - t->ndim) >= 0 ? t->dims[i - (m - t->ndim)].size : 1;
      if (x != y && x != 1 && y != 1) {
        /* lax.broadcast_shapes names every shape it was given */
        SrBuf b = SR_BUF_INIT;
        sr_buf_puts(&b, "Incompatible shapes for broadcasting: shapes=[");
        if (given) sr_random_shape_str(&b, st->shape, st->nd);
        for (int j = 0; j < n; j++) {
          int64_t tsh[SR_MAX_RANK];
          for (int d = 0; d < ts[j]->ndim; d++) tsh[d] = ts[j]->dims[d].size;
          if (given || j) sr_buf_puts(&b, ", ");
          sr_random_shape_str(&b, tsh, ts[j]->ndim);
        }
        sr_buf_puts(&b, "]");
        sr_raise(I, "ValueError", "%s", b.p);
        sr_buf_free(&b);
        return -1;
      }
      r[i] = x == 1 ? y : x;
    }
    memcpy(out, r, (size_t)m * sizeof *r);
    on = m;
  }
  if (!given) {
    memcpy(st->shape, out, (size_t)on * sizeof *out);
    st->nd = on;
    return 0;
  }
  int ok = on == st->nd;
  for (int i = 0; ok && i < on; i++) ok = out[i] == st->shape[i];
  if (ok) return 0;
  SrBuf b1 = SR_BUF_INIT, b2 = SR_BUF_INIT;
  sr_random_shape_str(&b1, out, on);
  sr_random_shape_str(&b2, st->shape, st->nd);
  sr_raise(I, "ValueError",
           "%s parameter shapes must be broadcast-compatible with shape argument, and the result of broadcasting the "
           "shapes must equal the shape argument, but got result %s for shape argument %s.",
           name, b1.p, b2.p);
  sr_buf_free(&b1);
  sr_buf_free(&b2);
  return -1;
}

static int param_shape(SrInterp *I, const char *name, SrVal *shape, int n, SrVal **params, Static *st) {
  const SrType *ts[3];
  for (int k = 0; k < n; k++) {
    SrVal *pa = sr_jnp_asarray(I, params[k], -1);
    ts[k] = pa ? sr_value_type(I, pa) : NULL;
    sr_unref(pa);
    if (!ts[k]) return -1;
  }
  return shape_types(I, name, shape, n, ts, st);
}

/* _check_all_safe_to_cast(name, dtype, *params): each parameter's dtype
   promotes with dtype to dtype (a Python scalar always does) */
static int safe_to_cast(SrInterp *I, const char *name, SrDtype dt, int n, SrVal **params) {
  for (int k = 0; k < n; k++) {
    SrVal *p = params[k];
    if (p->kind == SR_V_FLOAT || p->kind == SR_V_INT || p->kind == SR_V_BOOL) continue;
    SrVal *pa = sr_jnp_asarray(I, p, -1);
    const SrType *t = pa ? sr_value_type(I, pa) : NULL;
    if (!t) {
      sr_unref(pa);
      return -1;
    }
    SrDtype pd = t->dtype;
    sr_unref(pa);
    if (pd == dt) continue;
    SrVal *dv = sr_dtype_val(NULL, pd), *ov = sr_dtype_val(NULL, dt);
    SrVal *fn = sr_lookup_qualname("jax.numpy.result_type");
    SrVal *av[2] = {dv, ov};
    SrArgs a = {2, av, 0, NULL, NULL, NULL};
    SrVal *r = fn ? sr_call(I, fn, &a) : NULL;
    int same = r && r->kind == SR_V_DTYPE && r->dtype == dt;
    sr_unref(r);
    sr_unref(dv);
    sr_unref(ov);
    if (!same) {
      sr_raise(I, "TypePromotionError", "In arguments to %s, cannot safely cast argument of type %s to %s", name,
               sr_dtype_name(pd), sr_dtype_name(dt));
      return -1;
    }
  }
  return 0;
}

static int no_sharding(SrInterp *I, SrVal *osh, const char *name) {
  if (sr_nn_given(osh))
    return sr_raise(I, "NotImplementedError", "jax.random.%s with out_sharding is not supported yet", name), -1;
  return 0;
}

/* The public function: checks, then the body's jit on (key, *params). */
typedef struct Sampler {
  const char *name, *jit, *sig;
  SrBuiltinFn body;
  int nparams;  /* the parameters after key, before shape */
  int shaped;   /* shape from the parameters (None default) */
  int want_int; /* an integer dtype */
  int inline_;
  int sharded;  /* takes out_sharding= */
  int flags;    /* S_* */
} Sampler;

enum {
  S_CAST = 1,      /* _check_all_safe_to_cast */
  S_METHOD = 2,    /* method='exact' (keyword-only, before out_sharding) */
  S_LOG = 4,       /* _gamma's log_space */
  S_DIRICHLET = 8, /* shape None: alpha.shape[:-1] */
};

static const Sampler samplers[] = {
    {"cauchy", "_cauchy", "key, shape=, dtype=, *, out_sharding=", cauchy_body, 0, 0, 0, 0, 1, 0},
    {"lognormal", "_lognormal", "key, sigma=, shape=, dtype=, *, out_sharding=", lognormal_body, 1, 1, 0, 1, 1, S_CAST},
    {"pareto", "_pareto", "key, b, shape=, dtype=, *, out_sharding=", pareto_body, 1, 1, 0, 0, 1, S_CAST},
    {"rayleigh", "_rayleigh", "key, scale, shape=, dtype=, *, out_sharding=", rayleigh_body, 1, 1, 0, 0, 1, S_CAST},
    {"wald", "_wald", "key, mean, shape=, dtype=, *, out_sharding=", wald_body, 1, 1, 0, 0, 1, S_CAST},
    {"geometric", "_geometric", "key, p, shape=, dtype=, *, out_sharding=", geometric_body, 1, 1, 1, 0, 1, 0},
    {"triangular", "_triangular", "key, left, mode, right, shape=, dtype=, *, out_sharding=", triangular_body, 3, 1,
     0, 1, 1, S_CAST},
    {"weibull_min", "_weibull_min", "key, scale, concentration, shape=, dtype=", weibull_body, 2, 0, 0, 0, 0, 0},
    {"maxwell", "_maxwell", "key, shape=, dtype=, *, out_sharding=", maxwell_body, 0, 0, 0, 0, 1, 0},
    {"double_sided_maxwell", "_double_sided_maxwell", "key, loc, scale, shape=, dtype=", dsmaxwell_body, 2, 0, 0, 0,
     0, 0},
    {"gamma", "_gamma", "key, a, shape=, dtype=, *, method=, out_sharding=", gamma_body, 1, 1, 0, 0, 1, S_METHOD},
    {"loggamma", "_gamma", "key, a, shape=, dtype=, *, method=, out_sharding=", gamma_body, 1, 1, 0, 0, 1,
     S_METHOD | S_LOG},
    {"beta", "_beta", "key, a, b, shape=, dtype=, *, method=, out_sharding=", beta_body, 2, 1, 0, 0, 1,
     S_METHOD | S_CAST},
    {"dirichlet", "_dirichlet", "key, alpha, shape=, dtype=, *, out_sharding=", dirichlet_body, 1, 1, 0, 0, 1,
     S_DIRICHLET},
    {"chisquare", "_chisquare", "key, df, shape=, dtype=, *, method=, out_sharding=", chisquare_body, 1, 1, 0, 0, 1,
     S_METHOD | S_CAST},
    {"t", "_t", "key, df, shape=, dtype=, *, out_sharding=", t_body, 1, 1, 0, 0, 1, S_CAST},
    {"f", "_f", "key, dfnum, dfden, shape=, dtype=, *, out_sharding=", f_body, 2, 1, 0, 0, 1, S_CAST},
};

/* partial(sp's jit, shape=, dtype=), the function maybe_auto_axes wraps */
typedef struct Wrapped {
  Static st;
  const Sampler *sp;
} Wrapped;

static SrVal *wrapped_fn(SrInterp *I, SrArgs *a) {
  const Wrapped *w = sr_current_builtin(I)->data;
  return sample_jit(I, w->sp->jit, w->sp->body, &w->st, a->n, a->v, w->sp->inline_);
}

static SrVal *sample(SrInterp *I, SrArgs *a, const Sampler *sp) {
  SrVal *p[10] = {0};
  if (sr_args_parse(I, a, sp->name, sp->sig, p) < 0) return NULL;
  SrVal *params[3];
  SrVal *one = NULL;
  int np = sp->nparams, kw = np + 3;
  for (int i = 0; i < np; i++) params[i] = p[1 + i];
  if (np == 1 && !p[1]) params[0] = one = sr_array_scalar(sr_type_array(SR_F32, 0, NULL), 1.0, 0, 1);
  SrVal *shape = p[1 + np], *dtype = p[2 + np];
  SrVal *method = sp->flags & S_METHOD ? p[kw++] : NULL, *osh = sp->sharded ? p[kw] : NULL;
  Static st = {{0}, 0, SR_F32, !!(sp->flags & S_LOG)};
  SrVal *k = NULL, *r = NULL;
  if (sr_nn_given(method)) {
    int exact = method->kind == SR_V_STR && strcmp(method->str.s, "exact") == 0;
    int approx = method->kind == SR_V_STR && strcmp(method->str.s, "approximate") == 0;
    if (!exact) {
      SrBuf b = SR_BUF_INIT;
      sr_val_repr(&b, method);
      if (approx) sr_raise(I, "NotImplementedError", "jax.random.%s with method='approximate' is not supported yet", sp->name);
      else sr_raise(I, "ValueError", "method argument to `%s` must be one of {'exact', 'approximate'}, got %s", sp->name, b.p);
      sr_buf_free(&b);
      goto done;
    }
  }
  /* loggamma's message names gamma, as JAX's does */
  if (sampler_dtype(I, dtype, sp->flags & S_LOG ? "gamma" : sp->name, sp->want_int, &st.dt) < 0) goto done;
  if (sp->flags & S_CAST && safe_to_cast(I, sp->name, st.dt, np, params) < 0) goto done;
  if (sp->flags & S_DIRICHLET) {
    /* shape: alpha.shape[:-1], or checked against it */
    SrVal *al = sr_jnp_asarray(I, params[0], -1);
    const SrType *t = al ? sr_value_type(I, al) : NULL;
    sr_unref(al);
    if (!t) goto done;
    if (t->ndim < 1) {
      sr_raise(I, "ValueError", "dirichlet requires alpha.ndim >= 1, got alpha.ndim == %d", t->ndim);
      goto done;
    }
    int64_t hs[SR_MAX_RANK];
    for (int i = 0; i + 1 < t->ndim; i++) hs[i] = t->dims[i].size;
    const SrType *h = sr_type_array(t->dtype, t->ndim - 1, hs);
    if (shape_types(I, sp->name, shape, 1, &h, &st) < 0) goto done;
  } else if (sp->shaped ? param_shape(I, sp->name, shape, np, params, &st) < 0
                        : sr_nn_given(shape) && sr_shape_arg(I, shape, st.shape, &st.nd, "shape") < 0) {
    goto done;
  }
  if (!(k = sr_random_check_key(I, p[0], sp->name))) goto done;
  SrVal *args[4] = {k};
  for (int i = 0; i < np; i++) args[1 + i] = params[i];
  if (sr_nn_given(osh)) {
    Wrapped *w = sr_xmalloc(sizeof *w);
    w->st = st;
    w->sp = sp;
    r = sr_random_maybe_auto_axes(I, sr_builtin_with(sp->jit, wrapped_fn, w, free), osh, sp->name, 1 + np, args);
  } else {
    r = sample_jit(I, sp->jit, sp->body, &st, 1 + np, args, sp->inline_);
  }
done:
  sr_unref(k);
  sr_unref(one);
  return r;
}

/* ---- generalized_normal, ball, multivariate_normal ---- */

/* _generalized_normal(key, p): rademacher * gamma(1 / p) ** (1 / p) */
static SrVal *gennorm_body(SrInterp *I, SrArgs *a) {
  const Static *st = static_args(I);
  SCOPE(I);
  SrVal *k1, *k2;
  if (split2(s, a->v[0], &k1, &k2) < 0) return sr_nn_done(s, NULL);
  SrVal *inv = OP(DIV, sr_nn_int(s, 1), a->v[1]);
  SrVal *g = inv ? call_gamma(s, "jax.random.gamma", k1, inv, st) : NULL;
  SrVal *v[3] = {k2, shape_val(s, st), dtype_val(s, st->dt)};
  SrVal *r = g ? sr_nn_call(s, "jax.random.rademacher", 3, v, 0, NULL, NULL) : NULL;
  SrVal *x = r ? OP(MUL, r, OP(POW, g, OP(DIV, sr_nn_int(s, 1), a->v[1]))) : NULL;
  return sr_nn_done(s, x);
}

/* _ball(key, p): g / ((|g| ** p).sum(-1) + e) ** (1 / p), g generalized
   normal of shape (*shape, d) (d the static's last dim), e exponential */
static SrVal *ball_body(SrInterp *I, SrArgs *a) {
  const Static *st = static_args(I);
  SCOPE(I);
  Static head = *st;
  head.nd--;
  SrVal *k1, *k2;
  if (split2(s, a->v[0], &k1, &k2) < 0) return sr_nn_done(s, NULL);
  SrVal *gv[4] = {k1, a->v[1], shape_val(s, st), dtype_val(s, st->dt)};
  SrVal *g = sr_nn_call(s, "jax.random.generalized_normal", 4, gv, 0, NULL, NULL);
  SrVal *ev[3] = {k2, shape_val(s, &head), dtype_val(s, st->dt)};
  SrVal *e = g ? sr_nn_call(s, "jax.random.exponential", 3, ev, 0, NULL, NULL) : NULL;
  SrVal *ab = e ? sr_nn_call1(s, "jax.numpy.abs", g) : NULL;
  SrVal *pw = OP(POW, ab, a->v[1]);
  const char *kw[] = {"axis"};
  SrVal *kv[] = {sr_nn_int(s, -1)};
  SrVal *sum = pw ? sr_nn_call(s, "jax.numpy.sum", 1, &pw, 1, kw, kv) : NULL;
  SrVal *den = OP(POW, OP(ADD, sum, e), OP(DIV, sr_nn_int(s, 1), a->v[1]));
  int64_t last = head.nd;
  SrVal *de = den ? KEEP(sr_lax_expand_dims(I, den, &last, 1)) : NULL;
  return sr_nn_done(s, de ? OP(DIV, g, de) : NULL);
}

typedef struct MvnStatic {
  Static st; /* first: read as a Static too */
  int method; /* 0 svd, 1 eigh, 2 cholesky */
} MvnStatic;

/* _multivariate_normal(key, mean, cov): mean + factor @ normal, factor
   from svd, eigh or cholesky of cov */
static SrVal *mvn_body(SrInterp *I, SrArgs *a) {
  const MvnStatic *ms = sr_current_builtin(I)->data;
  const Static *st = &ms->st;
  SCOPE(I);
  SrVal *mean = a->v[1], *cov = a->v[2], *factor = NULL;
  if (ms->method == 2) {
    factor = sr_nn_call1(s, "jax.numpy.linalg.cholesky", cov);
  } else {
    SrVal *dec = sr_nn_call1(s, ms->method == 0 ? "jax.numpy.linalg.svd" : "jax.numpy.linalg.eigh", cov);
    SrVal *t = dec ? sr_nn_call1(s, "builtins.tuple", dec) : NULL;
    if (!t) return sr_nn_done(s, NULL);
    SrVal *vecs = ms->method == 0 ? t->seq.items[0] : t->seq.items[1];
    SrVal *vals = ms->method == 0 ? t->seq.items[1] : t->seq.items[0];
    const SrType *vt = sr_value_type(I, vals);
    int64_t ax = vt ? vt->ndim - 1 : 0;
    SrVal *sq = vt ? sr_nn_call1(s, "jax.numpy.sqrt", vals) : NULL;
    SrVal *sx = sq ? KEEP(sr_lax_expand_dims(I, sq, &ax, 1)) : NULL;
    factor = OP(MUL, vecs, sx);
  }
  const SrType *mt = factor ? sr_value_type(I, mean) : NULL;
  if (!mt) return sr_nn_done(s, NULL);
  Static full = *st;
  full.shape[full.nd++] = mt->dims[mt->ndim - 1].size;
  SrVal *n = normal(s, a->v[0], &full);
  SrVal *ein = n ? sr_nn_call3(s, "jax.numpy.einsum", KEEP(sr_str(NULL, "...ij,...j->...i", 16)), factor, n) : NULL;
  return sr_nn_done(s, ein ? OP(ADD, mean, ein) : NULL);
}

static SrVal *float_sampler_prologue(SrInterp *I, SrVal *key, SrVal *dtype, SrVal *shape, SrVal *osh, const char *name,
                                     Static *st) {
  if (sr_nn_given(shape) && sr_shape_arg(I, shape, st->shape, &st->nd, "shape") < 0) return NULL;
  int d;
  if (sr_dtype_arg_fn(I, dtype, &d, name, "") < 0) return NULL;
  st->dt = d >= 0 ? (SrDtype)d : I->jax->enable_x64 ? SR_F64 : SR_F32;
  if (no_sharding(I, osh, name) < 0) return NULL;
  return sr_random_check_key(I, key, name);
}

/* generalized_normal(key, p, shape=(), dtype=None, *, out_sharding=None) */
static SrVal *bi_generalized_normal(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "generalized_normal", "key, p, shape=, dtype=, *, out_sharding=", p) < 0) return NULL;
  Static st = {{0}, 0, SR_F32, 0};
  SrVal *k = float_sampler_prologue(I, p[0], p[3], p[2], p[4], "generalized_normal", &st);
  if (!k) return NULL;
  SrVal *args[2] = {k, p[1]};
  SrVal *r = sample_jit(I, "_generalized_normal", gennorm_body, &st, 2, args, 0);
  sr_unref(k);
  return r;
}

/* ball(key, d, p=2, shape=(), dtype=None, *, out_sharding=None) */
static SrVal *bi_ball(SrInterp *I, SrArgs *a) {
  SrVal *p[6];
  if (sr_args_parse(I, a, "ball", "key, d, p=, shape=, dtype=, *, out_sharding=", p) < 0) return NULL;
  Static st = {{0}, 0, SR_F32, 0};
  SrVal *k = float_sampler_prologue(I, p[0], p[4], p[3], p[5], "ball", &st);
  if (!k) return NULL;
  if (p[1]->kind != SR_V_INT || st.nd >= SR_MAX_RANK) {
    sr_unref(k);
    return sr_raise(I, "TypeError", "ball: d must be a concrete int (the error occurred in jax.random.ball())");
  }
  st.shape[st.nd++] = p[1]->i;
  SrVal *two = sr_int(NULL, 2);
  SrVal *args[2] = {k, p[2] ? p[2] : two};
  SrVal *r = sample_jit(I, "_ball", ball_body, &st, 2, args, 0);
  sr_unref(two);
  sr_unref(k);
  return r;
}

/* multivariate_normal(key, mean, cov, shape=None, dtype=None,
   method='cholesky', *, out_sharding=None) */
static SrVal *bi_multivariate_normal(SrInterp *I, SrArgs *a) {
  SrVal *p[7];
  const char *name = "multivariate_normal";
  if (sr_args_parse(I, a, name, "key, mean, cov, shape=, dtype=, method=, *, out_sharding=", p) < 0) return NULL;
  SCOPE(I);
  /* promote_dtypes_inexact(mean, cov): one inexact dtype, shapes kept */
  SrVal *mc[2] = {KEEP(sr_jnp_asarray(I, p[1], -1)), NULL};
  mc[1] = mc[0] ? KEEP(sr_jnp_asarray(I, p[2], -1)) : NULL;
  SrVal *rt = mc[1] ? sr_nn_call2(s, "jax.numpy.result_type", mc[0], mc[1]) : NULL;
  if (!rt || rt->kind != SR_V_DTYPE) return sr_nn_done(s, NULL);
  SrDtype pdt = sr_dtype_is_float(rt->dtype) ? rt->dtype : I->jax->enable_x64 ? SR_F64 : SR_F32;
  for (int i = 0; i < 2; i++)
    if (sr_value_type(I, mc[i])->dtype != pdt && !(mc[i] = KEEP(sr_lax_convert(I, mc[i], pdt, 0, NULL))))
      return sr_nn_done(s, NULL);
  int method = 2;
  if (sr_nn_given(p[5])) {
    SrVal *m = p[5];
    method = m->kind != SR_V_STR ? -1
             : strcmp(m->str.s, "svd") == 0 ? 0
             : strcmp(m->str.s, "eigh") == 0 ? 1
             : strcmp(m->str.s, "cholesky") == 0 ? 2 : -1;
    if (method < 0) return sr_nn_done(s, sr_raise(I, "ValueError", "method must be one of {'svd', 'eigh', 'cholesky'}"));
  }
  const SrType *mt = sr_value_type(I, mc[0]), *ct = sr_value_type(I, mc[1]);
  MvnStatic *ms = sr_xcalloc(1, sizeof *ms);
  ms->method = method;
  Static *st = &ms->st;
  int d;
  SrVal *r = NULL, *k = NULL;
  if (sr_dtype_arg_fn(I, p[4], &d, name, "") < 0) goto out;
  st->dt = d >= 0 ? (SrDtype)d : mt->dtype;
  if (!sr_dtype_is_float(st->dt)) {
    sr_raise(I, "ValueError", "dtype argument to `multivariate_normal` must be a float dtype, got %s", sr_dtype_name(st->dt));
    goto out;
  }
  if (mt->ndim < 1) {
    sr_raise(I, "ValueError", "multivariate_normal requires mean.ndim >= 1, got mean.ndim == %d", mt->ndim);
    goto out;
  }
  if (ct->ndim < 2) {
    sr_raise(I, "ValueError", "multivariate_normal requires cov.ndim >= 2, got cov.ndim == %d", ct->ndim);
    goto out;
  }
  int64_t n = mt->dims[mt->ndim - 1].size;
  if (ct->dims[ct->ndim - 2].size != n || ct->dims[ct->ndim - 1].size != n) {
    SrBuf b = SR_BUF_INIT;
    int64_t cs[SR_MAX_RANK];
    for (int i = 0; i < ct->ndim; i++) cs[i] = ct->dims[i].size;
    sr_random_shape_str(&b, cs, ct->ndim);
    sr_raise(I, "ValueError", "multivariate_normal requires cov.shape == (..., n, n) for n=%lld, but got cov.shape == %s.",
             (long long)n, b.p);
    sr_buf_free(&b);
    goto out;
  }
  /* shape: the broadcast of mean.shape[:-1] and cov.shape[:-2], or checked
     against them (as "normal", JAX's name there) */
  int64_t hs[2][SR_MAX_RANK];
  for (int i = 0; i + 1 < mt->ndim; i++) hs[0][i] = mt->dims[i].size;
  for (int i = 0; i + 2 < ct->ndim; i++) hs[1][i] = ct->dims[i].size;
  const SrType *heads[2] = {sr_type_array(mt->dtype, mt->ndim - 1, hs[0]), sr_type_array(ct->dtype, ct->ndim - 2, hs[1])};
  if (shape_types(I, "normal", p[3], 2, heads, st) < 0 || no_sharding(I, p[6], name) < 0) goto out;
  if (st->nd >= SR_MAX_RANK) {
    sr_raise(I, "ValueError", "multivariate_normal: too many dimensions");
    goto out;
  }
  if (!(k = sr_random_check_key(I, p[0], name))) goto out;
  SrVal *args[3] = {k, mc[0], mc[1]};
  r = sr_api_jit(I, "_multivariate_normal", mvn_body, ms, 3, args);
  ms = NULL;
out:
  free(ms);
  sr_unref(k);
  sr_nn_done(s, NULL);
  return r;
}

int sr_random_param_shape(SrInterp *I, const char *name, SrVal *shape, int n, SrVal **params, int64_t *out,
                          int *nd) {
  Static st = {{0}, 0, SR_F32, 0};
  if (param_shape(I, name, shape, n, params, &st) < 0) return -1;
  memcpy(out, st.shape, (size_t)st.nd * sizeof *out);
  *nd = st.nd;
  return 0;
}

int sr_random_broadcast_shapes(SrInterp *I, const int64_t *shape, int nd, const SrType *t, int64_t *out, int *on) {
  Static st = {{0}, 0, SR_F32, 0};
  const SrType *ts[2] = {t, sr_type_array(t->dtype, nd, shape)};
  if (shape_types(I, "broadcast_shapes", NULL, 2, ts, &st) < 0) return -1;
  memcpy(out, st.shape, (size_t)st.nd * sizeof *out);
  *on = st.nd;
  return 0;
}

#define SAMPLER(i, fn) \
  static SrVal *fn(SrInterp *I, SrArgs *a) { return sample(I, a, &samplers[i]); }
SAMPLER(0, bi_cauchy)
SAMPLER(1, bi_lognormal)
SAMPLER(2, bi_pareto)
SAMPLER(3, bi_rayleigh)
SAMPLER(4, bi_wald)
SAMPLER(5, bi_geometric)
SAMPLER(6, bi_triangular)
SAMPLER(7, bi_weibull_min)
SAMPLER(8, bi_maxwell)
SAMPLER(9, bi_double_sided_maxwell)
SAMPLER(10, bi_gamma)
SAMPLER(11, bi_loggamma)
SAMPLER(12, bi_beta)
SAMPLER(13, bi_dirichlet)
SAMPLER(14, bi_chisquare)
SAMPLER(15, bi_t)
SAMPLER(16, bi_f)

void sr_random_dists_init(void) {
  sr_def("jax.random.cauchy", bi_cauchy, "cauchy(key, shape=(), dtype=None): standard Cauchy samples");
  sr_def("jax.random.lognormal", bi_lognormal,
         "lognormal(key, sigma=np.float32(1), shape=None, dtype=None): exp(sigma * normal) samples");
  sr_def("jax.random.pareto", bi_pareto, "pareto(key, b, shape=None, dtype=None): Pareto(b) samples, exp(exponential / b)");
  sr_def("jax.random.rayleigh", bi_rayleigh, "rayleigh(key, scale, shape=None, dtype=None): Rayleigh(scale) samples");
  sr_def("jax.random.wald", bi_wald, "wald(key, mean, shape=None, dtype=None): Wald (inverse Gaussian) samples");
  sr_def("jax.random.geometric", bi_geometric,
         "geometric(key, p, shape=None, dtype=int): the number of Bernoulli(p) trials up to the first success");
  sr_def("jax.random.triangular", bi_triangular,
         "triangular(key, left, mode, right, shape=None, dtype=None): triangular-distribution samples");
  sr_def("jax.random.weibull_min", bi_weibull_min,
         "weibull_min(key, scale, concentration, shape=(), dtype=None): Weibull samples");
  sr_def("jax.random.maxwell", bi_maxwell, "maxwell(key, shape=(), dtype=None): one-sided Maxwell samples");
  sr_def("jax.random.double_sided_maxwell", bi_double_sided_maxwell,
         "double_sided_maxwell(key, loc, scale, shape=(), dtype=None): double-sided Maxwell samples");
  sr_def("jax.random.gamma", bi_gamma,
         "gamma(key, a, shape=None, dtype=None): Gamma(a) samples (random_gamma: Marsaglia-Tsang, as JAX)");
  sr_def("jax.random.loggamma", bi_loggamma, "loggamma(key, a, shape=None, dtype=None): log of Gamma(a) samples");
  sr_def("jax.random.beta", bi_beta, "beta(key, a, b, shape=None, dtype=None): Beta(a, b) samples");
  sr_def("jax.random.dirichlet", bi_dirichlet,
         "dirichlet(key, alpha, shape=None, dtype=None): Dirichlet(alpha) samples along the last axis");
  sr_def("jax.random.chisquare", bi_chisquare, "chisquare(key, df, shape=None, dtype=None): chi-square(df) samples");
  sr_def("jax.random.t", bi_t, "t(key, df, shape=None, dtype=None): Student's t(df) samples");
  sr_def("jax.random.generalized_normal", bi_generalized_normal,
         "generalized_normal(key, p, shape=(), dtype=None): exponential-power samples, density ~ exp(-|x|^p)");
  sr_def("jax.random.ball", bi_ball, "ball(key, d, p=2, shape=(), dtype=None): uniform samples of the unit Lp ball in d dims");
  sr_def("jax.random.multivariate_normal", bi_multivariate_normal,
         "multivariate_normal(key, mean, cov, shape=None, dtype=None, method='cholesky'): N(mean, cov) samples");
  sr_def("jax.random.f", bi_f, "f(key, dfnum, dfden, shape=None, dtype=None): F(dfnum, dfden) samples");
}
