## smap19.mk: JAX's tests/shard_map_test.py checked as shardrepl programs
## (collectives, autodiff, errors, vma rules, vmap and mesh contexts),
## included by golden.mk
GOLDEN_TESTS += \
	tests/golden/smap19_collectives.jxr \
	tests/golden/smap19_ad.jxr \
	tests/golden/smap19_errors.jxr \
	tests/golden/smap19_vma.jxr \
	tests/golden/smap19_vmap.jxr \
	tests/golden/smap19_partial.jxr \
	tests/golden/smap19_mesh.jxr
