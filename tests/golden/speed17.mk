## speed17.mk: build fragment, included by tests/golden/golden.mk
## Issue 17 (speed): the BLAS kernels named, and a warning when they use
## fewer vector units than the CPU has (lib/exec/blas_cpu.c).
TESTS += tests/blas_kernel.sh
EXTRA_DIST += tests/blas_kernel.sh
## The devices of one process on a thread pool (lib/exec/pool.c,
## eval_par.c), bit for bit as in turn and as on MPI ranks.
TESTS += tests/threads17.sh
EXTRA_DIST += tests/threads17.sh tests/threads17_bits.jxr
check_PROGRAMS += tests/unit/check_pool
tests_unit_check_pool_SOURCES = tests/unit/check_pool.c
tests_unit_check_pool_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_pool_LDADD = $(SR_LIBS) $(CHECK_LIBS)
