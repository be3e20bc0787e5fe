/* lax_math.c: jax.lax's elementwise functions on the primitives of
 * lax.py and lax/special.py that bind them directly (asin ... atanh,
 * population_count, clz, the shifts, nextafter, erf_inv, igamma, igammac,
 * igamma_grad_a, bessel_i0e, bessel_i1e), and the small helpers of lax.py
 * and slicing.py written on other lax functions (reciprocal, full_like,
 * bitcast_convert_type, collapse, broadcast_to_rank, slice_in_dim,
 * index_in_dim, dynamic_slice_in_dim, dynamic_index_in_dim,
 * dynamic_update_slice_in_dim).  None is jitted in JAX.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jax/jax.h"
#include "jax/lax.h"
#include "core/jaxstate.h"
#include "jax/math_api.h"
#include "jax/array_methods.h"
#include "jax/nn.h"
#include "jax/np_host.h"
#include "py/objects.h"

#define SCOPE(I) SrNnScope s_ = {(I), {0}, 0}, *s = &s_

static SrVal *un(SrInterp *I, SrArgs *a, int prim, const char *name) {
  SrVal *p[1];
  if (sr_args_parse(I, a, name, "x", p) < 0) return NULL;
  SrVal *x = sr_jnp_asarray(I, p[0], -1);
  SrVal *r = x ? sr_lax_unary(I, prim, x) : NULL;
  sr_unref(x);
  return r;
}

static SrVal *bin(SrInterp *I, SrArgs *a, int prim, const char *name) {
  SrVal *p[2];
  if (sr_args_parse(I, a, name, "x, y", p) < 0) return NULL;
  SrVal *x = sr_jnp_asarray(I, p[0], -1), *y = x ? sr_jnp_asarray(I, p[1], -1) : NULL;
  SrVal *r = x && y ? sr_lax_binary(I, prim, x, y) : NULL;
  sr_unref(x);
  sr_unref(y);
  return r;
}

#define UN(fn, prim, name) \
  static SrVal *fn(SrInterp *I, SrArgs *a) { return un(I, a, prim, name); }
#define BIN(fn, prim, name) \
  static SrVal *fn(SrInterp *I, SrArgs *a) { return bin(I, a, prim, name); }
UN(lax_asin, SR_P_asin, "asin")
UN(lax_acos, SR_P_acos, "acos")
UN(lax_atan, SR_P_atan, "atan")
UN(lax_sinh, SR_P_sinh, "sinh")
UN(lax_cosh, SR_P_cosh, "cosh")
UN(lax_asinh, SR_P_asinh, "asinh")
UN(lax_acosh, SR_P_acosh, "acosh")
UN(lax_atanh, SR_P_atanh, "atanh")
UN(lax_population_count, SR_P_population_count, "population_count")
UN(lax_clz, SR_P_clz, "clz")
UN(lax_erf_inv, SR_P_erf_inv, "erf_inv")
UN(lax_bessel_i0e, SR_P_bessel_i0e, "bessel_i0e")
UN(lax_bessel_i1e, SR_P_bessel_i1e, "bessel_i1e")
BIN(lax_shift_left, SR_P_shift_left, "shift_left")
BIN(lax_shift_right_arithmetic, SR_P_shift_right_arithmetic, "shift_right_arithmetic")
BIN(lax_shift_right_logical, SR_P_shift_right_logical, "shift_right_logical")
BIN(lax_nextafter, SR_P_nextafter, "nextafter")
BIN(lax_mulhi, SR_P_mulhi, "mulhi")
BIN(lax_igamma, SR_P_igamma, "igamma")
BIN(lax_igammac, SR_P_igammac, "igammac")
BIN(lax_igamma_grad_a, SR_P_igamma_grad_a, "igamma_grad_a")

/* betainc(a, b, x): regularized_incomplete_beta_p.bind(a, b, x) */
static SrVal *lax_betainc(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "betainc", "a, b, x", p) < 0) return NULL;
  SrVal *v[3] = {NULL, NULL, NULL};
  SrVal *r = NULL;
  for (int i = 0; i < 3; i++)
    if (!(v[i] = sr_jnp_asarray(I, p[i], -1))) goto done;
  r = sr_bind(I, SR_P_regularized_incomplete_beta, 3, v, 0, NULL);
done:
  for (int i = 0; i < 3; i++) sr_unref(v[i]);
  return r;
}

