/* numpy_shape.c: shapes -- jax.numpy.split, array_split, hsplit, vsplit,
 * dsplit, hstack, vstack, dstack, column_stack, tile, repeat, roll, flip,
 * fliplr, flipud, rot90, meshgrid, atleast_1d/2d/3d (numpy/lax_numpy.py)
 * and jax.lax.split, jax.lax.tile (lax/lax.py), each binding what JAX's
 * binds, in a jit named as JAX's jit-decorated function is.  Registered by
 * sr_jnp_shape_init (jax.h). */
#include <stdlib.h>
#include <string.h>

#include "jax/array_methods.h"
#include "core/jaxstate.h"
#include "jax/jax.h"
#include "jax/lax.h"
#include "jax/numpy.h"
#include "jax/tracers.h"
#include "py/objects.h"
#include "py/range.h"
#include "text/print_val.h"
#include "util/intern.h"

static const SrType *vtype(SrInterp *I, SrVal *v) { return sr_value_type(I, v); }
static SrVal *arr(SrInterp *I, SrVal *v) { return sr_jnp_asarray(I, v, -1); }
static int given(SrVal *v) { return v && v->kind != SR_V_NONE; }

static void unref_all(int n, SrVal **v) {
  for (int i = 0; i < n; i++) sr_unref(v[i]);
}

/* An int or a sequence of ints (n = 1 for an int). */
static int ints_arg(SrInterp *I, SrVal *v, int64_t *out, int *n, const char *what) {
  SrVal *ints = sr_int_seq_arg(v);
  int rc = 0;
  if (!sr_is_seq(ints)) {
    *n = 1;
    rc = sr_as_int(I, ints, what, out);
  } else if (ints->seq.n > SR_MAX_RANK) {
    sr_raise(I, "ValueError", "%s: too many entries", what);
    rc = -1;
  } else {
    *n = ints->seq.n;
    for (int i = 0; i < *n && rc == 0; i++) rc = sr_as_int(I, ints->seq.items[i], what, &out[i]);
  }
  if (ints != v) sr_unref(ints);
  return rc;
}

static void shape_of(const SrType *t, int64_t *shape) {
  for (int i = 0; i < t->ndim; i++) shape[i] = t->dims[i].size;
}

/* A list of n values (stolen). */
static SrVal *list_of(int n, SrVal **items) {
  SrVal *l = sr_seq(NULL, SR_V_LIST, n);
  for (int i = 0; i < n; i++) sr_seq_push(NULL, l, items[i]);
  return l;
}

/* ==== split ==== */

/* lax.split(operand, sizes, axis): the tuple of parts. */
static SrVal *bind_split(SrInterp *I, SrVal *x, const int64_t *sizes, int n, int64_t axis) {
  return sr_bindv(I, SR_P_split, 1, &x, "sizes", sr_int_tuple(sizes, n), "axis", sr_int(NULL, axis), NULL);
}

/* core.concrete_or_error: a traced value without one is a
   ConcretizationTypeError (context what) */
static int concrete_or_error(SrInterp *I, SrVal *v, const char *what) {
  SrArrayObj *ao = sr_array_of(v);
  if (ao && ao->kind == SR_AV_TRACER && !ao->has_value) {
    sr_raise_concretization(I, v, what);
    return -1;
  }
  return 0;
}

/* lax_numpy._split: sections or indices along axis, as a list. */
static SrVal *split_impl(SrInterp *I, const char *op, SrVal *ary, SrVal *ios, int64_t axis) {
  SrVal *x = arr(I, ary);
  if (!x) return NULL;
  const SrType *t = vtype(I, x);
  SrVal *r = NULL;
  if (sr_api_axis(I, axis, t->ndim, &axis) < 0) goto done;
  int64_t size = t->dims[axis].size;
  int64_t small[64], *sizes = small;
  int n = 0;
  int is_seq = sr_is_seq(ios) || (ios->kind != SR_V_INT && ios->kind != SR_V_BOOL && vtype(I, ios) &&
                                  vtype(I, ios)->ndim > 0);
  if (is_seq) {
    SrVal *items = sr_iterate(I, ios);
    if (!items) goto done;
    n = items->seq.n + 1;
    sizes = n <= 64 ? small : sr_xcalloc((size_t)n, sizeof *sizes);
    int64_t prev = 0;
    for (int i = 0; i <= items->seq.n; i++) {
      int64_t v = size;
      if (i < items->seq.n) {
        char what[64];
        snprintf(what, sizeof what, "in jax.numpy.%s argument 1", op);
        if (concrete_or_error(I, items->seq.items[i], what) < 0 || sr_as_int(I, items->seq.items[i], what, &v) < 0) {
          sr_unref(items);
          goto done;
        }
      }
      sizes[i] = v - prev;
      prev = v;
    }
    sr_unref(items);
  } else {
    int64_t ns;
    char what[64];
    snprintf(what, sizeof what, "in jax.numpy.%s argument 1", op);
    if (concrete_or_error(I, ios, what) < 0 || sr_as_int(I, ios, what, &ns) < 0) goto done;
    if (ns == 0) {
      sr_raise(I, "ZeroDivisionError", "integer division or modulo by zero"); /* divmod's */
      goto done;
    }
    /* Python's divmod, which floors */
    int64_t part = size / ns, rem = size % ns;
    if (rem && (rem < 0) != (ns < 0)) part--, rem += ns;
    if (rem && strcmp(op, "array_split") != 0) {
      sr_raise(I, "ValueError", "array split does not result in an equal division: rest is %lld", (long long)rem);
      goto done;
    }
    n = ns > 0 ? (int)ns : 0;
    sizes = n <= 64 ? small : sr_xcalloc((size_t)n, sizeof *sizes);
    for (int i = 0; i < n; i++) sizes[i] = part + (i < rem);
  }
  /* numpy clips indices past the end, and lax.split then rejects what
     remains negative (as JAX does) */
  SrVal *parts = bind_split(I, x, sizes, n, axis);
  if (parts) {
    SrVal **items = sr_xcalloc((size_t)n + 1, sizeof *items);
    for (int i = 0; i < n; i++) items[i] = sr_ref(parts->seq.items[i]);
    r = list_of(n, items);
    free(items);
    sr_unref(parts);
  }
  if (sizes != small) free(sizes);
done:
  sr_unref(x);
  return r;
}

