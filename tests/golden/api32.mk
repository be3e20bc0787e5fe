## api32.mk: JAX's tests/api_test.py, the tests the earlier ports (jit28,
## api28, api29, remat15, ...) left, as shardrepl programs: APITest's,
## JitTest's, RematTest's, Remat3Test's, CleanupTest's, DCETest's,
## EvalJaxprPrimitiveTest's, BufferDonationTest's (api32_misc,
## api32_remat, api32_dce); included by golden.mk.
## Pending (pending/api32_pending.jxr, with JAX's output): tokens
## (test_jit_returning_token, test_jit_capturing_token), float8/float4
## arithmetic (test_jit_custom_floats' other dtypes), lax.dce_sink (an
## effect: helper hF's area), use_simplified_jaxpr_constants
## (test_non_scalar_const), scalar residuals as opaque residuals
## (InputSavedVJPTest), memory offloading policies
## (test_remat_offload_*_jaxpr), pretty_print(name_stack=True)
## (test_name_stack_annotation), user-defined primitives (core.Primitive,
## def_impl, ad.defjvp: test_unimplemented_interpreter_rules,
## test_remat_eval_counter, test_remat_recursive_checkpoint_recompute_counts,
## test_remat_no_redundant_flops).
## Not ported: XLA, HLO and compile internals (as_text and compiler_ir
## text, cost and memory analysis, kept_var_idx, compiler_options' XLA
## flags, the lowering and compile counts of test_*_caching and
## test_internal_device_put_with_device, test_no_cse_widget_*'s and the
## prevent_cse tests' HLO text, OverrideLoweringTest's lowering rules);
## GPU/TPU and backends (test_explicit_backend,
## test_device_to_device_copy_between_backends,
## test_mismatched_nested_backends, BackendsTest); the Python and jaxlib
## environment (EnvironmentInfoTest, AutodidaxTest, GarbageCollectionTest's
## gc and weakrefs, test_jit_of_nonweakreferenceable_function,
## test_why_alive_*'s referrer chains, TracebackTest's frame depths, which
## count JAX's own Python frames, test_jit_masked_array's numpy.ma); JAX
## internals that are not API (api_util.resolve_argnums and
## infer_argnums_and_argnames, pe.close_jaxpr, token._buf;
## ad_internal.primitive_linearizations with mlir.register_lowering and
## config.use_direct_linearize: test_deferred_primal_with_direct_linearize,
## test_structured_residuals_*; Remat3Test's remat3 internals:
## remat_internal.remat_jaxpr, ad_checkpoint.dce, pe.lower_jaxpr2,
## call_hi_primitive, .lojax, config.custom_vjp3,
## remat_barrier_no_cotangents); the tests JAX itself skips (unittest.skip
## or an empty body: test_escaped_tracers_tracer_from_higher_level,
## test_leak_checker_catches_a_grad_leak,
## test_inner_jit_forwarded_consts_stay_const,
## test_remat_grad_python_control_flow_unhashable_static_argnums,
## test_remat_custom_policy_save_anything_new_remat,
## test_cache_miss_explanations_* of the old explainer); the
## test_cache_miss_explanations_* that run (config.explain_cache_misses
## logs through the logging module, which shardrepl does not have);
## refs (jax.new_ref: test_vjp3_dont_want*, test_vjp3_with_refs_*,
## test_vjp3_ref_arg_needs_with_refs_errors, test_grad_wrt_ref_arg_error,
## test_remat_grad_accum_refs: helper hE's refs area).
GOLDEN_TESTS += \
	tests/golden/api32_misc.jxr \
	tests/golden/api32_remat.jxr \
	tests/golden/api32_dce.jxr
## what JAX's tests assert that shardrepl does not do yet (golden-pending)
GOLDEN_PENDING += \
	tests/golden/pending/api32_pending.jxr
EXTRA_DIST += tests/golden/api32.mk
