/* trace.h: array values, tracing and binding primitives (core.h).
 *
 * An array value of the language is one of three things, all of the class
 * sr_array_class:
 *  - abstract: only a type (jax.ShapeDtypeStruct, or what an eager
 *    operation on abstract values returns);
 *  - a tracer: a var of a jaxpr being traced (inside jax.jit, make_jaxpr,
 *    a scan body, a traced def);
 *  - concrete: data on devices (exec/array.h).
 *
 * Every operation on arrays ends in sr_bind(): the primitive's type rule
 * gives the result types (and JAX's errors); then a trace records an
 * equation, abstract inputs give abstract results, and concrete inputs run
 * the primitive through the execution hook.
 */
#ifndef SR_CORE_TRACE_H
#define SR_CORE_TRACE_H

#include "core/core.h"
#include "ir/jaxpr.h"
#include "prims/prim.h"
#include "check/rule.h"

struct SrArray; /* exec/array.h */

typedef enum { SR_AV_ABSTRACT, SR_AV_TRACER, SR_AV_CONCRETE } SrArrayKind;

typedef struct SrTrace SrTrace;

/* How the tracers of a trace print, as the _short_repr of JAX's Tracer
   subclasses (GradTracer, VmapTracer...): appends the text of the tracer
   of var v (NULL: a value of type `type` of that trace, as an inner
   trace's primal names it).  NULL prints DynamicJaxprTracer's
   JitTracer(aval). */
typedef void (*SrTracerReprFn)(SrInterp *I, SrTrace *t, SrVar *v, const SrType *type, SrBuf *out);

typedef struct SrArrayObj {
  SrArrayKind kind;
  const SrType *type;
  SrTrace *trace;        /* tracer: its trace (not counted: a tracer must not
                            outlive its trace's building; see trace->alive) */
  int trace_id;
  SrVar *var;            /* tracer: its var */
  struct SrArray *data;  /* concrete: a counted reference */
  SrVal *sharding;       /* abstract: the ShapeDtypeStruct's sharding, or NULL */
  /* abstract scalars that came from a jaxpr literal keep its value, so that
     re-tracing makes the same literal and running it has data */
  uint8_t has_value;
  uint8_t deleted;       /* concrete: donated to a jit call (x.delete()) */
  uint8_t no_sharding;   /* abstract: a ShapeDtypeStruct made with no sharding
                            (its .sharding is None) */
  uint64_t serial;       /* concrete: sr_array_serial() when it was made */
  /* tracer: for the UnexpectedTracerError of one used after its trace
     ended, its trace's origin (SrTrace.origin) and the frames that made it
     (sr_trace_frames_hook's; NULL: not known) */
  const char *origin, *frames;
  /* tracer: its trace's arg_names (SrTrace.arg_names_key), or NULL */
  const char *arg_names;
  struct SrLeakNode *leak; /* tracer made while checking leaks: its entry
                              among the live ones (sr_trace_leaked) */
  union {
    int64_t i;
    double f;
    double c[2];
  } value;
} SrArrayObj;

/* The classes of array values and of avals (what jax.typeof returns).
   Their `lang` ops (operators, attributes, methods) are the language's,
   installed by sr_array_methods_init (jax/array_methods.c). */
extern SrClass sr_array_class;
extern SrClass sr_aval_class;
/* -1 with JAX's RuntimeError raised when v is a deleted array (donated
   to a jit call, or x.delete()), else 0. */
int sr_array_check_deleted(SrInterp *I, const SrVal *v);

static inline SrArrayObj *sr_array_of(const SrVal *v) {
  return v && sr_is_obj(v, &sr_array_class) ? v->obj.data : NULL;
}

SrVal *sr_array_abstract(const SrType *t);
SrVal *sr_array_concrete(struct SrArray *data); /* steals the reference */
/* The serial number the next concrete array gets: concrete arrays are
   numbered in the order they are made. */
uint64_t sr_array_serial(void);
SrVal *sr_aval_new(const SrType *t);
/* The type of an array-like value: arrays, Python scalars (weak), avals.
   NULL (no exception) for anything else. */
const SrType *sr_value_type(SrInterp *I, SrVal *v);

/* ---- traces ---- */

