## jnp32.mk: JAX's jax.numpy and jax.nn tests as shardrepl programs,
## included by golden.mk.  Each parameterized test is ported as a
## representative set of its combinations (small literal or arange-based
## inputs, every dtype class, axis/keepdims/where/initial/dtype, the empty
## and scalar shapes); the *_gen.py beside them write the value goldens and
## print numpy's results for them (checked with golden_cmp).
##  - tests/lax_numpy_reducers_test.py: jnp32_reduce (values, from
##    jnp32_reduce_gen.py), jnp32_reduce_errors (the errors and jaxprs the
##    tests assert), jnp32_quantile_weights (testWeightedQuantile).  Not
##    ported: testPercentilePrecision (needs x64), testMeanLargeArray and
##    testStdLargeArray (skipped upstream).
##  - tests/lax_numpy_operators_test.py: jnp32_ops (jnp32_ops_gen.py) and
##    jnp32_ops_errors (overload errors, deferral, NamedTuple operands).
##  - tests/lax_numpy_einsum_test.py: jnp32_einsum (jnp32_einsum_gen.py)
##    and jnp32_einsum_jaxpr (jaxprs, the path error, einsum_path); not
##    ported: test_einsum_path, which checks numpy's own np.einsum_path.
##  - tests/nn_test.py: jnp32_nn (jnp32_nn_gen.py: values against numpy,
##    attention against its definition, each assertion's outcome) and
##    jnp32_nn_init (NNInitializersTest: shapes and dtypes; orthogonal's in
##    float32, LAPACK having no half types on a CPU).  Not ported: the
##    scaled matmul / dot_general tests (mxfp8 on a GPU), cudnn attention
##    (GPU), the float64 debug_infs attention test (x64).
##  - tests/lax_numpy_test.py, in part: jnp32_lnp and jnp32_lnp2 (values,
##    from jnp32_lnp_gen.py and jnp32_lnp2_gen.py), jnp32_lnp_errors (the
##    errors two dozen tests assert), jnp32_lnp_types (dtype, weak-type and
##    jaxpr-structure tests), jnp32_lnp_array (jnp.array's inference and
##    errors, pad's function and empty modes, small regression tests),
##    jnp32_lnp3 (take_along_axis modes, item, window functions...),
##    jnp32_lnp4 (jnp32_lnp4_gen.py: pad's modes, unique and the set
##    operations, searchsorted, interp, nanargmin/max, around).  Not
##    yet ported: the rest of its 364 tests (some covered by np*, jnp*,
##    search15*, index16* goldens without their names), byteswap, tobytes,
##    bytearray input, trim_zeros' axis (numpy 2.2), the x64 and device
##    (transfer guard, sharding) tests.
## bfloat16 values are not checked against numpy (numpy has no bfloat16):
## only their dtypes and jaxprs.
GOLDEN_TESTS += \
	tests/golden/jnp32_reduce.jxr \
	tests/golden/jnp32_reduce_errors.jxr \
	tests/golden/jnp32_quantile_weights.jxr \
	tests/golden/jnp32_ops.jxr \
	tests/golden/jnp32_ops_errors.jxr \
	tests/golden/jnp32_einsum.jxr \
	tests/golden/jnp32_einsum_jaxpr.jxr \
	tests/golden/jnp32_nn.jxr \
	tests/golden/jnp32_nn_init.jxr \
	tests/golden/jnp32_lnp.jxr \
	tests/golden/jnp32_lnp2.jxr \
	tests/golden/jnp32_lnp_errors.jxr \
	tests/golden/jnp32_lnp_types.jxr \
	tests/golden/jnp32_lnp_array.jxr \
	tests/golden/jnp32_lnp3.jxr \
	tests/golden/jnp32_lnp4.jxr
## what JAX's tests assert that shardrepl does not do yet (golden-pending)
GOLDEN_PENDING +=
EXTRA_DIST += tests/golden/jnp32_reduce_gen.py tests/golden/jnp32_ops_gen.py tests/golden/jnp32_einsum_gen.py \
	tests/golden/jnp32_nn_gen.py tests/golden/jnp32_lnp_gen.py tests/golden/jnp32_lnp2_gen.py \
	tests/golden/jnp32_lnp4_gen.py tests/golden/jnp32_gen.py
