/* numpy_setops.c: jax.numpy.unique and its array-API faces unique_values,
 * unique_counts, unique_inverse, unique_all (numpy/setops.py), with what
 * they are built on: lexsort (numpy/sorting.py, a jit), nonzero,
 * flatnonzero and bincount (numpy/lax_numpy.py), each written as JAX
 * writes it.  unique without size= needs a concrete array (JAX's
 * ConcretizationTypeError under a trace); with size= it traces, through
 * the jit _unique_sorted_mask and nonzero(mask, size=size).  Registered by
 * sr_jnp_setops_init (jax.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/jaxstate.h"
#include "core/trace.h"
#include "jax/jax.h"
#include "jax/lax.h"
#include "jax/nn.h"
#include "jax/numpy.h"
#include "py/ast.h"
#include "py/objects.h"
#include "text/print_val.h"
#include "util/intern.h"
#include "jax/tracers.h"

#define SCOPE(I) SrNnScope s_ = {(I), {0}, 0}, *s = &s_
#define KEEP(v) sr_nn_keep(s, (v))
#define OP(op, x, y) sr_nn_op(s, SR_OP_##op, x, y)

static const SrType *type_of(SrNnScope *s, SrVal *v) { return v ? sr_value_type(s->I, v) : NULL; }
static SrDtype default_int(SrInterp *I) { return I->jax->enable_x64 ? SR_I64 : SR_I32; }

static int is_concrete(SrInterp *I, SrVal *v) {
  (void)I;
  SrArrayObj *a = sr_array_of(v);
  return !a || a->kind == SR_AV_CONCRETE;
}

/* core.concrete_or_error's ConcretizationTypeError, in the words the
   other built-ins use */
static SrVal *raise_concretization(SrInterp *I, SrVal *v, const char *context) {
  return sr_raise_concretization(I, v, context);
}

static const char UNIQUE_SIZE_HINT[] =
    "To make jnp.unique() compatible with JIT and other transforms, you can specify "
    "a concrete value for the size argument, which will determine the output size.";

static SrVal *dtype_v(SrNnScope *s, SrDtype dt) { return KEEP(sr_dtype_val(NULL, dt)); }

/* jnp.zeros(n, dtype) / jnp.ones(n, dtype) */
static SrVal *filled(SrNnScope *s, const char *q, int64_t n, SrDtype dt) {
  SrVal *v[2] = {sr_nn_int(s, n), dtype_v(s, dt)};
  return sr_nn_call(s, q, 2, v, 0, NULL, NULL);
}

static SrVal *slice_v(SrNnScope *s, int64_t start, int has_start, int64_t stop, int has_stop, int64_t step) {
  return KEEP(sr_slice_new(has_start ? sr_int(NULL, start) : sr_none(), has_stop ? sr_int(NULL, stop) : sr_none(),
                           step != 1 ? sr_int(NULL, step) : sr_none()));
}

static SrVal *get(SrNnScope *s, SrVal *x, SrVal *k) { return x && k ? KEEP(sr_getitem(s->I, x, k)) : NULL; }

/* x.at[k].method(v, mode=mode) */
/* x.at[k].METHOD(v, mode=mode, out_sharding=sh): mode and sh when given */
static SrVal *at_update_sharded(SrNnScope *s, SrVal *x, SrVal *k, const char *method, SrVal *v, const char *mode,
                                SrVal *sh) {
  SrInterp *I = s->I;
  SrVal *at = x && k && v ? KEEP(sr_getattr(I, x, "at")) : NULL;
  SrVal *ref = at ? get(s, at, k) : NULL;
  SrVal *m = ref ? KEEP(sr_getattr(I, ref, method)) : NULL;
  if (!m) return NULL;
  const char *kw[2];
  SrVal *kv[2];
  int nkw = 0;
  if (mode) {
    kw[nkw] = sr_intern_cstr("mode");
    kv[nkw++] = KEEP(sr_str(NULL, mode, strlen(mode)));
  }
  if (sh) {
    kw[nkw] = sr_intern_cstr("out_sharding");
    kv[nkw++] = sh;
  }
  SrArgs a = {1, &v, nkw, kw, kv, NULL};
  return KEEP(sr_call(I, m, &a));
}

static SrVal *at_update(SrNnScope *s, SrVal *x, SrVal *k, const char *method, SrVal *v, const char *mode) {
  return at_update_sharded(s, x, k, method, v, mode, NULL);
}

/* ---- lexsort ---- */

