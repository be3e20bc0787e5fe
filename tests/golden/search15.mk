## search15.mk: build fragment, included by tests/golden/golden.mk: the
## tests of issue 15's searchsorted family (lib/jax/numpy_searchsorted.c):
## jnp.searchsorted with its four methods and jnp.digitize, their jaxprs
## (read off jax/_src/numpy/hijax.py and lax_numpy.py), the total-order
## primitives eq_to, le_to, lt_to, and their values against numpy
## (search15_oracle.sh).
SEARCH15_GOLDEN = tests/golden/search15_searchsorted.jxr tests/golden/search15_interp.jxr tests/golden/search15_unique.jxr tests/golden/search15_cumlogsumexp.jxr tests/golden/search15_bool_index.jxr tests/golden/search15_polygamma.jxr tests/golden/search15_random_high.jxr
GOLDEN_TESTS += $(SEARCH15_GOLDEN)
TESTS += tests/search15_oracle.sh
EXTRA_DIST += tests/golden/search15.mk tests/search15_oracle.sh tests/search15_values.jxr tests/search15_values.py