/* reduce_and / reduce_or(operand, axes): the primitive over axes */
static SrVal *lax_reduce_bool(SrInterp *I, SrArgs *a, int prim, const char *name) {
  SrVal *p[2];
  if (sr_args_parse(I, a, name, "operand, axes", p) < 0) return NULL;
  int64_t axes[SR_MAX_RANK];
  int n;
  if (sr_ints_arg(I, p[1], axes, &n, "axes") < 0) return NULL;
  SrVal *x = sr_jnp_asarray(I, p[0], -1);
  SrVal *r = x ? sr_lax_reduce(I, prim, x, axes, n, NULL) : NULL;
  sr_unref(x);
  return r;
}

static SrVal *lax_reduce_and(SrInterp *I, SrArgs *a) { return lax_reduce_bool(I, a, SR_P_reduce_and, "reduce_and"); }
static SrVal *lax_reduce_or(SrInterp *I, SrArgs *a) { return lax_reduce_bool(I, a, SR_P_reduce_or, "reduce_or"); }
static SrVal *lax_reduce_xor(SrInterp *I, SrArgs *a) { return lax_reduce_bool(I, a, SR_P_reduce_xor, "reduce_xor"); }

/* reciprocal(x) = integer_pow(x, -1) */
static SrVal *lax_reciprocal(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "reciprocal", "x", p) < 0) return NULL;
  SrVal *x = sr_jnp_asarray(I, p[0], -1);
  SrVal *r = x ? sr_bindv(I, SR_P_integer_pow, 1, &x, "y", sr_int(NULL, -1), NULL) : NULL;
  sr_unref(x);
  return r;
}

static int shape_arg(SrInterp *I, SrVal *v, int64_t *shape, int *nd) { return sr_ints_arg(I, v, shape, nd, "shape"); }

/* full_like(x, fill_value, dtype=None, shape=None, sharding=None): weakly
   typed as x is when no dtype is given; a tracer's sharding when neither
   shape nor sharding is */
static SrVal *lax_full_like(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "full_like", "x, fill_value, dtype=, shape=, sharding=", p) < 0) return NULL;
  SrVal *x = sr_jnp_asarray(I, p[0], -1);
  const SrType *t = x ? sr_value_type(I, x) : NULL;
  if (!t) {
    sr_unref(x);
    return NULL;
  }
  int dt = (int)t->dtype;
  int given_dt = sr_nn_given(p[2]);
  if (given_dt && sr_dtype_arg(I, p[2], &dt, "full_like") < 0) goto fail;
  int64_t shape[SR_MAX_RANK];
  int nd = t->ndim;
  for (int i = 0; i < t->ndim; i++) shape[i] = t->dims[i].size;
  int given_shape = sr_nn_given(p[3]);
  if (given_shape && shape_arg(I, p[3], shape, &nd) < 0) goto fail;
  SrVal *sh = NULL;
  if (sr_nn_given(p[4])) sh = sr_ref(p[4]);
  else if (!given_shape && t->mesh) {
    sh = sr_type_sharding(I, t);
    if (sh && sh->kind != SR_V_SHARDING) {
      sr_unref(sh);
      sh = NULL;
    }
  }
  SrVal *r = sr_lax_full(I, shape, nd, p[1], dt, sh);
  sr_unref(sh);
  if (r && !given_dt && t->weak) {
    SrVal *w = sr_lax_convert(I, r, (SrDtype)dt, 1, NULL);
    sr_unref(r);
    r = w;
  }
  /* _full_like_insert_pvary: made varying over x's varying axes
     (core.auto_insert_reshard) */
  if (r && I->jax->check_vma && !I->jax->no_auto_pcast && t->varying) {
    const SrMesh *m = sr_api_mesh(I);
    const SrType *rt = sr_value_type(I, r);
    SrAxes need = sr_api_axes_on(t, t->varying, m) & ~(rt ? sr_api_axes_on(rt, rt->varying, m) : 0);
    if (need) {
      SrVal *v = sr_lax_pvary(I, r, need);
      sr_unref(r);
      r = v;
    }
  }
  sr_unref(x);
  /* lax.full's broadcast of a scalar is lax.asarray of it */
  SrNnScope sc = {I, {0}, 0};
  return sr_nn_done(&sc, sr_nn_array(&sc, sr_nn_keep(&sc, r)));
fail:
  sr_unref(x);
  return NULL;
}

