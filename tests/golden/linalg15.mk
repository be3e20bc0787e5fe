## linalg15.mk: build fragment, included by tests/golden/golden.mk: issue
## 15's linear algebra (lib/lax/linalg.c's qr and svd through LAPACK,
## lib/jax/lax_linalg.c): the printed jaxprs and errors, the values against
## numpy's linalg (linalg15_oracle.sh), einsum's out_sharding over several
## contractions (linalg15_einsum), and the JVP/transpose checks of the
## newer jnp functions over shardings (run under MPI by tests/mpi/golden.sh
## like every golden script).
LINALG15_GOLDEN = tests/golden/linalg15_jaxpr.jxr tests/golden/linalg15_gradcheck.jxr tests/golden/linalg15_einsum.jxr
GOLDEN_TESTS += $(LINALG15_GOLDEN)
TESTS += tests/linalg15_oracle.sh
EXTRA_DIST += tests/golden/linalg15.mk tests/linalg15_oracle.sh tests/linalg15_values.jxr tests/linalg15_values.py
