/* random_counts.c: jax.random's samplers of counts -- poisson, binomial
 * and multinomial -- written as jax/_src/random/core.py writes them:
 * the same checks, then the same jits (_poisson, _poisson_knuth,
 * _poisson_rejection, _poisson_approx; _binomial and its two loops run
 * inline, as JAX marks them), over the same lax and jnp calls, the
 * rejection loops as lax.while_loop and multinomial's binomials as a
 * lax.scan.  Being traced, they run eagerly, under jit and under vmap;
 * since uniform and normal are JAX's bit for bit, so are the counts, up
 * to a comparison the last ulp of a log or lgamma could turn.
 */
#include <float.h>
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
#define INT(i) sr_nn_int(s, (i))
#define FLT(d) sr_nn_float(s, (d))

/* A sampler's static arguments: the result's shape and dtype. */
typedef struct Static {
  int64_t shape[SR_MAX_RANK];
  int nd;
  SrDtype dt;
} Static;

static const Static *static_args(SrInterp *I) { return sr_current_builtin(I)->data; }

/* A jit named name of fn over args, its static arguments st (inline: fn
   called as it is, as a jit JAX marks inline=True traces). */
static SrVal *call_jit(SrInterp *I, const char *name, SrBuiltinFn fn, const Static *st, int n, SrVal **args,
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

/* ---- lax and jnp on values the scope holds ---- */

static SrVal *lax1(SrNnScope *s, int prim, SrVal *x) { return x ? KEEP(sr_lax_unary(s->I, prim, x)) : NULL; }
static SrVal *neg(SrNnScope *s, SrVal *x) { return x ? KEEP(sr_unop(s->I, SR_OP_NEG, x)) : NULL; }
static SrVal *invert(SrNnScope *s, SrVal *x) { return x ? KEEP(sr_unop(s->I, SR_OP_INVERT, x)) : NULL; }
static SrVal *select3(SrNnScope *s, SrVal *c, SrVal *t, SrVal *f) {
  return c && t && f ? KEEP(sr_lax_select(s->I, c, t, f)) : NULL;
}
static SrVal *convert(SrNnScope *s, SrVal *x, SrDtype dt) {
  return x ? KEEP(sr_lax_convert(s->I, x, dt, 0, NULL)) : NULL;
}
static const SrType *type_of(SrNnScope *s, SrVal *x) { return x ? sr_value_type(s->I, x) : NULL; }
static SrVal *shape_val(SrNnScope *s, const Static *st) { return KEEP(sr_int_tuple(st->shape, st->nd)); }
static SrVal *dtype_val(SrNnScope *s, SrDtype dt) { return KEEP(sr_dtype_val(NULL, dt)); }
static SrVal *tuple_of(SrNnScope *s, int n, SrVal **items) {
  SrVal *it[4];
  for (int i = 0; i < n; i++)
    if (!items[i]) return NULL;
  for (int i = 0; i < n; i++) it[i] = sr_ref(items[i]);
  return KEEP(sr_tuple(NULL, n, it));
}

/* lax.full_like(x, v, dtype, shape): the fill broadcast to shape */
static SrVal *full(SrNnScope *s, SrVal *x, SrVal *v, SrDtype dt, const Static *st) {
  SrVal *a[4] = {x, v, dtype_val(s, dt), st ? shape_val(s, st) : sr_none()};
  return x && v ? sr_nn_call(s, "jax.lax.full_like", 4, a, 0, NULL, NULL) : NULL;
}

/* jax.random.uniform(key, shape, dtype) */
static SrVal *uniform(SrNnScope *s, SrVal *key, const Static *st, SrDtype dt) {
  SrVal *v[3] = {key, shape_val(s, st), dtype_val(s, dt)};
  return key ? sr_nn_call(s, "jax.random.uniform", 3, v, 0, NULL, NULL) : NULL;
}

/* the keys of split(key, n), unpacked (as iterating the key array) */
static int split_n(SrNnScope *s, SrVal *key, int n, SrVal **out) {
  SrVal *v[2] = {key, INT(n)};
  SrVal *ks = key ? sr_nn_call(s, "jax.random.split", 2, v, 0, NULL, NULL) : NULL;
  SrVal *t = ks ? sr_nn_call1(s, "builtins.tuple", ks) : NULL;
  if (!t) return -1;
  for (int i = 0; i < n; i++) out[i] = t->seq.items[i];
  return 0;
}

/* The items of a while loop's carry tuple of n */
static SrVal **carry_items(SrInterp *I, SrArgs *a, int n, const char *name) {
  if (a->n != 1 || !sr_is_seq(a->v[0]) || a->v[0]->seq.n != n) return sr_raise(I, "TypeError", "%s(carry)", name), NULL;
  return a->v[0]->seq.items;
}

/* A while loop's functions' data: the static arguments, the values they
   close over, max_iters. */
typedef struct Loop {
  Static st;
  SrVal *v[10];
  int n;
} Loop;

static void loop_free(void *d) {
  Loop *L = d;
  for (int i = 0; i < L->n; i++) sr_unref(L->v[i]);
  free(L);
}

static Loop *loop_new(const Static *st, int n, SrVal **v) {
  Loop *L = sr_xcalloc(1, sizeof *L);
  L->st = *st;
  L->n = n;
  for (int i = 0; i < n; i++) L->v[i] = sr_ref(v[i]);
  return L;
}

static const Loop *loop_of(SrInterp *I) { return sr_current_builtin(I)->data; }

/* lax.while_loop(cond, body, init) over a Loop's data; its result's item k */
static SrVal *while_loop(SrNnScope *s, const char *cname, SrBuiltinFn cf, const char *bname, SrBuiltinFn bf,
                         const Static *st, int n, SrVal **v, SrVal *init, int k) {
  if (!init) return NULL;
  for (int i = 0; i < n; i++)
    if (!v[i]) return NULL;
  SrVal *c = KEEP(sr_builtin_with(cname, cf, loop_new(st, n, v), loop_free));
  SrVal *b = KEEP(sr_builtin_with(bname, bf, loop_new(st, n, v), loop_free));
  SrVal *r = sr_nn_call3(s, "jax.lax.while_loop", c, b, init);
  return r && sr_is_seq(r) && r->seq.n > k ? r->seq.items[k] : NULL;
}

/* np.iinfo's refusal of a dtype, with numpy's kind letter */
static SrVal *not_integral(SrInterp *I, SrDtype dt) {
  char kind = sr_dtype_is_float(dt) ? 'f' : sr_dtype_is_inexact(dt) ? 'c' : dt == SR_BOOL ? 'b' : 'V';
  return sr_raise(I, "ValueError", "Invalid integer data type '%c'.", kind);
}

/* dtype.type(iinfo(dtype).max) (integral) or dtype.type(finfo(dtype).max) */
static SrVal *max_of(SrNnScope *s, SrDtype dt, int integral) {
  const SrType *t = sr_type_array(dt, 0, NULL);
  if (integral) {
    switch (dt) {
    case SR_I8: return KEEP(sr_array_scalar(t, INT8_MAX, 0, INT8_MAX));
    case SR_I16: return KEEP(sr_array_scalar(t, INT16_MAX, 0, INT16_MAX));
    case SR_I32: return KEEP(sr_array_scalar(t, INT32_MAX, 0, INT32_MAX));
    case SR_I64: return KEEP(sr_array_scalar(t, (double)INT64_MAX, 0, INT64_MAX));
    case SR_U8: return KEEP(sr_array_scalar(t, UINT8_MAX, 0, UINT8_MAX));
    case SR_U16: return KEEP(sr_array_scalar(t, UINT16_MAX, 0, UINT16_MAX));
    case SR_U32: return KEEP(sr_array_scalar(t, UINT32_MAX, 0, UINT32_MAX));
    case SR_U64: return KEEP(sr_array_scalar(t, 18446744073709551615.0, 0, -1)); /* all ones */
    default: return not_integral(s->I, dt);
    }
  }
  switch (dt) {
  case SR_F16: return KEEP(sr_array_scalar(t, 65504.0, 0, 0));
  case SR_BF16: return KEEP(sr_array_scalar(t, 0x1.fep127, 0, 0));
  case SR_F32: return KEEP(sr_array_scalar(t, FLT_MAX, 0, 0));
  default: return KEEP(sr_array_scalar(t, DBL_MAX, 0, 0));
  }
}

/* ==== poisson ====
 *
 * Each operation is its own statement, in the order Python evaluates
 * JAX's expressions, so that the equations come out in JAX's order (C
 * leaves the order of a call's arguments open). */

/* _poisson_knuth's loop: (i, k, rng, log_prod); v: lam, max_iters */
static SrVal *knuth_cond(SrInterp *I, SrArgs *a) {
  const Loop *L = loop_of(I);
  SrVal **c = carry_items(I, a, 4, "cond_fn");
  if (!c) return NULL;
  SCOPE(I);
  SrVal *nl = neg(s, L->v[0]);
  SrVal *go = OP(GT, c[3], nl);
  SrVal *any = go ? sr_nn_call1(s, "jax.numpy.any", go) : NULL;
  SrVal *more = OP(LT, any ? c[0] : NULL, L->v[1]);
  return sr_nn_done(s, OP(BITAND, any, more));
}

static SrVal *knuth_body(SrInterp *I, SrArgs *a) {
  const Loop *L = loop_of(I);
  SrVal **c = carry_items(I, a, 4, "body_fn");
  if (!c) return NULL;
  SCOPE(I);
  SrVal *ks[2];
  if (split_n(s, c[2], 2, ks) < 0) return sr_nn_done(s, NULL);
  SrVal *nl = neg(s, L->v[0]);
  SrVal *go = OP(GT, c[3], nl);
  SrVal *k1 = OP(ADD, go ? c[1] : NULL, INT(1));
  SrVal *k = select3(s, go, k1, c[1]);
  SrVal *u = k ? uniform(s, ks[1], &L->st, SR_F32) : NULL;
  SrVal *i1 = OP(ADD, u ? c[0] : NULL, INT(1));
  SrVal *lu = i1 ? sr_nn_call1(s, "jax.numpy.log", u) : NULL;
  SrVal *lp = OP(ADD, lu ? c[3] : NULL, lu);
  SrVal *out[4] = {i1, k, ks[0], lp};
  return sr_nn_done(s, lp ? tuple_of(s, 4, out) : NULL);
}

/* _poisson_knuth(key, lam): Knuth's product of uniforms */
static SrVal *poisson_knuth_body(SrInterp *I, SrArgs *a) {
  const Static *st = static_args(I);
  SCOPE(I);
  SrVal *lam = a->v[1];
  SrVal *mx = max_of(s, st->dt, 1);
  SrVal *k0 = mx ? full(s, lam, INT(0), st->dt, st) : NULL;
  SrVal *lp0 = k0 ? full(s, lam, INT(0), SR_F32, st) : NULL;
  SrVal *init[4] = {INT(0), k0, a->v[0], lp0};
  SrVal *v[2] = {lam, mx};
  SrVal *k = while_loop(s, "cond_fn", knuth_cond, "body_fn", knuth_body, st, 2, v, lp0 ? tuple_of(s, 4, init) : NULL, 1);
  SrVal *r = OP(SUB, k, INT(1));
  return sr_nn_done(s, r ? sr_nn_call2(s, "jax.numpy.astype", r, dtype_val(s, st->dt)) : NULL);
}

/* _poisson_rejection's loop: (i, k_out, accepted, key); v: lam, log_lam,
   a, b, inv_alpha, v_r, max_iters */
enum { R_LAM, R_LOG_LAM, R_A, R_B, R_INV_ALPHA, R_V_R, R_MAX };

static SrVal *rejection_cond(SrInterp *I, SrArgs *a) {
  const Loop *L = loop_of(I);
  SrVal **c = carry_items(I, a, 4, "cond_fn");
  if (!c) return NULL;
  SCOPE(I);
  SrVal *na = invert(s, c[2]);
  SrVal *any = na ? sr_nn_call1(s, "jax.numpy.any", na) : NULL;
  SrVal *more = OP(LT, any ? c[0] : NULL, L->v[R_MAX]);
  return sr_nn_done(s, OP(BITAND, any, more));
}

static SrVal *rejection_body(SrInterp *I, SrArgs *a) {
  const Loop *L = loop_of(I);
  SrVal **c = carry_items(I, a, 4, "body_fn");
  if (!c) return NULL;
  SCOPE(I);
  SrVal *const *v = L->v;
  SrVal *ks[3];
  if (split_n(s, c[3], 3, ks) < 0) return sr_nn_done(s, NULL);
  SrDtype dt = sr_value_type(I, v[R_LAM])->dtype;
  SrVal *u = OP(SUB, uniform(s, ks[1], &L->st, dt), FLT(0.5));
  SrVal *vv = u ? uniform(s, ks[2], &L->st, dt) : NULL;
  SrVal *au = vv ? KEEP(sr_unop(I, SR_OP_ABS, u)) : NULL;
  SrVal *us = OP(SUB, FLT(0.5), au);
  /* k = floor((2 * a / u_shifted + b) * u + lam + 0.43) */
  SrVal *x = OP(MUL, us ? INT(2) : NULL, v[R_A]);
  x = OP(DIV, x, us);
  x = OP(ADD, x, v[R_B]);
  x = OP(MUL, x, u);
  x = OP(ADD, x, v[R_LAM]);
  x = OP(ADD, x, FLT(0.43));
  SrVal *k = lax1(s, SR_P_floor, x);
  /* s = log(v * inv_alpha / (a / (u_shifted * u_shifted) + b)) */
  SrVal *y = OP(MUL, k ? vv : NULL, v[R_INV_ALPHA]);
  SrVal *d = OP(MUL, y ? us : NULL, us);
  d = OP(DIV, d ? v[R_A] : NULL, d);
  d = OP(ADD, d, v[R_B]);
  SrVal *sv = lax1(s, SR_P_log, OP(DIV, y, d));
  /* t = -lam + k * log_lam - lgamma(k + 1) */
  SrVal *t = neg(s, sv ? v[R_LAM] : NULL);
  SrVal *kl = OP(MUL, t ? k : NULL, v[R_LOG_LAM]);
  t = OP(ADD, t, kl);
  SrVal *lg = lax1(s, SR_P_lgamma, OP(ADD, t ? k : NULL, INT(1)));
  t = OP(SUB, lg ? t : NULL, lg);
  /* accept1 = (u_shifted >= 0.07) & (v <= v_r) */
  SrVal *g1 = OP(GE, t ? us : NULL, FLT(0.07));
  SrVal *l1 = OP(LE, g1 ? vv : NULL, v[R_V_R]);
  SrVal *accept1 = OP(BITAND, g1, l1);
  /* reject = (k < 0) | ((u_shifted < 0.013) & (v > u_shifted)) */
  SrVal *r1 = OP(LT, accept1 ? k : NULL, INT(0));
  SrVal *r2 = OP(LT, r1 ? us : NULL, FLT(0.013));
  SrVal *r3 = OP(GT, r2 ? vv : NULL, us);
  SrVal *reject = OP(BITOR, r1, OP(BITAND, r2, r3));
  SrVal *accept2 = OP(LE, reject ? sv : NULL, t);
  SrVal *nr = invert(s, accept2 ? reject : NULL);
  SrVal *accept = OP(BITOR, accept1, OP(BITAND, nr, accept2));
  SrVal *k_out = select3(s, accept, k, c[1]);
  SrVal *acc = OP(BITOR, k_out ? c[2] : NULL, accept);
  SrVal *out[4] = {OP(ADD, acc ? c[0] : NULL, INT(1)), k_out, acc, ks[0]};
  return sr_nn_done(s, out[0] ? tuple_of(s, 4, out) : NULL);
}

/* _poisson_rejection(key, lam): Hormann's transformed rejection */
static SrVal *poisson_rejection_body(SrInterp *I, SrArgs *a) {
  const Static *st = static_args(I);
  SCOPE(I);
  SrVal *lam = a->v[1];
  SrVal *log_lam = lax1(s, SR_P_log, lam);
  SrVal *b = OP(MUL, FLT(2.53), lax1(s, SR_P_sqrt, log_lam ? lam : NULL));
  b = OP(ADD, FLT(0.931), b);
  SrVal *ca = OP(ADD, FLT(-0.059), OP(MUL, FLT(0.02483), b));
  SrVal *inv_alpha = OP(ADD, FLT(1.1239), OP(DIV, FLT(1.1328), OP(SUB, ca ? b : NULL, FLT(3.4))));
  SrVal *v_r = OP(SUB, FLT(0.9277), OP(DIV, FLT(3.6224), OP(SUB, inv_alpha ? b : NULL, INT(2))));
  const SrType *lt = v_r ? sr_value_type(I, lam) : NULL;
  SrVal *mx = lt ? max_of(s, st->dt, 1) : NULL;
  SrVal *k0 = mx ? full(s, lam, INT(-1), lt->dtype, st) : NULL;
  SrVal *acc0 = k0 ? full(s, lam, KEEP(sr_bool(0)), SR_BOOL, st) : NULL;
  SrVal *init[4] = {INT(0), k0, acc0, a->v[0]};
  SrVal *v[R_MAX + 1] = {lam, log_lam, ca, b, inv_alpha, v_r, mx};
  SrVal *k = while_loop(s, "cond_fn", rejection_cond, "body_fn", rejection_body, st, R_MAX + 1, v,
                        acc0 ? tuple_of(s, 4, init) : NULL, 1);
  return sr_nn_done(s, k ? sr_nn_call2(s, "jax.numpy.astype", k, dtype_val(s, st->dt)) : NULL);
}

/* _poisson(key, lam): Knuth's algorithm below a rate of 10, transformed
   rejection above, both drawn and one selected per element */
static SrVal *poisson_body(SrInterp *I, SrArgs *a) {
  const Static *st = static_args(I);
  SCOPE(I);
  SrVal *lam = a->v[1];
  SrVal *isnan = OP(NE, lam, lam);
  SrVal *use_knuth = OP(BITOR, isnan, OP(LT, isnan ? lam : NULL, INT(10)));
  SrVal *lam_knuth = select3(s, use_knuth, lam, sr_nn_full_like(s, use_knuth ? lam : NULL, FLT(0.0)));
  SrVal *lam_rej = select3(s, use_knuth, sr_nn_full_like(s, lam_knuth ? lam : NULL, FLT(1e5)), lam);
  if (!lam_rej) return sr_nn_done(s, NULL);
  SrVal *kargs[2] = {a->v[0], lam_knuth}, *rargs[2] = {a->v[0], lam_rej};
  SrVal *kn = KEEP(call_jit(I, "_poisson_knuth", poisson_knuth_body, st, 2, kargs, 0));
  SrVal *rj = kn ? KEEP(call_jit(I, "_poisson_rejection", poisson_rejection_body, st, 2, rargs, 0)) : NULL;
  SrVal *r = select3(s, use_knuth, kn, rj);
  SrVal *z = OP(EQ, r ? lam : NULL, INT(0));
  return sr_nn_done(s, select3(s, z, z ? sr_nn_call1(s, "jax.numpy.zeros_like", r) : NULL, r));
}

/* ---- poisson's method='approximate' ---- */

#define POISSON_SPLIT 7.0
#define POISSON_NUM_TERMS 20
#define PEIZER_PRATT_EPS 0.02

static SrVal *jnp1(SrNnScope *s, const char *f, SrVal *x) { return x ? sr_nn_call1(s, f, x) : NULL; }
static SrVal *where(SrNnScope *s, SrVal *c, SrVal *x, SrVal *y) {
  return c && x && y ? sr_nn_call3(s, "jax.numpy.where", c, x, y) : NULL;
}

/* one term of the truncated cdf: pmf *= lam / k; cdf += pmf; count +=
   (cdf < u); st holds (pmf, cdf, count) as new references */
static int cdf_term(SrInterp *I, SrVal **st, SrVal *lam, SrVal *u, int k, SrDtype dt) {
  SCOPE(I);
  SrVal *pmf = OP(MUL, st[0], OP(DIV, lam, INT(k)));
  SrVal *cdf = OP(ADD, st[1], pmf);
  SrVal *count = OP(ADD, st[2], convert(s, OP(LT, cdf, u), dt));
  SrVal *nv[3] = {pmf, cdf, count};
  for (int i = 0; i < 3; i++) {
    sr_unref(st[i]);
    st[i] = count ? sr_ref(nv[i]) : NULL;
  }
  sr_nn_done(s, NULL);
  return count ? 0 : -1;
}

/* the cdf truncated to POISSON_NUM_TERMS values, inverted at u */
static SrVal *poisson_cdf_inversion(SrInterp *I, SrVal *u, SrVal *lam) {
  SCOPE(I);
  const SrType *ut = type_of(s, u);
  if (!ut) return sr_nn_done(s, NULL);
  SrDtype dt = ut->dtype;
  SrVal *pmf = lax1(s, SR_P_exp, neg(s, lam));
  SrVal *count = convert(s, OP(LT, pmf, u), dt);
  SrVal *st[3] = {pmf ? sr_ref(pmf) : NULL, pmf ? sr_ref(pmf) : NULL, count ? sr_ref(count) : NULL};
  int rc = count ? 0 : -1;
  for (int k = 1; k < POISSON_NUM_TERMS - 1 && rc == 0; k++) rc = cdf_term(I, st, lam, u, k, dt);
  sr_unref(st[0]);
  sr_unref(st[1]);
  sr_nn_done(s, NULL);
  if (rc < 0) {
    sr_unref(st[2]);
    return NULL;
  }
  return st[2];
}

/* T(y) = (1 - y^2 + 2 y log y) / (1 - y)^2, by its series near y = 1 */
static SrVal *peizer_pratt_t(SrInterp *I, SrVal *y) {
  SCOPE(I);
  SrVal *d = OP(SUB, y, INT(1));
  SrVal *small = OP(LT, jnp1(s, "jax.numpy.abs", d), FLT(0.25));
  SrVal *series = small ? sr_nn_call1(s, "jax.numpy.zeros_like", d) : NULL;
  for (int k = 9; k >= 1 && series; k--) {
    double coef = 2.0 * (k % 2 ? -1 : 1) / ((k + 1) * (k + 2));
    series = OP(MUL, d, OP(ADD, FLT(coef), series));
  }
  SrVal *y_safe = where(s, series ? small : NULL, FLT(2.0), y);
  SrVal *d_safe = where(s, y_safe ? small : NULL, FLT(1.0), d);
  SrVal *num = OP(SUB, d_safe ? INT(1) : NULL, jnp1(s, "jax.numpy.square", y_safe));
  SrVal *yl = OP(MUL, num ? INT(2) : NULL, y_safe);
  yl = OP(MUL, yl, jnp1(s, "jax.numpy.log", yl ? y_safe : NULL));
  num = OP(ADD, num, yl);
  SrVal *direct = OP(DIV, num, jnp1(s, "jax.numpy.square", num ? d_safe : NULL));
  return sr_nn_done(s, where(s, small, series, direct));
}

/* z(x) with Pr[X <= x] ~ ndtr(z(x)) */
static SrVal *peizer_pratt_z(SrInterp *I, SrVal *x, SrVal *lam) {
  SCOPE(I);
  SrVal *y = OP(DIV, OP(ADD, x, FLT(0.5)), lam);
  SrVal *t = y ? KEEP(peizer_pratt_t(I, y)) : NULL;
  SrVal *h = OP(SUB, t ? x : NULL, lam);
  h = OP(ADD, h, FLT(2.0 / 3));
  h = OP(ADD, h, OP(DIV, h ? FLT(PEIZER_PRATT_EPS) : NULL, OP(ADD, h ? x : NULL, INT(1))));
  SrVal *r = OP(DIV, OP(ADD, h ? INT(1) : NULL, t), lam);
  return sr_nn_done(s, OP(MUL, h, jnp1(s, "jax.numpy.sqrt", r)));
}

/* the smallest integer x with z(x) >= z: ceil of the Cornish-Fisher root
   (shifted by 0.6), corrected by one either way */
static SrVal *poisson_peizer_pratt(SrInterp *I, SrVal *z, SrVal *lam) {
  SCOPE(I);
  SrVal *sl = jnp1(s, "jax.numpy.sqrt", lam);
  SrVal *root = OP(ADD, sl ? lam : NULL, OP(MUL, sl, z));
  root = OP(SUB, root, FLT(2.0 / 3));
  root = OP(ADD, root, OP(DIV, jnp1(s, "jax.numpy.square", root ? z : NULL), INT(6)));
  SrVal *w = OP(SUB, root ? INT(1) : NULL, jnp1(s, "jax.numpy.square", z));
  w = OP(MUL, w ? z : NULL, w);
  w = OP(DIV, w, OP(MUL, w ? INT(72) : NULL, sl));
  root = OP(ADD, root, w);
  SrVal *x = OP(ADD, root, FLT(0.6));
  SrVal *c = jnp1(s, "jax.numpy.ceil", x);
  const SrType *xt = type_of(s, c ? x : NULL);
  if (!xt) return sr_nn_done(s, NULL);
  /* root_ge(c) - root_ge(c - 1), root_ge(c) = z(c) >= z (-inf below 0) */
  SrVal *ge[2] = {NULL, NULL};
  SrVal *out = OP(ADD, c, INT(1));
  for (int i = 0; i < 2 && out; i++) {
    SrVal *ci = i ? OP(SUB, c, INT(1)) : c;
    SrVal *below = OP(LT, ci, INT(0));
    SrVal *cm = below ? sr_nn_call2(s, "jax.numpy.maximum", ci, FLT(0.0)) : NULL;
    SrVal *zi = cm ? KEEP(peizer_pratt_z(I, cm, lam)) : NULL;
    ge[i] = convert(s, OP(GE, where(s, below, FLT(-INFINITY), zi), z), xt->dtype);
    out = OP(SUB, out, ge[i]);
  }
  return sr_nn_done(s, out ? sr_nn_call2(s, "jax.numpy.maximum", out, FLT(0.0)) : NULL);
}

typedef struct ApproxStatic {
  Static st; /* first: read as a Static too */
  SrDtype compute;
} ApproxStatic;

/* _poisson_approx(key, lam): a normal draw mapped to a count by an
   approximate cdf's inverse, loop-free */
static SrVal *poisson_approx_body(SrInterp *I, SrArgs *a) {
  const ApproxStatic *as = sr_current_builtin(I)->data;
  const Static *st = &as->st;
  SCOPE(I);
  SrVal *lam = convert(s, a->v[1], as->compute);
  const SrType *lt = type_of(s, lam);
  if (!lt) return sr_nn_done(s, NULL);
  int64_t dims[SR_MAX_RANK];
  int nx = st->nd - lt->ndim;
  for (int i = 0; i < nx; i++) dims[i] = i;
  lam = KEEP(sr_lax_expand_dims(I, lam, dims, nx > 0 ? nx : 0));
  SrVal *nv[3] = {a->v[0], shape_val(s, st), dtype_val(s, as->compute)};
  SrVal *z = lam ? sr_nn_call(s, "jax.random.normal", 3, nv, 0, NULL, NULL) : NULL;
  SrVal *nz = jnp1(s, "jax.scipy.special.ndtr", z);
  SrVal *small = nz ? KEEP(poisson_cdf_inversion(I, nz, lam)) : NULL;
  SrVal *large = small ? KEEP(poisson_peizer_pratt(I, z, lam)) : NULL;
  SrVal *w = where(s, OP(LT, large ? lam : NULL, FLT(POISSON_SPLIT)), small, large);
  return sr_nn_done(s, convert(s, w, st->dt));
}

static int no_sharding(SrInterp *I, SrVal *osh, const char *name) {
  if (sr_nn_given(osh))
    return sr_raise(I, "NotImplementedError", "jax.random.%s with out_sharding is not supported yet", name), -1;
  return 0;
}

/* dtype=None: int (or float); *dt the canonical dtype */
static int user_dtype(SrInterp *I, SrVal *v, const char *name, int want_int, SrDtype *dt) {
  int d;
  if (sr_dtype_arg_fn(I, v, &d, name, "") < 0) return -1;
  int x64 = I->jax->enable_x64;
  *dt = d >= 0 ? (SrDtype)d : want_int ? (x64 ? SR_I64 : SR_I32) : (x64 ? SR_F64 : SR_F32);
  return 0;
}

/* poisson(key, lam, shape=None, dtype=None, *, method='exact',
   out_sharding=None) */
static SrVal *bi_poisson(SrInterp *I, SrArgs *a) {
  SrVal *p[6];
  if (sr_args_parse(I, a, "poisson", "key, lam, shape=, dtype=, *, method=, out_sharding=", p) < 0) return NULL;
  SrVal *k = sr_random_check_key(I, p[0], "poisson");
  if (!k) return NULL;
  SCOPE(I);
  KEEP(k);
  int approx = 0;
  if (sr_nn_given(p[4])) {
    int exact = p[4]->kind == SR_V_STR && strcmp(p[4]->str.s, "exact") == 0;
    approx = p[4]->kind == SR_V_STR && strcmp(p[4]->str.s, "approximate") == 0;
    if (!exact && !approx) {
      SrBuf b = SR_BUF_INIT;
      sr_val_repr(&b, p[4]);
      sr_raise(I, "ValueError", "method argument to `poisson` must be one of {'exact', 'approximate'}, got %s", b.p);
      sr_buf_free(&b);
      return sr_nn_done(s, NULL);
    }
  }
  ApproxStatic as = {{{0}, 0, SR_I32}, SR_F32};
  Static *st = &as.st;
  SrVal *lam = KEEP(sr_jnp_asarray(I, p[1], -1));
  const SrType *lt = type_of(s, lam);
  if (!lt || user_dtype(I, p[3], "poisson", 1, &st->dt) < 0) return sr_nn_done(s, NULL);
  if (sr_nn_given(p[2])) {
    if (sr_shape_arg(I, p[2], st->shape, &st->nd, "shape") < 0) return sr_nn_done(s, NULL);
  } else {
    st->nd = lt->ndim;
    for (int i = 0; i < lt->ndim; i++) st->shape[i] = lt->dims[i].size;
  }
  if (no_sharding(I, p[5], "poisson") < 0) return sr_nn_done(s, NULL);
  if (approx) {
    int64_t out[SR_MAX_RANK];
    int on;
    if (sr_random_broadcast_shapes(I, st->shape, st->nd, lt, out, &on) < 0) return sr_nn_done(s, NULL);
    int same = on == st->nd;
    for (int i = 0; same && i < on; i++) same = out[i] == st->shape[i];
    if (!same) {
      SrBuf b1 = SR_BUF_INIT, b2 = SR_BUF_INIT;
      int64_t ls[SR_MAX_RANK];
      for (int i = 0; i < lt->ndim; i++) ls[i] = lt->dims[i].size;
      sr_random_shape_str(&b1, ls, lt->ndim);
      sr_random_shape_str(&b2, st->shape, st->nd);
      sr_raise(I, "ValueError", "lam shape must be broadcastable to shape argument; got lam.shape %s, shape %s", b1.p,
               b2.p);
      sr_buf_free(&b1);
      sr_buf_free(&b2);
      return sr_nn_done(s, NULL);
    }
    int wide = (sr_dtype_is_float(lt->dtype) && sr_dtype_info(lt->dtype)->bits > 32) ||
               sr_dtype_info(st->dt)->bits > 32;
    as.compute = wide ? SR_F64 : SR_F32;
    ApproxStatic *d = sr_xmalloc(sizeof *d);
    *d = as;
    SrVal *args[2] = {k, p[1]};
    return sr_nn_done(s, KEEP(sr_api_jit(I, "_poisson_approx", poisson_approx_body, d, 2, args)));
  }
  SrVal *bl = sr_nn_call2(s, "jax.numpy.broadcast_to", p[1], shape_val(s, st));
  SrVal *lf = convert(s, bl, SR_F32);
  SrVal *args[2] = {k, lf};
  return sr_nn_done(s, lf ? KEEP(call_jit(I, "_poisson", poisson_body, st, 2, args, 0)) : NULL);
}

/* ==== binomial ==== */

static const double stirling_tail_vals[10] = {
    0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509, 0.0166446911898211,
    0.0138761288230707, 0.0118967099458917, 0.0104112652619720, 0.00925546218271273, 0.00833056343336287,
};

/* _stirling_approx_tail(k): the tail of Stirling's series of log k!,
   tabulated for k <= 9 (the series itself computed at k clamped to
   [0, 9], as JAX computes it).  A new reference. */
static SrVal *stirling_tail(SrInterp *I, SrVal *k) {
  const SrType *kt = sr_value_type(I, k);
  if (!kt) return NULL;
  SCOPE(I);
  SrDtype dt = kt->dtype;
  SrVal *items[10];
  for (int i = 0; i < 10; i++) items[i] = sr_float(NULL, stirling_tail_vals[i]);
  SrVal *lst = KEEP(sr_tuple(NULL, 10, items));
  const char *kw[] = {"dtype"};
  SrVal *kv[] = {dtype_val(s, dt)};
  SrVal *vals = sr_nn_call(s, "jax.numpy.array", 1, &lst, 1, kw, kv);
  SrVal *use_tail = OP(LE, vals ? k : NULL, INT(9));
  SrVal *cv[3] = {sr_nn_typed_scalar(s, 0.0, dt), k, sr_nn_typed_scalar(s, 9.0, dt)};
  SrVal *kc = use_tail ? sr_nn_call(s, "jax.lax.clamp", 3, cv, 0, NULL, NULL) : NULL;
  SrVal *k1 = OP(ADD, kc, INT(1));
  SrVal *kp1sq = OP(MUL, k1, OP(ADD, k1 ? kc : NULL, INT(1)));
  SrVal *x = OP(DIV, kp1sq ? FLT(1.0 / 1260) : NULL, kp1sq);
  x = OP(SUB, x ? FLT(1.0 / 360) : NULL, x);
  x = OP(DIV, x, kp1sq);
  x = OP(SUB, x ? FLT(1.0 / 12) : NULL, x);
  SrVal *approx = OP(DIV, x, OP(ADD, x ? kc : NULL, INT(1)));
  SrVal *kf = jnp1(s, "jax.numpy.floor", approx ? kc : NULL);
  SrVal *iv[1] = {dtype_val(s, SR_I32)};
  SrVal *ki = kf ? sr_nn_call(s, "jax.numpy.asarray", 1, &kf, 1, kw, iv) : NULL;
  SrVal *tab = ki ? KEEP(sr_getitem(I, vals, ki)) : NULL;
  return sr_nn_done(s, select3(s, use_tail, tab, approx));
}

/* _binomial_inversion's loop: (i, num_geom, geom_sum, key); v: count,
   log1minusprob, max_iters */
static SrVal *inversion_cond(SrInterp *I, SrArgs *a) {
  const Loop *L = loop_of(I);
  SrVal **c = carry_items(I, a, 4, "cond_fn");
  if (!c) return NULL;
  SCOPE(I);
  SrVal *any = jnp1(s, "jax.numpy.any", OP(LE, c[2], L->v[0]));
  SrVal *more = OP(LT, any ? c[0] : NULL, L->v[2]);
  return sr_nn_done(s, OP(BITAND, any, more));
}

static SrVal *inversion_body(SrInterp *I, SrArgs *a) {
  const Loop *L = loop_of(I);
  SrVal **c = carry_items(I, a, 4, "body_fn");
  if (!c) return NULL;
  SCOPE(I);
  SrVal *ks[2];
  if (split_n(s, c[3], 2, ks) < 0) return sr_nn_done(s, NULL);
  SrVal *le = OP(LE, c[2], L->v[0]);
  SrVal *ng = select3(s, le, OP(ADD, le ? c[1] : NULL, INT(1)), c[1]);
  SrVal *u = ng ? uniform(s, ks[0], &L->st, sr_value_type(I, L->v[1])->dtype) : NULL;
  SrVal *geom = jnp1(s, "jax.numpy.ceil", OP(DIV, jnp1(s, "jax.numpy.log", u), L->v[1]));
  SrVal *gs = OP(ADD, geom ? c[2] : NULL, geom);
  SrVal *out[4] = {OP(ADD, gs ? c[0] : NULL, INT(1)), ng, gs, ks[1]};
  return sr_nn_done(s, out[0] ? tuple_of(s, 4, out) : NULL);
}

/* _binomial_inversion(key, count, prob) (inline): counts the geometric
   gaps until they pass count */
static SrVal *binomial_inversion(SrInterp *I, SrVal *key, SrVal *count, SrVal *prob, const Static *st,
                                 SrVal *max_iters) {
  SCOPE(I);
  SrVal *l1p = jnp1(s, "jax.numpy.log1p", neg(s, prob));
  const SrType *pt = type_of(s, l1p ? prob : NULL);
  if (!pt) return sr_nn_done(s, NULL);
  SrVal *ng0 = full(s, prob, INT(0), pt->dtype, st);
  SrVal *gs0 = ng0 ? full(s, prob, INT(0), pt->dtype, st) : NULL;
  SrVal *init[4] = {INT(0), ng0, gs0, key};
  SrVal *v[3] = {count, l1p, max_iters};
  SrVal *k = while_loop(s, "cond_fn", inversion_cond, "body_fn", inversion_body, st, 3, v,
                        gs0 ? tuple_of(s, 4, init) : NULL, 1);
  SrVal *r = OP(SUB, k, INT(1));
  return sr_nn_done(s, r ? sr_nn_call2(s, "jax.numpy.astype", r, dtype_val(s, st->dt)) : NULL);
}

/* _btrs's loop: (i, k_out, accepted, key); v: the constants below */
enum { B_COUNT, B_A, B_B, B_C, B_V_R, B_R, B_ALPHA, B_M, B_PROB, B_MAX };

static SrVal *btrs_cond(SrInterp *I, SrArgs *a) {
  const Loop *L = loop_of(I);
  SrVal **c = carry_items(I, a, 4, "cond_fn");
  if (!c) return NULL;
  SCOPE(I);
  SrVal *any = jnp1(s, "jax.numpy.any", invert(s, c[2]));
  SrVal *more = OP(LT, any ? c[0] : NULL, L->v[B_MAX]);
  return sr_nn_done(s, OP(BITAND, any, more));
}

static SrVal *tail(SrNnScope *s, SrVal *k) { return k ? KEEP(stirling_tail(s->I, k)) : NULL; }

/* count - x + 1 */
static SrVal *count_less(SrNnScope *s, SrVal *count, SrVal *x) { return OP(ADD, OP(SUB, count, x), INT(1)); }

static SrVal *btrs_body(SrInterp *I, SrArgs *a) {
  const Loop *L = loop_of(I);
  SrVal **c = carry_items(I, a, 4, "body_fn");
  if (!c) return NULL;
  SCOPE(I);
  SrVal *const *v = L->v;
  SrVal *count = v[B_COUNT], *m = v[B_M], *r = v[B_R];
  SrVal *ks[3];
  if (split_n(s, c[3], 3, ks) < 0) return sr_nn_done(s, NULL);
  SrDtype dt = sr_value_type(I, v[B_PROB])->dtype;
  SrVal *u = uniform(s, ks[1], &L->st, dt);
  SrVal *vv = u ? uniform(s, ks[2], &L->st, dt) : NULL;
  u = OP(SUB, vv ? u : NULL, FLT(0.5));
  SrVal *us = OP(SUB, u ? FLT(0.5) : NULL, jnp1(s, "jax.numpy.abs", u));
  SrVal *g1 = OP(GE, us, FLT(0.07));
  SrVal *accept1 = OP(BITAND, g1, OP(LE, g1 ? vv : NULL, v[B_V_R]));
  /* k = floor((2 * a / us + b) * u + c) */
  SrVal *x = OP(MUL, accept1 ? INT(2) : NULL, v[B_A]);
  x = OP(DIV, x, us);
  x = OP(ADD, x, v[B_B]);
  x = OP(MUL, x, u);
  x = OP(ADD, x, v[B_C]);
  SrVal *k = jnp1(s, "jax.numpy.floor", x);
  SrVal *r1 = OP(LT, k, INT(0));
  SrVal *reject = OP(BITOR, r1, OP(GT, r1 ? k : NULL, count));
  /* v = log(v * alpha / (a / (us * us) + b)) */
  SrVal *y = OP(MUL, reject ? vv : NULL, v[B_ALPHA]);
  SrVal *d = OP(MUL, y ? us : NULL, us);
  d = OP(ADD, OP(DIV, d ? v[B_A] : NULL, d), v[B_B]);
  SrVal *lv = jnp1(s, "jax.numpy.log", OP(DIV, y, d));
  /* ub, its seven terms left to right */
  SrVal *f = OP(ADD, lv ? m : NULL, FLT(0.5));
  SrVal *g = OP(ADD, f ? m : NULL, INT(1));
  g = OP(DIV, g, OP(MUL, g ? r : NULL, count_less(s, count, m)));
  SrVal *ub = OP(MUL, f, jnp1(s, "jax.numpy.log", g));
  f = OP(ADD, ub ? count : NULL, INT(1));
  g = count_less(s, f ? count : NULL, m);
  g = OP(DIV, g, count_less(s, g ? count : NULL, k));
  ub = OP(ADD, ub, OP(MUL, f, jnp1(s, "jax.numpy.log", g)));
  f = OP(ADD, ub ? k : NULL, FLT(0.5));
  g = OP(MUL, f ? r : NULL, count_less(s, count, k));
  g = OP(DIV, g, OP(ADD, g ? k : NULL, INT(1)));
  ub = OP(ADD, ub, OP(MUL, f, jnp1(s, "jax.numpy.log", g)));
  ub = OP(ADD, ub, tail(s, ub ? m : NULL));
  ub = OP(ADD, ub, tail(s, OP(SUB, ub ? count : NULL, m)));
  ub = OP(SUB, ub, tail(s, ub ? k : NULL));
  ub = OP(SUB, ub, tail(s, OP(SUB, ub ? count : NULL, k)));
  SrVal *accept2 = OP(LE, ub ? lv : NULL, ub);
  SrVal *nr = invert(s, accept2 ? reject : NULL);
  SrVal *accept = OP(BITOR, accept1, OP(BITAND, nr, accept2));
  SrVal *k_out = select3(s, accept, k, c[1]);
  SrVal *acc = OP(BITOR, k_out ? c[2] : NULL, accept);
  SrVal *out[4] = {OP(ADD, acc ? c[0] : NULL, INT(1)), k_out, acc, ks[0]};
  return sr_nn_done(s, out[0] ? tuple_of(s, 4, out) : NULL);
}

/* _btrs(key, count, prob) (inline): Hormann's transformed rejection with
   squeeze */
static SrVal *btrs(SrInterp *I, SrVal *key, SrVal *count, SrVal *prob, const Static *st, SrVal *max_iters) {
  SCOPE(I);
  SrVal *x = OP(MUL, count, prob);
  SrVal *sd = jnp1(s, "jax.numpy.sqrt", OP(MUL, x, OP(SUB, x ? INT(1) : NULL, prob)));
  SrVal *b = OP(ADD, sd ? FLT(1.15) : NULL, OP(MUL, FLT(2.53), sd));
  SrVal *ca = OP(ADD, b ? FLT(-0.0873) : NULL, OP(MUL, FLT(0.0248), b));
  ca = OP(ADD, ca, OP(MUL, ca ? FLT(0.01) : NULL, prob));
  SrVal *cc = OP(ADD, OP(MUL, ca ? count : NULL, prob), FLT(0.5));
  SrVal *v_r = OP(SUB, cc ? FLT(0.92) : NULL, OP(DIV, FLT(4.2), b));
  SrVal *r = OP(DIV, v_r ? prob : NULL, OP(SUB, INT(1), prob));
  SrVal *alpha = OP(MUL, OP(ADD, r ? FLT(2.83) : NULL, OP(DIV, FLT(5.1), b)), sd);
  SrVal *m = jnp1(s, "jax.numpy.floor", OP(MUL, OP(ADD, alpha ? count : NULL, INT(1)), prob));
  const SrType *pt = type_of(s, m ? prob : NULL);
  if (!pt) return sr_nn_done(s, NULL);
  SrVal *k0 = full(s, prob, INT(-1), pt->dtype, st);
  SrVal *fv[3] = {shape_val(s, st), KEEP(sr_bool(0)), dtype_val(s, SR_BOOL)};
  SrVal *acc0 = k0 ? sr_nn_call(s, "jax.numpy.full", 3, fv, 0, NULL, NULL) : NULL;
  SrVal *init[4] = {INT(0), k0, acc0, key};
  SrVal *v[B_MAX + 1] = {count, ca, b, cc, v_r, r, alpha, m, prob, max_iters};
  SrVal *k = while_loop(s, "cond_fn", btrs_cond, "body_fn", btrs_body, st, B_MAX + 1, v,
                        acc0 ? tuple_of(s, 4, init) : NULL, 1);
  return sr_nn_done(s, k ? sr_nn_call2(s, "jax.numpy.astype", k, dtype_val(s, st->dt)) : NULL);
}

/* _binomial(key, count, prob) (inline): inversion where count * q <= 10,
   btrs elsewhere, q = min(p, 1 - p); nan for an invalid count or p,
   inf for an infinite count */
static SrVal *binomial_body(SrInterp *I, SrArgs *a) {
  const Static *st = static_args(I);
  SCOPE(I);
  SrVal *prob = a->v[2];
  if (sr_nn_promote_inexact(s, 1, &prob, "binomial") < 0) return sr_nn_done(s, NULL);
  SrVal *count = convert(s, a->v[1], sr_value_type(I, prob)->dtype);
  count = count ? sr_nn_call2(s, "jax.numpy.broadcast_to", count, shape_val(s, st)) : NULL;
  prob = count ? sr_nn_call2(s, "jax.numpy.broadcast_to", prob, shape_val(s, st)) : NULL;
  SrVal *p_lt_half = OP(LT, prob, FLT(0.5));
  SrVal *q = select3(s, p_lt_half, prob, OP(SUB, p_lt_half ? FLT(1.0) : NULL, prob));
  SrVal *cnan = OP(NE, q ? count : NULL, count);
  SrVal *count_nan_or_neg = OP(BITOR, cnan, OP(LT, cnan ? count : NULL, FLT(0.0)));
  SrVal *count_inf = jnp1(s, "jax.numpy.isinf", count_nan_or_neg ? count : NULL);
  SrVal *q_is_nan = OP(NE, count_inf ? q : NULL, q);
  SrVal *q_l_0 = OP(LT, q_is_nan ? q : NULL, FLT(0.0));
  SrVal *bad_q = OP(BITOR, q_is_nan, q_l_0);
  q = select3(s, bad_q, sr_nn_full_like(s, bad_q ? q : NULL, FLT(0.01)), q);
  SrVal *small = OP(LE, OP(MUL, q ? count : NULL, q), FLT(10.0));
  SrVal *use_inversion = OP(BITOR, small ? count_nan_or_neg : NULL, small);
  count = jnp1(s, "jax.numpy.floor", use_inversion ? count : NULL);
  SrVal *count_inv = select3(s, use_inversion, count, sr_nn_full_like(s, count, FLT(0.0)));
  SrVal *count_btrs = select3(s, use_inversion, sr_nn_full_like(s, count_inv ? count : NULL, FLT(1e4)), count);
  SrVal *q_btrs = select3(s, use_inversion, sr_nn_full_like(s, count_btrs ? q : NULL, FLT(0.5)), q);
  SrVal *mx = q_btrs ? max_of(s, st->dt, 0) : NULL;
  SrVal *inv = mx ? KEEP(binomial_inversion(I, a->v[0], count_inv, q, st, mx)) : NULL;
  SrVal *bt = inv ? KEEP(btrs(I, a->v[0], count_btrs, q_btrs, st, mx)) : NULL;
  SrVal *samples = select3(s, use_inversion, inv, bt);
  SrVal *invalid = OP(BITOR, OP(BITOR, samples ? q_l_0 : NULL, q_is_nan), count_nan_or_neg);
  SrVal *fv[3] = {samples, FLT(NAN), dtype_val(s, st->dt)};
  SrVal *nanf = invalid ? sr_nn_call(s, "jax.numpy.full_like", 3, fv, 0, NULL, NULL) : NULL;
  samples = select3(s, invalid, nanf, samples);
  SrVal *c_inf = OP(BITAND, samples ? count_inf : NULL, invert(s, samples ? invalid : NULL));
  fv[0] = samples;
  fv[1] = FLT(INFINITY);
  SrVal *inff = c_inf ? sr_nn_call(s, "jax.numpy.full_like", 3, fv, 0, NULL, NULL) : NULL;
  samples = select3(s, c_inf, inff, samples);
  SrVal *keep = OP(BITOR, samples ? p_lt_half : NULL, count_nan_or_neg);
  keep = OP(BITOR, keep, q_is_nan);
  keep = OP(BITOR, keep, count_inf);
  SrVal *cs = keep ? sr_nn_call2(s, "jax.numpy.astype", count, dtype_val(s, st->dt)) : NULL;
  return sr_nn_done(s, select3(s, keep, samples, OP(SUB, cs, samples)));
}

/* check_arraylike(name, *args) */
static int arraylike(SrInterp *I, const char *name, int n, SrVal **args) {
  for (int i = 0; i < n; i++) {
    SrVal *v = args[i];
    if (v->kind == SR_V_INT || v->kind == SR_V_FLOAT || v->kind == SR_V_BOOL || v->kind == SR_V_COMPLEX || sr_array_of(v))
      continue;
    sr_raise(I, "TypeError", "%s requires ndarray or scalar arguments, got <class '%s'> at position %d.", name,
             sr_val_kind_name(v), i);
    return -1;
  }
  return 0;
}

/* binomial(key, n, p, shape=None, dtype=None) */
static SrVal *bi_binomial(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "binomial", "key, n, p, shape=, dtype=", p) < 0) return NULL;
  SrVal *k = sr_random_check_key(I, p[0], "binomial");
  if (!k) return NULL;
  Static st = {{0}, 0, SR_F32};
  SrVal *r = NULL;
  if (arraylike(I, "binomial", 2, p + 1) < 0 || user_dtype(I, p[4], "binomial", 0, &st.dt) < 0) goto done;
  if (!sr_dtype_is_float(st.dt)) {
    sr_raise(I, "ValueError", "dtype argument to `binomial` must be a float dtype, got %s", sr_dtype_name(st.dt));
    goto done;
  }
  /* the shape: np.broadcast(n, p)'s, or checked against it */
  if (sr_random_param_shape(I, "binomial", p[3], 2, p + 1, st.shape, &st.nd) < 0) goto done;
  /* the jit's arguments as arrays (a Python scalar weakly typed), as
     tracing them makes them */
  SrVal *np_[2] = {sr_jnp_asarray(I, p[1], -1), NULL};
  np_[1] = np_[0] ? sr_jnp_asarray(I, p[2], -1) : NULL;
  SrVal *args[3] = {k, np_[0], np_[1]};
  if (np_[1]) r = call_jit(I, "_binomial", binomial_body, &st, 3, args, 1);
  sr_unref(np_[0]);
  sr_unref(np_[1]);