static SrVal *lexsort_body(SrInterp *I, SrArgs *a) {
  int64_t axis = *(int64_t *)sr_current_builtin(I)->data;
  SCOPE(I);
  SrVal *keys = sr_nn_call1(s, "builtins.tuple", a->v[0]);
  if (!keys) return sr_nn_done(s, NULL);
  int n = keys->seq.n;
  if (n == 0) return sr_nn_done(s, sr_raise(I, "TypeError", "need sequence of keys with len > 0 in lexsort"));
  SrVal *ops[SR_NN_SCOPE_MAX / 2];
  if (n + 1 > (int)(sizeof ops / sizeof *ops))
    return sr_nn_done(s, sr_raise(I, "NotImplementedError", "lexsort of more than %d keys", (int)(sizeof ops / sizeof *ops) - 1));
  const SrType *t0 = NULL;
  for (int i = 0; i < n; i++) {
    SrVal *k = KEEP(sr_jnp_asarray(I, keys->seq.items[i], -1));
    const SrType *t = type_of(s, k);
    if (!t) return sr_nn_done(s, NULL);
    if (t0) {
      int same = t->ndim == t0->ndim;
      for (int d = 0; same && d < t->ndim; d++) same = t->dims[d].size == t0->dims[d].size;
      if (!same) return sr_nn_done(s, sr_raise(I, "ValueError", "all keys need to be the same shape"));
    }
    t0 = t;
    ops[n - 1 - i] = k;
  }
  SrDtype idt = default_int(I);
  if (t0->ndim == 0) return sr_nn_done(s, KEEP(sr_lax_full(I, NULL, 0, sr_nn_int(s, 0), (int)idt, NULL)));
  int64_t ax;
  if (sr_api_axis(I, axis, t0->ndim, &ax) < 0) return sr_nn_done(s, NULL);
  if (t0->dims[ax].size > INT32_MAX) idt = SR_I64;
  int64_t shape[SR_MAX_RANK];
  for (int d = 0; d < t0->ndim; d++) shape[d] = t0->dims[d].size;
  SrVal *iota = KEEP(sr_lax_iota(I, idt, shape, t0->ndim, (int)ax, NULL));
  if (!iota) return sr_nn_done(s, NULL);
  ops[n] = iota;
  SrVal *r = KEEP(sr_bindv(I, SR_P_sort, n + 1, ops, "dimension", sr_int(NULL, ax), "is_stable", sr_bool(1),
                           "num_keys", sr_int(NULL, n), NULL));
  return sr_nn_done(s, r ? r->seq.items[n] : NULL);
}

static SrVal *lexsort_call(SrInterp *I, SrVal *keys, int64_t axis) {
  int64_t *d = sr_xmalloc(sizeof *d);
  *d = axis;
  return sr_api_jit(I, "lexsort", lexsort_body, d, 1, &keys);
}

/* lexsort(keys, axis=-1) */
static SrVal *jnp_lexsort(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "lexsort", "keys, axis=", p) < 0) return NULL;
  int64_t axis = -1;
  if (p[1] && sr_as_int(I, p[1], "axis", &axis) < 0) return NULL;
  SrVal *keys = p[0];
  if (sr_is_seq(keys)) {
    /* ensure_arraylike_tuple: a tuple of arrays */
    SrVal *t = sr_seq(NULL, SR_V_TUPLE, keys->seq.n);
    for (int i = 0; i < keys->seq.n; i++) {
      SrVal *k = sr_jnp_asarray(I, keys->seq.items[i], -1);
      if (!k) {
        sr_unref(t);
        return NULL;
      }
      sr_seq_push(NULL, t, k);
    }
    SrVal *r = lexsort_call(I, t, axis);
    sr_unref(t);
    return r;
  }
  return lexsort_call(I, keys, axis);
}

/* ---- bincount ---- */

/* zeros(length, dtype(weights)).at[clip(x, 0)].add(weights, mode='drop') */
static SrVal *bincount_impl(SrNnScope *s, SrVal *x, SrVal *weights, int64_t length, SrVal *sh) {
  SrInterp *I = s->I;
  SrVal *w = weights ? weights : KEEP(sr_jnp_asarray(I, sr_nn_int(s, 1), (int)default_int(I)));
  const SrType *wt = type_of(s, w);
  if (!wt) return NULL;
  SrVal *z = filled(s, "jax.numpy.zeros", length, wt->dtype);
  SrVal *c = z ? sr_nn_call2(s, "jax.numpy.clip", x, sr_nn_int(s, 0)) : NULL;
  return c ? at_update_sharded(s, z, c, "add", w, "drop", sh) : NULL;
}

/* lax_numpy.is_replicated_or_unreduced: no partitions, nothing reduced,
   and unreduced over no axis or every mesh axis */
