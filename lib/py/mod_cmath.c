/* mod_cmath.c: Python's cmath module, on C99's complex functions: exp,
 * log (with a base), log10, sqrt, the trigonometric and hyperbolic
 * functions and their inverses, phase, polar, rect, isfinite, isinf,
 * isnan, isclose, and the constants pi, e, tau, inf, infj, nan, nanj.
 * Arguments are numbers (int, float, complex) or what converts to one
 * (an array's item); results are complex, but phase's, polar's and the
 * predicates'. */
#include <complex.h>
#undef I /* complex.h's; this file's I is the interpreter */
#include <math.h>
#include <string.h>

#include "py/modules.h"
#include "py/objects.h"

/* x as a complex number: complex's parts, a real number, or an object's
   item() that is one; -1 with CPython's TypeError */
static int complex_arg(SrInterp *I, SrVal *v, double _Complex *z) {
  if (v->kind == SR_V_COMPLEX) {
    *z = CMPLX(v->c.re, v->c.im);
    return 0;
  }
  if (v->kind == SR_V_OBJ) {
    const SrLangOps *ops = sr_ops(v);
    SrVal *r = ops && ops->unop ? ops->unop(I, SR_OP_ITEM, v) : NULL;
    if (r && r->kind == SR_V_COMPLEX) {
      *z = CMPLX(r->c.re, r->c.im);
      sr_unref(r);
      return 0;
    }
    sr_unref(r);
    if (I->exc) return -1;
  }
  if (v->kind == SR_V_INT || v->kind == SR_V_BOOL || v->kind == SR_V_FLOAT) {
    double x;
    if (sr_as_float(I, v, "", &x) < 0) return -1;
    *z = CMPLX(x, 0.0);
    return 0;
  }
  sr_raise(I, "TypeError", "must be real number, not %s", sr_val_kind_name(v));
  return -1;
}

static int one_arg(SrInterp *I, SrArgs *a, const char *name, double _Complex *z) {
  if (a->nkw) return sr_raise(I, "TypeError", "%s() takes no keyword arguments", name), -1;
  if (a->n != 1) return sr_raise(I, "TypeError", "%s() takes exactly one argument (%d given)", name, a->n), -1;
  return complex_arg(I, a->v[0], z);
}

static SrVal *cresult(double _Complex z) { return sr_complex(NULL, creal(z), cimag(z)); }

static const struct {
  const char *name;
  double _Complex (*fn)(double _Complex);
  const char *doc;
} unary[] = {
    {"exp", cexp, "e to the power z"},
    {"sqrt", csqrt, "the square root of z (its principal branch)"},
    {"sin", csin, "the sine of z"},
    {"cos", ccos, "the cosine of z"},
    {"tan", ctan, "the tangent of z"},
    {"asin", casin, "the arc sine of z"},
    {"acos", cacos, "the arc cosine of z"},
    {"atan", catan, "the arc tangent of z"},
    {"sinh", csinh, "the hyperbolic sine of z"},
    {"cosh", ccosh, "the hyperbolic cosine of z"},
    {"tanh", ctanh, "the hyperbolic tangent of z"},
    {"asinh", casinh, "the inverse hyperbolic sine of z"},
    {"acosh", cacosh, "the inverse hyperbolic cosine of z"},
    {"atanh", catanh, "the inverse hyperbolic tangent of z"},
    {NULL, NULL, NULL},
};

static SrVal *cm_unary(SrInterp *I, SrArgs *a) {
  const char *name = sr_current_builtin(I)->name + strlen("cmath.");
  double _Complex z;
  if (one_arg(I, a, name, &z) < 0) return NULL;
  for (int i = 0; unary[i].name; i++)
    if (strcmp(unary[i].name, name) == 0) return cresult(unary[i].fn(z));
  return sr_raise(I, "RuntimeError", "cmath.%s() has no rule", name);
}

/* log(z[, base]); 0 is CPython's "math domain error" */
static SrVal *cm_log(SrInterp *I, SrArgs *a) {
  if (a->n < 1 || a->n > 2 || a->nkw)
    return sr_raise(I, "TypeError", "log expected 1 or 2 arguments, got %d", a->n + a->nkw);
  double _Complex z, b;
  if (complex_arg(I, a->v[0], &z) < 0) return NULL;
  if (z == 0) return sr_raise(I, "ValueError", "math domain error");
  double _Complex r = clog(z);
  if (a->n == 2) {
    if (complex_arg(I, a->v[1], &b) < 0) return NULL;
    if (b == 0) return sr_raise(I, "ValueError", "math domain error");
    double _Complex lb = clog(b);
    if (lb == 0) return sr_raise(I, "ZeroDivisionError", "complex division by zero");
    r /= lb;
  }
  return cresult(r);
}

static SrVal *cm_log10(SrInterp *I, SrArgs *a) {
  double _Complex z;
  if (one_arg(I, a, "log10", &z) < 0) return NULL;
  if (z == 0) return sr_raise(I, "ValueError", "math domain error");
  return cresult(clog(z) / log(10.0));
}

