## kern.mk: build fragment, included by Makefile.am
## `make bench-kern`: the data-moving kernels (transposes, the in-process
## reductions, an elementwise add) against memcpy, bench/bench_kern.c
## (issue 17; figures in bench/README.md).
EXTRA_PROGRAMS += bench/bench_kern
bench_bench_kern_SOURCES = bench/bench_kern.c
bench_bench_kern_LDADD = $(SR_LIBS)

bench: bench-kern
bench-kern: bench/bench_kern$(EXEEXT)
	bench/bench_kern -n 5
.PHONY: bench-kern

## the kernels' unit tests (tests/unit/check_kern_simd.c)
check_PROGRAMS += tests/unit/check_kern_simd
tests_unit_check_kern_simd_SOURCES = tests/unit/check_kern_simd.c
tests_unit_check_kern_simd_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_kern_simd_LDADD = $(SR_LIBS) $(CHECK_LIBS)
