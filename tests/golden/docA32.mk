## docA32.mk: JAX 0.11's documentation pages docs/new_docs/201/shard-map.md
## (basics, collectives, matmul examples, neural networks), placement.md,
## jit.md, control-flow.md and aot.md as shardrepl programs, cell by cell
## (aot.md's doctests), included by golden.mk.  The pages store no outputs:
## each .out is what the prose, the code comments, the asserts and JAX's
## source say JAX prints, values checked with numpy.  Not ported: IPython's
## %xmode, %timeit and %time (timings), StableHLO text (lowered.as_text()),
## XLA's cost_analysis and memory_analysis numbers, and jit.md's refs cell
## (refs: helper hE's; in golden-pending, its buffer addresses compared).
GOLDEN_TESTS += \
	tests/golden/docA32_shardmap_basics.jxr \
	tests/golden/docA32_shardmap_collectives.jxr \
	tests/golden/docA32_shardmap_matmul.jxr \
	tests/golden/docA32_shardmap_nn.jxr \
	tests/golden/docA32_placement.jxr \
	tests/golden/docA32_jit.jxr \
	tests/golden/docA32_control_flow.jxr \
	tests/golden/docA32_aot.jxr \
	tests/golden/docA32_jit_refs.jxr
## what the pages show that shardrepl does not do yet (golden-pending)
GOLDEN_PENDING +=
