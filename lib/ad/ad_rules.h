/* ad_rules.h: what the JVP and transpose rules of ad/ share.
 *
 * A JVP rule computes an equation's primal outputs and their tangents:
 *
 *     static int jvp_sin(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t,
 *                        SrVal **y, SrVal **ty);
 *
 * x[e->nin] are the primal inputs, t[e->nin] their tangents (NULL for a
 * symbolic zero; at least one is nonzero).  The rule fills y[e->nout] and
 * ty[e->nout] (NULL: zero tangent).  It binds every operation with the
 * ad_* helpers below, which pick the trace: under linearization (mode
 * SR_AD_LIN) an operation whose inputs are all known goes to the primal
 * trace at once, and one that reads a tangent goes to the tangent trace,
 * so one rule serves jax.jvp and JAX's direct linearize alike.  A rule that
 * needs to do more under linearization (jit, scan, shard_map) tests
 * ad->mode.
 *
 * A transpose rule maps the cotangents of an equation's outputs to the
 * cotangents of its linear inputs:
 *
 *     static int tr_mul(SrAd *ad, const SrEqn *e, SrVal **ct, SrVal **x,
 *                       SrVal **ctx);
 *
 * ct[e->nout] are the output cotangents (NULL: zero; at least one is
 * nonzero); x[i] is the value of input i, or NULL when input i is linear
 * (an undefined primal, whose cotangent type is sr_ad_ct_type of
 * e->in[i]->type).  The rule fills ctx[i] for the linear inputs (NULL:
 * zero).  Everything binds into the current trace.
 *
 * Values the helpers return are *borrowed from the rule's pool*: they live
 * until the rule returns, and the engine takes its own references to what
 * the rule puts in y, ty and ctx.  A helper given a NULL input returns NULL
 * (an error is pending), so a rule checks only its final results.
 */
#ifndef SR_AD_AD_RULES_H
#define SR_AD_AD_RULES_H

#include <stdarg.h>

#include "ad/ad.h"
#include "ad/ops.h"
#include "core/trace.h"
#include "prims/prim.h"

typedef enum {
  SR_AD_JVP, /* forward mode: everything into the current trace */
  SR_AD_LIN, /* linearization: known work to `primal`, the rest to `tangent` */
  SR_AD_BWD, /* the backward pass: everything into the current trace */
} SrAdMode;

typedef struct SrAd {
  SrInterp *I;
  SrAdMode mode;
  SrTrace *primal;  /* SR_AD_LIN: the trace known work goes to (NULL: run it) */
  SrTrace *tangent; /* SR_AD_LIN: the tangent trace */
  int staged;       /* > 0: everything goes to the tangent trace */
  int transform_stack; /* sr_ad_backward transposes under 'transpose'
                          (ad.backward_pass's transform_stack): the
                          top-level vjp's and linear_transpose's */
  /* the mesh of the values differentiated (the first mesh their types
     name), for the sharding params emitted when no mesh is in context:
     JAX's rules take a value's mesh from its aval (operand.aval.sharding) */
  const SrMesh *vmesh;
  /* the pool of values the helpers return */
  SrVal **pool;
  int npool, cappool;
} SrAd;

/* (SrJvpRule and SrTransposeRule, the slots' types, are in prims/prim.h.) */
void sr_ad_set_jvp(int prim_id, SrJvpRule r);
void sr_ad_set_transpose(int prim_id, SrTransposeRule r);
static inline SrJvpRule sr_ad_jvp_rule(const SrPrim *p) { return p->jvp; }
static inline SrTransposeRule sr_ad_transpose_rule(const SrPrim *p) { return p->transpose; }

/* The generic JVP rules of JAX's ad.py that families register for their
   rows: defjvp_zero (the primal, and a zero tangent) and linear_jvp (the
   primal, and the same op on the tangents, zeros instantiated). */
int sr_ad_jvp_zero(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty);
int sr_ad_jvp_linear(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty);
/* defbilinear for a two-operand, one-result op: the primal, and
   op(t, y) + op(x, t') with the equation's params (a zero tangent's term
   left out). */
int sr_ad_jvp_bilinear(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty);

/* ---- the engine, for rules of calls and control flow ---- */

void sr_ad_begin(SrAd *ad, SrInterp *I, SrAdMode mode);
void sr_ad_end(SrAd *ad);
/* Pool marks: values pooled after the mark are released by sr_ad_release. */
static inline int sr_ad_mark(SrAd *ad) { return ad->npool; }
void sr_ad_release(SrAd *ad, int mark);
/* Puts a new reference in the pool and returns it (NULL stays NULL). */
SrVal *sr_ad_keep(SrAd *ad, SrVal *v);

