## api29.mk: JAX's tests/api_test.py (APITest, its lines 3800-5951) as
## shardrepl programs: escaped tracers in JAX's words, the leak checker,
## __jax_array__ duck arrays, default_matmul_precision, linearize, lax.empty,
## jits of empty and forwarded outputs, scalar conversion errors; included by
## golden.mk.
## Skipped: test_primitive_compilation_cache, test_vmap_caching,
## test_clear_cache and the test_cache_miss_explanations_* (compile-cache
## counts and logging); test_xla_constant_dedup, test_inline_optimized_hlo,
## test_lowering_platform_aot (HLO text, lowering); test_pmap_static_kwarg_*
## and test_leak_checker_catches_a_pmap_leak (pmap's static arguments);
## test_grad_of_token_consuming_primitive, test_deferred_primal_*,
## test_structured_residuals_* (core.Primitive and ad internals);
## test_leak_checker_reports_frame_locals, test_why_alive_*,
## test_leak_checker_reference_chain (gc referrer chains);
## test_default_device (not on CPU), test_asarray_no_copy_np,
## test_jit_boundmethod_reference_cycle, test_backward_pass_ref_dropping
## (weakrefs and memory sharing); test_cache_miss_explanations_are_thread_safe
## (threads); test_large_python_ints (shardrepl's Python ints are 64-bit).
GOLDEN_TESTS += \
	tests/golden/api29_tracers.jxr \
	tests/golden/api29_leaks.jxr \
	tests/golden/api29_misc.jxr \
	tests/golden/api29_errors.jxr \
	tests/golden/api29_more.jxr
## what JAX's tests assert that shardrepl does not do yet (golden-pending)
GOLDEN_PENDING += \
	tests/golden/pending/api29_leak_cycle.jxr \
	tests/golden/pending/api29_jvp_asarray.jxr
EXTRA_DIST += tests/golden/api29.mk
