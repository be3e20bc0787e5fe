/* lax.h: the lax layer under the jax.numpy and jax.lax built-ins.
 *
 * The sr_lax_* functions are the API's faces of the one op layer
 * (ad/ops.h, which autodiff's rules use too): each binds into the
 * interpreter's current trace (SR_BINDER).  Each binds primitives the way
 * the function of the same name in JAX's lax does (lax/lax.py, lax/slicing.py, lax/parallel.py,
 * pjit.py): the same equations, with the same params, in the same order,
 * including the skips JAX makes (an identity transpose, an empty squeeze,
 * a same-dtype convert) and the casts it inserts (core.auto_insert_reshard).
 * numpy.c builds jax.numpy on them; lax.c, lax_control_flow.c,
 * lax_parallel.c, shard_map.c and sharding.c register jax.lax, the
 * control-flow primitives, the collectives, shard_map and the sharding
 * transforms.
 *
 * All functions borrow their array arguments and return a new reference,
 * or NULL with an exception raised.  Axes and shapes are plain int64_t
 * arrays; a sharding argument is a NamedSharding value (counted, borrowed)
 * or NULL for None.
 */
#ifndef SR_JAX_LAX_H
#define SR_JAX_LAX_H

#include "ad/ops.h"
#include "jax/numpy.h"

/* ---- values and context ---- */

/* The abstract mesh in context (never NULL; may be empty). */
const SrMesh *sr_api_mesh(SrInterp *I);
/* A tuple of axis names of mesh m in mesh order: ('X', 'Y'). */
static inline SrVal *sr_api_axes_tuple(const SrMesh *m, SrAxes axes) { return sr_op_axes_tuple(m, axes); }
/* The set of a type's axes `axes` (over t->mesh) as axes of mesh m. */
static inline SrAxes sr_api_axes_on(const SrType *t, SrAxes axes, const SrMesh *m) {
  return sr_op_axes_on(t, axes, m);
}
/* A type's PartitionSpec as a value (P('X', None)). */
SrVal *sr_api_type_spec(const SrType *t);
/* remove_size_one_mesh_axis_from_spec: the names of m's axes of size 1
   left out of the n entries e (writable), each entry's names rewritten
   into kept[i]. */
void sr_api_entries_drop_unit_axes(const SrMesh *m, SrSpecEntry *e, int n, const char *kept[][SR_MAX_DIM_AXES]);
/* Axis names from a str or tuple/list of strs, as axes of m. */
int sr_api_axis_names(SrInterp *I, SrVal *v, const SrMesh *m, SrAxes *out, const char *what);
/* Canonicalizes a possibly negative axis for rank nd (numpy's AxisError). */
int sr_api_axis(SrInterp *I, int64_t axis, int nd, int64_t *out);
/* sharding_impls.canonicalize_sharding: *out is a NamedSharding over an
   abstract mesh, or NULL for None (and for a NamedSharding with an empty
   mesh). */
int sr_api_canon_sharding(SrInterp *I, SrVal *v, const char *api, SrVal **out);
/* base with a sharding (NamedSharding, P or None) as an aval's type:
   core.get_sharding's checks, only the Explicit axes named; NULL after
   raising.  what names the argument in errors. */
const SrType *sr_api_typed_with_sharding(SrInterp *I, const SrType *base, SrVal *sharding, const char *what);
/* NamedSharding's own checks of a spec: no mesh axis maps to two
   dimensions (JAX's DuplicateSpecError), and, when ndim >= 0, the spec
   is no longer than the rank of the value it places. */
int sr_api_check_spec(SrInterp *I, const SrSpec *s, const SrVal *sharding, int ndim);
/* named_sharding._check_unique_resources for a spec given as arg_name
   ("in_shardings", "NamedSharding spec"): DuplicateSpecError. */
int sr_api_check_unique(SrInterp *I, const SrSpec *s, const char *arg_name);
/* named_sharding._check_mesh_resource_axis (sharding.c): ValueError for an
   axis of s that mesh m lacks. */
int sr_mesh_resource_check(SrInterp *I, const SrMesh *m, const SrSpec *s);
/* The first item of a multi-result primitive's tuple (steals r). */
static inline SrVal *sr_api_first(SrVal *r) { return sr_op_first(r); }

/* ---- lax ---- */

/* The one op layer's functions (ad/ops.h), bound into the current trace
   (SR_BINDER). */