/* Evaluates j with JVP rules (the mode of ad): primals/tangents in,
   outputs out (new references).  The walk shared by sr_ad_jvp and
   sr_ad_linearize. */
int sr_ad_eval(SrAd *ad, const SrJaxpr *j, SrVal **primals, SrVal **tangents, SrVal **out, SrVal **tout);
/* The backward pass of j (see sr_ad_transpose), in ad's trace.  A
   non-NULL cts_in[i] of a linear argument on entry is the value its
   accumulator starts from (ValAccum(aval, val)). */
int sr_ad_backward(SrAd *ad, const SrJaxpr *j, const uint8_t *linear, SrVal **vals, SrVal **cts_out,
                SrVal **cts_in);

/* A linearization of a closed jaxpr into a forward jaxpr and a linear one
   (ad.linearize_jaxpr).  The forward jaxpr takes j's arguments and returns
   j's outputs then the residuals; the linear one takes the residuals then
   the nonzero tangents and returns the nonzero output tangents.  in_fwd[k]
   (k < nres) is the index+1 of the argument residual k forwards (not an
   output of fwd), or 0; only arguments with allow_fwd set (NULL: all) are
   forwarded.  Zero output tangents are instantiated where inst is set
   (NULL: nowhere). */
typedef struct SrLinJaxprs {
  SrJaxpr *fwd, *lin;      /* each holds a reference to its program */
  int nres;
  int *in_fwd;             /* nres entries */
  uint8_t *out_nz;         /* j->nout entries */
} SrLinJaxprs;
int sr_ad_linearize_jaxpr(SrAd *ad, const SrJaxpr *j, const uint8_t *in_nz, const uint8_t *inst,
                       const uint8_t *allow_fwd, SrLinJaxprs *out);
void sr_ad_lin_jaxprs_free(SrLinJaxprs *l);
/* The JVP of a closed jaxpr as a jaxpr (ad.jvp_jaxpr): takes the primals
   then the nonzero tangents, returns the primal outputs then the nonzero
   output tangents.  out_nz gets which output tangents are nonzero; zeros
   are instantiated where inst is set (NULL: nowhere). */
SrJaxpr *sr_ad_jvp_jaxpr(SrAd *ad, const SrJaxpr *j, const uint8_t *in_nz, const uint8_t *inst, uint8_t *out_nz);
/* The transpose of a jaxpr as a jaxpr: takes the values of the inputs
   not marked linear, then the cotangents of the outputs with ct_nz set;
   returns the cotangents of the linear inputs, zeros instantiated. */
SrJaxpr *sr_ad_transpose_jaxpr(SrAd *ad, const SrJaxpr *j, const uint8_t *linear, const uint8_t *ct_nz);

/* The memo of call bodies' transforms.  A call whose body is one jaxpr
   object (a jitted function called twice binds one body) is transformed
   once per AD pass and the calls share the result, as JAX's caches of
   jvp_jaxpr, linearize_jaxpr and the transpose keep them: the output keeps
   the sharing (printed hoisted), and n nested jits that call the inner one
   twice cost n transforms, not 2^n.  An entry is keyed by a tag (which
   transform), the body, the context mesh and the flags the transform
   takes; it holds up to two jaxprs (a reference to their programs) and
   ints of the caller's.  The memo lives while any AD context is open
   (sr_ad_begin .. sr_ad_end, nested ones included). */
typedef struct SrAdMemoVal {
  SrJaxpr *j[2];
  const int *data; /* owned by the memo */
  int ndata;
} SrAdMemoVal;
/* The entry, or NULL. */
const SrAdMemoVal *sr_ad_memo_get(SrAd *ad, int tag, const SrJaxpr *body, const uint8_t *key, size_t nkey);
/* Adds an entry (takes references to j0's and j1's programs; either may be
   NULL; copies data). */
void sr_ad_memo_put(SrAd *ad, int tag, const SrJaxpr *body, const uint8_t *key, size_t nkey, SrJaxpr *j0,
                 SrJaxpr *j1, const int *data, int ndata);

/* A freshly built jaxpr (not to be used afterwards) with its arguments and
   outputs reordered: argument i of the result is arg_order[i] of j (NULL:
   unchanged), likewise the outputs. */
SrJaxpr *sr_ad_permute(SrJaxpr *j, const int *arg_order, const int *out_order);