static int replicated_or_unreduced(const SrVal *sh) {
  const SrSpec *sp = sh->sh.spec;
  if (sp->n || sp->nreduced) return 0;
  if (!sp->nunreduced) return 1;
  const SrMesh *m = sh->sh.mesh;
  if (sp->nunreduced != m->n) return 0;
  for (int i = 0; i < m->n; i++) {
    int found = 0;
    for (int k = 0; k < sp->nunreduced; k++) found |= sp->unreduced[k] == m->names[i];
    if (!found) return 0;
  }
  return 1;
}

/* bincount(x, weights=None, minlength=0, *, length=None, out_sharding=None) */
static SrVal *jnp_bincount(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "bincount", "x, weights=, minlength=, *, length=, out_sharding=", p) < 0) return NULL;
  SCOPE(I);
  SrVal *x = KEEP(sr_jnp_asarray(I, p[0], -1));
  const SrType *t = type_of(s, x);
  if (!t) return sr_nn_done(s, NULL);
  if (t->dtype == SR_BOOL) {
    x = KEEP(sr_lax_convert(I, x, SR_I32, 0, NULL));
    t = type_of(s, x);
  }
  if (!sr_dtype_is_int(t->dtype))
    return sr_nn_done(s, sr_raise(I, "TypeError", "x argument to bincount must have an integer type; got %s",
                                  sr_dtype_name(t->dtype)));
  if (t->ndim != 1) return sr_nn_done(s, sr_raise(I, "ValueError", "only 1-dimensional input supported."));
  int64_t minlength = 0, length;
  if (sr_nn_given(p[2]) && sr_as_int(I, p[2], "minlength", &minlength) < 0) return sr_nn_done(s, NULL);
  if (!sr_nn_given(p[3])) {
    if (!is_concrete(I, x))
      return sr_nn_done(s, raise_concretization(I, x,
                                                   "The error occurred because of argument 'x' of jnp.bincount. "
                                                   "To avoid this error, pass a static `length` argument."));
    length = minlength;
    if (sr_type_numel(t)) {
      SrVal *mx = sr_nn_call1(s, "jax.numpy.max", x);
      int64_t m;
      if (!mx || sr_as_int(I, mx, "bincount", &m) < 0) return sr_nn_done(s, NULL);
      if ((m < 0 ? 0 : m) + 1 > length) length = (m < 0 ? 0 : m) + 1;
    }
  } else if (sr_as_int(I, p[3], "length", &length) < 0) {
    return sr_nn_done(s, NULL);
  }
  SrVal *w = sr_nn_given(p[1]) ? KEEP(sr_jnp_asarray(I, p[1], -1)) : NULL;
  if (w) {
    const SrType *wt = type_of(s, w);
    int same = wt && wt->ndim == t->ndim && wt->dims[0].size == t->dims[0].size;
    if (!same) {
      SrBuf b = SR_BUF_INIT;
      sr_buf_printf(&b, "type of weights must match type of x. Got typeof(x)=%s and typeof(weights)=%s",
                    sr_type_short(t), wt ? sr_type_short(wt) : "?");
      sr_raise(I, "ValueError", "%s", b.p);
      sr_buf_free(&b);
      return sr_nn_done(s, NULL);
    }
  }
  SrVal *sh = NULL;
  if (sr_api_canon_sharding(I, p[4], "jnp.bincount", &sh) < 0) return sr_nn_done(s, NULL);
  if (sh) KEEP(sh);
  if (sh && !replicated_or_unreduced(sh))
    return sr_nn_done(s, sr_raise(I, "ShardingTypeError",
                                  "out_sharding passed to `jnp.bincount` can only be fully replicated or fully "
                                  "unreduced along all mesh axes"));
  return sr_nn_done(s, bincount_impl(s, x, w, length, sh));
}

/* ---- nonzero ---- */

/* nonzero(a, size=, fill_value=) as lax_numpy.py writes it: the tuple of
   index arrays (the scope holds it); size < 0: None. */