static SrVal *split_api(SrInterp *I, SrArgs *a, const char *op, int axis_mode) {
  SrVal *p[3];
  if (sr_args_parse(I, a, op, axis_mode == 0 ? "ary, indices_or_sections, axis=" : "ary, indices_or_sections", p) < 0)
    return NULL;
  int64_t axis = 0;
  if (axis_mode == 0 && p[2]) {
    char what[64];
    snprintf(what, sizeof what, "in jax.numpy.%s argument `axis`", op);
    if (sr_as_int(I, p[2], what, &axis) < 0) return NULL;
  }
  if (axis_mode == 2 || axis_mode == 3) {
    const SrType *t = vtype(I, p[0]);
    int nd = t ? t->ndim : 0;
    axis = axis_mode == 3 ? 2 : nd == 1 ? 0 : 1;
  }
  return split_impl(I, op, p[0], p[1], axis);
}

static SrVal *jnp_split(SrInterp *I, SrArgs *a) { return split_api(I, a, "split", 0); }
static SrVal *jnp_array_split(SrInterp *I, SrArgs *a) { return split_api(I, a, "array_split", 0); }
static SrVal *jnp_vsplit(SrInterp *I, SrArgs *a) { return split_api(I, a, "vsplit", 1); }
static SrVal *jnp_hsplit(SrInterp *I, SrArgs *a) { return split_api(I, a, "hsplit", 2); }
static SrVal *jnp_dsplit(SrInterp *I, SrArgs *a) { return split_api(I, a, "dsplit", 3); }

/* lax.split(operand, sizes, axis=0): a list */
static SrVal *lax_split(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "split", "operand, sizes, axis=", p) < 0) return NULL;
  int64_t axis = 0;
  if (p[2] && sr_as_int(I, p[2], "axis", &axis) < 0) return NULL;
  SrVal *items = sr_iterate(I, p[1]);
  if (!items) return NULL;
  int n = items->seq.n;
  int64_t *sizes = sr_xcalloc((size_t)n + 1, sizeof *sizes);
  int rc = 0;
  for (int i = 0; i < n && rc == 0; i++) rc = sr_as_int(I, items->seq.items[i], "sizes", &sizes[i]);
  sr_unref(items);
  SrVal *x = rc == 0 ? arr(I, p[0]) : NULL, *r = NULL;
  /* util.canonicalize_axis: a ValueError (not numpy's AxisError) */
  int nd = x ? vtype(I, x)->ndim : 0;
  if (x && (axis < -nd || axis >= nd)) {
    sr_raise(I, "ValueError", "axis %lld is out of bounds for array of dimension %d", (long long)axis, nd);
    sr_unref(x);
    x = NULL;
  }
  if (x && sr_api_axis(I, axis, nd, &axis) == 0) {
    SrVal *parts = bind_split(I, x, sizes, n, axis);
    if (parts) {
      SrVal **its = sr_xcalloc((size_t)n + 1, sizeof *its);
      for (int i = 0; i < n; i++) its[i] = sr_ref(parts->seq.items[i]);
      r = list_of(n, its);
      free(its);
      sr_unref(parts);
    }
  }
  sr_unref(x);
  free(sizes);
  return r;
}

/* ==== atleast_Nd ==== */

/* array(x, copy=False, ndmin=k) for k = 1, 2; atleast_3d's expand_dims */
static SrVal *atleast(SrInterp *I, SrVal *v, int k) {
  SrVal *x = arr(I, v);
  if (!x) return NULL;
  int nd = vtype(I, x)->ndim;
  if (nd >= k) return x;
  int64_t dims[3];
  int n = 0;
  if (k < 3) {
    for (int i = 0; i < k - nd; i++) dims[n++] = i;
  } else if (nd == 0) {
    dims[0] = 0, dims[1] = 1, dims[2] = 2, n = 3;
  } else if (nd == 1) {
    dims[0] = 0, dims[1] = 2, n = 2;
  } else {
    dims[0] = 2, n = 1;
  }
  SrVal *r = sr_lax_expand_dims(I, x, dims, n);
  sr_unref(x);
  return r;
}

static SrVal *atleast_api(SrInterp *I, SrArgs *a, int k) {
  if (a->nkw) return sr_raise(I, "TypeError", "atleast_%dd() got an unexpected keyword argument '%s'", k, a->kw[0]);
  if (a->n == 1) return atleast(I, a->v[0], k);
  SrVal **items = sr_xcalloc((size_t)a->n + 1, sizeof *items);
  for (int i = 0; i < a->n; i++)
    if (!(items[i] = atleast(I, a->v[i], k))) {
      unref_all(i, items);
      free(items);
      return NULL;
    }
  SrVal *r = list_of(a->n, items);
  free(items);
  return r;
}

