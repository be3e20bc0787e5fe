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

/* Is text a complete input (1), or does it want more lines (0)?  As the
   REPL decides: while a bracket, a string, a jaxpr or a block is open,
   and a block ends with a blank line (last_blank: the text ends with
   one). */
int sr_repl_input_complete(SrInterp *I, const char *text, size_t len, int last_blank);
/* The completions of the word line[start..] (line: the text before the
   cursor), as Tab offers them: a new array of new strings in *out, the
   caller frees them; returns their number. */
int sr_repl_completions(SrInterp *I, const char *line, int start, char ***out);

#endif
