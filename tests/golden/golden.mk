## golden.mk: build fragment, included by Makefile.am
##
## Golden tests: each NAME.jxr below runs through tests/golden.sh, which
## compares what `shardrepl NAME.jxr` prints (stdout and stderr merged) with
## NAME.out -- through tests/golden_cmp: text and integers byte for byte,
## floats within their dtype's tolerance -- and checks the exit status its
## header names.  The examples run
## the same way.  `make golden-update` rewrites the .out files (in the
## source tree) for review with git diff; it is not part of `make check`.
## tests/golden/pending/ holds scripts whose .out is the right behaviour
## that shardrepl does not have yet: `make golden-pending` runs them.
##
## Also here: the language's unit test (check_lang), the terminal test of
## the REPL (repl_pty), the check that the docs name every command and
## option (doc_coverage), the CPython oracle of the Python-only scripts,
## and the manual.

GOLDEN_TESTS = \
	tests/golden/ad_linearize_tree.jxr \
	tests/golden/ad_transpose_literal.jxr \
	tests/golden/layout_misfit.jxr \
	tests/golden/memory_limits.jxr \
	tests/golden/array_shared_leaves.jxr \
	tests/golden/path_nul.jxr \
	tests/golden/py_int_range.jxr \
	tests/golden/numbers.jxr \
	tests/golden/strings.jxr \
	tests/golden/containers.jxr \
	tests/golden/functions.jxr \
	tests/golden/control.jxr \
	tests/golden/imports.jxr \
	tests/golden/sharding.jxr \
	tests/golden/sharding_errors.jxr \
	tests/golden/jaxprs.jxr \
	tests/golden/jaxpr_error.jxr \
	tests/golden/jaxpr_define.jxr \
	tests/golden/spec_checks.jxr \
	tests/golden/jit_cache.jxr \
	tests/golden/commands.jxr \
	tests/golden/prims.jxr \
	tests/golden/erfc.jxr \
	tests/golden/session.jxr \
	tests/golden/errors.jxr \
	tests/golden/stop.jxr \
	tests/golden/keep_going.jxr \
	tests/golden/parse_error.jxr \
	tests/golden/eval_args.jxr \
	tests/golden/interactive.jxr \
	tests/golden/devices.jxr \
	tests/golden/mesh_devices.jxr \
	tests/golden/py_numbers.jxr \
	tests/golden/py_format.jxr \
	tests/golden/py_statements.jxr \
	tests/golden/py_builtins.jxr \
	tests/golden/abs_objects.jxr \
	tests/golden/py_time.jxr \
	tests/golden/py_re.jxr \
	tests/golden/py_re_errors.jxr \
	tests/golden/py_class.jxr \
	tests/golden/py_class_errors.jxr \
	tests/golden/py_namedtuple.jxr \
	tests/golden/py_dataclass.jxr \
	tests/golden/class_pytree.jxr \
	tests/golden/class_errors.jxr \
	tests/golden/class_repl.jxr \
	tests/golden/py_imports.jxr \
	tests/golden/py_functools.jxr \
	tests/golden/py_cached_property.jxr \
	tests/golden/py_iter.jxr \
	tests/golden/partial_jax.jxr \
	tests/golden/py_itertools.jxr \
	tests/golden/py_math.jxr \
	tests/golden/py_collections.jxr \
	tests/golden/py_typing.jxr \
	tests/golden/py_sorted.jxr \
	tests/golden/py_percent.jxr \
	tests/golden/percent_jax.jxr \
	tests/golden/py_str_format.jxr \
	tests/golden/x64_python_scalars.jxr \
	tests/golden/py_int_edges.jxr \
	tests/golden/int_overflow.jxr \
	tests/golden/py_recursive.jxr \
	tests/golden/recursion_limits.jxr \
	tests/golden/py_try_finally.jxr \
	tests/golden/error_locations.jxr \
	tests/golden/statement_checks.jxr \
	tests/golden/py_scopes.jxr \
	tests/golden/nested_blocks.jxr \
	tests/golden/unexpected_indent.jxr \
	tests/golden/command_error_location.jxr \
	tests/golden/import_errors.jxr \
	tests/golden/python_messages.jxr \
	tests/golden/sharding_messages.jxr \
	tests/golden/syntax_error_input.jxr \
	tests/golden/custom_jvp.jxr \
	tests/golden/size_overflow.jxr \
	tests/golden/out_of_memory.jxr \
	tests/golden/random_split_num.jxr \
	tests/golden/random_rbg.jxr \
	tests/golden/integer_pow_wrap.jxr \
	tests/golden/float_to_int.jxr \
	tests/golden/print_file.jxr \
	tests/golden/nested_jit_ad.jxr \
	tests/golden/cycles.jxr \
	tests/golden/decorator_syntax_error.jxr \
	tests/golden/argnums_range.jxr \
	tests/golden/mesh_size_overflow.jxr \
	tests/golden/display_syntax.jxr \
	tests/golden/load_recursion.jxr \
	tests/golden/rev_dimensions.jxr \
	tests/golden/collective_repeated_axis.jxr \
	tests/golden/ppermute_unique.jxr \
	tests/golden/trace_depth.jxr \
	tests/golden/reduce_precision.jxr \
	tests/golden/repl_line_errors.jxr \
	tests/golden/origin_msg.jxr \
	tests/golden/origin_msg_lines.jxr \
	examples/tour.jxr