static SrVal *nonzero_impl(SrNnScope *s, SrVal *a, int64_t size, SrVal *fill_value) {
  SrInterp *I = s->I;
  SrVal *arr = KEEP(sr_jnp_asarray(I, a, -1));
  const SrType *t = type_of(s, arr);
  if (!t) return NULL;
  if (t->ndim == 0)
    return sr_raise(I, "ValueError",
                    "Calling nonzero on 0d arrays is not allowed. Use jnp.atleast_1d(scalar).nonzero() instead.");
  SrVal *mask = t->dtype == SR_BOOL ? arr : OP(NE, arr, sr_nn_int(s, 0));
  if (!mask) return NULL;
  int64_t n = size;
  if (size < 0) {
    SrVal *sum = KEEP(sr_getattr(I, mask, "sum"));
    SrArgs na = {0, NULL, 0, NULL, NULL, NULL};
    SrVal *cnt = sum ? KEEP(sr_call(I, sum, &na)) : NULL;
    if (!cnt) return NULL;
    if (!is_concrete(I, cnt))
      return raise_concretization(I, cnt,
                                     "The size argument of jnp.nonzero must be statically specified "
                                     "to use jnp.nonzero within JAX transformations.");
    if (sr_as_int(I, cnt, "nonzero", &n) < 0) return NULL;
  }
  SrVal *out = KEEP(sr_seq(NULL, SR_V_TUPLE, t->ndim));
  if (sr_type_numel(t) == 0 || n == 0) {
    for (int d = 0; d < t->ndim; d++) {
      SrVal *z = filled(s, "jax.numpy.zeros", n, default_int(I));
      if (!z) return NULL;
      sr_seq_push(NULL, out, sr_ref(z));
    }
    return out;
  }
  /* flat_indices = cumsum(bincount(cumsum(mask), length=calculated_size)) */
  SrVal *cs = sr_nn_call1(s, "jax.numpy.cumsum", mask);
  SrVal *bc = cs ? bincount_impl(s, cs, NULL, n, NULL) : NULL;
  SrVal *flat = bc ? sr_nn_call1(s, "jax.numpy.cumsum", bc) : NULL;
  const SrType *ft = type_of(s, flat);
  if (!ft) return NULL;
  int64_t stride = 1, strides[SR_MAX_RANK];
  for (int d = t->ndim - 1; d >= 0; d--) {
    strides[d] = stride;
    stride *= t->dims[d].size;
  }
  for (int d = 0; d < t->ndim; d++) {
    SrVal *st = KEEP(sr_jnp_asarray(I, sr_nn_int(s, strides[d]), (int)ft->dtype));
    SrVal *e = OP(MOD, OP(FLOORDIV, flat, st), sr_nn_int(s, t->dims[d].size));
    if (!e) return NULL;
    sr_seq_push(NULL, out, sr_ref(e));
  }
  if (fill_value && fill_value->kind != SR_V_NONE) {
    int tup = fill_value->kind == SR_V_TUPLE;
    if (tup && fill_value->seq.n != t->ndim) goto bad_fill;
    for (int d = 0; d < t->ndim; d++) {
      SrVal *fv = tup ? fill_value->seq.items[d] : fill_value;
      const SrType *fvt = type_of(s, KEEP(sr_jnp_asarray(I, fv, -1)));
      if (!fvt) return NULL;
      if (fvt->ndim) goto bad_fill;
    }
    SrVal *sum = KEEP(sr_getattr(I, mask, "sum"));
    SrArgs na = {0, NULL, 0, NULL, NULL, NULL};
    SrVal *ar = sr_nn_call1(s, "jax.numpy.arange", sr_nn_int(s, n));
    SrVal *fm = ar && sum ? OP(GE, ar, KEEP(sr_call(I, sum, &na))) : NULL;
    if (!fm) return NULL;
    for (int d = 0; d < t->ndim; d++) {
      SrVal *fv = tup ? fill_value->seq.items[d] : fill_value;
      SrVal *w = sr_nn_call3(s, "jax.numpy.where", fm, fv, out->seq.items[d]);
      if (!w) return NULL;
      sr_unref(out->seq.items[d]);
      out->seq.items[d] = sr_ref(w);
    }
  }
  return out;
bad_fill: {
  SrBuf b = SR_BUF_INIT;
  sr_val_str(&b, fill_value);
  sr_raise(I, "ValueError", "fill_value must be a scalar or a tuple of length %d; got %s", t->ndim, b.p);
  sr_buf_free(&b);
  return NULL;
}
}


/* jnp.nonzero, flatnonzero, argwhere and where(condition) themselves are
   numpy_build.c's; unique uses nonzero_impl. */

/* ---- unique ---- */

typedef struct UmData {
  int64_t axis;
  int equal_nan;
} UmData;

/* jnp.moveaxis(x, src, dst) */
static SrVal *moveaxis(SrNnScope *s, SrVal *x, int64_t src, int64_t dst) {
  SrVal *v[3] = {x, sr_nn_int(s, src), sr_nn_int(s, dst)};
  return sr_nn_call(s, "jax.numpy.moveaxis", 3, v, 0, NULL, NULL);
}

