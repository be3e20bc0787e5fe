## debug15.mk: build fragment, included by tests/golden/golden.mk
## jax.debug.print and jax.debug.callback (issue 15).
DEBUG15_GOLDEN = \
	tests/golden/debug15_print.jxr
TESTS += $(DEBUG15_GOLDEN)
EXTRA_DIST += $(DEBUG15_GOLDEN) $(DEBUG15_GOLDEN:.jxr=.out)
