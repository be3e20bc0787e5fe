# fft20_values.py: what fft20_values.jxr prints, from numpy.fft
# (pocketfft, float64 and complex128), rounded as that script rounds.
import numpy as np
def r(z):
  z = np.asarray(z)
  if np.iscomplexobj(z):
    out = np.empty(z.shape, complex)
    out.real = np.round(z.real, 6) + 0.0
    out.imag = np.round(z.imag, 6) + 0.0
    return out
  return np.round(z, 6) + 0.0
x = np.array([0.5, -1.25, 2.0, 3.5, -0.75, 1.0, 0.25, -2.0])
x7 = x[:7]
c = np.array([1 + 2j, 3 - 1j, 0.5j, -2.0 + 0.25j, 1.5 - 0.5j, -1j])
A = np.arange(24.0).reshape(2, 3, 4) ** 1.5 - 3.0
B = np.array([[1 + 1j, 2 - 1j, 0.5], [-1j, 3 + 0.5j, 1 - 2j]])
H = np.array([1.0, 2 - 1j, -0.5 + 0.5j, 3.0])
with np.printoptions(precision=4, suppress=True):
  print(r(np.fft.fft(x)))
  print(r(np.fft.fft(x7)))
  print(r(np.fft.fft(c)))
  print(r(np.fft.ifft(c)))
  print(r(np.fft.fft(c, n=4)))
  print(r(np.fft.fft(c, n=9, norm='ortho')))
  print(r(np.fft.ifft(c, n=5, norm='forward')))
  print(r(np.fft.ifft(c, norm='backward')))
  print(r(np.fft.rfft(x)))
  print(r(np.fft.rfft(x7)))
  print(r(np.fft.rfft(x, n=11, norm='ortho')))
  print(r(np.fft.irfft(np.fft.rfft(x))))
  print(r(np.fft.irfft(np.fft.rfft(x7), n=7)))
  print(r(np.fft.irfft(c)))
  print(r(np.fft.irfft(c, n=5, norm='ortho')))
  print(r(np.fft.hfft(H)))
  print(r(np.fft.hfft(H, n=5)))
  print(r(np.fft.ihfft(x7)))
  print(r(np.fft.ihfft(x, n=6)))
  print(r(np.fft.fft(A, axis=1)))
  print(r(np.fft.fft(A, axis=0)))
  print(r(np.fft.fft2(A)))
  print(r(np.fft.ifft2(A, s=(4, 3))))
  print(r(np.fft.fftn(A)))
  print(r(np.fft.fftn(A, axes=(0, 2), norm='ortho')))
  print(r(np.fft.ifftn(A, s=(2, 5), axes=(2, 0))))
  print(r(np.fft.rfft2(A)))
  print(r(np.fft.rfftn(A, axes=(0, 1))))
  print(r(np.fft.rfftn(A, s=(3, 6))))
  print(r(np.fft.irfft2(B)))
  print(r(np.fft.irfftn(B, s=(2, 5))))
  print(r(np.fft.irfftn(np.fft.rfftn(A), s=A.shape)))
  print(r(np.fft.fftn(B, axes=(1, 0), norm='forward')))
  print(r(np.fft.fftn(np.arange(16.0).reshape(2, 2, 2, 2) ** 2)))
  print(r(np.fft.ifftn(np.arange(32.0).reshape(2, 2, 2, 2, 2) ** 0.5)))
  print(r(np.fft.irfftn(np.fft.rfftn(np.arange(16.0).reshape(2, 2, 2, 2) ** 2))))
  print(r(np.fft.fft(np.cos(np.arange(100.0) * 0.3))[:6]))
  print(r(np.fft.fftfreq(8)), r(np.fft.fftfreq(7, d=0.1)))
  print(r(np.fft.rfftfreq(8)), r(np.fft.rfftfreq(9, d=2.0)))
  print(np.fft.fftshift(np.arange(10).reshape(2, 5)))
  print(np.fft.ifftshift(np.arange(10).reshape(2, 5), axes=1))
  print(np.fft.fftshift(np.arange(7), axes=0), np.fft.ifftshift(np.arange(7)))
