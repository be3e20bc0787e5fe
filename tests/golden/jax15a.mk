## jax15a.mk: build fragment, included by tests/golden/golden.mk: the
## tests of issue 15's remaining jax.random functions (randint, bernoulli,
## rademacher, gumbel, permutation, categorical, choice; lib/jax/random_more.c),
## their values against numpy on a pure-Python threefry
## (random15_more_oracle.sh); the JVPs of cumprod, cummax and cummin
## (lib/lax/cumred.c); jnp.finfo, jnp.iinfo and x.at[].divide/power against
## numpy (jnp15a_oracle.sh).
JAX15A_GOLDEN = tests/golden/random15_more.jxr tests/golden/cumred_jvp.jxr tests/golden/jnp15a.jxr tests/golden/einsum_paths.jxr \
	tests/golden/jnp15a_one_hot.jxr
GOLDEN_TESTS += $(JAX15A_GOLDEN)
TESTS += tests/random15_more_oracle.sh tests/jnp15a_oracle.sh
EXTRA_DIST += tests/golden/jax15a.mk tests/random15_more_oracle.sh tests/random15_more.jxr tests/random15_more.py \
	tests/jnp15a_oracle.sh tests/jnp15a_values.jxr tests/jnp15a_values.py
