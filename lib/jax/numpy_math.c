/* numpy_math.c: jax.numpy's elementwise and mathematical functions of
 * issue 15's list (jax/_src/numpy/ufuncs.py, lax_numpy.py,
 * reductions.py): the inverse and hyperbolic trigonometric functions and
 * their array-API aliases, shifts and bit counts, logarithms in bases 2
 * and 10, copysign, signbit, spacing, nextafter, rint, trunc, fmod, modf,
 * divmod, hypot, heaviside, sinc (with its custom_jvp), i0, fmax, fmin,
 * gcd, lcm, isinf, isposinf, isneginf, real, imag, conj, isreal,
 * iscomplex and the reductions count_nonzero, ptp, nanvar, nanstd,
 * nancumsum, nancumprod, cumulative_sum, cumulative_prod, nanargmax and
 * nanargmin.
 *
 * Each is written as JAX writes it, with JAX's wrappers: @jit(inline=True)
 * is nothing, a plain @jit a jit equation named for the function
 * (sr_api_jit; static arguments travel in the body's data), custom_jvp a
 * jax.custom_jvp object with JAX's rule (nn.h's sr_nn_custom_jvp).
 * Complex dtypes are not supported here (real and imag are those of real
 * input: x and zeros).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jax/jax.h"
#include "jax/math_api.h"
#include "jax/nn.h"
#include "py/ast.h"
#include "py/objects.h"
#include "core/jaxstate.h"
#include "jax/api.h"

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
static SrDtype default_float(SrInterp *I) { return I->jax->enable_x64 ? SR_F64 : SR_F32; }
static SrDtype default_int(SrInterp *I) { return I->jax->enable_x64 ? SR_I64 : SR_I32; }
static int is_complex_dt(SrDtype d) { return sr_dtype_kind(d) == SR_DK_COMPLEX; }

/* A @jit'd function over jnp.asarray of each of its n arguments p. */
static SrVal *jit_arrays(SrInterp *I, const char *name, SrBuiltinFn body, int n, SrVal **p) {
  SCOPE(I);
  for (int i = 0; i < n; i++)
    if (!(p[i] = KEEP(sr_jnp_asarray(I, p[i], -1)))) return DONE(NULL);
  return DONE(KEEP(sr_api_jit(I, name, body, NULL, n, p)));
}

/* promote_args (mode 0), promote_args_numeric (1: bool becomes the
   default int), promote_args_inexact (2): args replaced by values the
   scope holds */
static int promote(SrNnScope *s, int n, SrVal **args, const char *name, int mode) {
  SrInterp *I = s->I;
  if (mode == 2) return sr_nn_promote_inexact(s, n, args, name);
  for (int i = 0; i < n; i++)
    if (!(args[i] = KEEP(sr_jnp_asarray(I, args[i], -1)))) return -1;
  if (n > 1) {
    SrVal *p[8];
    for (int i = 0; i < n; i++) p[i] = args[i];
    if (sr_jnp_promote(I, n, p, name) < 0) return -1;
    for (int i = 0; i < n; i++) args[i] = KEEP(p[i]);
  }
  if (mode == 1 && ty(I, args[0])->dtype == SR_BOOL)
    for (int i = 0; i < n; i++)
      if (!(args[i] = KEEP(sr_lax_convert(I, args[i], default_int(I), ty(I, args[i])->weak, NULL)))) return -1;
  return 0;
}

/* _constant_like(x, v): v in x's dtype (not weak) */
static SrVal *cst_like(SrNnScope *s, SrVal *x, double v) {
  const SrType *t = ty(s->I, x);
  return t ? sr_nn_typed_scalar(s, v, t->dtype) : NULL;
}

/* lax._const(x, v): for a weakly typed scalar x, v as a Python scalar of
   x's kind when that is x's dtype (a weak literal); otherwise v in x's
   dtype, not weak */
static SrVal *cst(SrNnScope *s, SrVal *x, double v) {
  const SrType *t = ty(s->I, x);
  if (t && t->weak && t->ndim == 0) {
    if (sr_dtype_is_int(t->dtype) && t->dtype == default_int(s->I)) return IN((int64_t)v);
    if (sr_dtype_kind(t->dtype) == SR_DK_FLOAT && t->dtype == default_float(s->I)) return FL(v);
  }
  return cst_like(s, x, v);
}

/* lax.full_like(x, v, dtype) */
static SrVal *full_like_dt(SrNnScope *s, SrVal *x, SrVal *v, SrDtype dt) {
  const SrType *t = ty(s->I, x);
  if (!t || !v) return NULL;
  int64_t shape[SR_MAX_RANK];
  for (int i = 0; i < t->ndim; i++) shape[i] = t->dims[i].size;
  return KEEP(sr_lax_full(s->I, shape, t->ndim, v, (int)dt, NULL));
}

static SrVal *falses_like(SrNnScope *s, SrVal *x) { return sr_nn_array(s, full_like_dt(s, x, KEEP(sr_bool(0)), SR_BOOL)); }

static SrVal *where3(SrNnScope *s, SrVal *c, SrVal *x, SrVal *y) { return C3("jax.numpy.where", c, x, y); }

static SrVal *astype(SrNnScope *s, SrVal *x, SrDtype dt) {
  return x ? KEEP(sr_lax_convert(s->I, x, dt, 0, NULL)) : NULL;
}

static SrVal *tuple2(SrNnScope *s, SrVal *a, SrVal *b) {
  if (!a || !b) return NULL;
  SrVal *items[2] = {sr_ref(a), sr_ref(b)};
  return KEEP(sr_tuple(NULL, 2, items));
}

static int complex_error(SrNnScope *s, SrVal *x, const char *exc, const char *msg) {
  const SrType *t = ty(s->I, x);
  if (t && is_complex_dt(t->dtype)) {
    sr_raise(s->I, exc, "%s", msg);
    return -1;
  }
  return 0;
}

/* ---- promote, then one lax function (@jit(inline=True)) ---- */

static SrVal *lax1(SrInterp *I, SrArgs *a, const char *name, const char *q, int mode) {
  SrVal *p[1];
  if (sr_args_parse(I, a, name, "x", p) < 0) return NULL;
  SCOPE(I);
  if (promote(s, 1, p, name, mode) < 0) return DONE(NULL);
  return DONE(C1(q, p[0]));
}

static SrVal *lax2(SrInterp *I, SrArgs *a, const char *name, const char *q, int mode) {
  SrVal *p[2];
  if (sr_args_parse(I, a, name, "x1, x2", p) < 0) return NULL;
  SCOPE(I);
  if (promote(s, 2, p, name, mode) < 0) return DONE(NULL);
  return DONE(C2(q, p[0], p[1]));
}

#define L1(fn, name, q, mode) \
  static SrVal *fn(SrInterp *I, SrArgs *a) { return lax1(I, a, name, q, mode); }
#define L2(fn, name, q, mode) \
  static SrVal *fn(SrInterp *I, SrArgs *a) { return lax2(I, a, name, q, mode); }
L1(jnp_arcsin, "arcsin", "jax.lax.asin", 2)
L1(jnp_arccos, "arccos", "jax.lax.acos", 2)
L1(jnp_arctan, "arctan", "jax.lax.atan", 2)
L1(jnp_sinh, "sinh", "jax.lax.sinh", 2)
L1(jnp_cosh, "cosh", "jax.lax.cosh", 2)
L1(jnp_arcsinh, "arcsinh", "jax.lax.asinh", 2)
L1(jnp_arctanh, "arctanh", "jax.lax.atanh", 2)
L1(jnp_cbrt, "cbrt", "jax.lax.cbrt", 2)
L1(jnp_bitwise_not, "bitwise_not", "jax.lax.bitwise_not", 0)
L2(jnp_arctan2, "arctan2", "jax.lax.atan2", 2)
L2(jnp_float_power, "float_power", "jax.lax.pow", 2)
L2(jnp_nextafter, "nextafter", "jax.lax.nextafter", 2)
L2(jnp_left_shift, "left_shift", "jax.lax.shift_left", 1)

/* fabs: lax.abs(*promote_args_inexact('fabs', x)), no complex */
static SrVal *jnp_fabs(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "fabs", "x", p) < 0) return NULL;
  SCOPE(I);
  SrVal *x = KEEP(sr_jnp_asarray(I, p[0], -1));
  if (!x || complex_error(s, x, "TypeError", "ufunc 'fabs' does not support complex dtypes") < 0) return DONE(NULL);
  if (promote(s, 1, &x, "fabs", 2) < 0) return DONE(NULL);
  return DONE(C1("jax.lax.abs", x));
}

/* right_shift: logical for unsigned operands, else arithmetic */
static SrVal *jnp_right_shift(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "right_shift", "x1, x2", p) < 0) return NULL;
  SCOPE(I);
  if (promote(s, 2, p, "right_shift", 1) < 0) return DONE(NULL);
  int u = sr_dtype_kind(ty(I, p[0])->dtype) == SR_DK_UINT;
  return DONE(C2(u ? "jax.lax.shift_right_logical" : "jax.lax.shift_right_arithmetic", p[0], p[1]));
}

/* ---- arccosh (@jit) ---- */

static SrVal *arccosh_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *x = a->v[0];
  if (promote(s, 1, &x, "arccosh", 2) < 0) return DONE(NULL);
  SrVal *r = C1("jax.lax.acosh", x);
  /* lax.acosh's branch differs from np.arccosh's: a result with a
     negative real part is negated */
  if (r && is_complex_dt(ty(I, r)->dtype))
    r = where3(s, C2("jax.lax.lt", C1("jax.lax.real", r), FL(0)), C1("jax.lax.neg", r), r);
  return DONE(r);
}

static SrVal *jnp_arccosh(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "arccosh", "x", p) < 0) return NULL;
  return sr_api_jit(I, "arccosh", arccosh_body, NULL, 1, p);
}

/* ---- log2, log10, deg2rad, rad2deg (inline) ---- */

