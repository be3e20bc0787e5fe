## mem17.mk: build fragment, included by tests/golden/golden.mk
## Issue 17 (memory): in-place reuse by last use and scan results made in
## their stacks never overwrite a value still in use (the goldens, whose
## expected values numpy computes: tests/mem17_numpy.sh runs the twins);
## np.load's ndarray adopts the buffer it read (tests/mem17_npload.sh).
MEM17_GOLDEN = \
	tests/golden/mem17_inplace.jxr \
	tests/golden/mem17_inplace_mesh.jxr
TESTS += $(MEM17_GOLDEN) tests/mem17_numpy.sh tests/mem17_npload.sh
EXTRA_DIST += $(MEM17_GOLDEN) $(MEM17_GOLDEN:.jxr=.out) tests/mem17_numpy.sh tests/mem17_npload.sh \
	tests/mem17/inplace_np.py tests/mem17/inplace_mesh_np.py
