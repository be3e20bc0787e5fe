## index15.mk: build fragment, included by golden.mk: the tests of
## jax.numpy's indexing by gather and scatter (issue 15, lib/jax/numpy_index.c)
INDEX15_GOLDEN = tests/golden/index15_gather.jxr tests/golden/index15_grad.jxr
GOLDEN_TESTS += $(INDEX15_GOLDEN)
## their values against numpy's
TESTS += tests/index15_numpy.sh
EXTRA_DIST += tests/golden/index15.mk tests/index15_numpy.sh tests/index15_values.jxr tests/index15_values.py
