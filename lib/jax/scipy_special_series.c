/* scipy_special_series.c: the functions of jax.scipy.special that are
 * series, continued fractions, rational approximations and loops
 * (jax/_src/scipy/special.py, third_party/scipy/special.py's fresnel):
 * bernoulli, bessel_jn, dawsn, exp1, expi, expn, fresnel, hyp1f1,
 * hyp2f1, owens_t, sici, spence and zeta.  Each is written as JAX writes
 * it, on the registered jax.numpy and jax.lax functions, with JAX's
 * wrappers: @jit is a jit equation named for the function (sr_api_jit),
 * jnp.vectorize is jax.numpy.vectorize, @custom_jvp a jax.custom_jvp
 * object with JAX's rule, and the loops are lax.while_loop, fori_loop and
 * scan over builtins, so that they trace, jit, vmap and differentiate as
 * JAX's do.  expn's n, a nondiff argument of JAX's custom_jvp, is an
 * argument of the custom_jvp here under lax.stop_gradient (shardrepl's
 * custom_jvp has no nondiff_argnums): the same values and derivatives.
 * sph_harm_y and wofz, whose results are complex, raise
 * NotImplementedError.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jax/jax.h"
#include "jax/math_api.h"
#include "jax/nn.h"
#include "py/ast.h"
#include "py/objects.h"
#include "core/jaxstate.h"
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
/* a helper's result, made in a scope of its own, kept in the caller's */
#define OUT(v) sr_nn_keep(outer, sr_nn_done(s, v))
#define NC(a) (int)(sizeof a / sizeof *a)

static const SrType *ty(SrInterp *I, SrVal *x) { return x ? sr_value_type(I, x) : NULL; }

/* lax._const(x, v) */
static SrVal *cst(SrNnScope *s, SrVal *x, double v) {
  const SrType *t = ty(s->I, x);
  return t ? sr_nn_typed_scalar(s, v, t->dtype) : NULL;
}

static SrVal *neg(SrNnScope *s, SrVal *x) { return x ? KEEP(sr_unop(s->I, SR_OP_NEG, x)) : NULL; }
static SrVal *where3(SrNnScope *s, SrVal *c, SrVal *x, SrVal *y) { return C3("jax.numpy.where", c, x, y); }
static SrVal *select3(SrNnScope *s, SrVal *c, SrVal *x, SrVal *y) { return C3("jax.lax.select", c, x, y); }

static SrVal *tuple_of(SrNnScope *s, int n, SrVal **v) {
  if (n > 16) return sr_raise(s->I, "RuntimeError", "tuple_of: too many items");
  for (int i = 0; i < n; i++)
    if (!v[i]) return NULL;
  SrVal *items[16];
  for (int i = 0; i < n; i++) items[i] = sr_ref(v[i]);
  return KEEP(sr_tuple(NULL, n, items));
}

static SrVal *tuple2(SrNnScope *s, SrVal *a, SrVal *b) {
  SrVal *v[2] = {a, b};
  return tuple_of(s, 2, v);
}

static SrVal *dtype_val(SrNnScope *s, SrDtype dt) { return KEEP(sr_dtype_val(NULL, dt)); }

static SrVal *astype(SrNnScope *s, SrVal *x, SrDtype dt) { return C2("jax.numpy.astype", x, dtype_val(s, dt)); }

/* finfo(dt).eps */
static double eps_of(SrDtype dt) {
  switch (dt) {
  case SR_F16: return 0x1p-10;
  case SR_BF16: return 0x1p-7;
  case SR_F32: return FLT_EPSILON;
  default: return DBL_EPSILON;
  }
}

static SrDtype dtype_of(SrInterp *I, SrVal *x) { return ty(I, x)->dtype; }

static int complex_error(SrNnScope *s, SrVal *x, const char *fmt) {
  const SrType *t = ty(s->I, x);
  if (t && sr_dtype_kind(t->dtype) == SR_DK_COMPLEX) {
    sr_raise(s->I, "ValueError", fmt, sr_dtype_name(t->dtype));
    return -1;
  }
  return 0;
}

/* np.array(c, dtype=dt) as a jax array */
static SrVal *coef_array(SrNnScope *s, const double *c, int n, SrDtype dt) {
  SrVal *items[64];
  for (int i = 0; i < n; i++) items[i] = sr_float(NULL, c[i]);
  SrVal *t = KEEP(sr_tuple(NULL, n, items));
  return KEEP(sr_jnp_asarray(s->I, t, (int)dt));
}

/* jnp.polyval(np.array(c, dtype=dt), x) */
static SrVal *polyval(SrNnScope *s, const double *c, int n, SrDtype dt, SrVal *x) {
  SrVal *p = x ? coef_array(s, c, n, dt) : NULL;
  return p ? KEEP(sr_jnp_polyval(s->I, p, x, 16)) : NULL;
}

#define PV(c, dt, x) polyval(s, c, NC(c), dt, x)

/* A builtin of the scope, its data freed with free_data. */
static SrVal *fun(SrNnScope *s, const char *name, SrBuiltinFn f, void *data, void (*free_data)(void *)) {
  return KEEP(sr_builtin_with(name, f, data, free_data));
}

/* jnp.piecewise(x, condlist, funclist, **{kw: kwv}) (kw NULL: none) */
static SrVal *piecewise(SrNnScope *s, SrVal *x, int nc, SrVal **conds, int nf, SrVal **funcs, const char *kw,
                        SrVal *kwv) {
  SrVal *cl = tuple_of(s, nc, conds);
  SrVal *fl = cl ? tuple_of(s, nf, funcs) : NULL;
  if (!fl) return NULL;
  SrVal *lst[2] = {KEEP(sr_call1(s->I, sr_lookup_qualname("builtins.list"), cl)),
                   KEEP(sr_call1(s->I, sr_lookup_qualname("builtins.list"), fl))};
  SrVal *v[3] = {x, lst[0], lst[1]};
  return sr_nn_call(s, "jax.numpy.piecewise", 3, v, kw ? 1 : 0, &kw, &kwv);
}

/* A jax.custom_jvp of f (a builtin named name) with n rules given to
   defjvps (defjvps) or one given to defjvp; made once and kept in *slot. */
static SrVal *custom_jvp_of(SrInterp *I, SrVal **slot, const char *name, SrBuiltinFn f, int defjvps, int n,
                            const char *const *rule_names, const SrBuiltinFn *rules) {
  if (*slot) return *slot;
  SrVal *cjf = sr_lookup_qualname("jax.custom_jvp");
  if (!cjf) return sr_raise(I, "NotImplementedError", "jax.custom_jvp is not available");
  SrVal *fv = sr_builtin_with(name, f, NULL, NULL);
  SrVal *cj = sr_call1(I, cjf, fv);
  sr_unref(fv);
  SrVal *d = cj ? sr_getattr(I, cj, defjvps ? "defjvps" : "defjvp") : NULL;
  SrVal *rv[4] = {0};
  for (int i = 0; i < n; i++) rv[i] = sr_builtin_with(rule_names[i], rules[i], NULL, NULL);
  SrArgs ca = {n, rv, 0, NULL, NULL, NULL};
  SrVal *r = d ? sr_call(I, d, &ca) : NULL;
  for (int i = 0; i < n; i++) sr_unref(rv[i]);
  sr_unref(d);
  if (!r) {
    sr_unref(cj);
    return NULL;
  }
  sr_unref(r);
  return *slot = cj;
}

static SrVal *call_n(SrNnScope *s, SrVal *f, int n, SrVal **v) {
  if (!f) return NULL;
  for (int i = 0; i < n; i++)
    if (!v[i]) return NULL;
  SrArgs ca = {n, v, 0, NULL, NULL, NULL};
  return KEEP(sr_call(s->I, f, &ca));
}

/* The (primals, tangents) of a defjvp rule, each a tuple of n. */
static int jvp_args(SrInterp *I, SrArgs *a, int n, SrVal ***p, SrVal ***t, const char *name) {
  if (a->n != 2 || !sr_is_seq(a->v[0]) || !sr_is_seq(a->v[1]) || a->v[0]->seq.n != n || a->v[1]->seq.n != n) {
    sr_raise(I, "TypeError", "%s(primals, tangents) takes %d primal%s", name, n, n == 1 ? "" : "s");
    return -1;
  }
  *p = a->v[0]->seq.items;
  *t = a->v[1]->seq.items;
  return 0;
}

/* The items of a loop's carry tuple of n. */
static SrVal **carry(SrInterp *I, SrVal *c, int n, const char *name) {
  if (!sr_is_seq(c) || c->seq.n != n) return sr_raise(I, "TypeError", "%s: a carry of %d", name, n), NULL;
  return c->seq.items;
}

/* A loop's functions' data: the values they close over. */
typedef struct Closure {
  int n;
  SrVal *v[8];
} Closure;

static void closure_free(void *d) {
  Closure *c = d;
  for (int i = 0; i < c->n; i++) sr_unref(c->v[i]);
  free(c);
}

static SrVal *closure_fun(SrNnScope *s, const char *name, SrBuiltinFn f, int n, SrVal **v) {
  for (int i = 0; i < n; i++)
    if (!v[i]) return NULL;
  Closure *c = sr_xcalloc(1, sizeof *c);
  c->n = n;
  for (int i = 0; i < n; i++) c->v[i] = sr_ref(v[i]);
  return fun(s, name, f, c, closure_free);
}

static SrVal **closed(SrInterp *I) { return ((Closure *)sr_current_builtin(I)->data)->v; }

/* lax.while_loop(cond, body, init), each function closing over v */
static SrVal *while_loop(SrNnScope *s, SrBuiltinFn cf, SrBuiltinFn bf, int n, SrVal **v, SrVal *init) {
  SrVal *c = init ? closure_fun(s, "cond", cf, n, v) : NULL;
  SrVal *b = c ? closure_fun(s, "body", bf, n, v) : NULL;
  return b ? C3("jax.lax.while_loop", c, b, init) : NULL;
}

/* lax.fori_loop(lo, hi, body, init), body closing over v */
static SrVal *fori_loop(SrNnScope *s, SrVal *lo, SrVal *hi, SrBuiltinFn bf, int n, SrVal **v, SrVal *init) {
  SrVal *b = init && lo && hi ? closure_fun(s, "body", bf, n, v) : NULL;
  SrVal *args[4] = {lo, hi, b, init};
  return b ? sr_nn_call(s, "jax.lax.fori_loop", 4, args, 0, NULL, NULL) : NULL;
}

/* ==== dawsn: Cody, Paciorek and Thacher's rational approximations ==== */

static const double dawsn_ad[] = {2.403720730667626e-11, 1.488646813684934e-09, 5.212652810105416e-08, 1.2725847827318697e-06, 2.324902498207895e-05, 0.00032552474182605793, 0.003488058146571626, 0.027944853119882897, 0.15887424196012057, 0.5749186294893204, 1.0};
static const double dawsn_bn[] = {0.5089551564179009, -0.24475441814269785, 0.09415123353035344, -0.021871125514203903, 0.003662076123295692, -0.0004232091144603888, 3.5964130479389666e-05, -2.1464035171996896e-06, 9.100107800763914e-08, -2.4027452082825098e-09, 3.592333854409284e-11};
static const double dawsn_bd[] = {1.0, -0.6318398698733682, 0.2367067882282487, -0.053180636700322324, 0.008480417185862954, -0.0009479967684866654, 7.810255929445524e-05, -4.558751532524426e-06, 1.8910035811142186e-07, -4.913246913319206e-09, 7.184664032357345e-11};
static const double dawsn_cn[] = {-0.5905928605347732, 0.6292352427243688, -0.17285897538038814, 0.016483704782518965, -0.0004868276130204627};
static const double dawsn_cd[] = {1.0, -2.698200571975449, 1.7327079904594784, -0.3937085822819395, 0.03442789240412334, -0.0009736552260409412};
static const double dawsn_an[] = {1.1368149897175597e-11, 8.492622676674738e-10, 1.9443420417555306e-08, 9.531517412544844e-07, 3.078283098749132e-06, 0.00035251336852028877, -0.0008501498467244109, 0.04226182230055466, -0.09174803717734524, 1.0};

/* (0.5 / safe_ax) * (1 + safe_t * polyval(N, safe_t) / polyval(D, safe_t)),
   safe_v = select(in, v, full_like(v, 1.)) */
static SrVal *dawsn_tail(SrNnScope *outer, SrVal *x, SrVal *in, SrVal *ax, SrVal *t, const double *N, int nn,
                         const double *D, int nd) {
  SCOPE(outer->I);
  SrDtype dt = dtype_of(s->I, x);
  SrVal *st = select3(s, in, t, sr_nn_full_like(s, t, FL(1.0)));
  SrVal *sa = st ? select3(s, in, ax, sr_nn_full_like(s, ax, FL(1.0))) : NULL;
  SrVal *h = sa ? OP(DIV, cst(s, x, 0.5), sa) : NULL;
  SrVal *q = h ? OP(DIV, OP(MUL, st, polyval(s, N, nn, dt, st)), polyval(s, D, nd, dt, st)) : NULL;
  return OUT(OP(MUL, h, OP(ADD, cst(s, x, 1.0), q)));
}

static SrVal *dawsn_impl(SrNnScope *outer, SrVal *x) {
  SCOPE(outer->I);
  SrDtype dt = dtype_of(s->I, x);
  SrVal *sign = C1("jax.numpy.sign", x);
  SrVal *ax = sign ? C1("jax.lax.abs", x) : NULL;
  SrVal *ax2 = ax ? C1("jax.lax.square", ax) : NULL;
  SrVal *t = ax2 ? OP(DIV, cst(s, x, 1.0), ax2) : NULL;
  SrVal *in1 = t ? OP(LT, ax, cst(s, x, 3.25)) : NULL;
  SrVal *sa1 = in1 ? select3(s, in1, ax, sr_nn_full_like(s, ax, FL(1.0))) : NULL;
  SrVal *sa21 = sa1 ? C1("jax.lax.square", sa1) : NULL;
  SrVal *v1 = sa21 ? OP(DIV, OP(MUL, sa1, PV(dawsn_an, dt, sa21)), PV(dawsn_ad, dt, sa21)) : NULL;
  SrVal *in2 = v1 ? OP(BITAND, OP(GE, ax, cst(s, x, 3.25)), OP(LT, ax, cst(s, x, 6.25))) : NULL;
  SrVal *v2 = in2 ? dawsn_tail(s, x, in2, ax, t, dawsn_bn, NC(dawsn_bn), dawsn_bd, NC(dawsn_bd)) : NULL;
  SrVal *in3 = v2 ? OP(GE, ax, cst(s, x, 6.25)) : NULL;
  SrVal *v3 = in3 ? dawsn_tail(s, x, in3, ax, t, dawsn_cn, NC(dawsn_cn), dawsn_cd, NC(dawsn_cd)) : NULL;
  SrVal *lo = v3 ? OP(LT, ax, cst(s, x, 3.25)) : NULL;
  SrVal *mid = lo ? OP(LT, ax, cst(s, x, 6.25)) : NULL;
  SrVal *r = mid ? select3(s, lo, v1, select3(s, mid, v2, v3)) : NULL;
  return OUT(OP(MUL, sign, r));
}

static SrVal *dawsn_fun(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "_dawsn() takes 1 positional argument");
  SCOPE(I);
  SrVal *x = a->v[0];
  SrDtype dt = dtype_of(I, x);
  if (dt == SR_F32 || dt == SR_F64) return DONE(dawsn_impl(s, x));
  return DONE(astype(s, dawsn_impl(s, astype(s, x, SR_F32)), dt));
}

/* lambda g, ans, x: g * (_lax_const(x, 1.) - _lax_const(x, 2.) * x * ans) */
static SrVal *dawsn_jvp(SrInterp *I, SrArgs *a) {
  if (a->n != 3) return sr_raise(I, "TypeError", "<lambda>() takes 3 positional arguments");
  SCOPE(I);
  SrVal *g = a->v[0], *ans = a->v[1], *x = a->v[2];
  return DONE(OP(MUL, g, OP(SUB, cst(s, x, 1.0), OP(MUL, OP(MUL, cst(s, x, 2.0), x), ans))));
}