static SrVal *lax_bitcast_convert_type(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  int dt;
  if (sr_args_parse(I, a, "bitcast_convert_type", "operand, new_dtype", p) < 0) return NULL;
  if (sr_dtype_arg(I, p[1], &dt, "bitcast_convert_type") < 0) return NULL;
  if (dt < 0) return sr_raise(I, "TypeError", "bitcast_convert_type: new_dtype must be a dtype");
  SrVal *x = sr_jnp_asarray(I, p[0], -1);
  if (!x) return NULL;
  SrVal *r = sr_bindv(I, SR_P_bitcast_convert_type, 1, &x, "new_dtype", sr_dtype_val(NULL, (SrDtype)dt), NULL);
  sr_unref(x);
  return r;
}

/* collapse(operand, start_dimension, stop_dimension=None): a reshape of
   the dims [start, stop) into one */
static SrVal *lax_collapse(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "collapse", "operand, start_dimension, stop_dimension=", p) < 0) return NULL;
  SrVal *x = sr_jnp_asarray(I, p[0], -1);
  const SrType *t = x ? sr_value_type(I, x) : NULL;
  int64_t lo, hi = t ? t->ndim : 0;
  SrVal *r = NULL;
  if (!t || sr_as_int(I, p[1], "start_dimension", &lo) < 0) goto done;
  if (sr_nn_given(p[2]) && sr_as_int(I, p[2], "stop_dimension", &hi) < 0) goto done;
  if (lo < 0) lo += t->ndim;
  if (hi < 0) hi += t->ndim;
  if (lo < 0 || hi > t->ndim || lo > hi) {
    r = sr_raise(I, "ValueError", "collapse: dimensions [%lld, %lld) out of range for an array of rank %d",
                 (long long)lo, (long long)hi, t->ndim);
    goto done;
  }
  if (lo == hi) {
    r = sr_ref(x);
    goto done;
  }
  int64_t shape[SR_MAX_RANK];
  int nd = 0;
  for (int i = 0; i < lo; i++) shape[nd++] = t->dims[i].size;
  int64_t m = 1;
  for (int64_t i = lo; i < hi; i++) m *= t->dims[i].size;
  shape[nd++] = m;
  for (int64_t i = hi; i < t->ndim; i++) shape[nd++] = t->dims[i].size;
  r = sr_lax_reshape(I, x, shape, nd, NULL);
done:
  sr_unref(x);
  return r;
}

/* broadcast_to_rank(x, rank): leading 1s, broadcast(x, (1,) * (rank - ndim)) */
static SrVal *lax_broadcast_to_rank(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "broadcast_to_rank", "x, rank", p) < 0) return NULL;
  int64_t rank;
  if (sr_as_int(I, p[1], "rank", &rank) < 0) return NULL;
  SrVal *x = sr_jnp_asarray(I, p[0], -1);
  const SrType *t = x ? sr_value_type(I, x) : NULL;
  if (!t) {
    sr_unref(x);
    return NULL;
  }
  if (rank == t->ndim) return x;
  if (rank < t->ndim || rank > SR_MAX_RANK) {
    sr_unref(x);
    return sr_raise(I, "ValueError", "broadcast_to_rank: rank %lld is below the operand's %d", (long long)rank,
                    t->ndim);
  }
  int64_t shape[SR_MAX_RANK], bd[SR_MAX_RANK];
  int k = (int)rank - t->ndim;
  for (int i = 0; i < k; i++) shape[i] = 1;
  for (int i = 0; i < t->ndim; i++) {
    shape[k + i] = t->dims[i].size;
    bd[i] = k + i;
  }
  SrVal *r = sr_lax_broadcast_in_dim(I, x, shape, (int)rank, bd, t->ndim, NULL);
  sr_unref(x);
  return r;
}

static SrVal *int_list(const int64_t *v, int n) {
  SrVal *items[SR_MAX_RANK];
  for (int i = 0; i < n; i++) items[i] = sr_int(NULL, v[i]);
  return sr_tuple(NULL, n, items);
}