/* _unique_sorted_mask(ar, axis, equal_nan): (aux, mask, perm) */
static SrVal *unique_sorted_mask_body(SrInterp *I, SrArgs *a) {
  UmData *d = sr_current_builtin(I)->data;
  SCOPE(I);
  SrVal *aux = moveaxis(s, a->v[0], d->axis, 0);
  const SrType *t = type_of(s, aux);
  if (!t) return sr_nn_done(s, NULL);
  if (sr_dtype_kind(t->dtype) == SR_DK_COMPLEX) {
    /* aux = where(isnan(aux), lax._const(aux, nan), aux): a NaN in either
       part sorts as one NaN, as numpy's */
    SrVal *nan = KEEP(sr_lax_convert(I, KEEP(sr_float(NULL, NAN)), t->dtype, 0, NULL));
    aux = nan ? sr_nn_call3(s, "jax.numpy.where", sr_nn_call1(s, "jax.numpy.isnan", aux), nan, aux) : NULL;
    if (!aux) return sr_nn_done(s, NULL);
  }
  int64_t size = t->ndim ? t->dims[0].size : 1, rest = 1;
  for (int i = 1; i < t->ndim; i++) rest *= t->dims[i].size;
  SrVal *perm;
  if (rest == 0) {
    size = 1;
    perm = filled(s, "jax.numpy.zeros", 1, default_int(I));
  } else {
    /* lexsort(aux.reshape(size, prod(out_shape)).T[::-1]) */
    int64_t sh[2] = {size, rest};
    SrVal *r = KEEP(sr_lax_reshape(I, aux, sh, 2, NULL));
    SrVal *tr = r ? KEEP(sr_getattr(I, r, "T")) : NULL;
    SrVal *rev = get(s, tr, slice_v(s, 0, 0, 0, 0, -1));
    perm = rev ? KEEP(lexsort_call(I, rev, -1)) : NULL;
  }
  aux = get(s, aux, perm);
  t = type_of(s, aux);
  if (!t) return sr_nn_done(s, NULL);
  SrVal *mask;
  if (sr_type_numel(t)) {
    SrVal *hi = get(s, aux, slice_v(s, 1, 1, 0, 0, 1)), *lo = hi ? get(s, aux, slice_v(s, 0, 0, -1, 1, 1)) : NULL;
    SrVal *neq = lo ? KEEP(sr_lax_binary(I, SR_P_ne, hi, lo)) : NULL;
    if (neq && sr_dtype_is_inexact(t->dtype) && d->equal_nan) {
      /* lax.ne(x, y) & ~(isnan(x) & isnan(y)) */
      SrVal *both = OP(BITAND, sr_nn_call1(s, "jax.numpy.isnan", hi), sr_nn_call1(s, "jax.numpy.isnan", lo));
      SrVal *nb = both ? KEEP(sr_unop(I, SR_OP_INVERT, both)) : NULL;
      neq = nb ? OP(BITAND, neq, nb) : NULL;
    }
    SrVal *axes = KEEP(sr_seq(NULL, SR_V_TUPLE, t->ndim - 1));
    for (int i = 1; i < t->ndim; i++) sr_seq_push(NULL, axes, sr_int(NULL, i));
    SrVal *any = neq ? sr_nn_call2(s, "jax.numpy.any", neq, axes) : NULL;
    SrVal *ones = any ? filled(s, "jax.numpy.ones", size, SR_BOOL) : NULL;
    mask = ones ? at_update(s, ones, slice_v(s, 1, 1, 0, 0, 1), "set", any, NULL) : NULL;
  } else {
    mask = filled(s, "jax.numpy.zeros", size, SR_BOOL);
  }
  if (!mask) return sr_nn_done(s, NULL);
  SrVal *items[3] = {sr_ref(aux), sr_ref(mask), sr_ref(perm)};
  return sr_nn_done(s, KEEP(sr_tuple(NULL, 3, items)));
}

enum { U_INDEX = 1, U_INVERSE = 2, U_COUNTS = 4 };

