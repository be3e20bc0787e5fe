/* special_fn.h: the special functions the elementwise kernels of
 * lax/special.py's primitives compute (igamma, igammac, igamma_grad_a,
 * bessel_i0e, bessel_i1e, regularized_incomplete_beta), in double precision (the float32 kernels round
 * the double result).
 */
#ifndef SR_EXEC_SPECIAL_FN_H
#define SR_EXEC_SPECIAL_FN_H

/* The regularized lower incomplete gamma function P(a, x); NaN outside
   a > 0, x >= 0 (x == 0 gives 0). */
double sr_igamma(double a, double x);
/* Q(a, x) = 1 - P(a, x), computed directly where P is near 1. */
double sr_igammac(double a, double x);
/* dP(a, x)/da. */
double sr_igamma_grad_a(double a, double x);
/* exp(-|x|) I0(x) and exp(-|x|) I1(x), the exponentially scaled modified
   Bessel functions of orders 0 and 1. */
double sr_bessel_i0e(double x);
double sr_bessel_i1e(double x);
/* The regularized incomplete beta function I_x(a, b); NaN outside a > 0,
   b > 0, 0 <= x <= 1. */
double sr_betainc(double a, double b, double x);

#endif
