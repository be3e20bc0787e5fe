## einsum15.mk: issue 15's general jnp.einsum: its golden script
## (included from golden.mk; its values are cases of tests/jnp_numpy.py).
EINSUM15_GOLDEN = tests/golden/einsum.jxr
GOLDEN_TESTS += $(EINSUM15_GOLDEN)
EXTRA_DIST += tests/golden/einsum15.mk
