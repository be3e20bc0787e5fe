## np_rng.mk: build fragment, included by Makefile.am
## numpy's random streams: the bit generators and distributions
## (lib/exec/np_rng.[ch], np_ziggurat.h), the numpy.random module
## (lib/jax/np_random.c), their unit test and goldens.

lib_libshardrepl_a_SOURCES += lib/exec/np_rng.c lib/exec/np_rng.h lib/exec/np_ziggurat.h \
	lib/jax/np_random.c

check_PROGRAMS += tests/unit/check_np_rng
tests_unit_check_np_rng_SOURCES = tests/unit/check_np_rng.c
tests_unit_check_np_rng_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_np_rng_LDADD = $(SR_LIBS) $(CHECK_LIBS)

NPRAND_GOLDEN = \
	tests/golden/np_random_generator.jxr \
	tests/golden/np_random_legacy.jxr \
	tests/golden/np_random_choice.jxr \
	tests/golden/np_random_errors.jxr \
	tests/golden/np_random_broadcast.jxr \
	tests/golden/np_random_bitgen.jxr \
	tests/golden/np_random_state.jxr \
	tests/golden/np_random_exponential.jxr \
	tests/golden/np_random_poisson.jxr \
	tests/golden/np_random_binomial.jxr \
	tests/golden/np_random_gamma.jxr \
	tests/golden/np_random_more.jxr \
	tests/golden/np_random_multinomial.jxr

GOLDEN_TESTS += $(NPRAND_GOLDEN)
