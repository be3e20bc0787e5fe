## apiD.mk: issue 15's jnp append, select, compress, extract ... (included
## from golden.mk); expected values are JAX's docstring examples and numpy.
APID_GOLDEN = tests/golden/apiD_select.jxr tests/golden/apiD_delete.jxr \
	tests/golden/apiD_choose.jxr tests/golden/apiD_poly.jxr \
	tests/golden/apiD_shape.jxr tests/golden/apiD_insert.jxr \
	tests/golden/apiD_put.jxr tests/golden/apiD_trim.jxr \
	tests/golden/apiD_piecewise.jxr
GOLDEN_TESTS += $(APID_GOLDEN)
EXTRA_DIST += tests/golden/apiD.mk
