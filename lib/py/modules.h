/* modules.h: import statements over the registry, and the modules of
 * Python's standard library that JAX scripts import (functools,
 * itertools, operator, math, collections, typing, time, __future__).
 *
 * A module is a name something is registered under ("functools" for
 * "functools.partial"): there is no list of modules, so what another file
 * registers with sr_def ("dataclasses.dataclass") is importable as soon as
 * it is registered.  Anything else fails at the import statement, in
 * CPython's words (ModuleNotFoundError: No module named 'optax').
 */
#ifndef SR_LANG_MODULES_H
#define SR_LANG_MODULES_H

#include "py/interp.h"

/* `import a.b.c`: 0 when a, a.b and a.b.c are modules, else -1 with
   ModuleNotFoundError raised, naming the first that is not. */
int sr_import_check(SrInterp *I, const char *dotted);

/* `from module import name`: the value (a new reference), a submodule, or
   NULL with ImportError raised (SyntaxError for an unknown __future__
   feature).  The module must have passed sr_import_check. */
SrVal *sr_import_name(SrInterp *I, const char *module, const char *name);

/* `from module import *`: calls bind(name, value) for each public name
   registered directly under the module (value borrowed), in a fixed
   order. */
void sr_import_star(const char *module, void (*bind)(const char *name, SrVal *v, void *ctx), void *ctx);

/* functools.partial objects: the function a partial (of partials) calls,
   borrowed, or NULL when v is not a partial.  JAX names a partial's trace
   after it (api_util.fun_name). */
SrVal *sr_partial_func(const SrVal *v);

/* Registers the modules (sr_modules_init, from sr_builtins_py_init, calls
   the others: one file each). */
void sr_modules_init(void);
void sr_functools_init(void); /* mod_functools.c */
void sr_itertools_init(void); /* mod_itertools.c */
void sr_math_init(void);      /* mod_math.c: math and operator */
void sr_cmath_init(void);     /* mod_cmath.c: cmath */
void sr_collections_init(void); /* mod_collections.c */

#endif
