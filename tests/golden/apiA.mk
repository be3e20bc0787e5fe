## apiA.mk: issue 15's elementwise and mathematical functions of jax.lax,
## jax.numpy, jax.scipy.special and jax.nn (lax_math.c, numpy_math.c,
## scipy_special_more.c, nn_more.c); included from golden.mk.
APIA_GOLDEN = tests/golden/apiA_lax.jxr tests/golden/apiA_numpy.jxr tests/golden/apiA_reductions.jxr tests/golden/apiA_nn.jxr tests/golden/apiA_scipy.jxr
GOLDEN_TESTS += $(APIA_GOLDEN)
EXTRA_DIST += tests/golden/apiA.mk