static SrVal *dawsn_cj;

static SrVal *sp_dawsn(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "dawsn", "x", p) < 0) return NULL;
  SCOPE(I);
  if (sr_nn_promote_inexact(s, 1, p, "dawsn") < 0) return DONE(NULL);
  if (sr_dtype_kind(dtype_of(I, p[0])) == SR_DK_COMPLEX)
    return DONE(sr_raise(I, "ValueError", "dawsn does not support complex-valued inputs."));
  static const char *const names[] = {"<lambda>"};
  static const SrBuiltinFn rules[] = {dawsn_jvp};
  SrVal *cj = custom_jvp_of(I, &dawsn_cj, "_dawsn", dawsn_fun, 1, 1, names, rules);
  return DONE(cj ? KEEP(sr_call1(I, cj, p[0])) : NULL);
}

/* ==== spence ==== */

static const double spence_poly_a[] = {4.6512858607399003e-05, 0.007315890452380947, 0.13384763957830903, 0.8796913117545303, 2.7114985119655346, 4.256971560081218, 3.297713409852251, 1.0};
static const double spence_poly_b[] = {0.0006909904889125533, 0.02540437639325444, 0.2829748606025681, 1.4117259775183106, 3.6380053334513707, 5.03278880143317, 3.547713409852251, 1.0};

static SrVal *spence_poly(SrNnScope *s, SrVal *w) {
  SrDtype dt = dtype_of(s->I, w);
  SrVal *pa = PV(spence_poly_a, dt, w);
  SrVal *pb = pa ? PV(spence_poly_b, dt, w) : NULL;
  return pb ? OP(DIV, OP(MUL, neg(s, w), pa), pb) : NULL;
}

/* the lambdas of _spence_calc's piecewise */
static SrVal *lam_recip(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  return DONE(OP(DIV, FL(1.0), a->v[0]));
}
static SrVal *lam_same(SrInterp *I, SrArgs *a) { return sr_ref(a->v[0]); }
static SrVal *lam_recip_m1(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  return DONE(OP(SUB, OP(DIV, FL(1.0), a->v[0]), FL(1.0)));
}
static SrVal *lam_neg(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  return DONE(neg(s, a->v[0]));
}
static SrVal *lam_m1(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  return DONE(OP(SUB, a->v[0], FL(1.0)));
}

static SrVal *spence_calc(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *x = a->v[0];
  SrVal *x2 = OP(GT, x, FL(2.0));
  SrVal *f1[2] = {fun(s, "<lambda>", lam_recip, NULL, NULL), fun(s, "<lambda>", lam_same, NULL, NULL)};
  x = x2 ? piecewise(s, x, 1, &x2, 2, f1, NULL, NULL) : NULL;
  SrVal *x15 = OP(GT, x, FL(1.5));
  SrVal *x05 = OP(LT, x, FL(0.5));
  x2 = OP(BITOR, x2, x15);
  SrVal *c2[2] = {x15, x05};
  SrVal *f2[3] = {fun(s, "<lambda>", lam_recip_m1, NULL, NULL), fun(s, "<lambda>", lam_neg, NULL, NULL),
                  fun(s, "<lambda>", lam_m1, NULL, NULL)};
  SrVal *w = x2 ? piecewise(s, x, 2, c2, 3, f2, NULL, NULL) : NULL;
  SrVal *y = w ? spence_poly(s, w) : NULL;
  SrVal *lx = y ? C1("jax.numpy.log", x) : NULL;
  SrVal *y1 = lx ? OP(SUB, OP(SUB, FL(M_PI * M_PI / 6.0), OP(MUL, lx, C1("jax.numpy.log", OP(SUB, FL(1.0), x)))), y)
                 : NULL;
  y = y1 ? where3(s, x05, y1, y) : NULL;
  SrVal *y2 = y ? OP(SUB, OP(MUL, FL(-0.5), OP(POW, C1("jax.numpy.log", x), IN(2))), y) : NULL;
  return DONE(y2 ? where3(s, x2, y2, y) : NULL);
}

static SrVal *sp_spence(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "spence", "x", p) < 0) return NULL;
  SCOPE(I);
  SrVal *x = KEEP(sr_jnp_asarray(I, p[0], -1));
  if (!x) return DONE(NULL);
  SrDtype dt = dtype_of(I, x);
  if (dt != SR_F32 && dt != SR_F64)
    return DONE(sr_raise(I, "TypeError", "x.dtype=%s is not supported, see docstring for supported types.",
                         sr_dtype_name(dt)));
  SrVal *c[3] = {OP(LT, x, FL(0.0)), OP(EQ, x, FL(1.0)), OP(EQ, x, FL(0.0))};
  SrVal *f[4] = {FL(NAN), IN(0), FL(M_PI * M_PI / 6.0), fun(s, "_spence_calc", spence_calc, NULL, NULL)};
  return DONE(piecewise(s, x, 3, c, 4, f, NULL, NULL));
}

/* ==== bernoulli: Chowla and Hartung's algorithm ==== */

/* x.at[lo::step].set(v) */
static SrVal *at_set(SrNnScope *s, SrVal *x, int64_t lo, int64_t hi, int64_t step, SrVal *v) {
  SrInterp *I = s->I;
  SrVal *at = x && v ? KEEP(sr_getattr(I, x, "at")) : NULL;
  SrVal *sl = at ? KEEP(sr_slice_new(lo ? sr_int(NULL, lo) : sr_none(), hi >= 0 ? sr_int(NULL, hi) : sr_none(),
                                     step != 1 ? sr_int(NULL, step) : sr_none()))
                 : NULL;
  SrVal *ix = sl ? KEEP(sr_getitem(I, at, sl)) : NULL;
  SrVal *set = ix ? KEEP(sr_getattr(I, ix, "set")) : NULL;
  return set ? KEEP(sr_call1(I, set, v)) : NULL;
}

static SrVal *sp_bernoulli(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "bernoulli", "n", p) < 0) return NULL;
  if (p[0]->kind == SR_V_FLOAT) return sr_raise(I, "TypeError", "'float' object cannot be interpreted as an integer");
  int64_t n;
  if (sr_as_int(I, p[0], "Argument n of bernoulli", &n) < 0) return NULL;
  if (n < 0) return sr_raise(I, "ValueError", "n must be a non-negative integer.");
  SCOPE(I);
  SrVal *b3i[3] = {sr_int(NULL, 1), sr_float(NULL, -0.5), sr_float(NULL, 1.0 / 6.0)};
  SrVal *b3 = C1("jax.numpy.array", KEEP(sr_tuple(NULL, 3, b3i)));
  if (!b3) return DONE(NULL);
  if (n < 3) return DONE(KEEP(sr_getitem(I, b3, KEEP(sr_slice_new(sr_none(), sr_int(NULL, n + 1), sr_none())))));
  SrVal *bn = at_set(s, C1("jax.numpy.zeros", IN(n + 1)), 0, 3, 1, b3);
  SrDtype dt = bn ? dtype_of(I, bn) : SR_F32;
  const char *kw[1] = {"dtype"};
  SrVal *ma[3] = {IN(4), IN(n + 1), IN(2)};
  SrVal *dv = dtype_val(s, dt);
  SrVal *m = bn ? sr_nn_call(s, "jax.numpy.arange", 3, ma, 1, kw, &dv) : NULL;
  /* (1. / np.pi ** 2) * jnp.cumprod(-(m - 1) * m / 4 / np.pi ** 2) */
  SrVal *r = m ? OP(DIV, OP(DIV, OP(MUL, neg(s, OP(SUB, m, IN(1))), m), IN(4)), FL(M_PI * M_PI)) : NULL;
  SrVal *q1 = r ? OP(MUL, FL(1.0 / (M_PI * M_PI)), C1("jax.numpy.cumprod", r)) : NULL;
  SrVal *ka[2] = {IN(2), IN(50)};
  SrVal *k = q1 ? sr_nn_call(s, "jax.numpy.arange", 2, ka, 1, kw, &dv) : NULL;
  /* k[:, None] ** -m[None, :] */
  SrVal *kc = k ? C2("jax.numpy.expand_dims", k, IN(1)) : NULL;
  SrVal *mr = kc ? C2("jax.numpy.expand_dims", m, IN(0)) : NULL;
  SrVal *pw = mr ? OP(POW, kc, neg(s, mr)) : NULL;
  const char *akw[1] = {"axis"};
  SrVal *zero = IN(0);
  SrVal *q2 = pw ? sr_nn_call(s, "jax.numpy.sum", 1, &pw, 1, akw, &zero) : NULL;
  return DONE(q2 ? at_set(s, bn, 4, -1, 2, OP(MUL, q1, OP(ADD, IN(1), q2))) : NULL);
}

/* ==== zeta: lax.zeta, a custom_jvp whose rule is jax.jvp of
   _zeta_series_expansion (Johansson 2015, formula (5)) ==== */

static const double bernoulli_coefs[] = {12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1892437580.3183792, 74724249600.0, -2950130727918.164, 116467828143500.67, -4597978722407473.0, 1.8152105401943546e+17, -7.166165256175667e+18, 2.82908877253043e+20, -1.1168794925000445e+22, 4.4092635141854666e+23, -1.7407074646225822e+25};

static const char zeta_riemann[] =
    "Riemann zeta function not implemented; pass q != None to compute the Hurwitz Zeta function.";

/* jnp.expand_dims(np.arange(n, dtype=dt), tuple(range(nd))) */
static SrVal *arange_last(SrNnScope *s, int n, SrDtype dt, int nd) {
  double v[64];
  for (int i = 0; i < n; i++) v[i] = i;
  int64_t axes[SR_MAX_RANK];
  for (int i = 0; i < nd; i++) axes[i] = i;
  return C2("jax.numpy.expand_dims", coef_array(s, v, n, dt), KEEP(sr_int_tuple(axes, nd)));
}

static SrVal *zeta_series(SrInterp *I, SrArgs *a) {
  if (a->n != 2) return sr_raise(I, "TypeError", "_zeta_series_expansion() takes 2 positional arguments");
  SCOPE(I);
  SrVal *p[2] = {a->v[0], a->v[1]};
  if (sr_nn_promote_inexact(s, 2, p, "zeta") < 0) return DONE(NULL);
  SrVal *sv = p[0], *av = p[1];
  SrDtype dt = dtype_of(I, av);
  int nd = ty(I, av)->ndim, N = dt == SR_F32 ? 8 : 16;
  SrVal *Nv = sr_nn_typed_scalar(s, N, dt), *one = sr_nn_typed_scalar(s, 1, dt);
  SrVal *se = C2("jax.numpy.expand_dims", sv, IN(-1));
  SrVal *ae = se ? C2("jax.numpy.expand_dims", av, IN(-1)) : NULL;
  SrVal *k = ae ? arange_last(s, N, dt, nd) : NULL;
  SrVal *S = k ? C2("jax.numpy.sum", OP(POW, OP(ADD, ae, k), neg(s, se)), IN(-1)) : NULL;
  SrVal *In = S ? C2("jax.lax.div", OP(POW, OP(ADD, av, Nv), OP(SUB, one, sv)), OP(SUB, sv, one)) : NULL;
  SrVal *T0 = In ? OP(POW, OP(ADD, av, Nv), neg(s, sv)) : NULL;
  SrVal *m = T0 ? arange_last(s, 2 * N, dt, nd) : NULL;
  SrVal *soa = m ? OP(DIV, OP(ADD, se, m), OP(ADD, ae, Nv)) : NULL;
  SrVal *cp = soa ? C2("jax.numpy.cumprod", soa, IN(-1)) : NULL;
  if (!cp) return DONE(NULL);
  /* [..., ::2] */
  int cn = ty(I, cp)->ndim;
  SrVal *key = KEEP(sr_seq(NULL, SR_V_TUPLE, cn));
  for (int i = 0; i < cn; i++)
    sr_seq_push(NULL, key, sr_slice_new(sr_none(), sr_none(), i == cn - 1 ? sr_int(NULL, 2) : sr_none()));
  SrVal *T1 = KEEP(sr_getitem(I, cp, key));
  const char *kw[1] = {"max"};
  SrVal *mx = sr_nn_typed_scalar(s, dt == SR_F32 ? FLT_MAX : DBL_MAX, dt);
  T1 = T1 ? sr_nn_call(s, "jax.numpy.clip", 1, &T1, 1, kw, &mx) : NULL;
  int64_t axes[SR_MAX_RANK];
  for (int i = 0; i < nd; i++) axes[i] = i;
  SrVal *coefs = T1 ? C2("jax.numpy.expand_dims", coef_array(s, bernoulli_coefs, N, dt), KEEP(sr_int_tuple(axes, nd)))
                    : NULL;
  T1 = coefs ? OP(DIV, T1, coefs) : NULL;
  SrVal *T = T1 ? OP(MUL, T0, OP(ADD, sr_nn_typed_scalar(s, 0.5, dt), C2("jax.numpy.sum", T1, IN(-1)))) : NULL;
  return DONE(T ? OP(ADD, OP(ADD, S, In), T) : NULL);
}

static SrVal *zeta_fun(SrInterp *I, SrArgs *a) {
  if (a->n != 2) return sr_raise(I, "TypeError", "zeta() takes 2 positional arguments");
  SCOPE(I);
  SrVal *p[2] = {a->v[0], a->v[1]};
  if (sr_nn_promote_inexact(s, 2, p, "zeta") < 0) return DONE(NULL);
  return DONE(C2("jax.lax.zeta", p[0], p[1]));
}

/* partial(jvp, _zeta_series_expansion) */
static SrVal *zeta_jvp(SrInterp *I, SrArgs *a) {
  if (a->n != 2) return sr_raise(I, "TypeError", "jvp() takes primals and tangents");
  SCOPE(I);
  SrVal *v[3] = {fun(s, "_zeta_series_expansion", zeta_series, NULL, NULL), a->v[0], a->v[1]};
  return DONE(sr_nn_call(s, "jax.jvp", 3, v, 0, NULL, NULL));
}

static SrVal *zeta_cj;

static SrVal *sp_zeta(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "zeta", "x, q=", p) < 0) return NULL;
  if (!sr_nn_given(p[1])) return sr_raise(I, "NotImplementedError", "%s", zeta_riemann);
  static const char *const names[] = {"jvp"};
  static const SrBuiltinFn rules[] = {zeta_jvp};
  SrVal *cj = custom_jvp_of(I, &zeta_cj, "zeta", zeta_fun, 0, 1, names, rules);
  SrArgs ca = {2, p, 0, NULL, NULL, NULL};
  return cj ? sr_call(I, cj, &ca) : NULL;
}

/* ==== sici: cephes' series, asymptotic and large-x forms ==== */