static SrVal *jnp_atleast_1d(SrInterp *I, SrArgs *a) { return atleast_api(I, a, 1); }
static SrVal *jnp_atleast_2d(SrInterp *I, SrArgs *a) { return atleast_api(I, a, 2); }
static SrVal *jnp_atleast_3d(SrInterp *I, SrArgs *a) { return atleast_api(I, a, 3); }

/* ==== hstack, vstack, dstack, column_stack ==== */

static SrVal *concat(SrInterp *I, int n, SrVal **xs, int64_t axis, SrVal *dtype) {
  SrVal *seq = list_of(n, xs);
  SrVal *ax = sr_int(NULL, axis);
  SrVal *fn = sr_lookup_qualname("jax.numpy.concatenate");
  SrVal *args[2] = {seq, ax};
  const char *kw[1] = {sr_intern_cstr("dtype")};
  SrVal *kwv[1] = {dtype};
  SrArgs ca = {2, args, given(dtype) ? 1 : 0, kw, kwv, NULL};
  SrVal *r = fn ? sr_call(I, fn, &ca) : sr_raise(I, "NotImplementedError", "jax.numpy.concatenate is not available");
  sr_unref(seq);
  sr_unref(ax);
  return r;
}

typedef enum { ST_H, ST_V, ST_D, ST_COL } StackKind;

static SrVal *stack_api(SrInterp *I, SrArgs *a, StackKind k, const char *name) {
  SrVal *p[2];
  if (sr_args_parse(I, a, name, k == ST_COL ? "tup" : "tup, dtype=", p) < 0) return NULL;
  /* an array's rows, as a sequence of arrays (JAX vmaps atleast_Nd over
     them: the same values) */
  SrVal *items = sr_iterate(I, p[0]);
  if (!items) return NULL;
  int n = items->seq.n;
  if (n == 0) {
    sr_unref(items);
    return sr_raise(I, "ValueError", "Need at least one array to concatenate.");
  }
  SrVal **xs = sr_xcalloc((size_t)n, sizeof *xs);
  int rc = 0;
  for (int i = 0; i < n && rc == 0; i++) {
    SrVal *v = items->seq.items[i];
    if (k == ST_COL) {
      SrVal *x = arr(I, v);
      if (x && vtype(I, x)->ndim < 2) {
        SrVal *y = atleast(I, x, 2);
        int64_t perm[2] = {1, 0};
        xs[i] = y ? sr_lax_transpose(I, y, perm, 2) : NULL;
        sr_unref(y);
        sr_unref(x);
      } else {
        xs[i] = x;
      }
    } else {
      xs[i] = atleast(I, v, k == ST_H ? 1 : k == ST_V ? 2 : 3);
    }
    if (!xs[i]) rc = -1;
  }
  sr_unref(items);
  SrVal *r = NULL;
  if (rc == 0) {
    int64_t axis = k == ST_H ? (vtype(I, xs[0])->ndim == 1 ? 0 : 1) : k == ST_V ? 0 : k == ST_D ? 2 : 1;
    r = concat(I, n, xs, axis, k == ST_COL ? NULL : p[1]);
  } else {
    for (int i = 0; i < n; i++) sr_unref(xs[i]);
  }
  free(xs);
  return r;
}

static SrVal *jnp_hstack(SrInterp *I, SrArgs *a) { return stack_api(I, a, ST_H, "hstack"); }
static SrVal *jnp_vstack(SrInterp *I, SrArgs *a) { return stack_api(I, a, ST_V, "vstack"); }
static SrVal *jnp_dstack(SrInterp *I, SrArgs *a) { return stack_api(I, a, ST_D, "dstack"); }
static SrVal *jnp_column_stack(SrInterp *I, SrArgs *a) { return stack_api(I, a, ST_COL, "column_stack"); }

/* ==== tile, repeat ==== */

static SrVal *bind_tile(SrInterp *I, SrVal *x, const int64_t *reps, int n) {
  return sr_bindv(I, SR_P_tile, 1, &x, "reps", sr_int_tuple(reps, n), NULL);
}

/* lax.tile(operand, reps) */
static SrVal *lax_tile(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "tile", "operand, reps", p) < 0) return NULL;
  int64_t reps[SR_MAX_RANK];
  int n;
  if (ints_arg(I, p[1], reps, &n, "reps") < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  SrVal *r = x ? bind_tile(I, x, reps, n) : NULL;
  sr_unref(x);
  return r;
}

/* jnp.tile(A, reps): reps padded with leading 1s to A's rank, A given
   leading dims to reps' length, then lax.tile */
static SrVal *jnp_tile(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "tile", "A, reps", p) < 0) return NULL;
  int64_t reps[SR_MAX_RANK], full[SR_MAX_RANK];
  int n;
  if (ints_arg(I, p[1], reps, &n, "reps") < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  if (!x) return NULL;
  int nd = vtype(I, x)->ndim, m = nd > n ? nd : n;
  for (int i = 0; i < m; i++) full[i] = i < m - n ? 1 : reps[i - (m - n)];
  if (m > nd) {
    int64_t dims[SR_MAX_RANK];
    for (int i = 0; i < m - nd; i++) dims[i] = i;
    SrVal *y = sr_lax_expand_dims(I, x, dims, m - nd);
    sr_unref(x);
    if (!(x = y)) return NULL;
  }
  SrVal *r = bind_tile(I, x, full, m);
  sr_unref(x);
  return r;
}

