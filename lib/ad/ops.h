/* ops.h: the one lax-op layer (ops.c).
 *
 * Each function binds primitives the way the function of the same name in
 * JAX's lax does (lax/lax.py, lax/slicing.py, core.py): the same
 * equations, with the same params, in the same order, including the skips
 * JAX makes (an identity transpose, an empty squeeze, a same-dtype convert)
 * and the casts it inserts (core.auto_insert_reshard).  Both the JAX API
 * (jax/lax.h's sr_lax_*, over jax.numpy and jax.lax) and the rules of the
 * family files and the engines (ad_rules.h's sr_ad_*) are thin faces of
 * these functions.
 *
 * An operation says where its equations go through a binder: the
 * interpreter's current trace (SR_BINDER(I), the API's), or an autodiff
 * pass's context (SR_AD_BINDER(ad), the rules'), which sends an operation
 * on known values to the primal trace and one on tangents to the tangent
 * trace under linearization.  The target sharding of an operation
 * (out_sharding, sharding) is an explicit argument: a NamedSharding value
 * (borrowed) or NULL for None; the rules derive it from a type with
 * sr_ad_sharding_param.  The binder's `rule` flag says the inputs are a
 * jaxpr's values rather than the API's: a literal then is a numpy
 * constant, not a jax.Array, which decides some of JAX's skips
 * (lax.transpose returns an Array unchanged, binds for a constant).
 *
 * Every function borrows its arguments and returns a new reference, or
 * NULL with an exception raised; a NULL input gives NULL (an error is
 * pending), so a caller checks only its final result.  The rules' faces
 * keep the results in their pool instead (ad_rules.h).
 */
#ifndef SR_AD_OPS_H
#define SR_AD_OPS_H

#include <stdarg.h>

#include "core/trace.h"
#include "prims/prim.h"

struct SrAd;

typedef struct SrBinder {
  SrInterp *I;
  struct SrAd *ad; /* NULL: the interpreter's current trace */
  int rule;        /* a rule's values: literals are numpy constants */
} SrBinder;

/* The binder of the API (the current trace) and of a rule (ad's pass). */
#define SR_BINDER(I) (&(SrBinder){(I), NULL, 0})
#define SR_AD_BINDER(ad) (&(SrBinder){(ad)->I, (ad), 1})

/* ---- binding ---- */

/* Binds prim to inputs with params (borrowed) where b says: the result,
   or a tuple for a multi-result primitive (a new reference). */
SrVal *sr_op_bind(const SrBinder *b, int prim_id, int nin, SrVal **in, int nparams, const SrParam *params);
/* The same with params as (key, counted value) pairs ending in NULL (the
   values are stolen). */
SrVal *sr_op_bindv(const SrBinder *b, int prim_id, int nin, SrVal **in, ...);
SrVal *sr_op_bindva(const SrBinder *b, int prim_id, int nin, SrVal **in, va_list ap);
/* sr_op_bindv into the interpreter's current trace. */
SrVal *sr_bindv(SrInterp *I, int prim_id, int nin, SrVal **in, ...);

/* The first item of a multi-result primitive's tuple, or r itself (steals
   r). */
SrVal *sr_op_first(SrVal *r);

/* ---- params ---- */

/* A tuple of ints (a shape, axes, a permutation). */
SrVal *sr_int_tuple(const int64_t *v, int n);
/* A tuple of axis names of mesh m in mesh order: ('X', 'Y'). */
SrVal *sr_op_axes_tuple(const SrMesh *m, SrAxes axes);
/* The set of a type's axes `axes` (over t->mesh) as axes of mesh m. */
SrAxes sr_op_axes_on(const SrType *t, SrAxes axes, const SrMesh *m);
/* A NamedSharding's spec padded with None to nd entries
   (P._normalized_spec_for_aval); a new reference. */
SrVal *sr_op_normalized_sharding(SrVal *sh, int nd);
/* Does x's type already have sharding sh (the same spec)? */
int sr_op_has_sharding(SrInterp *I, SrVal *x, SrVal *sh);

/* ---- casts (core.py) ---- */

/* core.pvary / reduced_vary_cast (prim) of x over axes of mesh m (NULL:
   the context mesh); no axes: x itself. */
