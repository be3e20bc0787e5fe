## lax32.mk: JAX's tests/lax_test.py (LaxTest, LazyConstantTest,
## CompositeTest, LaxUtilsTest, FunctionAccuracyTest's sinc) and
## tests/lax_vmap_test.py (LaxVmapTest) as shardrepl programs: lax's
## elementwise ops against lax_reference (numpy/scipy), dtype conversion,
## bitcasts, weak types and int4, the structural ops and their shape
## errors, dot and convolutions, reductions and windows, sorting,
## gather/scatter and their shape rules, rng_bit_generator, composite,
## dce_sink, and vmap of each op against the loop over examples; included
## by golden.mk.  The tests' rng factories' arrays are fixed arange-based
## ones.  Not ported: jax internals (lax_internal._const, _delta, asarray,
## stage, literals.TypedNdArray, windowed_reductions' _select_and_gather_add
## and _select_and_scatter_add), buffer pointers
## (testConvertElementTypeAvoidsCopies' unsafe_buffer_pointer), x64-only and
## accelerator-only cases (testRngBitGenerator, fp8 dots, testDotAlgorithm's
## GPU/TPU presets), HLO and MLIR text (the composite tests'
## stablehlo.composite, testDotAlgorithmConfig,
## test_dce_sink_prevents_xla_dce), mpmath accuracy (testMPMathUtils,
## *OnComplexPlane), export with symbolic shapes, CustomElementTypesTest
## (user-defined extended dtypes) and RaggedTest (lax.ragged_dot is not
## implemented).
GOLDEN_TESTS += \
	tests/golden/lax32_ops.jxr \
	tests/golden/lax32_convert.jxr \
	tests/golden/lax32_shape.jxr \
	tests/golden/lax32_dot.jxr \
	tests/golden/lax32_conv.jxr \
	tests/golden/lax32_reduce.jxr \
	tests/golden/lax32_sort.jxr \
	tests/golden/lax32_gather.jxr \
	tests/golden/lax32_misc.jxr \
	tests/golden/lax32_vmap.jxr \
	tests/golden/lax32_composite.jxr
## what JAX's tests assert that shardrepl does not do yet (golden-pending)
GOLDEN_PENDING += \
	tests/golden/pending/lax32_pending.jxr