/* Tracing helpers: a new trace nested in the current one, with arguments
   of the given types; and ending it (the captured outer values come back
   in *captured, a new list, or are an error when captured is NULL). */
SrTrace *sr_ad_trace_begin(SrAd *ad, int n, const SrType *const *types, SrVal **args);
SrJaxpr *sr_ad_trace_end(SrAd *ad, SrTrace *t, int n, SrVal **outs, SrVal **captured);
/* F traced again (a new jaxpr, NULL with an exception raised) on fresh
   arguments of F's argument types, its outputs passed through map first:
   map gets a sub-AD (of kind SR_AD_BWD, emitting into the new trace) and
   F's n outputs in (borrowed), writes at most cap outputs of its own into
   out (borrowed from in or pooled in sub) and returns how many, or -1 with
   an exception raised.  The shape of cond's forward branches with their
   residuals moved to shared slots, and of shard_map's promoted residuals. */
typedef int (*SrAdRetraceMap)(SrAd *sub, SrVal *const *in, int n, SrVal **out, int cap, void *arg);
SrJaxpr *sr_ad_retrace(SrAd *ad, const SrJaxpr *F, int cap, SrAdRetraceMap map, void *arg);

/* The cotangent of a linear Ref of type ref_type in the backward pass: a
   new Ref of zeros in the transposed program (pooled), which the rules
   of what reads and writes the Ref write into (lax/state.c sets it; NULL
   with an exception raised when it cannot). */
extern SrVal *(*sr_ad_zero_ref_hook)(SrAd *ad, const SrType *ref_type);
/* Adds the cotangent value ct into the cotangent Ref ref (addupdate; 0,
   or -1 with an exception): what a rule gives for a Ref operand as a
   value.  lax/state.c sets it. */
extern int (*sr_ad_ref_accum_hook)(SrAd *ad, SrVal *ref, SrVal *ct);

/* ---- binding through the rules' dispatch ---- */

/* The trace an operation on these inputs belongs to: the current one, or
   under linearization the primal or the tangent trace. */
SrTrace *sr_ad_pick_trace(SrAd *ad, int nin, SrVal **in);

/* Binds prim to inputs with params (borrowed).  Returns the single result
   or, for multi-result primitives, a tuple (pooled). */
SrVal *sr_ad_bind(SrAd *ad, int prim_id, int nin, SrVal **in, int nparams, const SrParam *params);
/* The same with params as (key, counted value) pairs ending in NULL. */
SrVal *sr_ad_bindv(SrAd *ad, int prim_id, int nin, SrVal **in, ...);
/* Binds e's primitive and params to new inputs; always a tuple of
   e->nout results (pooled), with e's binder types as written types. */
SrVal *sr_ad_bind_eqn(SrAd *ad, const SrEqn *e, SrVal **in);
/* The same for a single-result equation: the result itself. */
SrVal *sr_ad_bind_eqn1(SrAd *ad, const SrEqn *e, SrVal **in);
/* Binds into the tangent trace regardless of the inputs (SR_AD_LIN), for
   values that must be staged (instantiated zeros). */
SrVal *sr_ad_bind_tangent(SrAd *ad, int prim_id, int nin, SrVal **in, int nparams, const SrParam *params);

/* ---- values and types ---- */

static inline const SrType *sr_ad_type(SrAd *ad, SrVal *v) { return v ? sr_value_type(ad->I, v) : NULL; }
/* The value of a literal atom of a jaxpr (pooled). */
SrVal *sr_ad_literal(SrAd *ad, const SrVar *lit);
/* A scalar literal of dtype dt (an abstract scalar with a value). */
SrVal *sr_ad_scalar(SrAd *ad, SrDtype dt, int weak, double v);
/* lax._const(example, v): a literal of example's dtype. */
SrVal *sr_ad_const(SrAd *ad, SrVal *example, double v);
/* The abstract mesh in context (may have n == 0). */
const SrMesh *sr_ad_ctx_mesh(SrAd *ad);
/* A sharding param for a type: NamedSharding(context mesh, spec of t);
   with no mesh in context, NamedSharding over the type's own mesh (else
   the values' mesh, ad->vmesh), as JAX's rules pass operand.aval.sharding;
   None when neither names a mesh.  Counted. */
SrVal *sr_ad_sharding_param(SrAd *ad, const SrType *t);
/* The mesh sharding params are made over: the context's, else the
   values' (ad->vmesh), else NULL. */
const SrMesh *sr_ad_value_mesh(SrAd *ad);

