## remat28.mk: JAX's tests/api_test.py from RematTest on (RematTest,
## Remat3Test, JaxprTest, NamedCallTest, InputSavedVJPTest) as shardrepl
## programs: checkpoint
## values and derivatives, the trace cache, nested checkpoints and jits,
## policies through the linear jaxpr (jits, conds and scans in the body
## split by them), custom_jvp/custom_vjp inside, printed jaxprs,
## named_call, make_jaxpr's axis_env.  Included by golden.mk.
## Skipped: tests that swap primitives' impl rules or define primitives
## (core.Primitive, ad.primitive_jvps: test_remat_basic's call counts,
## no_redundant_flops, eval_counter, recursive_checkpoint_recompute_counts,
## the vmap constant-introducing primitive), HLO text (no_cse_widget_*,
## the optimization_barrier regexes), compile/lowering cache counts
## (linearize/vjp/fwd_caching), offloading to host memory
## (remat_offload_*), logging (remat_residual_logging), jax.ref
## (grad_accum_refs),
## Jaxpr.pretty_print(name_stack=True) (name_stack_annotation), the
## unittest.skip'd static-argnums tests, remat3 internals
## (remat_output_to_residual_forwarding's remat_jaxpr, ad_checkpoint.dce,
## remat_eqn_dce, lower_jaxpr2), DCETest (pe.dce_jaxpr),
## test_basic_opaque{,_cond}_vjp3 (a scalar residual is a literal of the
## linear jaxpr here, not an opaque residual), EvalJaxprPrimitiveTest
## (core.eval_jaxpr_p),
## BufferDonation/Backends/Cleanup/EnvironmentInfo/Autodidax/
## GarbageCollection/OverrideLowering/Traceback tests (backend, process
## and traceback-frame details), test_abstract_inputs' SimpleNamespace
## (no types module; a ShapeDtypeStruct instead).
GOLDEN_TESTS += \
	tests/golden/remat28_basic.jxr \
	tests/golden/remat28_policies.jxr \
	tests/golden/remat28_control.jxr \
	tests/golden/remat28_jaxpr.jxr \
	tests/golden/remat28_vjp.jxr
