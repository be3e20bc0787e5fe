/* ad_elementwise.c: JVP and transpose rules of the elementwise
 * primitives (lax/lax.py: defjvp, defjvp2, deflinear, defbilinear and the
 * explicit rules of add, sub, div, select_n, convert_element_type).
 *
 * The rules compute what JAX's do, in the same order, so that a
 * linearized program emits the same known equations in the same places:
 * standard_jvp binds the primal first, then each nonzero input's tangent
 * term in input order, summed with add_any.
 */
#include "ad/ad_rules.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/intern.h"

/* The equation's primal output (a single result). */
static SrVal *primal1(SrAd *ad, const SrEqn *e, SrVal **x) { return ad_bind_eqn1(ad, e, x); }

/* A unary op with e's accuracy param, as sin(x, accuracy=accuracy). */
static SrVal *unop_like(SrAd *ad, int prim, SrVal *x, const SrEqn *e) {
  static const char *acc;
  if (!acc) acc = sr_intern_cstr("accuracy");
  SrVal *a = sr_eqn_param(e, acc);
  if (a && sr_prims[prim].pp == SR_PP_ACCURACY) {
    SrParam p = {acc, a};
    return ad_bind(ad, prim, 1, &x, 1, &p);
  }
  return ad_unop(ad, prim, x);
}

static int done1(SrVal **y, SrVal **ty) { return y[0] && ty[0] ? 0 : -1; }

/* ---- zero and linear JVPs ---- */

/* defjvp_zero: the primal, and a zero tangent. */
static int jvp_zero(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  (void)t;
  SrVal *r = ad_bind_eqn(ad, e, x);
  if (!r) return -1;
  for (uint32_t i = 0; i < e->nout; i++) {
    y[i] = r->seq.items[i];
    ty[i] = NULL;
  }
  return 0;
}

/* linear_jvp: the primal, and the same op on the tangents (zeros
   instantiated). */
int sr_ad_jvp_linear(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty);
int sr_ad_jvp_linear(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  SrVal *r = ad_bind_eqn(ad, e, x);
  if (!r) return -1;
  for (uint32_t i = 0; i < e->nout; i++) y[i] = r->seq.items[i];
  SrVal *small[16], **tt = e->nin <= 16 ? small : sr_xcalloc(e->nin, sizeof *tt);
  for (uint32_t i = 0; i < e->nin; i++)
    tt[i] = t[i] ? t[i] : ad_zeros(ad, sr_ad_tangent_type(ad_type(ad, x[i])));
  SrVal *rt = ad_bind_eqn(ad, e, tt);
  if (tt != small) free(tt);
  if (!rt) return -1;
  for (uint32_t i = 0; i < e->nout; i++) ty[i] = rt->seq.items[i];
  return 0;
}

/* ---- unary ---- */

#define JVP1(name) static int name(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty)

JVP1(jvp_neg) {
  y[0] = primal1(ad, e, x);
  ty[0] = ad_neg(ad, t[0]);
  return done1(y, ty);
}

JVP1(jvp_exp) {
  SrVal *ans = y[0] = primal1(ad, e, x);
  ty[0] = ad_mul(ad, t[0], ans);
  return done1(y, ty);
}

JVP1(jvp_exp2) {
  SrVal *ans = y[0] = primal1(ad, e, x);
  SrVal *l2 = unop_like(ad, SR_P_log, ad_const(ad, x[0], 2.0), e);
  ty[0] = ad_mul(ad, l2, ad_mul(ad, t[0], ans));
  return done1(y, ty);
}

JVP1(jvp_log) {
  y[0] = primal1(ad, e, x);
  ty[0] = ad_div(ad, t[0], x[0]);
  return done1(y, ty);
}

JVP1(jvp_expm1) {
  SrVal *ans = y[0] = primal1(ad, e, x);
  ty[0] = ad_mul(ad, t[0], ad_binop(ad, SR_P_add, ans, ad_scalar_like(ad, ans, 1.0)));
  return done1(y, ty);
}

JVP1(jvp_log1p) {
  y[0] = primal1(ad, e, x);
  ty[0] = ad_div(ad, t[0], ad_binop(ad, SR_P_add, x[0], ad_scalar_like(ad, x[0], 1.0)));
  return done1(y, ty);
}

JVP1(jvp_sin) {
  y[0] = primal1(ad, e, x);
  ty[0] = ad_mul(ad, t[0], unop_like(ad, SR_P_cos, x[0], e));
  return done1(y, ty);
}

