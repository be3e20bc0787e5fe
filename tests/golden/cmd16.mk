## cmd16.mk: build fragment, included by tests/golden/golden.mk
## The colon commands' one argument grammar and :help (issue 16, part 6).
CMD16_GOLDEN = \
	tests/golden/command_grammar.jxr
GOLDEN_TESTS += $(CMD16_GOLDEN)