struct SrTrace {
  SrTrace *parent;
  int id;                /* unique, to tell tracers of dead traces */
  int level;             /* nesting depth */
  SrProgram *prog;
  SrJaxprBuilder jb;
  const SrMesh *mesh;    /* the abstract mesh while tracing */
  const SrMesh *vmesh;   /* with no mesh in context: the abstract mesh of
                            the traced arguments' shardings (their
                            aval.sharding.mesh, axis types and device fields
                            included, which types do not keep), else NULL */
  int check_vma;
  /* values captured from outside (outer tracers, concrete arrays) become
     leading inputs: for each, the outer value and the inner var */
  SrVal **captured;
  SrVar **captured_vars;
  int ncaptured, capcaptured;
  int *capidx;           /* an index of captured by identity (open
                            addressing, -1 empty), so that capturing stays
                            O(1) when a trace captures thousands of values
                            (the residuals of a linearization) */
  int capidx_cap;
  int capture_consts;    /* concrete non-scalar arrays: constvars with values
                            (make_jaxpr) rather than inputs; 2: outer
                            tracers too (make_jaxpr's consts are the
                            tracers it closes over) */
  /* how its tracers print (SrTracerReprFn), with its data (counted) */
  SrTracerReprFn repr;
  SrVal *repr_data;
  const char *saved_ns;  /* I->ns when it began, restored when it ends */
  /* interned: the class name of its tracers as JAX names them
     (DynamicJaxprTracer, LinearizeTracer, BatchTracer...), then, for a
     staging trace of a function, a tab and its debug info ("f at
     file:line traced for jit"); sr_trace_set_origin */
  const char *origin;
  uint64_t serial;       /* sr_array_serial() when it began: a concrete array
                            with a larger serial was made while it traced
                            (where JAX would have bound a tracer) */
  /* a staging trace of a function: the names of its arguments' leaves
     (debug_info.arg_names, interned; NULL: not known), which its tracers'
     errors name (DynamicJaxprTracer._origin_msg) */
  const char **arg_names;
  int narg_names;
  uint8_t result_paths_none; /* its debug info's result_paths are None */
  const char *arg_names_key; /* the same, each after a '\x1f' (and all after
                                a '\x1e' where result_paths_none), interned (or NULL):
                                what its tracers keep (DynamicJaxprTracer's
                                _debug_info outlives the trace) */
};

/* Starts a trace nested in the current one (I's innermost). */
SrTrace *sr_trace_begin(SrInterp *I);
/* A new input of the trace, of type t; returns its tracer. */
SrVal *sr_trace_arg(SrInterp *I, SrTrace *t, const SrType *type);
/* Finishes the trace with the given outputs (array values); returns the
   jaxpr (in the trace's program) and pops the trace.  Captured values come
   first among the jaxpr's inputs (constvars for concrete constants); their
   outer values are returned in *captured (a new list) when asked. */
SrJaxpr *sr_trace_end(SrInterp *I, SrTrace *t, SrVal **outs, int nout, SrVal **captured);
/* Abandons a trace after an error. */
void sr_trace_abort(SrInterp *I, SrTrace *t);
SrTrace *sr_current_trace(SrInterp *I);
/* The context an engine binds an equation's rule in (core.eval_jaxpr's
   source_info_util.user_context and eqn.ctx): the name stack, abstract
   meshes and source location in place when it was saved (sr_eqn_ctx_save),
   with the equation's own on top (sr_eqn_ctx_enter: the name stack ns --
   the saved one, or a transform's over it -- then e's, e's abstract mesh,
   e's source location or else the saved one); sr_eqn_ctx_restore goes
   back to it. */
typedef struct SrEqnCtx {
  const char *ns, *loc;
  int md;
} SrEqnCtx;
SrEqnCtx sr_eqn_ctx_save(SrInterp *I);
void sr_eqn_ctx_enter(SrInterp *I, const SrEqnCtx *c, const char *ns, const SrEqn *e);
void sr_eqn_ctx_restore(SrInterp *I, const SrEqnCtx *c);
/* Sets t's arg_names to copies of names[0..n). */
void sr_trace_set_arg_names(SrTrace *t, const char *const *names, int n);
/* Makes the next trace begun print its tracers with fn and data (a
   counted value the trace takes), as jax.grad and jax.vmap trace. */
void sr_trace_next_repr(SrInterp *I, SrTracerReprFn fn, SrVal *data);
/* Makes the next trace begun name its tracers' class `cls` (interned or
   static) in errors, as jax.grad and jax.vmap trace; NULL: DynamicJaxprTracer. */
