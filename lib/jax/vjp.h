/* vjp.h: first-class VJP objects (api.py: VJP, _vjp3_callable).
 *
 * What jax.vjp returns is a value: a pytree whose children are args_res
 * (one entry per argument, mirroring it: the array the backward pass uses
 * verbatim, or a NotNeeded() / NotSaveable() sentinel), opaque_residuals
 * (the residuals computed by the forward pass) and structured_residuals
 * (empty here), and whose static part -- the linear jaxpr, which residual
 * is which, the argument and output structures -- is shared by every copy.
 * So it flattens into residual arrays, passes into and out of jax.jit,
 * saves to a .npz file (vjp_io.c), and can be edited (f_vjp.args_res[0] =
 * W, f_vjp.replace(...)) before it is applied.
 */
#ifndef SR_LANG_VJP_H
#define SR_LANG_VJP_H

#include "ad/ad.h"
#include "py/interp.h"

/* The static part of a VJP object, counted and shared by its copies. */
typedef struct SrVjpAux {
  int rc;
  SrLinear lin;         /* jaxpr, nin/nout, in_nz/out_nz, in/out types;
                           res and res_arg unused (NULL) */
  int nres;
  int *res_idx;         /* per residual: an argument leaf, or an opaque index */
  uint8_t *res_primal;  /* per residual: 1 when res_idx is an argument leaf */
  int ncaptured;        /* the leading inputs of lin that are closed-over
                           values (no cotangent) */
  int nleaves;          /* argument leaves (lin.nin - ncaptured) */
  int nargs;
  SrVal *in_tree;       /* the arguments' structure: a tuple with leaf
                           indices (ints) for leaves */
  SrVal *out_tree;      /* the output's structure, likewise */
  const char *name;     /* interned: the function's name */
  const char *src_info; /* interned: "layer at vjp_objects.jxr:14" */
} SrVjpAux;

/* A VJP object's data. */
typedef struct SrVjp {
  SrVjpAux *aux;
  SrVal *args_res;      /* as the user last set it (normally a list) */
  SrVal *opaque;        /* opaque_residuals */
  SrVal *structured;    /* structured_residuals */
  int want_logs;
} SrVjp;

extern const SrClass sr_vjp_class;
extern const SrClass sr_not_needed_class;
extern const SrClass sr_not_saveable_class;

static inline SrVjp *sr_vjp_of(const SrVal *v) {
  return v && sr_is_obj(v, &sr_vjp_class) ? v->obj.data : NULL;
}

/* The NotNeeded() and NotSaveable() sentinels (immortal singletons). */
SrVal *sr_not_needed(void);
SrVal *sr_not_saveable(void);

/* tuptree_flags: per-leaf flags from `prefix` -- a bool, or a tuple-tree
   of bools matched against `values` (a tuple of the arguments) as a tree
   prefix, tuples matching any container by their number of children.
   `name` names the argument in errors ("saveable_args"), `full_name` the
   API ("the saveable_args argument to jax.vjp").  flags gets one entry per
   leaf of values.  Returns 0, or -1 with JAX's ValueError raised. */
int sr_vjp_flags(SrInterp *I, SrVal *prefix, SrVal *values, const char *name, const char *full_name,
                 uint8_t *flags, int nleaves);

/* ---- argnums, shared by jax.grad, jax.value_and_grad and jax.fwd_and_bwd ---- */

#define SR_MAX_ARGNUMS 64

/* api_util._ensure_index: argnums v (NULL for the default 0) as up to
   SR_MAX_ARGNUMS ints in out, *n of them; *single when v was an int.
   Returns 0, or -1 with a TypeError raised. */
int sr_argnums_parse(SrInterp *I, SrVal *v, int64_t *out, int *n, int *single);

/* api_util._ensure_inbounds: each of the n argnums resolved against nargs
   positional arguments (a negative one counts from the end) into out.
   Returns 0, or -1 with JAX's ValueError for one out of range. */
int sr_argnums_resolve(SrInterp *I, const int64_t *argnums, int n, int nargs, int64_t *out);

/* "layer at file.jxr:14": a user function's name and where it was
   defined (api_util.fun_sourceinfo); the bare name for other callables. */
const char *sr_vjp_fun_info(SrVal *fun);

/* Makes jax.vjp's VJP object.  lin is a linearization over `nin` flat
   inputs -- `ncaptured` closed-over values, then the arguments' leaves
   `leaves` (the values linearized at, compared by identity with the
   residuals) -- whose contents are taken (lin is emptied).  args is the
   tuple of the arguments, out_like the output's structure (NULL: one bare
   output, or a tuple of them), saveable one flag per argument leaf (NULL:
   all).  Returns a new reference. */
