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
BATCH_GOLDEN_STRUCT = \
	tests/golden/vmap_struct.jxr \
	tests/golden/vmap_struct_jaxpr.jxr
BATCH_GOLDEN_CONTROL = \
	tests/golden/vmap_control.jxr \
	tests/golden/vmap_control_jaxprs.jxr \
	tests/golden/vmap_compose.jxr
BATCH_GOLDEN_MANUAL = \
	tests/golden/vmap_manual.jxr \
	tests/golden/vmap_manual_casts.jxr \
	tests/golden/vmap_manual_shard_map.jxr \
	tests/golden/vmap_sharding.jxr \
	tests/golden/vmap_random.jxr \
	tests/golden/vmap_random_normal.jxr
BATCH_GOLDEN_BUILT = \
	tests/golden/vmap_jac.jxr tests/golden/vmap_api_built.jxr tests/golden/vmap_cmd.jxr \
	tests/golden/vmap_api_errors.jxr tests/golden/vmap_api_pmap.jxr tests/golden/vmap_jac_sharded.jxr \
	tests/golden/vmap_jac_rules.jxr
TESTS += $(BATCH_GOLDEN)
EXTRA_DIST += $(BATCH_GOLDEN) $(BATCH_GOLDEN:.jxr=.out) tests/golden/vmap_lib.py

## `make bench` also times batching (bench/bench_vmap): a generated jaxpr
## of 10,000 and of 100,000 elementwise equations batched over 64, and
## jax.vmap(f) run over a batch of 64 against the hand-batched jaxpr; see
## bench/README.md.
EXTRA_PROGRAMS += bench/bench_vmap
bench_bench_vmap_SOURCES = bench/bench_vmap.c
bench_bench_vmap_LDADD = $(SR_LIBS)
bench: bench-vmap
bench-vmap: bench/bench_vmap$(EXEEXT)
	bench/bench_vmap -n 3 1667 16667
.PHONY: bench-vmap
clean-local: bench-vmap-clean
bench-vmap-clean:
	-rm -f bench/bench_vmap$(EXEEXT)
.PHONY: bench-vmap-clean
