## numpy.mk: build fragment, included by Makefile.am
## numpy's text forms of arrays (numfmt) and its .npy/.npz files (npy).


check_PROGRAMS += tests/unit/check_numfmt tests/unit/check_npy
tests_unit_check_numfmt_SOURCES = tests/unit/check_numfmt.c
tests_unit_check_numfmt_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_numfmt_LDADD = $(SR_LIBS) $(CHECK_LIBS)
tests_unit_check_npy_SOURCES = tests/unit/check_npy.c
tests_unit_check_npy_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_npy_LDADD = $(SR_LIBS) $(CHECK_LIBS)

## The numpy oracles; each skips (77) without a python3 that has numpy.
TESTS += tests/numfmt_oracle.sh tests/npy_numpy.sh tests/reduce_precision_numpy.sh
EXTRA_DIST += tests/numfmt_oracle.sh tests/numfmt_oracle.py \
	tests/npy_numpy.sh tests/npy_numpy.py \
	tests/reduce_precision_numpy.sh tests/reduce_precision_numpy.py
