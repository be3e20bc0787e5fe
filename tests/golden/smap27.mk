## smap27.mk: more of JAX's tests/shard_map_test.py checked as shardrepl
## programs (eager shard_map, printing, autodiff and residuals, PRNG keys,
## partial manual and smap, the systematic tests, errors), included by
## golden.mk
GOLDEN_TESTS += \
	tests/golden/smap27_eager.jxr \
	tests/golden/smap27_print.jxr \
	tests/golden/smap27_ad.jxr \
	tests/golden/smap27_random.jxr \
	tests/golden/smap27_partial.jxr \
	tests/golden/smap27_ref.jxr \
	tests/golden/smap27_errors.jxr \
	tests/golden/smap27_close_over.jxr \
	tests/golden/smap27_rbg.jxr \
	tests/golden/smap27_optimize_remat.jxr
## what JAX's tests assert that shardrepl does not do yet (golden-pending)
GOLDEN_PENDING += \
	tests/golden/pending/smap27_remat_fwd.jxr \
	tests/golden/pending/smap27_callback_refs.jxr
