## fuzz.mk: build fragment, included by Makefile.am
##
## tests/fuzz/check_fuzz (in `make check`): the parser and the printer on
## truncated, mutated and deeply nested texts, under AddressSanitizer and
## UndefinedBehaviorSanitizer.  It compiles the library sources the parser
## and the printer need itself, with the sanitizer flags (per-target
## CFLAGS), so the library everyone links stays unsanitized.
##
## `make fuzz` (not in `make check`): builds tests/fuzz/fuzz_parse with
## clang's libFuzzer and runs it for FUZZ_TIME seconds on the corpus.  See
## tests/fuzz/README.md.

## What parse.c and print.c pull in.  A new dependency of theirs belongs
## here too (the link of check_fuzz says so).  Not the rule families of
## lib/lax/: the parser and the printer use the primitive table's names and
## print rules only, which sr_prims_init fills without them.
FUZZ_LIB_SOURCES = \
	lib/util/mem.c lib/util/mem.h \
	lib/util/buf.c lib/util/buf.h \
	lib/util/intern.c lib/util/intern.h \
	lib/util/diag.c lib/util/diag.h \
	lib/util/pyfmt.c lib/util/pyfmt.h \
	lib/ir/dtype.c lib/ir/dtype.h \
	lib/ir/mesh.c lib/ir/mesh.h \
	lib/ir/type.c lib/ir/type.h \
	lib/ir/val.c lib/ir/val.h \
	lib/ir/jaxpr.c lib/ir/jaxpr.h \
	lib/prims/prim.c lib/prims/prim.h lib/prims/prim.def \
	lib/text/parse.c lib/text/parse.h \
	lib/text/doc.c lib/text/doc.h \
	lib/text/print.c lib/text/print.h \
	lib/text/print_val.c lib/text/print_val.h \
	lib/text/color.c lib/text/color.h lib/text/jaxpr_color.c

SANITIZE_FLAGS = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

check_PROGRAMS += tests/fuzz/check_fuzz
tests_fuzz_check_fuzz_SOURCES = tests/fuzz/check_fuzz.c tests/fuzz/fuzz_one.c \
	tests/fuzz/fuzz_one.h $(FUZZ_LIB_SOURCES)
## -O1: the sanitizers' own advice; it keeps the run short
tests_fuzz_check_fuzz_CFLAGS = $(AM_CFLAGS) $(SANITIZE_FLAGS) -O1
tests_fuzz_check_fuzz_LDFLAGS = $(SANITIZE_FLAGS)
tests_fuzz_check_fuzz_LDADD = -lm

EXTRA_DIST += tests/fuzz/README.md tests/fuzz/fuzz_parse.c \
	tests/fuzz/seeds/generated-small.jaxpr tests/fuzz/seeds/hoisted.jaxpr \
	tests/fuzz/seeds/shard-map.jaxpr tests/fuzz/seeds/sharded-types.jaxpr \
	tests/fuzz/regress/arena-zero-alloc.txt \
	tests/fuzz/regress/eqn-stack-null-offset.txt \
	tests/fuzz/regress/let-chain-300-deep.txt \
	tests/fuzz/regress/mutually-calling-lets.txt \
	tests/fuzz/regress/nul-in-dtype.txt \
	tests/fuzz/regress/self-calling-let.txt \
	tests/fuzz/regress/sharding-key-twice.txt \
	tests/fuzz/regress/value-over-newline.txt

## ---- make fuzz: libFuzzer ----

FUZZ_CC = clang
FUZZ_CFLAGS = -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_TIME = 300
## the corpus, found as tests/corpus.sh finds it
FUZZ_CORPUS = `for c in "$$SR_CORPUS" $(top_srcdir)/../shared/corpus $(top_srcdir)/../../shared/corpus /work/shared/corpus; do test -n "$$c" && test -f "$$c/INDEX.tsv" && { echo "$$c/jaxprs"; break; }; done`

tests/fuzz/fuzz_parse: $(srcdir)/tests/fuzz/fuzz_parse.c $(srcdir)/tests/fuzz/fuzz_one.c \
	$(FUZZ_LIB_SOURCES)
	@$(MKDIR_P) tests/fuzz
	srcs=; for f in $(FUZZ_LIB_SOURCES); do \
	  case $$f in *.c) srcs="$$srcs $(srcdir)/$$f" ;; esac; \
	done; \
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(DEFS) $(DEFAULT_INCLUDES) $(AM_CPPFLAGS) \
	  -o $@ $(srcdir)/tests/fuzz/fuzz_parse.c $(srcdir)/tests/fuzz/fuzz_one.c \
	  $$srcs -lm

## New inputs go to tests/fuzz/corpus-run (the first directory); findings
## to tests/fuzz/findings/.
fuzz: tests/fuzz/fuzz_parse
	@$(MKDIR_P) tests/fuzz/corpus-run tests/fuzz/findings
	tests/fuzz/fuzz_parse -max_total_time=$(FUZZ_TIME) -timeout=10 -rss_limit_mb=2048 \
	  -artifact_prefix=tests/fuzz/findings/ tests/fuzz/corpus-run \
	  $(srcdir)/tests/fuzz/seeds $(srcdir)/tests/fuzz/regress $(FUZZ_CORPUS)

clean-local: fuzz-clean
## findings are kept (but an empty folder goes)
fuzz-clean:
	-rm -f tests/fuzz/fuzz_parse
	-rm -rf tests/fuzz/corpus-run
	-rmdir tests/fuzz/findings 2>/dev/null || :

.PHONY: fuzz fuzz-clean
