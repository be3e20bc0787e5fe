/* ad_ops.c: the lax-level operations the rules are written with.
 *
 * Each follows the jax.lax function of the same name, including the
 * shortcuts that decide whether an equation is emitted at all (an identity
 * transpose or reshape is skipped; a scalar constant under a mesh becomes
 * `reshard`), because those decide what a printed gradient jaxpr shows.
 */
#include "ad/ad_rules.h"

#include <stdlib.h>
#include <string.h>

#include "core/jaxstate.h"
#include "util/mem.h"

/* ---- params ---- */

SrVal *sr_ad_ints(const int64_t *v, int n) {
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, n);
  for (int i = 0; i < n; i++) sr_seq_push(NULL, t, sr_int(NULL, v[i]));
  return t;
}

SrVal *sr_ad_axes_tuple(const SrMesh *m, SrAxes axes) {
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, sr_axes_count(axes));
  for (int i = 0; m && i < m->n; i++)
    if (axes & (1u << i)) sr_seq_push(NULL, t, sr_str_cstr(NULL, m->names[i]));
  return t;
}

/* ---- shardings of types ---- */

/* The names of a type's axes on a dimension, to compare types of
   different meshes. */
static int dim_axes_equal(const SrType *a, int i, const SrType *b, int k) {
  const SrDim *da = &a->dims[i], *db = &b->dims[k];
  if (da->nax != db->nax) return 0;
  for (int x = 0; x < da->nax; x++)
    if (a->mesh->names[da->ax[x]] != b->mesh->names[db->ax[x]]) return 0;
  return 1;
}

static int axes_names_equal(SrAxes x, const SrMesh *mx, SrAxes y, const SrMesh *my) {
  if (!x || !y) return x == y;
  if (mx == my) return x == y;
  return sr_axes_remap(x, mx, my) == y && sr_axes_remap(y, my, mx) == x;
}

/* aval.sharding == other.sharding, for two types of the same rank. */
static int same_sharding(const SrType *a, const SrType *b) {
  if (a->ndim != b->ndim) return 0;
  for (int i = 0; i < a->ndim; i++)
    if (!dim_axes_equal(a, i, b, i)) return 0;
  return axes_names_equal(a->unreduced, a->mesh, b->unreduced, b->mesh) &&
         axes_names_equal(a->reduced, a->mesh, b->reduced, b->mesh) && a->ukind == b->ukind;
}

static int same_shape(const SrType *a, const SrType *b) {
  if (a->ndim != b->ndim) return 0;
  for (int i = 0; i < a->ndim; i++)
    if (!sr_dim_same(&a->dims[i], &b->dims[i])) return 0;
  return 1;
}

/* A constant (a literal value, no trace): JAX gives it an empty mesh. */
static int is_const(SrVal *v) {
  SrArrayObj *a = sr_array_of(v);
  return !a || (a->kind == SR_AV_ABSTRACT && a->has_value);
}

static int has_mesh(SrAd *ad) { return sr_ad_value_mesh(ad) != NULL; }

/* ---- auto_insert_reshard ---- */

static SrVal *pvary_axes(SrAd *ad, SrVal *x, SrAxes axes, const SrMesh *m, int prim) {
  return sr_ad_bindv(ad, prim, 1, &x, "axes", sr_ad_axes_tuple(m, axes), NULL);
}

SrVal *sr_ad_pvary_to(SrAd *ad, SrVal *x, SrAxes axes, const SrMesh *m) {
  if (!x) return NULL;
  if (!axes) return x;
  SrVal *r = pvary_axes(ad, x, axes, m, SR_P_pvary);
  return r && r->kind == SR_V_TUPLE ? r->seq.items[0] : r;
}

