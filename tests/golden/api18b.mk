## api18b.mk: the jax.lax and jax.numpy names of JAX 0.11 added in issue
## api18b (lax.reduce's general path, lax.empty, ...); included from
## golden.mk.
API18B_GOLDEN = tests/golden/api18b_reduce.jxr tests/golden/api18b_numpy.jxr
GOLDEN_TESTS += $(API18B_GOLDEN)
EXTRA_DIST += tests/golden/api18b.mk
