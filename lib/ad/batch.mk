## batch.mk: build fragment, included by Makefile.am
## vmap (lib/ad/batch.c, the batching engine; the rules in lib/lax/'s
## family files; jax.vmap in lib/jax/vmap.c).  Each family's golden
## scripts have a list of their own.
BATCH_GOLDEN = \
	tests/golden/vmap_api.jxr \
	$(BATCH_GOLDEN_EW) $(BATCH_GOLDEN_STRUCT) $(BATCH_GOLDEN_CONTROL) \
	$(BATCH_GOLDEN_MANUAL) $(BATCH_GOLDEN_BUILT)
BATCH_GOLDEN_EW = \
	tests/golden/vmap_ew.jxr \
	tests/golden/vmap_ew_sharded.jxr \
	tests/golden/vmap_reduce.jxr \
	tests/golden/vmap_dot.jxr \
	tests/golden/vmap_ew_jaxpr.jxr \
	tests/golden/vmap_reduce_jaxpr.jxr \
	tests/golden/vmap_dot_jaxpr.jxr
BATCH_GOLDEN_STRUCT =
BATCH_GOLDEN_CONTROL =
BATCH_GOLDEN_MANUAL =
BATCH_GOLDEN_BUILT = \
	tests/golden/vmap_jac.jxr tests/golden/vmap_api_built.jxr tests/golden/vmap_cmd.jxr \
	tests/golden/vmap_api_errors.jxr
TESTS += $(BATCH_GOLDEN)
EXTRA_DIST += $(BATCH_GOLDEN) $(BATCH_GOLDEN:.jxr=.out) tests/golden/vmap_lib.py
