## random18.mk: build fragment, included by tests/golden/golden.mk: the
## jax.random functions of JAX 0.11 added last -- poisson (exact and
## approximate), binomial and multinomial (lib/jax/random_counts.c),
## key_impl, key_dtype, clone (the random_clone primitive) and
## random_gamma_p, and key equality (eq / ne on key arrays).
RANDOM18_GOLDEN = tests/golden/random18_counts.jxr tests/golden/random18_keys.jxr
GOLDEN_TESTS += $(RANDOM18_GOLDEN)
EXTRA_DIST += tests/golden/random18.mk $(RANDOM18_GOLDEN) $(RANDOM18_GOLDEN:.jxr=.out)