/* lax_numpy._repeat(repeats, a, axis=, total_repeat_length=) for an a
   already raveled when no axis was given: a scalar repeats (and no total)
   is a broadcast_in_dim onto a new axis after `axis`, then a reshape;
   anything else is numpy_repeat.c's. */
static SrVal *repeat_impl(SrInterp *I, SrVal *x, SrVal *repeats, int64_t axis, SrVal *total) {
  int64_t rep;
  if ((repeats->kind != SR_V_INT && repeats->kind != SR_V_BOOL &&
       !(vtype(I, repeats) && vtype(I, repeats)->ndim == 0)) ||
      given(total))
    return sr_jnp_repeat_general(I, x, repeats, axis, total);
  if (sr_as_int(I, repeats, "When jit-compiling jnp.repeat, the total number of repeats must be static", &rep) < 0)
    return NULL;
  const SrType *t = vtype(I, x);
  SrVal *r = NULL;
  if (t->ndim == 0) {
    int64_t len = rep;
    r = sr_lax_full(I, &len, 1, x, -1, NULL);
  } else if (sr_api_axis(I, axis, t->ndim, &axis) == 0) {
    int64_t aux[SR_MAX_RANK + 1], bdims[SR_MAX_RANK], res[SR_MAX_RANK];
    int na = 0;
    for (int i = 0; i < t->ndim; i++) {
      aux[na++] = t->dims[i].size;
      if (i == axis) aux[na++] = rep;
    }
    for (int i = 0, k = 0; i < na; i++)
      if (i != axis + 1) bdims[k++] = i;
    shape_of(t, res);
    if (rep < 0 || __builtin_mul_overflow(res[axis], rep, &res[axis]))
      return rep < 0 ? sr_raise(I, "ValueError", "repeats may not contain negative values.")
                     : sr_raise(I, "ValueError", "jnp.repeat: the result is too large");
    SrVal *b = sr_lax_broadcast_in_dim(I, x, aux, na, bdims, t->ndim, NULL);
    r = b ? sr_lax_reshape(I, b, res, t->ndim, NULL) : NULL;
    sr_unref(b);
  }
  return r;
}

typedef struct RepeatData {
  SrVal *repeats, *total; /* counted; total NULL when not given */
  int64_t axis;
} RepeatData;

static void repeat_data_free(void *p) {
  RepeatData *d = p;
  sr_unref(d->repeats);
  sr_unref(d->total);
  free(d);
}

/* partial(_repeat, ...) as auto_axes calls it: (a) or, with a total,
   (repeats, a) */
static SrVal *repeat_auto_body(SrInterp *I, SrArgs *a) {
  RepeatData *d = sr_current_builtin(I)->data;
  if (d->total) return a->n == 2 ? repeat_impl(I, a->v[1], a->v[0], d->axis, d->total) : NULL;
  return a->n == 1 ? repeat_impl(I, a->v[0], d->repeats, d->axis, NULL) : NULL;
}

/* lax_numpy._auto_repeat: auto_axes(partial(_repeat, ...),
   out_sharding=, axes=the sharding's mesh's Explicit axes) */
static SrVal *repeat_auto(SrInterp *I, SrVal *x, SrVal *repeats, int64_t axis, SrVal *total, SrVal *out_sharding) {
  SrVal *sh = NULL;
  if (sr_api_canon_sharding(I, out_sharding, "repeat", &sh) < 0) return NULL;
  if (!sh) return repeat_impl(I, x, repeats, axis, total);
  SrVal *aa = sr_lookup_qualname("jax.sharding.auto_axes");
  if (!aa) {
    sr_unref(sh);
    return sr_raise(I, "NotImplementedError", "jnp.repeat with out_sharding needs jax.sharding.auto_axes");
  }
  RepeatData *d = sr_xcalloc(1, sizeof *d);
  d->repeats = sr_ref(repeats);
  d->total = given(total) ? sr_ref(total) : NULL;
  d->axis = axis;
  SrVal *fn = sr_builtin_with("_repeat", repeat_auto_body, d, repeat_data_free);
  const SrMesh *m = sh->sh.mesh;
  SrVal *axes = sr_api_axes_tuple(m, sr_mesh_axes_of_type(m, SR_AXIS_EXPLICIT));
  const char *kw[2] = {sr_intern_cstr("out_sharding"), sr_intern_cstr("axes")};
  SrVal *kwv[2] = {sh, axes};
  SrArgs da = {1, &fn, 2, kw, kwv, NULL};
  SrVal *dec = sr_call(I, aa, &da), *r = NULL;
  if (dec) {
    SrVal *args[2] = {repeats, x};
    SrArgs ca = {given(total) ? 2 : 1, given(total) ? args : args + 1, 0, NULL, NULL, NULL};
    r = sr_call(I, dec, &ca);
    sr_unref(dec);
  }
  sr_unref(axes);
  sr_unref(fn);
  sr_unref(sh);
  return r;
}

