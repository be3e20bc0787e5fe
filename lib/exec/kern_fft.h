/* kern_fft.h: the fast Fourier transform of XLA's Fft op (the kernel of
 * the fft primitive, lax/fft.c).
 *
 * One call transforms one row-major block: the last nlen dimensions with
 * the lengths len[], as XLA's FftType says (JAX's lax.FftType):
 *
 *   SR_FFT_FFT    complex -> complex, forward, unnormalized
 *   SR_FFT_IFFT   complex -> complex, inverse, divided by prod(len)
 *   SR_FFT_RFFT   real -> complex: the last dim n becomes n//2+1 (the
 *                 nonnegative frequencies), then the other dims forward
 *   SR_FFT_IRFFT  complex -> real: the other dims inverse, then the last
 *                 dim from its n//2+1 nonnegative frequencies (those
 *                 beyond the input's last dim taken as zero, the others
 *                 Hermitian-symmetric; the imaginary parts of the zero
 *                 and Nyquist frequencies ignored) to n reals, divided by
 *                 prod(len)
 *
 * complex64 (and float32 for RFFT's input and IRFFT's output) computes
 * in float, complex128 (float64) in double, on interleaved (re, im)
 * pairs.  Powers of two run the iterative radix-2 algorithm, other
 * lengths Bluestein's chirp-z transform over a power-of-two convolution;
 * twiddles and chirps are computed in double from exact integer angles
 * (k*k mod 2n), so errors stay near pocketfft's.
 *
 * The kernel is pure computation (it may run on a pool thread, exec/
 * eval_par.h): it allocates its scratch with malloc and returns -1 when
 * that fails, 0 otherwise.
 */
#ifndef SR_EXEC_KERN_FFT_H
#define SR_EXEC_KERN_FFT_H

#include <stdint.h>

#include "ir/dtype.h"

enum { SR_FFT_FFT = 0, SR_FFT_IFFT = 1, SR_FFT_RFFT = 2, SR_FFT_IRFFT = 3 };

/* in has shape ishape[nd] (dtype in_dt: complex64 or complex128, float32 or
   float64 for RFFT), out shape oshape[nd] of the result's dtype.  The
   caller has checked the shapes against type (the fft type rule). */
int sr_kern_fft(int type, SrDtype in_dt, const void *in, const int64_t *ishape, void *out, const int64_t *oshape,
                int nd, const int64_t *len, int nlen);

/* One 1-d transform of n complex values in place (x interleaved; double
   when dbl, else float): forward (e^{-2 pi i jk/n}) or inverse
   (e^{+2 pi i jk/n}), unnormalized.  -1 when memory runs out.  For the
   unit tests. */
int sr_kern_fft_1d(void *x, int64_t n, int dbl, int inverse);

#endif
