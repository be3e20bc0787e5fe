## remat_policies.mk: build fragment, included by tests/golden/golden.mk
## jax.checkpoint_policies and checkpoint_name (issue 15).
REMAT_POLICIES_GOLDEN = \
	tests/golden/remat_policies.jxr
TESTS += $(REMAT_POLICIES_GOLDEN)
EXTRA_DIST += $(REMAT_POLICIES_GOLDEN) $(REMAT_POLICIES_GOLDEN:.jxr=.out)
