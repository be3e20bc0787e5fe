## layering.mk: the layering check (tests/layering.sh, issue 12): no object
## of a lower layer of lib/ uses a symbol of a higher one beyond the known
## uses, in HACKING.md's layer order; and its self-test.  And the engines
## name no primitive's row (tests/engines_generic.sh).
AM_TESTS_ENVIRONMENT += LAYERING_OBJECTS='$(lib_libshardrepl_a_OBJECTS)'; export LAYERING_OBJECTS;
TESTS += tests/layering.sh tests/layering_selftest.sh tests/engines_generic.sh
EXTRA_DIST += tests/layering.sh tests/layering_selftest.sh tests/layering-known.txt tests/engines_generic.sh