static SrVal *jnp_log2(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "log2", "x", p) < 0) return NULL;
  SCOPE(I);
  if (promote(s, 1, p, "log2", 2) < 0) return DONE(NULL);
  SrVal *lx = C1("jax.lax.log", p[0]);
  return DONE(lx ? C2("jax.lax.div", lx, C1("jax.lax.log", cst_like(s, p[0], 2))) : NULL);
}

static SrVal *jnp_log10(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "log10", "x", p) < 0) return NULL;
  SCOPE(I);
  if (promote(s, 1, p, "log10", 2) < 0) return DONE(NULL);
  return DONE(C2("jax.lax.mul", C1("jax.lax.log", p[0]), cst(s, p[0], 0.4342944819032518)));
}

static SrVal *scaled(SrInterp *I, SrArgs *a, const char *name, double k) {
  SrVal *p[1];
  if (sr_args_parse(I, a, name, "x", p) < 0) return NULL;
  SCOPE(I);
  if (promote(s, 1, p, name, 2) < 0) return DONE(NULL);
  return DONE(C2("jax.lax.mul", p[0], cst(s, p[0], k)));
}

static SrVal *jnp_deg2rad(SrInterp *I, SrArgs *a) { return scaled(I, a, "deg2rad", M_PI / 180); }
static SrVal *jnp_rad2deg(SrInterp *I, SrArgs *a) { return scaled(I, a, "rad2deg", 180 / M_PI); }

/* ---- signbit, copysign, spacing ---- */

static SrVal *signbit_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *x = a->v[0];
  SrDtype dt = ty(I, x)->dtype;
  if (sr_dtype_is_int(dt)) return DONE(C2("jax.lax.lt", x, cst_like(s, x, 0)));
  if (dt == SR_BOOL) return DONE(falses_like(s, x));
  if (sr_dtype_kind(dt) != SR_DK_FLOAT)
    return DONE(sr_raise(I, "ValueError", "jax.numpy.signbit is not well defined for %s", sr_dtype_name(dt)));
  int bits = sr_dtype_info(dt)->bits;
  SrDtype it = bits == 16 ? SR_I16 : bits == 32 ? SR_I32 : bits == 64 ? SR_I64 : SR_BOOL;
  if (it == SR_BOOL)
    return DONE(sr_raise(I, "NotImplementedError", "jax.numpy.signbit only supports 16, 32, and 64-bit types."));
  SrVal *xi = KEEP(sr_bindv(I, SR_P_bitcast_convert_type, 1, &x, "new_dtype", sr_dtype_val(NULL, it), NULL));
  return DONE(astype(s, OP(RSHIFT, xi, IN(bits - 1)), SR_BOOL));
}

static SrVal *signbit_fn(SrInterp *I, SrVal *x) { return sr_api_jit(I, "signbit", signbit_body, NULL, 1, &x); }

static SrVal *jnp_signbit(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "signbit", "x", p) < 0) return NULL;
  SCOPE(I);
  if (promote(s, 1, p, "signbit", 0) < 0) return DONE(NULL);
  return DONE(KEEP(signbit_fn(I, p[0])));
}

/* _where(signbit(x2).astype(bool), -lax.abs(x1), lax.abs(x1)) */
static SrVal *copysign_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *xy[2] = {a->v[0], a->v[1]};
  if (promote(s, 2, xy, "copysign", 2) < 0) return DONE(NULL);
  if (complex_error(s, xy[0], "TypeError", "copysign does not support complex-valued inputs") < 0) return DONE(NULL);
  SrVal *sb = astype(s, KEEP(signbit_fn(I, xy[1])), SR_BOOL);
  SrVal *ab = sb ? C1("jax.lax.abs", xy[0]) : NULL;
  SrVal *nab = ab ? KEEP(sr_unop(I, SR_OP_NEG, ab)) : NULL;
  SrVal *ab2 = nab ? C1("jax.lax.abs", xy[0]) : NULL;
  return DONE(where3(s, sb, nab, ab2));
}

static SrVal *copysign_fn(SrInterp *I, SrVal *x, SrVal *y) {
  SrVal *v[2] = {x, y};
  return sr_api_jit(I, "copysign", copysign_body, NULL, 2, v);
}

static SrVal *jnp_copysign(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "copysign", "x1, x2", p) < 0) return NULL;
  return copysign_fn(I, p[0], p[1]);
}

/* spacing (inline): nextafter toward copysign(inf, x), minus x; the
   smallest subnormal (signed) where that is 0; float16 toward +inf */
static SrVal *jnp_spacing(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "spacing", "x", p) < 0) return NULL;
  SCOPE(I);
  if (promote(s, 1, p, "spacing", 2) < 0) return DONE(NULL);
  SrVal *x = p[0];
  SrDtype dt = ty(I, x)->dtype;
  if (is_complex_dt(dt)) return DONE(sr_raise(I, "ValueError", "jnp.spacing is not defined for complex inputs."));
  SrVal *inf = cst(s, x, INFINITY);
  if (dt == SR_F16) return DONE(OP(SUB, C2("jax.lax.nextafter", x, inf), x));
  SrVal *r = OP(SUB, C2("jax.lax.nextafter", x, KEEP(copysign_fn(I, inf, x))), x);
  double sub = dt == SR_F64 ? 4.9406564584124654e-324 : dt == SR_BF16 ? 9.183549615799121e-41 : 1.401298464324817e-45;
  SrVal *ss = r ? sr_nn_typed_scalar(s, sub, dt) : NULL;
  SrVal *cs = ss ? KEEP(copysign_fn(I, ss, x)) : NULL;
  return DONE(where3(s, OP(EQ, r, IN(0)), cs, r));
}

/* ---- rint, trunc, fmod, modf, divmod ---- */

static SrVal *rint_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *x = a->v[0];
  SrDtype dt = ty(I, x)->dtype;
  if (dt == SR_BOOL || sr_dtype_is_int(dt)) return DONE(astype(s, x, default_float(I)));
  if (is_complex_dt(dt)) {
    /* lax.complex(rint(real(x)), rint(imag(x))) */
    SrVal *re = C1("jax.numpy.rint", C1("jax.lax.real", x)), *im = C1("jax.numpy.rint", C1("jax.lax.imag", x));
    return DONE(re && im ? C2("jax.lax.complex", re, im) : NULL);
  }
  SrVal *v[2] = {x, IN(1)};
  const char *kw[1] = {"rounding_method"};
  SrVal *kv[1] = {v[1]};
  return DONE(sr_nn_call(s, "jax.lax.round", 1, v, 1, kw, kv));
}

static SrVal *jnp_rint(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "rint", "x", p) < 0) return NULL;
  return jit_arrays(I, "rint", rint_body, 1, p);
}

static SrVal *trunc_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *x = a->v[0];
  SrDtype dt = ty(I, x)->dtype;
  if (dt == SR_BOOL || sr_dtype_is_int(dt)) return DONE(x);
  SrVal *lt = C2("jax.lax.lt", x, cst(s, x, 0));
  SrVal *c = lt ? C1("jax.numpy.ceil", x) : NULL;
  SrVal *f = c ? C1("jax.numpy.floor", x) : NULL;
  return DONE(C3("jax.numpy.where", lt, c, f));
}

static SrVal *jnp_trunc(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "trunc", "x", p) < 0) return NULL;
  return jit_arrays(I, "trunc", trunc_body, 1, p);
}

static SrVal *fmod_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *xy[2] = {a->v[0], a->v[1]};
  int weak;
  SrDtype rt = sr_jnp_result_dtype(I, 2, xy, &weak);
  if (sr_dtype_is_int(rt)) {
    SrVal *x2 = xy[1];
    SrVal *ones = full_like_dt(s, x2, IN(1), ty(I, x2)->dtype);
    xy[1] = where3(s, OP(EQ, x2, IN(0)), ones, x2);
    if (!xy[1]) return DONE(NULL);
  }
  if (promote(s, 2, xy, "fmod", 1) < 0) return DONE(NULL);
  return DONE(C2("jax.lax.rem", xy[0], xy[1]));
}

static SrVal *jnp_fmod(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "fmod", "x1, x2", p) < 0) return NULL;
  return jit_arrays(I, "fmod", fmod_body, 2, p);
}

/* whole = _where(lax.ge(x, lax._zero(x)), floor(x), ceil(x)); x - whole, whole */
static SrVal *modf_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *x = a->v[0];
  if (promote(s, 1, &x, "modf", 2) < 0) return DONE(NULL);
  SrVal *ge = C2("jax.lax.ge", x, cst(s, x, 0));
  SrVal *f = ge ? C1("jax.numpy.floor", x) : NULL;
  SrVal *c = f ? C1("jax.numpy.ceil", x) : NULL;
  SrVal *whole = where3(s, ge, f, c);
  return DONE(tuple2(s, OP(SUB, x, whole), whole));
}

static SrVal *jnp_modf(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "modf", "x, out=", p) < 0) return NULL;
  if (sr_nn_given(p[1])) return sr_raise(I, "NotImplementedError", "The 'out' argument to jnp.modf is not supported.");
  return jit_arrays(I, "modf", modf_body, 1, p);
}

/* _float_divmod, as CPython's float_divmod */
static SrVal *float_divmod(SrNnScope *s, SrVal *x1, SrVal *x2) {
  SrVal *mod = C2("jax.lax.rem", x1, x2);
  SrVal *x1c = mod ? where3(s, OP(EQ, x2, IN(0)), x1, C2("jax.lax.sub", x1, mod)) : NULL;
  SrVal *div = C2("jax.lax.div", x1c, x2);
  SrVal *m0 = div ? OP(NE, mod, IN(0)) : NULL;
  SrVal *sx2 = m0 ? C1("jax.lax.sign", x2) : NULL;
  SrVal *sg = sx2 ? OP(NE, sx2, C1("jax.lax.sign", mod)) : NULL;
  SrVal *ind = C2("jax.lax.bitwise_and", m0, sg);
  SrVal *mod2 = ind ? C3("jax.lax.select", ind, OP(ADD, mod, x2), mod) : NULL;
  SrVal *div2 = mod2 ? C3("jax.lax.select", ind, OP(SUB, div, FL(1.0)), div) : NULL;
  return tuple2(s, C1("jax.lax.round", div2), mod2);
}

