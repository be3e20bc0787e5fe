## pjit30.mk: JAX's tests/pjit_test.py classes PJitTest and PJitErrorTest
## as shardrepl programs (pjit over the resource env of `with mesh:`,
## in_shardings / out_shardings, donation, the lower / compile stages,
## with_sharding_constraint, and the errors pjit raises), included by
## golden.mk.  Not ported: XLA's text, IR and analyses (as_text,
## compiler_ir, cost_analysis, memory_analysis, runtime_executable, the
## HLO shardings' tile assignments; the jaxprs stand for them), TPU-only
## tests (testBufferDonationWithOutputShardingInferenceAndTokens), threads
## (testMeshHashRace, test_concurrent_pjit), jax_enable_custom_prng's rbg
## keys (testWithCustomPRNGKey), the C++ dispatch cache counters
## (count_pjit_cpp_cache_miss, count_jit_tracing_cache_miss), the HTML
## output format of pretty_print (test_pretty_print_html).
GOLDEN_TESTS += \
	tests/golden/pjit30_basic.jxr \
	tests/golden/pjit30_donate.jxr \
	tests/golden/pjit30_errors.jxr \
	tests/golden/pjit30_trace.jxr \
	tests/golden/pjit30_stages.jxr \
	tests/golden/pjit30_pprint.jxr
