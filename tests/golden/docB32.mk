## docB32.mk: JAX 0.11's documentation pages (docs/new_docs, MyST
## notebooks) as shardrepl programs, one golden per page, its code cells
## in order: 101/transformations, arrays, pytrees, random, state (but its
## jax.new_ref cells), 201/debugging, 301/custom-jvp-vjp, cookbook, remat,
## custom-derivatives (what needs no jax.experimental.hijax); included by
## golden.mk.  The pages store no outputs: each .out is checked against
## the prose, the code's comments and asserts, numpy and JAX's source.
## Not ported (each says so where it would be): %timeit cells, matplotlib
## plots, pdb sessions, remat.md's rich tables and the checkpoints whose
## residuals jax_remat3 names differently (nested ones).  Pending
## (pending/docB32_pending.jxr, outputs from JAX's source): state.md's
## jax.new_ref cells, debugging.md's jax_debug_nans cells, which of f and
## its rules run under jvp/grad/vjp (custom-jvp-vjp.md: JAX runs only the
## rule, shardrepl traces f first), jax.custom_remat and offloading, and
## custom-derivatives.md's VJPHiPrimitive cells (not provided).
GOLDEN_TESTS += \
	tests/golden/docB32_transformations.jxr \
	tests/golden/docB32_arrays.jxr \
	tests/golden/docB32_pytrees.jxr \
	tests/golden/docB32_random.jxr \
	tests/golden/docB32_state.jxr \
	tests/golden/docB32_debugging.jxr \
	tests/golden/docB32_custom_jvp_vjp.jxr \
	tests/golden/docB32_cookbook.jxr \
	tests/golden/docB32_remat.jxr \
	tests/golden/docB32_custom_derivatives.jxr
## what the pages show that shardrepl does not do yet (golden-pending)
GOLDEN_PENDING += \
	tests/golden/pending/docB32_pending.jxr