static const double sici_asympt_fn4[] = {4.236128628922166, 5.4593771716181285, 1.6208328770153833, 0.16700661183132304, 0.006810201324725182, 0.00010893658065032867, 5.489002234213736e-07};
static const double sici_asympt_fd4[] = {1.0, 8.16496634205391, 7.308288225055645, 1.867922579501842, 0.1787920529631499, 0.007017106683227897, 0.00011003435715391573, 5.489002527562557e-07};
static const double sici_asympt_gn4[] = {0.08710016989731142, 0.6113791099522193, 0.3971802963923375, 0.07485277376284691, 0.005388686814621773, 0.00016199979459893403, 1.9796387414096365e-06, 7.825790407440903e-09};
static const double sici_asympt_gd4[] = {1.0, 1.6440220241335535, 0.666296701268988, 0.09887717612776888, 0.006223963454417684, 0.0001732210814741771, 2.0265918208634397e-06, 7.825792189335346e-09};
static const double sici_asympt_fn8[] = {0.4558808734704653, 0.7137152741001467, 0.16030015822231947, 0.01160642294081244, 0.00034955644244785906, 4.8621543082645475e-06, 3.200927900910049e-08, 9.41779576128513e-11, 9.70507110881952e-14};
static const double sici_asympt_fd8[] = {1.0, 0.9174636118736841, 0.17868554533207454, 0.012225359477197129, 0.00035869648188185157, 4.924350643178815e-06, 3.21956939101046e-08, 9.437205903502767e-11, 9.70507110881952e-14};
static const double sici_asympt_gn8[] = {0.6973599534432762, 0.33041097930563207, 0.03848787676499743, 0.001717182390523479, 3.4894116550227946e-05, 3.471311670841167e-07, 1.7040445278204452e-09, 3.859459254302766e-12, 3.1404009894636335e-15};
static const double sici_asympt_gd8[] = {1.0, 1.6854889881101165, 0.48785225869530496, 0.04679131942596258, 0.0019028442667439953, 3.684755044425611e-05, 3.5704322344374083e-07, 1.7269374896631615e-09, 3.878301660239547e-12, 3.1404009894636335e-15};
static const double si_series_sn[] = {-8.391678279103039e-11, 4.625917144270128e-08, -9.757593038436328e-06, 0.0009769454381704354, -0.04134703162294066, 1.0};
static const double si_series_sd[] = {2.0326926619595193e-12, 1.279978911799433e-09, 4.418278428012189e-07, 9.964121220438756e-05, 0.01420852393261499, 1.0};
static const double ci_series_cn[] = {2.0252400238910228e-11, -1.3524950491579076e-08, 3.593250514199931e-06, -0.0004740072068734079, 0.028915965260755523, -1.0};
static const double ci_series_cd[] = {4.077460400618806e-12, 3.067809975818878e-09, 1.2321035568588342e-06, 0.00031744202477503275, 0.051002805623644606, 4.0};

/* Moves *a and *b from scope s to outer; -1 if either is NULL. */
static int pass2(SrNnScope *outer, SrNnScope *s, SrVal **a, SrVal **b) {
  int ok = *a && *b;
  if (ok) {
    *a = sr_nn_keep(outer, sr_ref(*a));
    *b = sr_nn_keep(outer, sr_ref(*b));
  }
  sr_nn_done(s, NULL);
  return ok && *a && *b ? 0 : -1;
}

/* _sici_series: (si, ci) for 0 <= x <= 4 */
static int sici_series(SrNnScope *outer, SrVal *x, SrVal **si, SrVal **ci) {
  SCOPE(outer->I);
  SrDtype dt = dtype_of(s->I, x);
  SrVal *t = OP(MUL, x, x);
  SrVal *ss = t ? OP(DIV, OP(MUL, x, PV(si_series_sn, dt, t)), PV(si_series_sd, dt, t)) : NULL;
  *si = ss ? where3(s, OP(EQ, x, IN(0)), FL(0.0), ss) : NULL;
  SrVal *t2 = *si ? OP(MUL, x, x) : NULL;
  SrVal *cs = t2 ? OP(ADD, OP(ADD, FL(0.57721566490153286061), C1("jax.numpy.log", x)),
                      OP(DIV, OP(MUL, t2, PV(ci_series_cn, dt, t2)), PV(ci_series_cd, dt, t2)))
                 : NULL;
  *ci = cs ? where3(s, OP(EQ, x, IN(0)), FL(-INFINITY), cs) : NULL;
  return pass2(outer, s, si, ci);
}

/* _sici_asympt: 4 < x <= 1e9 */
static int sici_asympt(SrNnScope *outer, SrVal *x, SrVal **si, SrVal **ci) {
  SCOPE(outer->I);
  SrDtype dt = dtype_of(s->I, x);
  SrVal *sn = C1("jax.numpy.sin", x), *cs = sn ? C1("jax.numpy.cos", x) : NULL;
  SrVal *z = cs ? OP(DIV, FL(1.0), OP(MUL, x, x)) : NULL;
  SrVal *f4 = z ? OP(DIV, PV(sici_asympt_fn4, dt, z), OP(MUL, x, PV(sici_asympt_fd4, dt, z))) : NULL;
  SrVal *g4 = f4 ? OP(DIV, OP(MUL, z, PV(sici_asympt_gn4, dt, z)), PV(sici_asympt_gd4, dt, z)) : NULL;
  SrVal *f8 = g4 ? OP(DIV, PV(sici_asympt_fn8, dt, z), OP(MUL, x, PV(sici_asympt_fd8, dt, z))) : NULL;
  SrVal *g8 = f8 ? OP(DIV, OP(MUL, z, PV(sici_asympt_gn8, dt, z)), PV(sici_asympt_gd8, dt, z)) : NULL;
  SrVal *mask = g8 ? OP(LT, x, FL(8.0)) : NULL;
  SrVal *f = mask ? where3(s, mask, f4, f8) : NULL;
  SrVal *g = f ? where3(s, mask, g4, g8) : NULL;
  *si = g ? OP(SUB, OP(SUB, FL(M_PI / 2), OP(MUL, f, cs)), OP(MUL, g, sn)) : NULL;
  *ci = *si ? OP(SUB, OP(MUL, f, sn), OP(MUL, g, cs)) : NULL;
  return pass2(outer, s, si, ci);
}

/* _sici_approx: x >= 1e9 */
static int sici_approx(SrNnScope *outer, SrVal *x, SrVal **si, SrVal **ci) {
  SCOPE(outer->I);
  SrVal *a = OP(SUB, FL(M_PI / 2), OP(DIV, C1("jax.numpy.cos", x), x));
  SrVal *b = a ? OP(DIV, C1("jax.numpy.sin", x), x) : NULL;
  *si = b ? where3(s, C1("jax.numpy.isposinf", x), FL(M_PI / 2), a) : NULL;
  *ci = *si ? where3(s, C1("jax.numpy.isposinf", x), FL(0.0), b) : NULL;
  return pass2(outer, s, si, ci);
}

static SrVal *jselect(SrNnScope *s, int n, SrVal **conds, SrVal **choices, SrVal *dflt) {
  SrVal *cl = tuple_of(s, n, conds), *chl = cl ? tuple_of(s, n, choices) : NULL;
  if (!chl || !dflt) return NULL;
  SrVal *v[3] = {KEEP(sr_call1(s->I, sr_lookup_qualname("builtins.list"), cl)),
                 KEEP(sr_call1(s->I, sr_lookup_qualname("builtins.list"), chl)), dflt};
  return sr_nn_call(s, "jax.numpy.select", 3, v, 0, NULL, NULL);
}

static SrVal *sici_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *x = a->v[0];
  if (sr_nn_promote_inexact(s, 1, &x, "sici") < 0 ||
      complex_error(s, x, "Argument `x` to sici must be real-valued. Got dtype %s.") < 0)
    return DONE(NULL);
  SrVal *xa = C1("jax.numpy.abs", x);
  SrVal *s1, *c1, *s2, *c2, *s3, *c3;
  if (!xa || sici_series(s, xa, &s1, &c1) < 0 || sici_asympt(s, xa, &s2, &c2) < 0 || sici_approx(s, xa, &s3, &c3) < 0)
    return DONE(NULL);
  SrVal *cond1 = OP(LE, xa, IN(4));
  SrVal *cond2 = cond1 ? OP(BITAND, OP(GT, xa, IN(4)), OP(LE, xa, FL(1e9))) : NULL;
  SrVal *cs[2] = {cond1, cond2}, *sch[2] = {s1, s2}, *cch[2] = {c1, c2};
  SrVal *si = cond2 ? jselect(s, 2, cs, sch, s3) : NULL;
  SrVal *ci = si ? jselect(s, 2, cs, cch, c3) : NULL;
  si = ci ? OP(MUL, C1("jax.numpy.sign", x), si) : NULL;
  ci = si ? where3(s, C1("jax.numpy.isneginf", x), FL(NAN), ci) : NULL;
  return DONE(tuple2(s, si, ci));
}

static SrVal *sici_fun(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "sici() takes 1 positional argument");
  return sr_api_jit(I, "sici", sici_body, NULL, 1, a->v);
}

static SrVal *sici_cj;

/* sici_jvp (@jit): sici(p), (sinc(p / np.pi) * t, jnp.cos(p) / p * t) */
static SrVal *sici_jvp_body(SrInterp *I, SrArgs *a) {
  SrVal **p, **t;
  if (jvp_args(I, a, 1, &p, &t, "sici_jvp") < 0) return NULL;
  SCOPE(I);
  SrVal *po = KEEP(sr_call1(I, sici_cj, p[0]));
  SrVal *st = po ? C1("jax.numpy.sinc", OP(DIV, p[0], FL(M_PI))) : NULL;
  SrVal *ct = st ? OP(DIV, C1("jax.numpy.cos", p[0]), p[0]) : NULL;
  return DONE(ct ? tuple2(s, po, tuple2(s, OP(MUL, st, t[0]), OP(MUL, ct, t[0]))) : NULL);
}

static SrVal *sici_jvp(SrInterp *I, SrArgs *a) { return sr_api_jit(I, "sici_jvp", sici_jvp_body, NULL, a->n, a->v); }

static SrVal *sp_sici(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "sici", "x", p) < 0) return NULL;
  static const char *const names[] = {"sici_jvp"};
  static const SrBuiltinFn rules[] = {sici_jvp};
  SrVal *cj = custom_jvp_of(I, &sici_cj, "sici", sici_fun, 0, 1, names, rules);
  return cj ? sr_call1(I, cj, p[0]) : NULL;
}

/* ==== fresnel: cephes' fresnl (fresnlf in single precision) ==== */

static const double fresnl_sn32[] = {1.6476294637887e-09, -1.522754752581096e-07, 8.4247488085024e-06, -0.0003120693124703272, 0.007244727626597022, -0.09228055941124598, 0.5235987735681432};
static const double fresnl_cn32[] = {1.416802502367354e-08, -1.157231412229871e-06, 5.387223446683264e-05, -0.001604381798862293, 0.02818489036795073, -0.2467398198317899, 0.9999999760004487};
static const double fresnl_fn32[] = {-1903009855649.792, 135594238805.0252, -4158143148.511033, 73438484.63587323, -873235.6681548485, 8560.51546627547, -103.2877601091159, 2.999401847870011};
static const double fresnl_gn32[] = {-186084399762.465, 12783506733.93208, -377938771.3202229, 6492611.570598858, -77877.89623358162, 860.2931494734327, -14.93439396592284, 0.9999841934744914};
static const double fresnl_sn[] = {-2991.8191940101983, 708840.0452577386, -62974148.62058625, 2548908805.7337637, -44297951805.96978, 318016297876.5678};
static const double fresnl_sd[] = {1.0, 281.3762688899943, 45584.78108065326, 5173438.887700964, 419320245.8981112, 22441179564.534092, 607366389490.0846};
static const double fresnl_cn[] = {-4.9884311457357354e-08, 9.504280628298596e-06, -0.0006451914356839651, 0.018884331939670384, -0.20552590095501388, 1.0};
static const double fresnl_cd[] = {3.99982968972496e-12, 9.154392157746574e-10, 1.2500186247959882e-07, 1.2226278902417902e-05, 0.0008680295429417843, 0.04121420907221998, 1.0};
static const double fresnl_fn[] = {0.4215435550436775, 0.1434079197807589, 0.011522095507358577, 0.000345017939782574, 4.6361374928786735e-06, 3.055689837902576e-08, 1.0230451416490724e-10, 1.7201074326816183e-13, 1.3428327623306275e-16, 3.763297112699879e-20};
static const double fresnl_fd[] = {1.0, 0.7515863983533789, 0.11688892585919138, 0.0064405152650885865, 0.00015593440916415301, 1.8462756734893055e-06, 1.1269922476399903e-08, 3.6014002958937136e-11, 5.887545336215784e-14, 4.5200143407412973e-17, 1.2544323709001127e-20};
static const double fresnl_gn[] = {0.5044420736433832, 0.1971028335255234, 0.018764858409257526, 0.0006840793809153931, 1.1513882611188428e-05, 9.828524436884223e-08, 4.4534441586175015e-10, 1.0826804113902088e-12, 1.375554606332618e-15, 8.363544356306774e-19, 1.8695871016278324e-22};
static const double fresnl_gd[] = {1.0, 1.4749575992512833, 0.33774898912002, 0.02536037414203388, 0.0008146791071843061, 1.2754507566772912e-05, 1.0431458965757199e-07, 4.6068072814652043e-10, 1.1027321506624028e-12, 1.3879653125957886e-15, 8.391588162831187e-19, 1.8695871016278324e-22};

/* sincospisquaredhalf (@jit): sin(pi x**2 / 2) and cos(pi x**2 / 2) */
static SrVal *sincospi_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *x = C1("jax.numpy.abs", a->v[0]);
  SrVal *sm = x ? C2("jax.numpy.fmod", x, FL(2.0)) : NULL;
  SrVal *r = sm ? C2("jax.numpy.fmod", OP(MUL, sm, OP(SUB, x, OP(DIV, sm, IN(2)))), FL(2.0)) : NULL;
  SrVal *sin1 = r ? C1("jax.numpy.sin", OP(MUL, FL(M_PI), r)) : NULL;
  SrVal *sin2 = sin1 ? C1("jax.numpy.sin", OP(MUL, FL(M_PI), OP(SUB, r, FL(2.0)))) : NULL;
  SrVal *sin3 = sin2 ? neg(s, C1("jax.numpy.sin", OP(MUL, FL(M_PI), OP(SUB, r, FL(1.0))))) : NULL;
  SrVal *sinpi = sin3 ? where3(s, OP(LT, r, FL(0.5)), sin1, where3(s, OP(GT, r, FL(1.5)), sin2, sin3)) : NULL;
  SrVal *cos1 = sinpi ? neg(s, C1("jax.numpy.sin", OP(MUL, FL(M_PI), OP(SUB, r, FL(0.5))))) : NULL;
  SrVal *cos2 = cos1 ? C1("jax.numpy.sin", OP(MUL, FL(M_PI), OP(SUB, r, FL(1.5)))) : NULL;
  SrVal *cospi = cos2 ? where3(s, OP(EQ, r, FL(0.5)), FL(0.0), where3(s, OP(LT, r, FL(1.0)), cos1, cos2)) : NULL;
  return DONE(tuple2(s, sinpi, cospi));
}

static SrVal *sincospi(SrNnScope *s, SrVal *x, SrVal **sinpi, SrVal **cospi) {
  SrVal *r = x ? KEEP(sr_api_jit(s->I, "sincospisquaredhalf", sincospi_body, NULL, 1, &x)) : NULL;
  if (!r) return NULL;
  *sinpi = r->seq.items[0];
  *cospi = r->seq.items[1];
  return r;
}