/* core.auto_insert_reshard for two operands, in place. */
static void auto_insert(SrAd *ad, SrVal **args, int n) {
  SrInterp *I = ad->I;
  for (int i = 0; i < n; i++)
    if (!args[i]) return;
  if (I->jax->check_vma) {
    SrAxes all = 0;
    const SrMesh *m = NULL;
    for (int i = 0; i < n; i++) {
      const SrType *t = sr_ad_type(ad, args[i]);
      if (t && t->varying) {
        all |= m ? sr_axes_remap(t->varying, t->mesh, m) : t->varying;
        if (!m) m = t->mesh;
      }
    }
    if (!all) return;
    for (int i = 0; i < n; i++) {
      const SrType *t = sr_ad_type(ad, args[i]);
      if (!t) continue;
      SrAxes have = t->mesh ? sr_axes_remap(t->varying, t->mesh, m) : 0;
      SrAxes rest = all & ~have;
      if (!rest) continue;
      SrAxes red = t->mesh ? sr_axes_remap(t->reduced, t->mesh, m) : 0;
      int prim = red == rest ? SR_P_reduced_vary_cast : SR_P_pvary;
      SrVal *r = pvary_axes(ad, args[i], rest, m, prim);
      args[i] = r && r->kind == SR_V_TUPLE ? r->seq.items[0] : r;
    }
    return;
  }
  /* insert_reduced_reshard: an explicit mesh, a replicated scalar next to
     a reduced operand is cast to reduced */
  const SrMesh *cm = sr_ad_ctx_mesh(ad);
  if (!cm->n || n != 2) return;
  for (int i = 0; i < cm->n; i++)
    if (cm->types[i] != SR_AXIS_EXPLICIT) return;
  SrAxes red = 0;
  const SrMesh *m = NULL;
  for (int i = 0; i < n; i++) {
    const SrType *t = sr_ad_type(ad, args[i]);
    if (t && t->reduced) {
      red |= t->reduced;
      m = t->mesh;
    }
  }
  if (!red) return;
  for (int i = 0; i < n; i++) {
    const SrType *t = sr_ad_type(ad, args[i]);
    if (!t || t->ndim || (t->mesh == m && (t->reduced & red) == red)) continue;
    if (t->mesh && ((t->unreduced | t->reduced | t->varying) & red)) continue;
    SrTypeBuilder b;
    sr_type_builder(&b, t);
    b.mesh = m;
    b.reduced = red;
    args[i] = sr_ad_reshard(ad, args[i], sr_type_get(&b));
  }
}

/* ---- elementwise ---- */

SrVal *sr_ad_unop(SrAd *ad, int prim, SrVal *x) {
  if (sr_prims[prim].pp == SR_PP_ACCURACY) return sr_ad_bindv(ad, prim, 1, &x, "accuracy", sr_none(), NULL);
  return sr_ad_bind(ad, prim, 1, &x, 0, NULL);
}

SrVal *sr_ad_binop(SrAd *ad, int prim, SrVal *x, SrVal *y) {
  SrVal *a[2] = {x, y};
  auto_insert(ad, a, 2);
  return sr_ad_bind(ad, prim, 2, a, 0, NULL);
}

SrVal *sr_ad_mul(SrAd *ad, SrVal *x, SrVal *y) { return sr_ad_binop(ad, SR_P_mul, x, y); }
SrVal *sr_ad_div(SrAd *ad, SrVal *x, SrVal *y) { return sr_ad_binop(ad, SR_P_div, x, y); }
SrVal *sr_ad_neg(SrAd *ad, SrVal *x) { return sr_ad_bind(ad, SR_P_neg, 1, &x, 0, NULL); }
SrVal *sr_ad_add_any(SrAd *ad, SrVal *x, SrVal *y) { return sr_ad_binop(ad, SR_P_add_any, x, y); }

SrVal *sr_ad_add_tangents(SrAd *ad, SrVal *x, SrVal *y) {
  if (!x) return y;
  if (!y) return x;
  return sr_ad_add_any(ad, x, y);
}

SrVal *sr_ad_select_n(SrAd *ad, SrVal *which, int n, SrVal **cases) {
  SrVal *a[64];
  if (n > 63) n = 63;
  a[0] = which;
  for (int i = 0; i < n; i++) a[i + 1] = cases[i];
  return sr_ad_bind(ad, SR_P_select_n, n + 1, a, 0, NULL);
}

/* ---- constants ---- */

SrVal *sr_ad_reshard(SrAd *ad, SrVal *x, const SrType *t) {
  if (!x) return NULL;
  SrVal *sh = sr_ad_sharding_param(ad, t);
  if (sh->kind == SR_V_NONE) {
    /* no mesh: nothing to reshard to */
    return x;
  }
  return sr_ad_bindv(ad, SR_P_reshard, 1, &x, "dst_sharding", sh, "concrete_mesh", sr_none(), NULL);
}

SrVal *sr_ad_full(SrAd *ad, const SrType *t, double v) {
  SrVal *lit = sr_ad_scalar(ad, t->dtype, t->weak, v);
  SrVal *r;
  if (t->ndim == 0) {
    r = has_mesh(ad) ? sr_ad_reshard(ad, lit, t) : lit;
  } else {
    r = sr_ad_broadcast_in_dim(ad, lit, t, NULL, 0, 1);
  }
  if (r && t->varying && ad->I->jax->check_vma) r = sr_ad_pvary_to(ad, r, t->varying, t->mesh);
  return r;
}

SrVal *sr_ad_full_zeros(SrAd *ad, const SrType *t) { return sr_ad_full(ad, t, 0.0); }

