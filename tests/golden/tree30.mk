## tree30.mk: JAX's tests/tree_util_test.py as shardrepl programs (TreeTest,
## TreeKeyTest, StaticTest, TreeAliasTest, RegistrationTest), included by
## golden.mk.  Each file repeats the test file's fixtures (TREES, LEAVES,
## AnObject, Special, FlatCache, StaticInt(int), ...).  Not ported: pickling (testPickleRoundTrip,
## TreeKeyTest.testPickle: no pickle module), C++ internals
## (test_serialize_treedef's protos, test_compare_pytreedef_with_registries'
## default_registry/dispatch_registry, FlatTreeTest's jax._src.flattree),
## and no threading or weakref GC tests exist in this file.
## tree30_match.jxr is the match statement testPatternMatching needed,
## checked against python3.
GOLDEN_TESTS += \
	tests/golden/tree30_flatten.jxr \
	tests/golden/tree30_paths.jxr \
	tests/golden/tree30_alias.jxr \
	tests/golden/tree30_prefix.jxr \
	tests/golden/tree30_ravel.jxr \
	tests/golden/tree30_match.jxr \
	tests/golden/tree30_static.jxr \
	tests/golden/tree30_subclass.jxr
