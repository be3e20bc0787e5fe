/* trace.h: array values, tracing and binding primitives.
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
#ifndef SR_LANG_TRACE_H
#define SR_LANG_TRACE_H

#include "ir/jaxpr.h"
#include "py/interp.h"
#include "prims/prim.h"
#include "prims/rule.h"

struct SrArray; /* exec/array.h */

typedef enum { SR_AV_ABSTRACT, SR_AV_TRACER, SR_AV_CONCRETE } SrArrayKind;

typedef struct SrTrace SrTrace;

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
  union {
    int64_t i;
    double f;
    double c[2];
  } value;
} SrArrayObj;

extern const SrClass sr_array_class;
extern const SrClass sr_aval_class; /* what jax.typeof returns */

static inline SrArrayObj *sr_array_of(const SrVal *v) {
  return v && sr_is_obj(v, &sr_array_class) ? v->obj.data : NULL;
}

SrVal *sr_array_abstract(const SrType *t);
SrVal *sr_array_concrete(struct SrArray *data); /* steals the reference */
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
                            (make_jaxpr) rather than inputs */
};

/* Starts a trace nested in the current one (I's innermost). */
SrTrace *sr_trace_begin(SrInterp *I);
/* Calls fn on the tracers of a trace just begun.  Each function traced
   inside another's trace nests its jaxpr a level deeper (jit(jit(...))
   makes a chain of them), so this raises RecursionError past
   SR_JAXPR_MAX_DEPTH levels, the parser's bound on nesting. */
SrVal *sr_trace_call(SrInterp *I, SrVal *fn, SrArgs *a);
/* A new input of the trace, of type t; returns its tracer. */
SrVal *sr_trace_arg(SrInterp *I, SrTrace *t, const SrType *type);
/* Finishes the trace with the given outputs (array values); returns the
   jaxpr (in the trace's program) and pops the trace.  Captured values come
   first among the jaxpr's inputs (constvars for concrete constants); their
   outer values are returned in *captured (a new list) when asked. */
SrJaxpr *sr_trace_end(SrInterp *I, SrTrace *t, SrVal **outs, int nout, SrVal **captured);
/* Makes an outer value a captured input of t now, so that captured values
   come first in a chosen order (cond's branches share their constants). */
void sr_trace_precapture(SrInterp *I, SrTrace *t, SrVal *outer);
/* Abandons a trace after an error. */
void sr_trace_abort(SrInterp *I, SrTrace *t);
SrTrace *sr_current_trace(SrInterp *I);

/* ---- binding ---- */

/* Binds a primitive to array-like inputs.  params are counted values
   (copied into the program when traced).  Returns the outputs as a new
   tuple (multi-result primitives) or the single output. */
SrVal *sr_bind(SrInterp *I, int prim_id, int nin, SrVal **in, int nparams, const SrParam *params);
/* The same for any primitive row (e.g. one from a parsed jaxpr); nout
   results, returned as a tuple when multi, and written types (from a
   parsed equation) when known. */
SrVal *sr_bind_prim(SrInterp *I, const SrPrim *prim, int nin, SrVal **in, int nparams,
                    const SrParam *params, const SrType *const *written, uint32_t nout_hint);
/* Evaluates a jaxpr on array-like values by binding each equation: inlines
   it into a trace, computes types on abstract values, or runs it. */
SrVal *sr_eval_jaxpr(SrInterp *I, const SrJaxpr *j, int nin, SrVal **in);
/* Outside a trace, a scalar that only has a value (a jaxpr literal, a zero
   made by autodiff) as the concrete array JAX returns: printed with its
   dtype's formatting and weak type.  A new reference; anything else is v. */
SrVal *sr_array_concretize(SrInterp *I, SrVal *v);

/* A param list builder: key/value pairs of counted values. */
typedef struct SrPList {
  SrParam p[24];
  int n;
} SrPList;
void sr_plist_add(SrPList *ps, const char *key, SrVal *v); /* steals v */
void sr_plist_free(SrPList *ps);

/* The type-rule context for the current state (mesh, check_vma). */
void sr_type_ctx(SrInterp *I, SrTypeCtx *cx, SrDiags *d);

/* The execution backend's entry points, installed by exec/: runs one
   primitive on concrete arrays, and a whole jaxpr. */
typedef int (*SrExecEqnFn)(SrInterp *I, const SrPrim *prim, const SrParam *params, int nparams,
                           int nin, struct SrArray **in, int nout, const SrType *const *out_types,
                           struct SrArray **out, SrDiags *d);
typedef int (*SrExecJaxprFn)(SrInterp *I, const SrJaxpr *j, int nin, struct SrArray **in,
                             struct SrArray **out, SrDiags *d);
typedef struct SrExecHooks {
  SrExecEqnFn eqn;
  SrExecJaxprFn jaxpr;
  /* a concrete array from a Python scalar or nested lists (jnp.asarray) */
  struct SrArray *(*from_scalar)(SrInterp *I, const SrType *t, double re, double im, int64_t i);
  void (*array_unref)(struct SrArray *a);
  void (*array_repr)(SrInterp *I, SrBuf *out, struct SrArray *a, int weak);
  void (*array_str)(SrInterp *I, SrBuf *out, struct SrArray *a);
  /* the value of a 0-d array as a Python scalar */
  SrVal *(*array_item)(SrInterp *I, struct SrArray *a);
  const SrType *(*array_type)(struct SrArray *a);
} SrExecHooks;
extern SrExecHooks sr_exec_hooks;
/* Installs the evaluator's hooks (and sr_exec_from_host), registers :comm
   and the built-ins of concrete arrays (lib/cmd/hooks_exec.c); call once
   per interpreter, from the init table's state_new (lib/cmd/linit.c).
   Returns 0. */
int sr_hooks_exec_init(SrInterp *I);

/* Python scalars as arrays: the weak type JAX gives them. */
const SrType *sr_scalar_type(const SrVal *v);

/* The type of a concrete array (through the hooks). */
static inline const SrType *sr_exec_array_type(struct SrArray *a) {
  return sr_exec_hooks.array_type(a);
}
/* An object whose attributes are a dict's entries (steals the dict). */
SrVal *sr_namespace(SrVal *dict);
/* jax.typeof(x).sharding for a type. */
SrVal *sr_type_sharding(SrInterp *I, const SrType *t);
/* Tells array printing which interpreter prints (for gathering shards). */
void sr_array_printing(SrInterp *I);
/* An abstract scalar with a value, of type t (weak scalars of Python). */
SrVal *sr_array_scalar(const SrType *t, double re, double im, int64_t i);

#endif
