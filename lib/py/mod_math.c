/* mod_math.c: Python's math and operator modules, with CPython's results
 * and messages (Modules/mathmodule.c, Lib/operator.py).  Ints are
 * shardrepl's 64-bit ones: a result past them is OverflowError. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "py/modules.h"
#include "py/objects.h"
#include "py/range.h"
#include "text/print_val.h"
#include "util/intern.h"

/* ---- arguments ---- */

static int is_number(const SrVal *v) { return v->kind == SR_V_INT || v->kind == SR_V_BOOL || v->kind == SR_V_FLOAT; }

/* x as a float, as math's functions take it (an int, a float, a 0-d
   array); TypeError "must be real number, not str" else */
static int real_arg(SrInterp *I, SrVal *v, double *out) {
  if (is_number(v) || (sr_ops(v) && sr_ops(v)->unop)) {
    if (sr_as_float(I, v, "argument", out) == 0) return 0;
    if (!is_number(v)) sr_exc_clear(I);
    else return -1;
  }
  sr_raise(I, "TypeError", "must be real number, not %s", sr_val_kind_name(v));
  return -1;
}

/* an integer argument: "'float' object cannot be interpreted as an integer" */
static int int_arg(SrInterp *I, SrVal *v, int64_t *out) {
  if (v->kind == SR_V_INT || v->kind == SR_V_BOOL) {
    *out = v->i;
    return 0;
  }
  if (sr_ops(v) && sr_ops(v)->unop && sr_as_int(I, v, "argument", out) == 0) return 0;
  if (I->exc) sr_exc_clear(I);
  sr_raise(I, "TypeError", "'%s' object cannot be interpreted as an integer", sr_val_kind_name(v));
  return -1;
}

static SrVal *too_big(SrInterp *I) {
  return sr_raise(I, "OverflowError", "integer overflow: shardrepl's Python ints are 64-bit");
}

static int nargs(SrInterp *I, SrArgs *a, const char *name, int lo, int hi) {
  if (a->nkw) return sr_raise(I, "TypeError", "math.%s() takes no keyword arguments", name), -1;
  if (a->n >= lo && a->n <= hi) return 0;
  if (lo == hi && lo == 1)
    sr_raise(I, "TypeError", "math.%s() takes exactly one argument (%d given)", name, a->n);
  else if (lo == hi)
    sr_raise(I, "TypeError", "%s expected %d arguments, got %d", name, lo, a->n);
  else if (a->n < lo)
    sr_raise(I, "TypeError", "%s expected at least %d argument%s, got %d", name, lo, lo == 1 ? "" : "s", a->n);
  else
    sr_raise(I, "TypeError", "%s expected at most %d arguments, got %d", name, hi, a->n);
  return -1;
}

/* CPython's is_error: a NaN from a non-NaN is a domain error, an infinity
   from a finite argument a range error (OverflowError) where the function
   can overflow, else a domain error (log(0), atanh(1), gamma(0)) */
static SrVal *float_result(SrInterp *I, double r, double x, int can_overflow) {
  if (isnan(r) && !isnan(x)) return sr_raise(I, "ValueError", "math domain error");
  if (isinf(r) && isfinite(x)) {
    if (can_overflow) return sr_raise(I, "OverflowError", "math range error");
    return sr_raise(I, "ValueError", "math domain error");
  }
  return sr_float(NULL, r);
}

/* ---- functions of one float ---- */

typedef double (*Fn1)(double);

static double degrees(double x) { return x * (180.0 / M_PI); }
static double radians(double x) { return x * (M_PI / 180.0); }

static const struct {
  const char *name;
  Fn1 fn;
  int can_overflow;
  const char *doc;
} unary[] = {
  {"sqrt", sqrt, 0, "the square root of x"},
  {"exp", exp, 1, "e raised to the power x"},
  {"exp2", exp2, 1, "2 raised to the power x"},
  {"expm1", expm1, 1, "exp(x) - 1, accurate near 0"},
  {"log2", log2, 0, "the base-2 logarithm of x"},
  {"log10", log10, 0, "the base-10 logarithm of x"},
  {"log1p", log1p, 0, "log(1 + x), accurate near 0"},
  {"sin", sin, 0, "the sine of x (radians)"},
  {"cos", cos, 0, "the cosine of x (radians)"},
  {"tan", tan, 0, "the tangent of x (radians)"},
  {"asin", asin, 0, "the arc sine of x, in radians"},
  {"acos", acos, 0, "the arc cosine of x, in radians"},
  {"atan", atan, 0, "the arc tangent of x, in radians"},
  {"sinh", sinh, 1, "the hyperbolic sine of x"},
  {"cosh", cosh, 1, "the hyperbolic cosine of x"},
  {"tanh", tanh, 0, "the hyperbolic tangent of x"},
  {"asinh", asinh, 0, "the inverse hyperbolic sine of x"},
  {"acosh", acosh, 0, "the inverse hyperbolic cosine of x"},
  {"atanh", atanh, 0, "the inverse hyperbolic tangent of x"},
  {"fabs", fabs, 0, "the absolute value of x, a float"},
  {"erf", erf, 0, "the error function at x"},
  {"erfc", erfc, 0, "the complementary error function at x"},
  {"gamma", tgamma, 1, "the gamma function at x"},
  {"lgamma", lgamma, 1, "the natural logarithm of the absolute value of the gamma function at x"},
  {"cbrt", cbrt, 0, "the cube root of x"},
  {"degrees", degrees, 1, "x radians in degrees"},
  {"radians", radians, 0, "x degrees in radians"},
  {NULL, NULL, 0, NULL},
};

