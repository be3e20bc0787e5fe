## dbg32.mk: JAX's tests/debug_info_test.py class DebugInfoTest as
## shardrepl programs (the DebugInfo of traced functions: api_util.debug_info
## and its arg_names, the debug_info of the jaxprs of jit, make_jaxpr, cond,
## switch, while_loop, scan, fori_loop, jax.remat, shard_map, custom_jvp,
## custom_vmap and custom_root, through jvp, grad, vjp and vmap; the
## tracers' _debug_info and the errors naming arguments), included by
## golden.mk.  JAX marks the
## class @unittest.skip("WIP"): each line was checked against api_util.py,
## linear_util.DebugInfo, partial_eval._origin_msg and the transformations'
## with_unknown_names, not the test's expectations alone.
## Not ported: the StableHLO loc() names and jax.result_info
## (expected_lowering_lines: XLA text), pallas_call and
## checkify_pallas_call (Pallas kernels), pmap (pmap_*, jvp_pmap*,
## checkify_pmap_basic: their call_wrapped internals), tests JAX skips
## itself (vjp_of_jit, vjp_of_nested_jit, vjp_remat, hessian,
## cache_miss_explanations_unpacks_transforms, jvp_pmap_eager).  Not yet:
## custom_vjp (test_custom_vjp, _nondiff_args: its fun's jaxpr and tracers
## with names None under grad, fwd and bwd on the outer trace),
## custom_jvp's nondiff_args (its rule calls a closure over the jvp's
## tracer, which here escapes), linear_call and lax.composite (not in
## shardrepl), custom_linear_solve_complex (its jaxprs are jnp / jsp
## internals), explain_cache_misses' logging (assertLogs:
## cache_miss_explanations_new_function_in_loop); in
## pending/dbg32_pending.jxr: custom_jvp's rule tracers, remat of
## shard_map, saved_residuals' checkpoint_name.
GOLDEN_TESTS += \
	tests/golden/dbg32_api_util.jxr \
	tests/golden/dbg32_concrete.jxr \
	tests/golden/dbg32_control.jxr \
	tests/golden/dbg32_custom.jxr \
	tests/golden/dbg32_jit.jxr \
	tests/golden/dbg32_transforms.jxr
## what JAX's tests assert that shardrepl does not do yet (golden-pending)
GOLDEN_PENDING += \
	tests/golden/pending/dbg32_pending.jxr
