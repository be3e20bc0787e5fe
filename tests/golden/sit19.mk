## sit19.mk: build fragment, included by tests/golden/golden.mk: JAX's
## ShardingInTypesTest (tests/pjit_test.py) cases under explicit meshes,
## each commented with the test it comes from and what JAX asserts.
SIT19_GOLDEN = tests/golden/sit19_elementwise.jxr tests/golden/sit19_dot.jxr \
  tests/golden/sit19_reshape.jxr tests/golden/sit19_struct.jxr tests/golden/sit19_create.jxr \
  tests/golden/sit19_more.jxr
GOLDEN_TESTS += $(SIT19_GOLDEN)
EXTRA_DIST += tests/golden/sit19.mk $(SIT19_GOLDEN) $(SIT19_GOLDEN:.jxr=.out)
