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