static SrVal *divmod_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *xy[2] = {a->v[0], a->v[1]};
  if (promote(s, 2, xy, "divmod", 1) < 0) return DONE(NULL);
  if (sr_dtype_is_int(ty(I, xy[0])->dtype)) {
    SrVal *q = C2("jax.numpy.floor_divide", xy[0], xy[1]);
    return DONE(q ? tuple2(s, q, C2("jax.numpy.remainder", xy[0], xy[1])) : NULL);
  }
  return DONE(float_divmod(s, xy[0], xy[1]));
}

static SrVal *jnp_divmod(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "divmod", "x1, x2", p) < 0) return NULL;
  return sr_api_jit(I, "divmod", divmod_body, NULL, 2, p);
}

/* ---- bitwise_count (@jit) ---- */

static SrVal *bitwise_count_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *x = a->v[0];
  if (promote(s, 1, &x, "bitwise_count", 1) < 0) return DONE(NULL);
  return DONE(astype(s, C1("jax.lax.population_count", C1("jax.numpy.abs", x)), SR_U8));
}

static SrVal *jnp_bitwise_count(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "bitwise_count", "x", p) < 0) return NULL;
  return sr_api_jit(I, "bitwise_count", bitwise_count_body, NULL, 1, p);
}

/* ---- isinf, isposinf, isneginf ---- */

static SrVal *isinf_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *x = a->v[0];
  SrDtype dt = ty(I, x)->dtype;
  if (sr_dtype_kind(dt) == SR_DK_FLOAT) return DONE(C2("jax.lax.eq", C1("jax.lax.abs", x), cst_like(s, x, INFINITY)));
  if (is_complex_dt(dt)) {
    /* either part infinite */
    SrVal *re = C1("jax.lax.real", x), *im = re ? C1("jax.lax.imag", x) : NULL;
    if (!im) return DONE(NULL);
    SrVal *ir = C2("jax.lax.eq", C1("jax.lax.abs", re), cst_like(s, re, INFINITY));
    SrVal *ii = C2("jax.lax.eq", C1("jax.lax.abs", im), cst_like(s, im, INFINITY));
    return DONE(ir && ii ? C2("jax.lax.bitwise_or", ir, ii) : NULL);
  }
  return DONE(falses_like(s, x));
}

static SrVal *jnp_isinf(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "isinf", "x", p) < 0) return NULL;
  return jit_arrays(I, "isinf", isinf_body, 1, p);
}

static SrVal *isposneginf(SrInterp *I, SrArgs *a, const char *name, double inf) {
  SrVal *p[2];
  if (sr_args_parse(I, a, name, "x, out=", p) < 0) return NULL;
  if (sr_nn_given(p[1]))
    return sr_raise(I, "NotImplementedError", "The 'out' argument to isneginf/isposinf is not supported.");
  SCOPE(I);
  SrVal *x = KEEP(sr_jnp_asarray(I, p[0], -1));
  if (!x) return DONE(NULL);
  SrDtype dt = ty(I, x)->dtype;
  if (sr_dtype_kind(dt) == SR_DK_FLOAT) return DONE(C2("jax.lax.eq", x, cst_like(s, x, inf)));
  if (is_complex_dt(dt)) return DONE(sr_raise(I, "ValueError", "isposinf/isneginf are not well defined for complex types"));
  return DONE(falses_like(s, x));
}

static SrVal *jnp_isposinf(SrInterp *I, SrArgs *a) { return isposneginf(I, a, "isposinf", INFINITY); }
static SrVal *jnp_isneginf(SrInterp *I, SrArgs *a) { return isposneginf(I, a, "isneginf", -INFINITY); }

/* ---- heaviside, hypot (@jit) ---- */

static SrVal *heaviside_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *xy[2] = {a->v[0], a->v[1]};
  if (promote(s, 2, xy, "heaviside", 2) < 0) return DONE(NULL);
  SrVal *x1 = xy[0], *x2 = xy[1], *zero = cst(s, x1, 0);
  SrVal *lt = C2("jax.lax.lt", x1, zero);
  SrVal *gt = lt ? C2("jax.lax.gt", x1, zero) : NULL;
  SrVal *one = gt ? cst(s, x1, 1) : NULL;
  SrVal *nan = one ? C2("jax.lax.ne", x1, x1) : NULL;
  SrVal *inner = where3(s, nan, x1, x2);
  SrVal *mid = where3(s, gt, one, inner);
  return DONE(where3(s, lt, zero, mid));
}

static SrVal *jnp_heaviside(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "heaviside", "x1, x2", p) < 0) return NULL;
  return jit_arrays(I, "heaviside", heaviside_body, 2, p);
}

static SrVal *hypot_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *xy[2] = {a->v[0], a->v[1]};
  if (promote(s, 2, xy, "hypot", 2) < 0) return DONE(NULL);
  if (complex_error(s, xy[0], "ValueError",
                    "jnp.hypot is not well defined for complex-valued inputs. Please convert to real values first, "
                    "such as by using abs(x)") < 0)
    return DONE(NULL);
  SrVal *x1 = C1("jax.lax.abs", xy[0]), *x2 = x1 ? C1("jax.lax.abs", xy[1]) : NULL;
  SrVal *inf = x2 ? C2("jax.lax.bitwise_or", C1("jax.numpy.isposinf", x1), C1("jax.numpy.isposinf", x2)) : NULL;
  SrVal *mx = inf ? C2("jax.numpy.maximum", x1, x2) : NULL;
  SrVal *mn = mx ? C2("jax.numpy.minimum", x1, x2) : NULL;
  SrVal *z1 = mn ? OP(EQ, mx, IN(0)) : NULL;
  SrVal *z2 = z1 ? OP(EQ, mx, IN(0)) : NULL;
  SrVal *ones = z2 ? sr_nn_full_like(s, mx, IN(1)) : NULL; /* lax._ones */
  SrVal *den = where3(s, z2, ones, mx);
  SrVal *r = den ? OP(MUL, mx, C1("jax.lax.sqrt", OP(ADD, IN(1), C1("jax.lax.square", C2("jax.lax.div", mn, den)))))
                 : NULL;
  SrVal *x = where3(s, z1, mx, r);
  return DONE(where3(s, inf, cst(s, x, INFINITY), x));
}

static SrVal *jnp_hypot(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "hypot", "x1, x2", p) < 0) return NULL;
  return sr_api_jit(I, "hypot", hypot_body, NULL, 2, p);
}

/* ---- sinc (@jit) and _sinc_maclaurin (custom_jvp, k nondiff) ---- */

#define SINC_KMAX 8
static SrVal *sinc_mac_cj[SINC_KMAX];
static SrVal *sinc_mac_cjv(SrInterp *I, int k);

/* _sinc_maclaurin(k, x): x * 0 for odd k, else x * 0 + (-1)^(k/2) / (k + 1) */
static SrVal *sinc_mac(SrInterp *I, SrVal *x, int k) {
  SCOPE(I);
  SrVal *z = OP(MUL, x, IN(0));
  if (k % 2) return DONE(z);
  return DONE(OP(ADD, z, cst(s, x, ((k / 2) % 2 ? -1.0 : 1.0) / (k + 1))));
}

/* _sinc_maclaurin_jvp: _sinc_maclaurin(k, x), _sinc_maclaurin(k + 1, x) * t */
static SrVal *sinc_mac_jvp(SrInterp *I, SrArgs *a, int k) {
  if (a->n != 2 || !sr_is_seq(a->v[0]) || !sr_is_seq(a->v[1]) || a->v[0]->seq.n != 1 || a->v[1]->seq.n != 1)
    return sr_raise(I, "TypeError", "_sinc_maclaurin_jvp(k, primals, tangents) takes one primal");
  if (k + 1 >= SINC_KMAX) return sr_raise(I, "NotImplementedError", "sinc: derivatives above order %d", SINC_KMAX - 1);
  SrVal *x = a->v[0]->seq.items[0], *t = a->v[1]->seq.items[0];
  SrVal *c0 = sinc_mac_cjv(I, k), *c1 = c0 ? sinc_mac_cjv(I, k + 1) : NULL;
  if (!c1) return NULL;
  SCOPE(I);
  SrVal *y = KEEP(sr_call1(I, c0, x));
  SrVal *d = y ? KEEP(sr_call1(I, c1, x)) : NULL;
  return DONE(tuple2(s, y, OP(MUL, d, t)));
}

#define SINC_K(k)                                                                                        \
  static SrVal *sinc_fun##k(SrInterp *I, SrArgs *a) {                                                    \
    if (a->n != 1) return sr_raise(I, "TypeError", "_sinc_maclaurin() takes 2 positional arguments");    \
    return sinc_mac(I, a->v[0], k);                                                                     \
  }                                                                                                      \
  static SrVal *sinc_jvp##k(SrInterp *I, SrArgs *a) { return sinc_mac_jvp(I, a, k); }
SINC_K(0)
SINC_K(1)
SINC_K(2)
SINC_K(3)
SINC_K(4)
SINC_K(5)
SINC_K(6)
SINC_K(7)

static SrVal *sinc_mac_cjv(SrInterp *I, int k) {
  static const SrBuiltinFn funs[SINC_KMAX] = {sinc_fun0, sinc_fun1, sinc_fun2, sinc_fun3,
                                              sinc_fun4, sinc_fun5, sinc_fun6, sinc_fun7};
  static const SrBuiltinFn jvps[SINC_KMAX] = {sinc_jvp0, sinc_jvp1, sinc_jvp2, sinc_jvp3,
                                              sinc_jvp4, sinc_jvp5, sinc_jvp6, sinc_jvp7};
  return sr_nn_custom_jvp(I, &sinc_mac_cj[k], "_sinc_maclaurin", funs[k], "_sinc_maclaurin_jvp", jvps[k], 0);
}