static SrVal *fresnel_fun(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "fresnel() takes 1 positional argument");
  SCOPE(I);
  SrVal *xx = a->v[0];
  if (sr_nn_promote_inexact(s, 1, &xx, "fresnel") < 0) return DONE(NULL);
  SrDtype odt = dtype_of(I, xx);
  if (sr_dtype_kind(odt) == SR_DK_COMPLEX)
    return DONE(sr_raise(I, "NotImplementedError", "Support for complex-valued inputs is not implemented yet."));
  if (odt != SR_F32 && odt != SR_F16 && odt != SR_BF16 && odt != SR_F64)
    return DONE(sr_raise(I, "NotImplementedError", "Support for %s dtype is not implemented yet.", sr_dtype_name(odt)));
  int single = odt != SR_F64;
  SrDtype dt = single ? SR_F32 : SR_F64;
  if (single) xx = astype(s, xx, SR_F32);
  SrVal *x = xx ? C1("jax.numpy.abs", xx) : NULL;
  SrVal *x2 = x ? OP(MUL, x, x) : NULL;
  SrVal *t = x2 ? OP(MUL, x2, x2) : NULL;
  SrVal *s_small, *c_small;
  if (single) {
    s_small = t ? OP(MUL, OP(MUL, x, x2), PV(fresnl_sn32, dt, t)) : NULL;
    c_small = s_small ? OP(MUL, x, PV(fresnl_cn32, dt, t)) : NULL;
  } else {
    s_small = t ? OP(DIV, OP(MUL, OP(MUL, x, x2), PV(fresnl_sn, dt, t)), PV(fresnl_sd, dt, t)) : NULL;
    c_small = s_small ? OP(DIV, OP(MUL, x, PV(fresnl_cn, dt, t)), PV(fresnl_cd, dt, t)) : NULL;
  }
  SrVal *sinpi = NULL, *cospi = NULL;
  if (!c_small || !sincospi(s, x, &sinpi, &cospi)) return DONE(NULL);
  SrVal *c_large, *s_large;
  if (single) {
    c_large = FL(0.5);
    s_large = FL(0.5);
  } else {
    SrVal *px = OP(DIV, IN(1), OP(MUL, FL(M_PI), x));
    c_large = px ? OP(ADD, FL(0.5), OP(MUL, px, sinpi)) : NULL;
    s_large = c_large ? OP(SUB, FL(0.5), OP(MUL, OP(DIV, IN(1), OP(MUL, FL(M_PI), x)), cospi)) : NULL;
  }
  SrVal *tt = s_large ? OP(MUL, FL(M_PI), x2) : NULL;
  SrVal *u = tt ? OP(DIV, FL(1.0), OP(MUL, tt, tt)) : NULL;
  tt = u ? OP(DIV, FL(1.0), tt) : NULL;
  SrVal *f, *g;
  if (single) {
    f = tt ? OP(SUB, FL(1.0), OP(MUL, u, PV(fresnl_fn32, dt, u))) : NULL;
    g = f ? OP(MUL, tt, PV(fresnl_gn32, dt, u)) : NULL;
  } else {
    f = tt ? OP(SUB, FL(1.0), OP(DIV, OP(MUL, u, PV(fresnl_fn, dt, u)), PV(fresnl_fd, dt, u))) : NULL;
    g = f ? OP(DIV, OP(MUL, tt, PV(fresnl_gn, dt, u)), PV(fresnl_gd, dt, u)) : NULL;
  }
  SrVal *px = g ? OP(MUL, FL(M_PI), x) : NULL;
  SrVal *c_other = px ? OP(ADD, FL(0.5), OP(DIV, OP(SUB, OP(MUL, f, sinpi), OP(MUL, g, cospi)), px)) : NULL;
  SrVal *s_other = c_other ? OP(SUB, FL(0.5), OP(DIV, OP(ADD, OP(MUL, f, cospi), OP(MUL, g, sinpi)), px)) : NULL;
  SrVal *isinf = s_other ? C1("jax.numpy.isinf", xx) : NULL;
  SrVal *small = isinf ? OP(LT, x2, FL(2.5625)) : NULL;
  SrVal *large = small ? OP(GT, x, FL(36974.0)) : NULL;
  SrVal *sv = large ? where3(s, isinf, FL(0.5), where3(s, small, s_small, where3(s, large, s_large, s_other))) : NULL;
  SrVal *cv = sv ? where3(s, isinf, FL(0.5), where3(s, small, c_small, where3(s, large, c_large, c_other))) : NULL;
  SrVal *ng = cv ? OP(LT, xx, FL(0.0)) : NULL;
  sv = ng ? where3(s, ng, neg(s, sv), sv) : NULL;
  cv = sv ? where3(s, ng, neg(s, cv), cv) : NULL;
  if (cv && odt != dt) {
    sv = astype(s, sv, odt);
    cv = sv ? astype(s, cv, odt) : NULL;
  }
  return DONE(tuple2(s, sv, cv));
}

static SrVal *fresnel_cj;

/* _fresnel_jvp: fresnel(x), (sinpi * x_dot, cospi * x_dot) */
static SrVal *fresnel_jvp(SrInterp *I, SrArgs *a) {
  SrVal **p, **t;
  if (jvp_args(I, a, 1, &p, &t, "_fresnel_jvp") < 0) return NULL;
  SCOPE(I);
  SrVal *r = KEEP(sr_call1(I, fresnel_cj, p[0]));
  SrVal *sinpi = NULL, *cospi = NULL;
  if (!r || !sincospi(s, p[0], &sinpi, &cospi)) return DONE(NULL);
  return DONE(tuple2(s, r, tuple2(s, OP(MUL, sinpi, t[0]), OP(MUL, cospi, t[0]))));
}

static SrVal *sp_fresnel(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "fresnel", "x", p) < 0) return NULL;
  static const char *const names[] = {"_fresnel_jvp"};
  static const SrBuiltinFn rules[] = {fresnel_jvp};
  SrVal *cj = custom_jvp_of(I, &fresnel_cj, "fresnel", fresnel_fun, 0, 1, names, rules);
  return cj ? sr_call1(I, cj, p[0]) : NULL;
}

/* ==== owens_t: 13-point quadrature (Patefield and Tandy's T5) ==== */

static const double owens_t_quad_pts[] = {0.0035082039676451716, 0.031279042338030756, 0.08526682628321945, 0.16245071730812277, 0.25851196049125436, 0.3680755384069753, 0.485010929056047, 0.6027751415261857, 0.7147788421775323, 0.814755109887601, 0.8971102975594897, 0.9572380808594426, 0.991788329746297};
static const double owens_t_quad_wts[] = {0.018831438115323503, 0.01856708624397765, 0.018042093461223385, 0.017263829606398752, 0.016243219975989858, 0.014994592034116705, 0.013535474469662087, 0.011886351605820165, 0.010070377242777432, 0.008113054574229958, 0.006041900952847024, 0.0038862217010742057, 0.001679303108454609};

/* np.array(c) as jnp sees it: the default float dtype */
static SrVal *np_array(SrNnScope *s, const double *c, int n) {
  return coef_array(s, c, n, s->I->jax->enable_x64 ? SR_F64 : SR_F32);
}

/* a * (jnp.exp(-0.5 * h**2[..., None] * (1. + r)) / (1. + r) @ w), r = a**2[..., None] * pts */
static SrVal *owens_t_quadrature(SrNnScope *outer, SrVal *h, SrVal *a) {
  SCOPE(outer->I);
  int nd = ty(s->I, a)->ndim;
  int64_t axes[SR_MAX_RANK];
  for (int i = 0; i < nd; i++) axes[i] = i;
  SrVal *pts = C2("jax.numpy.expand_dims", np_array(s, owens_t_quad_pts, NC(owens_t_quad_pts)), KEEP(sr_int_tuple(axes, nd)));
  SrVal *r = pts ? OP(MUL, C2("jax.numpy.expand_dims", C1("jax.numpy.square", a), IN(-1)), pts) : NULL;
  SrVal *h2 = r ? C2("jax.numpy.expand_dims", C1("jax.numpy.square", h), IN(-1)) : NULL;
  SrVal *in = h2 ? OP(DIV, C1("jax.numpy.exp", OP(MUL, OP(MUL, FL(-0.5), h2), OP(ADD, FL(1.0), r))), OP(ADD, FL(1.0), r))
                 : NULL;
  SrVal *w = in ? np_array(s, owens_t_quad_wts, NC(owens_t_quad_wts)) : NULL;
  return OUT(w ? OP(MUL, a, OP(MATMUL, in, w)) : NULL);
}

static SrVal *owens_t_fun(SrInterp *I, SrArgs *a) {
  if (a->n != 2) return sr_raise(I, "TypeError", "_owens_t_impl() takes 2 positional arguments");
  SCOPE(I);
  SrVal *h = C1("jax.numpy.abs", a->v[0]), *av = a->v[1];
  SrVal *abs_a = h ? C1("jax.numpy.abs", av) : NULL;
  SrVal *root2 = abs_a ? cst(s, h, sqrt(2.0)) : NULL;
  SrVal *hn = root2 ? OP(DIV, h, root2) : NULL;
  SrVal *le1 = hn ? OP(LE, abs_a, FL(1.0)) : NULL;
  SrVal *ma = le1 ? where3(s, le1, abs_a, C1("jax.numpy.reciprocal", abs_a)) : NULL;
  SrVal *mh = ma ? where3(s, OP(LE, abs_a, FL(1.0)), h, OP(MUL, abs_a, h)) : NULL;
  SrVal *res = mh ? owens_t_quadrature(s, mh, ma) : NULL;
  res = res ? where3(s, OP(EQ, mh, FL(0.0)), OP(DIV, C1("jax.numpy.arctan", ma), FL(2 * M_PI)), res) : NULL;
  SrVal *e1 = res ? C1("jax.lax.erfc", OP(DIV, neg(s, mh), root2)) : NULL;
  SrVal *e2 = e1 ? C1("jax.lax.erfc", OP(DIV, mh, root2)) : NULL;
  res = e2 ? where3(s, OP(EQ, ma, FL(1.0)), OP(MUL, OP(MUL, FL(0.125), e1), e2), res) : NULL;
  SrVal *normh = res ? C1("jax.lax.erfc", hn) : NULL;
  SrVal *normah = normh ? C1("jax.lax.erfc", OP(MUL, abs_a, hn)) : NULL;
  SrVal *small = normah ? OP(SUB, OP(SUB, FL(0.25), OP(MUL, OP(MUL, FL(0.25), C1("jax.lax.erf", hn)),
                                                         C1("jax.lax.erf", OP(MUL, abs_a, hn)))),
                             res)
                        : NULL;
  SrVal *big = small ? OP(SUB, OP(MUL, FL(0.25), OP(SUB, OP(ADD, normh, normah), OP(MUL, normh, normah))), res) : NULL;
  SrVal *inner = big ? where3(s, OP(LE, OP(MUL, abs_a, h), FL(0.67)), small, big) : NULL;
  res = inner ? where3(s, OP(GT, abs_a, FL(1.0)), inner, res) : NULL;
  res = res ? OP(MUL, C1("jax.lax.sign", av), res) : NULL;
  SrVal *nan = res ? OP(BITOR, C1("jax.numpy.isnan", av), C1("jax.numpy.isnan", h)) : NULL;
  return DONE(nan ? where3(s, nan, C2("jax.numpy.full_like", res, FL(NAN)), res) : NULL);
}

static SrVal *owens_t_cj;

static SrVal *owens_t_jvp(SrInterp *I, SrArgs *a) {
  SrVal **p, **t;
  if (jvp_args(I, a, 2, &p, &t, "_owens_t_jvp") < 0) return NULL;
  SCOPE(I);
  SrVal *h = p[0], *av = p[1];
  SrVal *r = call_n(s, owens_t_cj, 2, p);
  SrVal *root2 = r ? cst(s, h, sqrt(2.0)) : NULL;
  SrVal *dh = root2 ? OP(DIV, OP(MUL, neg(s, C1("jax.lax.exp", OP(MUL, FL(-0.5), C1("jax.lax.square", h)))),
                                 C1("jax.lax.erf", OP(DIV, OP(MUL, av, h), root2))),
                         OP(MUL, FL(2.0), cst(s, h, sqrt(2.0 * M_PI))))
                    : NULL;
  SrVal *a21 = dh ? OP(ADD, C1("jax.lax.square", av), FL(1.0)) : NULL;
  SrVal *da = a21 ? OP(DIV, C1("jax.lax.exp", OP(MUL, OP(MUL, FL(-0.5), a21), C1("jax.lax.square", h))),
                       OP(MUL, FL(2.0 * M_PI), OP(ADD, C1("jax.lax.square", av), FL(1.0))))
                  : NULL;
  SrVal *to = da ? astype(s, OP(ADD, OP(MUL, dh, t[0]), OP(MUL, da, t[1])), dtype_of(I, r)) : NULL;
  return DONE(tuple2(s, r, to));
}

static SrVal *sp_owens_t(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "owens_t", "h, a", p) < 0) return NULL;
  SCOPE(I);
  if (sr_nn_promote_inexact(s, 2, p, "owens_t") < 0) return DONE(NULL);
  static const char *const names[] = {"_owens_t_jvp"};
  static const SrBuiltinFn rules[] = {owens_t_jvp};
  SrVal *cj = custom_jvp_of(I, &owens_t_cj, "_owens_t_impl", owens_t_fun, 0, 1, names, rules);
  return DONE(call_n(s, cj, 2, p));
}

/* ==== expn, exp1, expi: cephes' expn.c and ei.c ==== */

static const double expint1_a[] = {-5.350447357812543, 218.50491688166133, -4176.572384826693, 55411.76756393557, -331338.13311781443, 1592627.1633849454};
static const double expint1_b[] = {1.0, -52.505479591128626, 1259.6161867867906, -17565.495819735348, 149306.2117002726, -729494.9239640528, 1592627.1633849454};
static const double expint2_a[] = {0.019818085032596897, -1.2716456259849176, -2.0881603356812284, 2.7555445091879367, -0.44095070487016, 0.046656238059358916, -0.0015450426796734852, 7.059980605299618e-05};
static const double expint2_b[] = {1.0, 1.4764986709149215, 0.5629177174822436, 0.16990178978793072, 0.02291647179034212, 0.0044501504397287525, 0.00017274396122065214, 3.953167195549672e-05};
static const double expint3_a[] = {-1.3732153758712087, -0.7084559133740839, 1.580806855547941, -0.2601500427425623, 0.029946746941137137, -0.001038086040188744, 4.371064420753005e-05, 2.141783679522603e-06};
static const double expint3_b[] = {1.0, 0.8585231423622028, 0.4483285822873995, 0.07687932158124476, 0.024498682410218877, 0.0008832165941927797, 0.00045909522995113536, -4.729848351866523e-06, 2.66519553739071e-06};
static const double expint4_a[] = {-2.1069346016919166, 1.7327338696646881, -0.2423619178935842, 0.02322724180937566, 0.00023728804404931798, -8.343219561192553e-05, 1.3634087956052505e-05, -3.655412321999254e-07, 1.4649417339759612e-08, 6.17640786371036e-10};
static const double expint4_b[] = {1.0, -0.2298062239901678, 0.11050770414740378, -0.015665429666307924, 0.002761106850817353, -0.00020891480122840484, 1.7085289388076754e-05, -4.4593117963566865e-07, 1.3946349303538475e-08, 6.150865933977338e-10};
static const double expint5_a[] = {-0.24581193676740204, -0.14833822533220778, 0.07248291795735552, -0.013483156873809405, 0.001342775069788637, -7.942465637159712e-05, 2.644179518984236e-06, -4.239473659313765e-08};
static const double expint5_b[] = {1.0, -0.10442259084438711, -0.26764531281014026, 0.09695000254621984, -0.01601745692712991, 0.001496414899205908, -8.462452563778485e-05, 2.7289384034767266e-06, -4.239462431819542e-08};
static const double expint6_a[] = {0.12125611181054567, -0.5823133179043894, 0.2348887314557017, -0.030400343181132484, 0.0015100821468651906, -2.5231370954995714e-05};
static const double expint6_b[] = {1.0, -1.002252150365854, 0.2928709694872224, -0.03337004338674008, 0.0015605448811273888, -2.5231370936032347e-05};
static const double expint7_a[] = {-0.7657847078286127, 0.6886192415566705, -0.2132598113545206, 0.033461075523841935, -0.003076541477344756, 0.00017471193164549074, -6.1037116822741705e-06, 1.218032765428652e-07, -1.0860761027932903e-09};
static const double expint7_b[] = {1.0, -1.8888028686623086, 1.066691687211409, -0.27519159823063805, 0.039308526882338234, -0.003414684558602365, 0.00018668443707035555, -6.345146083130515e-06, 1.239754287483207e-07, -1.0860761027931265e-09};

#define EULER 0.57721566490153286061

/* _expn1's fori_loop body: psi + one / i; closes over one */
static SrVal *expn1_psi(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  return DONE(OP(ADD, a->v[1], OP(DIV, closed(I)[0], a->v[0])));
}