static SrVal *math_unary(SrInterp *I, SrArgs *a) {
  const char *full = sr_current_builtin(I)->name, *name = full + strlen("math.");
  if (nargs(I, a, name, 1, 1) < 0) return NULL;
  double x;
  if (real_arg(I, a->v[0], &x) < 0) return NULL;
  for (int i = 0; unary[i].name; i++)
    if (strcmp(unary[i].name, name) == 0) {
      /* gamma and lgamma at the poles are domain errors */
      if ((strcmp(name, "gamma") == 0 || strcmp(name, "lgamma") == 0) && x <= 0 && x == floor(x))
        return sr_raise(I, "ValueError", "math domain error");
      if (strcmp(name, "gamma") == 0 && isinf(x) && x < 0) return sr_raise(I, "ValueError", "math domain error");
      if ((strcmp(name, "sin") == 0 || strcmp(name, "cos") == 0 || strcmp(name, "tan") == 0) && isinf(x))
        return sr_raise(I, "ValueError", "math domain error");
      return float_result(I, unary[i].fn(x), x, unary[i].can_overflow);
    }
  return sr_raise(I, "RuntimeError", "math.%s() has no rule", name);
}

static SrVal *math_log(SrInterp *I, SrArgs *a) {
  if (nargs(I, a, "log", 1, 2) < 0) return NULL;
  double x, b;
  if (real_arg(I, a->v[0], &x) < 0) return NULL;
  if (x <= 0 && !isnan(x)) return sr_raise(I, "ValueError", "math domain error");
  double r = log(x);
  if (a->n == 2) {
    if (real_arg(I, a->v[1], &b) < 0) return NULL;
    if (b <= 0 && !isnan(b)) return sr_raise(I, "ValueError", "math domain error");
    double lb = log(b);
    if (lb == 0) return sr_raise(I, "ZeroDivisionError", "float division by zero");
    r /= lb;
  }
  return sr_float(NULL, r);
}

/* floor, ceil, trunc: an int (an int argument is itself) */
static SrVal *to_int_result(SrInterp *I, double r) {
  if (isinf(r)) return sr_raise(I, "OverflowError", "cannot convert float infinity to integer");
  if (isnan(r)) return sr_raise(I, "ValueError", "cannot convert float NaN to integer");
  if (r < -9223372036854775808.0 || r >= 9223372036854775808.0) return too_big(I);
  return sr_int(NULL, (int64_t)r);
}

static SrVal *math_rounding(SrInterp *I, SrArgs *a) {
  const char *name = sr_current_builtin(I)->name + strlen("math.");
  if (nargs(I, a, name, 1, 1) < 0) return NULL;
  if (a->v[0]->kind == SR_V_INT) return sr_ref(a->v[0]);
  if (a->v[0]->kind == SR_V_BOOL) return sr_int(NULL, a->v[0]->i);
  double x;
  if (real_arg(I, a->v[0], &x) < 0) return NULL;
  return to_int_result(I, name[0] == 'f' ? floor(x) : name[0] == 'c' ? ceil(x) : trunc(x));
}

/* ---- functions of two floats ---- */

static SrVal *math_binary(SrInterp *I, SrArgs *a) {
  const char *name = sr_current_builtin(I)->name + strlen("math.");
  if (nargs(I, a, name, 2, 2) < 0) return NULL;
  double x, y;
  if (real_arg(I, a->v[0], &x) < 0 || real_arg(I, a->v[1], &y) < 0) return NULL;
  double r;
  if (strcmp(name, "pow") == 0) {
    if (x == 0 && y < 0) return sr_raise(I, "ValueError", "math domain error");
    if (x < 0 && isfinite(y) && y != floor(y)) return sr_raise(I, "ValueError", "math domain error");
    r = pow(x, y);
    if (isinf(r) && isfinite(x) && isfinite(y)) return sr_raise(I, "OverflowError", "math range error");
    return sr_float(NULL, r);
  }
  if (strcmp(name, "atan2") == 0) return sr_float(NULL, atan2(x, y));
  if (strcmp(name, "copysign") == 0) return sr_float(NULL, copysign(x, y));
  if (strcmp(name, "nextafter") == 0) return sr_float(NULL, nextafter(x, y));
  if (strcmp(name, "fmod") == 0 || strcmp(name, "remainder") == 0) {
    if (isinf(x) || (y == 0 && !isnan(x))) return sr_raise(I, "ValueError", "math domain error");
    return sr_float(NULL, name[0] == 'f' ? fmod(x, y) : remainder(x, y));
  }
  return sr_raise(I, "RuntimeError", "math.%s() has no rule", name);
}

