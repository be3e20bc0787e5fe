## sit25.mk: build fragment, included by tests/golden/golden.mk: JAX's
## ShardingInTypesTest (tests/pjit_test.py) cases of single operations'
## sharding rules under explicit meshes (gathers, scatters, segment
## reductions, convolutions and windows, reshapes, views and bitcasts,
## sorting and linear algebra, einsum, broadcasting, reshard), each
## commented with the test it comes from and what JAX asserts.
SIT25_GOLDEN = tests/golden/sit25_gather.jxr tests/golden/sit25_scatter.jxr \
  tests/golden/sit25_window.jxr tests/golden/sit25_reshape.jxr tests/golden/sit25_linalg.jxr \
  tests/golden/sit25_misc.jxr
GOLDEN_TESTS += $(SIT25_GOLDEN)
## what JAX asserts that shardrepl does not do yet (make golden-pending)
SIT25_PENDING = tests/golden/pending/sit25_pending.jxr
GOLDEN_PENDING += $(SIT25_PENDING)
EXTRA_DIST += tests/golden/sit25.mk $(SIT25_GOLDEN) $(SIT25_GOLDEN:.jxr=.out) \
  $(SIT25_PENDING) $(SIT25_PENDING:.jxr=.out)
