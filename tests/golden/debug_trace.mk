## debug_trace.mk: build fragment, included by tests/golden/golden.mk
## jax.debug.print / callback / inspect_array_sharding under traces (issue 15).
DEBUG_TRACE_GOLDEN = \
	tests/golden/debug_trace.jxr
TESTS += $(DEBUG_TRACE_GOLDEN)
EXTRA_DIST += $(DEBUG_TRACE_GOLDEN) $(DEBUG_TRACE_GOLDEN:.jxr=.out)
