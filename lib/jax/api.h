/* api.h: the transformations' entry points of api.c (JAX's api.py and
 * pjit.py): tracing a function on its arguments, jax.jit, and the calls of
 * custom_jvp / custom_vjp functions. */
#ifndef SR_JAX_API_H
#define SR_JAX_API_H

#include "core/trace.h"
#include "py/interp.h"

/* A callable's __name__: a def's name, a built-in's last component. */
const char *sr_callable_name(SrVal *f);
/* Traces fn on the types of args (see api.c). */
SrJaxpr *sr_trace_fn(SrInterp *I, SrVal *fn, int nargs, SrVal **args, int nkw, const char **kw,
                     SrVal **kwv, SrVal **out_tree, SrVal **captured);
/* A call of a custom_jvp or custom_vjp function: its arguments as a tuple
   and their leaves as arrays, and fun traced on them (named name). */
typedef struct SrCustomCall {
  SrVal *args, *leaves, *out_tree, *captured;
  SrJaxpr *body; /* holds a reference to its program */
} SrCustomCall;
/* -1 on error, with nothing left to free. */
int sr_custom_call_trace(SrInterp *I, SrVal *fun, const char *name, SrArgs *a, SrCustomCall *cc);
/* prim.bind(*consts, *args_flat, **params): the result in the structure
   of fun's, NULL on error; frees cc and ps. */
SrVal *sr_custom_call_bind(SrInterp *I, int prim, SrCustomCall *cc, SrPList *ps);
/* Calls fn as jax.jit does: traces it and binds a jit equation. */
SrVal *sr_jit_call(SrInterp *I, SrVal *fn, const char *name, SrArgs *a);
/* Forgets the traces of jitted functions kept for the statement (before
   each statement, and when the session ends). */
void sr_jit_cache_clear(SrInterp *I);
/* The same with jax.jit's in_shardings= and out_shardings= (NULL: none). */
SrVal *sr_jit_call_sharded(SrInterp *I, SrVal *fn, const char *name, SrArgs *a, SrVal *in_sh, SrVal *out_sh);
extern const SrClass sr_jit_class;
SrJaxprCallFn sr_jaxpr_call_hook(void);

/* Registers JAX's built-ins, module by module (see jax.h). */
void sr_jnp_init(void);
/* builtins_jax.c: JAX's state's built-ins (set_mesh, config), dtypes. */
void sr_builtins_jax_init(void);

#endif