JVP1(jvp_cos) {
  y[0] = primal1(ad, e, x);
  ty[0] = ad_neg(ad, ad_mul(ad, t[0], unop_like(ad, SR_P_sin, x[0], e)));
  return done1(y, ty);
}

JVP1(jvp_tan) {
  SrVal *ans = y[0] = primal1(ad, e, x);
  SrVal *sq = ad_unop(ad, SR_P_square, ans);
  ty[0] = ad_mul(ad, t[0], ad_binop(ad, SR_P_add, ad_const(ad, x[0], 1.0), sq));
  return done1(y, ty);
}

JVP1(jvp_tanh) {
  /* mul(add(g, mul(g, ans)), sub(_one(x), ans)) (default accuracy) */
  SrVal *ans = y[0] = primal1(ad, e, x);
  SrVal *a = ad_binop(ad, SR_P_add, t[0], ad_mul(ad, t[0], ans));
  SrVal *b = ad_binop(ad, SR_P_sub, ad_scalar_like(ad, x[0], 1.0), ans);
  ty[0] = ad_mul(ad, a, b);
  return done1(y, ty);
}

JVP1(jvp_logistic) {
  /* mul(g, mul(ans, sub(_one(ans), ans))) */
  SrVal *ans = y[0] = primal1(ad, e, x);
  SrVal *b = ad_mul(ad, ans, ad_binop(ad, SR_P_sub, ad_scalar_like(ad, ans, 1.0), ans));
  ty[0] = ad_mul(ad, t[0], b);
  return done1(y, ty);
}

JVP1(jvp_sqrt) {
  SrVal *ans = y[0] = primal1(ad, e, x);
  ty[0] = ad_mul(ad, t[0], ad_div(ad, ad_const(ad, x[0], 0.5), ans));
  return done1(y, ty);
}

JVP1(jvp_rsqrt) {
  SrVal *ans = y[0] = primal1(ad, e, x);
  ty[0] = ad_mul(ad, t[0], ad_mul(ad, ad_const(ad, x[0], -0.5), ad_div(ad, ans, x[0])));
  return done1(y, ty);
}

JVP1(jvp_cbrt) {
  SrVal *ans = y[0] = primal1(ad, e, x);
  SrVal *p = ad_bindv(ad, SR_P_integer_pow, 1, &ans, "y", sr_int(NULL, -2), NULL);
  ty[0] = ad_mul(ad, t[0], ad_mul(ad, ad_const(ad, x[0], 1.0 / 3.0), p));
  return done1(y, ty);
}

JVP1(jvp_square) {
  y[0] = primal1(ad, e, x);
  ty[0] = ad_mul(ad, t[0], ad_mul(ad, ad_const(ad, x[0], 2.0), x[0]));
  return done1(y, ty);
}

JVP1(jvp_integer_pow) {
  static const char *ykey;
  if (!ykey) ykey = sr_intern_cstr("y");
  y[0] = primal1(ad, e, x);
  SrVal *yp = sr_eqn_param(e, ykey);
  int64_t p = yp && yp->kind == SR_V_INT ? yp->i : 1;
  if (p == 0) {
    ty[0] = NULL; /* _zeros(g) */
    return y[0] ? 0 : -1;
  }
  if (p == 1) {
    ty[0] = t[0];
  } else if (p == 2) {
    ty[0] = ad_mul(ad, t[0], ad_mul(ad, ad_const(ad, x[0], 2.0), x[0]));
  } else {
    SrVal *q = ad_bindv(ad, SR_P_integer_pow, 1, &x[0], "y", sr_int(NULL, p - 1), NULL);
    ty[0] = ad_mul(ad, t[0], ad_mul(ad, ad_const(ad, x[0], (double)p), q));
  }
  return done1(y, ty);
}

JVP1(jvp_erf) {
  y[0] = primal1(ad, e, x);
  SrVal *ex = ad_unop(ad, SR_P_exp, ad_neg(ad, ad_unop(ad, SR_P_square, x[0])));
  ty[0] = ad_mul(ad, ad_const(ad, x[0], 2.0 / sqrt(M_PI)), ad_mul(ad, t[0], ex));
  return done1(y, ty);
}

JVP1(jvp_erf_inv) {
  SrVal *ans = y[0] = primal1(ad, e, x);
  SrVal *ex = ad_unop(ad, SR_P_exp, ad_unop(ad, SR_P_square, ans));
  ty[0] = ad_mul(ad, ad_const(ad, x[0], sqrt(M_PI) / 2.0), ad_mul(ad, t[0], ex));
  return done1(y, ty);
}

