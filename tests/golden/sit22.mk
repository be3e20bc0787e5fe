## sit22.mk: build fragment, included by tests/golden/golden.mk: JAX's
## ShardingInTypesTest (tests/pjit_test.py) cases about unreduced and
## reduced shardings under explicit meshes ("reduced weights give
## unreduced gradients"), each commented with the test it comes from and
## what JAX asserts.
SIT22_GOLDEN = tests/golden/sit22_einsum.jxr tests/golden/sit22_reshard.jxr tests/golden/sit22_reduce.jxr \
  tests/golden/sit22_elementwise.jxr tests/golden/sit22_structural.jxr tests/golden/sit22_control.jxr \
  tests/golden/sit22_ukind.jxr
GOLDEN_TESTS += $(SIT22_GOLDEN)
EXTRA_DIST += tests/golden/sit22.mk $(SIT22_GOLDEN) $(SIT22_GOLDEN:.jxr=.out)
