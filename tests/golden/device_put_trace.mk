## device_put_trace.mk: build fragment, included by tests/golden/golden.mk
## jax.device_put under a trace: the device_put primitive (issue 15).
DEVICE_PUT_TRACE_GOLDEN = \
	tests/golden/device_put_trace.jxr
TESTS += $(DEVICE_PUT_TRACE_GOLDEN)
EXTRA_DIST += $(DEVICE_PUT_TRACE_GOLDEN) $(DEVICE_PUT_TRACE_GOLDEN:.jxr=.out)
