## apjit30.mk: JAX's tests/pjit_test.py class ArrayPjitTest as shardrepl
## programs (jax.Array with shardings under jit and pjit: arrays made by
## make_array_from_callback, in/out shardings, addressable shards,
## committed arrays, incompatible devices, lower/compile, device_put,
## with_sharding_constraint, sharding equality), included by golden.mk.
## jtu.create_mesh is jax.make_mesh with Auto axes; `with mesh:` is the
## resource env's mesh (pjit's context mesh).  What a test asserts on a
## cache or compile counter (count_pjit_cpp_cache_miss,
## count_jit_compilation_cache_miss, _pjit_lower.cache_info, lowering
## counts) is left out and its values printed instead.
## Not ported: hardware-specific tests (test_pjit_mixed_device_cache_miss,
## test_cpu_bfloat16_to_tpu, test_abstract_device, test_pjit_with_backend_arg,
## test_aot_device_implicit_transfer, test_aot_device_mismatch,
## test_parameter_tupled_jit: TPU/GPU only); multi-process
## (test_global_array_to_host_local_array_already_host_local:
## multihost_utils); cache internals only (test_single_device_pjit_cpp_dispatch,
## test_pjit_single_device_sharding_cache, test_jit_cpp_cache_obj_config,
## test_cache_miss_explanations_sharding_mismatch: counters and logs);
## XLA/HLO internals (test_abstract_mesh_lower*, test_aot_devices_to_compile*,
## test_abstract_lower_real_dev_compile*: lowering_platforms, as_text,
## compile(device_assignment=); test_device_put_in_jit_default_mem_kind_no_op:
## StableHLO text; test_with_sharding_constraint_spmd_axis_name:
## op_shardings.get_num_ways_dim_sharded); jax._src internals
## (test_pjit_uncommitted_array_multi_devices: array.ArrayImpl;
## test_convert_element_type_sharding, test_jnp_array_sharded_array_no_op:
## lax_internal._convert_element_type; test_closed_constants_at_top_level:
## literals.TypedNdArray; test_mutable_array_closed_over_multi_device:
## core.new_ref); GSPMDSharding halves (no OpSharding);
## test_threefry_partitionable_context_within_jit (no
## jax.threefry_partitionable); test_sds_pspec_input
## (jtu.with_explicit_mesh with lowered text); transfer_guard contexts
## (their bodies are ported); test_empty_mesh_to_out_sharding
## (mesh_lib.empty_concrete_mesh); the io_callback cases
## (test_empty_io_callback_under_shard_map*: tests/golden/cb32_pjit.jxr); test_jit_device_with_sharding_constraint_error
## (a constraint's devices inside jit: as the pending committed-input
## case).  Pending (pending/apjit30_pending.jxr): see
## the cases there.
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
