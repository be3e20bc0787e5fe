/* core.h: the runtime that tracing, autodiff and the evaluator share.
 *
 * DESIGN.  lib/core/ is JAX's core.py in C: the state of a session that
 * every stage above it works on, and the few things every stage does with
 * it.  It holds
 *  - the runtime state, struct SrInterp (below): the exception being
 *    raised, the interrupt flag and points, JAX's global state
 *    (jaxstate.h: meshes in context, config), the traces being built, the
 *    autodiff pass's memo, the execution backend's state;
 *  - exceptions and raising (sr_raise and its kin, the exception class);
 *  - array values, abstract, tracer or concrete, and avals (trace.h,
 *    array.c), traces, binding a primitive (sr_bind_prim), param lists
 *    (SrPList) and evaluating a jaxpr by binding (sr_eval_jaxpr).
 * It may use util/ ir/ prims/ text/ check/ only: exec/, ad/, opt/, lax/
 * and the language (py/, jax/, cmd/) build on it, as ad.py builds on
 * core.py and never imports api.py.
 *
 * The split of the state.  struct SrInterp is the session's runtime and
 * lives here, because ad/ and exec/ read and write it (I->trace, I->exc,
 * I->jax, I->exec...).  The Python interpreter's own state (globals, where
 * evaluation is, echo, the error callbacks, warnings shown...) is a struct
 * of lib/py/ that the runtime points to, I->py, as Lua's lua_State points
 * to its global_State: a stage below the language passes the one handle
 * SrInterp * around and never sees the interpreter's fields.  That keeps
 * every function's signature (SrInterp *I first) as it was.
 *
 * The hooks core declares, where it must call up (trace.h, SrBackendHooks):
 * binding a primitive on concrete arrays runs it on the backend (exec/),
 * as JAX's eval trace calls a primitive's impl; concrete arrays are the
 * backend's, so core frees, prints and types them through the same hooks.
 * The Python face of values (operators, attributes and methods of arrays
 * and exceptions) is the language's: it installs them into the classes'
 * `lang` slot at init (sr_array_methods_init, sr_exc_methods_init), as
 * jax.numpy sets the operator methods of core.Tracer and ArrayImpl.
 */
#ifndef SR_CORE_CORE_H
#define SR_CORE_CORE_H

#include <stdint.h>

#include "ir/val.h"
#include "util/buf.h"
#include "util/diag.h"

typedef struct SrInterp SrInterp;

struct SrJaxState;
struct SrPyState; /* py/interp.h: the Python interpreter's own state */
struct SrVar;  /* ir/jaxpr.h */
struct SrType; /* ir/type.h */
struct SrTrace; /* core/trace.h */

