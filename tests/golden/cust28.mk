## cust28.mk: JAX's tests/custom_api_test.py (CustomJVPTest, CustomVJPTest,
## CustomVmapTest, CustomApiTest) as shardrepl programs, included by golden.mk
## Skipped: test_concurrent_initial_style's threads (its computation is in
## cust28_jvp2); test_nondiff_arg_jit_tracer, test_closed_over_jit_tracer,
## test_vmap_axes, test_pmap (skipped in JAX too); test_maybe_perturbed_*,
## test_dce, test_custom_lin_pretty_print, test_optimize_remat* but two
## (custom_derivatives._maybe_perturbed, optimize_remat_of_custom_vjp_fwd,
## pe.dce_jaxpr: JAX internals); test_bwd_rule_shape_mismatch_disable
## (config.disable_bwd_checks); CustomVJP3Test, CustomJVP3Test and the
## Remat3 classes (the same tests under the non-default jax_custom_vjp3,
## jax_custom_jvp3 and jax_remat3 configurations); jtu.check_grads calls
## (their gradients are compared with the reference function's instead).
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
## Pending: the backward-pass logs (custom_gradient(with_logs=True),
## defvjp_with_logs, a VJP's .with_logs).
GOLDEN_PENDING += \
	tests/golden/pending/cust28_with_logs.jxr