/* setops._unique: the tuple of results (the scope holds it) */
static SrVal *unique_impl(SrNnScope *s, SrVal *ar, int64_t axis, int want, int equal_nan, int64_t size,
                          SrVal *fill_value) {
  SrInterp *I = s->I;
  const SrType *at = type_of(s, ar);
  if (!at) return NULL;
  int has_fill = sr_nn_given(fill_value);
  if (at->dims[axis].size == 0 && size > 0 && !has_fill)
    return sr_raise(I, "ValueError",
                    "jnp.unique: for zero-sized input with nonzero size argument, fill_value must be specified");
  UmData *ud = sr_xmalloc(sizeof *ud);
  ud->axis = axis;
  ud->equal_nan = equal_nan;
  SrVal *um = KEEP(sr_api_jit(I, "_unique_sorted_mask", unique_sorted_mask_body, ud, 1, &ar));
  if (!um) return NULL;
  SrVal *aux = um->seq.items[0], *mask = um->seq.items[1], *perm = um->seq.items[2];
  SrVal *ind;
  if (size < 0) {
    if (!is_concrete(I, mask))
      return raise_concretization(I, mask, "The error arose in jnp.unique(). To make jnp.unique() compatible "
                                              "with JIT and other transforms, you can specify a concrete value for "
                                              "the size argument, which will determine the output size.");
    ind = mask;
  } else {
    SrVal *nz = nonzero_impl(s, mask, size, NULL);
    ind = nz ? nz->seq.items[0] : NULL;
  }
  if (!ind) return NULL;
  const SrType *auxt = type_of(s, aux);
  int64_t auxn = sr_type_numel(auxt);
  SrVal *result = auxn ? get(s, aux, ind) : aux;
  if (result && size >= 0 && has_fill) {
    const SrType *rt = type_of(s, result);
    SrVal *fv = KEEP(sr_jnp_asarray(I, fill_value, -1));
    fv = fv ? KEEP(sr_lax_convert(I, fv, rt->dtype, 0, NULL)) : NULL;
    if (!fv) return NULL;
    if (rt->dims[0].size) {
      SrVal *sum = KEEP(sr_getattr(I, mask, "sum"));
      SrArgs na = {0, NULL, 0, NULL, NULL, NULL};
      SrVal *cnt = sum ? KEEP(sr_call(I, sum, &na)) : NULL;
      SrVal *lt = cnt ? OP(LT, sr_nn_call1(s, "jax.numpy.arange", sr_nn_int(s, size)), cnt) : NULL;
      int64_t dims[SR_MAX_RANK];
      for (int i = 1; i < rt->ndim; i++) dims[i - 1] = i;
      SrVal *valid = lt ? (rt->ndim > 1 ? KEEP(sr_lax_expand_dims(I, lt, dims, rt->ndim - 1)) : lt) : NULL;
      result = valid ? sr_nn_call3(s, "jax.numpy.where", valid, result, fv) : NULL;
    } else {
      int64_t shape[SR_MAX_RANK];
      shape[0] = size;
      for (int i = 1; i < rt->ndim; i++) shape[i] = rt->dims[i].size;
      result = KEEP(sr_lax_full(I, shape, rt->ndim, fv, (int)rt->dtype, NULL));
    }
  }
  result = result ? moveaxis(s, result, 0, axis) : NULL;
  if (!result) return NULL;
  SrVal *ret = KEEP(sr_seq(NULL, SR_V_TUPLE, 4));
  sr_seq_push(NULL, ret, sr_ref(result));
  if (want & U_INDEX) {
    SrVal *pi = auxn ? get(s, perm, ind) : perm;
    if (!pi) return NULL;
    sr_seq_push(NULL, ret, sr_ref(pi));
  }
  if (want & U_INVERSE) {
    SrVal *inv;
    if (auxn) {
      SrVal *imask = OP(SUB, sr_nn_call1(s, "jax.numpy.cumsum", mask), sr_nn_int(s, 1));
      SrVal *z = imask ? filled(s, "jax.numpy.zeros", type_of(s, mask)->dims[0].size, default_int(I)) : NULL;
      inv = z ? at_update(s, z, perm, "set", imask, NULL) : NULL;
    } else {
      inv = filled(s, "jax.numpy.zeros", at->dims[axis].size, default_int(I));
    }
    if (!inv) return NULL;
    sr_seq_push(NULL, ret, sr_ref(inv));
  }
  if (want & U_COUNTS) {
    SrVal *c;
    int64_t msize = type_of(s, mask)->dims[0].size;
    if (auxn) {
      SrVal *idx;
      if (size < 0) {
        /* append(nonzero(mask)[0], mask.size) */
        SrVal *nz = nonzero_impl(s, mask, -1, NULL);
        SrVal *end = nz ? KEEP(sr_jnp_asarray(I, sr_nn_int(s, msize), -1)) : NULL;
        SrVal *r1 = end ? sr_nn_call1(s, "jax.numpy.ravel", nz->seq.items[0]) : NULL;
        SrVal *r2 = r1 ? sr_nn_call1(s, "jax.numpy.ravel", end) : NULL;
        SrVal *l[2] = {r1 ? sr_ref(r1) : NULL, r2 ? sr_ref(r2) : NULL};
        if (!r2) {
          sr_unref(l[0]);
          return NULL;
        }
        idx = sr_nn_call1(s, "jax.numpy.concatenate", KEEP(sr_tuple(NULL, 2, l)));
      } else {
        SrVal *nz = nonzero_impl(s, mask, size + 1, NULL);
        idx = nz ? nz->seq.items[0] : NULL;
        SrVal *tail = idx ? get(s, idx, slice_v(s, 1, 1, 0, 0, 1)) : NULL;
        SrVal *tail2 = tail ? get(s, idx, slice_v(s, 1, 1, 0, 0, 1)) : NULL;
        SrVal *w = tail2 ? sr_nn_call3(s, "jax.numpy.where", tail, tail2, sr_nn_int(s, msize)) : NULL;
        idx = w ? at_update(s, idx, slice_v(s, 1, 1, 0, 0, 1), "set", w, NULL) : NULL;
      }
      c = idx ? sr_nn_call1(s, "jax.numpy.diff", idx) : NULL;
    } else if (at->dims[axis].size) {
      int64_t one = 1;
      c = KEEP(sr_lax_full(I, &one, 1, sr_nn_int(s, at->dims[axis].size), (int)default_int(I), NULL));
    } else {
      c = filled(s, "jax.numpy.empty", 0, default_int(I));
    }
    if (!c) return NULL;
    sr_seq_push(NULL, ret, sr_ref(c));
  }
  return ret;
}

