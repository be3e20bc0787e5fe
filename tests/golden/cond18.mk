## cond18.mk: build fragment, included by tests/golden/golden.mk: cond,
## switch and piecewise whose branches build their own constants (the
## consts joined as common.py's _merge_common_consts joins them).
COND18_GOLDEN = tests/golden/cond18_consts.py
GOLDEN_TESTS += $(COND18_GOLDEN)
EXTRA_DIST += tests/golden/cond18.mk $(COND18_GOLDEN) $(COND18_GOLDEN:.py=.out)
