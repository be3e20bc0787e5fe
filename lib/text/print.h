/* print.h: printing jaxprs exactly as JAX does.
 *
 * Width 80, JAX's groups and nests, variable names a..z, ba.. in print
 * order with `_` for unused top-level outputs, jaxprs used more than once
 * (or nested with more than ten equations) hoisted into `let NAME = ... in`
 * blocks, params sorted with the per-primitive rules of core.pp_eqn_rules.
 *
 * LAYER.  text/ reads and writes: the parser (parse.h) of every form JAX
 * prints, this printer on the layout engine of doc.h, and the printer of
 * values (print_val.h: Python's str and repr, PyTreeDef).  It uses util/,
 * ir/ and the primitive table (prims/: names, print rules); nothing above.
 */
#ifndef SR_TEXT_PRINT_H
#define SR_TEXT_PRINT_H

#include "ir/jaxpr.h"
#include "util/buf.h"

/* str(jaxpr): the whole program with its hoisted jaxprs, no trailing
   newline. */
void sr_print_jaxpr(SrBuf *out, const SrJaxpr *j);
/* repr of one equation, named in a fresh context and right-stripped (for
   error messages). */
void sr_print_eqn(SrBuf *out, const SrEqn *e);

#endif
