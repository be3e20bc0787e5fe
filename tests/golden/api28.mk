## api28.mk: JAX's tests/api_test.py (APITest, lines 1580-3800: grad, jvp,
## vjp, jacobians, linear_transpose, device_put and device_get, eval_shape
## and ShapeDtypeStruct, dtypes, vmap's errors) checked as shardrepl
## programs, included by golden.mk.  Skipped there: test_unimplemented_
## interpreter_rules and test_wrong_output_abstract_eval (user-defined
## core.Primitive with def_impl/def_abstract_eval and the internal ad.defjvp);
## test_internal_
## device_put_with_device, test_internal_device_put_assembled,
## test_eval_shape_trace_cache_share, test_pmap_global_cache's counts,
## test_jit_compilation_time_logging, test_grad_of_jit_compilation_caching2
## (compile and dispatch counters, logs); test_device_put_literals and
## test_std_basis (jax._src internals); test_device_put_across_platforms
## (GPU/TPU only); test_devicearray_weakref_friendly (no weakref module);
## test_shape_dtype_struct_non_jax_dtypes and test_grad_object_array_error
## (numpy bytes_ and object dtypes); test_eval_shape_duck_typing2 (a dict
## subclass); test_lax_logistic, test_compiler_ir, test_nested_jit_hoisting
## (lowered HLO/MLIR text).
GOLDEN_TESTS += \
	tests/golden/api28_errors.jxr \
	tests/golden/api28_device_put.jxr \
	tests/golden/api28_jac.jxr \
	tests/golden/api28_eval_shape.jxr \
	tests/golden/api28_vmap.jxr