static SrVal *sinc_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *x = a->v[0];
  if (promote(s, 1, &x, "sinc", 2) < 0) return DONE(NULL);
  SrVal *cj = sinc_mac_cjv(I, 0);
  SrVal *eq0 = cj ? C2("jax.lax.eq", x, cst(s, x, 0)) : NULL, *eqi = NULL;
  if (eq0 && is_complex_dt(ty(I, x)->dtype)) {
    /* |real(x)| == inf with a finite imag(x) */
    SrVal *re = C1("jax.lax.real", x);
    SrVal *ri = re ? C2("jax.lax.eq", C1("jax.lax.abs", re), cst(s, re, INFINITY)) : NULL;
    eqi = ri ? C2("jax.lax.bitwise_and", ri, C1("jax.lax.is_finite", C1("jax.lax.imag", x))) : NULL;
  } else if (eq0) {
    eqi = C2("jax.lax.eq", C1("jax.lax.abs", x), cst(s, x, INFINITY));
  }
  SrVal *pix = eqi ? C2("jax.lax.mul", cst(s, x, M_PI), x) : NULL;
  SrVal *safe = pix ? where3(s, C2("jax.lax.bitwise_or", eq0, eqi), cst(s, x, 1), pix) : NULL;
  SrVal *m = safe ? KEEP(sr_call1(I, cj, pix)) : NULL;
  SrVal *r = m ? where3(s, eq0, m, C2("jax.lax.div", C1("jax.lax.sin", safe), safe)) : NULL;
  return DONE(r ? where3(s, eqi, cst(s, x, 0), r) : NULL);
}

static SrVal *jnp_sinc(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "sinc", "x", p) < 0) return NULL;
  return jit_arrays(I, "sinc", sinc_body, 1, p);
}

/* ---- i0 (@jit) and _i0 (custom_jvp) ---- */

static SrVal *i0_cj;

/* lax.mul(lax.exp(abs_x), lax_special.bessel_i0e(abs_x)) */
static SrVal *i0_fun(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "_i0() takes 1 positional argument");
  SCOPE(I);
  SrVal *ax = C1("jax.lax.abs", a->v[0]);
  return DONE(C2("jax.lax.mul", C1("jax.lax.exp", ax), C1("jax.lax.bessel_i0e", ax)));
}

/* primal_out, tangent_out = api.jvp(_i0.fun, primals, tangents);
   where(primals[0] == 0, 0.0, tangent_out) */
static SrVal *i0_jvp(SrInterp *I, SrArgs *a) {
  if (a->n != 2 || !sr_is_seq(a->v[0]) || !sr_is_seq(a->v[1]) || a->v[0]->seq.n != 1)
    return sr_raise(I, "TypeError", "_i0_jvp(primals, tangents) takes one primal");
  SCOPE(I);
  SrVal *fun = KEEP(sr_builtin_with("_i0", i0_fun, NULL, NULL));
  SrVal *v[3] = {fun, a->v[0], a->v[1]};
  SrVal *pt = sr_nn_call(s, "jax.jvp", 3, v, 0, NULL, NULL);
  if (!pt || !sr_is_seq(pt) || pt->seq.n != 2) return DONE(pt ? sr_raise(I, "TypeError", "jvp: a pair expected") : NULL);
  SrVal *x = a->v[0]->seq.items[0];
  SrVal *t = where3(s, OP(EQ, x, IN(0)), FL(0.0), pt->seq.items[1]);
  return DONE(tuple2(s, pt->seq.items[0], t));
}

static SrVal *i0_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *x = a->v[0];
  if (promote(s, 1, &x, "i0", 2) < 0) return DONE(NULL);
  SrDtype dt = ty(I, x)->dtype;
  if (sr_dtype_kind(dt) != SR_DK_FLOAT)
    return DONE(sr_raise(I, "ValueError", "Unsupported input type to jax.numpy.i0: %s", sr_dtype_name(dt)));
  SrVal *cj = sr_nn_custom_jvp(I, &i0_cj, "_i0", i0_fun, "_i0_jvp", i0_jvp, 0);
  return DONE(cj ? KEEP(sr_call1(I, cj, x)) : NULL);
}

static SrVal *jnp_i0(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "i0", "x", p) < 0) return NULL;
  return sr_api_jit(I, "i0", i0_body, NULL, 1, p);
}

/* ---- fmax, fmin (@jit) ---- */

static SrVal *fminmax_body(SrInterp *I, SrArgs *a, int is_max) {
  SCOPE(I);
  SrVal *x1 = a->v[0], *x2 = a->v[1];
  SrVal *c = C2(is_max ? "jax.numpy.greater" : "jax.numpy.less", x1, x2);
  SrVal *m = c ? OP(BITOR, c, C1("jax.numpy.isnan", x2)) : NULL;
  return DONE(where3(s, m, x1, x2));
}

static SrVal *fmax_body(SrInterp *I, SrArgs *a) { return fminmax_body(I, a, 1); }
static SrVal *fmin_body(SrInterp *I, SrArgs *a) { return fminmax_body(I, a, 0); }

static SrVal *jnp_fmax(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "fmax", "x1, x2", p) < 0) return NULL;
  return sr_api_jit(I, "fmax", fmax_body, NULL, 2, p);
}

static SrVal *jnp_fmin(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "fmin", "x1, x2", p) < 0) return NULL;
  return sr_api_jit(I, "fmin", fmin_body, NULL, 2, p);
}

/* ---- gcd, lcm (@jit, a while_loop) ---- */

static SrVal *gcd_cond(SrInterp *I, SrArgs *a) {
  if (a->n != 1 || !sr_is_seq(a->v[0]) || a->v[0]->seq.n != 2) return sr_raise(I, "TypeError", "_gcd_cond_fn(xs)");
  SCOPE(I);
  return DONE(C1("jax.numpy.any", OP(NE, a->v[0]->seq.items[1], IN(0))));
}

static SrVal *gcd_body(SrInterp *I, SrArgs *a) {
  if (a->n != 1 || !sr_is_seq(a->v[0]) || a->v[0]->seq.n != 2) return sr_raise(I, "TypeError", "_gcd_body_fn(xs)");
  SCOPE(I);
  SrVal *x1 = a->v[0]->seq.items[0], *x2 = a->v[0]->seq.items[1];
  SrVal *nz = OP(NE, x2, IN(0));
  SrVal *n1 = where3(s, nz, x2, x1);
  SrVal *nz2 = n1 ? OP(NE, x2, IN(0)) : NULL;
  SrVal *n2 = nz2 ? where3(s, nz2, C2("jax.lax.rem", x1, x2), cst(s, x2, 0)) : NULL;
  SrVal *lt = n2 ? OP(LT, n1, n2) : NULL;
  SrVal *r1 = where3(s, lt, n2, n1);
  SrVal *lt2 = r1 ? OP(LT, n1, n2) : NULL;
  return DONE(tuple2(s, r1, where3(s, lt2, n1, n2)));
}

static SrVal *gcd_of(SrNnScope *s, SrVal *x1, SrVal *x2) {
  SrInterp *I = s->I;
  SrVal *xy[2] = {x1, x2};
  if (promote(s, 2, xy, "gcd", 0) < 0) return NULL;
  if (!sr_dtype_is_int(ty(I, xy[0])->dtype))
    return sr_raise(I, "ValueError", "Arguments to jax.numpy.gcd must be integers.");
  /* broadcast_arrays: promote gave them one rank */
  const SrType *t0 = ty(I, xy[0]), *t1 = ty(I, xy[1]);
  int64_t shape[SR_MAX_RANK];
  for (int i = 0; i < t0->ndim; i++)
    shape[i] = t0->dims[i].size == 1 ? t1->dims[i].size : t0->dims[i].size;
  for (int i = 0; i < 2; i++)
    if (!(xy[i] = KEEP(sr_lax_broadcast_to(I, xy[i], shape, t0->ndim, NULL)))) return NULL;
  SrVal *a1 = C1("jax.numpy.abs", xy[0]);
  SrVal *a2 = a1 ? C1("jax.numpy.abs", xy[1]) : NULL;
  SrVal *init = tuple2(s, a1, a2);
  SrVal *cf = init ? KEEP(sr_builtin_with("_gcd_cond_fn", gcd_cond, NULL, NULL)) : NULL;
  SrVal *bf = cf ? KEEP(sr_builtin_with("_gcd_body_fn", gcd_body, NULL, NULL)) : NULL;
  SrVal *r = bf ? C3("jax.lax.while_loop", cf, bf, init) : NULL;
  return r ? KEEP(sr_ref(r->seq.items[0])) : NULL;
}

static SrVal *jgcd_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  return DONE(gcd_of(s, a->v[0], a->v[1]));
}

static SrVal *gcd_fn(SrInterp *I, SrVal *x1, SrVal *x2) {
  SrVal *v[2] = {x1, x2};
  return sr_api_jit(I, "gcd", jgcd_body, NULL, 2, v);
}

static SrVal *jnp_gcd(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "gcd", "x1, x2", p) < 0) return NULL;
  return gcd_fn(I, p[0], p[1]);
}

static SrVal *lcm_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *xy[2] = {a->v[0], a->v[1]};
  if (promote(s, 2, xy, "lcm", 0) < 0) return DONE(NULL);
  SrVal *x1 = C1("jax.numpy.abs", xy[0]), *x2 = x1 ? C1("jax.numpy.abs", xy[1]) : NULL;
  if (!x2) return DONE(NULL);
  if (!sr_dtype_is_int(ty(I, x1)->dtype))
    return DONE(sr_raise(I, "ValueError", "Arguments to jax.numpy.lcm must be integers."));
  SrVal *d = KEEP(gcd_fn(I, x1, x2));
  SrVal *z = d ? OP(EQ, d, IN(0)) : NULL;
  SrVal *m = z ? C2("jax.numpy.multiply", x1, C2("jax.numpy.floor_divide", x2, d)) : NULL;
  return DONE(m ? where3(s, z, cst(s, d, 0), m) : NULL);
}

static SrVal *jnp_lcm(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "lcm", "x1, x2", p) < 0) return NULL;
  return sr_api_jit(I, "lcm", lcm_body, NULL, 2, p);
}

/* ---- real, imag, conj, isreal, iscomplex, isrealobj, iscomplexobj ---- */

/* jnp.real and jnp.conjugate: lax.real / lax.conj of a complex array, the
   array itself (lax.asarray) otherwise */