JVP1(jvp_abs) {
  /* select(ge(x, _zero(x)), g, neg(g)) */
  y[0] = primal1(ad, e, x);
  SrVal *ge = ad_binop(ad, SR_P_ge, x[0], ad_scalar_like(ad, x[0], 0.0));
  SrVal *cases[2] = {ad_neg(ad, t[0]), t[0]};
  ty[0] = ad_select_n(ad, ge, 2, cases);
  return done1(y, ty);
}

JVP1(jvp_convert) {
  static const char *nd;
  if (!nd) nd = sr_intern_cstr("new_dtype");
  y[0] = primal1(ad, e, x);
  if (!y[0]) return -1;
  const SrType *yt = ad_type(ad, y[0]);
  if (!sr_ad_differentiable(yt)) {
    ty[0] = NULL;
    return 0;
  }
  ty[0] = ad_bind_eqn1(ad, e, t);
  return done1(y, ty);
}

/* ---- binary ---- */

JVP1(jvp_add) {
  SrVal *out = y[0] = primal1(ad, e, x);
  const SrType *ot = ad_type(ad, out);
  if (!ot) return -1;
  if (!t[0]) ty[0] = ad_maybe_broadcast(ad, t[1], sr_ad_tangent_type(ot));
  else if (!t[1]) ty[0] = ad_maybe_broadcast(ad, t[0], sr_ad_tangent_type(ot));
  else ty[0] = ad_binop(ad, SR_P_add, t[0], t[1]);
  return done1(y, ty);
}

JVP1(jvp_sub) {
  SrVal *out = y[0] = primal1(ad, e, x);
  const SrType *ot = ad_type(ad, out);
  if (!ot) return -1;
  if (!t[0]) ty[0] = ad_maybe_broadcast(ad, ad_neg(ad, t[1]), sr_ad_tangent_type(ot));
  else if (!t[1]) ty[0] = ad_maybe_broadcast(ad, t[0], sr_ad_tangent_type(ot));
  else ty[0] = ad_binop(ad, SR_P_sub, t[0], t[1]);
  return done1(y, ty);
}

/* mul(xdot, y) + mul(x, ydot), each with e's params (out_dtype) */
static SrVal *mul_like(SrAd *ad, const SrEqn *e, SrVal *a, SrVal *b) {
  SrVal *in[2] = {a, b};
  if (!a || !b) return NULL;
  if (e->nparams == 0) return ad_mul(ad, a, b);
  SrVal *r = ad_bind(ad, SR_P_mul, 2, in, (int)e->nparams, e->params);
  return r;
}

JVP1(jvp_mul) {
  y[0] = primal1(ad, e, x);
  SrVal *a = t[0] ? mul_like(ad, e, t[0], x[1]) : NULL;
  SrVal *b = t[1] ? mul_like(ad, e, x[0], t[1]) : NULL;
  ty[0] = ad_add_tangents(ad, a, b);
  return done1(y, ty);
}

JVP1(jvp_div) {
  y[0] = primal1(ad, e, x);
  SrVal *a = t[0] ? ad_div(ad, t[0], x[1]) : NULL;
  SrVal *b = NULL;
  if (t[1]) {
    SrVal *p = ad_bindv(ad, SR_P_integer_pow, 1, &x[1], "y", sr_int(NULL, -2), NULL);
    b = ad_mul(ad, ad_mul(ad, ad_neg(ad, t[1]), x[0]), p);
  }
  ty[0] = ad_add_tangents(ad, a, b);
  return done1(y, ty);
}

/* _balanced_eq(x, z, y): 1 where x == z, halved where y == z too. */
static SrVal *balanced_eq(SrAd *ad, SrVal *xv, SrVal *z, SrVal *yv) {
  const SrType *zt = ad_type(ad, z);
  if (!zt) return NULL;
  SrVal *ones = ad_full(ad, zt, 1.0), *zeros = ad_full(ad, zt, 0.0), *twos = ad_full(ad, zt, 2.0);
  SrVal *c1[2] = {zeros, ones};
  SrVal *num = ad_select_n(ad, ad_binop(ad, SR_P_eq, xv, z), 2, c1);
  SrVal *c2[2] = {ones, twos};
  SrVal *den = ad_select_n(ad, ad_binop(ad, SR_P_eq, yv, z), 2, c2);
  return ad_div(ad, num, den);
}

