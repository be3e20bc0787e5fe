## bench.mk: build fragment, included by Makefile.am
##
## `make bench`: generates a ~10 MB and a ~100 MB sharded jaxpr
## (bench/gen_jaxpr.py), checks that each prints back to itself with
## `shardrepl --fmt`, and times the parser and printer on both
## (bench/bench_text).  See bench/README.md for the figures.  Not part of
## `make check`: timings belong in a benchmark, not in a test.

## Makefile.am defines neither; this fragment is the first to use them.
EXTRA_PROGRAMS = bench/bench_text
bench_bench_text_SOURCES = bench/bench_text.c
bench_bench_text_LDADD = $(SR_LIBS)
EXTRA_DIST += bench/gen_jaxpr.py bench/README.md

BENCH_RUNS = 7
BENCH_MB = 10
BENCH_MB10 = 100

bench/out/jaxpr-$(BENCH_MB)mb.txt bench/out/jaxpr-$(BENCH_MB10)mb.txt: $(srcdir)/bench/gen_jaxpr.py
	@$(MKDIR_P) bench/out
	@py='$(PYTHON_NUMPY)'; test -n "$$py" || py=python3; \
	mb=`echo '$@' | sed 's/.*jaxpr-\([0-9.]*\)mb.txt/\1/'`; \
	echo "  GEN      $@"; \
	$$py $(srcdir)/bench/gen_jaxpr.py --mb $$mb -o $@.tmp && mv $@.tmp $@

bench: bench/bench_text$(EXEEXT) src/shardrepl$(EXEEXT) \
	bench/out/jaxpr-$(BENCH_MB)mb.txt bench/out/jaxpr-$(BENCH_MB10)mb.txt
	@for f in bench/out/jaxpr-$(BENCH_MB)mb.txt bench/out/jaxpr-$(BENCH_MB10)mb.txt; do \
	  src/shardrepl --fmt $$f | cmp -s - $$f \
	    || { echo "bench: $$f does not print back to itself"; exit 1; }; \
	done; echo "  CHECK    both texts print back to themselves (shardrepl --fmt)"
	@echo "  machine: `uname -sm`, `grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //'`, `nproc 2>/dev/null` cores; load average `cut -d' ' -f1-3 /proc/loadavg 2>/dev/null`"
	bench/bench_text -n $(BENCH_RUNS) bench/out/jaxpr-$(BENCH_MB)mb.txt bench/out/jaxpr-$(BENCH_MB10)mb.txt

.PHONY: bench

## A prerequisite, not a recipe, so that other fragments may hook
## clean-local too.
clean-local: bench-clean
bench-clean:
	-rm -f bench/bench_text$(EXEEXT)
	-rm -rf bench/out
.PHONY: bench-clean

## `make check` builds every benchmark program too and runs each once on a
## tiny input (tests/bench_smoke.sh: that it runs, not how fast), so that
## `make bench` cannot break unseen.  The fragments add their programs to
## EXTRA_PROGRAMS; the variable is expanded when make reads the rule.
check_DATA = $(EXTRA_PROGRAMS)
TESTS += tests/bench_smoke.sh
EXTRA_DIST += tests/bench_smoke.sh