/* jnp.repeat(a, repeats, axis=None, *, total_repeat_length=None,
   out_sharding=None): with an out_sharding, or an Explicit axis in the
   context mesh, under auto_axes (the repeated axis must then be
   unsharded when no out_sharding is given) */
static SrVal *jnp_repeat(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "repeat", "a, repeats, axis=, *, total_repeat_length=, out_sharding=", p) < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  if (!x) return NULL;
  int64_t axis = 0;
  if (!given(p[2])) {
    int64_t nn = sr_type_numel(vtype(I, x));
    SrVal *y = sr_lax_reshape(I, x, &nn, 1, NULL);
    sr_unref(x);
    if (!(x = y)) return NULL;
  } else if (sr_as_int(I, p[2], "'axis' argument of jnp.repeat()", &axis) < 0) {
    sr_unref(x);
    return NULL;
  }
  SrVal *r = NULL;
  if (given(p[4])) {
    r = repeat_auto(I, x, p[1], axis, p[3], p[4]);
    sr_unref(x);
    return r;
  }
  const SrMesh *cm = sr_jax_abstract_mesh(I->jax);
  if (sr_mesh_axes_of_type(cm, SR_AXIS_EXPLICIT)) {
    const SrType *t = vtype(I, x);
    int64_t ax;
    if (t->ndim > 0 && sr_api_axis(I, axis, t->ndim, &ax) == 0) {
      if (t->dims[ax].nax) {
        r = sr_raise(I, "ValueError", "Please pass sharding to `jnp.repeat` via `out_sharding` parameter.");
      } else {
        SrVal *ts = sr_type_sharding(I, t);
        r = repeat_auto(I, x, p[1], axis, p[3], ts);
        sr_unref(ts);
      }
      sr_unref(x);
      return r;
    }
    if (t->ndim > 0) {
      sr_unref(x);
      return NULL;
    }
  }
  r = repeat_impl(I, x, p[1], axis, p[3]);
  sr_unref(x);
  return r;
}

/* ==== flip, rot90, roll ==== */

typedef struct AxisData {
  int has_axis, n;
  int64_t axes[SR_MAX_RANK];
  int64_t shifts[SR_MAX_RANK];
  int nshift;
  int64_t k;
} AxisData;

/* jit _flip: lax.rev over the axes (all with axis=None) */
static SrVal *flip_body(SrInterp *I, SrArgs *a) {
  AxisData *d = sr_current_builtin(I)->data;
  const SrType *t = vtype(I, a->v[0]);
  int64_t dims[SR_MAX_RANK];
  int n = 0;
  if (!d->has_axis) {
    for (int i = 0; i < t->ndim; i++) dims[n++] = i;
  } else {
    for (int i = 0; i < d->n; i++)
      if (sr_api_axis(I, d->axes[i], t->ndim, &dims[n++]) < 0) return NULL;
  }
  return sr_lax_rev(I, a->v[0], dims, n);
}

static SrVal *flip_call(SrInterp *I, SrVal *x, int has_axis, const int64_t *axes, int n) {
  AxisData *d = sr_xcalloc(1, sizeof *d);
  d->has_axis = has_axis;
  d->n = n;
  memcpy(d->axes, axes, (size_t)n * sizeof *axes);
  return sr_api_jit(I, "_flip", flip_body, d, 1, &x);
}

static SrVal *jnp_flip(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "flip", "m, axis=", p) < 0) return NULL;
  int64_t axes[SR_MAX_RANK];
  int n = 0;
  if (given(p[1]) && ints_arg(I, p[1], axes, &n, "axis") < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  SrVal *r = x ? flip_call(I, x, given(p[1]), axes, n) : NULL;
  sr_unref(x);
  return r;
}

