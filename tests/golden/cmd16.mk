## cmd16.mk: build fragment, included by tests/golden/golden.mk
## The colon commands' one argument grammar and :help (issue 16, part 6).
CMD16_GOLDEN = \
	tests/golden/command_grammar.jxr \
	tests/golden/py_pow_dict.jxr
GOLDEN_TESTS += $(CMD16_GOLDEN)
## every built-in's :help example runs (lib/cmd/help_examples.def)
TESTS += tests/help_examples.sh
EXTRA_DIST += tests/help_examples.sh
