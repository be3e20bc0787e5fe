## exec.mk: build fragment, included by Makefile.am
## Execution: arrays and shards, the evaluator and its eval rules, local
## kernels (cblas for dots), redistribution, the communication interface
## and its in-process implementation; and the language's face of it (the
## hooks, :comm) and its built-ins of concrete arrays.


check_PROGRAMS += tests/unit/check_exec
tests_unit_check_exec_SOURCES = tests/unit/check_exec.c
tests_unit_check_exec_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_exec_LDADD = $(SR_LIBS) $(CHECK_LIBS)

## Golden scripts of execution (run by tests/golden.sh, see golden.mk).
EXEC_GOLDEN = \
	tests/golden/exec_seed002.jxr \
	tests/golden/exec_arrays.jxr \
	tests/golden/exec_manual.jxr \
	tests/golden/exec_control.jxr \
	tests/golden/exec_while_varying.jxr \
	tests/golden/exec_jaxpr.jxr \
	tests/golden/jaxpr_call_types.jxr \
	tests/golden/exec_visualize.jxr \
	tests/golden/exec_prims.jxr \
	tests/golden/exec_stack.jxr
TESTS += $(EXEC_GOLDEN)
EXTRA_DIST += $(EXEC_GOLDEN) $(EXEC_GOLDEN:.jxr=.out)

## Random sharded programs checked against numpy.
TESTS += tests/exec_numpy.sh
EXTRA_DIST += tests/exec_numpy.sh tests/exec_numpy.py

## `make bench` also times the evaluator (bench/bench_exec): overhead per
## equation, dot_general against raw cblas_sgemm, in-process data movement
## against memcpy, and the memory a long elementwise chain holds.
EXTRA_PROGRAMS += bench/bench_exec
bench_bench_exec_SOURCES = bench/bench_exec.c
bench_bench_exec_CPPFLAGS = $(AM_CPPFLAGS) $(BLAS_CFLAGS)
bench_bench_exec_LDADD = $(SR_LIBS)
bench: bench-exec
bench-exec: bench/bench_exec$(EXEEXT)
	@echo "  evaluator (bench/bench_exec):"
	@bench/bench_exec -n $(BENCH_RUNS)
.PHONY: bench-exec
clean-local: bench-exec-clean
bench-exec-clean:
	-rm -f bench/bench_exec$(EXEEXT)
.PHONY: bench-exec-clean