/* _expn1's dict carry, its keys sorted as JAX flattens them */
enum { E1_ANS, E1_PK, E1_T, E1_X, E1_XK, E1_YK, E1_Z, E1_N };

static SrVal *expn1_cond(SrInterp *I, SrArgs *a) {
  SrVal **d = carry(I, a->v[0], E1_N, "cond");
  if (!d) return NULL;
  SCOPE(I);
  double eps = eps_of(dtype_of(I, d[E1_X]));
  return DONE(OP(BITAND, OP(GT, d[E1_X], cst(s, d[E1_X], 0.0)), OP(GT, d[E1_T], cst(s, d[E1_X], eps))));
}

static SrVal *expn1_body(SrInterp *I, SrArgs *a) {
  SrVal **d0 = carry(I, a->v[0], E1_N, "body");
  if (!d0) return NULL;
  SCOPE(I);
  SrVal *one = closed(I)[0], *zero = closed(I)[1], *d[E1_N];
  memcpy(d, d0, sizeof d);
  d[E1_XK] = OP(ADD, d[E1_XK], one);
  d[E1_YK] = OP(MUL, d[E1_YK], OP(DIV, d[E1_Z], d[E1_XK]));
  d[E1_PK] = OP(ADD, d[E1_PK], one);
  d[E1_ANS] = OP(ADD, d[E1_ANS], where3(s, OP(NE, d[E1_PK], zero), OP(DIV, d[E1_YK], d[E1_PK]), zero));
  SrVal *q = d[E1_ANS] ? C1("builtins.abs", OP(DIV, d[E1_YK], d[E1_ANS])) : NULL;
  d[E1_T] = q ? where3(s, OP(NE, d[E1_ANS], zero), q, one) : NULL;
  return DONE(tuple_of(s, E1_N, d));
}

/* _expn1(x, n): the power series */
static SrVal *expn1(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *x = a->v[0], *n = a->nkw ? a->kwv[0] : NULL;
  if (!n) return DONE(sr_raise(I, "TypeError", "_expn1() missing n"));
  SrVal *zero = cst(s, x, 0.0), *one = cst(s, x, 1.0);
  SrVal *psi = OP(SUB, FL(-EULER), C1("jax.numpy.log", x));
  SrVal *cv[1] = {one};
  psi = psi ? fori_loop(s, cst(s, n, 1), n, expn1_psi, 1, cv, psi) : NULL;
  SrVal *n1 = psi ? where3(s, OP(EQ, n, cst(s, n, 1)), OP(ADD, one, one), n) : NULL;
  SrVal *init[E1_N];
  init[E1_X] = x;
  init[E1_Z] = neg(s, x);
  init[E1_XK] = zero;
  init[E1_YK] = one;
  init[E1_PK] = OP(SUB, one, n);
  init[E1_ANS] = n1 ? where3(s, OP(EQ, n, cst(s, n, 1)), zero, OP(DIV, one, OP(SUB, one, n1))) : NULL;
  init[E1_T] = FL(INFINITY);
  SrVal *bv[2] = {one, zero};
  SrVal *d = init[E1_ANS] ? while_loop(s, expn1_cond, expn1_body, 2, bv, tuple_of(s, E1_N, init)) : NULL;
  if (!d) return DONE(NULL);
  SrVal *r = OP(SUB, n, cst(s, n, 1));
  SrVal *lg = C1("jax.scipy.special.gammaln", n);
  SrVal *v = lg ? OP(DIV, OP(MUL, OP(POW, d->seq.items[E1_Z], r), psi), C1("jax.numpy.exp", lg)) : NULL;
  return DONE(OP(SUB, v, d->seq.items[E1_ANS]));
}

enum { E2_ANS, E2_K, E2_PKM1, E2_PKM2, E2_QKM1, E2_QKM2, E2_R, E2_T, E2_X, E2_N };

static SrVal *expn2_cond(SrInterp *I, SrArgs *a) {
  SrVal **d = carry(I, a->v[0], E2_N, "cond");
  if (!d) return NULL;
  SCOPE(I);
  double eps = eps_of(dtype_of(I, d[E2_X]));
  return DONE(OP(BITAND, OP(GT, d[E2_X], cst(s, d[E2_K], 0)), OP(GT, d[E2_T], cst(s, d[E2_X], eps))));
}

/* closes over n, one, zero, BIG */
static SrVal *expn2_body(SrInterp *I, SrArgs *a) {
  SrVal **d0 = carry(I, a->v[0], E2_N, "body");
  if (!d0) return NULL;
  SCOPE(I);
  SrVal *n = closed(I)[0], *one = closed(I)[1], *zero = closed(I)[2], *big = closed(I)[3], *d[E2_N];
  memcpy(d, d0, sizeof d);
  SrVal *x = d[E2_X];
  SrVal *k = d[E2_K] = OP(ADD, d[E2_K], cst(s, d[E2_K], 1));
  SrVal *odd = k ? OP(EQ, OP(MOD, k, cst(s, k, 2)), cst(s, k, 1)) : NULL;
  SrVal *yk = odd ? where3(s, odd, one, x) : NULL;
  SrVal *xk = yk ? where3(s, odd, OP(ADD, n, OP(DIV, OP(SUB, k, cst(s, k, 1)), cst(s, k, 2))), OP(DIV, k, cst(s, k, 2)))
                 : NULL;
  SrVal *pk = xk ? OP(ADD, OP(MUL, d[E2_PKM1], yk), OP(MUL, d[E2_PKM2], xk)) : NULL;
  SrVal *qk = pk ? OP(ADD, OP(MUL, d[E2_QKM1], yk), OP(MUL, d[E2_QKM2], xk)) : NULL;
  SrVal *nz = qk ? OP(NE, qk, zero) : NULL;
  SrVal *r = d[E2_R] = nz ? where3(s, nz, OP(DIV, pk, qk), d[E2_R]) : NULL;
  d[E2_T] = r ? where3(s, nz, C1("builtins.abs", OP(DIV, OP(SUB, d[E2_ANS], r), r)), one) : NULL;
  d[E2_ANS] = d[E2_T] ? where3(s, nz, r, d[E2_ANS]) : NULL;
  d[E2_PKM2] = d[E2_PKM1];
  d[E2_PKM1] = pk;
  d[E2_QKM2] = d[E2_QKM1];
  d[E2_QKM1] = qk;
  SrVal *is_big = d[E2_ANS] ? OP(GT, C1("builtins.abs", pk), big) : NULL;
  static const int keys[] = {E2_PKM1, E2_PKM2, E2_QKM1, E2_QKM2};
  for (int i = 0; i < 4; i++) d[keys[i]] = is_big ? where3(s, is_big, OP(DIV, d[keys[i]], big), d[keys[i]]) : NULL;
  return DONE(tuple_of(s, E2_N, d));
}

/* _expn2(x, n): x > 1, the continued fraction */
static SrVal *expn2(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *x = a->v[0], *n = a->nkw ? a->kwv[0] : NULL;
  if (!n) return DONE(sr_raise(I, "TypeError", "_expn2() missing n"));
  SrVal *big = cst(s, x, 1.44115188075855872e17), *zero = cst(s, x, 0.0), *one = cst(s, x, 1.0);
  SrVal *init[E2_N];
  init[E2_K] = cst(s, n, 1);
  init[E2_PKM2] = one;
  init[E2_QKM2] = x;
  init[E2_PKM1] = one;
  init[E2_QKM1] = OP(ADD, x, n);
  init[E2_ANS] = OP(DIV, one, OP(ADD, x, n));
  init[E2_T] = cst(s, x, INFINITY);
  init[E2_R] = zero;
  init[E2_X] = x;
  SrVal *cv[4] = {n, one, zero, big};
  SrVal *d = init[E2_ANS] ? while_loop(s, expn2_cond, expn2_body, 4, cv, tuple_of(s, E2_N, init)) : NULL;
  return DONE(d ? OP(MUL, d->seq.items[E2_ANS], C1("jax.numpy.exp", neg(s, x))) : NULL);
}

/* _expn3(x, n): n >= 5000, the asymptotic expansion */
static SrVal *expn3(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *x = a->v[0], *n = a->nkw ? a->kwv[0] : NULL;
  if (!n) return DONE(sr_raise(I, "TypeError", "_expn3() missing n"));
  SrVal *one = cst(s, x, 1.0);
  SrVal *xk = OP(ADD, x, n);
  SrVal *yk = OP(DIV, one, OP(MUL, xk, xk));
  SrVal *t = n;
  SrVal *ans = OP(MUL, OP(MUL, yk, t), OP(ADD, OP(SUB, OP(MUL, OP(MUL, cst(s, x, 6), x), x), OP(MUL, OP(MUL, cst(s, x, 8), t), x)),
                                         OP(MUL, t, t)));
  ans = OP(MUL, yk, OP(ADD, ans, OP(MUL, t, OP(SUB, t, OP(MUL, cst(s, x, 2), x)))));
  ans = OP(MUL, yk, OP(ADD, ans, t));
  return DONE(OP(DIV, OP(MUL, OP(ADD, ans, one), C1("jax.numpy.exp", neg(s, x))), xk));
}

static SrVal *expn_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *p[2] = {a->v[0], a->v[1]};
  if (sr_nn_promote_inexact(s, 2, p, "expn") < 0) return DONE(NULL);
  SrVal *n = p[0], *x = p[1];
  if (sr_dtype_kind(dtype_of(I, x)) == SR_DK_COMPLEX)
    return DONE(sr_raise(I, "ValueError", "expn does not support complex-valued inputs."));
  SrVal *zero = cst(s, x, 0), *one = cst(s, x, 1);
  SrVal *conds[6];
  conds[0] = OP(BITOR, OP(LT, n, cst(s, n, 0)), OP(LT, x, zero));
  conds[1] = OP(BITAND, OP(EQ, x, zero), OP(LT, n, cst(s, n, 2)));
  conds[2] = OP(BITAND, OP(EQ, x, zero), OP(GE, n, cst(s, n, 2)));
  conds[3] = OP(BITAND, OP(EQ, n, cst(s, n, 0)), OP(GE, x, zero));
  conds[4] = OP(GE, n, cst(s, n, 5000));
  conds[5] = OP(GT, x, one);
  SrVal *n1 = where3(s, OP(EQ, n, cst(s, n, 1)), OP(ADD, n, n), n);
  SrVal *vals[7] = {FL(NAN), FL(INFINITY), OP(DIV, one, n1), OP(DIV, C1("jax.numpy.exp", neg(s, x)), x),
                    fun(s, "_expn3", expn3, NULL, NULL), fun(s, "_expn2", expn2, NULL, NULL),
                    fun(s, "_expn1", expn1, NULL, NULL)};
  return DONE(piecewise(s, x, 6, conds, 7, vals, "n", n));
}

static SrVal *expn_jit(SrInterp *I, SrArgs *a) {
  if (a->n != 2) return sr_raise(I, "TypeError", "expn() takes 2 positional arguments");
  return sr_api_jit(I, "expn", expn_body, NULL, 2, a->v);
}

static SrVal *expn_vec; /* jnp.vectorize(jit(expn)) */

static SrVal *expn_fun(SrInterp *I, SrArgs *a) {
  if (!expn_vec) {
    SrVal *f = sr_builtin_with("expn", expn_jit, NULL, NULL);
    SrVal *vf = sr_lookup_qualname("jax.numpy.vectorize");
    expn_vec = vf ? sr_call1(I, vf, f) : sr_raise(I, "NotImplementedError", "jax.numpy.vectorize is not available");
    sr_unref(f);
    if (!expn_vec) return NULL;
  }
  return sr_call(I, expn_vec, a);
}

static SrVal *expn_cj;

/* expn_jvp (@jit): expn(n, x), lax.mul(lax.neg(x_dot), expn(lax.sub(n, _lax_const(n, 1)), x)) */
static SrVal *expn_jvp_body(SrInterp *I, SrArgs *a) {
  SrVal **p, **t;
  if (jvp_args(I, a, 2, &p, &t, "expn_jvp") < 0) return NULL;
  SCOPE(I);
  SrVal *n = p[0], *x = p[1];
  SrVal *po = call_n(s, expn_cj, 2, p);
  SrVal *nm[2] = {po ? C2("jax.lax.sub", n, cst(s, n, 1)) : NULL, x};
  SrVal *e = call_n(s, expn_cj, 2, nm);
  SrVal *to = e ? C2("jax.lax.mul", C1("jax.lax.neg", t[1]), e) : NULL;
  return DONE(tuple2(s, po, to));
}

static SrVal *expn_jvp(SrInterp *I, SrArgs *a) { return sr_api_jit(I, "expn_jvp", expn_jvp_body, NULL, a->n, a->v); }

/* expn(n, x): n is JAX's nondiff argument, here under stop_gradient */
static SrVal *expn_of(SrNnScope *s, SrVal *n, SrVal *x) {
  static const char *const names[] = {"expn_jvp"};
  static const SrBuiltinFn rules[] = {expn_jvp};
  SrVal *cj = custom_jvp_of(s->I, &expn_cj, "expn", expn_fun, 0, 1, names, rules);
  if (n && sr_array_of(n) && sr_array_of(n)->kind == SR_AV_TRACER) n = C1("jax.lax.stop_gradient", n);
  SrVal *v[2] = {n, x};
  return cj ? call_n(s, cj, 2, v) : NULL;
}

static SrVal *sp_expn(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "expn", "n, x", p) < 0) return NULL;
  SCOPE(I);
  return DONE(expn_of(s, p[0], p[1]));
}

static SrVal *sp_exp1(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "exp1", "x", p) < 0) return NULL;
  SCOPE(I);
  if (sr_nn_promote_inexact(s, 1, p, "exp1") < 0) return DONE(NULL);
  if (sr_dtype_kind(dtype_of(I, p[0])) == SR_DK_COMPLEX)
    return DONE(sr_raise(I, "ValueError", "exp1 does not support complex-valued inputs."));
  return DONE(expn_of(s, IN(1), p[0]));
}

/* The intervals' coefficients are made before the piecewise and closed
   over by its branches, each branch capturing its own two, as JAX's
   branches make theirs. */
static SrVal *pv_arr(SrNnScope *s, SrVal *p, SrVal *x) { return p && x ? KEEP(sr_jnp_polyval(s->I, p, x, 16)) : NULL; }

/* _expint1: 0 < x <= 2 */
static SrVal *expint1(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *x = a->v[0], **AB = closed(I);
  SrVal *f = OP(DIV, pv_arr(s, AB[0], x), pv_arr(s, AB[1], x));
  return DONE(OP(ADD, OP(ADD, OP(MUL, x, f), FL(EULER)), C1("jax.numpy.log", x)));
}

/* _eval_expint_k: the intervals above 2 */
static SrVal *expint_k(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *x = a->v[0], **AB = closed(I);
  SrVal *one = cst(s, x, 1.0);
  SrVal *w = OP(DIV, one, x);
  SrVal *f = w ? OP(DIV, pv_arr(s, AB[0], w), pv_arr(s, AB[1], w)) : NULL;
  f = f ? OP(ADD, OP(MUL, w, f), one) : NULL;
  return DONE(f ? OP(MUL, OP(MUL, C1("jax.numpy.exp", x), w), f) : NULL);
}