static SrVal *math_ldexp(SrInterp *I, SrArgs *a) {
  if (nargs(I, a, "ldexp", 2, 2) < 0) return NULL;
  double x;
  int64_t e;
  if (real_arg(I, a->v[0], &x) < 0) return NULL;
  if (a->v[1]->kind != SR_V_INT && a->v[1]->kind != SR_V_BOOL)
    return sr_raise(I, "TypeError", "Expected an int as second argument to ldexp.");
  e = a->v[1]->i;
  double r = ldexp(x, e > 100000 ? 100000 : e < -100000 ? -100000 : (int)e);
  return float_result(I, r, x, 1);
}

static SrVal *math_frexp(SrInterp *I, SrArgs *a) {
  if (nargs(I, a, "frexp", 1, 1) < 0) return NULL;
  double x;
  if (real_arg(I, a->v[0], &x) < 0) return NULL;
  int e = 0;
  double m = isfinite(x) ? frexp(x, &e) : x;
  SrVal *items[2] = {sr_float(NULL, m), sr_int(NULL, e)};
  return sr_tuple(NULL, 2, items);
}

static SrVal *math_modf(SrInterp *I, SrArgs *a) {
  if (nargs(I, a, "modf", 1, 1) < 0) return NULL;
  double x, ip;
  if (real_arg(I, a->v[0], &x) < 0) return NULL;
  double fp = isinf(x) ? copysign(0.0, x) : modf(x, &ip);
  if (isinf(x)) ip = x;
  SrVal *items[2] = {sr_float(NULL, fp), sr_float(NULL, ip)};
  return sr_tuple(NULL, 2, items);
}

static SrVal *math_ulp(SrInterp *I, SrArgs *a) {
  if (nargs(I, a, "ulp", 1, 1) < 0) return NULL;
  double x;
  if (real_arg(I, a->v[0], &x) < 0) return NULL;
  if (isnan(x)) return sr_float(NULL, x);
  x = fabs(x);
  if (isinf(x)) return sr_float(NULL, x);
  double y = nextafter(x, INFINITY);
  if (isinf(y)) return sr_float(NULL, x - nextafter(x, -INFINITY));
  return sr_float(NULL, y - x);
}

static SrVal *math_predicate(SrInterp *I, SrArgs *a) {
  const char *name = sr_current_builtin(I)->name + strlen("math.");
  if (nargs(I, a, name, 1, 1) < 0) return NULL;
  double x;
  if (real_arg(I, a->v[0], &x) < 0) return NULL;
  if (strcmp(name, "isnan") == 0) return sr_bool(isnan(x));
  if (strcmp(name, "isinf") == 0) return sr_bool(isinf(x));
  return sr_bool(isfinite(x));
}

/* math.isclose(a, b, *, rel_tol=1e-09, abs_tol=0.0) */
static SrVal *math_isclose(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "isclose", "a, b, *, rel_tol=, abs_tol=", p) < 0) return NULL;
  double x, y, rel = 1e-09, abs_tol = 0.0;
  if (real_arg(I, p[0], &x) < 0 || real_arg(I, p[1], &y) < 0) return NULL;
  if ((p[2] && real_arg(I, p[2], &rel) < 0) || (p[3] && real_arg(I, p[3], &abs_tol) < 0)) return NULL;
  if (rel < 0 || abs_tol < 0) return sr_raise(I, "ValueError", "tolerances must be non-negative");
  if (x == y) return sr_bool(1);
  if (isinf(x) || isinf(y)) return sr_bool(0);
  double diff = fabs(y - x);
  return sr_bool((diff <= fabs(rel * y)) || (diff <= fabs(rel * x)) || diff <= abs_tol);
}

/* ---- sequences ---- */

/* math.prod(iterable, *, start=1): the product by the * operator, so that
   arrays multiply too */
static SrVal *math_prod(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "prod", "iterable, *, start=", p) < 0) return NULL;
  SrIter it;
  if (sr_iter_begin(I, &it, p[0]) < 0) return NULL;
  SrVal *acc = p[1] ? sr_ref(p[1]) : sr_int(NULL, 1);
  for (SrVal *x; acc && (x = sr_iter_next(&it));) {
    SrVal *r = sr_poll_interrupt(I) ? NULL : sr_binop(I, SR_OP_MUL, acc, x);
    sr_unref(x);
    sr_unref(acc);
    acc = r;
  }
  sr_iter_end(&it);
  return acc;
}

/* math.fsum: the exact sum, rounded once (Shewchuk's algorithm, as
   CPython's msum) */
