## jnp15.mk: issue 15's jax.numpy breadth (sorting, statistics, shapes,
## helpers): its golden scripts and its numpy oracle (included from
## golden.mk).
JNP15_GOLDEN = tests/golden/jnp_sort.jxr tests/golden/jnp_stats.jxr tests/golden/jnp_shape.jxr \
	tests/golden/jnp_misc.jxr
GOLDEN_TESTS += $(JNP15_GOLDEN)
TESTS += tests/jnp_numpy.sh
EXTRA_DIST += tests/jnp_numpy.sh tests/jnp_numpy.py tests/golden/jnp15.mk
## jnp15b: the diagonals (numpy_linalg.c)
JNP15B_GOLDEN = tests/golden/jnp_linalg.jxr
GOLDEN_TESTS += $(JNP15B_GOLDEN)
