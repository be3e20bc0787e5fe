/* cell.h: running one notebook cell with its outputs captured, for the
 * Jupyter kernel (kernel.c) and --notebook (notebook.c).
 *
 * A cell runs as one source, as a notebook runs it: it stops at its first
 * error, and a bare expression echoes only as its last statement (the
 * value's repr is the cell's result, apart from what it printed).
 */
#ifndef SR_SRC_CELL_H
#define SR_SRC_CELL_H

#include "py/interp.h"
#include "util/buf.h"

typedef struct SrCellOut {
  SrBuf out;     /* what print() and the colon commands wrote */
  SrBuf warn;    /* the warnings it gave (stderr) */
  SrBuf result;  /* the repr of the last bare expression's value, or empty */
  SrBuf err;     /* the located error, rendered as the terminal shows it */
  char *ename;   /* its exception type ("ValueError"), or NULL */
  char *evalue;  /* its message, or NULL */
  int failed;    /* the cell stopped at an error */
  int kind;      /* the SrErrKind of that error */
} SrCellOut;

#define SR_CELL_OUT_INIT {SR_BUF_INIT, SR_BUF_INIT, SR_BUF_INIT, SR_BUF_INIT, NULL, NULL, 0, 0}

/* Runs src in I's session (on every rank under MPI), filling o, which the
   caller frees with sr_cell_out_free.  Returns o->failed. */
int sr_cell_run(SrInterp *I, SrSrc *src, SrCellOut *o);
/* The same, and what the cell prints goes to fn as it comes, a line or
   more at a time (batched over 50 ms), as well as into o->out. */
typedef void (*SrCellStream)(void *ctx, const char *text, size_t n);
int sr_cell_run_stream(SrInterp *I, SrSrc *src, SrCellOut *o, SrCellStream fn, void *ctx);
void sr_cell_out_free(SrCellOut *o);
/* Sends what the running cell printed and its stream still holds (before
   an input prompt). */
void sr_cell_flush(void);
/* input() in a cell reads through I->py->read_line when the caller set
   one (the kernel, when its frontend allows stdin); else it raises
   StdinNotImplementedError, as ipykernel does. */

#endif