/* slice_in_dim(operand, start_index, limit_index, stride=1, axis=0) */
static SrVal *slice_in_dim(SrInterp *I, SrVal *x, SrVal *start, SrVal *limit, int64_t stride, int64_t axis) {
  const SrType *t = sr_value_type(I, x);
  if (!t) return NULL;
  if (axis < -t->ndim || axis >= t->ndim) /* Python's list indexing: -1 is the last */
    return sr_raise(I, "IndexError", "list index out of range");
  if (axis < 0) axis += t->ndim;
  int64_t st[SR_MAX_RANK], li[SR_MAX_RANK], sd[SR_MAX_RANK];
  for (int i = 0; i < t->ndim; i++) {
    st[i] = 0;
    li[i] = t->dims[i].size;
    sd[i] = 1;
  }
  int64_t len = t->dims[axis].size, s0 = 0, l0 = len;
  if (sr_nn_given(start) && sr_as_int(I, start, "start_index", &s0) < 0) return NULL;
  if (sr_nn_given(limit) && sr_as_int(I, limit, "limit_index", &l0) < 0) return NULL;
  if (s0 < 0) s0 += len;
  if (l0 < 0) l0 += len;
  st[axis] = s0;
  li[axis] = l0;
  sd[axis] = stride;
  SCOPE(I);
  SrVal *v[4] = {x, sr_nn_keep(s, int_list(st, t->ndim)), sr_nn_keep(s, int_list(li, t->ndim)),
                 sr_nn_keep(s, int_list(sd, t->ndim))};
  return sr_nn_done(s, sr_nn_call(s, "jax.lax.slice", 4, v, 0, NULL, NULL));
}

static SrVal *lax_slice_in_dim(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "slice_in_dim", "operand, start_index, limit_index, stride=, axis=", p) < 0) return NULL;
  int64_t stride = 1, axis = 0;
  if (p[3] && sr_as_int(I, p[3], "stride", &stride) < 0) return NULL;
  if (p[4] && sr_as_int(I, p[4], "axis", &axis) < 0) return NULL;
  SrVal *x = sr_jnp_asarray(I, p[0], -1);
  SrVal *r = x ? slice_in_dim(I, x, p[1], p[2], stride, axis) : NULL;
  sr_unref(x);
  return r;
}

static SrVal *squeezed(SrInterp *I, SrVal *r, int64_t axis, int keepdims) {
  if (!r || keepdims) return r;
  SrVal *q = sr_lax_squeeze(I, r, &axis, 1);
  sr_unref(r);
  return q;
}

/* index_in_dim(operand, index, axis=0, keepdims=True) */
static SrVal *lax_index_in_dim(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "index_in_dim", "operand, index, axis=, keepdims=", p) < 0) return NULL;
  int64_t index, axis = 0;
  int keep = 1;
  if (sr_as_int(I, p[1], "index", &index) < 0) return NULL;
  if (p[2] && sr_as_int(I, p[2], "axis", &axis) < 0) return NULL;
  if (p[3] && (keep = sr_truthy(I, p[3])) < 0) return NULL;
  SrVal *x = sr_jnp_asarray(I, p[0], -1);
  const SrType *t = x ? sr_value_type(I, x) : NULL;
  SrVal *r = NULL;
  if (t && (axis < 0 || axis >= t->ndim)) {
    r = sr_raise(I, "IndexError", "tuple index out of range");
  } else if (t) {
    int64_t size = t->dims[axis].size, w = index < 0 ? index + size : index;
    if (w < 0 || w >= size) {
      r = sr_raise(I, "IndexError", "index %lld is out of bounds for axis %lld with size %lld", (long long)index,
                   (long long)axis, (long long)size);
    } else {
      SrVal *lo = sr_int(NULL, w), *hi = sr_int(NULL, w + 1);
      r = squeezed(I, slice_in_dim(I, x, lo, hi, 1, axis), axis, keep);
      sr_unref(lo);
      sr_unref(hi);
    }
  }
  sr_unref(x);
  return r;
}

/* [lax._const(start_index, 0)] * ndim with start_index at axis: a numpy
   zero, which dynamic_slice's index handling folds as it does a Python 0 */
static SrVal *start_list(SrInterp *I, SrVal *start, int nd, int64_t axis) {
  SrVal *items[SR_MAX_RANK];
  /* a Python int start: Python 0s; an array's: zeros of its dtype */
  const SrType *st = start->kind == SR_V_INT || start->kind == SR_V_BOOL ? NULL : sr_value_type(I, start);
  for (int i = 0; i < nd; i++) {
    void *d = NULL;
    items[i] = i == axis ? sr_ref(start)
               : st && sr_dtype_is_int(st->dtype) ? sr_np_scalar_new(st->dtype, &d)
                                                  : sr_int(NULL, 0);
    if (d) memset(d, 0, sr_dtype_info(st->dtype)->size);
  }
  return sr_tuple(NULL, nd, items);
}

