## cf28.mk: JAX's tests/lax_control_flow_test.py (LaxControlFlowTest) as
## shardrepl programs: while_loop, fori_loop, cond, switch, scan, map,
## associative_scan, their AD, vmap and jit, and their errors; included
## by golden.mk
GOLDEN_TESTS += \
	tests/golden/cf28_while.jxr \
	tests/golden/cf28_fori.jxr \
	tests/golden/cf28_cond.jxr \
	tests/golden/cf28_cond_ad.jxr \
	tests/golden/cf28_scan.jxr \
	tests/golden/cf28_loops.jxr \
	tests/golden/cf28_misc.jxr \
	tests/golden/cf28_fwd.jxr \
	tests/golden/cf28_platform.jxr \
	tests/golden/cf28_pmap.jxr
