## apiB.mk: issue 15's windowed operations (included from golden.mk):
## lax.conv_general_dilated and its wrappers, lax.reduce_window and the
## pools it makes, their jaxprs, gradients (:gradcheck) and sharded
## batches; apiB_oracle.sh compares apiB_values.jxr with numpy.
APIB_GOLDEN = tests/golden/apiB_conv.jxr tests/golden/apiB_window.jxr \
	tests/golden/apiB_conv_sharded.jxr tests/golden/apiB_values.jxr \
	tests/golden/apiB_numpy.jxr tests/golden/apiB_prims.jxr tests/golden/apiB_numpy2.jxr
GOLDEN_TESTS += $(APIB_GOLDEN)
TESTS += tests/golden/apiB_oracle.sh
EXTRA_DIST += tests/golden/apiB.mk tests/golden/apiB_oracle.sh tests/golden/apiB_values_oracle.py