GOLDEN_PENDING =

include $(top_srcdir)/tests/golden/jnp15.mk
include $(top_srcdir)/tests/golden/shard15b.mk
include $(top_srcdir)/tests/golden/apiA.mk
include $(top_srcdir)/tests/golden/apiC.mk

## files the scripts :load
GOLDEN_LOADED = tests/golden/data/loaded.jxr tests/golden/data/load_error.jxr \
	tests/golden/data/load_self.jxr tests/golden/data/load_cycle_a.jxr tests/golden/data/load_cycle_b.jxr

TEST_EXTENSIONS += .jxr
JXR_LOG_COMPILER = $(SHELL) $(top_srcdir)/tests/golden.sh

## The comparison golden.sh and vjp_io.sh use; run without arguments (as
## make check runs it) it tests itself, and golden_selftest.sh shows that
## golden.sh fails on a wrong value, word or integer.
check_PROGRAMS += tests/golden_cmp
tests_golden_cmp_SOURCES = tests/golden_cmp.c
tests_golden_cmp_LDADD = -lm
AM_TESTS_ENVIRONMENT += GOLDEN_CMP='$(abs_top_builddir)/tests/golden_cmp'; export GOLDEN_CMP;
TESTS += tests/golden_selftest.sh
EXTRA_DIST += tests/golden_selftest.sh

TESTS += $(GOLDEN_TESTS) tests/golden/py_oracle.sh tests/repl_pty.sh tests/doc_coverage.sh \
	tests/deep_lets.sh

## --prims prints the rule matrix of :prims (tests/golden/prims.jxr)
TESTS += tests/prims_option.sh
EXTRA_DIST += tests/prims_option.sh

## a killed batch job keeps what it printed
TESTS += tests/print_killed.sh
EXTRA_DIST += tests/print_killed.sh

## structures grown one small allocation at a time are MemoryError, under ulimit -v
TESTS += tests/memory_growth.sh
EXTRA_DIST += tests/memory_growth.sh

EXTRA_DIST += tests/golden.sh tests/golden/golden.mk tests/golden/shard15b.mk \
	tests/golden/py_oracle.sh tests/golden/py_oracle.py \
	$(GOLDEN_TESTS) $(GOLDEN_TESTS:.jxr=.out) \
	$(GOLDEN_PENDING) $(GOLDEN_PENDING:.jxr=.out) $(GOLDEN_LOADED) \
	tests/repl_pty.sh tests/repl_pty.py tests/doc_coverage.sh \
	tests/deep_lets.sh tests/deep_lets.out

## The unit test of the statement language's C API
check_PROGRAMS += tests/unit/check_lang
tests_unit_check_lang_SOURCES = tests/unit/check_lang.c
tests_unit_check_lang_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_lang_LDADD = $(SR_LIBS) $(CHECK_LIBS)

## The manual
dist_man_MANS = man/shardrepl.1

## Rewrites the expected output of every golden test (or of those named in
## GOLDEN=...) from what the program prints now.  Review with `git diff`.
golden-update: src/shardrepl$(EXEEXT)
	@list='$(GOLDEN)'; test -n "$$list" || list='$(GOLDEN_TESTS)'; \
	for t in $$list; do \
	  SHARDREPL='$(abs_top_builddir)/src/shardrepl' \
	    $(SHELL) $(top_srcdir)/tests/golden.sh --update $(top_srcdir)/$$t || exit 1; \
	done

