## rules.mk: build fragment, included by Makefile.am
## The tests of the type rules (rule.c and the families of lib/lax/): a unit
## test per family, a small corpus of ill-typed jaxprs with the errors
## `shardrepl --check` must give, and a check of every v3 text of the
## shared corpus whose primitives all have rules.

check_PROGRAMS += tests/unit/check_rules
tests_unit_check_rules_SOURCES = tests/unit/check_rules.c
tests_unit_check_rules_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_rules_LDADD = $(SR_LIBS) $(CHECK_LIBS)

TESTS += tests/check_golden.sh tests/corpus_check.sh
EXTRA_DIST += tests/check_golden.sh tests/corpus_check.sh tests/rules_golden