static SrVal *real_or_conj(SrInterp *I, SrArgs *a, const char *name) {
  SrVal *p[1];
  if (sr_args_parse(I, a, name, strcmp(name, "real") ? "x" : "val", p) < 0) return NULL;
  SrVal *x = sr_jnp_asarray(I, p[0], -1);
  const SrType *t = ty(I, x);
  SCOPE(I);
  KEEP(x);
  if (t && is_complex_dt(t->dtype)) return DONE(sr_nn_call1(s, strcmp(name, "real") ? "jax.lax.conj" : "jax.lax.real", x));
  return DONE(sr_nn_array(s, x));
}

static SrVal *jnp_real(SrInterp *I, SrArgs *a) { return real_or_conj(I, a, "real"); }
static SrVal *jnp_conjugate(SrInterp *I, SrArgs *a) { return real_or_conj(I, a, "conjugate"); }

/* lax.imag of a complex array, lax.full_like(val, 0) otherwise */
static SrVal *imag_of(SrNnScope *s, SrVal *v) {
  SrVal *x = KEEP(sr_jnp_asarray(s->I, v, -1));
  if (!x) return NULL;
  if (is_complex_dt(ty(s->I, x)->dtype)) return sr_nn_call1(s, "jax.lax.imag", x);
  return sr_nn_full_like(s, x, IN(0));
}

static SrVal *jnp_imag(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "imag", "val", p) < 0) return NULL;
  SCOPE(I);
  return DONE(imag_of(s, p[0]));
}

/* jnp.angle: atan2(imag(z), real(z)), in the default float for integer
   z and for a float scalar; in degrees with deg=True */
static SrVal *jnp_angle(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "angle", "z, deg=", p) < 0) return NULL;
  SCOPE(I);
  SrVal *z = KEEP(sr_jnp_asarray(I, p[0], -1));
  SrVal *re = z ? C1("jax.numpy.real", z) : NULL, *im = re ? C1("jax.numpy.imag", z) : NULL;
  if (!im) return DONE(NULL);
  const SrType *zt = ty(I, z), *rt = ty(I, re);
  if (!sr_dtype_is_inexact(rt->dtype) || (sr_dtype_is_float(zt->dtype) && zt->ndim == 0)) {
    re = astype(s, re, default_float(I));
    im = astype(s, im, default_float(I));
  }
  SrVal *r = C2("jax.lax.atan2", im, re);
  int deg = p[1] ? sr_truthy(I, p[1]) : 0;
  if (deg < 0) return DONE(NULL);
  return DONE(r && deg ? C1("jax.numpy.degrees", r) : r);
}

static SrVal *isreal_body(SrInterp *I, SrArgs *a, int prim) {
  SCOPE(I);
  SrVal *i = imag_of(s, a->v[0]);
  return DONE(i ? KEEP(sr_lax_binary(I, prim, i, cst(s, i, 0))) : NULL);
}

static SrVal *isreal_b(SrInterp *I, SrArgs *a) { return isreal_body(I, a, SR_P_eq); }
static SrVal *iscomplex_b(SrInterp *I, SrArgs *a) { return isreal_body(I, a, SR_P_ne); }

static SrVal *jnp_isreal(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "isreal", "x", p) < 0) return NULL;
  return sr_api_jit(I, "isreal", isreal_b, NULL, 1, p);
}

static SrVal *jnp_iscomplex(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "iscomplex", "x", p) < 0) return NULL;
  return sr_api_jit(I, "iscomplex", iscomplex_b, NULL, 1, p);
}

static int complexobj(SrInterp *I, SrVal *x) {
  if (!x || x->kind == SR_V_NONE || x->kind == SR_V_BOOL || x->kind == SR_V_INT || x->kind == SR_V_FLOAT ||
      x->kind == SR_V_STR)
    return 0;
  if (x->kind == SR_V_COMPLEX) return 1;
  SrVal *arr = sr_jnp_asarray(I, x, -1);
  if (!arr) {
    sr_exc_clear(I);
    return 0;
  }
  int r = is_complex_dt(ty(I, arr)->dtype);
  sr_unref(arr);
  return r;
}

static SrVal *jnp_iscomplexobj(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "iscomplexobj", "x", p) < 0) return NULL;
  return sr_bool(complexobj(I, p[0]));
}

static SrVal *jnp_isrealobj(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "isrealobj", "x", p) < 0) return NULL;
  return sr_bool(!complexobj(I, p[0]));
}

/* ---- logaddexp2 (lax_other.logaddexp2, a custom_jvp) ---- */

static SrVal *logaddexp2_cj;
static SrVal *logaddexp2_cjv(SrInterp *I);

static SrVal *logaddexp2_fun(SrInterp *I, SrArgs *a) {
  if (a->n != 2) return sr_raise(I, "TypeError", "logaddexp2() takes 2 positional arguments");
  SCOPE(I);
  SrVal *x1 = a->v[0], *x2 = a->v[1];
  const SrType *t = ty(I, x1);
  if (t && sr_dtype_kind(t->dtype) != SR_DK_FLOAT)
    return DONE(is_complex_dt(t->dtype)
                    ? sr_raise(I, "NotImplementedError", "logaddexp2 of complex values is not supported here")
                    : sr_raise(I, "ValueError", "logaddexp2 requires floating-point or complex inputs; got %s",
                               sr_dtype_name(t->dtype)));
  SrVal *amax = C2("jax.lax.max", x1, x2);
  SrVal *invln2 = amax ? cst(s, amax, 1 / log(2.0)) : NULL;
  SrVal *delta = invln2 ? C2("jax.lax.sub", x1, x2) : NULL;
  SrVal *nan = delta ? C2("jax.lax.ne", delta, delta) : NULL;
  SrVal *sum = nan ? C2("jax.lax.add", x1, x2) : NULL;
  SrVal *l = sum ? C1("jax.lax.log1p", C1("jax.lax.exp2", C1("jax.lax.neg", C1("jax.lax.abs", delta)))) : NULL;
  SrVal *big = C2("jax.lax.add", amax, C2("jax.lax.mul", invln2, l));
  return DONE(C3("jax.lax.select", nan, sum, big));
}

/* lax.select(isposinf(real(x)), lax._zeros(x), x) */
static SrVal *replace_inf(SrNnScope *s, SrVal *x) {
  SrVal *c = C1("jax.numpy.isposinf", x);
  SrVal *z = c ? sr_nn_full_like(s, x, IN(0)) : NULL;
  return C3("jax.lax.select", c, z, x);
}

static SrVal *logaddexp2_jvp(SrInterp *I, SrArgs *a) {
  if (a->n != 2 || !sr_is_seq(a->v[0]) || !sr_is_seq(a->v[1]) || a->v[0]->seq.n != 2 || a->v[1]->seq.n != 2)
    return sr_raise(I, "TypeError", "_logaddexp2_jvp(primals, tangents) takes two pairs");
  SrVal *cj = logaddexp2_cjv(I);
  if (!cj) return NULL;
  SCOPE(I);
  SrArgs ca = {2, a->v[0]->seq.items, 0, NULL, NULL, NULL};
  SrVal *out = KEEP(sr_call(I, cj, &ca));
  SrVal *term[2] = {NULL, NULL};
  for (int i = 0; i < 2 && out; i++) {
    SrVal *rx = replace_inf(s, a->v[0]->seq.items[i]);
    SrVal *ro = rx ? replace_inf(s, out) : NULL;
    if (!(term[i] = C2("jax.lax.mul", a->v[1]->seq.items[i], C1("jax.lax.exp2", C2("jax.lax.sub", rx, ro))))) break;
  }
  return DONE(tuple2(s, out, C2("jax.lax.add", term[0], term[1])));
}

static SrVal *logaddexp2_cjv(SrInterp *I) {
  return sr_nn_custom_jvp(I, &logaddexp2_cj, "logaddexp2", logaddexp2_fun, "_logaddexp2_jvp", logaddexp2_jvp, 0);
}

static SrVal *jnp_logaddexp2(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "logaddexp2", "x1, x2", p) < 0) return NULL;
  SrVal *cj = logaddexp2_cjv(I);
  if (!cj) return NULL;
  SCOPE(I);
  if (promote(s, 2, p, "logaddexp2", 2) < 0) return DONE(NULL);
  SrArgs ca = {2, p, 0, NULL, NULL, NULL};
  return DONE(KEEP(sr_call(I, cj, &ca)));
}

/* pow(x1, x2) = power(x1, x2) */
static SrVal *jnp_pow(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "pow", "x1, x2", p) < 0) return NULL;
  SrArgs ca = {2, p, 0, NULL, NULL, NULL};
  return sr_call(I, sr_lookup_qualname("jax.numpy.power"), &ca);
}

/* ---- reductions: count_nonzero, ptp, nanvar, nanstd, nancumsum,
   nancumprod, cumulative_sum, cumulative_prod, nanargmax, nanargmin ---- */

/* the static arguments of a jitted reduction, held by its body */
typedef struct Statics {
  SrVal *v[6];
} Statics;

static void statics_free(void *p) {
  Statics *st = p;
  for (int i = 0; i < 6; i++) sr_unref(st->v[i]);
  free(st);
}

static Statics *statics_of(SrInterp *I) { return sr_current_builtin(I)->data; }

/* body as a jit named name over n dynamic arguments, with statics v[0..nv) */
static SrVal *jit_statics(SrInterp *I, const char *name, SrBuiltinFn body, int nv, SrVal **v, int n, SrVal **args) {
  Statics *st = sr_xcalloc(1, sizeof *st);
  for (int i = 0; i < nv && i < 6; i++) st->v[i] = v[i] && v[i]->kind != SR_V_NONE ? sr_ref(v[i]) : NULL;
  SrVal *b = sr_builtin_with(name, body, st, statics_free);
  SrArgs a = {n, args, 0, NULL, NULL, NULL};
  SrVal *r = sr_jit_call(I, b, name, &a);
  sr_unref(b);
  return r;
}

/* a registered function with keyword arguments kw (NULL values left out) */
static SrVal *callkw(SrNnScope *s, const char *q, int n, SrVal **v, int nkw, const char **kw, SrVal **kv) {
  return sr_nn_call(s, q, n, v, nkw, kw, kv);
}

