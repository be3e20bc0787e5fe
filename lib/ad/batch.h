/* batch.h: the batching engine (vmap), JAX's batching.py.
 *
 * A batched value is an array and its batch dim: the axis of the array
 * that the map runs over, or SR_NOT_MAPPED for a value every example
 * shares.  sr_batch_eval walks a jaxpr whose types are one example's,
 * given batched inputs, and binds each equation's batched form into the
 * current trace (running it where there is none): an equation with no
 * mapped input is bound as it is; one with a mapped input goes to its
 * row's batching rule (prims/prim.h's SrBatchRule):
 *
 *     static int batch_sin(SrBatch *b, const SrEqn *e, SrVal **x,
 *                          const int *bd, SrVal **y, int *ybd);
 *
 * x[e->nin] are the batched inputs and bd[e->nin] their batch dims (at
 * least one mapped); the rule fills y[e->nout] and ybd[e->nout].  A rule
 * binds with the ad/ helpers on &b->ad (ad_rules.h: sr_ad_bind_eqn,
 * sr_ad_transpose_dims, ...), whose results are pooled; the engine takes
 * its own references to what the rule puts in y.
 *
 * The family files of lib/lax/ hold the rules, beside each primitive's
 * other rules; the engine knows no primitive.
 */
#ifndef SR_AD_BATCH_H
#define SR_AD_BATCH_H

#include "ad/ad_rules.h"

#define SR_NOT_MAPPED (-1)

typedef struct SrBatch {
  SrAd ad;               /* mode SR_AD_JVP: binds go to the current trace */
  int64_t size;          /* the mapped axis' size */
  const char *axis_name; /* vmap's axis_name (interned), or NULL */
  const char *spmd[SR_MAX_DIM_AXES]; /* spmd_axis_name: mesh axes the batch */
  int nspmd;                         /* axis is sharded over (none: 0) */
  int spmd_explicit; /* spmd[] are the Explicit mesh axes the mapped dims of
                        the arguments are sharded over (AxisData's
                        explicit_mesh_axis), not spmd_axis_name */
  SrAxes arg_vary;   /* mesh axes the mapped arguments of the jaxprs batched
                        (sr_batch_jaxpr*) vary over besides their own: a
                        shard_map body's under spmd_axis_name, whose batch
                        dim those manual axes split */
} SrBatch;

void sr_batch_begin(SrBatch *b, SrInterp *I, int64_t size, const char *axis_name);
void sr_batch_end(SrBatch *b);

/* Evaluates j (one example's types) on batched inputs in[] with batch dims
   in_bd[]; fills out[] (new references) and out_bd[]. */
int sr_batch_eval(SrBatch *b, const SrJaxpr *j, SrVal **in, const int *in_bd, SrVal **out, int *out_bd);

/* batching.batch_jaxpr: j batched as a jaxpr whose batched inputs
   (in_batched[i]) and batched outputs have the batch axis first.  Outputs
   with inst[k] set (NULL: none) are batched even when they need not be;
   out_batched gets which outputs are.  A new jaxpr (its own program). */
SrJaxpr *sr_batch_jaxpr(SrBatch *b, const SrJaxpr *j, const uint8_t *in_batched, const uint8_t *inst,
                        uint8_t *out_batched);

/* batching.batch_jaxpr_axes and batch_jaxpr2: j batched with input i
   mapped at in_axes[i] (SR_NOT_MAPPED: not); output k is moved to
   out_dest[k] (broadcast there when unmapped), or to 0 only when it is
   mapped for SR_BATCH_ZERO_IF_MAPPED, or left where the rules put it
   (out_dest NULL: every output, batch_jaxpr2).  out_axes gets each
   output's batch dim.  A new jaxpr (its own program). */
#define SR_BATCH_ZERO_IF_MAPPED (-2)
SrJaxpr *sr_batch_jaxpr_axes(SrBatch *b, const SrJaxpr *j, const int *in_axes, const int *out_dest, int *out_axes);