void sr_trace_next_class(SrInterp *I, const char *cls);
/* Gives trace t the debug info of the function it stages ("f at
   file:line traced for jit"), for its tracers' errors. */
void sr_trace_set_debug_info(SrTrace *t, const char *dbg);
/* core.escaped_tracer_error: the UnexpectedTracerError for a tracer used
   after its trace ended (its type, class, the function traced and where it
   was made); returns NULL. */
SrVal *sr_escaped_tracer_error(SrInterp *I, const SrArrayObj *a);
/* jax_check_tracer_leaks: the tracers made while it is on are kept track
   of while they live.  After the trace of id trace_id (origin: its
   SrTrace.origin) has ended and its tracers have been let go, raises
   core.leaked_tracer_error's Exception ("Leaked trace
   DynamicJaxprTrace. Leaked tracer(s): ...") when one still lives,
   other than as one of the leaves `held` (a list of the leaves of the
   results the caller still holds, flattened from them; or NULL); -1
   then, else 0. */
int sr_trace_leaked(SrInterp *I, int trace_id, const char *origin, SrVal *held);
/* Forgets a tracer being freed (array.c). */
void sr_trace_leak_forget(SrArrayObj *a);
/* The text of a tracer of t of var v and type `type` (see SrTracerReprFn). */
void sr_tracer_repr(SrInterp *I, SrTrace *t, SrVar *v, const SrType *type, SrBuf *out);
/* The equations of t so far that var v needs, as a jaxpr in t's program
   (valid while t is being built; its vars are renumbered by the next
   snapshot and by sr_trace_end): its inputs are t's captured values (their
   outer values are t->captured[0..ncaptured)) then t's arguments, its one
   output v. */
SrJaxpr *sr_trace_snapshot(SrTrace *t, SrVar *v);
/* Whether t is alive: the current trace or one it is nested in. */
int sr_trace_is_live(SrInterp *I, const SrTrace *t, int id);

/* ---- binding ---- */

/* Binds a primitive to array-like inputs.  params are counted values
   (copied into the program when traced).  Returns the outputs as a new
   tuple (multi-result primitives) or the single output. */
SrVal *sr_bind(SrInterp *I, int prim_id, int nin, SrVal **in, int nparams, const SrParam *params);
/* The same for any primitive row (e.g. one from a parsed jaxpr); nout
   results, returned as a tuple when multi, and written types (from a
   parsed equation) when known.  nout_hint 0 (with no written types):
   the number the params imply. */
SrVal *sr_bind_prim(SrInterp *I, const SrPrim *prim, int nin, SrVal **in, int nparams,
                    const SrParam *params, const SrType *const *written, uint32_t nout_hint);
/* Evaluates a jaxpr on array-like values by binding each equation: inlines
   it into a trace, computes types on abstract values, or runs it. */
SrVal *sr_eval_jaxpr(SrInterp *I, const SrJaxpr *j, int nin, SrVal **in);

/* Where an equation being recorded comes from when no engine is binding
   an equation's rule (I->loc): the user's source position, summarized as
   source_info_util.summarize does ("file:line (function)"), interned, or
   NULL.  The language's init sets it (jax/remat_policies.c); NULL: none. */
extern const char *(*sr_trace_loc_hook)(SrInterp *I);
/* The same for the last frames of the user's stack, one "file:line
   (function)" a line, outermost first (source_info_util.summarize with
   num_frames): where a tracer is made, for its UnexpectedTracerError.
   NULL: none. */
extern const char *(*sr_trace_frames_hook)(SrInterp *I);
/* Outside a trace, a scalar that only has a value (a jaxpr literal, a zero
   made by autodiff) as the concrete array JAX returns: printed with its
   dtype's formatting and weak type.  A new reference; anything else is v. */
SrVal *sr_array_concretize(SrInterp *I, SrVal *v);

/* A param list builder: key/value pairs of counted values.  The first
   SR_PLIST_INLINE pairs live in the struct itself; more move p onto the
   heap, which grows.  Start one zeroed (SrPList ps = {0}); read the pairs
   as ps.p[0 .. ps.n-1] (p is NULL while empty).  Do not copy one by value:
   p may point into it. */
