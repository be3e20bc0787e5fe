## remat15.mk: build fragment, included by tests/golden/golden.mk
## jax.checkpoint's policies under linearize/vjp/grad, saved_residuals (issue 15).
REMAT15_GOLDEN = \
	tests/golden/remat15_policies.jxr \
	tests/golden/remat15_saved.jxr \
	tests/golden/remat15_custom.jxr \
	tests/golden/remat15_sharded.jxr
TESTS += $(REMAT15_GOLDEN)
EXTRA_DIST += $(REMAT15_GOLDEN) $(REMAT15_GOLDEN:.jxr=.out)
