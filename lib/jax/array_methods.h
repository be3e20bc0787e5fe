/* array_methods.h: the Python face of core's array values and avals
 * (operators, attributes, methods), and tracing a Python function. */
#ifndef SR_JAX_ARRAY_METHODS_H
#define SR_JAX_ARRAY_METHODS_H

#include "core/trace.h"
#include "py/interp.h"

/* Installs the operators, attributes and methods of sr_array_class and
   sr_aval_class (from sr_builtins_jax_init). */
void sr_array_methods_init(void);
/* Calls fn on the tracers of a trace just begun.  Each function traced
   inside another's trace nests its jaxpr a level deeper (jit(jit(...))
   makes a chain of them), so this raises RecursionError past
   SR_JAXPR_MAX_DEPTH levels, the parser's bound on nesting. */
SrVal *sr_trace_call(SrInterp *I, SrVal *fn, SrArgs *a);
/* An object whose attributes are a dict's entries (steals the dict). */
SrVal *sr_namespace(SrVal *dict);
/* The NamedSharding of a type as jax.typeof(x).sharding shows it: over
   the abstract mesh in context when it has the type's axes. */
SrVal *sr_type_sharding(SrInterp *I, const SrType *t);

/* A method of an array class that forwards to a function: own.NAME (the
   class's own) or module.NAME, called with the object first (NAME is the
   running builtin's data); reshape and transpose also take their shape as
   separate arguments.  cls names the class in the AttributeError. */
SrVal *sr_method_forward(SrInterp *I, SrArgs *a, const char *own, const char *module, const char *cls);
/* iter(x) of an array class: the list [x[0], ..., x[n-1]] by its
   getitem (a new reference), NULL with an error raised for n < 0 (len's)
   or a failed item. */
SrVal *sr_iter_by_index(SrInterp *I, SrVal *x, int64_t n, SrVal *(*getitem)(SrInterp *I, SrVal *x, SrVal *key));
#endif
