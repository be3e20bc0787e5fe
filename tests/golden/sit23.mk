## sit23.mk: build fragment, included by tests/golden/golden.mk: JAX's
## ShardingInTypesTest (tests/pjit_test.py) cases about Explicit, Auto and
## Manual axis types, mesh contexts, set_mesh, device_put, shard_map,
## auto_axes / explicit_axes and avals, each commented with the test it
## comes from and what JAX asserts.
SIT23_GOLDEN = tests/golden/sit23_shmap.jxr tests/golden/sit23_auto.jxr \
  tests/golden/sit23_mix.jxr tests/golden/sit23_misc.jxr tests/golden/sit23_ag.jxr \
  tests/golden/sit23_size1.jxr
GOLDEN_TESTS += $(SIT23_GOLDEN)
EXTRA_DIST += tests/golden/sit23.mk $(SIT23_GOLDEN) $(SIT23_GOLDEN:.jxr=.out)
