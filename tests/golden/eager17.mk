## eager17.mk: build fragment, included by tests/golden/golden.mk
## Issue 17 (the eager per-call overhead): the type rules' remembered
## results (lib/check/rule_cache.c) give what the rules give, with the
## table on (the golden) and off (tests/eager17_rule_cache.sh).
EAGER17_GOLDEN = tests/golden/eager17_rule_cache.jxr
TESTS += $(EAGER17_GOLDEN) tests/eager17_rule_cache.sh
EXTRA_DIST += $(EAGER17_GOLDEN) $(EAGER17_GOLDEN:.jxr=.out) tests/eager17_rule_cache.sh
