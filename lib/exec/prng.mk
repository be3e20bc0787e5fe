## prng.mk: build fragment, included by Makefile.am
## JAX's threefry2x32 PRNG (lib/exec/prng.[ch]) and its unit test.


check_PROGRAMS += tests/unit/check_prng
tests_unit_check_prng_SOURCES = tests/unit/check_prng.c
tests_unit_check_prng_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_prng_LDADD = $(SR_LIBS) $(CHECK_LIBS)
## No TESTS line: Makefile.am's TESTS already starts with $(check_PROGRAMS),
## and naming the program twice would run it twice.
