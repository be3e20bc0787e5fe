## cust28.mk: JAX's tests/custom_api_test.py (CustomJVPTest, CustomVJPTest,
## CustomVmapTest, CustomApiTest) as shardrepl programs, included by golden.mk
## Skipped: test_concurrent_initial_style's threads (its computation is in
## cust28_jvp2); test_nondiff_arg_jit_tracer, test_vmap_axes, test_pmap
## (skipped in JAX too); test_maybe_perturbed_* and test_dce (custom_derivatives._maybe_perturbed,
## closure_convert internals, pe.dce_jaxpr: JAX internals).
GOLDEN_TESTS += \
	tests/golden/cust28_jvp1.jxr \
	tests/golden/cust28_jvp2.jxr \
	tests/golden/cust28_jvp3.jxr \
	tests/golden/cust28_vjp1.jxr \
	tests/golden/cust28_vjp2.jxr \
	tests/golden/cust28_vjp3.jxr \
	tests/golden/cust28_vjp4.jxr \
	tests/golden/cust28_vjp5.jxr \
	tests/golden/cust28_vmap.jxr \
	tests/golden/cust28_api.jxr
