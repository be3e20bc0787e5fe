/* jnp.h: the numpy-level layer over sr_bind: dtype and rank promotion, as
 * jax.numpy does before it binds lax primitives.  The jax.numpy, jax.lax
 * and jax built-ins are written with these. */
#ifndef SR_LANG_JNP_H
#define SR_LANG_JNP_H

#include "jax/trace.h"

/* The dtype JAX gives a mix of operands (weak Python scalars defer to
   arrays' dtypes), and whether the result is weak. */
SrDtype sr_jnp_result_dtype(SrInterp *I, int n, SrVal **args, int *weak);
/* Converts x to dtype dt (a convert_element_type equation for arrays, a
   retyped literal for Python scalars); a new reference. */
SrVal *sr_jnp_convert(SrInterp *I, SrVal *x, SrDtype dt, int weak);
/* Promotes operands in place to one dtype and one rank (broadcast_in_dim
   adds leading dims); the args array holds new references afterwards. */
int sr_jnp_promote(SrInterp *I, int n, SrVal **args, const char *fname);
/* Lists and nested lists of numbers as a concrete or abstract array. */
SrVal *sr_jnp_asarray(SrInterp *I, SrVal *x, int dtype /* -1: infer */);

/* Binds a primitive with params given as alternating key, value (counted,
   stolen) pairs ending in NULL. */
SrVal *sr_bindv(SrInterp *I, int prim_id, int nin, SrVal **in, ...);

/* Helpers for building params. */
SrVal *sr_int_tuple(const int64_t *v, int n);
SrVal *sr_none_tuple(int n);
/* An optional dtype argument (dtype=...): a dtype, a dtype's name, or
   Python's bool, int, float or complex as dtypes.canonicalize_dtype has
   them (int is int32 and float float32 unless x64 is on); *out is -1 for
   None or absent.  The one place a dtype argument is interpreted. */
int sr_dtype_arg(SrInterp *I, SrVal *v, int *out, const char *what);
/* The shape of a Python int or tuple of ints. */
int sr_shape_arg(SrInterp *I, SrVal *v, int64_t *shape, int *ndim, const char *what);
/* The out_sharding / sharding argument of an API call (P or
   NamedSharding or None) as a sharding param value; NULL means None. */
SrVal *sr_sharding_arg(SrInterp *I, SrVal *v, int ndim, const char *what);

/* Array construction from host data (rows of doubles, or of ints), set by
   exec/ (NULL: arrays are abstract). */
extern struct SrArray *(*sr_exec_from_host)(SrInterp *I, const SrType *t, const double *re,
                                            const double *im, const int64_t *iv);

/* Pytrees: the leaves (arrays, scalars) of nested lists, tuples and dicts,
   and the same structure rebuilt from new leaves. */
SrVal *sr_pytree_flatten(SrInterp *I, SrVal *v);
/* v's structure with its leaves numbered from *k (a dummy tree, to
   rebuild from or to name leaves by). */
SrVal *sr_pytree_numbered(SrVal *v, int *k);
/* v's leaves as arrays (Python scalars become weakly typed ones). */
SrVal *sr_pytree_array_leaves(SrInterp *I, SrVal *v);
/* Whether the int v is in the range of the integer dtype d (any other
   dtype: 1). */
int sr_int_fits(int64_t v, SrDtype d);
/* JAX's OverflowError for a Python int that the default int dtype (int32,
   or int64 with x64) cannot hold, as an argument of jit or device_put
   becomes one ("Python int 4294967296 too large to convert to int32"):
   -1 then, else 0. */
int sr_check_py_int(SrInterp *I, const SrVal *v);
/* A callable's __name__: a def's name, a built-in's last component. */
const char *sr_callable_name(SrVal *f);
SrVal *sr_pytree_unflatten(SrVal *like, SrVal *leaves);
/* One pytree node: its children as a new list -- a list's or tuple's
   items, a dict's values in sorted key order (as JAX flattens dicts), none
   for None, a registered class's (SrLangOps.tree_children) -- or NULL for
   a leaf.  sr_pytree_rebuild makes a node like `like` from new children
   (borrowed; a dict comes out in sorted key order); a new reference. */
SrVal *sr_pytree_children(SrVal *v);
SrVal *sr_pytree_rebuild(SrVal *like, SrVal *children);
/* The walks over a pytree recurse, so a tree must be checked by this
   first: -1 with RecursionError raised when it nests more than
   SR_VAL_MAX_NEST deep -- a list that holds itself does (JAX recurses
   forever on one too).  sr_pytree_flatten checks. */
int sr_pytree_check_depth(SrInterp *I, SrVal *v);
/* Traces fn on the types of args (see jnp.c). */
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

void sr_jnp_init(void);
/* builtins_jax.c: JAX's sharding API, meshes, config, dtypes. */
void sr_builtins_jax_init(void);

#endif