static inline int sr_auto_insert_reshard(SrInterp *I, int n, SrVal **args) { /* in place; args hold new refs */
  return sr_op_auto_insert(SR_BINDER(I), n, args);
}
/* axes of the context mesh */
static inline SrVal *sr_lax_pvary(SrInterp *I, SrVal *x, SrAxes axes) {
  return sr_op_axes_cast(SR_BINDER(I), SR_P_pvary, x, axes, NULL);
}
static inline SrVal *sr_lax_reduced_vary_cast(SrInterp *I, SrVal *x, SrAxes axes) {
  return sr_op_axes_cast(SR_BINDER(I), SR_P_reduced_vary_cast, x, axes, NULL);
}
static inline SrVal *sr_lax_unary(SrInterp *I, int prim, SrVal *x) { return sr_op_unary(SR_BINDER(I), prim, x); }
static inline SrVal *sr_lax_binary(SrInterp *I, int prim, SrVal *x, SrVal *y) {
  return sr_op_binary(SR_BINDER(I), prim, x, y);
}
/* lax._convert_element_type: no equation when nothing changes, a new
   literal for a Python scalar. */
static inline SrVal *sr_lax_convert(SrInterp *I, SrVal *x, SrDtype dt, int weak, SrVal *sharding) {
  return sr_op_convert(SR_BINDER(I), x, dt, weak, sharding);
}
static inline SrVal *sr_lax_reshape(SrInterp *I, SrVal *x, const int64_t *shape, int nd, SrVal *sharding) {
  return sr_op_reshape(SR_BINDER(I), x, shape, nd, sharding);
}
static inline SrVal *sr_lax_transpose(SrInterp *I, SrVal *x, const int64_t *perm, int n) {
  return sr_op_transpose(SR_BINDER(I), x, perm, n);
}
static inline SrVal *sr_lax_expand_dims(SrInterp *I, SrVal *x, const int64_t *dims, int n) {
  return sr_op_expand_dims(SR_BINDER(I), x, dims, n);
}
static inline SrVal *sr_lax_broadcast_in_dim(SrInterp *I, SrVal *x, const int64_t *shape, int nd,
                                             const int64_t *bdims, int nb, SrVal *sharding) {
  return sr_op_broadcast_in_dim(SR_BINDER(I), x, shape, nd, bdims, nb, sharding);
}
/* lax.full: a broadcast_in_dim of the scalar fill (or the scalar itself). */
static inline SrVal *sr_lax_full(SrInterp *I, const int64_t *shape, int nd, SrVal *fill, int dtype,
                                 SrVal *sharding) {
  return sr_op_full(SR_BINDER(I), shape, nd, fill, dtype, sharding);
}
/* reduce_sum / reduce_max / reduce_min (with out_sharding), reduce_prod,
   reduce_and, reduce_or */
static inline SrVal *sr_lax_reduce(SrInterp *I, int prim, SrVal *x, const int64_t *axes, int n,
                                   SrVal *out_sharding) {
  return sr_op_reduce(SR_BINDER(I), prim, x, axes, n, out_sharding);
}
static inline SrVal *sr_lax_select(SrInterp *I, SrVal *pred, SrVal *on_true, SrVal *on_false) {
  SrVal *args[3] = {pred, on_false, on_true}; /* select_n takes the false case first */
  return sr_op_select_n(SR_BINDER(I), 3, args);
}
static inline SrVal *sr_lax_squeeze(SrInterp *I, SrVal *x, const int64_t *dims, int n) {
  return sr_op_squeeze(SR_BINDER(I), x, dims, n);
}
static inline SrVal *sr_lax_iota(SrInterp *I, SrDtype dt, const int64_t *shape, int nd, int dim, SrVal *sharding) {
  return sr_op_iota(SR_BINDER(I), dt, shape, nd, dim, sharding);
}
static inline SrVal *sr_lax_argminmax(SrInterp *I, int prim, SrVal *x, int64_t axis, SrDtype index_dtype) {
  return sr_op_argminmax(SR_BINDER(I), prim, x, axis, index_dtype);
}
/* lax.canonicalize_precision: *out is NULL for None, else a new reference
   to the param value (a pair of words Precision.X, or a
   DotAlgorithmPreset's name as a word); 0, or -1 with JAX's ValueError.
   Canonical values come back as they are (lax_precision.c). */
int sr_lax_canon_precision(SrInterp *I, SrVal *precision, SrVal **out);
/* jit's inline=: True or a jax.Inline member (*early: whether it is
   JAX_EARLY, True's), False (AUTO); 0, or -1 with pjit's ValueError. */
