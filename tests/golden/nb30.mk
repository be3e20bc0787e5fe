## nb30.mk: the code cells with stored outputs of JAX's documentation
## notebooks (docs/notebooks/*.ipynb) as shardrepl programs, included by
## golden.mk.  Skipped: timing (%timeit), plotting, data downloads,
## IPython magics and TPU/GPU cells.
GOLDEN_TESTS += \
	tests/golden/nb30_gotchas.jxr \
	tests/golden/nb30_vmapped_log_probs.jxr \
	tests/golden/nb30_autodiff_cookbook.jxr \
	tests/golden/nb30_custom_derivatives.jxr \
	tests/golden/nb30_check_grads.jxr
EXTRA_DIST += tests/golden/nb30.mk
## what the notebooks do that shardrepl does not do yet (golden-pending)
GOLDEN_PENDING += \
	tests/golden/pending/nb30_custom_pending.jxr
