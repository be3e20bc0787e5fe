## experimental_api.mk: build fragment, included by tests/golden/golden.mk
## jax.experimental's shard_map(check_rep=), pjit, mesh_utils (issue 15).
EXPERIMENTAL_API_GOLDEN = \
	tests/golden/experimental_api.jxr
TESTS += $(EXPERIMENTAL_API_GOLDEN)
EXTRA_DIST += $(EXPERIMENTAL_API_GOLDEN) $(EXPERIMENTAL_API_GOLDEN:.jxr=.out)