SrVal *sr_ad_zeros_staged(SrAd *ad, const SrType *t) {
  ad->staged++;
  SrVal *z = sr_ad_full(ad, t, 0.0);
  ad->staged--;
  return z;
}

SrVal *sr_ad_scalar_like(SrAd *ad, SrVal *x, double v) {
  const SrType *t = sr_ad_type(ad, x);
  if (!t) return NULL;
  SrVal *lit = sr_ad_scalar(ad, t->dtype, t->weak && is_const(x), v);
  if (has_mesh(ad)) lit = sr_ad_reshard(ad, lit, sr_type_scalar(t->dtype));
  SrVal *a[2] = {lit, x};
  auto_insert(ad, a, 2);
  return a[0];
}

/* ---- structure ---- */

SrVal *sr_ad_broadcast_in_dim(SrAd *ad, SrVal *x, const SrType *t, const int64_t *dims, int ndims,
                           int with_sharding) {
  const SrType *xt = sr_ad_type(ad, x);
  if (!xt) return NULL;
  SrVal *sh = with_sharding ? sr_ad_sharding_param(ad, t) : sr_none();
  int none = sh->kind == SR_V_NONE;
  if (xt->ndim == 0 && t->ndim == 0 && ndims == 0 && none) {
    sr_unref(sh);
    return x;
  }
  int ident = same_shape(xt, t) && ndims == xt->ndim;
  for (int i = 0; ident && i < ndims; i++) ident = dims[i] == i;
  if (ident && !none && (is_const(x) || !same_sharding(xt, t))) {
    sr_unref(sh);
    return sr_ad_reshard(ad, x, t);
  }
  int64_t shape[SR_MAX_RANK];
  for (int i = 0; i < t->ndim; i++) shape[i] = t->dims[i].size;
  return sr_ad_bindv(ad, SR_P_broadcast_in_dim, 1, &x, "shape", sr_ad_ints(shape, t->ndim), "broadcast_dimensions",
                  sr_ad_ints(dims, ndims), "sharding", sh, NULL);
}

SrVal *sr_ad_reduce_sum(SrAd *ad, SrVal *x, const int64_t *axes, int naxes, const SrType *t) {
  if (!x) return NULL;
  SrVal *sh = t ? sr_ad_sharding_param(ad, t) : sr_none();
  return sr_ad_bindv(ad, SR_P_reduce_sum, 1, &x, "axes", sr_ad_ints(axes, naxes), "out_sharding", sh, NULL);
}

static SrVal *reshape_to(SrAd *ad, SrVal *x, const SrType *t, int with_sharding) {
  const SrType *xt = sr_ad_type(ad, x);
  if (!xt) return NULL;
  SrVal *sh = with_sharding ? sr_ad_sharding_param(ad, t) : sr_none();
  int same_sh = sh->kind == SR_V_NONE || same_sharding(xt, t);
  if (xt->ndim && same_shape(xt, t) && same_sh) {
    sr_unref(sh);
    return x;
  }
  int64_t shape[SR_MAX_RANK];
  for (int i = 0; i < t->ndim; i++) shape[i] = t->dims[i].size;
  return sr_ad_bindv(ad, SR_P_reshape, 1, &x, "new_sizes", sr_ad_ints(shape, t->ndim), "dimensions", sr_none(), "sharding",
                  sh, NULL);
}

SrVal *sr_ad_reshape(SrAd *ad, SrVal *x, const SrType *t) { return reshape_to(ad, x, t, 1); }

SrVal *sr_ad_reshape_plain(SrAd *ad, SrVal *x, const SrType *t) { return reshape_to(ad, x, t, 0); }

SrVal *sr_ad_transpose_dims(SrAd *ad, SrVal *x, const int64_t *perm, int n) {
  if (!x) return NULL;
  int ident = 1;
  for (int i = 0; i < n; i++) ident &= perm[i] == i;
  if (ident && !is_const(x)) return x;
  return sr_ad_bindv(ad, SR_P_transpose, 1, &x, "permutation", sr_ad_ints(perm, n), NULL);
}

SrVal *sr_ad_expand_dims(SrAd *ad, SrVal *x, const int64_t *dims, int n) {
  const SrType *xt = sr_ad_type(ad, x);
  if (!xt) return NULL;
  if (n == 0) return x;
  int nd = xt->ndim + n;
  uint8_t isnew[SR_MAX_RANK] = {0};
  for (int i = 0; i < n; i++) isnew[dims[i] < 0 ? dims[i] + nd : dims[i]] = 1;
  SrTypeBuilder b;
  memset(&b, 0, sizeof b);
  b.dtype = xt->dtype;
  b.ndim = (uint8_t)nd;
  int64_t bd[SR_MAX_RANK];
  int nb = 0;
  for (int i = 0, k = 0; i < nd; i++) {
    if (isnew[i]) {
      b.dims[i].size = 1;
    } else {
      b.dims[i].size = xt->dims[k].size;
      bd[nb++] = i;
      k++;
    }
  }
  return sr_ad_broadcast_in_dim(ad, x, sr_type_get(&b), bd, nb, 0);
}

