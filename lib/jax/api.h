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
  /* a result leaf that is not a JAX type is batching.matchaxis's error
     ("Output from batched function ... is not a valid JAX type") */
  SR_TRACE_FOR_VMAP = 64,
  /* the keyword arguments' leaves abstract inputs too, after the
     positional ones, the keywords in sorted order (pjit's
     tree_flatten((args, kwargs)): jit, make_jaxpr, eval_shape,
     checkpoint); else they are passed as they are (closed over) */
  SR_TRACE_KWARGS = 128,
  /* every captured array a constvar holding it, outer tracers included
     (make_jaxpr: pe.trace_to_jaxpr_dynamic's consts) */
  SR_TRACE_ALL_CONSTS = 256,
};
/* The order in which a call's keyword arguments' leaves follow its
   positional ones (a dict's: by key): ord[k] is the index in kw of the
   k-th.  ord has nkw entries. */
void sr_kwargs_order(int nkw, const char *const *kw, int *ord);
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
/* The same for a control-flow body, through the cache of traces
   (pe.trace_to_jaxpr's): the same function on the same argument types and
   context gives the jaxpr traced before (a new reference to its program),
   without running the function. */
SrJaxpr *sr_trace_body_cached(SrInterp *I, SrVal *fn, int nargs, SrVal **args, int flags, SrVal **out_tree,
                              SrVal **captured);
/* What the next sr_trace_fn traces its function for ("scan",
   "while_body": api_util.debug_info's traced_for), which its tracers'
   errors name (static string). */
void sr_trace_fn_for(const char *traced_for);
/* The debug info of the next sr_trace_fn: that of fun (its source info)
   with these names of the argument leaves (arg_names), for a function
   that stands for fun (jit's split with its static arguments bound);
   both borrowed until that call. */
void sr_trace_fn_debug(SrVal *fun, char **names, int n);
/* The same for the next trace (api_util.debug_info(traced_for, fun, args,
   kwargs, static_argnums)): its traced_for, and fun's names of the
   arguments a but the static ones, which the trace frees. */
void sr_trace_fn_debug_call(SrInterp *I, const char *traced_for, SrVal *fun, SrArgs *a, const int *statics,
                            int nstatics);
/* Forgets what sr_trace_fn_for / _debug / _debug_call set, for a trace
   that was not made. */
void sr_trace_fn_debug_clear(void);
/* api_util.save_wrapped_fun_debug_info: until sr_trace_fn_unsave_debug(fn),
   a trace of fn is traced_for, of src_fn's source, with the argument names
   names[0..n) (taken), its tracers' result_paths None where asked. */
void sr_trace_fn_save_debug(SrVal *fn, const char *traced_for, SrVal *src_fn, char **names, int n,
                            int result_paths_none);
void sr_trace_fn_unsave_debug(SrVal *fn);
/* debug_info's arg_names (api_util._non_static_arg_names): the path of each
   leaf of call a of f under f's parameter names, keyword arguments sorted,
   the arguments skip marks (a->n positional then a->nkw keyword flags;
   NULL: none) left out.  *n strings, malloc'd, in a malloc'd array. */
char **sr_debug_arg_names(SrInterp *I, SrVal *f, SrArgs *a, const uint8_t *skip, int *n);
/* api_util.fun_sourceinfo: "f at file:line", a builtin's name or "<unknown>" */
void sr_fun_sourceinfo(SrInterp *I, SrBuf *src, SrVal *fn);
void sr_debug_arg_names_free(char **names, int n);
/* jax_numpy_rank_promotion's value: 0 allow, 1 warn, 2 raise; -1 with
   JAX's ValueError (scopes.c) */
int sr_rank_promotion_value(SrInterp *I, SrVal *v);
/* jax_numpy_dtype_promotion's value: 0 standard, 1 strict; -1 with a
   ValueError */
int sr_dtype_promotion_value(SrInterp *I, SrVal *v);
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
/* Makes jitted function jit a pjit (use_resource_env): in_sh and out_sh
   are its in_shardings= / out_shardings= as given (None kept; NULL when
   not given).  -1 when jit is not a jitted function. */
int sr_jit_use_resource_env(SrVal *jit, SrVal *in_sh, SrVal *out_sh);
SrVal *sr_jit_call_sharded(SrInterp *I, SrVal *fn, const char *name, SrArgs *a, SrVal *in_sh, SrVal *out_sh);
extern const SrClass sr_jit_class;
/* The function a jax.checkpoint / jax.jit wrapper wraps (functools.wraps's
   __wrapped__; borrowed), or NULL for another value. */
SrVal *sr_remat_wrapped(SrVal *f);
SrVal *sr_jit_wrapped(SrVal *f);
/* util.wraps(fun, docstr=docstr, argnums=argnums) on builtin b: its
   __wrapped__ and its __doc__, docstr with {fun} (fun's name) and
   {argnums} filled in (NULL argnums: 0), with_doc: fun's own __doc__ after
   "Original documentation:" (vmap's); returns b. */
SrVal *sr_api_wraps_doc(SrInterp *I, SrVal *b, SrVal *fun, const char *docstr, SrVal *argnums, int with_doc);
/* f.eval_shape(*args, **kwargs) of a jitted f, a->self (vmap_built.c):
   jax.eval_shape(f, *args, **kwargs) */
SrVal *sr_jit_eval_shape(SrInterp *I, SrArgs *a);
/* A jit wrapper's out_shardings= (borrowed), or NULL. */
SrVal *sr_jit_out_shardings(SrVal *f);
SrJaxprCallFn sr_jaxpr_call_hook(void);

/* api_util.flatten_axes's check (vmap.c): raises "WHAT specification must
   be a tree prefix of the corresponding value; ..." with the mismatch
   details where spec (None and other non-containers its leaves) is not a
   tree prefix of tree; returns -1 then, else 0. */
int sr_tree_prefix_check(SrInterp *I, const char *what, SrVal *spec, SrVal *tree);

/* Registers JAX's built-ins, module by module (see jax.h). */
void sr_jnp_init(void);
/* builtins_jax.c: JAX's state's built-ins (set_mesh, config), dtypes. */
void sr_builtins_jax_init(void);
/* jax._src.api's names, the same objects as jax's (after every jax.* one) */
void sr_jax_src_api_init(void);
/* shardrepl.kernel_counts() (kernel_counts.c). */
void sr_kernel_counts_init(void);

/* pxla.c: a jit's concrete results (a tuple) whose sharding XLA chose
   over Auto axes take the first argument's sharding, as it has it, when
   they are split as it is (pxla.maybe_recover_user_shardings). */
void sr_jit_recover_user_shardings(SrVal **args, int nargs, SrVal *outs);
/* A jit's concrete results hold buffers of their own, as XLA's do: a
   result sharing an argument's buffer, or an earlier result's, is copied
   (pxla.c). */
void sr_jit_fresh_outputs(SrVal **args, int nargs, SrVal *outs);
/* pxla.c: a jit's concrete results (the flat tuple outs) that
   out_shardings gives a sharding have it as written.  0, or -1 with an
   exception. */
int sr_jit_keep_out_shardings(SrInterp *I, SrVal *out_sh, SrVal *out_tree, SrVal *outs);

/* The mesh a jit call runs under (pjit.get_ctx_mesh): pjit's the resource
   env's (`with mesh:`), jit's set_mesh's; NULL for none. */
const SrMesh *sr_jit_ctx_mesh(SrInterp *I);
/* Marks a jax.jit object as made by jax.experimental.pjit.pjit. */
void sr_jit_mark_pjit(SrVal *jit);

#endif
