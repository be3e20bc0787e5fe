## check.mk: build fragment, included by Makefile.am
## `make bench` also times the type checker and tracing (bench/bench_check):
## sr_check_jaxpr on the parsed ~10 MB and ~100 MB texts of bench.mk (each
## must type-check: `shardrepl --check` first), and jax.make_jaxpr of a
## generated function of 10,000 and of 100,000 equations in the statement
## language, straight-line and as a loop.  Figures: bench/README.md.

EXTRA_PROGRAMS += bench/bench_check
bench_bench_check_SOURCES = bench/bench_check.c
bench_bench_check_LDADD = $(SR_LIBS)
EXTRA_DIST += bench/check.mk

BENCH_CHECK_RUNS = 7
BENCH_TRACE_EQNS = 10000,100000

bench: bench-check
bench-check: bench/bench_check$(EXEEXT) src/shardrepl$(EXEEXT) \
	bench/out/jaxpr-$(BENCH_MB)mb.txt bench/out/jaxpr-$(BENCH_MB10)mb.txt
	@for f in bench/out/jaxpr-$(BENCH_MB)mb.txt bench/out/jaxpr-$(BENCH_MB10)mb.txt; do \
	  src/shardrepl --check $$f >/dev/null || { echo "bench: $$f does not type-check"; exit 1; }; \
	done; echo "  CHECK    both texts type-check (shardrepl --check)"
	@echo "  machine: `uname -sm`, `grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //'`, `nproc 2>/dev/null` cores; load average `cut -d' ' -f1-3 /proc/loadavg 2>/dev/null`"
	bench/bench_check -n $(BENCH_CHECK_RUNS) bench/out/jaxpr-$(BENCH_MB)mb.txt bench/out/jaxpr-$(BENCH_MB10)mb.txt
	bench/bench_check -n $(BENCH_CHECK_RUNS) -t $(BENCH_TRACE_EQNS)
	bench/bench_check -n $(BENCH_CHECK_RUNS) -t $(BENCH_TRACE_EQNS) -l 1000
.PHONY: bench-check
clean-local: bench-check-clean
bench-check-clean:
	-rm -f bench/bench_check$(EXEEXT)
.PHONY: bench-check-clean
