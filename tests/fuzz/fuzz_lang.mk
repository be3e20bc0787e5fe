## fuzz_lang.mk: build fragment, included (last) by Makefile.am
##
## The statement language under fuzzing (tests/fuzz/README.md, "The
## statement language"):
##
## tests/fuzz/check_fuzz_lang (in `make check`): the regression inputs of
## tests/fuzz/regress-lang/ and a few thousand seeded mutants of the golden
## scripts and examples, each run in a child process (file mode and REPL
## mode, with a time and a memory limit), under AddressSanitizer and
## UndefinedBehaviorSanitizer.  Like check_fuzz it compiles what it needs
## itself with the sanitizer flags -- here the whole library, as the
## check-only tests/fuzz/libshardrepl-san.a -- so the library everyone
## links stays unsanitized.
##
## `make fuzz-lang` (not in `make check`): builds tests/fuzz/fuzz_lang with
## clang's libFuzzer and runs it for FUZZ_TIME seconds.  `make
## fuzz-lang-mutants` runs check_fuzz_lang on FUZZ_LANG_MUTANTS mutants
## from a random seed instead (gcc is enough).

check_LIBRARIES = tests/fuzz/libshardrepl-san.a
tests_fuzz_libshardrepl_san_a_SOURCES = $(lib_libshardrepl_a_SOURCES)
tests_fuzz_libshardrepl_san_a_CPPFLAGS = $(lib_libshardrepl_a_CPPFLAGS)
tests_fuzz_libshardrepl_san_a_CFLAGS = $(AM_CFLAGS) $(SANITIZE_FLAGS) -O1

## The driver of one input (also the libFuzzer target's), the mutator, and
## the REPL of src/ (REPL mode reads stdin through it, as shardrepl does).
FUZZ_LANG_SOURCES = tests/fuzz/fuzz_lang_one.c tests/fuzz/fuzz_lang_one.h \
	tests/fuzz/lang_mutate.c tests/fuzz/lang_mutate.h \
	tests/fuzz/fuzz_mpi_stub.c src/repl.c src/repl.h src/mpi_driver.h

check_PROGRAMS += tests/fuzz/check_fuzz_lang
tests_fuzz_check_fuzz_lang_SOURCES = tests/fuzz/check_fuzz_lang.c $(FUZZ_LANG_SOURCES)
tests_fuzz_check_fuzz_lang_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src -I$(top_srcdir)/tests/fuzz
tests_fuzz_check_fuzz_lang_CFLAGS = $(AM_CFLAGS) $(SANITIZE_FLAGS) -O1
tests_fuzz_check_fuzz_lang_LDFLAGS = $(SANITIZE_FLAGS)
tests_fuzz_check_fuzz_lang_LDADD = tests/fuzz/libshardrepl-san.a $(BLAS_LIBS) -lm

## Every input that once crashed shardrepl (see README.md), and the
## golden tests of their fixes.
FUZZ_LANG_REGRESS = \
	tests/fuzz/regress-lang/unsized-mesh-dot-general.jxr \
	tests/fuzz/regress-lang/grad-argnums-int64-max.jxr \
	tests/fuzz/regress-lang/custom-vjp-closure-dead-tracer.jxr \
	tests/fuzz/regress-lang/vmap-in-axes-int64-max.jxr \
	tests/fuzz/regress-lang/percent-star-width.jxr \
	tests/fuzz/regress-lang/unsized-mesh-jvp-reshard.jxr \
	tests/fuzz/regress-lang/einsum-ellipsis-name-set.jxr \
	tests/fuzz/regress-lang/fold-in-empty-batch.jxr \
	tests/fuzz/regress-lang/split-no-parts.jxr \
	tests/fuzz/regress-lang/np-random-integers-huge.jxr \
	tests/fuzz/regress-lang/array-shared-empty-lists.jxr \
	tests/fuzz/regress-lang/reduce-window-dilation-overflow.jxr
FUZZ_LANG_GOLDEN = \
	tests/golden/unsized_mesh_run.jxr