int sr_lax_inline_early(SrInterp *I, SrVal *v, int *early);
/* lax.dot_general, its precision canonicalized first. */
static inline SrVal *sr_lax_dot_general(SrInterp *I, SrVal *a, SrVal *b, const int64_t *lc, int nlc,
                                        const int64_t *rc, int nrc, const int64_t *lb, int nlb, const int64_t *rb,
                                        int nrb, SrVal *precision, int pref, SrVal *out_sharding) {
  SrVal *prec;
  if (sr_lax_canon_precision(I, precision, &prec) < 0) return NULL;
  SrVal *r = sr_op_dot_general(SR_BINDER(I), a, b, lc, nlc, rc, nrc, lb, nlb, rb, nrb, prec, pref, out_sharding);
  sr_unref(prec);
  return r;
}
static inline SrVal *sr_lax_concatenate(SrInterp *I, int n, SrVal **xs, int dim) {
  return sr_op_concatenate(SR_BINDER(I), n, xs, dim);
}
static inline SrVal *sr_lax_slice(SrInterp *I, SrVal *x, const int64_t *start, const int64_t *limit,
                                  const int64_t *strides) {
  return sr_op_slice(SR_BINDER(I), x, start, limit, strides);
}
static inline SrVal *sr_lax_dynamic_slice(SrInterp *I, SrVal *x, SrVal **starts, const int64_t *sizes) {
  return sr_op_dynamic_slice(SR_BINDER(I), x, starts, sizes);
}
static inline SrVal *sr_lax_rev(SrInterp *I, SrVal *x, const int64_t *dims, int n) {
  return sr_op_rev(SR_BINDER(I), x, dims, n);
}
/* lax.pad: cfg holds (low, high, interior) per dimension of x. */
static inline SrVal *sr_lax_pad(SrInterp *I, SrVal *x, SrVal *padding_value, const int64_t *cfg, int nd) {
  return sr_op_pad(SR_BINDER(I), x, padding_value, cfg, nd);
}
/* lax.dynamic_update_slice with starts already normalized (one per dim). */
static inline SrVal *sr_lax_dynamic_update_slice(SrInterp *I, SrVal *x, SrVal *update, SrVal **starts) {
  return sr_op_dynamic_update_slice(SR_BINDER(I), x, update, starts);
}
/* lax.broadcast_to: leading dims added, size-1 dims stretched. */
static inline SrVal *sr_lax_broadcast_to(SrInterp *I, SrVal *x, const int64_t *shape, int nd, SrVal *sharding) {
  return sr_op_broadcast_to(SR_BINDER(I), x, shape, nd, sharding);
}
/* jax.reshard(x, sharding): P or NamedSharding (or None: JAX's error). */
SrVal *sr_lax_reshard(SrInterp *I, SrVal *x, SrVal *sharding_arg);
/* Calls fn as an inlined jax.jit(fn) of JAX's jnp would not: as a real
   jit equation named `name` (jnp functions decorated with a plain jit). */
SrVal *sr_api_jit(SrInterp *I, const char *name, SrBuiltinFn fn, void *data, int n, SrVal **args);

/* Binds a primitive whose results are known here (control flow, shard_map)
   when the table has no type rule for it yet; through the rule otherwise. */
SrVal *sr_api_bind_typed(SrInterp *I, int prim, int nin, SrVal **in, SrPList *ps, const SrType **outs,
                         uint32_t nout);

/* ---- helpers shared by the jax.lax built-ins' files ---- */

/* pvary / reduced_vary_cast of x over axes (none: x itself). */
static inline SrVal *sr_api_bind_axes_cast(SrInterp *I, int prim, SrVal *x, SrAxes axes) {
  return sr_op_axes_cast(SR_BINDER(I), prim, x, axes, NULL);
}
/* Applies f to each array leaf of a tree (lists, tuples, dicts; None is an
   empty node), rebuilding the tree; `shardings` is one value for every
   leaf, or a tree with the same structure (sharding.c). */
typedef SrVal *(*SrApiLeafFn)(SrInterp *I, SrVal *leaf, SrVal *sharding, void *ctx);
SrVal *sr_api_map_leaves(SrInterp *I, SrVal *v, SrVal *sh, SrApiLeafFn f, void *ctx);
/* jax.sharding.UnreducedKind.sum / max / min for an SrUnreducedKind, the
   one registered value (so that `is` compares them); None for none
   (sharding.c).  A new reference. */
SrVal *sr_ukind_val(int kind);
/* Enters / leaves an abstract mesh of the context (sharding.c). */
int sr_api_push_mesh(SrInterp *I, const SrMesh *m);
void sr_api_pop_mesh(SrInterp *I);
/* Abstract arrays of the given types in the structure of `like`. */
SrVal *sr_api_abstract_like(SrVal *like, const SrType **types, int n);
/* The number of array leaves of a pytree (-1 with an exception raised). */
int sr_api_n_leaves(SrInterp *I, SrVal *v);

void sr_jnp_api_init(void);
void sr_lax_api_init(void);

/* jnp.linalg.svd(a, compute_uv=, hermitian=True): jit[name=svd] through eigh (linalg16.c) */
SrVal *sr_linalg16_svd_hermitian(SrInterp *I, SrVal *a, int compute_uv);

#endif
