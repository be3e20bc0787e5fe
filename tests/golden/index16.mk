## index16.mk: build fragment, included by golden.mk: .at[].apply, lax's
## public gather/scatter API, nan-quantiles, reductions' initial=/where=,
## einsum's interleaved form, partition (lib/jax/lax_scatter.c, ...)
INDEX16_GOLDEN = tests/golden/index16_apply.jxr tests/golden/index16_lax.jxr \
	tests/golden/index16_stack.jxr tests/golden/index16_reduce.jxr \
	tests/golden/index16_misc.jxr
GOLDEN_TESTS += $(INDEX16_GOLDEN)
## their values against numpy's
TESTS += tests/index16_numpy.sh
EXTRA_DIST += tests/golden/index16.mk tests/index16_numpy.sh tests/index16_values.jxr tests/index16_values.py