/* jnp.unique's body after its arguments: ar flattened for axis=None, the
   inverse reshaped back. */
static SrVal *unique_common(SrNnScope *s, SrVal *ar, SrVal *axis_v, int want, int equal_nan, SrVal *size_v,
                            SrVal *fill_value, const char *fname) {
  SrInterp *I = s->I;
  SrVal *arr = KEEP(sr_jnp_asarray(I, ar, -1));
  if (!arr) return NULL;
  int64_t size = -1;
  if (!sr_nn_given(size_v)) {
    if (!is_concrete(I, arr)) {
      SrBuf b = SR_BUF_INIT;
      sr_buf_printf(&b, "The error arose for the first argument of jnp.unique(). %s", UNIQUE_SIZE_HINT);
      raise_concretization(I, arr, b.p);
      sr_buf_free(&b);
      return NULL;
    }
  } else {
    if (!is_concrete(I, size_v)) {
      SrBuf b = SR_BUF_INIT;
      sr_buf_printf(&b, "The error arose for the size argument of jnp.unique(). %s", UNIQUE_SIZE_HINT);
      raise_concretization(I, size_v, b.p);
      sr_buf_free(&b);
      return NULL;
    }
    if (sr_as_int(I, size_v, "size", &size) < 0) return NULL;
  }
  (void)fname;
  const SrType *t = type_of(s, arr);
  int64_t axis = 0;
  int none = !sr_nn_given(axis_v);
  if (none) {
    int64_t n = sr_type_numel(t);
    arr = KEEP(sr_lax_reshape(I, arr, &n, 1, NULL));
    if (!arr) return NULL;
  } else {
    int64_t ax;
    if (sr_as_int(I, axis_v, "axis", &ax) < 0 || sr_api_axis(I, ax, t->ndim, &axis) < 0) return NULL;
  }
  SrVal *r = unique_impl(s, arr, axis, want, equal_nan, size, fill_value);
  if (!r) return NULL;
  if ((want & U_INVERSE) && none) {
    int k = (want & U_INDEX) ? 2 : 1;
    int64_t shape[SR_MAX_RANK];
    for (int i = 0; i < t->ndim; i++) shape[i] = t->dims[i].size;
    SrVal *inv = KEEP(sr_lax_reshape(I, r->seq.items[k], shape, t->ndim, NULL));
    if (!inv) return NULL;
    sr_unref(r->seq.items[k]);
    r->seq.items[k] = sr_ref(inv);
  }
  return r;
}

/* unique(ar, return_index=False, return_inverse=False, return_counts=False,
   axis=None, *, equal_nan=True, size=None, fill_value=None, sorted=True) */
