/* api.h: the transformations' entry points of api.c (JAX's api.py and
 * pjit.py): tracing a function on its arguments, jax.jit, and the calls of
 * custom_jvp / custom_vjp functions. */
#ifndef SR_JAX_API_H
#define SR_JAX_API_H

#include "core/trace.h"
#include "py/interp.h"

/* A callable's __name__: a def's name, a built-in's last component. */
const char *sr_callable_name(SrVal *f);
/* How sr_trace_fn's callers differ (flags; 0 for jax.jit's way). */
enum {
  /* every captured value a leading input, none a constvar (JAX's
     separate_consts, common.py's _initial_style_jaxpr: control-flow and
     shard_map bodies), in the order the body captures them */
  SR_TRACE_SEPARATE_CONSTS = 1,
  /* no check of Python int leaves against the default int dtype
     (api_util.py's _make_abstract_python_scalar) */
  SR_TRACE_ANY_INT = 2,
  /* a built-in's jaxpr named by its name's last dotted component (else by
     its whole name; a def's jaxpr has no name either way) */
  SR_TRACE_SHORT_NAME = 4,
  /* concrete captured arrays constvars even in a nested trace (a closed
     jaxpr's consts: lax._reduction_jaxpr) */
  SR_TRACE_CONSTVARS = 8,
  /* a result leaf that is not a JAX type is partial_eval's
     _check_returned_jaxtypes error, naming the function and what it was
     traced for (jit, eval_shape: "jit"; make_jaxpr: "make_jaxpr") */
  SR_TRACE_FOR_JIT = 16,
  SR_TRACE_FOR_MAKE_JAXPR = 32,
};
/* A control-flow body's way (lax_control_flow.c, shard_map.c). */
#define SR_TRACE_BODY (SR_TRACE_SEPARATE_CONSTS | SR_TRACE_ANY_INT | SR_TRACE_SHORT_NAME)
/* Traces fn(*args, **kw) on the types of args' leaves (values or abstract
   arrays: only their types count): flattens each argument, starts a trace
   with an abstract input per leaf, rebuilds the arguments from them, calls
   fn and flattens its result.  Returns the jaxpr of the flattened arguments
   and results, NULL with an exception raised.  *out_tree (if not NULL) gets
   the result (its structure, with the leaves of the trace's outputs, for
   rebuilding), *captured the outer values the jaxpr's leading inputs stand
   for. */
SrJaxpr *sr_trace_fn(SrInterp *I, SrVal *fn, int nargs, SrVal **args, int nkw, const char **kw,
                     SrVal **kwv, int flags, SrVal **out_tree, SrVal **captured);
/* A call of a custom_jvp or custom_vjp function: its arguments as a tuple
   and their leaves as arrays, and fun traced on them (named name). */
typedef struct SrCustomCall {
  SrVal *args, *leaves, *out_tree, *captured;
  SrJaxpr *body; /* holds a reference to its program */
} SrCustomCall;
/* -1 on error, with nothing left to free; 1 for an eager call (no trace,
   every leaf a value: JAX's EvalTrace calls fun itself), *eager fun's
   result, with nothing else left to free; else 0. */
int sr_custom_call_trace(SrInterp *I, SrVal *fun, const char *name, SrArgs *a, SrCustomCall *cc, SrVal **eager);
/* The same, always tracing (custom_vmap traces even an eager call). */
int sr_custom_call_trace_always(SrInterp *I, SrVal *fun, const char *name, SrArgs *a, SrCustomCall *cc);
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
/* The function a jax.checkpoint / jax.jit wrapper wraps (functools.wraps's
   __wrapped__; borrowed), or NULL for another value. */
SrVal *sr_remat_wrapped(SrVal *f);
SrVal *sr_jit_wrapped(SrVal *f);
SrJaxprCallFn sr_jaxpr_call_hook(void);

/* Registers JAX's built-ins, module by module (see jax.h). */
void sr_jnp_init(void);
/* builtins_jax.c: JAX's state's built-ins (set_mesh, config), dtypes. */
void sr_builtins_jax_init(void);
/* shardrepl.kernel_counts() (kernel_counts.c). */
void sr_kernel_counts_init(void);

/* pxla.c: a jit's concrete results (a tuple) whose sharding XLA chose
   over Auto axes take the first argument's sharding, as it has it, when
   they are split as it is (pxla.maybe_recover_user_shardings). */
void sr_jit_recover_user_shardings(SrVal **args, int nargs, SrVal *outs);
/* pxla.c: a jit's concrete results (the flat tuple outs) that
   out_shardings gives a sharding have it as written.  0, or -1 with an
   exception. */
int sr_jit_keep_out_shardings(SrInterp *I, SrVal *out_sh, SrVal *out_tree, SrVal *outs);

#endif
