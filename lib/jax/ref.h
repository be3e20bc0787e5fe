/* ref.h: what the array class asks of jax.ref (ref.c). */
#ifndef SR_JAX_REF_H
#define SR_JAX_REF_H

#include "core/core.h"
#include "core/trace.h"

/* Whether v is a Ref (an array value of Ref type). */
int sr_jax_is_ref(const SrVal *v);
/* r[idx] (ref_get): a new reference, or NULL with an exception. */
SrVal *sr_jax_ref_get(SrInterp *I, SrVal *ref, SrVal *idx);
/* r[idx] = v (ref_set): 0, or -1 with an exception. */
int sr_jax_ref_set(SrInterp *I, SrVal *ref, SrVal *idx, SrVal *v);
/* r[idx] += x (ref_addupdate): 0, or -1 with an exception. */
int sr_jax_ref_addupdate(SrInterp *I, SrVal *ref, SrVal *idx, SrVal *x);
/* A Ref's own attributes (addupdate, at): a new reference, or NULL --
   with an exception on an error, without one when it has none by that
   name. */
SrVal *sr_jax_ref_getattr(SrInterp *I, SrVal *ref, const char *name);

/* The checks of jax_mutable_array_checks while tracing a function (dbg:
   "f at file:line traced for jit", t its trace): the same Ref among the
   argument leaves twice (check_no_aliased_ref_args), a Ref both closed
   over and passed (_check_no_aliased_closed_over_refs), a Ref among the
   results (_check_no_returned_refs).  0, or -1 with JAX's ValueError. */
int sr_jax_check_ref_args(SrInterp *I, SrTrace *t, const char *dbg, SrVal *const *leaves, int n);
int sr_jax_check_closed_refs(SrInterp *I, SrTrace *t, const char *dbg, SrVal *const *leaves, int n);
/* The same with the argument leaves' names given (a scan's or cond's
   operands), and the closed-over values captured[0..ncap). */
int sr_jax_check_ref_args_named(SrInterp *I, const char *const *names, int nn, const char *dbg, SrVal *const *leaves,
                                int n);
int sr_jax_check_closed_refs_named(SrInterp *I, SrVal *const *captured, int ncap, const char *const *names, int nn,
                                   const char *dbg, SrVal *const *leaves, int n);
int sr_jax_check_returned_refs(SrInterp *I, SrTrace *t, const char *dbg, SrVal *const *outs, int n);
/* The same for the results of a traced body j (a cond's branch). */
int sr_jax_check_returned_refs_jaxpr(SrInterp *I, const char *dbg, const SrJaxpr *j);

#endif
