## vmath.mk: build fragment, included by Makefile.am
## The vector math library's functions (lib/exec/vmath.[ch]) and their
## accuracy test against libm in float64.
check_PROGRAMS += tests/unit/check_vmath
tests_unit_check_vmath_SOURCES = tests/unit/check_vmath.c
tests_unit_check_vmath_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_vmath_LDADD = $(SR_LIBS) $(CHECK_LIBS)
## No TESTS line: Makefile.am's TESTS already starts with $(check_PROGRAMS).
