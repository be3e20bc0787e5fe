## speed17.mk: build fragment, included by tests/golden/golden.mk
## Issue 17 (speed): the BLAS kernels named, and a warning when they use
## fewer vector units than the CPU has (lib/exec/blas_cpu.c).
TESTS += tests/blas_kernel.sh
EXTRA_DIST += tests/blas_kernel.sh
