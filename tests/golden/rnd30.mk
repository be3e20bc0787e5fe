## rnd30.mk: JAX's tests/random_test.py as shardrepl programs -- PrngTest
## and ThreefryPrngTest (rnd30_prng: threefry2x32's known answers, the
## original threefry bits under jax_threefry_partitionable=False, seeds,
## jax_default_prng_impl, jax_random_seed_offset, jax_legacy_prng_key),
## KeyArrayTest (rnd30_keyarray: typed keys through jit, vmap, scan,
## slicing, gathers, select, device placement, make_array_from_callback,
## custom_jvp / custom_vjp, indexing) and
## JnpWithKeyArrayTest (rnd30_jnp: jax.numpy on key arrays), and
## testRandomDistributionValues with the x64 cases of testRngRandomBits,
## testPRNGValues and test_prng_seeds_and_keys (rnd30_values: JAX skips
## the first in every configuration; its values hold under x64 without
## jax_threefry_partitionable, as run here), included by golden.mk.
## Not ported: the GPU-only test_threefry_gpu_kernel_lowering
## (cu_threefry2x32 in HLO text); tests of jax internals
## (prng_internal.prngs, dispatch.apply_primitive patching, _base_array,
## prng_internal.random_wrap / random_unwrap / random_bits -- ported
## through their public forms -- the C++ dispatch cache counters of
## test_cpp_dispatch_*, unsafe_buffer_pointer); test_issubdtype's error
## for an array as a dtype (numpy-version dependent).  Pending:
## ThreefryPrngTest.test_seed_no_implicit_transfers (jax.transfer_guard).
GOLDEN_TESTS += \
	tests/golden/rnd30_prng.jxr \
	tests/golden/rnd30_keyarray.jxr \
	tests/golden/rnd30_jnp.jxr \
	tests/golden/rnd30_values.jxr
## what JAX's tests assert that shardrepl does not do yet (golden-pending)
GOLDEN_PENDING += \
	tests/golden/pending/rnd30_pending.jxr
