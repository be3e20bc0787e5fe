## cb32.mk: JAX's tests/python_callback_test.py as shardrepl programs
## (jax.pure_callback and jax.experimental.io_callback: results checked
## against result_shape_dtypes, every dtype, errors, control flow, vmap by
## vmap_method, pmap, sharded jits and shard_map, ordered calls), and what
## tests/jaxpr_effects_test.py asserts of public behaviour (callbacks'
## effects through jit, cond, while and scan), included by golden.mk.
## Not ported: the log records of a failing callback (assertLogs:
## "jax.pure_callback failed" and its traceback), compile and cache-miss
## counts (count_primitive_compiles, count_pjit_cpp_cache_miss), the HLO
## text's maximal shardings (as_text), test_async_deadlock (skipped in
## JAX), test_create_hlo_output_callback (xla_client), the TPU/GPU-only
## and multi-process cases; of jaxpr_effects_test.py the tests that define
## their own primitives and effects (core.Primitive, effects.Effect,
## mlir lowering rules, TokenSet: JAX internals; where the effect is
## one a callback has, cb32_effects.jxr ports them with io_callback).
## cb32_pjit.jxr: pjit_test.py's io_callback cases; cb32_tokens.jxr: tokens
## through jit (api_test.py's and pjit_test.py's, from their pending files).
## Pending
## (pending/cb32_pending.jxr): float4_e2m1fn arrays (no iota of it).
GOLDEN_TESTS += \
	tests/golden/cb32_basic.jxr \
	tests/golden/cb32_pure.jxr \
	tests/golden/cb32_io.jxr \
	tests/golden/cb32_pmap.jxr \
	tests/golden/cb32_effects.jxr \
	tests/golden/cb32_pjit.jxr \
	tests/golden/cb32_tokens.jxr
## what JAX's tests assert that shardrepl does not do yet (golden-pending)
GOLDEN_PENDING += \
	tests/golden/pending/cb32_pending.jxr
