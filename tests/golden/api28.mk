## api28.mk: JAX's tests/api_test.py (APITest, its second quarter) checked
## as shardrepl programs, included by golden.mk
GOLDEN_TESTS += \
	tests/golden/api28_errors.jxr \
	tests/golden/api28_device_put.jxr \
	tests/golden/api28_jac.jxr \
	tests/golden/api28_eval_shape.jxr \
	tests/golden/api28_vmap.jxr