static SrVal *math_fsum(SrInterp *I, SrArgs *a) {
  if (nargs(I, a, "fsum", 1, 1) < 0) return NULL;
  SrIter it;
  if (sr_iter_begin(I, &it, a->v[0]) < 0) return NULL;
  size_t n = 0, cap = 32;
  double *partials = sr_xmalloc(cap * sizeof *partials), special = 0;
  int nspecial = 0, failed = 0;
  for (SrVal *v; (v = sr_iter_next(&it));) {
    double x;
    failed = real_arg(I, v, &x) < 0 || sr_poll_interrupt(I);
    sr_unref(v);
    if (failed) break;
    if (!isfinite(x)) {
      /* infinities and NaNs: their plain sum, as CPython's special_sum */
      special = nspecial++ ? special + x : x;
      continue;
    }
    size_t i = 0;
    for (size_t j = 0; j < n; j++) {
      double y = partials[j];
      if (fabs(x) < fabs(y)) {
        double t = x;
        x = y;
        y = t;
      }
      double hi = x + y, lo = y - (hi - x);
      if (lo != 0.0) partials[i++] = lo;
      x = hi;
    }
    if (i == cap) partials = sr_xrealloc(partials, (cap *= 2) * sizeof *partials);
    partials[i] = x;
    n = i + 1;
  }
  sr_iter_end(&it);
  if (failed) {
    free(partials);
    return NULL;
  }
  double hi = 0.0;
  if (nspecial) {
    free(partials);
    if (isnan(special) && !isnan(special + 0)) return sr_raise(I, "ValueError", "-inf + inf in fsum");
    return sr_float(NULL, special);
  }
  if (n) {
    hi = partials[--n];
    double lo = 0;
    while (n > 0) {
      double x = hi, y = partials[--n];
      hi = x + y;
      double yr = hi - x;
      lo = y - yr;
      if (lo != 0.0) break;
    }
    if (n > 0 && ((lo < 0.0 && partials[n - 1] < 0.0) || (lo > 0.0 && partials[n - 1] > 0.0))) {
      double y = lo * 2.0, x = hi + y, yr = x - hi;
      if (y == yr) hi = x;
    }
  }
  free(partials);
  return sr_float(NULL, hi);
}

static SrVal *math_hypot(SrInterp *I, SrArgs *a) {
  if (a->nkw) return sr_raise(I, "TypeError", "math.hypot() takes no keyword arguments");
  double r = 0;
  int inf = 0, nan = 0;
  for (int i = 0; i < a->n; i++) {
    double x;
    if (real_arg(I, a->v[i], &x) < 0) return NULL;
    inf |= isinf(x);
    nan |= isnan(x);
    r = hypot(r, x);
  }
  return sr_float(NULL, inf ? INFINITY : nan ? NAN : r);
}

static SrVal *math_dist(SrInterp *I, SrArgs *a) {
  if (nargs(I, a, "dist", 2, 2) < 0) return NULL;
  SrVal *p = sr_iterate(I, a->v[0]), *q = p ? sr_iterate(I, a->v[1]) : NULL;
  SrVal *r = NULL;
  if (q && p->seq.n != q->seq.n) {
    sr_raise(I, "ValueError", "both points must have the same number of dimensions");
  } else if (q) {
    double s = 0;
    int i;
    for (i = 0; i < p->seq.n; i++) {
      double x, y;
      if (real_arg(I, p->seq.items[i], &x) < 0 || real_arg(I, q->seq.items[i], &y) < 0) break;
      s = hypot(s, x - y);
    }
    if (i == p->seq.n) r = sr_float(NULL, s);
  }
  sr_unref(p);
  sr_unref(q);
  return r;
}

/* ---- integers ---- */

static uint64_t gcd_u(uint64_t x, uint64_t y) {
  while (y) {
    uint64_t t = x % y;
    x = y;
    y = t;
  }
  return x;
}

static SrVal *math_gcd_lcm(SrInterp *I, SrArgs *a) {
  int lcm = strcmp(sr_current_builtin(I)->name, "math.lcm") == 0;
  if (a->nkw) return sr_raise(I, "TypeError", "math.%s() takes no keyword arguments", lcm ? "lcm" : "gcd");
  uint64_t r = lcm ? 1 : 0;
  for (int i = 0; i < a->n; i++) {
    int64_t x;
    if (int_arg(I, a->v[i], &x) < 0) return NULL;
    uint64_t u = x < 0 ? 0 - (uint64_t)x : (uint64_t)x;
    if (!lcm) {
      r = gcd_u(r, u);
    } else if (u == 0 || r == 0) {
      r = 0;
    } else {
      uint64_t g = gcd_u(r, u), m = r / g;
      if (m > UINT64_MAX / u) return too_big(I);
      r = m * u;
    }
  }
  if (r > INT64_MAX) return too_big(I);
  return sr_int(NULL, (int64_t)r);
}