GOLDEN_TESTS += $(FUZZ_LANG_GOLDEN)

EXTRA_DIST += tests/fuzz/fuzz_lang.mk tests/fuzz/fuzz_lang.c tests/fuzz/lang-known.txt \
	tests/fuzz/lang.dict $(FUZZ_LANG_REGRESS)

## ---- make fuzz-lang: libFuzzer ----

FUZZ_LANG_FLAGS = -max_total_time=$(FUZZ_TIME) -timeout=60 -rss_limit_mb=2048 \
	-malloc_limit_mb=2048 -close_fd_mask=3

## One clang command over every source, as for fuzz_parse.
tests/fuzz/fuzz_lang: $(srcdir)/tests/fuzz/fuzz_lang.c $(FUZZ_LANG_SOURCES) \
	$(lib_libshardrepl_a_SOURCES)
	@$(MKDIR_P) tests/fuzz
	srcs=; for f in $(lib_libshardrepl_a_SOURCES) $(FUZZ_LANG_SOURCES); do \
	  case $$f in *.c) srcs="$$srcs $(srcdir)/$$f" ;; esac; \
	done; \
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(DEFS) $(DEFAULT_INCLUDES) $(AM_CPPFLAGS) $(BLAS_CFLAGS) \
	  -I$(srcdir)/src -I$(srcdir)/tests/fuzz \
	  -o $@ $(srcdir)/tests/fuzz/fuzz_lang.c $$srcs $(BLAS_LIBS) $(LIBS) -lm

## New inputs go to tests/fuzz/corpus-lang (the first directory), findings
## to tests/fuzz/findings-lang/.  The seed corpus: the golden scripts, the
## examples and the regression inputs.  The target runs its inputs in a
## scratch directory of its own, so the paths here are absolute.
fuzz-lang: tests/fuzz/fuzz_lang
	@$(MKDIR_P) tests/fuzz/corpus-lang tests/fuzz/findings-lang tests/fuzz/lang-seeds
	@for f in $(srcdir)/tests/golden/*.jxr $(srcdir)/examples/*.jxr $(srcdir)/examples/*/*.jxr \
	    $(srcdir)/tests/fuzz/regress-lang/*.jxr; do \
	  test -f "$$f" && cp "$$f" tests/fuzz/lang-seeds/`echo "$$f" | sed 's|^$(srcdir)/||; s|/|_|g'`; \
	done; :
	OPENBLAS_NUM_THREADS=1 SR_FUZZ_SEEDS="$(abs_srcdir)" nice tests/fuzz/fuzz_lang $(FUZZ_LANG_FLAGS) \
	  -dict=$(abs_srcdir)/tests/fuzz/lang.dict -artifact_prefix=$(abs_builddir)/tests/fuzz/findings-lang/ \
	  $(abs_builddir)/tests/fuzz/corpus-lang $(abs_builddir)/tests/fuzz/lang-seeds

## The mutator of check_fuzz_lang for longer, from a random seed; every
## finding is kept in tests/fuzz/findings-lang/.
FUZZ_LANG_MUTANTS = 100000
fuzz-lang-mutants: tests/fuzz/check_fuzz_lang$(EXEEXT)
	@$(MKDIR_P) tests/fuzz/findings-lang
	top_srcdir='$(top_srcdir)' nice tests/fuzz/check_fuzz_lang -n $(FUZZ_LANG_MUTANTS) \
	  -s `od -An -N4 -tu4 /dev/urandom | tr -d ' '` -k -o tests/fuzz/findings-lang

clean-local: fuzz-lang-clean
## findings are kept (but an empty folder goes)
fuzz-lang-clean:
	-rm -f tests/fuzz/fuzz_lang
	-rm -rf tests/fuzz/corpus-lang tests/fuzz/lang-seeds
	-rmdir tests/fuzz/findings-lang 2>/dev/null || :

.PHONY: fuzz-lang fuzz-lang-mutants fuzz-lang-clean