/* jnp.take(x, np.array(idx[n]), axis=axis) bound into the current trace,
   for the rules JAX writes with `v.take` (the jax layer above fills it at
   start-up: jax/vmap_hooks.c).  A new reference, or NULL with an
   exception raised. */
extern SrVal *(*sr_batch_take)(SrInterp *I, SrVal *x, const int64_t *idx, int n, int axis);

/* ---- helpers for the rules (pooled results) ---- */

/* batching.spmd_names_insert_pvary: in a shard_map body batched under
   spmd_axis_name (check_vma, jax_auto_pcast), x pvary'd onto the spmd
   axes it does not vary over yet; x itself otherwise (kept in b's pool). */
SrVal *sr_batch_spmd_pvary(SrBatch *b, SrVal *x);

/* One example's type of a batched type: t without axis bd (its sharding
   entry dropped); t itself for SR_NOT_MAPPED. */
const SrType *sr_batch_unmapped_type(const SrType *t, int bd);
/* The batched type of an example's type t: a new axis of size n at bd,
   sharded over spmd (nspmd of them) or not. */
const SrType *sr_batch_mapped_type(const SrBatch *b, const SrType *t, int bd);
/* x with its batch axis moved from `from` to `to` (no equation when they
   agree). */
SrVal *sr_batch_moveaxis(SrBatch *b, SrVal *x, int from, int to);
/* batching.matchaxis: x with its batch dim at `to`, an unmapped x
   broadcast to b->size there. */
SrVal *sr_batch_matchaxis(SrBatch *b, SrVal *x, int bd, int to);
/* batching.bdim_at_front(x, bd, size): matchaxis to 0 with the given
   size for an unmapped x (1 lets a primitive's own broadcasting do it). */
SrVal *sr_batch_at_front(SrBatch *b, SrVal *x, int bd, int64_t size);
/* Binds e with x as its inputs (the rule of a primitive whose params do
   not depend on its shapes); every output gets batch dim `bd`. */
int sr_batch_bind_same(SrBatch *b, const SrEqn *e, SrVal **x, int bd, SrVal **y, int *ybd);
/* batching.broadcast(x, size, to, explicit_mesh_axis) for an unmapped x:
   a new axis of b->size at `to`, split over the mesh axes dim `bd` of
   src (a mapped operand's type: the batch axis' sharding) is split over;
   sr_batch_matchaxis's broadcast when that dim is not split.  Pooled. */
SrVal *sr_batch_broadcast_as(SrBatch *b, SrVal *x, int to, const SrType *src, int bd);
/* Binds e's primitive, for e's number of results, with x[nin] as inputs
   and e's params, those named in the (key, counted value) pairs that
   follow (ending in NULL) replaced by the new values (appended when e
   lacks them).  Pooled: the result, or for a multi-result primitive a
   tuple (NULL when an input is). */
SrVal *sr_batch_bind_with(SrBatch *b, const SrEqn *e, int nin, SrVal **x, ...);
/* batching.get_sharding_for_vmap: a sharding param (a NamedSharding or P;
   None and NULL stay None) with an entry inserted at `axis` for the batch
   axis (short specs padded with None first).  The entry is the batch
   axis' own sharding, JAX's explicit_mesh_axis: the mesh axes that dim
   `bd` of src (a mapped operand's type) is split over, or None.
   Counted. */
SrVal *sr_batch_sharding_for_vmap(SrVal *orig, int axis, const SrType *src, int bd);
/* Raises JAX's "Batching rule for 'NAME' not implemented". */
int sr_batch_no_rule(SrBatch *b, const SrPrim *p);

/* The generic rules families register. */
/* batching.broadcast_batcher: elementwise n-ary ops. */
int sr_batch_broadcast(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd);
/* A unary op that works on any layout (vectorized_batcher of one input). */
int sr_batch_unary(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd);

#endif
