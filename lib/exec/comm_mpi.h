/* comm_mpi.h: the Open MPI communication backend, and the job around it.
 *
 * comm_mpi.c is the only file of shardrepl that includes mpi.h; this
 * header does not, so the driver (src/mpi_driver.c), the tests and the
 * benchmarks use MPI through the functions below alone.
 *
 * The job.  Ranks come from one of three starts:
 *  - SR_MPI_LAUNCHED: `mpirun -np P shardrepl ...`; the job is
 *    MPI_COMM_WORLD.
 *  - SR_MPI_CONTROLLER: `shardrepl --ranks P`; this process (a singleton)
 *    becomes rank 0 and starts P-1 workers with MPI_Comm_spawn; the job is
 *    the merged parent-and-children communicator.
 *  - SR_MPI_WORKER: a process that controller started (`--worker`); it
 *    merges with its parent as ranks 1..P-1.
 * Rank 0 is the one that reads input and prints.  Every rank of the job
 * watches the others on its host: when one dies (kill -9), the first live
 * rank prints a message and every survivor exits with status 1, and a
 * controller kills the workers it started; a worker whose controller has
 * gone exits too.  Nobody waits in a collective for a dead peer.
 *
 * The backend (sr_comm_mpi_new) implements comm.h over the job:
 * byte-identical to comm_local.c, reduction order included.  Failures are
 * agreed: each operation first runs one small all-reduce over the job that
 * compares what every rank is about to do, so a rank whose statement
 * failed (and that is waiting in sr_comm_mpi_stmt_end) or that took
 * another path makes the operation fail on every rank instead of hanging.
 * After a failure the operations of the statement fail at once without
 * communicating, and `any` answers -1.
 */
#ifndef SR_EXEC_COMM_MPI_H
#define SR_EXEC_COMM_MPI_H

#include <stddef.h>

#include "exec/comm.h"
#include "util/diag.h"

typedef enum { SR_MPI_LAUNCHED = 1, SR_MPI_CONTROLLER, SR_MPI_WORKER } SrMpiMode;

/* Was this process started by mpirun (Open MPI's environment says so)? */
int sr_mpi_under_mpirun(void);

/* Starts the job (MPI_Init, and for a controller the spawn of nranks-1
   workers running `exe --worker`; exe NULL: this program).  Returns 0, or
   -1 with a diagnostic.  The MPI library is finalized at exit. */
int sr_mpi_start(SrMpiMode mode, int nranks, const char *exe, SrDiags *d);
/* Is a job running?  This rank and the number of ranks (0 and 1 without a
   job). */
int sr_mpi_active(void);
int sr_mpi_rank(void);
int sr_mpi_size(void);
/* MPI_Finalize, once (later calls do nothing). */
void sr_mpi_finish(void);
/* Called before a fatal exit (a peer died), from any thread: restore the
   terminal and the like.  Must be async-signal-safe. */
void sr_mpi_set_fatal_hook(void (*fn)(void));
/* The process id and host name of a rank (for :ranks). */
void sr_mpi_peer(int rank, long *pid, const char **host);

/* Broadcasts bytes from rank 0: every rank gets a new malloc'ed copy of
   rank 0's (data, len) (NUL-terminated; *len set).  The other ranks wait
   without spinning, so an idle REPL costs no CPU. */
char *sr_mpi_bcast_msg(const char *data, size_t *len);

/* The backend over the job, for ndev devices (ndev >= the number of
   ranks): rank r holds devices [r*ndev/P, (r+1)*ndev/P).  Collective. */
SrComm *sr_comm_mpi_new(int ndev);
/* Ends a statement of a source run at depth `level` (1: a top-level
   statement; 2: one of a script that a :load statement runs, ...): all
   ranks agree whether it failed (failed here, or an operation saw another
   rank fail).  When it did, d holds on every rank the diagnostics of the
   lowest rank whose own error it was (copied over the job), so rank 0 can
   report them and the exit status is the same everywhere.  Returns 0 (it
   did not fail) or 1 (it failed); or 2 when some rank is at the end of an
   enclosing statement instead (its :load failed there): this rank must
   leave the source it runs (d is emptied) and agree at that statement's
   end.  Collective. */
int sr_comm_mpi_stmt_end(SrComm *c, int level, int failed, SrDiags *d);
/* Interrupts (Ctrl-C).  Each rank counts the interrupt points it passes in
   a statement (*ticks: every statement, expression, equation and loop
   iteration).  A rank whose SIGINT has come (*pending) calls
   sr_comm_mpi_interrupt at its next point: with the others, at whatever
   they are at then (their own next point, an operation, the statement's
   end), it agrees on the first point every rank can still stop at -- the
   latest of theirs -- and *stop_at is that point on every rank.  Each rank
   stops there (ranks that took the same path stop at the same place; an
   operation that some rank reached is completed first); a rank whose
   statement ends before it just ends it.  Nothing waits on a rank that
   has no interrupt: it takes part at its next operation or statement end.
   sr_comm_mpi_watch_interrupts gives c the counters (the interpreter's). */
void sr_comm_mpi_watch_interrupts(SrComm *c, volatile int *pending, uint64_t *ticks, uint64_t *stop_at);
/* At an interrupt point with *pending set or a stop agreed: agrees where to
   stop if no stop is agreed yet.  Returns 1 to stop here (and forgets the
   stop), 0 to go on.  Collective (with whatever the others are at). */
int sr_comm_mpi_interrupt(SrComm *c);
/* The backend of c, if it is this one (else NULL-safe 0). */
int sr_comm_is_mpi(const SrComm *c);

/* For the benchmarks: MPI_Allreduce (sum) of n floats in place over the
   job, MPI_Barrier, and MPI_Wtime. */
void sr_mpi_raw_allreduce_f32(float *buf, size_t n);
/* The same from in to out (in stays as it was). */
void sr_mpi_raw_allreduce_f32_to(const float *in, float *out, size_t n);
void sr_mpi_barrier(void);
double sr_mpi_wtime(void);

#endif
