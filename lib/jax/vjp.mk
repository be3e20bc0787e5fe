## vjp.mk: build fragment, included by Makefile.am
## First-class VJP objects (lib/jax/vjp_api.c), their files (vjp_io.c),
## jax.custom_vjp (custom_vjp.c) and jax.custom_jvp (custom_jvp.c), and the
## optimization pass over jaxprs that jit(...).lower(...).compile() and
## :optimize show (lib/opt/).


## The unit test: saveable_args' flags, VJP objects as pytrees and through
## jax.jit, save/load, and the optimizer's CSE, barriers, DCE, inlining and
## shard_map fusion.
check_PROGRAMS += tests/unit/check_vjp
tests_unit_check_vjp_SOURCES = tests/unit/check_vjp.c
tests_unit_check_vjp_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_vjp_LDADD = $(SR_LIBS) $(CHECK_LIBS)

## Golden scripts: the seed walkthrough and the bad-input cases.
VJP_GOLDEN = \
	tests/golden/vjp_api.jxr \
	tests/golden/vjp_errors.jxr \
	tests/golden/vjp_optimize.jxr \
	examples/seeds/vjp_objects.jxr
TESTS += $(VJP_GOLDEN)
EXTRA_DIST += $(VJP_GOLDEN) $(VJP_GOLDEN:.jxr=.out)

## A VJP object saved by one session and applied in another, and broken
## files (tests/vjp_io.sh, compared with tests/vjp_io.out).
TESTS += tests/vjp_io.sh
EXTRA_DIST += tests/vjp_io.sh tests/vjp_io.out
