/* notebook.h: --notebook, running a MyST lesson's code cells as one
 * session and writing the document back with their outputs. */
#ifndef SR_SRC_NOTEBOOK_H
#define SR_SRC_NOTEBOOK_H

#include "py/interp.h"

/* Runs the {code-cell} blocks of the MyST file `path` in order in I's
   session and writes the document with each cell's outputs to `out`
   (NULL or "-": stdout; a name ending in .ipynb: a Jupyter notebook,
   else MyST markdown).  A cell tagged raises-exception shows its error
   and the run goes on; an error in any other cell is reported, located in
   the file, on stderr, and the cells after it are written without
   outputs.  Returns the exit status: 0, or the SrErrKind of that error
   (the caller maps it), or -1 when a file cannot be read or written. */
int sr_notebook_run(SrInterp *I, const char *path, const char *out);

#endif