/* dynamic_slice_in_dim(operand, start_index, slice_size, axis=0) */
static SrVal *dyn_slice_in_dim(SrInterp *I, SrVal *x, SrVal *start, int64_t size, int64_t axis) {
  const SrType *t = sr_value_type(I, x);
  if (!t) return NULL;
  if (axis < 0 || axis >= t->ndim) return sr_raise(I, "IndexError", "list assignment index out of range");
  int64_t sizes[SR_MAX_RANK];
  for (int i = 0; i < t->ndim; i++) sizes[i] = t->dims[i].size;
  sizes[axis] = size;
  SCOPE(I);
  SrVal *v[3] = {x, sr_nn_keep(s, start_list(I, start, t->ndim, axis)), sr_nn_keep(s, int_list(sizes, t->ndim))};
  return sr_nn_done(s, sr_nn_call(s, "jax.lax.dynamic_slice", 3, v, 0, NULL, NULL));
}

static SrVal *lax_dynamic_slice_in_dim(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "dynamic_slice_in_dim",
                    "operand, start_index, slice_size, axis=, *, allow_negative_indices=", p) < 0)
    return NULL;
  int64_t size, axis = 0;
  if (sr_as_int(I, p[2], "slice_size", &size) < 0) return NULL;
  if (p[3] && sr_as_int(I, p[3], "axis", &axis) < 0) return NULL;
  SrVal *x = sr_jnp_asarray(I, p[0], -1);
  SrVal *r = x ? dyn_slice_in_dim(I, x, p[1], size, axis) : NULL;
  sr_unref(x);
  return r;
}

static SrVal *lax_dynamic_index_in_dim(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "dynamic_index_in_dim", "operand, index, axis=, keepdims=, *, allow_negative_indices=",
                    p) < 0)
    return NULL;
  int64_t axis = 0;
  int keep = 1;
  if (p[2] && sr_as_int(I, p[2], "axis", &axis) < 0) return NULL;
  if (p[3] && (keep = sr_truthy(I, p[3])) < 0) return NULL;
  SrVal *x = sr_jnp_asarray(I, p[0], -1);
  SrVal *r = x ? squeezed(I, dyn_slice_in_dim(I, x, p[1], 1, axis), axis, keep) : NULL;
  sr_unref(x);
  return r;
}

/* dynamic_update_slice_in_dim(operand, update, start_index, axis) */
static SrVal *lax_dynamic_update_slice_in_dim(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "dynamic_update_slice_in_dim",
                    "operand, update, start_index, axis, *, allow_negative_indices=", p) < 0)
    return NULL;
  int64_t axis;
  if (sr_as_int(I, p[3], "axis", &axis) < 0) return NULL;
  SrVal *x = sr_jnp_asarray(I, p[0], -1);
  const SrType *t = x ? sr_value_type(I, x) : NULL;
  SrVal *r = NULL;
  if (t && (axis < 0 || axis >= t->ndim)) {
    r = sr_raise(I, "IndexError", "list assignment index out of range");
  } else if (t) {
    SCOPE(I);
    SrVal *v[3] = {x, p[1], sr_nn_keep(s, start_list(I, p[2], t->ndim, axis))};
    r = sr_nn_done(s, sr_nn_call(s, "jax.lax.dynamic_update_slice", 3, v, 0, NULL, NULL));
  }
  sr_unref(x);
  return r;
}

