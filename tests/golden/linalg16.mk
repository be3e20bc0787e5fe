## linalg16.mk: build fragment, included by tests/golden/golden.mk: the
## linear algebra of issue 16 (lib/lax/linalg16.c's cholesky, lu, eigh and
## lu_pivots_to_permutation through LAPACK, lib/jax/linalg16.c's jnp.linalg
## and jax.scipy.linalg functions): the printed jaxprs and errors, the
## JVP/transpose checks, and the values against numpy's and scipy's linalg
## (linalg16_oracle.sh).
LINALG16_GOLDEN = tests/golden/linalg16_jaxpr.jxr tests/golden/linalg16_gradcheck.jxr tests/golden/linalg16_sharding.jxr
GOLDEN_TESTS += $(LINALG16_GOLDEN)
TESTS += tests/linalg16_oracle.sh
EXTRA_DIST += tests/golden/linalg16.mk tests/linalg16_oracle.sh tests/linalg16_values.jxr tests/linalg16_values.py