/* sum(lax.ne(a, lax._const(a, 0)), axis=axis, dtype=default int, keepdims=keepdims) */
static SrVal *count_nonzero_body(SrInterp *I, SrArgs *a) {
  Statics *st = statics_of(I);
  SCOPE(I);
  SrVal *x = a->v[0];
  SrVal *ne = C2("jax.lax.ne", x, cst(s, x, 0));
  const char *kw[3] = {"axis", "dtype", "keepdims"};
  SrVal *kv[3] = {st->v[0], KEEP(sr_dtype_val(NULL, default_int(I))), st->v[1]};
  return DONE(ne ? callkw(s, "jax.numpy.sum", 1, &ne, 3, kw, kv) : NULL);
}

static SrVal *jnp_count_nonzero(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "count_nonzero", "a, axis=, keepdims=", p) < 0) return NULL;
  SCOPE(I);
  SrVal *x = KEEP(sr_jnp_asarray(I, p[0], -1));
  return DONE(x ? KEEP(jit_statics(I, "count_nonzero", count_nonzero_body, 2, p + 1, 1, &x)) : NULL);
}

/* _ptp: amax - amin, axis and keepdims static */
static SrVal *ptp_body(SrInterp *I, SrArgs *a) {
  Statics *st = statics_of(I);
  SCOPE(I);
  const char *kw[2] = {"axis", "keepdims"};
  SrVal *kv[2] = {st->v[0], st->v[1]};
  SrVal *mx = callkw(s, "jax.numpy.max", 1, a->v, 2, kw, kv);
  SrVal *mn = mx ? callkw(s, "jax.numpy.min", 1, a->v, 2, kw, kv) : NULL;
  return DONE(C2("jax.lax.sub", mx, mn));
}

static SrVal *jnp_ptp(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "ptp", "a, axis=, out=, keepdims=", p) < 0) return NULL;
  if (sr_nn_given(p[2])) return sr_raise(I, "NotImplementedError", "The 'out' argument to jnp.ptp is not supported.");
  SCOPE(I);
  SrVal *x = KEEP(sr_jnp_asarray(I, p[0], -1));
  SrVal *sv[2] = {p[1], p[3]};
  return DONE(x ? KEEP(jit_statics(I, "_ptp", ptp_body, 2, sv, 1, &x)) : NULL);
}

/* _var_promote_types: the computation dtype (float16 upcast) and the
   result's (dtype, or a's inexact dtype, the real one of a complex a) */
static int var_types(SrInterp *I, SrDtype adt, SrVal *dtype, SrDtype *comp, SrDtype *res, const char *name) {
  if (sr_nn_given(dtype)) {
    int d;
    if (sr_dtype_arg(I, dtype, &d, name) < 0) return -1;
    if (sr_dtype_kind((SrDtype)d) != SR_DK_COMPLEX && is_complex_dt(adt)) {
      sr_raise(I, "ValueError",
               "jax.numpy.var does not yet support real dtype parameters when computing the variance of an array of "
               "complex values. The semantics of numpy.var seem unclear in this case. Please comment on "
               "https://github.com/jax-ml/jax/issues/2283 if this behavior is important to you.");
      return -1;
    }
    *res = *comp = (SrDtype)d;
  } else if (!sr_dtype_is_inexact(adt)) {
    *res = *comp = default_float(I);
  } else {
    *comp = adt;
    *res = adt == SR_C64 ? SR_F32 : adt == SR_C128 ? SR_F64 : adt;
  }
  if (*comp == SR_F16 || *comp == SR_BF16) *comp = SR_F32;
  return 0;
}

/* _nanvar; statics axis, dtype, ddof, keepdims, and which of where
   (bit 0) and mean (bit 1) follow a in the dynamic arguments */
static SrVal *nanvar_of(SrNnScope *s, SrVal *x, Statics *st, SrVal *where, SrVal *amean) {
  SrInterp *I = s->I;
  SrDtype comp, res;
  if (var_types(I, ty(I, x)->dtype, st->v[1], &comp, &res, "nanvar") < 0) return NULL;
  int64_t ddof = 0;
  if (st->v[2] && sr_as_int(I, st->v[2], "ddof", &ddof) < 0) return NULL;
  SrVal *ax = astype(s, x, comp);
  const char *kw[4] = {"dtype", "keepdims", "where", "axis"};
  SrVal *kv[4] = {KEEP(sr_dtype_val(NULL, comp)), KEEP(sr_bool(1)), where, st->v[0]};
  SrVal *mean = !ax ? NULL : amean ? astype(s, amean, comp) : callkw(s, "jax.numpy.nanmean", 1, &ax, 4, kw, kv);
  SrVal *nan = mean ? C2("jax.lax.ne", ax, ax) : NULL;
  SrVal *cen = nan ? where3(s, nan, IN(0), C2("jax.lax.sub", ax, mean)) : NULL;
  if (cen && is_complex_dt(ty(I, cen)->dtype))
    cen = C1("jax.lax.real", C2("jax.lax.mul", cen, C1("jax.lax.conj", cen)));
  else
    cen = C1("jax.lax.square", cen);
  SrVal *nan2 = cen ? C2("jax.lax.ne", ax, ax) : NULL;
  SrVal *notnan = C1("jax.lax.bitwise_not", nan2);
  const char *kw2[3] = {"axis", "keepdims", "where"};
  SrVal *kv2[3] = {st->v[0], st->v[3], where};
  SrVal *norm = notnan ? callkw(s, "jax.numpy.sum", 1, &notnan, 3, kw2, kv2) : NULL;
  norm = OP(SUB, norm, IN(ddof));
  SrVal *mask = norm ? C2("jax.lax.le", norm, cst(s, norm, 0)) : NULL;
  SrVal *r = mask ? callkw(s, "jax.numpy.sum", 1, &cen, 3, kw2, kv2) : NULL;
  r = r ? where3(s, mask, FL(NAN), r) : NULL;
  SrVal *div = r ? where3(s, mask, IN(1), norm) : NULL;
  r = div ? C2("jax.lax.div", r, astype(s, div, ty(I, r)->dtype)) : NULL;
  return astype(s, r, res);
}

static SrVal *nanvar_body(SrInterp *I, SrArgs *a) {
  Statics *st = statics_of(I);
  int64_t f = st->v[4] ? st->v[4]->i : 0;
  SrVal *where = f & 1 ? a->v[1] : NULL, *mean = f & 2 ? a->v[1 + (f & 1)] : NULL;
  SCOPE(I);
  return DONE(nanvar_of(s, a->v[0], st, where, mean));
}

static SrVal *nanstd_body(SrInterp *I, SrArgs *a) {
  Statics *st = statics_of(I);
  SCOPE(I);
  SrVal *v = KEEP(jit_statics(I, "nanvar", nanvar_body, 5, st->v, a->n, a->v));
  return DONE(v ? C1("jax.lax.sqrt", v) : NULL);
}

static SrVal *nanvar_api(SrInterp *I, SrArgs *a, const char *name, SrBuiltinFn body) {
  SrVal *p[8];
  if (sr_args_parse(I, a, name, "a, axis=, dtype=, out=, ddof=, keepdims=, *, where=, mean=", p) < 0) return NULL;
  if (sr_nn_given(p[3])) return sr_raise(I, "NotImplementedError", "The 'out' argument to jnp.%s is not supported.", name);
  if (sr_jnp_check_where(I, name, p[6]) < 0) return NULL;
  SCOPE(I);
  SrVal *dyn[3] = {KEEP(sr_jnp_asarray(I, p[0], -1)), NULL, NULL};
  if (!dyn[0]) return DONE(NULL);
  int n = 1, f = 0;
  if (sr_nn_given(p[6])) dyn[n++] = p[6], f |= 1;
  if (sr_nn_given(p[7])) dyn[n++] = p[7], f |= 2;
  SrVal *sv[5] = {p[1], p[2], p[4], p[5], IN(f)};
  return DONE(KEEP(jit_statics(I, name, body, 5, sv, n, dyn)));
}

static SrVal *jnp_nanvar(SrInterp *I, SrArgs *a) { return nanvar_api(I, a, "nanvar", nanvar_body); }
static SrVal *jnp_nanstd(SrInterp *I, SrArgs *a) { return nanvar_api(I, a, "nanstd", nanstd_body); }

/* _promote_integer_dtype */
static SrDtype promote_int_dtype(SrInterp *I, SrDtype d) {
  if (d == SR_BOOL) return default_int(I);
  int bits = sr_dtype_info(d)->bits, dbits = I->jax->enable_x64 ? 64 : 32;
  if (sr_dtype_kind(d) == SR_DK_UINT && bits < dbits) return I->jax->enable_x64 ? SR_U64 : SR_U32;
  if (sr_dtype_kind(d) == SR_DK_INT && bits < dbits) return default_int(I);
  return d;
}

/* _cumulative_reduction: statics axis (v[0]), dtype (v[1]); flags in
   v[2]: 1 fill NaNs, 2 promote integers, 4 product */
static SrVal *cumulative(SrNnScope *s, SrVal *x, SrVal *axis_v, SrVal *dtype_v, int flags, const char *name) {
  SrInterp *I = s->I;
  const SrType *t = ty(I, x);
  if (!t) return NULL;
  int64_t axis = 0;
  if (axis_v && sr_as_int(I, axis_v, "axis", &axis) < 0) return NULL;
  if (!axis_v || t->ndim == 0) {
    int64_t n = sr_type_numel(t);
    if (!(x = KEEP(sr_lax_reshape(I, x, &n, 1, NULL)))) return NULL;
    t = ty(I, x);
  }
  if (axis < -t->ndim || axis >= t->ndim)
    return sr_raise(I, "ValueError", "axis %lld is out of bounds for array of dimension %d", (long long)axis, t->ndim);
  if (axis < 0) axis += t->ndim;
  if (flags & 1) {
    SrVal *nan = C2("jax.lax.ne", x, x);
    x = nan ? where3(s, nan, cst(s, x, flags & 4 ? 1 : 0), x) : NULL;
    if (!x) return NULL;
  }
  SrDtype res, comp;
  if (!sr_nn_given(dtype_v)) {
    res = (flags & 2) || t->dtype == SR_BOOL ? promote_int_dtype(I, t->dtype) : t->dtype;
    comp = res;
  } else {
    int d;
    if (sr_dtype_arg(I, dtype_v, &d, name) < 0) return NULL;
    res = (SrDtype)d;
    comp = res;
    if (res == SR_BOOL) {
      if (t->dtype != SR_BOOL && !(x = OP(NE, x, IN(0)))) return NULL;
      comp = promote_int_dtype(I, SR_BOOL);
    }
  }
  x = astype(s, x, comp);
  SrVal *v[2] = {x, IN(axis)};
  SrVal *r = x ? sr_nn_call(s, flags & 4 ? "jax.lax.cumprod" : "jax.lax.cumsum", 2, v, 0, NULL, NULL) : NULL;
  return astype(s, r, res);
}

