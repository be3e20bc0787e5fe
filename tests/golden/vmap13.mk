## vmap13.mk: build fragment, included by tests/golden/golden.mk: op names
## with JAX's name-stack transforms, jvp(...), transpose(...) and vmap(...)
## (issue 16 part 4; ir/name_stack.h), and the vmap leftovers of issue 13.
VMAP13_GOLDEN = tests/golden/name_stack16.jxr tests/golden/vmap13_while.jxr tests/golden/vmap13_custom.jxr \
	tests/golden/vmap13_shard_map.jxr
GOLDEN_TESTS += $(VMAP13_GOLDEN)
EXTRA_DIST += tests/golden/vmap13.mk