/* fliplr, flipud: _flip over axis 1 / 0 (rank checked first) */
static SrVal *flip_lr_ud(SrInterp *I, SrArgs *a, int lr) {
  SrVal *p[1];
  if (sr_args_parse(I, a, lr ? "fliplr" : "flipud", "m", p) < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  if (!x) return NULL;
  int nd = vtype(I, x)->ndim;
  if (nd < (lr ? 2 : 1)) {
    sr_unref(x);
    return sr_raise(I, "ValueError", "%s requires arrays of at least %d dimension%s. Got an array of shape %s",
                    lr ? "fliplr" : "flipud", lr ? 2 : 1, lr ? "s" : "", "()");
  }
  int64_t ax = lr ? 1 : 0;
  SrVal *r = flip_call(I, x, 1, &ax, 1);
  sr_unref(x);
  return r;
}

static SrVal *jnp_fliplr(SrInterp *I, SrArgs *a) { return flip_lr_ud(I, a, 1); }
static SrVal *jnp_flipud(SrInterp *I, SrArgs *a) { return flip_lr_ud(I, a, 0); }

/* jit rot90 (static k and axes) */
static SrVal *rot90_body(SrInterp *I, SrArgs *a) {
  AxisData *d = sr_current_builtin(I)->data;
  SrVal *m = a->v[0];
  const SrType *t = vtype(I, m);
  if (t->ndim < 2) {
    SrBuf b = SR_BUF_INIT;
    sr_shape_str(&b, t);
    sr_raise(I, "ValueError",
             "rot90 requires its first argument to have ndim at least two, but got first argument of shape %s, which "
             "has ndim %d",
             sr_buf_str(&b), t->ndim);
    sr_buf_free(&b);
    return NULL;
  }
  int64_t ax1, ax2;
  if (sr_api_axis(I, d->axes[0], t->ndim, &ax1) < 0 || sr_api_axis(I, d->axes[1], t->ndim, &ax2) < 0) return NULL;
  if (ax1 == ax2) return sr_raise(I, "ValueError", "Axes must be different");
  int64_t k = ((d->k % 4) + 4) % 4;
  if (k == 0) return sr_ref(m);
  if (k == 2) {
    SrVal *f = flip_call(I, m, 1, &ax1, 1);
    SrVal *r = f ? flip_call(I, f, 1, &ax2, 1) : NULL;
    sr_unref(f);
    return r;
  }
  int64_t perm[SR_MAX_RANK];
  for (int i = 0; i < t->ndim; i++) perm[i] = i;
  perm[ax1] = ax2;
  perm[ax2] = ax1;
  if (k == 1) {
    SrVal *f = flip_call(I, m, 1, &ax2, 1);
    SrVal *r = f ? sr_lax_transpose(I, f, perm, t->ndim) : NULL;
    sr_unref(f);
    return r;
  }
  SrVal *tr = sr_lax_transpose(I, m, perm, t->ndim);
  SrVal *r = tr ? flip_call(I, tr, 1, &ax2, 1) : NULL;
  sr_unref(tr);
  return r;
}

static SrVal *jnp_rot90(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "rot90", "m, k=, axes=", p) < 0) return NULL;
  AxisData *d = sr_xcalloc(1, sizeof *d);
  d->k = 1;
  d->axes[0] = 0;
  d->axes[1] = 1;
  int n = 2;
  if ((p[1] && sr_as_int(I, p[1], "k", &d->k) < 0) || (p[2] && ints_arg(I, p[2], d->axes, &n, "axes") < 0)) {
    free(d);
    return NULL;
  }
  if (n != 2) {
    free(d);
    return sr_raise(I, "ValueError", "too many values to unpack (expected 2)");
  }
  SrVal *x = arr(I, p[0]);
  SrVal *r = x ? sr_api_jit(I, "rot90", rot90_body, d, 1, &x) : (free(d), NULL);
  sr_unref(x);
  return r;
}

/* jit _roll_static: per axis, the two slices concatenated */
static SrVal *roll_body(SrInterp *I, SrArgs *a) {
  AxisData *d = sr_current_builtin(I)->data;
  SrVal *x = sr_ref(a->v[0]);
  int n = d->n > d->nshift ? d->n : d->nshift;
  if (d->n != n && d->n != 1) return sr_unref(x), sr_raise(I, "ValueError", "shape mismatch: objects cannot be broadcast to a single shape");
  if (d->nshift != n && d->nshift != 1) return sr_unref(x), sr_raise(I, "ValueError", "shape mismatch: objects cannot be broadcast to a single shape");
  for (int j = 0; j < n && x; j++) {
    int64_t ax = d->axes[d->n == 1 ? 0 : j], s = d->shifts[d->nshift == 1 ? 0 : j];
    const SrType *t = vtype(I, x);
    int64_t size = t->dims[ax].size;
    if (size == 0) continue;
    int64_t i = ((-s) % size + size) % size;
    int64_t st[SR_MAX_RANK], li[SR_MAX_RANK];
    SrVal *parts[2];
    for (int k = 0; k < 2; k++) {
      for (int q = 0; q < t->ndim; q++) st[q] = 0, li[q] = t->dims[q].size;
      st[ax] = k == 0 ? i : 0;
      li[ax] = k == 0 ? size : i;
      parts[k] = sr_lax_slice(I, x, st, li, NULL);
    }
    SrVal *c = parts[0] && parts[1] ? sr_lax_concatenate(I, 2, parts, (int)ax) : NULL;
    unref_all(2, parts);
    sr_unref(x);
    x = c;
  }
  return x;
}

/* lax_numpy._roll_dynamic: a traced shift; per axis, a dynamic slice of
   the array concatenated with itself, at size - shift % max(size, 1) */
