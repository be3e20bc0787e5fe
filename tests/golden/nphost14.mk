## nphost14.mk: issue 14's "numpy is numpy" (lib/jax/np_host*.c): host
## ndarrays, numpy's functions, interop with JAX (included from golden.mk).
NPHOST14_GOLDEN = tests/golden/np_host_basics.jxr tests/golden/np_host_reduce.jxr \
	tests/golden/np_host_interop.jxr tests/golden/np_host_scalars.jxr tests/golden/np_host_errors.jxr
GOLDEN_TESTS += $(NPHOST14_GOLDEN)
EXTRA_DIST += tests/golden/nphost14.mk
TESTS += tests/np_host_npy.sh
EXTRA_DIST += tests/np_host_npy.sh