static SrVal *math_factorial(SrInterp *I, SrArgs *a) {
  if (nargs(I, a, "factorial", 1, 1) < 0) return NULL;
  int64_t n;
  if (int_arg(I, a->v[0], &n) < 0) return NULL;
  if (n < 0) return sr_raise(I, "ValueError", "factorial() not defined for negative values");
  if (n > 20) return too_big(I);
  int64_t r = 1;
  for (int64_t i = 2; i <= n; i++) r *= i;
  return sr_int(NULL, r);
}

/* comb(n, k) and perm(n, k), exactly, or OverflowError past int64 */
static SrVal *math_comb_perm(SrInterp *I, SrArgs *a) {
  int perm = strcmp(sr_current_builtin(I)->name, "math.perm") == 0;
  const char *name = perm ? "perm" : "comb";
  if (nargs(I, a, name, perm ? 1 : 2, 2) < 0) return NULL;
  int64_t n, k;
  if (int_arg(I, a->v[0], &n) < 0) return NULL;
  if (a->n == 1) {
    k = n;
  } else if (a->v[1]->kind == SR_V_NONE && perm) {
    k = n;
  } else if (int_arg(I, a->v[1], &k) < 0) {
    return NULL;
  }
  if (n < 0) return sr_raise(I, "ValueError", "n must be a non-negative integer");
  if (k < 0) return sr_raise(I, "ValueError", "k must be a non-negative integer");
  if (k > n) return sr_int(NULL, 0);
  if (!perm && k > n - k) k = n - k;
  unsigned __int128 r = 1;
  for (int64_t i = 0; i < k; i++) {
    if (perm) {
      r *= (unsigned __int128)(n - i);
    } else {
      r = r * (unsigned __int128)(n - i) / (unsigned __int128)(i + 1);
    }
    if (r > INT64_MAX) return too_big(I);
  }
  return sr_int(NULL, (int64_t)r);
}

static SrVal *math_isqrt(SrInterp *I, SrArgs *a) {
  if (nargs(I, a, "isqrt", 1, 1) < 0) return NULL;
  int64_t n;
  if (int_arg(I, a->v[0], &n) < 0) return NULL;
  if (n < 0) return sr_raise(I, "ValueError", "isqrt() argument must be nonnegative");
  uint64_t r = (uint64_t)sqrt((double)n);
  while (r * r > (uint64_t)n) r--;
  while ((r + 1) * (r + 1) <= (uint64_t)n) r++;
  return sr_int(NULL, (int64_t)r);
}

/* ---- the operator module ---- */

/* operator.__add__ is operator.add, __and__ and_ (the dunder aliases) */
static const char *dunder_name(const char *name, char *buf) {
  size_t n = strlen(name);
  if (n < 5 || strncmp(name, "__", 2) != 0 || n > 13) return name;
  memcpy(buf, name + 2, n - 4);
  buf[n - 4] = 0;
  if (strcmp(buf, "and") == 0 || strcmp(buf, "or") == 0 || strcmp(buf, "not") == 0) strcat(buf, "_");
  return buf;
}

static SrVal *op_binary(SrInterp *I, SrArgs *a) {
  static const struct {
    const char *name;
    int op;
  } ops[] = {
    {"add", SR_OP_ADD}, {"sub", SR_OP_SUB}, {"mul", SR_OP_MUL}, {"truediv", SR_OP_DIV},
    {"floordiv", SR_OP_FLOORDIV}, {"mod", SR_OP_MOD}, {"pow", SR_OP_POW}, {"matmul", SR_OP_MATMUL},
    {"lshift", SR_OP_LSHIFT}, {"rshift", SR_OP_RSHIFT}, {"and_", SR_OP_BITAND}, {"or_", SR_OP_BITOR},
    {"xor", SR_OP_BITXOR}, {"eq", SR_OP_EQ}, {"ne", SR_OP_NE}, {"lt", SR_OP_LT}, {"le", SR_OP_LE},
    {"gt", SR_OP_GT}, {"ge", SR_OP_GE}, {"is_", SR_OP_IS}, {"is_not", SR_OP_ISNOT}, {"concat", SR_OP_ADD},
    {NULL, 0},
  };
  char dn[16];
  const char *name = dunder_name(sr_current_builtin(I)->name + strlen("operator."), dn);
  if (a->nkw) return sr_raise(I, "TypeError", "%s() takes no keyword arguments", name);
  if (a->n != 2) return sr_raise(I, "TypeError", "%s expected 2 arguments, got %d", name, a->n);
  for (int i = 0; ops[i].name; i++)
    if (strcmp(ops[i].name, name) == 0) {
      if (strcmp(name, "concat") == 0 && !sr_is_seq(a->v[0]) && a->v[0]->kind != SR_V_STR)
        return sr_raise(I, "TypeError", "'%s' object can't be concatenated", sr_val_kind_name(a->v[0]));
      return sr_binop(I, ops[i].op, a->v[0], a->v[1]);
    }
  return sr_raise(I, "RuntimeError", "operator.%s() has no rule", name);
}

