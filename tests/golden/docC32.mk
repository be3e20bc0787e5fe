## docC32.mk: JAX 0.11's documentation pages (docs/, MyST notebooks) as
## shardrepl programs, one golden per page, its code cells in order:
## jaxpr ("The jaxpr language"), new_docs/201/callbacks, automatic-
## vectorization, automatic-differentiation, the pages advanced_autodiff
## lists (higher-order, jacobian-vector-products, complex-differentiation;
## its custom derivative rules page is docB32's), gradient-checkpointing,
## jit-compilation, key-concepts, new_docs/201/precision (its python
## snippets: the page has no code cells); included by golden.mk.  The pages store
## no outputs: each .out is checked against the prose, the code's comments
## and asserts, numpy and JAX's source.  Not ported (each says so where it
## would be): %timeit cells, the rich tables of print_fwd_bwd, a cell
## importing jax._src.test_util, and all of new_docs/201/controlling-xla
## (its snippets print HLO text, XLA flags and xla_metadata attributes).
## docC32_remat_nested checks the nested checkpoints of gradient-
## checkpointing.md under three policies.  Nothing pending.
GOLDEN_TESTS += \
	tests/golden/docC32_jaxpr.jxr \
	tests/golden/docC32_callbacks.jxr \
	tests/golden/docC32_automatic_vectorization.jxr \
	tests/golden/docC32_automatic_differentiation.jxr \
	tests/golden/docC32_higher_order.jxr \
	tests/golden/docC32_jacobian_vector_products.jxr \
	tests/golden/docC32_complex_differentiation.jxr \
	tests/golden/docC32_gradient_checkpointing.jxr \
	tests/golden/docC32_remat_nested.jxr \
	tests/golden/docC32_jit_compilation.jxr \
	tests/golden/docC32_key_concepts.jxr \
	tests/golden/docC32_precision.jxr