done:
  sr_unref(k);
  return r;
}

/* ==== multinomial ==== */

/* multinomial's scan body f(remainder, (ratio, key)): a binomial count of
   the remainder */
static SrVal *multinomial_f(SrInterp *I, SrArgs *a) {
  if (a->n != 2 || !sr_is_seq(a->v[1]) || a->v[1]->seq.n != 2) return sr_raise(I, "TypeError", "f(remainder, ratio_key)");
  SCOPE(I);
  SrVal *rem = a->v[0], *ratio = a->v[1]->seq.items[0], *key = a->v[1]->seq.items[1];
  const SrType *rt = sr_value_type(I, rem);
  if (!rt) return sr_nn_done(s, NULL);
  SrVal *cv[3] = {ratio, INT(0), INT(1)};
  SrVal *cl = sr_nn_call(s, "jax.numpy.clip", 3, cv, 0, NULL, NULL);
  SrVal *bv[3] = {key, rem, cl};
  const char *kw[] = {"dtype"};
  SrVal *kv[] = {dtype_val(s, rt->dtype)};
  SrVal *count = cl ? sr_nn_call(s, "jax.random.binomial", 3, bv, 1, kw, kv) : NULL;
  SrVal *out[2] = {OP(SUB, rem, count), count};
  return sr_nn_done(s, out[0] ? tuple_of(s, 2, out) : NULL);
}

