## apiC.mk: issue 15's jnp contractions, differences, statistics and set
## operations (numpy_apiC.c); included from golden.mk.
APIC_GOLDEN = tests/golden/apiC_contract.jxr tests/golden/apiC_diff.jxr \
	tests/golden/apiC_setops.jxr tests/golden/apiC_setops2.jxr \
	tests/golden/apiC_cross.jxr tests/golden/apiC_histogram.jxr \
	tests/golden/apiC_cov.jxr tests/golden/apiC_matvec.jxr \
	tests/golden/apiC_vecdot.jxr
GOLDEN_TESTS += $(APIC_GOLDEN)
EXTRA_DIST += tests/golden/apiC.mk
