## gemm17.mk: build fragment, included by tests/golden/golden.mk
## Issue 17 (speed): transposes folded into the dot_generals beside them
## (lib/exec/fold.c), and a scan's stacked result accumulated in place into
## the add after it (SrEvAccum, lib/exec/eval.h), checked against numpy
## with the kernels' counts; and XLA:CPU's arithmetic that these stand on:
## fused multiply-adds, a division by a scalar as a multiply by its
## reciprocal.
GEMM17_GOLDEN = \
	tests/golden/accum17.jxr \
	tests/golden/div18.jxr \
	tests/golden/fma17.jxr \
	tests/golden/fold17.jxr
GOLDEN_TESTS += $(GEMM17_GOLDEN)
