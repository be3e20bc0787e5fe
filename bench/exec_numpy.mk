## exec_numpy.mk: build fragment, included by Makefile.am
##
## `make bench` also runs bench-numpy: shardrepl beside numpy, measured in
## the same run, taking turns (Debian's python3-numpy, PYTHON_NUMPY):
##  - bench/overhead_numpy.py: the overhead per equation of a 100,000-
##    equation elementwise chain on float32[4], through the evaluator
##    (`bench/bench_exec --chain`) and through the statement language (a
##    jaxpr value called on arrays), against numpy's per-operation time on
##    the same work;
##  - bench/train_step.py: the microbatch training step of the seed
##    "Autodiff and sharding", scaled up (bench/train_step.jxr), in one
##    process with 4 simulated devices and on 4 MPI ranks, against the same
##    step in numpy, with the results checked against numpy's;
##  - bench/transformer.py: a 2-layer transformer block, forward and
##    backward under jax.jit(jax.grad) (bench/transformer.jxr), against the
##    same gradients by hand in numpy, checked against numpy's;
##  - bench/eager_math.py: eager tanh, exp and add of 4,096 float32 and a
##    loop of 64x64 tanh(x @ m), with the vector math library and without
##    it (SHARDREPL_VMATH=0), against numpy.
## Skipped without python3 and numpy; the 4-rank run without mpirun.
## Figures: bench/README.md.

EXTRA_DIST += bench/overhead_numpy.py bench/train_step.py bench/train_step.jxr bench/eager_math.py
EXTRA_DIST += bench/transformer.py bench/transformer.jxr

bench: bench-numpy
bench-numpy: bench/bench_exec$(EXEEXT) src/shardrepl$(EXEEXT)
	@if test -z '$(PYTHON_NUMPY)'; then echo "  (no python3 with numpy: the comparisons with numpy are skipped)"; exit 0; fi; \
	echo "  interpreter overhead against numpy (bench/overhead_numpy.py):"; \
	'$(PYTHON_NUMPY)' $(srcdir)/bench/overhead_numpy.py --bench-exec bench/bench_exec$(EXEEXT) \
	  --shardrepl src/shardrepl$(EXEEXT) --out bench/out || exit 1; \
	echo "  eager elementwise math against numpy (bench/eager_math.py):"; \
	'$(PYTHON_NUMPY)' $(srcdir)/bench/eager_math.py --shardrepl src/shardrepl$(EXEEXT) || exit 1; \
	mpi=; if test -n '$(MPIRUN)'; then \
	  root=; test "`id -u`" = 0 && root=--allow-run-as-root; \
	  mpi="$(MPIRUN) $(BENCH_MPI_FLAGS) $$root"; \
	fi; \
	echo "  a training step end to end (bench/train_step.py):"; \
	OMPI_MCA_pml=ob1 '$(PYTHON_NUMPY)' $(srcdir)/bench/train_step.py --shardrepl src/shardrepl$(EXEEXT) \
	  --script $(srcdir)/bench/train_step.jxr $${mpi:+--mpirun "$$mpi"} --out bench/out || exit 1; \
	echo "  a transformer block under jit(grad) (bench/transformer.py):"; \
	'$(PYTHON_NUMPY)' $(srcdir)/bench/transformer.py --shardrepl src/shardrepl$(EXEEXT) \
	  --script $(srcdir)/bench/transformer.jxr --out bench/out
.PHONY: bench-numpy
