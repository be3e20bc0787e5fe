/* kern_fft.c: the FFT kernel (kern_fft.h): radix-2 for powers of 2, mixed
 * radix for lengths whose prime factors are small, Bluestein for the
 * others, the body once per precision (kern_fft_tmpl.h). */
#include "exec/kern_fft.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* cos and sin of 2 pi k/m, by quadrant and reflection, so that the
   angles at multiples of pi/4 come out exact or symmetric, as pocketfft's
   sincos_2pibyn does. */
static void sincos_2pi(int64_t k, int64_t m, double *c, double *s) {
  k %= m;
  if (k < 0) k += m;
  /* 4k = q m + r, 0 <= r < m: the angle is q quarter turns and (pi/2) r/m */
  unsigned __int128 u = (unsigned __int128)4 * (uint64_t)k;
  int q = (int)(u / (uint64_t)m);
  int64_t r = (int64_t)(u % (uint64_t)m);
  double x, y;
  if (2 * r <= m) {
    double a = (M_PI / 2) * (double)r / (double)m;
    x = cos(a), y = sin(a);
  } else {
    double a = (M_PI / 2) * (double)(m - r) / (double)m;
    x = sin(a), y = cos(a);
  }
  switch (q & 3) {
  case 0: *c = x, *s = y; break;
  case 1: *c = -y, *s = x; break;
  case 2: *c = -x, *s = -y; break;
  default: *c = y, *s = -x; break;
  }
}

/* Mixed radix takes lengths whose prime factors are at most MIXED_MAX
   (each a MIXED_MAX-point DFT at worst); others go through Bluestein. */
enum { MIXED_MAX = 64 };

static int64_t smallest_factor(int64_t n) {
  if (n % 2 == 0) return 2;
  for (int64_t p = 3; p * p <= n; p += 2)
    if (n % p == 0) return p;
  return n;
}

static int64_t largest_factor(int64_t n) {
  int64_t big = 1;
  while (n > 1) {
    int64_t p = smallest_factor(n);
    if (p > big) big = p;
    while (n % p == 0) n /= p;
  }
  return big;
}

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