SrVal *sr_op_axes_cast(const SrBinder *b, int prim, SrVal *x, SrAxes axes, const SrMesh *m);
/* core.auto_insert_reshard, in place: args hold new references (or NULL)
   afterwards, and -1 with an exception raised on failure. */
int sr_op_auto_insert(const SrBinder *b, int n, SrVal **args);

/* ---- elementwise ---- */

SrVal *sr_op_unary(const SrBinder *b, int prim, SrVal *x);
SrVal *sr_op_binary(const SrBinder *b, int prim, SrVal *x, SrVal *y);
/* select_n(which, *cases), the casts inserted first. */
SrVal *sr_op_select_n(const SrBinder *b, int n, SrVal **which_and_cases);
/* lax._convert_element_type: no equation when nothing changes, a new
   literal for a Python scalar or literal value. */
SrVal *sr_op_convert(const SrBinder *b, SrVal *x, SrDtype dt, int weak, SrVal *sharding);

/* ---- structure ---- */

SrVal *sr_op_reshape(const SrBinder *b, SrVal *x, const int64_t *shape, int nd, SrVal *sharding);
SrVal *sr_op_transpose(const SrBinder *b, SrVal *x, const int64_t *perm, int n);
SrVal *sr_op_broadcast_in_dim(const SrBinder *b, SrVal *x, const int64_t *shape, int nd, const int64_t *bdims,
                              int nb, SrVal *sharding);
SrVal *sr_op_expand_dims(const SrBinder *b, SrVal *x, const int64_t *dims, int n);
/* lax.full: a broadcast_in_dim of the scalar fill converted to dtype (-1:
   the fill's), or the scalar itself. */
SrVal *sr_op_full(const SrBinder *b, const int64_t *shape, int nd, SrVal *fill, int dtype, SrVal *sharding);
/* reduce_sum / reduce_max / reduce_min (with out_sharding), reduce_prod,
   reduce_and, reduce_or. */
SrVal *sr_op_reduce(const SrBinder *b, int prim, SrVal *x, const int64_t *axes, int n, SrVal *out_sharding);
SrVal *sr_op_squeeze(const SrBinder *b, SrVal *x, const int64_t *dims, int n);
SrVal *sr_op_iota(const SrBinder *b, SrDtype dt, const int64_t *shape, int nd, int dim, SrVal *sharding);
SrVal *sr_op_argminmax(const SrBinder *b, int prim, SrVal *x, int64_t axis, SrDtype index_dtype);
/* dot_general with ((lc, rc), (lb, rb)); precision (borrowed) and
   preferred_element_type (-1) may be None. */
SrVal *sr_op_dot_general(const SrBinder *b, SrVal *lhs, SrVal *rhs, const int64_t *lc, int nlc, const int64_t *rc,
                         int nrc, const int64_t *lb, int nlb, const int64_t *rb, int nrb, SrVal *precision,
                         int pref, SrVal *out_sharding);
SrVal *sr_op_concatenate(const SrBinder *b, int n, SrVal **xs, int dim);
/* start, limit and strides (NULL: None) have x's rank of entries. */
SrVal *sr_op_slice(const SrBinder *b, SrVal *x, const int64_t *start, const int64_t *limit, const int64_t *strides);
SrVal *sr_op_dynamic_slice(const SrBinder *b, SrVal *x, SrVal **starts, const int64_t *sizes);
SrVal *sr_op_rev(const SrBinder *b, SrVal *x, const int64_t *dims, int n);
/* lax.pad: cfg holds (low, high, interior) per dimension of x. */
SrVal *sr_op_pad(const SrBinder *b, SrVal *x, SrVal *padding_value, const int64_t *cfg, int nd);
/* lax.dynamic_update_slice with starts already normalized (one per dim). */
SrVal *sr_op_dynamic_update_slice(const SrBinder *b, SrVal *x, SrVal *update, SrVal **starts);
/* lax.broadcast_to: leading dims added, size-1 dims stretched. */
SrVal *sr_op_broadcast_to(const SrBinder *b, SrVal *x, const int64_t *shape, int nd, SrVal *sharding);
/* reshard(x) to a NamedSharding (normalized to x's rank), with the
   concrete mesh param (NULL: None). */
SrVal *sr_op_reshard(const SrBinder *b, SrVal *x, SrVal *sharding, SrVal *concrete_mesh);

#endif
