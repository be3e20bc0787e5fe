## ref32.mk: JAX's tests/mutable_array_test.py (MutableArrayTest and
## MutableArrayErrorsTest: Refs made with jax.new_ref, read and written
## eagerly, under jit, in scan, while and cond, differentiated, vmapped,
## and the errors of jax_mutable_array_checks) as shardrepl programs,
## and the tests of tests/state_test.py that use the public API
## (test_vmap_of_get_regression, and StateControlFlowTest's views of Refs,
## x_ref.at[...], in scan, while_loop, remat, cond and jit bodies; the rest
## of that file tests the internal discharge_state, run_state and
## trace_to_jaxpr, and its shard_map variants, test_no_transformed_ref_in's
## error and test_transformed_ref_in_jit_simple's printed jaxpr are not
## here), included by golden.mk.
## Not ported: the tests of internals
## (state_discharge.discharge_state, mlir.lower_fun, the HLO text of
## test_can_dce_internal_ref_effect, core.Primitive, the discharge_state
## parts of the custom_vmap and optimization_barrier tests), the jaxpr text of test_slicing_with_vjp3 (with_refs
## adds the cotangents after the backward pass, not in it), and
## test_none_index (skipped in JAX).
GOLDEN_TESTS += \
	tests/golden/ref32_basics.jxr \
	tests/golden/ref32_ad.jxr \
	tests/golden/ref32_errors.jxr \
	tests/golden/ref32_more.jxr \
	tests/golden/ref32_sharded.jxr
## what JAX's tests assert that shardrepl does not do yet (golden-pending)
GOLDEN_PENDING += \
	tests/golden/pending/ref32_pending.jxr
