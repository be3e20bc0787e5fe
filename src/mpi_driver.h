/* mpi_driver.h: running shardrepl as an MPI job -- under mpirun, or as the
 * controller of worker ranks it starts itself (--ranks P), or as one of
 * those workers (--worker, internal).
 *
 * Rank 0 is the session: it parses the options, reads the files, -e
 * statements and the terminal, and prints.  Before it runs a source it
 * sends it to the other ranks, which run the same statements silently; the
 * MPI backend (lib/exec/comm_mpi.h) makes every rank agree on each
 * statement's outcome, so an error on any rank is reported once by rank 0
 * and every rank goes on to the next input together.  The exit status is
 * rank 0's, on every rank.
 *
 * main.c calls the four functions below; without MPI they do nothing.
 */
#ifndef SR_SRC_MPI_DRIVER_H
#define SR_SRC_MPI_DRIVER_H

#include "py/interp.h"

/* Before the options are parsed: takes --ranks P and --worker out of argv
   and notes how to start.  Exits with status 2 on a misuse of them. */
void sr_mpi_driver_begin(int *argc, char **argv);
/* The P of --ranks P, or 0. */
int sr_mpi_driver_ranks(void);
/* After the interpreter is made and configured (devices: --devices N, 0
   when absent): on an MPI job, starts MPI, installs the MPI backend with N
   devices (by default 8, or the smallest multiple of the ranks that is at
   least 8; jax_num_cpu_devices may change the count until a device is
   used) and the agreement on statements.  On
   rank 0 and without MPI it returns 0.  On the other ranks it runs what
   rank 0 sends until the session ends, sets *status and returns 1; it also
   returns 1 (with *status 2) when the job cannot start. */
int sr_mpi_driver_attach(SrInterp *I, int devices, int *status);
/* sr_interp_run, and on an MPI job rank 0 first sends the source to the
   other ranks. */
int sr_mpi_driver_run(SrInterp *I, SrSrc *src, int keep_going);
/* From rank 0's SIGINT handler (async-signal-safe): while a source runs,
   passes the SIGINT on to the worker ranks of --ranks, which are not in
   the terminal's process group, so that every rank stops (see
   sr_comm_mpi_interrupt).  Does nothing otherwise. */
void sr_mpi_driver_sigint(void);
/* Ends the session (rank 0 tells the others, with its exit status, which
   becomes theirs).  Returns the status to exit with. */
int sr_mpi_driver_end(SrInterp *I, int status);

#endif
