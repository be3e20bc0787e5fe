## jit_options.mk: build fragment, included by Makefile.am
##
## The golden tests of jax.jit's options, arrays of tracers, pytrees and
## introspection (lib/jax/jit_options.c, issue 15).
JIT15_GOLDEN = \
	tests/golden/jit_options.jxr \
	tests/golden/array_of_tracers.jxr \
	tests/golden/pytrees.jxr \
	tests/golden/introspect.jxr

GOLDEN_TESTS += $(JIT15_GOLDEN)
