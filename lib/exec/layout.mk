## layout.mk: build fragment, included by Makefile.am
##
## Device-local layouts (lib/exec/layout.[ch]: shards stored in the order
## a Layout names, and the rule that eval rules see row-major data), the
## language's jax.experimental.layout, SingleDeviceSharding, x.format,
## with_layout_constraint and the stages of jax.jit (.trace, .lower,
## .compile, input_formats) in lib/jax/layout.c; the jax.random
## primitives' rules (lib/lax/random.c); their golden tests
## and the data examples of the "Autodiff and sharding" seed.


LAYOUT_GOLDEN = \
	tests/golden/layout_api.jxr \
	tests/golden/layout_jit.jxr \
	tests/golden/random_jit.jxr \
	examples/seeds/sharding_ad_values.jxr

GOLDEN_TESTS += $(LAYOUT_GOLDEN)

check_PROGRAMS += tests/unit/check_layout
tests_unit_check_layout_SOURCES = tests/unit/check_layout.c
tests_unit_check_layout_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_layout_LDADD = $(SR_LIBS) $(CHECK_LIBS)