## Runs the pending scripts and says which pass now (they can then move
## into GOLDEN_TESTS); never fails.
golden-pending: src/shardrepl$(EXEEXT)
	@pass=0; fail=0; for t in $(GOLDEN_PENDING); do \
	  if SHARDREPL='$(abs_top_builddir)/src/shardrepl' \
	       $(SHELL) $(top_srcdir)/tests/golden.sh $(top_srcdir)/$$t > golden-pending.tmp 2>&1; then \
	    echo "PASS $$t (move it into GOLDEN_TESTS)"; pass=`expr $$pass + 1`; \
	  else \
	    cat golden-pending.tmp; fail=`expr $$fail + 1`; \
	  fi; \
	done; rm -f golden-pending.tmp; \
	echo "golden-pending: $$pass pass, $$fail still fail"

.PHONY: golden-update golden-pending

## Runs the golden scripts, the examples and the numeric tests again under
## another OpenBLAS kernel, so that no expected output holds one kernel's
## rounding (.ci/run runs it after make check).  The kernel is the first of
## CHECK_KERNELS that the library takes from OPENBLAS_CORETYPE (a
## DYNAMIC_ARCH build; --version names the kernel in use), that is not
## this CPU's own and that runs here; with none it says so and passes.
CHECK_KERNELS = Sandybridge Prescott
CHECK_KERNEL_TESTS = tests/vjp_io.sh tests/exec_numpy.sh tests/golden_selftest.sh \
	tests/unit/check_exec tests/unit/check_ad tests/unit/check_vjp
check-kernel: src/shardrepl$(EXEEXT)
	@own=`src/shardrepl --version | sed -n 's/^BLAS: //p'`; use=; \
	for k in $(CHECK_KERNELS); do \
	  case " `OPENBLAS_CORETYPE=$$k src/shardrepl --version` " in *" $$k "*) ;; *) echo "check-kernel: $$k: the BLAS library ($$own) does not take OPENBLAS_CORETYPE"; continue ;; esac; \
	  case " $$own " in *" $$k "*) echo "check-kernel: $$k is this CPU's own kernel"; continue ;; esac; \
	  OPENBLAS_CORETYPE=$$k src/shardrepl -e 'import jax.numpy as jnp' -e 'jnp.ones((64, 64)) @ jnp.ones((64, 64))' \
	    > /dev/null 2>&1 || { echo "check-kernel: $$k does not run on this CPU"; continue; }; \
	  use=$$k; break; \
	done; \
	if test -z "$$use"; then echo "check-kernel: no other OpenBLAS kernel to run the tests under"; exit 0; fi; \
	tests=; for t in $(TESTS); do case $$t in *.jxr) tests="$$tests $$t" ;; esac; done; \
	echo "check-kernel: the golden and numeric tests under OPENBLAS_CORETYPE=$$use (this CPU's: $$own)"; \
	OPENBLAS_CORETYPE=$$use $(MAKE) $(AM_MAKEFLAGS) check TESTS="$$tests $(CHECK_KERNEL_TESTS)"

.PHONY: check-kernel

## jax.nn, jax.nn.initializers and jax.scipy.special (nn.c,
## nn_initializers.c, scipy_special.c): the jaxprs, the initializers, and
## the values that nn_oracle.sh compares with numpy's and math's.
NN_GOLDEN = tests/golden/nn_jaxprs.jxr tests/golden/nn_values.jxr tests/golden/nn_initializers.jxr
GOLDEN_TESTS += $(NN_GOLDEN)
TESTS += tests/golden/nn_oracle.sh
EXTRA_DIST += tests/golden/nn_oracle.sh tests/golden/nn_values_oracle.py