static SrVal *expi_pos(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  static const struct {
    const double *a, *b;
    int na, nb;
  } K[7] = {{expint1_a, expint1_b, NC(expint1_a), NC(expint1_b)}, {expint2_a, expint2_b, NC(expint2_a), NC(expint2_b)},
            {expint3_a, expint3_b, NC(expint3_a), NC(expint3_b)}, {expint4_a, expint4_b, NC(expint4_a), NC(expint4_b)},
            {expint5_a, expint5_b, NC(expint5_a), NC(expint5_b)}, {expint6_a, expint6_b, NC(expint6_a), NC(expint6_b)},
            {expint7_a, expint7_b, NC(expint7_a), NC(expint7_b)}};
  static const char *const names[7] = {"_expint1", "_expint2", "_expint3", "_expint4", "_expint5", "_expint6", "_expint7"};
  SrVal *x = a->v[0], *conds[6], *f[7];
  SrDtype dt = dtype_of(I, x);
  for (int i = 0; i < 7; i++) {
    SrVal *ab[2] = {coef_array(s, K[i].a, K[i].na, dt), coef_array(s, K[i].b, K[i].nb, dt)};
    f[i] = closure_fun(s, names[i], i ? expint_k : expint1, 2, ab);
  }
  conds[0] = OP(BITAND, OP(LT, cst(s, x, 0), x), OP(LE, x, cst(s, x, 2)));
  for (int i = 1; i < 6; i++)
    conds[i] = OP(BITAND, OP(LT, cst(s, x, 1 << i), x), OP(LE, x, cst(s, x, 1 << (i + 1))));
  return DONE(piecewise(s, x, 6, conds, 7, f, NULL, NULL));
}

/* -exp1(-x) */
static SrVal *expi_neg(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *v = sr_lookup_qualname("jax.scipy.special.exp1");
  return DONE(neg(s, v ? KEEP(sr_call1(I, v, neg(s, a->v[0]))) : NULL));
}

static SrVal *expi_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *x = a->v[0];
  if (sr_nn_promote_inexact(s, 1, &x, "expi") < 0) return DONE(NULL);
  if (sr_dtype_kind(dtype_of(I, x)) == SR_DK_COMPLEX)
    return DONE(sr_raise(I, "ValueError", "expi does not support complex-valued inputs."));
  SrVal *c = OP(LT, x, IN(0));
  SrVal *f[2] = {fun(s, "_expi_neg", expi_neg, NULL, NULL), fun(s, "_expi_pos", expi_pos, NULL, NULL)};
  return DONE(c ? piecewise(s, x, 1, &c, 2, f, NULL, NULL) : NULL);
}

static SrVal *expi_fun(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "expi() takes 1 positional argument");
  return sr_api_jit(I, "expi", expi_body, NULL, 1, a->v);
}

static SrVal *expi_cj;

/* expi_jvp (@jit): expi(x), jnp.exp(x) / x * x_dot */
static SrVal *expi_jvp_body(SrInterp *I, SrArgs *a) {
  SrVal **p, **t;
  if (jvp_args(I, a, 1, &p, &t, "expi_jvp") < 0) return NULL;
  SCOPE(I);
  SrVal *po = KEEP(sr_call1(I, expi_cj, p[0]));
  return DONE(po ? tuple2(s, po, OP(MUL, OP(DIV, C1("jax.numpy.exp", p[0]), p[0]), t[0])) : NULL);
}

static SrVal *expi_jvp(SrInterp *I, SrArgs *a) { return sr_api_jit(I, "expi_jvp", expi_jvp_body, NULL, a->n, a->v); }

static SrVal *sp_expi(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "expi", "x", p) < 0) return NULL;
  static const char *const names[] = {"expi_jvp"};
  static const SrBuiltinFn rules[] = {expi_jvp};
  SrVal *cj = custom_jvp_of(I, &expi_cj, "expi", expi_fun, 0, 1, names, rules);
  return cj ? sr_call1(I, cj, p[0]) : NULL;
}

/* ==== bessel_jn: Zhang and Jin's backward recurrence (BJNDD) ==== */

/* the cond's branches of _bessel_jn_scan_body_fun, on u = (bs, f) */
static SrVal *bessel_bs_update(SrInterp *I, SrArgs *a) {
  SrVal **u = carry(I, a->v[0], 2, "true_fn_update_bs");
  if (!u) return NULL;
  SCOPE(I);
  return DONE(OP(ADD, u[0], OP(MUL, FL(2.0), u[1])));
}

static SrVal *bessel_bs_keep(SrInterp *I, SrArgs *a) {
  SrVal **u = carry(I, a->v[0], 2, "false_fn_update_bs");
  return u ? sr_ref(u[0]) : NULL;
}

/* carry (f0, f1, bs, z), k: f = 2 (k + 1) f1 / z - f0, bs += 2 f at even k */
static SrVal *bessel_scan_body(SrInterp *I, SrArgs *a) {
  SrVal **c = a->n == 2 ? carry(I, a->v[0], 4, "_bessel_jn_scan_body_fun") : NULL;
  if (!c) return a->n == 2 ? NULL : sr_raise(I, "TypeError", "_bessel_jn_scan_body_fun() takes 2 positional arguments");
  SCOPE(I);
  SrVal *k = a->v[1], *f1 = c[1], *z = c[3];
  SrVal *f = OP(SUB, OP(DIV, OP(MUL, OP(MUL, FL(2.0), OP(ADD, k, FL(1.0))), f1), z), c[0]);
  SrVal *pred = f ? OP(EQ, C2("jax.numpy.mod", k, IN(2)), IN(0)) : NULL;
  SrVal *cv[3] = {pred, fun(s, "true_fn_update_bs", bessel_bs_update, NULL, NULL),
                  fun(s, "false_fn_update_bs", bessel_bs_keep, NULL, NULL)};
  const char *kw[1] = {"operand"};
  SrVal *u = pred ? tuple2(s, c[2], f) : NULL;
  SrVal *bs = u ? sr_nn_call(s, "jax.lax.cond", 3, cv, 1, kw, &u) : NULL;
  SrVal *nc[4] = {f1, f, bs, z};
  return DONE(bs ? tuple2(s, tuple_of(s, 4, nc), f) : NULL);
}

/* _bessel_jn(z, v=v, n_iter=n_iter) on a scalar z; closes over v, n_iter */
static SrVal *bessel_jn_one(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "_bessel_jn() takes 1 positional argument");
  SCOPE(I);
  SrVal *z = a->v[0];
  int64_t v = closed(I)[0]->i, n_iter = closed(I)[1]->i;
  SrVal *init[4] = {cst(s, z, 0.0), cst(s, z, 1e-16), cst(s, z, 0.0), z};
  SrVal *sv[3] = {fun(s, "_bessel_jn_scan_body_fun", bessel_scan_body, NULL, NULL), tuple_of(s, 4, init),
                  C2("jax.lax.iota", dtype_val(s, dtype_of(I, z)), IN(n_iter + 1))};
  const char *kw[1] = {"reverse"};
  SrVal *rev = KEEP(sr_bool(1));
  SrVal *r = sv[1] && sv[2] ? sr_nn_call(s, "jax.lax.scan", 3, sv, 1, kw, &rev) : NULL;
  if (!r) return DONE(NULL);
  SrVal *bs = r->seq.items[0]->seq.items[2], *j = r->seq.items[1];
  SrVal *f = KEEP(sr_getitem(I, j, IN(0)));
  SrVal *head = f ? KEEP(sr_getitem(I, j, KEEP(sr_slice_new(sr_none(), sr_int(NULL, v + 1), sr_none())))) : NULL;
  return DONE(head ? OP(DIV, head, OP(SUB, bs, f)) : NULL);
}

typedef struct BesselArgs {
  int64_t v, n_iter;
} BesselArgs;

/* bessel_jn's jit (v and n_iter static): _bessel_jn vmapped once per
   dimension of z, the orders moved to the front */
static SrVal *bessel_jn_body(SrInterp *I, SrArgs *a) {
  const BesselArgs *ba = sr_current_builtin(I)->data;
  SCOPE(I);
  SrVal *z = a->v[0];
  if (sr_nn_promote_inexact(s, 1, &z, "bessel_jn") < 0) return DONE(NULL);
  if (sr_dtype_kind(dtype_of(I, z)) == SR_DK_COMPLEX)
    return DONE(sr_raise(I, "ValueError", "complex input not supported."));
  SrVal *cv[2] = {IN(ba->v), IN(ba->n_iter)};
  SrVal *f = closure_fun(s, "_bessel_jn", bessel_jn_one, 2, cv);
  for (int d = 0; f && d < ty(I, z)->ndim; d++) f = C1("jax.vmap", f);
  SrVal *r = f ? KEEP(sr_call1(I, f, z)) : NULL;
  return DONE(r ? C3("jax.numpy.moveaxis", r, IN(-1), IN(0)) : NULL);
}

static SrVal *sp_bessel_jn(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "bessel_jn", "z, *, v=, n_iter=", p) < 0) return NULL;
  if (!p[1]) return sr_raise(I, "TypeError", "bessel_jn() missing 1 required keyword-only argument: 'v'");
  BesselArgs ba = {0, 50};
  if (p[1]->kind == SR_V_FLOAT) return sr_raise(I, "TypeError", "'float' object cannot be interpreted as an integer");
  if (sr_as_int(I, p[1], "Argument v of bessel_jn.", &ba.v) < 0) return NULL;
  if (p[2] && p[2]->kind == SR_V_FLOAT) ba.n_iter = (int64_t)p[2]->f;
  else if (p[2] && sr_as_int(I, p[2], "Argument n_iter of bessel_jn.", &ba.n_iter) < 0) return NULL;
  SCOPE(I);
  SrVal *z = KEEP(sr_jnp_asarray(I, p[0], -1));
  if (!z) return DONE(NULL);
  BesselArgs *d = sr_xmalloc(sizeof *d);
  *d = ba;
  return DONE(KEEP(sr_api_jit(I, "bessel_jn", bessel_jn_body, d, 1, &z)));
}

/* ==== hyp1f1, hyp2f1: Pearson, Olver and Porter's series (2014) ==== */

/* jnp.array(v, dtype=x.dtype) */
static SrVal *array_like(SrNnScope *s, double v, SrVal *x) {
  const char *kw[1] = {"dtype"};
  SrVal *dt = x ? dtype_val(s, dtype_of(s->I, x)) : NULL;
  SrVal *n = v == (int64_t)v ? IN((int64_t)v) : FL(v);
  return dt ? sr_nn_call(s, "jax.numpy.array", 1, &n, 1, kw, &dt) : NULL;
}

static SrVal *digamma(SrNnScope *s, SrVal *x) { return C1("jax.scipy.special.digamma", x); }
static SrVal *gamma_(SrNnScope *s, SrVal *x) { return C1("jax.scipy.special.gamma", x); }
static SrVal *jround(SrNnScope *s, SrVal *x) { return C1("jax.numpy.round", x); }
static SrVal *land(SrNnScope *s, SrVal *x, SrVal *y) { return C2("jax.numpy.logical_and", x, y); }
static SrVal *lor(SrNnScope *s, SrVal *x, SrVal *y) { return C2("jax.numpy.logical_or", x, y); }

/* lax.select_n(which, *cases) */
static SrVal *select_n(SrNnScope *s, SrVal *which, int n, SrVal **cases) {
  SrVal *v[8] = {which};
  for (int i = 0; i < n; i++) v[i + 1] = cases[i];
  for (int i = 0; i <= n; i++)
    if (!v[i]) return NULL;
  return sr_nn_call(s, "jax.lax.select_n", n + 1, v, 0, NULL, NULL);
}

/* jit(f) of a builtin that jnp.vectorize wraps, the vectorized function
   made once in *slot */
typedef struct JitVec {
  SrVal **slot;
  const char *name;
  SrBuiltinFn fn;
} JitVec;

static SrVal *jit_vec_body(SrInterp *I, SrArgs *a) {
  const JitVec *j = sr_current_builtin(I)->data;
  if (!*j->slot) {
    SrVal *vf = sr_lookup_qualname("jax.numpy.vectorize");
    if (!vf) return sr_raise(I, "NotImplementedError", "jax.numpy.vectorize is not available");
    SrVal *f = sr_builtin_with(j->name, j->fn, NULL, NULL);
    *j->slot = sr_call1(I, vf, f);
    sr_unref(f);
    if (!*j->slot) return NULL;
  }
  return sr_call(I, *j->slot, a);
}

static SrVal *jit_vec(SrInterp *I, SrVal **slot, const char *name, SrBuiltinFn fn, SrArgs *a) {
  JitVec *j = sr_xmalloc(sizeof *j);
  *j = (JitVec){slot, name, fn};
  return sr_api_jit(I, name, jit_vec_body, j, a->n, a->v);
}

/* the series' loops: state (serie, k, term) and the closed-over a, b[, c], x */
enum { SERIE, SK, TERM };

/* (k < 250) & (|term| / |serie| > eps) */
static SrVal *ratio_cond(SrInterp *I, SrArgs *a) {
  SrVal **st = carry(I, a->v[0], 3, "cond");
  if (!st) return NULL;
  SCOPE(I);
  SrVal *t = st[TERM];
  SrVal *lt = OP(LT, st[SK], IN(250));
  return DONE(lt ? OP(BITAND, lt, OP(GT, OP(DIV, C1("jax.lax.abs", t), C1("jax.lax.abs", st[SERIE])),
                                    cst(s, t, eps_of(dtype_of(I, t)))))
                 : NULL);
}

/* (k < 250) & (|term| > eps * |serie|) (_hyp2f1_serie's) */
static SrVal *rtol_cond(SrInterp *I, SrArgs *a) {
  SrVal **st = carry(I, a->v[0], 3, "cond");
  if (!st) return NULL;
  SCOPE(I);
  SrVal *t = st[TERM];
  SrVal *lt = OP(LT, st[SK], IN(250));
  SrVal *at = lt ? C1("jax.lax.abs", t) : NULL;
  return DONE(at ? OP(BITAND, lt, OP(GT, at, OP(MUL, cst(s, t, eps_of(dtype_of(I, t))), C1("jax.lax.abs", st[SERIE]))))
                 : NULL);
}

/* the derivative series' terms: what multiplies term in serie's sum */
enum { D_NONE, D_A1, D_B1, D_A2, D_B2, D_C2, D_ASYM };

/* One step of a series: serie += term (times the digamma difference of
   the derivative in mode m), term *= the ratio of consecutive terms. */
static SrVal *series_step(SrInterp *I, SrArgs *a, int m) {
  SrVal **st = carry(I, a->v[0], 3, "body");
  if (!st) return NULL;
  SCOPE(I);
  SrVal **cv = closed(I), *A = cv[0], *B = cv[1];
  int two = m == D_A2 || m == D_B2 || m == D_C2 || cv[3] != NULL;
  SrVal *C = two ? cv[2] : NULL, *X = two ? cv[3] : cv[2];
  SrVal *k = st[SK], *term = st[TERM], *serie;
  switch (m) {
  case D_A1: case D_A2: serie = OP(ADD, st[SERIE], OP(MUL, term, OP(SUB, digamma(s, OP(ADD, A, k)), digamma(s, A)))); break;
  case D_B1: serie = OP(ADD, st[SERIE], OP(MUL, term, OP(SUB, digamma(s, B), digamma(s, OP(ADD, B, k))))); break;
  case D_B2: serie = OP(ADD, st[SERIE], OP(MUL, term, OP(SUB, digamma(s, OP(ADD, B, k)), digamma(s, B)))); break;
  case D_C2: serie = OP(ADD, st[SERIE], OP(MUL, term, OP(SUB, digamma(s, C), digamma(s, OP(ADD, C, k))))); break;
  default: serie = OP(ADD, st[SERIE], term); break;
  }
  SrVal *ratio;
  if (m == D_ASYM) /* (b - a + k) * (1 - a + k) / (k + 1) / x */
    ratio = OP(DIV, OP(DIV, OP(MUL, OP(ADD, OP(SUB, B, A), k), OP(ADD, OP(SUB, IN(1), A), k)), OP(ADD, k, IN(1))), X);
  else if (!two) /* (a + k) / (b + k) * x / (k + 1) */
    ratio = OP(DIV, OP(MUL, OP(DIV, OP(ADD, A, k), OP(ADD, B, k)), X), OP(ADD, k, IN(1)));
  else if (m == D_NONE) /* (a + k - 1) * (b + k - 1) / (c + k - 1) / k * x */
    ratio = OP(MUL, OP(DIV, OP(DIV, OP(MUL, OP(SUB, OP(ADD, A, k), IN(1)), OP(SUB, OP(ADD, B, k), IN(1))),
                               OP(SUB, OP(ADD, C, k), IN(1))), k), X);
  else /* (a + k) * (b + k) / (c + k) / (k + 1) * x */
    ratio = OP(MUL, OP(DIV, OP(DIV, OP(MUL, OP(ADD, A, k), OP(ADD, B, k)), OP(ADD, C, k)), OP(ADD, k, IN(1))), X);
  SrVal *nt = serie && ratio ? OP(MUL, term, ratio) : NULL;
  SrVal *v[3] = {serie, nt ? OP(ADD, k, IN(1)) : NULL, nt};
  return DONE(tuple_of(s, 3, v));
}

