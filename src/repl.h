/* repl.h: the interactive loop and the reporting of errors. */
#ifndef SR_SRC_REPL_H
#define SR_SRC_REPL_H

#include "py/interp.h"

/* Reads statements from stdin until Ctrl-D or :quit: with prompts, line
   editing, history and completion on a terminal, silently otherwise.
   Returns 1 if any input failed, else 0. */
int sr_repl(SrInterp *I);
/* Prints I's pending diagnostics to stderr (stdout flushed first). */
void sr_repl_report(SrInterp *I);

#endif
