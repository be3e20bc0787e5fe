## lad30.mk: JAX's tests/lax_autodiff_test.py as golden tests (JVP/VJP
## of lax ops checked with jax.test_util.check_grads), included by
## golden.mk.
GOLDEN_TESTS += \
	tests/golden/lad30_ops.jxr \
	tests/golden/lad30_struct.jxr \
	tests/golden/lad30_reduce.jxr \
	tests/golden/lad30_gather.jxr \
	tests/golden/lad30_check_grads.jxr
EXTRA_DIST += tests/golden/lad30.mk
