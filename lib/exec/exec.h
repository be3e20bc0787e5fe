/* exec.h: the execution backend as the rest of shardrepl sees it.
 *
 * LAYER.  exec/ is the evaluator engine and what it runs on: arrays and
 * their shards (array.h), the walk over a jaxpr's equations on concrete
 * arrays (eval.h, with the context eval rules share), the kernels
 * (kern.h), device-local layouts (layout.h), redistribution between
 * shardings and the collectives, in one process or over MPI (comm.h),
 * the ledger, numpy's text forms and .npy files, JAX's PRNG.  It holds no
 * primitive's eval rule: those are the family files' (lax/), reached
 * through the rows' eval slots.  It uses util/ ir/ prims/ text/ check/
 * core/ only.
 *
 * The per-interpreter state (I->exec) holds the communication backend
 * and the ledger of collectives.  The language reaches the evaluator
 * through the hooks of core/trace.h, which lib/cmd/hooks_exec.c installs
 * (sr_hooks_exec_init), with :comm and the built-ins of concrete arrays.
 */
#ifndef SR_EXEC_EXEC_H
#define SR_EXEC_EXEC_H

#include <stddef.h>

#include "exec/array.h"
#include "exec/comm.h"
#include "core/core.h"

/* One collective, as :comm shows it. */
typedef struct SrLedgerEntry {
  const char *kind;  /* "all-reduce", "all-gather", "reduce-scatter",
                        "all-to-all", "ppermute" (interned); host copies
                        for printing are not recorded */
  const char *axes;  /* "('X', 'Y')" (interned) */
  const char *dtype; /* element type name */
  size_t bytes;      /* bytes each device sends into one such collective */
  long count;        /* how many times it ran */
  const char *path;  /* where: "jit(step)/while/body/dot_general" (interned) */
} SrLedgerEntry;

typedef struct SrExec {
  SrComm *comm;          /* created (or resized) on first use, for
                            I->jax->num_devices */
  SrLedgerEntry *ledger; /* the collectives of the current (or, between
                            statements, the last) statement */
  int nledger, capledger;
} SrExec;

/* The interpreter's execution state (creating the local backend with
   I->jax->num_devices devices on first use, or resizing the backend
   sr_exec_set_comm installed to that count; either fixes the count). */
SrExec *sr_exec(SrInterp *I);
/* Replaces the communication backend (the MPI driver does this before the
   first statement); the state takes ownership.  Its device count becomes
   I->jax->num_devices, and its ranks I->jax->num_ranks, and until
   sr_exec() is first called jax_num_cpu_devices may still change the
   count (to a multiple of the ranks). */
void sr_exec_set_comm(SrInterp *I, SrComm *c);
/* Frees the state (the interpreter's own free calls it). */
void sr_exec_free(SrInterp *I);

/* A top-level statement begins: the ledger starts afresh. */
void sr_exec_stmt_begin(SrInterp *I);
/* Appends a collective to the ledger (merging it with an equal entry). */
void sr_exec_ledger_add(SrExec *ex, const char *kind, const char *axes, SrDtype dt, size_t bytes,
                        const char *path);
/* The ledger as :comm prints it: the collectives of the last statement. */
void sr_exec_ledger_str(SrInterp *I, SrBuf *out);

#endif
