## fft20.mk: the fft primitive and jax.numpy.fft (lib/lax/fft.c,
## lib/exec/kern_fft.c, lib/jax/numpy_fft.c): the printed jaxprs, errors,
## gradients and float32 values (fft20.jxr), and complex128 values
## against numpy.fft (fft20_oracle.sh); included from golden.mk.
FFT20_GOLDEN = tests/golden/fft20.jxr
GOLDEN_TESTS += $(FFT20_GOLDEN)
TESTS += tests/fft20_oracle.sh
EXTRA_DIST += tests/golden/fft20.mk tests/fft20_oracle.sh tests/fft20_values.jxr tests/fft20_values.py
