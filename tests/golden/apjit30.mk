## apjit30.mk: JAX's tests/pjit_test.py class ArrayPjitTest as shardrepl
## programs (jax.Array with shardings under jit and pjit: arrays made by
## make_array_from_callback, in/out shardings, addressable shards,
## committed arrays, incompatible devices, lower/compile, device_put,
## with_sharding_constraint, sharding equality), included by golden.mk.
## jtu.create_mesh is jax.make_mesh with Auto axes; `with mesh:` is the
## mesh in context as jax.set_mesh's.  Not ported: hardware-specific tests
## (test_pjit_mixed_device_cache_miss, test_cpu_bfloat16_to_tpu,
## test_abstract_device, test_pjit_with_backend_arg,
## test_aot_device_implicit_transfer, test_aot_device_mismatch,
## test_parameter_tupled_jit: TPU/GPU only), the compile and dispatch
## cache counters (count_pjit_cpp_cache_miss,
## count_jit_compilation_cache_miss, _pjit_lower.cache_info: they assert
## counts of XLA compilations), the HLO/StableHLO text assertions.
GOLDEN_TESTS += \
	tests/golden/apjit30_basic.jxr \
	tests/golden/apjit30_commit.jxr \
	tests/golden/apjit30_static.jxr \
	tests/golden/apjit30_device.jxr \
	tests/golden/apjit30_nested.jxr \
	tests/golden/apjit30_preserve.jxr \
	tests/golden/apjit30_none.jxr \
	tests/golden/apjit30_keys.jxr \
	tests/golden/apjit30_aot.jxr \
	tests/golden/apjit30_reshard.jxr \
	tests/golden/apjit30_sds.jxr \
	tests/golden/apjit30_abstract.jxr \
	tests/golden/apjit30_misc.jxr
## what JAX's tests assert that shardrepl does not do yet (golden-pending)
GOLDEN_PENDING += \
	tests/golden/pending/apjit30_pending.jxr