static SrVal *roll_dynamic(SrInterp *I, SrVal *a, SrVal *shift_v, const int64_t *axes, int nax) {
  SrVal *shift = sr_jnp_asarray(I, shift_v, -1);
  if (!shift) return NULL;
  const SrType *st = vtype(I, shift);
  int64_t n = nax;
  if (st->ndim > 1) {
    sr_unref(shift);
    return sr_raise(I, "ValueError", "'shift' and 'axis' arguments to roll must be scalars or 1D arrays");
  }
  if (st->ndim == 1) {
    int64_t k = st->dims[0].size;
    if (nax == 1) n = k;
    else if (k != 1 && k != nax) {
      sr_unref(shift);
      return sr_raise(I, "ValueError", "Incompatible shapes for broadcasting: shapes=[(%lld,), (%d,)]", (long long)k, nax);
    }
  }
  SrVal *bs = sr_lax_broadcast_to(I, shift, &n, 1, NULL);
  sr_unref(shift);
  SrVal *x = bs ? sr_ref(a) : NULL;
  for (int64_t j = 0; j < n && x; j++) {
    int64_t ax = axes[nax == 1 ? 0 : j], lo = j, hi = j + 1;
    const SrType *t = vtype(I, x);
    int64_t size = t->dims[ax].size;
    SrVal *sl = sr_lax_slice(I, bs, &lo, &hi, NULL);
    SrVal *xj = sl ? sr_lax_reshape(I, sl, NULL, 0, NULL) : NULL;
    SrVal *xi = xj ? sr_lax_convert(I, xj, SR_I32, 0, NULL) : NULL;
    SrVal *szv = sr_int(NULL, size), *onev = sr_int(NULL, 1);
    SrVal *si = sr_lax_convert(I, szv, SR_I32, 0, NULL), *one = sr_lax_convert(I, onev, SR_I32, 0, NULL);
    SrVal *mx = si && one ? sr_lax_binary(I, SR_P_max, si, one) : NULL;
    SrVal *rm = xi && mx ? sr_jnp_remainder(I, xi, mx) : NULL;
    SrVal *pair[2] = {x, x};
    SrVal *cat = rm ? sr_lax_concatenate(I, 2, pair, (int)ax) : NULL;
    SrVal *start = cat ? sr_lax_binary(I, SR_P_sub, si, rm) : NULL;
    SrVal *y = NULL;
    if (start) {
      /* dynamic_slice_in_dim: zeros of the start's dtype elsewhere */
      SrVal *zv = sr_int(NULL, 0), *zero = sr_lax_convert(I, zv, SR_I32, 0, NULL);
      SrVal *starts[SR_MAX_RANK];
      int64_t sizes[SR_MAX_RANK];
      for (int q = 0; q < t->ndim; q++) {
        starts[q] = q == ax ? start : zero;
        sizes[q] = t->dims[q].size;
      }
      if (zero) y = sr_lax_dynamic_slice(I, cat, starts, sizes);
      sr_unref(zv);
      sr_unref(zero);
    }
    SrVal *tmp[] = {sl, xj, xi, szv, onev, si, one, mx, rm, cat, start, x};
    unref_all(12, tmp);
    x = y;
  }
  sr_unref(bs);
  return x;
}

static SrVal *jnp_roll(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "roll", "a, shift, axis=", p) < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  if (!x) return NULL;
  const SrType *t = vtype(I, x);
  AxisData *d = sr_xcalloc(1, sizeof *d);
  SrVal *r = NULL;
  int ravel = !given(p[2]);
  if (ravel) {
    d->axes[0] = 0;
    d->n = 1;
  } else if (ints_arg(I, p[2], d->axes, &d->n, "axis") < 0) {
    goto fail;
  }
  /* _ensure_index_tuple(shift): ints or a sequence of them; anything
     else (an array, a tracer) is a dynamic shift */
  int dynamic = p[1]->kind != SR_V_INT && !sr_is_seq(p[1]);
  if (!dynamic && ints_arg(I, p[1], d->shifts, &d->nshift, "shift") < 0) goto fail;
  /* a reference of our own: reshaping a 1-d x gives x back */
  int64_t numel = sr_type_numel(t);
  SrVal *src = ravel ? sr_lax_reshape(I, x, &numel, 1, NULL) : sr_ref(x);
  if (!src) goto fail;
  for (int i = 0; i < d->n; i++)
    if (sr_api_axis(I, d->axes[i], vtype(I, src)->ndim, &d->axes[i]) < 0) {
      sr_unref(src);
      goto fail;
    }
  for (int i = 0; i < d->n; i++)
    if (vtype(I, src)->dims[d->axes[i]].nax) {
      SrBuf b = SR_BUF_INIT, s = SR_BUF_INIT;
      sr_type_str(&b, vtype(I, src), 1); /* str_short(True) */
      sr_ints_str(&s, d->axes, d->n);
      sr_raise(I, "ShardingTypeError", "`a` cannot be sharded on the axis being rolled over. Got arr type=%s and axis=%s",
               b.p, s.p);
      sr_buf_free(&b);
      sr_buf_free(&s);
      sr_unref(src);
      goto fail;
    }
  if (dynamic) {
    r = roll_dynamic(I, src, p[1], d->axes, d->n);
    free(d);
  } else {
    r = sr_api_jit(I, "_roll_static", roll_body, d, 1, &src);
  }
  sr_unref(src);
  if (r && ravel) {
    int64_t shape[SR_MAX_RANK];
    shape_of(t, shape);
    SrVal *y = sr_lax_reshape(I, r, shape, t->ndim, NULL);
    sr_unref(r);
    r = y;
  }
  sr_unref(x);
  return r;
fail:
  free(d);
  sr_unref(x);
  return NULL;
}

/* ==== meshgrid ==== */