struct SrInterp {
  /* the exception being raised */
  SrVal *exc;
  SrSrc *exc_src;
  size_t exc_off;
  int exc_located;       /* 1: at exc_src/exc_off; 2: the message carries
                            its own locations */
  /* Ctrl-C (see sr_interrupt_point): SIGINT sets interrupted, and the
     computation stops at the next interrupt point.  ticks counts the
     points passed since the statement began; stop_at is where the ranks
     agreed to stop (UINT64_MAX: nowhere yet). */
  volatile int interrupted;
  uint64_t ticks, stop_at;
  /* Under MPI (src/mpi_driver.c): called at an interrupt point when an
     interrupt is pending or a stop was agreed; agrees with the other ranks
     on the point where all of them stop, so that they stop at the same
     place.  Returns 1 to stop here.  NULL: stop at once. */
  int (*on_interrupt)(SrInterp *I);
  struct SrJaxState *jax; /* JAX's global state (meshes, devices, config) */
  struct SrJitCache *jit_cache; /* jax/api.c: the statement's traces of jitted functions */
  struct SrAdMemo *ad_memo; /* ad/: the transformed call bodies of the AD pass under way */
  int ad_depth;             /* AD contexts open (sr_ad_begin without sr_ad_end) */
  struct SrTrace *trace;  /* the innermost trace being built, or NULL */
  const char *loc;        /* the source location equations are recorded
                             under while an engine binds an equation's rule
                             (its SrEqn.loc; NULL: sr_trace_loc_hook's) */
  const char *ns;         /* the name stack equations are bound under
                             (ir/name_stack.h), relative to the innermost
                             trace begun, as JAX resets it for each jaxpr
                             traced; NULL: empty */
  int next_trace_id;
  int trace_calls;        /* functions being traced, one inside another
                             (sr_trace_call) */
  /* how the tracers of the next trace begun print (sr_trace_next_repr,
     trace.h); sr_trace_begin takes them */
  void (*next_tracer_repr)(struct SrInterp *I, struct SrTrace *t, struct SrVar *v, const struct SrType *type,
                           struct SrBuf *out);
  struct SrVal *next_tracer_data;
  const char *item_for;   /* the Python conversion asking an object for its
                             scalar (SR_OP_ITEM): "int", "float",
                             "complex" or "index" (__int__, __float__,
                             __complex__, __index__); NULL: x.item() */
  const char *next_tracer_class; /* sr_trace_next_class */
  void *exec;             /* the execution backend's state (exec/) */
  struct SrPyState *py;   /* the Python interpreter's own state (py/) */
};

/* Is v an object of class cls? */
static inline int sr_is_obj(const SrVal *v, const SrClass *cls) {
  return v->kind == SR_V_OBJ && v->obj.cls == cls;
}

/* ---- interrupts ---- */

/* An interrupt point: every statement, expression, jaxpr equation and loop
   iteration passes one, so that Ctrl-C stops a long computation.  Returns 1
   when it must stop here (the interrupt is consumed: the caller raises
   KeyboardInterrupt, once); 0 to go on.  Costs an increment and a compare
   when no interrupt is pending. */
int sr_interrupt_stop(SrInterp *I);
static inline int sr_interrupt_point(SrInterp *I) {
  if (++I->ticks < I->stop_at && !I->interrupted) return 0;
  return sr_interrupt_stop(I);
}
/* A new statement of every rank: interrupt points count from 0 again and
   no stop is agreed (a pending interrupt stays pending). */
void sr_interrupt_restart(SrInterp *I);

/* ---- exceptions ---- */

/* Raises a new exception of the named type (JAX's or Python's: "TypeError")
   and returns NULL.  The language gives it the location being evaluated. */
SrVal *sr_raise(SrInterp *I, const char *type, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The same with an SrErrKind other than SR_E_RUNTIME. */
SrVal *sr_raise_kind(SrInterp *I, int kind, const char *type, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Raises the first diagnostic of d (its exception type, or `type`),
   keeping its location if it has one; clears d. */
SrVal *sr_raise_diags(SrInterp *I, SrDiags *d, const char *type);
void sr_exc_clear(SrInterp *I);
/* Appends extra to the message of the exception being raised, where it
   was raised (e.args = msg + extra, re-raised). */
void sr_exc_append_msg(SrInterp *I, const char *extra);
/* An exception value (not raised). */
SrVal *sr_exc_new(const char *type, const char *msg, int kind);
/* The type name, message and SrErrKind of an exception value. */
const char *sr_exc_type(const SrVal *exc);
const char *sr_exc_msg(const SrVal *exc);
int sr_exc_kind(const SrVal *exc);
/* The class of exception values; its `lang` ops (the attribute args) are
   the language's, installed by sr_exc_methods_init (py/interp.c). */
extern SrClass sr_exception_class;

/* print()'s text for one value; -1 with RecursionError raised when the
   value nests too deeply to print (see sr_val_too_deep), or with the
   exception a value's printer raised (an array whose copy to the host
   failed). */
int sr_to_str(SrInterp *I, SrBuf *out, SrVal *v);
int sr_to_repr(SrInterp *I, SrBuf *out, SrVal *v);

#endif
