## numpy.mk: build fragment, included by Makefile.am
## numpy's text forms of arrays (numfmt) and its .npy/.npz files (npy).

lib_libshardrepl_a_SOURCES += \
	lib/exec/numfmt.c lib/exec/numfmt.h

check_PROGRAMS += tests/unit/check_numfmt
tests_unit_check_numfmt_SOURCES = tests/unit/check_numfmt.c
tests_unit_check_numfmt_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_numfmt_LDADD = $(SR_LIBS) $(CHECK_LIBS)

TESTS += tests/numfmt_oracle.sh
EXTRA_DIST += tests/numfmt_oracle.sh tests/numfmt_oracle.py
