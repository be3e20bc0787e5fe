/* linit.h: shardrepl's init table for the Python subset of py/.
 *
 * py/ knows nothing of JAX (py/interp.h); this table, defined in
 * linit.c, is how shardrepl's language is built on it, as Lua's linit.c
 * opens Lua's libraries: it opens JAX's modules and the colon commands,
 * makes and frees the session's JAX and evaluator state, and gives py/
 * the hooks it calls (colon commands, calling and checking jaxprs, the
 * mesh jaxpr literals are parsed under).  Every program that runs
 * statements -- src/main.c, the unit tests, the fuzz drivers, the
 * benchmarks -- makes its sessions with sr_interp_new(&sr_linit).
 */
#ifndef SR_CMD_LINIT_H
#define SR_CMD_LINIT_H

#include "py/interp.h"

extern const SrPyInit sr_linit;

#endif
