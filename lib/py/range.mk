## range.mk: build fragment, included by Makefile.am
##
## Python's lazy range object and the walk over iterables that does not
## list a range's items (lib/py/range.c), and their golden tests.


GOLDEN_TESTS += \
	tests/golden/py_range.jxr \
	tests/golden/range_jax.jxr