/* multinomial(key, n, p, *, shape=None, dtype=None, unroll=1) */
static SrVal *bi_multinomial(SrInterp *I, SrArgs *a) {
  SrVal *p[6];
  if (sr_args_parse(I, a, "multinomial", "key, n, p, *, shape=, dtype=, unroll=", p) < 0) return NULL;
  SrVal *k = sr_random_check_key(I, p[0], "multinomial");
  if (!k) return NULL;
  SCOPE(I);
  KEEP(k);
  if (arraylike(I, "multinomial", 2, p + 1) < 0) return sr_nn_done(s, NULL);
  /* promote_dtypes_inexact(n, p): one inexact dtype, shapes kept */
  SrVal *np_[2] = {KEEP(sr_jnp_asarray(I, p[1], -1)), NULL};
  np_[1] = np_[0] ? KEEP(sr_jnp_asarray(I, p[2], -1)) : NULL;
  SrVal *rt = np_[1] ? sr_nn_call2(s, "jax.numpy.result_type", p[1], p[2]) : NULL;
  if (!rt || rt->kind != SR_V_DTYPE) return sr_nn_done(s, NULL);
  SrDtype dt = sr_dtype_is_inexact(rt->dtype) ? rt->dtype
               : I->jax->enable_x64                                            ? SR_F64
                                                                               : SR_F32;
  int weak = 1;
  for (int i = 0; i < 2; i++)
    if (!(p[1 + i]->kind == SR_V_INT || p[1 + i]->kind == SR_V_FLOAT || p[1 + i]->kind == SR_V_BOOL ||
          sr_value_type(I, np_[i])->weak))
      weak = 0;
  for (int i = 0; i < 2; i++)
    if (!(np_[i] = KEEP(sr_lax_convert(I, np_[i], dt, weak, NULL)))) return sr_nn_done(s, NULL);
  const SrType *pt = sr_value_type(I, np_[1]);
  Static st = {{0}, 0, dt};
  if (sr_nn_given(p[3])) {
    if (sr_shape_arg(I, p[3], st.shape, &st.nd, "shape") < 0) return sr_nn_done(s, NULL);
  } else {
    st.nd = pt->ndim;
    for (int i = 0; i < pt->ndim; i++) st.shape[i] = pt->dims[i].size;
  }
  if (st.nd < 1) return sr_nn_done(s, sr_raise(I, "IndexError", "tuple index out of range"));
  Static head = st;
  head.nd--;
  SrVal *n = sr_nn_call2(s, "jax.numpy.broadcast_to", np_[0], shape_val(s, &head));
  SrVal *pb = n ? sr_nn_call2(s, "jax.numpy.broadcast_to", np_[1], shape_val(s, &st)) : NULL;
  SrVal *pm = pb ? sr_nn_call3(s, "jax.numpy.moveaxis", pb, INT(-1), INT(0)) : NULL;
  SrVal *cv[3] = {pm, INT(0), KEEP(sr_bool(1))};
  const char *ckw[] = {"reverse"};
  SrVal *remaining = pm ? sr_nn_call(s, "jax.lax.cumsum", 2, cv, 1, ckw, cv + 2) : NULL;
  SrVal *z = OP(EQ, remaining, INT(0));
  SrVal *ratios = OP(DIV, pm, z ? sr_nn_call3(s, "jax.numpy.where", z, INT(1), remaining) : NULL);
  SrVal *sv[2] = {k, INT(st.shape[st.nd - 1])};
  SrVal *keys = ratios ? sr_nn_call(s, "jax.random.split", 2, sv, 0, NULL, NULL) : NULL;
  SrVal *xs[2] = {ratios, keys};
  SrVal *f = keys ? KEEP(sr_builtin_with("f", multinomial_f, NULL, NULL)) : NULL;
  SrVal *scv[3] = {f, n, tuple_of(s, 2, xs)};
  const char *ukw[] = {"unroll"};
  SrVal *ukv[] = {p[5]};
  SrVal *res = scv[2] ? sr_nn_call(s, "jax.lax.scan", 3, scv, 1, ukw, ukv) : NULL;
  SrVal *counts = res && sr_is_seq(res) && res->seq.n == 2 ? res->seq.items[1] : NULL;
  SrVal *mv = counts ? sr_nn_call3(s, "jax.numpy.moveaxis", counts, INT(0), INT(-1)) : NULL;
  return sr_nn_done(s, mv ? sr_nn_call2(s, "jax.numpy.astype", mv, sr_nn_given(p[4]) ? p[4] : sr_none()) : NULL);
}

void sr_random_counts_init(void) {
  sr_def("jax.random.poisson", bi_poisson,
         "poisson(key, lam, shape=None, dtype=int, *, method='exact'): Poisson(lam) counts (Knuth below 10, "
         "transformed rejection above; 'approximate': a normal draw through the inverse cdf)");
  sr_def("jax.random.binomial", bi_binomial,
         "binomial(key, n, p, shape=None, dtype=float): Binomial(n, p) counts (inversion, or BTRS where n p > 10)");
  sr_def("jax.random.multinomial", bi_multinomial,
         "multinomial(key, n, p, *, shape=None, dtype=float, unroll=1): counts of n trials over p's last axis");
}
