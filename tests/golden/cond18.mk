## cond18.mk: build fragment, included by tests/golden/golden.mk: cond,
## switch and piecewise whose branches build their own constants (the
## consts joined as common.py's _merge_common_consts joins them).
COND18_GOLDEN = tests/golden/cond18_consts.jxr
GOLDEN_TESTS += $(COND18_GOLDEN)
EXTRA_DIST += tests/golden/cond18.mk $(COND18_GOLDEN) $(COND18_GOLDEN:.jxr=.out)
## The jax.scipy.special functions added last (bessel_jn, hyp1f1, hyp2f1,
## lib/jax/scipy_special_series.c) in float32 and float64, their references
## written by cond18_gen.py from scipy.special and mpmath.
COND18_SPECIAL = tests/golden/cond18_special_f32.jxr tests/golden/cond18_special_x64.jxr
GOLDEN_TESTS += $(COND18_SPECIAL)
EXTRA_DIST += tests/golden/cond18_gen.py $(COND18_SPECIAL) $(COND18_SPECIAL:.jxr=.out)