static SrVal *cm_phase(SrInterp *I, SrArgs *a) {
  double _Complex z;
  if (one_arg(I, a, "phase", &z) < 0) return NULL;
  return sr_float(NULL, carg(z));
}

static SrVal *cm_polar(SrInterp *I, SrArgs *a) {
  double _Complex z;
  if (one_arg(I, a, "polar", &z) < 0) return NULL;
  SrVal *items[2] = {sr_float(NULL, cabs(z)), sr_float(NULL, carg(z))};
  return sr_tuple(NULL, 2, items);
}

static SrVal *cm_rect(SrInterp *I, SrArgs *a) {
  if (a->n != 2 || a->nkw) return sr_raise(I, "TypeError", "rect expected 2 arguments, got %d", a->n + a->nkw);
  double r, phi;
  if (sr_as_float(I, a->v[0], "rect() argument", &r) < 0 || sr_as_float(I, a->v[1], "rect() argument", &phi) < 0)
    return NULL;
  if (phi == 0) return sr_complex(NULL, r, 0.0);
  return sr_complex(NULL, r * cos(phi), r * sin(phi));
}

static SrVal *cm_predicate(SrInterp *I, SrArgs *a) {
  const char *name = sr_current_builtin(I)->name + strlen("cmath.");
  double _Complex z;
  if (one_arg(I, a, name, &z) < 0) return NULL;
  double x = creal(z), y = cimag(z);
  if (strcmp(name, "isnan") == 0) return sr_bool(isnan(x) || isnan(y));
  if (strcmp(name, "isinf") == 0) return sr_bool(isinf(x) || isinf(y));
  return sr_bool(isfinite(x) && isfinite(y));
}

/* isclose(a, b, *, rel_tol=1e-09, abs_tol=0.0), CPython's rule */
static SrVal *cm_isclose(SrInterp *I, SrArgs *a) {
  if (a->n != 2) return sr_raise(I, "TypeError", "isclose() takes exactly 2 positional arguments (%d given)", a->n);
  double _Complex x, y;
  double rel = 1e-9, abs_ = 0.0;
  if (complex_arg(I, a->v[0], &x) < 0 || complex_arg(I, a->v[1], &y) < 0) return NULL;
  for (int i = 0; i < a->nkw; i++) {
    double *dst = strcmp(a->kw[i], "rel_tol") == 0 ? &rel : strcmp(a->kw[i], "abs_tol") == 0 ? &abs_ : NULL;
    if (!dst) return sr_raise(I, "TypeError", "isclose() got an unexpected keyword argument '%s'", a->kw[i]);
    if (sr_as_float(I, a->kwv[i], a->kw[i], dst) < 0) return NULL;
  }
  if (rel < 0 || abs_ < 0) return sr_raise(I, "ValueError", "tolerances must be non-negative");
  if (x == y) return sr_bool(1);
  if (isinf(creal(x)) || isinf(cimag(x)) || isinf(creal(y)) || isinf(cimag(y))) return sr_bool(0);
  double d = cabs(x - y);
  return sr_bool(d <= rel * cabs(y) || d <= rel * cabs(x) || d <= abs_);
}

void sr_cmath_init(void) {
  sr_register("cmath.pi", sr_float(NULL, M_PI));
  sr_register("cmath.e", sr_float(NULL, M_E));
  sr_register("cmath.tau", sr_float(NULL, 2 * M_PI));
  sr_register("cmath.inf", sr_float(NULL, INFINITY));
  sr_register("cmath.nan", sr_float(NULL, NAN));
  sr_register("cmath.infj", sr_complex(NULL, 0.0, INFINITY));
  sr_register("cmath.nanj", sr_complex(NULL, 0.0, NAN));
  static char docs[sizeof unary / sizeof *unary][96];
  char q[64];
  for (int i = 0; unary[i].name; i++) {
    snprintf(q, sizeof q, "cmath.%s", unary[i].name);
    snprintf(docs[i], sizeof docs[i], "cmath.%s(z): %s", unary[i].name, unary[i].doc);
    sr_def(q, cm_unary, docs[i]);
  }
  sr_def("cmath.log", cm_log, "cmath.log(z[, base]): the logarithm of z to the base (e)");
  sr_def("cmath.log10", cm_log10, "cmath.log10(z): the base-10 logarithm of z");
  sr_def("cmath.phase", cm_phase, "cmath.phase(z): the argument of z, in (-pi, pi]");
  sr_def("cmath.polar", cm_polar, "cmath.polar(z): (abs(z), phase(z))");
  sr_def("cmath.rect", cm_rect, "cmath.rect(r, phi): the complex number of modulus r and argument phi");
  sr_def("cmath.isnan", cm_predicate, "cmath.isnan(z): whether either part is a NaN");
  sr_def("cmath.isinf", cm_predicate, "cmath.isinf(z): whether either part is infinite");
  sr_def("cmath.isfinite", cm_predicate, "cmath.isfinite(z): whether both parts are finite");
  sr_def("cmath.isclose", cm_isclose, "cmath.isclose(a, b, *, rel_tol=1e-09, abs_tol=0.0)");
}