static SrVal *jnp_unique(SrInterp *I, SrArgs *a) {
  SrVal *p[9];
  if (sr_args_parse(I, a, "unique",
                    "ar, return_index=, return_inverse=, return_counts=, axis=, *, equal_nan=, size=, fill_value=, "
                    "sorted=",
                    p) < 0)
    return NULL;
  int want = 0, flags[3];
  for (int i = 0; i < 3; i++) {
    flags[i] = p[1 + i] ? sr_truthy(I, p[1 + i]) : 0;
    if (flags[i] < 0) return NULL;
    if (flags[i]) want |= 1 << i;
  }
  int equal_nan = p[5] ? sr_truthy(I, p[5]) : 1;
  if (equal_nan < 0) return NULL;
  SCOPE(I);
  SrVal *r = unique_common(s, p[0], p[4], want, equal_nan, p[6], p[7], "unique");
  if (!r) return sr_nn_done(s, NULL);
  return sr_nn_done(s, r->seq.n == 1 ? r->seq.items[0] : r);
}

/* the NamedTuple results of unique_all / unique_counts / unique_inverse */
static SrVal *named_result(SrNnScope *s, const char *cls, const char *fields, SrVal *r) {
  SrInterp *I = s->I;
  static SrVal *classes[3];
  int k = !strcmp(cls, "_UniqueAllResult") ? 0 : !strcmp(cls, "_UniqueCountsResult") ? 1 : 2;
  if (!classes[k]) {
    SrVal *nt = sr_lookup_qualname("collections.namedtuple");
    if (!nt) return sr_raise(I, "NotImplementedError", "collections.namedtuple is not available");
    SrVal *v[2] = {KEEP(sr_str(NULL, cls, strlen(cls))), KEEP(sr_str(NULL, fields, strlen(fields)))};
    SrArgs na = {2, v, 0, NULL, NULL, NULL};
    classes[k] = sr_call(I, nt, &na);
    if (!classes[k]) return NULL;
  }
  SrArgs ca = {r->seq.n, r->seq.items, 0, NULL, NULL, NULL};
  return KEEP(sr_call(I, classes[k], &ca));
}

static SrVal *unique_face(SrInterp *I, SrArgs *a, const char *name, int want, const char *cls, const char *fields) {
  SrVal *p[3];
  if (sr_args_parse(I, a, name, "x, *, size=, fill_value=", p) < 0) return NULL;
  SCOPE(I);
  SrVal *r = unique_common(s, p[0], NULL, want, 0, p[1], p[2], name);
  if (!r) return sr_nn_done(s, NULL);
  if (!cls) return sr_nn_done(s, r->seq.items[0]);
  return sr_nn_done(s, named_result(s, cls, fields, r));
}

static SrVal *jnp_unique_values(SrInterp *I, SrArgs *a) { return unique_face(I, a, "unique_values", 0, NULL, NULL); }
static SrVal *jnp_unique_counts(SrInterp *I, SrArgs *a) {
  return unique_face(I, a, "unique_counts", U_COUNTS, "_UniqueCountsResult", "values counts");
}
static SrVal *jnp_unique_inverse(SrInterp *I, SrArgs *a) {
  return unique_face(I, a, "unique_inverse", U_INVERSE, "_UniqueInverseResult", "values inverse_indices");
}
static SrVal *jnp_unique_all(SrInterp *I, SrArgs *a) {
  return unique_face(I, a, "unique_all", U_INDEX | U_INVERSE | U_COUNTS, "_UniqueAllResult",
                     "values indices inverse_indices counts");
}

void sr_jnp_setops_init(void) {
  static const struct {
    const char *names;
    SrBuiltinFn fn;
    const char *doc;
  } defs[] = {
      {"jax.numpy.lexsort", jnp_lexsort, "lexsort(keys, axis=-1): indices sorting by several keys, the last first, jit[name=lexsort]"},
      {"jax.numpy.bincount", jnp_bincount, "bincount(x, weights=None, minlength=0, *, length=None, out_sharding=None): counts of each value, a scatter-add"},
      {"jax.numpy.unique", jnp_unique,
       "unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *, equal_nan=True, "
       "size=None, fill_value=None): the sorted unique values (size= to trace)"},
      {"jax.numpy.unique_values", jnp_unique_values, "unique_values(x, /, *, size=None, fill_value=None): the unique values"},
      {"jax.numpy.unique_counts", jnp_unique_counts, "unique_counts(x, /, *, size=None, fill_value=None): values and counts"},
      {"jax.numpy.unique_inverse", jnp_unique_inverse,
       "unique_inverse(x, /, *, size=None, fill_value=None): values and inverse_indices"},
      {"jax.numpy.unique_all", jnp_unique_all,
       "unique_all(x, /, *, size=None, fill_value=None): values, indices, inverse_indices and counts"},
      {NULL, NULL, NULL},
  };
  for (int i = 0; defs[i].names; i++) sr_def(defs[i].names, defs[i].fn, defs[i].doc);
}