static SrVal *op_unary(SrInterp *I, SrArgs *a) {
  char dn[16];
  const char *name = dunder_name(sr_current_builtin(I)->name + strlen("operator."), dn);
  if (a->nkw) return sr_raise(I, "TypeError", "%s() takes no keyword arguments", name);
  if (a->n != 1) return sr_raise(I, "TypeError", "%s() takes exactly one argument (%d given)", name, a->n);
  SrVal *x = a->v[0];
  if (strcmp(name, "neg") == 0) return sr_unop(I, SR_OP_NEG, x);
  if (strcmp(name, "pos") == 0) return sr_unop(I, SR_OP_POS, x);
  if (strcmp(name, "invert") == 0 || strcmp(name, "inv") == 0) return sr_unop(I, SR_OP_INVERT, x);
  int t = sr_truthy(I, x);
  if (t < 0) return NULL;
  if (strcmp(name, "not_") == 0) return sr_bool(!t);
  return sr_bool(t); /* truth */
}

static SrVal *op_abs(SrInterp *I, SrArgs *a) {
  SrVal *f = sr_lookup_qualname("builtins.abs");
  return f ? sr_call(I, f, a) : NULL;
}

static SrVal *op_index(SrInterp *I, SrArgs *a) {
  if (a->n != 1 || a->nkw) return sr_raise(I, "TypeError", "index() takes exactly one argument (%d given)", a->n);
  int64_t i;
  if (sr_as_index(I, a->v[0], &i) < 0) return NULL;
  return sr_int(NULL, i);
}

static SrVal *op_getitem(SrInterp *I, SrArgs *a) {
  if (a->n != 2 || a->nkw) return sr_raise(I, "TypeError", "getitem expected 2 arguments, got %d", a->n);
  return sr_getitem(I, a->v[0], a->v[1]);
}

static SrVal *op_setitem(SrInterp *I, SrArgs *a) {
  if (a->n != 3 || a->nkw) return sr_raise(I, "TypeError", "setitem expected 3 arguments, got %d", a->n);
  return sr_setitem(I, a->v[0], a->v[1], a->v[2]) < 0 ? NULL : sr_none();
}

static SrVal *op_delitem(SrInterp *I, SrArgs *a) {
  if (a->n != 2 || a->nkw) return sr_raise(I, "TypeError", "delitem expected 2 arguments, got %d", a->n);
  return sr_delitem(I, a->v[0], a->v[1]) < 0 ? NULL : sr_none();
}

static SrVal *op_contains(SrInterp *I, SrArgs *a) {
  if (a->n != 2 || a->nkw) return sr_raise(I, "TypeError", "contains expected 2 arguments, got %d", a->n);
  return sr_binop(I, SR_OP_IN, a->v[1], a->v[0]);
}

/* itemgetter, attrgetter, methodcaller: objects holding what they get */
typedef struct Getter {
  int kind; /* 'i', 'a', 'm' */
  SrVal *what; /* a tuple: the items / the attribute names / (name, args) */
  SrVal *kw;   /* methodcaller's keywords: a dict, or NULL */
} Getter;

static void getter_free(void *d) {
  Getter *g = d;
  sr_unref(g->what);
  sr_unref(g->kw);
  free(g);
}

static void getter_repr(SrBuf *out, const SrVal *v) {
  const Getter *g = v->obj.data;
  sr_buf_printf(out, "operator.%s(", g->kind == 'i' ? "itemgetter" : g->kind == 'a' ? "attrgetter" : "methodcaller");
  for (int i = 0; i < g->what->seq.n; i++) {
    if (i) sr_buf_puts(out, ", ");
    sr_val_repr(out, g->what->seq.items[i]);
  }
  for (int i = 0; g->kw && i < g->kw->dict.n; i++) {
    sr_buf_printf(out, ", %s=", g->kw->dict.keys[i]->str.s);
    sr_val_repr(out, g->kw->dict.vals[i]);
  }
  sr_buf_putc(out, ')');
}

static SrVal *get_attr_path(SrInterp *I, SrVal *obj, const SrVal *path) {
  SrVal *cur = sr_ref(obj);
  const char *s = path->str.s, *end = s + path->str.n;
  while (cur && s <= end) {
    const char *dot = memchr(s, '.', (size_t)(end - s));
    const char *e = dot ? dot : end;
    SrVal *next = sr_getattr(I, cur, sr_intern(s, (size_t)(e - s)));
    sr_unref(cur);
    cur = next;
    s = e + 1;
  }
  return cur;
}

