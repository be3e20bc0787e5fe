/* complete.h: what Tab completes (complete.c), for the REPL's readline
 * and the kernel's complete_request: colon commands, file names after
 * :load, module names after import and from, a module's names after
 * `from M import`, the attributes of a value after a dot (dir()'s names:
 * x.<Tab>, jax.nn.<Tab>, jnp.li<Tab>), and bare names (built-ins, JAX's
 * functions, the session's bindings, keywords).  Names that start with
 * '_' are offered only when the word does, and the implementation's
 * registered names (jnp._getitem, jax.Array.method.item) never.
 */
#ifndef SR_CMD_COMPLETE_H
#define SR_CMD_COMPLETE_H

#include "py/interp.h"

/* The completions of the word line[start..] (line: the text before the
   cursor), sorted: a new array of new strings in *out (the caller frees
   each and the array); returns their number. */
int sr_complete(SrInterp *I, const char *line, int start, char ***out);
/* What a continuation line starts with: the indentation of the input's
   last line (text: the lines so far), four spaces deeper after a line
   ending in ':', as Python 3.13's REPL indents.  A new string. */
char *sr_complete_indent(const char *text, size_t len);

#endif
