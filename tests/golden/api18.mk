## api18.mk: the jax.numpy and jax.lax names of JAX 0.11 added in issue
## api18 (lax_precision.c, lax_small18.c, numpy_grid18.c,
## numpy_small18.c); included from golden.mk.
API18_GOLDEN = tests/golden/api18_lax.jxr tests/golden/api18_grid.jxr tests/golden/api18_numpy.jxr
GOLDEN_TESTS += $(API18_GOLDEN)
EXTRA_DIST += tests/golden/api18.mk
