## sit24.mk: build fragment, included by tests/golden/golden.mk: JAX's
## ShardingInTypesTest (tests/pjit_test.py) cases about vmap, scan,
## lax.map, random, grad/jacfwd/jacrev, custom_jvp and switch under
## explicit meshes, each commented with the test it comes from and what
## JAX asserts.
SIT24_GOLDEN = tests/golden/sit24_grad.jxr tests/golden/sit24_vmap.jxr \
  tests/golden/sit24_scan.jxr tests/golden/sit24_random.jxr
GOLDEN_TESTS += $(SIT24_GOLDEN)
EXTRA_DIST += tests/golden/sit24.mk $(SIT24_GOLDEN) $(SIT24_GOLDEN:.jxr=.out)
