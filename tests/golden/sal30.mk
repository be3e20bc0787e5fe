## sal30.mk: JAX's tests/shard_alike_test.py (shard_alike under jit,
## eagerly, with grad and vmap, its errors; full_like's sharding) and the
## CPU part of tests/mesh_utils_test.py (create_device_mesh,
## create_hybrid_device_mesh with processes as granules, and
## jax.make_mesh on CPU devices: device order, axis_types, errors) as
## shardrepl programs, included by golden.mk.  Not ported: the rest of
## mesh_utils_test.py, which builds mock TPU devices and checks TPU
## physical topologies (v2-v7x tori, split physical axes, contiguous
## submeshes, slice-index sorting of hybrid meshes), and shard_alike's
## pjit cache-miss counts (test_shard_input_as_output's count()).
GOLDEN_TESTS += \
	tests/golden/sal30_shard_alike.jxr \
	tests/golden/sal30_mesh_utils.jxr \
	tests/golden/sal30_hybrid.jxr
## what JAX's tests assert that shardrepl does not do yet (golden-pending)
GOLDEN_PENDING += \
	tests/golden/pending/sal30_pending.jxr