static SrVal *getter_call(SrInterp *I, SrVal *self, SrArgs *a) {
  const Getter *g = self->obj.data;
  const char *name = g->kind == 'i' ? "itemgetter" : g->kind == 'a' ? "attrgetter" : "methodcaller";
  if (a->nkw) return sr_raise(I, "TypeError", "%s() takes no keyword arguments", name);
  if (a->n != 1) return sr_raise(I, "TypeError", "%s expected 1 argument, got %d", name, a->n);
  SrVal *obj = a->v[0];
  if (g->kind == 'm') {
    SrVal *m = sr_getattr(I, obj, sr_intern(g->what->seq.items[0]->str.s, g->what->seq.items[0]->str.n));
    if (!m) return NULL;
    int nkw = g->kw ? g->kw->dict.n : 0;
    const char **kw = sr_xcalloc((size_t)nkw + 1, sizeof *kw);
    for (int i = 0; i < nkw; i++) kw[i] = sr_intern_cstr(g->kw->dict.keys[i]->str.s);
    SrArgs ca = {g->what->seq.n - 1, g->what->seq.items + 1, nkw, kw, g->kw ? g->kw->dict.vals : NULL, NULL};
    SrVal *r = sr_call(I, m, &ca);
    free(kw);
    sr_unref(m);
    return r;
  }
  int n = g->what->seq.n;
  SrVal *t = n == 1 ? NULL : sr_seq(NULL, SR_V_TUPLE, n);
  for (int i = 0; i < n; i++) {
    SrVal *k = g->what->seq.items[i];
    SrVal *r = g->kind == 'i' ? sr_getitem(I, obj, k) : get_attr_path(I, obj, k);
    if (!r || n == 1) {
      sr_unref(t);
      return r;
    }
    sr_seq_push(NULL, t, r);
  }
  return t;
}

static const SrLangOps getter_ops = {.call = getter_call};
static const SrClass itemgetter_class = {"operator.itemgetter", getter_free, getter_repr, NULL, &getter_ops};
static const SrClass attrgetter_class = {"operator.attrgetter", getter_free, getter_repr, NULL, &getter_ops};
static const SrClass methodcaller_class = {"operator.methodcaller", getter_free, getter_repr, NULL, &getter_ops};

static SrVal *getter_new(SrInterp *I, SrArgs *a, int kind) {
  const char *name = kind == 'i' ? "itemgetter" : kind == 'a' ? "attrgetter" : "methodcaller";
  if (kind != 'm' && a->nkw) return sr_raise(I, "TypeError", "%s() takes no keyword arguments", name);
  if (a->n < 1) {
    if (kind == 'm') return sr_raise(I, "TypeError", "methodcaller needs at least one argument, the method name");
    return sr_raise(I, "TypeError", "%s expected 1 argument, got 0", name);
  }
  for (int i = 0; i < (kind == 'm' ? 1 : kind == 'a' ? a->n : 0); i++)
    if (a->v[i]->kind != SR_V_STR)
      return sr_raise(I, "TypeError", kind == 'm' ? "method name must be a string" : "attribute name must be a string");
  Getter *g = sr_xcalloc(1, sizeof *g);
  g->kind = kind;
  g->what = sr_seq(NULL, SR_V_TUPLE, a->n);
  for (int i = 0; i < a->n; i++) sr_seq_push(NULL, g->what, sr_ref(a->v[i]));
  if (a->nkw) {
    g->kw = sr_dict(NULL);
    for (int i = 0; i < a->nkw; i++) sr_dict_set(NULL, g->kw, sr_str_cstr(NULL, a->kw[i]), sr_ref(a->kwv[i]));
  }
  return sr_obj(kind == 'i' ? &itemgetter_class : kind == 'a' ? &attrgetter_class : &methodcaller_class, g);
}

static SrVal *op_itemgetter(SrInterp *I, SrArgs *a) { return getter_new(I, a, 'i'); }
static SrVal *op_attrgetter(SrInterp *I, SrArgs *a) { return getter_new(I, a, 'a'); }
static SrVal *op_methodcaller(SrInterp *I, SrArgs *a) { return getter_new(I, a, 'm'); }