static SrVal *step_plain(SrInterp *I, SrArgs *a) { return series_step(I, a, D_NONE); }
static SrVal *step_asym(SrInterp *I, SrArgs *a) { return series_step(I, a, D_ASYM); }
static SrVal *step_a1(SrInterp *I, SrArgs *a) { return series_step(I, a, D_A1); }
static SrVal *step_b1(SrInterp *I, SrArgs *a) { return series_step(I, a, D_B1); }
static SrVal *step_a2(SrInterp *I, SrArgs *a) { return series_step(I, a, D_A2); }
static SrVal *step_b2(SrInterp *I, SrArgs *a) { return series_step(I, a, D_B2); }
static SrVal *step_c2(SrInterp *I, SrArgs *a) { return series_step(I, a, D_C2); }

/* lax.while_loop(cond, body, (serie0, k0, term0))[0], the functions
   closing over a, b, c (NULL for 1F1), x */
static SrVal *series(SrNnScope *outer, SrBuiltinFn cf, SrBuiltinFn bf, SrVal *a, SrVal *b, SrVal *c, SrVal *x,
                     SrVal *serie0, SrVal *k0, SrVal *term0) {
  SCOPE(outer->I);
  SrVal *v[4] = {a, b, c ? c : x, c ? x : NULL};
  SrVal *init[3] = {serie0, k0, term0};
  SrVal *cl = cf && bf && a && b && x ? closure_fun(s, "cond", cf, c ? 4 : 3, v) : NULL;
  SrVal *bl = cl ? closure_fun(s, "body", bf, c ? 4 : 3, v) : NULL;
  SrVal *r = bl ? C3("jax.lax.while_loop", cl, bl, tuple_of(s, 3, init)) : NULL;
  return OUT(r ? r->seq.items[SERIE] : NULL);
}

/* a derivative's series: init (0, 1, a [* b] / [b | c] * x) */
static SrVal *deriv_series(SrInterp *I, SrArgs *a, SrBuiltinFn step, int n) {
  SCOPE(I);
  SrVal *A = a->v[0], *B = a->v[1], *C = n == 4 ? a->v[2] : NULL, *X = a->v[n - 1];
  SrVal *t0 = C ? OP(MUL, OP(DIV, OP(MUL, A, B), C), X) : OP(MUL, OP(DIV, A, B), X);
  return DONE(series(s, ratio_cond, step, A, B, C, X, IN(0), IN(1), t0));
}

static SrVal *h1_da_one(SrInterp *I, SrArgs *a) { return deriv_series(I, a, step_a1, 3); }
static SrVal *h1_db_one(SrInterp *I, SrArgs *a) { return deriv_series(I, a, step_b1, 3); }
static SrVal *h2_da_one(SrInterp *I, SrArgs *a) { return deriv_series(I, a, step_a2, 4); }
static SrVal *h2_db_one(SrInterp *I, SrArgs *a) { return deriv_series(I, a, step_b2, 4); }
static SrVal *h2_dc_one(SrInterp *I, SrArgs *a) { return deriv_series(I, a, step_c2, 4); }

/* _hyp1f1_serie(a, b, x) */
static SrVal *h1_serie(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *A = a->v[0], *B = a->v[1], *X = a->v[2];
  return DONE(series(s, ratio_cond, step_plain, A, B, NULL, X, IN(1), IN(1), OP(MUL, OP(DIV, A, B), X)));
}

/* _hyp1f1_asymptotic(a, b, x) */
static SrVal *h1_asymptotic(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *A = a->v[0], *B = a->v[1], *X = a->v[2];
  SrVal *t0 = OP(DIV, OP(MUL, OP(SUB, B, A), OP(SUB, IN(1), A)), X);
  SrVal *sr = series(s, ratio_cond, step_asym, A, B, NULL, X, IN(1), IN(1), t0);
  SrVal *g = sr ? OP(MUL, OP(DIV, gamma_(s, B), gamma_(s, A)), C1("jax.lax.exp", X)) : NULL;
  return DONE(g ? OP(MUL, OP(MUL, g, OP(POW, X, OP(SUB, A, B))), sr) : NULL);
}

static SrVal *hyp1f1_one(SrInterp *I, SrArgs *a) {
  if (a->n != 3) return sr_raise(I, "TypeError", "hyp1f1() takes 3 positional arguments");
  SCOPE(I);
  SrVal *p[3] = {a->v[0], a->v[1], a->v[2]};
  if (sr_nn_promote_inexact(s, 3, p, "hyp1f1") < 0) return DONE(NULL);
  SrVal *A = p[0], *B = p[1], *X = p[2];
  if (sr_dtype_kind(dtype_of(I, X)) == SR_DK_COMPLEX)
    return DONE(sr_raise(I, "ValueError", "hyp1f1 does not support complex-valued inputs."));
  SrVal *cv[6] = {OP(LT, C1("jax.lax.abs", X), IN(100)), fun(s, "_hyp1f1_serie", h1_serie, NULL, NULL),
                  fun(s, "_hyp1f1_asymptotic", h1_asymptotic, NULL, NULL), A, B, X};
  SrVal *res = cv[0] ? sr_nn_call(s, "jax.lax.cond", 6, cv, 0, NULL, NULL) : NULL;
  /* (a == 0) * 1 + ((a == b) & (a != 0)) * 2 + ((b == 0) & (a != 0)) * 3 */
  SrVal *i1 = res ? OP(MUL, OP(EQ, A, IN(0)), IN(1)) : NULL;
  SrVal *i2 = i1 ? OP(MUL, OP(BITAND, OP(EQ, A, B), OP(NE, A, IN(0))), IN(2)) : NULL;
  SrVal *i3 = i2 ? OP(MUL, OP(BITAND, OP(EQ, B, IN(0)), OP(NE, A, IN(0))), IN(3)) : NULL;
  SrVal *index = i3 ? OP(ADD, OP(ADD, i1, i2), i3) : NULL;
  SrVal *cases[4] = {res, array_like(s, 1, X), C1("jax.numpy.exp", X), array_like(s, INFINITY, X)};
  return DONE(index ? select_n(s, index, 4, cases) : NULL);
}

static SrVal *hyp1f1_vec, *hyp1f1_cj, *h1_da_vec, *h1_db_vec;

static SrVal *hyp1f1_fun(SrInterp *I, SrArgs *a) { return jit_vec(I, &hyp1f1_vec, "hyp1f1", hyp1f1_one, a); }

/* _hyp1f1_x_derivative (@jit): a / b * hyp1f1(a + 1, b + 1, x) */
static SrVal *h1_dx_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *A = a->v[0], *B = a->v[1];
  SrVal *v[3] = {OP(ADD, A, IN(1)), OP(ADD, B, IN(1)), a->v[2]};
  SrVal *h = call_n(s, hyp1f1_cj, 3, v);
  return DONE(h ? OP(MUL, OP(DIV, A, B), h) : NULL);
}

/* the defjvps rules: lambda t, primal_out, a, b, x: derivative(a, b, x) * t */
static SrVal *h1_rule(SrInterp *I, SrArgs *a, int which) {
  if (a->n != 5) return sr_raise(I, "TypeError", "<lambda>() takes 5 positional arguments");
  SCOPE(I);
  SrArgs da = {3, a->v + 2, 0, NULL, NULL, NULL};
  SrVal *d = which == 0   ? KEEP(jit_vec(I, &h1_da_vec, "_hyp1f1_a_derivative", h1_da_one, &da))
             : which == 1 ? KEEP(jit_vec(I, &h1_db_vec, "_hyp1f1_b_derivative", h1_db_one, &da))
                          : KEEP(sr_api_jit(I, "_hyp1f1_x_derivative", h1_dx_body, NULL, 3, a->v + 2));
  return DONE(d ? OP(MUL, d, a->v[0]) : NULL);
}

static SrVal *h1_rule_a(SrInterp *I, SrArgs *a) { return h1_rule(I, a, 0); }
static SrVal *h1_rule_b(SrInterp *I, SrArgs *a) { return h1_rule(I, a, 1); }
static SrVal *h1_rule_x(SrInterp *I, SrArgs *a) { return h1_rule(I, a, 2); }

static SrVal *sp_hyp1f1(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "hyp1f1", "a, b, x", p) < 0) return NULL;
  static const char *const names[] = {"<lambda>", "<lambda>", "<lambda>"};
  static const SrBuiltinFn rules[] = {h1_rule_a, h1_rule_b, h1_rule_x};
  SrVal *cj = custom_jvp_of(I, &hyp1f1_cj, "hyp1f1", hyp1f1_fun, 1, 3, names, rules);
  SrArgs ca = {3, p, 0, NULL, NULL, NULL};
  return cj ? sr_call(I, cj, &ca) : NULL;
}

/* _hyp2f1_terminal's fori_loop body; closes over a, b, c, x:
   term *= -(a - i + 1) / (c + i - 1) * (b + i - 1) / i * x; serie += term */
static SrVal *h2_terminal_body(SrInterp *I, SrArgs *a) {
  SrVal **st = a->n == 2 ? carry(I, a->v[1], 2, "body") : NULL;
  if (!st) return NULL;
  SCOPE(I);
  SrVal **cv = closed(I), *A = cv[0], *B = cv[1], *C = cv[2], *X = cv[3], *i = a->v[0];
  SrVal *r = OP(DIV, neg(s, OP(ADD, OP(SUB, A, i), IN(1))), OP(SUB, OP(ADD, C, i), IN(1)));
  r = r ? OP(MUL, OP(DIV, OP(MUL, r, OP(SUB, OP(ADD, B, i), IN(1))), i), X) : NULL;
  SrVal *term = r ? OP(MUL, st[1], r) : NULL;
  return DONE(term ? tuple2(s, OP(ADD, st[0], term), term) : NULL);
}

/* _hyp2f1_terminal: the series ends when a or b is a non-positive integer */
static SrVal *h2_terminal(SrNnScope *outer, SrVal *a, SrVal *b, SrVal *c, SrVal *x) {
  SCOPE(outer->I);
  SrVal *eps = cst(s, x, eps_of(dtype_of(s->I, x)) * 50);
  SrVal *ib = jround(s, b);
  SrVal *lt = OP(LT, b, a), *near = OP(LT, C1("jax.numpy.abs", OP(SUB, b, ib)), eps);
  SrVal *cint = OP(EQ, OP(MOD, c, IN(1)), IN(0));
  SrVal *cle = OP(LE, c, IN(0)), *cgt = OP(GT, c, b);
  SrVal *mask = land(s, lt, land(s, near, C1("jax.numpy.logical_not", land(s, cint, land(s, cle, cgt)))));
  SrVal *a2 = mask ? where3(s, mask, b, a) : NULL;
  SrVal *b2 = a2 ? where3(s, mask, a, b) : NULL;
  a2 = b2 ? C1("jax.numpy.abs", a2) : NULL;
  SrVal *init[2] = {array_like(s, 1, x), array_like(s, 1, x)};
  SrVal *cv[4] = {a2, b2, c, x};
  SrVal *r = a2 ? fori_loop(s, array_like(s, 1, a2), OP(ADD, a2, IN(1)), h2_terminal_body, 4, cv, tuple_of(s, 2, init))
                : NULL;
  return OUT(r ? r->seq.items[0] : NULL);
}

/* _hyp2f1_serie: the Taylor series */
static SrVal *h2_serie(SrNnScope *outer, SrVal *a, SrVal *b, SrVal *c, SrVal *x) {
  SCOPE(outer->I);
  return OUT(series(s, rtol_cond, step_plain, a, b, c, x, array_like(s, 0, x), array_like(s, 1, x), array_like(s, 1, x)));
}

/* _hyp2f1_digamma_transform's while loop, on the state
   (a, ax, b, d1, e, p, q, r, s, t, y) */
enum { DG_A, DG_AX, DG_B, DG_D1, DG_E, DG_P, DG_Q, DG_R, DG_S, DG_T, DG_Y, DG_N };

static SrVal *dg_cond(SrInterp *I, SrArgs *a) {
  SrVal **st = carry(I, a->v[0], DG_N, "cond");
  if (!st) return NULL;
  SCOPE(I);
  SrVal *y = st[DG_Y];
  SrVal *lt = OP(LT, st[DG_T], IN(250));
  SrVal *ge = lt ? OP(GE, C1("jax.numpy.abs", st[DG_Q]), OP(MUL, cst(s, y, eps_of(dtype_of(I, y))), C1("jax.numpy.abs", y)))
                 : NULL;
  return DONE(ge ? land(s, lt, ge) : NULL);
}

static SrVal *dg_body(SrInterp *I, SrArgs *a) {
  SrVal **st0 = carry(I, a->v[0], DG_N, "body");
  if (!st0) return NULL;
  SCOPE(I);
  SrVal *st[DG_N];
  memcpy(st, st0, sizeof st);
  SrVal *A = st[DG_A], *B = st[DG_B], *d1 = st[DG_D1], *e = st[DG_E], *t = st[DG_T], *sv = st[DG_S];
  /* digamma(1 + t) + digamma(1 + t + e) - digamma(a + t + d1) - digamma(b + t + d1) - ax */
  SrVal *r = OP(ADD, digamma(s, OP(ADD, FL(1.0), t)), digamma(s, OP(ADD, OP(ADD, FL(1.0), t), e)));
  r = r ? OP(SUB, r, digamma(s, OP(ADD, OP(ADD, A, t), d1))) : NULL;
  r = r ? OP(SUB, OP(SUB, r, digamma(s, OP(ADD, OP(ADD, B, t), d1))), st[DG_AX]) : NULL;
  SrVal *q = r ? OP(MUL, st[DG_P], r) : NULL;
  SrVal *y = q ? OP(ADD, st[DG_Y], q) : NULL;
  SrVal *p = y ? OP(MUL, st[DG_P], OP(DIV, OP(MUL, sv, OP(ADD, OP(ADD, A, t), d1)), OP(ADD, t, FL(1.0)))) : NULL;
  p = p ? OP(MUL, p, OP(DIV, OP(ADD, OP(ADD, B, t), d1), OP(ADD, OP(ADD, t, FL(1.0)), e))) : NULL;
  st[DG_R] = r;
  st[DG_Q] = q;
  st[DG_Y] = y;
  st[DG_P] = p;
  st[DG_T] = p ? OP(ADD, t, FL(1.0)) : NULL;
  return DONE(tuple_of(s, DG_N, st));
}

/* compute_sum's fori_loop body on (a, b, d2, e, p, s, t, y1) */
enum { CS_A, CS_B, CS_D2, CS_E, CS_P, CS_S, CS_T, CS_Y1, CS_N };

static SrVal *cs_body(SrInterp *I, SrArgs *a) {
  SrVal **st0 = a->n == 2 ? carry(I, a->v[1], CS_N, "for_body") : NULL;
  if (!st0) return NULL;
  SCOPE(I);
  SrVal *st[CS_N];
  memcpy(st, st0, sizeof st);
  SrVal *t = st[CS_T], *d2 = st[CS_D2];
  SrVal *r = OP(ADD, OP(SUB, FL(1.0), st[CS_E]), t);
  SrVal *f = r ? OP(DIV, OP(MUL, OP(MUL, st[CS_S], OP(ADD, OP(ADD, st[CS_A], t), d2)), OP(ADD, OP(ADD, st[CS_B], t), d2)), r)
               : NULL;
  SrVal *p = f ? OP(MUL, st[CS_P], f) : NULL;
  st[CS_T] = p ? OP(ADD, t, FL(1.0)) : NULL;
  st[CS_P] = st[CS_T] ? OP(DIV, p, st[CS_T]) : NULL;
  st[CS_Y1] = st[CS_P] ? OP(ADD, st[CS_Y1], st[CS_P]) : NULL;
  return DONE(tuple_of(s, CS_N, st));
}

