## shard15a.mk: build fragment, included by tests/golden/golden.mk
## Sharding semantics with no mesh in context (issue 15, items 1-5):
## autodiff over a value's own mesh, shard_map over an Auto mesh,
## with_sharding_constraint, the *_like functions, jit's types and result
## shardings.
SHARD15A_GOLDEN = \
	tests/golden/shard15a_grad_nomesh.jxr \
	tests/golden/shard15a_wsc_nomesh.jxr \
	tests/golden/shard15a_like_nomesh.jxr \
	tests/golden/shard15a_jit_mesh.jxr \
	tests/golden/shard15a_smap_auto.jxr
TESTS += $(SHARD15A_GOLDEN)
EXTRA_DIST += $(SHARD15A_GOLDEN) $(SHARD15A_GOLDEN:.jxr=.out)
