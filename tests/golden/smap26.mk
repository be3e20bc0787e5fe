## smap26.mk: JAX's tests/shard_map_test.py (ShardMapTest) checked as
## shardrepl programs: unreduced and reduced values, pcast / pvary, psum
## and its transposes, varying manual axes and replication checks, vmap
## and smap; included by golden.mk
GOLDEN_TESTS += \
	tests/golden/smap26_unreduced.jxr \
	tests/golden/smap26_vma.jxr \
	tests/golden/smap26_vmap.jxr