/* compute_sum(y) of _hyp2f1_digamma_transform */
static SrVal *dg_compute_sum(SrNnScope *outer, SrVal *a, SrVal *b, SrVal *c, SrVal *x, SrVal *y, SrVal *sv, SrVal *rd,
                             SrVal *e, SrVal *d1, SrVal *d2, SrVal *ard) {
  SCOPE(outer->I);
  SrVal *y1 = array_like(s, 1, x), *t = array_like(s, 0, x), *p = array_like(s, 1, x);
  SrVal *init[CS_N] = {a, b, d2, e, p, sv, t, y1};
  SrVal *r = p ? fori_loop(s, IN(1), ard, cs_body, 0, NULL, tuple_of(s, CS_N, init)) : NULL;
  if (!r) return OUT(NULL);
  y1 = r->seq.items[CS_Y1];
  p = gamma_(s, c);
  y1 = p ? OP(MUL, y1, OP(DIV, OP(MUL, gamma_(s, e), p), OP(MUL, gamma_(s, OP(ADD, a, d1)), gamma_(s, OP(ADD, b, d1)))))
         : NULL;
  y = y1 ? OP(MUL, y, OP(DIV, p, OP(MUL, gamma_(s, OP(ADD, a, d2)), gamma_(s, OP(ADD, b, d2))))) : NULL;
  y = y ? where3(s, OP(NE, OP(BITAND, ard, IN(1)), IN(0)), neg(s, y), y) : NULL;
  SrVal *q = y ? OP(POW, sv, rd) : NULL;
  return OUT(q ? where3(s, OP(GT, rd, IN(0)), OP(ADD, OP(MUL, y, q), y1), OP(ADD, y, OP(MUL, y1, q))) : NULL);
}

/* _hyp2f1_digamma_transform: AMS55 15.3.10-12 */
static SrVal *h2_digamma_transform(SrNnScope *outer, SrVal *a, SrVal *b, SrVal *c, SrVal *x) {
  SCOPE(outer->I);
  SrVal *d = OP(SUB, OP(SUB, c, a), b);
  SrVal *sv = OP(SUB, IN(1), x);
  SrVal *rd = jround(s, d);
  SrVal *pos = OP(GE, rd, IN(0));
  SrVal *e = where3(s, pos, d, neg(s, d));
  SrVal *d1 = where3(s, OP(GE, rd, IN(0)), d, array_like(s, 0, d));
  SrVal *d2 = where3(s, OP(GE, rd, IN(0)), array_like(s, 0, d), d);
  SrVal *ard = astype(s, where3(s, OP(GE, rd, IN(0)), rd, neg(s, rd)), SR_I32);
  SrVal *ax = ard ? C1("jax.numpy.log", sv) : NULL;
  SrVal *y = ax ? OP(ADD, digamma(s, FL(1.0)), digamma(s, OP(ADD, FL(1.0), e))) : NULL;
  y = y ? OP(SUB, OP(SUB, y, digamma(s, OP(ADD, a, d1))), digamma(s, OP(ADD, b, d1))) : NULL;
  y = y ? OP(DIV, OP(SUB, y, ax), gamma_(s, OP(ADD, e, FL(1.0)))) : NULL;
  SrVal *p = y ? OP(DIV, OP(MUL, OP(MUL, OP(ADD, a, d1), OP(ADD, b, d1)), sv), gamma_(s, OP(ADD, e, FL(2.0)))) : NULL;
  SrVal *init[DG_N] = {a, ax, b, d1, e, p, y, array_like(s, 0, x), sv, array_like(s, 1, x), y};
  SrVal *st = p ? while_loop(s, dg_cond, dg_body, 0, NULL, tuple_of(s, DG_N, init)) : NULL;
  if (!st) return OUT(NULL);
  y = st->seq.items[DG_Y];
  SrVal *z = OP(EQ, rd, IN(0));
  SrVal *y0 = z ? OP(DIV, OP(MUL, y, gamma_(s, c)), OP(MUL, gamma_(s, a), gamma_(s, b))) : NULL;
  SrVal *cs = y0 ? dg_compute_sum(s, a, b, c, x, y, sv, rd, e, d1, d2, ard) : NULL;
  return OUT(cs ? where3(s, z, y0, cs) : NULL);
}

/* _hyp2f1_terminal_or_serie */
static SrVal *h2_terminal_or_serie(SrNnScope *outer, SrVal *a, SrVal *b, SrVal *c, SrVal *x) {
  SCOPE(outer->I);
  SrVal *eps = cst(s, x, eps_of(dtype_of(s->I, x)) * 50);
  SrVal *d = OP(SUB, OP(SUB, c, a), b);
  SrVal *ia = jround(s, a), *ib = jround(s, b), *id = jround(s, d);
  SrVal *nia = land(s, OP(LE, a, IN(0)), OP(LT, C1("jax.numpy.abs", OP(SUB, a, ia)), eps));
  SrVal *nib = land(s, OP(LE, b, IN(0)), OP(LT, C1("jax.numpy.abs", OP(SUB, b, ib)), eps));
  SrVal *nab = lor(s, nia, nib);
  SrVal *not_nab = C1("jax.numpy.logical_not", nab);
  SrVal *big = land(s, OP(GT, x, FL(0.9)), not_nab);
  SrVal *i1 = where3(s, OP(GE, C1("jax.numpy.abs", OP(SUB, d, id)), eps), IN(0), IN(1));
  SrVal *i2 = where3(s, nab, IN(2), IN(0));
  SrVal *index = where3(s, big, i1, i2);
  SrVal *cases[3];
  cases[0] = index ? h2_serie(s, a, b, c, x) : NULL;
  cases[1] = cases[0] ? h2_digamma_transform(s, a, b, c, x) : NULL;
  cases[2] = cases[1] ? h2_terminal(s, a, b, c, x) : NULL;
  return OUT(cases[2] ? select_n(s, index, 3, cases) : NULL);
}

/* hyp2f1's index: which of its seven cases holds */
static SrVal *h2_index(SrNnScope *outer, SrVal *a, SrVal *b, SrVal *c, SrVal *x, SrVal *d, SrVal *sv, SrVal *eps) {
  SCOPE(outer->I);
  SrVal *id = jround(s, d);
  SrVal *k[8];
  k[0] = lor(s, OP(EQ, x, IN(0)), land(s, lor(s, OP(EQ, a, IN(0)), OP(EQ, b, IN(0))), OP(NE, c, IN(0))));
  k[1] = lor(s, OP(EQ, c, IN(0)), land(s, OP(LT, c, IN(0)), OP(EQ, OP(MOD, c, IN(1)), IN(0))));
  k[2] = land(s, OP(LE, d, IN(-1)),
              C1("jax.numpy.logical_not", land(s, OP(GE, C1("jax.numpy.abs", OP(SUB, d, id)), eps), OP(LT, sv, IN(0)))));
  k[3] = land(s, OP(LE, d, IN(0)), OP(EQ, x, IN(1)));
  k[4] = land(s, OP(LT, x, IN(1)), OP(EQ, b, c));
  k[5] = land(s, OP(LT, x, IN(1)), OP(EQ, a, c));
  k[6] = OP(GT, x, IN(1));
  k[7] = OP(EQ, x, IN(1));
  static const int val[8] = {0, 1, 2, 1, 3, 4, 1, 5};
  SrVal *index = where3(s, k[7], IN(5), IN(6));
  for (int i = 6; index && i >= 0; i--) index = where3(s, k[i], IN(val[i]), index);
  return OUT(index);
}

static SrVal *hyp2f1_one(SrInterp *I, SrArgs *a) {
  if (a->n != 4) return sr_raise(I, "TypeError", "hyp2f1() takes 4 positional arguments");
  SCOPE(I);
  SrVal *p[4] = {a->v[0], a->v[1], a->v[2], a->v[3]};
  if (sr_nn_promote_inexact(s, 4, p, "hyp2f1") < 0) return DONE(NULL);
  SrVal *A = p[0], *B = p[1], *C = p[2], *X = p[3];
  SrVal *eps = cst(s, X, eps_of(dtype_of(I, X)) * 50);
  SrVal *d = OP(SUB, OP(SUB, C, A), B);
  SrVal *sv = OP(SUB, IN(1), X);
  SrVal *ca = OP(SUB, C, A), *cb = OP(SUB, C, B);
  SrVal *index = ca && cb ? h2_index(s, A, B, C, X, d, sv, eps) : NULL;
  SrVal *cases[7] = {0};
  cases[0] = index ? array_like(s, 1, X) : NULL;
  cases[1] = cases[0] ? array_like(s, INFINITY, X) : NULL;
  SrVal *sd = cases[1] ? OP(POW, sv, d) : NULL;
  cases[2] = sd ? OP(MUL, sd, h2_terminal_or_serie(s, ca, cb, C, X)) : NULL;
  cases[3] = cases[2] ? OP(POW, sv, neg(s, A)) : NULL;
  cases[4] = cases[3] ? OP(POW, sv, neg(s, B)) : NULL;
  cases[5] = cases[4] ? OP(DIV, OP(MUL, gamma_(s, C), gamma_(s, d)), OP(MUL, gamma_(s, ca), gamma_(s, cb))) : NULL;
  cases[6] = cases[5] ? h2_terminal_or_serie(s, A, B, C, X) : NULL;
  return DONE(cases[6] ? select_n(s, index, 7, cases) : NULL);
}

static SrVal *hyp2f1_vec, *hyp2f1_cj, *h2_da_vec, *h2_db_vec, *h2_dc_vec;

static SrVal *hyp2f1_fun(SrInterp *I, SrArgs *a) { return jit_vec(I, &hyp2f1_vec, "hyp2f1", hyp2f1_one, a); }

/* _hyp2f1_x_derivative (@jit): a * b / c * hyp2f1(a + 1, b + 1, c + 1, x) */
static SrVal *h2_dx_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *A = a->v[0], *B = a->v[1], *C = a->v[2];
  SrVal *v[4] = {OP(ADD, A, IN(1)), OP(ADD, B, IN(1)), OP(ADD, C, IN(1)), a->v[3]};
  SrVal *h = call_n(s, hyp2f1_cj, 4, v);
  return DONE(h ? OP(MUL, OP(DIV, OP(MUL, A, B), C), h) : NULL);
}

static SrVal *h2_rule(SrInterp *I, SrArgs *a, int which) {
  if (a->n != 6) return sr_raise(I, "TypeError", "<lambda>() takes 6 positional arguments");
  SCOPE(I);
  SrArgs da = {4, a->v + 2, 0, NULL, NULL, NULL};
  SrVal *d = which == 0   ? KEEP(jit_vec(I, &h2_da_vec, "_hyp2f1_a_derivative", h2_da_one, &da))
             : which == 1 ? KEEP(jit_vec(I, &h2_db_vec, "_hyp2f1_b_derivative", h2_db_one, &da))
             : which == 2 ? KEEP(jit_vec(I, &h2_dc_vec, "_hyp2f1_c_derivative", h2_dc_one, &da))
                          : KEEP(sr_api_jit(I, "_hyp2f1_x_derivative", h2_dx_body, NULL, 4, a->v + 2));
  return DONE(d ? OP(MUL, d, a->v[0]) : NULL);
}

static SrVal *h2_rule_a(SrInterp *I, SrArgs *a) { return h2_rule(I, a, 0); }
static SrVal *h2_rule_b(SrInterp *I, SrArgs *a) { return h2_rule(I, a, 1); }
static SrVal *h2_rule_c(SrInterp *I, SrArgs *a) { return h2_rule(I, a, 2); }
static SrVal *h2_rule_x(SrInterp *I, SrArgs *a) { return h2_rule(I, a, 3); }

static SrVal *sp_hyp2f1(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "hyp2f1", "a, b, c, x", p) < 0) return NULL;
  static const char *const names[] = {"<lambda>", "<lambda>", "<lambda>", "<lambda>"};
  static const SrBuiltinFn rules[] = {h2_rule_a, h2_rule_b, h2_rule_c, h2_rule_x};
  SrVal *cj = custom_jvp_of(I, &hyp2f1_cj, "hyp2f1", hyp2f1_fun, 1, 4, names, rules);
  SrArgs ca = {4, p, 0, NULL, NULL, NULL};
  return cj ? sr_call(I, cj, &ca) : NULL;
}

/* ==== sph_harm_y, wofz: complex results ==== */

static SrVal *sp_sph_harm_y(SrInterp *I, SrArgs *a) {
  (void)a;
  return sr_raise(I, "NotImplementedError",
                  "jax.scipy.special.sph_harm_y returns complex values, and shardrepl has no complex dtypes");
}

static SrVal *sp_wofz(SrInterp *I, SrArgs *a) {
  (void)a;
  return sr_raise(I, "NotImplementedError",
                  "jax.scipy.special.wofz returns complex values, and shardrepl has no complex dtypes");
}

void sr_scipy_special_series_init(void) {
  static const struct {
    const char *names;
    SrBuiltinFn fn;
    const char *doc;
  } defs[] = {
      {"jax.scipy.special.bernoulli", sp_bernoulli, "bernoulli(n): the Bernoulli numbers B_0 .. B_n (Chowla and Hartung)"},
      {"jax.scipy.special.dawsn", sp_dawsn, "dawsn(x): Dawson's integral exp(-x**2) int_0^x exp(t**2) dt, a custom_jvp"},
      {"jax.scipy.special.spence", sp_spence, "spence(x): Spence's function int_1^x log(t) / (1 - t) dt, NaN for x < 0"},
      {"jax.scipy.special.zeta", sp_zeta, "zeta(x, q): the Hurwitz zeta function, lax.zeta (a custom_jvp on a series)"},
      {"jax.scipy.special.fresnel", sp_fresnel, "fresnel(x): the Fresnel integrals (S(x), C(x)), cephes' fresnl, a custom_jvp"},
      {"jax.scipy.special.owens_t", sp_owens_t, "owens_t(h, a): Owen's T function by 13-point quadrature, a custom_jvp"},
      {"jax.scipy.special.sici", sp_sici, "sici(x): the sine and cosine integrals (Si(x), Ci(x)), a custom_jvp of a jit"},
      {"jax.scipy.special.exp1", sp_exp1, "exp1(x): the exponential integral E_1(x), expn(1, x)"},
      {"jax.scipy.special.expi", sp_expi, "expi(x): the exponential integral Ei(x), cephes' ei (a custom_jvp of a jit)"},
      {"jax.scipy.special.expn", sp_expn, "expn(n, x): the generalized exponential integral E_n(x) (series, continued fraction)"},
      {"jax.scipy.special.bessel_jn", sp_bessel_jn, "bessel_jn(z, *, v, n_iter=50): J_0(z) .. J_v(z), a backward recurrence (a reversed scan)"},
      {"jax.scipy.special.hyp1f1", sp_hyp1f1, "hyp1f1(a, b, x): the confluent hypergeometric function 1F1(a; b; x), a custom_jvp"},
      {"jax.scipy.special.hyp2f1", sp_hyp2f1, "hyp2f1(a, b, c, x): the Gauss hypergeometric function 2F1(a, b; c; x), a custom_jvp"},
      {"jax.scipy.special.sph_harm_y", sp_sph_harm_y, "sph_harm_y(n, m, theta, phi): not here (its values are complex)"},
      {"jax.scipy.special.wofz", sp_wofz, "wofz(z): not here (the Faddeeva function's values are complex)"},
  };
  for (size_t i = 0; i < sizeof defs / sizeof *defs; i++) sr_def(defs[i].names, defs[i].fn, defs[i].doc);
}
