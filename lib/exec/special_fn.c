/* special_fn.c: igamma, igammac, igamma_grad_a, bessel_i0e, bessel_i1e
 * (special_fn.h).
 *
 * P and Q by the series of P below a + 1 and Lentz's continued fraction
 * of Q above it (Numerical Recipes' gser and gcf, the split XLA's
 * igamma_impl makes too); dP/da by differentiating P's series term by term
 * (each term exp(a log x - x + n log x - lgamma(a + n + 1)) gains the
 * factor log x - digamma(a + n + 1)); the Bessel functions by their power
 * series up to |x| = 20 and their asymptotic series beyond.
 */
#include "exec/special_fn.h"

#include <math.h>

#define ITMAX 100000
#define EPS 1e-17

static double log_prefactor(double a, double x) { return a * log(x) - x - lgamma(a); }

/* P(a, x) by its series, for x < a + 1 */
static double gser(double a, double x) {
  double ap = a, del = 1.0 / a, sum = del;
  for (int n = 0; n < ITMAX; n++) {
    ap += 1;
    del *= x / ap;
    sum += del;
    if (fabs(del) < fabs(sum) * EPS) break;
  }
  return sum * exp(log_prefactor(a, x));
}

/* Q(a, x) by Lentz's continued fraction, for x >= a + 1 */
static double gcf(double a, double x) {
  const double tiny = 1e-300;
  double b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
  for (int i = 1; i < ITMAX; i++) {
    double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (fabs(d) < tiny) d = tiny;
    c = b + an / c;
    if (fabs(c) < tiny) c = tiny;
    d = 1 / d;
    double del = d * c;
    h *= del;
    if (fabs(del - 1) < EPS) break;
  }
  return exp(log_prefactor(a, x)) * h;
}

double sr_igamma(double a, double x) {
  if (isnan(a) || isnan(x) || a <= 0 || x < 0) return NAN;
  if (x == 0) return 0;
  if (isinf(x)) return 1;
  return x < a + 1 ? gser(a, x) : 1 - gcf(a, x);
}

double sr_igammac(double a, double x) {
  if (isnan(a) || isnan(x) || a <= 0 || x < 0) return NAN;
  if (x == 0) return 1;
  if (isinf(x)) return 0;
  return x < a + 1 ? 1 - gser(a, x) : gcf(a, x);
}

static double digamma(double x) {
  double r = 0;
  while (x < 6) {
    r -= 1 / x;
    x += 1;
  }
  double f = 1 / (x * x);
  double t = f * (-1.0 / 12 + f * (1.0 / 120 + f * (-1.0 / 252 + f * (1.0 / 240 + f * (-1.0 / 132)))));
  return r + log(x) - 0.5 / x + t;
}

double sr_igamma_grad_a(double a, double x) {
  if (isnan(a) || isnan(x) || a <= 0 || x < 0) return NAN;
  if (x == 0 || isinf(x)) return 0;
  double lx = log(x), sum = 0, psi = digamma(a + 1);
  for (int n = 0; n < ITMAX; n++) {
    double lt = (a + n) * lx - x - lgamma(a + n + 1);
    double term = exp(lt) * (lx - psi);
    sum += term;
    /* past the largest terms (n > x), stop once they no longer count */
    if (n > x && fabs(term) <= fabs(sum) * EPS) break;
    psi += 1 / (a + n + 1);
  }
  return sum;
}

/* exp(-|x|) I_nu(x) for nu 0 or 1 */
static double bessel_ie(int nu, double x) {
  if (isnan(x)) return NAN;
  double ax = fabs(x), r;
  if (ax <= 20) {
    double h = ax / 2, term = nu ? h : 1, sum = term;
    for (int k = 1; k < 500; k++) {
      term *= h * h / ((double)k * (k + nu));
      sum += term;
      if (term < sum * EPS) break;
    }
    r = sum * exp(-ax);
  } else {
    double mu = 4.0 * nu * nu, term = 1, sum = 1;
    for (int k = 1; k < 60; k++) {
      double nt = -term * (mu - (2.0 * k - 1) * (2.0 * k - 1)) / (k * 8.0 * ax);
      if (fabs(nt) > fabs(term)) break;
      term = nt;
      sum += term;
      if (fabs(term) < EPS) break;
    }
    r = sum / sqrt(2 * M_PI * ax);
  }
  return nu && x < 0 ? -r : r;
}

double sr_bessel_i0e(double x) { return bessel_ie(0, x); }
double sr_bessel_i1e(double x) { return bessel_ie(1, x); }

/* I_x(a, b)'s continued fraction (Numerical Recipes' betacf, by Lentz's
   method), used where it converges fast: x < (a + 1) / (a + b + 2), else
   through I_x(a, b) = 1 - I_{1-x}(b, a) */
static double betacf(double a, double b, double x) {
  const double tiny = 1e-300;
  double qab = a + b, qap = a + 1, qam = a - 1, c = 1, d = 1 - qab * x / qap;
  if (fabs(d) < tiny) d = tiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m < ITMAX; m++) {
    int m2 = 2 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (fabs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (fabs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (fabs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (fabs(c) < tiny) c = tiny;
    d = 1 / d;
    double del = d * c;
    h *= del;
    if (fabs(del - 1) < EPS) break;
  }
  return h;
}

double sr_betainc(double a, double b, double x) {
  if (isnan(a) || isnan(b) || isnan(x) || a <= 0 || b <= 0 || x < 0 || x > 1) return NAN;
  if (x == 0 || x == 1) return x;
  double lbt = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
  if (x < (a + 1) / (a + b + 2)) return exp(lbt) * betacf(a, b, x) / a;
  return 1 - exp(lbt) * betacf(b, a, 1 - x) / b;
}