void sr_lax_math_init(void) {
  static const struct {
    const char *names;
    SrBuiltinFn fn;
    const char *doc;
  } defs[] = {
      {"jax.lax.asin", lax_asin, "asin(x): the arc sine elementwise (the asin primitive)"},
      {"jax.lax.acos", lax_acos, "acos(x): the arc cosine elementwise (the acos primitive)"},
      {"jax.lax.atan", lax_atan, "atan(x): the arc tangent elementwise (the atan primitive)"},
      {"jax.lax.sinh", lax_sinh, "sinh(x): the hyperbolic sine elementwise (the sinh primitive)"},
      {"jax.lax.cosh", lax_cosh, "cosh(x): the hyperbolic cosine elementwise (the cosh primitive)"},
      {"jax.lax.asinh", lax_asinh, "asinh(x): the inverse hyperbolic sine (the asinh primitive)"},
      {"jax.lax.acosh", lax_acosh, "acosh(x): the inverse hyperbolic cosine (the acosh primitive)"},
      {"jax.lax.atanh", lax_atanh, "atanh(x): the inverse hyperbolic tangent (the atanh primitive)"},
      {"jax.lax.population_count", lax_population_count, "population_count(x): the number of set bits of each integer"},
      {"jax.lax.clz", lax_clz, "clz(x): the number of leading zero bits of each integer"},
      {"jax.lax.erf_inv", lax_erf_inv, "erf_inv(x): the inverse error function (the erf_inv primitive)"},
      {"jax.lax.bessel_i0e", lax_bessel_i0e, "bessel_i0e(x): exp(-|x|) I0(x) (the bessel_i0e primitive)"},
      {"jax.lax.bessel_i1e", lax_bessel_i1e, "bessel_i1e(x): exp(-|x|) I1(x) (the bessel_i1e primitive)"},
      {"jax.lax.shift_left", lax_shift_left, "shift_left(x, y): x << y for integers"},
      {"jax.lax.shift_right_arithmetic", lax_shift_right_arithmetic,
       "shift_right_arithmetic(x, y): x >> y, the sign bit shifted in"},
      {"jax.lax.shift_right_logical", lax_shift_right_logical, "shift_right_logical(x, y): x >> y, zeros shifted in"},
      {"jax.lax.nextafter", lax_nextafter, "nextafter(x1, x2): the next float after x1 toward x2"},
      {"jax.lax.mulhi", lax_mulhi, "mulhi(x, y): the high half of the double-width integer product"},
      {"jax.lax.igamma", lax_igamma, "igamma(a, x): the regularized lower incomplete gamma function P(a, x)"},
      {"jax.lax.igammac", lax_igammac, "igammac(a, x): the regularized upper incomplete gamma function Q(a, x)"},
      {"jax.lax.igamma_grad_a", lax_igamma_grad_a, "igamma_grad_a(a, x): dP(a, x)/da"},
      {"jax.lax.betainc", lax_betainc, "betainc(a, b, x): the regularized incomplete beta function I_x(a, b)"},
      {"jax.lax.reduce_and", lax_reduce_and, "reduce_and(operand, axes): the bitwise/logical and over axes"},
      {"jax.lax.reduce_or", lax_reduce_or, "reduce_or(operand, axes): the bitwise/logical or over axes"},
      {"jax.lax.reduce_xor", lax_reduce_xor, "reduce_xor(operand, axes): the bitwise/logical xor over axes"},
      {"jax.lax.reciprocal", lax_reciprocal, "reciprocal(x): 1 / x, integer_pow(x, -1)"},
      {"jax.lax.full_like", lax_full_like,
       "full_like(x, fill_value, dtype=None, shape=None, sharding=None): an array like x filled with fill_value"},
      {"jax.lax.bitcast_convert_type", lax_bitcast_convert_type,
       "bitcast_convert_type(operand, new_dtype): the bits reinterpreted as new_dtype (same width)"},
      {"jax.lax.collapse", lax_collapse,
       "collapse(operand, start_dimension, stop_dimension=None): dimensions [start, stop) merged into one"},
      {"jax.lax.broadcast_to_rank", lax_broadcast_to_rank, "broadcast_to_rank(x, rank): leading 1s up to rank"},
      {"jax.lax.slice_in_dim", lax_slice_in_dim,
       "slice_in_dim(operand, start_index, limit_index, stride=1, axis=0): a slice along one axis"},
      {"jax.lax.index_in_dim", lax_index_in_dim,
       "index_in_dim(operand, index, axis=0, keepdims=True): one index along one axis"},
      {"jax.lax.dynamic_slice_in_dim", lax_dynamic_slice_in_dim,
       "dynamic_slice_in_dim(operand, start_index, slice_size, axis=0): a dynamic_slice along one axis"},
      {"jax.lax.dynamic_index_in_dim", lax_dynamic_index_in_dim,
       "dynamic_index_in_dim(operand, index, axis=0, keepdims=True): a dynamic index along one axis"},
      {"jax.lax.dynamic_update_slice_in_dim", lax_dynamic_update_slice_in_dim,
       "dynamic_update_slice_in_dim(operand, update, start_index, axis): a dynamic_update_slice along one axis"},
  };
  for (size_t i = 0; i < sizeof defs / sizeof *defs; i++) sr_def(defs[i].names, defs[i].fn, defs[i].doc);
}

void sr_math_api_init(void) {
  sr_lax_math_init();
  sr_numpy_math_init();
  sr_scipy_special_more_init();
  sr_scipy_special_series_init();
  sr_nn_more_init();
}
