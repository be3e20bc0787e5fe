/* exec.c: the execution backend's state (its communication backend) and
 * the ledger of collectives behind :comm.  The hooks it serves and the
 * :comm command are the language's (lib/cmd/hooks_exec.c). */
#include "exec/exec.h"

#include <stdlib.h>

#include "core/jaxstate.h"
#include "util/mem.h"

/* ---- state ---- */

SrExec *sr_exec(SrInterp *I) {
  SrExec *ex = I->exec;
  if (!ex) {
    ex = sr_xcalloc(1, sizeof *ex);
    I->exec = ex;
  }
  if (!ex->comm) {
    ex->comm = sr_comm_local_new(I->jax->num_devices);
  } else if (ex->comm->ndev != I->jax->num_devices) {
    /* an MPI backend, installed before the first statement and not used
       yet (the count is fixed once it is), takes the count
       jax_num_cpu_devices set since */
    sr_comm_resize(ex->comm, I->jax->num_devices);
  }
  I->jax->devices_used = 1;
  return ex;
}

void sr_exec_set_comm(SrInterp *I, SrComm *c) {
  SrExec *ex = I->exec;
  if (!ex) {
    ex = sr_xcalloc(1, sizeof *ex);
    I->exec = ex;
  }
  if (ex->comm) sr_comm_free(ex->comm);
  ex->comm = c;
  I->jax->num_devices = c->ndev;
  I->jax->num_ranks = c->nranks;
}

void sr_exec_free(SrInterp *I) {
  SrExec *ex = I->exec;
  if (!ex) return;
  sr_comm_free(ex->comm);
  free(ex->ledger);
  free(ex);
  I->exec = NULL;
}

/* ---- the ledger ---- */

void sr_exec_stmt_begin(SrInterp *I) {
  SrExec *ex = I->exec;
  if (ex) ex->nledger = 0;
}

void sr_exec_ledger_add(SrExec *ex, const char *kind, const char *axes, SrDtype dt, size_t bytes, const char *path) {
  const char *dn = sr_dtype_name(dt);
  for (int i = 0; i < ex->nledger; i++) {
    SrLedgerEntry *l = &ex->ledger[i];
    if (l->kind == kind && l->axes == axes && l->dtype == dn && l->bytes == bytes && l->path == path) {
      l->count++;
      return;
    }
  }
  if (ex->nledger == ex->capledger) {
    ex->capledger = ex->capledger ? 2 * ex->capledger : 16;
    ex->ledger = sr_xrealloc(ex->ledger, (size_t)ex->capledger * sizeof *ex->ledger);
  }
  ex->ledger[ex->nledger++] = (SrLedgerEntry){kind, axes, dn, bytes, 1, path};
}

void sr_exec_ledger_str(SrInterp *I, SrBuf *out) {
  SrExec *ex = I->exec;
  if (!ex || !ex->nledger) {
    sr_buf_puts(out, "no collectives\n");
    return;
  }
  sr_buf_printf(out, "%-15s %-12s %-9s %12s %6s  %s\n", "collective", "axes", "dtype", "bytes/device", "count", "where");
  for (int i = 0; i < ex->nledger; i++) {
    const SrLedgerEntry *l = &ex->ledger[i];
    sr_buf_printf(out, "%-15s %-12s %-9s %12zu %6ld  %s\n", l->kind, l->axes, l->dtype, l->bytes, l->count,
                  l->path && *l->path ? l->path : "-");
  }
}
