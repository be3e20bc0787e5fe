## arr30.mk: JAX's tests/array_test.py (JaxArrayTest, ShardingTest,
## RngShardingTest) as shardrepl programs: jax.Array's shards and
## shardings, make_array_from_callback / _single_device_arrays /
## _process_local_data, devices_indices_map and shard_shape, included by
## golden.mk.  Not ported: GPU/TPU-only tests (test_defragment,
## pinned-host and memory-kind tests on accelerators), multi-process ones,
## pickling, dlpack
## and the buffer protocol (test_buffer_protocol*), GSPMDSharding / HLO
## sharding internals (_to_xla_hlo_sharding, xc.OpSharding,
## test_op_sharding_indices, test_gspmd_sharding_*, test_hlo_sharding_*),
## the indices cache (test_util_clear_cache), unsafe_buffer_pointer
## comparisons, test_deprecated_dtype_conversion's warning, the
## threefry HLO text of RngShardingTest.test_random_bits_is_pure_map_*,
## test_manual_axis_type_frozen, test_aval_str_short's varying axes and
## test_modify_spec_auto_unreduced (jax internals: core.ManualAxisType,
## core.modify_spec_for_auto_manual).
GOLDEN_TESTS += \
	tests/golden/arr30_array.jxr \
	tests/golden/arr30_array2.jxr \
	tests/golden/arr30_multihost.jxr \
	tests/golden/arr30_sharding.jxr
## what JAX's tests assert that shardrepl does not do yet (golden-pending)
GOLDEN_PENDING += \
	tests/golden/pending/arr30_pending.jxr
