## mpi.mk: build fragment, included by Makefile.am
## The Open MPI backend (lib/exec/comm_mpi.c, the only file that includes
## mpi.h, built in a library of its own with MPI_CFLAGS), the driver that
## runs shardrepl under mpirun and with --ranks (src/mpi_driver.c), and
## their tests and benchmarks.

noinst_LIBRARIES += lib/exec/libsrmpi.a
lib_exec_libsrmpi_a_CPPFLAGS = $(AM_CPPFLAGS) $(MPI_CFLAGS)
lib_exec_libsrmpi_a_SOURCES = lib/exec/comm_mpi.c lib/exec/comm_mpi.h

## libsrmpi.a uses libshardrepl.a, so it comes first and the library again
## after it.
SR_MPI_LIBS = lib/exec/libsrmpi.a lib/libshardrepl.a $(BLAS_LIBS) $(MPI_LIBS) -lpthread -lm

src_shardrepl_SOURCES += src/mpi_driver.c src/mpi_driver.h
src_shardrepl_LDADD += $(SR_MPI_LIBS)

## The backend against comm_local, byte for byte, under mpirun (comm.sh).
check_PROGRAMS += tests/mpi/check_comm_mpi
tests_mpi_check_comm_mpi_SOURCES = tests/mpi/check_comm_mpi.c
tests_mpi_check_comm_mpi_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_mpi_check_comm_mpi_LDADD = $(SR_MPI_LIBS) $(CHECK_LIBS)

## The MPI tests; each skips (77) without mpirun.  About a minute and a
## half on two cores: comm.sh (check_comm_mpi under mpirun -np 2 and 4),
## golden.sh (the golden scripts and examples under mpirun -np 2 and 4 and
## --ranks 2 with the device counts they set themselves, compared with one
## process byte for byte), devices.sh (the default device count of P
## ranks, jax_num_cpu_devices under MPI, :ranks and a mesh's ranks),
## faults.sh (an error on one rank, kill -9 of a rank, a worker, a
## controller).
SR_LONG_TESTS = tests/mpi/golden.sh
TESTS += tests/mpi/comm.sh tests/mpi/devices.sh tests/mpi/faults.sh
EXTRA_DIST += lib/exec/mpi.mk tests/mpi/comm.sh tests/mpi/golden.sh tests/mpi/golden_mpi.sh \
	tests/mpi/devices.sh tests/mpi/faults.sh tests/mpi/merged.sh

## Ctrl-C during long computations on a terminal, in one process and under
## --ranks 2 (interrupt_pty.sh; about 20 s).
TESTS += tests/interrupt_pty.sh
EXTRA_DIST += tests/interrupt_pty.sh tests/interrupt_pty.py

## `make bench` runs bench-mpi too: a 16 MiB all-reduce through the MPI
## backend against a raw MPI_Allreduce of the same bytes, side by side, at
## 2, 4 and 8 ranks (bench/mpi_allreduce), and the in-process backend's
## data movement against memcpy (bench/mpi_local).  Figures: bench/README.md.
EXTRA_PROGRAMS += bench/mpi_allreduce bench/mpi_local
bench_mpi_allreduce_SOURCES = bench/mpi_allreduce.c
bench_mpi_allreduce_LDADD = $(SR_MPI_LIBS)
bench_mpi_local_SOURCES = bench/mpi_local.c
bench_mpi_local_LDADD = $(SR_LIBS)

BENCH_MPI_RANKS = 2 4 8
BENCH_MPI_FLAGS = --oversubscribe --quiet --mca pml ob1 -x OPENBLAS_NUM_THREADS=1

bench: bench-mpi
bench-mpi: bench/mpi_allreduce$(EXEEXT) bench/mpi_local$(EXEEXT)
	@echo "  in-process backend (comm_local) against memcpy:"
	@bench/mpi_local -n 20 -m 16 -d 8
	@if test -z '$(MPIRUN)'; then echo "  (no mpirun: the MPI all-reduce is skipped)"; exit 0; fi; \
	root=; test "`id -u`" = 0 && root=--allow-run-as-root; \
	echo "  16 MiB all-reduce, shardrepl's MPI backend against MPI_Allreduce (median of 20):"; \
	for p in $(BENCH_MPI_RANKS); do \
	  OMPI_MCA_pml=ob1 '$(MPIRUN)' -np $$p $(BENCH_MPI_FLAGS) $$root bench/mpi_allreduce -n 20 -m 16 || exit 1; \
	done
.PHONY: bench-mpi
clean-local: bench-mpi-clean
bench-mpi-clean:
	-rm -f bench/mpi_allreduce$(EXEEXT) bench/mpi_local$(EXEEXT)
.PHONY: bench-mpi-clean