static SrVal *jnp_meshgrid(SrInterp *I, SrArgs *a) {
  int copy = 1, sparse = 0;
  const char *indexing = "xy";
  for (int i = 0; i < a->nkw; i++) {
    if (strcmp(a->kw[i], "copy") == 0) copy = sr_val_truthy(a->kwv[i]);
    else if (strcmp(a->kw[i], "sparse") == 0) sparse = sr_val_truthy(a->kwv[i]);
    else if (strcmp(a->kw[i], "indexing") == 0) {
      if (!(indexing = sr_as_str(I, a->kwv[i], "indexing"))) return NULL;
    } else {
      return sr_raise(I, "TypeError", "meshgrid() got an unexpected keyword argument '%s'", a->kw[i]);
    }
  }
  if (!copy) return sr_raise(I, "ValueError", "jax.numpy.meshgrid only supports copy=True");
  if (strcmp(indexing, "xy") != 0 && strcmp(indexing, "ij") != 0)
    return sr_raise(I, "ValueError", "Valid values for indexing are 'xy' and 'ij', got %s", indexing);
  int n = a->n;
  if (n > SR_MAX_RANK) return sr_raise(I, "ValueError", "meshgrid: too many arrays");
  SrVal *xs[SR_MAX_RANK];
  for (int i = 0; i < n; i++)
    if (!(xs[i] = arr(I, a->v[i]))) {
      unref_all(i, xs);
      return NULL;
    }
  int bad = 0;
  for (int i = 0; i < n; i++) bad |= vtype(I, xs[i])->ndim != 1;
  if (bad) {
    SrBuf b = SR_BUF_INIT;
    sr_buf_putc(&b, '[');
    for (int i = 0; i < n; i++) {
      if (i) sr_buf_puts(&b, ", ");
      sr_shape_str(&b, vtype(I, xs[i]));
    }
    sr_buf_putc(&b, ']');
    sr_raise(I, "ValueError", "Arguments to jax.numpy.meshgrid must be 1D, got shapes %s", b.p);
    sr_buf_free(&b);
    unref_all(n, xs);
    return NULL;
  }
  int xy = strcmp(indexing, "xy") == 0 && n >= 2;
  if (xy) {
    SrVal *t = xs[0];
    xs[0] = xs[1];
    xs[1] = t;
  }
  int64_t shape[SR_MAX_RANK];
  for (int i = 0; i < n; i++) shape[i] = sparse ? 1 : vtype(I, xs[i])->dims[0].size;
  SrVal *out[SR_MAX_RANK];
  int ok = 1;
  for (int i = 0; i < n; i++) {
    int64_t s[SR_MAX_RANK], dim = i;
    memcpy(s, shape, sizeof s);
    if (sparse) s[i] = vtype(I, xs[i])->dims[0].size;
    out[i] = ok ? sr_lax_broadcast_in_dim(I, xs[i], s, n, &dim, 1, NULL) : NULL;
    ok = out[i] != NULL;
  }
  unref_all(n, xs);
  if (!ok) {
    for (int i = 0; i < n; i++) sr_unref(out[i]);
    return NULL;
  }
  if (xy) {
    SrVal *t = out[0];
    out[0] = out[1];
    out[1] = t;
  }
  return sr_tuple(NULL, n, out);
}

void sr_jnp_shape_init(void) {
  static const struct {
    const char *names;
    SrBuiltinFn fn;
    const char *doc;
  } defs[] = {
      {"jax.numpy.split", jnp_split, "split(ary, indices_or_sections, axis=0): a list, by lax.split"},
      {"jax.numpy.array_split", jnp_array_split,
       "array_split(ary, indices_or_sections, axis=0): split allowing unequal sections"},
      {"jax.numpy.hsplit", jnp_hsplit, "hsplit(ary, indices_or_sections): split along axis 1 (0 for 1-D)"},
      {"jax.numpy.vsplit", jnp_vsplit, "vsplit(ary, indices_or_sections): split along axis 0"},
      {"jax.numpy.dsplit", jnp_dsplit, "dsplit(ary, indices_or_sections): split along axis 2"},
      {"jax.lax.split", lax_split, "split(operand, sizes, axis=0): the split primitive"},
      {"jax.numpy.atleast_1d", jnp_atleast_1d, "atleast_1d(*arys): leading dims added up to rank 1"},
      {"jax.numpy.atleast_2d", jnp_atleast_2d, "atleast_2d(*arys): leading dims added up to rank 2"},
      {"jax.numpy.atleast_3d", jnp_atleast_3d, "atleast_3d(*arys): dims added as numpy does, up to rank 3"},
      {"jax.numpy.hstack", jnp_hstack, "hstack(tup, dtype=None): concatenate of atleast_1d along axis 1 (0 for 1-D)"},
      {"jax.numpy.vstack", jnp_vstack, "vstack(tup, dtype=None): concatenate of atleast_2d along axis 0"},
      {"jax.numpy.dstack", jnp_dstack, "dstack(tup, dtype=None): concatenate of atleast_3d along axis 2"},
      {"jax.numpy.column_stack", jnp_column_stack, "column_stack(tup): 1-D arrays as columns, concatenated on axis 1"},
      {"jax.numpy.tile", jnp_tile, "tile(A, reps): the tile primitive"},
      {"jax.lax.tile", lax_tile, "tile(operand, reps): the tile primitive"},
      {"jax.numpy.repeat", jnp_repeat, "repeat(a, repeats, axis=None): a scalar repeats: broadcast_in_dim, reshape"},
      {"jax.numpy.flip", jnp_flip, "flip(m, axis=None): jit[name=_flip] of rev"},
      {"jax.numpy.fliplr", jnp_fliplr, "fliplr(m): flip along axis 1"},
      {"jax.numpy.flipud", jnp_flipud, "flipud(m): flip along axis 0"},
      {"jax.numpy.rot90", jnp_rot90, "rot90(m, k=1, axes=(0, 1)): jit[name=rot90] of flips and a transpose"},
      {"jax.numpy.roll", jnp_roll, "roll(a, shift, axis=None): jit[name=_roll_static] of slices and a concatenate"},
      {"jax.numpy.meshgrid", jnp_meshgrid, "meshgrid(*xi, sparse=False, indexing='xy'): broadcast_in_dim of each"},
      {NULL, NULL, NULL},
  };
  for (int i = 0; defs[i].names; i++) sr_def(defs[i].names, defs[i].fn, defs[i].doc);
}