JVP1(jvp_minmax) {
  SrVal *ans = y[0] = primal1(ad, e, x);
  SrVal *a = t[0] ? ad_mul(ad, t[0], balanced_eq(ad, x[0], ans, x[1])) : NULL;
  SrVal *b = t[1] ? ad_mul(ad, t[1], balanced_eq(ad, x[1], ans, x[0])) : NULL;
  ty[0] = ad_add_tangents(ad, a, b);
  return done1(y, ty);
}

JVP1(jvp_pow) {
  /* only the inexact cases: d/dx = y * x**(y-1), d/dy = log(x) * ans */
  SrVal *ans = y[0] = primal1(ad, e, x);
  SrVal *a = NULL, *b = NULL;
  if (t[0]) {
    SrVal *ym1 = ad_binop(ad, SR_P_sub, x[1], ad_const(ad, x[1], 1.0));
    SrVal *p = ad_binop(ad, SR_P_pow, x[0], ym1);
    a = ad_mul(ad, t[0], ad_mul(ad, x[1], p));
  }
  if (t[1]) {
    SrVal *z = ad_binop(ad, SR_P_eq, x[0], ad_const(ad, x[0], 0.0));
    SrVal *c[2] = {x[0], ad_full(ad, ad_type(ad, x[0]), 1.0)};
    SrVal *safe = ad_select_n(ad, z, 2, c);
    b = ad_mul(ad, t[1], ad_mul(ad, ad_unop(ad, SR_P_log, safe), ans));
  }
  ty[0] = ad_add_tangents(ad, a, b);
  return done1(y, ty);
}

JVP1(jvp_atan2) {
  y[0] = primal1(ad, e, x);
  SrVal *a = NULL, *b = NULL;
  if (t[0]) {
    SrVal *den = ad_binop(ad, SR_P_add, ad_unop(ad, SR_P_square, x[0]), ad_unop(ad, SR_P_square, x[1]));
    a = ad_mul(ad, t[0], ad_div(ad, x[1], den));
  }
  if (t[1]) {
    SrVal *den = ad_binop(ad, SR_P_add, ad_unop(ad, SR_P_square, x[0]), ad_unop(ad, SR_P_square, x[1]));
    b = ad_mul(ad, t[1], ad_div(ad, ad_neg(ad, x[0]), den));
  }
  ty[0] = ad_add_tangents(ad, a, b);
  return done1(y, ty);
}

JVP1(jvp_rem) {
  y[0] = primal1(ad, e, x);
  SrVal *a = NULL, *b = NULL;
  if (t[0]) a = ad_maybe_broadcast(ad, t[0], sr_ad_tangent_type(ad_type(ad, y[0])));
  if (t[1]) {
    SrVal *q = ad_div(ad, x[0], x[1]);
    SrVal *f = ad_mul(ad, ad_unop(ad, SR_P_sign, q), ad_unop(ad, SR_P_floor, ad_unop(ad, SR_P_abs, q)));
    b = ad_mul(ad, ad_neg(ad, t[1]), f);
  }
  ty[0] = ad_add_tangents(ad, a, b);
  return done1(y, ty);
}

JVP1(jvp_select_n) {
  y[0] = primal1(ad, e, x);
  if (!y[0]) return -1;
  SrVal *nz = NULL;
  for (uint32_t i = 1; i < e->nin && !nz; i++) nz = t[i];
  if (!nz) {
    ty[0] = NULL;
    return 0;
  }
  SrVal *z = ad_full(ad, ad_type(ad, nz), 0.0);
  SrVal *cs[64];
  uint32_t n = e->nin - 1 < 64 ? e->nin - 1 : 63;
  for (uint32_t i = 0; i < n; i++) cs[i] = t[i + 1] ? t[i + 1] : z;
  ty[0] = ad_select_n(ad, x[0], (int)n, cs);
  return done1(y, ty);
}

JVP1(jvp_clamp) {
  /* clamp(min, operand, max) */
  y[0] = primal1(ad, e, x);
  SrVal *lo = x[0], *op = x[1], *hi = x[2], *acc = NULL;
  for (int i = 0; i < 3; i++) {
    if (!t[i]) continue;
    SrVal *cond;
    if (i == 0) cond = ad_binop(ad, SR_P_and, ad_binop(ad, SR_P_gt, lo, op), ad_binop(ad, SR_P_lt, lo, hi));
    else if (i == 1) cond = ad_binop(ad, SR_P_and, ad_binop(ad, SR_P_gt, op, lo), ad_binop(ad, SR_P_lt, op, hi));
    else cond = ad_binop(ad, SR_P_lt, hi, op);
    SrVal *c[2] = {ad_full(ad, ad_type(ad, op), 0.0), t[i]};
    acc = ad_add_tangents(ad, acc, ad_select_n(ad, cond, 2, c));
    if (!acc) return -1;
  }
  ty[0] = acc;
  return done1(y, ty);
}

