## ad.mk: build fragment, included by Makefile.am
## Autodiff (lib/ad): JVP and transpose rules, linearization, the
## communication notes of :comm-static; and the language's face of it, the
## jax.grad family (lib/jax/autodiff.c) and the REPL's :grad commands
## (lib/cmd/commands_ad.c).


## The unit test: cotangent types, the C API, and numerical checks of every
## family of rules on several shardings (JVP against finite differences,
## VJP against JVP by the dot-product identity).
check_PROGRAMS += tests/unit/check_ad
tests_unit_check_ad_SOURCES = tests/unit/check_ad.c
tests_unit_check_ad_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_ad_LDADD = $(SR_LIBS) $(CHECK_LIBS)

## Golden scripts: the printed jaxprs of each stage (the precision.md
## gradient byte for byte), errors, the commands, :gradcheck, and the seed.
AD_GOLDEN = \
	tests/golden/ad_precision.jxr \
	tests/golden/ad_rules.jxr \
	tests/golden/ad_control.jxr \
	tests/golden/ad_commands.jxr \
	tests/golden/ad_errors.jxr \
	tests/golden/ad_audit.jxr \
	tests/golden/ad_gradcheck.jxr \
	tests/golden/ad_reduce_prod.jxr \
	tests/golden/ad_float0.jxr \
	examples/seeds/sharding_ad.jxr
TESTS += $(AD_GOLDEN)
EXTRA_DIST += $(AD_GOLDEN) $(AD_GOLDEN:.jxr=.out)

## `make bench` also times building gradients (bench/bench_ad): a generated
## loss of 10,000 and of 100,000 equations (elementwise, dot_general,
## reductions, nested jit and scan); see bench/README.md.
EXTRA_PROGRAMS += bench/bench_ad
bench_bench_ad_SOURCES = bench/bench_ad.c
bench_bench_ad_LDADD = $(SR_LIBS)
bench: bench-ad
bench-ad: bench/bench_ad$(EXEEXT)
	@echo "  building jax.grad's jaxpr (best of 3):"
	bench/bench_ad -n 3 1000 10000
.PHONY: bench-ad
clean-local: bench-ad-clean
bench-ad-clean:
	-rm -f bench/bench_ad$(EXEEXT)
.PHONY: bench-ad-clean
