## misc16.mk: wave 7's misc16 (jnp.vectorize, lax.associative_scan,
## jax.custom_gradient, tree_util leftovers, small jnp functions),
## included from golden.mk.
MISC16_GOLDEN = tests/golden/misc16_vectorize.jxr tests/golden/misc16_assoc_scan.jxr \
	tests/golden/misc16_custom_gradient.jxr tests/golden/misc16_tree.jxr \
	tests/golden/misc16_small.jxr
GOLDEN_TESTS += $(MISC16_GOLDEN)
EXTRA_DIST += tests/golden/misc16.mk
