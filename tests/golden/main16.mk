## main16.mk: build fragment, included by tests/golden/golden.mk
## jax.random's samplers that transform uniform and normal draws (issue 15,
## lib/jax/random_dists.c), and those on the random_gamma primitive.
MAIN16_GOLDEN = \
	tests/golden/random16_dists.jxr \
	tests/golden/random16_gamma.jxr
GOLDEN_TESTS += $(MAIN16_GOLDEN)
EXTRA_DIST += tests/golden/main16.mk
