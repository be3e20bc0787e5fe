/* ad.h: automatic differentiation over jaxprs, the way JAX does it.
 *
 * LAYER.  ad/ is the autodiff engine (JAX's interpreters/ad.py): the walks
 * below and the machinery JVP and transpose rules share (ad_rules.h: the
 * pass's context, zeros, binding, lax-level operations), and the one
 * lax-op layer that the rules and JAX's API share (ops.h).  It holds no
 * primitive's rule: those are the family files' (lax/), reached through
 * the rows' jvp and transpose slots.  It uses the layers up to exec/.
 *
 * Three stages, each a jaxpr the user can print:
 *  - JVP: every equation is replaced by its primal and tangent computation
 *    (sr_ad_jvp; forward mode, jax.jvp).
 *  - Linearization (sr_ad_linearize; jax.linearize, and the first half of
 *    jax.vjp and jax.grad): JVP rules run under partial evaluation.  Work
 *    on primal values only is *known*: it is bound into the enclosing trace
 *    right away, in order (JAX's direct linearize).  Work that touches a
 *    tangent is *unknown*: it goes into a separate linear jaxpr, and the
 *    known values it uses become that jaxpr's residual inputs.
 *  - Transposition (sr_ad_vjp_apply, sr_ad_transpose): the linear jaxpr is
 *    walked backwards, each equation's transpose rule binding new equations
 *    into the enclosing trace; cotangents of a value used twice are summed
 *    with add_any.
 *
 * Everything is bound through sr_bind, so the primitives' type rules give
 * every tangent and cotangent type.  Cotangent types are a function of
 * primal types (sr_ad_ct_type).  Symbolic zeros (NULL tangents or
 * cotangents) make no equations until they must be instantiated.
 *
 * Errors are Python exceptions raised on the interpreter (sr_raise); the
 * functions return -1 or NULL.  A primitive without a rule raises JAX's
 * "Differentiation rule for 'pmax' not implemented".
 */
#ifndef SR_AD_AD_H
#define SR_AD_AD_H

#include <stdint.h>

#include "ir/jaxpr.h"
#include "ir/type.h"
#include "core/core.h"

/* The tangent type of a primal type: float0 for integers and booleans,
   everything else kept (core.py: to_tangent_aval). */
const SrType *sr_ad_tangent_type(const SrType *t);
/* The cotangent type (to_ct_aval): the tangent dtype, and reduced and
   unreduced swapped ({R:X} <-> {U:X}, kind sum); sharded, replicated and
   varying stay as they are. */
const SrType *sr_ad_ct_type(const SrType *t);
/* Does the type have a tangent space (an inexact dtype)? */
int sr_ad_differentiable(const SrType *t);

/* ---- forward mode ---- */

/* jax.jvp on a jaxpr: binds the primal and tangent computation of j into
   the current trace (or runs it).  tangents[i] NULL is a symbolic zero.
   Fills out[j->nout] and tout[j->nout] with new references (tout[i] NULL
   for a zero tangent).  Returns 0 or -1. */
int sr_ad_jvp(SrInterp *I, const SrJaxpr *j, SrVal **primals, SrVal **tangents, SrVal **out,
              SrVal **tout);

/* ---- linearization ---- */

/* A linearization of a function at a point: the linear jaxpr and its
   residuals.  The jaxpr's inputs are its constvars (their values in
   jaxpr->consts), then nres residual arguments (values in res), then one
   tangent argument per input with in_nz set; its outputs are the tangents
   of the outputs with out_nz set.  It is what f_jvp of jax.linearize
   applies and what the VJP function transposes. */
typedef struct SrLinear {
  SrJaxpr *jaxpr;          /* holds a reference to its program */
  SrVal **res;             /* counted */
  int nres;
  int nin, nout;
  uint8_t *in_nz, *out_nz;
  const SrType **in_types, **out_types; /* the primal types */
  uint8_t *res_arg;        /* per residual: the index+1 of the primal input
                              it is (saved verbatim: args_res), or 0 */
} SrLinear;

/* Linearizes j at primals (array values of the current trace, or
   concrete), with nonzero tangents for the inputs with in_nz set (NULL:
   all inexact inputs), for the outputs with out_diff set (NULL: all; the
   others, has_aux's aux, get no tangent).  The primal computation and the
   residuals are bound into the current trace as they would be by
   evaluating j; out[j->nout] gets the primal outputs.  Returns 0 or -1. */
int sr_ad_linearize(SrInterp *I, const SrJaxpr *j, SrVal **primals, const uint8_t *in_nz,
                    const uint8_t *out_diff, SrVal **out, SrLinear *lin);
void sr_ad_linear_free(SrLinear *lin);
/* f_jvp: applies the linear map to tangents of all inputs (zeros for
   inputs without in_nz are ignored); tout[i] gets the output tangents,
   zeros instantiated. */
int sr_ad_linear_apply(SrInterp *I, const SrLinear *lin, SrVal **tangents, SrVal **tout);
/* The VJP function: cotangents of the outputs (NULL: zero) to cotangents
   of the inputs (cts_in[lin->nin]), zeros instantiated for the inputs with
   in_nz set, and for the others too with zeros_all (else NULL). */
int sr_ad_vjp_apply(SrInterp *I, const SrLinear *lin, SrVal **cts_out, SrVal **cts_in, int zeros_all);

/* ---- transposition ---- */

/* Transposes j in the inputs with linear[i] set, given values for the
   others: binds the backward pass into the current trace and fills
   cts_in[j->nin] (constvars excluded: the arguments only) with new
   references, NULL for a zero cotangent.  cts_out[i] NULL is a zero. */
int sr_ad_transpose(SrInterp *I, const SrJaxpr *j, const uint8_t *linear, SrVal **vals,
                    SrVal **cts_out, SrVal **cts_in);

/* ---- values ---- */

/* zeros_like_aval: `broadcast_in_dim 0.0` with the type's sharding, a
   bare literal for a scalar with no mesh in context, `reshard 0.0` for a
   scalar under a mesh, then pvary onto the varying axes. */
SrVal *sr_ad_zeros(SrInterp *I, const SrType *t);
/* lax._one_vjp(ans): the cotangent 1 that jax.grad feeds back; vmesh is
   the mesh of the differentiated values (sr_ad_jaxpr_mesh of the traced
   function: ans's aval.sharding.mesh in JAX), for when no mesh is in
   context, or NULL. */
SrVal *sr_ad_one_ct(SrInterp *I, const SrType *ans, const SrMesh *vmesh);
/* The first mesh a jaxpr's binders' types name, or NULL. */
const SrMesh *sr_ad_jaxpr_mesh(const SrJaxpr *j);

/* Dead-code elimination of a freshly built jaxpr (its vars are reused, so
   j must not be used afterwards): keeps the outputs with used_out set (all
   when NULL) and the equations they need.  used_in (may be NULL) gets
   which arguments (not constvars) are still read; with prune_args the
   unread arguments are removed.  Returns the new jaxpr, in j's program. */
SrJaxpr *sr_ad_dce(SrJaxpr *j, const uint8_t *used_out, uint8_t *used_in, int prune_args);

#endif
