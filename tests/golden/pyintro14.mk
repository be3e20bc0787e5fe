## pyintro14.mk: build fragment, included by tests/golden/golden.mk
## Python's introspection, enum, string escapes, multiple inheritance and
## the refusals of the security paragraph (issue 14).
PYINTRO14_GOLDEN = \
	tests/golden/py_escapes.jxr \
	tests/golden/py_escape_errors.jxr \
	tests/golden/py_introspect.jxr \
	tests/golden/introspect_jax.jxr \
	tests/golden/py_refusals.jxr \
	tests/golden/py_mro.jxr \
	tests/golden/py_enum.jxr
TESTS += $(PYINTRO14_GOLDEN)
EXTRA_DIST += $(PYINTRO14_GOLDEN) $(PYINTRO14_GOLDEN:.jxr=.out)

## Tab completion and continuation indentation, without a terminal
check_PROGRAMS += tests/unit/check_complete
TESTS += tests/unit/check_complete
tests_unit_check_complete_SOURCES = tests/unit/check_complete.c
tests_unit_check_complete_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_complete_LDADD = $(SR_LIBS) $(CHECK_LIBS)