static SrVal *cum_body(SrInterp *I, SrArgs *a) {
  Statics *st = statics_of(I);
  SCOPE(I);
  int64_t flags = st->v[2] ? st->v[2]->i : 0;
  return DONE(cumulative(s, a->v[0], st->v[0], st->v[1], (int)flags,
                         flags & 4 ? "nancumprod" : flags & 1 ? "nancumsum" : "cumulative_sum"));
}

static SrVal *nancum(SrInterp *I, SrArgs *a, const char *name, int flags) {
  SrVal *p[4];
  if (sr_args_parse(I, a, name, "a, axis=, dtype=, out=", p) < 0) return NULL;
  if (sr_nn_given(p[3])) return sr_raise(I, "NotImplementedError", "The 'out' argument to jnp.%s is not supported", name);
  SCOPE(I);
  SrVal *x = KEEP(sr_jnp_asarray(I, p[0], -1));
  SrVal *sv[3] = {p[1], p[2], IN(flags)};
  return DONE(x ? KEEP(jit_statics(I, name, cum_body, 3, sv, 1, &x)) : NULL);
}

static SrVal *jnp_nancumsum(SrInterp *I, SrArgs *a) { return nancum(I, a, "nancumsum", 1); }
static SrVal *jnp_nancumprod(SrInterp *I, SrArgs *a) { return nancum(I, a, "nancumprod", 5); }

/* cumulative_sum / cumulative_prod (not jitted; the sum through
   _cumsum_with_promotion, a jit), include_initial as a concatenate */
static SrVal *cumulative_api(SrInterp *I, SrArgs *a, int prod) {
  const char *name = prod ? "cumulative_prod" : "cumulative_sum";
  SrVal *p[4];
  if (sr_args_parse(I, a, name, "x, *, axis=, dtype=, include_initial=", p) < 0) return NULL;
  int incl = 0;
  if (p[3] && (incl = sr_truthy(I, p[3])) < 0) return NULL;
  SCOPE(I);
  SrVal *x = KEEP(sr_jnp_asarray(I, p[0], -1));
  const SrType *t = ty(I, x);
  if (!t) return DONE(NULL);
  if (t->ndim == 0)
    return DONE(sr_raise(I, "ValueError", "The input must be non-scalar to take a cumulative %s, however a scalar "
                         "value or scalar array was given.", prod ? "product" : "sum"));
  int64_t axis = 0;
  if (sr_nn_given(p[1])) {
    if (sr_as_int(I, p[1], "axis", &axis) < 0) return DONE(NULL);
  } else if (t->ndim > 1) {
    return DONE(sr_raise(I, "ValueError", "The input array has rank %d, however axis was not set to an explicit "
                         "value. The axis argument is only optional for one-dimensional arrays.", t->ndim));
  }
  if (axis < -t->ndim || axis >= t->ndim)
    return DONE(sr_raise(I, "ValueError", "axis %lld is out of bounds for array of dimension %d", (long long)axis,
                         t->ndim));
  if (axis < 0) axis += t->ndim;
  SrVal *out;
  if (prod) {
    out = cumulative(s, x, IN(axis), p[2], 4, name);
  } else {
    SrVal *sv[3] = {IN(axis), p[2], IN(2)};
    out = KEEP(jit_statics(I, "_cumsum_with_promotion", cum_body, 3, sv, 1, &x));
  }
  if (!out || !incl) return DONE(out);
  int64_t shape[SR_MAX_RANK];
  for (int i = 0; i < t->ndim; i++) shape[i] = t->dims[i].size;
  shape[axis] = 1;
  SrVal *init = KEEP(sr_lax_full(I, shape, t->ndim, IN(prod ? 1 : 0), (int)ty(I, out)->dtype, NULL));
  SrVal *xs[2] = {init, out};
  return DONE(init ? KEEP(sr_lax_concatenate(I, 2, xs, (int)axis)) : NULL);
}

static SrVal *jnp_cumulative_sum(SrInterp *I, SrArgs *a) { return cumulative_api(I, a, 0); }
static SrVal *jnp_cumulative_prod(SrInterp *I, SrArgs *a) { return cumulative_api(I, a, 1); }

/* _nanargmax / _nanargmin: axis and keepdims static */
static SrVal *nanarg_body(SrInterp *I, SrArgs *a, int is_max) {
  Statics *st = statics_of(I);
  SCOPE(I);
  SrVal *x = a->v[0];
  const char *kw[2] = {"axis", "keepdims"};
  SrVal *kv[2] = {st->v[0], st->v[1]};
  const char *q = is_max ? "jax.numpy.argmax" : "jax.numpy.argmin";
  if (!sr_dtype_is_inexact(ty(I, x)->dtype)) return DONE(callkw(s, q, 1, &x, 2, kw, kv));
  SrVal *mask = C1("jax.numpy.isnan", x);
  SrVal *y = mask ? where3(s, mask, FL(is_max ? -INFINITY : INFINITY), x) : NULL;
  SrVal *r = y ? callkw(s, q, 1, &y, 2, kw, kv) : NULL;
  SrVal *all = r ? callkw(s, "jax.numpy.all", 1, &mask, 2, kw, kv) : NULL;
  return DONE(where3(s, all, IN(-1), r));
}

static SrVal *nanargmax_body(SrInterp *I, SrArgs *a) { return nanarg_body(I, a, 1); }
static SrVal *nanargmin_body(SrInterp *I, SrArgs *a) { return nanarg_body(I, a, 0); }

static SrVal *nanarg(SrInterp *I, SrArgs *a, int is_max) {
  const char *name = is_max ? "nanargmax" : "nanargmin";
  SrVal *p[4];
  if (sr_args_parse(I, a, name, "a, axis=, out=, keepdims=", p) < 0) return NULL;
  if (sr_nn_given(p[2])) return sr_raise(I, "NotImplementedError", "The 'out' argument to jnp.%s is not supported.", name);
  int keep = 0;
  if (sr_nn_given(p[3]) && (keep = sr_truthy(I, p[3])) < 0) return NULL;
  SCOPE(I);
  SrVal *x = KEEP(sr_jnp_asarray(I, p[0], -1));
  SrVal *sv[2] = {p[1], KEEP(sr_bool(keep))};
  return DONE(x ? KEEP(jit_statics(I, is_max ? "_nanargmax" : "_nanargmin", is_max ? nanargmax_body : nanargmin_body,
                                   2, sv, 1, &x))
                : NULL);
}

static SrVal *jnp_nanargmax(SrInterp *I, SrArgs *a) { return nanarg(I, a, 1); }
static SrVal *jnp_nanargmin(SrInterp *I, SrArgs *a) { return nanarg(I, a, 0); }

/* ---- polyval (@partial(jit, static_argnames=['unroll'])) ---- */

/* the scan body lambda y, p: (y * x + p, None), x in the data */
static SrVal *polyval_step(SrInterp *I, SrArgs *a) {
  SrVal *x = sr_current_builtin(I)->data;
  if (a->n != 2) return sr_raise(I, "TypeError", "<lambda>() takes 2 positional arguments");
  SCOPE(I);
  SrVal *y = OP(ADD, OP(MUL, a->v[0], x), a->v[1]);
  return DONE(tuple2(s, y, KEEP(sr_none())));
}

static SrVal *polyval_body(SrInterp *I, SrArgs *a) {
  int64_t unroll = *(int64_t *)sr_current_builtin(I)->data;
  SCOPE(I);
  SrVal *px[2] = {KEEP(sr_jnp_asarray(I, a->v[0], -1)), KEEP(sr_jnp_asarray(I, a->v[1], -1))};
  if (!px[0] || !px[1]) return DONE(NULL);
  /* promote_dtypes: one dtype, shapes as they are */
  int weak;
  SrDtype dt = sr_jnp_result_dtype(I, 2, px, &weak);
  for (int i = 0; i < 2; i++)
    if (!(px[i] = KEEP(sr_lax_convert(I, px[i], dt, weak, NULL)))) return DONE(NULL);
  const SrType *pt = ty(I, px[0]), *xt = ty(I, px[1]);
  if (pt->ndim < 1) return DONE(sr_raise(I, "ValueError", "polyval: p must be at least 1-d"));
  /* lax.broadcast_shapes(p.shape[1:], x.shape) */
  int nd = pt->ndim - 1 > xt->ndim ? pt->ndim - 1 : xt->ndim;
  int64_t shape[SR_MAX_RANK];
  for (int i = 0; i < nd; i++) {
    int ip = i - (nd - (pt->ndim - 1)), ix = i - (nd - xt->ndim);
    int64_t dp = ip >= 0 ? pt->dims[1 + ip].size : 1, dx = ix >= 0 ? xt->dims[ix].size : 1;
    if (dp != dx && dp != 1 && dx != 1) {
      /* lax.broadcast_shapes' message: shapes=[p.shape[1:], x.shape] */
      SrBuf m = SR_BUF_INIT;
      sr_buf_putc(&m, '(');
      for (int k = 1; k < pt->ndim; k++) sr_buf_printf(&m, k > 1 ? ", %lld" : "%lld", (long long)pt->dims[k].size);
      sr_buf_puts(&m, pt->ndim == 2 ? ",), " : "), ");
      sr_shape_str(&m, xt);
      sr_raise(I, "ValueError", "Incompatible shapes for broadcasting: shapes=[%s]", sr_buf_str(&m));
      sr_buf_free(&m);
      return DONE(NULL);
    }
    shape[i] = dp == 1 ? dx : dp;
  }
  SrVal *y = KEEP(sr_lax_full(I, shape, nd, IN(0), (int)dt, NULL));
  SrVal *f = y ? KEEP(sr_builtin_with("<lambda>", polyval_step, sr_ref(px[1]), sr_nn_unref_data)) : NULL;
  SrVal *v[3] = {f, y, px[0]};
  const char *kw[1] = {"unroll"};
  SrVal *kv[1] = {IN(unroll)};
  SrVal *r = f ? sr_nn_call(s, "jax.lax.scan", 3, v, 1, kw, kv) : NULL;
  return DONE(r && sr_is_seq(r) ? r->seq.items[0] : NULL);
}

