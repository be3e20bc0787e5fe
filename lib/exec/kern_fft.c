/* kern_fft.c: the FFT kernel (kern_fft.h): radix-2 and Bluestein, the
 * body once per precision (kern_fft_tmpl.h). */
#include "exec/kern_fft.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#define T float
#define S _f
#include "exec/kern_fft_tmpl.h"
#undef T
#undef S

#define T double
#define S _d
#include "exec/kern_fft_tmpl.h"
#undef T
#undef S

int sr_kern_fft(int type, SrDtype in_dt, const void *in, const int64_t *ishape, void *out, const int64_t *oshape,
                int nd, const int64_t *len, int nlen) {
  if (in_dt == SR_C128 || in_dt == SR_F64) return run_fft_d(type, in, ishape, out, oshape, nd, len, nlen);
  return run_fft_f(type, in, ishape, out, oshape, nd, len, nlen);
}

int sr_kern_fft_1d(void *x, int64_t n, int dbl, int inverse) {
  if (dbl) {
    Plan_d *p = plan_new_d(n);
    if (!p) return -1;
    transform_d(p, x, inverse);
    plan_free_d(p);
  } else {
    Plan_f *p = plan_new_f(n);
    if (!p) return -1;
    transform_f(p, x, inverse);
    plan_free_f(p);
  }
  return 0;
}