/* ---- transposes ---- */

#define TR(name) static int name(SrAd *ad, const SrEqn *e, SrVal **ct, SrVal **x, SrVal **cx)

static const SrType *ct_of(const SrEqn *e, int i) { return sr_ad_ct_type(e->in[i]->type); }

TR(tr_neg) {
  (void)x;
  (void)e;
  cx[0] = ad_neg(ad, ct[0]);
  return cx[0] ? 0 : -1;
}

/* the same op applied to the cotangent (copy, reduce_precision) */
TR(tr_self) {
  (void)x;
  cx[0] = ad_bind_eqn1(ad, e, ct);
  return cx[0] ? 0 : -1;
}

TR(tr_add) {
  /* x_aval: the ct aval of an undefined primal, else typeof(x).to_ct_aval() */
  for (int i = 0; i < 2; i++) {
    if (x[i]) continue;
    cx[i] = ad_unbroadcast(ad, ct_of(e, i), ct[0]);
    if (!cx[i]) return -1;
  }
  return 0;
}

TR(tr_sub) {
  if (!x[0] && !(cx[0] = ad_unbroadcast(ad, ct_of(e, 0), ct[0]))) return -1;
  if (!x[1] && !(cx[1] = ad_unbroadcast(ad, ct_of(e, 1), ad_neg(ad, ct[0])))) return -1;
  return 0;
}

TR(tr_mul) {
  if (!x[0] && !x[1]) return sr_raise(ad->I, "ValueError", "mul is bilinear: it transposes in one operand only"), -1;
  if (!x[0]) {
    cx[0] = ad_unbroadcast(ad, ct_of(e, 0), mul_like(ad, e, ct[0], x[1]));
    return cx[0] ? 0 : -1;
  }
  cx[1] = ad_unbroadcast(ad, ct_of(e, 1), mul_like(ad, e, x[0], ct[0]));
  return cx[1] ? 0 : -1;
}

TR(tr_div) {
  if (!x[1]) return sr_raise(ad->I, "RuntimeError", "nonlinear div can't be transposed"), -1;
  cx[0] = ad_unbroadcast(ad, ct_of(e, 0), ad_div(ad, ct[0], x[1]));
  return cx[0] ? 0 : -1;
}

TR(tr_add_any) {
  (void)e;
  if (!x[0]) cx[0] = ct[0];
  if (!x[1]) cx[1] = ct[0];
  return 0;
}

TR(tr_select_n) {
  if (!x[0]) return sr_raise(ad->I, "ValueError", "select_n cannot be transposed in its predicate"), -1;
  SrVal *zeros = ad_full(ad, ad_type(ad, ct[0]), 0.0);
  const SrType *wt = ad_type(ad, x[0]);
  if (!zeros || !wt) return -1;
  uint32_t n = e->nin - 1;
  if (wt->dtype == SR_BOOL) {
    for (uint32_t i = 0; i < n && i < 2; i++) {
      if (x[i + 1]) continue;
      /* select(which, zeros, ct) for case 0 is select_n(which, ct, zeros) */
      SrVal *c[2] = {i == 0 ? ct[0] : zeros, i == 0 ? zeros : ct[0]};
      if (!(cx[i + 1] = ad_select_n(ad, x[0], 2, c))) return -1;
    }
    return 0;
  }
  for (uint32_t i = 0; i < n; i++) {
    if (x[i + 1]) continue;
    SrVal *eq = ad_binop(ad, SR_P_eq, x[0], ad_const(ad, x[0], (double)i));
    SrVal *c[2] = {zeros, ct[0]};
    if (!(cx[i + 1] = ad_select_n(ad, eq, 2, c))) return -1;
  }
  return 0;
}

TR(tr_convert) {
  (void)x;
  const SrType *in = e->in[0]->type;
  if (!sr_ad_differentiable(in)) return 0; /* a float0 zero */
  SrVal *c = ct[0];
  cx[0] = ad_bindv(ad, SR_P_convert_element_type, 1, &c, "new_dtype", sr_dtype_val(NULL, in->dtype), "weak_type",
                   sr_bool(in->weak), "sharding", ad_sharding_param(ad, in), NULL);
  return cx[0] ? 0 : -1;
}