SrVal *sr_jnp_polyval(SrInterp *I, SrVal *p, SrVal *x, int64_t unroll) {
  int64_t *u = sr_xmalloc(sizeof *u);
  *u = unroll;
  SrVal *v[2] = {p, x};
  return sr_api_jit(I, "polyval", polyval_body, u, 2, v);
}

static SrVal *jnp_polyval(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "polyval", "p, x, *, unroll=", p) < 0) return NULL;
  int64_t unroll = 16;
  if (p[2] && sr_as_int(I, p[2], "unroll", &unroll) < 0) return NULL;
  return sr_jnp_polyval(I, p[0], p[1], unroll);
}

/* ---- registration ---- */

void sr_numpy_math_init(void) {
  static const struct {
    const char *names;
    SrBuiltinFn fn;
    const char *doc;
  } defs[] = {
      {"jax.numpy.arcsin jax.numpy.asin", jnp_arcsin, "arcsin(x): the inverse sine, elementwise (lax.asin)"},
      {"jax.numpy.arccos jax.numpy.acos", jnp_arccos, "arccos(x): the inverse cosine, elementwise (lax.acos)"},
      {"jax.numpy.arctan jax.numpy.atan", jnp_arctan, "arctan(x): the inverse tangent, elementwise (lax.atan)"},
      {"jax.numpy.sinh", jnp_sinh, "sinh(x): the hyperbolic sine, elementwise"},
      {"jax.numpy.cosh", jnp_cosh, "cosh(x): the hyperbolic cosine, elementwise"},
      {"jax.numpy.arcsinh jax.numpy.asinh", jnp_arcsinh, "arcsinh(x): the inverse hyperbolic sine, elementwise"},
      {"jax.numpy.arccosh jax.numpy.acosh", jnp_arccosh,
       "arccosh(x): the inverse hyperbolic cosine, elementwise (a jit named arccosh)"},
      {"jax.numpy.arctanh jax.numpy.atanh", jnp_arctanh, "arctanh(x): the inverse hyperbolic tangent, elementwise"},
      {"jax.numpy.arctan2 jax.numpy.atan2", jnp_arctan2, "arctan2(x1, x2): the angle of (x2, x1), elementwise"},
      {"jax.numpy.cbrt", jnp_cbrt, "cbrt(x): the cube root, elementwise"},
      {"jax.numpy.bitwise_not jax.numpy.bitwise_invert", jnp_bitwise_not, "bitwise_not(x): ~x, elementwise"},
      {"jax.numpy.left_shift jax.numpy.bitwise_left_shift", jnp_left_shift, "left_shift(x1, x2): x1 << x2"},
      {"jax.numpy.right_shift jax.numpy.bitwise_right_shift", jnp_right_shift,
       "right_shift(x1, x2): x1 >> x2 (logical for unsigned integers)"},
      {"jax.numpy.bitwise_count", jnp_bitwise_count, "bitwise_count(x): the set bits of |x|, as uint8"},
      {"jax.numpy.pow", jnp_pow, "pow(x1, x2): power(x1, x2), the array API's name"},
      {"jax.numpy.float_power", jnp_float_power, "float_power(x1, x2): x1 ** x2 in an inexact dtype"},
      {"jax.numpy.nextafter", jnp_nextafter, "nextafter(x1, x2): the next float after x1 toward x2"},
      {"jax.numpy.spacing", jnp_spacing, "spacing(x): the distance from x to the next float away from 0"},
      {"jax.numpy.fabs", jnp_fabs, "fabs(x): |x| in an inexact dtype"},
      {"jax.numpy.log2", jnp_log2, "log2(x): the base-2 logarithm, elementwise"},
      {"jax.numpy.log10", jnp_log10, "log10(x): the base-10 logarithm, elementwise"},
      {"jax.numpy.logaddexp2", jnp_logaddexp2, "logaddexp2(x1, x2): log2(2**x1 + 2**x2), a custom_jvp"},
      {"jax.numpy.deg2rad jax.numpy.radians", jnp_deg2rad, "deg2rad(x): degrees to radians"},
      {"jax.numpy.rad2deg jax.numpy.degrees", jnp_rad2deg, "rad2deg(x): radians to degrees"},
      {"jax.numpy.signbit", jnp_signbit, "signbit(x): whether the sign bit is set"},
      {"jax.numpy.copysign", jnp_copysign, "copysign(x1, x2): |x1| with the sign of x2"},
      {"jax.numpy.rint", jnp_rint, "rint(x): rounded to the nearest integer, halves to even"},
      {"jax.numpy.trunc", jnp_trunc, "trunc(x): rounded toward zero"},
      {"jax.numpy.fmod", jnp_fmod, "fmod(x1, x2): the remainder with the sign of x1 (C's fmod)"},
      {"jax.numpy.modf", jnp_modf, "modf(x): the fractional and the integral parts"},
      {"jax.numpy.divmod", jnp_divmod, "divmod(x1, x2): (floor_divide(x1, x2), remainder(x1, x2))"},
      {"jax.numpy.isinf", jnp_isinf, "isinf(x): whether x is +inf or -inf"},
      {"jax.numpy.isposinf", jnp_isposinf, "isposinf(x): whether x is +inf"},
      {"jax.numpy.isneginf", jnp_isneginf, "isneginf(x): whether x is -inf"},
      {"jax.numpy.heaviside", jnp_heaviside, "heaviside(x1, x2): 0 below 0, 1 above, x2 at 0"},
      {"jax.numpy.hypot", jnp_hypot, "hypot(x1, x2): sqrt(x1**2 + x2**2) without overflow"},
      {"jax.numpy.sinc", jnp_sinc, "sinc(x): sin(pi x) / (pi x), 1 at 0 (a custom_jvp there)"},
      {"jax.numpy.i0", jnp_i0, "i0(x): the modified Bessel function of order 0"},
      {"jax.numpy.fmax", jnp_fmax, "fmax(x1, x2): the maximum, ignoring NaNs"},
      {"jax.numpy.fmin", jnp_fmin, "fmin(x1, x2): the minimum, ignoring NaNs"},
      {"jax.numpy.gcd", jnp_gcd, "gcd(x1, x2): the greatest common divisor of integers (a while_loop)"},
      {"jax.numpy.lcm", jnp_lcm, "lcm(x1, x2): the least common multiple of integers"},
      {"jax.numpy.real", jnp_real, "real(val): the real part"},
      {"jax.numpy.angle", jnp_angle, "angle(z, deg=False): the complex argument, in radians or degrees"},
      {"jax.numpy.imag", jnp_imag, "imag(val): the imaginary part (zeros for a real val)"},
      {"jax.numpy.conjugate jax.numpy.conj", jnp_conjugate, "conjugate(x): the complex conjugate (x itself for a real x)"},
      {"jax.numpy.isreal", jnp_isreal, "isreal(x): whether the imaginary part is 0"},
      {"jax.numpy.iscomplex", jnp_iscomplex, "iscomplex(x): whether the imaginary part is not 0"},
      {"jax.numpy.isrealobj", jnp_isrealobj, "isrealobj(x): whether x is not of a complex type"},
      {"jax.numpy.iscomplexobj", jnp_iscomplexobj, "iscomplexobj(x): whether x is of a complex type"},
      {"jax.numpy.polyval", jnp_polyval, "polyval(p, x, *, unroll=16): the polynomial p (highest degree first) at x, a scan"},
      {"jax.numpy.count_nonzero", jnp_count_nonzero, "count_nonzero(a, axis=None, keepdims=False): the non-zeros"},
      {"jax.numpy.ptp", jnp_ptp, "ptp(a, axis=None, keepdims=False): max - min (peak to peak)"},
      {"jax.numpy.nanvar", jnp_nanvar,
       "nanvar(a, axis=None, dtype=None, ddof=0, keepdims=False, where=None): the variance, NaNs left out"},
      {"jax.numpy.nanstd", jnp_nanstd,
       "nanstd(a, axis=None, dtype=None, ddof=0, keepdims=False, where=None): the standard deviation, NaNs left out"},
      {"jax.numpy.nancumsum", jnp_nancumsum, "nancumsum(a, axis=None, dtype=None): cumsum with NaNs as 0"},
      {"jax.numpy.nancumprod", jnp_nancumprod, "nancumprod(a, axis=None, dtype=None): cumprod with NaNs as 1"},
      {"jax.numpy.cumulative_sum", jnp_cumulative_sum,
       "cumulative_sum(x, *, axis=None, dtype=None, include_initial=False): the array API's cumsum"},
      {"jax.numpy.cumulative_prod", jnp_cumulative_prod,
       "cumulative_prod(x, *, axis=None, dtype=None, include_initial=False): the array API's cumprod"},
      {"jax.numpy.nanargmax", jnp_nanargmax, "nanargmax(a, axis=None, keepdims=None): argmax, NaNs left out (-1: all NaN)"},
      {"jax.numpy.nanargmin", jnp_nanargmin, "nanargmin(a, axis=None, keepdims=None): argmin, NaNs left out (-1: all NaN)"},
  };
  for (size_t i = 0; i < sizeof defs / sizeof *defs; i++) sr_def(defs[i].names, defs[i].fn, defs[i].doc);
}
