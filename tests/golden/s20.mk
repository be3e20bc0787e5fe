## s20.mk: lax.reshape with dimensions=, lazy generator expressions,
## Python control flow under an eager grad;
## included from golden.mk.
S20_GOLDEN = tests/golden/reshape20.jxr tests/golden/genexpr20.jxr tests/golden/control20.jxr
GOLDEN_TESTS += $(S20_GOLDEN)
EXTRA_DIST += tests/golden/s20.mk