/* Is every axis of the context mesh Manual (inside shard_map)? */
int sr_ad_ctx_manual(SrAd *ad);

/* ---- lax-level operations (pooled results) ----
 *
 * The rules' faces of the one op layer (ops.h): each binds through ad
 * (SR_AD_BINDER), takes its target sharding from a type
 * (sr_ad_sharding_param), and keeps its result in the pool. */

SrVal *sr_ad_unop(SrAd *ad, int prim_id, SrVal *x);
SrVal *sr_ad_binop(SrAd *ad, int prim_id, SrVal *x, SrVal *y);
SrVal *sr_ad_mul(SrAd *ad, SrVal *x, SrVal *y);
SrVal *sr_ad_div(SrAd *ad, SrVal *x, SrVal *y);
SrVal *sr_ad_neg(SrAd *ad, SrVal *x);
SrVal *sr_ad_add_any(SrAd *ad, SrVal *x, SrVal *y);
/* add_tangents: a zero (NULL) on either side gives the other. */
SrVal *sr_ad_add_tangents(SrAd *ad, SrVal *x, SrVal *y);
/* full_like(x, shape=(), fill_value=v, sharding=x's with P()): lax._one,
   lax._zero (a literal, or `reshard` of one under a mesh). */
SrVal *sr_ad_scalar_like(SrAd *ad, SrVal *x, double v);
/* full(t.shape, v) with t's sharding (and pvary onto t's varying axes). */
SrVal *sr_ad_full(SrAd *ad, const SrType *t, double v);
SrVal *sr_ad_full_zeros(SrAd *ad, const SrType *t);
/* Zeros made in the tangent trace (instantiate_zeros under the tangent
   trace, as scan's tangent function does): equations of the linear
   jaxpr that the backward pass binds forward. */
SrVal *sr_ad_zeros_staged(SrAd *ad, const SrType *t);
/* lax.broadcast_in_dim(x, shape of t, dims, out_sharding of t when
   sharded_out, else None). */
SrVal *sr_ad_broadcast_in_dim(SrAd *ad, SrVal *x, const SrType *t, const int64_t *dims, int ndims,
                           int with_sharding);
/* lax.reduce_sum(x, axes, out_sharding=t's sharding when t is given). */
SrVal *sr_ad_reduce_sum(SrAd *ad, SrVal *x, const int64_t *axes, int naxes, const SrType *t);
/* lax.reshape(x, shape of t, out_sharding=t's sharding) (no equation when
   nothing changes). */
SrVal *sr_ad_reshape(SrAd *ad, SrVal *x, const SrType *t);
/* lax.reshape(x, shape of t) with no out_sharding. */
SrVal *sr_ad_reshape_plain(SrAd *ad, SrVal *x, const SrType *t);
/* lax.transpose (no equation for the identity). */
SrVal *sr_ad_transpose_dims(SrAd *ad, SrVal *x, const int64_t *perm, int n);
/* lax.expand_dims */
SrVal *sr_ad_expand_dims(SrAd *ad, SrVal *x, const int64_t *dims, int n);
/* convert_element_type to dt (no equation when the dtype is the same). */
SrVal *sr_ad_convert(SrAd *ad, SrVal *x, SrDtype dt, int weak);
/* reshard x to t's sharding. */
SrVal *sr_ad_reshard(SrAd *ad, SrVal *x, const SrType *t);
/* select_n(which, *cases) */
SrVal *sr_ad_select_n(SrAd *ad, SrVal *which, int n, SrVal **cases);
/* _unbroadcast(aval, x): sums x down to t's shape and sharding. */
SrVal *sr_ad_unbroadcast(SrAd *ad, const SrType *t, SrVal *x);
/* _maybe_broadcast(shape, x, sharding) of t. */
SrVal *sr_ad_maybe_broadcast(SrAd *ad, SrVal *x, const SrType *t);
/* core.pvary(x, axes) onto the axes of t's varying set x lacks. */
SrVal *sr_ad_pvary_to(SrAd *ad, SrVal *x, SrAxes axes, const SrMesh *m);

/* Counted param helpers (the op layer's). */
static inline SrVal *sr_ad_ints(const int64_t *v, int n) { return sr_int_tuple(v, n); }
static inline SrVal *sr_ad_axes_tuple(const SrMesh *m, SrAxes axes) { return sr_op_axes_tuple(m, axes); }

/* Raises JAX's error for a missing rule. */
int sr_ad_no_jvp(SrAd *ad, const SrPrim *p);
int sr_ad_no_transpose(SrAd *ad, const SrPrim *p);

#endif
