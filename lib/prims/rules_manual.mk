## rules_manual.mk: build fragment, included by Makefile.am
## Tests of the control-flow and manual-mode type rules
## (lib/lax/control.c, lib/lax/manual.c): a unit test and
## golden `shardrepl --check` outputs (tests/manual_golden/*.jaxpr, *.out).

check_PROGRAMS += tests/unit/check_manual
tests_unit_check_manual_SOURCES = tests/unit/check_manual.c
tests_unit_check_manual_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_manual_LDADD = $(SR_LIBS) $(CHECK_LIBS)
## (check_PROGRAMS already run: Makefile.am's TESTS starts with them)

TESTS += tests/manual_golden.sh
EXTRA_DIST += lib/prims/rules_manual.mk tests/manual_golden.sh tests/manual_golden
