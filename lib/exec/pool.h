/* pool.h: the thread pool that runs the simulated devices of one process
 * in parallel.
 *
 * One pool per process, of sr_pool_size() threads counting the caller:
 * SHARDREPL_THREADS=N, else the CPUs this process may run on, divided
 * among the ranks of an MPI job on the same host.  The
 * workers start at the first batch that needs them.  A batch is n tasks
 * fn(arg, 0) .. fn(arg, n - 1), independent of each other; sr_pool_run
 * returns when all have run.  With one thread, one task, or from inside a
 * task, the tasks run inline in order, as if there were no pool.
 *
 * A task may compute into memory it was given and append diagnostics to
 * an SrDiags of its own; it must not allocate counted buffers, touch
 * reference counts of shared values, raise on the interpreter or call
 * back into the evaluator: what runs on the pool is kernels.  Which task
 * runs on which thread is not fixed, so a task's result must not depend
 * on it (each task computes its own outputs, in its own order), and the
 * results are then the same bits as with SHARDREPL_THREADS=1.
 *
 * OpenBLAS.  sr_pool_blas_one() makes OpenBLAS run one thread per
 * caller (openblas_set_num_threads(1)) until sr_pool_blas_restore(), so
 * that the pool's threads and OpenBLAS's do not fight over the same
 * cores (eval_par.c does so around every batch of devices).
 */
#ifndef SR_EXEC_POOL_H
#define SR_EXEC_POOL_H

#include <stdint.h>

#include "util/buf.h"

/* The threads a batch runs on, the caller included (at least 1). */
int sr_pool_size(void);

typedef void (*SrPoolFn)(void *arg, int i);
/* Runs fn(arg, i) for i < n, on the pool when it has more than one thread
   and n > 1, inline in order otherwise. */
void sr_pool_run(int n, SrPoolFn fn, void *arg);

/* Whether a batch would run on several threads now (not inside a task,
   more than one thread). */
int sr_pool_parallel(void);

/* What the pool has done in this process: batches run on several threads
   and the tasks they had, and how many of those the workers (not the
   caller) ran. */
typedef struct SrPoolStats {
  uint64_t batches, tasks, worker_tasks;
} SrPoolStats;
void sr_pool_stats(SrPoolStats *s);

/* "4 (SHARDREPL_THREADS=4)" or "2 (the CPUs this process may use)"
   (", over 4 ranks on this host" within it under mpirun);
   with stats, "; 3 batches of 12 device tasks so far" after it. */
void sr_pool_describe(SrBuf *b, int stats);

/* One OpenBLAS thread from now on; returns what to restore. */
int sr_pool_blas_one(void);
void sr_pool_blas_restore(int n);

#endif
