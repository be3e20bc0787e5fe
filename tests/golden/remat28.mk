## remat28.mk: JAX's tests/api_test.py from RematTest on (RematTest,
## Remat3Test, JaxprTest, NamedCallTest) as shardrepl programs: checkpoint
## values and derivatives, the trace cache, nested checkpoints and jits,
## policies through the linear jaxpr, custom_jvp/custom_vjp inside, control
## flow, printed jaxprs, named_call.  Included by golden.mk.
## Skipped: tests that swap primitives' impl rules or define primitives
## (core.Primitive, ad.primitive_jvps: test_remat_basic's call counts,
## no_redundant_flops, eval_counter, recursive_checkpoint_recompute_counts,
## the vmap constant-introducing primitive), HLO text (no_cse_widget_*),
## compile/lowering cache counts (linearize/vjp/fwd_caching), offloading
## to host memory (remat_offload_*), logging (remat_residual_logging),
## DCETest (pe.dce_jaxpr, internal), InputSavedVJPTest (f_vjp.args_res,
## internal), EvalJaxprPrimitiveTest (core.eval_jaxpr_p), make_jaxpr's
## axis_env, BufferDonation/Backends/Cleanup/EnvironmentInfo/Autodidax/
## GarbageCollection/OverrideLowering/Traceback tests (backend, process
## and traceback-frame details).
GOLDEN_TESTS += \
	tests/golden/remat28_basic.jxr \
	tests/golden/remat28_policies.jxr \
	tests/golden/remat28_control.jxr \
	tests/golden/remat28_jaxpr.jxr
GOLDEN_PENDING += \
	tests/golden/pending/remat28_pending.jxr