void sr_ad_rules_elementwise_init(void) {
  static const int zero[] = {
      SR_P_sign, SR_P_floor, SR_P_ceil, SR_P_round, SR_P_not, SR_P_is_finite, SR_P_stop_gradient,
      SR_P_eq, SR_P_ne, SR_P_lt, SR_P_le, SR_P_gt, SR_P_ge, SR_P_and, SR_P_or, SR_P_xor,
      SR_P_shift_left, SR_P_shift_right_logical, SR_P_shift_right_arithmetic,
      SR_P_argmax, SR_P_argmin, SR_P_iota, SR_P_reduce_and, SR_P_reduce_or, SR_P_random_bits,
      SR_P_random_seed, SR_P_random_wrap, SR_P_random_unwrap, SR_P_threefry2x32, SR_P_axis_index,
  };
  for (size_t i = 0; i < sizeof zero / sizeof *zero; i++) sr_ad_set_jvp(zero[i], jvp_zero);
  sr_ad_set_jvp(SR_P_neg, jvp_neg);
  sr_ad_set_transpose(SR_P_neg, tr_neg);
  sr_ad_set_jvp(SR_P_exp, jvp_exp);
  sr_ad_set_jvp(SR_P_exp2, jvp_exp2);
  sr_ad_set_jvp(SR_P_log, jvp_log);
  sr_ad_set_jvp(SR_P_expm1, jvp_expm1);
  sr_ad_set_jvp(SR_P_log1p, jvp_log1p);
  sr_ad_set_jvp(SR_P_sin, jvp_sin);
  sr_ad_set_jvp(SR_P_cos, jvp_cos);
  sr_ad_set_jvp(SR_P_tan, jvp_tan);
  sr_ad_set_jvp(SR_P_tanh, jvp_tanh);
  sr_ad_set_jvp(SR_P_logistic, jvp_logistic);
  sr_ad_set_jvp(SR_P_sqrt, jvp_sqrt);
  sr_ad_set_jvp(SR_P_rsqrt, jvp_rsqrt);
  sr_ad_set_jvp(SR_P_cbrt, jvp_cbrt);
  sr_ad_set_jvp(SR_P_square, jvp_square);
  sr_ad_set_jvp(SR_P_integer_pow, jvp_integer_pow);
  sr_ad_set_jvp(SR_P_erf, jvp_erf);
  sr_ad_set_jvp(SR_P_erf_inv, jvp_erf_inv);
  sr_ad_set_jvp(SR_P_abs, jvp_abs);
  sr_ad_set_jvp(SR_P_convert_element_type, jvp_convert);
  sr_ad_set_transpose(SR_P_convert_element_type, tr_convert);
  sr_ad_set_jvp(SR_P_copy, sr_ad_jvp_linear);
  sr_ad_set_transpose(SR_P_copy, tr_self);
  sr_ad_set_jvp(SR_P_copy_p, sr_ad_jvp_linear);
  sr_ad_set_transpose(SR_P_copy_p, tr_self);
  sr_ad_set_jvp(SR_P_reduce_precision, sr_ad_jvp_linear);
  sr_ad_set_transpose(SR_P_reduce_precision, tr_self);
  sr_ad_set_jvp(SR_P_add, jvp_add);
  sr_ad_set_transpose(SR_P_add, tr_add);
  sr_ad_set_jvp(SR_P_sub, jvp_sub);
  sr_ad_set_transpose(SR_P_sub, tr_sub);
  sr_ad_set_jvp(SR_P_mul, jvp_mul);
  sr_ad_set_transpose(SR_P_mul, tr_mul);
  sr_ad_set_jvp(SR_P_div, jvp_div);
  sr_ad_set_transpose(SR_P_div, tr_div);
  sr_ad_set_jvp(SR_P_max, jvp_minmax);
  sr_ad_set_jvp(SR_P_min, jvp_minmax);
  sr_ad_set_jvp(SR_P_pow, jvp_pow);
  sr_ad_set_jvp(SR_P_atan2, jvp_atan2);
  sr_ad_set_jvp(SR_P_rem, jvp_rem);
  sr_ad_set_jvp(SR_P_select_n, jvp_select_n);
  sr_ad_set_transpose(SR_P_select_n, tr_select_n);
  sr_ad_set_jvp(SR_P_clamp, jvp_clamp);
  sr_ad_set_jvp(SR_P_add_any, sr_ad_jvp_linear);
  sr_ad_set_transpose(SR_P_add_any, tr_add_any);
}
