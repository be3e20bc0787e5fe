/* vmath.h: vectorized transcendental functions for the elementwise
 * kernels (vmath.c): glibc's libmvec in its AVX2 or AVX-512 form, chosen
 * at run time by the CPU.  SHARDREPL_VMATH=0 in the environment turns
 * them off (libm's scalar functions run), for comparisons.
 */
#ifndef SR_EXEC_VMATH_H
#define SR_EXEC_VMATH_H

#include <stddef.h>

typedef enum SrVmathFn {
  SR_VM_TANH, SR_VM_EXP, SR_VM_EXP2, SR_VM_EXPM1, SR_VM_LOG, SR_VM_LOG1P,
  SR_VM_SIN, SR_VM_COS, SR_VM_TAN, SR_VM_ERF, SR_VM_ERFC, SR_VM_CBRT,
  SR_VM_COUNT
} SrVmathFn;

/* y[i] = fn(x[i]) for i < n (y may be x); 0, or -1 when no vector form
   runs here (the caller loops over libm's). */
int sr_vmath_f32(SrVmathFn fn, size_t n, const float *x, float *y);
int sr_vmath_f64(SrVmathFn fn, size_t n, const double *x, double *y);
/* "libmvec AVX2", "libmvec AVX-512", or NULL when none runs */
const char *sr_vmath_form(void);

#endif
