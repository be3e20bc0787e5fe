## bat28.mk: JAX's tests/batching_test.py (BatchingTest), tests/core_test.py
## and tests/debugging_primitives_test.py checked as shardrepl programs,
## included by golden.mk.
## Skipped: VmappableTest (batching.register_vmappable, JAX internals).
GOLDEN_TESTS += \
	tests/golden/bat28_basic.jxr \
	tests/golden/bat28_lax.jxr \
	tests/golden/bat28_coll.jxr \
	tests/golden/bat28_core.jxr \
	tests/golden/bat28_dprint.jxr \
	tests/golden/bat28_dtrans.jxr \
	tests/golden/bat28_vis.jxr \
	tests/golden/bat28_trisolve.jxr \
	tests/golden/bat28_types.jxr \
	tests/golden/bat28_origin.jxr