enum { SR_PLIST_INLINE = 24 };
typedef struct SrPList {
  SrParam *p;            /* inline, or the heap once grown */
  int n, cap;
  SrParam inline_p[SR_PLIST_INLINE];
} SrPList;
void sr_plist_add(SrPList *ps, const char *key, SrVal *v); /* steals v */
/* Drops the pairs; the list may be reused (empty). */
void sr_plist_free(SrPList *ps);

/* The type-rule context for the current state (mesh, check_vma). */
void sr_type_ctx(SrInterp *I, SrTypeCtx *cx, SrDiags *d);

/* The hooks up to the execution backend, where core must call up: binding
   a primitive on concrete arrays runs it there, as JAX's eval trace calls a
   primitive's impl, and the concrete arrays core holds are the backend's
   (struct SrArray of exec/array.h, opaque here), so core frees, types and
   prints them through these.  lib/cmd/hooks_exec.c installs them
   (sr_hooks_exec_init); without it (no evaluator) every hook is NULL and
   binding on concrete values gives abstract results.  Two are not core's
   own calls: from_host and array_item serve jax/ and cmd/, whose code for
   them lives in lib/cmd/hooks_exec.c, above jax/; they can go when that
   code moves into exec/. */
typedef int (*SrExecEqnFn)(SrInterp *I, const SrPrim *prim, const SrParam *params, int nparams,
                           int nin, struct SrArray **in, int nout, const SrType *const *out_types,
                           struct SrArray **out, SrDiags *d);
typedef struct SrBackendHooks {
  /* runs one primitive on concrete arrays (sr_bind_prim) */
  SrExecEqnFn eqn;
  /* a concrete array holding a scalar (a Python scalar or a jaxpr literal
     an equation binds, sr_array_concretize, jnp.asarray) */
  struct SrArray *(*from_scalar)(SrInterp *I, const SrType *t, double re, double im, int64_t i);
  /* a concrete array from host values, numel(t) of them, replicated on the
     mesh in context (jnp.asarray of nested lists, :gradcheck) */
  struct SrArray *(*from_host)(SrInterp *I, const SrType *t, const double *re, const double *im,
                               const int64_t *iv);
  /* drops core's reference to a concrete array (freeing an array value) */
  void (*array_unref)(struct SrArray *a);
  /* repr() and str() of a concrete array value */
  void (*array_repr)(SrInterp *I, SrBuf *out, struct SrArray *a, int weak);
  void (*array_str)(SrInterp *I, SrBuf *out, struct SrArray *a);
  /* the value of a 0-d array as a Python scalar (x.item(), bool(x)) */
  SrVal *(*array_item)(SrInterp *I, struct SrArray *a);
  /* the type of a concrete array (an array value's type) */
  const SrType *(*array_type)(struct SrArray *a);
  /* the concrete mesh a concrete array is on, with its axis types (NULL:
     one device) -- Primitive.bind's casting of closed-over values */
  const SrMesh *(*array_mesh)(struct SrArray *a);
  /* whether two concrete arrays hold the same buffers (a Ref passed
     through an equation is the same Ref) */
  int (*array_same)(struct SrArray *a, struct SrArray *b);
} SrBackendHooks;
extern SrBackendHooks sr_backend_hooks;

/* Primitive.bind's casting of closed-over values (jax/shard_map.c fills
   it): 0, or 1 with cast[] the operands to bind instead (new references),
   or -1 with an exception. */
extern int (*sr_bind_cast_hook)(SrInterp *I, const SrPrim *prim, int nin, SrVal **in, SrVal **cast);

/* The one hook for array-likes of a higher layer (numpy's ndarray,
   jax/np_host.c): a new jax.Array value for v, or NULL when v is not
   one (no exception).  sr_value_type and sr_bind_prim take such a value
   as the array it gives. */
extern SrVal *(*sr_as_array_hook)(SrInterp *I, SrVal *v);

/* Python scalars as arrays: the weak type JAX gives them. */
const SrType *sr_scalar_type(const SrVal *v);

/* The type of a concrete array (through the hooks). */
static inline const SrType *sr_exec_array_type(struct SrArray *a) {
  return sr_backend_hooks.array_type(a);
}
/* The shape of a type as a Python tuple. */
SrVal *sr_shape_tuple(const SrType *t);
/* Tells array printing which interpreter prints (for gathering shards). */
void sr_array_printing(SrInterp *I);
/* An abstract scalar with a value, of type t (weak scalars of Python). */
SrVal *sr_array_scalar(const SrType *t, double re, double im, int64_t i);

#endif
