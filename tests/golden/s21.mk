## s21.mk: complex arrays (complex64/complex128): their elementwise ops,
## real/imag/complex/conj, reductions, matmuls and gradients;
## included from golden.mk.
S21_GOLDEN = tests/golden/complex21.jxr tests/golden/eig21.jxr tests/golden/fft21.jxr tests/golden/cmath21.jxr tests/golden/gradcheck21.jxr tests/golden/fuzz21.jxr tests/golden/shard_complex21.jxr
GOLDEN_TESTS += $(S21_GOLDEN)
EXTRA_DIST += tests/golden/s21.mk