SrVal *sr_vjp_new(SrInterp *I, SrLinear *lin, int ncaptured, SrVal **leaves, SrVal *args, SrVal *out_like,
                  const uint8_t *saveable, const char *name, const char *src_info);

/* Applies a VJP object to an output cotangent (f_vjp(ct)): the checks of
   _vjp3_callable and _vjp3_bwd, then the backward pass, bound into the
   current trace or run.  Returns the tuple of argument cotangents. */
SrVal *sr_vjp_apply(SrInterp *I, SrVal *self, SrVal *ct);
/* jax.ad.GradValue and jax.ad.DontWant, VJP.with_refs' markers (vjp_api.c). */
void sr_vjp_refs_init(void);

/* A VJP object from its parts (a copy, or one read back from a file);
   steals the references to the three lists and one to aux. */
SrVal *sr_vjp_make(SrVjpAux *aux, SrVal *args_res, SrVal *opaque, SrVal *structured, int want_logs);
void sr_vjp_aux_unref(SrVjpAux *aux);

/* PyTreeDef(...) text of a structure (JAX's repr of a treedef): text/'s
   sr_treedef_str over the pytree registry's children. */
void sr_vjp_treedef_str(SrBuf *b, const SrVal *tree);

/* custom_jvp and custom_vjp calls (custom_jvp.c): api_util.resolve_kwargs
   (a tuple of the positional arguments, defaults applied; JAX's
   TypeError naming kind and the function otherwise), the positions of
   nondiff_argnums/nondiff_argnames (sorted, malloc'd), splitting the
   arguments by them, and a function with the held values put back (merge:
   at their positions; else leading, as the rules take them). */
SrVal *sr_custom_resolve_kwargs(SrInterp *I, SrVal *fun, const char *kind, const char *name, SrArgs *a);
int sr_custom_nondiff_parse(SrInterp *I, SrVal *fun, SrVal *nums, SrVal *names, int **out, int *n);
/* What a custom_jvp and a custom_vjp function hold alike: made from
   kind(fun, nondiff_argnums=, nondiff_argnames=) (0, or -1 with JAX's
   TypeError), their shared attributes (__name__, fun, __wrapped__, then
   custom_api_util.forward_attr's: NULL for none), freed. */
typedef struct SrCustomFn {
  SrVal *fun;
  const char *name;
  int *nondiff, nnondiff; /* nondiff_argnums, sorted */
  int symbolic_zeros;
} SrCustomFn;
int sr_custom_fn_init(SrInterp *I, SrArgs *a, const char *kind, SrCustomFn *f);
SrVal *sr_custom_fn_getattr(SrInterp *I, const SrCustomFn *f, const char *name);
void sr_custom_fn_free(SrCustomFn *f);
/* custom_jvp's and custom_vjp's messages: the PyTreeDef(...) of v, and
   the structure `tree` (numbered leaves) with its n leaves replaced by
   their types (float32[3]) as JAX's messages show them. */
void sr_custom_treedef_of(SrBuf *b, SrVal *v);
void sr_custom_type_tree(SrInterp *I, SrBuf *b, SrVal *tree, int n, const SrType **types);
/* Whether fn (a def) closes over a traced array of no grad or jvp (a
   vmap's, whose trace may have ended when autodiff runs fn's rule). */
int sr_custom_closes_over_tracer(SrInterp *I, SrVal *fn);
/* custom_vjp's fwd closing over such tracers: fwd traced now, on abstract
   values of args' types, and the values it captured made the call's first
   operand hl: *fun, *fwd, *bwd become fun(hl, *args) = fun(*args), the
   traced fwd on (hl, *args), and bwd with a None (hl's cotangent) first;
   *args becomes (hl, *args).  1 when done, 0 (nothing changed, no error
   left) when fwd cannot be traced so. */
int sr_custom_pretrace_fwd(SrInterp *I, SrVal **fun, SrVal **fwd, SrVal **bwd, SrVal **args);
/* ad_util.SymbolicZero (custom_jvp.c): one of aval t, its aval (NULL: not
   one), whether v is one. */
SrVal *sr_symbolic_zero_new(const SrType *t);
const SrType *sr_symbolic_zero_type(SrVal *v);
int sr_is_symbolic_zero(const SrVal *v);
int sr_custom_nondiff_split(SrInterp *I, SrVal *args, const int *pos, int n, SrVal **held, SrVal **dyn);
SrVal *sr_custom_nondiff_wrap(SrVal *fn, SrVal *vals, const int *pos, int n, int merge);

/* Registration (called by autodiff.c's init). */
void sr_vjp_api_init(void);
void sr_vjp_io_init(void);
void sr_custom_vjp_init(void);
void sr_custom_jvp_init(void);
void sr_custom_vmap_init(void);

#endif