include $(top_srcdir)/tests/golden/index15.mk
include $(top_srcdir)/tests/golden/shard15a.mk
include $(top_srcdir)/tests/golden/debug15.mk
include $(top_srcdir)/tests/golden/debug_trace.mk
include $(top_srcdir)/tests/golden/experimental_api.mk
include $(top_srcdir)/tests/golden/gradcheck15.mk
include $(top_srcdir)/tests/golden/device_put_trace.mk
include $(top_srcdir)/tests/golden/remat_policies.mk
include $(top_srcdir)/tests/golden/remat15.mk
include $(top_srcdir)/tests/golden/einsum15.mk
include $(top_srcdir)/tests/golden/random15.mk
include $(top_srcdir)/tests/golden/cmd16.mk
include $(top_srcdir)/tests/golden/speed17.mk
include $(top_srcdir)/tests/golden/gemm17.mk
include $(top_srcdir)/tests/pict/pict16.mk
include $(top_srcdir)/tests/golden/vmap13.mk
include $(top_srcdir)/tests/golden/pyscript14.mk
include $(top_srcdir)/tests/golden/apiB.mk
include $(top_srcdir)/tests/golden/search15.mk
include $(top_srcdir)/tests/golden/pyintro14.mk
include $(top_srcdir)/tests/golden/nphost14.mk
include $(top_srcdir)/tests/golden/jax15a.mk
include $(top_srcdir)/tests/golden/main15.mk
include $(top_srcdir)/tests/golden/linalg15.mk
include $(top_srcdir)/tests/golden/mem17.mk
include $(top_srcdir)/tests/golden/apiD.mk
include $(top_srcdir)/tests/golden/main16.mk
include $(top_srcdir)/tests/golden/linalg16.mk
include $(top_srcdir)/tests/golden/misc16.mk
include $(top_srcdir)/tests/golden/index16.mk
include $(top_srcdir)/tests/golden/eager17.mk
include $(top_srcdir)/tests/golden/random18.mk
include $(top_srcdir)/tests/golden/api18.mk
include $(top_srcdir)/tests/golden/special18.mk
include $(top_srcdir)/tests/golden/api18b.mk
include $(top_srcdir)/tests/golden/doc18.mk
include $(top_srcdir)/tests/golden/solve18.mk
include $(top_srcdir)/tests/golden/cond18.mk
include $(top_srcdir)/tests/golden/linalg18.mk
include $(top_srcdir)/tests/golden/pad19.mk
include $(top_srcdir)/tests/golden/sit19.mk
include $(top_srcdir)/tests/golden/signal19.mk
include $(top_srcdir)/tests/golden/smap19.mk
include $(top_srcdir)/tests/golden/api19.mk
include $(top_srcdir)/tests/golden/stats19.mk
include $(top_srcdir)/tests/golden/s20.mk
include $(top_srcdir)/tests/golden/s21.mk
include $(top_srcdir)/tests/golden/fft20.mk
include $(top_srcdir)/tests/golden/sit24.mk
include $(top_srcdir)/tests/golden/smap26.mk
include $(top_srcdir)/tests/golden/sit22.mk
include $(top_srcdir)/tests/golden/sit25.mk
include $(top_srcdir)/tests/golden/sit23.mk
include $(top_srcdir)/tests/golden/smap27.mk
include $(top_srcdir)/tests/golden/remat28.mk
include $(top_srcdir)/tests/golden/cust28.mk
include $(top_srcdir)/tests/golden/bat28.mk
include $(top_srcdir)/tests/golden/cf28.mk
include $(top_srcdir)/tests/golden/jit28.mk
include $(top_srcdir)/tests/golden/api28.mk
include $(top_srcdir)/tests/golden/api29.mk
include $(top_srcdir)/tests/golden/pjit30.mk
include $(top_srcdir)/tests/golden/rnd30.mk
include $(top_srcdir)/tests/golden/dt30.mk
include $(top_srcdir)/tests/golden/tree30.mk
include $(top_srcdir)/tests/golden/nb30.mk
include $(top_srcdir)/tests/golden/arr30.mk
include $(top_srcdir)/tests/golden/apjit30.mk
include $(top_srcdir)/tests/golden/sal30.mk
include $(top_srcdir)/tests/golden/lad30.mk
include $(top_srcdir)/tests/golden/api32.mk
include $(top_srcdir)/tests/golden/dbg32.mk
include $(top_srcdir)/tests/golden/lax32.mk
include $(top_srcdir)/tests/golden/jnp32.mk
include $(top_srcdir)/tests/golden/ref32.mk
include $(top_srcdir)/tests/golden/cb32.mk
include $(top_srcdir)/tests/golden/docA32.mk
include $(top_srcdir)/tests/golden/docB32.mk
include $(top_srcdir)/tests/golden/rem32.mk
include $(top_srcdir)/tests/golden/idx32.mk
include $(top_srcdir)/tests/golden/docC32.mk
include $(top_srcdir)/tests/golden/np32.mk
