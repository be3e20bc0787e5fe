/* eval_par.h: the devices of one process in parallel (eval_par.c).
 *
 * The per-device work of an equation -- each device's kernel in
 * sr_ev_map, the folds of the in-process collectives -- is a batch when
 * the equation runs on several devices and the work is big enough to pay
 * for waking threads (SR_EV_PAR_BYTES a device).  A batch runs as tasks
 * of the thread pool (pool.h) when it has more than one thread and this
 * process more than one distinct device's work, in device order
 * otherwise, and either way with one OpenBLAS thread a device (OpenBLAS
 * rounds a dot differently with several threads): what a batch computes
 * depends neither on SHARDREPL_THREADS nor on how the devices are spread
 * over MPI ranks, since the choice reads only the equation's types.  Work
 * too small for a batch runs inline, in device order, as before, with
 * OpenBLAS's own threads.  Each task writes only its own
 * outputs and computes them as the inline run would, so the results are
 * the same bits either way.  A task's errors go to a context and
 * diagnostics of its own; the batch reports the error of the first
 * device that failed, as the run in device order would have stopped at
 * it, with the same message.
 */
#ifndef SR_EXEC_EVAL_PAR_H
#define SR_EXEC_EVAL_PAR_H

#include <stddef.h>

#include "exec/eval.h"

/* The bytes a device must read and write before its work goes to the
   pool: below it, waking a thread costs about what the work does. */
#define SR_EV_PAR_BYTES ((size_t)64 << 10)

/* Runs fn(tcx, i, arg) for i < n: a batch when bytes (the work of one i)
   reaches SR_EV_PAR_BYTES.  On the pool each task has a context
   tcx that is cx but for diagnostics of its own; in turn, tcx is cx and
   the run stops at the first failure.  Returns 0, or -1 with the
   diagnostics of the lowest i that failed in cx->d. */
typedef int (*SrEvDevFn)(SrEvalCtx *tcx, int i, void *arg);
int sr_ev_for_each_device(SrEvalCtx *cx, int n, size_t bytes, SrEvDevFn fn, void *arg);

/* sr_ev_map's kernels collected, one task a distinct device, and run
   together with sr_ev_for_each_device. */
typedef struct SrMapTask {
  SrShardIO io;
  SrBuffer *in[16], *out[16];
} SrMapTask;
typedef struct SrMapBatch {
  SrMapTask *t;
  int n, cap;
  size_t bytes;   /* one task's bytes read and written */
} SrMapBatch;
/* Whether sr_ev_map should collect its kernels of nin inputs and nout
   outputs (obytes each, per device) into a batch: ndev, the devices of
   the result's mesh, is 2 or more, and the bytes reach SR_EV_PAR_BYTES;
   sets b->bytes. */
int sr_ev_map_parallel(SrMapBatch *b, int ndev, int flags, int nin, SrArray *const *in, int nout,
                       const size_t *obytes);
/* Adds a device's kernel call (io, with its buffers copied). */
void sr_ev_batch_add(SrMapBatch *b, const SrShardIO *io, int nin, int nout);
/* Runs the batch's kernels (when run is nonzero) and frees it. */
int sr_ev_batch_run(SrEvalCtx *cx, SrMapBatch *b, SrShardFn fn, int run);

#endif