static void operator_init(void) {
  static const char *const binary[] = {
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "lshift", "rshift", "and_",
    "or_", "xor", "eq", "ne", "lt", "le", "gt", "ge", "is_", "is_not", "concat", NULL,
  };
  char q[64];
  for (int i = 0; binary[i]; i++) {
    snprintf(q, sizeof q, "operator.%s", binary[i]);
    sr_def(q, op_binary, "the operator as a function of two arguments");
  }
  static const char *const unary_ops[] = {"neg", "pos", "invert", "inv", "not_", "truth", NULL};
  for (int i = 0; unary_ops[i]; i++) {
    snprintf(q, sizeof q, "operator.%s", unary_ops[i]);
    sr_def(q, op_unary, "the operator as a function of one argument");
  }
  static const char *const dunders[] = {
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "lshift", "rshift", "and",
    "or", "xor", "eq", "ne", "lt", "le", "gt", "ge", "concat", NULL,
  };
  for (int i = 0; dunders[i]; i++) {
    snprintf(q, sizeof q, "operator.__%s__", dunders[i]);
    sr_def(q, op_binary, "the operator as a function of two arguments (a dunder alias)");
  }
  static const char *const unary_dunders[] = {"neg", "pos", "invert", "inv", "not", NULL};
  for (int i = 0; unary_dunders[i]; i++) {
    snprintf(q, sizeof q, "operator.__%s__", unary_dunders[i]);
    sr_def(q, op_unary, "the operator as a function of one argument (a dunder alias)");
  }
  sr_def("operator.__abs__", op_abs, "operator.__abs__(a): abs(a)");
  sr_def("operator.__index__", op_index, "operator.__index__(a): a as an int");
  sr_def("operator.abs", op_abs, "operator.abs(a): abs(a)");
  sr_def("operator.index", op_index, "operator.index(a): a as an int");
  sr_def("operator.getitem", op_getitem, "operator.getitem(a, b): a[b]");
  sr_def("operator.setitem", op_setitem, "operator.setitem(a, b, c): a[b] = c");
  sr_def("operator.delitem", op_delitem, "operator.delitem(a, b): del a[b]");
  sr_def("operator.contains", op_contains, "operator.contains(a, b): b in a");
  sr_def("operator.itemgetter", op_itemgetter, "operator.itemgetter(*items): a callable that returns obj[item]");
  sr_def("operator.attrgetter", op_attrgetter, "operator.attrgetter(*names): a callable that returns obj.name");
  sr_def("operator.methodcaller", op_methodcaller,
         "operator.methodcaller(name, *args, **kwargs): a callable that calls obj.name(*args, **kwargs)");
}

void sr_math_init(void) {
  sr_register("math.pi", sr_float(NULL, M_PI));
  sr_register("math.e", sr_float(NULL, M_E));
  sr_register("math.tau", sr_float(NULL, 2 * M_PI));
  sr_register("math.inf", sr_float(NULL, INFINITY));
  sr_register("math.nan", sr_float(NULL, NAN));
  char q[64];
  static char docs[sizeof unary / sizeof *unary][96];
  for (int i = 0; unary[i].name; i++) {
    snprintf(q, sizeof q, "math.%s", unary[i].name);
    snprintf(docs[i], sizeof docs[i], "math.%s(x): %s", unary[i].name, unary[i].doc);
    sr_def(q, math_unary, docs[i]);
  }
  sr_def("math.log", math_log, "math.log(x[, base]): the logarithm of x to the base (e)");
  sr_def("math.floor", math_rounding, "math.floor(x): the largest int <= x");
  sr_def("math.ceil", math_rounding, "math.ceil(x): the smallest int >= x");
  sr_def("math.trunc", math_rounding, "math.trunc(x): x truncated to an int");
  sr_def("math.pow", math_binary, "math.pow(x, y): x ** y, as floats");
  sr_def("math.atan2", math_binary, "math.atan2(y, x): the arc tangent of y/x, in radians, in the right quadrant");
  sr_def("math.copysign", math_binary, "math.copysign(x, y): x with the sign of y");
  sr_def("math.fmod", math_binary, "math.fmod(x, y): C's fmod");
  sr_def("math.remainder", math_binary, "math.remainder(x, y): IEEE 754's remainder");
  sr_def("math.nextafter", math_binary, "math.nextafter(x, y): the next float after x towards y");
  sr_def("math.ldexp", math_ldexp, "math.ldexp(x, i): x * 2**i");
  sr_def("math.frexp", math_frexp, "math.frexp(x): (m, e) with x == m * 2**e");
  sr_def("math.modf", math_modf, "math.modf(x): the fractional and integer parts of x");
  sr_def("math.ulp", math_ulp, "math.ulp(x): the value of x's least significant bit");
  sr_def("math.isnan", math_predicate, "math.isnan(x)");
  sr_def("math.isinf", math_predicate, "math.isinf(x)");
  sr_def("math.isfinite", math_predicate, "math.isfinite(x)");
  sr_def("math.isclose", math_isclose, "math.isclose(a, b, *, rel_tol=1e-09, abs_tol=0.0)");
  sr_def("math.prod", math_prod, "math.prod(iterable, *, start=1): the product of the items");
  sr_def("math.fsum", math_fsum, "math.fsum(iterable): the exact sum of floats, rounded once");
  sr_def("math.hypot", math_hypot, "math.hypot(*coordinates): the Euclidean norm");
  sr_def("math.dist", math_dist, "math.dist(p, q): the Euclidean distance between two points");
  sr_def("math.gcd", math_gcd_lcm, "math.gcd(*integers): the greatest common divisor");
  sr_def("math.lcm", math_gcd_lcm, "math.lcm(*integers): the least common multiple");
  sr_def("math.factorial", math_factorial, "math.factorial(n): n!");
  sr_def("math.comb", math_comb_perm, "math.comb(n, k): the ways to choose k of n items");
  sr_def("math.perm", math_comb_perm, "math.perm(n, k=None): the ordered ways to choose k of n items");
  sr_def("math.isqrt", math_isqrt, "math.isqrt(n): the integer square root of n");
  operator_init();
}
