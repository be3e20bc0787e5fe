## shard15b.mk: the golden scripts of issue 15's sharding items 6-10,
## included by golden.mk
GOLDEN_TESTS += \
	tests/golden/tracer_repr.jxr \
	tests/golden/power_array_exponent.jxr \
	tests/golden/scan_carry_type.jxr \
	tests/golden/memory_kind.jxr \
	tests/golden/shard_map_eager_print.jxr
