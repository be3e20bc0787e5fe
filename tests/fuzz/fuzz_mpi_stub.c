/* fuzz_mpi_stub.c: src/mpi_driver.c's four functions as they are without
 * MPI, for the statement-language fuzzers: src/repl.c calls
 * sr_mpi_driver_run, and the fuzzers never start MPI jobs. */
#include "mpi_driver.h"

void sr_mpi_driver_begin(int *argc, char **argv) {
  (void)argc;
  (void)argv;
}

int sr_mpi_driver_attach(SrInterp *I, int devices, int *status) {
  (void)I;
  (void)devices;
  (void)status;
  return 0;
}

int sr_mpi_driver_run(SrInterp *I, SrSrc *src, int keep_going) { return sr_interp_run(I, src, keep_going); }

int sr_mpi_driver_end(SrInterp *I, int status) {
  (void)I;
  return status;
}

void sr_mpi_driver_sigint(void) {}
