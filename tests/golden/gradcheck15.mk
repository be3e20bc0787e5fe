## gradcheck15.mk: build fragment, included by tests/golden/golden.mk
## :gradcheck of issue 15's functions over several shardings (run under MPI
## by tests/mpi/golden.sh like every golden script).
GRADCHECK15_GOLDEN = \
	tests/golden/gradcheck15.jxr
TESTS += $(GRADCHECK15_GOLDEN)
EXTRA_DIST += $(GRADCHECK15_GOLDEN) $(GRADCHECK15_GOLDEN:.jxr=.out)
