/* jit_options.h: jax.jit's static and donated arguments (jit_options.c,
 * after JAX's pjit.py and api_util.py): static_argnums / static_argnames
 * and donate_argnums / donate_argnames resolved against the function's
 * signature, and a call split into its static and dynamic arguments. */
#ifndef SR_JAX_JIT_OPTIONS_H
#define SR_JAX_JIT_OPTIONS_H

#include "core/trace.h"
#include "py/interp.h"

#define SR_JIT_MAX_OPT 32

/* The resolved options (api_util.resolve_argnums): the numbers may be
   negative (resolved against each call's arguments). */
typedef struct SrJitOpts {
  int nsn, sn[SR_JIT_MAX_OPT];
  int nsa;
  const char *sa[SR_JIT_MAX_OPT]; /* interned */
  int ndn, dn[SR_JIT_MAX_OPT];
  int nda;
  const char *da[SR_JIT_MAX_OPT];
} SrJitOpts;

/* Reads jit's static_argnums=, static_argnames=, donate_argnums= and
   donate_argnames= from kw (any may be NULL or None), infers the missing
   numbers or names from fn's signature and validates them in JAX's words.
   -1 with an exception raised. */
int sr_jit_opts_parse(SrInterp *I, SrVal *fn, SrVal *static_argnums, SrVal *static_argnames,
                      SrVal *donate_argnums, SrVal *donate_argnames, SrJitOpts *o);
static inline int sr_jit_opts_any(const SrJitOpts *o) { return o && (o->nsn || o->nsa || o->ndn || o->nda); }

/* A call split: fn with its static arguments bound (a new reference:
   the function itself when none is static), the dynamic arguments
   (borrowed from the call's), the static values in order (a tuple, the
   key of the trace cache; NULL when none) and, per dynamic positional
   then keyword argument, whether it is donated. */
typedef struct SrJitSplit {
  SrVal *fn;
  SrArgs a;
  SrVal *statics;
  uint8_t *donated; /* a.n + a.nkw entries, or NULL when none is */
  uint8_t owns;     /* a's arrays are the split's */
  /* with static arguments bound: the function itself (a reference) and
     the names of the dynamic arguments' leaves in its signature
     (debug_info's arg_names), for the trace's errors */
  SrVal *orig;
  char **names;
  int nnames;
} SrJitSplit;

/* Splits call a of fn (named name) by o (NULL: no options): raises
   JAX's ValueError for a static argument that is not hashable and for an
   index out of range.  -1 with an exception raised. */
int sr_jit_split(SrInterp *I, const SrJitOpts *o, SrVal *fn, const char *name, SrArgs *a, SrJitSplit *s);
void sr_jit_split_free(SrJitSplit *s);
/* Before tracing s->fn: the trace's debug info is that of the function
   itself, not of its static arguments' binding (sr_trace_fn_debug). */
void sr_jit_split_debug(const SrJitSplit *s);
/* Whether two static tuples are the same key (JAX's
   _HashableWithStrictTypeEquality: the same types and equal values):
   1 or 0, -1 with jaxlib's ValueError raised when an __eq__ fails. */
int sr_jit_statics_equal(SrInterp *I, const SrVal *a, const SrVal *b);
/* The donation of a jit call about to run (not under a trace), leaves its
   n input leaves (ncaptured captured ones first), don the donated flag of
   the first ndon, outs the types of its nout results.  Which donated
   leaves XLA aliases to a result (mlir._set_up_aliases: each result, in
   order, takes the first unaliased donated input of its dtype and shape):
   *usable, malloc'd (n entries), or NULL when none is donated.  Raises
   PJRT's error for a buffer passed twice where one use is donated, and
   warns of the donated inputs no result can take (on one device; over
   several XLA decides).  -1 with an exception raised. */
int sr_jit_donation_check(SrInterp *I, SrVal **leaves, int n, int ncaptured, const uint8_t *don, int ndon,
                          const SrType *const *outs, int nout, uint8_t **usable);
/* After the call ran: deletes the concrete arrays among the usable
   donated leaves (those PJRT donates; the others stay valid). */
void sr_jit_donation_finish(SrVal **leaves, int n, const uint8_t *usable);
/* The donated flag of each leaf of the dynamic arguments, after ncaptured
   leading captured inputs (which are never donated): a malloc'd array of
   ncaptured + leaves entries in *out, or NULL when none is donated. */
uint8_t *sr_jit_donated_leaves(SrInterp *I, const SrJitSplit *s, int ncaptured, int *n);

/* Registers the arrays' delete / is_deleted and the introspection this
   file's task added. */
void sr_jit_options_init(void);

#endif