SrVal *sr_ad_convert(SrAd *ad, SrVal *x, SrDtype dt, int weak) {
  const SrType *xt = sr_ad_type(ad, x);
  if (!xt) return NULL;
  if (xt->dtype == dt && xt->weak == weak) return x;
  if (is_const(x) && xt->ndim == 0) {
    SrArrayObj *a = sr_array_of(x);
    double v = a ? (sr_dtype_is_inexact(xt->dtype) ? a->value.f : (double)a->value.i) : x->kind == SR_V_FLOAT ? x->f
                                                                                                               : (double)x->i;
    return sr_ad_scalar(ad, dt, weak, v);
  }
  return sr_ad_bindv(ad, SR_P_convert_element_type, 1, &x, "new_dtype", sr_dtype_val(NULL, dt), "weak_type",
                  sr_bool(weak), "sharding", sr_none(), NULL);
}

SrVal *sr_ad_unbroadcast(SrAd *ad, const SrType *t, SrVal *x) {
  const SrType *xt = sr_ad_type(ad, x);
  if (!xt) return NULL;
  if (same_shape(xt, t) && same_sharding(xt, t)) return x;
  int64_t dims[SR_MAX_RANK];
  int nd = 0;
  if (t->ndim == 0) {
    for (int i = 0; i < xt->ndim; i++) dims[nd++] = i;
    return sr_ad_reduce_sum(ad, x, dims, nd, NULL);
  }
  for (int i = 0; i < xt->ndim && i < t->ndim; i++)
    if (!sr_dim_same(&xt->dims[i], &t->dims[i])) dims[nd++] = i;
  if (nd) x = sr_ad_reduce_sum(ad, x, dims, nd, NULL);
  return sr_ad_reshape(ad, x, t);
}

SrVal *sr_ad_maybe_broadcast(SrAd *ad, SrVal *x, const SrType *t) {
  const SrType *xt = sr_ad_type(ad, x);
  if (!xt) return NULL;
  if (same_shape(xt, t) && same_sharding(xt, t)) return x;
  if (xt->ndim == 0) return sr_ad_broadcast_in_dim(ad, x, t, NULL, 0, 1);
  int64_t dims[SR_MAX_RANK];
  int nd = 0;
  SrTypeBuilder b;
  memset(&b, 0, sizeof b);
  b.dtype = xt->dtype;
  for (int i = 0; i < xt->ndim && i < t->ndim; i++)
    if (sr_dim_same(&xt->dims[i], &t->dims[i])) {
      b.dims[nd] = xt->dims[i];
      b.dims[nd].nax = 0;
      dims[nd++] = i;
    }
  b.ndim = (uint8_t)nd;
  SrVal *sq = reshape_to(ad, x, sr_type_get(&b), 0);
  return sr_ad_broadcast_in_dim(ad, sq, t, dims, nd, 1);
}

/* defjvp_zero: the primal, and a zero tangent. */
int sr_ad_jvp_zero(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  (void)t;
  SrVal *r = sr_ad_bind_eqn(ad, e, x);
  if (!r) return -1;
  for (uint32_t i = 0; i < e->nout; i++) {
    y[i] = r->seq.items[i];
    ty[i] = NULL;
  }
  return 0;
}

/* linear_jvp: the primal, and the same op on the tangents (zeros
   instantiated). */
int sr_ad_jvp_linear(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  SrVal *r = sr_ad_bind_eqn(ad, e, x);
  if (!r) return -1;
  for (uint32_t i = 0; i < e->nout; i++) y[i] = r->seq.items[i];
  SrVal *small[16], **tt = e->nin <= 16 ? small : sr_xcalloc(e->nin, sizeof *tt);
  for (uint32_t i = 0; i < e->nin; i++)
    tt[i] = t[i] ? t[i] : sr_ad_full_zeros(ad, sr_ad_tangent_type(sr_ad_type(ad, x[i])));
  SrVal *rt = sr_ad_bind_eqn(ad, e, tt);
  if (tt != small) free(tt);
  if (!rt) return -1;
  for (uint32_t i = 0; i < e->nout; i++) ty[i] = rt->seq.items[i];
  return 0;
}
